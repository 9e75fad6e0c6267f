"""Traced indices out of bounds: NumPy's IndexError (its message), raised before any
argument is written, on the first call and through the call guard; in-bounds indices,
negative ones included, give NumPy's values; indices in bounds by construction (an
argmax, a clip, `% n`) carry no run-time check (ir/value_range.py)."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb_runtime.ir import Op
from xlanb_runtime.ir import builder as B
from xlanb_runtime.ir.value_range import value_range


def getitem(x, i):
    return x[i] * 2


def getitem_columns(x, i):
    return x[:, i]


def getitem_pair(x, i):
    return x[i, i[::-1]]


def setitem(x, i):
    x[i] = 7.0


def setitem_rows(x, i):
    x[i] = x[:len(i)] * 0 + 1.0


def increment(x, i):
    x[i] += 1.0


def take(x, i):
    return np.take(x, i, axis=1)


def take_along(x, i):
    return np.take_along_axis(x, i.reshape(-1, 1)[:x.shape[0]], axis=1)


def add_at(x, i):
    np.add.at(x, i, 1.0)


CASES = [getitem, getitem_columns, getitem_pair, setitem, setitem_rows, increment, take,
         take_along, add_at]


def _arguments(bad: int):
    x = np.arange(24.0).reshape(6, 4)
    return x, np.array([1, -2, 3, bad, 0, 2])


def _numpy_error(fn, bad):
    with pytest.raises(IndexError) as info:
        fn(*_arguments(bad))
    return str(info.value)


@pytest.mark.parametrize("bad", [4, 6, 50, -7, -50])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_an_index_out_of_bounds_is_numpys_index_error(fn, bad):
    """Where NumPy raises for an index past its axis, xlanb raises NumPy's IndexError, the
    arguments as they were (the check runs before the kernels that write them)."""
    with np.errstate(all="ignore"):
        try:
            fn(*_arguments(bad))
        except IndexError as error:
            message = str(error)
        else:
            pytest.skip("in bounds for this axis")
    jitted = xlanb.jit(fn, tiered=False)
    good = _arguments(1)
    jitted(*good)                       # compiled, and the guard written for these arrays
    for _ in range(2):                  # the general path, then the guard
        x, i = _arguments(bad)
        with pytest.raises(IndexError) as info:
            jitted(x, i)
        assert str(info.value) == message
        np.testing.assert_array_equal(x, _arguments(bad)[0])


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_indices_in_bounds_give_numpys_values(fn):
    expected, got = _arguments(1), _arguments(1)
    jitted = xlanb.jit(fn, tiered=False)
    for _ in range(2):
        want, have = fn(*expected), jitted(*got)
        if want is not None:
            np.testing.assert_array_equal(have, want)
        np.testing.assert_array_equal(got[0], expected[0])


def _checked(fn, *args) -> bool:
    return "check_range" in xlanb.jit(fn, tiered=False).lower(*args).as_text()


def test_indices_in_bounds_by_construction_are_not_checked():
    x = np.random.default_rng(0).standard_normal((50, 8))
    i = np.arange(-50, 50)
    assert not _checked(lambda x: np.take_along_axis(x, x.argmax(1)[:, None], 1), x)
    assert not _checked(lambda x, i: x[np.clip(i, 0, 49)], x, i)
    assert not _checked(lambda x, i: x[i % 50], x, i)
    assert not _checked(lambda x: x[np.arange(50)[::-1] // 2], x)
    assert _checked(lambda x, i: x[i], x, i)
    assert _checked(lambda x, i: x[i % 51], x, i)
    assert _checked(lambda x, i: x[np.clip(i, 0, 50)], x, i)


def test_value_ranges():
    n = B.parameter(0, (10,), np.int64)
    small = B.parameter(1, (10,), np.uint8)
    const = lambda v: B.broadcast(B.constant(np.int64(v)), (10,))   # noqa: E731
    assert value_range(n) == (-(1 << 63), (1 << 63) - 1)
    assert value_range(B.convert(small, np.int64)) == (0, 255)
    assert value_range(B.binary(Op.REM, n, const(7))) == (0, 6)
    assert value_range(B.binary(Op.REM, n, const(-7))) == value_range(n)
    assert value_range(B.binary(Op.MIN, B.binary(Op.MAX, n, const(-3)), const(9))) == (-3, 9)
    assert value_range(B.binary(Op.ADD, B.convert(small, np.int64), const(1))) == (1, 256)
    assert value_range(B.binary(Op.ADD, small, B.convert(const(1), np.uint8))) == (0, 255)
    assert value_range(B.binary(Op.MUL, n, const(2))) == value_range(n)   # may wrap around
    assert value_range(B.iota((4, 9), np.int64, 1)) == (0, 8)
    assert value_range(B.convert(B.parameter(2, (3,), np.float64), np.int8)) == (-128, 127)
    assert value_range(B.convert(n, np.uint8)) == (0, 255)                 # wraps around
    assert value_range(B.unary(Op.ABS, n)) == value_range(n)                # |INT64_MIN|
    assert value_range(B.parameter(2, (3,), np.float64)) is None
    assert value_range(B.unary(Op.ABS, B.binary(Op.SUB, B.convert(small, np.int64),
                                                const(300)))) == (45, 300)


@pytest.mark.parametrize("fn, args", [
    (lambda i: np.unravel_index(i, (3, 4)), [np.array([7, 2, 11])]),
    (lambda i: np.unravel_index(i, (3, 4), order="F"), [np.array([7, 2, 11])]),
    (lambda i: np.unravel_index(i, (2, 3, 4)), [np.array([[23, 0], [5, 17]])]),
    (lambda i, j: np.ravel_multi_index((i, j), (3, 4)), [np.array([1, 2]), np.array([0, 3])]),
    (lambda i, j: np.ravel_multi_index((i, j), (3, 4), mode=("clip", "wrap")),
     [np.array([1, 3]), np.array([0, 7])]),
], ids=["unravel", "unravel F", "unravel 3-D", "ravel", "ravel clip/wrap"])
def test_unravel_and_ravel_index_are_numpys(fn, args):
    got, want = xlanb.jit(fn, tiered=False)(*args), fn(*args)
    for have, expected in zip(got if isinstance(got, tuple) else (got,),
                              want if isinstance(want, tuple) else (want,)):
        assert have.dtype == expected.dtype
        np.testing.assert_array_equal(have, expected)


@pytest.mark.parametrize("fn, args", [
    (lambda i: np.unravel_index(i, (3, 4)), [np.array([7, 12])]),
    (lambda i: np.unravel_index(i, (3, 4)), [np.array([-1, 2])]),
    (lambda i, j: np.ravel_multi_index((i, j), (3, 4)), [np.array([1, 3]), np.array([0, 3])]),
], ids=["past the end", "negative", "ravel"])
def test_unravel_and_ravel_index_errors_are_numpys(fn, args):
    with pytest.raises(ValueError) as numpy_error:
        fn(*args)
    with pytest.raises(ValueError) as error:
        xlanb.jit(fn, tiered=False)(*args)
    assert str(error.value) == str(numpy_error.value)


def test_unravel_of_an_argmax_needs_no_check():
    a = np.random.default_rng(0).standard_normal((7, 9))
    fn = lambda a: np.unravel_index(np.argmax(a), a.shape)          # noqa: E731
    assert "check_range" not in xlanb.jit(fn, tiered=False).lower(a).as_text()
    got = xlanb.jit(fn, tiered=False)(a)
    assert got == fn(a) and all(type(v) is np.int64 for v in got)


def _put(x, i, v):
    np.put(x, i, v)


def _put_method(x, i, v):
    x.put(i, v[:2])                 # repeated to the indices' count


def _put_transposed_wrap(x, i, v):
    np.put(x.T, i, -1.0, mode="wrap")


def _put_clip(x, i, v):
    np.put(x, i, 5, mode="clip")


def _put_view(x, i, v):
    np.put(x[::2], i % 6, v)
    return x.sum()


@pytest.mark.parametrize("fn", [_put, _put_method, _put_transposed_wrap, _put_clip, _put_view],
                         ids=lambda f: f.__name__)
def test_put_writes_numpys_elements(fn):
    """np.put / x.put: flat C-order positions of x (through a view or a transpose too),
    values repeated to the indices' count, modes raise/wrap/clip; NumPy's IndexError."""
    def make(bad=False):
        rng = np.random.default_rng(4)
        return [rng.random((3, 4)), np.array([0, 5, -1, 5, 30 if bad else 7]), rng.random(5)]
    jitted = xlanb.jit(fn, tiered=False)
    for _ in range(2):
        want_args, got_args = make(), make()
        want, got = fn(*want_args), jitted(*got_args)
        assert (want is None and got is None) or np.allclose(want, got)
        for g, w in zip(got_args, want_args):
            np.testing.assert_array_equal(g, w)
    if fn in (_put, _put_method):
        args = make(bad=True)
        with pytest.raises(IndexError, match="index 30 is out of bounds"):
            jitted(*args)
        np.testing.assert_array_equal(args[0], make()[0])


def test_ix_selects_numpys_submatrix():
    """x[np.ix_(rows, cols)] reads and writes the open mesh of traced or constant index
    sequences (a constant boolean one by its positions); a traced mask is a named error."""
    from xlanb.errors import DataDependentShapeError
    rng = np.random.default_rng(6)
    x, rows, cols = rng.random((6, 5)), np.array([0, 3, 5]), np.array([4, 1])
    read = lambda x, r, c: (x[np.ix_(r, c)], x[np.ix_(r, [True, False, True, False, False])])
    for have, want in zip(xlanb.jit(read, tiered=False)(x, rows, cols), read(x, rows, cols)):
        np.testing.assert_array_equal(have, want)

    def write(x, r, c):
        x[np.ix_(r, c)] = -1.0
    got, want = x.copy(), x.copy()
    xlanb.jit(write, tiered=False)(got, rows, cols)
    write(want, rows, cols)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(DataDependentShapeError):
        xlanb.jit(lambda x, m: x[np.ix_(m, [0])], tiered=False)(x, np.arange(6) > 2)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64])
@pytest.mark.parametrize("where", [0, 7, -1])
def test_large_index_arrays_are_checked_in_one_pass(dtype, where):
    """From MIN_ELEMENTS indices both bounds come from one compiled min-max pass
    (codegen/min_max.py): an offending value anywhere is found, NumPy's message names it."""
    from xlanb_runtime.codegen.min_max import MIN_ELEMENTS, min_max
    rng = np.random.default_rng(5)
    low = -100 if np.dtype(dtype).kind == "i" else 0
    idx = rng.integers(low, 100, MIN_ELEMENTS + 3).astype(dtype)
    assert min_max(idx) == (idx.min(), idx.max())
    x = np.arange(100.0)
    f = xlanb.jit(getitem)
    np.testing.assert_array_equal(f(x, idx), getitem(x, idx))
    idx[where] = 117
    assert min_max(idx) == (idx.min(), 117)
    with pytest.raises(IndexError, match="index 117 is out of bounds for axis 0 with size 100"):
        f(x, idx)
