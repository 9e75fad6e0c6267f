"""The compile budget: a program with more kernels than `--xla_max_kernels` compiles
nothing and runs op by op with NumPy: a jitted function calls itself, as written (its
slice writes stay in place); the executable alone runs its optimized graph through the
reference interpreter."""
from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

import xlanb
from xlanb_runtime import flags
from xlanb_runtime.compiler import CompileBudgetWarning


def triangular_update(alpha, A, B):          # element-wise Python loops unroll
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha


def test_over_budget_programs_run_op_by_op_with_numpys_results():
    rng = np.random.default_rng(0)
    A, B = rng.random((4, 4)), rng.random((4, 3))
    expected = B.copy()
    triangular_update(1.5, A, expected)
    with flags.overriding(xla_max_kernels=4), pytest.warns(CompileBudgetWarning,
                                                           match="compile budget of 4"):
        f = xlanb.jit(triangular_update)
        f(1.5, A, B)
    np.testing.assert_allclose(B, expected, rtol=1e-13)
    kernels = f.last_compiled.kernels
    assert [k.kind for k in kernels] == ["interpreted"] and kernels[0].compile_seconds == 0
    assert "--xla_max_kernels" in kernels[0].decisions[0]


def test_programs_over_the_op_budget_run_as_traced_without_planning():
    rng = np.random.default_rng(3)
    A, B = rng.random((4, 4)), rng.random((4, 3))
    expected = B.copy()
    triangular_update(0.5, A, expected)
    with flags.overriding(xla_max_ops=20), pytest.warns(CompileBudgetWarning,
                                                        match="budget of 20 ops"):
        f = xlanb.jit(triangular_update)
        compiled = f.lower(0.5, A, B).compile()
    compiled(0.5, A, B)
    np.testing.assert_allclose(B, expected, rtol=1e-13)
    [kernel] = compiled.kernels
    assert kernel.kind == "interpreted" and "--xla_max_ops" in kernel.decisions[0]
    assert "traced program runs op by op" in kernel.decisions[0]
    assert not compiled.executable.plan.kernels          # the fusion planner never ran


def test_within_budget_programs_compile():
    with flags.overriding(xla_max_kernels=4):
        f = xlanb.jit(lambda x: np.tanh(x) * 2 + 1)
        np.testing.assert_allclose(f(np.ones(3)), np.tanh(1.0) * 2 + 1)
    assert all(k.kind != "interpreted" for k in f.last_compiled.kernels)


def test_budget_flags_parse():
    assert flags.parse("--xla_max_kernels=12").xla_max_kernels == 12
    assert flags.parse("--xla_max_ops=99").xla_max_ops == 99
    # the budget the warnings point to: a float, which parsed as a string broke compiles
    assert flags.parse("--xla_max_compile_seconds=90").xla_max_compile_seconds == 90.0
    with pytest.raises(flags.FlagError, match="float"):
        flags.parse("--xla_max_compile_seconds=soon")


def test_compile_time_budget_switches_to_op_by_op():
    rng = np.random.default_rng(1)
    x = rng.random(6)

    def program(x):
        return np.tanh(x) @ np.exp(x) + x.max()
    with flags.overriding(xla_max_compile_seconds=1e-9), \
            pytest.warns(CompileBudgetWarning, match="xla_max_compile_seconds"):
        f = xlanb.jit(program)
        got = f(x)
    np.testing.assert_allclose(got, program(x), rtol=1e-13)
    assert [k.kind for k in f.last_compiled.kernels] == ["interpreted"]


def test_over_budget_jit_calls_run_the_function_itself():
    calls = []

    def counted(alpha, A, B):
        calls.append(1)
        triangular_update(alpha, A, B)
    A = np.random.default_rng(2).random((4, 4))
    f = xlanb.jit(counted)
    with flags.overriding(xla_max_kernels=4), warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileBudgetWarning)
        for seed in range(3):
            B = np.random.default_rng(seed).random((4, 3))
            expected = B.copy()
            triangular_update(1.5, A, expected)
            f(1.5, A, B)
            np.testing.assert_allclose(B, expected, rtol=1e-13)
    assert f.last_compiled.runs_eagerly
    assert len(calls) == 1 + 3                    # one trace, then every call runs it


def test_no_kernel_grows_past_the_op_limit():
    """A long chain that could all fuse into one kernel is cut into kernels of at most
    MAX_KERNEL_OPS ops: Numba's compile time grows faster than a function's size."""
    from xlanb_runtime.passes.fusion import MAX_KERNEL_OPS

    def chain(x):
        for i in range(MAX_KERNEL_OPS // 2 + 20):
            x = x * (1.0 + 1e-4 * i) + 1e-3 * (i % 7)    # steps differ: no loop op
        return x
    x = np.random.default_rng(3).random(16)
    f = xlanb.jit(chain)
    np.testing.assert_allclose(f(x), chain(x), rtol=1e-12)
    sizes = [len(k.ops) for k in f.last_compiled.kernels]
    assert len(sizes) >= 2 and max(sizes) <= MAX_KERNEL_OPS


def test_complex_ops_count_more_toward_the_op_limit():
    """A complex op generates several real statements: a chain of them is cut into
    kernels of at most MAX_KERNEL_OPS / COMPLEX_OP_SIZE ops (60 steps of z**2 + c made
    one kernel that Numba compiled for minutes)."""
    from xlanb_runtime.passes.fusion import COMPLEX_OP_SIZE, MAX_KERNEL_OPS

    def chain(z, c):
        for i in range(40):
            z = z * z * (0.5 + 1e-3 * i) + c      # steps differ: no loop op
        return z
    rng = np.random.default_rng(4)
    z, c = (0.3 * (rng.random(8) + 1j * rng.random(8)) for _ in range(2))
    f = xlanb.jit(chain)
    np.testing.assert_allclose(f(z, c), chain(z, c), rtol=1e-9)
    arithmetic = [sum(op in ("multiply", "add") for op in k.ops)
                  for k in f.last_compiled.kernels]
    assert len(arithmetic) >= 2 and max(arithmetic) <= MAX_KERNEL_OPS // COMPLEX_OP_SIZE


def test_loop_bodies_share_the_programs_compile_time_budget():
    """Rolled loops compile their bodies as programs of their own, inside the program's
    compile: past the budget the whole program goes op by op, not each body alone (70
    bodies of npbench syrk took minutes, each within its own budget)."""
    def rows(C, A):
        for i in range(3):                   # a row width each: 3 separate loops
            for k in range(A.shape[1]):
                C[i, :i + 1] += 0.5 * A[i, k] * A[:i + 1, k]
        return C

    rng = np.random.default_rng(4)
    C, A = rng.random((3, 3)), rng.random((3, 24))
    expected = rows(C.copy(), A)
    with flags.overriding(xla_max_compile_seconds=1e-9), \
            pytest.warns(CompileBudgetWarning, match="loop bodies still to go"):
        f = xlanb.jit(rows)
        got = f(C, A)
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    assert f.last_compiled.runs_eagerly


def test_values_read_at_several_places_count_once_per_place_toward_the_op_limit():
    """A stage reading the last one at two places (x and x reversed) makes the generated
    code compute the last stage twice, the one before four times...: the kernel size
    counts those copies, so 10 such stages do not become one 2**10-fold kernel (npbench
    stockham_fft's butterflies: 4,000-line kernels that Numba compiled for minutes)."""
    from xlanb_runtime import compiler
    from xlanb_runtime.codegen.cpu import generate
    from xlanb_runtime.passes.fusion import MAX_KERNEL_OPS, kernel_size

    def stages(x):
        for _ in range(10):
            x = 0.5 * x + 0.25 * x[::-1]
        return x

    x = np.random.default_rng(5).random(64)
    graph = xlanb.jit(stages).lower(x).traced.graph
    with flags.active(flags.from_environment()):
        _, _, plan = compiler.optimize_and_plan(graph, compiler.CompileOptions(),
                                                compiler.CompileReport(graph.name, "cpu"))
    loops = [k for k in plan.kernels if k.kind == "loop"]
    assert len(loops) >= 2 and all(kernel_size(k) <= MAX_KERNEL_OPS for k in loops)
    assert max(generate(k).source.count("\n") for k in loops) < 400
    np.testing.assert_allclose(xlanb.jit(stages)(x), stages(x), rtol=1e-13)


def test_loop_bodies_share_the_compile_time_budget():
    """Rolled loops compile their bodies one after another; past the budget the rest are
    not compiled (a convolution nest rolled into 28 bodies took minutes)."""
    def three_loops(x):
        for scale in (0.5, 0.25, 0.125):
            for _ in range(10):
                x = (x * scale + 0.5) * 0.75 + x * 0.125 - x * x * 0.0625 + 0.25
        return x
    x = np.linspace(0, 1, 5)
    with flags.overriding(xla_max_compile_seconds=1e-9), \
            pytest.warns(CompileBudgetWarning, match="loop bodies still to go"):
        f = xlanb.jit(three_loops)
        got = f(x)
    np.testing.assert_allclose(got, three_loops(x), rtol=1e-13)
    assert " = loop(" not in f.lower(x).as_text()      # rolled only while compiling
    assert [k.kind for k in f.last_compiled.kernels] == ["interpreted"]


def test_the_compile_pace_counts_only_kernels_still_to_compile(tmp_path, monkeypatch):
    """The budget's pace counts the kernels whose compile is to come: not a library
    kernel, not one whose code an earlier one shares, not one the disk cache holds
    (npbench adi, first in a fresh process, was predicted over budget by all 90)."""
    from xlanb_runtime import compiler
    from xlanb_runtime.codegen.cpu import generate
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path))        # nothing compiled yet

    def twin_updates(a, b, c):
        return np.arcsinh(a) * 3.0 - np.expm1(a), c @ c, np.arcsinh(b) * 3.0 - np.expm1(b)

    a, b, c = np.linspace(0, 1, 7), np.linspace(1, 2, 5), np.eye(3)
    graph = xlanb.jit(twin_updates).lower(a, b, c).traced.graph
    with flags.active(flags.from_environment()):
        _, _, plan = compiler.optimize_and_plan(graph, compiler.CompileOptions(),
                                                compiler.CompileReport(graph.name, "cpu"))
        generated = {k.name: generate(k) for k in plan.kernels if k.kind != "library"}
        coded = [k.name for k in plan.kernels if k.name in generated
                 and generated[k.name].has_function]
        assert len(coded) == 2 and len(plan.kernels) == 3        # the third: NumPy's @
        assert compiler._fresh_compiles(plan.kernels, generated) == {coded[0]}
        compiler._compile_kernels(plan, generated, compiler.CompileReport(graph.name, "cpu"))
        assert not compiler._fresh_compiles(plan.kernels, generated)
    got = xlanb.jit(twin_updates)(a, b, c)
    for g, e in zip(got, twin_updates(a, b, c)):
        np.testing.assert_allclose(g, e, rtol=1e-13)


def test_the_early_give_up_extrapolates_the_fastest_kernel():
    """Past a tenth of the budget, the compile gives up early only if the kernels still to
    compile, each as fast as the fastest so far, would not fit; with no pace measured yet,
    only the budget itself stops it."""
    from xlanb_runtime.compiler import _CompileTimeExceeded, _check_budget
    began = time.perf_counter() - 5.0                          # 5 s spent, budget 30 s
    _check_budget(began, 2, 20, 30.0, seconds_each=1.0)        # 5 + 18 x 1 s fits
    with pytest.raises(_CompileTimeExceeded, match="18 of 20 kernels still to go"):
        _check_budget(began, 2, 20, 30.0, seconds_each=2.0)    # 5 + 18 x 2 s does not
    _check_budget(began, 1, 20, 30.0, least_done=2, seconds_each=None)
    with pytest.raises(_CompileTimeExceeded, match="over 4 s"):
        _check_budget(began, 1, 20, 4.0, least_done=2, seconds_each=None)
