"""all-reduce-combiner: pack a program's all-reduces of one dtype and kind into one.

Like XLA's AllReduceCombiner and Horovod's tensor fusion: one collective per step instead
of one per gradient array, so the per-call latency is paid once.

    before                                   after
      %7 = all-reduce(%3), arg='mean'          %9  = reshape(%3)  : f32[300]
      %8 = all-reduce(%5), arg='mean'          %10 = reshape(%5)  : f32[10]
                                               %11 = concatenate(%9, %10), arg=0
                                               %12 = all-reduce(%11), arg='mean'
                                               %13 = slice(%12) ... %7' = reshape(%13)

Precondition: none.  Only all-reduces that do not depend on one another are packed
together (the combined one would otherwise wait for itself), and a bucket closes at the
byte threshold (`--xla_allreduce_combine_threshold_bytes` in XLANB_FLAGS, default 32 MiB).  Cost: one copy into the packed buffer and one out of it; the slices usually fuse
into their consumers.
"""
from __future__ import annotations

from ..ir import Graph, Node, Op, with_inputs
from ..ir import builder as B
from .. import flags
from .pipeline import register_pass

COMBINE_THRESHOLD_BYTES = 32 * 1024 * 1024


def _all_reduce_ancestors(graph: Graph) -> dict[int, set[int]]:
    """id(node) -> ids of the all-reduce nodes it depends on (itself excluded)."""
    above: dict[int, set[int]] = {}
    for node in graph.nodes:
        deps: set[int] = set()
        for inp in node.inputs:
            deps |= above[id(inp)]
            if inp.op is Op.ALL_REDUCE:
                deps.add(id(inp))
        above[id(node)] = deps
    return above


def plan_buckets(graph: Graph, threshold: int) -> list[list[Node]]:
    """Groups of independent all-reduces (same dtype and kind), each within `threshold`."""
    above = _all_reduce_ancestors(graph)
    buckets: list[list[Node]] = []
    open_buckets: dict[tuple, list[Node]] = {}
    for node in graph.nodes:
        if node.op is not Op.ALL_REDUCE:
            continue
        key = (node.dtype.str, node.arg)
        bucket = open_buckets.get(key)
        fits = bucket is not None and \
            sum(n.nbytes for n in bucket) + node.nbytes <= threshold and \
            not any(id(member) in above[id(node)] for member in bucket)
        if not fits:
            bucket = open_buckets[key] = []
            buckets.append(bucket)
        bucket.append(node)
    return [b for b in buckets if len(b) > 1]


def combine_all_reduces(graph: Graph, threshold: int = COMBINE_THRESHOLD_BYTES) -> Graph:
    buckets = plan_buckets(graph, threshold)
    if not buckets:
        return graph
    bucket_of = {id(n): (number, bucket) for number, bucket in enumerate(buckets)
                 for n in bucket}
    rewritten: dict[int, Node] = {}
    packed: dict[int, Node] = {}
    for node in _order_with_buckets(graph, bucket_of):
        inputs = [rewritten[id(i)] for i in node.inputs]
        if id(node) not in bucket_of:
            rewritten[id(node)] = with_inputs(node, inputs)
            continue
        number, bucket = bucket_of[id(node)]
        if number not in packed:
            packed[number] = _packed_all_reduce(
                bucket, [rewritten[id(member.inputs[0])] for member in bucket])
        offset = sum(member.size for member in bucket[:bucket.index(node)])
        with B.location(node.loc):
            flat = B.slice_(packed[number], [(offset, offset + node.size, 1)])
            rewritten[id(node)] = B.reshape(flat, node.shape)
    return Graph([rewritten[id(p)] for p in graph.params],
                 [rewritten[id(o)] for o in graph.outputs], graph.name)


def _order_with_buckets(graph: Graph, bucket_of) -> list[Node]:
    """Topological order in which every member of a bucket comes after all the bucket's
    operands (the packed all-reduce needs them all)."""
    def deps(node: Node):
        if id(node) in bucket_of:
            return [m.inputs[0] for m in bucket_of[id(node)][1]] + list(node.inputs)
        return node.inputs
    order, done = [], set()
    for root in graph.params + graph.outputs:
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                if id(node) not in done:
                    done.add(id(node))
                    order.append(node)
                continue
            if id(node) in done:
                continue
            stack.append((node, True))
            stack.extend((d, False) for d in reversed(list(deps(node))) if id(d) not in done)
    return order


def _packed_all_reduce(bucket: list[Node], operands: list[Node]) -> Node:
    with B.location(bucket[0].loc):
        flats = [B.reshape(x, (x.size,)) for x in operands]
        return B.all_reduce(B.concatenate(flats, 0), bucket[0].arg)


@register_pass("all-reduce-combiner")
def all_reduce_combiner(graph: Graph) -> Graph:
    return combine_all_reduces(graph, flags.current().xla_allreduce_combine_threshold_bytes)
