"""The NumPy boundary: views, writes to arguments, aliasing, made arrays, scalars, errors.

Each test runs the same function with NumPy on copies and with xlanb (jit, and the
auto-clustering fallback) on other copies, and compares the returned values *and every
argument after the call*.
"""
from __future__ import annotations

import copy
import tempfile
import warnings

import numpy as np
import pytest

import xlanb
from xlanb.errors import (AliasingError, ArraySubclassError, ConcretizationError,
                          UnsupportedDTypeError,
                          InternalCompilerError,
                          ReadOnlyArrayError, ShapeMismatchError,
                          UnsupportedNumPyFunctionError)
from xlanb.tracing.views import reshape_strides
from tolerance import assert_close

MODES = [pytest.param(True, id="jit"), pytest.param(False, id="autocluster")]


def assert_same_call(fn, args, must_compile=True):
    """fn on copies of args with NumPy and with xlanb: same returns, same arguments."""
    expected_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = fn(*expected_args)
    got = xlanb.jit(fn, must_compile=must_compile)(*got_args)
    for e, g in zip(expected_args, got_args):
        if isinstance(e, np.ndarray):
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_array_equal(g, e)
    e_leaves = expected if isinstance(expected, tuple) else (expected,)
    g_leaves = got if isinstance(got, tuple) else (got,)
    for e, g in zip(e_leaves, g_leaves):
        if e is None:
            assert g is None
            continue
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_array_equal(g, e)
        for i, arg in enumerate(expected_args):
            if e is arg:                                 # NumPy returned the argument
                assert g is got_args[i]
            elif isinstance(arg, np.ndarray) and isinstance(e, np.ndarray) and \
                    np.shares_memory(e, arg):
                assert np.shares_memory(g, got_args[i])  # ... or a view of it
    return got_args


def ints(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % 7 - 3


# -- writes through views -----------------------------------------------------------------

def _row_view(m):
    row = m[0]
    row *= 2
    return m


def _transpose_view(m):
    m.T[1] = 5
    m.swapaxes(0, 1)[0, 1:] += 1


def _reshape_view(m):
    flat = m.reshape(-1)
    flat[::3] = -1
    m.ravel()[1] = 9
    return m[..., None][0]


def _nested_views(m):
    inner = m[1:, ::-1][:, 1:3]
    inner[...] = inner * 10
    return inner


def _element_is_a_scalar(m):
    s = m[0, 1]                  # NumPy: a scalar (a copy); `s += 1` rebinds s
    s += 1
    t = m[1][2]
    t *= 3
    u = m[2, 3].reshape(1)       # a scalar's reshape is a new array
    u[0] = 50
    v = m[0, ...]                # with an Ellipsis: a view, the write reaches m
    v[0] = -7
    return s, t, u, np.ascontiguousarray(m[1, 1])


def _copy_is_not_a_view(m):
    t = m.T.reshape(-1)          # a copy: writes to it must not reach m
    t[0] = 100
    c = m[[0, 1]]                # advanced indexing copies too
    c[:] = 0
    return t


def _function_views(m):
    """NumPy functions that return views (these were copies: writes were lost)."""
    np.flip(m)[0, 0] = 100
    np.fliplr(m)[1, 0] = 101
    np.flipud(m)[0, 1] += 5
    np.rot90(m)[0, 1] = 102
    np.atleast_3d(m)[2, 1, 0] = 103
    np.atleast_2d(m[0])[0, 2] = 104
    np.split(m, 2, axis=1)[1][2] = -1
    np.array_split(m, 3)[1][0, 0] = 105
    np.hsplit(m, 4)[3][:] = 7
    a, _ = np.broadcast_arrays(m, m)
    a[2, 2] = 106
    return m


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [_row_view, _transpose_view, _reshape_view, _nested_views,
                                _copy_is_not_a_view, _element_is_a_scalar,
                                _function_views])
def test_writes_through_views_reach_the_argument(fn, mode):
    assert_same_call(fn, (ints(3, 4),), mode)


@pytest.mark.parametrize("shape,strides,new", [
    ((3, 4), (4, 1), (12,)), ((3, 4), (1, 3), (12,)), ((3, 4), (8, 2), (12,)),
    ((3, 4), (8, 2), (3, 2, 2)), ((2, 1, 6), (6, 6, 1), (2, 3, 2)), ((4, 3), (3, 1), (2, 6)),
    ((6,), (-1,), (2, 3)), ((0, 3), (3, 1), (3, 0))])
def test_reshape_view_rule_matches_numpy(shape, strides, new):
    base = np.zeros(64)
    array = np.lib.stride_tricks.as_strided(base[20:], shape, [8 * s for s in strides])
    reshaped = np.reshape(array, new)    # a view where NumPy can make one, else a copy
    viewed = reshaped.size == 0 or np.shares_memory(reshaped, base)
    expected = tuple(s // 8 for s in reshaped.strides) if viewed else None
    got = reshape_strides(shape, strides, new)
    if expected is None or 0 in shape:
        assert (got is None) == (expected is None)
    else:
        assert got == expected


_RAVELS = {      # ravel is a view only where the elements are contiguous in its order
    "strided": lambda m: m[:, ::2].ravel(), "column": lambda m: m[:, 1].ravel(),
    "reversed": lambda m: m[::-1].ravel(), "row": lambda m: m[1].ravel(),
    "one row strided": lambda m: m[:1, ::2].ravel(), "flatten": lambda m: m.flatten(),
    "T K": lambda m: m.T.ravel("K"), "T A": lambda m: m.T.ravel(order="A"),
    "F": lambda m: m.ravel("F"), "T F": lambda m: m.T.ravel("F"),
    "reversed K": lambda m: m[::-1, ::2].T.ravel("K"), "T flatten K": lambda m: m.T.flatten("K"),
    "broadcast K": lambda m: np.broadcast_to(m[0], (2, 3, 4)).ravel("K"),
}


@pytest.mark.parametrize("name", list(_RAVELS))
def test_ravel_order_and_view_or_copy(name):
    """x[::2].ravel() and m.flatten() were views (a write reached the argument), and
    ravel('K'/'A') of m.T read in C order instead of memory order."""
    def write_through(m):
        r = _RAVELS[name](m)
        r[0] = r[-1] = 100
        return r * 1
    assert_same_call(write_through, (ints(3, 4),))


_NEW_LAYOUTS = {   # NumPy lays these out in the input's memory order, or as asked
    "ufunc": lambda m: m.T * 2, "negative": lambda m: np.negative(m.T), "where": lambda m:
    np.where(m.T > 0, m.T, 0), "np.copy": lambda m: np.copy(m.T), "astype": lambda m:
    m.T.astype(np.float32), "zeros_like": lambda m: np.zeros_like(m.T) + m.T,
    "asfortranarray": lambda m: np.asfortranarray(m), "array": lambda m: np.array(m.T),
    "ascontiguousarray": lambda m: np.ascontiguousarray(m.T), "copy F": lambda m:
    m.copy(order="F"), "array ndmin": lambda m: np.array(m[0], ndmin=3),
}


@pytest.mark.parametrize("name", list(_NEW_LAYOUTS))
def test_new_arrays_have_numpys_layout(name):
    """`y = m.T * 2` is F-contiguous in NumPy, so `y.reshape(-1)` and `y.ravel()` are
    copies; they were views (a write reached `y`), np.asfortranarray(m) and
    np.ascontiguousarray(m.T) returned `m` itself (a write reached the argument), ravel('K')
    and nditer read in C order, and np.array(x, ndmin=3) ignored ndmin."""
    def write_through(m):
        y = _NEW_LAYOUTS[name](m)
        y.reshape(-1)[0] = 100
        y.ravel()[-1] = -100
        order = np.array([v * 1 for v in np.nditer(y)])
        return y, y.strides, y.ravel("K") * 1, order
    assert_same_call(write_through, (ints(3, 4),))


def test_strides_are_bytes():
    """x.strides gave element strides ((4, 1) for a (3, 4) float64 argument); a 0-d
    argument's layout was unknown (its strides, ravel('K') and nditer were refused)."""
    got = xlanb.jit(lambda m: (m.strides, m.T[:, ::2].strides, (m * 2).strides))(ints(3, 4))
    assert got == ((32, 8), (8, 64), (32, 8))
    zero_d = lambda z: (z.strides, z.ravel("K") * 1, [v * 1 for v in np.nditer(z)])  # noqa
    assert_same_call(zero_d, (np.array(3.5),))


# -- in-place idioms ----------------------------------------------------------------------

def _augmented(p):
    p /= p.sum()
    p[1:-1] += 0.5 * p[:-2]


def _ufunc_out(x, y):
    np.add(x, y, out=x)
    np.multiply(x, 2.0, out=y, where=x > 1.0)
    return np.maximum(x, 1.5, out=x)


def _copyto_fill(x, y):
    np.copyto(x[::2], y[1::2])
    y.fill(3)


def _mask_and_index_writes(x):
    x[x < 0.5] = 0.0
    x[[0, 2]] = -1.0


def _int_division_in_place(a):
    a //= 2
    a %= 3


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn,make", [
    (_augmented, lambda r: (r.random(8),)),
    (_ufunc_out, lambda r: (r.random(6) * 2, r.random(6))),
    (_copyto_fill, lambda r: (r.random(8), r.random(8))),
    (_mask_and_index_writes, lambda r: (r.random(6),)),
    (_int_division_in_place, lambda r: (r.integers(-9, 9, 7),))])
def test_in_place_idioms(fn, make, mode):
    assert_same_call(fn, make(np.random.default_rng(0)), mode)


def test_int_array_plus_float_in_place_is_numpys_cast_error():
    def f(a):
        a += 0.5
    with pytest.raises(TypeError):
        f(np.arange(3))
    with pytest.raises(TypeError):
        xlanb.jit(f)(np.arange(3))


def test_only_written_arguments_are_written_back():
    f = xlanb.jit(lambda a, b: np.add(a, b, out=a) * 0 + b)
    compiled = f.lower(np.ones(3), np.ones(3)).compile()
    assert compiled.traced.writebacks and len(compiled.traced.writebacks) == 1
    assert compiled.traced.param_leaves[compiled.traced.writebacks[0][0]] == 0


def test_read_only_argument_write_is_a_named_value_error():
    x = np.arange(4.0)
    x.flags.writeable = False

    def f(x):
        x[0] = 1.0
    with pytest.raises(ReadOnlyArrayError) as info:
        xlanb.jit(f)(x)
    assert isinstance(info.value, ValueError) and "read-only" in str(info.value)
    np.testing.assert_array_equal(x, np.arange(4.0))


# -- returning arguments ------------------------------------------------------------------

def test_returned_argument_is_the_callers_object():
    x = np.arange(5.0)
    assert xlanb.jit(lambda x: x)(x) is x
    view = xlanb.jit(lambda x: x[1:])(x)
    assert np.shares_memory(view, x) and view.shape == (4,)
    a, b = xlanb.jit(lambda x, y: (y, x))(x, x[::2])
    assert a.base is x or np.shares_memory(a, x)


def _outputs_sharing(results) -> list:
    return [[(a is b, np.shares_memory(a, b)) for b in results] for a in results]


@pytest.mark.parametrize("mode", MODES)
def test_returned_arrays_share_memory_as_numpys_do(mode):
    def f(a, b):
        out = a * 2
        q, r = np.divmod(a, b)
        return out, out[1:], out, out.T, q, a // b, r
    a, b = np.arange(1, 7), np.full(6, 4)
    g = xlanb.jit(f, must_compile=mode)
    for _ in range(2):                 # the first call, then the cached program
        got, want = g(a, b), f(a, b)
        for x, y in zip(got, want):
            np.testing.assert_array_equal(x, y)
        # the same array twice and its views, as NumPy; equal values computed twice
        # (`a // b`, `np.divmod(a, b)[0]`) are two arrays
        assert _outputs_sharing(got) == _outputs_sharing(want)


def _shape_set_in_place(x):
    y = x * 2
    before = y[1:3]                          # a view made before: keeps its shape
    y.shape = (2, 3)
    y[0] += 1
    z = np.zeros(6)
    z.shape = 3, -1
    z[1] = 5
    col = x[:, None][:, 0]
    col.shape = (3, 2)                       # a view of the argument, reshaped in place
    col[0] = -1
    return y, before, z


@pytest.mark.parametrize("mode", MODES)
def test_setting_shape_reshapes_in_place(mode):
    assert_same_call(_shape_set_in_place, (np.arange(6.0),), mode)

    def transposed(x):
        t = (x * 1).T
        t.shape = (6,)                       # NumPy: a copy would be needed, refused

    def argument(x):
        x.shape = (2, 3)                     # would change the caller's array object
    with pytest.raises(ShapeMismatchError, match="in-place modification"):
        xlanb.jit(transposed, must_compile=mode)(np.ones((3, 2)))
    with pytest.raises(UnsupportedNumPyFunctionError, match="shape of an argument"):
        xlanb.jit(argument, must_compile=mode)(np.ones(6))


# -- aliasing -----------------------------------------------------------------------------

def _add_shifted(a, b):
    a[1:] += b[:-1]
    return b.sum()


@pytest.mark.parametrize("mode", MODES)
def test_the_same_array_twice(mode):
    base = np.arange(8.0)
    expected, got = base.copy(), base.copy()
    assert _add_shifted(expected, expected) == xlanb.jit(_add_shifted,
                                                          must_compile=mode)(got, got)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("mode", MODES)
def test_overlapping_views(mode):
    expected, got = np.arange(10.0), np.arange(10.0)
    r1 = _add_shifted(expected[1:], expected[:-1])
    r2 = xlanb.jit(_add_shifted, must_compile=mode)(got[1:], got[:-1])
    assert r1 == r2
    np.testing.assert_array_equal(got, expected)


def test_alias_pattern_is_part_of_the_signature():
    f = xlanb.jit(_add_shifted)
    x, y = np.arange(8.0), np.arange(8.0)
    f(x, y)
    z = np.arange(8.0)
    f(z, z)
    assert f.cache_info().currsize == 2
    w = np.arange(8.0)
    expected = w.copy()
    _add_shifted(expected, expected)
    f(w, w)
    np.testing.assert_array_equal(w, expected)


def _double_then_read(a, b):
    a *= 2
    return b * 1.0


def test_where_views_sit_in_the_owner_is_part_of_the_signature():
    """A group of overlapping views is traced with its offsets baked in: A[2:6] += A[0:4]
    after A[1:5] += A[0:4] (same shapes, strides and pattern) reused the first program
    and added at offset 1; a larger owner gave NumPy's broadcast ValueError."""
    f = xlanb.jit(_add_shifted)
    for size, lo in ((10, 1), (10, 2), (12, 2)):
        got, expected = np.arange(float(size)), np.arange(float(size))
        assert f(got[lo:lo + 4], got[0:4]) == _add_shifted(expected[lo:lo + 4],
                                                           expected[0:4])
        np.testing.assert_array_equal(got, expected)


def _foreign_views():
    """Pairs of arrays over one buffer whose `base` is not the same ndarray."""
    x = np.arange(8.0)
    buffer = bytearray(np.arange(8.0).tobytes())
    wrapped = type("Wrapped", (), {"__array_interface__": x.__array_interface__})()
    m = np.frombuffer(bytearray(np.arange(8.0).tobytes()))
    return [(np.frombuffer(buffer), np.frombuffer(buffer)),
            (x, np.lib.stride_tricks.as_strided(x)),
            (x, np.asarray(wrapped)),
            (m, m[:]),
            (m[2:], m[:-2])]


@pytest.mark.parametrize("case", range(5))
@pytest.mark.parametrize("fn", [_double_then_read, _add_shifted])
def test_memory_shared_through_a_buffer_is_found(fn, case):
    """frombuffer, as_strided and __array_interface__ arrays over one memory have different
    bases: they were taken as unrelated, so `b` was read before `a`'s write reached it."""
    f = xlanb.jit(fn)
    f(np.zeros(8), np.zeros(8))                 # a program for unrelated arrays first
    got, expected = _foreign_views()[case], _foreign_views()[case]
    np.testing.assert_array_equal(f(*got), fn(*expected))
    np.testing.assert_array_equal(got[0], expected[0])


def test_ndarray_subclass_arguments_are_refused_or_run_with_numpy():
    """np.matrix's `*` is a matrix product and a masked array's results are masked: traced
    as plain ndarrays they gave the elementwise product and unmasked data, also from the
    program an ndarray call had compiled (same shape, dtype and strides)."""
    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    f = xlanb.jit(lambda a, b: a * b)
    f(np.asarray(m), np.asarray(m))
    with pytest.raises(ArraySubclassError, match="numpy.matrix"):
        f(m, m)
    got = xlanb.jit(lambda a, b: a * b, must_compile=False)(m, m)
    assert type(got) is np.matrix
    np.testing.assert_array_equal(got, m * m)
    masked = np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    with pytest.raises(ArraySubclassError):
        xlanb.jit(lambda a: a * 2)(masked)
    mapped = np.memmap(tempfile.mktemp(), dtype=np.float64, mode="w+", shape=(3,))
    np.testing.assert_array_equal(xlanb.jit(lambda a: a + 1)(mapped), np.ones(3))


UNSUPPORTED_DTYPE_ARGUMENTS = {
    "big-endian": (np.arange(4, dtype=">f8"), "byte-swapped"),
    "long double": (np.arange(4, dtype=np.longdouble), "float128"),
    "structured": (np.zeros(3, dtype=[("a", "f8"), ("b", "i4")]), "structured"),
    "unitless timedelta": (np.array([1, 2], dtype="timedelta64"), "timedelta64"),
    "big-endian datetime": (np.array(["2020-01-01"], dtype=">M8[D]"), "datetime64"),
    "strings": (np.array(["ab", "c"]), "str"),
    "long double scalar": (np.longdouble(2), "float128"),
}


@pytest.mark.parametrize("case", list(UNSUPPORTED_DTYPE_ARGUMENTS))
def test_arguments_of_dtypes_xlanb_does_not_compile_are_a_named_error(case):
    """A big-endian float64 reached Numba (NumbaNotImplementedError), a string or record
    array the IR printer (KeyError): both surfaced as internal errors."""
    x, words = UNSUPPORTED_DTYPE_ARGUMENTS[case]

    def fn(a):
        return np.copy(a)
    with pytest.raises(UnsupportedDTypeError, match=words) as raised:
        xlanb.jit(fn)(x)
    assert "argument 0" in str(raised.value) and "must_compile=False" in str(raised.value)
    got, expected = xlanb.jit(fn, must_compile=False)(x), fn(x)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("make, words", [
    (lambda x: np.zeros(3, np.longdouble) + x, "`constant`.*float128"),
    (lambda x: x.astype(np.longdouble).sum(), "`convert`.*float128"),
    (lambda x: x.astype(">f8") * 2, "`convert`.*byte-swapped"),
    (lambda x: np.array(["a", "b"]), "output 0.*str"),
])
def test_arrays_made_in_a_dtype_xlanb_does_not_compile_name_the_op(make, words):
    x = np.arange(3.0)
    with pytest.raises(UnsupportedDTypeError, match=words):
        xlanb.jit(make)(x)
    got, expected = xlanb.jit(make, must_compile=False)(x), make(x)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_writes_into_an_argument_that_overlaps_itself_are_a_named_error():
    """x = as_strided(b, (3, 3), (8, 8)): x[0, 1] and x[1, 0] are one float.  After
    x[0, 1] = 5, NumPy reads 5 at x[1, 0]; the trace read 0 and wrote b[1] = 0 back."""
    def write_then_read(x):
        x[0, 1] = 5.0
        return x[1, 0] * 1.0

    def read(x):
        return x * 2
    b = np.zeros(5)
    x = np.lib.stride_tricks.as_strided(b, (3, 3), (8, 8))
    with pytest.raises(AliasingError, match="overlap each other"):
        xlanb.jit(write_then_read)(x)
    assert xlanb.jit(write_then_read, must_compile=False)(x) == 5.0 and b[1] == 5.0
    np.testing.assert_array_equal(xlanb.jit(read)(x), read(x))


def test_views_of_different_dtypes_are_a_named_error():
    x = np.zeros(4)
    with pytest.raises(AliasingError):
        xlanb.jit(lambda a, b: (a.__setitem__(0, 1.0), b + 0)[1])(x, x.view(np.int64))


# -- arrays made inside -------------------------------------------------------------------

def _grid(x):
    out = np.empty((3, x.shape[0]))
    for i in range(3):
        out[i] = x * i
    acc = np.zeros_like(x)
    acc[1:] = np.cumsum(x)[:-1] if False else x[:-1]
    return out, acc, np.array([x.sum(), x.max()]), np.asarray([[x[0], 1.0], [2.0, x[1]]])


def _made_arrays(x):
    e = np.eye(3)
    e[0] = x[:3]
    r = np.arange(4.0)
    r[::2] = x[:2]
    lin = np.linspace(0, 1, 4)
    lin += x[:4]
    full = np.full((2, 2), 7.0)
    full[0, 0] = x[0]
    return e, r, lin, full


def _sized_by_calls(x):
    out = np.empty(len(x))                        # a call nested in the creation call
    for i in range(len(x)):
        out[i] = x[i] * i
    z = np.empty(len(x), dtype=np.complex128)
    z.real = x
    z.imag = out
    w = np.zeros((2, max(len(x), 2)), dtype=complex)
    w.real[1] = x
    return out, z, w


def _ndarray_constructor(x):
    """npbench's vadv and nbody make their work arrays with the type's constructor."""
    col = np.ndarray((3, x.shape[0]), dtype=x.dtype)     # uninitialised, as np.empty
    energy = np.ndarray(len(x) + 1, dtype=np.float64)
    col[:] = x * 2
    energy[0] = x.sum()
    energy[1:] = col[1] - x
    return col, energy, isinstance(col, np.ndarray) == isinstance(x, np.ndarray)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [_grid, _made_arrays, _sized_by_calls, _ndarray_constructor])
def test_arrays_made_inside_take_traced_writes(fn, mode):
    assert_same_call(fn, (np.random.default_rng(1).random(5),), mode)


def test_an_ndarray_over_a_traced_buffer_is_a_named_error():
    """np.ndarray(shape, dtype, buffer=x) reinterprets x's bytes: a named error (NumPy's
    constructor refused the Tracer with a bare TypeError)."""
    def f(x):
        return np.ndarray((2,), dtype=np.float64, buffer=x, offset=8) * 2
    with pytest.raises(UnsupportedNumPyFunctionError, match="np.ndarray"):
        xlanb.jit(f)(np.arange(4.0))


def test_made_index_arrays_stay_concrete():
    def f(x):
        idx = np.arange(x.shape[0])[::-1]
        total = 0.0
        for i in np.arange(3):
            total = total + x[i]
        return x[idx], total
    assert_same_call(f, (np.arange(5.0),))


# -- Python scalars -----------------------------------------------------------------------

def test_python_scalars_are_traced_weakly_and_do_not_recompile():
    f = xlanb.jit(lambda x, s: x * s + s * s)
    x = np.arange(4, dtype=np.float32)
    for s in (0.5, 0.7, 1.5):
        got = f(x, s)
        assert got.dtype == np.float32                      # weak, as in NumPy 2
        np.testing.assert_allclose(got, x * s + s * s, rtol=1e-6)
    assert f.cache_info().misses == 1


def test_linspace_between_scalar_arguments_compiles_once():
    def grid(L, a, n):
        return np.linspace(0, L, n) ** 2, np.linspace(-a, a, n, endpoint=False), \
            np.linspace(a, L, n, retstep=True)[1]
    f = xlanb.jit(grid)
    for L, a in ((1.0, 0.5), (2.5, 1e-17), (3.7, 3.7)):
        got, want = f(L, a, 5), grid(L, a, 5)
        for g, w in zip(got, want):
            # NumPy's formula start + i*step within an ulp or two (a CPU with FMA may fuse
            # the multiply-add: one rounding instead of two), its ends exact
            assert_close(g, w, k=2, scale=np.abs(w).max())
            assert np.ravel(g)[0] == np.ravel(w)[0]
        assert got[0][-1] == want[0][-1]              # endpoint=True: the stop itself
    assert f.cache_info().misses == 1


def test_scalar_used_as_a_size_becomes_static():
    f = xlanb.jit(lambda x, n: np.zeros(n) + x[:n].sum())
    x = np.arange(6.0)
    for n in (2, 3, 2):
        np.testing.assert_array_equal(f(x, n), np.zeros(n) + x[:n].sum())
    assert f.cache_info().misses == 2


@pytest.mark.parametrize("mode", MODES)
def test_python_bool_arguments_keep_pythons_arithmetic(mode):
    def f(x, flag):                      # Python: True + True == 2, ~True == -2
        return np.where(flag, x, -x), x * flag, flag + flag, ~flag, x.astype(np.float32) * flag
    g = xlanb.jit(f, must_compile=mode)
    for flag in (True, False, True):
        for got, want in zip(g(np.arange(3.0), flag), f(np.arange(3.0), flag)):
            assert np.asarray(got).dtype == np.asarray(want).dtype
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", MODES)
def test_python_int_out_of_range_of_an_int8_array_raises_as_in_numpy(mode):
    def f(x, k):
        return x + k
    g = xlanb.jit(f, must_compile=mode)
    x = np.arange(4, dtype=np.int8)
    for k in (5, 300, 7, -200):                  # NumPy 2: OverflowError when k does not fit
        if -128 <= k <= 127:
            np.testing.assert_array_equal(g(x, k), f(x, k))
        else:
            with pytest.raises(OverflowError, match="out of bounds for int8"):
                g(x, k)
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        xlanb.jit(lambda x: x + 300, must_compile=mode)(x)


def test_scalar_arguments_are_immutable():
    def f(x, s):
        s += 1.0
        return x * s
    assert_same_call(f, (np.arange(3.0), 2.0))


# -- errors ---------------------------------------------------------------------------------

def test_internal_failures_are_named(monkeypatch, tmp_path):
    import functools

    from xlanb_runtime.passes.pipeline import PASSES
    # a cache of its own: a record of the same program (another test, an earlier run)
    # would load without running the passes (program_cache.py)
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path))
    # a bug inside the compiler: a KeyError out of a pass (raised from xlanb's own frame)
    monkeypatch.setitem(PASSES, "cse", functools.partial(dict.__getitem__, {}))
    with pytest.raises(InternalCompilerError) as info:
        xlanb.jit(lambda x: x * 2)(np.arange(3.0))
    assert "KeyError" in str(info.value) and "test_boundary.py" in str(info.value)
    x = np.arange(3.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = xlanb.jit(lambda x: x * 2, must_compile=False)(x)
    np.testing.assert_array_equal(out, x * 2)
    assert any("NumPy" in str(w.message) for w in caught)


def test_a_conversion_error_numpy_swallows_is_still_named():
    def energies(x, n):
        out = np.ndarray(n, buffer=bytearray(8 * n))   # over a buffer: NumPy's own array
        for i in range(n):
            out[i] = (x ** i).sum()          # NumPy: float(tracer) fails -> its own ValueError
        return out

    def caught(x):
        try:
            k = int(x.sum())
        except TypeError:                    # the user's code goes on without the value
            k = 0
        return x * k
    x = np.arange(3.0)
    for fn, args in ((energies, (x, 3)), (caught, (x,))):
        with pytest.raises(ConcretizationError):
            xlanb.jit(fn)(*args)
        np.testing.assert_array_equal(xlanb.jit(fn, must_compile=False)(*args), fn(*args))


def test_user_exceptions_pass_through():
    def f(x):
        raise KeyError("mine")
    with pytest.raises(KeyError):
        xlanb.jit(f)(np.ones(2))


def test_concretization_still_named():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    with pytest.raises(ConcretizationError):
        xlanb.jit(f)(np.ones(3))


# -- NumPy's random numbers ---------------------------------------------------------------

def test_global_random_draws_are_fresh_under_jit_and_autoclustering():
    def f(x):
        return x + np.random.rand(3)
    for g in (xlanb.jit(f), xlanb.jit(f, must_compile=False)):
        assert not np.array_equal(g(np.zeros(3)), g(np.zeros(3)))
        np.random.seed(0)
        expected = f(np.zeros(3))
        np.random.seed(0)
        np.testing.assert_array_equal(g(np.zeros(3)), expected)


def test_generator_argument_draws_follow_its_state():
    def f(x, rng):
        return x + rng.normal(size=3)
    g = xlanb.jit(f, must_compile=False)
    rng, reference = np.random.default_rng(0), np.random.default_rng(0)
    for _ in range(2):
        np.testing.assert_array_equal(g(np.zeros(3), rng), reference.normal(size=3))


def test_seeded_generator_made_inside_is_compiled():
    def f(x):
        rng = np.random.default_rng(0)      # NumPy's compiled code allocates through np.empty
        return x + rng.normal(size=3)
    np.testing.assert_array_equal(xlanb.jit(f)(np.zeros(3)), f(np.zeros(3)))


# -- complex parts as views ---------------------------------------------------------------

def _write_parts(z):
    z.real[1:] = 0
    z.imag *= 2
    part = z.real
    part += 1
    return z.imag.sum() + z.real.sum()


def _assign_parts(z):
    z.real = z.imag
    return z


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [_write_parts, _assign_parts])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_real_and_imag_are_writable_views(fn, dtype, mode):
    assert_same_call(fn, (np.array([1 + 2j, 3 - 1j, 2 + 2j], dtype),), mode)


@pytest.mark.parametrize("fn", [lambda x: np.broadcast_to(x, (2, 3)).__setitem__(0, 1),
                                lambda x: np.broadcast_arrays(x, x[:, None])[0].fill(1)],
                         ids=["broadcast_to", "broadcast_arrays"])
def test_broadcast_views_refuse_writes(fn):
    """NumPy's broadcast views are read-only (broadcast_arrays: writes to overlapping
    memory, with a warning): a compiled write raises instead of changing a copy."""
    with pytest.raises(ReadOnlyArrayError):
        xlanb.jit(fn)(np.arange(3.0))


def test_imag_of_a_real_array_is_read_only_zeros():
    def f(x):
        return x.imag.sum() + x.real.sum()
    assert_same_call(f, (np.arange(3.0),))


def test_numpy_namespace_is_numpys_own_outside_traces():
    import numba
    xlanb.jit(lambda x: np.zeros(2) + x)(np.ones(2))
    assert np.zeros.__module__ == "numpy" and not hasattr(np.zeros, "__wrapped__")

    @numba.njit
    def user_kernel(n):                   # Numba resolves np.empty by identity
        return np.empty(n).shape[0] + np.zeros(n).sum()
    assert user_kernel(3) == 3.0


FORTRAN_CASES = {
    "elementwise": lambda x, y: np.exp(x) * 2 + y,
    "row and column sums": lambda x, y: (x.sum(axis=1), x.sum(axis=0), x.sum()),
    "matmul": lambda x, y: (x @ y.T, x.T @ y),
    "transposed copy": lambda x, y: x.T.copy(),
    "slices": lambda x, y: x[1:3, ::2] * 2 + y[0, ::2],
    "flags and strides": lambda x, y: (x.flags.owndata, x.flags.f_contiguous,
                                       x.flags.c_contiguous, x.strides, x.T.strides),
    "ravel": lambda x, y: (x.ravel() * 2, x.reshape(-1).sum()),
    "in place": lambda x, y: x.__iadd__(y),
    "row and column writes": lambda x, y: (x.__setitem__((0, slice(None)), 7.0),
                                           x.__setitem__((slice(None), 1), y[:, 1] * 2)),
    "returned": lambda x, y: (x, x.T, x[:, 1]),
}


@pytest.mark.parametrize("name", sorted(FORTRAN_CASES))
def test_fortran_ordered_arguments_go_in_transposed(name):
    """A Fortran-ordered argument is the program's C-ordered `x.T` parameter, seen by the
    function transposed back (a view): returns, writes and flags as NumPy's, over the
    guard's calls too (the first call takes the general path)."""
    fn = FORTRAN_CASES[name]
    rng = np.random.default_rng(5)
    x = np.asfortranarray(rng.standard_normal((6, 5)))
    y = np.asfortranarray(rng.standard_normal((6, 5)))
    expected_args, got_args = [x.copy(order="F"), y.copy(order="F")], \
        [x.copy(order="F"), y.copy(order="F")]
    jitted = xlanb.jit(fn, tiered=False)
    for _ in range(3):
        expected, got = fn(*expected_args), jitted(*got_args)
        for e, g in zip(expected_args, got_args):
            np.testing.assert_array_equal(g, e)
            assert g.flags.f_contiguous
        e_leaves = expected if isinstance(expected, tuple) else (expected,)
        g_leaves = got if isinstance(got, tuple) else (got,)
        for e, g in zip(e_leaves, g_leaves):
            if isinstance(e, (np.ndarray, np.floating)):
                assert g.dtype == e.dtype and g.shape == e.shape
                assert_close(g, e)
            else:
                assert g == e
    traced = jitted.lower(*got_args).compile().traced
    assert traced.transposed_params == {0: (1, 0), 1: (1, 0)}
    if name == "returned":                    # the caller's own array and views of it
        got = jitted(*got_args)
        assert got[0] is got_args[0] and np.shares_memory(got[2], got_args[0])


MOVED_AXES_CASES = {
    "mean over an axis": lambda x, y: x.mean(axis=1),
    "centred": lambda x, y: x - x.mean(axis=0, keepdims=True),
    "sum of a product": lambda x, y: (x * y).sum(axis=(0, 2)),
    "in place": lambda x, y: x.__iadd__(y),
    "plane write": lambda x, y: x.__setitem__((slice(None), 0), y[:, 1] * 2),
    "returned": lambda x, y: (x, x[1], np.exp(x)),
    "cumsum and sort": lambda x, y: (np.cumsum(x, axis=2), np.sort(y, axis=0)),
}


@pytest.mark.parametrize("name", sorted(MOVED_AXES_CASES))
def test_arguments_contiguous_in_moved_axes_go_in_transposed(name):
    """An argument contiguous in another axis order than C or F (`a.transpose(2, 0, 1)`,
    np.moveaxis of a C array) was copied into C order on every call (a mean over one axis
    of a (64, 256, 128) one: 10.8 ms, NumPy 0.78); it now goes in as its C-ordered
    transpose, as a Fortran-ordered one does: the same returns, writes and layouts."""
    fn = MOVED_AXES_CASES[name]
    rng = np.random.default_rng(9)
    x, y = (rng.standard_normal((4, 5, 6)).transpose(2, 0, 1) for _ in range(2))
    expected_args, got_args = [x.copy(order="K"), y.copy(order="K")], \
        [x.copy(order="K"), y.copy(order="K")]
    jitted = xlanb.jit(fn, tiered=False)
    for _ in range(3):                       # the general path, then the call guard
        expected, got = fn(*expected_args), jitted(*got_args)
        for e, g in zip(expected_args, got_args):
            assert_close(g, e)
            assert g.strides == e.strides
        e_leaves = expected if isinstance(expected, tuple) else (expected,)
        g_leaves = got if isinstance(got, tuple) else (got,)
        for e, g in zip(e_leaves, g_leaves):
            if isinstance(e, np.ndarray):
                assert _strides_of_long_axes(g) == _strides_of_long_axes(e)
            assert_close(g, e)
    traced = jitted.lower(*got_args).compile().traced
    assert traced.transposed_params == {0: (1, 2, 0), 1: (1, 2, 0)}
    if name == "returned":
        got = jitted(*got_args)
        assert got[0] is got_args[0] and np.shares_memory(got[1], got_args[0])


def test_a_returned_transpose_is_a_view_in_numpys_layout():
    """np.exp of a Fortran-ordered x is computed in x's memory order and returned
    Fortran-ordered, as NumPy returns it; `(a * 2).T` is a view of the product."""
    rng = np.random.default_rng(6)
    x = np.asfortranarray(rng.standard_normal((40, 30)))
    a = rng.standard_normal((40, 30))
    for fn, arg in ((lambda x: np.exp(x) * 2 + 1, x), (lambda a: (a * 2).T, a)):
        compiled = xlanb.jit(fn, tiered=False).lower(arg).compile()
        got, want = compiled(arg), fn(arg)
        assert got.flags.f_contiguous == want.flags.f_contiguous and \
            got.flags.c_contiguous == want.flags.c_contiguous
        assert_close(got, want)
        assert [k.kind for k in compiled.kernels] == ["loop", "library"]
        assert "is a view of its operand's buffer" in compiled.kernels[1].decisions[0]


_RETURNED_LAYOUTS = {   # what the caller gets, laid out as NumPy lays it out
    "ascontiguousarray of a computed transpose": lambda x: np.ascontiguousarray((x * 2).T),
    "copy of a computed transpose": lambda x: (x * 2).T.copy(),
    "np.array order C": lambda x: np.array((x + 1).T, order="C"),
    "asfortranarray": lambda x: np.asfortranarray(x * 2),
    "copy order F of a transpose": lambda x: (x * 2).T.copy(order="F"),
    "K order of a transpose": lambda x: (x * 2).T + 1,
    "3-D moved axes, contiguous": lambda x: np.ascontiguousarray(
        np.moveaxis((x * 2).reshape(x.shape[0] // 2, 2, -1), 0, -1)),
    "two outputs": lambda x: (np.ascontiguousarray((x - 1).T), (x - 1).T),
}


@pytest.mark.parametrize("name", list(_RETURNED_LAYOUTS))
def test_returned_arrays_have_numpys_memory_layout(name):
    """np.ascontiguousarray((x * 2).T) came back as a transposed view of the product
    (F-ordered: C code handed it read it transposed, and `y.reshape(-1)` copied where
    NumPy's is a view); np.asfortranarray(x * 2) came back C-ordered."""
    fn = _RETURNED_LAYOUTS[name]
    for x in (np.arange(24.0).reshape(6, 4), np.random.default_rng(8).random((40, 24))):
        _assert_numpys_layouts(name, xlanb.jit(fn, tiered=False), fn, x)


_INPUT_ORDER_RESULTS = {   # NumPy lays these out in their input's memory order
    "sort": lambda x: np.sort(x, axis=1), "partition": lambda x: np.partition(x, 1, axis=0),
    "cumsum": lambda x: np.cumsum(x, axis=2), "cumprod": lambda x: x.cumprod(axis=0),
    "accumulate": lambda x: np.maximum.accumulate(x, axis=1),
    "roll": lambda x: np.roll(x, 2, axis=1), "diff": lambda x: np.diff(x, axis=0),
    "diff with prepend": lambda x: np.diff(x, axis=2, prepend=0.0),
    "concatenate": lambda x: np.concatenate([x, x * 2], axis=1),
    "stack": lambda x: np.stack([x, x], axis=1), "vstack": lambda x: np.vstack([x, x]),
    "sum": lambda x: x.sum(axis=1), "max keepdims": lambda x: x.max(axis=0, keepdims=True),
    "mean of two axes": lambda x: np.mean(x, axis=(0, 2)).reshape(-1, 1) * x[:1, :, :1],
    "std": lambda x: x.std(axis=2), "any": lambda x: (x > 0).any(axis=0),
    "count_nonzero": lambda x: np.count_nonzero(x > 0, axis=1),
    "sum where": lambda x: np.sum(x, axis=0, where=x > 0), "norm": lambda x:
    np.linalg.norm(x, axis=1), "median": lambda x: np.median(x, axis=2),
    "average weighted": lambda x: np.average(x, axis=1, weights=np.abs(x) + 1),
    "logaddexp.reduce": lambda x: np.logaddexp.reduce(x, axis=2),
    "add.reduce of a sort": lambda x: np.add.reduce(np.sort(x, axis=0), axis=1),
    "np.pad (F where x is F)": lambda x: np.pad(x, 1) * 2,
    "np.pad edge": lambda x: np.pad(x, ((0, 1), (2, 0), (1, 1)), mode="edge"),
}


@pytest.mark.parametrize("name", list(_INPUT_ORDER_RESULTS))
def test_sorts_scans_joins_and_reductions_keep_their_inputs_memory_order(name):
    """np.sort, cumsum, np.concatenate, x.sum(axis) ... of a Fortran-ordered or transposed
    array came back C-ordered where NumPy's follow the input's memory order, and as C
    order decided view or copy: `r.reshape(-1)[0] = 99` wrote into `r` where NumPy writes
    into a copy."""
    fn = _INPUT_ORDER_RESULTS[name]

    def written_through(x):
        r = fn(x)
        r.reshape(-1)[0] = 99.0
        return r

    base = np.random.default_rng(3).normal(size=(4, 5, 6))
    for x in (np.asfortranarray(base), base.transpose(1, 2, 0), base[:, ::-2, ::2],
              base.transpose(2, 0, 1)[::-1]):
        for call in range(2):              # the general path, then the call guard
            got, want = xlanb.jit(fn, tiered=False)(x), fn(x)
            assert _strides_of_long_axes(got) == _strides_of_long_axes(want), \
                (name, x.strides, got.strides, want.strides)
            assert_close(got, want)
        assert_close(xlanb.jit(written_through, tiered=False)(x), written_through(x))


def _strides_of_long_axes(a: np.ndarray) -> tuple:
    """The strides that place elements (NumPy's of a size-1 axis are arbitrary)."""
    return tuple(s for s, n in zip(a.strides, a.shape) if n != 1)


def _assert_numpys_layouts(name, jitted, fn, x):
    for call in range(3):                  # the general path, then the call guard
        got, want = jitted(x), fn(x)
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        for g, w in zip(got, want):
            assert g.strides == w.strides, (name, call, g.strides, w.strides)
            np.testing.assert_array_equal(g, w)
            assert np.shares_memory(g.reshape(-1), g) == np.shares_memory(w.reshape(-1), w)


_CHAIN_OPS = (
    lambda x: x[1:, ::2] * 2, lambda x: np.flip(x, 0) + 1, lambda x: np.pad(x, 1) * 3,
    lambda x: np.cumsum(x, axis=-1), lambda x: np.concatenate([x, x[::-1]], axis=0),
    lambda x: np.sort(x, axis=0), lambda x: x - x.mean(axis=0, keepdims=True),
    lambda x: np.diff(x, axis=1), lambda x: np.roll(x, 2, axis=-1), lambda x: x.T[1:],
    lambda x: np.stack([x, -x], axis=1).sum(axis=0), lambda x: np.where(x > 0, x, x[::-1]),
    lambda x: np.pad(x, ((1, 0),) * x.ndim, mode="edge"), lambda x: np.median(x, axis=-1),
)


@pytest.mark.parametrize("seed", range(3))
def test_random_chains_on_fortran_and_moved_axes_arguments_are_numpys(seed):
    """Chains of slices, flips, pads, scans, sorts, joins and keepdims reductions of
    Fortran-ordered and moved-axes arguments: values, the argument after a write, the
    result's layout and a write through its reshape(-1) as NumPy's (np.pad of a
    Fortran-ordered array came back C-ordered, so that write reached the pad)."""
    rng = np.random.default_rng(seed)
    for _ in range(6):
        ndim = int(rng.integers(2, 4))
        shape = [int(n) for n in rng.integers(2, 6, ndim)]
        axes = [int(a) for a in rng.permutation(ndim)]
        chain = [int(c) for c in rng.choice(len(_CHAIN_OPS), size=int(rng.integers(1, 4)))]

        def fn(x, chain=chain):
            for c in chain:
                x = _CHAIN_OPS[c](x)
            if x.ndim >= 2:
                x.reshape(-1)[0] = 99.0
            return x

        x = rng.standard_normal([shape[a] for a in axes]).transpose(np.argsort(axes))
        x = np.asfortranarray(x) if rng.random() < 0.3 else x
        got, want = xlanb.jit(fn, tiered=False)(x.copy(order="K")), fn(x.copy(order="K"))
        assert_close(got, want)
        if want.ndim >= 2 and want.size:
            assert _strides_of_long_axes(got) == _strides_of_long_axes(want), chain
