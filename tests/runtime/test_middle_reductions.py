"""Reductions over middle axes (kept axes on both sides) against NumPy: the generated
kernel keeps one suffix-sized accumulator per prefix index (codegen/cpu.py
`_middle_reduce`); every reduction kind, dtype, fused producer and epilogue."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb

RNG = np.random.default_rng(0)
X4 = RNG.standard_normal((3, 4, 5, 6)).astype(np.float32)
X3 = RNG.standard_normal((4, 7, 5))
I3 = RNG.integers(-5, 5, (4, 7, 5))
TABLE = RNG.standard_normal((50, 16)).astype(np.float32)
IDX = RNG.integers(-50, 50, (7, 5))

CASES = {
    "mean over axis 1": (lambda x: x.mean(axis=1), (X3,)),
    "sum over axes 1, 2": (lambda x: x.sum(axis=(1, 2)), (X4,)),
    "max over axis 1": (lambda x: x.max(axis=1), (X4,)),
    "min over axis 2, epilogue": (lambda x: np.sqrt(np.abs(x.min(axis=2))) + 1, (X4,)),
    "sum and max siblings": (lambda x: (x.sum(axis=1), x.max(axis=1) * 2), (X3,)),
    "softmax over axis 1": (lambda x: np.exp(x - x.max(axis=1, keepdims=True))
                            / np.exp(x - x.max(axis=1, keepdims=True))
                            .sum(axis=1, keepdims=True), (X3,)),
    "int sum over axis 1": (lambda x: (x * 2).sum(axis=1), (I3,)),
    "any over axis 1": (lambda x: (x > 1).any(axis=1), (X3,)),
    "variance over axis 2": (lambda x: x.var(axis=2), (X4,)),
    "embedding bag mean": (lambda t, i: t[i].mean(axis=1), (TABLE, IDX)),
    "value also returned": (lambda x: (np.exp(x), np.exp(x).sum(axis=1)), (X3,)),
    "pairwise differences summed": (lambda p: (p[None, :, :] - p[:, None, :]).sum(axis=1),
                                     (RNG.standard_normal((9, 3)),)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_middle_axis_reduction_matches_numpy(name):
    fn, args = CASES[name]
    got, want = xlanb.jit(fn)(*args), fn(*args)
    for g, w in zip(got if isinstance(got, tuple) else [got],
                    want if isinstance(want, tuple) else [want]):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, (0, 1), (1, 2)])
def test_max_and_min_propagate_a_nan_wherever_it_is(axis, dtype):
    """NaN-propagating max/min (codegen/cpu.py `_cpu_accumulator`, new value first) give
    NaN whether the NaN is the first element an accumulator sees, a later one or the last,
    in every loop form (full, row, column, middle axes), and the plain max elsewhere."""
    x = RNG.standard_normal((6, 5, 40)).astype(dtype)
    for index in [(0, 0, 0), (3, 2, 17), (5, 4, 39), (0, 4, 39), (5, 0, 0)]:
        x[index] = np.nan
    fn = xlanb.jit(lambda x: (x.max(axis=axis), x.min(axis=axis), np.ptp(x, axis=axis)))
    for got, want in zip(fn(x), (x.max(axis=axis), x.min(axis=axis), np.ptp(x, axis=axis))):
        np.testing.assert_array_equal(got, want)
