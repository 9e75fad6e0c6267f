"""The reference interpreter: runs a Graph op by op with NumPy.

It is the test oracle, the unfused "before" baseline (`disable_jit`), and what auto-clustering
falls back to.  One table entry per op; each returns an array of exactly the node's dtype.
"""
from __future__ import annotations

import math
import time
from typing import Callable, Sequence

import numpy as np

from .graph import Graph, Node
from .ops import Op

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _floor_div(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor_divide(x, y)


def _rem(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.remainder(x, y)


def _true_div(x, y):
    if x.dtype.kind in "iub":
        return _floor_div(x, y)    # never built by the front end; defined for completeness
    return np.true_divide(x, y)


def _slice(x, specs):
    return x[tuple(slice(a, b, c) for a, b, c in specs)]


def _pad(x, value, config):
    shape = tuple(lo + hi + n + max(n - 1, 0) * interior for (lo, hi, interior), n
                  in zip(config, x.shape))
    out = np.full(shape, value, dtype=x.dtype)
    index = tuple(slice(lo, lo + max(n - 1, 0) * (interior + 1) + 1 if n else lo, interior + 1)
                  for (lo, _, interior), n in zip(config, x.shape))
    out[index] = x
    return out


def _reduce(x, kind_axes):
    kind, axes = kind_axes
    fn = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod, "any": np.any,
          "all": np.all}[kind]
    return fn(x, axis=axes, dtype=x.dtype) if kind in ("sum", "prod") else fn(x, axis=axes)


def _argreduce(x, kind_axis):
    kind, axis = kind_axis
    return (np.argmax if kind == "argmax" else np.argmin)(x, axis=axis).astype(np.int64)


def _dot(lhs, rhs, dims, out=None):
    """One matmul (one BLAS call, batched when there are batch dims), as an op-by-op
    framework would run it: operands are arranged as (batch, free, contract).  `out`: a
    C-contiguous array of the result's shape and dtype to write it into (the NumPy tier's
    buffers)."""
    lb, rb, lc, rc = dims
    lfree = [d for d in range(lhs.ndim) if d not in lb + lc]
    rfree = [d for d in range(rhs.ndim) if d not in rb + rc]
    batch = [lhs.shape[d] for d in lb]
    if batch and len(lfree) == len(rfree) == len(lc) == 1:
        # one free and one contracted dim a side: matmul takes the stacked (transposed)
        # views as they are, as hand-written NumPy does, when each matrix is one BLAS can
        # read (a unit stride); reshaping them to (batch, m, k) would copy them
        a = np.transpose(lhs, list(lb) + lfree + list(lc))
        b = np.transpose(rhs, list(rb) + list(rc) + rfree)
        if _blas_strided(a) and _blas_strided(b):
            return np.matmul(a, b) if out is None else np.matmul(a, b, out=out)
    size = lambda shape: int(np.prod(shape, dtype=np.int64))   # noqa: E731
    m, n = size([lhs.shape[d] for d in lfree]), size([rhs.shape[d] for d in rfree])
    k = size([lhs.shape[d] for d in lc])
    a = np.transpose(lhs, list(lb) + lfree + list(lc)).reshape(size(batch), m, k)
    b = np.transpose(rhs, list(rb) + list(rc) + rfree).reshape(size(batch), k, n)
    if out is not None:
        if size(batch) != 1:
            np.matmul(a, b, out=out.reshape(size(batch), m, n))
        else:
            np.matmul(a[0], b[0], out=out.reshape(m, n))
        return out
    out = np.matmul(a, b) if size(batch) != 1 else np.matmul(a[0], b[0])[None]
    return out.reshape(batch + [lhs.shape[d] for d in lfree] + [rhs.shape[d] for d in rfree])


def _blas_strided(x) -> bool:
    """Whether each matrix of a stack (the last two dims) is one BLAS reads in place: a
    unit stride on one side, rows (or columns) apart by a whole number of elements no
    fewer than their length.  NumPy's matmul runs any other in a loop of its own."""
    (s0, s1), (n0, n1), size = x.strides[-2:], x.shape[-2:], x.itemsize
    return (s1 == size and s0 % size == 0 and s0 >= n1 * size) or \
        (s0 == size and s1 % size == 0 and s1 >= n0 * size)


def _broadcast(x, shape, dims):
    expanded = x.reshape([x.shape[dims.index(d)] if d in dims else 1 for d in range(len(shape))])
    return np.broadcast_to(expanded, shape)


def _iota(node: Node):
    axis = node.arg
    values = np.arange(node.shape[axis], dtype=node.dtype)
    view = [1] * node.ndim
    view[axis] = node.shape[axis]
    return np.broadcast_to(values.reshape(view), node.shape)


def _clamped(indices, x, axis):
    """Gather and scatter clamp indices into range, as compiled kernels do (the front end
    wraps negative NumPy indices before they reach the IR)."""
    return np.clip(indices, 0, x.shape[axis] - 1)


def _scatter_add(x, idx, updates, axis):
    out = np.array(x, copy=True)
    np.add.at(out, (slice(None),) * axis + (_clamped(idx, x, axis),), updates)
    return out


def _scatter(x, idx, updates, axis):
    """Each position's last write only (NumPy leaves the order of repeated writes in one
    assignment unspecified; the op's is the indices' C order)."""
    out = np.array(x, copy=True)
    flat = _clamped(idx, x, axis).reshape(-1)
    _, from_end = np.unique(flat[::-1], return_index=True)
    last = flat.size - 1 - from_end
    rows = np.moveaxis(updates, axis, 0) if idx.ndim == 1 else \
        np.moveaxis(updates.reshape(x.shape[:axis] + (flat.size,) + x.shape[axis + 1:]),
                    axis, 0)
    np.moveaxis(out, axis, 0)[flat[last]] = rows[last]
    return out


# splitmix64 (Steele, Lea, Flood 2014), the counter-based hash behind `rng-bits`; the
# generated kernels' `codegen/rng.py` uses these same constants.
SPLITMIX_GAMMA = np.uint64(0x9E3779B97F4A7C15)
SPLITMIX_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
SPLITMIX_MUL2 = np.uint64(0x94D049BB133111EB)


def rng_bits(key, shape) -> np.ndarray:
    """splitmix64(key, i) for every C-order flat index i of `shape`, in uint64 wraparound:
    z = key + (i+1)*GAMMA; z = (z ^ z>>30)*MUL1; z = (z ^ z>>27)*MUL2; z ^ z>>31."""
    key = np.asarray(key, dtype=np.uint64).reshape(())
    size = int(np.prod(shape, dtype=np.int64))
    z = np.arange(1, size + 1, dtype=np.uint64)
    z *= SPLITMIX_GAMMA                     # uint64 array arithmetic wraps silently
    z += key
    z ^= z >> np.uint64(30)
    z *= SPLITMIX_MUL1
    z ^= z >> np.uint64(27)
    z *= SPLITMIX_MUL2
    z ^= z >> np.uint64(31)
    return z.reshape(shape)


def _all_reduce(x, kind):
    """Through this thread's communicator (see collectives); the identity on one replica."""
    from ..collectives import current_communicator
    out = np.array(x, copy=True)
    comm = current_communicator()
    if comm is not None:
        comm.all_reduce(out, kind)
    return out


def _sign(x):
    return np.sign(x)


def _convert(x, dtype):
    """NumPy astype; complex to real keeps the real part without NumPy's ComplexWarning
    (the front end warns once, when it traces the cast); to bool it tests both parts."""
    if x.dtype.kind == "c" and dtype.kind not in "cb":
        x = np.real(x)
    return x.astype(dtype)


def _complex(re, im, dtype):
    """complex(re, im) part by part: exact for any parts (re + 1j*im is not: inf*0)."""
    out = np.empty(re.shape, dtype)
    out.real, out.imag = re, im
    return out


def _round(x):
    return np.rint(x) if x.dtype.kind == "f" else x


_SCAN_UFUNCS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def _scan(x, arg):
    """NumPy's accumulate in x's own dtype (the IR's scan never promotes)."""
    kind, axis = arg
    return _SCAN_UFUNCS[kind].accumulate(x, axis=axis, dtype=x.dtype)


# Each entry: (node, *input arrays) -> array.
EVAL: dict[Op, Callable] = {
    Op.CONSTANT: lambda n: n.arg,
    Op.IOTA: _iota,
    Op.NEG: lambda n, x: np.negative(x),
    Op.ABS: lambda n, x: np.abs(x),
    Op.SIGN: lambda n, x: _sign(x),
    Op.EXP: lambda n, x: np.exp(x),
    Op.EXP2: lambda n, x: np.exp2(x),
    Op.EXPM1: lambda n, x: np.expm1(x),
    Op.LOG: lambda n, x: np.log(x),
    Op.LOG1P: lambda n, x: np.log1p(x),
    Op.SQRT: lambda n, x: np.sqrt(x),
    Op.RSQRT: lambda n, x: np.reciprocal(np.sqrt(x)),
    Op.TANH: lambda n, x: np.tanh(x),
    Op.SIN: lambda n, x: np.sin(x),
    Op.COS: lambda n, x: np.cos(x),
    Op.TAN: lambda n, x: np.tan(x),
    Op.ASIN: lambda n, x: np.arcsin(x),
    Op.ACOS: lambda n, x: np.arccos(x),
    Op.SINH: lambda n, x: np.sinh(x),
    Op.COSH: lambda n, x: np.cosh(x),
    Op.ATAN: lambda n, x: np.arctan(x),
    Op.ASINH: lambda n, x: np.arcsinh(x),
    Op.ACOSH: lambda n, x: np.arccosh(x),
    Op.ATANH: lambda n, x: np.arctanh(x),
    Op.ERF: lambda n, x: _erf(x),
    Op.FLOOR: lambda n, x: np.floor(x),
    Op.CEIL: lambda n, x: np.ceil(x),
    Op.ROUND: lambda n, x: _round(x),
    Op.NOT: lambda n, x: np.invert(x),
    Op.IS_FINITE: lambda n, x: np.isfinite(x),
    Op.REAL: lambda n, x: np.real(x),
    Op.IMAG: lambda n, x: np.imag(x),
    Op.CONJ: lambda n, x: np.conjugate(x),
    Op.ROUND_HALF: lambda n, x: x.astype(np.float16).astype(np.float32),
    Op.ADD: lambda n, x, y: np.add(x, y),
    Op.SUB: lambda n, x, y: np.subtract(x, y),
    Op.MUL: lambda n, x, y: np.multiply(x, y),
    Op.DIV: lambda n, x, y: _true_div(x, y),
    Op.FLOOR_DIV: lambda n, x, y: _floor_div(x, y),
    Op.REM: lambda n, x, y: _rem(x, y),
    Op.POW: lambda n, x, y: np.power(x, y),
    Op.MAX: lambda n, x, y: np.maximum(x, y),
    Op.MIN: lambda n, x, y: np.minimum(x, y),
    Op.AND: lambda n, x, y: np.bitwise_and(x, y),
    Op.OR: lambda n, x, y: np.bitwise_or(x, y),
    Op.XOR: lambda n, x, y: np.bitwise_xor(x, y),
    Op.SHIFT_LEFT: lambda n, x, y: np.left_shift(x, y),
    Op.SHIFT_RIGHT: lambda n, x, y: np.right_shift(x, y),
    Op.ATAN2: lambda n, x, y: np.arctan2(x, y),
    Op.COMPLEX: lambda n, x, y: _complex(x, y, n.dtype),
    Op.EQ: lambda n, x, y: np.equal(x, y),
    Op.NE: lambda n, x, y: np.not_equal(x, y),
    Op.LT: lambda n, x, y: np.less(x, y),
    Op.LE: lambda n, x, y: np.less_equal(x, y),
    Op.GT: lambda n, x, y: np.greater(x, y),
    Op.GE: lambda n, x, y: np.greater_equal(x, y),
    Op.SELECT: lambda n, p, a, b: np.where(p, a, b),
    Op.CONVERT: lambda n, x: _convert(x, n.dtype),
    Op.BITCAST: lambda n, x: np.ascontiguousarray(x).view(n.dtype),
    Op.BROADCAST: lambda n, x: _broadcast(x, n.shape, n.arg),
    Op.RESHAPE: lambda n, x: np.reshape(x, n.shape),
    Op.TRANSPOSE: lambda n, x: np.transpose(x, n.arg),
    Op.SLICE: lambda n, x: _slice(x, n.arg),
    Op.DYNAMIC_SLICE: lambda n, x, *starts: _dynamic_slice(x, starts, n.arg),
    Op.PAD: lambda n, x, v: _pad(x, v, n.arg),
    Op.DYNAMIC_PAD: lambda n, x, v, *lows: _dynamic_pad(x, v, lows, n.arg),
    Op.CONCATENATE: lambda n, *xs: np.concatenate(xs, axis=n.arg),
    Op.REVERSE: lambda n, x: np.flip(x, n.arg),
    Op.REDUCE: lambda n, x: _reduce(x, n.arg),
    Op.ARGREDUCE: lambda n, x: _argreduce(x, n.arg),
    Op.SCAN: lambda n, x: _scan(x, n.arg),
    Op.DOT: lambda n, x, y: _dot(x, y, n.arg),
    Op.GATHER: lambda n, x, i: np.take(x, _clamped(i, x, n.arg), axis=n.arg),
    Op.SCATTER_ADD: lambda n, x, i, u: _scatter_add(x, i, u, n.arg),
    Op.SCATTER: lambda n, x, i, u: _scatter(x, i, u, n.arg),
    Op.ALL_REDUCE: lambda n, x: _all_reduce(x, n.arg),
    Op.RNG_BITS: lambda n, key: rng_bits(key, n.shape),
    Op.LOOP: lambda n, *inputs: _loop(n, *inputs),
    Op.LOOP_RESULT: lambda n, results: results[n.arg],
    Op.LIBRARY_CALL: lambda n, *inputs: _library_call(n, inputs)[0],
    Op.LIBRARY_RESULT: lambda n, results: results[n.arg],
}


def evaluate_node(node: Node, values: Sequence[np.ndarray]) -> np.ndarray:
    """One op on concrete inputs, cast to the node's dtype and shape."""
    with np.errstate(all="ignore"):
        return _evaluate(node, values)


def _dynamic_slice(x, starts, sizes):
    index = tuple(slice(s, s + n) for s, n in
                  ((min(max(int(start), 0), dim - size), size)
                   for start, size, dim in zip(starts, sizes, x.shape)))
    return x[index]


def _dynamic_pad(x, value, lows, shape):
    out = np.full(shape, value, dtype=x.dtype)
    starts = [min(max(int(low), 0), dim - n) for low, dim, n in zip(lows, shape, x.shape)]
    out[tuple(slice(s, s + n) for s, n in zip(starts, x.shape))] = x
    return out


def _loop(node: Node, *inputs) -> tuple:
    """The body run `trips` times: a tuple of its outputs after the last trip."""
    spec = node.arg
    state, invariant = list(inputs[:spec.carried]), list(inputs[spec.carried:])
    outputs = tuple(state)
    for _ in range(spec.count(inputs)):
        outputs = interpret(spec.body, state + invariant)
        state = outputs[:spec.carried]
    return tuple(outputs)


def _library_call(node: Node, inputs) -> tuple:
    """NumPy's function (ir/library.py) on the inputs: a tuple, one array per result."""
    from .library import run
    name, params = node.arg
    return run(name, dict(params), [np.asarray(i) for i in inputs])


def is_token(node: Node) -> bool:
    """A library call with several results (its value is a tuple, not an array)."""
    from .builder import library_results
    return node.op is Op.LIBRARY_CALL and library_results(node) is not None


def _evaluate(node: Node, values: Sequence[np.ndarray]) -> np.ndarray:
    if node.op is Op.LOOP:
        return _loop(node, *values)                  # a tuple: loop-result picks from it
    if node.op is Op.LIBRARY_CALL and node.dtype == np.uint8 and node.shape == () and \
            is_token(node):
        return _library_call(node, values)           # library-result picks from it
    result = np.asarray(EVAL[node.op](node, *values))
    if result.dtype != node.dtype:
        result = _convert(result, node.dtype)
    if result.shape != node.shape:
        raise AssertionError(f"interpreter: {node.op.value} produced {result.shape}, "
                             f"expected {node.shape}")
    return result


def interpret(graph: Graph, args: Sequence[np.ndarray], *,
              on_node: Callable[[Node, np.ndarray], None] | None = None,
              timings: dict | None = None) -> list[np.ndarray]:
    """Run `graph` on `args`; returns fresh arrays (never views of the inputs).

    `timings`, if given, accumulates seconds per op name (the op-by-op profile)."""
    env: dict[int, np.ndarray] = {}
    for param in graph.params:
        env[id(param)] = np.asarray(args[param.arg])
    with np.errstate(all="ignore"):
        for node in graph.nodes:
            if node.op is Op.PARAMETER:
                continue
            if timings is None:
                env[id(node)] = _evaluate(node, [env[id(i)] for i in node.inputs])
            else:
                start = time.perf_counter()
                env[id(node)] = _evaluate(node, [env[id(i)] for i in node.inputs])
                timings[node.op.value] = timings.get(node.op.value, 0.0) + \
                    time.perf_counter() - start
            if on_node is not None:
                on_node(node, env[id(node)])
    return [np.array(env[id(o)], copy=True) for o in graph.outputs]
