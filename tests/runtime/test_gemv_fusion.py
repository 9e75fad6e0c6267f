"""GEMV-pair fusion (passes/gemv_fusion.py): `A.T @ g(A @ x)` as one gemv_pair kernel that
reads A once, against NumPy; pairs that must not fuse stay two dot kernels."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb_runtime.passes.gemv_fusion import MIN_MATRIX_BYTES
from tolerance import assert_close

RNG = np.random.default_rng(0)


def _problem(dtype, rows=600, cols=300):
    a = RNG.standard_normal((rows, cols)).astype(dtype)
    return a, RNG.standard_normal(cols).astype(dtype), RNG.standard_normal(rows).astype(dtype)


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


CASES = {
    "least squares A.T @ r": lambda a, x, b: a.T @ (a @ x - b),
    "r @ A, scaled": lambda a, x, b: ((a @ x - b) @ a) * (2 / a.shape[0]),
    "logistic gradient": lambda a, x, b: a.T @ (_sigmoid(a @ x) - (b > 0)) / a.shape[0],
    "residual also returned": lambda a, x, b: (a.T @ (a @ x - b), a @ x - b),
}


def _kinds(fn, *args):
    return [k.kind for k in xlanb.jit(fn, tiered=False).lower(*args).compile().kernels]


def _check(fn, args, factor=1.0):
    """Against NumPy; a gradient cancels, so its error is bounded by the size of the terms
    summed, |A|.T @ (|A| |x| + |b|), times what the result is scaled by (`factor`)."""
    a, x, b = args[:3]
    got, want = xlanb.jit(fn, tiered=False)(*args), fn(*args)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    terms = float(np.linalg.norm(np.abs(a).T @ (np.abs(a) @ np.abs(x) + np.abs(b)))) * factor
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert_close(g, w, n=a.shape[0] * a.shape[1],
                     scale=terms if g.shape == (a.shape[1],) else None)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(CASES))
def test_pair_is_one_kernel_and_matches_numpy(name, dtype):
    args = _problem(dtype)
    assert args[0].nbytes >= MIN_MATRIX_BYTES or dtype == np.float32
    if args[0].nbytes < MIN_MATRIX_BYTES:
        args = _problem(dtype, rows=1200)
    kinds = _kinds(CASES[name], *args)
    assert "gemv_pair" in kinds and "dot" not in kinds, kinds
    _check(CASES[name], args)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(CASES))
def test_odd_row_counts_sweep_the_last_row_alone(name, dtype):
    """The sweep takes rows two at a time: an odd count leaves a last row to itself."""
    args = _problem(dtype, rows=601, cols=500)
    kinds = _kinds(CASES[name], *args)
    assert "gemv_pair" in kinds and "dot" not in kinds, kinds
    _check(CASES[name], args)


def test_source_sweeps_the_matrix_once():
    args = _problem(np.float64)
    compiled = xlanb.jit(CASES["least squares A.T @ r"], tiered=False).lower(*args).compile()
    (kernel,) = compiled.kernels
    assert kernel.source.count("for i0 in range") == 1, kernel.source   # (+ the last rows)
    assert "gemv_pair" in compiled.as_text()


def test_small_matrix_stays_two_blas_calls():
    args = _problem(np.float64, rows=40, cols=30)
    assert _kinds(CASES["least squares A.T @ r"], *args).count("dot") == 2
    _check(CASES["least squares A.T @ r"], args)


def test_second_epilogue_reading_a_reduction_of_the_residual():
    """A.T @ r * sum(r * r): the sum needs all of r before the second dot's epilogue.  The
    planner computes A @ x again for the sum (a dot kernel and a reduction first), so the
    pair may still fuse; the program must order the kernels right and match NumPy."""
    def fn(a, x, b):
        r = a @ x - b
        return (a.T @ r) * np.sum(r * r)

    a, x, b = args = _problem(np.float64)
    _check(fn, args, factor=float(np.sum((a @ x - b) ** 2)))


def test_different_matrices_do_not_fuse():
    def fn(a, c, x, b):
        return c.T @ (a @ x - b)

    a, x, b = _problem(np.float64)
    c = RNG.standard_normal(a.shape)
    assert "gemv_pair" not in _kinds(fn, a, c, x, b)
    np.testing.assert_allclose(xlanb.jit(fn, tiered=False)(a, c, x, b), fn(a, c, x, b),
                               rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name, fn, cols", [
    ("a slice of A @ x", lambda a, x, b: a.T @ np.tanh(a @ x) - (a @ x)[5:5 + a.shape[1]],
     300),
    ("the residual, A square", lambda a, x, b: a.T @ (a @ x - b) + (a @ x - b), 600),
    ("the residual reversed, A square",
     lambda a, x, b: a.T @ (a @ x - b) * (a @ x - b)[::-1], 600),
])
def test_second_epilogue_reading_the_first_kernels_values(name, fn, cols):
    """The second dot's epilogue runs after the sweep over A's rows: reading a value of the
    first kernel there (A @ x at rows 5..) got the last row's `s_` for every element, a
    silently wrong result (0.26 relative error); such pairs stay two kernels."""
    args = _problem(np.float64, rows=600, cols=cols)
    a, x, b = args
    got, want = xlanb.jit(fn, tiered=False)(*args), fn(*args)
    terms = float((np.abs(a).T @ (np.abs(a) @ np.abs(x) + np.abs(b))).max())
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * terms)


def _bicg(a, x, b):
    return b @ a, a @ x


def _mvt(x1, x2, y1, y2, a):
    x1 += a @ y1
    x2 += y2 @ a


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_independent_pairs_of_one_matrix_sweep_it_once(dtype):
    """`A @ p` beside `r @ A` (a BiCG step) and mvt's in-place `x1 += A @ y1; x2 += y2 @
    A`: the second dot's vector is an argument, read at row i of the sweep."""
    a, x, b = args = _problem(dtype, rows=1200)
    assert _kinds(_bicg, *args) == ["gemv_pair"]
    _check(_bicg, args)
    square = RNG.standard_normal((600, 600)).astype(dtype)
    vectors = [RNG.standard_normal(600).astype(dtype) for _ in range(4)]
    got, want = [v.copy() for v in vectors] + [square], [v.copy() for v in vectors] + [square]
    assert _kinds(_mvt, *got) == ["gemv_pair"]
    xlanb.jit(_mvt, tiered=False)(*got)
    _mvt(*want)
    for g, w in zip(got, want):
        assert_close(g, w, n=square.size, scale=float(np.abs(w).max()) + 600 * 4)


def test_a_gemv_that_reads_the_other_dot_does_not_pair_with_it():
    """`A @ (r @ A)` needs the whole of r @ A before its sweep: two kernels, in order."""
    def fn(a, x, b):
        return a @ np.tanh(b @ a), x
    a, x, b = _problem(np.float64, rows=600, cols=600)
    assert "gemv_pair" not in _kinds(fn, a, x, b)
    got, want = xlanb.jit(fn, tiered=False)(a, x, b)[0], fn(a, x, b)[0]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * float(np.abs(a).sum()))
