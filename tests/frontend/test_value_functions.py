"""Functions that hand a value to Python in NumPy, compiled where the shape is static:
`x.item(...)` (a traced weak scalar: it promotes as a Python scalar, and only a use in
Python needs its value), `np.asarray_chkfinite` (NumPy's check at run time, inside the
compiled program: an inf or NaN raises NumPy's ValueError and leaves the arguments as they
were), complex `np.round` (each part, as NumPy) and complex `np.clip` (NumPy's
lexicographic order, NaN first), `x.view(dtype)` of the same itemsize (the same bytes,
writes going through to x); `v in x` still needs a Python bool (a named error)."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb.errors import ConcretizationError
from tolerance import assert_like_numpy

X = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 7


@pytest.mark.parametrize("fn", [
    lambda x: x.item(5) * x, lambda x: x[1:2, 2:3].item() + x, lambda x: x.item(2, 3) * 2,
    lambda x: x.item(-1), lambda x: x.item((1, 1)) + np.float32(1),
    lambda x: x.astype(np.int16).item(3) + x.astype(np.int16),
    lambda x: (x > 0).item(7) & (x > 0), lambda x: x.astype(np.complex64).item(4) * x])
def test_item_is_a_weak_scalar(fn):
    assert_like_numpy(xlanb.jit(fn)(X), fn(X))


@pytest.mark.parametrize("call, error", [(lambda x: x.item(), ValueError),
                                         (lambda x: x.item(12), IndexError),
                                         (lambda x: x.item(1, 2, 3), ValueError)])
def test_item_errors_are_numpys(call, error):
    with pytest.raises(error):
        call(X)
    with pytest.raises(error):
        xlanb.jit(call)(X)


def test_item_used_in_python_is_a_named_error():
    with pytest.raises(ConcretizationError):
        xlanb.jit(lambda x: x * 2 if x.item(0) > 0 else x)(X)


def test_asarray_chkfinite_checks_at_run_time():
    fn = lambda x: np.asarray_chkfinite(x * 2) + 1                  # noqa: E731
    compiled = xlanb.jit(fn)
    assert_like_numpy(compiled(X), fn(X))
    assert "library-call" in compiled.lower(X).compile().as_text()
    assert xlanb.jit(lambda x: np.asarray_chkfinite(x, dtype=np.float64))(X).dtype == np.float64
    bad = X.copy()
    bad[1, 1] = np.inf
    with pytest.raises(ValueError, match="infs or NaNs"):
        compiled(bad)

    def scaled(x):
        x *= 2
        return np.asarray_chkfinite(x)
    argument = bad.copy()
    with pytest.raises(ValueError, match="infs or NaNs"):
        xlanb.jit(scaled)(argument)
    np.testing.assert_array_equal(argument, bad)            # nothing written back


def test_asarray_chkfinite_returns_its_argument():
    """NumPy returns the array itself (same dtype): writes through the result reach the
    argument, and the function returns the argument object."""
    def write_through(x):
        y = np.asarray_chkfinite(x)
        y[0, 0] = 5.0
        return y, x.sum()

    def returned(x):
        return np.asarray_chkfinite(x)
    expected_arg, got_arg = X.copy(), X.copy()
    expected = write_through(expected_arg)
    got = xlanb.jit(write_through)(got_arg)
    assert_like_numpy(got, expected)
    np.testing.assert_array_equal(got_arg, expected_arg)
    argument = X.copy()
    assert xlanb.jit(returned)(argument) is argument
    bad = X.copy()
    bad[2, 3] = np.nan
    with pytest.raises(ValueError, match="infs or NaNs"):
        xlanb.jit(write_through)(bad)
    assert bad[0, 0] == X[0, 0]                              # nothing written back


Z = np.array([-2 + 1.26j, -1.2 + 0.35j, complex(np.nan, 1), 0.45 - 1.55j, 1.25 - 2.45j,
              2 - 3.3j, complex(0.5, np.nan), 1 + 1j])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_round_and_clip(dtype):
    z = Z.astype(dtype)
    fn = lambda z: (np.round(z), np.round(z, 1), z.round(2), np.around(z, -1),  # noqa: E731
                    np.clip(z, -1 - 1j, 1 + 1j), np.clip(z, 0, 1), z.clip(-1, 1),
                    np.clip(z, None, 0.5j), np.clip(z, -1j, None))
    with np.errstate(invalid="ignore"):
        expected = fn(z)
    assert_like_numpy(xlanb.jit(fn)(z), expected)


def test_contains_needs_a_python_bool():
    with pytest.raises(ConcretizationError):
        xlanb.jit(lambda x: 1.0 in x)(X)
    assert xlanb.jit(lambda x: 1.0 in x, must_compile=False)(X) == (1.0 in X)


def test_view_reads_the_same_bytes_and_writes_through():
    def f(x):
        bits = x.view(np.int32)
        halved = (bits >> 1).view(np.float32) * 2         # a bit trick on the exponent
        bits[0] = 0                                        # writes x[0]
        return (halved, x.view(), x.view(np.ndarray) + 1, x.view(np.uint32) & 0xFF,
                x.view(dtype=np.int32, type=np.ndarray) - 1)
    ours, theirs = np.linspace(0.5, 4, 6).astype(np.float32), \
        np.linspace(0.5, 4, 6).astype(np.float32)
    got, expected = xlanb.jit(f)(ours), f(theirs)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(ours, theirs)
    d = np.array([1.5, -2.0, np.inf])
    step = lambda d: (d.view(np.int64) + 1).view(np.float64)       # noqa: E731 next float
    np.testing.assert_array_equal(xlanb.jit(step)(d), step(d))


def test_view_of_another_size_is_a_named_error():
    from xlanb.errors import UnsupportedNumPyFunctionError
    x = np.ones(4, np.float32)
    with pytest.raises(UnsupportedNumPyFunctionError, match="int16"):
        xlanb.jit(lambda x: x.view(np.int16))(x)
    np.testing.assert_array_equal(xlanb.jit(lambda x: x.view(np.int16), must_compile=False)(x),
                                  x.view(np.int16))
