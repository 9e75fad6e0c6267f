"""VJP rules of library calls (ir/library.py), keyed by the function's name.

`rules.py` registers one rule for `library-call` that looks the called function up here;
a function without an entry (a factorization, a quantile, a function with several
results) raises NotDifferentiableError naming it.  Each rule is the local chain rule
written with builder ops, library calls included, on `(g, node, *operands)`:

    x = solve(a, b):   db = solve(a^T, g),  da = -db x^T
    y = inv(a):        da = -y^T g y^T
    d = det(a):        da = g d inv(a)^T
    y = cumsum(x):     dx = reverse-cumsum(g)  (np.add.accumulate, nancumsum and
                       cumulative_sum too: NaNs get 0, an initial 0 drops g_0)
    y = sort(x):       dx = g at the places of x that sorting moved (an inverse permutation)
    y = fft(x):        dx = fft(g)  (the DFT matrix is symmetric; JAX's complex convention)

Batched operands must share their batch dims (a broadcast batch raises, naming it).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..ir import Node, Op
from ..ir import builder as B

LIBRARY_VJP: dict[str, Callable] = {}


def library_vjp(*names: str):
    def register(rule):
        for name in names:
            LIBRARY_VJP[name] = rule
        return rule
    return register


def not_differentiable(node: Node, why: str = "has no gradient rule"):
    from . import NotDifferentiableError
    return NotDifferentiableError(f"{node.arg[0]} (a library call) {why}"
                                  + (f" (at {node.loc})" if node.loc else ""))


def _params(node: Node) -> dict:
    return dict(node.arg[1])


def _matrix_transpose(x: Node) -> Node:
    perm = list(range(x.ndim))
    perm[-2:] = perm[-1], perm[-2]
    return B.transpose(x, perm)


def _matmul(x: Node, y: Node) -> Node:
    """x @ y over shared batch dims."""
    batch = tuple(range(x.ndim - 2))
    return B.dot(x, y, batch, batch, (x.ndim - 1,), (y.ndim - 2,))


def _outer(x: Node, y: Node) -> Node:
    """x[..., :, None] * y[..., None, :] over shared batch dims."""
    shape = x.shape + y.shape[-1:]
    return B.binary(Op.MUL, B.broadcast(x, shape, tuple(range(x.ndim))),
                    B.broadcast(y, shape, tuple(range(y.ndim - 1)) + (y.ndim,)))


def _same_batch(node: Node, *operands: Node, rank: int = 2) -> None:
    batches = {op.shape[:op.ndim - rank] for op in operands}
    if len(batches) > 1:
        raise not_differentiable(node, f"is not differentiable with broadcast batch dims "
                                 f"{sorted(batches)}")


@library_vjp("np.linalg.solve")
def _solve(g, node, a, b):                    # x = a^-1 b
    vector = b.ndim == 1
    _same_batch(node, a, *([] if vector else [b]))
    if vector and a.ndim > 2:
        raise not_differentiable(node, "is not differentiable for a batch of matrices and "
                                 "one vector")
    db = B.library_call("np.linalg.solve", [_matrix_transpose(a), g])
    if vector:
        da = B.unary(Op.NEG, _outer(db, node))
    else:
        da = B.unary(Op.NEG, _matmul(db, _matrix_transpose(node)))
    return da, db


@library_vjp("np.linalg.inv")
def _inv(g, node, a):                         # d a^-1 = -a^-1 da a^-1
    yt = _matrix_transpose(node)
    return (B.unary(Op.NEG, _matmul(_matmul(yt, g), yt)),)


@library_vjp("np.linalg.det")
def _det(g, node, a):                         # d det a = det a tr(a^-1 da)
    inv_t = _matrix_transpose(B.library_call("np.linalg.inv", [a]))
    scale = B.binary(Op.MUL, g, node)
    return (B.binary(Op.MUL, B.broadcast(scale, a.shape, tuple(range(a.ndim - 2))), inv_t),)


@library_vjp("np.cumsum")
def _cumsum(g, node, x):                      # y_i = sum_{j<=i} x_j: dx_j = sum_{i>=j} g_i
    axis = _params(node).get("axis")
    flat = axis is None
    axis = 0 if flat else (axis + x.ndim if axis < 0 else axis)
    total = _reverse_cumsum(g, axis)
    return (B.reshape(total, x.shape) if flat else total,)


def _reverse_cumsum(g: Node, axis: int) -> Node:
    """out_j = sum_{i>=j} g_i along `axis` (a float16 g stays NumPy's cumsum, which
    rounds every step to float16)."""
    if g.dtype == np.float16:
        reverse = B.reverse(g, (axis,))
        return B.reverse(B.library_call("np.cumsum", [reverse], {"axis": axis}), (axis,))
    from .scan_rules import reverse_cumsum
    return reverse_cumsum(g, axis)


@library_vjp("np.ufunc.accumulate")
def _accumulate(g, node, x):                  # np.add.accumulate is cumsum along its axis
    params = _params(node)
    if params.get("ufunc") != "add":
        raise not_differentiable(node, f"of np.{params.get('ufunc')} has no gradient rule "
                                 "(np.add.accumulate has)")
    return (_reverse_cumsum(g, params.get("axis", 0)),)


@library_vjp("np.nancumsum")
def _nancumsum(g, node, x):                   # NaNs count as 0: their cotangent is 0
    dx, = _cumsum(g, node, x)
    if x.dtype.kind not in "fc":
        return (dx,)
    is_number = B.binary(Op.EQ, x, x)
    return (B.select(is_number, dx, B.broadcast(B.constant(np.zeros((), dx.dtype)),
                                                 x.shape)),)


@library_vjp("np.cumulative_sum")
def _cumulative_sum(g, node, x):              # include_initial: y_0 = 0, y_i = sum_{j<i}
    params = _params(node)
    axis = params.get("axis")
    axis = 0 if axis is None else (axis + x.ndim if axis < 0 else axis)
    if params.get("include_initial"):
        g = B.slice_(g, tuple((1, n, 1) if d == axis else (0, n, 1)
                             for d, n in enumerate(g.shape)))
    return (_reverse_cumsum(g, axis),)


@library_vjp("np.sort")
def _sort(g, node, x):                        # dx = g taken at the inverse permutation
    params = _params(node)
    axis = params.get("axis", -1)
    if axis is None:
        flat = B.reshape(x, (x.size,))
        return (B.reshape(_unsort(g, flat, 0, params), x.shape),)
    return (_unsort(g, x, axis + x.ndim if axis < 0 else axis, params),)


def _unsort(g: Node, x: Node, axis: int, params: dict) -> Node:
    """g[..., inv[j]] along `axis`, inv = the inverse of the permutation that sorts x."""
    order = B.library_call("np.argsort", [x], {"axis": axis, "kind": params.get("kind"),
                                               "stable": params.get("stable")})
    inverse = B.library_call("np.argsort", [order], {"axis": axis, "kind": "stable"})
    perm = [d for d in range(x.ndim) if d != axis] + [axis]   # the axis last: flat rows
    moved_g, moved_inv = B.transpose(g, perm), B.transpose(inverse, perm)
    row_starts = B.binary(Op.MUL, _row_index(moved_inv.shape),
                          B.broadcast(B.constant(np.intp(x.shape[axis])), moved_inv.shape))
    flat_index = B.reshape(B.binary(Op.ADD, row_starts, moved_inv), (x.size,))
    taken = B.gather(B.reshape(moved_g, (x.size,)), flat_index, 0)
    back = [perm.index(d) for d in range(x.ndim)]
    return B.transpose(B.reshape(taken, moved_g.shape), back)


def _row_index(shape) -> Node:
    """The C-order index of each row (all dims but the last) of an array of `shape`."""
    index = B.broadcast(B.constant(np.intp(0)), shape)
    stride = 1
    for d in range(len(shape) - 2, -1, -1):
        term = B.binary(Op.MUL, B.iota(shape, np.intp, d),
                        B.broadcast(B.constant(np.intp(stride)), shape))
        index = B.binary(Op.ADD, index, term)
        stride *= shape[d]
    return index


@library_vjp("np.fft.fft", "np.fft.ifft")
def _fft(g, node, x):                         # linear with a symmetric matrix: F^T g = F g
    params = _params(node)
    axis = params.get("axis", -1)
    if params.get("n") not in (None, x.shape[axis]):
        raise not_differentiable(node, "is not differentiable with n= (a crop or a pad)")
    return (B.library_call(node.arg[0], [g], params),)
