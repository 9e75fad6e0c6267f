"""Complex numbers: real and imaginary parts, angle, casts to real, and the complex loops
of ufuncs.

Complex arrays are IR values of dtype complex64 / complex128.  The IR has ops for the
parts (`real`, `imag`, `conjugate`, and `complex(re, im)` building one exactly) and
refuses the ops complex values lack (order, rounding, bits: `ops.REAL_ONLY`), so this
module decides, per NumPy call, between a lowering and the context's `call_unsupported`
hook (a named error under `jit`, NumPy itself under `must_compile=False`):

    real(z), imag(z)    -> the parts, read  np.angle(z)  -> atan2(imag(z), real(z))
    np.real(z), np.imag(z) -> z.real, z.imag (writable views, `views.PartStep`), as NumPy
    z.astype(float)     -> convert + NumPy's ComplexWarning
    z1 < z2             -> NumPy's lexicographic order (real parts, then imaginary parts)
    np.maximum(z1, z2)  -> select on that order, NaN first, as NumPy's complex loops do

Reductions that need an order (max, min, argmax, argmin) go to the hook from
`reductions.py`.
"""
from __future__ import annotations

import math
import sys
import warnings

import numpy as np

from xlanb_runtime.ir import Node, Op
from xlanb_runtime.ir import builder as B

from ..source import _is_internal, entry
from ..tracer import Tracer
from . import implements, translate_errors, unsupported
from .promote import dtype_of, to_node, wrap


def is_complex(x) -> bool:
    """Whether `x` (a Tracer, node, array or scalar) has a complex dtype."""
    return np.dtype(dtype_of(x)).kind == "c"


# -- parts ---------------------------------------------------------------------------------

def _zeros_like(node: Node) -> Node:
    return B.broadcast(B.constant(np.zeros((), node.dtype)), node.shape)


def real(x) -> Tracer:
    """`x.real` and `np.real(x)`, read access: the real part (`x` itself when real)."""
    with entry("x.real"), translate_errors():
        node = to_node(x)
        if node.dtype.kind != "c":
            return x if isinstance(x, Tracer) else wrap(node)
        return wrap(B.unary(Op.REAL, node))


def imag(x) -> Tracer:
    """`x.imag` and `np.imag(x)`, read access: the imaginary part (zeros when real)."""
    with entry("x.imag"), translate_errors():
        node = to_node(x)
        if node.dtype.kind != "c":
            return wrap(_zeros_like(node))
        return wrap(B.unary(Op.IMAG, node))


@implements(np.real)
def real_function(val):
    """np.real(z) is `z.real`, as in NumPy: on a Tracer the writable view."""
    return val.real if isinstance(val, Tracer) else real(val)


@implements(np.imag)
def imag_function(val):
    """np.imag(z) is `z.imag`, as in NumPy: on a Tracer the writable view."""
    return val.imag if isinstance(val, Tracer) else imag(val)


@implements(np.angle)
def angle(z, deg=False):
    """atan2(imag, real), in NumPy's dtypes (integer input gives float64)."""
    if is_complex(z):
        result = np.arctan2(imag(z), real(z))
    else:
        result = np.arctan2(0, z)
    return result * (180 / np.pi) if deg else result


@implements(np.iscomplexobj)
def iscomplexobj(x) -> bool:
    return is_complex(x)


@implements(np.isrealobj)
def isrealobj(x) -> bool:
    return not is_complex(x)


@implements(np.iscomplex)
def iscomplex(x):
    return np.not_equal(imag(x), 0)


@implements(np.isreal)
def isreal(x):
    return np.equal(imag(x), 0)


# -- casts ---------------------------------------------------------------------------------

def _user_stacklevel() -> int:
    """The `stacklevel` at which a warning points at the user's line."""
    frame, level = sys._getframe(1), 1
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    return level


def warn_discarded_imaginary(src, dst) -> None:
    """NumPy's ComplexWarning for a complex -> real cast (emitted once, when tracing)."""
    if np.dtype(src).kind == "c" and np.dtype(dst).kind not in "cb":
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=_user_stacklevel())


def astype(x, dtype) -> Tracer:
    """`x.astype(dtype)` / `np.astype`: NumPy's unsafe cast; complex -> real keeps the real
    part with NumPy's ComplexWarning."""
    with entry("x.astype()"), translate_errors():
        node = to_node(x)
        warn_discarded_imaginary(node.dtype, dtype)
        return wrap(B.convert(node, np.dtype(dtype)))


# -- ufunc loops ---------------------------------------------------------------------------

def _parts(x: Node) -> tuple[Node, Node]:
    return B.unary(Op.REAL, x), B.unary(Op.IMAG, x)


def _lexicographic(real_op: Op, imag_op: Op):
    """NumPy's complex order, e.g. x < y = (xr < yr and no NaN in xi, yi) or (xr == yr and
    xi < yi): real parts first, imaginary parts break ties."""
    def rule(x: Node, y: Node) -> Node:
        (xr, xi), (yr, yi) = _parts(x), _parts(y)
        no_nan = B.binary(Op.AND, B.binary(Op.EQ, xi, xi), B.binary(Op.EQ, yi, yi))
        first = B.binary(Op.AND, B.binary(real_op, xr, yr), no_nan)
        tie = B.binary(Op.AND, B.binary(Op.EQ, xr, yr), B.binary(imag_op, xi, yi))
        return B.binary(Op.OR, first, tie)
    return rule


_LESS = _lexicographic(Op.LT, Op.LT)
_LESS_EQUAL = _lexicographic(Op.LT, Op.LE)
_GREATER = _lexicographic(Op.GT, Op.GT)
_GREATER_EQUAL = _lexicographic(Op.GT, Op.GE)


def _pick(order, nan_wins_from_first: bool):
    """maximum / minimum (NaN in x wins) and fmax / fmin (NaN in y loses), complex loops:
    x where order(x, y) or the NaN test holds, else y."""
    def rule(x: Node, y: Node) -> Node:
        nan = B.binary(Op.NE, x, x) if nan_wins_from_first else B.binary(Op.NE, y, y)
        return B.select(B.binary(Op.OR, order(x, y), nan), x, y)
    return rule


def _isinf(x: Node) -> Node:
    def part_isinf(p: Node) -> Node:
        return B.binary(Op.AND, B.unary(Op.NOT, B.unary(Op.IS_FINITE, p)),
                        B.binary(Op.EQ, p, p))
    re, im = _parts(x)
    return B.binary(Op.OR, part_isinf(re), part_isinf(im))


def _times_i(x: Node, sign: int = 1) -> Node:
    """i*x (sign 1) or -i*x (sign -1), exactly: a swap of the parts (a product with 1j
    would turn an infinite part into nan)."""
    re, im = _parts(x)
    if sign > 0:
        return B.binary(Op.COMPLEX, B.unary(Op.NEG, im), re)
    return B.binary(Op.COMPLEX, im, B.unary(Op.NEG, re))


def _tan(x: Node) -> Node:
    """tan z = -i tanh(iz): tanh stays finite where sin and cos overflow (large |Im z|)."""
    return _times_i(B.unary(Op.TANH, _times_i(x)), -1)


def _real_scale(x: Node, factor: float) -> Node:
    """x * factor for a real factor, part by part (as NumPy's log10, log2 and exp2 do)."""
    re, im = _parts(x)
    c = B.broadcast(B.constant(np.array(factor, re.dtype)), re.shape)
    return B.binary(Op.COMPLEX, B.binary(Op.MUL, re, c), B.binary(Op.MUL, im, c))


def _reciprocal(x: Node) -> Node:
    """NumPy's complex reciprocal (Smith's 1/z, with nan, not inf, at z = 0):
    |im| <= |re|: r = im/re, d = re + im r, 1/z = (1/d, -r/d); else r = re/im,
    d = re r + im, 1/z = (r/d, -1/d)."""
    re, im = _parts(x)
    one = B.broadcast(B.constant(np.ones((), re.dtype)), re.shape)
    mul, div = (lambda a, b: B.binary(Op.MUL, a, b)), (lambda a, b: B.binary(Op.DIV, a, b))
    r1, r2 = div(im, re), div(re, im)
    d1, d2 = B.binary(Op.ADD, re, mul(im, r1)), B.binary(Op.ADD, mul(re, r2), im)
    first = B.binary(Op.LE, B.unary(Op.ABS, im), B.unary(Op.ABS, re))
    real = B.select(first, div(one, d1), div(r2, d2))
    imag = B.unary(Op.NEG, B.select(first, div(r1, d1), div(one, d2)))
    return B.binary(Op.COMPLEX, real, imag)


# Ufuncs whose real rule (ufuncs.RULES) is also right on complex operands.
_SAME_RULE = (np.negative, np.positive, np.absolute, np.exp, np.log, np.sqrt, np.square,
              np.tanh, np.sin, np.cos,
              np.isfinite, np.isnan, np.logical_not, np.add, np.subtract, np.multiply,
              np.true_divide, np.power, np.float_power, np.equal, np.not_equal,
              np.logical_and, np.logical_or, np.logical_xor)

COMPLEX_RULES = {
    np.conjugate: lambda x: B.unary(Op.CONJ, x),
    np.tan: _tan,
    np.reciprocal: _reciprocal,
    np.log2: lambda x: _real_scale(B.unary(Op.LOG, x), 1 / math.log(2)),
    np.log10: lambda x: _real_scale(B.unary(Op.LOG, x), 1 / math.log(10)),
    np.exp2: lambda x: B.unary(Op.EXP, _real_scale(x, math.log(2))),
    np.isinf: _isinf,
    np.less: _LESS,
    np.less_equal: _LESS_EQUAL,
    np.greater: _GREATER,
    np.greater_equal: _GREATER_EQUAL,
    np.maximum: _pick(_GREATER_EQUAL, True),
    np.minimum: _pick(_LESS_EQUAL, True),
    np.fmax: _pick(_GREATER_EQUAL, False),
    np.fmin: _pick(_LESS_EQUAL, False),
}


def complex_rule(ufunc: np.ufunc):
    """The rule for `ufunc`'s complex loop, or None (then `unsupported_loop`)."""
    if ufunc in COMPLEX_RULES:
        return COMPLEX_RULES[ufunc]
    if ufunc in _SAME_RULE:
        from .ufuncs import RULES
        return RULES[ufunc]
    return None


def unsupported_loop(func, inputs: tuple, kwargs: dict, dtype) -> object:
    """`func` on complex operands without a compiled lowering: the context's hook, named
    with the dtype (`np.expm1 on complex128`)."""
    name = getattr(func, "__name__", str(func))
    return unsupported(func, inputs, kwargs, f"np.{name} on {np.dtype(dtype)}")
