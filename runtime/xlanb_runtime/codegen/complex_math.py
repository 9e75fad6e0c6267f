"""Complex arithmetic for generated kernels, written as NumPy's complex loops compute it.

    v3 = np.complex64(cdiv(v1, v2))            # z / w
    v4 = np.complex128(cpow(v1, v2))           # z ** w
    v5 = np.complex64(cexp(v1))                # also csin, ccos, ctanh
    v6 = np.float32(cabs32(v1))                # |z| of a complex64

Numba's own `z / w` raises ZeroDivisionError for w == 0 whatever the error model, its
`z ** w` differs from NumPy for zero and infinite bases, its cmath exp, sin, cos and tanh
give nan parts on the axes where NumPy gives a 0 part (overflow, infinite input), and its
`abs(z)` is a hypot call that stops vectorization.  Here:

- division by Smith's method, as NumPy (`w == 0` gives inf/nan parts, as real division);
- power with NumPy's special cases (z**0 = 1; 0**w = 0 where Re w > 0, else nan; integer
  w with |w| < 100 by repeated squaring, negative w through cdiv), otherwise exp(w log z)
  with C99's product, which is what NumPy's libm (glibc's cpow) computes;
- exp, sin, cos and tanh exact on the axes.  Off the axes, where both parts of z are inf
  or nan, sin, cos and tanh may give a nan part where NumPy (C99 Annex G) gives an
  infinite one;
- exp vectorized (`cexp_vec`: the vecmath exp, sin and cos) where exp(Re z) is finite
  and normal and |Im z| within the trig functions' range; a kernel meeting any other
  argument runs again with `cexp` (codegen/cpu.py `guard_fast_math`);
- |z| of complex64 in float64, where float32 parts neither overflow nor underflow; of
  complex128 by NumPy's own vector loop (larger * sqrt(1 + (smaller / larger)**2)).

They return complex128 (float64 for cabs32); the templates cast to the node's dtype.
`njit(inline="always")` like `vecmath` and `rng`: inlined into the kernel's loop.
"""
from __future__ import annotations

import cmath
import math

import numba
import numpy as np

from .vecmath import TRIG_MAX_F64, cos_f64, exp_f64, sin_f64

HELPERS = ("cabs32", "cabs64", "cdiv", "cpow", "cexp", "cexp_vec", "csin", "ccos",
           "ctanh")                                                # what kernels import
CEXP_VEC_MAX_REAL = 708.0       # exp of the real part stays finite and normal


@numba.njit(inline="always", error_model="numpy", cache=True)
def cabs32(z):
    """|z| of a complex64 in float64 (float32 parts can neither overflow nor underflow
    there), as hypot: inf if a part is inf, even nan.  Vectorizes, where Numba's abs(z)
    is a hypot call per element (5x slower than NumPy on a fused abs-sum)."""
    re, im = np.float64(z.real), np.float64(z.imag)
    if math.isinf(re) or math.isinf(im):
        return math.inf
    return math.sqrt(re * re + im * im)


@numba.njit(inline="always", error_model="numpy", cache=True)
def cabs64(z):
    """|z| of a complex128 as NumPy's SIMD loop computes it (loops_unary_complex: the
    larger part times sqrt(1 + ratio**2), no overflow), inf if a part is inf, even nan.
    Written with selects, not branches, so the kernel's loop vectorizes: Numba's abs(z)
    is a hypot call per element, 12x slower than this (mandelbrot's |Z| < 2 each step)."""
    re, im = abs(z.real), abs(z.imag)
    larger = re if re > im else im
    smaller = im if re > im else re
    ratio = smaller / larger
    result = larger * math.sqrt(1.0 + ratio * ratio)
    result = 0.0 if larger == 0.0 else result
    result = math.nan if (re != re or im != im) else result
    return math.inf if (re == math.inf or im == math.inf) else result


@numba.njit(inline="always", error_model="numpy", cache=True)
def cdiv(a, b):
    """a / b as NumPy computes it (Smith's method; b == 0 gives inf or nan parts)."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    abs_br, abs_bi = abs(br), abs(bi)
    if abs_br >= abs_bi:
        if abs_br == 0 and abs_bi == 0:
            return complex(ar / abs_br, ai / abs_br)
        rat = bi / br
        scl = 1.0 / (br + bi * rat)
        return complex((ar + ai * rat) * scl, (ai - ar * rat) * scl)
    rat = br / bi
    scl = 1.0 / (bi + br * rat)
    return complex((ar * rat + ai) * scl, (ai * rat - ar) * scl)


@numba.njit(inline="always", error_model="numpy", cache=True)
def cpow(a, b):
    """a ** b with NumPy's special cases and small integer exponents."""
    br, bi = b.real, b.imag
    if br == 0 and bi == 0:
        return complex(1.0, 0.0)
    if a.real == 0 and a.imag == 0:
        return complex(0.0, 0.0) if br > 0 else complex(float("nan"), float("nan"))
    if bi == 0 and -100 < br < 100 and br == int(br):
        n = int(br)
        if n == 1:
            return complex(a)
        if n == 2:
            return complex(a) * complex(a)
        if n == 3:
            return complex(a) * (complex(a) * complex(a))
        n = abs(n)
        result, base = complex(1.0, 0.0), complex(a)
        while True:
            if n & 1:
                result = result * base
            n >>= 1
            if n == 0:
                break
            base = base * base
        return cdiv(complex(1.0, 0.0), result) if br < 0 else result
    return cexp(cmul_c99(complex(b), cmath.log(complex(a))))     # glibc's cpow


@numba.njit(inline="always", error_model="numpy", cache=True)
def cexp_vec(z):
    """exp z as exp(x) (cos y + i sin y) with the vectorized real functions, for
    |x| < CEXP_VEC_MAX_REAL and |y| < TRIG_MAX_F64 (finite): a kernel's fast pass, which
    runs again with `cexp` where any argument is outside (codegen/cpu.py
    `guard_fast_math`).  cmath's exp does not vectorize (a 256x256 DFT matrix: 1.3x
    NumPy's time).  On the real axis exp(x) + 0i exactly, as cexp (cos 0 = 1, sin +-0
    = +-0)."""
    e = exp_f64(np.float64(z.real))
    y = np.float64(z.imag)
    return complex(e * cos_f64(y), e * sin_f64(y))


@numba.njit(inline="always", error_model="numpy", cache=True)
def cexp(z):
    """exp z; on the real axis exp(x) + 0i exactly (cmath gives inf + nan i on overflow).
    Where exp(x) overflows but its products with cos y and sin y need not (709 < x <
    1418), as exp(x/2) (cos y + i sin y) exp(x/2), as glibc's cexp scales (cmath: inf)."""
    x, y = z.real, z.imag
    if y == 0:
        return complex(math.exp(x), y)
    if 709.0 < x < 1418.0 and math.isfinite(y):
        half = math.exp(x * 0.5)
        return complex(half * math.cos(y) * half, half * math.sin(y) * half)
    return cmath.exp(complex(z))


@numba.njit(inline="always", error_model="numpy", cache=True)
def csin(z):
    """sin z; on the axes sin(x) + 0i and 0 + i sinh(y) exactly (cmath: nan parts)."""
    if z.real == 0:
        return complex(z.real, math.sinh(z.imag))
    if z.imag == 0:
        return complex(math.sin(z.real), z.imag)
    if math.isinf(z.imag) and not math.isfinite(z.real):     # C99: nan + inf i
        return complex(math.nan, math.inf)
    return cmath.sin(complex(z))


@numba.njit(inline="always", error_model="numpy", cache=True)
def ccos(z):
    """cos z; on the axes cos(x) -+ 0i and cosh(y) -+ 0i exactly (cmath: nan parts), and
    C99's value where both parts are infinite."""
    if z.real == 0:
        return complex(math.cosh(z.imag), -z.real * math.copysign(1.0, z.imag))
    if z.imag == 0:
        return complex(math.cos(z.real), -z.imag * math.copysign(1.0, z.real))
    if math.isinf(z.real) and math.isinf(z.imag):        # C99: inf + nan i
        return complex(math.inf, math.nan)
    return cmath.cos(complex(z))


@numba.njit(inline="always", error_model="numpy", cache=True)
def ctanh(z):
    """tanh z; on the axes tanh(x) + 0i and 0 + i tan(y) exactly (cmath: nan parts)."""
    if z.imag == 0:
        return complex(math.tanh(z.real), z.imag)
    if z.real == 0:
        return complex(z.real, math.tan(z.imag))
    return cmath.tanh(complex(z))


@numba.njit(inline="always", error_model="numpy", cache=True)
def _unit(x):
    """C99 Annex G's box: +-1 for an infinite part, +-0 otherwise (keeping the sign)."""
    return math.copysign(1.0 if math.isinf(x) else 0.0, x)


@numba.njit(inline="always", error_model="numpy", cache=True)
def _zero_nan(x):
    return math.copysign(0.0, x) if math.isnan(x) else x


@numba.njit(inline="always", error_model="numpy", cache=True)
def cmul_c99(z, w):
    """z * w as C99 computes it (glibc's __muldc3): where the plain product is nan + nan i
    but a factor is infinite, the infinity is recovered (inf * (1 + nan i) is not nan)."""
    a, b, c, d = z.real, z.imag, w.real, w.imag
    x, y = a * c - b * d, a * d + b * c
    if not (math.isnan(x) and math.isnan(y)):
        return complex(x, y)
    recalc = False
    if math.isinf(a) or math.isinf(b):
        a, b, c, d, recalc = _unit(a), _unit(b), _zero_nan(c), _zero_nan(d), True
    if math.isinf(c) or math.isinf(d):
        a, b, c, d, recalc = _zero_nan(a), _zero_nan(b), _unit(c), _unit(d), True
    if not recalc and (math.isinf(z.real * w.real) or math.isinf(z.imag * w.imag)
                       or math.isinf(z.real * w.imag) or math.isinf(z.imag * w.real)):
        a, b, c, d, recalc = _zero_nan(a), _zero_nan(b), _zero_nan(c), _zero_nan(d), True
    if recalc:
        return complex(math.inf * (a * c - b * d), math.inf * (a * d + b * c))
    return complex(x, y)
