"""Memory layout under jit (lowering/stride_tricks.py): `x.strides` in bytes, `x.flags` as
NumPy gives them for the arguments passed (the cache re-specializes on the flags it read),
and np.lib.stride_tricks.as_strided as a view: reads, writes through it, and the named
errors where NumPy's answer would depend on memory a compiled program does not hold."""
from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided        # bound by name, before any trace

import xlanb
from xlanb.errors import AliasingError, ReadOnlyArrayError, UnsupportedNumPyFunctionError

ast = np.lib.stride_tricks.as_strided


def windows(x, w=3):
    n = x.shape[-1]
    return as_strided(x, x.shape[:-1] + (n - w + 1, w), x.strides + x.strides[-1:])


def patches(x):
    r, c = x.strides
    return ast(x, (x.shape[0] - 1, x.shape[1] - 1, 2, 2), (r, c, r, c))


READS = {
    "windows_1d": (windows, lambda: np.arange(7.0)),
    "windows_rows": (lambda x: windows(x) * 2, lambda: np.arange(12.0).reshape(3, 4)),
    "patches": (lambda x: patches(x).sum(axis=(2, 3)), lambda: np.arange(20.0).reshape(4, 5)),
    "patches_transposed_arg": (patches, lambda: np.arange(20.0).reshape(4, 5).T),
    "strided_arg": (windows, lambda: np.arange(20, dtype=np.int32)[::2]),
    "negative_strides": (lambda x: ast(x[::-1], (3, 2), (-16, -8)) + 0,
                         lambda: np.arange(8.0)),
    "zero_stride": (lambda x: ast(x, (3, 4), (0, 8)), lambda: np.arange(4.0)),
    "complex": (lambda x: windows(x, 2), lambda: np.arange(5.0) + 1j),
    "empty": (lambda x: ast(x, (0, 3), (8, 8)), lambda: np.arange(4.0)),
    "defaults": (lambda x: ast(x), lambda: np.arange(6.0).reshape(2, 3)[:, ::2]),
    "made_in_function": (lambda x: windows(np.zeros(5) + x.sum()), lambda: np.arange(3.0)),
    "copy": (lambda x: patches((x * 2).T.copy()), lambda: np.arange(12.0).reshape(3, 4)),
}


@pytest.mark.parametrize("name", READS)
def test_as_strided_reads_match_numpy(name):
    fn, make = READS[name]
    expected = np.array(fn(make()))
    got = xlanb.jit(fn)(make())
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_writes_through_a_view_reach_the_argument():
    def f(x):
        v = ast(x, (3,), (2 * x.itemsize,))      # every other element: distinct memory
        v += 10
        w = ast(x[1:], (2, 2), (4 * x.itemsize, x.itemsize))
        w[:] = -w
        return x.sum()

    a, b = np.arange(8.0), np.arange(8.0)
    assert xlanb.jit(f)(a) == f(b)
    np.testing.assert_array_equal(a, b)


def test_returned_view_is_the_callers_memory():
    x = np.arange(6.0)
    out = xlanb.jit(lambda x: windows(x))(x)
    np.testing.assert_array_equal(out, windows(x))
    assert np.shares_memory(out, x)


def test_overlapping_or_readonly_writes_and_outside_reads_are_named():
    def overlapping(x):
        windows(x)[0, 1] = 5.0

    def readonly(x):
        ast(x, (2,), (8,), writeable=False)[0] = 5.0

    def outside(x):                             # x[::2] does not show the odd elements
        return ast(x[::2], (3,), (8,))
    x = np.arange(6.0)
    with pytest.raises(AliasingError, match="overlapping windows"):
        xlanb.jit(overlapping)(x)
    with pytest.raises(ReadOnlyArrayError, match="writeable=False"):
        xlanb.jit(readonly)(x)
    with pytest.raises(UnsupportedNumPyFunctionError, match="outside the array's own"):
        xlanb.jit(outside)(x)
    np.testing.assert_array_equal(x, np.arange(6.0))
    swv = np.lib.stride_tricks.sliding_window_view
    with pytest.raises(ReadOnlyArrayError):     # NumPy's windows are read-only too
        xlanb.jit(lambda x: swv(x, 2).__setitem__(0, 1.0))(x)


def test_strides_are_bytes_where_the_layout_is_known():
    A = np.arange(24.0).reshape(2, 3, 4)
    for arg in (A, A.T, A[:, ::-1, ::2], A[1], np.asfortranarray(A), np.float32(1)):
        got = xlanb.jit(lambda x: np.array(x.strides))(arg)
        np.testing.assert_array_equal(got, np.array(np.asarray(arg).strides))
    got = xlanb.jit(lambda x: np.array((x.T * 2).copy().strides + x[0].T.strides))(A)
    np.testing.assert_array_equal(got, np.array((A.T * 2).copy().strides + A[0].T.strides))
    got = xlanb.jit(lambda x: np.array((x.T * 2).strides))(A)  # a ufunc keeps F order
    np.testing.assert_array_equal(got, np.array((A.T * 2).strides))
    got = xlanb.jit(lambda x: np.array(x.T.sum(axis=0).strides))(A)  # the input's order
    np.testing.assert_array_equal(got, np.array(A.T.sum(axis=0).strides))
    with pytest.raises(UnsupportedNumPyFunctionError, match="layout"):
        xlanb.jit(lambda x: np.array(np.tile(x.T, 2).strides))(A)  # np.tile: not modelled


def flag_code(x):
    f = x.flags
    bits = [f.c_contiguous, f.f_contiguous, f.owndata, f.writeable, f.aligned,
            f["C"], f.fnc, f.forc, x[0].flags.owndata, x.T.flags.f_contiguous]
    return x.sum() + sum(int(b) << i for i, b in enumerate(bits))


def test_flags_match_numpy_and_respecialize():
    base = np.arange(12.0).reshape(3, 4)
    readonly = base.copy()
    readonly.flags.writeable = False
    owner = base.copy()
    jitted = xlanb.jit(flag_code)
    # base[:] has the owner's shape, dtype and strides (the same key) but owns no data
    for arg in (owner, base[:], readonly, base.T, base[:, ::2], owner):
        assert jitted(arg) == flag_code(arg)
    clustered = xlanb.jit(flag_code, must_compile=False)
    for arg in (owner, base[:], owner):
        assert clustered(arg) == flag_code(arg)
    with pytest.raises(UnsupportedNumPyFunctionError, match="caller's array"):
        xlanb.jit(lambda x: setattr(x.flags, "writeable", False))(owner)


TOBYTES = {
    "c_order": lambda x: x.tobytes(),
    "f_order": lambda x: (x * 2).tobytes("F"),
    "a_order_of_transpose": lambda x: (x.T.tobytes("A"), x.T[::2].tobytes("A")),
    "in_a_container": lambda x: {"row": x[1].tobytes(), "tag": b"v1", "sum": x.sum()},
}


@pytest.mark.parametrize("name", TOBYTES)
def test_tobytes_returned_is_numpys_bytes(name):
    fn, x = TOBYTES[name], np.arange(12, dtype=np.int32).reshape(3, 4)
    for must_compile in (True, False):
        assert xlanb.jit(fn, must_compile=must_compile)(x) == fn(x)


def test_tobytes_used_inside_needs_values():
    from xlanb.errors import ConcretizationError
    fn = lambda x: x * len(x.tobytes())                                 # noqa: E731
    x = np.arange(3.0)
    with pytest.raises(ConcretizationError, match="tobytes"):
        xlanb.jit(fn)(x)
    np.testing.assert_array_equal(xlanb.jit(fn, must_compile=False)(x), fn(x))
