"""Buffer assignment for the NumPy tier: the arrays a program's ops make along the way are
written (`out=`) into one preallocated arena, kept and reused from call to call.

Why: a NumPy step's intermediate arrays are fresh memory on a process's first call, and
on this project's VMs the first touch of each 4 KiB page costs about 4 microseconds (W5's
first step: 9,000 page faults, about 35 ms of a 155 ms call; the steady step has none,
since malloc keeps its heap).  One arena of 4 MiB or more is advised onto 2 MiB huge pages
(NumPy does so for large allocations; the kernel's THP "madvise" mode honours it): the
same memory in about 20 faults.  Later calls reuse the arena as malloc reuses its heap.

    v3 = add(p0, p1)        ->   v3 = add(p0, p1, out=b[0])         b[0]: arena[0:4096]
    v4 = exp(v3)            ->   v4 = exp(v3, out=b[1])             v3 dies here: b[1] is
                                                                     v3's memory (in place)
    v5 = dot(v4, p2)        ->   v5 = dot_into(v4, p2, out=b[2])

Which values get a buffer: those an op writes with `out=` into memory of exactly the
node's dtype (ufuncs whose NumPy type resolution gives that dtype, true division of
floats, dots, sum/prod/max/min reductions, real conversions), that are not program
outputs (returned to the caller: their own memory) and whose memory no op that may alias
its operands (library calls, loops) reads.  A value's block is free once neither it nor
any view of it (reshape, transpose, slice, broadcast) is read again.  Blocks are reused by
exact size (a step's arrays come in few sizes), else the arena grows.

Two threads calling one program at once: the second takes a fresh arena (`ArenaPool`).
"""
from __future__ import annotations

import dataclasses
import functools
import math
from typing import Callable

import numpy as np

from .ir import Graph, Op
from .ir.interpret import _dot

ALIGN = 64                 # bytes: every block starts on a cache line

# Ops whose NumPy function maps one to one onto a ufunc (called as `np.<name>`).
UFUNCS = {
    Op.NEG: "negative", Op.ABS: "absolute", Op.EXP: "exp", Op.EXP2: "exp2", Op.EXPM1: "expm1",
    Op.LOG: "log", Op.LOG1P: "log1p", Op.SQRT: "sqrt", Op.TANH: "tanh", Op.SIN: "sin",
    Op.COS: "cos", Op.TAN: "tan", Op.ASIN: "arcsin", Op.ACOS: "arccos", Op.FLOOR: "floor",
    Op.SINH: "sinh", Op.COSH: "cosh", Op.ATAN: "arctan", Op.ASINH: "arcsinh",
    Op.ACOSH: "arccosh", Op.ATANH: "arctanh", Op.CEIL: "ceil", Op.NOT: "invert",
    Op.IS_FINITE: "isfinite", Op.CONJ: "conjugate", Op.ADD: "add", Op.SUB: "subtract",
    Op.MUL: "multiply", Op.POW: "power", Op.MAX: "maximum", Op.MIN: "minimum",
    Op.AND: "bitwise_and", Op.OR: "bitwise_or", Op.XOR: "bitwise_xor", Op.ATAN2: "arctan2",
    Op.SHIFT_LEFT: "left_shift", Op.SHIFT_RIGHT: "right_shift",
    Op.EQ: "equal", Op.NE: "not_equal", Op.LT: "less", Op.LE: "less_equal",
    Op.GT: "greater", Op.GE: "greater_equal", Op.SELECT: "where",
}

# Ops whose result is always a new array that shares memory with nothing else.  Views
# (reshape, transpose, slice, broadcast, real), constants, parameters, `round` of integers
# (returns its input) and library calls (NumPy may return a view of an argument) are not.
FRESH = (set(UFUNCS) - {Op.CONJ}) | {
    Op.SIGN, Op.RSQRT, Op.ERF, Op.ROUND_HALF, Op.DIV, Op.FLOOR_DIV, Op.REM, Op.COMPLEX, Op.CONVERT,
    Op.REDUCE, Op.ARGREDUCE, Op.SCAN, Op.DOT, Op.GATHER, Op.SCATTER_ADD, Op.SCATTER,
    Op.CONCATENATE, Op.PAD,
    Op.DYNAMIC_PAD, Op.RNG_BITS}

# Ops whose result may share memory with their first operand (a view, or the operand
# itself); any op in neither this set nor FRESH may alias any of its operands.
VIEWS = {Op.RESHAPE, Op.TRANSPOSE, Op.SLICE, Op.BROADCAST, Op.REVERSE, Op.REAL, Op.IMAG,
         Op.DYNAMIC_SLICE, Op.ROUND, Op.CONJ}

# Elementwise ops that may write into an operand's own memory (same shape and dtype, read
# for the last time by them): NumPy's ufuncs handle an output that is an input.
IN_PLACE = set(UFUNCS) - {Op.SELECT}


def _ufunc_into(name: str, node) -> Callable | None:
    """np.<name> when NumPy's type resolution for the operands' dtypes gives the node's
    dtype exactly (the value in `out` is then what the op alone returns)."""
    ufunc = getattr(np, name)
    dtypes = tuple(i.dtype for i in node.inputs)
    try:
        resolved = ufunc.resolve_dtypes(dtypes + (None,) * ufunc.nout)
    except Exception:                     # noqa: BLE001 - no loop for these types: no buffer
        return None
    return ufunc if resolved[-1] == node.dtype else None


def _dot_into(dims, x, y, out):
    return _dot(x, y, dims, out)


def _reduce_into(ufunc, axes, x, out):
    return ufunc.reduce(x, axis=axes, dtype=x.dtype, out=out)


def _convert_into(x, out):
    np.copyto(out, x, casting="unsafe")        # astype's conversion, into `out`
    return out


_REDUCE_UFUNCS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def into_call(node) -> Callable | None:
    """`f(*operand_values, out=buffer)` computing `node` into a buffer of its shape and
    dtype, with the value the op's own NumPy call returns, or None (no buffer)."""
    if node.ndim == 0 or node.dtype.hasobject or any(s == 0 for s in node.shape):
        return None
    op, inputs = node.op, node.inputs
    if op in IN_PLACE:
        return _ufunc_into(UFUNCS[op], node)
    if op is Op.DIV and all(i.dtype.kind in "fc" for i in inputs):
        return _ufunc_into("true_divide", node)
    if op is Op.DOT and np.result_type(*(i.dtype for i in inputs)) == node.dtype:
        return functools.partial(_dot_into, node.arg)
    if op is Op.REDUCE and node.arg[0] in _REDUCE_UFUNCS and inputs[0].dtype == node.dtype:
        return functools.partial(_reduce_into, _REDUCE_UFUNCS[node.arg[0]], node.arg[1])
    if op is Op.CONVERT and inputs[0].dtype.kind != "c":
        return _convert_into
    return None


@dataclasses.dataclass
class BufferPlan:
    """Where each buffered value lives: `slots[node index]` indexes `views`, each an
    (offset, dtype, shape) view of an arena of `size` bytes; `calls[node index]` writes
    the node's value into its view."""
    size: int
    slots: dict[int, int]
    views: list[tuple[int, np.dtype, tuple]]
    calls: dict[int, Callable]

    def arena(self) -> list[np.ndarray]:
        """A new arena's views (the arena lives as long as they do)."""
        memory = np.empty(max(self.size, 1), np.uint8)
        return [memory[offset:offset + dtype.itemsize * _count(shape)]
                .view(dtype).reshape(shape) for offset, dtype, shape in self.views]


def _count(shape) -> int:
    return math.prod(shape)


def _roots(graph: Graph):
    """(root, last, pinned): each value's root (the array it views, or itself), the last
    statement reading each root through any of its views (outputs: past the end), and the
    roots whose memory an op that may alias its operands reads (never buffered)."""
    nodes = graph.nodes
    root: dict[int, int] = {}
    pinned: set[int] = set()
    for node in nodes:
        if node.op in VIEWS:
            root[id(node)] = root.get(id(node.inputs[0]), id(node.inputs[0]))
        else:
            root[id(node)] = id(node)
            if node.op not in FRESH:
                pinned.add(id(node))
                pinned.update(root.get(id(s), id(s)) for s in node.inputs)
    last: dict[int, int] = {}
    for i, node in enumerate(nodes):
        for source in node.inputs:
            r = root[id(source)]
            last[r] = i
    for output in graph.outputs:
        last[root[id(output)]] = len(nodes)
    return root, last, pinned


def plan_buffers(graph: Graph) -> BufferPlan:
    """Assign arena blocks to `graph`'s buffered values (see the module docstring)."""
    nodes = graph.nodes
    root, last, pinned = _roots(graph)
    outputs = {id(o) for o in graph.outputs}
    heap = _Blocks()
    dying: dict[int, list[tuple[int, int]]] = {}   # statement -> blocks free after it
    block_of: dict[int, tuple[int, int]] = {}      # buffered root -> (offset, size)
    plan = BufferPlan(0, {}, [], {})
    for i, node in enumerate(nodes):
        for block in dying.pop(i - 1, ()):
            heap.release(*block)
        if node.op not in FRESH or id(node) in outputs or id(node) in pinned:
            continue
        call = into_call(node)
        if call is None:
            continue
        block = _in_place_block(node, i, root, last, block_of)
        if block is not None:
            dying[i].remove(block)             # the operand's block passes to the node
        else:
            block = heap.take(-(-node.dtype.itemsize * _count(node.shape) // ALIGN) * ALIGN)
        block_of[id(node)] = block
        dying.setdefault(max(last.get(id(node), i), i), []).append(block)
        plan.slots[i] = len(plan.views)
        plan.views.append((block[0], node.dtype, node.shape))
        plan.calls[i] = call
    plan.size = heap.end
    return plan


class _Blocks:
    """The arena's free blocks (offset-ordered, neighbours merged); a request takes the
    smallest that fits, else grows the arena's end."""

    def __init__(self):
        self.free: list[list[int]] = []     # [offset, size]
        self.end = 0

    def take(self, size: int) -> tuple[int, int]:
        fits = [b for b in self.free if b[1] >= size]
        if fits:
            best = min(fits, key=lambda b: b[1])
            offset = best[0]
            best[0], best[1] = offset + size, best[1] - size
            if best[1] == 0:
                self.free.remove(best)
            return offset, size
        if self.free and self.free[-1][0] + self.free[-1][1] == self.end:
            offset = self.free.pop()[0]          # the free tail grows into the request
        else:
            offset = self.end
        self.end = offset + size
        return offset, size

    def release(self, offset: int, size: int) -> None:
        free = self.free
        at = 0
        while at < len(free) and free[at][0] < offset:
            at += 1
        free.insert(at, [offset, size])
        if at + 1 < len(free) and offset + size == free[at + 1][0]:
            free[at][1] += free.pop(at + 1)[1]
        if at > 0 and free[at - 1][0] + free[at - 1][1] == offset:
            free[at - 1][1] += free.pop(at)[1]


def _in_place_block(node, i, root, last, block_of):
    """An operand's block this elementwise node may write into: the operand is a buffered
    array (not a view of one) of the node's shape and dtype, read for the last time here.
    Its block then frees with the node's value instead."""
    if node.op not in IN_PLACE:
        return None
    for source in node.inputs:
        block = block_of.get(id(source))
        if block is not None and root[id(source)] == id(source) and \
                last.get(id(source)) == i and source.shape == node.shape and \
                source.dtype == node.dtype:
            del block_of[id(source)]
            return block
    return None


class ArenaPool:
    """One idle arena per program, taken by a call and given back after it; a call that
    finds none (another thread holds it) makes its own."""

    def __init__(self, plan: BufferPlan):
        self.plan = plan
        self._idle: list[list[np.ndarray]] = []

    def take(self) -> list[np.ndarray]:
        try:
            return self._idle.pop()          # atomic under the GIL
        except IndexError:
            return self.plan.arena()

    def give(self, views: list[np.ndarray]) -> None:
        if not self._idle:
            self._idle.append(views)
