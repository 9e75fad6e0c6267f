"""float16 values in kernels: NumPy's rounding of a float to the nearest float16, on the
float's bits (Numba has no float16 type on the CPU).

Kernels hold a float16 value in a float32 variable whose value is exactly representable in
float16; `round_half_f32` / `round_half_f64` are what NumPy does after each float16 ufunc
(compute in float32, round to float16) and in `astype(np.float16)`: round to nearest, ties
to even, 65520 and beyond to infinity, subnormals in steps of 2**-24, NaN kept.  Normal
values drop their low mantissa bits with a carry (13 of float32's, 42 of float64's: the
direct rounding, never float64 -> float32 -> float16); subnormal ones are rounded as
multiples of 2**-24 (an exact scaling).  Bit-exact with NumPy's conversion over random
float32/float64 values and the edge cases (tests/runtime/test_half.py).
"""
from __future__ import annotations

import numba
import numpy as np

_SUBNORMAL_SCALE = 16777216.0          # 2**24: float16's subnormal step is 2**-24


@numba.njit(cache=True, nogil=True)
def round_half_f32(x):
    """The float16 nearest to a float32, as a float32."""
    bits = np.float32(x).view(np.uint32)
    sign, magnitude = bits & np.uint32(0x80000000), bits & np.uint32(0x7FFFFFFF)
    if magnitude >= np.uint32(0x7F800000):             # inf, NaN
        return np.float32(x)
    if magnitude >= np.uint32(0x477FF000):             # 65520: rounds past 65504
        return np.uint32(sign | np.uint32(0x7F800000)).view(np.float32)
    if magnitude >= np.uint32(0x38800000):             # 2**-14: a normal float16
        odd = (magnitude >> np.uint32(13)) & np.uint32(1)
        magnitude = (magnitude + np.uint32(0xFFF) + odd) & np.uint32(0xFFFFE000)
        return np.uint32(sign | magnitude).view(np.float32)   # Numba widens: cast back
    scaled = np.rint(np.float64(abs(np.float32(x))) * _SUBNORMAL_SCALE) / _SUBNORMAL_SCALE
    return np.uint32(sign | np.float32(scaled).view(np.uint32)).view(np.float32)


@numba.njit(cache=True, nogil=True)
def round_half_f64(x):
    """The float16 nearest to a float64, as a float32 (rounded once, from float64)."""
    bits = np.float64(x).view(np.uint64)
    sign = bits & np.uint64(0x8000000000000000)
    magnitude = bits & np.uint64(0x7FFFFFFFFFFFFFFF)
    if magnitude >= np.uint64(0x7FF0000000000000):     # inf, NaN
        return np.float32(x)
    if magnitude >= np.uint64(0x40EFFE0000000000):     # 65520
        return np.float32(np.inf) if sign == np.uint64(0) else np.float32(-np.inf)
    if magnitude >= np.uint64(0x3F10000000000000):     # 2**-14
        odd = (magnitude >> np.uint64(42)) & np.uint64(1)
        magnitude = (magnitude + np.uint64(0x1FFFFFFFFFF) + odd) & \
            np.uint64(0xFFFFFC0000000000)
        return np.float32(np.uint64(sign | magnitude).view(np.float64))
    scaled = np.rint(abs(np.float64(x)) * _SUBNORMAL_SCALE) / _SUBNORMAL_SCALE
    return np.float32(-scaled if sign != np.uint64(0) else scaled)
