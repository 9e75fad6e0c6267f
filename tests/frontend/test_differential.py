"""Random-program differential tests: xlanb.jit against NumPy eager, and IR text round trips.

Hypothesis draws small NumPy programs (elementwise ops with broadcasting, reductions, dot,
reshape/transpose/slice, float32/float64/int dtypes); each runs compiled and eagerly, and
must agree within rounding: a relative norm error of a few eps of the dtype per step,
relative to the largest value the program computes (tests/tolerance.py).  The same graphs
must print, parse and print
identically.  A failure hypothesis finds should become a plain test in test_jit.py.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xlanb
from tolerance import assert_close
from xlanb_runtime.ir import parse_graph, print_graph

DTYPES = [np.float32, np.float64, np.int32, np.int64]

UNARY = {
    "neg": lambda x: -x,
    "abs": np.abs,
    "square": lambda x: x * x,
    "tanh": lambda x: np.tanh(x),
    "exp_tanh": lambda x: np.exp(np.tanh(x)),
    "sqrt_abs": lambda x: np.sqrt(np.abs(x) + 1),
    "scale": lambda x: x * 3 + 1,
    "pow2": lambda x: x ** 2,
    "relu": lambda x: np.maximum(x, 0),
}
FLOAT_ONLY = {"tanh", "exp_tanh", "sqrt_abs"}
BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum,
    "min": np.minimum,
    "where": lambda a, b: np.where(a > b, a, b - 1),
    "div": lambda a, b: a / (np.abs(b) + 1),
}


def reduce_step(kind: str, axis, keepdims: bool):
    def apply(x):
        if x.ndim == 0:
            return x
        ax = None if axis is None else axis % x.ndim
        return getattr(np, kind)(x, axis=ax, keepdims=keepdims)
    return apply


def shape_step(kind: str):
    def apply(x):
        if kind == "transpose":
            return x.T
        if kind == "flatten":
            return x.reshape(-1)
        if kind == "slice":
            return x[::2] if x.ndim else x
        if kind == "tail":
            return x[..., 1:] if x.ndim and x.shape[-1] > 1 else x
        raise AssertionError(kind)
    return apply


@st.composite
def programs(draw):
    dtype = draw(st.sampled_from(DTYPES))
    is_float = np.dtype(dtype).kind == "f"
    rank = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    n_inputs = draw(st.integers(1, 3))
    input_shapes = [shape]
    for _ in range(n_inputs - 1):   # broadcast-compatible variants: drop leading, set to 1
        drop = draw(st.integers(0, len(shape)))
        variant = [1 if draw(st.booleans()) else d for d in shape[drop:]]
        input_shapes.append(tuple(variant))
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "reduce", "shape", "dot"]))
        if kind == "unary":
            names = [n for n in UNARY if is_float or n not in FLOAT_ONLY]
            steps.append(("unary", draw(st.sampled_from(names))))
        elif kind == "binary":
            names = [n for n in BINARY if is_float or n != "div"]
            steps.append(("binary", draw(st.sampled_from(names)),
                          draw(st.integers(0, 10))))
        elif kind == "reduce":
            names = ["sum", "max", "min"] + (["mean"] if is_float else [])
            steps.append(("reduce", draw(st.sampled_from(names)),
                          draw(st.one_of(st.none(), st.integers(-3, 2))),
                          draw(st.booleans())))
        elif kind == "shape":
            steps.append(("shape", draw(st.sampled_from(["transpose", "flatten", "slice",
                                                         "tail"]))))
        else:
            steps.append(("dot", draw(st.integers(1, 4))))
    seed = draw(st.integers(0, 2**31 - 1))
    return dtype, input_shapes, steps, seed


def build(program):
    dtype, input_shapes, steps, seed = program
    rng = np.random.default_rng(seed)
    dot_weights = []

    def make(shape):
        if np.dtype(dtype).kind == "f":
            return rng.uniform(-2, 2, size=shape).astype(dtype)
        return rng.integers(-4, 5, size=shape).astype(dtype)

    inputs = [make(s) for s in input_shapes]
    # Dot weights are created up front from the shapes the eager run sees.
    probe = [np.asarray(x) for x in inputs]
    plan = []
    values = list(probe)
    for step in steps:
        x = values[-1]
        if step[0] == "dot":
            k = x.shape[-1] if x.ndim else 1
            if x.ndim == 0:
                plan.append(("skip",))
                continue
            w = make((k, step[1]))
            dot_weights.append(w)
            plan.append(("dot", len(dot_weights) - 1))
            values.append(x @ w)
            continue
        fn = _step_fn(step)
        if step[0] == "binary":
            other = values[step[2] % len(values)]
            plan.append(("binary", fn, step[2] % len(values)))
            values.append(_binary_or_skip(fn, x, other))
        else:
            plan.append(("fn", fn))
            values.append(fn(x))

    def program_fn(*arrays):
        inputs_, weights = arrays[:len(inputs)], arrays[len(inputs):]
        vals = list(inputs_)
        for entry in plan:
            x = vals[-1]
            if entry[0] == "skip":
                vals.append(x)
            elif entry[0] == "dot":
                vals.append(x @ weights[entry[1]])
            elif entry[0] == "binary":
                vals.append(_binary_or_skip(entry[1], x, vals[entry[2]]))
            else:
                vals.append(entry[1](x))
        return vals[-1], vals[len(inputs_)] if len(vals) > len(inputs_) + 1 else vals[-1]
    # rounding errors are relative to the values they round: the largest one bounds them
    floats = [np.linalg.norm(np.asarray(v, np.float64)) for v in values
              if np.asarray(v).dtype.kind == "f"]
    program_fn.scale = max(floats, default=0.0)
    program_fn.steps = len(steps)
    return program_fn, inputs + dot_weights


def _binary_or_skip(fn, x, other):
    try:
        np.broadcast_shapes(np.shape(x), np.shape(other))
    except ValueError:
        return fn(x, x)
    return fn(x, other)


def _step_fn(step):
    if step[0] == "unary":
        return UNARY[step[1]]
    if step[0] == "binary":
        return BINARY[step[1]]
    if step[0] == "reduce":
        return reduce_step(*step[1:])
    return shape_step(step[1])


# A reduction or dot sums at most 5 * 5 * 5 elements (the largest input); each step is within
# a few ulp of its input's size
MAX_REDUCTION = 125


def assert_matches(got, expected, fn):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    scale = max(fn.scale, float(np.linalg.norm(expected.astype(np.float64))))
    assert_close(got, expected, n=MAX_REDUCTION, k=8 * fn.steps, scale=scale)


@settings(max_examples=220, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_random_programs_match_numpy(program):
    fn, args = build(program)
    with np.errstate(all="ignore"):
        expected = fn(*args)
    compiled = xlanb.jit(fn)
    with np.errstate(all="ignore"):
        got = compiled(*args)
    for g, e in zip(got, expected):
        assert_matches(g, e, fn)
    graph = compiled.lower(*args).graph
    text = print_graph(graph)
    assert print_graph(parse_graph(text)) == text
    optimized = compiled.last_compiled.executable.optimized
    text = print_graph(optimized)
    assert print_graph(parse_graph(text)) == text


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_program_generator_covers_every_step_kind(dtype):
    """Guards the generator itself: each step kind builds and runs eagerly."""
    steps = [("unary", "neg"), ("binary", "add", 0), ("reduce", "sum", 0, True),
             ("shape", "transpose"), ("dot", 2)]
    fn, args = build((dtype, [(3, 4), (4,)], steps, 0))
    out = fn(*args)
    assert np.asarray(out[0]).shape == (4, 2)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_random_program_gradients_compiled_equal_interpreted(program):
    """Forward + backward graphs stress fusion (multi-output, cycles, duplication)."""
    dtype, shapes, steps, seed = program
    if np.dtype(dtype).kind != "f":
        return
    fn, args = build((np.float64, shapes, steps, seed))

    def loss(*arrays):
        out, side = fn(*arrays)
        return (np.tanh(out) * 0.5).sum() + (side * side).sum() * 0.1

    grad = xlanb.grad(loss, argnums=tuple(range(len(args))))
    with np.errstate(all="ignore"):
        compiled = xlanb.jit(grad)(*args)
        expected = grad(*args)
    # the whole gradient as one vector: a leaf whose terms cancel to ~0 is judged against it
    flat = [np.ravel(np.asarray(g, np.float64)) for g in compiled]
    want = [np.ravel(np.asarray(w, np.float64)) for w in expected]
    assert [f.shape for f in flat] == [w.shape for w in want]
    assert_close(np.concatenate(flat), np.concatenate(want), n=MAX_REDUCTION,
                 k=8 * (len(steps) + 2), dtype=np.float64)
