"""NumPy functions lowered as compositions of other lowerings (compositions.py,
array_functions.py, the norms in decompositions.py) and the library calls of numerics.py,
against NumPy under `jit`: dtype, shape and values (`assert_close`), and the value-
dependent ones as named errors that run with NumPy under `must_compile=False`."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import xlanb
from xlanb.errors import DataDependentShapeError, UnsupportedNumPyFunctionError
from tolerance import assert_close

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 5))
XN = X.copy()
XN[1, 2] = np.nan
Y = rng.standard_normal((4, 5))
V = rng.standard_normal(6)
I = rng.integers(0, 5, 6)
A = rng.standard_normal((2, 3, 3))
C = (X + 1j * X[::-1]).astype(np.complex64)
swv = np.lib.stride_tricks.sliding_window_view

# name: (function, arguments)
CASES = {
    "ptp": (lambda x: (np.ptp(x), np.ptp(x, axis=0), np.ptp(x, 1, keepdims=True)), (X,)),
    "sinc": (lambda v: np.sinc(np.concatenate([v, [0.0]])), (V,)),
    "diff_ends": (lambda v, x, i: (np.diff(v, prepend=0.0), np.diff(x, axis=0, append=x[:1]),
                                   np.diff(x, n=2, prepend=1, append=[[2]] * 4),
                                   np.diff(i, prepend=0.5), np.diff(i, append=7)), (V, X, I)),
    "logical_xor_reduce": (lambda x, i: (np.logical_xor.reduce(x > 0, axis=1),
                                         np.logical_xor.reduce(i),
                                         np.logical_xor.reduce(x, axis=None),
                                         np.logical_xor.reduce(x > 0, 0, keepdims=True)),
                           (X, I)),
    "isneginf_isposinf": (lambda v: (np.isneginf(v / 0.0), np.isposinf(v / 0.0)), (V,)),
    "nan_reductions": (lambda x: (np.nansum(x), np.nansum(x, axis=0), np.nanprod(x, 1),
                                  np.nanmax(x, 0), np.nanmin(x), np.nanmean(x, axis=1),
                                  np.nanmean(x.astype(np.float32))), (XN,)),
    "nan_all_nan_slice": (lambda x: (np.nanmax(x, axis=1), np.nanmean(x, axis=1)),
                          (np.array([[np.nan, np.nan], [1.0, np.nan]]),)),
    "nanvar_nanstd_nanarg": (lambda x: (np.nanvar(x), np.nanstd(x, axis=0, ddof=1),
                                        np.nanargmax(x, 1), np.nanargmin(x)), (XN,)),
    "kron": (lambda x, v: (np.kron(x, x[:2, :2]), np.kron(v, x), np.kron(v, 2.0)), (X, V)),
    "cross": (lambda x, y: (np.cross(x[:, :3], y[:, 1:4]), np.linalg.cross(x[:, :3],
                                                                         y[:, 2:])), (X, Y)),
    "vander": (lambda v, i: (np.vander(v), np.vander(v, 3, increasing=True), np.vander(i)),
               (V, I)),
    "trapezoid": (lambda v, y: (np.trapezoid(v), np.trapezoid(y, v[:5]),
                                np.trapezoid(y, dx=0.5, axis=0)), (V, Y)),
    "stacks_and_splits": (lambda v, x: (np.column_stack([v, v * 2]), np.dstack([x, x]),
                                        np.hsplit(x[:, :4], 2), np.vsplit(x, [1, 3]),
                                        np.dsplit(np.dstack([x, x]), 2)), (V, X)),
    "rot90": (lambda x: (np.rot90(x), np.rot90(x, 2), np.rot90(x, -1, axes=(1, 0))), (X,)),
    "select": (lambda v: np.select([v < -0.5, v > 0.5], [v * 2, v ** 2], -1.0), (V,)),
    "array_equal": (lambda x, y: (np.array_equal(x, x), np.array_equal(x, x, equal_nan=True),
                                  np.array_equal(x, y), np.array_equiv(y, y[0])), (XN, Y)),
    "resize": (lambda v: (np.resize(v, (3, 5)), np.resize(v, 4)), (V,)),
    "ediff1d": (lambda v: (np.ediff1d(v), np.ediff1d(v, to_begin=[0.0], to_end=[9.0, 9.0])),
                (V,)),
    "unwrap": (lambda v, y: (np.unwrap(np.cumsum(v) * 3), np.unwrap(y * 4, axis=0)), (V, Y)),
    "cov_corrcoef": (lambda v, y: (np.cov(y), np.cov(y, rowvar=False), np.cov(v, v[::-1]),
                                   np.corrcoef(y), np.corrcoef(v, v ** 2)), (V, Y)),
    "delete_insert": (lambda v, x: (np.delete(v, 2), np.delete(x, [0, 2], axis=1),
                                    np.delete(v, slice(1, 4)), np.insert(v, 2, 9.0),
                                    np.insert(v, [1, 1, 4], [7, 8, 9]),
                                    np.insert(x, 1, v[:4], axis=1),
                                    np.insert(x, [0, 2], 5.5, axis=0)), (V, X)),
    "sliding_window_view": (lambda v, y: (swv(v, 3), swv(y, (2, 2)), swv(y, 2, axis=0)),
                            (V, Y)),
    "convolve_interp_isin": (lambda v, i: (np.convolve(v, v[:3]), np.correlate(v, v[:2], "same"),
                                           np.convolve(v, v[:3], "valid"),
                                           np.interp(v, np.sort(v), v ** 2, left=0.0),
                                           np.isin(i, [1, 2]), np.isin(i, [3], invert=True)),
                             (V, I)),
    "norms": (lambda v, x, a, c: (
        *(np.linalg.norm(v, o) for o in (np.inf, -np.inf, 0, 1, 3, 0.5)),
        *(np.linalg.norm(x, o) for o in (1, -1, np.inf, -np.inf, 2, -2, "nuc")),
        np.linalg.norm(a, 2, axis=(1, 2)), np.linalg.norm(x, 1, axis=0, keepdims=True),
        np.linalg.norm(c, np.inf), np.linalg.vector_norm(a), np.linalg.vector_norm(a, axis=(0, 2),
                                                                                   ord=1),
        np.linalg.vector_norm(x, axis=1, keepdims=True), np.linalg.matrix_norm(a, ord="nuc"),
        np.linalg.matrix_norm(a)), (V, X, A, C)),
    "generalized_ufuncs": (lambda x, a, c, i: (np.matvec(a, x[:2, :3]), np.vecmat(x[:2, :3], a),
                                               np.vecdot(x, x), np.linalg.vecdot(x, x),
                                               np.vecdot(c, c), np.vecdot(i, i)), (X, A, C, I)),
    "block_choose": (lambda x, v, i: (np.block([[x, x], [x, x]]), np.block([v, v]),
                                      np.choose(i, [v, v * 2, v * 3, -v, v + 1], mode="clip"),
                                      i.choose([v] * 5, mode="wrap")), (X, V, I)),
    "ravel_multi_index": (lambda i: (np.ravel_multi_index((i, i[::-1]), (7, 6), mode="wrap"),
                                     np.ravel_multi_index((i, i), (4, 6), mode=("clip", "wrap"),
                                                          order="F")), (I,)),
    "rollaxis_unstack": (lambda a: (np.rollaxis(a, 2), np.rollaxis(a, 0, 3),
                                    np.unstack(a, axis=1)), (A,)),
    "polyval_fix_i0": (lambda v, x: (np.polyval(v[:3], x), np.polyval([1.0, 2.0], v),
                                     np.fix(v * 3), np.i0(v)), (V, X)),
    "lexsort_sort_complex": (lambda i, v: (np.lexsort((i, i[::-1])),
                                           np.lexsort(np.stack([i % 2, i])),
                                           np.sort_complex(v[::-1] + 1j)), (I, V)),
    "gradient": (lambda x, v, i: (np.gradient(x), np.gradient(v, 0.5),
                                  np.gradient(x, axis=1, edge_order=2), np.gradient(i),
                                  np.gradient(x, 2.0, 3.0)), (X, V, I)),
}


def leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


@pytest.mark.parametrize("name", list(CASES))
def test_matches_numpy(name):
    fn, args = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # NumPy's all-NaN warnings
        expected = fn(*args)
        got = xlanb.jit(fn)(*args)
    for g, e in zip(leaves(got), leaves(expected), strict=True):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, e.dtype, g.shape, e.shape)
        assert_close(g, e, n=64)


@pytest.mark.parametrize("fn", [
    lambda v: np.intersect1d(v, v[:2]), lambda v: np.union1d(v, v),
    lambda v: np.setdiff1d(v, v[:2]), lambda v: np.trim_zeros(v), lambda v: np.roots(v),
    lambda v: np.unique_counts(v), lambda v: np.real_if_close(v + 0j),
], ids=["intersect1d", "union1d", "setdiff1d", "trim_zeros", "roots", "unique_counts",
        "real_if_close"])
def test_value_dependent_results_fall_back(fn):
    v = np.array([0.0, 1.0, 2.0, 2.0, 3.0])
    with pytest.raises(DataDependentShapeError):
        xlanb.jit(fn)(v)
    for g, e in zip(leaves(xlanb.jit(fn, must_compile=False)(v)), leaves(fn(v)), strict=True):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("tiered", [False, True])
def test_choose_raises_numpys_error_for_an_index_out_of_range(tiered):
    """np.choose's mode='raise' (its default): a run-time check of the indices raises
    NumPy's ValueError; valid indices give NumPy's values."""
    fn = xlanb.jit(lambda i, v: np.choose(i, [v, v * 2, -v]), tiered=tiered)
    np.testing.assert_array_equal(fn(I % 3, V), np.choose(I % 3, [V, V * 2, -V]))
    for position, value in ((2, 3), (0, -1)):
        bad = I % 3
        bad[position] = value
        with pytest.raises(ValueError, match="invalid entry in choice array"):
            np.choose(bad, [V, V * 2, -V])
        with pytest.raises(ValueError, match="invalid entry in choice array"):
            fn(bad, V)


def test_put_along_axis_writes_as_numpy():
    rng = np.random.default_rng(2)
    x, idx = rng.standard_normal((4, 5)), rng.integers(-5, 5, (4, 2))

    def put(x, idx, v):
        np.put_along_axis(x, idx, v, axis=1)
        np.put_along_axis(x, np.array([[3, 0, -1, 2, 3]]), -1.0, axis=0)
        return x.sum()

    for _ in range(2):
        got_x, want_x = x.copy(), x.copy()
        got = xlanb.jit(put, tiered=False)(got_x, idx, np.arange(8.0).reshape(4, 2))
        want = put(want_x, idx, np.arange(8.0).reshape(4, 2))
        np.testing.assert_array_equal(got_x, want_x)
        assert_close(got, want)


def test_what_cannot_be_honoured_is_named():
    """np.ravel_multi_index's mode='raise' (its default) raises NumPy's ValueError from a
    run-time check (test_index_bounds.py); np.cross of 2-vectors is refused by name."""
    np.testing.assert_array_equal(
        xlanb.jit(lambda i: np.ravel_multi_index((i, i), (5, 5)))(I),
        np.ravel_multi_index((I, I), (5, 5)))
    with pytest.raises(UnsupportedNumPyFunctionError, match="np.cross of 2-vectors"):
        xlanb.jit(lambda x: np.cross(x[:, :2], x[:, 2:4]))(X)


@pytest.mark.parametrize("fn", [lambda v: np.vecmat(v, v), lambda v: np.matvec(v, v)],
                         ids=["vecmat", "matvec"])
def test_gufunc_core_dimensions_checked_as_numpy(fn):
    """An operand with fewer dimensions than the core signature needs is NumPy's
    ValueError, not an IndexError from inside the contraction."""
    with pytest.raises(ValueError) as expected:
        fn(V)
    with pytest.raises(ValueError, match="does not have enough dimensions") as got:
        xlanb.jit(fn)(V)
    assert str(got.value) == str(expected.value)


def test_piecewise_as_numpy():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(50)
    x[:3] = 0.0
    cases = [lambda x: np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * v]),
             lambda x: np.piecewise(x, [x < -1, x > 1], [-1.0, lambda v: np.sin(v) + 1,
                                                         lambda v: v / 2]),      # otherwise
             lambda x: np.piecewise(x, x > 0, [lambda v: np.sqrt(v)]),           # one cond
             lambda x: np.piecewise(x.reshape(5, 10), [x.reshape(5, 10) > 0.5], [2, 3]),
             lambda x: np.piecewise(x.astype(np.float32), [x < 0], [lambda v: v * 3])]
    for fn in cases:
        got, want = xlanb.jit(fn, tiered=False)(x), fn(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert_close(got, want)
