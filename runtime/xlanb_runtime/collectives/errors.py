"""Errors raised by communicators: replicas disagree, a replica is stuck, a replica failed.

Every one of them is raised on *every* replica that reaches the collective (all of them see
the same gathered data, or the same broken barrier), so no replica is left waiting.
"""
from __future__ import annotations

import re
from typing import Sequence


class ReplicaMismatchError(RuntimeError):
    """The replicas were about to run different programs, so their collectives would not match.

    Before a compiled program's first all-reduce the replicas compare a fingerprint of the
    program and its argument shapes; different fingerprints raise this on every replica
    instead of hanging in mismatched collectives.

    Failing (under ``mpiexec -n 2``)::

        x = np.ones(32 if rank == 0 else 16)           # ranks see different shapes
        strategy.run(step_fn, args=(params, x))        # ReplicaMismatchError on both ranks

    Fix: give every replica the same shapes, e.g. ``strategy.shard(global_batch)`` on a global
    batch whose size divides evenly (``datasets.batches`` drops remainders).

    `signatures` is the gathered list of (fingerprint, description), one per rank.
    """

    def __init__(self, signatures: Sequence[tuple[str, str]], what: str = "program"):
        self.signatures = list(signatures)
        self.what = what
        super().__init__(_mismatch_message(self.signatures, what))


class CollectiveTimeoutError(RuntimeError):
    """A replica waited too long at a collective for the others (one is stuck or gone)."""


class CollectiveAbortedError(RuntimeError):
    """Another replica failed, so this replica's collective was cancelled."""


# -- message --------------------------------------------------------------------------------

def _ranks(ranks: Sequence[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, ranks))


def split_parts(description: str) -> list[str]:
    """Top-level parts of a description: split at commas, semicolons and newlines that are
    not inside brackets, so "f32[32, 64], i64[32]" gives ["f32[32, 64]", "i64[32]"]."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(description):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char in ",;\n" and depth == 0:
            parts.append(description[start:i].strip())
            start = i + 1
    parts.append(description[start:].strip())
    return [p for p in parts if p]


def first_difference(a: str, b: str, label: str = "part") -> tuple[str, str, str] | None:
    """(where, part of a, part of b) for the first differing top-level part, or None.

    A call-like part, "train_step(f32[8, 4], i64[8])", is compared argument by argument, so
    the answer is ("argument 0", "f32[8, 4]", "f32[6, 4]") rather than the whole call.
    """
    pa, pb = split_parts(a), split_parts(b)
    for i in range(max(len(pa), len(pb))):
        x = pa[i] if i < len(pa) else "<nothing>"
        y = pb[i] if i < len(pb) else "<nothing>"
        if x == y:
            continue
        call_x, call_y = _CALL.match(x), _CALL.match(y)
        if call_x and call_y and call_x.group(1) == call_y.group(1):
            inner = first_difference(call_x.group(2), call_y.group(2), "argument")
            if inner is not None:
                return inner
        return f"{label} {i}", x, y
    return None


_CALL = re.compile(r"^([\w.]+)\((.*)\)$", re.DOTALL)


def _mismatch_message(signatures: Sequence[tuple[str, str]], what: str) -> str:
    groups: dict[str, list[int]] = {}
    for rank, (fingerprint, _) in enumerate(signatures):
        groups.setdefault(fingerprint, []).append(rank)
    reference = groups[signatures[0][0]]
    lines = [f"the replicas would run different {what}s, so their collectives cannot match "
             f"({len(groups)} different {what}s on {len(signatures)} replicas):"]
    for fingerprint, ranks in groups.items():
        lines.append(f"  {_ranks(ranks)}: {signatures[ranks[0]][1]}")
    for fingerprint, ranks in groups.items():
        if ranks is reference:
            continue
        a, b = signatures[reference[0]][1], signatures[ranks[0]][1]
        diff = first_difference(a, b)
        if diff is None:
            lines.append(f"  {_ranks(reference)} and {_ranks(ranks)} have the same signature "
                         f"but different {what}s (fingerprints {signatures[reference[0]][0]}"
                         f" vs {fingerprint})")
        else:
            where, x, y = diff
            lines.append(f"  first difference, {where}: {x} on {_ranks(reference)} vs "
                         f"{y} on {_ranks(ranks)}")
    lines.append("Give every replica the same program and argument shapes, e.g. "
                 "`strategy.shard(global_batch)` on a batch that divides evenly.")
    return "\n".join(lines)
