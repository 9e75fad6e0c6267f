"""The counter-based hash that generated kernels call for `rng-bits`.

    v3 = splitmix64(c0, ((i0 * r1) + i1))      # element (i0, i1) of a rng-bits node

`splitmix64(key, counter)` is the scalar twin of the reference interpreter's vectorized
`ir.interpret.rng_bits` (same constants, imported from there), so compiled and interpreted
random values agree bit for bit.  It is `njit(inline="always")` like `vecmath`: inlined into
the kernel's loop it is a handful of integer multiplies, xors and shifts that LLVM vectorizes.

Every operand is cast to uint64 first: Numba types uint64 combined with an int64 (a loop
index, a plain literal) as float64, which would silently lose the low bits.
"""
from __future__ import annotations

import numba
import numpy as np

from ..ir.interpret import SPLITMIX_GAMMA, SPLITMIX_MUL1, SPLITMIX_MUL2

_ONE = np.uint64(1)
_SHIFT1 = np.uint64(30)
_SHIFT2 = np.uint64(27)
_SHIFT3 = np.uint64(31)


@numba.njit(inline="always", error_model="numpy", cache=True)
def splitmix64(key, counter):
    """The splitmix64 output for `counter` (a flat element index) of the stream `key`."""
    z = np.uint64(key) + (np.uint64(counter) + _ONE) * SPLITMIX_GAMMA
    z = (z ^ (z >> _SHIFT1)) * SPLITMIX_MUL1
    z = (z ^ (z >> _SHIFT2)) * SPLITMIX_MUL2
    return z ^ (z >> _SHIFT3)
