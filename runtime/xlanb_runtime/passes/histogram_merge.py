"""`histogram-merge`: np.histogram calls on the same data and bins become one library call.

Binned statistics histogram one array several times with the same bins: counts, then sums
of a weight (npbench azimint_hist, pyFAI's azimuthal integration: sums / counts).  Each
call finds the range (a min and a max pass) and bins every value again; merged, one pass
bins each value once and updates every histogram (codegen/histogram.py):

    %2 = library-call(%1), arg=('np.histogram', (('bins', 1000), ('keyword_arrays', ())))
    %3 = library-result(%2), arg=0 : s64[1000]
    %4 = library-call(%1, %0), arg=('np.histogram', (('bins', 1000),
                                                     ('keyword_arrays', ('weights',))))
    %5 = library-result(%4), arg=0 : f64[1000]
  ->
    %2 = library-call(%1, %0), arg=('xlanb.histograms', (('bins', 1000),
                                                         ('weighted', (False, True))))
    %3 = library-result(%2), arg=0 : s64[1000]          # call k's result i: 2 * k + i
    %5 = library-result(%2), arg=2 : f64[1000]

Merged: calls with int `bins`, equal `range`, no `density`, unweighted or weighted.
Precondition: every merged call's inputs come before the first of them in the graph's
order (the merged call takes the first one's place); groups that fail it stay apart.  The
merged call's NumPy semantics are the separate calls in order (ir/library.py), so the
interpreter and the NumPy tier give the same values.  Cost: none.
"""
from __future__ import annotations

from ..ir import Graph, Node, Op, with_inputs
from ..ir import builder as B
from ..ir.library import params_of
from .pipeline import register_pass

MERGED = "xlanb.histograms"


def _group_key(node: Node):
    """(data, bins, range) of a mergeable np.histogram call, else None."""
    if node.op is not Op.LIBRARY_CALL or node.arg[0] != "np.histogram":
        return None
    params = params_of(node.arg)
    keyword = tuple(params.get("keyword_arrays", ()))
    if keyword not in ((), ("weights",)) or params.get("density") or \
            not isinstance(params.get("bins"), int):
        return None
    return id(node.inputs[0]), params["bins"], params.get("range")


def _groups(graph: Graph) -> dict[int, tuple[list[Node], int]]:
    """id(call) -> (its group, its index) for calls that merge."""
    groups: dict[tuple, list[Node]] = {}
    for node in graph.nodes:
        key = _group_key(node)
        if key is not None:
            groups.setdefault(key, []).append(node)
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    members = {}
    for group in groups.values():
        first = position[id(group[0])]
        if len(group) > 1 and all(position[id(i)] < first for call in group
                                  for i in call.inputs):
            members.update({id(call): (group, k) for k, call in enumerate(group)})
    return members


@register_pass("histogram-merge")
def merge_histograms(graph: Graph) -> Graph:
    members = _groups(graph)
    if not members:
        return graph
    mapping: dict[int, Node] = {}
    for node in graph.nodes:
        inputs = [mapping[id(i)] for i in node.inputs]
        if id(node) in members:
            group, k = members[id(node)]
            if k == 0:
                mapping[id(node)] = _merged_call(group, mapping)
            else:
                mapping[id(node)] = mapping[id(group[0])]
        elif node.op is Op.LIBRARY_RESULT and id(node.inputs[0]) in members:
            k = members[id(node.inputs[0])][1]
            mapping[id(node)] = B.library_result(inputs[0], 2 * k + node.arg)
        else:
            mapping[id(node)] = with_inputs(node, tuple(inputs))
    return Graph([mapping[id(p)] for p in graph.params],
                 [mapping[id(o)] for o in graph.outputs], graph.name)


def _merged_call(group: list[Node], mapping: dict[int, Node]) -> Node:
    params = params_of(group[0].arg)
    weighted = tuple(len(call.inputs) > 1 for call in group)
    inputs = [mapping[id(group[0].inputs[0])]] + \
        [mapping[id(call.inputs[1])] for call in group if len(call.inputs) > 1]
    merged = {"bins": params["bins"], "weighted": weighted}
    if params.get("range") is not None:
        merged["range"] = params["range"]
    call = B.library_call(MERGED, inputs, merged)
    return Node(call.op, call.inputs, call.shape, call.dtype, call.arg, group[0].loc)
