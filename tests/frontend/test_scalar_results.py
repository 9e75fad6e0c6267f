"""0-d results come back as NumPy returns them: a scalar (np.float64, np.int64, np.bool_)
from ufuncs, reductions, statistics and integer indexing, a Python number from `x.item()`,
and a 0-d ndarray from array constructors and views (`np.where`, `x[1, ...]`).  A 0-d
ndarray where NumPy gives np.float64 is unhashable, fails `isinstance(v, float)` and
`json.dumps`: a loss logged to JSON broke."""
import json

import numpy as np
import pytest

import xlanb

X = np.arange(1.0, 7.0).reshape(2, 3)
XI = np.arange(1, 7).reshape(2, 3)

FUNCTIONS = {
    "np.sum": lambda x: np.sum(x),
    "x.mean()": lambda x: x.mean(),
    "x.max()": lambda x: x.max(),
    "np.argmax": lambda x: np.argmax(x),
    "np.median": lambda x: np.median(x),
    "np.percentile": lambda x: np.percentile(x, 30),
    "np.linalg.norm": lambda x: np.linalg.norm(x),
    "np.dot 1-d": lambda x: np.dot(x[0], x[1]),
    "matmul 1-d": lambda x: x[0] @ x[1],
    "ufunc of a reduction": lambda x: np.log(np.sum(np.exp(x))),
    "comparison": lambda x: x.sum() > 3,
    "integer index": lambda x: x[1, 2],
    "integer index, then arithmetic": lambda x: x[1, 2] * 2 + 1,
    "np.add.reduce": lambda x: np.add.reduce(x, axis=None),
    "item": lambda x: (x * 2).item(4),
    "item arithmetic": lambda x: x.item(1) * 2,
    "0-d view": lambda x: x[1, 2, ...],
    "np.where": lambda x: np.where(x.sum() > 3, x.sum(), 0),
    "reshape to 0-d": lambda x: x[:1, :1].reshape(()),
    "tuple": lambda x: (x.sum(), x.max(axis=0), x[0, 1], x[0, 1, ...]),
    "row sums": lambda x: x.sum(axis=1),
    "scalar type of a reduction": lambda x: np.float32(x.sum()),
    "scalar type of an element": lambda x: np.int16(x[0, 2]),
    "a scalar's methods": lambda x: (x.sum().reshape(()), x.max().astype(np.float32),
                                     x.min().copy(), x.sum().ravel()),
    "a scalar's parts": lambda x: (np.imag(x.sum()), x.max().real, (x.sum() * 1j).imag),
    "np.asarray of a scalar": lambda x: (np.asarray(x.sum()), np.asanyarray(x[0, 1])),
    "x.flat[i]": lambda x: x.flat[4],
    "np.einsum": lambda x: (np.einsum("ij,ij", x, x), np.einsum("ij->", x, optimize=True),
                            np.einsum("ij,ij", x, x, optimize=True),
                            np.einsum("ij,ji", x, x.T, optimize="greedy")),
}


def _types(value):
    if isinstance(value, tuple):
        return tuple(_types(v) for v in value)
    return type(value), getattr(value, "dtype", None)


@pytest.mark.parametrize("tiered", [False, True], ids=["compiled", "tiered"])
@pytest.mark.parametrize("x", [X, XI], ids=["float64", "int64"])
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_result_types_are_numpys(name, x, tiered):
    fn = FUNCTIONS[name]
    jitted = xlanb.jit(fn, tiered=tiered)
    expected = fn(x.copy())
    for _ in range(4):          # the first call, the general path, the call guard
        got = jitted(x.copy())
        assert _types(got) == _types(expected)
        np.testing.assert_equal(got, expected)


def test_a_returned_scalar_is_a_copy_not_a_view_of_the_argument():
    x = X.copy()
    got = xlanb.jit(lambda a: a[1, 2])(x)
    x[1, 2] = -1.0
    assert got == 6.0 and type(got) is np.float64


def test_a_loss_logs_to_json_and_keys_a_dict():
    loss = xlanb.jit(lambda a: np.mean(a ** 2))(X)
    assert json.loads(json.dumps({"loss": loss}))["loss"] == np.mean(X ** 2)
    assert {loss: 1}[np.mean(X ** 2)] == 1


def test_must_compile_false_and_the_interpreter_agree():
    fn = FUNCTIONS["tuple"]
    for jitted in (xlanb.jit(fn, must_compile=False), xlanb.jit(fn)):
        assert _types(jitted(X)) == _types(fn(X))


def _rebinds(x):
    """NumPy's scalars are immutable: `s += v` makes a new value (of the result's dtype and
    shape) and leaves `t = s` as it was."""
    s = x.sum()
    t = s
    s += 1
    n = x.argmax()
    n += 0.5                        # np.int64 += float: a float64, no same_kind error
    f = np.float32(x.max())
    f += np.float64(1.0)            # np.float32 += np.float64: a float64
    v = x[0, 1]
    v *= x[1]                       # a scalar times a row: a row
    return t, s, n, f, v


@pytest.mark.parametrize("x", [X, XI], ids=["float64", "int64"])
def test_an_augmented_assignment_to_a_scalar_rebinds_it(x):
    expected = _rebinds(x.copy())
    got = xlanb.jit(_rebinds)(x.copy())
    assert _types(got) == _types(expected)
    np.testing.assert_equal(got, expected)
