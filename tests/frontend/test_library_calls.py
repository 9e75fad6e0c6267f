"""Library-call lowerings (sorts, selection, statistics, histograms, scans, np.linalg,
np.fft, ufuncs without a fused rule) against NumPy under `jit`: dtype, shape and values,
ties and NaNs included, over dtypes, 0-d / empty / strided inputs and keyword arguments;
gradients against central differences; and the program stays one compiled program.

Sorts, selections, scans and histograms run NumPy's own function on the same values, so
they are compared exactly; LAPACK and FFT results with `assert_close`.
"""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb.errors import DataDependentShapeError, UnsupportedNumPyFunctionError
from xlanb_runtime.autodiff import NotDifferentiableError
from tolerance import assert_close

ALL = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]
REAL = ["int32", "float32", "float64"]
LAPACK = ["float32", "float64", "complex64", "complex128"]


def data(dtype, shape=(5, 4), seed=0, nan=True):
    """Few distinct values (ties), a NaN and signed zeros for floats."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    values = rng.integers(-2, 3, shape)
    if dtype == np.bool_:
        return values > 0
    if dtype.kind in "iu":
        return values.astype(dtype)
    x = (values * 0.5).astype(dtype)
    if dtype.kind == "c":
        x = x + 1j * (rng.integers(-1, 2, shape) * 0.5).astype(dtype)
    if nan and x.size > 3:
        x.flat[3] = np.nan
        x.flat[1] = -0.0
    return x


def leaves(value):
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


def same(got, expected, exact=True, n=1):
    """Same container types (NumPy's named tuples), dtypes, shapes and values."""
    assert type(got) is type(expected) or not isinstance(expected, tuple), \
        (type(got), type(expected))
    if isinstance(expected, tuple):
        for g, e in zip(got, expected, strict=True):
            same(g, e, exact, n)
        return
    for g, e in zip(leaves(got), leaves(expected), strict=True):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        assert g.shape == e.shape, (g.shape, e.shape)
        if exact or e.dtype.kind not in "fc":
            np.testing.assert_array_equal(g, e)
        else:
            assert_close(g, e, n=n)


def check(fn, *args, exact=True, n=1):
    """`jit(fn)` gives `fn`'s NumPy result; returns it."""
    expected = fn(*args)
    got = xlanb.jit(fn)(*args)
    same(got, expected, exact, n)
    return got


# -- sorting and selection ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("kind", [None, "stable", "heapsort"])
def test_sort_and_argsort_ties_and_nans(dtype, kind):
    def f(x):
        return (np.sort(x, kind=kind), np.sort(x, axis=0, kind=kind),
                np.sort(x, axis=None, kind=kind), np.argsort(x, kind=kind),
                np.argsort(x, axis=0, kind=kind), np.argsort(x, axis=None, kind=kind))
    check(f, data(dtype))


@pytest.mark.parametrize("dtype", ["int64", "float32", "complex128"])
def test_sort_shapes_and_strides(dtype):
    x = data(dtype, (6, 5))
    check(lambda v: (np.sort(v), np.argsort(v, axis=0, stable=True)), x[::2, ::-1])
    check(lambda v: np.sort(v, axis=None), np.asarray(x[0, 0]))            # 0-d
    check(lambda v: (np.sort(v), np.argsort(v, axis=0)), x[:0])            # empty
    check(lambda v: np.sort(v * 2)[::-1], x[:, 1])                          # fused around


def test_sort_methods_write_in_place():
    def f(x):
        x.sort(axis=0)
        return x.argsort(kind="stable")
    x = data("float64")
    expected_x = x.copy()
    expected_x.sort(axis=0)
    expected = expected_x.argsort(kind="stable")
    got = xlanb.jit(f)(x)
    np.testing.assert_array_equal(x, expected_x)                # the caller's array sorted
    np.testing.assert_array_equal(got, expected)

    def g(x):
        x.partition(2)
        return x
    y = data("int32")
    want = y.copy()
    want.partition(2)
    assert xlanb.jit(g)(y) is y
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("dtype", REAL + ["complex64"])
def test_partition_and_argpartition(dtype):
    x = data(dtype, (4, 7))
    check(lambda v: (np.partition(v, 3), np.partition(v, (1, -2), axis=0),
                     np.argpartition(v, 2), np.argpartition(v, [0, 6], axis=-1),
                     np.partition(v, 5, axis=None)), x)
    with pytest.raises(ValueError, match="out of bounds"):
        xlanb.jit(lambda v: np.partition(v, 7))(x)


@pytest.mark.parametrize("dtype", REAL)
def test_searchsorted(dtype):
    a = np.sort(data(dtype, (9,), nan=False))
    v = data(dtype, (3, 2), seed=1, nan=False)
    check(lambda a, v: (np.searchsorted(a, v), np.searchsorted(a, v, side="right"),
                        np.searchsorted(a, 0.5), a.searchsorted(v)), a, v)
    perm = np.argsort(a[::-1], kind="stable")
    check(lambda a, v, p: np.searchsorted(a, v, sorter=p), a[::-1].copy(), v, perm)


# -- order statistics ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", REAL)
def test_median_percentile_quantile(dtype):
    x = data(dtype, (4, 6), nan=False)

    def f(x):
        return (np.median(x), np.median(x, axis=0), np.median(x, axis=(0, 1), keepdims=True),
                np.percentile(x, 30), np.percentile(x, [10, 90], axis=1),
                np.quantile(x, 0.25, axis=0, keepdims=True),
                np.quantile(x, np.array([0.0, 0.5, 1.0]), method="nearest"))
    check(f, x)


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest",
                                    "weibull", "hazen", "median_unbiased", "inverted_cdf"])
def test_quantile_methods_with_a_traced_q(method):
    x = data("float64", (5, 3), nan=False)
    q = np.array([0.1, 0.5, 0.95])
    check(lambda x, q: np.quantile(x, q, axis=0, method=method), x, q)


def test_nan_statistics_and_out():
    x = data("float64", (4, 5))
    check(lambda x: (np.nanmedian(x, axis=1), np.nanpercentile(x, [25, 75]),
                     np.nanquantile(x, 0.5, axis=0), np.median(x)), x)

    def g(x, out):
        np.median(x, axis=0, out=out)
        return np.cumsum(x, axis=1, out=np.empty_like(x))
    out = np.zeros(5)
    got = xlanb.jit(g)(x, out)
    np.testing.assert_array_equal(out, np.median(x, axis=0))
    np.testing.assert_array_equal(got, np.cumsum(x, axis=1))


# -- histograms ---------------------------------------------------------------------------

def test_histogram_digitize():
    x = data("float64", (20,), nan=False)
    w = np.linspace(0.5, 2.0, 20)
    edges = np.array([-1.0, -0.2, 0.3, 1.0])
    check(lambda x: np.histogram(x), x)
    check(lambda x, w, e: (np.histogram(x, 3, range=(-2.0, 2.0)),
                           np.histogram(x, e, weights=w), np.histogram(x, 4, density=True),
                           np.histogram_bin_edges(x, 5), np.digitize(x, e),
                           np.digitize(x, e, right=True)), x, w, edges)
    check(lambda x: np.histogram(x.astype(np.int32), bins=3), x)


@pytest.mark.parametrize("weights", [None, "float64", "float32", "int64"])
def test_bincount_with_minlength_compiles(weights):
    """NumPy's counts (intp) or sums of weights (float64, added in x's order: the same
    bits), from a scatter-add into `minlength` counts."""
    rng = np.random.default_rng(2)
    x = rng.integers(0, 40, 500)
    w = None if weights is None else (rng.standard_normal(500) * 10).astype(weights)

    def f(x, w):
        return (np.bincount(x, weights=w, minlength=40),
                np.bincount(x // 2, weights=w, minlength=25),
                np.bincount(x > 20, w, 3), np.bincount(x.astype(np.uint8), w, 64))
    fn = xlanb.jit(f)
    assert "'np.bincount'" not in fn.lower(x, w).as_text()      # checks, then fused
    for _ in range(2):                  # the general path, then the call guard
        same(fn(x, w), f(x, w))


@pytest.mark.parametrize("x, message", [
    (np.array([0, 3, 40]), r"a value \(40\) is not below minlength=40"),
    (np.array([0, -3, 4]), "'list' argument must have no negative elements")])
def test_bincount_values_outside_minlength_raise_when_the_program_runs(x, message):
    fn = xlanb.jit(lambda x, y: (y.__iadd__(1), np.bincount(x, minlength=40))[1])
    y = np.zeros(3)
    with pytest.raises(ValueError, match=message):
        fn(x, y)
    np.testing.assert_array_equal(y, 0.0)               # checked before any write


def test_bincount_errors_are_numpys():
    with pytest.raises(TypeError, match="safe"):
        xlanb.jit(lambda x: np.bincount(x, minlength=3))(np.ones(3))
    with pytest.raises(ValueError, match="too deep"):
        xlanb.jit(lambda x: np.bincount(x, minlength=3))(np.ones((2, 2), np.int64))
    with pytest.raises(ValueError, match="same length"):
        xlanb.jit(lambda x: np.bincount(x, np.ones(4), minlength=3))(np.ones(3, np.int64))


def test_value_dependent_shapes_are_named_errors_that_fall_back():
    ints = np.array([0, 3, 1, 3])
    cases = [(lambda x: np.bincount(x), ints, "np.bincount"),
             (lambda x: np.histogram(x, bins="auto"), ints * 0.5, "np.histogram(bins='auto')"),
             (lambda x: np.linalg.eig(np.outer(x, x) + np.eye(4)), ints * 1.0,
              "np.linalg.eig")]
    for fn, x, name in cases:
        with pytest.raises(DataDependentShapeError, match=name.replace("(", r"\(")
                           .replace(")", r"\)")):
            xlanb.jit(fn)(x)
        same(xlanb.jit(fn, must_compile=False)(x), fn(x), exact=False, n=16)


# -- scans --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL)
def test_cumsum_cumprod(dtype):
    x = data(dtype, (3, 4), nan=False)
    wide = np.complex128 if x.dtype.kind == "c" else np.float64
    check(lambda x: (np.cumsum(x), np.cumsum(x, axis=0), np.cumprod(x, axis=1),
                     np.cumsum(x, axis=-1, dtype=wide), x.cumsum(0), x.cumprod()), x)


def test_scan_variants_and_accumulate():
    x = data("float64", (3, 4))
    check(lambda x: (np.nancumsum(x), np.nancumprod(x, axis=0),
                     np.cumulative_sum(x, axis=1, include_initial=True),
                     np.cumulative_prod(x[0], include_initial=False)), x)
    ints = data("int32", (3, 4), nan=False)
    check(lambda x: (np.add.accumulate(x), np.multiply.accumulate(x, axis=1),
                     np.maximum.accumulate(x, axis=1), np.minimum.accumulate(x),
                     np.logical_or.accumulate(x > 0, axis=1),
                     np.subtract.accumulate(x, dtype=np.float32)), ints)
    check(lambda x: np.cumsum(np.asarray(x)), np.asarray(2.5))            # 0-d: (1,)
    check(lambda x: np.cumsum(x), np.zeros((0, 3), np.int32))            # empty
    with pytest.raises(TypeError, match="scalar"):
        xlanb.jit(lambda x: np.add.accumulate(x))(np.asarray(1.0))


def test_reduceat():
    """ufunc.reduceat: NumPy's call, indices from an argument or a constant, any axis;
    indices outside the axis raise NumPy's IndexError before any kernel writes."""
    x = data("float64", (6, 8), nan=False)
    idx = np.array([0, 3, 3, 1, 7])
    check(lambda x, i: (np.add.reduceat(x[0], i), np.maximum.reduceat(x, i, axis=1),
                        np.multiply.reduceat(x, i[:3] % 6), np.add.reduceat(x[1], [0, 4]),
                        np.add.reduceat((x * 10).astype(np.int8), i, axis=-1),
                        np.add.reduceat(x[2], i, dtype=np.float32)), x, idx, exact=False)
    fn = xlanb.jit(lambda x, i, y: (y.__iadd__(1), np.add.reduceat(x, i))[1])
    y = np.zeros(3)
    for bad in ([0, 8], [-1, 2]):
        with pytest.raises(IndexError, match=f"index {bad[0] or bad[1]} out-of-bounds in "
                           r"add.reduceat \[0, 8\)"):
            fn(x[0], np.array(bad), y)
    np.testing.assert_array_equal(y, 0.0)               # checked before any write
    with pytest.raises(UnsupportedNumPyFunctionError, match="1-D integer"):
        xlanb.jit(lambda x: np.add.reduceat(x, np.array([0.0, 2.0])))(x[0])


# -- linear algebra -----------------------------------------------------------------------

def matrices(dtype, shape, seed=0):
    """Well-conditioned: symmetric (Hermitian) positive definite plus a random part."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    spd = a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-2] * np.eye(shape[-2])
    return a.astype(dtype), spd.astype(dtype)


@pytest.mark.parametrize("dtype", LAPACK)
def test_solvers_and_determinants(dtype):
    a, spd = matrices(dtype, (4, 4))
    b = a[:, :2].copy()

    def f(a, spd, b):
        return (np.linalg.solve(spd, b), np.linalg.solve(spd, b[:, 0]), np.linalg.inv(spd),
                np.linalg.det(a), np.linalg.slogdet(a), np.linalg.cholesky(spd),
                np.linalg.cholesky(spd, upper=True), np.linalg.pinv(b),
                np.linalg.matrix_rank(a), np.linalg.cond(spd), np.linalg.cond(a, "fro"),
                np.linalg.matrix_power(spd, 3), np.linalg.matrix_power(spd, -1),
                np.linalg.multi_dot([a, spd, b]))
    check(f, a, spd, b, exact=False, n=64)


@pytest.mark.parametrize("dtype", LAPACK)
def test_factorizations(dtype):
    a, spd = matrices(dtype, (2, 5, 3))
    _, sym = matrices(dtype, (3, 3))

    def f(a, sym):
        return (np.linalg.qr(a), np.linalg.qr(a, mode="complete"), np.linalg.qr(a, "r"),
                np.linalg.eigh(sym), np.linalg.eigh(sym, UPLO="U"), np.linalg.eigvalsh(sym),
                np.linalg.svd(a), np.linalg.svd(a, full_matrices=False),
                np.linalg.svd(a, compute_uv=False), np.linalg.svdvals(a))
    check(f, a, sym, exact=False, n=64)


@pytest.mark.parametrize("dtype", LAPACK)
@pytest.mark.parametrize("shape", [(6, 3), (6, 3, 2), (3, 5)])
def test_lstsq_of_a_full_rank_matrix(dtype, shape):
    """NumPy's (x, residuals, rank, s): residuals per column of b for a tall matrix,
    none for a wide one; the rank an np.int32."""
    a, _ = matrices(dtype, shape[:2])
    b = np.random.default_rng(1).standard_normal((shape[0],) + shape[2:]).astype(dtype)
    got = check(lambda a, b: np.linalg.lstsq(a, b), a, b, exact=False, n=64)
    assert type(got[2]) is np.int32
    check(lambda a, b: np.linalg.lstsq(a, b, rcond=1e-3)[0] * 2, a, b, exact=False, n=64)


def test_lstsq_of_a_rank_deficient_tall_matrix_raises_when_it_runs():
    """NumPy returns no residuals there: a length the program did not compile for."""
    a = np.ones((5, 2))
    with pytest.raises(ValueError, match="rank 1 below its 2 columns") as info:
        xlanb.jit(lambda a, b: np.linalg.lstsq(a, b)[0])(a, np.ones(5))
    assert any("test_library_calls.py" in note for note in info.value.__notes__)
    fn = xlanb.jit(lambda a, b: np.linalg.lstsq(a, b)[0])
    same(fn(a + np.eye(5, 2), np.ones(5)), np.linalg.lstsq(a + np.eye(5, 2), np.ones(5))[0],
         exact=False, n=64)
    with pytest.raises(np.linalg.LinAlgError, match="Incompatible"):
        xlanb.jit(np.linalg.lstsq)(a, np.ones(4))


def test_linalg_errors_are_numpys():
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        xlanb.jit(np.linalg.inv)(np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        xlanb.jit(np.linalg.det)(np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        xlanb.jit(np.linalg.inv)(np.zeros((2, 2)))             # when the program runs
    with pytest.raises(TypeError, match="float16"):
        xlanb.jit(np.linalg.inv)(np.eye(2, dtype=np.float16))
    with pytest.raises(UnsupportedNumPyFunctionError, match="order"):
        xlanb.jit(lambda x: np.sort(x, order="f"))(np.ones(3))


# -- FFT ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", LAPACK)
def test_fft_family(dtype):
    x = matrices(dtype, (4, 6))[0]

    def f(x):
        out = [np.fft.fft(x), np.fft.ifft(x, n=8, axis=0), np.fft.fft2(x, norm="ortho"),
               np.fft.ifftn(x, axes=(0,)), np.fft.fftshift(x), np.fft.ifftshift(x, axes=1)]
        if x.dtype.kind == "f":
            out += [np.fft.rfft(x), np.fft.irfft(x, n=6), np.fft.rfft2(x), np.fft.rfftn(x),
                    np.fft.hfft(x), np.fft.ihfft(x)]
        return tuple(out)
    check(f, x, exact=False, n=64)


# -- ufuncs without a fused rule ----------------------------------------------------------

def test_ufuncs_run_as_numpy_loops():
    x = np.linspace(-2.0, 3.0, 7)
    i = np.arange(7, dtype=np.int32)
    check(lambda x, i: (np.cbrt(x), np.ldexp(x, i), np.frexp(x), np.modf(x), np.gcd(i, 4),
                        np.lcm(i, 6), np.copysign(x, -1.0), np.nextafter(x, 0.0),
                        np.spacing(x.astype(np.float32)), np.signbit(x),
                        np.logaddexp2(x, 1.0), np.heaviside(x, 0.5), np.degrees(x),
                        np.radians(x)), x, i)
    z = (x + 1j * x[::-1]).astype(np.complex64)
    check(lambda z: (np.expm1(z), np.log1p(z), np.sign(z), np.arcsin(z), np.sinh(z)), z)


# -- one program, and gradients -----------------------------------------------------------

def test_library_calls_do_not_split_the_program():
    def f(x, a):
        y = np.exp(x) * 2.0                           # fused
        s = np.sort(y)                                # library call
        return np.linalg.solve(a, s) + np.cumsum(s)   # library calls, then a fused scan
    x = np.linspace(0.0, 1.0, 4)
    a = matrices("float64", (4, 4))[1]
    compiled = xlanb.jit(f).lower(x, a).compile()
    ops = [op for k in compiled.kernels for op in k.ops]
    assert ops.count("library-call") == 2 and "exponential" in ops and "scan" in ops
    assert_close(compiled(x, a), f(x, a), n=16)
    auto = xlanb.jit(f, must_compile=False)
    assert_close(auto(x, a), f(x, a), n=16)
    assert not auto.report.breaks


def grad_matches_central_differences(loss, *args):
    grads = xlanb.jit(xlanb.grad(loss, argnums=tuple(range(len(args)))))(*args)
    for k, (arg, grad) in enumerate(zip(args, grads)):
        numeric = np.zeros_like(arg)
        for index in np.ndindex(arg.shape):
            plus, minus = [a.copy() for a in args], [a.copy() for a in args]
            plus[k][index] += 1e-6
            minus[k][index] -= 1e-6
            numeric[index] = (loss(*plus) - loss(*minus)) / 2e-6
        assert_close(grad, numeric, tol=1e-6)


def test_gradients():
    rng = np.random.default_rng(3)
    a = matrices("float64", (3, 3))[1]
    b = rng.standard_normal(3)
    x = rng.standard_normal((2, 4))
    w = rng.uniform(0.5, 1.5, (2, 4))
    grad_matches_central_differences(lambda a, b: np.sum(np.linalg.solve(a, b) ** 2), a, b)
    grad_matches_central_differences(lambda a: np.sum(np.linalg.inv(a) * a[::-1]), a)
    grad_matches_central_differences(lambda a: np.linalg.det(a) ** 2, a)
    grad_matches_central_differences(lambda x: np.sum(np.cumsum(x, axis=1) * w), x)
    grad_matches_central_differences(lambda x: np.sum(np.cumsum(x) ** 2), x)
    grad_matches_central_differences(lambda x: np.sum(np.sort(x, axis=0) * w), x)
    grad_matches_central_differences(lambda x: np.sum(np.sort(x, axis=None) * w.ravel()), x)
    grad_matches_central_differences(lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2 * w), x)


def test_no_gradient_is_a_named_error():
    with pytest.raises(NotDifferentiableError, match="np.linalg.eigh"):
        xlanb.jit(xlanb.grad(lambda a: np.sum(np.linalg.eigh(a)[0])))(np.eye(3))
    with pytest.raises(NotDifferentiableError, match="np.median"):
        xlanb.jit(xlanb.grad(lambda x: np.median(x)))(np.arange(3.0))
