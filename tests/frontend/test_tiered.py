"""Tiered execution: a first call answers on the NumPy tier while a worker process compiles,
then calls switch to the compiled program.

Oracles: NumPy eager (the user's function run plainly) and the blocking compile
(`tiered=False`).  No test times anything: the switch-over is awaited explicitly with
`wait_compiled(timeout)`, whose result is asserted.  Each test uses its own cache directory
(a fresh cache is what makes a first call tiered).
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import xlanb
from xlanb_runtime import background, flags
from tolerance import assert_close

WAIT = 300          # seconds: a generous bound on one background compile, never a sleep


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path / "cache"))
    yield
    background.shutdown()        # the worker reads the cache directory per request


def layer(x, w, b):
    h = np.tanh(x @ w + b)
    return h.sum(axis=1), (h * h).mean()


def args_layer():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((16, 8)).astype(np.float32),
            rng.standard_normal((8, 4)).astype(np.float32),
            rng.standard_normal(4).astype(np.float32))


def assert_results(got, want):
    for g, w in zip(got, want):
        assert_close(g, w, n=8)


def test_first_call_answers_on_numpy_tier_then_switches():
    f = xlanb.jit(layer, tiered=True)
    args = args_layer()
    first = f(*args)
    compiled = f.last_compiled
    assert compiled.numpy_tier_calls == 1
    assert_results(first, layer(*args))
    assert f.wait_compiled(WAIT)
    assert compiled.tier == "compiled", compiled.background.error
    assert_results(f(*args), layer(*args))
    assert compiled.numpy_tier_calls == 1            # the later call ran compiled code
    names = [p.name for p in compiled.report.phases]
    for phase in ("trace", "numpy-tier", "numpy-tier call", "background compile",
                  "program cache", "switch-over"):    # the worker's record, loaded here
        assert phase in names
    assert names.index("numpy-tier call") < names.index("switch-over")
    switch = next(p for p in compiled.report.phases if p.name == "switch-over")
    assert switch.detail["numpy_tier_calls"] == 1
    assert compiled.kernels and all(k.kind != "numpy" for k in compiled.kernels)


def test_tiered_false_and_the_flag_compile_before_the_first_call_returns():
    args = args_layer()
    blocking = xlanb.jit(layer, tiered=False)
    blocking(*args)
    assert blocking.last_compiled.tier == "compiled"
    assert blocking.last_compiled.numpy_tier_calls == 0
    with flags.overriding(xla_tiered=True):
        g = xlanb.jit(lambda x: np.exp(x) + 1.0)
        g(args[0])
        assert g.last_compiled.tier == "numpy"
        assert g.wait_compiled(WAIT)


def test_a_program_compiled_before_loads_in_the_foreground_without_the_worker():
    args = args_layer()
    f = xlanb.jit(layer, tiered=True)
    f(*args)
    assert f.wait_compiled(WAIT) and f.last_compiled.tier == "compiled"
    background.shutdown()
    again = xlanb.jit(layer, tiered=True)               # a new process would do the same
    assert_results(again(*args), layer(*args))
    compiled = again.last_compiled
    assert compiled.tier == "compiled" and compiled.numpy_tier_calls == 0
    assert compiled.background is None
    assert background.worker_pid() is None              # loaded here, from the cache
    assert_results(again(*args), layer(*args))
    names = [p.name for p in compiled.report.phases]
    assert "program cache" in names and "background compile" not in names


def update_in_place(x, y, v):
    x += y                          # augmented assignment on an argument
    x[0] = 5.0                      # a slice write
    v[1:3] *= 2                     # a write through a view of an argument
    return x.sum(), np.sqrt(np.abs(y))


def test_in_place_updates_of_arguments_match_numpy_on_both_tiers():
    rng = np.random.default_rng(1)
    base = [rng.standard_normal(6).astype(np.float32) for _ in range(3)]
    f = xlanb.jit(update_in_place, tiered=True)
    for call in range(2):               # NumPy tier, then compiled
        mine = [a.copy() for a in base]
        theirs = [a.copy() for a in base]
        got = f(mine[0], mine[1], mine[2][:4])
        want = update_in_place(theirs[0], theirs[1], theirs[2][:4])
        assert f.last_compiled.tier == ("numpy" if call == 0 else "compiled")
        assert_results(got, want)
        for m, t in zip(mine, theirs):
            assert_close(m, t)
        if call == 0:
            assert f.wait_compiled(WAIT) and f.last_compiled.tier == "compiled"


def view_outlives(x):
    """`a` is read for the last time by `b`, but its transpose `t` is read later: `b` must
    not be written into `a`'s memory (the NumPy tier's out= reuse)."""
    a = np.exp(x * 0.5)
    t = a.T[::-1]
    b = np.sqrt(a) + 1.0
    c = np.tanh(b) * b
    return (t * 3.0).sum(axis=0), c, np.cos(c) + t.T


CORPUS = {
    "views": (lambda x: (x.reshape(-1), x.T, np.broadcast_to(x.sum(), (3,)), x[1:, ::2]),
              lambda: (np.arange(12.0).reshape(3, 4),)),
    "rank-0 and ints": (lambda i, x: (i.sum() * 3, (i % 5).max(), x.mean()),
                        lambda: (np.arange(10, dtype=np.int32), np.ones(4, np.float64))),
    "library calls": (lambda x: (np.sort(x)[::-1], np.cumsum(x), np.median(x)),
                        lambda: (np.random.default_rng(2).standard_normal(33),)),
    "returns an argument": (lambda x, y: (x, y * 2), lambda: (np.ones(3), np.ones(2))),
    "a view outlives its array": (view_outlives, lambda: (np.arange(12.0).reshape(3, 4),)),
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_numpy_tier_gives_numpy_answers(name):
    fn, make = CORPUS[name]
    f = xlanb.jit(fn, tiered=True)
    args = make()
    for _ in range(2):                                   # checked, then fast version
        got = f(*args)
        assert f.last_compiled.tier == "numpy"
        want = fn(*make())
        for g, w in zip(got, want):
            assert_close(g, w, n=33)
    assert f.wait_compiled(WAIT)
    compiled = f(*args)
    for g, w in zip(compiled, fn(*make())):
        assert_close(g, w, n=33)


def views_and_copies(x):
    return x.reshape(-1), x * 1.0, np.broadcast_to(x.sum(), (3,)).copy(), x.T


def test_writes_into_numpy_tier_outputs_behave_as_in_numpy():
    """A returned view of an argument is the caller's view (writes reach the argument);
    everything else is a separate, writable array."""
    mine, theirs = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3)
    f = xlanb.jit(views_and_copies, tiered=True)
    for outs in (f(mine), views_and_copies(theirs)):
        for i, out in enumerate(outs):
            out.flat[0] = -1.0 - i
    assert f.last_compiled.tier == "numpy"
    assert_close(mine, theirs)
    assert f.wait_compiled(WAIT)


def failing_worker(script: str):
    return (sys.executable, "-c", textwrap.dedent(script))


REPLIES_ERROR = """
    import sys
    from xlanb_runtime.background import receive, send
    while (request := receive(sys.stdin.buffer)) is not None:
        send(sys.stdout.buffer, {"id": request["id"], "ok": False, "started": 0.0,
                                 "seconds": 0.0, "error": "injected compile failure"})
"""


@pytest.mark.parametrize("worker", [REPLIES_ERROR, "import sys; sys.exit(3)"],
                         ids=["compile error", "worker exits"])
def test_a_failed_background_compile_stays_on_numpy_tier(worker, monkeypatch, tmp_path):
    background.shutdown()
    monkeypatch.setattr(background, "WORKER_COMMAND", failing_worker(worker))
    rng = np.random.default_rng(3)
    base = [rng.standard_normal(6).astype(np.float32) for _ in range(3)]
    f = xlanb.jit(update_in_place, tiered=True)
    for call in range(2):
        mine, theirs = [a.copy() for a in base], [a.copy() for a in base]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = f(mine[0], mine[1], mine[2][:4])
        want = update_in_place(theirs[0], theirs[1], theirs[2][:4])
        assert_results(got, want)
        for m, t in zip(mine, theirs):              # updated exactly once, as NumPy does
            assert_close(m, t)
        if call == 0:
            assert f.wait_compiled(WAIT)
        else:
            assert any(issubclass(w.category, background.BackgroundCompileWarning)
                       for w in caught)
    assert f.last_compiled.tier == "numpy" and f.last_compiled.background.error
    background.shutdown()
    monkeypatch.undo()
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path / "cache"))
    blocking = xlanb.jit(update_in_place, tiered=False)      # the cache is intact
    mine, theirs = [a.copy() for a in base], [a.copy() for a in base]
    assert_results(blocking(mine[0], mine[1], mine[2][:4]),
                   update_in_place(theirs[0], theirs[1], theirs[2][:4]))


def test_a_failing_numpy_tier_call_is_answered_by_the_compiled_program(monkeypatch):
    from xlanb_runtime import numpy_tier

    def broken(self, *arrays):
        raise AssertionError("numpy tier fault")
    monkeypatch.setattr(numpy_tier.NumpyProgram, "driver", broken)
    f = xlanb.jit(layer, tiered=True)
    args = args_layer()
    assert_results(f(*args), layer(*args))
    assert f.last_compiled.tier == "compiled" and f.last_compiled.numpy_tier_calls == 0


def test_worker_ends_with_the_process(tmp_path):
    script = textwrap.dedent("""
        import numpy as np, xlanb
        from xlanb_runtime import background
        f = xlanb.jit(lambda x: x * 2 + 1, tiered=True)
        f(np.ones(3))
        f.last_compiled.background.sent.wait(300)
        print(background.worker_pid(), flush=True)
    """)
    env = dict(os.environ, XLANB_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.split()[-1])
    with pytest.raises(ProcessLookupError):          # reaped at exit, not left running
        os.kill(pid, 0)


def test_shutdown_ends_the_worker():
    f = xlanb.jit(lambda x: x - 1, tiered=True)
    f(np.ones(3))
    assert f.last_compiled.background.sent.wait(WAIT)
    pid = background.worker_pid()
    assert pid is not None
    background.shutdown()
    assert background.worker_pid() is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert f.wait_compiled(WAIT)           # over: compiled before the worker ended, or not
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", background.BackgroundCompileWarning)
        assert_close(f(np.ones(3)), np.zeros(3))


def steps(x):
    for _ in range(40):
        x = np.tanh(x * 1.01 + 0.5) - 0.1 * x
    return x


def test_a_graph_survives_the_trip_to_the_worker():
    """Flattened, pickled (as the pipe carries it) and rebuilt, a graph prints the same;
    so does one holding a loop node (loop-reroll's output)."""
    import pickle
    from xlanb_runtime.ir import print_graph
    from xlanb_runtime.passes.loop_reroll import reroll_loops
    traced = xlanb.jit(layer).lower(*args_layer()).graph
    rolled = reroll_loops(xlanb.jit(steps).lower(np.ones(4)).graph)
    assert any(n.op.value == "loop" for n in rolled.nodes)
    for graph in (traced, rolled):
        flat = pickle.loads(pickle.dumps(background.flatten_graph(graph)))
        assert print_graph(background.rebuild_graph(flat)) == print_graph(graph)


def test_numpy_tier_calls_and_the_switch_over_are_trace_events(tmp_path):
    import json
    from xlanb_runtime import trace_events
    path = tmp_path / "trace.json"
    with flags.overriding(xla_trace_to=str(path)):
        f = xlanb.jit(layer, tiered=True)
        f(*args_layer())
        assert f.wait_compiled(WAIT) and f.last_compiled.tier == "compiled"
    trace_events.flush(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    calls = [e for e in events if e["name"] == "numpy-tier call" and e["cat"] == "run"]
    assert calls and calls[0]["args"]["tier"] == "numpy"
    assert any(e["name"] == "switch-over" for e in events)
