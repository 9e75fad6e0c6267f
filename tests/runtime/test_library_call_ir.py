"""The `library-call` op (ir/library.py): text round trip, verifier, interpreter, fusion
(never fused: a kernel boundary), buffers, the CPU driver and the CUDA host path."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import xlanb_runtime as runtime
from xlanb_runtime.ir import Graph, Op, interpret, parse_graph, print_graph
from xlanb_runtime.ir import builder as B
from xlanb_runtime.ir.verify import VerifyError, verify
from xlanb_runtime.passes.fusion import plan_fusion
from tolerance import assert_close

REPO = Path(__file__).resolve().parents[2]
F64 = np.float64


def sample_graph() -> Graph:
    """exp -> solve -> sort (stable) -> add, and eigh's two results."""
    a = B.parameter(0, (4, 4), F64)
    b = B.parameter(1, (4,), F64)
    e = B.unary(Op.EXP, b)
    x = B.library_call("np.linalg.solve", [a, e])
    s = B.library_call("np.sort", [x], {"axis": -1, "kind": "stable", "stable": None})
    y = B.binary(Op.ADD, s, e)
    call = B.library_call("np.linalg.eigh", [a], {"UPLO": "U"})
    q = B.library_call("np.quantile", [b, B.constant(np.array([0.25, 0.5]))],
                       {"axis": None, "keepdims": False, "method": "linear"})
    return Graph([a, b], [y, B.library_result(call, 0), B.library_result(call, 1), q], "lib")


def sample_args():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4))
    return [a + a.T + 8 * np.eye(4), rng.standard_normal(4)]


def numpy_reference(a, b):
    e = np.exp(b)
    w, v = np.linalg.eigh(a, UPLO="U")
    return [np.sort(np.linalg.solve(a, e), kind="stable") + e, w, v,
            np.quantile(b, [0.25, 0.5])]


def test_text_round_trip():
    graph = sample_graph()
    text = print_graph(graph)
    assert "library-call(%0), arg=('np.linalg.eigh', (('UPLO', 'U'),)) : u8[]" in text
    assert "library-result(" in text
    parsed = parse_graph(text)
    verify(parsed)
    assert print_graph(parsed) == text
    for got, want in zip(interpret(parsed, sample_args()), interpret(graph, sample_args())):
        np.testing.assert_array_equal(got, want)


def test_params_of_every_literal_kind_round_trip():
    x = B.parameter(0, (6,), F64)
    node = B.library_call("np.histogram", [x], {"bins": 3, "range": (-1.5, 2.0),
                                                "density": True, "keyword_arrays": ()})
    graph = Graph([x], [B.library_result(node, 0), B.library_result(node, 1)])
    text = print_graph(graph)
    assert print_graph(parse_graph(text)) == text
    value = np.linspace(-1, 1, 6)
    for got, want in zip(interpret(parse_graph(text), [value]),
                         np.histogram(value, 3, (-1.5, 2.0), density=True)):
        np.testing.assert_array_equal(got, want)


def test_verifier_checks_the_rule():
    text = print_graph(sample_graph()).replace("library-result(%6), arg=0 : f64[4]",
                                               "library-result(%6), arg=0 : f32[4]")
    with pytest.raises(VerifyError, match="library-result"):
        verify(parse_graph(text))
    x = B.parameter(0, (3,), F64)
    with pytest.raises(B.IRShapeError, match="unknown function"):
        B.library_call("np.no_such_function", [x])
    with pytest.raises(B.IRShapeError, match="no result 2"):
        B.library_result(B.library_call("np.linalg.eigh", [B.parameter(0, (2, 2), F64)]), 2)


def test_interpreted_and_compiled_equal_numpy():
    graph, args = sample_graph(), sample_args()
    expected = numpy_reference(*args)
    for got, want in zip(interpret(graph, args), expected):
        assert_close(got, want, n=16)
    executable = runtime.compile(graph)
    for got, want in zip(executable.run(args), expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert_close(got, want, n=16)


def test_never_fused_and_one_program():
    """A library call is a kernel of its own between fused kernels, in one driver."""
    graph = sample_graph()
    plan = plan_fusion(graph)
    library = [k for k in plan.kernels if k.kind == "library"]
    assert {k.root.op for k in library} == {Op.LIBRARY_CALL, Op.LIBRARY_RESULT}
    for kernel in plan.kernels:
        if kernel.kind != "library":
            assert not any(n.op in (Op.LIBRARY_CALL, Op.LIBRARY_RESULT) for n in kernel.nodes)
    executable = runtime.compile(graph)
    source = executable.driver_source
    assert source.count("def run(") == 1 and "library_call.0" in source
    storage = {n.arg[0] if n.op is Op.LIBRARY_CALL else n.op.value:
               executable.buffers.storage[id(n)].kind for n in executable.optimized.nodes
               if n.op in (Op.LIBRARY_CALL, Op.LIBRARY_RESULT)}
    # an intermediate: NumPy's own result array, not copied into the arena (solve has no
    # out=, so NumPy allocates it either way)
    assert storage["np.linalg.solve"] == "loop"
    solve_line = next(line for line in source.splitlines() if "# library_call.0" in line)
    assert " = _lib" in solve_line, solve_line      # `b = solve(...)`, no `out` buffer
    assert storage["np.quantile"] == "fresh"           # a result the caller keeps
    assert storage["np.linalg.eigh"] == storage["library-result"] == "loop"   # NumPy's


def test_cse_merges_and_simplify_never_folds():
    x = B.parameter(0, (5,), F64)
    one = B.library_call("np.cumsum", [x], {"axis": 0})
    two = B.library_call("np.cumsum", [x], {"axis": 0})
    folded = B.library_call("np.sort", [B.constant(np.array([3.0, 1.0, 2.0]))], {"axis": 0})
    graph = Graph([x], [B.binary(Op.ADD, one, two), folded])
    optimized = runtime.compile(graph).optimized
    calls = [n for n in optimized.nodes if n.op is Op.LIBRARY_CALL]
    assert len(calls) == 2                      # the two cumsums merged; the sort kept
    value = np.arange(5.0)
    out = runtime.compile(graph).run([value])
    np.testing.assert_array_equal(out[0], 2 * np.cumsum(value))
    np.testing.assert_array_equal(out[1], [1.0, 2.0, 3.0])


CUDA_SCRIPT = textwrap.dedent("""
    import numpy as np, sys
    sys.path.insert(0, sys.argv[1])
    import xlanb_runtime as runtime
    from xlanb_runtime.ir import interpret, parse_graph
    graph = parse_graph(open(sys.argv[2]).read())
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4))
    args = [a + a.T + 8 * np.eye(4), rng.standard_normal(4)]
    got = runtime.compile(graph, target="cuda").run(args)
    for g, w in zip(got, interpret(graph, args)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    print("cuda ok")
""")


def test_cuda_target_runs_library_calls_on_the_host(tmp_path):
    """The CUDA target runs library calls on the host between device kernels (Numba's
    CUDA simulator: numba.cuda reads NUMBA_ENABLE_CUDASIM when imported)."""
    pytest.importorskip("numba_cuda")
    program = tmp_path / "lib.txt"
    program.write_text(print_graph(sample_graph()))
    script = tmp_path / "run.py"
    script.write_text(CUDA_SCRIPT)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run([sys.executable, str(script), str(REPO / "runtime"),
                             str(program)], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "cuda ok" in result.stdout
