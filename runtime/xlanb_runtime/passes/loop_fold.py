"""Constant places back into loop bodies: the last step of `loop-reroll` at each level.

A rolled loop takes the first places of its moving slices and pads as loop inputs, not
body constants (loop_body.py `_first_place_keys`), so that copies of it across the trips
of a loop around it have one body and inputs that count with the outer trip, and the outer
loop rolls too.  Once no loop around it rolls, an input that is still a scalar constant is
only a place the body cannot see.  That hides what an inner loop still unrolled in the body
needs to roll: in npbench symm the windowed `for i` body holds 49 copies of `for j`, whose
column places j = 0, 1, 2, ... had become 49 distinct body parameters, so the copies were
not wired alike and the body (4,000 nodes, 58 kernels) went over the compile budget.

    before:  %l = loop(%C, %trip0, 0, 1, 2, ...), body: p2 = s64[] ... dynamic-slice(%B, %r, p2)
    after:   %l = loop(%C, %trip0),               body: ... dynamic-slice(%B, %r, 2)

Each read of a folded parameter gets a constant of its own, created in the reader's place
in the body's creation order (one shared constant would join copies an inner search must
tell apart); CSE merges them after the search.  Carried inputs never fold: they change.
"""
from __future__ import annotations

import numpy as np

from ..ir import builder as B
from ..ir.graph import Graph, LoopBody, Node
from ..ir.ops import Op


def fold_constant_inputs(graph: Graph, substitute) -> Graph:
    """The graph with every loop's scalar constant invariant inputs folded into its body.
    `substitute(graph, replaced)`: loop_reroll's rewrite of loop results (id(old result)
    -> new result), which keeps creation serials."""
    loops = list({id(n.inputs[0]): n.inputs[0] for n in graph.nodes
                  if n.op is Op.LOOP_RESULT}.values())
    kept = _shared_places(loops)
    replaced: dict[int, Node] = {}
    folded: dict[int, Node] = {}
    for node in graph.nodes:
        if node.op is not Op.LOOP_RESULT:
            continue
        loop = node.inputs[0]
        if id(loop) not in folded:
            folded[id(loop)] = _folded(loop, kept.get(id(loop), set()))
        if folded[id(loop)] is not loop:
            result = Node(Op.LOOP_RESULT, (folded[id(loop)],), node.shape, node.dtype,
                          node.arg, node.loc)
            result.serial = node.serial
            replaced[id(node)] = result
    return substitute(graph, replaced) if replaced else graph


def _shared_places(loops: list[Node]) -> dict[int, set[int]]:
    """Per loop, the inputs that stay inputs: where loops share one body (the rows of a
    loop nest that did not roll around them: lenet's 4x4 maxpool2d), the constants in
    which they differ.  Folded, each loop would have a body of its own, compiled apart
    (lenet's eight 8-trip conv2d rows: eight compiles, over the compile budget)."""
    groups: dict[tuple, list[Node]] = {}
    for loop in loops:
        if len(loops) > 1:
            groups.setdefault((loop.arg.fingerprint, loop.arg.carried), []).append(loop)
    kept: dict[int, set[int]] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        differ = {k for k in range(members[0].arg.carried, len(members[0].inputs))
                  if len({_value(m.inputs[k]) for m in members}) > 1}
        for m in members:
            kept[id(m)] = differ
    return kept


def _value(node: Node):
    if _is_foldable(node):
        return ("constant", node.dtype.str, np.asarray(node.arg).item())
    return id(node)


def _static(node: Node, inputs: list[Node]) -> Node | None:
    """A dynamic slice or pad whose places all folded to constants, as the static slice or
    pad it was traced as (loop-reroll makes every place of a rolled body a loop input);
    None for anything else.  Places are clamped as the dynamic op clamps them."""
    if node.op not in (Op.DYNAMIC_SLICE, Op.DYNAMIC_PAD):
        return None
    x, places = inputs[0], inputs[1 if node.op is Op.DYNAMIC_SLICE else 2:]
    if not all(_is_foldable(p) for p in places):
        return None
    inner = node.shape if node.op is Op.DYNAMIC_SLICE else x.shape
    outer = x.shape if node.op is Op.DYNAMIC_SLICE else node.shape
    starts = [min(max(int(p.arg), 0), o - n) for p, o, n in zip(places, outer, inner)]
    if node.op is Op.DYNAMIC_SLICE:
        built = B.slice_(x, [(s, s + n, 1) for s, n in zip(starts, inner)])
    else:
        built = B.pad(x, inputs[1], [(s, o - s - n, 0) for s, o, n in zip(starts, outer, inner)])
    if built is x:
        return x
    return Node(built.op, built.inputs, built.shape, built.dtype, built.arg, node.loc)


def _is_foldable(node: Node) -> bool:
    return node.op is Op.CONSTANT and node.shape == ()


def _folded(loop: Node, kept: set[int]) -> Node:
    """The loop with its foldable inputs but `kept` inside its body (itself where none
    fold)."""
    spec: LoopBody = loop.arg
    counted = len(loop.inputs) - 1 if spec.dynamic else None     # the trip count stays
    fold = {k for k, inp in enumerate(loop.inputs)
            if k >= spec.carried and k != counted and k not in kept and _is_foldable(inp)}
    if not fold:
        return loop
    body = spec.body
    values = {id(body.params[k]): loop.inputs[k] for k in fold}
    kept = [k for k in range(len(loop.inputs)) if k not in fold]
    mapping: dict[int, Node] = {}
    for index, k in enumerate(kept):
        param = body.params[k]
        mapping[id(param)] = new = Node(Op.PARAMETER, (), param.shape, param.dtype, index,
                                        param.loc)
        new.serial = param.serial

    def read(inp: Node, serial: int) -> Node:
        if id(inp) in values:           # a constant of this reader's own
            value = values[id(inp)]
            constant = Node(Op.CONSTANT, (), value.shape, value.dtype, value.arg, value.loc)
            constant.serial = serial
            return constant
        return mapping[id(inp)]
    for node in body.nodes:
        if node.op is Op.PARAMETER:
            continue
        inputs = [read(i, node.serial) for i in node.inputs]
        if all(a is b for a, b in zip(inputs, node.inputs)):
            mapping[id(node)] = node
            continue
        static = _static(node, inputs)
        if static is inputs[0]:             # the whole operand
            mapping[id(node)] = static
            continue
        mapping[id(node)] = new = static or Node(
            node.op, inputs, node.shape, node.dtype, node.arg, node.loc)
        new.serial = node.serial
    outputs = [read(o, o.serial) for o in body.outputs]
    new_body = Graph([mapping[id(body.params[k])] for k in kept], outputs, body.name)
    new_loop = B.loop([loop.inputs[k] for k in kept],
                      LoopBody(spec.trips, spec.carried, new_body, spec.dynamic), loop.loc)
    new_loop.serial = loop.serial
    return new_loop
