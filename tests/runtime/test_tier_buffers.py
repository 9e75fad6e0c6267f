"""The NumPy tier's buffers (tier_buffers.py): intermediate values written into one arena.

Oracles: NumPy eager for results and arguments; the plan itself for its invariant (no two
values alive at once share memory).  Counts, never timings.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import xlanb
from xlanb_runtime import numpy_tier
from xlanb_runtime.ir import Op
from xlanb_runtime.tier_buffers import VIEWS, plan_buffers
from tolerance import assert_close


def attention_loss(w, x, mask):
    """A small attention block with layer norm (W5's kind of step)."""
    q, k = x @ w["q"], x @ w["k"]
    scores = q @ k.T / 4.0 + (1 - mask) * -1e4
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    h = (e / e.sum(axis=-1, keepdims=True)) @ x
    mean = h.mean(axis=-1, keepdims=True)
    y = (h - mean) / np.sqrt(((h - mean) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    return (np.tanh(y) ** 2).sum()


def attention_step(w, x, mask):
    loss, grads = xlanb.value_and_grad(attention_loss)(w, x, mask)
    return {name: w[name] - 0.1 * grads[name] for name in w}, loss


def attention_args(seed=0):
    rng = np.random.default_rng(seed)
    w = {n: rng.standard_normal((16, 16)).astype(np.float32) / 4 for n in "qk"}
    mask = (rng.random((12, 12)) > 0.2).astype(np.float32)
    return w, rng.standard_normal((12, 16)).astype(np.float32), mask


def tier_graph(fn, *args):
    """`fn`'s graph as the NumPy tier runs it (after its passes)."""
    lowered = xlanb.jit(fn).lower(*args)
    return numpy_tier.optimize(lowered.graph, lowered.options)[0]


def lifetimes(graph):
    """Node index -> the last statement reading its memory (through views too)."""
    nodes = graph.nodes
    index = {id(n): i for i, n in enumerate(nodes)}
    root = {}
    for i, node in enumerate(nodes):
        root[i] = root[index[id(node.inputs[0])]] if node.op in VIEWS else i
    last = {}
    for i, node in enumerate(nodes):
        for source in node.inputs:
            last[root[index[id(source)]]] = i
    return last


def test_live_values_never_share_memory_and_blocks_are_reused():
    graph = tier_graph(attention_step, *attention_args())
    plan = plan_buffers(graph)
    last = lifetimes(graph)
    spans = {}
    for i, slot in plan.slots.items():
        offset, dtype, shape = plan.views[slot]
        spans[i] = (offset, offset + dtype.itemsize * int(np.prod(shape)))
    for i in spans:
        for j in spans:
            if i < j and spans[i][0] < spans[j][1] and spans[j][0] < spans[i][1]:
                # j may take i's memory only once i is dead, or in place where i dies
                assert last.get(i, i) < j or (last.get(i) == j and
                                               graph.nodes[j].shape == graph.nodes[i].shape)
    total = sum(b - a for a, b in spans.values())
    assert len(plan.slots) >= 10
    assert plan.size < total / 2             # blocks are reused along the step
    outputs = {id(o) for o in graph.outputs}
    assert not any(id(graph.nodes[i]) in outputs for i in plan.slots)


def test_dots_reductions_and_ufuncs_get_buffers_with_numpy_dtypes():
    graph = tier_graph(attention_step, *attention_args())
    plan = plan_buffers(graph)
    ops = {graph.nodes[i].op for i in plan.slots}
    assert {Op.DOT, Op.REDUCE, Op.MUL, Op.ADD} <= ops
    # an int -> float division resolves to float64 in NumPy: never forced into a buffer
    ints = tier_graph(lambda i, j: (i / j + 0.5) * 2, np.arange(1, 5), np.arange(2, 6))
    for i in plan_buffers(ints).slots:
        assert ints.nodes[i].op is not Op.DIV or ints.nodes[i].inputs[0].dtype.kind == "f"


@pytest.mark.parametrize("tiered_calls", [3])
def test_numpy_tier_step_matches_numpy_call_after_call(tiered_calls, tmp_path, monkeypatch):
    """Checked first call, then the straight-line version, reusing one arena: each call's
    results are NumPy's, and no call's result changes when a later call runs."""
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path))
    program = numpy_tier.NumpyProgram(tier_graph(lambda x, y: (np.tanh(x @ y) * 2 + x).sum(0)
                                                 + np.exp(-x).mean(1)[:3],
                                                 np.ones((3, 3)), np.ones((3, 3))))
    results, expected = [], []
    for seed in range(tiered_calls):
        rng = np.random.default_rng(seed)
        x, y = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
        results.append(program.driver(x, y)[0])
        expected.append((np.tanh(x @ y) * 2 + x).sum(0) + np.exp(-x).mean(1)[:3])
    assert program.source and "out=_b[" in program.source
    for got, want in zip(results, expected):
        assert_close(got, want)


def test_threads_calling_one_numpy_tier_program_get_their_own_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path))
    graph = tier_graph(lambda x: np.sqrt(np.abs(x @ x.T) + 1.0).sum(axis=1),
                       np.ones((64, 64), np.float32))
    program = numpy_tier.NumpyProgram(graph)
    inputs = [np.random.default_rng(s).standard_normal((64, 64)).astype(np.float32)
              for s in range(4)]
    program.driver(inputs[0])                       # the checked first call
    failures = []

    def run(x):
        want = np.sqrt(np.abs(x @ x.T) + 1.0).sum(axis=1)
        for _ in range(30):
            got = program.driver(x)[0]
            if not np.allclose(got, want, rtol=1e-5):
                failures.append(got)
    threads = [threading.Thread(target=run, args=(x,)) for x in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_jitted_step_on_the_numpy_tier_updates_like_numpy(tmp_path, monkeypatch):
    """A training step with in-place argument updates, twice on the NumPy tier (checked,
    then fast): the same results and the same argument contents as NumPy."""
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path))
    from xlanb_runtime import background
    monkeypatch.setattr(background.Job, "start", lambda self: None)   # stay on the tier

    def step(w, x, mask, log):
        new, loss = attention_step(w, x, mask)
        log[0] += loss                                # an argument written in place
        return new, loss
    f = xlanb.jit(step, tiered=True)
    for seed in range(2):
        w, x, mask = attention_args(seed)
        mine_log, their_log = np.zeros(2, np.float32), np.zeros(2, np.float32)
        got_w, got_loss = f(w, x, mask, mine_log)
        assert f.last_compiled.tier == "numpy"
        want_w, want_loss = numpy_attention_step(w, x, mask)
        their_log[0] += want_loss
        assert_close(got_loss, want_loss, n=200)
        for name in want_w:
            np.testing.assert_allclose(got_w[name], want_w[name], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(mine_log, their_log, rtol=1e-5)
    assert f.last_compiled.numpy_tier_calls == 2


def numpy_attention_step(w, x, mask, eps=1e-3):
    """The step by central differences in float64 (the gradient's oracle)."""
    def loss(v):
        return attention_loss({k: a.astype(np.float64) for k, a in v.items()},
                              x.astype(np.float64), mask.astype(np.float64))
    grads = {}
    for name, a in w.items():
        g = np.zeros(a.shape)
        for index in np.ndindex(a.shape):
            up, down = dict(w), dict(w)
            up[name], down[name] = a.astype(np.float64), a.astype(np.float64)
            up[name][index] += eps
            down[name][index] -= eps
            g[index] = (loss(up) - loss(down)) / (2 * eps)
        grads[name] = g
    return {n: w[n] - 0.1 * grads[n].astype(np.float32) for n in w}, np.float32(loss(w))


@pytest.mark.parametrize("case", ["transposed views", "broadcast rows", "two free dims"])
def test_interpreter_dot_with_and_without_out_matches_einsum(case):
    """`_dot` runs stacked transposed views through matmul as they are (no copies) where
    BLAS can read them, and reshapes otherwise; into `out` or not, einsum's answer."""
    from xlanb_runtime.ir.interpret import _dot
    rng = np.random.default_rng(4)
    if case == "transposed views":       # (b, s, h, d) seen as (b, h, s, d), as attention does
        x = rng.standard_normal((2, 5, 3, 4)).transpose(0, 2, 1, 3)
        y = rng.standard_normal((2, 5, 3, 4)).transpose(0, 2, 1, 3)
        dims, spec = ((0, 1), (0, 1), (3,), (3,)), "bhsd,bhtd->bhst"
    elif case == "broadcast rows":       # a stride-0 matrix: not one BLAS reads in place
        x = np.broadcast_to(rng.standard_normal((1, 1, 6)), (2, 4, 6))
        y = rng.standard_normal((2, 6, 3))
        dims, spec = ((0,), (0,), (2,), (1,)), "bik,bkj->bij"
    else:
        x, y = rng.standard_normal((3, 4, 5)), rng.standard_normal((5, 2))
        dims, spec = ((), (), (2,), (0,)), "abk,kc->abc"
    want = np.einsum(spec, x, y)
    np.testing.assert_allclose(_dot(x, y, dims), want, rtol=1e-12)
    out = np.empty(want.shape)
    assert _dot(x, y, dims, out) is out
    np.testing.assert_allclose(out, want, rtol=1e-12)
