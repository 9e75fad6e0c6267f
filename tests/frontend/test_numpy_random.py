"""NumPy's own random streams under `jit`: the compiled function draws exactly what the eager
one draws, call after call (legacy global state and Generator arguments), and a draw it
cannot honour (a global generator, an unseeded one made inside) is a named error, never
numbers frozen into the program."""
import numpy as np
import pytest

import xlanb
from xlanb.errors import UnsupportedNumPyFunctionError

X = np.linspace(-1.0, 1.0, 5)


def _legacy(x):
    a = np.random.normal(size=x.shape)
    y = np.exp(x) * a                               # draws interleaved with other ops
    b = np.random.rand(3)
    c = np.random.randint(0, 10, size=4)
    np.random.random()                              # unused: still consumes the state
    z = y.sum() + b.mean() + np.random.uniform()   # a Python float (weakly typed)
    d = np.random.normal(loc=x, scale=2.0)          # a traced argument
    return z, c, d * np.random.standard_normal(), np.random.choice(5, 3)


def _generator(x, rng):
    a = rng.normal(size=x.shape)
    y = np.sin(x) + a
    i = rng.integers(0, 5, size=3)
    rng.random()                                    # unused
    p = rng.permutation(5)
    return y, i, rng.random(2, dtype=np.float32), p, rng.normal(x, 1.0) + rng.random()


def _same(expected, got):
    for e, g in zip(expected, got):
        e, g = np.asarray(e), np.asarray(g)
        assert e.dtype == g.dtype
        if e.dtype.kind in "fc":       # a compiled sum may round differently; a draw never
            rtol = 1e-5 if e.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(g, e, rtol=rtol, atol=0)
        else:
            np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("must_compile", [True, False])
def test_legacy_draws_follow_numpys_global_stream(must_compile):
    jitted = xlanb.jit(_legacy, must_compile=must_compile)
    for seed in range(3):
        np.random.seed(seed)
        expected, after = _legacy(X), np.random.rand()
        np.random.seed(seed)
        got, got_after = jitted(X), np.random.rand()
        _same(expected, got)
        assert got_after == after                   # the state is left as NumPy leaves it


def test_unseeded_calls_draw_new_numbers_every_call():
    jitted = xlanb.jit(lambda x: x + np.random.rand(3))
    assert not np.array_equal(jitted(np.zeros(3)), jitted(np.zeros(3)))


@pytest.mark.parametrize("kind", ["generator", "random_state"])
def test_generator_argument_draws_follow_its_stream(kind):
    make = np.random.default_rng if kind == "generator" else np.random.RandomState

    def legacy_style(x, rs):
        return x * rs.normal(size=x.shape) + rs.rand(), rs.randint(0, 9, 2)
    fn = _generator if kind == "generator" else legacy_style
    jitted = xlanb.jit(fn)
    mine, reference = make(7), make(7)
    for _ in range(3):                              # the same object: its state advances
        _same(fn(X, reference), jitted(X, mine))
    assert mine.random() == reference.random() if kind == "generator" else \
        mine.rand() == reference.rand()
    _same(fn(X, make(1)), jitted(X, make(1)))       # another generator: its own stream


def test_seed_inside_the_function_reseeds_every_call():
    def f(x):
        np.random.seed(3)
        return x + np.random.rand(3)
    jitted = xlanb.jit(f)
    np.random.seed(0)
    first = jitted(np.zeros(3))
    np.testing.assert_array_equal(jitted(np.zeros(3)), first)
    np.testing.assert_array_equal(first, f(np.zeros(3)))


def test_shuffle_writes_the_traced_array():
    def f(x):
        y = x.copy()
        np.random.shuffle(y)
        return y * 2
    jitted = xlanb.jit(f)
    for seed in range(3):
        np.random.seed(seed)
        expected = f(np.arange(6.0))
        np.random.seed(seed)
        np.testing.assert_array_equal(jitted(np.arange(6.0)), expected)


def test_draws_are_chained_in_trace_order():
    def f(x):
        return x + np.random.rand(3), x - np.random.rand(3)
    text = xlanb.jit(f).lower(np.zeros(3)).as_text()
    calls = [line for line in text.splitlines() if "np.random.draw" in line]
    assert len(calls) == 2 and "('chained', True)" in calls[1]
    compiled = xlanb.jit(f).lower(np.zeros(3)).compile().as_text()
    assert compiled.count("np.random.draw") == 2    # neither merged by cse nor dropped


RNG = np.random.default_rng(5)


def _reads_global(x):
    return x * RNG.normal(size=3) + RNG.integers(0, 4, 3)


def test_generator_read_from_a_global_or_closure_follows_its_stream():
    """A global or closure generator is an input of every call (free_variables)."""
    global RNG
    rng = np.random.default_rng(0)

    def closure(x):
        return x + rng.normal(size=3)
    jitted, reference = xlanb.jit(closure), np.random.default_rng(0)
    for _ in range(3):
        np.testing.assert_array_equal(jitted(np.ones(3)), 1 + reference.normal(size=3))
    jitted = xlanb.jit(_reads_global)
    for seed in (1, 2):                              # rebinding the global: its new stream
        RNG = np.random.default_rng(seed)
        expected = [_reads_global(np.ones(3)) for _ in range(2)]
        RNG = np.random.default_rng(seed)
        for want in expected:
            np.testing.assert_array_equal(jitted(np.ones(3)), want)


def test_generator_reached_through_an_object_is_refused():
    class Model:
        rng = np.random.default_rng(0)
    model = Model()

    def f(x):
        return x + model.rng.normal(size=3)
    with pytest.raises(UnsupportedNumPyFunctionError, match="drawn from while tracing"):
        xlanb.jit(f)(np.zeros(3))
    clustered = xlanb.jit(f, must_compile=False)      # eager: new numbers each call
    assert not np.array_equal(clustered(np.zeros(3)), clustered(np.zeros(3)))


def test_unseeded_generator_made_inside_is_refused():
    def f(x):
        return x + np.random.default_rng().normal(size=3)
    with pytest.raises(UnsupportedNumPyFunctionError, match="without a seed"):
        xlanb.jit(f)(np.zeros(3))


def test_generator_state_access_is_refused():
    def f(x, rng):
        return x + rng.bit_generator.random_raw()
    with pytest.raises(UnsupportedNumPyFunctionError, match="bit_generator"):
        xlanb.jit(f)(np.zeros(3), np.random.default_rng(0))


def test_grad_keeps_unused_draws():
    def f(x):
        return (x * np.random.normal(size=x.shape)).sum() + np.random.rand()
    grad = xlanb.grad(f)
    np.random.seed(4)
    g, after = grad(X), np.random.rand()
    np.random.seed(4)
    np.testing.assert_array_equal(g, np.random.normal(size=X.shape))
    np.random.rand()
    assert np.random.rand() == after


def test_tiered_program_keeps_the_stream_across_the_switch():
    """The default tiered jit: calls on the NumPy tier, then on compiled code, draw what
    eager NumPy draws (the background compile never runs a draw)."""
    def f(x, rng):
        return x * rng.normal(size=3) + np.random.rand(3), rng.integers(0, 9, 2)
    jitted = xlanb.jit(f, tiered=True)
    mine, reference = np.random.default_rng(3), np.random.default_rng(3)
    for call in range(4):
        if call == 2:
            assert jitted.wait_compiled(300)
        np.random.seed(call)
        expected = f(X[:3], reference)
        np.random.seed(call)
        _same(expected, jitted(X[:3], mine))
