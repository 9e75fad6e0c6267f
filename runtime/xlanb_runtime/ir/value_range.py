"""Integer value ranges: the interval a node's values provably lie in, from its dtype and
what computed it.

Indexing with a traced index needs NumPy's IndexError for an index out of bounds, which
costs a run-time check (a min and a max of the index); an index that an arg-reduction,
an iota, `np.clip` or `% n` made is in bounds by construction and needs none.  The
analysis is a forward interval propagation, conservative: an integer node it cannot
bound better (a parameter, a reduction, a scan, a result that may wrap around) has its
dtype's range; a float has None.
"""
from __future__ import annotations

import numpy as np

from .graph import Node
from .ops import Op

Interval = tuple[int, int]
_MAX_DEPTH = 40
# ops whose values are a subset of their first operand's
_SUBSET_OF_OPERAND = frozenset({Op.BROADCAST, Op.RESHAPE, Op.TRANSPOSE, Op.SLICE, Op.REVERSE,
                                Op.GATHER, Op.DYNAMIC_SLICE})


def value_range(node: Node) -> Interval | None:
    """(lo, hi) with lo <= every value of `node` <= hi; None for a float node."""
    return _range(node, {}, 0)


def _range(node: Node, memo: dict, depth: int) -> Interval | None:
    """`_compute`'s interval, else (an integer node it cannot bound better, one that may
    wrap around) its dtype's range, which holds every value it can take."""
    key = id(node)
    if key not in memo:
        found = _compute(node, memo, depth) if depth < _MAX_DEPTH else None
        memo[key] = found if found is not None or node.dtype.kind not in "iub" else \
            _dtype_range(node.dtype)
    return memo[key]


def _compute(node: Node, memo: dict, depth: int) -> Interval | None:
    if node.dtype.kind == "b":
        return (0, 1)
    if node.dtype.kind not in "iu":
        return None
    op, inputs = node.op, node.inputs
    sub = [lambda k=k: _range(inputs[k], memo, depth + 1) for k in range(len(inputs))]
    if op is Op.CONSTANT:
        values = np.asarray(node.arg)
        return (int(values.min()), int(values.max())) if values.size else None
    if op is Op.IOTA:
        return (0, max(node.shape[node.arg] - 1, 0))
    if op is Op.ARGREDUCE:
        return (0, max(inputs[0].shape[node.arg[1]] - 1, 0))
    if op in _SUBSET_OF_OPERAND:
        return sub[0]()
    if op is Op.ABS:                    # |INT64_MIN| wraps to itself: past int64, None
        a = sub[0]()
        return _fits(None if a is None else (0 if a[0] <= 0 <= a[1] else min(map(abs, a)),
                                             max(map(abs, a))), node.dtype)
    if op is Op.CONVERT:
        return _fits(sub[0]() if inputs[0].dtype.kind in "iub" else None, node.dtype)
    if op in (Op.CONCATENATE, Op.SELECT, Op.PAD):
        parts = [sub[k]() for k in ((1, 2) if op is Op.SELECT else range(len(inputs)))]
        return None if None in parts else (min(p[0] for p in parts), max(p[1] for p in parts))
    if op in (Op.ADD, Op.SUB, Op.MUL, Op.MIN, Op.MAX, Op.REM, Op.FLOOR_DIV):
        a, b = sub[0](), sub[1]()
        return _fits(_arithmetic(op, a, b) if a and b else None, node.dtype)
    return None


def _arithmetic(op: Op, a: Interval, b: Interval) -> Interval | None:
    if op is Op.ADD:
        return (a[0] + b[0], a[1] + b[1])
    if op is Op.SUB:
        return (a[0] - b[1], a[1] - b[0])
    if op is Op.MUL:
        corners = [x * y for x in a for y in b]
        return (min(corners), max(corners))
    if op is Op.MIN:
        return (min(a[0], b[0]), min(a[1], b[1]))
    if op is Op.MAX:
        return (max(a[0], b[0]), max(a[1], b[1]))
    if b[0] <= 0:                       # % and // by a divisor that may be 0 or negative
        return None
    if op is Op.REM:                    # NumPy's %: the divisor's sign
        return (0, b[1] - 1)
    return (min(a[0] // b[0], a[0] // b[1]), max(a[1] // b[0], a[1] // b[1]))


def _dtype_range(dtype: np.dtype) -> Interval:
    if dtype.kind == "b":
        return (0, 1)
    info = np.iinfo(dtype)
    return (int(info.min), int(info.max))


def _fits(interval: Interval | None, dtype: np.dtype) -> Interval | None:
    """`interval` where the node's dtype holds it (no wrap-around), else None."""
    if interval is None:
        return None
    lo, hi = _dtype_range(dtype)
    return interval if lo <= interval[0] and interval[1] <= hi else None
