"""Complex values in the IR: types and constants in the text form, the builder's rules for
ops complex values lack, the interpreter against compiled kernels, the generated source
(Numba complex arithmetic and cmath, never the real-float vecmath), simplify rules that
must not fire on complex values, the complex VJPs against finite differences, and the CUDA
target (kernels with complex values run on the host, named in the report).
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import xlanb_runtime as runtime
from xlanb_runtime.autodiff import vjp
from xlanb_runtime.ir import Graph, Op, interpret, parse_graph, print_graph
from xlanb_runtime.ir import builder as B
from xlanb_runtime.ir.builder import IRDTypeError
from xlanb_runtime.ir.verify import verify
from xlanb_runtime.passes.simplify import simplify
from tolerance import assert_close

DTYPES = [np.complex64, np.complex128]
REPO = Path(__file__).resolve().parents[2]


def cplx(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    re, im = rng.standard_normal((2,) + tuple(shape))
    return (re + 1j * im).astype(dtype)


def parts_dtype(dtype):
    return np.finfo(dtype).dtype


# -- text form -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_complex_constants_and_types_round_trip_exactly(dtype):
    values = np.array([1 + 2j, complex(np.nan, -0.0), complex(-np.inf, np.inf), -0.0 + 0j,
                       complex(1e-30, 3.5e30)], dtype)
    x = B.parameter(0, (5,), dtype)
    graph = Graph([x], [B.binary(Op.MUL, x, B.constant(values)),
                        B.unary(Op.ABS, x), B.unary(Op.CONJ, x)])
    text = print_graph(graph)
    assert f"{'c64' if dtype == np.complex64 else 'c128'}[5]" in text
    again = parse_graph(text)
    assert print_graph(again) == text
    constant = next(n for n in again.nodes if n.op is Op.CONSTANT)
    assert constant.arg.dtype == dtype
    assert constant.arg.tobytes() == values.tobytes()          # bit for bit, -0.0 and nan


# -- builder rules ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_parts_and_abs_have_the_parts_dtype(dtype):
    z = B.parameter(0, (3,), dtype)
    for op in (Op.REAL, Op.IMAG, Op.ABS):
        assert B.unary(op, z).dtype == parts_dtype(dtype)
    assert B.unary(Op.CONJ, z).dtype == dtype
    re = B.parameter(1, (3,), parts_dtype(dtype))
    assert B.binary(Op.COMPLEX, re, re).dtype == dtype


@pytest.mark.parametrize("build", [
    lambda z, r: B.binary(Op.LT, z, z),
    lambda z, r: B.binary(Op.MAX, z, z),
    lambda z, r: B.unary(Op.FLOOR, z),
    lambda z, r: B.unary(Op.SIGN, z),
    lambda z, r: B.unary(Op.EXPM1, z),
    lambda z, r: B.reduce(z, "max", (0,)),
    lambda z, r: B.argreduce(z, "argmin", 0),
    lambda z, r: B.unary(Op.REAL, r),
    lambda z, r: B.unary(Op.CONJ, r),
    lambda z, r: B.binary(Op.COMPLEX, z, z),
], ids=["lt", "max", "floor", "sign", "expm1", "reduce-max", "argmin", "real-of-float",
        "conj-of-float", "complex-of-complex"])
def test_builder_refuses_ops_a_dtype_lacks(build):
    z = B.parameter(0, (3,), np.complex128)
    r = B.parameter(1, (3,), np.float64)
    with pytest.raises(IRDTypeError):
        build(z, r)


def test_front_end_turns_ir_dtype_errors_into_dtype_error():
    import xlanb
    from xlanb.errors import DTypeError

    def order(z):
        return np.floor(z)                       # NumPy has no complex floor loop either
    with pytest.raises(DTypeError, match="test_complex_ir.py"):
        xlanb.jit(order)(np.ones(3, np.complex64))


# -- interpreter against compiled kernels ----------------------------------------------------

def _elementwise_program(dtype):
    """Every op that takes complex operands, in a few fused kernels and a reduction."""
    z = B.parameter(0, (4, 16), dtype)
    w = B.parameter(1, (4, 16), dtype)
    re = B.unary(Op.REAL, z)
    outputs = [B.binary(op, z, w) for op in (Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.POW)]
    outputs += [B.unary(op, z) for op in (Op.NEG, Op.ABS, Op.EXP, Op.LOG, Op.SQRT, Op.RSQRT,
                                          Op.TANH, Op.SIN, Op.COS, Op.REAL, Op.IMAG,
                                          Op.CONJ, Op.IS_FINITE)]
    outputs += [B.binary(Op.EQ, z, w), B.binary(Op.NE, z, z),
                B.select(B.binary(Op.GT, re, B.unary(Op.IMAG, w)), z, w),
                B.binary(Op.COMPLEX, B.unary(Op.IMAG, w), re),
                B.convert(z, np.float64), B.convert(z, np.int32), B.convert(z, bool),
                B.convert(re, dtype), B.convert(z, np.complex128 if dtype == np.complex64
                                                  else np.complex64),
                B.reduce(B.binary(Op.MUL, z, w), "sum", (1,)),
                B.reduce(z, "prod", (0,)),
                B.dot(z, B.unary(Op.CONJ, w), (), (), (1,), (1,))]
    return Graph([z, w], outputs, f"complex_{np.dtype(dtype).name}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_compiled_equals_interpreted(dtype):
    graph = _elementwise_program(dtype)
    verify(graph)
    args = [cplx(dtype, (4, 16), 0), cplx(dtype, (4, 16), 1)]
    args[0][0, :3] = [0j, complex(np.inf, 1), complex(np.nan, 0)]
    expected = interpret(graph, args)
    got = runtime.compile(graph).run(args)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == e.dtype, f"output {i} ({graph.outputs[i].op.value})"
        finite = np.isfinite(e) if e.dtype.kind in "fc" else np.ones(e.shape, bool)
        n = 16 if graph.outputs[i].op in (Op.REDUCE, Op.DOT) else 1
        assert_close(np.where(finite, g, 0), np.where(finite, e, 0), n=n, k=32,
                     err_msg=f"output {i} ({graph.outputs[i].op.value})")


@pytest.mark.parametrize("dtype", DTYPES)
def test_generated_source_uses_complex_arithmetic_not_vecmath(dtype):
    z = B.parameter(0, (64,), dtype)
    graph = Graph([z], [B.unary(Op.EXP, B.unary(Op.LOG, z)),
                        B.reduce(B.unary(Op.SQRT, z), "sum", (0,))])
    sources = "\n".join(k["source"] for k in runtime.compile(graph).report.kernels)
    assert "cexp(" in sources and "cmath.log(" in sources and "cmath.sqrt(" in sources
    assert "import cmath" in sources and "from xlanb_runtime.codegen.complex_math" in sources
    assert "vecmath" not in sources.replace("# vecmath", "")
    assert "np.complex128(0)" in sources                   # the complex accumulator


def test_real_kernels_do_not_import_cmath():
    x = B.parameter(0, (64,), np.float32)
    graph = Graph([x], [B.unary(Op.EXP, x)])
    source = runtime.compile(graph).report.kernels[0]["source"]
    assert "import cmath" not in source and "cmath." not in source and "cdiv" not in source
    assert "exp_f32(" in source


# -- simplify --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_simplify_keeps_ieee_rules_for_complex(dtype):
    z = B.parameter(0, (8,), dtype)
    zero = B.broadcast(B.constant(np.zeros((), dtype)), (8,))
    two = B.broadcast(B.constant(np.array(2, dtype)), (8,))
    graph = simplify(Graph([z], [B.binary(Op.MUL, z, zero), B.binary(Op.SUB, z, z),
                                 B.binary(Op.POW, z, two)]))
    ops = [o.op for o in graph.outputs]
    assert ops == [Op.MUL, Op.SUB, Op.MUL], ops             # z*0, z-z kept (inf, nan); z**2
    args = [np.array([complex(np.inf, 1), complex(np.nan, 0)] + [1 + 1j] * 6, dtype)]
    got, want = interpret(graph, args), interpret(Graph([z], [B.binary(Op.MUL, z, zero)]), args)
    assert np.isnan(got[0][:2]).all() and np.isnan(want[0][:2]).all()


def test_complex128_splats_fold():
    c = B.constant(np.full((4,), 1 + 2j))
    graph = simplify(Graph([], [B.binary(Op.ADD, c, c)]))
    out = graph.outputs[0]
    assert out.op is Op.BROADCAST and out.inputs[0].arg == 2 + 4j


# -- gradients (JAX's convention: the cotangent of x + iy is dL/dx - i dL/dy) ----------------

def _cplx_node(x, y):
    return B.binary(Op.COMPLEX, x, y)


# op: builder over two float64 parameters (shape S), each a real loss path through the op
S = (3, 4)
VJP_CASES = {
    Op.REAL: lambda x, y: B.unary(Op.REAL, B.binary(Op.MUL, _cplx_node(x, y), _cplx_node(y, y))),
    Op.IMAG: lambda x, y: B.unary(Op.IMAG, B.binary(Op.MUL, _cplx_node(x, y), _cplx_node(y, y))),
    Op.CONJ: lambda x, y: B.unary(Op.IMAG, B.binary(Op.MUL, B.unary(Op.CONJ, _cplx_node(x, y)),
                                                    _cplx_node(y, x))),
    Op.COMPLEX: lambda x, y: B.unary(Op.ABS, B.binary(Op.ADD, B.unary(Op.EXP, _cplx_node(x, y)),
                                                      _cplx_node(y, x))),
    Op.ABS: lambda x, y: B.unary(Op.ABS, B.binary(Op.MUL, _cplx_node(x, y), _cplx_node(y, y))),
    Op.CONVERT: lambda x, y: B.convert(B.binary(Op.MUL, B.convert(x, np.complex128),
                                                _cplx_node(y, x)), np.float64),
    Op.POW: lambda x, y: B.unary(Op.REAL, B.binary(Op.POW, _cplx_node(x, y),
                                                   _cplx_node(y, x))),
}


def _loss_graph(build):
    params = [B.parameter(i, S, np.float64) for i in range(2)]
    out = build(*params)
    weights = B.constant(np.random.default_rng(7).uniform(0.5, 1.5, out.shape))
    loss = B.reduce(B.binary(Op.MUL, out, weights), "sum", tuple(range(out.ndim)))
    return Graph(params, [loss] + vjp([loss], params, [B.constant(np.array(1.0))]))


@pytest.mark.parametrize("op", list(VJP_CASES), ids=lambda op: op.value)
def test_complex_vjp_matches_central_finite_differences(op):
    graph = _loss_graph(VJP_CASES[op])
    rng = np.random.default_rng(0)
    args = [rng.uniform(0.5, 2.0, S) for _ in range(2)]
    analytic = interpret(graph, args)[1:]
    h = 1e-6
    for i, grad in enumerate(analytic):
        numeric = np.zeros(S)
        for index in np.ndindex(S):
            plus, minus = [a.copy() for a in args], [a.copy() for a in args]
            plus[i][index] += h
            minus[i][index] -= h
            numeric[index] = (interpret(graph, plus)[0] - interpret(graph, minus)[0]) / (2 * h)
        assert_close(grad, numeric, tol=1e-7)    # central differences, h = 1e-6 in float64
    compiled = runtime.compile(graph).run(args)
    for got, want in zip(compiled, interpret(graph, args)):
        assert_close(got, want, n=12, k=32)


# -- CUDA ------------------------------------------------------------------------------------

CUDA_SCRIPT = textwrap.dedent("""
    import numpy as np, xlanb
    z = (np.arange(6) + 1j * np.arange(6)[::-1]).astype(np.complex64)
    y = np.linspace(0, 1, 6).astype(np.float32)
    fn = lambda z, y: (np.abs(z * z + y).sum(), np.exp(z) * y, np.real(z) + y)
    f = xlanb.jit(fn, target="cuda")
    for got, want in zip(f(z, y), fn(z, y)):
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert np.allclose(got, want, rtol=1e-5, atol=0), (got, want)
    decisions = [d for k in f.last_compiled.report.kernels for d in k["decisions"]]
    assert any("complex64 values have no CUDA kernels" in d for d in decisions), decisions
    print("XLANB-OK")
""")


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None, reason="needs numba-cuda")
def test_cuda_target_runs_complex_kernels_on_the_host():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", NUMBA_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "runtime")])
    done = subprocess.run([sys.executable, "-c", CUDA_SCRIPT], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert "XLANB-OK" in done.stdout, done.stderr[-3000:]
