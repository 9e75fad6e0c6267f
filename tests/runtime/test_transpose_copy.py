"""A Fortran-ordered matrix copied into C order by the tiled compiled pass
(codegen/transpose.py): the same values, C-contiguous, for each dtype it takes, edge tiles
included; other arrays keep NumPy's copy."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb_runtime.codegen.transpose import MIN_ELEMENTS, TILE, c_ordered


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32,
                                   np.complex128, np.int8])
@pytest.mark.parametrize("shape", [(300, 257), (MIN_ELEMENTS // 70 + 1, 70), (3, 5)])
def test_c_ordered_copy_of_a_transposed_matrix(dtype, shape):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(shape[::-1]) * 100).astype(dtype).T
    y = c_ordered(x)
    assert y.flags.c_contiguous and y.dtype == x.dtype and not np.shares_memory(x, y)
    np.testing.assert_array_equal(y, x)
    assert shape[0] % TILE or shape[1] % TILE or shape == (3, 5)     # edge tiles


def test_a_returned_large_transpose_is_c_ordered_as_numpys():
    x = np.random.default_rng(3).standard_normal((400, 300))
    fn = xlanb.jit(lambda x: np.ascontiguousarray(x.T) * 2, tiered=False)
    for _ in range(2):
        got = fn(x)
        assert got.flags.c_contiguous
        np.testing.assert_array_equal(got, x.T * 2)
