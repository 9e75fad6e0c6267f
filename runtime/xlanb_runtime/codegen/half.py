"""float16 values in kernels: NumPy's rounding of a float to the nearest float16, as
arithmetic on float64 (Numba has no float16 type on the CPU).

Kernels hold a float16 value in a float32 variable whose value is exactly representable in
float16; `round_half` is what NumPy does after each float16 ufunc (compute in float32,
round to float16) and in `astype(np.float16)`: round to nearest, ties to even, 65520 and
beyond to infinity, subnormals in steps of 2**-24, NaN kept.  Bit-exact with NumPy's
conversion over 2 million random float32 and float64 values and the edge cases
(tests/runtime/test_half.py).
"""
from __future__ import annotations

import math

import numba
import numpy as np

HALF_OVERFLOW = 65520.0                # the midpoint above float16's largest, 65504
HALF_MIN_NORMAL = 6.103515625e-05      # 2**-14
HALF_SUBNORMAL_STEP = 5.9604644775390625e-08    # 2**-24


@numba.njit(cache=True, nogil=True)
def round_half(x):
    """The float16 nearest to x (a float32 or float64), as a float32."""
    a = abs(np.float64(x))
    if not a < HALF_OVERFLOW:          # NaN, infinity, or rounds past 65504
        return np.float32(x) if a != a else np.float32(math.copysign(math.inf, x))
    if a < HALF_MIN_NORMAL:
        step = HALF_SUBNORMAL_STEP
    else:                              # 11 significant bits: a step of 2**(e - 11)
        step = math.ldexp(1.0, math.frexp(a)[1] - 11)
    return np.float32(math.copysign(np.rint(a / step) * step, x))
