"""Flat views: an elementwise loop kernel over a contiguous array runs one loop, not a nest.

A loop kernel whose every value is computed per element at the same index (no broadcast
but of a scalar, no transpose, slice or position-dependent op) computes the same thing
over the array's elements in memory order.  Nested, a (1024, 1024, 3) image gives a loop
of 3 trips innermost, which LLVM cannot vectorize: `img.astype(np.float32) / 255` took
3.2 ms against NumPy's 1.3, flat 0.67 (codegen/cpu.py `flat_space`).

`flat_view(a)` is that 1-D view where Numba types `a` C-contiguous (the driver's buffers
and its parameters after the prologue are), and a C-ordered copy otherwise;
`write_flat(a, flat)` copies a written copy back (nothing for a view).  Both are decided
by the array's type, when Numba compiles the kernel, so a view is never mistaken for a
copy: an array typed 'A' that happens to be contiguous takes the copy.
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload


def flat_view(a):
    """`a`'s elements in C order as a 1-D array (compiled only inside kernels)."""
    raise NotImplementedError("flat_view runs inside compiled kernels")


def write_flat(a, flat):
    """Store `flat` (from flat_view(a), written) back into `a` (compiled only)."""
    raise NotImplementedError("write_flat runs inside compiled kernels")


@overload(flat_view, inline="always")
def _flat_view(a):
    if not isinstance(a, types.Array):
        return None
    if a.layout == "C":
        return lambda a: a.reshape(a.size)
    return lambda a: a.flatten()


@overload(write_flat, inline="always")
def _write_flat(a, flat):
    if not isinstance(a, types.Array):
        return None
    if a.layout == "C":
        return lambda a, flat: None

    def copy_back(a, flat):
        source = flat.reshape(a.shape)
        for index in np.ndindex(a.shape):
            a[index] = source[index]
    return copy_back
