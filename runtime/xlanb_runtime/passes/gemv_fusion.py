"""GEMV-pair fusion: `A.T @ g(A @ x)`, or `A @ x` beside `A.T @ y`, in one sweep over A,
which is then read once.

    before: 2 dot kernels, A read from memory twice          after: 1 gemv_pair kernel
      dot_fusion.0 (dot) = {%3, %4} reads (%0 A, %1 x, %2 b)    for each row i of A:
        %3 = dot(%0, %1)             : f64[m]  (A @ x)            d = A[i] . x
        %4 = subtract(%3, %2)        : f64[m]  (g)                r = g(d)  (row i of %4)
      dot_fusion.1 (dot) = {%5} reads (%0, %4)                    acc += A[i] * r   (A[i]: in L1)
        %5 = dot(%0, %4), contracting A's rows : f64[n]         %5 = epilogue(acc)

Least-squares and logistic-regression gradients (`X.T @ (X @ w - y)`,
`X.T @ (sigmoid(X @ w) - y)`) are this shape.  Two BLAS GEMVs stream A from memory twice;
here the second pass over each row reads it from L1 (least-squares gradient, 2000x1000
f64, 1 thread: 1.57 ms -> 0.88 ms).  The first dot's epilogue `g` is any elementwise
function of its row; the second dot's epilogue runs on the accumulated (n,) result.

The second dot's vector may also be independent of the first (`A @ p` and `r @ A` in a
BiCG step, mvt's `x1 += A @ y1; x2 += y2 @ A`): the sweep reads r[i] where it would have
computed g(row i).

Preconditions: both dots are plain 2-D-by-1-D float contractions of the same A, the second
reads the first kernel's output as its vector (and only its dot reads it) or a vector
neither kernel computes from the other, and nothing else the second kernel reads is
computed from the first.  Only where A is too big for the caches (MIN_MATRIX_BYTES: then
BLAS's two passes are cheap) and the accumulated row is small enough to stay in L2
(MAX_ROW_BYTES).  CPU code generation only (the planner's `row_fusion` switch).
"""
from __future__ import annotations

from ..ir import Node, Op
from .fusion import Kernel, _unique
from .row_fusion import depends_on

GEMV_PAIR = "gemv_pair"
MIN_MATRIX_BYTES = 1 << 20      # A at least 1 MB: it does not stay in L2 between the passes
MAX_ROW_BYTES = 1 << 17         # the (n,) accumulator (128 KB) stays in L2 while rows stream


def _is_gemv(dot: Node) -> bool:
    """dot(A, x): A (m, n), x (n,), float."""
    a, x = dot.inputs
    return (a.ndim == 2 and x.ndim == 1 and tuple(map(tuple, dot.arg)) == ((), (), (1,), (0,))
            and dot.dtype.kind == "f" and a.dtype == x.dtype == dot.dtype)


def transposed_gemv_operands(dot: Node) -> tuple[Node, Node] | None:
    """(A, r) for A.T @ r or r @ A (A (m, n), r (m,)): sum_i A[i, :] r[i]."""
    if dot.op is not Op.DOT or dot.dtype.kind != "f":
        return None
    lb, rb, lc, rc = dot.arg
    if lb or rb or tuple(lc) != (0,) or tuple(rc) != (0,):
        return None
    first, second = dot.inputs
    if first.ndim == 2 and second.ndim == 1:
        return first, second
    if first.ndim == 1 and second.ndim == 2:
        return second, first
    return None


def _elementwise_over(kernel: Kernel, dot: Node) -> bool:
    """Every other node of `kernel` is computed on the dot's own (vector) index space."""
    return all(n is dot or n.shape == dot.shape or n.op is Op.CONSTANT
               or (n.op is Op.BROADCAST and n.shape == dot.shape) for n in kernel.nodes) \
        and all(o.shape == dot.shape for o in kernel.outputs)


def pair_for(second: Kernel, producer: dict[int, Kernel],
             gemvs: dict[int, list[Kernel]]) -> Kernel | None:
    """The dot kernel computing `A @ x` that `second` (`A.T @ r`) fuses with: the one
    computing r (`A.T @ g(A @ x)`), else one of the same matrix that neither depends on
    the other (`A @ p, r @ A`: BiCG's step, mvt).  `gemvs` maps id(A) to the kernels whose
    dot is `A @ x`."""
    if second.kind != "dot" or second.dot is None:
        return None
    operands = transposed_gemv_operands(second.dot)
    if operands is None:
        return None
    a, r = operands
    if a.dtype != second.dot.dtype or not _elementwise_over(second, second.dot) or \
            a.nbytes < MIN_MATRIX_BYTES or a.shape[1] * a.dtype.itemsize > MAX_ROW_BYTES:
        return None
    source = producer.get(id(r))
    same_matrix = gemvs.get(id(a), [])
    if any(k is source for k in same_matrix):
        candidates = [source]
    else:
        candidates = [k for k in same_matrix if not depends_on(k, second, producer)]
    return next((first for first in candidates if first is not second and
                 _pairs_with(first, second, a, producer)), None)


def gemv_kernels(kernels: list[Kernel]) -> dict[int, list[Kernel]]:
    """id(A) -> the dot kernels computing `A @ x` (plain, A and x read from memory, an
    elementwise epilogue over the result)."""
    found: dict[int, list[Kernel]] = {}
    for kernel in kernels:
        d1 = kernel.dot if kernel.kind == "dot" else None
        if d1 is None or not _is_gemv(d1) or kernel.contains(d1.inputs[0]) or \
                kernel.contains(d1.inputs[1]) or not _elementwise_over(kernel, d1):
            continue
        found.setdefault(id(d1.inputs[0]), []).append(kernel)
    return found


def _pairs_with(first: Kernel, second: Kernel, a: Node, producer: dict) -> bool:
    """Whether the sweep can run both: nothing else the second reads is computed from the
    first, and the second's epilogue reads none of the first's values."""
    written = {id(o) for o in first.outputs}
    for inp in second.inputs:
        source = producer.get(id(inp))
        if id(inp) not in written and source is not None and \
                depends_on(source, first, producer):
            return False
    # the second epilogue runs after the sweep: a value of the first kernel read there
    # would be generated from the last row's (`s_`), not read back from its buffer
    return not any(id(i) in written for n in second.nodes if n is not second.dot
                   for i in n.inputs)


def merge_gemv_pairs(kernels: list[Kernel], producer: dict[int, Kernel],
                     index: dict[int, int]) -> list[Kernel]:
    """`kernels` with each fusible (first, second) pair replaced by one gemv_pair kernel
    (stages = [first, second]); the caller orders the result again."""
    merged: dict[int, Kernel] = {}            # id(first) -> its pair kernel
    dropped: set[int] = set()
    gemvs = gemv_kernels(kernels)
    for second in kernels:
        first = pair_for(second, producer, gemvs)
        if first is None or id(first) in merged or id(first) in dropped or \
                id(second) in merged:
            continue
        pair = Kernel("", GEMV_PAIR, second.root, stages=[first, second])
        for stage in (first, second):
            for node in stage.nodes:
                pair.nodes.append(node)
                pair.region[id(node)] = stage.region[id(node)]
                pair.direct[id(node)] = stage.direct[id(node)]
        written = {id(o) for o in first.outputs}
        pair.nodes.sort(key=lambda n: index[id(n)])
        pair.inputs = _unique(first.inputs + [i for i in second.inputs if id(i) not in written])
        pair.outputs = _unique(first.outputs + second.outputs)
        pair.consts = _unique(first.consts + second.consts)
        reads = f"reads {first.name or 'the first dot'}'s vector row by row" \
            if id(transposed_gemv_operands(second.dot)[1]) in written else \
            f"runs in {first.name or 'the first dot'}'s sweep"
        pair.decisions = [f"gemv pair: {second.dot.op.value} of the transposed matrix {reads},"
                          f" so the {'x'.join(map(str, first.dot.inputs[0].shape))} matrix "
                          "is read once"] + first.decisions + second.decisions
        for out in pair.outputs:
            producer[id(out)] = pair
        merged[id(first)] = pair
        dropped.add(id(second))
    return [merged.get(id(k), k) for k in kernels if id(k) not in dropped]
