"""np.argmax / np.argmin along an axis as one compiled pass over the array.

An arg-reduction is a library kernel (passes/fusion.py: it has no generated form).  The
array is viewed as (outer, n, inner), n the reduced axis, and one loop keeps the best value
and its index per output element, NumPy's rules kept:

    the first maximum (minimum) wins;  the first NaN wins over every number

Where NumPy is slow, and only there (1 thread, float64 unless said, ms):

- inner > 1 (an axis before the last): NumPy copies the array to make the axis last, then
  runs its loop per output.  Here the loop over the reduced axis is the outer one and the
  inner loop runs over contiguous rows of best values: (10000, 64) axis 0 0.18 against
  3.5, (1000, 1000) axis 0 0.30 against 1.18, (100, 50, 100) axis 1 0.15 against 0.72.
- the last axis, shorter than NumPy's SIMD unit (256 bytes: 32 float64, 64 float32, 256
  int8): NumPy pays about 25 ns per row before its scalar loop; here a row loop that stops
  at its first NaN (rows of 12: 0.24 against 0.28; int32 rows of 32: 0.21 against 0.39).
  From 256 bytes NumPy's SIMD loop wins (float32 rows of 64: 0.13 against 0.30), and
  NumPy's argmax writes into the kernel's output itself.

The loop is compiled through the project's kernel cache (codegen/cache.py), as the
histogram pass is, once per dtype, when the program compiles.  float16 (compared as
float32 by the front end), complex (the front end orders complex values itself),
datetimes and any other dtype keep NumPy's call.
"""
from __future__ import annotations

import math
from typing import Callable

import numba
import numpy as np

from ..ir import Node, Op

DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16,
                                         np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                         np.uint64, np.bool_))


# The loop, as source: argmax compares with `>`, argmin with `<`.
_LOOP = """
def {kind}(x, out, best):
    \"\"\"out[o, i] = the index of the first best value (or first NaN) of x[o, :, i].\"\"\"
    outer, n, inner = x.shape
    for o in range(outer):
        if inner == 1:
            b = x[o, 0, 0]
            k = 0
            if b == b:
                for j in range(1, n):
                    v = x[o, j, 0]
                    if v {better} b:
                        b = v
                        k = j
                    elif v != v:
                        k = j
                        break
            out[o, 0] = k
            continue
        for i in range(inner):
            best[i] = x[o, 0, i]
            out[o, i] = 0
        for j in range(1, n):
            for i in range(inner):
                v = x[o, j, i]
                b = best[i]
                if v {better} b or (v != v and b == b):
                    best[i] = v
                    out[o, i] = j
"""
_BETTER = {"argmax": ">", "argmin": "<"}

NUMPY_SIMD_BYTES = 256          # rows from this long: NumPy's own SIMD loop
_COMPILED: dict[tuple, Callable] = {}


def _kernel(kind: str, dtype: np.dtype) -> Callable:
    key = (kind, dtype)
    if key not in _COMPILED:
        from .cache import compile_function
        x = numba.typeof(np.empty((1, 1, 1), dtype))
        source = ("# xlanb arg-reduction kernel\nimport numba\nimport numpy as np\n\n\n"
                  "@numba.njit(cache=True, nogil=True, error_model=\"numpy\")"
                  f"{_LOOP.format(kind=kind, better=_BETTER[kind])}")
        out = numba.typeof(np.empty((1, 1), np.int64))
        _COMPILED[key] = compile_function(source, kind,
                                          (x, out, numba.typeof(np.empty(1, dtype))))
    return _COMPILED[key]


def compiled_argreduce(node: Node) -> Callable | None:
    """`run(out, x)` writing `node`'s arg-reduction of `x` into `out` (C-ordered int64):
    the compiled loop (compiled now), or NumPy's function writing `out` for long rows; None
    where NumPy's call stays (a dtype the loop does not take)."""
    assert node.op is Op.ARGREDUCE
    kind, axis = node.arg
    x = node.inputs[0]
    if x.dtype not in DTYPES:
        return None
    outer, n = math.prod(x.shape[:axis]), x.shape[axis]
    inner = math.prod(x.shape[axis + 1:])
    numpy_fn = np.argmax if kind == "argmax" else np.argmin
    if inner == 1 and n * x.dtype.itemsize >= NUMPY_SIMD_BYTES:
        def numpy_run(out, x):
            numpy_fn(x, axis=axis, out=out)
        numpy_run.__name__ = f"library_numpy_{kind}"
        return numpy_run
    kernel = _kernel(kind, x.dtype)

    def run(out, x):
        if not (x.flags.c_contiguous and out.flags.c_contiguous):
            out[...] = numpy_fn(x, axis=axis)
            return
        kernel(x.reshape(outer, n, inner), out.reshape(outer, inner),
               np.empty(inner if inner > 1 else 0, x.dtype))
    run.__name__ = f"library_{kind}"
    return run
