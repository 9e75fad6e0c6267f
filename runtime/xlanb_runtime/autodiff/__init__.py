"""Reverse-mode autodiff on the IR: cotangent nodes built next to the forward nodes.

`vjp(outputs, wrt, cotangents)` walks the nodes between `wrt` and `outputs` in reverse
topological order, applies each op's rule from `rules.VJP` and sums cotangents that meet.
The result is more nodes in the same graph, so forward and backward are optimized and fused
together.  Only nodes that depend on `wrt` get cotangents; `wrt` nodes stop the walk.
"""
from __future__ import annotations

from typing import Sequence

from ..ir import Node, Op, topological_order
from ..ir import builder as B
from .rules import VJP, ZERO_GRADIENT, full

__all__ = ["vjp", "VJP", "ZERO_GRADIENT", "NotDifferentiableError"]


class NotDifferentiableError(TypeError):
    """An op on the path to the output has no VJP rule."""


def vjp(outputs: Sequence[Node], wrt: Sequence[Node],
        cotangents: Sequence[Node]) -> list[Node]:
    """Cotangents of `wrt` given `cotangents` of `outputs` (zeros where unreachable)."""
    wrt_ids = {id(w) for w in wrt}
    order = topological_order(outputs)
    depends: set[int] = set(wrt_ids)
    for node in order:
        if id(node) not in wrt_ids and any(id(i) in depends for i in node.inputs):
            depends.add(id(node))
    grads: dict[int, Node] = {}
    for out, g in zip(outputs, cotangents):
        _accumulate(grads, out, g)
    for node in reversed(order):
        g = grads.get(id(node))
        if g is None or id(node) in wrt_ids or not node.inputs:
            continue
        for operand, cotangent in zip(node.inputs, _apply_rule(node, g)):
            if cotangent is not None and id(operand) in depends:
                _accumulate(grads, operand, cotangent)
    return [grads.get(id(w)) or full(w, 0) for w in wrt]


def _apply_rule(node: Node, g: Node):
    if node.op in ZERO_GRADIENT:
        return [None] * len(node.inputs)
    rule = VJP.get(node.op)
    if rule is None:
        raise NotDifferentiableError(
            f"{node.op.value} has no gradient rule"
            + (f" (at {node.loc})" if node.loc else ""))
    with B.location(node.loc):
        return rule(g, node, *node.inputs)


def _accumulate(grads: dict[int, Node], node: Node, g: Node) -> None:
    if g.dtype != node.dtype:
        g = B.convert(g, node.dtype)
    previous = grads.get(id(node))
    grads[id(node)] = g if previous is None else B.binary(Op.ADD, previous, g)
