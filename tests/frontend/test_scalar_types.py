"""NumPy's scalar types called on traced values (`np.float32(x)`, `np.int64(x)`) compile as
casts with NumPy's semantics: the same dtype and shape, the same array object when nothing
changes, and the types stay types for everything else (`x.dtype.type is np.float32`)."""
import numpy as np
import pytest

import xlanb

TYPES = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "intc", "uintc", "intp", "uintp", "float32", "float64", "complex64", "complex128"]
SOURCES = [np.bool_, np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128]


def _values(dtype) -> np.ndarray:
    """Values every target type holds exactly (no negative to unsigned, no overflow)."""
    base = np.array([0, 1, 3, 7, 2, 5], dtype=np.int64)
    if np.dtype(dtype).kind == "b":
        return (base % 2).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (base + 0.5).astype(dtype)       # imaginary part 0: complex -> real is exact
    if np.dtype(dtype).kind == "f":
        return (base + 0.25).astype(dtype)
    return base.astype(dtype)


def _same(expected, got):
    expected, got = np.asarray(expected), np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("source", SOURCES, ids=lambda t: np.dtype(t).name)
def test_cast_of_arrays_and_scalars_matches_numpy(source):
    x = _values(source)

    # spelled `np.int8(x)` in the function's code: a call through a variable holding the
    # type (`t = np.int8; t(x)`) is NumPy's own constructor, and a named error
    calls = ", ".join(f"np.{t}(x), np.{t}(x[2]), np.{t}(x[::-2])" for t in TYPES)
    scope = {"np": np}
    exec(compile(f"def f(x):\n    return ({calls})\n", "casts.py", "exec"), scope)
    f = scope["f"]
    jitted = xlanb.jit(f)
    for expected, got in zip(f(x), jitted(x)):
        _same(expected, got)


def test_the_same_array_when_the_dtype_matches():
    def f(x):
        y = np.float64(x)
        y += 1                      # NumPy: y is x, so x changes too
        return np.float32(x) * 2
    x, reference = np.arange(3.0), np.arange(3.0)
    _same(f(reference), xlanb.jit(f)(x))
    _same(reference, x)


def test_types_stay_types_while_tracing():
    def f(x):
        checks = (x.dtype.type is np.float64, isinstance(x.dtype.type(1), np.float64),
                  np.dtype(np.float32) == np.float32, np.issubdtype(x.dtype, np.floating))
        return x.astype(np.float32) + np.float32(0.5) + float(all(checks))
    x = np.arange(3.0)
    _same(f(x), xlanb.jit(f)(x))


def test_strong_type_in_arithmetic():
    """np.float32(s) of a traced Python float is a strong float32: float32 arithmetic."""
    def f(x, s):
        return x * np.float32(s), np.float64(s) * x.astype(np.float32)
    x = np.arange(3, dtype=np.float16).astype(np.float32)
    for expected, got in zip(f(x, 0.1), xlanb.jit(f)(x, 0.1)):
        _same(expected, got)


def test_grad_flows_through_the_cast():
    def loss(x):
        return np.sum(np.float64(x) ** 2)
    x = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(xlanb.grad(loss)(x), 2 * x, rtol=1e-12)
