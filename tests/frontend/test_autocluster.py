"""Auto-clustering across calls: cluster reuse, the whole-program cache, the per-call
compile budget and the choice between the clustered path and plain NumPy.  Every call,
whichever path runs it, leaves NumPy's results and arguments."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import xlanb
from xlanb import autocluster
from xlanb.autocluster import PathChoice

from tolerance import assert_close


def damped_walk(acc, steps):
    """A break per iteration (`if` on an array value), writing its argument in place."""
    for i in range(steps.shape[0]):
        if acc[0] > 2.0:
            acc *= 0.5
        acc += steps[i]
    return acc.sum()


def _inputs(seed):
    rng = np.random.default_rng(seed)
    return rng.random(6), rng.random((5, 6))


def _check_call(jitted, seed):
    expected_args, got_args = _inputs(seed), _inputs(seed)
    expected = damped_walk(*expected_args)
    got = jitted(*got_args)
    assert_close(got, expected, n=30)
    for e, g in zip(expected_args, got_args):
        assert g.dtype == e.dtype and g.shape == e.shape
        assert_close(g, e, n=30)


def test_every_call_matches_numpy_whichever_path_runs_it():
    jitted = xlanb.jit(damped_walk, must_compile=False)
    for seed in range(2 * PathChoice.SAMPLES + 4):
        _check_call(jitted, seed)
    report = jitted.report
    [choice] = report.paths.values()
    assert all(len(times) == PathChoice.SAMPLES for times in choice.seconds.values())
    assert choice.best() in ("clustered", "numpy")
    assert "float64[6], float64[5,6]" in str(report)
    assert any(b.what == "bool()" for b in report.breaks)


def test_the_slower_path_is_measured_again_at_a_bounded_cost():
    choice, cost = PathChoice(), {"clustered": 1.0, "numpy": 0.01}

    def run(calls):
        paths = []
        for _ in range(calls):
            path, timed = choice.next_path()
            paths.append(path)
            if timed:
                choice.record(path, cost[path])
        return paths
    assert run(2 * PathChoice.SAMPLES) == \
        ["clustered"] * PathChoice.SAMPLES + ["numpy"] * PathChoice.SAMPLES
    later = run(10_000)
    remeasured = later.count("clustered")
    assert remeasured >= 3                       # it does look again
    spent = {path: later.count(path) * cost[path] for path in cost}
    assert spent["clustered"] <= spent["numpy"] / PathChoice.REMEASURE_AFTER * 1.01
    assert "runs with NumPy" in choice.describe()


def test_a_loop_with_a_break_per_iteration_reuses_its_clusters():
    jitted = xlanb.jit(damped_walk, must_compile=False)
    _check_call(jitted, 0)
    first = [dict(c) for c in jitted.report.clusters]
    assert jitted.report.breaks[0].count == 5
    _check_call(jitted, 0)                # the same values take the same path: all hits
    assert [c["hits"] for c in jitted.report.clusters] == [c["hits"] * 2 for c in first]
    assert ": 0 ops" not in str(jitted.report)


def test_clusters_past_a_calls_compile_budget_run_op_by_op_then_compile(monkeypatch):
    monkeypatch.setattr(autocluster, "CALL_COMPILE_BUDGET_SECONDS", 0.0)
    jitted = xlanb.jit(damped_walk, must_compile=False)
    _check_call(jitted, 0)
    compiled_first = sum(1 for c in jitted.report.clusters if c["kernels"])
    assert compiled_first == 1            # the budget is spent after the first compile
    monkeypatch.setattr(PathChoice, "SAMPLES", 10 ** 6)   # stay on the clustered path
    _check_call(jitted, 1)
    _check_call(jitted, 2)
    compiled_later = sum(1 for c in jitted.report.clusters if c["kernels"])
    assert compiled_later > compiled_first


def test_a_function_without_breaks_is_traced_once_per_signature():
    traces = []

    def standardize(x):
        traces.append(1)
        x -= x.mean(axis=0)
        return x / x.std(axis=0)
    jitted = xlanb.jit(standardize, must_compile=False)
    for seed in range(3):
        x, expected_x = (np.random.default_rng(seed).random((4, 3)) for _ in range(2))
        got = jitted(x)
        expected_x -= expected_x.mean(axis=0)
        assert_close(x, expected_x, n=4)
        assert_close(got, expected_x / expected_x.std(axis=0), n=4)
    assert len(traces) == 1
    [choice] = jitted.report.paths.values()
    assert choice.whole is not None


@pytest.mark.parametrize("path", ["clustered", "numpy"])
def test_both_paths_keep_returned_arguments_as_the_callers_objects(path, monkeypatch):
    def scale_if_big(x):
        if x.sum() > 1.0:
            x *= 2.0
        return x
    jitted = xlanb.jit(scale_if_big, must_compile=False)
    jitted(np.ones(3))                                   # the first call: traced
    monkeypatch.setattr(PathChoice, "next_path", lambda self: (path, False))
    x = np.ones(3)
    expected = scale_if_big(copy.deepcopy(x))
    assert jitted(x) is x
    np.testing.assert_array_equal(x, expected)


def test_a_trace_past_its_budget_stops_and_the_call_runs_with_numpy(monkeypatch):
    """A loop over array elements unrolls into a long trace: past the budget the call
    runs with NumPy, writing its arguments once, and later calls never trace again."""
    def prefix_sums(x):
        for i in range(1, x.shape[0]):
            x[i] += x[i - 1]
        return x
    monkeypatch.setattr(autocluster, "TRACE_BUDGET_SECONDS", 0.0)
    jitted = xlanb.jit(prefix_sums, must_compile=False)
    for seed in range(3):
        x = np.random.default_rng(seed).random(400)
        expected = np.cumsum(x)
        assert jitted(x) is x
        assert_close(x, expected, n=400)
    [choice] = jitted.report.paths.values()
    assert choice.numpy_only and "runs with NumPy: its trace took" in str(jitted.report)


def test_an_unsupported_call_on_an_array_made_in_the_function():
    """An array made inside (a constant until written) reaches NumPy's function as its value,
    and what NumPy writes into it is kept."""
    def scatter_max(v, w):
        c = np.zeros(5)
        np.maximum.at(c, v, w)                   # no compiled lowering: runs with NumPy
        d = np.arange(6.0)
        return c, np.flatnonzero(d[1:] > 2) + c.sum()
    v, w = np.array([0, 1, 1, 3]), np.array([1.0, 2.0, 3.0, 4.0])
    got = xlanb.jit(scatter_max, must_compile=False)(v, w)
    for g, e in zip(got, scatter_max(v, w)):
        np.testing.assert_array_equal(g, e)


_TOTALS = np.zeros(3)


def test_writes_into_globals_and_arguments_of_other_dtypes_run_with_numpy():
    """What jit refuses by name (an untraced `out=`, views of one buffer as two dtypes)
    auto-clustering runs as NumPy does."""
    def accumulate(x, scratch=np.zeros(3)):
        _TOTALS[:] += x                          # a global
        scratch += 2 * x                         # a mutable default argument
        np.add(x, scratch, out=_TOTALS)
        return _TOTALS * 1, scratch.sum()

    def bump(a, b):
        a += 1
        return b.sum()
    with pytest.raises(xlanb.errors.UnsupportedNumPyFunctionError, match="not traced"):
        xlanb.jit(accumulate)(np.ones(3))
    accumulate.__defaults__[0][:] = 0
    _TOTALS[:] = 0
    want = [accumulate(np.arange(3.0)) for _ in range(3)]
    want_state = _TOTALS.copy(), accumulate.__defaults__[0].copy()
    accumulate.__defaults__[0][:] = 0
    _TOTALS[:] = 0
    f = xlanb.jit(accumulate, must_compile=False)
    for w in want:
        for g, e in zip(f(np.arange(3.0)), w):
            np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(_TOTALS, want_state[0])
    np.testing.assert_array_equal(accumulate.__defaults__[0], want_state[1])
    got, want = np.arange(4.0), np.arange(4.0)
    assert xlanb.jit(bump, must_compile=False)(got, got.view(np.int64)) == \
        bump(want, want.view(np.int64))
    np.testing.assert_array_equal(got, want)
