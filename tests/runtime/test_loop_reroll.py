"""`loop-reroll` and the loop op: a traced Python loop of identical iterations compiles
once, whatever its trip count, and gives NumPy's results and arguments."""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import xlanb
import xlanb_runtime
from xlanb_runtime.ir import Graph, builder as B, interpret, parse_graph, print_graph, verify
from xlanb_runtime.ir.graph import LoopBody
from xlanb_runtime.ir.ops import Op
from xlanb_runtime.passes.loop_reroll import (MAX_WRITE_SPREAD, MIN_ROLLED_NODES, MIN_TRIPS,
                                               reroll_loops)

from tolerance import assert_close


def jacobi_1d(steps, A, B):
    for _ in range(1, steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def damped(x, b, steps):
    """Carried state, an invariant read every trip, and a result read after the loop."""
    total = x.sum()
    for _ in range(steps):
        x = 0.9 * x + b
        total = total + x.sum()
    return x, total


def _run(fn, args, static=()):
    expected_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = fn(*expected_args)
    jitted = xlanb.jit(fn, static_argnums=static)
    compiled = jitted.lower(*got_args).compile()
    got = jitted(*got_args)
    return expected, got, expected_args, got_args, compiled


def _kernel_count(compiled) -> int:
    return sum(1 for k in compiled.kernels if k.kind != "library")


@pytest.mark.parametrize("steps", [MIN_TRIPS + 3, 5 * MIN_TRIPS])
def test_a_stencil_time_loop_becomes_one_loop_op(steps):
    rng = np.random.default_rng(0)
    args = (steps, rng.random(30), rng.random(30))
    expected, got, expected_args, got_args, compiled = _run(jacobi_1d, args, static=(0,))
    assert got is None and expected is None
    for e, g in zip(expected_args[1:], got_args[1:]):
        assert_close(g, e, n=steps, k=4)
    text = compiled.as_text()
    assert text.count(" = loop(") == 1 and f"arg=({steps - 1}, 2)" in text


def test_kernel_count_does_not_grow_with_the_trip_count():
    rng = np.random.default_rng(1)
    counts = []
    for steps in (MIN_TRIPS + 2, 10 * MIN_TRIPS):
        compiled = xlanb.jit(jacobi_1d, static_argnums=(0,)).lower(
            steps, rng.random(16), rng.random(16)).compile()
        counts.append(_kernel_count(compiled))
    assert counts[0] == counts[1] and counts[0] >= 1


def test_carried_invariant_and_result_values():
    rng = np.random.default_rng(2)
    args = (rng.random(7), rng.random(7), 3 * MIN_TRIPS)
    expected, got, _, _, compiled = _run(damped, args, static=(2,))
    assert " = loop(" in compiled.as_text()
    assert_close(got[0], expected[0], n=args[2])
    assert_close(got[1], expected[1], n=7 * args[2])


def test_a_short_elementwise_loop_stays_unrolled_and_fuses():
    """8 steps of x * 0.999 + 0.5 fuse into one kernel unrolled; rolled, each trip would
    be a kernel of its own (tutorial 01's chain)."""
    def chain(x):
        for _ in range(MIN_TRIPS):
            x = x * 0.999 + 0.5
        return x
    x = np.random.default_rng(10).random(100)
    jitted = xlanb.jit(chain)
    assert_close(jitted(x), chain(x), n=MIN_TRIPS)
    assert " = loop(" not in jitted.last_compiled.as_text()
    assert _kernel_count(jitted.last_compiled) == 1


def test_short_loops_stay_unrolled():
    rng = np.random.default_rng(3)
    args = (rng.random(7), rng.random(7), MIN_TRIPS - 1)
    expected, got, _, _, compiled = _run(damped, args, static=(2,))
    assert " = loop(" not in compiled.as_text()
    assert_close(got[1], expected[1], n=7 * args[2])


def test_a_loop_whose_iterations_escape_is_not_rolled():
    def running_means(x):
        rows = []
        for _ in range(MIN_TRIPS + 2):
            x = 0.5 * x + 1.0
            rows.append(x.mean())          # every iteration's value is read after the loop
        return np.array(rows)
    x = np.random.default_rng(4).random(5)
    expected = running_means(x.copy())
    got = xlanb.jit(running_means)(x.copy())
    assert_close(got, expected, n=5)


def test_a_loop_around_rolled_loops_rolls_too():
    def nested(x):
        for _ in range(MIN_ROLLED_NODES // 4):
            for _ in range(MIN_ROLLED_NODES // 2):
                x = np.tanh(x) * 1.5
            x = x - x.mean()
        return x
    x = np.random.default_rng(5).random(6)
    jitted = xlanb.jit(nested)
    compiled = jitted.lower(x).compile()
    assert_close(jitted(x), nested(x), n=6 * MIN_ROLLED_NODES ** 2, k=16)
    top = [n for n in parse_graph(print_graph(compiled.executable.optimized)).nodes
           if n.op is Op.LOOP]
    assert len(top) == 1 and any(n.op is Op.LOOP for n in top[0].arg.body.nodes)


def test_gradient_through_a_long_loop_matches_finite_differences():
    def loss(w, x):
        for _ in range(2 * MIN_TRIPS):
            x = np.tanh(x * w)
        return (x * x).sum()
    w, x = np.float64(0.7), np.random.default_rng(6).random(4)
    grad = xlanb.jit(xlanb.grad(loss))(w, x)
    h = 1e-6
    numeric = (loss(w + h, x) - loss(w - h, x)) / (2 * h)
    assert abs(grad - numeric) <= 1e-6 * max(1.0, abs(numeric))


def test_a_scalar_loop_of_2000_steps_rolls_with_a_moving_slice():
    """`a[i, 0]` moves one row per trip: the body counts trips and reads a dynamic slice;
    the 2,000 steps compile as one loop, under jit and under auto-clustering."""
    def go_fast(a):
        trace = 0.0
        for i in range(a.shape[0]):
            trace += np.tanh(a[i, 0])
        return a + trace
    a = np.random.default_rng(7).random((2000, 2))
    expected = go_fast(a)
    jitted = xlanb.jit(go_fast)
    assert_close(jitted(a), expected, n=2000)
    text = jitted.last_compiled.as_text()
    assert text.count(" = loop(") == 1 and "dynamic-slice" in text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(xlanb.jit(go_fast, must_compile=False)(a), expected, n=2000)


def _loop_decision(compiled) -> str:
    [loop] = [k for k in compiled.kernels if k.ops == ["loop"]]
    return loop.decisions[-1]


def test_a_loop_of_numba_kernels_runs_as_one_compiled_function():
    """The trips run inside one Numba function (codegen/compiled_loop.py), with the same
    results, from a read-only, strided first state; the state passed in is not written."""
    def accumulate(x, b, steps):
        for _ in range(steps):
            x = np.tanh(0.9 * x + b)
        return x
    base = np.random.default_rng(9).random((6, 4))
    x, b = base[:, ::2], base[0, :2].copy()      # a strided state
    x.flags.writeable = False
    before = x.copy()
    expected, got, _, _, compiled = _run(accumulate, (x, b, 3 * MIN_TRIPS), static=(2,))
    assert "in one compiled function" in _loop_decision(compiled)
    assert_close(got, expected, n=3 * MIN_TRIPS)
    np.testing.assert_array_equal(x, before)


def test_debug_nans_still_checks_every_trip():
    """--xla_debug_nans checks each kernel's output on every trip, so such loops keep the
    per-trip driver instead of one compiled function."""
    from xlanb_runtime import flags
    from xlanb_runtime.executable import NonFiniteError

    def iterate(x, b, steps):
        for _ in range(steps):
            x = np.log(x * 0.5 + b)        # 5 -> 0.96 -> -0.54 -> log of a negative
        return x
    args = (np.full((4, 3), 5.0), np.full(3, 0.1), 4 * MIN_TRIPS)
    with flags.overriding(xla_debug_nans=True), pytest.raises(NonFiniteError):
        xlanb.jit(iterate, static_argnums=(2,), tiered=False)(*args)


def test_a_loop_with_a_library_call_keeps_the_per_trip_driver():
    def power(A, v, steps):
        for _ in range(steps):
            v = A @ v
            v = v / np.sqrt(v @ v)
        return v
    rng = np.random.default_rng(10)
    args = (rng.random((5, 5)), rng.random(5), 6 * MIN_TRIPS)
    expected, got, _, _, compiled = _run(power, args, static=(2,))
    assert "in one compiled function" not in _loop_decision(compiled)
    assert_close(got, expected, n=5 * args[2])


def test_a_strided_slice_that_moves_stays_unrolled():
    def every_other(x):
        total = x[0:2:2].sum()
        for i in range(1, MIN_TRIPS + 4):
            total = total + x[i:i + 4:2].sum()
        return total
    x = np.random.default_rng(8).random(40)
    jitted = xlanb.jit(every_other)
    assert_close(jitted(x), every_other(x), n=40)
    assert "dynamic-slice" not in jitted.last_compiled.as_text()


def test_dynamic_slice_clamps_its_starts_as_xla_does():
    x = B.parameter(0, (5, 4), np.float64)
    i = B.parameter(1, (), np.int64)
    graph = Graph([x, i], [B.dynamic_slice(x, [i, B.constant(np.int64(1))], (2, 3))], "d")
    verify(graph)
    text = print_graph(graph)
    assert print_graph(parse_graph(text)) == text
    data = np.arange(20.0).reshape(5, 4)
    for start, rows in ((0, slice(0, 2)), (2, slice(2, 4)), (4, slice(3, 5)), (-3, slice(0, 2))):
        np.testing.assert_array_equal(interpret(graph, [data, np.int64(start)])[0],
                                      data[rows, 1:4])
        compiled = xlanb_runtime.compile(graph)
        np.testing.assert_array_equal(compiled.run([data, np.array(start)])[0],
                                      data[rows, 1:4])


def test_loop_ir_prints_parses_verifies_and_interprets():
    x = B.parameter(0, (3,), np.float64)
    c = B.parameter(1, (3,), np.float64)
    step = B.binary(Op.ADD, B.binary(Op.MUL, x, x), c)
    body = Graph([x, c], [step, B.reduce(step, "sum", (0,))], "f.loop_body")
    p0, p1 = B.parameter(0, (3,), np.float64), B.parameter(1, (3,), np.float64)
    loop = B.loop([p0, p1], LoopBody(4, 1, body))
    graph = Graph([p0, p1], [B.loop_result(loop, 0), B.loop_result(loop, 1)], "f")
    verify(graph)
    text = print_graph(graph)
    assert print_graph(parse_graph(text)) == text
    x0, c0 = np.array([0.1, 0.2, 0.3]), np.array([0.5, -0.5, 0.25])
    expected = x0
    for _ in range(4):
        expected = expected * expected + c0
    got = interpret(parse_graph(text), [x0, c0])
    np.testing.assert_allclose(got[0], expected, rtol=1e-15)
    np.testing.assert_allclose(got[1], expected.sum(), rtol=1e-15)


def test_reroll_keeps_a_graph_without_loops_as_is():
    x = B.parameter(0, (4,), np.float32)
    graph = Graph([x], [B.unary(Op.EXP, B.binary(Op.ADD, x, x))], "g")
    assert reroll_loops(graph) is graph


def test_a_scheme_with_two_time_levels_rolls():
    """`prev, cur = cur, nxt`: a value read two trips after it was made is carried as two
    parameters, one passed down each trip."""
    def wave(u, steps):
        prev, cur = u.copy(), u.copy()
        for _ in range(steps):
            nxt = np.empty_like(cur)
            nxt[1:-1] = 2 * cur[1:-1] - prev[1:-1] + 0.25 * (cur[2:] - 2 * cur[1:-1]
                                                             + cur[:-2])
            nxt[0] = nxt[-1] = 0.0
            prev, cur = cur, nxt
        return cur
    u = np.sin(np.linspace(0, 3, 40))
    jitted = xlanb.jit(wave, static_argnums=(1,))
    compiled = jitted.lower(u, 3 * MIN_TRIPS).compile()
    assert " = loop(" in compiled.as_text()
    assert_close(jitted(u, 3 * MIN_TRIPS), wave(u, 3 * MIN_TRIPS), n=3 * MIN_TRIPS)


def test_arrays_built_a_few_elements_at_a_time_roll_with_a_moving_pad():
    """`out[i] = f(x[i])`: the write lowers to pads whose edges move one place per trip,
    so the loop rolls into a dynamic-pad, rows of a short matrix as single elements of a
    long vector: the carried array is updated in place (buffers.py), so a trip costs the
    part it writes, not the array."""
    def normalize_rows(x):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            out[i] = x[i] / x[i].sum()
        return out

    def build(x):
        out = np.empty(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = np.tanh(x[i]) * 2
        return out
    rng = np.random.default_rng(9)
    for fn, x, rolls in ((normalize_rows, rng.random((MAX_WRITE_SPREAD, 5)), True),
                         (build, rng.random(3 * MAX_WRITE_SPREAD), True)):
        jitted = xlanb.jit(fn)
        assert_close(jitted(x), fn(x), n=5)
        assert ("dynamic-pad" in jitted.last_compiled.as_text()) == rolls


def test_dynamic_pad_places_its_operand_clamped():
    x = B.parameter(0, (2,), np.float64)
    low = B.parameter(1, (), np.int64)
    graph = Graph([x, low], [B.dynamic_pad(x, B.constant(np.float64(-1.0)), [low], (5,))],
                  "p")
    verify(graph)
    text = print_graph(graph)
    assert print_graph(parse_graph(text)) == text
    compiled = xlanb_runtime.compile(graph)
    for start, placed in ((0, 0), (2, 2), (3, 3), (9, 3), (-1, 0)):
        expected = np.full(5, -1.0)
        expected[placed:placed + 2] = [7.0, 8.0]
        args = [np.array([7.0, 8.0]), np.array(start)]
        np.testing.assert_array_equal(interpret(graph, args)[0], expected)
        np.testing.assert_array_equal(compiled.run(args)[0], expected)


def test_sibling_loops_roll_in_one_search_and_chain_their_state():
    """Each search rolls every loop it finds (one rewrite per level of nesting, not per
    loop); a loop whose first state is an earlier sibling's result is rebuilt on it."""
    from xlanb_runtime.passes.loop_reroll import _roll_all

    def rows(C, A):
        for i in range(4):                   # the row's width changes: 4 separate loops
            for k in range(A.shape[1]):
                C[i, :i + 1] += 0.5 * A[i, k] * A[:i + 1, k]
        return C

    rng = np.random.default_rng(5)
    args = (rng.random((4, 4)), rng.random((4, 3 * MIN_TRIPS)))
    graph = xlanb.jit(rows).lower(*args).traced.graph
    once = _roll_all(graph)
    assert sum(n.op is Op.LOOP for n in once.nodes) == 4
    expected, got, *_ = _run(rows, args)
    assert_close(got, expected, n=3 * MIN_TRIPS, k=4)


def test_scalar_constants_that_count_with_the_trip_roll():
    """`N[I] = n` and `rmax * i / npt` (npbench mandelbrot1, azimint_naive): the trips
    differ only in a scalar constant that counts with the trip; the body computes it as
    first + trip * step, in the constant's dtype, bit for bit the traced value.  `res[i]`
    makes `res` anew each trip, but beside the trip's work over all radii that is cheap:
    it rolls though `res` is more than MAX_WRITE_SPREAD times the element written."""
    def escape_time(z, c, steps):
        n = np.zeros(z.shape, dtype=np.int64)
        for k in range(steps):
            inside = np.less(abs(z), 2.0)
            n[inside] = k
            z = np.where(inside, z * z + c, z)
        return z, n

    def rings(data, radius, npt):
        rmax = radius.max()
        res = np.zeros(npt)
        for i in range(npt):
            r1, r2 = rmax * i / npt, rmax * (i + 1) / npt
            ring = np.logical_and(r1 <= radius, radius < r2)
            res[i] = np.where(ring, data, 0.0).sum() / np.maximum(ring.sum(), 1)
        return res
    rng = np.random.default_rng(3)
    z0 = rng.standard_normal((6, 7)) * 0.5 + 1j * rng.standard_normal((6, 7)) * 0.5
    radius = rng.random(64 * MAX_WRITE_SPREAD)
    for fn, args, static in ((escape_time, (z0, z0[::-1].copy(), 3 * MIN_TRIPS), (2,)),
                             (rings, (rng.random(radius.size), radius,
                                      2 * MAX_WRITE_SPREAD),
                              (2,))):
        expected, got, _, _, compiled = _run(fn, args, static)
        for e, g in zip(expected if isinstance(expected, tuple) else (expected,),
                        got if isinstance(got, tuple) else (got,)):
            assert_close(g, e, n=radius.size)
        assert compiled.as_text().count(" = loop(") == 1


def test_a_float_constant_that_is_no_whole_number_does_not_count():
    """0.1 * k is not first + trip * step bit for bit: such a loop stays unrolled."""
    def f(x):
        for k in range(4 * MIN_TRIPS):
            x = (x * 0.5 + 0.1 * k) * 0.75 + x * 0.125 - x * x * 0.0625 + 0.25
        return x
    x = np.linspace(0, 1, 5)
    expected, got, _, _, compiled = _run(f, (x,))
    assert_close(got, expected, n=4 * MIN_TRIPS)
    assert " = loop(" not in compiled.as_text()


def test_a_counted_constant_keeps_the_sign_of_a_traced_negative_zero():
    """(5.0 - k) * -1.0 is -0.0 at k = 5, where first + trip * step gives +0.0, and
    atan2(-0.0, x < 0) is -pi, not pi: the rerolled graph keeps NumPy's value (that trip
    does not count); with +0.0 there the same loop rolls."""
    def rows(x, sign):
        out = np.zeros((2 * MIN_TRIPS, x.size))
        for k in range(2 * MIN_TRIPS):
            t = np.sin(x * 0.5) * 0.5 + np.cos(x + 1.0) * 0.25
            out[k] = np.arctan2((5.0 - k) * sign, x) + np.tanh(t) + np.exp(-t * t)
        return out
    x = -np.linspace(0.1, 1, 4)
    for sign, rolls in ((-1.0, False), (1.0, True)):
        graph = xlanb.jit(rows, static_argnums=(1,)).lower(x, sign).graph
        rerolled = reroll_loops(graph)
        np.testing.assert_array_equal(interpret(rerolled, [x])[0], rows(x, sign))
        assert any(n.op is Op.LOOP for n in rerolled.nodes) == rolls


def test_a_constant_that_differs_without_counting_still_lets_the_rest_roll():
    """A first trip with its own constant (0.3, then 0.7): trips 2.. roll as before
    constants could count, though the stretch of all trips cannot."""
    def f(x):
        for k in range(4 * MIN_TRIPS):
            c = 0.3 if k == 0 else 0.7
            x = (x * c + 0.5) * 0.75 + x * 0.125 - x * x * 0.0625 + 0.25
        return x
    x = np.linspace(0, 1, 5)
    expected, got, _, _, compiled = _run(f, (x,))
    assert_close(got, expected, n=4 * MIN_TRIPS)
    assert compiled.as_text().count(" = loop(") == 1


def test_a_loop_around_rolled_loops_rolls_too():
    """npbench conv2d: `for i: for j: out[:, i, j, :] = ...`.  Each row's inner loop rolls
    with its slices' first places as loop inputs, so the rows are copies of one body whose
    inputs count with i, and the outer loop rolls around them: a few loops, not one per
    row."""
    def conv2d(x, w):
        k, rows, cols = w.shape[0], x.shape[1] - w.shape[0] + 1, x.shape[2] - w.shape[0] + 1
        out = np.empty((x.shape[0], rows, cols, w.shape[3]), dtype=x.dtype)
        for i in range(rows):
            for j in range(cols):
                out[:, i, j, :] = np.sum(x[:, i:i + k, j:j + k, :, np.newaxis] *
                                         w[np.newaxis, :, :, :], axis=(1, 2, 3))
        return out

    rng = np.random.default_rng(12)
    x, w = rng.random((2, 2 * MIN_TRIPS + 1, 2 * MIN_TRIPS + 1, 2)), rng.random((2, 2, 2, 3))
    jitted = xlanb.jit(conv2d)
    assert_close(jitted(x, w), conv2d(x, w), n=8)
    text = jitted.lower(x, w).compile().as_text()
    top = [line for line in text.splitlines() if " = loop(" in line and "|" not in line]
    nested = [line for line in text.splitlines() if " = loop(" in line and "|" in line]
    assert 1 <= len(top) <= 3 and nested        # rows around rolled columns


def hmm_forward(log_pi, log_a, log_b, obs):
    """A loop reading an element of an index array per trip (`obs[t]`): each trip's index
    is range-checked at run time (check_merge.py merges the checks)."""
    alpha = log_pi + log_b[:, obs[0]]
    for t in range(1, len(obs)):
        s = alpha[:, None] + log_a
        m = s.max(0)
        alpha = m + np.log(np.exp(s - m).sum(0)) + log_b[:, obs[t]]
    return alpha


def _hmm_args(steps: int):
    rng = np.random.default_rng(5)
    a, b = rng.random((4, 4)), rng.random((4, 6))
    return [np.log(np.full(4, 0.25)), np.log(a / a.sum(1, keepdims=True)),
            np.log(b / b.sum(1, keepdims=True)), rng.integers(-6, 6, steps)]


def test_a_loop_indexing_by_each_element_of_an_index_array_rolls():
    """Each trip's range check of `obs[t]` is a program output; merged into one check of
    `obs[1:]`, the copies roll (they did not: 3 kernels a trip)."""
    args = _hmm_args(24)
    jitted = xlanb.jit(hmm_forward, tiered=False)
    assert_close(jitted(*args), hmm_forward(*args))
    text = jitted.lower(*args).compile().as_text()
    assert text.count(" = loop(") == 1
    assert text.count("xlanb.check_range") == 2      # obs[0], and obs[1:] once


@pytest.mark.parametrize("bad", [{3: 6}, {0: -7}, {23: 9}, {5: 8, 17: -9}, {9: -7, 4: 100}])
def test_merged_element_checks_raise_numpys_first_error(bad):
    """An index out of bounds at any trip raises NumPy's IndexError with NumPy's value:
    the first offending trip's where several are."""
    args = _hmm_args(24)
    for t, value in bad.items():
        args[3][t] = value
    with pytest.raises(IndexError) as want:
        hmm_forward(*args)
    with pytest.raises(IndexError) as got:
        xlanb.jit(hmm_forward, tiered=False)(*args)
    assert str(got.value) == str(want.value)
