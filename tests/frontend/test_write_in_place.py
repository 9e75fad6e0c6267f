"""Programs that write their arguments (issue 15): the value written back goes straight into
the argument's buffer where the kernel reads it only at the element it writes (buffers.py
`_write_back_in_place`), else through a fresh buffer and a copy.  Either way every argument
and every returned value after a call is NumPy's, including views, slices, negative
strides, arguments that alias each other, stencils that read neighbours, and calls that
fail."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import xlanb
from xlanb.errors import AliasingError, ReadOnlyArrayError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
# the steps bench_inplace.py times: sgd, momentum, Adam, a slice update, np.add(out=)
from bench_inplace import adam, add_out, momentum, sgd, slice_update  # noqa: E402


def stencil(x, g):
    x[1:-1] = (x[:-2] + x[2:]) / 2 + g[1:-1]


def reversed_self(x, g):
    x += x[::-1] * g


def minus_mean(x, g):
    x -= x.mean() + g


def minus_first(x, g):
    x -= x[0] * g


def shifted_out(x, g):
    np.add(x[1:], g[1:], out=x[:-1])


def shifted_from_other(x, g):
    x[1:] = g[:-1] * 2.0


def shifted_self(x, g):
    x[1:] += x[:-1] * g[1:]


def shifted_cumsum(x, g):
    x[1:] = np.cumsum(g)[:-1]   # reads an intermediate of x's size: in the program's arena


def cross_update(x, y):
    x *= 2.0
    y += x                      # reads x's new value: both stored in one loop


def returns_written(w, g):
    w -= g
    return w


def returns_the_new_value(w, g):
    new = w * 2.0 + g
    w[...] = new
    return new


def returns_a_view_of_the_new_value(w, g):
    w += g
    return (w * 1.0).reshape(-1, 2)        # w * 1.0 simplifies to w's new value


def scalar_state(w, t, g):
    t += 1.0
    w -= g / t


PROGRAMS = [sgd, momentum, adam, slice_update, add_out, stencil, reversed_self,
            minus_mean, minus_first, shifted_out, shifted_from_other, shifted_self,
            shifted_cumsum, cross_update, returns_written, returns_the_new_value,
            returns_a_view_of_the_new_value]
ARITY = {momentum: 3, adam: 4, add_out: 3}

# how each argument is made from a fresh array of 3 * 16 elements
LAYOUTS = {
    "contiguous": lambda a: a[:16],
    "slice": lambda a: a[5:21],
    "step": lambda a: a[::3],
    "reversed": lambda a: a[::-1][:16],
    "column": lambda a: a.reshape(16, 3)[:, 1],
}


def _arrays(count: int, seed: int, layout: str) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [LAYOUTS[layout](rng.random(48) + 0.5) for _ in range(count)]


def _assert_close(got, want) -> None:
    """A few float64 roundings of the largest magnitude (fused multiply-adds, and
    cancellation in `x -= x[0] * g` leaves values far below their inputs)."""
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14 * np.abs(want).max())


def _compare(fn, make_args, calls: int = 3) -> None:
    """NumPy and xlanb on equal arguments, `calls` times (the call guard from the second):
    every argument and result equal after each call; a result never the caller's array
    unless NumPy returns that array."""
    jitted = xlanb.jit(fn)
    expected, got = make_args(), make_args()
    for _ in range(calls):
        want, have = fn(*expected), jitted(*got)
        for e, g in zip(expected, got):
            _assert_close(g, e)
        if want is None:
            assert have is None
            continue
        _assert_close(have, want)
        for e, g in zip(expected, got):
            assert (want is e) == (have is g)
            assert np.shares_memory(want, e) == np.shares_memory(have, g)


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_in_place_programs_leave_numpys_arguments(fn, layout):
    count = ARITY.get(fn, 2)
    _compare(fn, lambda: _arrays(count, 0, layout))


ALIASED = {                 # (name, the arguments made from one array)
    "same array twice": lambda a: [a, a],
    "reversed view": lambda a: [a, a[::-1]],
    "shifted views": lambda a: [a[1:], a[:-1]],
    "overlapping slices": lambda a: [a[:30], a[10:40]],
}


@pytest.mark.parametrize("alias", list(ALIASED))
@pytest.mark.parametrize("fn", [sgd, slice_update, stencil, reversed_self, minus_first,
                                shifted_out, shifted_from_other, shifted_self,
                                shifted_cumsum, returns_written, returns_the_new_value],
                         ids=lambda f: f.__name__)
def test_aliasing_arguments_are_written_as_numpy_writes_them(fn, alias):
    def make():
        return ALIASED[alias](np.random.default_rng(1).random(40) + 0.5)
    _compare(fn, make)


@pytest.mark.parametrize("alias", ["same array", "reversed", "shifted"])
def test_momentum_with_aliasing_state(alias):
    def make():
        a, g = np.random.default_rng(2).random(41) + 0.5, np.ones(40)
        return {"same array": [a[:40], a[:40], g], "reversed": [a[:40], a[:40][::-1], g],
                "shifted": [a[1:], a[:-1], g]}[alias]
    _compare(momentum, make)


def test_a_stencil_in_place_reads_the_old_neighbours():
    def smooth(x):
        x[1:-1] = (x[:-2] + x[2:]) / 2

    _compare(smooth, lambda: [np.arange(20.0) ** 2])


def _driver(fn, args):
    return xlanb.jit(fn).lower(*args).compile().executable.driver_source


@pytest.mark.parametrize("fn", [sgd, add_out], ids=lambda f: f.__name__)
def test_an_elementwise_update_writes_the_argument_without_a_copy(fn):
    """The written value's kernel takes the argument itself as its output: no fresh
    buffer, and the driver returns the parameter (the call then copies nothing)."""
    source = _driver(fn, _arrays(ARITY.get(fn, 2), 0, "contiguous"))
    assert "_empty(" not in source and "copy" not in source
    assert f"return ({'p0' if fn is sgd else 'p2'},)" in source


def test_momentum_writes_the_weights_and_the_velocity_in_place():
    """w's kernel also computes the new m, which w's update reads.  Its two stores stay
    in one loop (codegen/cpu.py `stores_in_one_loop`), w's first: each element of m is
    loaded before m's store, so both are written in place, with no buffer and no copy."""
    source = _driver(momentum, _arrays(3, 0, "contiguous"))
    assert "return (p0, p1)" in source and "_empty(" not in source, source


@pytest.mark.parametrize("fn", [sgd, adam], ids=lambda f: f.__name__)
def test_a_kernel_written_in_place_stores_through_its_input(fn):
    """The kernel writing an argument in place stores through the argument's own name,
    with no output argument for it: given one buffer under two names, LLVM's run-time
    overlap check failed and the loop (Adam's sqrt and divide included) ran scalar."""
    compiled = xlanb.jit(fn).lower(*_arrays(ARITY.get(fn, 2), 0, "contiguous")).compile()
    assert "return (p0" in compiled.executable.driver_source
    (kernel,) = [k for k in compiled.executable.kernels if k.kind == "loop"]
    signature = re.search(r"def \w+\((.*)\):", kernel.source).group(1).split(", ")
    stored = re.findall(r"^ +(\w+)\[i0\] = ", kernel.source, re.M)
    assert "in0" in stored and "in0" in signature, kernel.source
    assert len([a for a in signature if a.startswith("out")]) == len(set(stored)) - 1


def three_stores(x, y, z):
    y += x
    z += x
    x *= 2.0


def test_a_parameter_other_outputs_read_is_not_written_by_their_kernel():
    """Three stores: the kernel's loop is distributed (one loop per store), and y's and
    z's loops read x: x is not written in place, y and z are."""
    source = _driver(three_stores, _arrays(3, 0, "contiguous"))
    assert "return (b1, p1, p2)" in source
    _compare(three_stores, lambda: _arrays(3, 5, "contiguous"))


def test_a_slice_update_writes_only_the_region_of_the_argument():
    source = _driver(slice_update, _arrays(2, 0, "contiguous"))
    assert "_empty(" not in source and "return (p0,)" in source


def _region_kernel(fn, args) -> str:
    """The source of the kernel writing x's region `x[1:...]`."""
    kernels = xlanb.jit(fn).lower(*args).compile().kernels
    (source,) = [k.source for k in kernels if "[k0 + 1] = " in k.source]
    return source


@pytest.mark.parametrize("fn", [slice_update, shifted_from_other, shifted_cumsum],
                         ids=lambda f: f.__name__)
def test_a_region_update_reading_another_argument_writes_the_region_directly(fn):
    """`x[1:-1] += 0.5 * g[1:-1]`, `x[1:] = g[:-1] * 2`: g is another argument, and the
    call's arguments never share memory (overlapping ones become one flat parameter), nor
    with the program's own buffers (`np.cumsum(g)`), so
    the value is computed straight into x's region, stored through x's own name: no
    temporary, no copy of x, no second name of x's buffer (buffers.py
    `region_staging`, `_region_updates_in_place`)."""
    source = _region_kernel(fn, _arrays(2, 0, "contiguous"))
    assert "empty(" not in source and "out0" not in source, source
    assert re.search(r"^ +in0\[k0 \+ 1\] = v\d+$", source, re.M), source
    _compare(fn, lambda: _arrays(2, 6, "contiguous"))


@pytest.mark.parametrize("fn, args", [
    (shifted_self, lambda: _arrays(2, 7, "contiguous")),
    (shifted_from_other, lambda: [np.arange(16.0)] * 2),       # f(x, x): g is x
], ids=["x[1:] += x[:-1] * g[1:]", "f(x, x)"])
def test_a_region_value_reading_x_elsewhere_is_staged(fn, args):
    """v reads elements of x's buffer that the region's stores replace: computed whole
    into a temporary first, then written, as NumPy's buffered ufunc loop does."""
    assert "empty(" in _region_kernel(fn, args())
    _compare(fn, args)


def test_a_region_update_before_a_call_that_fails_leaves_x_as_it_was():
    def step(x, g, a):
        x[1:-1] += 0.5 * g[1:-1]
        return np.linalg.cholesky(a)

    jitted = xlanb.jit(step)
    x, g = np.ones(16), np.ones(16)
    for _ in range(2):
        with pytest.raises(np.linalg.LinAlgError):
            jitted(x, g, -np.eye(3))
        np.testing.assert_array_equal(x, 1.0)
    jitted(x, g, np.eye(3))
    np.testing.assert_array_equal(x[1:-1], 1.5)


def transposed_self(x, g):
    x += x.T * g


@pytest.mark.parametrize("fn", [reversed_self, minus_first, transposed_self],
                         ids=lambda f: f.__name__)
def test_reads_of_other_elements_keep_a_fresh_buffer(fn):
    """x += x[::-1], x -= x[0] or x += x.T in one kernel: the element read may already
    be written."""
    shape = (4, 4) if fn is transposed_self else (16,)
    source = _driver(fn, [np.ones(shape), np.ones(shape)])
    assert "_empty(" in source and "return (p0,)" not in source
    _compare(fn, lambda: [np.random.default_rng(3).random(shape) for _ in range(2)])


@pytest.mark.parametrize("fn", [minus_mean, shifted_out], ids=lambda f: f.__name__)
def test_values_read_before_the_writing_kernel_allow_writing_in_place(fn):
    """x -= x.mean() (the mean is another kernel's, computed first), a shifted
    `out=` (the region update stages what it reads): in place, NumPy's results."""
    assert "return (p0,)" in _driver(fn, _arrays(2, 0, "contiguous"))
    _compare(fn, lambda: _arrays(2, 4, "contiguous"))


def test_a_returned_new_value_is_not_the_argument():
    x, g = np.ones(8), np.ones(8)
    jitted = xlanb.jit(returns_the_new_value)
    for _ in range(2):
        new = jitted(x, g)
        assert not np.shares_memory(new, x)
        new[0] = -5.0
        assert x[0] != -5.0


@pytest.mark.parametrize("view", [False, True])
def test_a_read_only_argument_raises_before_anything_is_written(view):
    jitted = xlanb.jit(momentum)
    w, m, g = (np.ones(10)[1:9] if view else np.ones(8)), np.ones(8), np.ones(8)
    jitted(w.copy(), m.copy(), g)              # compiled, the guard written
    jitted(w, m.copy(), g)
    w[...], m[...] = 1.0, 1.0
    w.flags.writeable = False
    for _ in range(2):
        with pytest.raises(ReadOnlyArrayError):
            jitted(w, m, g)
        np.testing.assert_array_equal(w, 1.0)
        np.testing.assert_array_equal(m, 1.0)


def test_a_library_call_that_fails_first_leaves_the_arguments_as_numpy_does():
    def step(w, a):
        lower = np.linalg.cholesky(a)
        w -= 1.0
        return lower

    jitted = xlanb.jit(step)
    w = np.ones(4)
    jitted(w, np.eye(4))
    np.testing.assert_array_equal(w, 0.0)
    for _ in range(2):
        with pytest.raises(np.linalg.LinAlgError):
            jitted(w, -np.eye(4))
        np.testing.assert_array_equal(w, 0.0)


def test_nothing_is_written_in_place_before_a_library_call_that_may_fail():
    """Written in place before the failing call, w would keep a partial step: a call
    either writes every argument or none."""
    def step(w, a):
        w -= 1.0
        return np.linalg.cholesky(a)

    jitted = xlanb.jit(step)
    w = np.ones(4)
    for _ in range(2):
        with pytest.raises(np.linalg.LinAlgError):
            jitted(w, -np.eye(4))
        np.testing.assert_array_equal(w, 1.0)


def test_a_zero_dimensional_argument_is_written_as_numpy_writes_it():
    _compare(scalar_state, lambda: [np.ones(16), np.array(2.0), np.full(16, 3.0)])


def test_an_integer_argument_takes_converted_values():
    def truncate(x, y):
        x[...] = y * 2.5

    _compare(truncate, lambda: [np.arange(16), np.arange(16.0)])


def test_a_run_time_check_that_fails_leaves_the_arguments_unwritten():
    """np.asarray_chkfinite raises inside the program; the write after it in the
    user's code must not have happened (as in NumPy), in place or not."""
    def step(w, x):
        np.asarray_chkfinite(x)
        w -= x

    jitted = xlanb.jit(step)
    w = np.ones(8)
    jitted(w, np.ones(8))
    np.testing.assert_array_equal(w, 0.0)
    for _ in range(2):
        with pytest.raises(ValueError):
            jitted(w, np.full(8, np.nan))
        np.testing.assert_array_equal(w, 0.0)


def test_a_lowered_program_called_with_arguments_sharing_memory_raises():
    """Lowered for distinct arguments, `x[1:] = g[:-1] * 2` writes x's region straight
    from g: called directly with g = x it would read elements already written, so the
    Compiled refuses (the jitted function compiles a program for that pattern)."""
    compiled = xlanb.jit(shifted_from_other).lower(np.ones(16), np.ones(16)).compile()
    x = np.arange(16.0)
    with pytest.raises(AliasingError):
        compiled(x, x)
    np.testing.assert_array_equal(x, np.arange(16.0))
    compiled(x, np.ones(16))
    np.testing.assert_array_equal(x[1:], 2.0)


def scatter_assign(x, idx, v):
    x[idx] = v


def scatter_scalar(x, idx, v):
    x[idx] = 0.5                    # one value: a scatter of it, no count of hits


def scatter_increment(x, idx, v):
    x[idx] += v                     # NumPy: a repeated row gains v once


def scatter_add_at(x, idx, v):
    np.add.at(x, idx, v)


def scatter_gathers_its_base(x, idx, v):
    x[idx] = v * x[idx[::-1]]       # gathered rows of x: a kernel of their own, first


def scatter_reads_its_base(x, idx, v):
    x[idx] = x[:6] * 2 + v          # a slice of x read by the updates: not in place


@pytest.mark.parametrize("fn", [scatter_assign, scatter_scalar, scatter_increment,
                                scatter_add_at,
                                scatter_gathers_its_base, scatter_reads_its_base],
                         ids=lambda f: f.__name__)
def test_a_scatter_updates_the_argument_in_place(fn):
    """x[idx] = v, x[idx] += v (x[idx] + v gathered first, by a kernel of its own) and
    np.add.at write only the updated rows, into the argument itself: no copy of x,
    NumPy's values with repeated indices (the last write wins; add.at accumulates).
    Updates reading x inside the scatter kernel (a slice) keep a buffer of their own."""
    def make():
        rng = np.random.default_rng(5)
        return [rng.random((12, 3)), np.array([3, 7, 3, -1, 0, 7]), rng.random((6, 3))]
    source = _driver(fn, make())
    in_place = fn is not scatter_reads_its_base
    assert ("_empty((12, 3)" not in source) == in_place, source
    _compare(fn, make)


def strided_increment(x, y):
    x[1::3] += y[::3] * 2


def strided_then_sum(x, y):
    x[::2] += y[1::2]
    return x.sum()


def strided_columns(x, y):
    x[::2, 1::2] = y[::2, ::2]


def strided_reads_elsewhere(x, y):
    x[::2] = x[1::2] + y[::2]       # reads x beside the lattice: computed before written


def strided_backwards(x, y):
    x[::-2] = y[:12]


def strided_local(x, y):
    z = x * 2
    z[3:20:4] = y[:5]
    return z


def _strided_arguments(fn) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    shape = (6, 8) if fn is strided_columns else (24,)
    return [rng.random(shape) + 0.5 for _ in range(2)]


@pytest.mark.parametrize("fn", [strided_increment, strided_then_sum, strided_columns,
                                strided_reads_elsewhere, strided_backwards, strided_local],
                         ids=lambda f: f.__name__)
def test_a_strided_slice_update_gives_numpys_values(fn):
    """x[a:b:s] = v (an interior pad: one loop over the lattice where it is a region
    update, a step test per element elsewhere): NumPy's values and arguments, over the
    call guard too."""
    _compare(fn, lambda: _strided_arguments(fn))


@pytest.mark.parametrize("fn", [strided_increment, strided_then_sum, strided_columns],
                         ids=lambda f: f.__name__)
def test_a_strided_slice_update_writes_only_the_lattice_in_place(fn):
    """`x[1::3] += 2 * y[::3]` is one loop over x's every third element, storing into the
    argument: no copy of x, no select over all of it, no NumPy pad."""
    source = _driver(fn, _strided_arguments(fn))
    assert "_empty((24,)" not in source and "_empty((6, 8)" not in source, source
    assert "pad" not in source, source


def test_an_empty_argument_written_in_place_is_numpys_no_op():
    """NumPy gives np.zeros((0, 3)) strides (0, 0): taken as elements overlapping each
    other, a write into it raised AliasingError where NumPy writes nothing."""
    def fill(x):
        np.fill_diagonal(x, 3.0)
        x += 1.0

    for shape in ((0, 3), (4, 0)):
        x = np.zeros(shape)
        xlanb.jit(fill)(x)
        assert x.shape == shape


def test_fill_diagonal_of_integers_with_inf_raises_numpys_error():
    """np.fill_diagonal(int_array, -np.inf) raises NumPy's OverflowError (it was an
    internal compiler error)."""
    def fill(x):
        y = x * 2
        np.fill_diagonal(y, -np.inf)
        return y

    with pytest.raises(OverflowError, match="infinity"):
        xlanb.jit(fill)(np.zeros((3, 3), np.int32))
