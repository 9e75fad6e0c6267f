"""VJP rules against central finite differences in float64, one case per op of the IR.

Every op of `Op` must be either in CASES (differentiable, checked numerically) or in the
rules' ZERO_GRADIENT set / NOT_DIFFERENTIABLE below (checked to give zero cotangents): a new
op without an entry fails `test_every_op_is_covered`.
"""
from __future__ import annotations

import numpy as np
import pytest

import xlanb_runtime as runtime
from xlanb_runtime.autodiff import VJP, ZERO_GRADIENT, vjp
from xlanb_runtime.ir import Graph, Op, interpret
from xlanb_runtime.ir import builder as B
from tolerance import assert_close, graph_scale

F64 = np.float64
# random bits have no gradient; loops (and the dynamic slices and pads in their bodies) and
# float16 rounding (passes/half.py) are made by the compiler after autodiff ran on the traced
# program, so a gradient never meets one (NotDifferentiableError if asked)
NOT_DIFFERENTIABLE = {op for op in Op if op.name in (
    "RNG_BITS", "LOOP", "LOOP_RESULT", "DYNAMIC_SLICE", "DYNAMIC_PAD", "ROUND_HALF",
    # functions with several results (eigh, svd, qr) have no rules yet
    "LIBRARY_RESULT")}


def u(op):
    return lambda x: B.unary(op, x)


def b(op):
    return lambda x, y: B.binary(op, x, y)


def cplx(x, y):
    return B.binary(Op.COMPLEX, x, y)


S = (3, 4)
POS = (0.5, 2.0)
ANY = (-2.0, 2.0)
# op: (builder over float64 parameter nodes, [(shape, (low, high)) per input])
CASES = {
    Op.NEG: (u(Op.NEG), [(S, ANY)]),
    Op.ABS: (u(Op.ABS), [(S, POS)]),
    Op.EXP: (u(Op.EXP), [(S, ANY)]),
    Op.EXP2: (u(Op.EXP2), [(S, ANY)]),
    Op.EXPM1: (u(Op.EXPM1), [(S, ANY)]),
    Op.LOG: (u(Op.LOG), [(S, POS)]),
    Op.LOG1P: (u(Op.LOG1P), [(S, POS)]),
    Op.SQRT: (u(Op.SQRT), [(S, POS)]),
    Op.RSQRT: (u(Op.RSQRT), [(S, POS)]),
    Op.TANH: (u(Op.TANH), [(S, ANY)]),
    Op.SIN: (u(Op.SIN), [(S, ANY)]),
    Op.COS: (u(Op.COS), [(S, ANY)]),
    Op.TAN: (u(Op.TAN), [(S, (-1.0, 1.0))]),
    Op.ASIN: (u(Op.ASIN), [(S, (-0.9, 0.9))]),
    Op.ACOS: (u(Op.ACOS), [(S, (-0.9, 0.9))]),
    Op.SINH: (u(Op.SINH), [(S, ANY)]),
    Op.COSH: (u(Op.COSH), [(S, ANY)]),
    Op.ATAN: (u(Op.ATAN), [(S, ANY)]),
    Op.ASINH: (u(Op.ASINH), [(S, ANY)]),
    Op.ACOSH: (u(Op.ACOSH), [(S, (1.5, 3.0))]),
    Op.ATANH: (u(Op.ATANH), [(S, (-0.9, 0.9))]),
    Op.ERF: (u(Op.ERF), [(S, ANY)]),
    Op.ADD: (b(Op.ADD), [(S, ANY), (S, ANY)]),
    Op.SUB: (b(Op.SUB), [(S, ANY), (S, ANY)]),
    Op.MUL: (b(Op.MUL), [(S, ANY), (S, ANY)]),
    Op.DIV: (b(Op.DIV), [(S, ANY), (S, POS)]),
    Op.REM: (b(Op.REM), [(S, (0.2, 0.8)), (S, (1.5, 2.5))]),
    Op.POW: (b(Op.POW), [(S, POS), (S, ANY)]),
    Op.MAX: (b(Op.MAX), [(S, ANY), (S, ANY)]),
    Op.MIN: (b(Op.MIN), [(S, ANY), (S, ANY)]),
    Op.ATAN2: (b(Op.ATAN2), [(S, ANY), (S, POS)]),
    Op.SELECT: (lambda x, y: B.select(B.binary(Op.GT, x, y), B.binary(Op.MUL, x, y), y),
                [(S, ANY), (S, ANY)]),
    Op.CONVERT: (lambda x: B.convert(B.binary(Op.MUL, B.convert(x, np.float32),
                                              B.convert(x, np.float32)), F64), [(S, POS)]),
    Op.BROADCAST: (lambda x: B.broadcast(x, (2, 3, 4), (1, 2)), [((3, 1), ANY)]),
    Op.RESHAPE: (lambda x: B.reshape(x, (2, 6)), [(S, ANY)]),
    Op.TRANSPOSE: (lambda x: B.transpose(x, (1, 0)), [(S, ANY)]),
    Op.SLICE: (lambda x: B.slice_(x, ((1, 3, 1), (0, 4, 2))), [(S, ANY)]),
    Op.PAD: (lambda x, v: B.pad(x, v, ((1, 0, 1), (0, 2, 0))), [(S, ANY), ((), ANY)]),
    Op.CONCATENATE: (lambda x, y: B.concatenate([x, y], 1), [(S, ANY), ((3, 2), ANY)]),
    Op.REVERSE: (lambda x: B.reverse(x, (1,)), [(S, ANY)]),
    Op.REDUCE: (lambda x: B.binary(Op.ADD, B.binary(Op.ADD, B.reduce(x, "sum", (0,)),
                                                    B.reduce(x, "max", (0,))),
                                   B.binary(Op.ADD, B.reduce(x, "min", (0,)),
                                            B.reduce(x, "prod", (0,)))), [(S, POS)]),
    # every scan kind along both axes (cumprod's rule: no division, see scan_rules.py)
    Op.SCAN: (lambda x: scan_chain(x), [(S, ANY)]),
    Op.DOT: (lambda x, y: B.dot(x, y, (0,), (0,), (1,), (2,)),
             [((2, 3, 4), ANY), ((2, 5, 3), ANY)]),
    Op.GATHER: (lambda x: B.gather(x, B.constant(np.array([2, 0, 2, 1])), 0), [(S, ANY)]),
    Op.SCATTER_ADD: (lambda x, v: B.scatter_add(x, B.constant(np.array([1, 1, 0])), v, 1),
                     [(S, ANY), ((3, 3), ANY)]),
    # column 1 written twice (the second write wins), column 2 never
    Op.SCATTER: (lambda x, v: B.scatter(x, B.constant(np.array([1, 3, 1, 0])), v, 1),
                 [(S, ANY), ((3, 4), ANY)]),
    Op.ALL_REDUCE: (lambda x: B.all_reduce(x, "sum"), [(S, ANY)]),
    # library calls with rules (autodiff/library_rules.py), one chain through them all
    Op.LIBRARY_CALL: (lambda a, b: library_chain(a, b), [((3, 3), ANY), ((3,), ANY)]),
    # complex steps between real inputs and a real loss
    Op.REAL: (lambda x, y: B.unary(Op.REAL, B.binary(Op.MUL, cplx(x, y), cplx(y, y))),
              [(S, ANY), (S, ANY)]),
    Op.IMAG: (lambda x, y: B.unary(Op.IMAG, B.binary(Op.MUL, cplx(x, y), cplx(y, y))),
              [(S, ANY), (S, ANY)]),
    Op.CONJ: (lambda x, y: B.unary(Op.IMAG, B.binary(Op.MUL, B.unary(Op.CONJ, cplx(x, y)),
                                                     cplx(y, x))), [(S, ANY), (S, ANY)]),
    Op.COMPLEX: (lambda x, y: B.unary(Op.ABS, B.binary(Op.ADD, B.unary(Op.EXP, cplx(x, y)),
                                                       cplx(y, x))), [(S, ANY), (S, ANY)]),
}


def scan_chain(x):
    total = None
    for kind in ("sum", "prod", "max", "min"):
        for axis in (0, 1):
            term = B.scan(x, kind, axis)
            total = term if total is None else B.binary(Op.ADD, total, term)
    return total


def library_chain(a, b):
    """solve, inv, det, cumsum, sort and fft in one function of a 3x3 matrix and a vector
    (the matrix is shifted by 5 I: well conditioned over the inputs' range)."""
    call = B.library_call
    m = B.binary(Op.ADD, a, B.constant(5.0 * np.eye(3)))
    x = call("np.linalg.solve", [m, call("np.cumsum", [b], {"axis": 0})])
    y = B.dot(call("np.linalg.inv", [m]), call("np.sort", [x], {"axis": -1}), (), (), (1,),
              (0,))
    z = B.binary(Op.MUL, y, B.broadcast(call("np.linalg.det", [m]), (3,)))
    spectrum = call("np.fft.fft", [B.binary(Op.COMPLEX, z, b)], {"axis": -1})
    return B.unary(Op.REAL, B.binary(Op.MUL, spectrum, spectrum))


def scalar_loss_graph(op):
    build, inputs = CASES[op]
    params = [B.parameter(i, shape, F64) for i, (shape, _) in enumerate(inputs)]
    out = build(*params)
    weights = B.constant(np.random.default_rng(7).uniform(0.5, 1.5, out.shape))
    loss = B.reduce(B.binary(Op.MUL, out, weights), "sum", tuple(range(out.ndim)))
    grads = vjp([loss], params, [B.constant(np.array(1.0))])
    return Graph(params, [loss] + grads, op.value)


def random_inputs(op, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(lo, hi, shape) for shape, (lo, hi) in CASES[op][1]]


def finite_difference(graph, args, eps=1e-6):
    grads = []
    for i, arg in enumerate(args):
        grad = np.zeros_like(arg)
        for index in np.ndindex(arg.shape):
            plus = [a.copy() for a in args]
            minus = [a.copy() for a in args]
            plus[i][index] += eps
            minus[i][index] -= eps
            grad[index] = (interpret(graph, plus)[0] - interpret(graph, minus)[0]) / (2 * eps)
        grads.append(grad)
    return grads


# (step, relative norm tolerance).  Central differences with h = 1e-6 in float64: rounding
# eps * |f| / h ~ 1e-10 |f|, truncation h^2 * |third derivative|.  A float32 round trip is a
# quadratic, whose central difference is exact for any step, so a step far above float32
# resolution is used: float32 rounding of f over h = 1e-2 sets the tolerance (~1e-5).
FD = (1e-6, 1e-7)
LOOSE = {Op.CONVERT: (1e-2, 1e-4)}


@pytest.mark.parametrize("op", list(CASES), ids=lambda op: op.value)
def test_vjp_matches_central_finite_differences(op):
    graph = scalar_loss_graph(op)
    args = random_inputs(op)
    eps, tol = LOOSE.get(op, FD)
    analytic = interpret(graph, args)[1:]
    numeric = finite_difference(graph, args, eps)
    for a, n in zip(analytic, numeric):
        assert_close(a, n, tol=tol)


@pytest.mark.parametrize("op", list(CASES), ids=lambda op: op.value)
def test_compiled_gradient_equals_interpreted(op):
    graph = scalar_loss_graph(op)
    args = random_inputs(op, seed=1)
    scale = graph_scale(graph, args)                  # the loss sums signed terms
    for got, expected in zip(runtime.compile(graph).run(args), interpret(graph, args)):
        assert_close(got, expected, n=30, scale=scale)     # inputs have at most 30 elements


def test_every_op_is_covered():
    missing = [op.value for op in Op
               if op not in CASES and op not in ZERO_GRADIENT and op not in NOT_DIFFERENTIABLE]
    assert not missing, f"ops without a gradient test: {missing}"
    assert not [op for op in CASES if op not in VJP], "a tested op lost its rule"


@pytest.mark.parametrize("op", [Op.SIGN, Op.FLOOR, Op.CEIL, Op.ROUND])
def test_piecewise_constant_ops_have_zero_gradient(op):
    x = B.parameter(0, (5,), F64)
    loss = B.reduce(B.binary(Op.MUL, B.unary(op, x), x), "sum", (0,))
    (grad,) = vjp([loss], [x], [B.constant(np.array(1.0))])
    args = [np.linspace(-2.3, 2.7, 5)]
    expected = interpret(Graph([x], [B.unary(op, x)]), args)[0]   # d(f(x) x) = f(x)
    assert_close(interpret(Graph([x], [grad]), args)[0], expected)


def test_cotangents_meet_and_add():
    x = B.parameter(0, (4,), F64)
    y = B.binary(Op.MUL, x, x)
    loss = B.reduce(B.binary(Op.ADD, y, B.unary(Op.EXP, x)), "sum", (0,))
    (grad,) = vjp([loss], [x], [B.constant(np.array(1.0))])
    args = [np.array([0.1, -0.5, 1.0, 2.0])]
    assert_close(interpret(Graph([x], [grad]), args)[0], 2 * args[0] + np.exp(args[0]))
