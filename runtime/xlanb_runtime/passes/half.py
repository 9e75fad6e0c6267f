"""`half-as-float32`: float16 values computed in float32 and rounded to float16, as NumPy does.

Numba has no float16 type on the CPU (a float16 array argument is NotImplementedError), so
compiled kernels never see one.  NumPy's own float16 ufuncs convert to float32, compute,
and round the result to float16; this pass writes exactly that into the graph:

    %1 = parameter(), arg=0 : f16[8]
    %2 = exponential(%1) : f16[8]
    return (%2)
      ->
    %1 = parameter(), arg=0 : f16[8]
    %2 = library-call(%1), arg=('np.ndarray.astype', (('dtype', 'float32'),)) : f32[8]
    %3 = exponential(%2) : f32[8]
    %4 = round-to-half(%3) : f32[8]
    %5 = library-call(%4), arg=('np.ndarray.astype', (('dtype', 'float16'),)) : f16[8]
    return (%5)

Every float16 node becomes a float32 node holding a float16 value: arithmetic is followed by
`round-to-half` (exact ops: moves, select, max/min, abs, neg need none), a convert to float16
is a `round-to-half` of the source (from float64 directly, no double rounding).  float16
arrays only exist at the boundary, converted by NumPy: parameters on the way in, outputs on
the way out, and the operands and results of library calls, loops and collectives (which run
NumPy's float16 code themselves).  A float16 scan (NumPy rounds every step) becomes NumPy's
accumulate.  Differences from NumPy: a float16 sum or dot accumulates in float32 and rounds
once (NumPy's float16 reductions do too, in their own order), a scatter-add rounds once per
element instead of once per update.

Precondition: none.  Runs as a lowering for the compiled targets only (the NumPy tier keeps
float16).  Cost: one rounding per float16 op (a few flops), and a conversion pass over each
float16 argument and result.
"""
from __future__ import annotations

import numpy as np

from ..ir import Graph, Node, Op
from ..ir import builder as B
from ..ir.graph import with_inputs
from ..ir.verify import _rederive
from .pipeline import register_pass

HALF, SINGLE = np.dtype(np.float16), np.dtype(np.float32)
# Ops that run NumPy's code on real arrays: float16 operands go in as float16.
BOUNDARY = frozenset({Op.LIBRARY_CALL, Op.LIBRARY_RESULT, Op.LOOP, Op.LOOP_RESULT,
                      Op.ALL_REDUCE})
# Ops whose result on float16 values is a float16 value already: no rounding.
EXACT = frozenset({Op.NEG, Op.ABS, Op.MAX, Op.MIN, Op.SIGN, Op.FLOOR, Op.CEIL, Op.ROUND,
                   Op.SELECT, Op.BROADCAST, Op.RESHAPE, Op.TRANSPOSE, Op.SLICE, Op.REVERSE,
                   Op.DYNAMIC_SLICE, Op.PAD, Op.DYNAMIC_PAD, Op.CONCATENATE, Op.GATHER})
_SCAN_UFUNC = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}


def astype(x: Node, dtype) -> Node:
    """NumPy's `x.astype(dtype)` as a library call (float16 arrays stay out of kernels)."""
    return B.library_call("np.ndarray.astype", [x], {"dtype": np.dtype(dtype).name})


def round_half(x: Node) -> Node:
    """x rounded to float16, held in float32; from anything NumPy converts to float16."""
    if x.dtype not in (np.float32, np.float64):
        x = B.convert(x, np.float64)      # ints (exact to 2**53), bool, complex's real part
    return B.unary(Op.ROUND_HALF, x)


class _Lowering:
    def __init__(self):
        self.mapping: dict[int, Node] = {}     # old node -> new (float16: a float32 stand-in)
        self.halves: dict[int, Node] = {}      # old float16 node -> a real float16 array

    def as_half(self, old: Node) -> Node:
        """The new graph's value of `old` as a real float16 array (for NumPy's code): the
        parameter or library result itself where there is one, else one conversion."""
        new = self.mapping[id(old)]
        if old.dtype != HALF or new.dtype == HALF:
            return new
        if id(old) not in self.halves:
            self.halves[id(old)] = astype(new, HALF)
        return self.halves[id(old)]

    def lower(self, node: Node) -> Node:
        ins = [self.mapping[id(i)] for i in node.inputs]
        if node.op is Op.PARAMETER:
            if node.dtype != HALF:
                return node
            self.halves[id(node)] = node
            return astype(node, SINGLE)
        if node.op in BOUNDARY:
            new = with_inputs(node, [self.as_half(i) for i in node.inputs])
            if node.dtype != HALF:
                return new
            self.halves[id(node)] = new
            return astype(new, SINGLE)
        if node.dtype != HALF and not any(i.dtype == HALF for i in node.inputs):
            return with_inputs(node, ins)
        if node.op is Op.CONSTANT:
            return B.constant(node.arg.astype(SINGLE))
        if node.op is Op.IOTA:
            return round_half(B.iota(node.shape, SINGLE, node.arg))
        if node.op is Op.CONVERT:
            return round_half(ins[0]) if node.dtype == HALF else B.convert(ins[0], node.dtype)
        if node.op is Op.SCAN:              # NumPy rounds every step: its accumulate
            kind, axis = node.arg
            call = B.library_call("np.ufunc.accumulate", [self.as_half(node.inputs[0])],
                                  {"ufunc": _SCAN_UFUNC[kind], "axis": axis})
            return astype(call, SINGLE)
        new = _rederive(with_inputs(node, ins))
        if node.dtype == HALF and node.op not in EXACT:
            new = round_half(new)
        return new


@register_pass("half-as-float32")
def half_as_float32(graph: Graph) -> Graph:
    """Every float16 value computed in float32 and rounded to float16 after each op."""
    if not any(n.dtype == HALF for n in graph.nodes):
        return graph
    lowering = _Lowering()
    for node in graph.nodes:
        with B.location(node.loc):
            lowering.mapping[id(node)] = lowering.lower(node)
    with B.location(None):
        outputs = [lowering.as_half(o) for o in graph.outputs]
    return Graph(list(graph.params), outputs, graph.name)
