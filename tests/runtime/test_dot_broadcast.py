"""Matmuls of operands broadcast along batch dimensions (passes/dot_broadcast.py): the
broadcast operand contracts before its broadcast, as one product of larger matrices, and
no broadcast batch is written out; against NumPy in values, dtype and memory layout."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb

from tolerance import assert_close

RNG = np.random.default_rng(3)

SHAPES = [((10, 1, 4, 5), (3, 5, 6)), ((1, 4, 5), (3, 5, 6)), ((3, 4, 5), (1, 5, 6)),
          ((2, 1, 4, 5), (1, 3, 5, 6)), ((2, 1, 3, 4, 5), (1, 7, 1, 5, 2)),
          ((2, 1, 4, 5), (2, 3, 5, 6)), ((3, 1, 4, 1), (1, 2, 1, 6)),
          ((1, 1, 4, 5), (1, 1, 5, 6)), ((2, 3, 4, 5), (5, 6)), ((4, 5), (2, 3, 5, 6))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_broadcast_batches_match_numpy(shapes, dtype):
    a, b = [(RNG.standard_normal(s) * 3).astype(dtype) for s in shapes]

    def matmul(a, b):
        return a @ b, (a @ b).sum(-1)           # returned, and read by a consumer
    jitted = xlanb.jit(matmul, tiered=False)
    for _ in range(2):                          # the general path, then the call guard
        got, want = jitted(a, b), matmul(a, b)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.strides == w.strides
            assert_close(g, w, n=a.shape[-1])


def test_a_returned_product_is_numpys_broadcasting_matmul():
    """Returned, its dims would change order (NumPy's result is C-ordered): NumPy's own
    np.matmul on the operands before their broadcasts, its result as NumPy's."""
    a, b = RNG.standard_normal((10, 1, 4, 5)), RNG.standard_normal((3, 5, 6))
    compiled = xlanb.jit(lambda a, b: a @ b, tiered=False).lower(a, b).compile()
    assert "np.matmul" in compiled.executable.driver_source or \
        "library_call" in compiled.executable.driver_source
    assert "broadcast" not in compiled.executable.driver_source
    got = compiled(a, b)
    np.testing.assert_array_equal(got, a @ b)                    # NumPy's call: its bits
    assert got.flags.c_contiguous


def test_no_broadcast_batch_is_written_out():
    a, b = RNG.standard_normal((10, 1, 4, 5)), RNG.standard_normal((3, 5, 6))
    compiled = xlanb.jit(lambda a, b: np.tanh(a @ b), tiered=False).lower(a, b).compile()
    assert "broadcast" not in compiled.executable.driver_source
    assert [k.kind for k in compiled.kernels].count("dot") == 1
    assert_close(compiled(a, b), np.tanh(a @ b), n=5)
