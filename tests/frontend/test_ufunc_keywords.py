"""Ufuncs under `jit` against NumPy over dtypes and the keyword arguments NumPy takes: out=
(a traced array made in the function, and an argument written in place), where= (with out=,
so the unselected places keep out's values), dtype= and casting=; broadcast, 0-d and
negative-stride operands.  Where NumPy raises, `jit` raises the same exception type."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from tolerance import assert_like_numpy

DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]
BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "power", "maximum",
          "minimum", "arctan2", "hypot", "logical_and", "bitwise_and", "equal", "less",
          "fmod", "copysign"]
UNARY = ["negative", "absolute", "sqrt", "exp", "sin", "floor", "logical_not", "isnan",
         "square", "sign", "conjugate"]


def sample(dtype, shape=(3, 4), seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = rng.integers(1, 4, shape)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return values > 1
    if dtype.kind == "c":
        return (values + 0.5j * rng.integers(-2, 3, shape)).astype(dtype)
    return values.astype(dtype)


def _builtin(cls: type) -> type:
    """NumPy's exception as the builtin class it derives from (UFuncTypeError: TypeError),
    which xlanb's named errors derive from too (DTypeError is a TypeError)."""
    return next(c for c in cls.__mro__ if c.__module__ == "builtins")


def compare(fn, *args):
    """jit(fn) against fn on copies (writes included): values and dtypes, or the error."""
    eager_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    jit_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        with np.errstate(all="ignore"):
            expected = fn(*eager_args)
    except Exception as error:          # noqa: BLE001 (NumPy's refusal is the oracle)
        with pytest.raises(_builtin(type(error))):
            xlanb.jit(fn)(*jit_args)
        return
    with np.errstate(all="ignore"):
        got = xlanb.jit(fn)(*jit_args)
    assert_like_numpy(got, expected)
    for e, g in zip(eager_args, jit_args):
        if isinstance(e, np.ndarray):
            assert_like_numpy(g, e)     # arguments written as NumPy writes them


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_keywords(name, dtype):
    u = getattr(np, name)
    x, y = sample(dtype), sample(dtype, (4,), seed=1)[::-1]        # broadcast, reversed

    def keywords(x, y):
        kind = np.result_type(x, y)
        mask = x if x.dtype == np.bool_ else x.real > 1
        out = np.zeros(x.shape, kind)
        u(x, y, out=out, where=mask)
        return u(x, y), out, u(x, y[0]), u(x[0, 0], y[1])
    compare(keywords, x, y)
    compare(lambda x, y: u(x, y, dtype=np.float64), x, y)
    compare(lambda x, y: u(x, y, casting="same_kind", dtype=np.float32), x, y)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_keywords(name, dtype):
    u = getattr(np, name)
    x = sample(dtype)

    def in_place(x):
        u(x, out=x, where=np.arange(4) % 2 == 0)            # writes the argument
        return x
    compare(lambda x: (u(x), u(x[::-1, ::2]), u(x[1, 1])), x)
    compare(in_place, x)
    compare(lambda x: u(x, dtype=np.complex128), x)
