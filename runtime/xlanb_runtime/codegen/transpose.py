"""A Fortran-ordered matrix copied into C order in one compiled, blocked pass: a returned
transpose laid out as NumPy lays it out (xlanb/tracing/boundary.py `laid_out`).

A program may return `x.T * 2` as a transposed view of the product it computed; where
NumPy's result is C-ordered (`np.ascontiguousarray(x.T) * 2`), the caller gets a copy.
NumPy's own copy walks one side with a stride of a whole row: 2000x2000 float64, 1 thread,
about 17 ms.  Copied in 32x32 tiles that stay in L1 on both sides, about 4.  Below
MIN_ELEMENTS, or for other layouts and dtypes, NumPy's copy stays (no compile for them).

The loop is compiled through the project's kernel cache (codegen/cache.py), as the
min-max and arg-reduction passes are, once per dtype, on the first large matrix.
"""
from __future__ import annotations

from typing import Callable

import numba
import numpy as np

MIN_ELEMENTS = 1 << 16
TILE = 32
DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64,
                                         np.complex64, np.complex128))

_LOOP = """
def transposed(a, out):
    \"\"\"out[j, i] = a[i, j] for a C-ordered a, in TILE x TILE tiles.\"\"\"
    m, n = a.shape
    for i0 in range(0, m, TILE):
        i1 = min(i0 + TILE, m)
        for j0 in range(0, n, TILE):
            j1 = min(j0 + TILE, n)
            for i in range(i0, i1):
                for j in range(j0, j1):
                    out[j, i] = a[i, j]
"""
_COMPILED: dict[np.dtype, Callable] = {}


def _kernel(dtype: np.dtype) -> Callable:
    if dtype not in _COMPILED:
        from .cache import compile_function
        source = ("# xlanb transpose kernel\nimport numba\nimport numpy as np\n"
                  f"TILE = {TILE}\n\n\n"
                  "@numba.njit(cache=True, nogil=True, error_model=\"numpy\")" + _LOOP)
        matrix = numba.typeof(np.empty((1, 1), dtype))
        _COMPILED[dtype] = compile_function(source, "transposed", (matrix, matrix))
    return _COMPILED[dtype]


def c_ordered(value: np.ndarray) -> np.ndarray:
    """`np.ascontiguousarray(value)`: a tiled compiled copy where `value` is a large
    Fortran-ordered matrix, else NumPy's."""
    if value.ndim != 2 or value.size < MIN_ELEMENTS or value.dtype not in DTYPES or \
            not value.flags.f_contiguous or not value.flags.aligned:
        return np.ascontiguousarray(value)
    out = np.empty(value.shape, value.dtype)
    _kernel(value.dtype)(value.T, out)
    return out
