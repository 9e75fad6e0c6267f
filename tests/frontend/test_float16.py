"""float16 under `jit` gives NumPy's dtypes and values: kernels compute in float32 and round
each float16 result to float16, as NumPy's float16 loops do (passes/half.py), so values
match NumPy's to float16 rounding (`assert_like_numpy` with float16's eps).  Covered:
ufuncs, mixed float16/float32/int/Python-scalar promotion, conversions to and from float16,
reductions, matmul, scans and sorts (NumPy's own float16 code), 0-d / empty / strided
inputs, a gradient, and arguments left as they were."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from tolerance import assert_like_numpy

RNG = np.random.default_rng(3)
X = RNG.uniform(-3, 3, (6, 7)).astype(np.float16)
P = RNG.uniform(0.25, 4, (6, 7)).astype(np.float16)

UFUNCS = {
    "add": lambda x, p: x + p, "subtract": lambda x, p: x - p,
    "multiply": lambda x, p: x * p, "divide": lambda x, p: x / p,
    "power": lambda x, p: p ** 1.5, "cube": lambda x, p: x ** 3,
    "exp": lambda x, p: np.exp(x), "log": lambda x, p: np.log(p),
    "tanh": lambda x, p: np.tanh(x), "sqrt": lambda x, p: np.sqrt(p),
    "sin": lambda x, p: np.sin(x), "arctan2": lambda x, p: np.arctan2(x, p),
    "maximum": lambda x, p: np.maximum(x, p), "floor": lambda x, p: np.floor(x),
    "abs": lambda x, p: np.abs(x), "sign": lambda x, p: np.sign(x),
    "floor_divide": lambda x, p: x // p, "remainder": lambda x, p: x % p,
    "where": lambda x, p: np.where(x > 0, x, p), "clip": lambda x, p: np.clip(x, -1, 1),
    "compare": lambda x, p: (x < p, x == p, np.isfinite(x / 0)),
    "relu chain": lambda x, p: np.maximum(x * 2.5 + 1, 0) * p - 3,
}


@pytest.mark.parametrize("name", sorted(UFUNCS))
def test_ufuncs(name):
    fn = UFUNCS[name]
    with np.errstate(all="ignore"):
        expected = fn(X, P)
    assert_like_numpy(xlanb.jit(fn)(X, P), expected, dtype=np.float16)


def test_promotion_and_conversions():
    f32 = X.astype(np.float32)
    ints = np.arange(42, dtype=np.int32).reshape(6, 7) * 1000     # beyond 2048: rounds
    fn = lambda x, y, n: (x + y, x * 2.0, x + np.float16(0.1), n.astype(np.float16),  # noqa
                          (y * 3).astype(np.float16), x.astype(np.float64) / 3,
                          (x > 0).astype(np.float16), x.astype(np.int32), x + n)
    assert_like_numpy(xlanb.jit(fn)(X, f32, ints), fn(X, f32, ints), dtype=np.float16)
    big = np.array([1e5, -7e4, 65519.0, 1e-8, 3e-6])
    with np.errstate(over="ignore"):                 # NumPy warns of the infinities
        expected = big.astype(np.float16)
    assert_like_numpy(xlanb.jit(lambda v: v.astype(np.float16))(big), expected)


def test_reductions_matmul_scans_sorts():
    fn = lambda x, p: (np.sum(x, axis=1), np.mean(p), np.max(x, axis=0), np.argmax(x),  # noqa
                       np.var(x), x @ p.T, np.cumsum(x, axis=1), np.sort(x, axis=0),
                       np.median(p))
    got = xlanb.jit(fn)(X, P)
    expected = fn(X, P)
    assert_like_numpy(got, expected, dtype=np.float16, n=42)


def test_shapes_0d_empty_strided():
    assert_like_numpy(xlanb.jit(lambda x: x * 3 + 1)(np.float16(1.7)),
                      np.float16(1.7) * 3 + 1, dtype=np.float16)
    empty = np.zeros((0, 3), np.float16)
    assert_like_numpy(xlanb.jit(lambda x: np.exp(x) + 1)(empty), np.exp(empty) + 1)
    assert_like_numpy(xlanb.jit(lambda x: np.tanh(x[::-2, 1::3]) * 2)(X),
                      np.tanh(X[::-2, 1::3]) * 2, dtype=np.float16)


def test_in_place_update_of_a_float16_argument():
    def step(w, g):
        w -= g * 0.5
        return np.sum(w * w)
    w, g = X.copy(), P.copy()
    expected_w = X.copy()
    expected = step(expected_w, P)
    got = xlanb.jit(step)(w, g)
    assert_like_numpy(got, expected, dtype=np.float16, n=42)
    assert_like_numpy(w, expected_w, dtype=np.float16)
    np.testing.assert_array_equal(g, P)


def test_gradient_through_float16():
    loss = lambda x: np.sum(np.tanh(x.astype(np.float16)).astype(np.float32) ** 2)  # noqa
    x = X.astype(np.float32)
    got = xlanb.jit(xlanb.grad(loss))(x)
    t = np.tanh(X).astype(np.float32)
    expected = 2 * t * (1 - t * t)
    assert_like_numpy(got, expected, dtype=np.float16, k=16)


COMPOSITES = {                     # ufuncs that lower to several IR ops
    "hypot": lambda x: np.hypot(x, x),            # x*x overflows float16 past 256
    "logaddexp": lambda x: np.logaddexp(x, x * 0.5),
    "sinh": lambda x: np.sinh(x * 0.05), "cosh": lambda x: np.cosh(x * 0.05),
    "tan": lambda x: np.tan(x * 0.01), "arcsinh": lambda x: np.arcsinh(x),
    "arccos": lambda x: np.arccos(x / 1000), "log10": lambda x: np.log10(x + 1),
    "rad2deg": lambda x: np.rad2deg(x), "reciprocal": lambda x: np.reciprocal(x + 1),
    "exp2": lambda x: np.exp2(x * 0.01), "fmod": lambda x: np.fmod(x, 7.3),
}


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_composite_ufuncs_round_once_as_numpy(name):
    """NumPy's float16 loop computes hypot (etc.) in float32 and rounds the result once;
    rounding each op of the lowering to float16 gave inf for np.hypot(300, 300)."""
    x = np.linspace(0, 600, 49).astype(np.float16)
    fn = COMPOSITES[name]
    with np.errstate(all="ignore"):
        expected = fn(x)
    assert_like_numpy(xlanb.jit(fn)(x), expected, dtype=np.float16)


def test_mean_with_float16_dtype_and_var_sum_in_float16():
    """np.mean(x) of float16 sums in float32, but np.mean(x, dtype=np.float16) and np.var's
    mean sum in float16 (NumPy's _mean/_var), overflowing where NumPy does."""
    x = (np.full(1000, 100) + np.arange(1000) % 7).astype(np.float16)
    fn = lambda x: (np.mean(x), np.mean(x, dtype=np.float16), np.var(x), np.std(x),  # noqa
                    np.mean(x[:100], dtype=np.float16), np.var(x[:100]))
    with np.errstate(all="ignore"):
        expected = fn(x)
    assert np.isinf(expected[1]) and np.isinf(expected[2])
    assert_like_numpy(xlanb.jit(fn)(x), expected, dtype=np.float16)


def test_sums_over_an_outer_axis_round_each_step_as_numpy():
    """NumPy's float16 sum rounds once per inner loop, which runs over the axis innermost
    in memory: summing over another axis rounds every addition, so [6e4, 6e4, -6e4] is
    inf (it was 6e4, summed in float32); over the innermost axis it stays 6e4."""
    a = np.array([[60000, 1], [60000, 1], [-60000, 1]], dtype=np.float16)
    with np.errstate(over="ignore"):
        for fn in (lambda v: v.sum(axis=0), lambda v: v.T.sum(axis=1, keepdims=True),
                   lambda v: np.add.reduce(v, axis=0),
                   lambda v: np.ascontiguousarray(v.T).sum(axis=1),
                   lambda v: np.prod(v / 300, axis=0)):
            np.testing.assert_array_equal(xlanb.jit(fn)(a), fn(a))
        x = (np.random.default_rng(0).standard_normal((9, 7)) * 50).astype(np.float16)
        for fn in (lambda v: v.sum(axis=0), lambda v: np.prod(v / 40, axis=0),
                   lambda v: v.T.sum(axis=1)):
            np.testing.assert_array_equal(xlanb.jit(fn)(x), fn(x))   # bit for bit
