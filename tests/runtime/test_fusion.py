"""Fusion and CPU codegen: IR text in, kernel counts and refusal reasons out, and every
compiled program checked against the reference interpreter."""
from __future__ import annotations

import re

import numpy as np
import pytest

import xlanb
import xlanb_runtime as runtime
from xlanb_runtime import flags
from xlanb_runtime.ir import interpret, parse_graph
from xlanb_runtime.passes.fusion import plan_fusion
from tolerance import assert_close, graph_scale

# name, IR text, expected number of generated (non-library) kernels
CASES = [
    ("sum_of_fma", """
module m
  %0 = parameter(), arg=0 : f32[64]
  %1 = parameter(), arg=1 : f32[64]
  %2 = parameter(), arg=2 : f32[64]
  %3 = multiply(%1, %2) : f32[64]
  %4 = add(%0, %3) : f32[64]
  %5 = reduce(%4), arg=('sum', (0,)) : f32[]
  return (%5)
""", 1),
    ("row_softmax_parts", """
module m
  %0 = parameter(), arg=0 : f64[6,5]
  %1 = reduce(%0), arg=('max', (1,)) : f64[6]
  %2 = broadcast(%1), arg=(0,) : f64[6,5]
  %3 = subtract(%0, %2) : f64[6,5]
  %4 = exponential(%3) : f64[6,5]
  %5 = reduce(%4), arg=('sum', (1,)) : f64[6]
  %6 = broadcast(%5), arg=(0,) : f64[6,5]
  %7 = divide(%4, %6) : f64[6,5]
  return (%7)
""", 1),          # one row kernel: max | exp written while summed | divide, row by row
    ("row_logsumexp", """
module m
  %0 = parameter(), arg=0 : f32[6,5]
  %1 = reduce(%0), arg=('max', (1,)) : f32[6]
  %2 = reshape(%1) : f32[6,1]
  %3 = broadcast(%2), arg=(0, 1) : f32[6,5]
  %4 = subtract(%0, %3) : f32[6,5]
  %5 = exponential(%4) : f32[6,5]
  %6 = reduce(%5), arg=('sum', (1,)) : f32[6]
  %7 = log(%6) : f32[6]
  %8 = add(%7, %1) : f32[6]
  return (%8)
""", 1),          # max | sum of exp | log: one row kernel (log's sealed copy keeps its flags)
    ("row_fusion_refuses_a_column_read", """
module m
  %0 = parameter(), arg=0 : f32[4,4]
  %1 = reduce(%0), arg=('max', (1,)) : f32[4]
  %2 = broadcast(%1), arg=(1,) : f32[4,4]
  %3 = subtract(%0, %2) : f32[4,4]
  return (%3)
""", 2),          # row i needs the max of every row: not row-local, two kernels
    ("row_fusion_waits_for_a_dot_between_stages", """
module m
  %0 = parameter(), arg=0 : f32[4,6]
  %1 = parameter(), arg=1 : f32[6,6]
  %2 = reduce(%0), arg=('max', (1,)) : f32[4]
  %3 = broadcast(%2), arg=(0,) : f32[4,6]
  %4 = subtract(%0, %3) : f32[4,6]
  %5 = dot(%4, %1), arg=((), (), (1,), (0,)) : f32[4,6]
  %6 = multiply(%5, %4) : f32[4,6]
  %7 = reduce(%6), arg=('sum', (1,)) : f32[4]
  %8 = broadcast(%7), arg=(0,) : f32[4,6]
  %9 = subtract(%4, %8) : f32[4,6]
  return (%9)
""", 3),          # rows(max, x - max) | dot | rows(sum, ...): the dot needs the first rows
    ("row_stages_of_unequal_length_share_an_input", """
module m
  %0 = parameter(), arg=0 : f32[40]
  %1 = slice(%0), arg=((0, 24, 1),) : f32[24]
  %2 = reshape(%1) : f32[4,6]
  %3 = negate(%2) : f32[4,6]
  %4 = slice(%0), arg=((24, 40, 1),) : f32[16]
  %5 = reshape(%4) : f32[4,4]
  %6 = exponential(%5) : f32[4,4]
  return (%3, %6)
""", 1),          # rows of 6 and of 4 in one row kernel: each stage sweeps its own length
    ("row_layer_norm", """
module m
  %0 = parameter(), arg=0 : f32[6,8]
  %1 = reduce(%0), arg=('sum', (1,)) : f32[6]
  %2 = constant(), arg=0.125 : f32[]
  %3 = broadcast(%2), arg=() : f32[6]
  %4 = multiply(%1, %3) : f32[6]
  %5 = broadcast(%4), arg=(0,) : f32[6,8]
  %6 = subtract(%0, %5) : f32[6,8]
  %7 = multiply(%6, %6) : f32[6,8]
  %8 = reduce(%7), arg=('sum', (1,)) : f32[6]
  %9 = broadcast(%2), arg=() : f32[6]
  %10 = multiply(%8, %9) : f32[6]
  %11 = rsqrt(%10) : f32[6]
  %12 = broadcast(%11), arg=(0,) : f32[6,8]
  %13 = multiply(%6, %12) : f32[6,8]
  return (%13)
""", 1),          # mean | variance | normalize: stages of one row kernel
    ("column_reduce_then_scale", """
module m
  %0 = parameter(), arg=0 : f32[7,3]
  %1 = reduce(%0), arg=('sum', (0,)) : f32[3]
  %2 = constant(), arg=0.5 : f32[]
  %3 = broadcast(%2), arg=() : f32[3]
  %4 = multiply(%1, %3) : f32[3]
  return (%4)
""", 1),
    ("middle_axis_reduce", """
module m
  %0 = parameter(), arg=0 : f32[2,3,4]
  %1 = reduce(%0), arg=('min', (1,)) : f32[2,4]
  return (%1)
""", 1),
    ("reverse_and_strided_slice_of_a_reshape", """
module m
  %0 = parameter(), arg=0 : f32[24]
  %1 = reshape(%0) : f32[4,6]
  %2 = reverse(%1), arg=(1,) : f32[4,6]
  %3 = reshape(%2) : f32[24]
  %4 = reverse(%3), arg=(0,) : f32[24]
  %5 = reshape(%4) : f32[2,12]
  %6 = slice(%5), arg=((0, 2, 1), (1, 12, 3)) : f32[2,4]
  %7 = reshape(%6) : f32[8]
  %8 = slice(%7), arg=((1, 8, 2),) : f32[4]
  %9 = exponential(%8) : f32[4]
  return (%9)
""", 1),          # index expressions compose: 23 - (i0 * 6 + ...), 3 * (...) are grouped
    ("transpose_slice_reverse_in_loop", """
module m
  %0 = parameter(), arg=0 : f32[4,6]
  %1 = transpose(%0), arg=(1, 0) : f32[6,4]
  %2 = slice(%1), arg=((1, 6, 2), (0, 4, 1)) : f32[3,4]
  %3 = reverse(%2), arg=(1,) : f32[3,4]
  %4 = iota(), arg=0 : f32[3,4]
  %5 = add(%3, %4) : f32[3,4]
  return (%5)
""", 1),
    ("multi_output_siblings", """
module m
  %0 = parameter(), arg=0 : f32[10]
  %1 = exponential(%0) : f32[10]
  %2 = reduce(%1), arg=('sum', (0,)) : f32[]
  %3 = reduce(%1), arg=('max', (0,)) : f32[]
  %4 = add(%2, %3) : f32[]
  return (%4, %1)
""", 1),
    ("int_ops_and_select", """
module m
  %0 = parameter(), arg=0 : s32[9]
  %1 = parameter(), arg=1 : s32[9]
  %2 = floor-divide(%0, %1) : s32[9]
  %3 = remainder(%0, %1) : s32[9]
  %4 = compare-gt(%2, %3) : pred[9]
  %5 = select(%4, %2, %3) : s32[9]
  %6 = convert(%5) : f32[9]
  return (%6)
""", 1),
    ("dot_with_bias_and_tanh", """
module m
  %0 = parameter(), arg=0 : f32[5,4]
  %1 = parameter(), arg=1 : f32[4,3]
  %2 = parameter(), arg=2 : f32[3]
  %3 = dot(%0, %1), arg=((), (), (1,), (0,)) : f32[5,3]
  %4 = broadcast(%2), arg=(1,) : f32[5,3]
  %5 = add(%3, %4) : f32[5,3]
  %6 = tanh(%5) : f32[5,3]
  return (%6)
""", 1),
    ("batched_transposed_dot", """
module m
  %0 = parameter(), arg=0 : f64[2,4,5]
  %1 = parameter(), arg=1 : f64[2,4,3]
  %2 = dot(%0, %1), arg=((0,), (0,), (1,), (1,)) : f64[2,5,3]
  return (%2)
""", 1),
    ("dot_output_also_returned", """
module m
  %0 = parameter(), arg=0 : f32[3,4]
  %1 = parameter(), arg=1 : f32[4,2]
  %2 = dot(%0, %1), arg=((), (), (1,), (0,)) : f32[3,2]
  %3 = compare-gt(%2, %2) : pred[3,2]
  return (%2, %3)
""", 1),
    ("scatter_add_with_fused_base_updates_and_indices", """
module m
  %0 = parameter(), arg=0 : f32[5,3]
  %1 = parameter(), arg=1 : s64[4]
  %2 = constant(), arg=0.0 : f32[]
  %3 = broadcast(%2), arg=() : f32[6,3]
  %4 = exponential(%0) : f32[5,3]
  %5 = slice(%4), arg=((0, 4, 1), (0, 3, 1)) : f32[4,3]
  %6 = constant(), arg=1 : s64[]
  %7 = broadcast(%6), arg=() : s64[4]
  %8 = add(%1, %7) : s64[4]
  %9 = scatter-add(%3, %8, %5), arg=0 : f32[6,3]
  return (%9)
""", 1),
    ("sibling_reductions_where_one_recomputes_the_others_epilogue", """
module m
  %0 = parameter(), arg=0 : f64[3,2]
  %1 = parameter(), arg=1 : f64[3,2]
  %2 = reshape(%0) : f64[1,3,2]
  %3 = broadcast(%2), arg=(0, 1, 2) : f64[3,3,2]
  %4 = reshape(%0) : f64[3,1,2]
  %5 = broadcast(%4), arg=(0, 1, 2) : f64[3,3,2]
  %6 = subtract(%3, %5) : f64[3,3,2]
  %7 = multiply(%6, %6) : f64[3,3,2]
  %8 = reduce(%7), arg=('sum', (2,)) : f64[3,3]
  %9 = constant(), arg=1.0 : f64[]
  %10 = broadcast(%9), arg=() : f64[3,3]
  %11 = add(%8, %10) : f64[3,3]
  %12 = constant(), arg=1.5 : f64[]
  %13 = broadcast(%12), arg=() : f64[3,3]
  %14 = power(%11, %13) : f64[3,3]
  %15 = reshape(%14) : f64[3,3,1]
  %16 = broadcast(%15), arg=(0, 1, 2) : f64[3,3,2]
  %17 = divide(%6, %16) : f64[3,3,2]
  %18 = reduce(%17), arg=('sum', (1,)) : f64[3,2]
  %19 = add(%1, %18) : f64[3,2]
  %20 = add(%0, %19) : f64[3,2]
  %21 = reshape(%20) : f64[1,3,2]
  %22 = broadcast(%21), arg=(0, 1, 2) : f64[3,3,2]
  %23 = reshape(%20) : f64[3,1,2]
  %24 = broadcast(%23), arg=(0, 1, 2) : f64[3,3,2]
  %25 = subtract(%22, %24) : f64[3,3,2]
  %26 = multiply(%25, %25) : f64[3,3,2]
  %27 = reduce(%26), arg=('sum', (2,)) : f64[3,3]
  %28 = constant(), arg=1.0 : f64[]
  %29 = broadcast(%28), arg=() : f64[3,3]
  %30 = add(%27, %29) : f64[3,3]
  %31 = constant(), arg=1.5 : f64[]
  %32 = broadcast(%31), arg=() : f64[3,3]
  %33 = power(%30, %32) : f64[3,3]
  %34 = reshape(%33) : f64[3,3,1]
  %35 = broadcast(%34), arg=(0, 1, 2) : f64[3,3,2]
  %36 = divide(%25, %35) : f64[3,3,2]
  %37 = reduce(%36), arg=('sum', (1,)) : f64[3,2]
  %38 = add(%19, %37) : f64[3,2]
  %39 = add(%20, %38) : f64[3,2]
  %40 = reshape(%39) : f64[1,3,2]
  %41 = broadcast(%40), arg=(0, 1, 2) : f64[3,3,2]
  %42 = reshape(%39) : f64[3,1,2]
  %43 = broadcast(%42), arg=(0, 1, 2) : f64[3,3,2]
  %44 = subtract(%41, %43) : f64[3,3,2]
  %45 = multiply(%44, %44) : f64[3,3,2]
  %46 = reduce(%45), arg=('sum', (2,)) : f64[3,3]
  %47 = constant(), arg=1.0 : f64[]
  %48 = broadcast(%47), arg=() : f64[3,3]
  %49 = add(%46, %48) : f64[3,3]
  %50 = constant(), arg=1.5 : f64[]
  %51 = broadcast(%50), arg=() : f64[3,3]
  %52 = power(%49, %51) : f64[3,3]
  %53 = reshape(%52) : f64[3,3,1]
  %54 = broadcast(%53), arg=(0, 1, 2) : f64[3,3,2]
  %55 = divide(%44, %54) : f64[3,3,2]
  %56 = reduce(%55), arg=('sum', (1,)) : f64[3,2]
  %57 = add(%38, %56) : f64[3,2]
  %58 = add(%39, %57) : f64[3,2]
  return (%58, %57)
""", 7),          # three n-body steps: a reduce kernel that recomputes the epilogue of
                  # another's reduction reads its result; merged, it computed and read it
    ("any_all", """
module m
  %0 = parameter(), arg=0 : f32[4,5]
  %1 = constant(), arg=0.0 : f32[]
  %2 = broadcast(%1), arg=() : f32[4,5]
  %3 = compare-gt(%0, %2) : pred[4,5]
  %4 = reduce(%3), arg=('any', (1,)) : pred[4]
  %5 = reduce(%3), arg=('all', (0, 1)) : pred[]
  return (%4, %5)
""", 2),
    ("scan_with_producer_and_consumer", """
module m
  %0 = parameter(), arg=0 : f32[6,40]
  %1 = parameter(), arg=1 : f32[40]
  %2 = broadcast(%1), arg=(1,) : f32[6,40]
  %3 = multiply(%0, %2) : f32[6,40]
  %4 = scan(%3), arg=('sum', 1) : f32[6,40]
  %5 = tanh(%4) : f32[6,40]
  %6 = scan(%0), arg=('max', 0) : f32[6,40]
  %7 = add(%6, %0) : f32[6,40]
  return (%5, %4, %7)
""", 2),          # multiply, scan, tanh in one loop (the scan also written); max down columns
    ("scan_read_reversed_is_not_fused", """
module m
  %0 = parameter(), arg=0 : f64[5,9]
  %1 = scan(%0), arg=('prod', 1) : f64[5,9]
  %2 = reverse(%1), arg=(1,) : f64[5,9]
  %3 = add(%2, %1) : f64[5,9]
  return (%3)
""", 2),          # the reverse reads elements the running product has not reached yet
]


# kernel counts where row fusion changed them: the CUDA target's (tests/cuda)
WITHOUT_ROW_FUSION = {"row_softmax_parts": 3, "row_layer_norm": 3,
                      "row_fusion_waits_for_a_dot_between_stages": 5,
                      "row_stages_of_unequal_length_share_an_input": 2, "row_logsumexp": 2}


def random_args(graph, rng):
    args = []
    for p in graph.params:
        if p.dtype.kind == "f":
            args.append(rng.uniform(-2, 2, p.shape).astype(p.dtype))
        else:
            values = rng.integers(1, 5, p.shape).astype(p.dtype)
            args.append(values * rng.choice([-1, 1], p.shape).astype(p.dtype))
    return args


@pytest.mark.parametrize("name,text,kernels", CASES, ids=[c[0] for c in CASES])
def test_compiled_matches_interpreter_and_kernel_count(name, text, kernels):
    graph = parse_graph(text)
    args = random_args(graph, np.random.default_rng(1))
    executable = runtime.compile(graph)
    assert sum(k.kind != "library" for k in executable.kernels) == kernels, \
        executable.as_text()
    expected = interpret(graph, args)
    got = executable.run(args)
    n = max(int(np.prod(p.shape)) for p in graph.params)     # the longest reduction or dot
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        assert_close(g, e, n=n, scale=graph_scale(graph, args))


def test_expensive_producer_behind_broadcast_is_not_recomputed():
    graph = parse_graph("""
module m
  %0 = parameter(), arg=0 : f32[8]
  %1 = parameter(), arg=1 : f32[16,8]
  %2 = exponential(%0) : f32[8]
  %3 = broadcast(%2), arg=(1,) : f32[16,8]
  %4 = add(%1, %3) : f32[16,8]
  return (%4)
""")
    plan = plan_fusion(graph)
    assert len(plan.kernels) == 2
    reasons = " ".join(d for k in plan.kernels for d in k.decisions)
    assert "exponential (8) would be recomputed 16x" in reasons


def test_an_unrolled_recurrence_is_not_recomputed_back_to_its_first_step():
    """`r = r - s_k * q_k` unrolled by a Python loop, each step's r read by two kernels
    (the next sum s and the next step): recomputing r_k in each kernel read all earlier
    steps' q_j and s_j (conjugate gradient's 10 iterations: kernels of 30 arguments, the
    reads growing with the square of the steps).  Cheap ops are recomputed only while
    that reads at most MAX_RECOMPUTE_READS arrays; past that, written once."""
    from xlanb_runtime.passes.fusion import MAX_RECOMPUTE_READS

    def recurrence(r, q):
        for k in range(24):
            s = (r * r).sum()
            r = r - (s / 3000.0) * np.roll(q, k)
        return r, s
    r, q = np.random.default_rng(0).standard_normal((2, 300))
    jitted = xlanb.jit(recurrence, tiered=False)
    for got, want in zip(jitted(r, q), recurrence(r, q)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10 * np.abs(want).max())
    plan = jitted.lower(r, q).compile().executable.plan
    widest = max(len(k.inputs) for k in plan.kernels)
    assert widest <= MAX_RECOMPUTE_READS + 2, widest          # was 26, growing per step
    assert any("a recurrence unrolled" in d for k in plan.kernels for d in k.decisions)


def test_fused_decision_reports_saved_bytes():
    plan = plan_fusion(parse_graph(CASES[0][1]))
    assert any("saves 512 bytes" in d for d in plan.kernels[0].decisions)


def test_unfused_plan_has_one_kernel_per_op():
    plan = plan_fusion(parse_graph(CASES[0][1]), enable_fusion=False)
    assert [k.kind for k in plan.kernels] == ["loop", "loop", "reduce"]


def test_intermediate_buffers_are_reused():
    graph = parse_graph("""
module m
  %0 = parameter(), arg=0 : f32[100]
  %1 = exponential(%0) : f32[100]
  %2 = reduce(%1), arg=('sum', (0,)) : f32[]
  %3 = broadcast(%2), arg=() : f32[100]
  %4 = divide(%1, %3) : f32[100]
  %5 = exponential(%4) : f32[100]
  %6 = reduce(%5), arg=('sum', (0,)) : f32[]
  %7 = broadcast(%6), arg=() : f32[100]
  %8 = divide(%5, %7) : f32[100]
  return (%8)
""")
    executable = runtime.compile(graph)
    memory = executable.memory_analysis()
    assert memory["temp_bytes_fused"] < memory["temp_bytes_unfused"]
    args = random_args(graph, np.random.default_rng(0))
    for _ in range(2):   # second call runs on the reused arena
        assert_close(executable.run(args)[0], interpret(graph, args)[0], n=100)


def test_kernel_source_has_no_sizes_so_shapes_share_code():
    small = runtime.compile(parse_graph(CASES[0][1]))
    big = runtime.compile(parse_graph(CASES[0][1].replace("[64]", "[640]")))
    assert small.kernels[0].source == big.kernels[0].source


def test_same_kernel_at_another_user_line_shares_the_cache_entry():
    from xlanb_runtime import compiler
    from xlanb_runtime.codegen import cache
    first = runtime.compile(parse_graph(CASES[0][1].replace(
        ": f32[64]\n  %4", ': f32[64] loc="a.py:1"\n  %4')))
    compiled_before = dict(compiler._dispatchers)         # Numba dispatchers by source
    second = runtime.compile(parse_graph(CASES[0][1].replace(
        ": f32[64]\n  %4", ': f32[64] loc="b.py:9"\n  %4')))
    assert first.kernels[0].source != second.kernels[0].source     # shows the user's line
    assert cache.module_name_for(cache.canonical_source(first.kernels[0].source)) == \
        cache.module_name_for(cache.canonical_source(second.kernels[0].source))
    assert compiler._dispatchers == compiled_before       # nothing new was compiled


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("axes", [(1,), (0,), (0, 1)])
def test_max_min_reductions_propagate_nan(kind, axes):
    """They vectorize through llvm.maximum/minimum, which keep NumPy's NaN semantics."""
    kept = ",".join(str((5, 40)[d]) for d in range(2) if d not in axes)
    graph = parse_graph(f"""
module m
  %0 = parameter(), arg=0 : f32[5,40]
  %1 = reduce(%0), arg=('{kind}', {axes}) : f32[{kept}]
  return (%1)
""")
    x = np.random.default_rng(3).standard_normal((5, 40)).astype(np.float32)
    x[2, 17] = np.nan
    x[4, :] = -np.inf if kind == "max" else np.inf
    (got,) = runtime.compile(graph).run([x])
    np.testing.assert_array_equal(got, getattr(np, kind)(x, axis=axes))


def test_distribute_stores_gives_each_store_its_loop_and_keeps_costly_values_shared():
    from xlanb_runtime.codegen.cpu import distribute_stores
    body = ["    v1 = in0[i0]", "    v2 = (v1 * c0)", "    v3 = exp_f32(v1)",
            "    out0[i0] = v2", "    out1[i0] = v3", "    v4 = (v3 + v2)",
            "    out2[i0] = v4", "    v5 = (v1 - c1)", "    out3[i0] = v5"]
    groups = distribute_stores(body)
    assert groups == [
        ["    v1 = in0[i0]", "    v2 = (v1 * c0)", "    out0[i0] = v2"],
        ["    v1 = in0[i0]", "    v2 = (v1 * c0)", "    v3 = exp_f32(v1)",
         "    v4 = (v3 + v2)", "    out1[i0] = v3", "    out2[i0] = v4"],
        ["    v1 = in0[i0]", "    v5 = (v1 - c1)", "    out3[i0] = v5"]]
    assert distribute_stores(body[:5]) == [body[:5]]      # two stores: one loop


def test_distributed_loops_load_values_an_earlier_loop_stored_in_a_row_buffer():
    """A later loop needing a value an earlier one stored in a row buffer loads it from
    there (same bits) instead of recomputing its chain; outputs are never read back."""
    from xlanb_runtime.codegen.cpu import distribute_stores
    body = ["    v1 = in0[j0, j1]", "    v2 = (v1 * c0)", "    v3 = in1[j1]",
            "    v4 = (v2 + v3)", "    row0[j1] = v4", "    out0[j0, j1] = v2",
            "    v5 = (v4 - v3)", "    row1[j1] = v5", "    v6 = (v2 * v2)",
            "    out1[j0, j1] = v6"]
    assert distribute_stores(body) == [
        ["    v1 = in0[j0, j1]", "    v2 = (v1 * c0)", "    v3 = in1[j1]",
         "    v4 = (v2 + v3)", "    row0[j1] = v4"],
        ["    v1 = in0[j0, j1]", "    v2 = (v1 * c0)", "    out0[j0, j1] = v2"],
        ["    v3 = in1[j1]", "    v4 = row0[j1]", "    v5 = (v4 - v3)", "    row1[j1] = v5"],
        ["    v1 = in0[j0, j1]", "    v2 = (v1 * c0)", "    v6 = (v2 * v2)",
         "    out1[j0, j1] = v6"]]


def test_a_column_reduction_reloading_row_buffers_matches_numpy():
    """Bias and scale gradients of a layer norm (W5's backward kernel in small): the later
    reductions' inputs extend an earlier one's, which they load from its row buffer."""
    graph = parse_graph("""
module m
  %0 = parameter(), arg=0 : f32[6,5,24]
  %1 = parameter(), arg=1 : f32[24]
  %2 = parameter(), arg=2 : f32[6,5,24]
  %3 = broadcast(%1), arg=(2,) : f32[6,5,24]
  %4 = multiply(%0, %3) : f32[6,5,24]
  %5 = add(%4, %2) : f32[6,5,24]
  %6 = multiply(%5, %0) : f32[6,5,24]
  %7 = subtract(%6, %2) : f32[6,5,24]
  %8 = reduce(%5), arg=('sum', (0, 1)) : f32[24]
  %9 = reduce(%6), arg=('sum', (0, 1)) : f32[24]
  %10 = reduce(%7), arg=('sum', (0, 1)) : f32[24]
  return (%8, %9, %10)
""")
    rng = np.random.default_rng(5)
    x, w, r = (rng.standard_normal(s).astype(np.float32) for s in ((6, 5, 24), (24,),
                                                                 (6, 5, 24)))
    executable = runtime.compile(graph)
    got = executable.run([x, w, r])
    t = x * w + r
    for value, want in zip(got, (t, t * x, t * x - r)):
        np.testing.assert_allclose(value, want.sum(axis=(0, 1)), rtol=2e-5, atol=1e-4)
    source = "\n".join(k.source for k in executable.kernels)
    assert re.search(r"= row\d\[j2\]$", source, re.M), source


NARROW_DOT = """
module m
  %0 = parameter(), arg=0 : {t}[{m},{k}]
  %1 = parameter(), arg=1 : {t}[{w}]
  %2 = parameter(), arg=2 : {t}[5]
  %3 = dot(%0, %1), arg=((), (), (1,), ({c},)) : {t}[{m},5]
  %4 = broadcast(%2), arg=(1,) : {t}[{m},5]
  %5 = add(%3, %4) : {t}[{m},5]
  %6 = negate(%5) : {t}[{m},5]
  return (%3, %6)
"""


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("rhs_transposed", [False, True])
@pytest.mark.parametrize("rows", [70, 71])
@pytest.mark.parametrize("threads", [1, 2])
def test_narrow_dot_is_generated_with_its_epilogue(dtype, rhs_transposed, rows, threads):
    """A dot with a few output columns is one generated loop (no BLAS call), reading the
    rhs as rows: as it is when the dot reads it transposed, else from a transposed copy.
    An rhs past L1 (5 x 2000) takes rows in pairs (the last one alone when their count
    is odd), also split over threads."""
    k = 2000
    text = NARROW_DOT.format(t=dtype, w=f"5,{k}" if rhs_transposed else f"{k},5",
                             c=1 if rhs_transposed else 0, m=rows, k=k)
    graph = parse_graph(text)
    args = random_args(graph, np.random.default_rng(4))
    with flags.overriding(xla_cpu_threads=threads, xla_cpu_parallel_min_elements=1):
        executable = runtime.compile(graph)
    assert "np.matmul" not in executable.driver_source
    assert (".T)" in executable.driver_source) != rhs_transposed      # the copy
    source = executable.kernels[0].source
    assert ("numba.prange" in source) == (threads == 2)
    assert "i0b" in source                # 2 * 5 accumulators fit in any x86-64's registers
    for got, want in zip(executable.run(args), interpret(graph, args)):
        assert_close(got, want, n=k, scale=graph_scale(graph, args))


MATRIX_VECTOR = """
module m
  %0 = parameter(), arg=0 : f64[{m},{k}]
  %1 = parameter(), arg=1 : f64[{v}]
  %2 = dot({lhs}, {rhs}), arg=((), (), ({lc},), ({rc},)) : f64[{out}]
  return (%2)
"""


@pytest.mark.parametrize("side", ["A @ x", "x @ A", "A.T @ x"])
def test_matrix_vector_products_call_blas_on_the_1d_vector(side):
    """A @ x runs as np.matmul of the 1-D vector (BLAS gemv), not of a (k, 1) matrix (a
    one-column gemm, a few % slower on a bandwidth-bound matrix)."""
    text = MATRIX_VECTOR.format(
        m=300, k=200, v=300 if side != "A @ x" else 200, out=200 if side != "A @ x" else 300,
        lhs="%1" if side == "x @ A" else "%0", rhs="%0" if side == "x @ A" else "%1",
        lc={"A @ x": 1, "x @ A": 0, "A.T @ x": 0}[side],
        rc={"A @ x": 0, "x @ A": 0, "A.T @ x": 0}[side])
    graph = parse_graph(text)
    args = random_args(graph, np.random.default_rng(5))
    executable = runtime.compile(graph)
    call = next(line for line in executable.driver_source.splitlines()
                if "np.dot" in line or "np.matmul" in line)
    assert ".reshape(" not in call, call
    assert "out=" not in call and "_empty" not in executable.driver_source   # NumPy allocates
    for got, want in zip(executable.run(args), interpret(graph, args)):
        assert_close(got, want, n=300, scale=graph_scale(graph, args))


@pytest.mark.parametrize("name", ["column.T @ B", "C @ row.T", "column.T @ B + 1"])
def test_a_transposed_column_or_row_dots_as_its_vector(name):
    """A (k, 1) column read transposed, or a (1, k) row, is handed to BLAS as its 1-D
    vector of k elements (the driver once reshaped it to the untransposed view's last
    dim, 1: a ValueError)."""
    import xlanb
    rng = np.random.default_rng(9)
    a, b, c = rng.random((30, 22)), rng.random((30, 7)), rng.random((5, 22))
    fn, args = {"column.T @ B": (lambda a, b: a[:, 2:3].T @ b, (a, b)),
                "C @ row.T": (lambda c, a: c @ a[3:4, :].T, (c, a)),
                "column.T @ B + 1": (lambda a, b: a[:, 2:3].T @ b + 1.0, (a, b))}[name]
    got = xlanb.jit(fn, tiered=False)(*args)
    want = fn(*args)
    assert got.shape == want.shape
    assert_close(got, want, n=30)


def test_small_matmul_chains_are_numpys_own_calls():
    """A small intermediate product (<= SMALL_MATMUL_BYTES) and the returned one are
    `b = np.dot(x, y)` (np.matmul's BLAS call without its ufunc machinery, the same bits):
    no arena lookup, no out= (NumPy's allocator recycles them)."""
    import xlanb
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal((64, 64)) for _ in range(3))
    compiled = xlanb.jit(lambda a, b, c: a @ b @ c, tiered=False).lower(a, b, c).compile()
    source = compiled.executable.driver_source
    assert source.count("np.dot") == 2 and "out=" not in source and "_scratch" not in source
    np.testing.assert_array_equal(compiled(a, b, c), a @ b @ c)


def _blas_calls(source: str) -> list[str]:
    return re.findall(r"np\.(?:dot|matmul)\(", source)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_2d_dots_call_np_dot_with_numpys_bits(dtype):
    """2-D and matrix-vector dots of contiguous operands run as np.dot, the BLAS call
    np.matmul makes: the results equal NumPy's `@` on the driver's operands bit for bit
    (its prologue copies strided layouts; Fortran-ordered arguments come transposed),
    also into an arena buffer (out=) and with an epilogue."""
    import xlanb
    rng = np.random.default_rng(7)
    make = lambda *shape: (rng.standard_normal(shape) + (1j * rng.standard_normal(shape)
                           if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
    a, b, c, x = make(33, 17), make(17, 9), make(9, 33), make(17)
    programs = {
        "chain": (lambda a, b, c: a @ b @ c, (a, b, c)),
        "gemv": (lambda a, x: a @ x, (a, x)),
        "vector times matrix": (lambda a, x: (a @ x) @ a, (a, x)),
        "transposed": (lambda a, b: a.T @ (a @ b), (a, b)),
        "quadratic forms": (lambda a, b: ((a @ b) * (a @ b)).sum(axis=1), (a, b)),
        "gram": (lambda a: a.T @ a, (a,)),
    }
    layouts = {"C": lambda v: v, "F": np.asfortranarray,
               "strided": lambda v: np.repeat(v, 2, axis=-1)[..., ::2]}
    for name, (fn, args) in programs.items():
        for layout, relayout in layouts.items():
            f = xlanb.jit(fn, tiered=False)
            call_args = tuple(relayout(v) for v in args)
            want = fn(*call_args)
            # the bits of NumPy's `@` on the arrays the driver hands BLAS: a strided one
            # the prologue copies to C order (BLAS then sums in another order than on the
            # strided array); a Fortran-ordered one goes in as its C-ordered transpose
            # (tracing/tracer.py), read as NumPy's own call reads it: NumPy's bits
            want_bits = want if layout == "F" else fn(*map(np.ascontiguousarray, call_args))
            rtol = 1e-4 if np.dtype(dtype) == np.float32 else 1e-12
            for _ in range(2):                   # the general path, then the guard
                got = f(*call_args)
                assert got.dtype == want.dtype, (name, layout)
                np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol,
                                           err_msg=f"{name}, {layout}")
                if name != "quadratic forms":    # (the reduction sums in its own order)
                    np.testing.assert_array_equal(got, want_bits, err_msg=f"{name}, {layout}")
            source = f.last_compiled.executable.driver_source
            assert "np.dot(" in _blas_calls(source), (name, source)


def test_batched_and_other_dtype_dots_keep_np_matmul():
    """np.dot is not batched, and outside BLAS dtypes each function loops in its own
    order: those stay np.matmul."""
    import xlanb
    rng = np.random.default_rng(8)
    batched = rng.standard_normal((4, 5, 6)), rng.standard_normal((4, 6, 3))
    ints = rng.integers(-9, 9, (5, 6)), rng.integers(-9, 9, (6, 3))
    for a, b in (batched, ints):
        f = xlanb.jit(lambda a, b: a @ b, tiered=False)
        np.testing.assert_array_equal(f(a, b), a @ b)
        assert "np.dot(" not in _blas_calls(f.last_compiled.executable.driver_source)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dots_with_a_large_result_call_np_matmul(dtype):
    """np.dot zero-fills its result before BLAS writes it: a result over DOT_RESULT_BYTES
    (here 40-80 KB; the second one with an epilogue, into a buffer) goes through
    np.matmul, with NumPy's `@` bits."""
    import xlanb
    from xlanb_runtime.executable import DOT_RESULT_BYTES
    rng = np.random.default_rng(9)
    a, b = (rng.standard_normal(shape).astype(dtype) for shape in ((100, 8), (8, 100)))
    assert 100 * 100 * np.dtype(dtype).itemsize > DOT_RESULT_BYTES
    for fn in (lambda a, b: a @ b, lambda a, b: (a @ b) * 2):
        f = xlanb.jit(fn, tiered=False)
        np.testing.assert_array_equal(f(a, b), fn(a, b))
        calls = _blas_calls(f.last_compiled.executable.driver_source)
        assert calls[0] == "np.matmul(", calls



ROW_LOCAL_CASES = [
    ("softmax", """
module m
  %0 = parameter(), arg=0 : f32[37,300]
  %1 = reduce(%0), arg=('max', (1,)) : f32[37]
  %2 = broadcast(%1), arg=(0,) : f32[37,300]
  %3 = subtract(%0, %2) : f32[37,300]
  %4 = exponential(%3) : f32[37,300]
  %5 = reduce(%4), arg=('sum', (1,)) : f32[37]
  %6 = broadcast(%5), arg=(0,) : f32[37,300]
  %7 = divide(%4, %6) : f32[37,300]
  return (%7)
"""),       # e is the sum's input: the sum's row buffer holds it
    ("read_later_not_summed", """
module m
  %0 = parameter(), arg=0 : f64[9,40]
  %1 = exponential(%0) : f64[9,40]
  %2 = multiply(%1, %1) : f64[9,40]
  %3 = reduce(%2), arg=('sum', (1,)) : f64[9]
  %4 = broadcast(%3), arg=(0,) : f64[9,40]
  %5 = divide(%1, %4) : f64[9,40]
  return (%5, %3)
"""),       # e is read by the last stage but summed only squared
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name,text", ROW_LOCAL_CASES, ids=[c[0] for c in ROW_LOCAL_CASES])
def test_a_row_value_only_later_stages_read_stays_one_row(name, text, threads):
    """row_fusion.keep_rows_local: a whole-row value read only by the row kernel's later
    stages is no output of the kernel (no buffer the size of the input is written); the
    generated code keeps the row it is on, one buffer per row under a prange."""
    graph = parse_graph(text)
    args = random_args(graph, np.random.default_rng(3))
    with flags.overriding(xla_cpu_threads=threads, xla_cpu_parallel_min_elements=1):
        executable = runtime.compile(graph)
    (row,) = [k for k in executable.plan.kernels if k.kind == "row"]
    full = [o for o in row.outputs if o.shape == graph.params[0].shape]
    assert full == list(graph.outputs[:1]), executable.as_text()
    assert any("kept one row at a time" in d for d in row.decisions)
    n = graph.params[0].shape[-1]
    for g, e in zip(executable.run(args), interpret(graph, args)):
        assert_close(g, e, n=n, scale=graph_scale(graph, args))


def test_a_dot_whose_epilogue_another_kernel_recomputes_is_computed_once():
    """np.fill_diagonal(s, -inf) of s = x @ x.T, then s.argmax(1) and s.max(1): the max's
    kernel recomputed the masked s from the product, which the dot kernel (masking it
    for the argmax) kept to itself, so a second kernel computed the product again (two
    2000x2000x64 GEMMs).  The product is now the dot kernel's extra output."""
    def cosine_top1(x):
        xn = x / np.linalg.norm(x, axis=1, keepdims=True)
        s = xn @ xn.T
        np.fill_diagonal(s, -np.inf)
        return s.argmax(1), s.max(1)

    x = np.random.default_rng(7).standard_normal((60, 8))
    compiled = xlanb.jit(cosine_top1, tiered=False).lower(x).compile()
    (index, best), (want_index, want_best) = compiled(x), cosine_top1(x)
    np.testing.assert_array_equal(index, want_index)
    assert_close(best, want_best)
    assert [k.kind for k in compiled.kernels].count("dot") == 1, \
        [k.kind for k in compiled.kernels]
