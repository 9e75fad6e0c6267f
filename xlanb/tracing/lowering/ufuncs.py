"""Ufuncs (NEP 13) and the elementwise functions `np.where`, `np.clip`, `np.round`.

Each ufunc has a rule from operand nodes to a node.  `lower_ufunc` first asks NumPy which
loop it would run (`ufunc.resolve_dtypes`, with weak Python scalars), converts and
broadcasts the operands to that loop's dtypes, applies the rule, and converts the result to
the loop's output dtype, so dtypes match NumPy eager exactly.  Ufuncs without an IR op are
composed from others (`tan = sin / cos`, `isnan(x) = x != x`, `x << k = x * 2**k`).
"""
from __future__ import annotations

import math

import numpy as np

from xlanb_runtime.ir import Node, Op
from xlanb_runtime.ir import builder as B

from ...errors import DTypeError, UnsupportedNumPyFunctionError
from ..layout import with_order
from ..tracer import Tracer
from . import fail, implements, inplace, unsupported, unsupported_option
from .promote import (is_operand, mark_weak, operands, promotion_type, result_type, scalar,
                      shape_of, to_node, wrap)


def _un(op):
    return lambda x: B.unary(op, x)


def _bin(op):
    return lambda x, y: B.binary(op, x, y)


def _nonnegative_integer_exponent(y: Node) -> Node:
    """NumPy's ValueError for a negative exponent of an integer power: at trace time for a
    constant, else from a run-time check of the exponent's minimum (`check_within`)."""
    if y.dtype.kind != "i":
        return y
    constant = y
    while constant.op is Op.BROADCAST:
        constant = constant.inputs[0]
    message = "Integers to negative integer powers are not allowed."
    if constant.op is Op.CONSTANT:
        if (np.asarray(constant.arg) < 0).any():
            raise ValueError(message)
        return y
    from .library import check_within
    check_within(y, 0, None, "ValueError", message)
    return y


def _const(x: Node, value) -> Node:
    return B.broadcast(scalar(value, x.dtype), x.shape)


def _is_float(x: Node) -> bool:
    return x.dtype.kind in "fc"


def _float_only(op):
    """floor/ceil/rint: the identity on integer loops (NumPy >= 2.3 keeps int dtypes)."""
    return lambda x: B.unary(op, x) if _is_float(x) else x


def _abs(x):
    return x if x.dtype.kind in "ub" else B.unary(Op.ABS, x)


def _isnan(x):
    return B.binary(Op.NE, x, x) if _is_float(x) else _const(x, False)


def _isfinite(x):
    return B.unary(Op.IS_FINITE, x) if _is_float(x) else B.convert(_const(x, True), bool)


def _isinf(x):
    if not _is_float(x):
        return B.convert(_const(x, False), bool)
    return B.binary(Op.AND, B.unary(Op.NOT, B.unary(Op.IS_FINITE, x)), B.binary(Op.EQ, x, x))


def _reciprocal(x):
    if _is_float(x):
        return B.binary(Op.DIV, _const(x, 1), x)
    # integer 1/x truncates: +-1 stay, everything else is 0
    return B.select(B.binary(Op.EQ, _abs(x), _const(x, 1)), x, _const(x, 0))


def _scaled(op, factor):
    return lambda x: B.binary(Op.MUL, B.unary(op, x), _const(x, factor))


def _trunc(x):
    if not _is_float(x):
        return x
    return B.select(B.binary(Op.LT, x, _const(x, 0)), B.unary(Op.CEIL, x),
                    B.unary(Op.FLOOR, x))


def _to_bool(op):
    return lambda *xs: (B.binary(op, *(B.convert(x, bool) for x in xs)) if len(xs) == 2
                        else B.unary(op, B.convert(xs[0], bool)))


def _logical_or_arith(bool_op, op):
    """add/multiply on bool loops are or/and in NumPy."""
    return lambda x, y: B.binary(bool_op if x.dtype == np.bool_ else op, x, y)


def _fmaxmin(op):
    def rule(x, y):
        out = B.binary(op, x, y)
        if not _is_float(x):
            return out
        return B.select(_isnan(y), x, B.select(_isnan(x), y, out))
    return rule


def _logaddexp(x, y):
    # max + log1p(exp(-|x - y|)); equal inputs (incl. +-inf) give x + log(2) like NumPy
    big = B.binary(Op.MAX, x, y)
    diff = B.unary(Op.NEG, B.unary(Op.ABS, B.binary(Op.SUB, x, y)))
    out = B.binary(Op.ADD, big, B.unary(Op.LOG1P, B.unary(Op.EXP, diff)))
    return B.select(B.binary(Op.EQ, x, y), B.binary(Op.ADD, x, _const(x, math.log(2))), out)


LOG2E = 1.4426950408889634074         # NumPy's NPY_LOG2E


def _logaddexp2(x, y):
    """NumPy's npy_logaddexp2: max + log2(1 + 2**-|x - y|); equal inputs give x + 1."""
    big = B.binary(Op.MAX, x, y)
    diff = B.unary(Op.NEG, B.unary(Op.ABS, B.binary(Op.SUB, x, y)))
    tail = B.binary(Op.MUL, B.unary(Op.LOG1P, B.unary(Op.EXP2, diff)), _const(x, LOG2E))
    return B.select(B.binary(Op.EQ, x, y), B.binary(Op.ADD, x, _const(x, 1)),
                    B.binary(Op.ADD, big, tail))


def _signbit(x):
    """The sign bit itself (-0.0 and -nan have it): the float's bits as a signed integer
    below 0.  float16 comes in as float32 (exact, sign included)."""
    bits = B.bitcast(x, np.dtype(f"i{x.dtype.itemsize}"))
    return B.binary(Op.LT, bits, _const(bits, 0))


def _copysign(x, y):
    return B.select(B.binary(Op.NE, _signbit(x), _signbit(y)), B.unary(Op.NEG, x), x)


def _heaviside(x, h):
    """0 below 0, h at +-0, 1 above, NumPy's (positive) nan for a nan (npy_heaviside)."""
    step = B.select(B.binary(Op.LT, x, _const(x, 0)), _const(x, 0),
                    B.select(B.binary(Op.GT, x, _const(x, 0)), _const(x, 1), h))
    return B.select(_isnan(x), _const(x, math.nan), step)


def _hypot(x, y):
    """C's hypot, without sqrt(x*x + y*y)'s overflow and underflow (1e200 and 1e-200 parts):
    float32 in float64, where the squares fit; float64 scaled by a power of two (exact)
    where the larger part is past 2**+-500, with selects that keep the loop vectorized.
    inf where a part is inf, even nan."""
    a, b = _abs(x), _abs(y)
    if x.dtype == np.float32:
        wide = [B.convert(v, np.float64) for v in (a, b)]
        out = B.convert(B.unary(Op.SQRT, B.binary(Op.ADD, B.binary(Op.MUL, wide[0], wide[0]),
                                                   B.binary(Op.MUL, wide[1], wide[1]))), x.dtype)
    else:
        big = B.select(B.binary(Op.GT, a, b), a, b)
        huge, tiny = B.binary(Op.GT, big, _const(big, 2.0 ** 500)), \
            B.binary(Op.LT, big, _const(big, 2.0 ** -500))
        scale = B.select(huge, _const(big, 2.0 ** -600),
                         B.select(tiny, _const(big, 2.0 ** 600), _const(big, 1.0)))
        unscale = B.select(huge, _const(big, 2.0 ** 600),
                           B.select(tiny, _const(big, 2.0 ** -600), _const(big, 1.0)))
        a, b = B.binary(Op.MUL, a, scale), B.binary(Op.MUL, b, scale)
        out = B.binary(Op.MUL, B.unary(Op.SQRT, B.binary(
            Op.ADD, B.binary(Op.MUL, a, a), B.binary(Op.MUL, b, b))), unscale)
    inf = _const(a, math.inf)
    return B.select(B.binary(Op.OR, B.binary(Op.EQ, a, inf), B.binary(Op.EQ, b, inf)), inf, out)


def _fmod(x, y):
    """C's fmod (the sign of x): |x| mod |y| is exact, unlike a correction of floor-mod."""
    if x.dtype.kind == "u":
        return B.binary(Op.REM, x, y)
    r = B.binary(Op.REM, _abs(x), _abs(y))
    return B.select(B.binary(Op.LT, x, _const(x, 0)), B.unary(Op.NEG, r), r)


def _shift(left: bool):
    """x << y and x >> y (ir SHIFT_LEFT/SHIFT_RIGHT: NumPy's results for counts past the
    width, 0 or the sign)."""
    def rule(x, y):
        if x.dtype == np.bool_:                    # NumPy has no bool loop; never reached
            raise TypeError("bool shifts")
        return B.binary(Op.SHIFT_LEFT if left else Op.SHIFT_RIGHT, x, y)
    return rule


def _angle_scale(x, numerator, denominator):
    """x * (numerator / denominator) with the factor rounded as NumPy's loop rounds it: in
    x's own precision (float32: 180.0f / NPY_PIf)."""
    kind = x.dtype.type if x.dtype in (np.float32, np.float64) else np.float64
    return B.binary(Op.MUL, x, _const(x, kind(numerator) / kind(denominator)))


RULES = {
    # unary
    np.negative: _un(Op.NEG),
    np.positive: lambda x: x,
    np.absolute: _abs,
    np.fabs: _abs,
    np.sign: _un(Op.SIGN),
    np.exp: _un(Op.EXP),
    np.exp2: _un(Op.EXP2),
    np.expm1: _un(Op.EXPM1),
    np.log: _un(Op.LOG),
    np.log2: _scaled(Op.LOG, 1 / math.log(2)),
    np.log10: _scaled(Op.LOG, 1 / math.log(10)),
    np.log1p: _un(Op.LOG1P),
    np.sqrt: _un(Op.SQRT),
    np.square: lambda x: B.binary(Op.MUL, x, x),
    np.reciprocal: _reciprocal,
    np.tanh: _un(Op.TANH),
    np.sin: _un(Op.SIN),
    np.cos: _un(Op.COS),
    np.tan: _un(Op.TAN),
    np.arctan: _un(Op.ATAN),
    np.arcsin: _un(Op.ASIN),
    np.arccos: _un(Op.ACOS),
    np.sinh: _un(Op.SINH),
    np.cosh: _un(Op.COSH),
    np.arcsinh: _un(Op.ASINH),
    np.arccosh: _un(Op.ACOSH),
    np.arctanh: _un(Op.ATANH),
    np.deg2rad: lambda x: _angle_scale(x, math.pi, 180),
    np.rad2deg: lambda x: _angle_scale(x, 180, math.pi),
    np.degrees: lambda x: _angle_scale(x, 180, math.pi),       # NumPy's rad2deg loop
    np.radians: lambda x: _angle_scale(x, math.pi, 180),       # NumPy's deg2rad loop
    np.floor: _float_only(Op.FLOOR),
    np.ceil: _float_only(Op.CEIL),
    np.rint: _float_only(Op.ROUND),
    np.trunc: _trunc,
    np.conjugate: lambda x: x,                     # real loops; complex: complex_numbers
    np.isfinite: _isfinite,
    np.isnan: _isnan,
    np.isinf: _isinf,
    np.logical_not: _to_bool(Op.NOT),
    np.invert: _un(Op.NOT),
    # binary
    np.add: _logical_or_arith(Op.OR, Op.ADD),
    np.subtract: _bin(Op.SUB),
    np.multiply: _logical_or_arith(Op.AND, Op.MUL),
    np.true_divide: _bin(Op.DIV),
    np.floor_divide: _bin(Op.FLOOR_DIV),
    np.remainder: _bin(Op.REM),
    np.power: lambda x, y: B.binary(Op.POW, x, _nonnegative_integer_exponent(y)),
    np.float_power: _bin(Op.POW),
    np.maximum: _bin(Op.MAX),
    np.minimum: _bin(Op.MIN),
    np.fmax: _fmaxmin(Op.MAX),
    np.fmin: _fmaxmin(Op.MIN),
    np.arctan2: _bin(Op.ATAN2),
    np.logaddexp: _logaddexp,
    np.logaddexp2: _logaddexp2,
    np.signbit: _signbit,
    np.copysign: _copysign,
    np.heaviside: _heaviside,
    np.hypot: _hypot,
    np.equal: _bin(Op.EQ),
    np.not_equal: _bin(Op.NE),
    np.less: _bin(Op.LT),
    np.less_equal: _bin(Op.LE),
    np.greater: _bin(Op.GT),
    np.greater_equal: _bin(Op.GE),
    np.logical_and: _to_bool(Op.AND),
    np.logical_or: _to_bool(Op.OR),
    np.logical_xor: _to_bool(Op.XOR),
    np.bitwise_and: _bin(Op.AND),
    np.bitwise_or: _bin(Op.OR),
    np.bitwise_xor: _bin(Op.XOR),
    np.left_shift: _shift(True),
    np.right_shift: _shift(False),
    np.fmod: _fmod,
}

_IGNORED_DEFAULTS = {"casting": "same_kind", "order": "K", "subok": True}


def _resolve(ufunc: np.ufunc, inputs, dtype) -> tuple[np.dtype, ...]:
    types = tuple(promotion_type(x) for x in inputs)
    options = {}
    if dtype is not None:                # ufunc(..., dtype=d) means signature=(None, .., d)
        options["signature"] = (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout
    try:
        return ufunc.resolve_dtypes(types + (None,) * ufunc.nout, **options)
    except (TypeError, ValueError) as exc:   # _UFuncNoLoopError is a TypeError
        names = ", ".join(str(np.dtype(t)) if not isinstance(t, type) or
                          issubclass(t, np.generic) else f"Python {t.__name__}"
                          for t in types)
        raise fail(DTypeError, f"NumPy has no loop for operand dtypes ({names})",
                   hint="Convert an operand explicitly, e.g. `x.astype(np.float32)`") from exc


def lower_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict):
    """`ufunc.method(*inputs, **kwargs)` where some input is a Tracer."""
    from . import complex_numbers, linalg, reductions
    name = ufunc.__name__
    if method == "reduce":
        return reductions.ufunc_reduce(ufunc, *inputs, **kwargs)
    if method == "outer" and ufunc.nin == 2 and not kwargs:
        a, b = inputs
        shape_a = tuple(shape_of(a)) + (1,) * len(shape_of(b))
        return lower_ufunc(ufunc, "__call__", (np.reshape(a, shape_a), b), {})
    if method == "at" and ufunc in (np.add, np.subtract) and not kwargs:
        return inplace.ufunc_at(ufunc, *inputs)
    if method == "accumulate":                    # a library call (scans.py)
        from .scans import accumulate
        return accumulate(ufunc, *inputs, **kwargs)
    if method == "reduceat":                      # a library call (scans.py)
        from .scans import reduceat
        return reduceat(ufunc, *inputs, **kwargs)
    if method != "__call__":
        return unsupported(getattr(ufunc, method), inputs, kwargs, f"np.{name}.{method}")
    kwargs = dict(kwargs)
    out = kwargs.pop("out", None)
    if out is not None and not (isinstance(out, tuple) and all(o is None for o in out)):
        try:
            dest = inplace.destination(out, f"np.{name}")
        except UnsupportedNumPyFunctionError as error:   # `BUF += x` into a global
            from ..tracer import current_context
            context = current_context()
            if context is None:
                raise
            return context.write_untraced(ufunc, inputs, dict(kwargs, out=out),
                                          f"np.{name}(out=)", error)
        where = kwargs.pop("where", True)
        casting = kwargs.pop("casting", "same_kind")
        result = lower_ufunc(ufunc, method, inputs, kwargs)
        return inplace.assign(dest, result, casting, where)
    where = kwargs.pop("where", True)
    if where is not True:
        return unsupported(ufunc, inputs, dict(kwargs, where=where), f"np.{name}(where=...)")
    dtype = kwargs.pop("dtype", None)
    for key, default in _IGNORED_DEFAULTS.items():
        if kwargs.get(key, default) == default:
            kwargs.pop(key, None)
    if kwargs:
        raise unsupported_option(name, f"{next(iter(kwargs))}=", "leave it at its default")
    if not all(is_operand(x) for x in inputs):
        return NotImplemented
    if ufunc is np.matmul:
        return linalg.matmul(*inputs)
    if ufunc is np.divmod:
        return (lower_ufunc(np.floor_divide, method, inputs, {}),
                lower_ufunc(np.remainder, method, inputs, {}))
    return with_order(_elementwise(ufunc, method, inputs, dtype), "K", inputs)


def _elementwise(ufunc: np.ufunc, method: str, inputs: tuple, dtype):
    from . import complex_numbers
    rule = RULES.get(ufunc)
    if rule is None:                          # NumPy's loop as a library call
        from .library import ufunc_call
        return ufunc_call(ufunc, inputs, dtype)
    loop = _resolve(ufunc, inputs, dtype)
    if any(np.dtype(t).kind == "c" for t in loop[:ufunc.nin]):
        rule = complex_numbers.complex_rule(ufunc)
        if rule is None:                      # complex expm1, sign, arcsin: NumPy's loop
            from .library import ufunc_call
            return ufunc_call(ufunc, inputs, dtype)
    nodes, _ = operands(inputs, list(loop[:ufunc.nin]))
    if any(np.dtype(t) == np.float16 for t in loop[:ufunc.nin]):
        # NumPy's float16 loops compute the whole function in float32 and round once: a
        # composite rule (hypot, logaddexp, sinh, tan, ...) computed op by op in float16
        # would round (and overflow) in between
        nodes = [B.convert(n, np.float32) if n.dtype == np.float16 else n for n in nodes]
    return mark_weak(wrap(B.convert(rule(*nodes), loop[ufunc.nin])), inputs)


@implements(np.where)
def where(condition, x=None, y=None):
    if x is None and y is None:
        return unsupported(np.where, (condition,), {}, "np.where(cond) (one argument)")
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    dtype = result_type(x, y)
    (pred, on_true, on_false), _ = operands([condition, x, y], [bool, dtype, dtype])
    return with_order(wrap(B.select(pred, on_true, on_false)), "K", (condition, x, y))


@implements(np.clip)
def clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue,
         max=np._NoValue, **kwargs):
    if out is not None:
        result = clip(a, a_min, a_max, min=min, max=max, **kwargs)
        return inplace.assign(inplace.destination(out, "np.clip"), result)
    low = a_min if a_min is not np._NoValue else min
    high = a_max if a_max is not np._NoValue else max
    low = None if low is np._NoValue else low
    high = None if high is np._NoValue else high
    bounds = [b for b in (low, high) if b is not None]
    dtype = result_type(a, *bounds)
    nodes, _ = operands([a, *bounds], dtype)
    out_node = nodes[0]
    maximum, minimum = (lambda x, y: B.binary(Op.MAX, x, y)), (lambda x, y: B.binary(Op.MIN, x, y))
    if dtype.kind == "c":                # NumPy's complex clip: its lexicographic max/min
        from .complex_numbers import COMPLEX_RULES
        maximum, minimum = COMPLEX_RULES[np.maximum], COMPLEX_RULES[np.minimum]
    if low is not None:                  # NumPy: minimum(maximum(a, low), high)
        out_node = maximum(out_node, nodes[1])
    if high is not None:
        out_node = minimum(out_node, nodes[-1])
    return with_order(wrap(out_node), "K", (a, *bounds))


@implements(np.round, np.around)
def round_(a, decimals=0, out=None):
    if out is not None:
        return inplace.assign(inplace.destination(out, "np.round"), round_(a, decimals))
    return with_order(_round(a, decimals), "K", (a,))     # NumPy's ufunc order


def _round(a, decimals):
    x = to_node(a)
    if x.dtype.kind == "c":              # NumPy rounds each part as a float
        parts = [to_node(_round(wrap(B.unary(op, x)), decimals)) for op in (Op.REAL, Op.IMAG)]
        return wrap(B.binary(Op.COMPLEX, *parts))
    if x.dtype.kind not in "fc":
        if decimals >= 0:
            return wrap(x)
        # NumPy's: in float64, rint(x / 10**-decimals) * 10**-decimals, cast back
        rounded = to_node(_round(wrap(B.convert(x, np.float64)), decimals))
        return wrap(B.convert(rounded, x.dtype))
    if decimals == 0:
        return wrap(B.unary(Op.ROUND, x))
    if decimals > 0:                     # NumPy's order: multiply, rint, divide
        factor = _const(x, 10.0 ** decimals)
        return wrap(B.binary(Op.DIV, B.unary(Op.ROUND, B.binary(Op.MUL, x, factor)), factor))
    factor = _const(x, 10.0 ** -decimals)   # divide, rint, multiply: 10**-2 is inexact
    return wrap(B.binary(Op.MUL, B.unary(Op.ROUND, B.binary(Op.DIV, x, factor)), factor))


@implements(np.isclose)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy's formula |a - b| <= atol + rtol * |b|, in at least float64 as NumPy computes
    it; infinities are close only to themselves, NaN only when `equal_nan`."""
    dtype = np.result_type(result_type(a, b), 1.0)
    x, y = (wrap(B.convert(to_node(v), dtype)) if not isinstance(v, (int, float, complex))
            else v for v in (a, b))
    finite = np.isfinite(x) & np.isfinite(y)
    with np.errstate(invalid="ignore"):
        close = np.abs(x - y) <= atol + rtol * np.abs(y)
    result = np.where(finite, close, x == y)
    if equal_nan:
        result = result | (np.isnan(x) & np.isnan(y))
    return result


@implements(np.allclose)
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """A traced bool (NumPy returns a Python bool: `if np.allclose(...)` needs its value)."""
    return np.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


@implements(np.nan_to_num)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN -> `nan`, +-inf -> `posinf`/`neginf` (default: the dtype's largest magnitudes);
    complex values part by part, as NumPy does; other dtypes unchanged."""
    node = to_node(x)
    if node.dtype.kind not in "fc":
        return wrap(node)
    if node.dtype.kind == "c":
        parts = [nan_to_num(part, nan=nan, posinf=posinf, neginf=neginf)
                 for part in (np.real(x), np.imag(x))]
        return (parts[0] + 1j * parts[1]).astype(node.dtype)
    info = np.finfo(node.dtype)
    high = info.max if posinf is None else posinf
    low = info.min if neginf is None else neginf
    value = x if isinstance(x, Tracer) else wrap(node)     # keeps x's layout (order='K')
    out = np.where(np.isnan(value), nan, value)
    out = np.where(out == np.inf, high, out)
    return np.where(out == -np.inf, low, out).astype(node.dtype)
