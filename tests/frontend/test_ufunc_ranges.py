"""Ufuncs at the edges of the float range, under `jit` against NumPy: results that a
textbook formula overflows or underflows where NumPy's C function does not (hypot of
1e200 parts), and the special values (inf with nan, signed zeros) NumPy's loops give."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import xlanb

SPECIAL = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan]


def _edges(dt, scale, rng):
    x = (rng.standard_normal(300) * scale).astype(dt)
    y = (rng.standard_normal(300) * scale * rng.uniform(0, 3, 300)).astype(dt)
    gx, gy = np.meshgrid(np.array(SPECIAL, dt), np.array(SPECIAL, dt))
    return np.concatenate([x, gx.ravel()]), np.concatenate([y, gy.ravel()])


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("scale", [1.0, 1e200, 1e-200, 1e30, 1e-30, 1e-310])
def test_hypot_neither_overflows_nor_underflows(dt, scale):
    """Within 2 ulps of NumPy's hypot (libm's, within an ulp of the exact value; ours
    rounds four times) where sqrt(x*x + y*y) would give inf or 0; inf where a part is inf,
    even nan."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, y = _edges(dt, scale, np.random.default_rng(7))
        want = np.hypot(x, y)
    got = xlanb.jit(np.hypot, tiered=False)(x, y)
    assert got.dtype == want.dtype
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    ulps = np.abs(got[finite].astype(np.float64) - want[finite]) / \
        np.spacing(want[finite]).astype(np.float64)
    assert ulps.max(initial=0) <= 2, ulps.max()


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                np.uint32, np.uint64])
def test_shifts_at_every_count(dt):
    """x << s and x >> s for counts from negative past the width: NumPy's 0, or the sign
    for >> of signed ints (the shift itself is undefined there in C and LLVM)."""
    info = np.iinfo(dt)
    rng = np.random.default_rng(3)
    x = rng.integers(info.min, info.max, 2000, dtype=dt, endpoint=True)
    x[:4] = [info.min, info.max, 0, 1]
    low = -3 if info.min < 0 else 0
    counts = rng.integers(low, info.bits + 5, 2000).astype(dt)
    got = xlanb.jit(lambda x, s: (x << s, x >> s), tiered=False)(x, counts)
    for have, want in zip(got, (x << counts, x >> counts)):
        assert have.dtype == want.dtype
        np.testing.assert_array_equal(have, want)


@pytest.mark.parametrize("fn", [lambda a, b: a ** -1, lambda a, b: np.power(a, -2),
                                lambda a, b: a ** b, lambda a, b: np.power(a, b[::-1])],
                         ids=["constant", "np.power constant", "traced", "traced view"])
def test_a_negative_integer_exponent_is_numpys_value_error(fn):
    """NumPy refuses integer powers with negative exponents: a constant's at trace time,
    a traced exponent's from a run-time check of its minimum (no silent 0 or 1)."""
    a, b = np.arange(1, 7), np.array([1, 2, -1, 0, 3, 2])
    with pytest.raises(ValueError, match="negative integer powers"):
        fn(a, b)
    with pytest.raises(ValueError, match="negative integer powers"):
        xlanb.jit(fn, tiered=False)(a, b)
    b = np.abs(b)
    try:
        want = fn(a, b)
    except ValueError:
        return                      # a constant negative exponent: no b makes it valid
    np.testing.assert_array_equal(xlanb.jit(fn, tiered=False)(a, b), want)


def test_an_exponent_that_cannot_be_negative_has_no_check():
    a, b = np.arange(1, 7), np.array([1, 2, 1, 0, 3, 2])
    for fn in (lambda a, b: a ** (b % 3), lambda a, b: a ** b.astype(np.uint8),
               lambda a, b: a ** np.clip(b, 0, 4), lambda a, b: a ** 3):
        text = xlanb.jit(fn, tiered=False).lower(a, b).as_text()
        assert "check_range" not in text
        np.testing.assert_array_equal(xlanb.jit(fn, tiered=False)(a, b), fn(a, b))
    assert "check_range" in xlanb.jit(lambda a, b: a ** b, tiered=False).lower(
        a, b).as_text()


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64])
def test_floor_division_of_the_lowest_integer_by_minus_one_wraps(dt):
    """NumPy's INT_MIN // -1 is INT_MIN (the quotient wraps; x86's idiv would fault)."""
    low = np.iinfo(dt).min
    a, b = np.array([low, 7, -7, low, 0, 5, low + 1], dt), np.array([-1, -1, 2, 1, 0, 0, -1], dt)
    fn = lambda a, b: (a // b, a % b, np.divmod(a, b)[1])            # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(a, b)
        got = xlanb.jit(fn, tiered=False)(a, b)
    for have, expected in zip(got, want):
        assert have.dtype == expected.dtype
        np.testing.assert_array_equal(have, expected)


@pytest.mark.parametrize("dt", [np.int64, np.int8, np.uint8, np.uint64, np.float64])
@pytest.mark.parametrize("decimals", [-2, -1, 1, 3])
def test_round_to_decimals_is_numpys(dt, decimals):
    """NumPy's order of operations, bit for bit: x * 10**d, rint, / 10**d for d > 0;
    x / 10**-d, rint, * 10**-d for d < 0 (10**-2 is inexact), integers in float64."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(2000) * 1e4 if dt == np.float64 else
         rng.integers(np.iinfo(dt).min // 2, np.iinfo(dt).max // 2, 2000)).astype(dt)
    got = xlanb.jit(lambda x: np.round(x, decimals), tiered=False)(x)
    want = np.round(x, decimals)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


SIGNED = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1.5, -2.5, 1e-310, -1e-310, 3.0]


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("name", ["signbit", "copysign", "heaviside"])
def test_sign_functions_are_numpys_to_the_bit(dt, name):
    """Fused (no NumPy call): the sign bit itself, of -0.0 and -nan too; heaviside's
    value at +-0 and its nan.  Every pair of special values, bit for bit."""
    fn = {"signbit": lambda a, b: np.signbit(a), "copysign": np.copysign,
          "heaviside": np.heaviside}[name]
    gx, gy = np.meshgrid(np.array(SIGNED, dt), np.array(SIGNED, dt))
    x, y = gx.ravel(), gy.ravel()
    want = fn(x, y)
    compiled = xlanb.jit(fn, tiered=False)
    assert "library-call" not in compiled.lower(x, y).as_text()
    for _ in range(2):                           # the general path, then the call guard
        got = compiled(x, y)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_logaddexp2_is_numpys_within_its_cancellation(dt):
    """max + log2(1 + 2**-|x - y|): within a few ulps of the larger operand's scale
    (a result near 0 cancels, in NumPy's formula as in ours), inf and nan as NumPy."""
    rng = np.random.default_rng(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, y = _edges(dt, 10.0, rng)
        want = np.logaddexp2(x, y)
    got = xlanb.jit(np.logaddexp2, tiered=False)(x, y)
    assert got.dtype == want.dtype
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    scale = np.maximum(np.abs(x[finite]), np.abs(y[finite])).astype(np.float64) + 1
    err = np.abs(got[finite].astype(np.float64) - want[finite]) / scale
    assert err.max(initial=0) <= 8 * np.finfo(dt).eps, err.max()


TRIG_KERNELS = {
    "elementwise": lambda x: np.sin(x) * 2.0 + np.cos(x) - np.tan(x),
    "reduced": lambda x: (np.sin(x) * np.cos(x + 1)).sum(),
    "rows": lambda x: np.cos(x.reshape(8, -1)) / np.cos(x.reshape(8, -1)).max(1, keepdims=True),
    "matmul epilogue": lambda x: np.sin(x.reshape(64, 64) @ np.eye(64, dtype=x.dtype)),
}


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kind", TRIG_KERNELS)
def test_sin_cos_tan_of_huge_arguments_are_numpys(dt, threads, kind):
    """The vectorized sin, cos and tan reduce their argument exactly only up to 2^20
    (float32) or 2^40 (float64); a kernel that met a larger one gave 0 or 1 (np.sin(1e300)
    was 0.0).  It now runs again with libm's functions (codegen/cpu.py
    `guard_fast_math`), also split over threads."""
    from xlanb_runtime import flags
    big = [1e300, -3e17, 2.0 ** 45, 1e16] if dt == np.float64 else [3e38, -1e20, 1e8, 3e6]
    x = np.random.default_rng(0).uniform(-4, 4, 4096).astype(dt)
    x[[3, 100, 2000, 4095]] = big
    fn = TRIG_KERNELS[kind]
    with flags.overriding(xla_cpu_threads=threads, xla_cpu_parallel_min_elements=1):
        got = xlanb.jit(fn, tiered=False)(x)
    want = fn(x)
    # libm against NumPy's own loops: a few ulp apart; tan near its poles amplifies it
    tol = 1e-4 if dt == np.float32 else 1e-11
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max() * 1e-3)
    small = np.random.default_rng(1).uniform(-4, 4, 4096).astype(dt)   # the fast pass only
    np.testing.assert_allclose(xlanb.jit(fn, tiered=False)(small), fn(small), rtol=tol,
                               atol=tol * np.abs(fn(small)).max() * 1e-3)


@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
def test_complex_exp_is_numpys_on_and_off_its_fast_range(dt):
    """np.exp of complex values: exp(x) (cos y + i sin y) vectorized where exp(x) is
    finite and the trig functions hold (`complex_math.cexp_vec`), else the exact `cexp`
    (special values, huge y, and exp(x) past overflow with a finite product, x = 709.9,
    which cmath gave as inf)."""
    parts = [0.0, -0.0, 1.0, -2.5, 700.0, 708.5, 709.9, 800.0, -745.0, -800.0, 1e12, 3e15,
             np.inf, -np.inf, np.nan]
    re, im = np.meshgrid(parts, parts)
    rng = np.random.default_rng(0)
    z = np.concatenate([(re + 1j * im).ravel(),
                        rng.standard_normal(64) * 3 + 1j * rng.standard_normal(64) * 10])
    z = z.astype(dt)
    for x in (z, z[len(parts) ** 2:]):                  # with and without the rerun
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got, want = xlanb.jit(lambda z: np.exp(z) * 1, tiered=False)(x), np.exp(x)
        for part in ("real", "imag"):
            g, w = getattr(got, part), getattr(want, part)
            tol = 1e-5 if dt == np.complex64 else 1e-13
            same = (g == w) | (np.isnan(g) & np.isnan(w)) | np.isclose(g, w, rtol=tol, atol=0)
            assert same.all() and not (np.signbit(g) != np.signbit(w))[(g == 0) & (w == 0)].any(), \
                [(x[i], got[i], want[i]) for i in np.flatnonzero(~same)[:4]]
