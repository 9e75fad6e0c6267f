"""An integer array's least and greatest value in one compiled pass: the run-time range
checks' read (`xlanb.check_range`, ir/library.py) of a large index array.

NumPy takes a pass for `x.min()` and another for `x.max()`; a check of both bounds (an
index in [-n, n), a bincount value in [0, minlength)) read the array twice.  One loop
keeping both (LLVM vectorizes it into min/max reductions) reads it once: 1e6 int64, 1
thread, about 0.3 ms against NumPy's 0.55.  Below MIN_ELEMENTS NumPy's two calls stay
(each about a microsecond; a Numba call costs a fraction of that, not worth a compile).

The loop is compiled through the project's kernel cache (codegen/cache.py), as the
arg-reduction and histogram passes are, once per dtype, on the first large array.
"""
from __future__ import annotations

from typing import Callable

import numba
import numpy as np

MIN_ELEMENTS = 1 << 14
DTYPES = frozenset(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8,
                                         np.uint16, np.uint32, np.uint64))

_LOOP = """
def min_max(x, bounds):
    \"\"\"bounds[0], bounds[1] = x.min(), x.max() of a non-empty 1-D array.\"\"\"
    low = x[0]
    high = x[0]
    for i in range(1, x.size):
        v = x[i]
        if v < low:
            low = v
        if v > high:
            high = v
    bounds[0] = low
    bounds[1] = high
"""
_COMPILED: dict[np.dtype, Callable] = {}


def _kernel(dtype: np.dtype) -> Callable:
    if dtype not in _COMPILED:
        from .cache import compile_function
        source = ("# xlanb min-max kernel\nimport numba\nimport numpy as np\n\n\n"
                  "@numba.njit(cache=True, nogil=True, error_model=\"numpy\")" + _LOOP)
        vector = numba.typeof(np.empty(1, dtype))
        _COMPILED[dtype] = compile_function(source, "min_max", (vector, vector))
    return _COMPILED[dtype]


def min_max(values: np.ndarray) -> tuple:
    """(values.min(), values.max()) of a non-empty array: one compiled pass where it is
    a large C-contiguous integer array, else NumPy's two."""
    if values.size < MIN_ELEMENTS or values.dtype not in DTYPES or \
            not values.flags.c_contiguous:
        return values.min(), values.max()
    bounds = np.empty(2, values.dtype)
    _kernel(values.dtype)(values.reshape(-1), bounds)
    return bounds[0], bounds[1]
