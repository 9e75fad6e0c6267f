"""`dce`: dead-code elimination, which the representation mostly does by construction.

A `Graph` holds only its parameters and outputs, and `Graph.nodes` is computed from them,
so a node no output reaches is not part of the graph at all: when `simplify` rewrites an
output, the node it replaced is simply absent from the next graph.  Every pass here builds
its result that way, so on their output this pass finds nothing and returns the graph itself
(the pipeline records changed=False).

What it still removes: a node list that holds unreachable nodes, which happens when code
builds a Graph and sets its cached list (`Graph._nodes`) before changing the outputs:

    %0 = parameter(), arg=0 : f32[8]               %0 = parameter(), arg=0 : f32[8]
    %1 = exponential(%0) : f32[8]          ->      %1 = negate(%0) : f32[8]
    %2 = negate(%0) : f32[8]                       return (%1)
    return (%2)

Unused parameters stay: they are the function's signature.

Precondition: none.  Cost: one graph walk.
"""
from __future__ import annotations

from ..ir import Graph, topological_order
from .pipeline import register_pass


@register_pass("dce")
def eliminate_dead_code(graph: Graph) -> Graph:
    """Drop nodes no output reaches; `graph` itself when there are none."""
    live = topological_order(graph.outputs, graph.params)
    if [id(n) for n in live] == [id(n) for n in graph.nodes]:
        return graph
    return Graph(graph.params, graph.outputs, graph.name)
