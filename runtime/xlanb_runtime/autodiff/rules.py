"""VJP rules: one per differentiable op, the local chain rule written with builder ops.

A rule is `@vjp(Op.X)` on `(g, node, *operands)`, where `g` is the cotangent of `node`'s
output; it returns one cotangent per operand (None where the operand is not differentiable:
indices, predicates, integers).  The IR is strict (operands of a binary op share one shape),
so no rule needs to un-broadcast: BROADCAST's own rule sums the cotangent back.

    @vjp(Op.MUL)                         # d(x*y) = y dx + x dy
    def _mul(g, node, x, y):
        return mul(g, y), mul(g, x)

Complex values follow JAX's convention: the cotangent of z = x + iy is dL/dx - i dL/dy,
so holomorphic rules are the real ones unchanged (d e^z = e^z dz), `real` sends t back as
t + 0i, `imag` as -it, `conjugate` conjugates, and a real -> complex convert keeps the real
part.  A real loss of real inputs thus gets its true gradient through complex steps.

Ops that are piecewise constant (sign, floor, compare, arg-reduce, ...) are listed in
`ZERO_GRADIENT`: their cotangent is zero, and `tests/runtime/test_autodiff.py` checks every
op of the enum is in one table or the other.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..ir import Node, Op
from ..ir import builder as B

VJP: dict[Op, Callable] = {}
ZERO_GRADIENT = frozenset({Op.SIGN, Op.FLOOR, Op.CEIL, Op.ROUND, Op.NOT, Op.IS_FINITE,
                           Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.AND, Op.OR, Op.XOR,
                           Op.SHIFT_LEFT, Op.SHIFT_RIGHT,
                           Op.ARGREDUCE, Op.IOTA, Op.CONSTANT, Op.PARAMETER, Op.FLOOR_DIV,
                           Op.BITCAST})   # bits read as another type: no derivative


def vjp(op: Op):
    def register(rule):
        VJP[op] = rule
        return rule
    return register


# -- small builders --------------------------------------------------------------------------

def full(like: Node, value) -> Node:
    return B.broadcast(B.constant(np.array(value, like.dtype)), like.shape)


def add(x, y):
    return B.binary(Op.ADD, x, y)


def sub(x, y):
    return B.binary(Op.SUB, x, y)


def mul(x, y):
    return B.binary(Op.MUL, x, y)


def div(x, y):
    return B.binary(Op.DIV, x, y)


def neg(x):
    return B.unary(Op.NEG, x)


def scale(x, value):
    return mul(x, full(x, value))


def where(pred, x, y):
    return B.select(pred, x, y)


def is_float(node: Node) -> bool:
    """Float or complex: the dtypes that carry gradients."""
    return node.dtype.kind in "fc"


def is_complex(node: Node) -> bool:
    return node.dtype.kind == "c"


# -- elementwise -----------------------------------------------------------------------------

@vjp(Op.NEG)
def _neg(g, node, x):                         # d(-x) = -dx
    return (neg(g),)


@vjp(Op.ABS)
def _abs(g, node, x):                         # d|x| = sign(x) dx
    if is_complex(x):                         # complex: conj(z)/|z| (0 at z = 0)
        r = B.convert(node, x.dtype)
        unit = where(B.binary(Op.EQ, r, full(r, 0)), full(x, 0), div(B.unary(Op.CONJ, x), r))
        return (mul(B.convert(g, x.dtype), unit),)
    return (mul(g, B.unary(Op.SIGN, x)),)


@vjp(Op.REAL)
def _real(g, node, z):                        # Re: t -> t + 0i
    return (B.convert(g, z.dtype),)


@vjp(Op.IMAG)
def _imag(g, node, z):                        # Im: t -> -it
    return (B.binary(Op.COMPLEX, full(g, 0), neg(g)),)


@vjp(Op.COMPLEX)
def _complex(g, node, re, im):                # re + i im: g -> (Re g, -Im g)
    return B.unary(Op.REAL, g), neg(B.unary(Op.IMAG, g))


@vjp(Op.CONJ)
def _conj(g, node, z):                        # conjugation is its own transpose
    return (B.unary(Op.CONJ, g),)


@vjp(Op.EXP)
def _exp(g, node, x):                         # d e^x = e^x dx
    return (mul(g, node),)


@vjp(Op.EXP2)
def _exp2(g, node, x):                        # d 2^x = 2^x ln2 dx
    return (mul(g, mul(node, full(node, math.log(2)))),)


@vjp(Op.EXPM1)
def _expm1(g, node, x):                       # d(e^x - 1) = e^x dx
    return (mul(g, add(node, full(node, 1))),)


@vjp(Op.LOG)
def _log(g, node, x):                         # d log x = dx / x
    return (div(g, x),)


@vjp(Op.LOG1P)
def _log1p(g, node, x):                       # d log(1+x) = dx / (1+x)
    return (div(g, add(x, full(x, 1))),)


@vjp(Op.SQRT)
def _sqrt(g, node, x):                        # d sqrt x = dx / (2 sqrt x)
    return (div(scale(g, 0.5), node),)


@vjp(Op.RSQRT)
def _rsqrt(g, node, x):                       # d x^-1/2 = -1/2 x^-1/2 / x dx
    return (div(mul(scale(g, -0.5), node), x),)


@vjp(Op.TANH)
def _tanh(g, node, x):                        # d tanh x = (1 - tanh^2 x) dx
    return (mul(g, sub(full(node, 1), mul(node, node))),)


@vjp(Op.SIN)
def _sin(g, node, x):                         # d sin x = cos x dx
    return (mul(g, B.unary(Op.COS, x)),)


@vjp(Op.COS)
def _cos(g, node, x):                         # d cos x = -sin x dx
    return (neg(mul(g, B.unary(Op.SIN, x))),)


@vjp(Op.TAN)
def _tan(g, node, x):                         # d tan x = (1 + tan^2 x) dx
    return (mul(g, add(full(node, 1), mul(node, node))),)


def _inverse_root(x):                         # 1 / sqrt((1 - x)(1 + x))
    one = full(x, 1)
    return div(one, B.unary(Op.SQRT, mul(sub(one, x), add(one, x))))


@vjp(Op.ASIN)
def _asin(g, node, x):                        # d asin x = dx / sqrt(1 - x^2)
    return (mul(g, _inverse_root(x)),)


@vjp(Op.ACOS)
def _acos(g, node, x):                        # d acos x = -dx / sqrt(1 - x^2)
    return (neg(mul(g, _inverse_root(x))),)


@vjp(Op.SINH)
def _sinh(g, node, x):                        # d sinh x = cosh x dx
    return (mul(g, B.unary(Op.COSH, x)),)


@vjp(Op.COSH)
def _cosh(g, node, x):                        # d cosh x = sinh x dx
    return (mul(g, B.unary(Op.SINH, x)),)


@vjp(Op.ATAN)
def _atan(g, node, x):                        # d atan x = dx / (1 + x^2)
    return (div(g, add(full(x, 1), mul(x, x))),)


@vjp(Op.ASINH)
def _asinh(g, node, x):                       # d asinh x = dx / sqrt(1 + x^2)
    return (div(g, B.unary(Op.SQRT, add(full(x, 1), mul(x, x)))),)


@vjp(Op.ACOSH)
def _acosh(g, node, x):                       # d acosh x = dx / sqrt((x - 1)(x + 1))
    one = full(x, 1)
    return (div(g, B.unary(Op.SQRT, mul(sub(x, one), add(x, one)))),)


@vjp(Op.ATANH)
def _atanh(g, node, x):                       # d atanh x = dx / ((1 - x)(1 + x))
    one = full(x, 1)
    return (div(g, mul(sub(one, x), add(one, x))),)


@vjp(Op.ERF)
def _erf(g, node, x):                         # d erf x = 2/sqrt(pi) e^(-x^2) dx
    gauss = B.unary(Op.EXP, neg(mul(x, x)))
    return (mul(scale(g, 2 / math.sqrt(math.pi)), gauss),)


@vjp(Op.ADD)
def _add(g, node, x, y):                      # d(x+y) = dx + dy
    return g, g


@vjp(Op.SUB)
def _sub(g, node, x, y):                      # d(x-y) = dx - dy
    return g, neg(g)


@vjp(Op.MUL)
def _mul(g, node, x, y):                      # d(xy) = y dx + x dy
    return mul(g, y), mul(g, x)


@vjp(Op.DIV)
def _div(g, node, x, y):                      # d(x/y) = dx/y - x/y^2 dy
    return div(g, y), neg(div(mul(g, node), y))


@vjp(Op.REM)
def _rem(g, node, x, y):                      # x % y = x - y floor(x/y)
    floor = B.unary(Op.FLOOR, div(x, y)) if is_float(x) else None
    return g, (neg(mul(g, floor)) if floor is not None else None)


@vjp(Op.POW)
def _pow(g, node, x, y):                      # d x^y = y x^(y-1) dx + x^y log x dy
    if not is_float(x):
        return None, None
    dx = mul(g, mul(y, B.binary(Op.POW, x, sub(y, full(y, 1)))))
    # x**0 is constant: 0 * 0**-1 would be nan at x = 0 (JAX's rule has the same guard)
    dx = where(B.binary(Op.EQ, y, full(y, 0)), full(dx, 0), dx)
    if is_complex(x):                         # log z is defined off z = 0
        positive = B.binary(Op.NE, x, full(x, 0))
    else:
        positive = B.binary(Op.GT, x, full(x, 0))
    safe_x = where(positive, x, full(x, 1))
    dy = where(positive, mul(g, mul(node, B.unary(Op.LOG, safe_x))), full(x, 0))
    return dx, dy


def _minmax(g, node, x, y):
    """Ties split the cotangent in half, as JAX does."""
    zero = full(g, 0)
    x_wins = B.convert(B.binary(Op.EQ, x, node), g.dtype)
    y_wins = B.convert(B.binary(Op.EQ, y, node), g.dtype)
    share = div(g, add(x_wins, y_wins))
    return where(B.binary(Op.EQ, x, node), share, zero), \
        where(B.binary(Op.EQ, y, node), share, zero)


VJP[Op.MAX] = _minmax                         # d max(x,y) = [x wins] dx + [y wins] dy
VJP[Op.MIN] = _minmax


@vjp(Op.ATAN2)
def _atan2(g, node, x, y):                    # d atan2(x,y) = (y dx - x dy) / (x^2+y^2)
    norm = add(mul(x, x), mul(y, y))
    return div(mul(g, y), norm), neg(div(mul(g, x), norm))


@vjp(Op.SELECT)
def _select(g, node, pred, a, b):             # select routes the cotangent
    zero = full(g, 0)
    return None, where(pred, g, zero), where(pred, zero, g)


@vjp(Op.CONVERT)
def _convert(g, node, x):                     # a cast's cotangent is cast back
    return (B.convert(g, x.dtype) if is_float(x) else None,)


# -- data movement ---------------------------------------------------------------------------

@vjp(Op.BROADCAST)
def _broadcast(g, node, x):                   # broadcasting copies: the cotangent sums back
    dims = node.arg
    summed = [d for d in range(node.ndim) if d not in dims]
    summed += [dims[i] for i in range(x.ndim) if x.shape[i] == 1 and node.shape[dims[i]] != 1]
    return (B.reshape(B.reduce(g, "sum", summed), x.shape),)


@vjp(Op.RESHAPE)
def _reshape(g, node, x):
    return (B.reshape(g, x.shape),)


@vjp(Op.TRANSPOSE)
def _transpose(g, node, x):
    inverse = [0] * len(node.arg)
    for k, p in enumerate(node.arg):
        inverse[p] = k
    return (B.transpose(g, inverse),)


@vjp(Op.SLICE)
def _slice(g, node, x):                       # the slice's cotangent, zero-padded back
    if node.size == 0:
        return (full(x, 0),)
    config = []
    for (start, _, step), n, m in zip(node.arg, x.shape, node.shape):
        config.append((start, n - start - (m - 1) * step - 1, step - 1))
    return (B.pad(g, B.constant(np.array(0, g.dtype)), config),)


@vjp(Op.PAD)
def _pad(g, node, x, value):                  # inner part to x, the rest to the pad value
    specs = [(lo, lo + (n - 1) * (interior + 1) + 1, interior + 1) if n else (lo, lo, 1)
             for (lo, _, interior), n in zip(node.arg, x.shape)]
    dx = B.slice_(g, specs)
    all_axes = tuple(range(node.ndim))
    dvalue = sub(B.reduce(g, "sum", all_axes), B.reduce(dx, "sum", tuple(range(x.ndim))))
    return dx, dvalue


@vjp(Op.CONCATENATE)
def _concatenate(g, node, *xs):
    axis, offset, grads = node.arg, 0, []
    for x in xs:
        specs = [(0, n, 1) for n in node.shape]
        specs[axis] = (offset, offset + x.shape[axis], 1)
        grads.append(B.slice_(g, specs))
        offset += x.shape[axis]
    return tuple(grads)


@vjp(Op.REVERSE)
def _reverse(g, node, x):
    return (B.reverse(g, node.arg),)


# -- reductions and contraction ---------------------------------------------------------------

def _expand(value: Node, x: Node, axes) -> Node:
    kept = [d for d in range(x.ndim) if d not in axes]
    return B.broadcast(value, x.shape, kept)


@vjp(Op.REDUCE)
def _reduce(g, node, x):
    kind, axes = node.arg
    if kind == "sum":                         # d sum = broadcast of the cotangent
        return (_expand(g, x, axes),)
    if kind == "prod":                        # d prod x / d x_i = the product of the others
        return (mul(_expand(g, x, axes), _product_of_others(x, axes)),)
    if kind in ("max", "min"):                # ties share the cotangent equally
        hits = B.convert(B.binary(Op.EQ, x, _expand(node, x, axes)), x.dtype)
        count = B.reduce(hits, "sum", axes)
        return (mul(hits, _expand(div(g, count), x, axes)),)
    return (None,)                            # any / all


def _product_of_others(x: Node, axes) -> Node:
    """Each element's product of the other elements over `axes`: the exclusive prefix
    product times the exclusive suffix product, with the axes moved last and flattened.
    Not prod / x_i, which is 0/0 = nan at a zero (np.prod([2, 0, 5])'s gradient is
    [0, 10, 0])."""
    from .scan_rules import shifted
    if x.size == 0:
        return full(x, 0)
    kept = [d for d in range(x.ndim) if d not in axes]
    perm = kept + sorted(axes)
    moved = B.transpose(x, perm)
    last = len(kept)
    flat = B.reshape(moved, tuple(x.shape[d] for d in kept) + (math.prod(
        x.shape[d] for d in axes),))
    before = shifted(B.scan(flat, "prod", last), last, -1, 1)
    after = B.reverse(shifted(B.scan(B.reverse(flat, (last,)), "prod", last), last, -1, 1),
                      (last,))
    others = B.reshape(mul(before, after), moved.shape)
    return B.transpose(others, [perm.index(d) for d in range(x.ndim)])


@vjp(Op.DOT)
def _dot(g, node, lhs, rhs):
    """Each operand's cotangent is a contraction of g with the other operand, ordered so
    that for plain matmuls no transpose is needed (dlhs = g rhs^T, drhs = lhs^T g)."""
    lb, rb, lc, rc = node.arg
    nb = len(lb)
    lfree = [d for d in range(lhs.ndim) if d not in lb + lc]
    rfree = [d for d in range(rhs.ndim) if d not in rb + rc]
    nl, nr = len(lfree), len(rfree)
    g_batch = tuple(range(nb))
    g_lfree = tuple(range(nb, nb + nl))
    g_rfree = tuple(range(nb + nl, nb + nl + nr))
    dlhs = B.dot(g, rhs, g_batch, rb, g_rfree, rfree)
    # dlhs dims: batch, lhs free, rhs dims in rc (ascending) -> lhs dims lc
    lhs_of = list(lb) + lfree + [lc[rc.index(r)] for r in sorted(rc)]
    drhs = B.dot(lhs, g, lb, g_batch, lfree, g_lfree)
    # drhs dims: batch, lhs dims in lc (ascending) -> rhs dims rc, then g's rhs-free dims
    rhs_of = list(rb) + [rc[lc.index(c)] for c in sorted(lc)] + rfree
    return _arrange(dlhs, lhs_of), _arrange(drhs, rhs_of)


def _arrange(value: Node, dims_of: list[int]) -> Node:
    """Transpose `value`, whose dim k is operand dim dims_of[k], into operand order."""
    perm = [dims_of.index(d) for d in range(len(dims_of))]
    return B.transpose(value, perm)


# scan: its own module (the cumprod and max rules need a recurrence helper)
from .scan_rules import scan_vjp  # noqa: E402  (it imports this module's builders)

VJP[Op.SCAN] = scan_vjp


# -- indexing and collectives ----------------------------------------------------------------

@vjp(Op.GATHER)
def _gather(g, node, x, indices):             # gathered rows' cotangents add back
    return B.scatter_add(full(x, 0), indices, g, node.arg), None


@vjp(Op.SCATTER_ADD)
def _scatter_add(g, node, x, indices, updates):
    return g, None, B.gather(g, indices, node.arg)


@vjp(Op.SCATTER)
def _scatter(g, node, x, indices, updates):
    """x's cotangent where no update landed; each update's where it was the last write (its
    position in the indices' C order is the largest among the writes to that target)."""
    axis, rank = node.arg, indices.ndim
    landed = B.scatter(full(x, 0), indices, full(updates, 1), axis)
    count = int(np.prod(indices.shape, dtype=np.int64))
    order = B.reshape(B.iota((count,), np.int64, 0), indices.shape)
    order = B.broadcast(order, updates.shape, tuple(range(axis, axis + rank)))
    last = B.gather(B.scatter(B.broadcast(B.constant(np.int64(-1)), x.shape), indices, order,
                              axis), indices, axis)
    kept = B.select(B.binary(Op.EQ, last, order), B.gather(g, indices, axis), full(updates, 0))
    return mul(g, sub(full(x, 1), landed)), None, kept


@vjp(Op.ALL_REDUCE)
def _all_reduce(g, node, x):                  # sum/mean across replicas is linear
    if node.arg not in ("sum", "mean"):
        raise NotImplementedError(f"all-reduce {node.arg!r} is not differentiable; only "
                                  "'sum' and 'mean' are")
    return (B.all_reduce(g, node.arg),)


# -- library calls (library_rules.py) -----------------------------------------------------------

@vjp(Op.LIBRARY_CALL)
def _library_call(g, node, *operands):        # the called function's own rule
    from ..ir.interpret import is_token
    from .library_rules import LIBRARY_VJP, not_differentiable
    rule = LIBRARY_VJP.get(node.arg[0])
    if rule is None or is_token(node):
        raise not_differentiable(node)
    return rule(g, node, *operands)


@vjp(Op.LIBRARY_RESULT)
def _library_result(g, node, call):           # functions with several results: none yet
    from .library_rules import not_differentiable
    raise not_differentiable(call)
