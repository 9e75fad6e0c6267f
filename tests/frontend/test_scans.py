"""Scans as IR ops (`scan`): cumsum, cumprod, nancumsum, nancumprod, cumulative_sum/prod and
add/multiply/maximum/minimum.accumulate against NumPy under `jit`, over dtypes (bool to
complex128), shapes (0-d, empty, non-contiguous, negative strides), axes and `dtype=`; the
program has scan kernels (no library call) that fuse their elementwise producers and
consumers, and what has no IR form (float16, complex max/min) stays NumPy's library call.

NumPy combines a scan in order in the result dtype, and so does the kernel: floats are
compared with `assert_like_numpy` with n = the scan length (a fused multiply-add may round
once less per step), integers and bools exactly (wrap-around included).
"""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from tolerance import assert_like_numpy

ALL = ["bool", "int8", "int32", "int64", "uint8", "float32", "float64", "complex64",
       "complex128"]


def data(dtype, shape, seed=0):
    """Values around 1 (products neither vanish nor overflow in float32), with a zero,
    a negative value and, for floats, a NaN when there is room for them."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -3, 4, shape).astype(dtype)
    x = rng.uniform(0.6, 1.4, shape)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(-0.3, 0.3, shape)
    x = x.astype(dtype)
    if x.size > 6:
        x.flat[2] = 0
        x.flat[4] = -x.flat[4]
    return x


def check(fn, *args, n=None):
    got = xlanb.jit(fn)(*args)
    with np.errstate(all="ignore"):
        expected = fn(*args)
    length = n or max((a.size for a in args), default=1)
    assert_like_numpy(got, expected, n=length)
    return got


def kinds(fn, *args):
    return [k.kind for k in xlanb.jit(fn).lower(*args).compile().kernels]


@pytest.mark.parametrize("dtype", ALL)
def test_scans_over_dtypes_and_axes(dtype):
    x = data(dtype, (4, 5))
    check(lambda x: (np.cumsum(x), np.cumsum(x, axis=0), np.cumsum(x, axis=-1),
                     np.cumprod(x, axis=1), np.cumprod(x), x.cumsum(0), x.cumprod(axis=1)), x)
    check(lambda x: (np.add.accumulate(x), np.multiply.accumulate(x, axis=1)), x)
    if x.dtype.kind != "c":
        check(lambda x: (np.maximum.accumulate(x, axis=1), np.minimum.accumulate(x),
                         np.maximum.accumulate(x, axis=0)), x)


@pytest.mark.parametrize("dtype", ALL)
def test_kernels_are_scans_not_library_calls(dtype):
    x = data(dtype, (4, 5))
    ks = kinds(lambda x: (np.cumsum(x, axis=1), np.cumprod(x, axis=0)), x)
    assert ks.count("scan") == 2 and "library" not in ks, ks


@pytest.mark.parametrize("dtype", ["bool", "int32", "uint8", "float32", "float64", "complex64"])
def test_result_dtype_and_dtype_keyword(dtype):
    """cumsum of int32 and bool is the platform int, of uint8 the platform uint, accumulate
    keeps the dtype (bool max: or), and `dtype=` casts before combining (int8 wraps)."""
    x = data(dtype, (3, 6))
    got = check(lambda x: (np.cumsum(x, axis=1), np.cumprod(x, axis=0),
                           np.add.accumulate(x, axis=1), np.maximum.accumulate(x)
                           if x.dtype.kind != "c" else x), x)
    assert got[0].dtype == np.cumsum(x).dtype
    wide = np.complex128 if x.dtype.kind == "c" else np.float64
    check(lambda x: (np.cumsum(x, dtype=wide), np.cumprod(x, axis=1, dtype=wide),
                     np.add.accumulate(x, axis=0, dtype=wide)), x)
    if x.dtype.kind in "biu":
        big = np.full((3, 40), 100, x.dtype) if x.dtype != np.bool_ else x
        check(lambda x: (np.cumsum(x, axis=1, dtype=np.int8),
                         np.multiply.accumulate(x, axis=1, dtype=np.int16)), big)


def test_shapes_0d_empty_strided_negative():
    x = data("float64", (6, 8))
    check(lambda x: np.cumsum(x), np.asarray(2.5))                     # 0-d flattens: (1,)
    check(lambda x: np.cumprod(x), np.asarray(3, np.int32))
    check(lambda x: (np.cumsum(x, axis=0), np.cumprod(x, axis=-1)), np.asarray(2.5))  # (1,)
    check(lambda x: (np.cumsum(x, axis=0), np.cumsum(x, axis=1), np.cumsum(x)),
          np.zeros((0, 3), np.float32))
    check(lambda x: np.maximum.accumulate(x, axis=1), np.zeros((4, 0), np.int64))
    check(lambda x: (np.cumsum(x[:, ::2], axis=1), np.cumprod(x[::-1, ::-3], axis=0),
                     np.cumsum(x.T), np.maximum.accumulate(x[::-2], axis=1)), x)
    check(lambda x: np.cumsum(x, axis=1), x[::2, ::-1])                # a strided argument
    check(lambda x: np.cumsum(x, axis=2), data("float32", (2, 3, 4)))
    check(lambda x: np.cumprod(x, axis=1), data("complex128", (2, 3, 4)))


def test_nan_variants_and_cumulative():
    x = data("float64", (4, 5))
    x[1, 3] = np.nan
    check(lambda x: (np.nancumsum(x), np.nancumsum(x, axis=1), np.nancumprod(x, axis=0),
                     np.cumsum(x, axis=1), np.maximum.accumulate(x, axis=1),
                     np.minimum.accumulate(x, axis=0)), x)
    ints = data("int32", (4, 5))
    check(lambda x: (np.nancumsum(x, axis=0), np.nancumprod(x)), ints)
    c = data("complex64", (3, 4))
    c[1, 1] = complex(np.nan, 1)
    check(lambda c: (np.nancumsum(c, axis=1), np.nancumprod(c, axis=0)), c)
    check(lambda x: (np.cumulative_sum(x, axis=1, include_initial=True),
                     np.cumulative_prod(x, axis=0), np.cumulative_sum(x[0]),
                     np.cumulative_prod(x[1], include_initial=True, dtype=np.complex64)),
          data("float32", (4, 5)))
    check(lambda x: np.cumulative_sum(x), np.asarray(1.5))


def test_out_keyword_writes_the_destination():
    x = data("float64", (3, 4))

    def f(x, out):
        r = np.cumsum(x, axis=1, out=out)
        return r, np.maximum.accumulate(x, axis=0, out=np.empty_like(x))
    out = np.zeros((3, 4))
    got = xlanb.jit(f)(x, out)
    assert_like_numpy(out, np.cumsum(x, axis=1), n=4)
    assert_like_numpy(got[1], np.maximum.accumulate(x, axis=0))


def test_producers_and_consumers_fuse_into_the_scan():
    x = data("float32", (64, 32))
    fn = lambda x: np.tanh(np.cumsum(x * x + 1.0, axis=1)) / 3.0   # noqa: E731
    assert kinds(fn, x) == ["scan"]
    check(fn, x)
    # the scan also returned: written as an extra output of the same kernel
    both = lambda x: (np.cumsum(x * 2.0, axis=0), np.cumsum(x * 2.0, axis=0) - 1.0)  # noqa
    assert kinds(both, x) == ["scan"]
    check(both, x)


@pytest.mark.parametrize("length", [1, 255, 256, 600])
def test_last_axis_scan_through_its_row_buffer(length):
    """Expensive producers along the last axis go through a 256-element buffer in chunks
    (codegen `_scan_rows`): lengths around the chunk edge, the running value carried."""
    x = data("float64", (3, length), seed=length)
    fn = lambda x: np.tanh(np.cumsum(np.exp(x - 1.0), axis=1) / 7.0)   # noqa: E731
    assert kinds(fn, x) == ["scan"]
    check(fn, x)
    check(lambda x: np.maximum.accumulate(np.log(x + 2.0)), x.ravel())


def test_scan_read_out_of_order_is_not_fused_with_that_reader():
    x = data("float64", (5, 6))
    fn = lambda x: np.cumsum(x, axis=1)[:, ::-1] + np.cumsum(x, axis=1)   # noqa: E731
    compiled = xlanb.jit(fn).lower(x).compile()
    assert [k.kind for k in compiled.kernels] == ["scan", "loop"]
    assert any("at elements its running value has not reached" in d
               for k in compiled.kernels for d in k.decisions)
    check(fn, x)
    reduce_after = lambda x: np.sum(np.cumsum(x, axis=0) ** 2, axis=1)    # noqa: E731
    assert kinds(reduce_after, x) == ["scan", "reduce"]
    check(reduce_after, x, n=30)


def test_without_an_ir_form_stays_a_library_call():
    h = data("float16", (3, 4))
    got = check(lambda x: (np.cumsum(x, axis=1), np.add.accumulate(x)), h)
    assert got[0].dtype == np.float16
    c = data("complex128", (3, 4))
    check(lambda c: np.maximum.accumulate(c, axis=1), c)
    ks = kinds(lambda c: np.maximum.accumulate(c, axis=1), c)
    assert ks == ["library"]
    ints = data("int32", (3, 4))
    check(lambda x: np.subtract.accumulate(x, axis=1), ints)
    with pytest.raises(TypeError, match="scalar"):
        xlanb.jit(lambda x: np.add.accumulate(x))(np.asarray(1.0))


@pytest.mark.parametrize("fn", [
    lambda x: np.cumsum(x, axis=(0,)), lambda x: np.cumsum(x, axis=1.0),
    lambda x: np.cumsum(x, axis=2), lambda x: np.maximum.accumulate(x, axis=(0,)),
    lambda x: np.maximum.accumulate(x, axis=(0, 1)), lambda x: np.add.accumulate(x, axis=1.0),
    lambda x: np.cumsum(x, axis=np.int64(1)), lambda x: np.cumulative_sum(x, axis=1.0),
    lambda x: np.cumulative_sum(x)])
def test_axis_arguments_as_numpy_takes_them(fn):
    """The same result, or the same error type and message (a float axis is never
    silently taken as an int)."""
    x = data("float64", (2, 3))
    try:
        expected = fn(x)
    except Exception as error:                 # noqa: BLE001 - NumPy's own error
        with pytest.raises(type(error), match=str(error).split(":")[0][:40]):
            xlanb.jit(fn)(x)
        return
    assert_like_numpy(xlanb.jit(fn)(x), expected, n=6)
