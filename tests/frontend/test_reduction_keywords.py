"""Reductions under `jit` against NumPy over the dtypes, shapes and keyword arguments NumPy
takes: bool/int32/int64/float32/float64/complex64/complex128; 0-d, empty, non-contiguous,
negative-stride and broadcast inputs; axis (int, negative, tuple, None), keepdims, dtype,
out=, where= and initial=.  Where NumPy raises, `jit` raises the same exception type.
Tolerances follow the dtype (a compiled sum may add in another order)."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from tolerance import assert_like_numpy

DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]


def sample(dtype, shape=(3, 4), seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = rng.integers(-3, 4, shape)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return values > 0
    if dtype.kind == "c":
        return (values + 1j * rng.integers(-2, 3, shape)).astype(dtype)
    return values.astype(dtype)


def layouts(x: np.ndarray) -> dict[str, np.ndarray]:
    """The same values as contiguous, transposed, negative-stride, strided and broadcast."""
    wide = np.repeat(x, 2, axis=1)
    return {"c": x, "transposed": x.T, "reversed": x[::-1, ::-1],
            "strided": wide[:, ::2], "broadcast": np.broadcast_to(x[:1], x.shape),
            "0-d": np.asarray(x.flat[1]), "empty": x[:0]}


def _builtin(cls: type) -> type:
    """NumPy's exception as the builtin class it derives from (UFuncTypeError: TypeError),
    which xlanb's named errors derive from too (DTypeError is a TypeError)."""
    return next(c for c in cls.__mro__ if c.__module__ == "builtins")


def compare(fn, *args):
    """jit(fn) against fn: the same values, dtype and shape, or the same exception type."""
    try:
        expected = fn(*args)
    except Exception as error:          # noqa: BLE001 (NumPy's refusal is the oracle)
        with pytest.raises(_builtin(type(error))):
            xlanb.jit(fn)(*args)
        return
    # a reduction: each result goes through up to (its input's size) roundings
    size = max((np.size(a) for a in args if isinstance(a, np.ndarray)), default=1)
    assert_like_numpy(xlanb.jit(fn)(*args), expected, n=max(size, 1))


REDUCTIONS = {
    "sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "mean": np.mean,
    "any": np.any, "all": np.all, "var": np.var, "std": np.std,
}
ORDERED = {"max", "min"}                      # complex: NumPy orders lexicographically


@pytest.mark.parametrize("layout", ["c", "transposed", "reversed", "strided", "broadcast",
                                    "0-d", "empty"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_axis_and_keepdims(name, dtype, layout):
    x = layouts(sample(dtype))[layout]
    f = REDUCTIONS[name]
    compare(lambda x: f(x), x)
    if x.ndim:
        compare(lambda x: (f(x, axis=0), f(x, axis=-1, keepdims=True),
                           f(x, axis=(0, 1)), f(x, keepdims=True)), x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "any", "all"])
def test_where_and_initial(name, dtype):
    x = sample(dtype)
    mask = sample("bool", seed=1)
    f = REDUCTIONS[name]
    initial = {"any": False, "all": True}.get(name, 1)
    if name in ("any", "all"):
        compare(lambda x, m: (f(x, where=m), f(x, axis=1, where=m, keepdims=True)), x, mask)
        return
    compare(lambda x, m: (f(x, where=m, initial=initial),
                          f(x, axis=0, where=m[0], initial=initial),
                          f(x, axis=1, initial=initial)), x, mask)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["sum", "prod", "mean"])
@pytest.mark.parametrize("to", ["int64", "float32", "float64", "complex128"])
def test_dtype_argument(name, dtype, to):
    f = REDUCTIONS[name]
    compare(lambda x: (f(x, dtype=to), f(x, axis=1, dtype=to)), sample(dtype))


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex128"])
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
def test_out_argument(name, dtype):
    f = REDUCTIONS[name]

    def g(x):
        out = np.zeros(x.shape[1], x.dtype)
        result = f(x, axis=0, out=out)
        return result, out, result is out
    expected = g(sample(dtype))
    got = xlanb.jit(g)(sample(dtype))
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-6)
    assert bool(got[2]) == expected[2]


@pytest.mark.parametrize("dtype", DTYPES)
def test_arg_reductions(dtype):
    x = sample(dtype)
    compare(lambda x: (np.argmax(x), np.argmin(x, axis=0), np.argmax(x[::-1], axis=1,
                                                                      keepdims=True)), x)
