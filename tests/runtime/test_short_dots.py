"""Dots whose contraction sums at most SHORT_CONTRACTION products into at least
MIN_OUTPUTS elements become elementwise sums of products (passes/expand.py
`dot_as_products`) and fuse; against NumPy for every layout of batch, free and contracted
dims, integer, float and complex; longer or smaller dots are left to BLAS."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb_runtime.passes.expand import MIN_OUTPUTS, SHORT_CONTRACTION

RNG = np.random.default_rng(0)


def _normal(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


CASES = {
    "batched 4x4 matmul": (lambda a, b: a @ b, (_normal(300, 4, 4), _normal(300, 4, 4))),
    "batched 3x3 float32": (lambda a, b: a @ b, (_normal(500, 3, 3, dtype=np.float32),
                                                 _normal(500, 3, 3, dtype=np.float32))),
    "points @ R.T + t": (lambda p, r, t: p @ r.T + t, (_normal(2000, 3), _normal(3, 3),
                                                       _normal(3))),
    "RGB weights, gamma": (lambda img: (img @ np.array([0.299, 0.587, 0.114], np.float32))
                           ** (1 / 2.2), (RNG.random((50, 90, 3)).astype(np.float32),)),
    "outer product": (lambda x, y: np.outer(x, y), (_normal(70), _normal(70))),
    "einsum batch last": (lambda x, y: np.einsum("bik,bjk->bij", x, y),
                          (_normal(30, 15, 2), _normal(30, 16, 2))),
    "einsum batch last, contracted first": (lambda x, y: np.einsum("kib,kjb->bij", x, y),
                                            (_normal(2, 25, 30), _normal(2, 26, 30))),
    "integer matmul": (lambda a, b: a @ b, (RNG.integers(-9, 9, (90, 2)),
                                            RNG.integers(-9, 9, (2, 50)))),
    "two contracted dims": (lambda a, b: np.tensordot(a, b, axes=([1, 2], [0, 1])),
                            (_normal(80, 2, 2), _normal(2, 2, 60))),
    "complex": (lambda a, b: a @ b, (_normal(90, 3) + 1j * _normal(90, 3),
                                     _normal(3, 60) - 2j * _normal(3, 60))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_short_dot_is_elementwise_and_matches_numpy(name):
    fn, args = CASES[name]
    got, want = xlanb.jit(fn)(*args), fn(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    kinds = [k.kind for k in xlanb.jit(fn).lower(*args).compile().kernels]
    assert kinds == ["loop"], kinds


def test_longer_contraction_stays_a_dot():
    a, b = _normal(6, SHORT_CONTRACTION + 1), _normal(SHORT_CONTRACTION + 1, 5)
    compiled = xlanb.jit(lambda a, b: a @ b).lower(a, b).compile()
    assert [k.kind for k in compiled.kernels] == ["dot"]


def test_small_short_dot_stays_numpys_blas_call():
    """trace(A @ B - B @ A) is 0 or -2e-16 by the order of the sums: small dots keep
    NumPy's order to the last bit."""
    a, b = _normal(4, 4), _normal(4, 4)
    fn = lambda a, b: np.trace(a @ b - b @ a)        # noqa: E731
    assert xlanb.jit(fn)(a, b) == fn(a, b)
    assert 4 * 4 < MIN_OUTPUTS


@pytest.mark.parametrize("shape", [(50, 90, 3), (5000, 3), (70, 50, 4, 2)])
def test_literal_last_index_reads_through_a_merged_view(shape):
    """`x[..., j, 2]` reads become `x_m[..., 3 * j + 2]`: with the runtime stride 3 LLVM
    versions the loop on stride == 1 and runs the scalar copy (10-20x slower with a vecmath
    call in the loop); the literal stride vectorizes as interleaved loads."""
    x = RNG.random(shape).astype(np.float32)
    w = np.arange(1, shape[-1] + 1, dtype=np.float32) / 10

    def fn(x):
        return np.exp(x @ w) ** np.float32(0.7)

    compiled = xlanb.jit(fn, tiered=False).lower(x).compile()
    source = compiled.kernels[0].source
    assert "in0_m = in0.reshape(" in source and "in0_m[" in source, source
    np.testing.assert_allclose(xlanb.jit(fn, tiered=False)(x), fn(x), rtol=2e-6)


VECTOR_PRODUCTS = {
    "einsum rows": (lambda a, b: np.einsum("ij,ij->i", a, b), (_normal(500, 16), _normal(500, 16))),
    "einsum two batch dims": (lambda a, b: np.einsum("bhd,bhd->bh", a, b),
                              (_normal(20, 6, 33), _normal(20, 6, 33))),
    "transposed, two contracted": (lambda a, b: np.einsum("ijb,jib->b", a, b),
                                   (_normal(5, 7, 40), _normal(7, 5, 40))),
    "float32, fused with its operands": (
        lambda a, b: np.einsum("ij,ij->i", np.tanh(a), b * 2) + 1,
        (_normal(300, 24, dtype=np.float32), _normal(300, 24, dtype=np.float32))),
    "integer": (lambda a, b: np.einsum("ij,ij->i", a, b),
                (RNG.integers(-9, 9, (200, 9)), RNG.integers(-9, 9, (200, 9)))),
    "batched matrix-vector": (lambda a, x: np.einsum("bij,bj->bi", a, x),
                              (_normal(400, 8, 6), _normal(400, 6))),
    "batched vector-matrix, transposed": (lambda x, a: np.einsum("bj,bji->bi", x, a),
                                          (_normal(300, 7), _normal(300, 7, 5))),
    "complex (no conjugate)": (lambda a, b: np.einsum("ij,ij->i", a, b),
                               (_normal(60, 7) + 1j * _normal(60, 7),
                                _normal(60, 7) - 1j * _normal(60, 7))),
}


@pytest.mark.parametrize("name", list(VECTOR_PRODUCTS))
def test_batched_vector_products_are_a_reduce(name):
    """A dot with a batch and no free dimensions on a side (row-wise dot products, a batch
    of matrix-vector products) is the sum of the products (`batched_vector_products`):
    one reduce kernel, no BLAS call per batch element."""
    fn, args = VECTOR_PRODUCTS[name]
    got, want = xlanb.jit(fn, tiered=False)(*args), fn(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    rtol = 1e-5 if want.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 10)
    kinds = [k.kind for k in xlanb.jit(fn, tiered=False).lower(*args).compile().kernels]
    assert kinds == ["reduce"], kinds


def test_a_single_inner_product_stays_a_dot():
    """No batch: x @ y is one BLAS dot, as NumPy's."""
    x, y = _normal(300), _normal(300)
    compiled = xlanb.jit(lambda x, y: x @ y, tiered=False).lower(x, y).compile()
    assert [k.kind for k in compiled.kernels] == ["dot"]
