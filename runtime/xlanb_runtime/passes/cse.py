"""`cse`: common-subexpression elimination by hash-consing.

Walks the graph in topological order and keeps one node per `Node.key()` (same op, same
inputs, same arg, same type).  Inputs are replaced first, so whole repeated subtrees merge
bottom-up; constants with equal bytes and dtype merge (0.0 and -0.0 stay apart).  For ops
that commute exactly in IEEE arithmetic the operand order does not matter.

    %0 = parameter(), arg=0 : f32[8]               %0 = parameter(), arg=0 : f32[8]
    %1 = exponential(%0) : f32[8]                  %1 = exponential(%0) : f32[8]
    %2 = exponential(%0) : f32[8]          ->      %2 = add(%1, %1) : f32[8]
    %3 = add(%1, %2) : f32[8]                      return (%2)
    return (%3)

Precondition: nodes are pure (true of every op; all-reduce is deterministic across ranks
because every rank runs the same pipeline).  Parameters never merge.  The surviving node
keeps its own `loc` (the first occurrence).  Cost: none; a merged value may live longer.
"""
from __future__ import annotations

from ..ir import Graph, Node, rebuild, with_inputs
from ..ir.graph import arg_key
from ..ir.ops import Op
from .pipeline import register_pass

# maximum/minimum are left out: np.maximum(0.0, -0.0) is 0.0 but np.maximum(-0.0, 0.0) is -0.0.
EXACTLY_COMMUTATIVE = frozenset({Op.ADD, Op.MUL, Op.AND, Op.OR, Op.XOR, Op.EQ, Op.NE})


def cse_key(node: Node) -> tuple:
    """`Node.key()`, with operands as a sorted tuple for exactly commutative ops."""
    inputs = tuple(id(i) for i in node.inputs)
    if node.op in EXACTLY_COMMUTATIVE:
        inputs = tuple(sorted(inputs))
    return (node.op, inputs, node.shape, node.dtype.str, _hashable(arg_key(node.arg)))


def _hashable(value):
    """Lists (which a hand-written module may carry in an arg) as tuples."""
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value


@register_pass("cse")
def eliminate_common_subexpressions(graph: Graph) -> Graph:
    """One node per structural key; returns `graph` itself when nothing merged."""
    canonical: dict[tuple, Node] = {}      # keeps the survivors alive, so their ids are stable

    def merge(node: Node, inputs) -> Node:
        new = with_inputs(node, inputs)
        return new if new.op is Op.PARAMETER else canonical.setdefault(cse_key(new), new)
    return rebuild(graph, merge)
