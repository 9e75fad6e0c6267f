"""Range checks of one array's elements read one by one in a traced loop become one check.

`for t in range(1, T): alpha = ... + log_B[:, obs[t]]` reads `obs[t]`, a traced index, and
tracing adds a run-time range check of it (`xlanb.check_range`, tracing/lowering/
library.py) per trip.  The checks are program outputs (kept live for the error they
raise), so every trip's copy is read after the loop and `loop-reroll` cannot roll it: the
HMM forward pass above compiled 180 kernels and ran op by op with NumPy.  The checks of
`obs[s]` for starts s in an arithmetic progression are the one check of `obs[s0:s1:k]`:
the same error, NumPy's first offending value in the same order (ir/library.py
`_check_range` reports the first in order).  Each merged output position keeps its place
and reads the merged check, so the program's outputs keep their count.

Merged: checks with equal parameters of `reshape(slice(x, ((s, s + 1, 1),)), ())` of one
1-D node x, at least MIN_MERGED of them, starts a progression in creation order, and no
other check among the program's outputs between the first and the last (whose error
NumPy would raise first stays first).  Cost: none; run before the loop passes
(compiler._reroll).
"""
from __future__ import annotations

from ..ir import Graph, Node, Op
from ..ir import builder as B

MIN_MERGED = 4


def merge_moving_checks(graph: Graph) -> Graph:
    """The graph with each mergeable run of element checks as one check of a slice."""
    runs: dict[tuple, list[int]] = {}
    for position, node in enumerate(graph.outputs):
        key = _element_check(node)
        if key is not None:
            runs.setdefault(key, []).append(position)
    outputs = list(graph.outputs)
    for key, positions in runs.items():
        merged = _merged(graph.outputs, positions)
        if merged is not None:
            for position in positions:
                outputs[position] = merged
    if outputs == graph.outputs:
        return graph
    return Graph(graph.params, outputs, graph.name)


def _element_check(node: Node):
    """(id(x), the check's arg) of a range check of one element x[s] of a 1-D node."""
    if node.op is not Op.LIBRARY_CALL or node.arg[0] != "xlanb.check_range":
        return None
    element = node.inputs[0]
    if element.op is not Op.RESHAPE or element.shape != ():
        return None
    part = element.inputs[0]
    if part.op is not Op.SLICE or part.inputs[0].ndim != 1 or part.shape != (1,):
        return None
    return id(part.inputs[0]), node.arg


def _start(check: Node) -> int:
    return check.inputs[0].inputs[0].arg[0][0]


def _merged(outputs: list[Node], positions: list[int]) -> Node | None:
    """One check of the slice holding every checked element, or None where the run does
    not merge (too short, starts not a progression, another check among them)."""
    checks = [outputs[p] for p in positions]
    if len({id(c) for c in checks}) < MIN_MERGED or positions[-1] - positions[0] + 1 != \
            len(positions):
        return None
    checks = sorted({id(c): c for c in checks}.values(), key=lambda c: c.serial)
    starts = [_start(c) for c in checks]
    step = starts[1] - starts[0]
    if step < 1 or any(b - a != step for a, b in zip(starts, starts[1:])):
        return None
    source = checks[0].inputs[0].inputs[0].inputs[0]
    part = B.slice_(source, [(starts[0], starts[-1] + 1, step)])
    name, params = checks[0].arg
    return B.library_call(name, [part], params)
