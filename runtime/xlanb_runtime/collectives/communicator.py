"""The Communicator interface compiled programs run their all-reduces through.

A program's `all-reduce` nodes call `current_communicator()` at run time: the one a
distribution strategy installed for this thread (`using(comm)`), or None, meaning a single
replica (an all-reduce is then the identity).  Implementations: `mpi.MpiCommunicator` (one
replica per MPI rank, over mpi4py) and `local.LocalCommunicator` (replicas on threads of one
process).

Before a program's first collective on a communicator, `check_program` lets the replicas
compare what they are about to run, so ranks running different programs fail with an error
on every rank instead of hanging in mismatched collectives.
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Protocol

import numpy as np

REDUCE_KINDS = ("sum", "mean", "max", "min")


class Communicator(Protocol):
    rank: int
    size: int

    def all_reduce(self, buffer: np.ndarray, kind: str) -> None:
        """Reduce `buffer` in place across replicas (kind in REDUCE_KINDS)."""

    def check_program(self, fingerprint: str, description: str) -> None:
        """Raise (on every replica) if the replicas' fingerprints differ."""


_current: contextvars.ContextVar[Communicator | None] = contextvars.ContextVar(
    "xlanb_communicator", default=None)


def current_communicator() -> Communicator | None:
    return _current.get()


@contextlib.contextmanager
def using(communicator: Communicator | None):
    """Run compiled programs inside with `communicator` for their all-reduces."""
    token = _current.set(communicator)
    try:
        yield communicator
    finally:
        _current.reset(token)
