"""`MpiCommunicator`: one replica per MPI rank, all-reduces in place over mpi4py.

    comm = MpiCommunicator()              # a Clone() of COMM_WORLD, made on first use
    with collectives.using(comm):
        step(params, x, y)                # the program's all-reduces run through comm

The library's traffic runs on its own clone of the user's communicator (made lazily, by the
first collective, which every rank reaches), so it never matches the user's own messages.
mpi4py is imported on first use too: importing this module does not start MPI.

Counters for tests and benchmarks: `calls` (all-reduce calls), `bytes` (bytes reduced) and
`programs_checked` (`check_program` calls).
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .communicator import REDUCE_KINDS
from .errors import ReplicaMismatchError

DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))


def check_buffer(buffer: Any, kind: str) -> None:
    """Raise if `buffer` cannot be all-reduced in place with `kind` (shared with local.py)."""
    if kind not in REDUCE_KINDS:
        raise ValueError(f"all_reduce: unknown reduce kind {kind!r}; use one of "
                         f"{', '.join(REDUCE_KINDS)}")
    if not isinstance(buffer, np.ndarray):
        raise TypeError(f"all_reduce: the buffer must be a NumPy array, got "
                        f"{type(buffer).__name__}")
    if buffer.dtype not in DTYPES:
        raise TypeError(f"all_reduce: dtype {buffer.dtype} is not supported; use float32, "
                        "float64, int32 or int64")
    if kind == "mean" and buffer.dtype.kind != "f":
        raise TypeError(f"all_reduce: 'mean' needs a float buffer, got {buffer.dtype}; "
                        "reduce with 'sum' and divide, or convert to float first")
    if not (buffer.flags.c_contiguous and buffer.flags.writeable):
        raise ValueError("all_reduce: the buffer must be C-contiguous and writeable (the "
                         "reduction is done in place)")


def divide_in_place(buffer: np.ndarray, size: int) -> None:
    """buffer /= size.  For a power of two, multiplying by 1/size is the same rounding
    (both are the exact quotient rounded once) and several times faster than dividing."""
    if size & (size - 1) == 0:
        np.multiply(buffer, buffer.dtype.type(1.0 / size), out=buffer)
    else:
        np.divide(buffer, buffer.dtype.type(size), out=buffer)


class MpiCommunicator:
    """A `Communicator` over MPI: rank and size of `comm` (default COMM_WORLD)."""

    def __init__(self, comm: Any = None):
        from mpi4py import MPI              # starts MPI (MPI_Init_thread) on first use
        self._MPI = MPI
        self._base = MPI.COMM_WORLD if comm is None else comm
        self._comm = None                   # the library's Clone(), made by a collective
        self.rank: int = self._base.Get_rank()
        self.size: int = self._base.Get_size()
        self._ops = {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}
        self.calls = 0
        self.bytes = 0
        self.programs_checked = 0
        self.verified: set[str] = set()

    @property
    def comm(self):
        """The library's own communicator (collective on first access: every rank must)."""
        if self._comm is None:
            self._comm = self._base.Clone()
        return self._comm

    def all_reduce(self, buffer: np.ndarray, kind: str = "sum") -> None:
        """Reduce `buffer` in place across ranks; 'mean' is a sum divided by the size."""
        check_buffer(buffer, kind)
        if self.size > 1:                        # one rank: every kind is the identity
            self.comm.Allreduce(self._MPI.IN_PLACE, buffer, self._ops[kind])
            if kind == "mean":
                divide_in_place(buffer, self.size)
        self.calls += 1
        self.bytes += buffer.nbytes

    def check_program(self, fingerprint: str, description: str) -> None:
        """Gather every rank's (fingerprint, description); on any difference, raise
        ReplicaMismatchError on every rank (each holds the same gathered list).

        A fingerprint all ranks have verified is not gathered again: whether a rank skips
        depends only on the programs it checked before, the same on every rank, so callers
        may check a program more than once (two compiled copies of one program, say)
        without the ranks' collectives going out of step.
        """
        if fingerprint in self.verified:
            return
        self.programs_checked += 1
        signatures = self.comm.allgather((str(fingerprint), str(description)))
        if len({fp for fp, _ in signatures}) > 1:
            raise ReplicaMismatchError(signatures)
        self.verified.add(fingerprint)

    def barrier(self) -> None:
        self.comm.Barrier()

    def abort(self, message: str, code: int = 1) -> None:
        """Print `message` with this rank to stderr, then end the whole job (MPI_Abort)."""
        sys.stdout.flush()
        print(f"[xlanb rank {self.rank}/{self.size}] {message}", file=sys.stderr, flush=True)
        # The base communicator: aborting must not wait on the (collective) Clone().
        (self._comm or self._base).Abort(code)

    def __repr__(self) -> str:
        return f"MpiCommunicator(rank={self.rank}, size={self.size}, calls={self.calls})"


__all__ = ["DTYPES", "MpiCommunicator", "check_buffer", "divide_in_place"]
