"""VJP of `scan` (cumsum, cumprod, maximum/minimum.accumulate), built from IR ops only.

Along the scan axis, with y the scan of x and g the cotangent of y:

    sum:      dx_j = sum_{i>=j} g_i                          a reversed cumsum
    prod:     dx_j = E_j r_j,  E_j = prod_{k<j} x_k           (an exclusive cumprod)
                               r_j = g_j + x_{j+1} r_{j+1}    (a reverse linear recurrence)
    max/min:  dx_j = [j holds the running max] (g_j + g_{j+1} + ... up to the next holder)

No rule divides by x, so zeros in a cumprod get their true gradient (d/dx_j of
prod_{k<=i} x_k is the product of the others, zero or not).  The recurrence is solved in
ceil(log2 n) doubling steps (Hillis-Steele, as JAX's associative scan), each a shifted
multiply-add that fuses: O(n log n) work, no sequential loop.

Ties in max/min: the running maximum is held by the position that first reached it
(NumPy's accumulate keeps the current value on a tie, so later equal values never take
over); that position gets the cotangent of every output it holds, the tied ones get 0.
At a tie the function has no derivative (one-sided finite differences differ); this is
the subgradient of "the first maximum wins", the convention of NumPy's argmax.
"""
from __future__ import annotations

import numpy as np

from ..ir import Node, Op
from ..ir import builder as B
from .rules import add, full, is_float, mul, where


def shifted(x: Node, axis: int, offset: int, fill) -> Node:
    """x moved along `axis` by `offset` places: out_j = x_{j+offset}, `fill` where that
    falls outside (offset > 0: reads ahead; < 0: behind)."""
    n = x.shape[axis]
    offset = max(-n, min(n, offset))
    keep = [(0, d, 1) for d in x.shape]
    keep[axis] = (offset, n, 1) if offset >= 0 else (0, n + offset, 1)
    config = [(0, 0, 0)] * x.ndim
    config[axis] = (0, offset, 0) if offset >= 0 else (-offset, 0, 0)
    return B.pad(B.slice_(x, keep), B.constant(np.array(fill, x.dtype)), config)


def reverse_recurrence(a: Node, b: Node, axis: int) -> Node:
    """r along `axis` with r_j = b_j + a_j r_{j+1} (r past the end is 0), by doubling:
    after the step of span s, b_j sums the terms of g up to j + 2s - 1 and a_j is the
    product of the coefficients over that span."""
    span, n = 1, a.shape[axis]
    while span < n:
        b = add(b, mul(a, shifted(b, axis, span, 0)))
        if 2 * span < n:
            a = mul(a, shifted(a, axis, span, 0))
        span *= 2
    return b


def reverse_cumsum(g: Node, axis: int) -> Node:
    """out_j = sum_{i>=j} g_i along `axis`."""
    return B.reverse(B.scan(B.reverse(g, (axis,)), "sum", axis), (axis,))


def scan_vjp(g, node, x):
    kind, axis = node.arg
    if not is_float(x):
        return (None,)
    if kind == "sum":
        return (reverse_cumsum(g, axis),)
    if kind == "prod":
        exclusive = shifted(node, axis, -1, 1)           # E_j = y_{j-1}, E_0 = 1
        r = reverse_recurrence(shifted(x, axis, 1, 0), g, axis)
        return (mul(exclusive, r),)
    # max/min: position j holds the running extreme from where y changes (and at 0)
    before = shifted(node, axis, -1, 0)
    position = B.iota(x.shape, np.int64, axis)
    first = B.binary(Op.EQ, position, full(position, 0))
    holds = B.binary(Op.OR, first, B.binary(Op.NE, node, before))
    # r_j = g_j + [j+1 does not start a new holder] r_{j+1}: the cotangent of j's outputs
    carries = B.convert(B.unary(Op.NOT, shifted(holds, axis, 1, True)), g.dtype)
    segment = reverse_recurrence(carries, g, axis)
    return (where(holds, segment, full(g, 0)),)
