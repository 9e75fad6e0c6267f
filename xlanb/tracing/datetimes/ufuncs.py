"""NumPy's datetime64/timedelta64 ufunc loops, written on int64 counts (NaT = int64 min).

`lower_ufunc` resolves the loop as NumPy does (`ufunc.resolve_dtypes`: NumPy's own unit
promotion and its own TypeError for what it refuses), casts each operand to the loop's
dtype (`units.cast`), and runs the loop's rule below: each mirrors NumPy's C loop
(`umath/loops.c.src`), NaT cases included.  A ufunc or option without a rule here is an
UnsupportedDTypeError, never an int64 computation.
"""
from __future__ import annotations

import numpy as np

from .units import NAT, cast, is_time


def _nat(x):
    return x == NAT


def _either(a, b):
    return (a == NAT) | (b == NAT)


def _trunc_div(a, b):
    """C's integer division (toward zero) for b != 0."""
    q = a // b
    return q + ((q * b != a) & ((a < 0) != (b < 0)))


def _nonzero(b):
    return np.where(b == 0, np.int64(1), b)


def _compare(op, nat_result: bool):
    def rule(a, b):
        either = _either(a, b)
        return (op(a, b) | either,) if nat_result else (op(a, b) & ~either,)
    return rule


def _arith(op):
    return lambda a, b: (np.where(_either(a, b), NAT, op(a, b)),)


def _multiply(loop):
    time_first = loop[0].kind == "m"

    def rule(a, b):
        t, other = (a, b) if time_first else (b, a)
        if other.dtype.kind == "f":                  # md->m: (npy_timedelta)(t * f)
            product = t.astype(np.float64) * other
            bad = _nat(t) | np.isnan(other)
            return (np.where(bad, NAT, product.astype(np.int64)),)
        return (np.where(_nat(t), NAT, t * other),)
    return rule


def _divide(loop):
    if loop[-1].kind == "f":                          # mm->d
        def rule(a, b):
            quotient = a.astype(np.float64) / b.astype(np.float64)
            return (np.where(_either(a, b), np.nan, quotient),)
        return rule
    return _divide_by_number


def _divide_by_number(a, b):
    if b.dtype.kind == "f":                           # md->m: NaN (and NaT) give NaT
        quotient = a.astype(np.float64) / b
        bad = _nat(a) | np.isnan(quotient)
        return (np.where(bad, NAT, quotient.astype(np.int64)),)
    return (np.where(_nat(a) | (b == 0), NAT, _trunc_div(a, _nonzero(b))),)   # mq->m


def _floor_divide(loop):
    if loop[-1].kind == "m":                          # mq->m, md->m: as divide
        return _divide_by_number
    return lambda a, b: (_floor_quotient(a, b),)       # mm->q


def _floor_quotient(a, b):
    return np.where(_either(a, b) | (b == 0), np.int64(0), a // _nonzero(b))


def _remainder(a, b):
    return np.where(_either(a, b) | (b == 0), NAT, a % _nonzero(b))


def _extreme(op, skip_nat: bool):
    def rule(a, b):
        if skip_nat:                                  # fmax/fmin: NaT only where both are
            return (np.where(_nat(a), b, np.where(_nat(b), a, op(a, b))),)
        return (np.where(_either(a, b), NAT, op(a, b)),)
    return rule


# ufunc -> rule(loop dtypes) -> function of the operands' int64 counts -> outputs
RULES = {
    np.isnat: lambda loop: lambda a: (_nat(a),),
    np.isnan: lambda loop: lambda a: (_nat(a),),
    np.isfinite: lambda loop: lambda a: (~_nat(a),),
    np.isinf: lambda loop: lambda a: (np.zeros_like(a, dtype=bool),),
    np.equal: lambda loop: _compare(np.equal, False),
    np.not_equal: lambda loop: _compare(np.not_equal, True),
    np.less: lambda loop: _compare(np.less, False),
    np.less_equal: lambda loop: _compare(np.less_equal, False),
    np.greater: lambda loop: _compare(np.greater, False),
    np.greater_equal: lambda loop: _compare(np.greater_equal, False),
    np.add: lambda loop: _arith(np.add),
    np.subtract: lambda loop: _arith(np.subtract),
    np.multiply: _multiply,
    np.true_divide: _divide,
    np.floor_divide: _floor_divide,
    np.remainder: lambda loop: lambda a, b: (_remainder(a, b),),
    np.divmod: lambda loop: lambda a, b: (_floor_quotient(a, b), _remainder(a, b)),
    np.negative: lambda loop: lambda a: (np.where(_nat(a), NAT, -a),),
    np.positive: lambda loop: lambda a: (a + np.int64(0),),
    np.absolute: lambda loop: lambda a: (np.where(_nat(a), NAT, np.abs(a)),),
    np.sign: lambda loop: lambda a: (np.sign(a),),            # NumPy: sign(NaT) is -1
    np.maximum: lambda loop: _extreme(np.maximum, False),
    np.minimum: lambda loop: _extreme(np.minimum, False),
    np.fmax: lambda loop: _extreme(np.maximum, True),
    np.fmin: lambda loop: _extreme(np.minimum, True),
}


def counts(x, dtype: np.dtype):
    """Operand `x` as the loop input of `dtype`: int64 counts for a time dtype, else the
    number array itself (traced or not)."""
    from ..tracer import Tracer
    from .array import DatetimeTracer, refuse
    if isinstance(x, DatetimeTracer):
        if not is_time(dtype) or x.dtype.kind != dtype.kind:
            raise refuse(f"a {x.dtype} operand where NumPy's loop takes {dtype}")
        return cast(x.ints, x.dtype, dtype)
    if isinstance(x, Tracer):
        if not is_time(dtype):
            return x.astype(dtype) if x.dtype != dtype else x
        if x.dtype.kind not in "biu":
            raise refuse(f"a {x.dtype} operand cast to {dtype}")
        return x.astype(np.int64)                    # NumPy's int -> time cast: counts
    value = np.asarray(x).astype(dtype)              # constants: NumPy's own cast
    return value.view(np.int64) if is_time(dtype) else value
