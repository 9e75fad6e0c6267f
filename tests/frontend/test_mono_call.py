"""The monomorphic call guard (xlanb/mono_call.py): calls like the last one skip the general
path; every other call takes it and still gives NumPy's answer."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb import mono_call
from xlanb.errors import ArraySubclassError, ReadOnlyArrayError

RNG = np.random.default_rng(0)


def _jit(fn):
    return xlanb.jit(fn, tiered=False)


def test_repeated_call_goes_through_the_guard():
    f = _jit(lambda a, b: a @ b + 1.0)
    a, b = RNG.standard_normal((5, 4)), RNG.standard_normal((4, 3))
    np.testing.assert_allclose(f(a, b), a @ b + 1.0)
    assert f._mono is not None
    hits = f.cache_info().hits
    c = RNG.standard_normal((5, 4))
    assert f._mono((c, b)) is not mono_call.MISS
    np.testing.assert_allclose(f(c, b), c @ b + 1.0)
    assert f.cache_info().hits == hits + 1        # the call, not the direct guard check


def test_other_signatures_miss_and_take_the_general_path():
    f = _jit(lambda a, b: a * 2.0 - b)
    a, b = RNG.standard_normal((6, 4)), RNG.standard_normal((6, 4))
    f(a, b)
    others = {
        "shape": (RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))),
        "dtype": (a.astype(np.float32), b.astype(np.float32)),
        "strides": (np.asfortranarray(a), b),
        "a view": (RNG.standard_normal((6, 8))[:, ::2], b),
        "the same array twice": (a, a),
        "views of one base": (RNG.standard_normal((12, 4))[:6], None),
        "a subclass": (a.view(np.matrix), b),
        "a Python number": (a, 3.0),
    }
    base = others["views of one base"][0].base
    others["views of one base"] = (base[:6], base[6:])
    for name, args in others.items():
        assert f._mono(args) is mono_call.MISS, name
        if name == "a subclass":           # refused: np.matrix's operators differ
            with pytest.raises(ArraySubclassError):
                f(*args)
            continue
        want = args[0] * 2.0 - args[1]
        got = f(*args)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), err_msg=name)
        assert got.dtype == np.asarray(want).dtype, name


def test_programs_that_write_back_go_through_the_guard_as_numpy_does():
    def update(w, g):
        w -= 0.1 * g
        return w.sum()

    def step(w, m, g):                  # in place, and the argument itself returned
        m *= 0.9
        m += g
        w -= 0.01 * m
        return w, m

    f = _jit(update)
    w, g = np.ones(5), np.arange(5.0)
    for _ in range(3):
        f(w, g)
    assert f._mono is not None and type(f).__call__ is f._mono.entry
    np.testing.assert_allclose(w, 1 - 3 * 0.1 * np.arange(5.0))    # written back each call
    s = _jit(step)
    w, m, g = RNG.standard_normal(6), RNG.standard_normal(6), RNG.standard_normal(6)
    w_np, m_np = w.copy(), m.copy()
    for _ in range(4):
        got = s(w, m, g)
        want = step(w_np, m_np, g)
        assert got[0] is w and got[1] is m              # the caller's own arrays
        np.testing.assert_allclose(w, w_np, rtol=1e-14)
        np.testing.assert_allclose(m, m_np, rtol=1e-14)
        np.testing.assert_allclose(want[0], w_np)
    assert s._mono is not None and type(s).__call__ is s._mono.entry
    hits = s.cache_info().hits
    s(w, m, g)
    assert s.cache_info().hits == hits + 1


def test_write_backs_of_a_step_returning_none_or_one_array_run_inline():
    def step(w, m, g):
        m *= 0.9
        m += g
        w -= 0.01 * m

    def scaled(w, g):
        w += g
        return w * 2.0

    rng = np.random.default_rng(3)
    for fn, count in ((step, 3), (scaled, 2)):
        f = _jit(fn)
        args = [rng.standard_normal(7) for _ in range(count)]
        mine, theirs = [a.copy() for a in args], [a.copy() for a in args]
        for _ in range(3):
            got, want = f(*mine), fn(*theirs)
            if want is None:
                assert got is None
            else:
                assert got is not mine[0]
                np.testing.assert_allclose(got, want, rtol=1e-14)
            for a, b in zip(mine, theirs):
                np.testing.assert_allclose(a, b, rtol=1e-14)
        assert "FINISH" not in f._mono.__code__.co_names, fn.__name__    # inline
        frozen = [a.copy() for a in mine]
        frozen[count - 2].flags.writeable = False   # m (w is written first), or w
        before = [a.copy() for a in frozen]
        with pytest.raises(ReadOnlyArrayError):
            f(*frozen)
        for a, b in zip(frozen, before):
            np.testing.assert_array_equal(a, b)


def test_write_backs_reach_a_non_contiguous_caller_array():
    """The driver works on a C-ordered copy of an F-ordered or strided argument: the
    guard must write back into the caller's array, never into that copy."""
    def fn(a, g):
        a[0] += g
        a *= 2.0

    for layout in (np.asfortranarray, lambda v: np.repeat(v, 2, axis=1)[:, ::2]):
        f = _jit(fn)
        g = np.arange(4.0)
        mine, theirs = layout(np.ones((3, 4))), layout(np.ones((3, 4)))
        for _ in range(3):
            f(mine, g)
            fn(theirs, g)
            np.testing.assert_allclose(mine, theirs, rtol=1e-14)
        assert f._mono is not None


def test_a_guarded_write_back_refuses_what_the_general_path_refuses():
    def update(w, g):
        w -= 0.1 * g
        return w.sum()

    f = _jit(update)
    w, g = np.ones(8), np.arange(8.0)
    f(w, g)
    f(w, g)
    assert f._mono is not None
    frozen = np.ones(8)
    frozen.flags.writeable = False
    with pytest.raises(ReadOnlyArrayError):
        f(frozen, g)
    np.testing.assert_array_equal(frozen, 1.0)
    buffer = bytearray(np.arange(16.0).tobytes())      # memory NumPy does not own
    first, second = np.frombuffer(buffer), np.frombuffer(buffer)
    views = (first[:8], second[4:12])                  # overlapping, different owners
    assert f._mono(views) is mono_call.MISS
    # overlapping arguments take the general path, which writes back as NumPy does
    a = np.arange(16.0)
    b = a.copy()
    np.testing.assert_allclose(f(a[:8], a[4:12]), update(b[:8], b[4:12]))
    np.testing.assert_array_equal(a, b)
    c = np.arange(8.0)
    d = c.copy()
    np.testing.assert_allclose(f(c, c), update(d, d))
    np.testing.assert_array_equal(c, d)
    raw = bytearray(np.arange(16.0).tobytes())
    ref = bytearray(raw)
    got = f(np.frombuffer(raw)[:8], np.frombuffer(raw)[4:12])
    want = update(np.frombuffer(ref)[:8], np.frombuffer(ref)[4:12])
    np.testing.assert_allclose(got, want)
    assert raw == ref


SEVERAL = {
    "a tuple": lambda a, b: (a + 1, a @ b),
    "a dict with a 0-d result": lambda a, b: {"sum": (a * b.T).sum(), "prod": a @ b},
    "one value twice": lambda a, b: (a * 2, a * 2),
    "a constant and a Python number": lambda a, b: (np.zeros(2), (a @ b).sum().item(),
                                                   np.exp(a).T),
    "a list of one": lambda a, b: [np.tanh(a)],
    "a tuple of one": lambda a, b: (np.tanh(a),),
    "five": lambda a, b: tuple(a * i for i in range(1, 6)),
    "a nested tuple": lambda a, b: (a + 1, (a @ b, b - 1)),
}


def _assert_same_tree(got, want, where: str) -> None:
    assert type(got) is type(want), (where, type(got), type(want))
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for key in want:
            _assert_same_tree(got[key], want[key], where)
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for g, w in zip(got, want):
            _assert_same_tree(g, w, where)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=where)


@pytest.mark.parametrize("name", list(SEVERAL))
def test_several_outputs_go_through_the_guard_as_numpy_returns_them(name):
    fn = SEVERAL[name]
    f = _jit(fn)
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 4))
    for call in range(3):                       # the general path, then the guard
        _assert_same_tree(f(a, b), fn(a, b), f"{name}, call {call}")
    assert f._mono is not None and type(f).__call__ is f._mono.entry, name
    hits = f.cache_info().hits
    f(a, b)
    assert f.cache_info().hits == hits + 1
    if name == "one value twice":                # two arrays, as NumPy's, not one twice
        x, y = f(a, b)
        assert x is not y
        x[0, 0] = 99.0
        assert y[0, 0] == a[0, 0] * 2
    assert f._mono((a, b.T.copy())) is mono_call.MISS     # another signature still misses


RETURNED_MEMORY = {       # NumPy returns the caller's array or a view of it
    "views only": lambda x, y: (x[1:-1], x.T, y.reshape(-1), x[..., 0]),
    "the argument itself": lambda x, y: x,
    "a view and a value": lambda x, y: (x[::2].T, x.sum(0)),
    "written back, viewed": lambda x, y: (x.__iadd__(y), x[1:]),
    "written back, two values": lambda x, y: (x.__imul__(2.0)[0], x // 3, np.divmod(x, 3)[0]),
}


@pytest.mark.parametrize("name", list(RETURNED_MEMORY))
def test_returned_arguments_and_views_go_through_the_guard(name):
    fn = RETURNED_MEMORY[name]
    f = _jit(fn)
    x, y = RNG.standard_normal((6, 4)), RNG.standard_normal((6, 4))
    x_np = x.copy()
    for call in range(3):                       # the general path, then the guard
        got, want = f(x, y), fn(x_np, y)
        np.testing.assert_array_equal(x, x_np, err_msg=f"{name}, call {call}")
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, err_msg=f"{name}, call {call}")
            # the caller's memory where NumPy's result is, a fresh array where it is not
            assert np.shares_memory(g, x) == np.shares_memory(w, x_np), (name, call)
            assert (g is x) == (w is x_np), (name, call)
        assert len({id(g) for g in got}) == len(got), name     # never one array twice
    assert type(f).__call__ is f._mono.entry, name
    hits = f.cache_info().hits
    f(x, y), fn(x_np, y)
    assert f.cache_info().hits == hits + 1, name


def test_free_variables_are_read_each_call():
    scale = np.ones(3)

    def fn(x):
        return x * scale

    f = _jit(fn)
    x = np.arange(3.0)
    f(x)
    scale[:] = 5.0
    np.testing.assert_allclose(f(x), x * 5.0)
    assert f._mono is None


def test_clear_cache_drops_the_guard():
    f = _jit(lambda a: a + 1)
    f(np.ones(3))
    f.clear_cache()
    assert f._mono is None
    np.testing.assert_allclose(f(np.ones(3)), 2.0)


def test_the_guard_runs_the_kernels_itself_for_every_layout():
    f = _jit(lambda a, b, c: np.tanh(a @ b) @ c)      # an arena intermediate, two dots
    a, b, c = (RNG.standard_normal((6, 6)) for _ in range(3))
    fortran = np.asfortranarray(a)                     # its contiguity test stays inlined
    for args in ((a, b, c), (fortran, b, c)):
        f.clear_cache()
        for _ in range(3):
            np.testing.assert_allclose(f(*args), np.tanh(args[0] @ b) @ c)
        assert f._mono.__code__.co_names.count("_driver") == 0    # inlined, no driver call
        assert f._mono.executable.inline is not None


def test_a_switched_executable_gets_a_new_guard():
    f = _jit(lambda a: np.exp(a) * 2.0)
    a = RNG.standard_normal(5)
    f(a)
    compiled, old = f.last_compiled, f._mono
    compiled.switch_to(f.lower(a).compile().executable)     # as a tiered program does
    assert old((a,)) is mono_call.MISS
    np.testing.assert_allclose(f(a), np.exp(a) * 2.0)
    assert f._mono is not old and f._mono.executable is compiled.executable
    assert f._mono((a,)) is not mono_call.MISS


def test_disable_jit_still_interprets_a_guarded_function(monkeypatch):
    f = _jit(lambda a: a * 3.0)
    a = np.arange(4.0)
    f(a)
    assert f._mono is not None
    calls = []
    interpreted = f.run_interpreted
    monkeypatch.setattr(f, "run_interpreted", lambda *x: calls.append(1) or interpreted(*x))
    with xlanb.disable_jit():
        np.testing.assert_allclose(f(a), a * 3.0)
    assert calls == [1]


def test_guarded_calls_are_traced(tmp_path, monkeypatch):
    import json
    from xlanb_runtime import trace_events
    path = tmp_path / "trace.json"
    monkeypatch.setenv("XLANB_FLAGS", f"--xla_trace_to={path}")
    f = _jit(lambda a: np.sin(a).sum())
    a = RNG.standard_normal(7)
    for _ in range(3):
        f(a)
    assert f._mono is not None
    trace_events.flush()
    events = json.loads(path.read_text())["traceEvents"]
    kernel = f.last_compiled.kernels[0].name
    assert sum(e["cat"] == "run" and e["name"] == kernel for e in events) >= 3


def test_the_guard_is_the_functions_own_call():
    f, g = _jit(lambda a: a + 1.0), _jit(lambda a: a * 2.0)
    a = np.arange(3.0)
    f(a), g(a)
    assert type(f).__call__ is f._mono.entry and type(g).__call__ is g._mono.entry
    assert isinstance(f, xlanb.JitFunction) and type(f) is not type(g)
    hits = f.cache_info().hits
    np.testing.assert_allclose(f(a), a + 1.0)
    np.testing.assert_allclose(f(a.astype(np.float32)), a + 1.0)    # a miss: general path
    np.testing.assert_allclose(g(a), a * 2.0)
    assert f.cache_info().hits == hits + 1
    f.clear_cache()
    assert type(f).__call__ is xlanb.JitFunction.__call__
    np.testing.assert_allclose(f(a), a + 1.0)


def test_the_entry_passes_other_argument_counts_and_keywords_to_the_general_path():
    def fn(a, b=None, p0=2.0):
        return a * p0 if b is None else a - b * p0

    f = _jit(fn)
    a, b = RNG.standard_normal(4), RNG.standard_normal(4)
    for _ in range(2):
        np.testing.assert_allclose(f(a, b), a - b * 2.0)
    assert type(f).__call__ is f._mono.entry
    np.testing.assert_allclose(f(a), a * 2.0)                   # fewer: the last is unset
    np.testing.assert_allclose(f(a, b, 3.0), a - b * 3.0)       # more: `rest`
    np.testing.assert_allclose(f(a, b, p0=4.0), a - b * 4.0)    # a keyword named like a slot
    np.testing.assert_allclose(f(a, b=b), a - b * 2.0)
    with pytest.raises(TypeError):
        f(a, b, 1.0, 2.0)                                       # as the function itself
    np.testing.assert_allclose(f(a, b), a - b * 2.0)


def test_a_reshaped_or_retyped_array_misses_the_guard():
    """ndarray.shape, .dtype and .resize change an array in place: the same object must
    be checked again, never recognised by identity."""
    f = _jit(lambda a: a.sum(axis=0))
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(f(a), a.sum(axis=0))
    np.testing.assert_allclose(f(a), a.sum(axis=0))
    a.shape = (4, 3)
    assert f._mono((a,)) is mono_call.MISS
    np.testing.assert_allclose(f(a), a.sum(axis=0))
    b = np.arange(12.0).reshape(3, 4)
    f(b)
    b.dtype = np.int64                              # the same bytes as int64
    np.testing.assert_array_equal(f(b), b.sum(axis=0))
    c = np.zeros((3, 4))
    f(c)
    c.resize((2, 6), refcheck=False)
    np.testing.assert_allclose(f(c), c.sum(axis=0))


NUMBER_ARGUMENTS = {"float": 0.5, "int": 3, "complex": 0.5 - 1j, "np.float32": np.float32(0.5),
                    "np.float64": np.float64(-2.0), "np.int16": np.int16(7)}


@pytest.mark.parametrize("name", list(NUMBER_ARGUMENTS))
def test_number_arguments_go_through_the_guard_as_numpy_promotes_them(name):
    """Python numbers (traced weak-typed: NEP 50) and NumPy scalars take the guard; the
    result's values and dtype are NumPy's, for a float32 and a float64 array."""
    def f(x, a):
        return np.tanh(x * a + 1)
    number = NUMBER_ARGUMENTS[name]
    for dtype in (np.float32, np.float64):
        jf = _jit(f)
        x = RNG.standard_normal(40).astype(dtype)
        jf(x, number)
        hits = jf._hits
        y = RNG.standard_normal(40).astype(dtype)
        want = f(y, number)
        got = jf(y, number)
        assert jf._hits == hits + 1 and jf._mono is not None, (name, dtype)
        assert got.dtype == want.dtype, (name, dtype)
        tolerance = 1e-6 if got.dtype in (np.float32, np.complex64) else 1e-13
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


def test_numbers_go_into_kernels_as_numbers():
    """A 0-d parameter a kernel reads as one value is a number argument of the kernel
    (codegen/cpu.py `pass_scalar_params`): the driver passes its value, the guard the
    caller's Python number itself; a 0-d array argument and a rolled loop's body (a
    compiled driver) pass theirs."""
    def axpby(a, x, b, y):
        return a * x + b * y

    def rolled(x, a):
        for _ in range(40):
            x = x * a + 1.0
        return x
    x, y = RNG.standard_normal(100), RNG.standard_normal(100)
    jf = _jit(axpby)
    for a, b in ((2.0, -0.5), (3, 2), (np.asarray(1.5), np.asarray(-2.0)), (2.0, -0.5)):
        np.testing.assert_allclose(jf(a, x, b, y), axpby(a, x, b, y), rtol=1e-15)
    source = jf.lower(2.0, x, -0.5, y).compile().executable.driver_source
    assert "p0[()]" in source and "p0.reshape(1)" not in source, source
    assert jf._hits >= 1
    jr = _jit(rolled)
    np.testing.assert_allclose(jr(x, 0.5), rolled(x, 0.5), rtol=1e-14)
    np.testing.assert_allclose(jr(x, 0.25), rolled(x, 0.25), rtol=1e-14)


def test_a_0d_array_argument_updated_in_place_keeps_its_update():
    """A 0-d argument a kernel writes in place stays an array argument: passed as a
    number, `acc += 1.0` was lost (the kernel stored into its local copy)."""
    def step(acc, w, g):
        w -= 0.1 * g
        acc *= 0.5
        acc += 1.0
    jf = _jit(step)
    acc, w, g = np.asarray(3.0), RNG.standard_normal(50), RNG.standard_normal(50)
    acc_np, w_np = acc.copy(), w.copy()
    for _ in range(3):                              # the general path, then the guard
        jf(acc, w, g)
        step(acc_np, w_np, g)
        assert acc == acc_np and np.array_equal(w, w_np)


def test_number_arguments_of_another_kind_miss_the_guard():
    def f(x, a):
        return x * a
    jf = _jit(f)
    x = RNG.standard_normal(8).astype(np.float32)
    jf(x, 2.0)
    others = {"an int": 2, "a bool": True, "a NumPy float64": np.float64(2.0),
              "an int past int64": 1 << 70, "an array": np.float32([2.0])}
    for name, other in others.items():
        assert jf._mono((x, other)) is mono_call.MISS, name
    assert jf._mono((x, 3.0)) is not mono_call.MISS
    for name, other in others.items():
        if name == "an int past int64":
            continue                       # NumPy's object array: not the point here
        want, got = f(x, other), jf(x, other)
        np.testing.assert_allclose(got, want, err_msg=name)
        assert np.asarray(got).dtype == np.asarray(want).dtype, name


def test_number_arguments_of_a_write_back_or_returned_keep_the_general_path():
    def step(w, g, lr):
        w -= lr * g
        return w.sum()

    def both(x, a):
        return x * a, a
    w, g = RNG.standard_normal(16), RNG.standard_normal(16)
    w_np = w.copy()
    jstep, jboth = _jit(step), _jit(both)
    for _ in range(3):
        assert np.isclose(jstep(w, g, 0.1), step(w_np, g, 0.1))
        np.testing.assert_allclose(w, w_np)
        out, a = jboth(w, 0.25)
        assert type(a) is float and a == 0.25
        np.testing.assert_allclose(out, w * 0.25)
    assert jstep._mono is None and jboth._mono is None


def test_the_owned_and_writeable_flag_bits_are_numpys():
    """The write-back guard reads both from `flags.num` (mono_call.OWNED_WRITEABLE)."""
    bits = mono_call.OWNED_WRITEABLE
    frozen = np.ones(3)
    frozen.flags.writeable = False
    assert np.ones(3).flags.num & bits == bits
    assert frozen.flags.num & bits != bits and np.ones(3)[1:].flags.num & bits != bits


def _unaligned(values: np.ndarray) -> np.ndarray:
    """A float64 copy of `values` one byte off its owner's alignment (owner: uint8)."""
    raw = np.zeros(values.nbytes + 1, np.uint8)
    array = raw[1:].view(np.float64)
    array[...] = values
    assert not array.flags.aligned and array.base is raw
    return array


def test_a_write_back_guard_calls_its_kernels_compiled_entry_points():
    """No Numba dispatcher between the guard and its kernel (its type resolution cost
    ~0.3-0.4 us a call at 64 elements): the guard's checks already pin the overload."""
    from numba.core.dispatcher import Dispatcher

    def sgd(w, g):
        w -= 0.01 * g

    jitted = _jit(sgd)
    w, g = RNG.standard_normal(64), RNG.standard_normal(64)
    for _ in range(2):
        jitted(w, g)
    kernels = [v for k, v in jitted._mono.entry.__globals__.items() if k.startswith("_k")]
    assert kernels and not any(isinstance(v, Dispatcher) for v in kernels)


def test_a_pure_guard_calls_its_kernels_entry_points_for_aligned_arrays():
    """As a write-back guard does, with one alignment flag per array argument: an
    unaligned one misses, and the call still gives NumPy's values."""
    from numba.core.dispatcher import Dispatcher

    def axpby(a, x, b, y):
        return a * x + b * y

    jitted = _jit(axpby)
    x, y = RNG.standard_normal(64), RNG.standard_normal(64)
    for _ in range(2):
        np.testing.assert_array_equal(jitted(1.5, x, -0.5, y), axpby(1.5, x, -0.5, y))
    kernels = [v for k, v in jitted._mono.entry.__globals__.items() if k.startswith("_k")]
    assert kernels and not any(isinstance(v, Dispatcher) for v in kernels)
    odd = _unaligned(y)
    assert jitted._mono((1.5, x, -0.5, odd)) is mono_call.MISS
    np.testing.assert_allclose(jitted(1.5, x, -0.5, odd), axpby(1.5, x, -0.5, odd),
                               rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("which", ["written", "read"])
def test_an_unaligned_argument_takes_the_general_path(which):
    """The entry points were compiled for aligned arrays: an argument off its alignment
    misses the guard, and the call still leaves NumPy's values."""
    def sgd(w, g):
        w -= 0.01 * g

    jitted = _jit(sgd)
    w, g = RNG.standard_normal(64), RNG.standard_normal(64)
    jitted(w.copy(), g)
    jitted(w.copy(), g)                     # the guard, written for aligned arrays
    args = [_unaligned(w), g] if which == "written" else [w.copy(), _unaligned(g)]
    expected = [a.copy() for a in args]
    sgd(*expected)
    assert jitted._mono(tuple(args)) is mono_call.MISS
    jitted(*args)
    for got, want in zip(args, expected):     # (a fused multiply-add: an ulp apart)
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-16)
