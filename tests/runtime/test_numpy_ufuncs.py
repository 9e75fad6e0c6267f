"""Kernels of one function NumPy runs faster (passes/numpy_ufuncs.py): NumPy's own ufunc,
so NumPy's exact result; anything fused, small, or on a CPU without NumPy's AVX-512 loops
stays a generated kernel."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from tolerance import assert_close
from xlanb_runtime.passes import numpy_ufuncs

AVX512 = numpy_ufuncs.numpy_has_avx512_loops()
RNG = np.random.default_rng(0)
N = 2 * numpy_ufuncs.MIN_ELEMENTS


def _kinds(fn, *args):
    compiled = xlanb.jit(fn, tiered=False).lower(*args).compile()
    return [k.kind for k in compiled.kernels], compiled


CASES = {
    "f32 x ** c": (lambda x, y: x ** 0.4545, np.float32),
    "f32 x ** y": (lambda x, y: x ** y, np.float32),
    "f32 tanh": (lambda x, y: np.tanh(x), np.float32),
    "f64 pow": (lambda x, y: np.power(x, 1.7), np.float64),
    "f64 exp": (lambda x, y: np.exp(x), np.float64),
    "f64 log": (lambda x, y: np.log(x), np.float64),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_lone_function_is_numpys_own(name):
    fn, dtype = CASES[name]
    x, y = (RNG.uniform(0.1, 3.0, N).astype(dtype) for _ in range(2))
    kinds, compiled = _kinds(fn, x, y)
    if AVX512:
        assert kinds == ["library"], kinds
        assert "AVX-512" in " ".join(compiled.kernels[0].decisions)
    got, want = compiled(x, y), fn(x, y)
    assert got.dtype == want.dtype
    if AVX512:
        np.testing.assert_array_equal(got, want)      # NumPy's own loop: bit for bit
    else:                                             # our loop: within a few ulp
        assert_close(got, want)


def test_an_intermediate_is_written_into_its_buffer():
    x, w = RNG.uniform(0.1, 2.0, (200, 100)), RNG.standard_normal((100, 3))
    kinds, compiled = _kinds(lambda x, w: np.exp(x) @ w, x, w)
    if AVX512:
        assert kinds[0] == "library" and "out=" in compiled.executable.driver_source
    np.testing.assert_allclose(compiled(x, w), np.exp(x) @ w, rtol=1e-12)


def test_fused_small_or_without_avx512_loops_stays_generated(monkeypatch):
    x = RNG.uniform(0.1, 3.0, N)
    assert _kinds(lambda x: np.exp(x) + 1.0, x)[0] == ["loop"]                # fused
    assert _kinds(lambda x: np.exp(x), x[:100])[0] == ["loop"]                 # small
    monkeypatch.setattr(numpy_ufuncs, "numpy_has_avx512_loops", lambda: False)
    kinds, compiled = _kinds(lambda x: np.exp(x), x)
    assert kinds == ["loop"]
    np.testing.assert_allclose(compiled(x), np.exp(x), rtol=1e-15)


def test_a_kernel_ending_in_a_power_leaves_it_to_numpy_in_place():
    img = RNG.uniform(0.0, 1.0, (128, 128, 3)).astype(np.float32)

    def gamma(img):
        return (img @ np.array([0.299, 0.587, 0.114], dtype=img.dtype)) ** (1 / 2.2)

    kinds, compiled = _kinds(gamma, img)
    if AVX512:
        assert kinds == ["loop", "library"], kinds
        assert "np.power(b1, " in compiled.executable.driver_source
    got, want = compiled(img), gamma(img)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-6)


def test_a_power_whose_base_is_also_returned_is_not_split():
    x = RNG.uniform(0.1, 2.0, N)
    kinds, compiled = _kinds(lambda x: ((x * 2.0 + 1.0) ** 1.7, x * 2.0 + 1.0), x)
    assert kinds == ["loop"]
    got = compiled(x)
    np.testing.assert_allclose(got[0], (x * 2.0 + 1.0) ** 1.7, rtol=1e-14)
    np.testing.assert_array_equal(got[1], x * 2.0 + 1.0)


def test_a_float64_power_inside_a_kernel_runs_as_numpys_between_two_parts():
    img = RNG.integers(0, 256, (160, 240), dtype=np.uint8)

    def gamma(img):                     # the base computed first, the rest after the pow
        return ((img / 255.0) ** 2.2 * 255).astype(np.uint8)

    kinds, compiled = _kinds(gamma, img)
    if AVX512:
        assert kinds == ["loop", "library", "loop"], kinds
        assert "np.power(b1, " in compiled.executable.driver_source
    for _ in range(2):                  # the pow's buffer is the base's: twice the same
        np.testing.assert_array_equal(compiled(img), gamma(img))


def test_a_float64_power_of_an_argument_inside_a_kernel_gets_its_own_buffer():
    x = RNG.uniform(0.1, 2.0, N)

    def fn(x):
        return x ** 2.2 * 3.0 + x

    kinds, compiled = _kinds(fn, x)
    if AVX512:
        assert kinds == ["library", "loop"], kinds
    x_before = x.copy()
    np.testing.assert_allclose(compiled(x), fn(x), rtol=1e-14)
    np.testing.assert_array_equal(x, x_before)


def test_a_power_whose_base_the_rest_reads_stays_fused():
    x = RNG.uniform(0.1, 2.0, N)

    def fn(x):                          # (2x + 1) is read after the pow too
        b = x * 2.0 + 1.0
        return b ** 1.7 * b

    kinds, compiled = _kinds(fn, x)
    assert kinds == ["loop"], kinds
    np.testing.assert_allclose(compiled(x), fn(x), rtol=1e-14)


def test_float32_powers_inside_a_kernel_stay_fused():
    x = RNG.uniform(0.1, 2.0, N).astype(np.float32)
    kinds, compiled = _kinds(lambda x: (x * 2) ** np.float32(1.7) * 3, x)
    assert kinds == ["loop"], kinds
    assert_close(compiled(x), (x * 2) ** np.float32(1.7) * 3)
