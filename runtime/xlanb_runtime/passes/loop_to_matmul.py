"""`loop-to-matmul`: a traced loop whose trip i writes row i and/or column i of one matrix
product, over a window of columns that moves with i, becomes that product (one BLAS GEMM
through the `dot` node) and one masked write.

npbench covariance (correlation is alike, its windows one column further right):

    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)

traces as M trips of a vector-by-matrix dot (NumPy's GEMV, each over the trip's columns:
memory-bound, and unrolled 11,000 ops at M = 500) and two writes, each a select over a pad:

    before, per trip i (w = M - i):
      %d_i  = dot(reshape(slice(%data, cols i:i+1)), slice(%data, cols i:M))  : f[w]
      %x_i  = divide(%d_i, broadcast(c))                                       : f[w]
      %c_i  = select(pad(true[w,1] at (i, i)), pad(reshape(%x_i) at (i, i)), %r_{i-1})
      %r_i  = select(pad(true[1,w] at (i, i)), pad(reshape(%x_i) at (i, i)), %c_i)
    after:
      %g    = dot(%data, %data) contracting dim 0     : f[M,M]   (data.T @ data)
      %x    = divide(%g, broadcast(c))                : f[M,M]
      %r    = select(q >= p, %x, select(p > q, transpose(%x), %r_before))

Each write places element j of its trip's dot, `G[c, lo + j]` of G = A.T @ B (the vector
column c of A, the window columns lo.. of B), at (row, column) of the array: a row write
at (c, lo + j), a column write at (lo + j, c).  The pass checks that every write of a run is
one of the two (else the run ends there), that all read the same A and B nodes (so no trip
reads what an earlier trip wrote: the trace would give it a newer node) and apply the same
elementwise steps with the same scalar constants, then paints which write each element
saw last, in trip order (covariance writes its diagonal twice per trip: the row write
wins, with the same value), and rewrites only when the elements written by row writes and
those written by column writes each form a triangle-in-a-box, `lo_r <= p < hi_r,
lo_c <= q < hi_c, +-(q - p) >= d` (the bounds that cut nothing dropped), checked element
by element against the painting; the masks are then compares of iotas, fused into the
write.  Elements no trip writes keep the array's value before the loop.  Anything else, or
a run whose intermediate array something else reads, stays as traced; runs of fewer than
MIN_WRITES writes, or whose dots cover under MIN_COVERED of the product, too.  Run before
loop-reroll (compiler._reroll), on the trace.

Cost: the product computes all of A.T @ B, where the trips computed their windows (half
of it over a triangle): twice the flops at GEMM speed instead of GEMV speed.  Measured (one
core, npbench bench_npbench.py, paired NumPy/xlanb): preset S (M 500, N 600) correlation
2.7-3.2x, covariance 2.9-3.0x (before: over the op budget, run eagerly, 1.0x); preset M
(1400 x 1800) 6.5x and 7.3x.  Floating point:
the GEMM sums each element's N terms in BLAS's blocked order, not the GEMV's, so a result
may differ from NumPy's in the last bits (as NumPy's own BLAS calls differ between
sizes): within the dtype's rounding, never a different formula.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import builder as B
from ..ir.graph import Graph, Node
from ..ir.ops import BINARY, Op, UNARY

MIN_WRITES = 4          # fewer writes stay as traced (each is one BLAS call already)
MIN_COVERED = 0.25      # the share of the product the trips' dots must cover
MAX_STEPS = 8           # elementwise steps between a trip's dot and its write


@dataclass(frozen=True)
class _Write:
    """One traced `out[rect] = f(column c of lhs @ columns start.. of rhs)`."""
    node: Node                       # select(inside, placed, previous)
    dot: Node
    lhs: Node
    rhs: Node
    steps: tuple                     # f: (op, side, constant, dtype) from the dot outward
    transposed: bool                 # a column write: out[p, q] = f(G)[q, p]
    rows: tuple[int, int]
    cols: tuple[int, int]

    @property
    def previous(self) -> Node:
        return self.node.inputs[2]

    def key(self) -> tuple:
        """What every write of one loop shares: its operands and its elementwise steps."""
        return (id(self.lhs), id(self.rhs), tuple(
            (op, side, None if c is None else (c.dtype.str, c.arg.tobytes()), dtype.str)
            for op, side, c, dtype in self.steps))


def loops_to_matmul(graph: Graph, decisions: list[str] | None = None) -> Graph:
    """The graph with each run of row/column writes of one product as that product and a
    masked write; `decisions` gets a line per rewrite."""
    while True:
        rewrite = _first_rewrite(graph, decisions)
        if rewrite is None:
            return graph
        graph = _substitute(graph, *rewrite)


def _first_rewrite(graph: Graph, decisions: list[str] | None) -> tuple[Node, Node] | None:
    """(the last write of a run, what replaces it) for the first run that rewrites.  One
    at a time: a later run may read this one's array, and the graph is rebuilt between."""
    writes = {id(n): w for n in graph.nodes
              if n.op is Op.SELECT and (w := _match_write(n)) is not None}
    if len(writes) < MIN_WRITES:
        return None
    users = graph.users()
    outputs = {id(o) for o in graph.outputs}
    for write in writes.values():
        if _continues(write, users, writes, outputs):
            continue                            # not the last write of its run
        run = _run_ending_at(write, users, writes, outputs)
        new = _rewritten(run, decisions) if len(run) >= MIN_WRITES else None
        if new is not None:
            return write.node, new
    return None


def _continues(write: _Write, users, writes, outputs) -> bool:
    """Whether the next write of the same loop reads this one's array, and only it does."""
    readers = users[id(write.node)]
    if len(readers) != 1 or id(write.node) in outputs:
        return False
    after = writes.get(id(readers[0]))
    return after is not None and after.previous is write.node and after.key() == write.key()


def _run_ending_at(last: _Write, users, writes, outputs) -> list[_Write]:
    """The writes of one loop up to `last`, in trip order."""
    run = [last]
    while True:
        before = writes.get(id(run[-1].previous))
        if before is None or not _continues(before, users, writes, outputs):
            return run[::-1]
        run.append(before)


# -- one write ---------------------------------------------------------------------------

def _match_write(node: Node) -> _Write | None:
    """`node` (a select) as a write of part of one row or column of a product, or None.
    The cheap tests first: traces hold tens of thousands of writes."""
    inside, placed, _ = node.inputs
    if node.ndim != 2 or inside.op is not Op.PAD or placed.op is not Op.PAD or \
            inside.arg != placed.arg:
        return None
    value = placed.inputs[0]
    if value.op is not Op.RESHAPE or 1 not in value.shape or \
            any(interior for _, _, interior in placed.arg):
        return None
    found = _steps_to_dot(value.inputs[0])
    operands = found and _dot_operands(found[1])
    if not operands or not _is_all(inside.inputs[0], True) or \
            not _is_all(inside.inputs[1], False):
        return None
    steps, dot = found
    lhs, column, rhs, start = operands
    (row, _, _), (col, _, _) = placed.arg
    height, width = value.shape
    along_row = (row, col) == (column, start) and height == 1
    along_column = (row, col) == (start, column) and width == 1
    if not (along_row or along_column):
        return None                 # written elsewhere than its row or column of G
    return _Write(node, dot, lhs, rhs, steps, not along_row,
                  (row, row + height), (col, col + width))


def _is_all(node: Node, value: bool) -> bool:
    """A constant (or its broadcast) whose every element is `value`."""
    if node.op is Op.BROADCAST:
        node = node.inputs[0]
    if node.op is not Op.CONSTANT or node.dtype != np.bool_:
        return False
    return bool(node.arg) is value if node.shape == () else bool(np.all(node.arg == value))


def _steps_to_dot(value: Node) -> tuple[tuple, Node] | None:
    """The elementwise steps from a dot to `value` (unary ops, binary ops with a scalar
    constant), outward, and the dot; None if `value` is anything else."""
    steps = []
    while value.op is not Op.DOT:
        if len(steps) == MAX_STEPS:
            return None
        if value.op in UNARY:
            steps.append((value.op, None, None, value.dtype))
            value = value.inputs[0]
            continue
        if value.op not in BINARY:
            return None
        side = next((k for k in (0, 1) if _scalar_constant(value.inputs[1 - k])), None)
        if side is None:
            return None
        steps.append((value.op, side, _scalar_constant(value.inputs[1 - side]), value.dtype))
        value = value.inputs[side]
    return tuple(steps[::-1]), value


def _scalar_constant(node: Node) -> Node | None:
    """The rank-0 constant that `node` broadcasts, or None."""
    if node.op is Op.BROADCAST:
        node = node.inputs[0]
    return node if node.op is Op.CONSTANT and node.shape == () else None


def _dot_operands(dot: Node) -> tuple[Node, int, Node, int] | None:
    """(A, c, B, lo) for `A[:, c] @ B[:, lo:lo + w]` (either operand order), else None."""
    if dot.arg != ((), (), (0,), (0,)) or dot.ndim != 1:
        return None
    vector, window = dot.inputs if dot.inputs[0].ndim == 1 else dot.inputs[::-1]
    if vector.ndim != 1 or window.ndim != 2 or vector.op is not Op.RESHAPE:
        return None
    column = vector.inputs[0]
    if column.op is not Op.SLICE or column.ndim != 2 or column.shape[1] != 1:
        return None
    lhs, (rows, (c, _, _)) = column.inputs[0], column.arg
    rhs, start = _columns_of(window)
    if rows != (0, lhs.shape[0], 1) or lhs.ndim != 2 or rhs.shape[0] != lhs.shape[0]:
        return None
    return lhs, c, rhs, start


def _columns_of(window: Node) -> tuple[Node, int]:
    """(B, lo) where `window` is B[:, lo:lo + w] (itself, 0 where it slices nothing)."""
    if window.op is Op.SLICE:
        (rows, (lo, _, step)), whole = window.arg, window.inputs[0]
        if rows == (0, whole.shape[0], 1) and step == 1:
            return whole, lo
    return window, 0


# -- one run of writes -------------------------------------------------------------------

def _rewritten(run: list[_Write], decisions: list[str] | None) -> Node | None:
    """The run's writes as one product and a masked write, or None where they are not
    exactly the row/column writes of a triangle of it."""
    first, last = run[0], run[-1]
    product = (first.lhs.shape[1], first.rhs.shape[1])
    shape = last.node.shape
    if any(w.transposed for w in run) and shape != product[::-1] or \
            any(not w.transposed for w in run) and shape != product:
        return None
    dots = {id(w.dot): w.dot for w in run}
    if len(dots) < 2 or sum(d.size for d in dots.values()) < MIN_COVERED * np.prod(product):
        return None
    owner = np.zeros(shape, np.int8)           # 1: a row write's, 2: a column write's
    for w in run:
        owner[w.rows[0]:w.rows[1], w.cols[0]:w.cols[1]] = 2 if w.transposed else 1
    forms = {kind: _triangle(owner == kind) for kind in (1, 2) if (owner == kind).any()}
    if any(form is None for form in forms.values()):
        return None
    with B.location(last.node.loc):
        new = _emit(first, forms, shape)
    if new.dtype != last.node.dtype:
        return None
    _place_in_order(new, last.node)
    if decisions is not None:
        n = first.lhs.shape[0]
        decisions.append(
            f"{len(dots)} trips of a vector by a moving window of columns "
            f"({len(run)} row/column writes at {last.node.loc}) became one dot "
            f"{product[0]}x{n} @ {n}x{product[1]} and a masked write; it sums each element "
            "in BLAS's GEMM order, not the trips' GEMV order (same terms, last-bit rounding)")
    return new


def _triangle(mask: np.ndarray):
    """Terms (a, b, bound), each `a * p + b * q >= bound`, whose conjunction holds for
    exactly the elements in `mask` (a box, cut by a diagonal where needed; terms that cut
    nothing dropped: none for a full mask); None where no such form fits."""
    p, q = np.indices(mask.shape, np.int32, sparse=True)
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    box = [(1, 0, rows[0]), (-1, 0, -rows[-1]), (0, 1, cols[0]), (0, -1, -cols[-1])]
    for diagonal in ([], [(-1, 1)], [(1, -1)]):             # none, q - p >= d, p - q >= d
        terms = box + [(a, b, (a * p + b * q)[mask].min()) for a, b in diagonal]
        if np.array_equal(_holds(terms, p, q, mask.shape), mask):
            for term in list(terms):                        # drop what cuts nothing
                fewer = [t for t in terms if t is not term]
                if np.array_equal(_holds(fewer, p, q, mask.shape), mask):
                    terms = fewer
            return [(a, b, int(bound)) for a, b, bound in terms]
    return None


def _holds(terms, p: np.ndarray, q: np.ndarray, shape) -> np.ndarray:
    held = np.ones(shape, bool)
    for a, b, bound in terms:
        held &= a * p + b * q >= bound
    return held


def _emit(write: _Write, forms: dict, shape: tuple[int, int]) -> Node:
    """select(row-written, f(A.T @ B), select(column-written, f(A.T @ B).T, before))."""
    value = B.dot(write.lhs, write.rhs, (), (), (0,), (0,))
    for op, side, constant, dtype in write.steps:
        if op is Op.CONVERT:
            value = B.convert(value, dtype)
        elif side is None:
            value = B.unary(op, value)
        else:
            scalar = B.broadcast(constant, value.shape, ())
            value = B.binary(op, *((value, scalar) if side == 0 else (scalar, value)))
    result = write.previous
    for kind, placed in ((2, lambda: B.transpose(value, (1, 0))), (1, lambda: value)):
        if kind in forms:
            result = B.select(_mask(forms[kind], shape), placed(), result)
    return result


def _mask(terms, shape: tuple[int, int]) -> Node:
    """The bool array where every term `a * p + b * q >= bound` holds, from iotas."""
    index = (B.iota(shape, np.int64, 0), B.iota(shape, np.int64, 1))

    def scalar(value) -> Node:
        return B.broadcast(B.constant(np.int64(value)), shape, ())

    def side(a: int, b: int) -> Node:               # a * p + b * q, a and b in -1, 0, 1
        plus = [x for c, x in zip((a, b), index) if c > 0]
        minus = [x for c, x in zip((a, b), index) if c < 0]
        if not plus:
            return B.unary(Op.NEG, minus[0])       # -p >= -r: the box's last row
        value = plus[0] if len(plus) == 1 else B.binary(Op.ADD, *plus)
        return B.binary(Op.SUB, value, minus[0]) if minus else value
    mask = None
    for a, b, bound in terms:
        term = B.binary(Op.GE, side(a, b), scalar(bound))
        mask = term if mask is None else B.binary(Op.AND, mask, term)
    return B.broadcast(B.constant(True), shape, ()) if mask is None else mask


# -- the rewrite -------------------------------------------------------------------------

def _place_in_order(new: Node, last: Node) -> None:
    """The nodes made for a run take the place of its last write in creation order (what
    loop-reroll's search reads), as loop_reroll's substitutions keep serials."""
    stack, seen = [new], set()
    while stack:
        node = stack.pop()
        if id(node) in seen or node.serial <= last.serial:
            continue                            # a node of the graph already
        seen.add(id(node))
        node.serial = last.serial
        stack.extend(node.inputs)


def _substitute(graph: Graph, old: Node, new: Node) -> Graph:
    """The graph reading `new` wherever it read `old`; rewritten nodes keep their serials."""
    mapping = {id(old): new}
    for node in graph.nodes:
        if id(node) in mapping:
            continue
        inputs = [mapping.get(id(i), i) for i in node.inputs]
        if any(a is not b for a, b in zip(inputs, node.inputs)):
            copy = Node(node.op, inputs, node.shape, node.dtype, node.arg, node.loc)
            copy.serial = node.serial
            mapping[id(node)] = copy
    return Graph([mapping.get(id(p), p) for p in graph.params],
                 [mapping.get(id(o), o) for o in graph.outputs], graph.name)
