"""`dot-of-broadcast`: a contraction whose operand is broadcast along batch dimensions
contracts the operand before its broadcast.

NumPy's matmul broadcasts batch dimensions (`(10, 1, 4, 5) @ (3, 5, 6)` is a (10, 3, 4, 6)
batch of products); traced, both operands arrive as `broadcast` nodes to the full batch
shape, which fusion would write out before the BLAS call (two 10x3 batches copied to
multiply 4x5 by 5x6 matrices: 5 us against NumPy's 3).  Along a batch dimension that one
operand is broadcast in, that operand is the same for every index: the dimension can be a
free dimension of the other operand instead, and the broadcast one drops it:

    %2 = broadcast(%0), arg=(0, 1, 2, 3) : f64[10,3,4,5]      (%0 : f64[10,1,4,5])
    %3 = broadcast(%1), arg=(1, 2, 3) : f64[10,3,5,6]         (%1 : f64[3,5,6])
    %4 = dot(%2, %3), arg=((0, 1), (0, 1), (3,), (2,)) : f64[10,3,4,6]
      ->
    %5 = reshape(%0) : f64[10,4,5]
    %6 = dot(%5, %1), arg=((), (), (2,), (1,)) : f64[10,4,3,6]
    %7 = transpose(%6), arg=(0, 2, 1, 3) : f64[10,3,4,6]

one product of a 40x5 by a 5x18 matrix, no batch written out.  A batch dimension both
operands are broadcast in is dropped from both and the result broadcast along it.  Each
output is the same sum of the same K products: the result differs from the batched one
by BLAS's rounding only.

Precondition: none.  Only broadcasts whose expanded dimensions are all batch dimensions
of the dot take part (a broadcast contracting or free dimension stays as it is).  A dot
the program returns whose result would need the transpose (NumPy's is C-ordered) is a
library call of np.matmul on the operands before their broadcasts (NumPy broadcasts them
itself, no batch written out); the common `x @ w` of a batch x and a broadcast w needs
no transpose.
"""
from __future__ import annotations

from ..ir import Graph, Node
from ..ir import builder as B
from ..ir.ops import Op
from .pipeline import register_pass
from .simplify import Rules, pat, rewrite, var


def _unbroadcast(operand: Node, batch: tuple[int, ...]) -> tuple[Node, list[int]] | None:
    """(the operand before its broadcast, reshaped to the dims it keeps; those dims of the
    operand, in order), where `operand` is a broadcast expanding only `batch` dims, else
    None."""
    if operand.op is not Op.BROADCAST:
        return None
    source, dims = operand.inputs[0], operand.arg
    kept = [d for i, d in enumerate(dims) if source.shape[i] == operand.shape[d]]
    expanded = [d for d in range(operand.ndim) if d not in kept]
    if not expanded or any(d not in batch for d in expanded):
        return None
    return B.reshape(source, [operand.shape[d] for d in kept]), kept


def dot_of_broadcast(node: Node, a: Node, b: Node, returned: bool = False) -> Node | None:
    """`node` (a dot) contracting its operands before their batch broadcasts, or None.
    A `returned` dot whose dims would change order is NumPy's own broadcasting matmul
    instead: NumPy returns it C-ordered, and the copy of a transposed result into that
    order cost more than the batches saved ((10, 1, 4, 5) @ (3, 5, 6): 12 us against 5
    with the broadcasts written out, and NumPy's 2.4)."""
    lb, rb, lc, rc = node.arg
    lhs, rhs = _unbroadcast(a, lb), _unbroadcast(b, rb)
    if lhs is None and rhs is None:
        return None
    (x, lkept), (y, rkept) = (lhs or (a, list(range(a.ndim))),
                              rhs or (b, list(range(b.ndim))))
    batches = [k for k in range(len(lb)) if lb[k] in lkept and rb[k] in rkept]
    new_dot = B.dot(x, y, [lkept.index(lb[k]) for k in batches],
                    [rkept.index(rb[k]) for k in batches],
                    [lkept.index(d) for d in lc], [rkept.index(d) for d in rc])
    # where each dim of the new dot's result goes in the original result
    lfree = [d for d in range(a.ndim) if d not in lb + lc]
    rfree = [d for d in range(b.ndim) if d not in rb + rc]

    def place(dim: int, batch: tuple, free: list[int], offset: int) -> int:
        return batch.index(dim) if dim in batch else offset + free.index(dim)
    where = batches + \
        [place(d, lb, lfree, len(lb)) for d in lkept if d not in lb and d not in lc
         or d in lb and lb.index(d) not in batches] + \
        [place(d, rb, rfree, len(lb) + len(lfree)) for d in rkept
         if d not in rb and d not in rc or d in rb and rb.index(d) not in batches]
    order = sorted(range(len(where)), key=where.__getitem__)
    if returned and order != list(range(len(order))):
        return _broadcasting_matmul(node, a, b)
    result = B.transpose(new_dot, order) if order != list(range(len(order))) else new_dot
    return B.broadcast(result, node.shape, sorted(where))


def _broadcasting_matmul(node: Node, a: Node, b: Node) -> Node | None:
    """NumPy's own np.matmul on the operands before their broadcasts (size-1 batch dims
    where they were stretched: matmul stretches them itself), for a dot in matmul's form
    (batch dims first, then (m, k) @ (k, n)); else None."""
    lb, rb, lc, rc = node.arg
    batch = tuple(range(len(lb)))
    if not (lb == rb == batch and a.ndim == b.ndim == len(batch) + 2 and
            lc == (a.ndim - 1,) and rc == (b.ndim - 2,)):
        return None
    return B.library_call("np.matmul", [_with_ones(a), _with_ones(b)])


def _with_ones(operand: Node) -> Node:
    """A broadcast operand's source, shaped with 1 along the dims it stretched."""
    if operand.op is not Op.BROADCAST:
        return operand
    source, dims = operand.inputs[0], operand.arg
    kept = {d for i, d in enumerate(dims) if source.shape[i] == operand.shape[d]}
    return B.reshape(source, [n if d in kept else 1 for d, n in enumerate(operand.shape)])


@register_pass("dot-of-broadcast")
def dot_of_broadcast_pass(graph: Graph) -> Graph:
    """Dots of operands broadcast along batch dimensions, contracted before the
    broadcast (`dot_of_broadcast`)."""
    if not any(n.op is Op.DOT and n.arg[0] and any(i.op is Op.BROADCAST for i in n.inputs)
               for n in graph.nodes):
        return graph
    returned = {id(o) for o in graph.outputs}

    def rule(node: Node, a: Node, b: Node) -> Node | None:
        return dot_of_broadcast(node, a, b, id(node) in returned)
    return rewrite(graph, Rules([(pat(Op.DOT, var("a"), var("b")), rule)]))

