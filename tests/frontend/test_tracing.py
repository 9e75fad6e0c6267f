"""Tracing vs NumPy eager: every row runs `fn` on NumPy arrays and through trace + interpret.

A row is (name, fn, make_args); make_args(rng) returns the positional args.  The traced
graph must verify, and each output leaf must match NumPy's in dtype and shape, and in value
within rounding (integers exactly; floats by relative norm error, tests/tolerance.py).
"""
from __future__ import annotations

import collections

import numpy as np
import pytest

from tolerance import assert_close
from xlanb.pytree import tree_flatten
from xlanb.tracing import TraceContext, Tracer, flatten_args, is_array_leaf, trace
from xlanb.tracing.boundary import call_params, finish_call
from xlanb_runtime.ir import Op, interpret, verify

F32, F64, I32, I64 = np.float32, np.float64, np.int32, np.int64


def run_traced(fn, args, kwargs=None, static_argnums=()):
    traced = trace(fn, args, kwargs, static_argnums=static_argnums)
    verify(traced.graph)
    leaves, _, _ = flatten_args(args, kwargs, static_argnums)
    params = call_params(traced, leaves)
    assert len(params) == len(traced.graph.params)
    values = finish_call(traced, params, leaves, interpret(traced.graph, params))
    return traced, traced.unflatten_outputs(values)


def assert_same(expected, got, n: int = 1):
    """Leaf by leaf: same dtype and shape, values within rounding; `n` bounds the length of
    the reductions (the largest argument's size)."""
    exp_leaves, exp_tree = tree_flatten(expected)
    got_leaves, got_tree = tree_flatten(got)
    assert exp_tree == got_tree
    for e, g in zip(exp_leaves, got_leaves):
        e, g = np.asarray(e), np.asarray(g)
        assert g.dtype == e.dtype, f"dtype {g.dtype} != NumPy's {e.dtype}"
        assert g.shape == e.shape, f"shape {g.shape} != NumPy's {e.shape}"
        assert_close(g, e, n=n)


def check(fn, *args, static_argnums=(), **kwargs):
    expected = fn(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs)
    _, got = run_traced(fn, args, kwargs, static_argnums)
    assert_same(expected, got, n=max((np.size(a) for a in args), default=1))


def normal(*shape, dtype=F64):
    return lambda rng: rng.standard_normal(shape).astype(dtype)


def positive(*shape, dtype=F64):
    return lambda rng: (rng.random(shape) + 0.1).astype(dtype)


def ints(*shape, dtype=I64, low=-5, high=6):
    return lambda rng: rng.integers(low, high, shape).astype(dtype)


def bools(*shape):
    return lambda rng: rng.random(shape) > 0.5


def args_of(*makers):
    return lambda rng: tuple(m(rng) for m in makers)


# -- ufuncs -------------------------------------------------------------------------------
UNARY_ANY = [np.negative, np.positive, np.abs, np.sign, np.exp, np.expm1, np.tanh, np.sin,
             np.cos, np.tan, np.square, np.floor, np.ceil, np.rint, np.trunc, np.isfinite,
             np.isnan, np.isinf, np.exp2, np.deg2rad, np.fabs]
UNARY_POSITIVE = [np.log, np.log1p, np.sqrt, np.reciprocal, np.log2, np.log10]
BINARY_ANY = [np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum, np.fmax,
              np.fmin, np.greater, np.less, np.equal, np.not_equal, np.greater_equal,
              np.less_equal, np.logical_and, np.logical_or, np.logical_xor, np.arctan2,
              np.logaddexp, np.hypot]
BINARY_POSITIVE = [np.power, np.floor_divide, np.remainder, np.true_divide, np.float_power]
FLOATS = [F32, F64]


@pytest.mark.parametrize("dtype", FLOATS + [I32])
@pytest.mark.parametrize("ufunc", UNARY_ANY, ids=lambda u: u.__name__)
def test_unary_ufunc(ufunc, dtype):
    if dtype == I32 and ufunc in (np.fabs,):
        pytest.skip("NumPy has no integer loop")
    x = normal(3, 4, dtype=F64)(np.random.default_rng(0)) * 3
    check(ufunc, x.astype(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ufunc", UNARY_POSITIVE, ids=lambda u: u.__name__)
def test_unary_ufunc_positive_domain(ufunc, dtype):
    check(ufunc, positive(5, 2, dtype=dtype)(np.random.default_rng(1)))


@pytest.mark.parametrize("dtype", FLOATS + [I64])
@pytest.mark.parametrize("ufunc", BINARY_ANY, ids=lambda u: u.__name__)
def test_binary_ufunc(ufunc, dtype):
    rng = np.random.default_rng(2)
    x, y = (normal(3, 4)(rng) * 4).astype(dtype), (normal(4)(rng) * 4).astype(dtype)
    check(ufunc, x, y)


@pytest.mark.parametrize("dtype", FLOATS + [I64])
@pytest.mark.parametrize("ufunc", BINARY_POSITIVE, ids=lambda u: u.__name__)
def test_binary_ufunc_positive_domain(ufunc, dtype):
    rng = np.random.default_rng(3)
    x = (positive(2, 3)(rng) * 5).astype(dtype)
    y = (positive(3)(rng) * 3 + 1).astype(dtype)
    check(ufunc, x, y)


@pytest.mark.parametrize("ufunc", [np.bitwise_and, np.bitwise_or, np.bitwise_xor,
                                   np.logical_and, np.add, np.multiply, np.maximum])
@pytest.mark.parametrize("make", [ints(3, 4), bools(3, 4)], ids=["int", "bool"])
def test_integer_and_bool_ufuncs(ufunc, make):
    rng = np.random.default_rng(4)
    check(ufunc, make(rng), make(rng))


@pytest.mark.parametrize("ufunc,low,high", [
    (np.arctan, -30, 30), (np.arcsin, -1, 1), (np.arccos, -1, 1), (np.sinh, -30, 30),
    (np.cosh, -30, 30), (np.arcsinh, -1e3, 1e3), (np.arccosh, 1, 1e3), (np.arctanh, -1, 1)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_inverse_trigonometric_and_hyperbolic(ufunc, low, high, dtype):
    rng = np.random.default_rng(22)
    edges = [low, high, (low + high) / 2, 1e-9 if low < 1e-9 < high else high]
    x = np.concatenate([rng.uniform(low, high, 40), edges]).astype(dtype)
    with np.errstate(all="ignore"):
        check(ufunc, x)


@pytest.mark.parametrize("ufunc", [np.sinh, np.cosh])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hyperbolic_from_one_exponential_up_to_overflow(ufunc, dtype):
    """sinh/cosh computed from one exp (or expm1): within 3 ulp of the long-double value
    over small and large arguments, and up to the overflow threshold (e^a alone overflows
    first: the rule switches to e^(a/2) there), inf past it.  In a fused kernel (times an
    array of ones): a lone call of many elements may run NumPy's own loop."""
    import xlanb
    limit = 90 if dtype == np.float32 else 711
    x = np.concatenate([np.linspace(-limit, limit, 20001), np.geomspace(1e-20, 1, 200),
                        -np.geomspace(1e-20, 1, 200), [np.inf, -np.inf]]).astype(dtype)
    one = np.ones_like(x)
    fused = xlanb.jit(lambda x, one: ufunc(x) * one, tiered=False)
    assert "hyperbolic" in fused.lower(x, one).as_text()
    with np.errstate(all="ignore"):
        got = fused(x, one)
        want = ufunc(x.astype(np.longdouble)).astype(dtype)
    ints = np.int32 if dtype == np.float32 else np.int64
    finite = np.isfinite(want)
    ulps = np.abs(got[finite].view(ints).astype(np.int64) -
                  want[finite].view(ints).astype(np.int64))
    assert ulps.max() <= 3, x[finite][np.argmax(ulps)]
    np.testing.assert_array_equal(got[~finite], want[~finite])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp2_is_one_op_within_two_ulp(dtype):
    """np.exp2 is an op of its own (vecmath's exp2 in a fused loop, NumPy's own loop for
    a lone call of many elements), not pow(2, x): within 2 ulp of the long-double value
    from the smallest subnormal results to overflow; its gradient is 2^x ln2."""
    import xlanb
    lo, hi = (-151, 129) if dtype == np.float32 else (-1076, 1025)
    x = np.concatenate([np.linspace(lo, hi, 20001), np.linspace(-1, 1, 2001),
                        [np.inf, -np.inf, np.nan, 0.0, -0.0]]).astype(dtype)
    one = np.ones_like(x)                                       # a fused kernel, exact
    fused = xlanb.jit(lambda x, one: np.exp2(x) * one, tiered=False)
    assert "exponential-base-two" in fused.lower(x, one).as_text()
    with np.errstate(all="ignore"):
        want = np.exp2(x.astype(np.longdouble)).astype(dtype)
        got = fused(x, one)
        lone = xlanb.jit(np.exp2, tiered=False)(x)
    ints = np.int32 if dtype == np.float32 else np.int64
    finite = np.isfinite(want) & (want != 0)
    # the fused loop is vecmath's (2 ulp); a lone call may be NumPy's loop (f32: 3 ulp)
    for result, bound in ((got, 2), (lone, 3)):
        ulps = np.abs(result[finite].view(ints).astype(np.int64) -
                      want[finite].view(ints).astype(np.int64))
        assert ulps.max() <= bound, x[finite][np.argmax(ulps)]
        np.testing.assert_array_equal(result[~finite], want[~finite])
    check(np.exp2, np.arange(-3, 4))                            # ints: NumPy's float64
    g = xlanb.grad(lambda v: np.exp2(v).sum())(np.array([0.5, 1.0, -2.0], dtype))
    np.testing.assert_allclose(g, np.exp2(np.array([0.5, 1.0, -2.0])) * np.log(2),
                               rtol=4 * np.finfo(dtype).eps)


@pytest.mark.parametrize("ufunc,op,inputs", [
    (np.arctan, "arctangent", lambda: np.concatenate([np.linspace(-50, 50, 20001),
                                                      np.geomspace(1e-30, 1e30, 400)])),
    (np.arcsinh, "hyperbolic-arcsine", lambda: np.concatenate([
        np.linspace(-3, 3, 20001), np.geomspace(1e-30, 1e300, 2000)])),
    # near 1 the result is small: log(x + sqrt(x^2 - 1)) lost it to rounding (1e-7 f32 ulp 568)
    (np.arccosh, "hyperbolic-arccosine", lambda: np.concatenate([
        1 + np.geomspace(1e-15, 1e3, 20001), np.geomspace(1, 1e300, 2000), [0.5, -3.0]])),
    (np.arctanh, "hyperbolic-arctangent", lambda: np.concatenate([
        np.linspace(-1, 1, 20001), 1 - np.geomspace(1e-15, 0.5, 2000), [1.5, -2.0]]))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inverse_tangent_and_hyperbolic_ops_within_four_ulp(ufunc, op, inputs, dtype):
    """np.arctan, arcsinh, arccosh, arctanh are ops of their own (vecmath's functions fused,
    NumPy's own loop for a lone call of many elements where that is faster): within 4 ulp of
    the long-double value, fused and alone, special values as NumPy's, gradients 1/(1+x^2),
    1/sqrt(x^2+1), 1/sqrt(x^2-1), 1/(1-x^2)."""
    import xlanb
    with np.errstate(all="ignore"):
        x = np.concatenate([inputs(), [np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0]])
        x = x.astype(dtype)
        one = np.ones_like(x)
        fused = xlanb.jit(lambda x, one: ufunc(x) * one, tiered=False)
        assert op in fused.lower(x, one).as_text()
        want = ufunc(x.astype(np.longdouble)).astype(dtype)
        got, lone = fused(x, one), xlanb.jit(ufunc, tiered=False)(x)
    ints = np.int32 if dtype == np.float32 else np.int64
    finite = np.isfinite(want)
    for result in (got, lone):
        ulps = np.abs(result[finite].view(ints).astype(np.int64) -
                      want[finite].view(ints).astype(np.int64))
        assert ulps.max() <= 4, x[finite][np.argmax(ulps)]
        np.testing.assert_array_equal(result[~finite], want[~finite])
    v = np.array([0.25, 0.5, 0.75], dtype) + (1.5 if ufunc is np.arccosh else 0)
    derivative = {np.arctan: 1 / (1 + v * v), np.arcsinh: 1 / np.sqrt(v * v + 1),
                  np.arccosh: 1 / np.sqrt(v * v - 1), np.arctanh: 1 / (1 - v * v)}[ufunc]
    np.testing.assert_allclose(xlanb.grad(lambda v: ufunc(v).sum())(v), derivative,
                               rtol=8 * np.finfo(dtype).eps)


def test_invert_and_logical_not():
    rng = np.random.default_rng(5)
    check(lambda a, b: (~a, ~b, np.logical_not(a), np.invert(b)), bools(4)(rng), ints(4)(rng))


OPERATOR_ROWS = [
    ("add_scalar", lambda x: x + 1, normal(3)),
    ("radd", lambda x: 2.5 + x, normal(3)),
    ("rsub", lambda x: 1 - x, normal(3, dtype=F32)),
    ("rdiv", lambda x: 1.0 / x, positive(3, dtype=F32)),
    ("mul_weak_f32", lambda x: x * 2.0, normal(3, dtype=F32)),
    ("int_times_float", lambda x: x * 0.5, ints(3, dtype=I32)),
    ("int_truediv", lambda x: x / 2, ints(3, dtype=I32)),
    ("int_floordiv_mod", lambda x: (x // 3, x % 3, -x // 2), ints(5)),
    ("float_floordiv_neg", lambda x: (x // -0.7, x % -0.7), normal(5)),
    ("pow_int_const", lambda x: x ** 2, normal(4, dtype=F32)),
    ("pow_half", lambda x: x ** 0.5, positive(4, dtype=F32)),
    ("int_pow", lambda x: x ** 3, ints(4, dtype=I32)),
    ("rpow", lambda x: 2.0 ** x, normal(4, dtype=F32)),
    ("neg_abs_pos", lambda x: (-x, abs(x), +x), normal(4)),
    ("compare_chain", lambda x, y: (x < y, x <= y, x > 0, x >= y, x == y, x != 0.5),
     args_of(normal(4), normal(4))),
    ("reflected_compare", lambda x: 0 < x, normal(4)),
    ("bitwise_ops", lambda a, b: (a & b, a | b, a ^ b, ~a), args_of(bools(4), bools(4))),
    ("bool_int_ops", lambda x: (x & 3, 1 | x, x ^ 5), ints(4)),
    ("mixed_precision", lambda x, y: x + y, args_of(normal(3, dtype=F32), normal(3))),
    ("int32_plus_int64", lambda x, y: x * y, args_of(ints(3, dtype=I32), ints(3))),
    ("numpy_scalar_strong", lambda x: x * np.float64(2), normal(3, dtype=F32)),
    ("ndarray_left_operand", lambda x: np.ones(3, F32) - x, normal(3, dtype=F32)),
    ("matmul_operator", lambda a, b: a @ b, args_of(normal(2, 3), normal(3, 4))),
    ("rmatmul", lambda a: np.eye(3) @ a, normal(3, 2)),
    ("divmod", lambda x: divmod(x, 3), ints(6)),
    ("np_divmod", lambda x: np.divmod(x, 1.5), normal(6)),
    ("bool_arith", lambda x: x + True, ints(3, dtype=I32)),
    ("shifts", lambda x, k: (x << 3, x >> 2, x >> 63, x << k, x >> k, np.left_shift(x, 70),
                             np.right_shift(x.astype(np.uint8), 3), x.astype(np.uint16) << 9),
     args_of(ints(6, low=-1000, high=1000), ints(6, low=0, high=70))),
    ("fmod", lambda a, b, x: (np.fmod(a, b), np.fmod(x, 0.75), np.fmod(-x, np.inf),
                              np.fmod(x, b)),
     args_of(ints(6), lambda rng: rng.choice(np.array([-3, 2, 5]), 6), normal(6))),
]


@pytest.mark.parametrize("name,fn,make", OPERATOR_ROWS, ids=[r[0] for r in OPERATOR_ROWS])
def test_operators(name, fn, make):
    args = make(np.random.default_rng(6))
    check(fn, *(args if isinstance(args, tuple) else (args,)))


def test_weak_scalar_keeps_float32():
    traced, (out,) = run_traced(lambda x: (x * 2.0 + 1,), (np.ones(3, F32),))
    assert out.dtype == F32
    assert all(n.dtype == F32 for n in traced.graph.nodes)


def test_ufunc_dtype_kwarg_and_outer_and_reduce():
    rng = np.random.default_rng(7)
    x, y = normal(3)(rng), normal(4)(rng)
    check(lambda x, y: (np.add(x, 1, dtype=F32), np.subtract.outer(x, y),
                        np.add.reduce(x), np.maximum.reduce(np.outer(x, y), axis=1),
                        np.multiply.outer(x, 2.0)), x, y)


# -- elementwise functions ------------------------------------------------------------------
ELEMENTWISE_ROWS = [
    ("where", lambda x: np.where(x > 0, x, 0.0), normal(3, 4, dtype=F32)),
    ("where_mixed", lambda x, y: np.where(x > y, x, y * 2), args_of(normal(3, 4), normal(4))),
    ("where_int_float", lambda x: np.where(x > 0, x, 0.5), ints(5)),
    ("where_concrete_cond", lambda x: np.where(np.arange(4) % 2 == 0, x, -x), normal(4)),
    ("clip", lambda x: np.clip(x, -0.5, 0.5), normal(10, dtype=F32)),
    ("clip_method", lambda x: x.clip(0), normal(10)),
    ("clip_none_low", lambda x: np.clip(x, None, 1), ints(6)),
    ("clip_arrays", lambda x, lo: np.clip(x, lo, 1.0), args_of(normal(2, 3), normal(3))),
    ("clip_int_float_bounds", lambda x: np.clip(x, 0.5, 2), ints(6, dtype=I32)),
    ("round", lambda x: (np.round(x), np.round(x, 2), np.around(x, 1)), normal(6)),
    ("relu_maximum", lambda x: np.maximum(x, 0), normal(6, dtype=F32)),
    ("softmax", lambda x: np.exp(x - x.max(axis=-1, keepdims=True)) /
     np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True), normal(3, 5)),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), normal(3, 5, dtype=F32)),
    ("isnan_with_nan", lambda x: (np.isnan(x / x), np.isinf(1 / x)), ints(5, low=-1, high=2)),
    ("nan_to_num", lambda x: (np.nan_to_num(np.log(x)), np.nan_to_num(1 / x, posinf=9.0, nan=-1),
                              np.nan_to_num(np.sqrt(x.astype(F32) + 0j))), ints(6, low=-2)),
    ("isclose_allclose", lambda x, y: (np.isclose(x, x + 1e-9), np.isclose(x, y, atol=0.5),
                                       np.allclose(x, x * (1 + 1e-7)), np.allclose(x, y),
                                       np.isclose(x / 0.0, y / 0.0, equal_nan=True),
                                       np.isclose(x.astype(F32), 0.0, atol=0.3)),
     args_of(normal(6), normal(6))),
]


@pytest.mark.parametrize("name,fn,make", ELEMENTWISE_ROWS, ids=[r[0] for r in ELEMENTWISE_ROWS])
def test_elementwise(name, fn, make):
    args = make(np.random.default_rng(8))
    check(fn, *(args if isinstance(args, tuple) else (args,)))


# -- reductions ---------------------------------------------------------------------------
REDUCTIONS = [np.sum, np.mean, np.max, np.min, np.prod, np.var, np.std, np.amax, np.amin]
AXES = [None, 0, 1, -1, (0, 2), ()]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS, ids=lambda f: f.__name__)
def test_reduction(reduction, axis, keepdims):
    if axis == () and reduction in (np.max, np.min, np.amax, np.amin, np.var, np.std):
        axis = (1,)
    rng = np.random.default_rng(9)
    for x in (normal(2, 3, 4, dtype=F32)(rng), normal(2, 3, 4)(rng), ints(2, 3, 4, dtype=I32)(rng)):
        check(lambda x: reduction(x, axis=axis, keepdims=keepdims), x)


@pytest.mark.parametrize("reduction", [np.argmax, np.argmin])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argreduce(reduction, axis):
    rng = np.random.default_rng(10)
    x = normal(3, 5)(rng)
    check(lambda x: (reduction(x, axis=axis), reduction(x, axis=axis, keepdims=True)), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.int64,
                                   np.bool_, np.float16])
@pytest.mark.parametrize("axis", [None, 0, 1, 2])
def test_argreduce_compiled_pass_keeps_numpy_rules(dtype, axis):
    """The compiled arg-reduction (codegen/argreduce.py; float16 is compared as float32): the
    first maximum/minimum wins (ties from a few distinct values), the first NaN wins over
    every number, along the last axis (a row loop stopping at its NaN), a middle and the
    first axis (a loop over rows of best values), and over the flattened array (NumPy's
    loop writing the output where it is 256 bytes or longer)."""
    import xlanb
    rng = np.random.default_rng(11)
    x = rng.integers(-3, 4, (6, 7, 5)).astype(dtype)
    if x.dtype.kind == "f":
        x[1, 2, 3] = x[4, 0, 0] = x[4, 5, 0] = x[0, 6, 1] = np.nan
        x[5, :, 4] = np.nan
    elif x.dtype == np.bool_:
        x[2] = False
    fn = xlanb.jit(lambda x: (np.argmax(x, axis=axis), np.argmin(x, axis=axis)), tiered=False)
    for got, want in zip(fn(x), (np.argmax(x, axis=axis), np.argmin(x, axis=axis))):
        assert got.dtype == np.int64 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    compiled = fn.lower(x).compile()
    assert "codegen/argreduce.py" in " ".join(d for k in compiled.kernels for d in k.decisions)
    runners = {getattr(f, "__name__", "") for f in compiled._driver.__globals__.values()}
    # NumPy's own loop (writing the output) for rows of its SIMD unit (256 bytes) or more
    itemsize = max(np.dtype(dtype).itemsize, 4 if dtype == np.float16 else 1)
    numpy_loop = axis is None and x.size * itemsize >= 256
    assert {f"library_{'numpy_' if numpy_loop else ''}{k}" for k in ("argmax", "argmin")} \
        <= runners                                              # float16: on float32 values


REDUCTION_ROWS = [
    ("sum_bool", lambda x: (np.sum(x), x.sum(axis=0)), bools(3, 4)),
    ("sum_int32_dtype", lambda x: (x.sum(), np.sum(x, dtype=F32)), ints(3, 4, dtype=I32)),
    ("sum_uint8", lambda x: x.sum(axis=1), ints(3, 4, dtype=np.uint8, low=0, high=200)),
    ("mean_int", lambda x: x.mean(axis=1), ints(3, 4)),
    ("mean_f16", lambda x: np.mean(x), normal(8, dtype=np.float16)),
    ("var_ddof", lambda x: (x.var(ddof=1), np.std(x, axis=0, ddof=1)), normal(4, 3)),
    ("var_int", lambda x: (np.var(x), np.std(x, axis=1)), ints(3, 4)),
    ("average", lambda x: (np.average(x), np.average(x, axis=0),
                           np.average(x, axis=1, keepdims=True), *np.average(x, returned=True),
                           *np.average(x, axis=1, returned=True)), normal(3, 4)),
    ("logaddexp_reduce", lambda x: (np.logaddexp.reduce(x, axis=1), np.logaddexp2.reduce(x),
                                    np.logaddexp.reduce(x, axis=None, keepdims=True),
                                    np.logaddexp.reduce(x[:0]), np.logaddexp.reduce(
                                        x.astype(F32), axis=(0, 1))),
     lambda rng: np.vstack([rng.standard_normal((2, 4)) * 30, [-np.inf] * 4,
                            [1.0, np.inf, -np.inf, 2.0], [np.inf] * 4,
                            [0.0, np.nan, 1.0, 1.0]])),
    ("any_all", lambda x: (np.any(x > 1), x.all(axis=0), np.all(x, axis=1, keepdims=True),
                           (x > 0).any(axis=(0, 1))), normal(3, 4)),
    ("any_int", lambda x: (np.any(x), np.all(x, axis=0)), ints(3, 4, low=0, high=2)),
    ("count_nonzero", lambda x: (np.count_nonzero(x > 0), np.count_nonzero(x, axis=0)),
     ints(3, 4, low=-1, high=2)),
    ("methods", lambda x: (x.sum(0), x.max(1), x.min(), x.prod(axis=1), x.argmax(),
                           x.argmin(axis=0), x.std(), x.var(axis=1), x.mean(axis=(0, 1))),
     normal(3, 4, dtype=F32)),
    ("logsumexp", lambda x: (lambda m: m + np.log(np.sum(np.exp(x - m[:, None]), axis=1)))(
        x.max(axis=1)), normal(4, 6)),
]


@pytest.mark.parametrize("name,fn,make", REDUCTION_ROWS, ids=[r[0] for r in REDUCTION_ROWS])
def test_reduction_rows(name, fn, make):
    check(fn, make(np.random.default_rng(11)))


def test_weighted_average_as_numpy():
    rng = np.random.default_rng(12)
    x, w0, w = rng.standard_normal((3, 4)), rng.random(3) + 0.1, rng.random((3, 4)) + 0.1
    check(lambda x, w0, w: (np.average(x, weights=w), np.average(x, axis=0, weights=w0),
                            *np.average(x, axis=1, weights=w, returned=True),
                            *np.average(x, axis=0, weights=w0, keepdims=True, returned=True),
                            np.average(x.reshape(3, 2, 2), axis=(2, 0), weights=w.T[:2]),
                            np.average((x > 0), axis=0, weights=w0.astype(F32)),
                            np.average(x.astype(F32), axis=0, weights=w0.astype(F32))),
          x, w0, w)


@pytest.mark.parametrize("tiered", [False, True])
def test_weighted_average_raises_numpys_errors(tiered):
    import xlanb
    x, w = np.ones((3, 4)), np.array([1.0, -1.0, 0.0])
    fn = xlanb.jit(lambda x, w: np.average(x, axis=0, weights=w), tiered=tiered)
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        fn(x, w)
    assert_same(np.average(x, axis=0, weights=w + 1), fn(x, w + 1), n=3)
    with pytest.raises(TypeError, match="Axis must be specified"):
        xlanb.jit(lambda x, w: np.average(x, weights=w))(x, w)
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        xlanb.jit(lambda x, w: np.average(x, axis=1, weights=w))(x, w)


# -- contractions -------------------------------------------------------------------------
CONTRACTION_ROWS = [
    ("matmul_2d", np.matmul, args_of(normal(3, 4), normal(4, 5))),
    ("matmul_f32", np.matmul, args_of(normal(3, 4, dtype=F32), normal(4, 2, dtype=F32))),
    ("matmul_mixed", np.matmul, args_of(normal(3, 4, dtype=F32), ints(4, 2))),
    ("matmul_int", np.matmul, args_of(ints(3, 4), ints(4, 2))),
    ("matmul_vec_mat", np.matmul, args_of(normal(4), normal(4, 5))),
    ("matmul_mat_vec", np.matmul, args_of(normal(3, 4), normal(4))),
    ("matmul_vec_vec", np.matmul, args_of(normal(4), normal(4))),
    ("matmul_batched", np.matmul, args_of(normal(2, 3, 4), normal(2, 4, 5))),
    ("matmul_batch_bcast", np.matmul, args_of(normal(2, 1, 3, 4), normal(3, 4, 5))),
    ("matmul_batch_x_2d", np.matmul, args_of(normal(2, 3, 4), normal(4, 5))),
    ("matmul_2d_x_batch", np.matmul, args_of(normal(3, 4), normal(2, 4, 5))),
    ("matmul_vec_batch", np.matmul, args_of(normal(4), normal(2, 4, 5))),
    ("matmul_batch_vec", np.matmul, args_of(normal(2, 3, 4), normal(4))),
    ("dot_2d", np.dot, args_of(normal(3, 4), normal(4, 2))),
    ("dot_1d", np.dot, args_of(normal(4), normal(4))),
    ("dot_nd", np.dot, args_of(normal(2, 3, 4), normal(5, 4, 2))),
    ("dot_scalar", lambda a: np.dot(a, 2.0), args_of(normal(3))),
    ("dot_method", lambda a, b: a.dot(b), args_of(normal(3, 4), normal(4))),
    ("outer", np.outer, args_of(normal(3), normal(2, 2))),
    ("inner", np.inner, args_of(normal(2, 4), normal(3, 4))),
    ("vdot", np.vdot, args_of(normal(2, 3), normal(6))),
    ("tensordot", lambda a, b: (np.tensordot(a, b), np.tensordot(a, b.T, axes=([1], [0])),
                                np.tensordot(a, b, axes=0)), args_of(normal(2, 3), normal(2, 3))),
    ("einsum_ij_jk", lambda a, b: np.einsum("ij,jk->ik", a, b), args_of(normal(2, 3),
                                                                        normal(3, 4))),
    ("einsum_batch", lambda a, b: np.einsum("bij,bjk->bik", a, b), args_of(normal(2, 2, 3),
                                                                           normal(2, 3, 4))),
    ("einsum_transpose_out", lambda a, b: np.einsum("ij,jk->ki", a, b),
     args_of(normal(2, 3), normal(3, 4))),
    ("einsum_implicit", lambda a, b: np.einsum("ij,jk", a, b), args_of(normal(2, 3),
                                                                       normal(3, 4))),
    ("einsum_sum_out", lambda a, b: np.einsum("ijk,jl->il", a, b),
     args_of(normal(2, 3, 4), normal(3, 5))),
    ("einsum_one_operand", lambda a: (np.einsum("ij->ji", a), np.einsum("ij->", a),
                                      np.einsum("ii->i", a), np.einsum("ii", a)),
     args_of(normal(3, 3))),
    ("einsum_ellipsis", lambda a, b: np.einsum("...ij,...jk->...ik", a, b),
     args_of(normal(2, 3, 4), normal(2, 4, 5))),
    ("einsum_three", lambda a, b, c: np.einsum("ij,jk,kl->il", a, b, c),
     args_of(normal(2, 3), normal(3, 4), normal(4, 2))),
    ("einsum_outer", lambda a, b: np.einsum("i,j->ij", a, b), args_of(normal(3), normal(2))),
    ("trace", lambda a: (np.trace(a), np.trace(a, offset=1), a.trace()), args_of(normal(3, 4))),
    ("trace_axes", lambda a: (np.trace(a, offset=-1, axis1=2, axis2=0), np.trace(a, 9),
                              np.trace(a > 0), np.trace(a.astype(np.int8), dtype=np.int8),
                              np.einsum("bii->b", a[:, :3, :3]), np.einsum("iji->j", a[:3, :, :3])),
     args_of(normal(4, 3, 5))),
    ("norm", lambda a: (np.linalg.norm(a), np.linalg.norm(a, axis=1),
                        np.linalg.norm(a, axis=0, keepdims=True)), args_of(normal(3, 4))),
]


@pytest.mark.parametrize("name,fn,make", CONTRACTION_ROWS, ids=[r[0] for r in CONTRACTION_ROWS])
def test_contractions(name, fn, make):
    check(fn, *make(np.random.default_rng(12)))


def test_matmul_lowers_to_one_dot():
    traced, _ = run_traced(lambda a, b: a @ b, (np.ones((8, 3, 4)), np.ones((4, 5))))
    ops = [n.op for n in traced.graph.nodes]
    assert ops.count(Op.DOT) == 1 and Op.BROADCAST not in ops


# -- shapes ---------------------------------------------------------------------------------
SHAPE_ROWS = [
    ("reshape", lambda x: (x.reshape(4, 6), x.reshape((-1,)), np.reshape(x, (2, -1, 3)),
                           x.reshape(-1, 2)), normal(2, 3, 4)),
    ("transpose", lambda x: (x.T, x.transpose(), x.transpose(1, 0, 2), np.transpose(x, (2, 0, 1)),
                             x.transpose((0, 2, 1))), normal(2, 3, 4)),
    ("swap_move", lambda x: (x.swapaxes(0, 2), np.swapaxes(x, -1, 0), np.moveaxis(x, 0, -1),
                             np.moveaxis(x, [0, 1], [-1, -2])), normal(2, 3, 4)),
    ("expand_squeeze", lambda x: (np.expand_dims(x, 0), np.expand_dims(x, (0, -1)),
                                  np.squeeze(x[:, None]), x[None].squeeze(0),
                                  np.squeeze(x.reshape(1, 6, 1), axis=-1)), normal(2, 3)),
    ("broadcast_to", lambda x: (np.broadcast_to(x, (4, 2, 3)), np.broadcast_arrays(x, x[:1])),
     normal(2, 3)),
    ("concatenate", lambda x, y: (np.concatenate([x, y]), np.concatenate((x, x), axis=1),
                                  np.concatenate([x, y], axis=None), np.concatenate([x, y * 2.0])),
     args_of(normal(2, 3, dtype=F32), normal(4, 3))),
    ("concat_ndarray", lambda x: np.concatenate([x, np.zeros((1, 3), F32)]),
     normal(2, 3, dtype=F32)),
    ("stack", lambda x, y: (np.stack([x, y]), np.stack((x, y), axis=-1), np.hstack([x, y]),
                            np.vstack([x, y])), args_of(normal(2, 3), normal(2, 3))),
    ("stack_1d", lambda x: (np.hstack([x, x]), np.vstack([x, x]), np.atleast_2d(x)), normal(3)),
    ("ravel_flatten", lambda x: (x.ravel(), np.ravel(x), x.flatten()), normal(2, 3)),
    ("flip", lambda x: (np.flip(x), np.flip(x, 0), np.flip(x, (0, 1)), np.fliplr(x),
                        np.flipud(x)), normal(2, 3)),
    ("astype_copy", lambda x: (x.astype(I32), x.astype(F32), np.copy(x), x.copy(),
                               (x > 0).astype(F64)), normal(2, 3)),
    ("shape_queries", lambda x: x.reshape(x.shape[1], x.shape[0] * x.ndim // 2 - 0 * x.size,
                                          *([1] * (np.ndim(x) - 2))), normal(2, 3)),
    ("len_and_iter", lambda x: sum(row * i for i, row in enumerate(x)) + len(x), normal(3, 2)),
    ("tril_triu", lambda x: (np.tril(x), np.triu(x, 1), np.tril(x, -1)), normal(3, 4)),
    ("meshgrid_append", lambda x, y: (*np.meshgrid(x, y), *np.meshgrid(x, y, indexing="ij"),
                                      *np.meshgrid(x, y, x[:2], sparse=True),
                                      np.append(x, y), np.append(x[None], x[None], axis=0)),
     args_of(normal(3), normal(4))),
    ("diag", lambda x: (np.diag(x), np.diag(x, 1), np.diag(x, -2), np.diag(x, 9), x.diagonal(2),
                        np.diag(x[0]), np.diag(x[1], -2), np.diag(x[:, 0], 1),
                        np.diagflat(x[:2, :2], -1), np.diagonal(np.stack([x, x]), 1, 1, 2)),
     normal(3, 4)),
    ("split", lambda x: (np.split(x, 2), np.split(x, [1, 3], axis=1), np.array_split(x, 3, 1)),
     normal(4, 5)),
    ("pad", lambda x: (np.pad(x, 1), np.pad(x, ((0, 1), (2, 0)), constant_values=-1)),
     normal(2, 3)),
    ("roll", lambda x: (np.roll(x, 1), np.roll(x, -1, axis=1), np.roll(x, (1, 2), (0, 1))),
     normal(3, 4)),
    ("repeat_tile", lambda x: (np.repeat(x, 2), np.repeat(x, 3, axis=1), np.tile(x, 2),
                               np.tile(x, (2, 1, 2))), normal(2, 3)),
    ("diff", lambda x: (np.diff(x), np.diff(x, n=2, axis=0)), normal(4, 5)),
    ("like", lambda x: (np.zeros_like(x), np.ones_like(x, dtype=I32), np.full_like(x, 7.5),
                        np.full_like(x, 2, shape=(3,)), np.empty_like(x)[:0],
                        np.full_like(x, x[0, 0])), normal(2, 3, dtype=F32)),
    ("creation_inside", lambda x: x + np.arange(3) + np.zeros((2, 3)) + np.eye(3)[:2]
     + np.linspace(0, 1, 3) + np.ones(3, F32) * np.full((2, 3), 2.0), normal(2, 3)),
    ("large_uniform_constant", lambda x: x + np.full((40, 40), 3.0, F32),
     normal(40, 40, dtype=F32)),
]


@pytest.mark.parametrize("name,fn,make", SHAPE_ROWS, ids=[r[0] for r in SHAPE_ROWS])
def test_shapes(name, fn, make):
    args = make(np.random.default_rng(13))
    check(fn, *(args if isinstance(args, tuple) else (args,)))


def test_uniform_constant_is_broadcast_scalar():
    traced, _ = run_traced(lambda x: x + np.full((40, 40), 3.0, F32), (np.ones((40, 40), F32),))
    assert all(n.size == 1 for n in traced.graph.nodes if n.op is Op.CONSTANT)


# -- indexing -------------------------------------------------------------------------------
def idx(*shape, high=5):
    return lambda rng: rng.integers(-high, high, shape)


INDEX_ROWS = [
    ("basic", lambda x: (x[1], x[-1], x[1, 2], x[:, 1], x[..., -1], x[1:3], x[::2],
                         x[:, ::-1], x[::-2, 1:], x[None], x[:, None, 2], x[..., None],
                         x[-3:-1, ::-3], x[5:], x[3:1], x[np.newaxis, ..., 0]), normal(4, 5)),
    ("basic_3d", lambda x: (x[0, ..., 1], x[1, :, ::-1], x[:, 1:, None, ::2]), normal(2, 3, 4)),
    ("int_array_concrete", lambda x: (x[np.array([0, -1, 2])], x[:, [1, 1, 0]],
                                      x[[[0, 1], [2, 3]]]), normal(4, 5)),
    ("int_array_traced", lambda x, i: (x[i], x[:, i], x[i, 1:], x[i % 4]),
     args_of(normal(4, 5), idx(3, high=4))),
    ("two_index_arrays", lambda x, i: (x[np.arange(3), i], x[i, i], x[i[:, None], i[None, :]]),
     args_of(normal(4, 4), idx(3, high=4))),
    ("logp_labels", lambda logp, labels: -logp[np.arange(logp.shape[0]), labels].mean(),
     args_of(normal(6, 10, dtype=F32), lambda rng: rng.integers(0, 10, 6))),
    ("separated_advanced", lambda x, i: (x[i, :, i], x[0, :, i], x[:, i, i], x[i, 1]),
     args_of(normal(3, 4, 3), idx(2, high=3))),
    ("concrete_bool_mask", lambda x: (x[np.array([True, False, True])],
                                      x[:, [False, True, True, False]]), normal(3, 4)),
    ("traced_scalar_index", lambda x, i: (x[i], x[:, i]), args_of(normal(4, 5),
                                                                  lambda rng: np.int64(-2))),
    ("indices_from", lambda x: (x[np.diag_indices_from(x)], x[np.tril_indices_from(x, -1)],
                                x[np.triu_indices_from(x, 1)]), normal(4, 4)),
    ("list_with_traced_entry", lambda x, i: (x[[0, i]], x[:, [i, 1, i]]),
     args_of(normal(4, 5), lambda rng: np.int64(2))),
    ("take", lambda x, i: (np.take(x, i), np.take(x, i, axis=1), x.take([0, -1], axis=0),
                           np.take(x, i + 10, mode="wrap"), np.take(x, i * 3, axis=1, mode="clip")),
     args_of(normal(4, 5), idx(2, 3, high=4))),
    ("take_along_axis", lambda x, i: (np.take_along_axis(x, i, axis=1),
                                      np.take_along_axis(x, np.array([[0, -1, 2, 3, 1]]), 0)),
     args_of(normal(4, 5), lambda rng: rng.integers(-5, 5, (4, 2)))),
    ("take_along_argmax", lambda x: np.take_along_axis(x, x.argmax(1)[:, None], axis=1),
     normal(3, 5)),
]


@pytest.mark.parametrize("name,fn,make", INDEX_ROWS, ids=[r[0] for r in INDEX_ROWS])
def test_indexing(name, fn, make):
    args = make(np.random.default_rng(14))
    check(fn, *(args if isinstance(args, tuple) else (args,)))


def set_basic(x):
    x = x.copy()
    x[0] = 1.0
    x[1, 2] = -1
    x[:, -1] = np.arange(x.shape[0])
    x[2:, :3:2] += 10
    x[::-2, 1] *= 2
    x[..., 0] -= x[..., 1]
    return x


def set_full_and_broadcast(x):
    y = x.copy()
    y[...] = 3
    z = x.copy()
    z[:] = x[0]
    w = x.copy()
    w[1:3] = np.ones((1, 1, 4))
    return y, z, w


def set_masked(x):
    x = x.copy()
    x[x < 0] = 0
    x[np.array([True, False, True, False])] = -5.5
    return x


def inplace_ops(x, y):
    a = x.copy()
    a += y
    a *= 2
    a -= 1
    a /= 3
    b = a
    b **= 2
    c = (x > 0).astype(I64)
    c //= 2
    c |= 4
    return a, b, c


@pytest.mark.parametrize("fn", [set_basic, set_full_and_broadcast, set_masked],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [F32, I64])
def test_setitem(fn, dtype):
    x = (normal(4, 4)(np.random.default_rng(15)) * 5).astype(dtype)
    check(fn, x)


def test_inplace_operators():
    rng = np.random.default_rng(16)
    check(inplace_ops, normal(3, 4, dtype=F32)(rng), normal(4, dtype=F32)(rng))


def test_softmax_cross_entropy_grad():
    def step(logits, labels):
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        loss = -np.log(p[np.arange(len(labels)), labels]).mean()
        onehot = np.zeros_like(p)
        onehot[:, 0] = 1
        return loss, (p - onehot) / len(labels)
    rng = np.random.default_rng(17)
    check(step, normal(5, 7, dtype=F32)(rng), rng.integers(0, 7, 5))


# -- pytrees, statics, constants ----------------------------------------------------------
Params = collections.namedtuple("Params", "w b")


def test_pytree_args_and_outputs():
    def model(params, batch, scale=1.0):
        h = batch["x"] @ params.w + params.b
        return {"y": h * scale, "aux": [h.sum(), None, (batch["x"].shape[0],)]}
    rng = np.random.default_rng(18)
    params = Params(normal(3, 2, dtype=F32)(rng), normal(2, dtype=F32)(rng))
    batch = {"x": normal(4, 3, dtype=F32)(rng)}
    traced, got = run_traced(model, (params, batch), {"scale": 0.5})
    expected = model(params, batch, scale=0.5)
    assert_same(expected["y"], got["y"])
    assert_same(expected["aux"][0], got["aux"][0])
    assert got["aux"][1] is None and int(got["aux"][2][0]) == 4
    assert len(traced.graph.params) == 3 and traced.param_leaves == (0, 1, 2)
    assert traced.const_outputs == {1: 4}     # leaves: aux[0], aux[2][0], y


def test_python_scalars_are_static_and_static_argnums_pass_through():
    seen = []

    def f(x, n, mode, flag):
        seen.append((type(n), mode, flag))
        for _ in range(n):
            x = x * 2 if mode == "double" else x + 1
        return x if flag else -x
    x = np.arange(3.0)
    traced, got = run_traced(f, (x, 3, "double", True), static_argnums=(2,))
    assert seen == [(int, "double", True)]
    assert len(traced.graph.params) == 1 and traced.static_args == ("double",)
    assert_same(f(x, 3, "double", True), got)


def test_constant_outputs_come_back():
    traced, got = run_traced(lambda x: (x + 1, np.arange(3), 2.5, np.float32(1)),
                             (np.ones(2, F32),))
    assert_same((np.full(2, 2, F32), np.arange(3), np.float64(2.5), np.float32(1)), got)
    assert set(traced.const_outputs) == {2, 3}    # np.arange(3) is a traced array now


def test_numpy_scalar_input_is_a_parameter():
    traced, got = run_traced(lambda x, s: x * s, (np.ones(3, F32), np.float32(3)))
    assert [p.shape for p in traced.graph.params] == [(3,), ()]
    assert_same(np.full(3, 3, F32), got)


def test_locations_point_at_user_lines():
    def f(x):
        y = np.exp(x)                     # line A
        return y[1:].sum()                # line B
    traced = trace(f, (np.ones(4),))
    line_a = f.__code__.co_firstlineno + 1
    locs = {n.loc for n in traced.graph.nodes if n.op is not Op.PARAMETER}
    assert locs == {f"{_this_file()}:{line_a}", f"{_this_file()}:{line_a + 1}"}


def _this_file():
    import os
    path = os.path.abspath(__file__)
    rel = os.path.relpath(path)
    return rel if len(rel) < len(path) else os.path.basename(path)


def test_tracer_repr_and_properties():
    def f(x):
        assert isinstance(x, Tracer)
        assert (x.shape, x.ndim, x.size, x.dtype, x.itemsize, len(x)) == ((2, 3), 2, 6,
                                                                          np.dtype(F32), 4, 2)
        assert repr(x) == "Tracer<f32[2,3]>" and x.T.shape == (3, 2)
        return x
    trace(f, (np.ones((2, 3), F32),))


def test_hooks_let_a_context_run_values_eagerly():
    """A context that evaluates instead of raising: the seam auto-clustering builds on."""
    class EagerContext(TraceContext):
        def __init__(self):
            super().__init__()
            self.breaks = []

        def value_of(self, tracer):
            from xlanb_runtime.ir import Graph
            graph = Graph(self.params, [tracer.node])
            return interpret(graph, self.input_values)[0]

        def materialize(self, tracer, what):
            self.breaks.append(what)
            return self.value_of(tracer)

        def call_unsupported(self, func, args, kwargs, what):
            self.breaks.append(what)
            concrete = [self.value_of(a) if isinstance(a, Tracer) else a for a in args]
            return self.new_input(func(*concrete, **kwargs))

    def f(x):
        u = np.unique(np.round(x))
        total = np.apply_along_axis(np.sum, 0, x)
        if x.sum() > 0:
            return u * 2, total
        return u, total

    x = np.array([1.2, 0.9, 3.1, 1.0])
    context = EagerContext()
    traced = trace(f, (x,), context=context)
    got = interpret(traced.graph, context.input_values)
    assert_same(f(x), tuple(got))
    assert context.breaks == ["np.unique", "np.apply_along_axis", "bool()"]



def set_int_arrays(x, labels):
    onehot = np.zeros_like(x)
    onehot[np.arange(x.shape[0]), labels] = 1
    g = x.copy()
    g[np.arange(len(labels)), labels] -= 1           # distinct rows: an exact scatter
    h = x.copy()
    h[:, labels] = -7.0                               # a scalar: duplicates are fine
    m = x.copy()
    m[[2, 0]] = x[:2] * 10                            # concrete, distinct: array values
    n = x.copy()
    n[labels[:2], [0, 3]] = 5
    p = x.copy()
    p[labels] = 0.5
    return onehot, g, h, m, n, p


@pytest.mark.parametrize("dtype", [F32, I64])
def test_setitem_with_index_arrays(dtype):
    rng = np.random.default_rng(19)
    x = (normal(4, 5)(rng) * 5).astype(dtype)
    check(set_int_arrays, x, rng.integers(-4, 4, 4))


def set_repeated_concrete_indices(x):
    y = x.copy()
    y[[0, 0, 2]] = x[[1, 2, 3]] * 10          # NumPy: the last write to row 0 wins
    y[[3, 1, 3], [0, 1, 0]] = x[0, :3]
    y[:, [1, 1]] = x[:, [2, 3]]
    return y


def set_traced_repeated_indices(x, idx):
    y = x.copy()
    y[idx] = x[::-1][:1] * 10 + x[:idx.size, :1]     # rows written twice: the last wins
    z = x.copy()
    z[idx] += 2                                     # a row written twice gains 2 once
    w = x.copy()
    w[:, idx % 5] = x[:, :idx.size] * 3             # along axis 1
    u = x.copy()
    u[idx, idx % 5] = x[0, :idx.size]               # two index arrays
    return y, z, w, u


@pytest.mark.parametrize("dtype", [F32, I64])
def test_setitem_with_traced_repeated_indices(dtype):
    """x[idx] = v with traced indices that repeat (a `scatter`: in index order, the last
    write to a row wins, as NumPy's assignment leaves it), negative ones among them."""
    rng = np.random.default_rng(23)
    x = (normal(6, 5)(rng) * 5).astype(dtype)
    check(set_traced_repeated_indices, x, np.array([1, 3, 1, -3, 3]))
    check(set_traced_repeated_indices, x, np.array([2, 2, 2, 2]))


def test_setitem_with_traced_repeated_indices_gradient():
    """d/dx is zero where an update landed; d/dv only for each row's last write."""
    import xlanb

    def loss(x, v, idx):
        y = x.copy()
        y[idx] = v * 2
        return (y * y).sum()
    rng = np.random.default_rng(24)
    x, v = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    idx = np.array([1, 3, 1, 0, 3])                  # rows 1 and 3 twice; row 2 untouched
    gx, gv = xlanb.grad(loss, argnums=(0, 1))(x, v, idx)
    want_x = 2 * x
    want_x[[0, 1, 3]] = 0
    want_v = np.zeros_like(v)
    want_v[[2, 3, 4]] = 8 * v[[2, 3, 4]]             # the last writes to rows 1, 0, 3
    np.testing.assert_allclose(gx, want_x, rtol=1e-14)
    np.testing.assert_allclose(gv, want_v, rtol=1e-14)


def set_traced_scalar_index(x, i):
    y = x.copy()
    y[i] = x[0] * 2                  # one index cannot repeat: an exact update
    y[:, i] += 1
    return y


@pytest.mark.parametrize("dtype", [F32, I64])
def test_setitem_with_a_traced_scalar_index(dtype):
    x = (normal(4, 5)(np.random.default_rng(20)) * 5).astype(dtype)
    check(set_traced_scalar_index, x, np.int64(-2))
    check(set_repeated_concrete_indices, x)


def test_diagonal_of_a_matrix_is_read_only_as_in_numpy():
    def write_diagonal(a):
        d = np.diag(a)
        d[0] = 1.0
    from xlanb.errors import ReadOnlyArrayError
    with pytest.raises(ValueError, match="read-only"):
        write_diagonal(np.ones((3, 3)))
    with pytest.raises(ReadOnlyArrayError):
        trace(write_diagonal, (np.ones((3, 3)),))


def add_at(c, v, w):
    np.add.at(c, v, 1)                    # repeated indices add up, unlike c[v] += 1
    np.subtract.at(c, v[:3], w[:3])
    m = np.zeros((5, 2))
    np.add.at(m, v, w[:, None] * np.ones(2))
    np.add.at(m, [0, 0, -1], 2.5)
    return c, m


def test_ufunc_at_adds_at_repeated_indices():
    rng = np.random.default_rng(21)
    check(add_at, np.zeros(5), rng.integers(0, 5, 9), rng.random(9))
