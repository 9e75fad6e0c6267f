"""`xlanb.random`: eager and compiled values agree, the streams look random, keys behave like
JAX keys, and a dropout mask fuses into the kernel that uses it."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb import random as R

N = 100_000
KEY = R.key(42)


def draws(key):
    """Every sampler once; the function compiled and eager runs are compared on."""
    k1, k2, k3 = R.split(key, 3)
    return {"split": R.split(key), "fold_in": R.fold_in(key, 7), "bits": R.bits(k1, (3, 4)),
            "uniform32": R.uniform(k1, (5, 7)), "uniform64": R.uniform(k2, (9,), np.float64),
            "bernoulli": R.bernoulli(k3, 0.3, (4, 6)), "normal": R.normal(k2, (257,))}


# -- eager and compiled agree --------------------------------------------------------------

def test_compiled_equals_eager_bit_for_bit():
    eager = draws(KEY)
    compiled = xlanb.jit(draws)(KEY)
    for name, expected in eager.items():
        got = compiled[name]
        assert isinstance(expected, np.ndarray) and got.dtype == expected.dtype, name
        assert got.shape == expected.shape, name
        if name == "normal":   # log and cos are vecmath in kernels: within a few ulp
            np.testing.assert_allclose(got, expected, rtol=0, atol=4 * np.spacing(
                np.float32(np.abs(expected).max())))
        else:
            np.testing.assert_array_equal(got, expected, err_msg=name)


def test_interpreter_equals_eager_bit_for_bit():
    with xlanb.disable_jit():
        interpreted = xlanb.jit(draws)(KEY)
    for name, expected in draws(KEY).items():
        np.testing.assert_array_equal(interpreted[name], expected, err_msg=name)


def test_traced_seed_and_traced_fold_in_data():
    def derive(seed, step):
        return R.key(seed), R.fold_in(R.key(seed), step)
    seed, step = np.int64(3), np.int32(11)
    compiled = xlanb.jit(derive)(seed, step)
    for got, expected in zip(compiled, (R.key(3), R.fold_in(R.key(3), 11))):
        assert got.dtype == np.uint64 and got.shape == ()
        assert got == expected


def test_dropout_is_one_kernel_and_matches_eager():
    def dropout(key, x):
        return np.where(R.bernoulli(key, 0.9, x.shape), x / 0.9, 0)
    x = np.random.default_rng(0).standard_normal((128, 65)).astype(np.float32)
    compiled = xlanb.jit(dropout).lower(KEY, x).compile()
    assert len(compiled.kernels) == 1
    assert "rng-bits" in compiled.kernels[0].ops
    got, expected = xlanb.jit(dropout)(KEY, x), dropout(KEY, x)
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_array_equal(got == 0, expected == 0)        # the same mask
    np.testing.assert_allclose(got, expected, rtol=1e-6)           # x / 0.9 may round apart
    assert 0.88 < np.mean(got != 0) < 0.92


def test_key_made_inside_a_compiled_function_is_generated_in_the_kernel():
    def add_noise(x):
        return x + R.uniform(R.key(0), x.shape)
    x = np.zeros(5000, np.float32)
    compiled = xlanb.jit(add_noise).lower(x).compile()
    assert len(compiled.kernels) == 1 and "rng-bits" in compiled.kernels[0].ops
    np.testing.assert_array_equal(xlanb.jit(add_noise)(x), add_noise(x))


# -- keys ------------------------------------------------------------------------------------

def test_keys_are_uint64_scalars_and_deterministic():
    assert KEY.dtype == np.uint64 and KEY.shape == ()
    assert R.key(42) == KEY and R.key(43) != KEY and R.key(-1) == R.key(2 ** 64 - 1)
    keys = R.split(KEY, 4)
    assert keys.shape == (4,) and keys.dtype == np.uint64 and len(set(keys.tolist())) == 4
    np.testing.assert_array_equal(R.split(KEY, 4), keys)
    assert np.asarray(keys[0]).shape == ()
    np.testing.assert_array_equal(R.uniform(keys[1], (3,)), R.uniform(keys[1], (3,)))
    assert R.fold_in(KEY, 1) != R.fold_in(KEY, 2) != KEY


def test_split_keys_are_traced_as_scalars():
    def first_of_split(key):
        keys = R.split(key)
        assert keys.shape == (2,) and keys[0].shape == ()
        k1, k2 = keys
        return k1, k2
    k1, k2 = xlanb.jit(first_of_split)(KEY)
    assert (k1, k2) == tuple(R.split(KEY))


def test_same_key_same_stream_different_keys_different_streams():
    a, b = R.uniform(KEY, (1000,)), R.uniform(KEY, (1000,))
    np.testing.assert_array_equal(a, b)
    others = [R.uniform(k, (1000,)) for k in [R.key(43), *R.split(KEY), R.fold_in(KEY, 0)]]
    for other in others:
        assert np.mean(a == other) < 0.01
    # a longer draw extends a shorter one: element i depends only on (key, i)
    np.testing.assert_array_equal(R.uniform(KEY, (2000,))[:1000], a)


def test_split_keys_give_uncorrelated_streams():
    streams = [R.uniform(k, (N,), np.float64) for k in R.split(KEY, 3)]
    streams.append(R.uniform(KEY, (N,), np.float64))
    for i in range(len(streams)):
        for j in range(i + 1, len(streams)):
            assert abs(np.corrcoef(streams[i], streams[j])[0, 1]) < 5 / np.sqrt(N)


# -- statistics (10^5 samples; bounds are about 5 standard errors) -----------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniform_moments_and_deciles(dtype):
    u = R.uniform(KEY, (N,), dtype)
    assert u.dtype == dtype and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 5 * np.sqrt(1 / 12 / N)
    assert abs(u.var() - 1 / 12) < 5 * np.sqrt(1 / 180 / N)
    counts = np.histogram(u, bins=10, range=(0, 1))[0]
    assert np.all(np.abs(counts - N / 10) < 5 * np.sqrt(N * 0.1 * 0.9)), counts
    ecdf = np.arange(1, N + 1) / N
    assert np.max(np.abs(np.sort(u) - ecdf)) < 2 / np.sqrt(N)       # Kolmogorov-Smirnov


def test_uniform_range():
    u = R.uniform(KEY, (N,), np.float32, minval=-3.0, maxval=5.0)
    assert u.min() >= -3 and u.max() <= 5 and abs(u.mean() - 1) < 5 * 8 / np.sqrt(12 * N)
    compiled = xlanb.jit(lambda k: R.uniform(k, (N,), np.float32, -3.0, 5.0))(KEY)
    np.testing.assert_allclose(compiled, u, rtol=1e-6, atol=1e-6)


def test_normal_moments():
    z = R.normal(KEY, (N,), np.float64)
    assert z.dtype == np.float64 and np.all(np.isfinite(z))
    assert abs(z.mean()) < 5 / np.sqrt(N)
    assert abs(z.var() - 1) < 5 * np.sqrt(2 / N)
    assert abs(np.mean(np.abs(z) < 1) - 0.6826895) < 5 * np.sqrt(0.22 / N)
    assert R.normal(KEY, (4,)).dtype == np.float32


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 1.0])
def test_bernoulli_frequency(p):
    b = R.bernoulli(KEY, p, (N,))
    assert b.dtype == np.bool_
    assert abs(b.mean() - p) <= 5 * np.sqrt(p * (1 - p) / N)


def test_bernoulli_shape_follows_p():
    p = np.array([0.0, 1.0, 0.5])
    b = R.bernoulli(KEY, p)
    assert b.shape == (3,) and not b[0] and b[1]


# -- errors ----------------------------------------------------------------------------------

def test_bad_keys_and_dtypes_are_explained():
    with pytest.raises(TypeError, match="unpack it"):
        R.uniform(R.split(KEY), (3,))
    with pytest.raises(TypeError, match=r"xlanb.random.key\(seed\)"):
        R.normal(0, (3,))
    with pytest.raises(TypeError, match="float32 or float64"):
        R.uniform(KEY, (3,), np.int32)
    with pytest.raises(ValueError, match="negative"):
        R.bits(KEY, (-1,))
    with pytest.raises(TypeError, match="integer scalar"):
        R.fold_in(KEY, 1.5)
