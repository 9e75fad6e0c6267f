"""Library-call lowerings over the whole matrix of issue 14 point 6: every dtype (bool, int32,
int64, float32, float64, complex64, complex128) times every layout (C order, transposed,
reversed, strided, broadcast, 0-d, empty, 1-D, a batch) with the keywords NumPy takes,
against NumPy under `jit`.  Where NumPy raises, `jit` raises the same builtin exception
type.  (Fused lowerings, scans and reductions, have their own matrices:
test_reduction_keywords.py, test_ufunc_keywords.py, test_scans.py.)

One row per function (`CALLS`); one compiled program per (function, dtype): the layouts
NumPy accepts are the arguments of one call, so the matrix costs about 100 small compiles.
Sorts, selections and histograms run NumPy's own code on the same values: exact.  LAPACK
and FFT results: `assert_close` (tests/tolerance.py)."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from tolerance import assert_close
from test_library_calls import data as values        # ties, a NaN, a signed zero

DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]


def matrix(dtype, n=3, seed=1) -> np.ndarray:
    """Hermitian positive definite (Cholesky takes it), well conditioned."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.normal(size=(n, n))
    spd = a @ a.conj().T + n * np.eye(n)
    if np.dtype(dtype).kind in "iub":
        return np.round(spd).astype(dtype) if dtype != "bool" else np.eye(n, dtype=bool)
    return spd.astype(dtype)


def layouts(x: np.ndarray) -> dict[str, np.ndarray]:
    wide = np.repeat(x, 2, axis=-1)
    return {"c": x, "transposed": np.swapaxes(x, -1, -2), "reversed": x[::-1, ::-1],
            "strided": wide[..., ::2], "broadcast": np.broadcast_to(x[:1], x.shape),
            "0-d": np.asarray(x.flat[2]), "empty": x[:0], "1-d": x[1][::-1],
            "batch": np.stack([x, x.T if x.shape[0] == x.shape[1] else x])}


def sorted_1d(x):
    return np.sort(x.ravel())


# name -> (fn, input maker, exact, dtypes); fn takes one array
CALLS = {
    "sort": (lambda x: (np.sort(x), np.sort(x, axis=0), np.sort(x, axis=None),
                        np.sort(x, kind="stable")), values, True, DTYPES),
    "argsort": (lambda x: (np.argsort(x, kind="stable"), np.argsort(x, axis=0),
                           np.argsort(x, axis=None, kind="stable")), values, True, DTYPES),
    "partition": (lambda x: (np.partition(x, 1), np.partition(x, -1, axis=0)),
                  values, True, DTYPES),
    "argpartition": (lambda x: np.argpartition(x, (0, 1), axis=-1), values, True, DTYPES),
    "median": (lambda x: (np.median(x), np.median(x, axis=0), np.median(x, axis=-1,
                                                                       keepdims=True)),
               values, False, DTYPES),
    "percentile": (lambda x: (np.percentile(x, 30), np.percentile(x, [10, 90], axis=0),
                              np.percentile(x, 50, axis=-1, method="nearest",
                                            keepdims=True)), values, False, DTYPES),
    "quantile": (lambda x: (np.quantile(x, 0.3, axis=0), np.quantile(x, [0.0, 1.0]),
                            np.quantile(x, 0.5, method="lower")), values, False, DTYPES),
    "nan_statistics": (lambda x: (np.nanmedian(x, axis=0), np.nanpercentile(x, 25),
                                  np.nanquantile(x, 0.75, axis=-1)), values, False, DTYPES),
    "searchsorted": (lambda x: (np.searchsorted(sorted_1d(x), x),
                                np.searchsorted(sorted_1d(x), x, side="right")),
                     values, True, DTYPES),
    "histogram": (lambda x: (np.histogram(x, bins=3, range=(-1, 1)),
                             np.histogram(x, bins=[-1.0, 0.0, 0.5, 2.0])),
                  values, False, DTYPES),
    "solve_inv_det": (lambda a: (np.linalg.solve(a, a), np.linalg.inv(a), np.linalg.det(a),
                                 np.linalg.slogdet(a)), matrix, False, DTYPES),
    "factorizations": (lambda a: (np.linalg.cholesky(a), np.linalg.eigvalsh(a),
                                  np.linalg.qr(a), np.linalg.svd(a, compute_uv=False)),
                       matrix, False, DTYPES),
    "pinv_rank": (lambda a: (np.linalg.pinv(a), np.linalg.matrix_rank(a)), matrix, False,
                  DTYPES),
    "digitize_edges": (lambda x: (np.digitize(x, [-0.5, 0.0, 1.0]),
                                  np.digitize(x, [1.0, 0.0, -0.5], right=True),
                                  np.histogram_bin_edges(x, bins=3, range=(-1, 1))),
                       values, True, DTYPES),
    "sort_complex": (lambda x: np.sort_complex(x), values, True, DTYPES),
    "isin_interp": (lambda x: (np.isin(x, [0, 1]), np.isin(x, [0.5], invert=True),
                               np.interp(x, [-1.0, 0.0, 2.0], [0.0, 1.0, 3.0])),
                    values, False, DTYPES),
    "nan_arg_var": (lambda x: (np.nanargmax(x, axis=0), np.nanargmin(x),
                               np.nanvar(x, axis=-1), np.nanstd(x, ddof=1)),
                    values, False, DTYPES),
    "convolve_correlate": (lambda x: (np.convolve(x, [1.0, 2.0, 0.5]),
                                      np.correlate(x, [1, 2], mode="same"),
                                      np.convolve(x, [1, 2], mode="valid")),
                           values, False, DTYPES),
    "eigh_svd_cond": (lambda a: (np.linalg.eigh(a), np.linalg.svd(a),
                                 np.linalg.svdvals(a), np.linalg.cond(a)),
                      matrix, False, DTYPES),
    "i0": (lambda x: np.i0(x), values, False, DTYPES),
    "fft": (lambda x: (np.fft.fft(x), np.fft.ifft(x, n=6, axis=0), np.fft.fft2(x),
                       np.fft.fftn(x, norm="ortho")), values, False, DTYPES),
    "rfft": (lambda x: (np.fft.rfft(x), np.fft.irfft(x, axis=0), np.fft.rfft2(x),
                        np.fft.hfft(x), np.fft.ihfft(x, n=3)), values, False, DTYPES),
}


# (name, dtype, layout) where xlanb refuses and NumPy does not, or raises another error:
# the order statistics of an empty bool array, where NumPy skips the arithmetic that it
# refuses on bool values (xlanb checks on a non-empty stand-in and raises that TypeError)
KNOWN = {("percentile", "bool", "empty"), ("quantile", "bool", "empty"),
         ("nan_statistics", "bool", "empty")}


def _builtin(cls: type) -> type:
    return next(c for c in cls.__mro__ if c.__module__ == "builtins")


def _outcome(fn, x):
    try:
        return fn(x), None
    except Exception as error:          # noqa: BLE001 (NumPy's refusal is the oracle)
        return None, error


def _leaves(value):
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _same(got, expected, exact: bool, n: int):
    got, expected = _leaves(got), _leaves(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        assert (g.dtype, g.shape) == (e.dtype, e.shape), (g.dtype, g.shape, e.dtype, e.shape)
        if exact or e.dtype.kind not in "fc" or not e.size:
            np.testing.assert_array_equal(g, e)
        elif np.isnan(e).any():                           # NaN where NumPy has NaN
            np.testing.assert_array_equal(np.isnan(g), np.isnan(e))
            assert_close(np.where(np.isnan(e), 0, g), np.where(np.isnan(e), 0, e), n=n)
        else:
            assert_close(g, e, n=n)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_library_call_matrix(name, dtype):
    fn, make, exact, dtypes = CALLS[name]
    if dtype not in dtypes:
        pytest.skip(f"{name} takes no {dtype}")
    cases = {k: v for k, v in layouts(make(dtype)).items() if (name, dtype, k) not in KNOWN}
    accepted, refused = {}, {}
    for layout, x in cases.items():
        expected, error = _outcome(fn, x)
        if error is None:
            accepted[layout] = expected
        else:
            refused[layout] = error
    for layout, error in refused.items():
        with pytest.raises(_builtin(type(error))):
            xlanb.jit(fn)(cases[layout])
    if accepted:
        args = [cases[layout] for layout in accepted]
        got = xlanb.jit(lambda *xs: tuple(fn(x) for x in xs))(*args)
        for layout, g, x in zip(accepted, got, args):
            try:
                _same(g, accepted[layout], exact, n=max(x.size, 1))
            except AssertionError as error:
                raise AssertionError(f"{name} {dtype} {layout}: {error}") from None


def test_lexsort_of_a_1d_array_is_one_key_per_element():
    """NumPy iterates the keys: a 1-D array is that many 0-d keys (a 0-d result); it gave
    the argsort of the array, shape (n,)."""
    x = np.array([3.0, 1.0, 2.0])
    fn = lambda x: (np.lexsort(x), np.lexsort(np.stack([x, -x])))       # noqa: E731
    got, expected = xlanb.jit(fn)(x), fn(x)
    for g, e in zip(got, expected):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_array_equal(g, e)


def test_isin_of_a_few_values_fuses_as_numpys_equality():
    rng = np.random.default_rng(3)
    x, xf = rng.integers(0, 20, 300), rng.standard_normal(300)
    xf[::7] = np.nan
    cases = [(lambda x: np.isin(x, np.array([3, 7, 11])), x),
             (lambda x: np.isin(x, np.array([3, 7, 11]), invert=True), x),
             (lambda x: np.isin(x.reshape(10, 30), np.array([[3, 7], [11, 2]])), x),
             (lambda x: np.isin(x, np.array([3.0, 7.5, np.nan])), x),     # NaN matches none
             (lambda x: np.isin(x, np.array([np.nan, 0.0])), xf),
             (lambda x: np.isin(x.astype(np.uint8), np.array([-1, 3, 300])), x),
             (lambda x: np.isin(x > 5, np.array([True])), x),
             (lambda x: np.isin(x, x[:3]), x)]                            # traced values
    for fn, arg in cases:
        compiled = xlanb.jit(fn, tiered=False).lower(arg).compile()
        assert [k.kind for k in compiled.kernels] == ["loop"]
        got, want = compiled(arg), fn(arg)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    many = xlanb.jit(lambda x: np.isin(x, np.arange(40)), tiered=False).lower(x).compile()
    assert [k.kind for k in many.kernels] == ["library"]         # NumPy's sort or table


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_a_few_taps_fuse_as_shifted_slices(name):
    rng = np.random.default_rng(4)
    fn, x = getattr(np, name), rng.standard_normal(50)
    for taps in (1, 2, 5, 16, 24):          # 24: two chains of shifted slices
        for mode in ("valid", "same", "full"):
            cases = [(x, rng.standard_normal(taps)),
                     (x.astype(np.float32), np.ones(taps) / taps),     # float64 result
                     (rng.integers(-99, 99, 50).astype(np.int8),       # int8 wraps
                      rng.integers(-5, 5, taps).astype(np.int8)),
                     (x > 0, rng.random(taps) > 0.5)]
            for a, v in cases[:1] if taps > 16 else cases:
                compiled = xlanb.jit(lambda a, v: fn(a, v, mode=mode),
                                     tiered=False).lower(a, v).compile()
                assert {k.kind for k in compiled.kernels} == {"loop"}     # no NumPy call
                got, want = compiled(a, v), fn(a, v, mode=mode)
                assert got.dtype == want.dtype and got.shape == want.shape
                assert_close(got, want)
    long_taps = xlanb.jit(lambda a, v: fn(a, v), tiered=False).lower(x, x[:40]).compile()
    assert "library" in [k.kind for k in long_taps.kernels]          # NumPy's own
