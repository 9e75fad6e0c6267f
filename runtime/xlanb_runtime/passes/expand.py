"""`expand-short-dots`: a dot summing at most SHORT_CONTRACTION products, into at least
MIN_OUTPUTS elements, becomes those products, elementwise, so that it fuses; a batch of
inner or matrix-vector products (no free dimensions on a side) becomes a sum of products
(`batched_vector_products`).

    %2 = dot(%0, %1), arg=((0,), (0,), (2,), (1,)) : f64[N,3,3]     (a batch of 3x3 matmuls)
      ->
    %2 = add(add(mul(a0, b0), mul(a1, b1)), mul(a2, b2)) : f64[N,3,3]
         where ak = broadcast(a[:, :, k]) and bk = broadcast(b[:, k, :])

A BLAS call per such dot costs more than the multiply-adds it does (NumPy's matmul of
20000 4x4 matrices: 0.5 ms; the products fused: about 0.3), and its output makes a round
trip through memory before the bias, activation or power that follows.  Batches of 3x3 or
4x4 matmuls, points times a rotation, RGB weights and outer products are all such dots.

Unlike the optimize pipeline's passes this one grows the graph (K products and K - 1 sums
per dot): it runs after that pipeline, as a lowering before fusion (compiler.py), followed
by simplify and cse so that slices of constants fold.  The sum runs in order k = 0, 1, ...
as a naive loop does: the result differs from BLAS's by rounding only.
Precondition: none.  Cost: each output element reads 2K operand elements (BLAS: the same,
from cache); K <= 4 keeps that cheap.
"""
from __future__ import annotations

import numpy as np

from ..ir import Graph, Node
from ..ir.graph import rebuild, with_inputs
from ..ir import builder as B
from ..ir.ops import Op
from .pipeline import register_pass
from .simplify import Rules, pat, rewrite, var

LOWERING_PIPELINE = (
    "half-as-float32",    # float16 computed in float32, rounded per op (no f16 in kernels)
    "dot-of-broadcast",   # operands broadcast along batch dims contract before the broadcast
    "expand-short-dots",  # dots over k <= 4 as fusible sums of products
    "gemv-as-reduce",     # inner products, and gemvs of a matrix computed for them: reduces
    "simplify",           # slices of constant weights become scalar splats
    "cse",                # the expanded slices of one operand are shared
)


SHORT_CONTRACTION = 4       # a dot summing at most this many products becomes elementwise
# ... when it has at least this many outputs.  A smaller one stays NumPy's BLAS call: its
# output's round trip is in cache, the call's cost is a microsecond, and its result stays
# NumPy's to the last bit (trace(A @ B - B @ A) of 4x4 matrices is 0 or -2e-16 depending on
# the order of the sums, and a comparison relative to that is meaningless).
MIN_OUTPUTS = 4096


def dot_as_products(node: Node, a: Node, b: Node) -> Node | None:
    """A dot whose contraction is at most SHORT_CONTRACTION long as the sum of its products,
    `a[..., 0] * b[0, ...] + a[..., 1] * b[1, ...] + ...` over broadcasts: elementwise,
    so it fuses with its producers and consumers (a batch of 3x3 or 4x4 matmuls, points
    times a 3x3 rotation, RGB weights, an outer product).  A BLAS call per such product
    costs more than the multiply-adds it does, and its output makes a round trip
    through memory.  Summed in order k = 0, 1, ..., as a naive loop does."""
    lb, rb, lc, rc = node.arg
    length = int(np.prod([a.shape[d] for d in lc], dtype=np.int64))
    if not 1 <= length <= SHORT_CONTRACTION or node.size < MIN_OUTPUTS or \
            node.dtype.kind not in "iufc":
        return None
    nb = len(lb)
    lfree = [d for d in range(a.ndim) if d not in lb + lc]
    rfree = [d for d in range(b.ndim) if d not in rb + rc]
    lhs = B.transpose(a, list(lb) + lfree + list(lc))      # (batch, free, contracted)
    rhs = B.transpose(b, list(rb) + rfree + list(rc))
    lhs = B.reshape(lhs, lhs.shape[:a.ndim - len(lc)] + (length,))
    rhs = B.reshape(rhs, rhs.shape[:b.ndim - len(rc)] + (length,))
    lhs_dims = tuple(range(nb + len(lfree)))
    rhs_dims = tuple(range(nb)) + tuple(range(nb + len(lfree), node.ndim))
    total = None
    for k in range(length):
        terms = []
        for operand, dims in ((lhs, lhs_dims), (rhs, rhs_dims)):
            specs = [(0, n, 1) for n in operand.shape[:-1]] + [(k, k + 1, 1)]
            column = B.reshape(B.slice_(operand, specs), operand.shape[:-1])
            terms.append(B.broadcast(column, node.shape, dims))
        product = B.binary(Op.MUL, *terms)
        total = product if total is None else B.binary(Op.ADD, total, product)
    return total


def batched_vector_products(node: Node, a: Node, b: Node) -> Node | None:
    """A dot with a batch and no free dimensions on one side (`einsum('ij,ij->i')`, the
    row-wise dot products of two matrices; `einsum('bij,bj->bi')`, a batch of
    matrix-vector products) as the sum of the elementwise products over the contracted
    axes: a reduce kernel streams the operands once and fuses with what computes them,
    where BLAS makes one call per batch element (1e5 rows of 16 float64: 0.98 ms, NumPy's
    einsum 0.93, the reduce 0.92).  Summed as a reduce sums, which differs from BLAS's
    order by rounding only."""
    lb, rb, lc, rc = node.arg
    lfree = [d for d in range(a.ndim) if d not in lb + lc]
    rfree = [d for d in range(b.ndim) if d not in rb + rc]
    if not lb or (lfree and rfree) or node.size < 2 or node.dtype.kind not in "iufc" or \
            not a.dtype == b.dtype == node.dtype:
        return None
    nb, nc = len(lb), len(lc)
    lhs = B.transpose(a, list(lb) + lfree + list(lc))     # (batch, free, contracted)
    rhs = B.transpose(b, list(rb) + rfree + list(rc))
    shape = tuple(node.shape) + tuple(lhs.shape[lhs.ndim - nc:])
    vector_dims = list(range(nb)) + list(range(len(shape) - nc, len(shape)))
    if rfree:
        lhs = B.broadcast(lhs, shape, vector_dims)
    elif lfree:
        rhs = B.broadcast(rhs, shape, vector_dims)
    return B.reduce(B.binary(Op.MUL, lhs, rhs), "sum", tuple(range(len(shape) - nc, len(shape))))


EXPAND_RULES = Rules([
    (pat(Op.DOT, var("a"), var("b")), dot_as_products),        # dot over k<=4 -> sum a_k*b_k
    (pat(Op.DOT, var("a"), var("b")), batched_vector_products),  # 'bij,bj->bi' -> reduce
])


@register_pass("expand-short-dots")
def expand_short_dots(graph: Graph) -> Graph:
    """Every dot with a contraction of at most SHORT_CONTRACTION as its sum of products,
    every batch of inner or matrix-vector products as a reduce."""
    return rewrite(graph, EXPAND_RULES)


def _computed(operand: Node) -> bool:
    """Computed elementwise: a kernel could compute it as a reduce sweeps it."""
    from .fusion import is_loop_fusible        # fusion imports the pipeline: import late
    return operand.op not in (Op.PARAMETER, Op.CONSTANT, Op.BROADCAST, Op.TRANSPOSE) and \
        is_loop_fusible(operand)


def computed_matrix_gemvs(graph: Graph) -> set[int]:
    """ids of the matrix-vector dots whose matrix is computed elementwise for that dot
    alone (`alpha * A @ x`, `np.exp(S) @ v`): written out, the operand costs a write and
    a read of its whole size, more than the product itself reads.  And of every float
    inner product of a computed vector: as a reduce it fuses with the kernel computing it
    (`np.dot(x, np.roll(y, 1))`, `r @ r` beside `r = r - alpha * Ap`), where BLAS's dot
    is one more call and, on a (1, n) @ (n, 1) view, a GEMM's set-up (conjugate
    gradient on 500: three calls per iteration)."""
    users: dict[int, int] = {}
    for node in graph.nodes:
        for inp in node.inputs:
            users[id(inp)] = users.get(id(inp), 0) + 1
    outputs = {id(o) for o in graph.outputs}
    found = set()
    for node in graph.nodes:
        if node.op is not Op.DOT or node.dtype not in (np.float32, np.float64):
            continue
        lb, rb, lc, rc = node.arg
        a, b = node.inputs
        if lb or rb or sorted((a.ndim, b.ndim)) not in ([1, 2], [1, 1]) or \
                a.shape[lc[0]] <= SHORT_CONTRACTION:
            continue
        if a.ndim == b.ndim:                    # an inner product
            if _computed(a) or _computed(b):
                found.add(id(node))
            continue
        operand = a if a.ndim == 2 else b
        if _computed(operand) and users.get(id(operand)) == 1 and id(operand) not in outputs:
            found.add(id(node))
    return found


def gemv_as_reduce(node: Node, a: Node, b: Node) -> Node:
    """`M @ v` (or `v @ M`) as sum(M * v, axis=k), `u @ v` as sum(u * v): one reduce
    kernel that computes M's (or u's) elements as it sweeps them, instead of M written out
    and read back by BLAS gemv (or dot).
    Summed with the reduce kernels' order (vectorized partial sums): the result differs
    from BLAS's by rounding only; each product rounds as NumPy's own `M * v` would."""
    _, _, lc, rc = node.arg
    if a.ndim == b.ndim == 1:                   # an inner product: sum(a * b)
        return B.reduce(B.binary(Op.MUL, a, b), "sum", (0,))
    matrix, vector, axis = (a, b, lc[0]) if a.ndim == 2 else (b, a, rc[0])
    spread = B.broadcast(vector, matrix.shape, (axis,))
    return B.reduce(B.binary(Op.MUL, matrix, spread), "sum", (axis,))


@register_pass("gemv-as-reduce")
def gemv_as_reduce_pass(graph: Graph) -> Graph:
    """Matrix-vector dots whose matrix is computed for them alone, and inner products of
    such a vector, as reduces that fuse its computation (`computed_matrix_gemvs`)."""
    targets = computed_matrix_gemvs(graph)
    if not targets:
        return graph

    def rewrite_target(node: Node, inputs) -> Node:
        # the targets are nodes of `graph`: a dot after a rewritten one is a new node
        new = with_inputs(node, inputs)
        return gemv_as_reduce(new, *new.inputs) if id(node) in targets else new
    return rebuild(graph, rewrite_target)
