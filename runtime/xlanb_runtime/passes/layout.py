"""`layout`: transpose folding (XLA's TransposeFolding plus layout canonicalization).

A transpose moves every element; most of its consumers can read the untransposed operand
instead.  Folding it into the consumer's dimension numbers saves a full copy:

    %0 = parameter(), arg=0 : f32[64,32]           %0 = parameter(), arg=0 : f32[64,32]
    %1 = parameter(), arg=1 : f32[64,16]           %1 = parameter(), arg=1 : f32[64,16]
    %2 = transpose(%0), arg=(1, 0) : f32[32,64]    %2 = dot(%0, %1),
    %3 = dot(%2, %1),                        ->         arg=((), (), (0,), (0,)) : f32[32,16]
         arg=((), (), (1,), (0,)) : f32[32,16]     %3 = reduce(%0), arg=('sum', (0,)) : f32[32]
    %4 = reduce(%2), arg=('sum', (1,)) : f32[32]   return (%2, %3)
    return (%3, %4)

Rules (the LAYOUT table):
  * transpose(transpose(x)) becomes one transpose (an identity one disappears);
  * transpose(broadcast(x)) becomes a broadcast when x's dims keep their order (always for
    a scalar splat);
  * dot(transpose(a), b) becomes dot(a, b) with remapped batch/contracting dims, but only
    when the transposed operand's free dims keep their relative order: the output order
    (batch, lhs free, rhs free) must not change.  Same for the rhs;
  * reduce / arg-reduce of transpose(x) reduce x over the remapped axes; when the kept dims
    come out in another order a transpose of the (smaller) result restores it;
  * an elementwise op of transposes (one permutation) and broadcasts computes on the
    untransposed operands, and the transpose moves to its result, towards a consumer
    that folds it;
  * a reshape of a transpose that only adds or drops size-1 dims (keepdims) is a
    transpose of the operand so reshaped;
  * a slice, reverse, pad, scan, concatenate (of transposes by one permutation) and a
    sort or partition along an axis of a transpose work on the untransposed operand over
    the remapped dims, and the transpose moves to the result the same way.  Where it
    reaches an output, the program returns a transpose of its buffer as a view: the
    memory order NumPy gives the result of these ops on a Fortran-ordered or transposed
    array (np.cumsum, np.sort, np.diff, np.roll, np.concatenate of `x.T` follow `x`'s
    memory order), with no relayout copy; a kernel writing it in C order read the input
    across its memory order.
Before the table runs, a dot read only through a transpose whose innermost dim is the dot's
lhs free dim swaps its operands (dot(a, b) = transpose(dot(b, a))): the two transposes
compose and the consumer reads rows instead of columns.  Autodiff makes these: the
gradient of k in `q @ k.T` comes out as (q^T dscores)^T.

Precondition: none.  Cost: never adds work; a dot over a transposed operand reads it with
strides, which BLAS and einsum handle without a copy.  Sums over a different memory order
may round differently (NumPy's pairwise summation follows the layout).
"""
from __future__ import annotations

from ..ir import Graph, Node, rebuild, with_inputs
from ..ir import builder as B
from ..ir.ops import ELEMENTWISE, Op
from .pipeline import register_pass
from .simplify import Pat, Rules, compose_transposes, pat, rewrite, var


def _inverse(perm: tuple[int, ...]) -> list[int]:
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return inverse


def transpose_broadcast(node: Node, b: Node, x: Node) -> Node | None:
    dims = [_inverse(node.arg)[d] for d in b.arg]      # where each x dim ends up
    return B.broadcast(x, node.shape, dims) if dims == sorted(dims) else None


def _fold_operand(perm, batch, contract, ndim):
    """The dot dims on the transpose's input, or None if its free dims would reorder."""
    free = [perm[d] for d in range(ndim) if d not in batch + contract]
    if free != sorted(free):
        return None
    return tuple(perm[d] for d in batch), tuple(perm[d] for d in contract)


def fold_lhs_transpose(node: Node, t: Node, a: Node, b: Node) -> Node | None:
    lb, rb, lc, rc = (tuple(d) for d in node.arg)
    folded = _fold_operand(t.arg, lb, lc, t.ndim)
    return None if folded is None else B.dot(a, b, folded[0], rb, folded[1], rc)


def fold_rhs_transpose(node: Node, a: Node, t: Node, b: Node) -> Node | None:
    lb, rb, lc, rc = (tuple(d) for d in node.arg)
    folded = _fold_operand(t.arg, rb, rc, t.ndim)
    return None if folded is None else B.dot(a, b, lb, folded[0], lc, folded[1])


def _restore_order(reduced: Node, kept: list[int]) -> Node:
    """`reduced` has x's kept dims in ascending order; transpose them into `kept` order."""
    ascending = sorted(kept)
    return B.transpose(reduced, [ascending.index(d) for d in kept])


def reduce_of_transpose(node: Node, t: Node, x: Node) -> Node:
    kind, axes = node.arg
    kept = [t.arg[d] for d in range(t.ndim) if d not in axes]
    return _restore_order(B.reduce(x, kind, [t.arg[a] for a in axes]), kept)


def argreduce_of_transpose(node: Node, t: Node, x: Node) -> Node:
    kind, axis = node.arg
    kept = [t.arg[d] for d in range(t.ndim) if d != axis]
    return _restore_order(B.argreduce(x, kind, t.arg[axis]), kept)


def _broadcast_untransposed(b: Node, perm, shape: tuple) -> Node | None:
    """`b` (a broadcast into the transposed shape) as a broadcast into `shape`, the
    untransposed one, or None where its operand's dims would have to reorder.  Size-1
    dims the broadcast stretches are dropped first (a column's (n, 1) mean); a transpose
    the broadcast reads is folded into its dims (`x - x.mean(axis=0)` of a Fortran-ordered
    x: the mean comes out of the folded reduce transposed)."""
    x, dims = b.inputs[0], b.arg
    if x.op is Op.TRANSPOSE:        # x's dim i is its operand's dim x.arg[i]
        inverse = _inverse(x.arg)
        x, dims = x.inputs[0], [dims[inverse[j]] for j in range(x.ndim)]
    kept = [i for i in range(x.ndim) if not (x.shape[i] == 1 and b.shape[dims[i]] != 1)]
    moved = [perm[dims[i]] for i in kept]
    if moved != sorted(moved):
        return None
    if len(kept) < x.ndim:
        x = B.reshape(x, [x.shape[i] for i in kept])
    return B.broadcast(x, shape, moved)


def elementwise_of_transposes(node: Node) -> Node | None:
    """op(x^T, y^T, broadcast) as (op(x, y, broadcast'))^T: the transpose sinks to the
    consumer, where a dot or a reduce folds it into its dims (np.cov's `X.T - mean`,
    then `X @ X.T`: the centred data in X's own layout, one BLAS call reading it
    transposed, instead of a transposing copy).  Every operand a transpose by the same
    permutation or a broadcast that maps onto the untransposed shape, else None."""
    perms = {tuple(o.arg) for o in node.inputs if o.op is Op.TRANSPOSE}
    if len(perms) != 1:
        return None
    (perm,) = perms
    inverse = _inverse(perm)
    shape = tuple(node.shape[inverse[d]] for d in range(node.ndim))
    operands = []
    for operand in node.inputs:
        if operand.op is Op.TRANSPOSE:
            operands.append(operand.inputs[0])
        elif operand.op is Op.BROADCAST:
            moved = _broadcast_untransposed(operand, perm, shape)
            if moved is None:
                return None
            operands.append(moved)
        else:
            return None
    inner = Node(node.op, tuple(operands), shape, node.dtype, node.arg, node.loc)
    return B.transpose(inner, perm)


def _untransposed(t: Node, per_dim) -> list:
    """`per_dim` (one entry per dim of `t`, a transpose) as entries of t's operand's dims."""
    moved = [None] * t.ndim
    for d, entry in enumerate(per_dim):
        moved[t.arg[d]] = entry
    return moved


def reshape_of_transpose(node: Node, t: Node, x: Node) -> Node | None:
    """reshape(x^T) adding or dropping size-1 dims only: x without its size-1 dims, then
    the reshape's size-1 dims last, transposed into the reshape's order."""
    longs = [d for d in range(t.ndim) if t.shape[d] != 1]
    if [t.shape[d] for d in longs] != [n for n in node.shape if n != 1]:
        return None
    own = [e for e in range(x.ndim) if x.shape[e] != 1]
    units = iter(range(len(own), node.ndim))
    moved = iter(own.index(t.arg[d]) for d in longs)
    perm = [next(units) if n == 1 else next(moved) for n in node.shape]
    squeezed = B.reshape(x, [x.shape[e] for e in own] + [1] * (node.ndim - len(own)))
    return B.transpose(squeezed, perm)


def slice_of_transpose(node: Node, t: Node, x: Node) -> Node:
    return B.transpose(B.slice_(x, _untransposed(t, node.arg)), t.arg)


def reverse_of_transpose(node: Node, t: Node, x: Node) -> Node:
    return B.transpose(B.reverse(x, [t.arg[a] for a in node.arg]), t.arg)


def pad_of_transpose(node: Node, t: Node, x: Node, value: Node) -> Node:
    return B.transpose(B.pad(x, value, _untransposed(t, node.arg)), t.arg)


def scan_of_transpose(node: Node, t: Node, x: Node) -> Node:
    kind, axis = node.arg
    return B.transpose(B.scan(x, kind, t.arg[axis]), t.arg)


def concatenate_of_transposes(node: Node) -> Node | None:
    perms = {tuple(o.arg) if o.op is Op.TRANSPOSE else None for o in node.inputs}
    if len(perms) != 1 or None in perms:
        return None
    (perm,) = perms
    return B.transpose(B.concatenate([o.inputs[0] for o in node.inputs], perm[node.arg]), perm)


_SORTS_ALONG_AXIS = ("np.sort", "np.partition")


def sort_of_transpose(node: Node, t: Node, x: Node) -> Node | None:
    name, params = node.arg
    params = dict(params)
    if name not in _SORTS_ALONG_AXIS or params.get("axis") is None:
        return None
    params["axis"] = t.arg[params["axis"]]
    return B.transpose(B.library_call(name, [x], params), t.arg)


LAYOUT = Rules([
    (pat(Op.TRANSPOSE, pat(Op.TRANSPOSE, var("x"), name="inner")),
     compose_transposes),                                   # transpose(transpose(x, p), q)
    #                                                         -> transpose(x, p[q])
    (pat(Op.TRANSPOSE, pat(Op.BROADCAST, var("x"), name="b")),
     transpose_broadcast),                                  # transpose(bcast(x)) -> bcast(x)
    (pat(Op.DOT, pat(Op.TRANSPOSE, var("a"), name="t"), var("b")),
     fold_lhs_transpose),                                   # dot(a^T, b) -> dot(a, b; dims')
    (pat(Op.DOT, var("a"), pat(Op.TRANSPOSE, var("b"), name="t")),
     fold_rhs_transpose),                                   # dot(a, b^T) -> dot(a, b; dims')
    (pat(Op.REDUCE, pat(Op.TRANSPOSE, var("x"), name="t")),
     reduce_of_transpose),                                  # reduce(x^T, axes) ->
    #                                                         [transpose](reduce(x, p[axes]))
    (pat(Op.ARGREDUCE, pat(Op.TRANSPOSE, var("x"), name="t")),
     argreduce_of_transpose),                               # argmax(x^T, a) -> [transpose]
    #                                                         (argmax(x, p[a]))
    (Pat(ELEMENTWISE), elementwise_of_transposes),          # op(x^T, bcast) ->
    #                                                         op(x, bcast')^T
    (pat(Op.RESHAPE, pat(Op.TRANSPOSE, var("x"), name="t")),
     reshape_of_transpose),                                 # reshape(x^T) (size-1 dims) ->
    #                                                         reshape(x)^T
    (pat(Op.SLICE, pat(Op.TRANSPOSE, var("x"), name="t")),
     slice_of_transpose),                                   # slice(x^T) -> slice(x)^T
    (pat(Op.REVERSE, pat(Op.TRANSPOSE, var("x"), name="t")),
     reverse_of_transpose),                                 # reverse(x^T) -> reverse(x)^T
    (pat(Op.PAD, pat(Op.TRANSPOSE, var("x"), name="t"), var("value")),
     pad_of_transpose),                                     # pad(x^T) -> pad(x)^T
    (pat(Op.SCAN, pat(Op.TRANSPOSE, var("x"), name="t")),
     scan_of_transpose),                                    # cumsum(x^T) -> cumsum(x)^T
    (Pat(frozenset([Op.CONCATENATE])), concatenate_of_transposes),  # concat(x^T, y^T)
    #                                                         -> concat(x, y)^T
    (pat(Op.LIBRARY_CALL, pat(Op.TRANSPOSE, var("x"), name="t")),
     sort_of_transpose),                                    # sort(x^T, a) -> sort(x, p[a])^T
])


def _reads_lhs_free_innermost(dot: Node, consumer: Node) -> bool:
    lb, rb, lc, rc = dot.arg
    lhs, rhs = dot.inputs
    n_lfree = lhs.ndim - len(lb) - len(lc)
    n_rfree = rhs.ndim - len(rb) - len(rc)
    return (consumer.op is Op.TRANSPOSE and n_lfree > 0 and n_rfree > 0
            and consumer.arg[-1] == len(lb) + n_lfree - 1)


def swapped_dot(dot: Node, inputs) -> Node:
    """dot(a, b) as transpose(dot(b, a)): the same values, rhs free dims first."""
    lb, rb, lc, rc = dot.arg
    lhs, rhs = inputs
    nb = len(lb)
    n_lfree, n_rfree = lhs.ndim - nb - len(lc), rhs.ndim - nb - len(rc)
    swapped = B.dot(rhs, lhs, rb, lb, rc, lc)
    return B.transpose(swapped, list(range(nb)) + [nb + n_rfree + i for i in range(n_lfree)]
                       + [nb + j for j in range(n_rfree)])


def swap_dots_read_transposed(graph: Graph) -> Graph:
    users = graph.users()
    outputs = {id(o) for o in graph.outputs}
    swap = {id(n) for n in graph.nodes if n.op is Op.DOT and id(n) not in outputs
            and len(users[id(n)]) == 1 and _reads_lhs_free_innermost(n, users[id(n)][0])}

    def apply(node: Node, inputs) -> Node:
        if id(node) in swap:
            with B.location(node.loc):
                return swapped_dot(node, inputs)
        return with_inputs(node, inputs)
    return rebuild(graph, apply) if swap else graph


@register_pass("layout")
def fold_transposes(graph: Graph) -> Graph:
    """Swap dots read through a transpose, then fold transposes into their consumers
    (the LAYOUT table)."""
    return rewrite(swap_dots_read_transposed(graph), LAYOUT)
