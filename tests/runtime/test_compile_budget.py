"""The compile budget: a program with more kernels than `--xla_max_kernels` compiles
nothing and runs op by op with NumPy: a jitted function calls itself, as written (its
slice writes stay in place); the executable alone runs its optimized graph through the
reference interpreter."""
from __future__ import annotations

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
    # a float flag is a number, not the string the budget check cannot compare
    assert flags.parse("--xla_max_compile_seconds=1000").xla_max_compile_seconds == 1000.0
    with pytest.raises(flags.FlagError, match="needs a number"):
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
