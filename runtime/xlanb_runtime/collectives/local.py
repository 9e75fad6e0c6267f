"""`LocalGroup`: k replicas on threads of one process, each with a `LocalCommunicator`.

    group = LocalGroup(2)
    def replica(i):
        with collectives.using(group.communicators[i]):
            step(params, shards[i])       # all-reduces meet the other thread's
    threads = [threading.Thread(target=replica, args=(i,)) for i in range(2)]

An all-reduce is: every replica puts its buffer in its slot, a barrier, every replica
reduces all slots in rank order into a new array (so all replicas get the same bits), a
barrier (nobody writes before everybody has read), then each copies the result into its
own buffer.  Barriers time out (`timeout`, 60 s by default): a stuck replica turns into a
`CollectiveTimeoutError` naming the replicas that never arrived, not a hang.  `abort()`
releases every waiting replica with `CollectiveAbortedError` (a strategy calls it when one
replica raises); `reset()` makes the group usable again.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .errors import CollectiveAbortedError, CollectiveTimeoutError, ReplicaMismatchError
from .mpi import check_buffer, divide_in_place

DEFAULT_TIMEOUT_S = 60.0

class _Barrier:
    """A reusable barrier whose abort() breaks only replicas not yet released.

    (threading.Barrier also breaks a replica that was released but has not woken up yet, so
    a replica failing right after a collective would cancel a collective that completed.)
    """

    def __init__(self, parties: int, timeout: float):
        self._cond = threading.Condition()
        self._parties, self._timeout = parties, timeout
        self._count = self._generation = 0
        self._broken = False

    def wait(self) -> None:
        with self._cond:
            if self._broken:
                raise threading.BrokenBarrierError
            generation = self._generation
            self._count += 1
            if self._count == self._parties:
                self._count = 0
                self._generation += 1
                self._cond.notify_all()
                return
            released = self._cond.wait_for(
                lambda: self._generation != generation or self._broken, self._timeout)
            if released and self._generation != generation:
                return
            self._broken = True           # timed out, or aborted: nobody else may pass
            self._cond.notify_all()
            raise threading.BrokenBarrierError

    def abort(self) -> None:
        with self._cond:
            self._broken = True
            self._cond.notify_all()


_REDUCERS = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum}


class LocalGroup:
    """`size` communicators (ranks 0..size-1) sharing one barrier and one slot list."""

    def __init__(self, size: int, timeout: float = DEFAULT_TIMEOUT_S):
        if size < 1:
            raise ValueError(f"LocalGroup needs at least one replica, got {size}")
        self.size = size
        self.timeout = timeout
        self._barrier = _Barrier(size, timeout)
        self._slots: list[Any] = [None] * size
        self._arrivals = [0] * size      # collectives each replica has entered
        self._aborted = False
        self.communicators = [LocalCommunicator(self, rank) for rank in range(size)]

    def abort(self) -> None:
        """Release every replica waiting in (or later entering) a collective with an error."""
        self._aborted = True
        self._barrier.abort()

    def reset(self) -> None:
        """A fresh barrier and slots, after an abort or a timeout (no replica may be waiting)."""
        self._barrier = _Barrier(self.size, self.timeout)
        self._slots = [None] * self.size
        self._arrivals = [0] * self.size
        self._aborted = False

    # -- used by the communicators ---------------------------------------------------------
    def exchange(self, rank: int, value: Any, what: str) -> list[Any]:
        """Deposit `value`, wait for all, return every replica's value (in rank order).

        `what` names the collective ("all_reduce(sum)", "check_program"): replicas in
        different collectives raise ReplicaMismatchError, all of them, instead of reading
        each other's data.
        """
        self._arrivals[rank] += 1
        self._slots[rank] = (what, value)
        self.wait(rank, what)
        slots = list(self._slots)
        if any(tag != what for tag, _ in slots):
            self.wait(rank, what)                     # everybody has read the slots
            raise ReplicaMismatchError([(tag, tag) for tag, _ in slots], what="collective")
        return [value for _, value in slots]

    def wait(self, rank: int, what: str) -> None:
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            mine = self._arrivals[rank]
            missing = [r for r, n in enumerate(self._arrivals) if n < mine]
            if missing and not self._aborted:
                raise CollectiveTimeoutError(
                    f"replica {rank} of {self.size} waited {self.timeout:g} s in {what} "
                    f"(collective #{mine}) for replicas {missing}, which never arrived; "
                    "every replica must run the same collectives in the same order") from None
            raise CollectiveAbortedError(
                f"replica {rank} of {self.size}: {what} was cancelled because another "
                "replica failed (or timed out)") from None


class LocalCommunicator:
    """Replica `rank` of a `LocalGroup` (a `Communicator`)."""

    def __init__(self, group: LocalGroup, rank: int):
        self.group = group
        self.rank = rank
        self.size = group.size
        self.calls = 0
        self.bytes = 0
        self.programs_checked = 0
        self.verified: set[str] = set()

    def all_reduce(self, buffer: np.ndarray, kind: str = "sum") -> None:
        """Reduce `buffer` in place across the group's replicas (identical bits on each)."""
        check_buffer(buffer, kind)
        group = self.group
        slots = group.exchange(self.rank, buffer, f"all_reduce({kind})")
        signatures = [(f"{b.dtype}{list(b.shape)}", f"{b.dtype}{list(b.shape)}")
                      for b in slots]
        if len({s for s, _ in signatures}) > 1:
            group.wait(self.rank, "all_reduce")     # everybody has seen the slots
            raise ReplicaMismatchError(signatures, what="all-reduce buffer")
        result = slots[0].copy()
        reducer = _REDUCERS[kind]
        for other in slots[1:]:
            reducer(result, other, out=result)
        if kind == "mean":
            divide_in_place(result, self.size)
        group.wait(self.rank, "all_reduce")          # all have read before anyone writes
        buffer[...] = result
        self.calls += 1
        self.bytes += buffer.nbytes

    def check_program(self, fingerprint: str, description: str) -> None:
        """Compare every replica's fingerprint; raise ReplicaMismatchError on all if any
        differs.  A fingerprint verified once is not compared again (see mpi.py)."""
        if fingerprint in self.verified:
            return
        self.programs_checked += 1
        signatures = self.group.exchange(self.rank, (str(fingerprint), str(description)),
                                         "check_program")
        self.group.wait(self.rank, "check_program")
        if len({fp for fp, _ in signatures}) > 1:
            raise ReplicaMismatchError(signatures)
        self.verified.add(fingerprint)

    def barrier(self) -> None:
        self.group.exchange(self.rank, None, "barrier")

    def __repr__(self) -> str:
        return (f"LocalCommunicator(rank={self.rank}, size={self.size}, "
                f"calls={self.calls})")


__all__ = ["DEFAULT_TIMEOUT_S", "LocalCommunicator", "LocalGroup"]
