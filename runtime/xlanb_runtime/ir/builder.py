"""Node constructors: the shape and dtype rule of every op lives here.

The IR is strict like HLO: binary ops take operands of one shape and dtype; broadcasting and
promotion are explicit `broadcast` / `convert` nodes that the front end inserts.  A rule
violation raises `IRShapeError`, which the front end turns into a user-facing error at the
user's line.  Every node records `current_location()` (set by the tracer) as its `loc`.
"""
from __future__ import annotations

import contextvars
import math
from typing import Sequence

import numpy as np

from .graph import LoopBody, Node, type_str
from .ops import (ARGREDUCE_KINDS, BINARY, COMPARE, COMPLEX_ONLY, Op, REAL_ONLY,
                  REDUCE_KINDS, SCAN_COMBINE, SCAN_KINDS, UNARY)


class IRShapeError(ValueError):
    """An op was built with operands its shape/dtype rule rejects."""

    def __init__(self, op: Op, message: str):
        super().__init__(f"{op.value}: {message}")
        self.op = op
        self.detail = message


class IRDTypeError(IRShapeError):
    """An op applied to a dtype it is not defined for (an order on complex values)."""


_location: contextvars.ContextVar[str | None] = contextvars.ContextVar("loc", default=None)


def current_location() -> str | None:
    return _location.get()


class location:
    """`with location(loc):` nodes built inside carry `loc` (the user's file:line).  A
    class, not a generator context manager: traces enter one per operation, and
    contextlib's machinery cost several times the work it wraps."""
    __slots__ = ("loc", "token")

    def __init__(self, loc: str | None):
        self.loc = loc

    def __enter__(self) -> None:
        self.token = _location.set(self.loc)

    def __exit__(self, *exc) -> None:
        _location.reset(self.token)


def _node(op: Op, inputs: Sequence[Node], shape, dtype, arg=None) -> Node:
    return Node(op, inputs, shape, dtype, arg, current_location())


def _check(cond: bool, op: Op, message) -> None:
    """`message`: a string, or a function making it (formatting dtypes costs
    microseconds, and traces build nodes by the thousand)."""
    if not cond:
        raise IRShapeError(op, message() if callable(message) else message)


# -- leaves --------------------------------------------------------------------------------

def parameter(index: int, shape: Sequence[int], dtype) -> Node:
    return _node(Op.PARAMETER, (), tuple(shape), dtype, index)


def constant(value, dtype=None) -> Node:
    array = np.array(value, dtype=dtype)
    array.setflags(write=False)
    return _node(Op.CONSTANT, (), array.shape, array.dtype, array)


def iota(shape: Sequence[int], dtype, dimension: int) -> Node:
    shape = tuple(shape)
    _check(0 <= dimension < len(shape), Op.IOTA, lambda: f"dimension {dimension} out of range")
    return _node(Op.IOTA, (), shape, dtype, dimension)


# -- elementwise ---------------------------------------------------------------------------

_BOOL_RESULT = {Op.IS_FINITE}
_PART_RESULT = {Op.REAL, Op.IMAG, Op.ABS}     # complex operand -> its component dtype


def real_dtype(dtype) -> np.dtype:
    """The component dtype of a complex dtype (complex64 -> float32); others unchanged."""
    dtype = np.dtype(dtype)
    return np.finfo(dtype).dtype if dtype.kind == "c" else dtype


def complex_dtype(dtype) -> np.dtype:
    """The complex dtype with `dtype` parts (float32 -> complex64)."""
    return np.result_type(np.dtype(dtype), np.complex64)


def _check_complex(op: Op, dtype: np.dtype) -> None:
    if dtype.kind == "c" and op in REAL_ONLY:
        raise IRDTypeError(op, f"not defined for {dtype}")
    if dtype.kind != "c" and op in COMPLEX_ONLY:
        raise IRDTypeError(op, f"needs a complex operand, got {dtype}")


def unary(op: Op, x: Node) -> Node:
    _check(op in UNARY and op is not Op.CONVERT, op, "not a unary op")
    if op is Op.NOT:
        _check(x.dtype == np.bool_ or x.dtype.kind in "iu", op,
               lambda: f"needs bool/int, got {x.dtype}")
    _check_complex(op, x.dtype)
    if op is Op.ROUND_HALF:
        _check(x.dtype in (np.float32, np.float64), op,
               lambda: f"rounds a float32/float64 value, got {x.dtype}")
        return _node(op, (x,), x.shape, np.float32)
    dtype = np.dtype(bool) if op in _BOOL_RESULT else \
        real_dtype(x.dtype) if op in _PART_RESULT else x.dtype
    return _node(op, (x,), x.shape, dtype)


def binary(op: Op, x: Node, y: Node) -> Node:
    _check(op in BINARY or op in COMPARE, op, "not a binary op")
    _check(x.shape == y.shape, op, lambda: f"shapes differ: {x.shape} vs {y.shape}")
    _check(x.dtype == y.dtype, op, lambda: f"dtypes differ: {x.dtype} vs {y.dtype}")
    if op is Op.COMPLEX:
        if x.dtype not in (np.float32, np.float64):
            raise IRDTypeError(op, f"needs float32/float64 parts, got {x.dtype}")
        return _node(op, (x, y), x.shape, complex_dtype(x.dtype))
    _check_complex(op, x.dtype)
    dtype = np.dtype(bool) if op in COMPARE else x.dtype
    return _node(op, (x, y), x.shape, dtype)


def select(pred: Node, on_true: Node, on_false: Node) -> Node:
    _check(pred.dtype == np.bool_, Op.SELECT, lambda: f"predicate must be bool, got {pred.dtype}")
    _check(pred.shape == on_true.shape == on_false.shape, Op.SELECT,
           lambda: f"shapes differ: {pred.shape}, {on_true.shape}, {on_false.shape}")
    _check(on_true.dtype == on_false.dtype, Op.SELECT,
           lambda: f"dtypes differ: {on_true.dtype} vs {on_false.dtype}")
    return _node(Op.SELECT, (pred, on_true, on_false), pred.shape, on_true.dtype)


def convert(x: Node, dtype) -> Node:
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    return _node(Op.CONVERT, (x,), x.shape, dtype)


_BITCAST_KINDS = "iuf"             # no bool, complex or float16 (kernels hold none of them)


def bitcast(x: Node, dtype) -> Node:
    """The same bytes read as `dtype` (NumPy's x.view(dtype) of equal itemsize)."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    _check(x.dtype.itemsize == dtype.itemsize, Op.BITCAST,
           lambda: f"{x.dtype} and {dtype} differ in size")
    for t in (x.dtype, dtype):
        if t.kind not in _BITCAST_KINDS or t == np.float16:
            raise IRDTypeError(Op.BITCAST, f"not defined for {t}")
    return _node(Op.BITCAST, (x,), x.shape, dtype)


# -- data movement -------------------------------------------------------------------------

def broadcast(x: Node, shape: Sequence[int], dims: Sequence[int] | None = None) -> Node:
    """Operand dim i goes to output dim dims[i] (NumPy right-alignment when dims is None)."""
    shape = tuple(map(int, shape))
    if dims is None and x.shape == shape:        # nothing to broadcast (the common case)
        return x
    if dims is None:
        dims = tuple(range(len(shape) - x.ndim, len(shape)))
    dims = tuple(int(d) for d in dims)
    _check(len(dims) == x.ndim, Op.BROADCAST,
           lambda: f"{len(dims)} dims for a rank-{x.ndim} operand")
    _check(list(dims) == sorted(set(dims)), Op.BROADCAST,
           lambda: f"dims {dims} must increase")
    for i, d in enumerate(dims):
        _check(0 <= d < len(shape) and x.shape[i] in (1, shape[d]), Op.BROADCAST,
               lambda: f"cannot broadcast {x.shape} to {shape}")
    if x.shape == shape:
        return x
    return _node(Op.BROADCAST, (x,), shape, x.dtype, dims)


def reshape(x: Node, shape: Sequence[int]) -> Node:
    shape = tuple(int(d) for d in shape)
    _check(math.prod(shape) == x.size, Op.RESHAPE,
           f"cannot reshape {x.shape} ({x.size} elements) to {shape}")
    if shape == x.shape:
        return x
    return _node(Op.RESHAPE, (x,), shape, x.dtype)


def transpose(x: Node, perm: Sequence[int]) -> Node:
    perm = tuple(int(p) for p in perm)
    _check(sorted(perm) == list(range(x.ndim)), Op.TRANSPOSE,
           f"{perm} is not a permutation of {x.ndim} axes")
    if perm == tuple(range(x.ndim)):
        return x
    return _node(Op.TRANSPOSE, (x,), tuple(x.shape[p] for p in perm), x.dtype, perm)


def slice_(x: Node, specs: Sequence[tuple[int, int, int]]) -> Node:
    """Static strided slice: specs[d] = (start, stop, step) with 0 <= start, step >= 1."""
    specs = tuple((int(a), int(b), int(c)) for a, b, c in specs)
    _check(len(specs) == x.ndim, Op.SLICE, lambda: f"{len(specs)} slice specs for rank {x.ndim}")
    for (start, stop, step), n in zip(specs, x.shape):
        _check(0 <= start <= n and start <= stop <= n and step >= 1, Op.SLICE,
               lambda: f"bad slice ({start}, {stop}, {step}) of a dimension of size {n}")
    if all(s == (0, n, 1) for s, n in zip(specs, x.shape)):
        return x
    shape = tuple(len(range(a, b, c)) for a, b, c in specs)
    return _node(Op.SLICE, (x,), shape, x.dtype, specs)


def _check_places(op: Op, x: Node, places: Sequence[Node], shape: tuple[int, ...],
                  what: str) -> None:
    """A dynamic slice's starts or a dynamic pad's lows: one integer scalar per dim."""
    _check(len(places) == x.ndim == len(shape), op,
           lambda: f"{len(places)} {what}s and shape {shape} for rank {x.ndim}")
    for place in places:
        _check(place.shape == () and place.dtype.kind in "iu", op,
               lambda: f"a {what} must be an integer scalar, got "
                       f"{type_str(place.dtype, place.shape)}")


def dynamic_slice(x: Node, starts: Sequence[Node], sizes: Sequence[int]) -> Node:
    """x[s0:s0+n0, s1:s1+n1, ...] with the starts computed at run time (as XLA, each start
    is clamped into [0, dim - size], so the slice never leaves `x`)."""
    sizes = tuple(int(n) for n in sizes)
    _check_places(Op.DYNAMIC_SLICE, x, starts, sizes, "start")
    _check(all(0 <= n <= d for n, d in zip(sizes, x.shape)), Op.DYNAMIC_SLICE,
           lambda: f"sizes {sizes} do not fit in {x.shape}")
    return _node(Op.DYNAMIC_SLICE, (x, *starts), sizes, x.dtype, sizes)


def dynamic_pad(x: Node, value: Node, lows: Sequence[Node], shape: Sequence[int]) -> Node:
    """`shape` filled with `value`, `x` placed at `lows` computed at run time (each clamped
    into [0, dim - x's dim], so `x` always fits): a pad whose edges move."""
    shape = tuple(int(d) for d in shape)
    _check(value.shape == () and value.dtype == x.dtype, Op.DYNAMIC_PAD,
           lambda: f"padding value must be a scalar of {x.dtype}")
    _check_places(Op.DYNAMIC_PAD, x, lows, shape, "low")
    _check(all(n <= d for n, d in zip(x.shape, shape)), Op.DYNAMIC_PAD,
           lambda: f"{x.shape} does not fit in {shape}")
    return _node(Op.DYNAMIC_PAD, (x, value, *lows), shape, x.dtype, shape)


def pad(x: Node, value: Node, config: Sequence[tuple[int, int, int]]) -> Node:
    """config[d] = (low, high, interior) >= 0; `value` is a scalar node of x's dtype."""
    config = tuple((int(a), int(b), int(c)) for a, b, c in config)
    _check(value.shape == () and value.dtype == x.dtype, Op.PAD,
           lambda: f"padding value must be a scalar of {x.dtype}")
    _check(len(config) == x.ndim and all(min(c) >= 0 for c in config), Op.PAD,
           f"bad pad config {config}")
    shape = tuple(lo + hi + n + max(n - 1, 0) * interior
                  for (lo, hi, interior), n in zip(config, x.shape))
    return _node(Op.PAD, (x, value), shape, x.dtype, config)


def concatenate(xs: Sequence[Node], axis: int) -> Node:
    xs = list(xs)
    _check(len(xs) >= 1, Op.CONCATENATE, "needs at least one operand")
    first = xs[0]
    _check(0 <= axis < first.ndim, Op.CONCATENATE, lambda: f"axis {axis} out of range")
    for x in xs[1:]:
        _check(x.dtype == first.dtype, Op.CONCATENATE, lambda: f"dtypes differ: {first.dtype}, "
               f"{x.dtype}")
        same = all(a == b for d, (a, b) in enumerate(zip(x.shape, first.shape)) if d != axis)
        _check(x.ndim == first.ndim and same, Op.CONCATENATE,
               lambda: f"shapes {first.shape} and {x.shape} differ off axis {axis}")
    if len(xs) == 1:
        return first
    shape = list(first.shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return _node(Op.CONCATENATE, xs, shape, first.dtype, axis)


def reverse(x: Node, axes: Sequence[int]) -> Node:
    axes = tuple(sorted(int(a) for a in axes))
    _check(all(0 <= a < x.ndim for a in axes), Op.REVERSE, lambda: f"axes {axes} out of range")
    if not axes:
        return x
    return _node(Op.REVERSE, (x,), x.shape, x.dtype, axes)


# -- reductions and contraction ------------------------------------------------------------

def reduce(x: Node, kind: str, axes: Sequence[int]) -> Node:
    axes = tuple(sorted(set(int(a) for a in axes)))
    _check(kind in REDUCE_KINDS, Op.REDUCE, lambda: f"unknown reduction {kind!r}")
    _check(all(0 <= a < x.ndim for a in axes), Op.REDUCE, lambda: f"axes {axes} out of range")
    if kind in ("any", "all"):
        _check(x.dtype == np.bool_, Op.REDUCE, lambda: f"{kind} needs bool, got {x.dtype}")
    if kind in ("max", "min"):
        _check_complex(Op.MAX if kind == "max" else Op.MIN, x.dtype)
        _check(all(x.shape[a] > 0 for a in axes), Op.REDUCE,
               lambda: f"zero-size array to reduction operation {kind} which has no identity")
    shape = tuple(n for d, n in enumerate(x.shape) if d not in axes)
    return _node(Op.REDUCE, (x,), shape, x.dtype, (kind, axes))


def argreduce(x: Node, kind: str, axis: int) -> Node:
    _check(kind in ARGREDUCE_KINDS, Op.ARGREDUCE, lambda: f"unknown arg-reduction {kind!r}")
    _check_complex(Op.MAX if kind == "argmax" else Op.MIN, x.dtype)
    _check(0 <= axis < x.ndim and x.shape[axis] > 0, Op.ARGREDUCE,
           lambda: f"axis {axis} of {x.shape} is out of range or empty")
    shape = tuple(n for d, n in enumerate(x.shape) if d != axis)
    return _node(Op.ARGREDUCE, (x,), shape, np.int64, (kind, int(axis)))


def scan(x: Node, kind: str, axis: int) -> Node:
    """Inclusive scan along `axis`: out[..., i, ...] = x[..., 0, ...] op ... op x[..., i, ...],
    combined in order in x's dtype (NumPy's `ufunc.accumulate`).  Bool operands take
    max/min only (or/and): NumPy's bool add is an or, which the front end spells max."""
    _check(kind in SCAN_KINDS, Op.SCAN, lambda: f"unknown scan {kind!r}")
    _check(0 <= axis < x.ndim, Op.SCAN, lambda: f"axis {axis} out of range for {x.shape}")
    _check_complex(SCAN_COMBINE[kind], x.dtype)
    _check(x.dtype != np.bool_ or kind in ("max", "min"), Op.SCAN,
           lambda: f"{kind} of bool values: use max (or) / min (and)")
    return _node(Op.SCAN, (x,), x.shape, x.dtype, (kind, int(axis)))


def dot(lhs: Node, rhs: Node, lhs_batch=(), rhs_batch=(), lhs_contract=(), rhs_contract=()):
    """General contraction: output dims are batch, then lhs free, then rhs free."""
    dims = tuple(tuple(int(d) for d in ds)
                 for ds in (lhs_batch, rhs_batch, lhs_contract, rhs_contract))
    lb, rb, lc, rc = dims
    _check(lhs.dtype == rhs.dtype, Op.DOT, lambda: f"dtypes differ: {lhs.dtype} vs {rhs.dtype}")
    _check(len(lb) == len(rb) and len(lc) == len(rc), Op.DOT, "unpaired dimension numbers")
    for a, b in list(zip(lb, rb)) + list(zip(lc, rc)):
        _check(lhs.shape[a] == rhs.shape[b], Op.DOT,
               lambda: f"contracting/batch sizes differ: {lhs.shape} vs {rhs.shape} "
               f"(lhs dim {a}, rhs dim {b})")
    lfree = [d for d in range(lhs.ndim) if d not in lb + lc]
    rfree = [d for d in range(rhs.ndim) if d not in rb + rc]
    shape = ([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in lfree]
             + [rhs.shape[d] for d in rfree])
    return _node(Op.DOT, (lhs, rhs), shape, lhs.dtype, dims)


# -- indexing ------------------------------------------------------------------------------

def gather(x: Node, indices: Node, axis: int) -> Node:
    """np.take(x, indices, axis) for indices in range (the front end wraps negatives)."""
    _check(indices.dtype.kind in "iu", Op.GATHER, lambda: f"indices must be integers, got "
           f"{indices.dtype}")
    _check(0 <= axis < x.ndim, Op.GATHER, lambda: f"axis {axis} out of range for {x.shape}")
    shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    return _node(Op.GATHER, (x, indices), shape, x.dtype, int(axis))


def scatter_add(x: Node, indices: Node, updates: Node, axis: int) -> Node:
    """out = x.copy(); np.add.at(out, (:,)*axis + (indices,), updates)."""
    return _scatter(Op.SCATTER_ADD, x, indices, updates, axis)


def scatter(x: Node, indices: Node, updates: Node, axis: int) -> Node:
    """out = x.copy(); out[(:,)*axis + (indices,)] = updates, one update after another in
    the indices' C order (the last write to a position wins, as NumPy's assignment)."""
    return _scatter(Op.SCATTER, x, indices, updates, axis)


def _scatter(op: Op, x: Node, indices: Node, updates: Node, axis: int) -> Node:
    _check(indices.dtype.kind in "iu", op, "indices must be integers")
    expected = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    _check(updates.shape == expected and updates.dtype == x.dtype, op,
           lambda: f"updates {updates.shape} {updates.dtype} do not match {expected} {x.dtype}")
    return _node(op, (x, indices, updates), x.shape, x.dtype, int(axis))


def all_reduce(x: Node, kind: str) -> Node:
    _check(kind in ("sum", "mean", "max", "min"), Op.ALL_REDUCE, lambda: f"unknown kind {kind!r}")
    if kind in ("max", "min"):
        _check_complex(Op.MAX if kind == "max" else Op.MIN, x.dtype)
    return _node(Op.ALL_REDUCE, (x,), x.shape, x.dtype, kind)


# -- random --------------------------------------------------------------------------------

def rng_bits(key: Node, shape: Sequence[int]) -> Node:
    """u64[shape] whose element at C-order flat index i is splitmix64(key, i)."""
    shape = tuple(int(d) for d in shape)
    _check(key.shape == () and key.dtype == np.uint64, Op.RNG_BITS,
           lambda: f"the key must be a u64[] scalar, got {type_str(key.dtype, key.shape)}")
    _check(all(d >= 0 for d in shape), Op.RNG_BITS, lambda: f"negative dimension in {shape}")
    return _node(Op.RNG_BITS, (key,), shape, np.uint64)


# -- library calls -------------------------------------------------------------------------

def _plain(value):
    """Params as printable, hashable data: lists become tuples, NumPy scalars Python's."""
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.dtype):
        return value.name
    return value


def library_call(name: str, inputs: Sequence[Node], params=()) -> Node:
    """`name` (a key of `ir.library.FUNCTIONS`) run on `inputs` with static `params`
    (a dict or (key, value) pairs).  One result: the node has its type; several: a u8[]
    token, read with `library_result`."""
    from . import library
    params = tuple(sorted((str(k), _plain(v)) for k, v in dict(params).items()))
    _check(name in library.FUNCTIONS, Op.LIBRARY_CALL, lambda: f"unknown function {name!r}")
    # the rule asks NumPy itself for dtypes: NumPy's own error for arguments it refuses
    results = library.result_types(name, inputs, dict(params))
    shape, dtype = results[0] if len(results) == 1 else ((), np.uint8)
    return _node(Op.LIBRARY_CALL, inputs, shape, dtype, (name, params))


def library_results(call: Node) -> list[tuple[tuple[int, ...], np.dtype]] | None:
    """The result types of a library call with several results (None: it has one)."""
    from . import library
    name, params = call.arg
    results = library.result_types(name, call.inputs, dict(params))
    return results if len(results) > 1 else None


def library_result(call: Node, index: int) -> Node:
    _check(call.op is Op.LIBRARY_CALL, Op.LIBRARY_RESULT, "reads a library call only")
    results = library_results(call)
    _check(results is not None and 0 <= index < len(results), Op.LIBRARY_RESULT,
           lambda: f"{call.arg[0]} has no result {index} to pick")
    shape, dtype = results[index]
    return Node(Op.LIBRARY_RESULT, (call,), shape, dtype, int(index), call.loc)


# -- control flow --------------------------------------------------------------------------

def loop(inputs: Sequence[Node], body: LoopBody, loc: str | None = None) -> Node:
    """Run `body.body` `body.trips` times over `inputs` (carried first, then invariant)."""
    graph = body.body
    _check(len(graph.params) == len(inputs), Op.LOOP,
           lambda: f"the body takes {len(graph.params)} values, the loop gives {len(inputs)}")
    for i, (param, value) in enumerate(zip(graph.params, inputs)):
        _check(param.shape == value.shape and param.dtype == value.dtype, Op.LOOP,
               lambda: f"input {i} is {type_str(value.dtype, value.shape)}, the body's parameter "
               f"{type_str(param.dtype, param.shape)}")
    _check(0 <= body.carried <= len(graph.outputs) and body.trips >= 1, Op.LOOP,
           lambda: f"{body.carried} carried values, {len(graph.outputs)} outputs, "
           f"{body.trips} trips")
    for i in range(body.carried):
        out, param = graph.outputs[i], graph.params[i]
        _check(out.shape == param.shape and out.dtype == param.dtype, Op.LOOP,
               lambda: f"carried value {i} enters as {type_str(param.dtype, param.shape)} and "
               f"leaves as {type_str(out.dtype, out.shape)}")
    if body.dynamic:
        count = graph.params[-1] if graph.params else None
        _check(count is not None and count.shape == () and count.dtype == np.int64 and
               len(graph.params) > body.carried, Op.LOOP,
               "a dynamic loop's last input is its trip count, an int64 scalar invariant")
    return Node(Op.LOOP, inputs, (), np.uint8, body, loc or current_location())


def loop_result(loop_node: Node, index: int) -> Node:
    _check(loop_node.op is Op.LOOP, Op.LOOP_RESULT, "reads a loop node only")
    outputs = loop_node.arg.body.outputs
    _check(0 <= index < len(outputs), Op.LOOP_RESULT,
           lambda: f"the loop has {len(outputs)} results, not {index + 1}")
    out = outputs[index]
    return Node(Op.LOOP_RESULT, (loop_node,), out.shape, out.dtype, int(index),
                loop_node.loc)
