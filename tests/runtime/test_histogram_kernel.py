"""The compiled equal-width np.histogram (codegen/histogram.py) against NumPy, exactly.

Counts and weighted sums must equal np.histogram's bit for bit (its block-wise float64
sums of the weights included), edges too, over float32/float64/integer data, given and
autodetected ranges, values on the edges, NaN outside a given range, weights of both float
dtypes and density; and through `jit`, the program's results and its arguments after the
call are NumPy's.  What the pass does not reproduce falls back to NumPy's own function.
"""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb_runtime.codegen import histogram as H

DATA = ["float64", "float32", "int64", "int32", "uint32", "uint64"]


def same(got, expected) -> None:
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, e.dtype, g.shape)
        np.testing.assert_array_equal(g, e)


def values(dtype: str, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * 100).astype(dtype)


@pytest.mark.parametrize("dtype", DATA)
@pytest.mark.parametrize("bins", [1, 7, 1000])
@pytest.mark.parametrize("range_", [None, (-50.5, 70.25)])
def test_counts_and_sums_equal_numpy(dtype, bins, range_):
    x = values(dtype, 150_000)                 # three NumPy blocks of 65536
    rng = np.random.default_rng(1)
    for weights in (None, rng.random(x.size), rng.random(x.size).astype(np.float32)):
        for density in (None, True):
            expected = np.histogram(x, bins, range_, density, weights)
            same(H.histogram(x, bins, range_, density, weights), expected)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_on_edges_nan_and_tiny_inputs(dtype):
    on_edges = np.linspace(0, 1, 1001).astype(dtype)     # last edge: into the last bin
    for bins in (3, 10, 1000):
        same(H.histogram(on_edges, bins), np.histogram(on_edges, bins))
    with_nan = np.random.default_rng(2).random(1000).astype(dtype)
    with_nan[[5, 17]] = np.nan
    same(H.histogram(with_nan, 10, (0.0, 1.0), weights=with_nan),
         np.histogram(with_nan, 10, (0.0, 1.0), weights=with_nan))
    with pytest.raises(ValueError, match="not finite"):       # NumPy's own check
        H.histogram(with_nan, 10)
    for tiny in (np.zeros(0, dtype), np.full(1, 3, dtype), np.full(5, 2.5, dtype)):
        same(H.histogram(tiny, 4), np.histogram(tiny, 4))
    with pytest.raises(ValueError, match="max must be larger"):
        H.histogram(on_edges, 4, (1.0, 0.0))


def test_what_it_cannot_reproduce_runs_numpy():
    x = values("float64", 100)
    assert not H.is_fast(x.astype(np.float16), 10, None)
    assert not H.is_fast(x.astype(np.complex128), 10, None)
    assert not H.is_fast(x, np.array([0.0, 1.0, 5.0]), None)
    assert not H.is_fast(x, 10, np.arange(100))                 # integer weights
    same(H.histogram(x.astype(np.int16), 5, weights=np.arange(100)),
         np.histogram(x.astype(np.int16), 5, weights=np.arange(100)))


def azimint_hist(data, radius, npt):                 # npbench's kernel, as written there
    histu = np.histogram(radius, npt)[0]
    histw = np.histogram(radius, npt, weights=data)[0]
    return histw / histu


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_jit_matches_numpy_and_leaves_arguments(dtype):
    rng = np.random.default_rng(3)
    radius = (rng.random((300, 200)) * 50).astype(dtype)[:, ::2]   # strided, 2-D
    data = rng.random((300, 200)).astype(dtype)[:, ::2]
    before = radius.copy(), data.copy()
    fn = xlanb.jit(azimint_hist, static_argnums=(2,))
    with np.errstate(invalid="ignore", divide="ignore"):
        got, expected = fn(data, radius, 100), azimint_hist(data, radius, 100)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    assert any(key[0] == "_count" and str(key[1].dtype) == dtype for key in H._COMPILED)
    np.testing.assert_array_equal(radius, before[0])
    np.testing.assert_array_equal(data, before[1])
    ranged = xlanb.jit(lambda x, w: np.histogram(x, 20, (5.0, 30.0), weights=w))
    same(ranged(radius, data), np.histogram(radius, 20, (5.0, 30.0), weights=data))


# -- histogram-merge: histograms of one array with the same bins in one pass -------------

def binned_mean_first(data, radius):                 # the weighted call first
    sums, edges = np.histogram(radius, 50, weights=data)
    counts = np.histogram(radius, 50)[0]
    return sums / counts, edges


def three_histograms(data, radius):                  # beyond the one-pass pair: NumPy's
    return (np.histogram(radius, 8, (0.0, 40.0))[0],
            np.histogram(radius, 8, (0.0, 40.0), weights=data)[0],
            np.histogram(radius, 8, (0.0, 40.0), weights=radius)[0])


def weight_made_later(data, radius):    # data * data comes after the first call: kept apart
    return np.histogram(radius, 8)[0], np.histogram(radius, 8, weights=data * data)[0]


def library_calls(fn, *args, **jit_args) -> list[str]:
    text = xlanb.jit(fn, **jit_args).lower(*args).compile().as_text()
    return [line.split("arg=('")[1].split("'")[0] for line in text.splitlines()
            if "library-call(" in line]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_merged_histograms_equal_numpy(dtype):
    rng = np.random.default_rng(4)
    radius = (rng.random(200_000) * 50).astype(dtype)
    data = rng.random(200_000).astype("float32" if dtype == "float32" else "float64")
    assert library_calls(azimint_hist, data, radius, 100, static_argnums=(2,)) == \
        ["xlanb.histograms"]
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_array_equal(
            xlanb.jit(azimint_hist, static_argnums=(2,))(data, radius, 100),
            azimint_hist(data, radius, 100))
        got, expected = xlanb.jit(binned_mean_first)(data, radius), \
            binned_mean_first(data, radius)
    same(got, expected)
    assert library_calls(three_histograms, data, radius) == ["xlanb.histograms"]
    same(xlanb.jit(three_histograms)(data, radius), three_histograms(data, radius))
    same(xlanb.jit(weight_made_later)(data, radius), weight_made_later(data, radius))


def test_merge_keeps_apart_what_differs_and_the_interpreter_agrees():
    x = np.random.default_rng(5).random(1000)
    differ = lambda x: (np.histogram(x, 10)[0], np.histogram(x, 11)[0],
                        np.histogram(x, 10, (0.0, 0.5))[0], np.histogram(x, 10, density=True)[0])
    assert library_calls(differ, x).count("np.histogram") == 4
    compiled = xlanb.jit(azimint_hist, static_argnums=(2,)).lower(x, x * 3, 7).compile()
    from xlanb_runtime.ir import interpret
    graph = compiled.executable.optimized
    assert any(n.arg[0] == "xlanb.histograms" for n in graph.nodes
               if n.op.name == "LIBRARY_CALL")
    np.testing.assert_array_equal(interpret(graph, [x, x * 3])[0], azimint_hist(x, x * 3, 7))
