"""Scalar expression templates: how each elementwise op is written in generated Numba code.

One table, `EXPR`, maps an op to a format string over its operand variables.  Every
template yields exactly the node's dtype: Numba widens small-integer arithmetic to int64,
so results of integer ops are cast back, and float constants are typed globals (`_one_f32`)
so float32 code never silently becomes float64.  Transcendentals call `vecmath` (vectorizable
implementations, since PyPI's llvmlite has no SVML) where it has the function.
"""
from __future__ import annotations

import numpy as np

from ..ir import Op

from .vecmath import ATAN2, POW, REMAINDER, VECMATH

CAST = {"bool": "np.bool_", "int8": "np.int8", "int16": "np.int16", "int32": "np.int32",
        "int64": "np.int64", "uint8": "np.uint8", "uint16": "np.uint16",
        "uint32": "np.uint32", "uint64": "np.uint64", "float32": "np.float32",
        "float64": "np.float64", "complex64": "np.complex64", "complex128": "np.complex128"}

_LIBM = {Op.EXP: "math.exp", Op.EXP2: "np.exp2", Op.EXPM1: "math.expm1", Op.LOG: "math.log",
         Op.LOG1P: "math.log1p", Op.TANH: "math.tanh", Op.SIN: "math.sin",
         Op.COS: "math.cos", Op.TAN: "math.tan", Op.ASIN: "math.asin",
         Op.ACOS: "math.acos", Op.SINH: "math.sinh", Op.COSH: "math.cosh",
         Op.ATAN: "math.atan", Op.ASINH: "math.asinh",
         Op.ACOSH: "math.acosh", Op.ATANH: "math.atanh",
         Op.ERF: "math.erf"}
_BINARY_VECMATH = {Op.POW: POW, Op.ATAN2: ATAN2, Op.REM: REMAINDER}
_VECMATH_NAME = {Op.EXP: "exp", Op.EXP2: "exp2", Op.EXPM1: "expm1", Op.LOG: "log",
                 Op.LOG1P: "log1p", Op.TANH: "tanh", Op.SIN: "sin", Op.COS: "cos", Op.TAN: "tan",
                 Op.ASIN: "asin", Op.ACOS: "acos", Op.SINH: "sinh", Op.COSH: "cosh",
                 Op.ATAN: "atan", Op.ASINH: "asinh", Op.ACOSH: "acosh",
                 Op.ATANH: "atanh", Op.ERF: "erf"}

# Complex operands: Numba's complex arithmetic, its cmath and `complex_math` (NumPy's
# division, power, and exp/sin/cos on the axes), never the real-float vecmath functions.
# The builder refuses the ops complex values lack (ops.REAL_ONLY).
_CMATH = {Op.EXP: "cexp_vec", Op.LOG: "cmath.log", Op.SQRT: "cmath.sqrt",
          Op.TANH: "ctanh", Op.SIN: "csin", Op.COS: "ccos"}
_COMPLEX = {Op.REAL: "{0}.real", Op.IMAG: "{0}.imag", Op.CONJ: "{0}.conjugate()",
            Op.DIV: "cdiv({0}, {1})", Op.POW: "cpow({0}, {1})",      # NumPy's, see complex_math
            Op.RSQRT: "cdiv({one}, cmath.sqrt({0}))", Op.IS_FINITE: "(({0} - {0}) == {zero})"}


_SIMPLE = {
    Op.ADD: "({0} + {1})", Op.SUB: "({0} - {1})", Op.MUL: "({0} * {1})",
    Op.DIV: "({0} / {1})", Op.FLOOR_DIV: "({0} // {1})", Op.REM: "({0} % {1})",
    Op.POW: "({0} ** {1})", Op.AND: "({0} & {1})", Op.OR: "({0} | {1})",
    Op.XOR: "({0} ^ {1})", Op.ATAN2: "math.atan2({0}, {1})",
    Op.COMPLEX: "complex({0}, {1})",
    Op.EQ: "({0} == {1})", Op.NE: "({0} != {1})", Op.LT: "({0} < {1})",
    Op.LE: "({0} <= {1})", Op.GT: "({0} > {1})", Op.GE: "({0} >= {1})",
    Op.SELECT: "({1} if {0} else {2})", Op.NEG: "(-{0})", Op.ABS: "abs({0})",
    Op.SQRT: "np.sqrt({0})", Op.FLOOR: "np.floor({0})", Op.CEIL: "np.ceil({0})",
    Op.ROUND: "np.rint({0})",
}


def typed_constant(value, dtype: np.dtype) -> str:
    """A global name for a typed scalar constant used inside templates."""
    dtype = np.dtype(dtype)
    tag = {1.0: "one", 0.0: "zero", -1.0: "minus_one"}[float(value)]
    return f"_{tag}_{dtype.name}"


def module_constants() -> str:
    """Source defining the typed constants templates may reference."""
    lines = []
    for dtype in ("float32", "float64", "complex64", "complex128", "int8", "int16", "int32",
                  "int64", "uint8", "uint16", "uint32", "uint64"):
        for tag, value in (("one", 1), ("zero", 0), ("minus_one", -1)):
            if tag == "minus_one" and dtype.startswith("u"):
                continue
            lines.append(f"_{tag}_{dtype} = {CAST[dtype]}({value})")
    return "\n".join(lines)


def expression(op: Op, dtype: np.dtype, operands: list[str], operand_dtype: np.dtype) -> str:
    """Source of one elementwise op; `dtype` is the result's, `operand_dtype` the inputs'."""
    dtype, operand_dtype = np.dtype(dtype), np.dtype(operand_dtype)
    is_float = operand_dtype.kind == "f"
    if op is Op.CONVERT:
        return convert(operands[0], operand_dtype, dtype)
    if op is Op.BITCAST:                  # Numba views scalars of one size as another
        return f"{CAST[operand_dtype.name]}({operands[0]}).view({CAST[dtype.name]})"
    if operand_dtype.kind == "c":
        return complex_expression(op, dtype, operands, operand_dtype)
    if op in _VECMATH_NAME:
        entry = VECMATH.get(_VECMATH_NAME[op])
        if entry and is_float:
            return f"{entry[0] if operand_dtype == np.float32 else entry[1]}({operands[0]})"
        return f"{CAST[dtype.name]}({_LIBM[op]}({operands[0]}))"
    # pow, atan2: vectorize (`**`, math.atan2: scalar libm); remainder: exact in one fma
    # where the quotient is below 2^52 (Numba's `%`: an frem per element, libm's fmod)
    if op in _BINARY_VECMATH and is_float:
        pair = _BINARY_VECMATH[op]
        name = pair[0] if operand_dtype == np.float32 else pair[1]
        return convert(f"{name}({operands[0]}, {operands[1]})", operand_dtype, dtype)
    if op is Op.RSQRT:
        return f"({typed_constant(1, dtype)} / np.sqrt({operands[0]}))"
    if op is Op.ROUND_HALF:                          # codegen/half.py
        return f"round_half_{'f32' if operand_dtype == np.float32 else 'f64'}({operands[0]})"
    if op is Op.MAX or op is Op.MIN:
        cmp = ">=" if op is Op.MAX else "<="
        a, b = operands
        nan_check = f" or {a} != {a}" if is_float else ""
        return f"({a} if ({a} {cmp} {b}{nan_check}) else {b})"
    if op is Op.SIGN:
        a = operands[0]
        if operand_dtype == np.bool_:
            return a
        one, zero = typed_constant(1, dtype), typed_constant(0, dtype)
        minus = typed_constant(-1, dtype) if dtype.kind != "u" else zero
        nan = f" if {a} == {a} else {a}" if is_float else ""
        return f"(({one} if {a} > {zero} else ({minus} if {a} < {zero} else {zero})){nan})"
    if op is Op.NOT:
        return f"(not {operands[0]})" if operand_dtype == np.bool_ else f"(~{operands[0]})"
    if op is Op.SHIFT_LEFT or op is Op.SHIFT_RIGHT:
        return _shift(op, dtype, operands)
    if op is Op.IS_FINITE:
        a = operands[0]
        return f"(({a} - {a}) == {typed_constant(0, operand_dtype)})" if is_float else "True"
    if op is Op.ABS and operand_dtype == np.bool_:
        return operands[0]
    if op is Op.DIV and not is_float:
        raise NotImplementedError("integer true division is lowered by the front end")
    if op is Op.FLOOR_DIV and operand_dtype.kind == "i":
        # NumPy's INT_MIN // -1 wraps to INT_MIN (x86's idiv faults there: Numba gives 0)
        a, b = operands
        text = f"(-({a}) if {b} == -1 else {a} // {b})"
        return text if dtype == np.int64 else f"{CAST[dtype.name]}({text})"
    text = _SIMPLE[op].format(*operands)
    if dtype.kind in "iu" and dtype != np.int64:
        text = f"{CAST[dtype.name]}({text})"     # Numba computes small ints as int64
    elif (dtype.kind == "f" and op in (Op.FLOOR, Op.CEIL, Op.ROUND, Op.POW)) or \
            dtype.kind == "c":                   # complex(re, im) is complex128
        text = f"{CAST[dtype.name]}({text})"
    return text


def _shift(op: Op, dtype: np.dtype, operands: list[str]) -> str:
    """NumPy's shifts: C's for counts in [0, bits), else 0 (<<, >> of unsigned) or the
    sign (>> of signed).  The count is clamped before the shift (LLVM's shl/ashr/lshr are
    poison past the width), so the select vectorizes with per-lane shifts."""
    a, b = operands
    bits = dtype.itemsize * 8
    zero = typed_constant(0, dtype)
    valid = f"({b} < {bits})" if dtype.kind == "u" else f"({b} >= {zero} and {b} < {bits})"
    count = f"({b} if {valid} else {zero})"
    if op is Op.SHIFT_LEFT:
        text = f"(({a} << {count}) if {valid} else {zero})"
    elif dtype.kind == "u":
        text = f"(({a} >> {count}) if {valid} else {zero})"
    else:
        text = f"({a} >> ({b} if {valid} else {bits - 1}))"
    return text if dtype == np.int64 else f"{CAST[dtype.name]}({text})"


def complex_expression(op: Op, dtype: np.dtype, operands: list[str],
                       operand_dtype: np.dtype) -> str:
    """Source of an elementwise op on complex operands, cast to the node's dtype (a real
    dtype for real/imag/abs, bool for compares)."""
    if op is Op.ABS and operand_dtype == np.complex64:
        return f"np.float32(cabs32({operands[0]}))"          # vectorizes, unlike hypot
    if op is Op.ABS and operand_dtype == np.complex128:
        return f"np.float64(cabs64({operands[0]}))"
    if op in _CMATH:
        text = f"{_CMATH[op]}({operands[0]})"
    elif op in _COMPLEX:
        text = _COMPLEX[op].format(*operands, one=typed_constant(1, operand_dtype),
                                   zero=typed_constant(0, operand_dtype))
    else:
        text = _SIMPLE[op].format(*operands)
    return text if dtype == np.bool_ else f"{CAST[dtype.name]}({text})"


def convert(value: str, src: np.dtype, dst: np.dtype) -> str:
    if src == dst:
        return value
    if src.kind == "c" and dst.kind not in "cb":    # NumPy keeps the real part
        return convert(f"{value}.real", np.finfo(src).dtype, dst)
    if dst == np.bool_:
        return f"({value} != {typed_constant(0, src)})" if src != np.bool_ else value
    if src == np.bool_:
        return f"({typed_constant(1, dst)} if {value} else {typed_constant(0, dst)})"
    return f"{CAST[dst.name]}({value})"
