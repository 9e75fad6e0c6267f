"""Arrays and numbers read from globals and closures are inputs of every call, as in NumPy:
a later change to them (in place, or a new value bound to the name) is seen by the next
call, and writes into them reach the caller's array (xlanb/tracing/free_variables.py)."""
import numpy as np
import pytest

import xlanb
from xlanb.errors import TracerLeakError

X = np.arange(6.0)
W = np.ones(6)
SCALE = 2.0
OFFSET = np.zeros(6)
COUNT = 0
MODE = "plain"


def _reset():
    global W, SCALE, OFFSET, MODE
    W, SCALE, OFFSET, MODE = np.ones(6), 2.0, np.zeros(6), "plain"


MODES = [pytest.param({}, id="jit"), pytest.param({"must_compile": False}, id="autocluster")]


@pytest.fixture(autouse=True)
def fresh_globals():
    _reset()
    yield
    _reset()


def _helper(x):
    return x * W[0] + W.sum()        # a helper's own reads of the module's W


def _uses_global(x):
    return x * W * SCALE


def test_in_place_change_of_a_global_array_is_seen():
    f = xlanb.jit(_uses_global)
    np.testing.assert_array_equal(f(X), X * 2)
    W[:] = 3                                     # in place, as a training loop updates
    np.testing.assert_array_equal(f(X), X * 6)
    assert f.cache_info().misses == 1


def test_rebinding_a_global_array_or_number_is_seen_without_a_new_trace():
    global W, SCALE
    f = xlanb.jit(_uses_global)
    f(X)
    W, SCALE = np.full(6, 5.0), 0.5             # a re-run notebook cell
    np.testing.assert_array_equal(f(X), X * 2.5)
    assert f.cache_info().misses == 1
    W = np.ones(3)                              # another shape: traced again
    with pytest.raises(ValueError):
        X * W
    with pytest.raises(Exception):
        f(X)


@pytest.mark.parametrize("mode", MODES)
def test_reads_through_helpers_scalars_and_reductions_of_a_global(mode):
    f = xlanb.jit(_helper, **mode)
    np.testing.assert_array_equal(f(X), _helper(X))
    W[0], W[1] = 4.0, -2.0
    np.testing.assert_array_equal(f(X), _helper(X))


def _accumulate(x):
    OFFSET[1:] += x[1:]                          # a write into a global array
    return OFFSET.sum()


@pytest.mark.parametrize("mode", MODES)
def test_writes_into_a_global_array_reach_it(mode):
    f = xlanb.jit(_accumulate, **mode)
    assert f(X) == X[1:].sum()
    assert f(X) == 2 * X[1:].sum()
    np.testing.assert_array_equal(OFFSET, np.r_[0.0, 2 * X[1:]])


@pytest.mark.parametrize("mode", MODES)
def test_closure_variables_are_inputs_too(mode):
    table = np.arange(6.0)
    shift = 1.0

    def f(x):
        return x + table * shift

    jitted = xlanb.jit(f, **mode)
    np.testing.assert_array_equal(jitted(X), X + table)
    table *= 2
    shift = 3.0                                  # noqa: F841 (read by f's closure)
    np.testing.assert_array_equal(jitted(X), f(X))


def _branches_on_a_global_string(x):
    return x * 2 if MODE == "double" else x


@pytest.mark.parametrize("mode", MODES)
def test_a_global_string_is_static(mode):
    global MODE
    f = xlanb.jit(_branches_on_a_global_string, **mode)
    np.testing.assert_array_equal(f(X), X)
    MODE = "double"
    np.testing.assert_array_equal(f(X), 2 * X)


def _counts_calls(x):
    global COUNT
    COUNT += 1
    return x


def test_rebinding_a_global_inside_is_a_named_error_or_runs_with_numpy():
    global COUNT
    COUNT = 0
    with pytest.raises(TracerLeakError, match="assigns global `COUNT`"):
        xlanb.jit(_counts_calls)(X)
    assert COUNT == 0
    f = xlanb.jit(_counts_calls, must_compile=False)
    np.testing.assert_array_equal(f(X), X)
    f(X)
    assert COUNT == 2                  # NumPy's side effect, once per call


def _reads_its_argument_and_the_global(w):
    w += 1
    return W.sum()


@pytest.mark.parametrize("mode", MODES)
def test_a_global_passed_as_the_argument_too_is_one_array(mode):
    f = xlanb.jit(_reads_its_argument_and_the_global, **mode)
    assert f(W) == 12.0                # NumPy: `w += 1` wrote W, then W.sum() read it
    np.testing.assert_array_equal(W, np.full(6, 2.0))
    other = np.ones(6)
    assert f(other) == 12.0            # W untouched this time: (2 * 6)
    np.testing.assert_array_equal(other, np.full(6, 2.0))


def test_lowered_and_compiled_calls_fetch_the_current_values():
    compiled = xlanb.jit(_uses_global).lower(X).compile()
    W[:] = 7
    np.testing.assert_array_equal(compiled(X), X * 14)


@pytest.mark.parametrize("mode", MODES)
def test_in_place_and_rebound_globals_under_both_modes(mode):
    global W, SCALE
    f = xlanb.jit(_uses_global, **mode)
    for _ in range(3):                          # past auto-clustering's path choice
        f(X)
    W[:] = 3
    np.testing.assert_array_equal(f(X), X * 6)
    W, SCALE = np.full(6, 5.0), 0.5
    np.testing.assert_array_equal(f(X), X * 2.5)
