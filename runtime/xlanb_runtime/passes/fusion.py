"""Fusion: groups IR nodes into kernels, XLA style, and records why each boundary is there.

    before (3 kernels op by op)              after (1 kernel)
      %3 = multiply(%1, %2)                    fusion.0 (reduce): multiply, add, reduce
      %4 = add(%0, %3)                         reads %0 %1 %2, writes %5
      %5 = reduce(%4), arg=('sum', (0,))

Kinds of kernel:
  loop    elementwise chains over one iteration space; broadcast / transpose / slice /
          reverse / unit-dim reshape are index arithmetic inside the loop, and a gather is
          a load at an index read from its indices (loop fusion).  Siblings whose values
          leave the kernel are extra outputs (multi-output fusion).
  row     stages of the kinds above that sweep the same rows, run row by row in one loop
          (row_fusion.py: softmax, layer norm).
  gemv_pair  A.T @ g(A @ x) in one sweep over A's rows (gemv_fusion.py: least-squares
          and logistic-regression gradients).
  reduce  one or more reductions with the same input space and axes; their elementwise
          producers are computed inside the reduction loop (input fusion) and elementwise
          consumers on the reduced shape run as an epilogue before the store.
  scan    one scan (cumsum, cumprod, max/min accumulate): a loop nest whose scan axis runs
          in order, carrying the running value; its elementwise producers are computed
          per element inside (cumsum(x * x) reads x once) and elementwise consumers read
          the running value as it is made (`cumsum(x) / n` writes one array).
  dot     a contraction (NumPy's matmul, i.e. its BLAS) followed by its elementwise
          epilogue (bias, activation) in one generated loop, in place when possible.
  scatter a scatter-add or a scatter: one loop writes the base (its producers fused), a
          second adds (assigns, in order) the updates (their producers fused) at the rows
          their indices name.
  library ops the code generator does not emit (a concatenate of more than 32 arrays,
          arg-reduce, reshape views, all-reduce, library calls, rolled
          loops): one call each, its reason the first of its `decisions`.  A concatenate
          of fewer is a branch per operand inside a loop kernel, and a reshape computed
          only for itself is written by its producer's loop (shape-only ops are never
          kernels that copy).

The algorithm walks nodes consumers-first.  A node that some kernel must read from memory
(or that the program returns) becomes the root of a new kernel, which then grows through
its producers, most-recent first, while `can_fuse` says yes.  `can_fuse` returns a
`Decision`; every "no", and every notable "yes", lands in the kernel's `decisions`, which
reach the compile report.  Cost: fusing a producer with users elsewhere either writes it
as an extra output (only when that cannot create a cycle) or recomputes it (only when
cheap); expensive ops behind an expanding broadcast are not recomputed.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from ..ir import Graph, Node, Op
from ..ir.ops import ELEMENTWISE, EXPENSIVE, INDEX_MAPPING
from . import cost_model

# rng-bits is computed per index; gather loads its operand at an index read from `indices`.
LOOP_FUSIBLE = ELEMENTWISE | INDEX_MAPPING | {Op.IOTA, Op.RNG_BITS, Op.GATHER,
                                              Op.DYNAMIC_SLICE}


@dataclass(frozen=True)
class Decision:
    """A fusion verdict: yes, or no with the reason users will read."""
    ok: bool
    reason: str = ""
    extra_output: bool = False          # fused, and also written out for readers outside

    @staticmethod
    def yes(reason: str = "", extra_output: bool = False) -> "Decision":
        return Decision(True, reason, extra_output)

    @staticmethod
    def no(reason: str) -> "Decision":
        return Decision(False, reason)

    def __bool__(self) -> bool:
        return self.ok


@dataclass(eq=False)
class Kernel:
    """A fusion group: what one generated function (or one library call) computes."""
    name: str
    kind: str                                   # loop | reduce | dot | library
    root: Node
    nodes: list[Node] = field(default_factory=list)      # topological order
    inputs: list[Node] = field(default_factory=list)     # buffers read
    consts: list[Node] = field(default_factory=list)     # scalar constants (kernel args)
    outputs: list[Node] = field(default_factory=list)    # buffers written
    region: dict[int, str] = field(default_factory=dict)  # id(node) -> loop | in | out
    direct: dict[int, bool] = field(default_factory=dict)  # identity-indexed in its region
    decisions: list[str] = field(default_factory=list)
    extra_outputs: list[Node] = field(default_factory=list)  # multi-output fusion
    stages: list["Kernel"] = field(default_factory=list)  # row kernels: one per sweep
    # id(node) -> index expressions the generated code computes it at (1 when absent):
    # read at shifted or permuted places by several users, a node is computed once per
    # place, and a chain of such stages multiplies (npbench stockham_fft: 15 butterfly
    # stages each reading the last at 2 places made 4,000-line kernels, minutes in Numba)
    copies: dict[int, int] = field(default_factory=dict)
    # row kernels: whole-row values only later stages read, kept in a buffer of one row
    # (row_fusion.keep_rows_local) instead of an output the size of the input
    row_locals: list[Node] = field(default_factory=list)

    def contains(self, node: Node) -> bool:
        return id(node) in self.region

    @property
    def reductions(self) -> list[Node]:
        return [n for n in self.nodes if n.op is Op.REDUCE]

    @property
    def scan(self) -> Node | None:
        return next((n for n in self.nodes if n.op is Op.SCAN), None)

    @property
    def dot(self) -> Node | None:
        return next((n for n in self.nodes if n.op is Op.DOT), None)

    @property
    def ops(self) -> list[str]:
        return [n.op.value for n in self.nodes]

    def space(self, region: str) -> tuple[int, ...]:
        """The iteration shape of a region."""
        if region == "in":
            if self.kind == "scatter":
                return self.root.inputs[2].shape
            return self.reductions[0].inputs[0].shape
        anchor = self.reductions[0] if self.kind == "reduce" else self.root
        if self.kind == "dot":
            anchor = self.dot
        return anchor.shape if region == "out" else self.root.shape

    def read_bytes(self) -> int:
        return sum(n.nbytes for n in self.inputs)

    def write_bytes(self) -> int:
        return sum(n.nbytes for n in self.outputs)

    def predicted_seconds(self) -> float:
        return cost_model.predict_seconds(self.nodes, self.read_bytes(), self.write_bytes())


@dataclass
class FusionPlan:
    graph: Graph
    kernels: list[Kernel]                       # execution order
    producer: dict[int, Kernel]                 # id(node) -> kernel that writes it

    def kernel_count(self, kinds=("loop", "reduce", "dot", "row", "gemv_pair")) -> int:
        return sum(k.kind in kinds for k in self.kernels)


def is_unit_reshape(node: Node) -> bool:
    """A reshape that only inserts or removes size-1 dims: index arithmetic, like broadcast."""
    return node.op is Op.RESHAPE and \
        [d for d in node.shape if d != 1] == [d for d in node.inputs[0].shape if d != 1]


def squeezed(shape) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)


# Ops one kernel takes at most: a kernel is one Numba function, and compiling one grows
# faster than its size (an unrolled 100-step recurrence fused into one 500-op kernel took
# 12 s, 500 steps 380 s).  XLA bounds its fusions' size for the same reason.
MAX_KERNEL_OPS = 200
# Arrays a cheap op read by other kernels too may read to be recomputed in each of them
# (else it is written once), and the nodes of its cone looked at to count them.  W5's
# layer-norm backward recomputes values of 9 to 12 reads, and keeping them fused is
# faster there (8 instead: its step 3-5% slower); a recurrence grows past any bound.
MAX_RECOMPUTE_READS = 16
RECOMPUTE_CONE_NODES = 256
# A complex op generates several real statements (a product: 4 multiplies and 2 adds, `abs`
# a hypot): 60 steps of `z = z**2 + c` on complex values made one kernel that Numba
# compiled for over 100 s.
COMPLEX_OP_SIZE = 4


def op_size(node: Node) -> int:
    """What a node counts toward MAX_KERNEL_OPS: complex arithmetic COMPLEX_OP_SIZE, any
    other op (index arithmetic included) 1."""
    return COMPLEX_OP_SIZE if node.dtype.kind == "c" and node.op in ELEMENTWISE else 1


def kernel_size(kernel: "Kernel") -> int:
    """Ops in `kernel`, a complex-valued one counting COMPLEX_OP_SIZE, each as many times
    as the generated code computes it (`Kernel.copies`)."""
    return sum(op_size(n) * kernel.copies.get(id(n), 1) for n in kernel.nodes)


def is_loop_fusible(node: Node) -> bool:
    """Computable per element of a loop: any reshape too (unit-dim ones by index renaming,
    others by splitting the flat index with constant divisors), a pad (a bounds test: how
    `x[1:-1] = v` and `x[::2] = v` write) and a concatenate of a few arrays (a branch per
    operand: np.stack of slices fuses with them instead of copying what they wrote)."""
    return node.op in LOOP_FUSIBLE or node.op is Op.RESHAPE or is_loop_pad(node) or \
        is_fusible_concatenate(node)


# Operands a fused concatenate takes at most: each is a branch in the generated source,
# and a wider one (a list built in a long Python loop) is a plain copy for NumPy.
MAX_CONCATENATE_OPERANDS = 32


def is_fusible_concatenate(node: Node) -> bool:
    return node.op is Op.CONCATENATE and len(node.inputs) <= MAX_CONCATENATE_OPERANDS


def is_loop_pad(node: Node) -> bool:
    """A pad computed per element: a bounds test, and for an interior pad (the update of a
    strided slice, `x[::2] = v`) a test of the step too."""
    return node.op in (Op.PAD, Op.DYNAMIC_PAD)


def writes_a_region(node: Node) -> bool:
    """`x[a:b] = v` lowers to select(pad(mask), pad(v), x).  Recomputing it wherever a
    stencil reads it shifted would grow with each time step a trace unrolled."""
    return is_loop_pad(node) or (node.op is Op.SELECT
                                 and any(is_loop_pad(i) for i in node.inputs))


def is_scalar_constant(node: Node) -> bool:
    return node.op is Op.CONSTANT and node.shape == ()


def kernel_kind(node: Node) -> str:
    if node.op is Op.REDUCE:
        return "reduce"
    if node.op is Op.DOT:
        return "dot"
    if node.op in (Op.SCATTER_ADD, Op.SCATTER):
        return "scatter"
    if node.op is Op.SCAN:
        return "scan"
    if node.op in LOOP_FUSIBLE or is_loop_pad(node) or is_fusible_concatenate(node):
        return "loop"
    return "library"


class _Planner:
    def __init__(self, graph: Graph, enable_fusion: bool, row_fusion: bool):
        self.graph = graph
        self.enable = enable_fusion
        self.row_fusion = row_fusion
        self.index = {id(n): i for i, n in enumerate(graph.nodes)}
        self.users = graph.users()
        self.is_output = {id(o) for o in graph.outputs}
        self.needed: set[int] = set(self.is_output)
        self.producer: dict[int, Kernel] = {}
        self.computed_in: dict[int, list[Kernel]] = {}     # node -> planned kernels with it
        self.kernels: list[Kernel] = []
        self.counts: dict[str, int] = {}

    def plan(self) -> FusionPlan:
        for node in reversed(self.graph.nodes):
            if node.op in (Op.PARAMETER, Op.CONSTANT) or id(node) in self.producer:
                continue
            if id(node) not in self.needed:
                continue
            self._build_kernel(node)
        if self.enable:
            self.kernels = merge_siblings(self.kernels, self.producer, self.index)
        ordered = _execution_order(self.kernels, self.producer, self.index)
        if self.enable and self.row_fusion:
            from .row_fusion import merge_rows      # it imports this module
            merged = merge_rows(ordered, self.producer, self.index)
            from .gemv_fusion import merge_gemv_pairs
            merged = merge_gemv_pairs(merged, self.producer, self.index)
            from .row_fusion import keep_rows_local
            keep_rows_local(merged, self.is_output)
            ordered = _execution_order(merged, self.producer, self.index)
        for kernel in ordered:
            kernel.name = self._name(kernel)
        return FusionPlan(self.graph, ordered, self.producer)

    # -- growing one kernel ------------------------------------------------------------
    def _build_kernel(self, root: Node) -> None:
        kind = kernel_kind(root)
        if kind == "library" and self._reshape_joins_producer(root):
            kind = "loop"
        if self._transposed_view(root):
            kind = "library"
        kernel = Kernel("", kind, root)
        self._add(kernel, root, region="out" if kind in ("reduce", "dot") else "loop",
                  direct=True)
        if kind == "library":
            kernel.inputs = _unique([i for i in root.inputs])
            kernel.decisions.append(library_reason(root))
        else:
            self._grow(kernel)
        kernel.nodes.sort(key=lambda n: self.index[id(n)])
        kernel.outputs = _unique([root] + kernel.extra_outputs)
        for out in kernel.outputs:
            self.producer[id(out)] = kernel
        for node in kernel.nodes:
            self.computed_in.setdefault(id(node), []).append(kernel)
        for inp in kernel.inputs:
            self.needed.add(id(inp))
        self.kernels.append(kernel)

    def _reshape_joins_producer(self, node: Node) -> bool:
        """A reshape whose operand is computed only for it: the loop computing the operand
        writes it in the new shape (one kernel), instead of writing a buffer that a view
        kernel then renames.  Any other reshape is a view of a buffer that exists anyway."""
        if node.op is not Op.RESHAPE or not self.enable:
            return False
        operand = node.inputs[0]
        return (is_loop_fusible(operand) and operand.op is not Op.IOTA
                and id(operand) not in self.is_output and id(operand) not in self.producer
                and len(self.users[id(operand)]) == 1)

    def _transposed_view(self, node: Node) -> bool:
        """A returned transpose of a computed array is a view of its buffer, as NumPy
        returns `y.T` or `np.exp(x)` of a Fortran-ordered x (a transposed argument,
        tracing/tracer.py): the operand is computed in its own order, not read across its
        rows by a transposing loop (np.exp(x) * 2 + 1 of a 1000x1000 Fortran-ordered x:
        14.9 ms, NumPy 1.6).  CPU only (row kernels on: the CUDA target keeps its copy)."""
        if node.op is not Op.TRANSPOSE or not (self.enable and self.row_fusion):
            return False
        operand = node.inputs[0]
        return (id(node) in self.is_output and not self.users[id(node)]
                and operand.op not in (Op.PARAMETER, Op.CONSTANT)
                and id(operand) not in self.is_output)   # two outputs NumPy keeps apart

    def _name(self, kernel: Kernel) -> str:
        prefix = {"loop": "fusion", "reduce": "reduce_fusion", "dot": "dot_fusion",
                  "row": "row_fusion", "scan": "scan_fusion", "gemv_pair": "gemv_fusion"}.get(
            kernel.kind, kernel.root.op.value.replace("-", "_"))
        count = self.counts.get(prefix, 0)
        self.counts[prefix] = count + 1
        return f"{prefix}.{count}"

    def _add(self, kernel: Kernel, node: Node, region: str, direct: bool) -> None:
        copies = self._copies(kernel, node, direct)
        if copies > 1:
            kernel.copies[id(node)] = copies
        kernel.region[id(node)] = region
        kernel.direct[id(node)] = direct
        kernel.nodes.append(node)

    def _copies(self, kernel: Kernel, node: Node, direct: bool) -> int:
        """How many times the kernel's code would compute `node`: once where it is read
        at the loop's own index, else once per read by each copy of its users."""
        if direct:
            return 1
        return max(1, sum(kernel.copies.get(id(user), 1) *
                          sum(1 for i in user.inputs if i is node)
                          for user in self.users[id(node)] if kernel.contains(user)))

    def _grow(self, kernel: Kernel) -> None:
        heap: list[tuple[int, int, Node]] = []
        queued: set[int] = set()

        def push_inputs(node: Node) -> None:
            if node.op is Op.DOT:              # operands of a contraction stay in memory
                kernel.inputs.extend(node.inputs)
                return
            for inp in node.inputs:
                if id(inp) not in queued:
                    queued.add(id(inp))
                    heapq.heappush(heap, (-self.index[id(inp)], id(inp), inp))

        push_inputs(kernel.root)
        while heap:
            _, _, node = heapq.heappop(heap)
            if kernel.contains(node):
                continue
            if is_scalar_constant(node):
                kernel.consts.append(node)
                continue
            placement = self._placement(kernel, node)
            decision = self._can_fuse(kernel, node, placement)
            if decision.reason:
                kernel.decisions.append(decision.reason)
            if decision:
                region, direct = placement
                if decision.extra_output:
                    kernel.extra_outputs.append(node)
                if node.op is Op.SCAN:
                    kernel.kind = "scan"
                if node.op is Op.REDUCE or node.op is Op.DOT:
                    kernel.kind = "reduce" if node.op is Op.REDUCE else "dot"
                    kernel.region = {k: ("out" if v == "loop" else v)
                                     for k, v in kernel.region.items()}
                    region = "out"
                self._add(kernel, node, region, direct)
                push_inputs(node)
            elif not any(node is i for i in kernel.inputs):
                kernel.inputs.append(node)
        kernel.inputs = _unique(kernel.inputs)

    def _placement(self, kernel: Kernel, node: Node) -> tuple[str, bool] | None:
        """Which region of the kernel `node` would live in, and whether it is computed once
        per point of that region's space (identity index, up to size-1 dims)."""
        regions, direct = set(), True
        for user in self.users[id(node)]:
            if not kernel.contains(user):
                continue
            if user.op is Op.REDUCE:
                regions.add("in")
                continue
            if user.op in (Op.SCATTER_ADD, Op.SCATTER):   # base -> output space; the rest -> in
                for position, operand in enumerate(user.inputs):
                    if operand is node:
                        regions.add("loop" if position == 0 else "in")
                        direct &= position != 1      # indices are read at a sub-index
                continue
            regions.add(kernel.region[id(user)])
            direct &= kernel.direct[id(user)] and (
                user.op in ELEMENTWISE or user.op is Op.SCAN or is_unit_reshape(user))
        if len(regions) > 1 and node.op is Op.BROADCAST and is_scalar_constant(node.inputs[0]):
            return "in", False                # a splat has the same value in either region
        if len(regions) != 1:
            return None
        region = regions.pop()
        return region, direct and squeezed(node.shape) == squeezed(kernel.space(region))

    def _read_before_root(self, kernel: Kernel, node: Node) -> bool:
        """Whether `node`, or a value computed from it inside `kernel`, is read by a node
        that comes before the kernel's root.  Writing `node` as an extra output is only
        safe when not: such a reader's kernel could be one this kernel depends on (a
        cycle)."""
        root_index = self.index[id(kernel.root)]
        stack, seen = [node], {id(node)}
        while stack:
            current = stack.pop()
            for user in self.users[id(current)]:
                if not kernel.contains(user):
                    if self.index[id(user)] < root_index:
                        return True
                elif id(user) not in seen and user is not kernel.root:
                    seen.add(id(user))
                    stack.append(user)
        return False

    def _consumers_escape(self, kernel: Kernel, node: Node) -> bool:
        """Whether a value computed from `node` inside `kernel` is also needed outside it
        (a cheap consumer duplicated elsewhere would drag the expensive node along)."""
        written = {id(kernel.root)} | {id(n) for n in kernel.extra_outputs}
        stack, seen = [node], {id(node)}
        while stack:
            current = stack.pop()
            checked = current is not node and id(current) not in written
            if checked and id(current) in self.is_output:
                return True
            for user in self.users[id(current)]:
                if not kernel.contains(user):
                    if checked:
                        return True
                elif id(user) not in seen:
                    seen.add(id(user))
                    stack.append(user)
        return False

    def _memory_readers(self, kernel: Kernel, node: Node) -> list[Node]:
        """Users of `node` that will read it from memory: outside `kernel`, or inside it
        and recomputed in a planned kernel that reads `node` (a select a reduction
        recomputes from a product this dot kernel would fuse: the product is computed
        twice unless written).  Kernels are planned consumers first: a user inside
        planned kernels that all compute `node` themselves (a recomputed tanh, say) reads
        nothing."""
        readers = []
        for user in self.users[id(node)]:
            homes = [home for home in self.computed_in.get(id(user), []) if home is not kernel]
            if kernel.contains(user):
                if any(not home.contains(node) for home in homes):
                    readers.append(user)
                continue
            if not (homes and all(home.contains(node) for home in homes)):
                readers.append(user)
        return readers

    def _recompute_reads(self, node: Node) -> int:
        """How many arrays recomputing `node` reads (up to MAX_RECOMPUTE_READS + 1): the
        leaves of its cone of cheap fusible ops that no planned kernel writes, computed
        scalars included (each one more argument of every kernel recomputing it).  In a
        recurrence a Python loop unrolled (`r = r - alpha * Ap` in conjugate gradient) the
        cone of step k reaches back to step 0: recomputed in every later step's kernel, the
        reads grow with the square of the steps."""
        leaves: set[int] = set()
        seen: set[int] = set()
        stack = list(node.inputs)
        while stack and len(leaves) <= MAX_RECOMPUTE_READS:
            current = stack.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            if len(seen) > RECOMPUTE_CONE_NODES:
                return MAX_RECOMPUTE_READS + 1
            if current.op in (Op.PARAMETER, Op.CONSTANT) or id(current) in self.producer or \
                    current.op in EXPENSIVE or not is_loop_fusible(current):
                if not is_scalar_constant(current):     # literals are compiled in
                    leaves.add(id(current))
            else:
                stack.extend(current.inputs)
        return len(leaves)

    def _can_fuse(self, kernel: Kernel, node: Node, placement) -> Decision:
        what = f"{node.op.value} ({_where(node)})"
        if not self.enable:
            return Decision.no("")
        if placement is None:
            return Decision.no(f"not fused: {what} feeds both the reduction and its epilogue")
        if id(node) in self.producer:       # another kernel already writes it: read that
            return Decision.no("")
        if placement is not None and kernel_size(kernel) + op_size(node) * self._copies(
                kernel, node, placement[1]) > MAX_KERNEL_OPS:
            return Decision.no(f"not fused: {what} would make the kernel bigger than "
                               f"{MAX_KERNEL_OPS} ops (Numba's compile time grows faster "
                               "than a function's size)")
        region, direct = placement
        if kernel.kind == "scatter" and region == "in" and node.op is Op.GATHER and \
                node.inputs[0] is kernel.root.inputs[0]:
            return Decision.no(f"not fused: {what} reads rows of the scatter's base: "
                               "gathered first, the scatter may write the base in place")
        if node.op is Op.REDUCE and kernel.kind == "reduce" and region == "out":
            first = kernel.reductions[0]
            if not (direct and node.inputs[0].shape == first.inputs[0].shape
                    and node.arg[1] == first.arg[1]):
                return Decision.no(f"not fused: {what} reduces a different space than "
                                   f"{first.op.value} ({_where(first)})")
        elif node.op is Op.SCAN:
            refused = _scan_refusal(kernel, region, direct)
            if refused:
                return Decision.no(f"not fused: {what} {refused}")
            if self._consumers_escape(kernel, node):
                return Decision.no(f"not fused: consumers of {what} are also computed in "
                                   "other kernels, so it is written once instead of "
                                   "recomputed there")
        elif node.op in (Op.REDUCE, Op.DOT):
            if kernel.kind != "loop" or region != "loop":
                return Decision.no(f"not fused: {what} cannot join a {kernel.kind} kernel "
                                   "(one reduction or contraction per kernel)")
            if not direct:
                return Decision.no(f"not fused: {what} is read through a broadcast or "
                                   "transpose, so its consumers need it in memory")
            if self._consumers_escape(kernel, node):
                return Decision.no(f"not fused: consumers of {what} are also computed in "
                                   "other kernels, so it is written once instead of "
                                   "recomputed there")
        elif not is_loop_fusible(node):
            return Decision.no("")
        elif node.op in EXPENSIVE and not direct and self._consumers_escape(kernel, node):
            return Decision.no(f"not fused: {what} is read at other elements by values also "
                               "computed in other kernels, so it is written once instead "
                               "of recomputed in each")
        if node.op is Op.BROADCAST and is_scalar_constant(node.inputs[0]):
            return Decision.yes("")          # a splat: free to recompute, whoever else reads it
        outside = self._memory_readers(kernel, node)
        n_outside = len(outside) + (id(node) in self.is_output)
        space = kernel.space(region)
        elements = int(np.prod(space, dtype=np.int64))
        factor = cost_model.recompute_factor(node, elements)
        if node.op in EXPENSIVE and factor > 1 and not direct:
            return Decision.no(f"not fused: {what} would be recomputed {factor:.0f}x per "
                               "element (it is broadcast)")
        if not direct and is_fusible_concatenate(node):
            return Decision.no(f"not fused: {what} is read at shifted indices (a roll of a "
                               "roll, a slice of a stack): written once, not recomputed "
                               "per read, which would grow with each unrolled time step")
        if not direct and writes_a_region(node):
            return Decision.no(f"not fused: {what} is an array with a region written "
                               "(`x[a:b] = v`), read here at shifted indices: written once, "
                               "not recomputed per read")
        if n_outside == 0:
            return Decision.yes(f"fused {what}: saves {format_bytes(2 * node.nbytes)}")
        if id(node) in self.is_output and node.op is Op.SELECT and writes_a_region(node) \
                and node.inputs[2].op is Op.PARAMETER:
            return Decision.no(f"not fused: {what} writes a region of an argument "
                               "(`x[a:b] = v`): its own kernel writes only the region, in "
                               "place, where fused it would write all of x and copy it back")
        later = not self._read_before_root(kernel, node)
        materialized = id(node) in self.is_output or any(
            u.op is Op.DOT or kernel_kind(u) == "library" for u in outside)
        if direct and later and kernel.kind != "scatter" and (
                materialized or node.op in EXPENSIVE or not is_loop_fusible(node)):
            return Decision.yes(f"fused {what} as an extra output "
                                f"({_users(n_outside)} outside)", extra_output=True)
        if node.op not in EXPENSIVE and is_loop_fusible(node):
            reads = self._recompute_reads(node)
            if reads > MAX_RECOMPUTE_READS and direct and later and kernel.kind != "scatter":
                return Decision.yes(f"fused {what} as an extra output ({_users(n_outside)} "
                                    f"outside): recomputed there, it would read {reads} "
                                    "arrays or more (as a recurrence unrolled by a "
                                    "Python loop does)", extra_output=True)
            if reads > MAX_RECOMPUTE_READS:
                return Decision.no(f"not fused: {what} has {_users(n_outside)} outside this "
                                   f"kernel, and recomputing it reads {reads} arrays or more "
                                   "(as a recurrence unrolled by a Python loop does): "
                                   "written once")
            return Decision.yes("")          # cheap: recomputed where it is used, as XLA does
        return Decision.no(f"not fused: {what} has {_users(n_outside)} outside this kernel; "
                           f"fusing would compute it twice")


def _scan_refusal(kernel: Kernel, region: str, direct: bool) -> str:
    """Why a scan cannot join `kernel` ("" when it can): its consumers in the kernel must
    read it at the element being computed, in a loop kernel without another scan."""
    if kernel.kind == "scan":
        return "is a second scan (one running value per kernel)"
    if kernel.kind != "loop" or region != "loop":
        return f"cannot join a {kernel.kind} kernel (a scan runs its axis in order)"
    if not direct:
        return ("is read through a broadcast, transpose or shift, at elements its running "
                "value has not reached: its consumers read it from memory")
    return ""


def library_reason(node: Node) -> str:
    """Why `node` runs as a call between kernels rather than inside generated code."""
    what = f"{node.op.value} ({_where(node)})"
    if node.op in (Op.RESHAPE, Op.TRANSPOSE):
        return f"library: {what} is a view of its operand's buffer (no copy, no loop)"
    if node.op is Op.CONCATENATE:
        return (f"library: {what} joins {len(node.inputs)} arrays, more than "
                f"{MAX_CONCATENATE_OPERANDS} fuse (a branch each): one np.concatenate")
    if node.op is Op.LIBRARY_CALL:
        return (f"library: {what} calls NumPy's {node.arg[0]} (sorts, LAPACK, FFTs, "
                "float16 scans: no generated equivalent)")
    if node.op in (Op.LIBRARY_RESULT, Op.LOOP_RESULT):
        return f"library: {what} picks result {node.arg} of a call (no copy)"
    if node.op is Op.LOOP:
        where = f" at {node.loc}" if node.loc else ""
        return f"library: loop{where} is rolled: its body is a program run once per trip"
    if node.op is Op.ALL_REDUCE:
        return f"library: {what} is a collective between replicas"
    if node.op is Op.ARGREDUCE:
        return (f"library: {what} is not fused: one compiled pass keeping the best value and "
                "its index (codegen/argreduce.py; NumPy's loop for rows of 256 bytes or more "
                "along the last axis, and for other dtypes)")
    return f"library: {what} has no generated form: one NumPy call"


def format_bytes(count: int) -> str:
    """A byte count people read: "512 bytes", "48.0 KiB", "16.0 MiB" (binary units, as the
    notebook's Memory view)."""
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if abs(count) >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} byte{'' if count == 1 else 's'}"


def _users(count: int) -> str:
    return f"{count} user{'' if count == 1 else 's'}"


def _where(node: Node) -> str:
    shape = "x".join(str(d) for d in node.shape) or "scalar"
    return f"{shape}{' at ' + node.loc if node.loc else ''}"


def _unique(nodes):
    seen, out = set(), []
    for n in nodes:
        if id(n) not in seen:
            seen.add(id(n))
            out.append(n)
    return out


def _sibling_signature(kernel: Kernel):
    """Kernels with equal signatures iterate over the same space and can share one loop."""
    if kernel.kind == "reduce":
        red = kernel.reductions[0]
        return ("reduce", red.inputs[0].shape, red.arg[1])
    if kernel.kind == "loop" and kernel.root.shape and not (
            kernel.root.op is Op.SELECT and writes_a_region(kernel.root)):
        return ("loop", kernel.root.shape)
    return None                 # a region write stays alone: it writes only its region
                                # (in place, codegen/cpu.py), merged it selects everywhere


# Siblings tried per kernel: the next ones of its shape in program order.  Merging is
# worth most between neighbours, and a bound keeps the pass linear in long programs.
SIBLING_WINDOW = 16


def merge_siblings(kernels: list[Kernel], producer: dict[int, Kernel],
                   index: dict[int, int]) -> list[Kernel]:
    """Multi-output (horizontal) fusion: kernels over the same space that do not depend on
    each other become one.  A buffer both read is read once, and every merge saves a
    kernel call, which is what small training steps are made of.

        reduce_fusion.a = sum(dy)        }      reduce_fusion.a = sum(dy), sum(dy * xhat)
        reduce_fusion.b = sum(dy * xhat) }  ->  (one pass over dy)
    """
    merged_into: dict[int, Kernel] = {}
    # Kernels in dependency order (producers first): a kernel placed before the target
    # cannot read, even through others, what the target computes, so walks stop there.
    # A merged kernel spans its parts' places: [low, high].
    low = _dependency_order(kernels, producer)
    high = {key: len(kernels) if place < 0 else place for key, place in low.items()}

    def owner(kernel: Kernel) -> Kernel:
        root = kernel
        while id(root) in merged_into:
            root = merged_into[id(root)]
        while kernel is not root:                 # path compression
            merged_into[id(kernel)], kernel = root, merged_into[id(kernel)]
        return root

    def depends(kernel: Kernel, target: Kernel) -> bool:
        """Whether `kernel` reads, directly or through other kernels, a value `target`
        computes: one of its outputs, or a node inside it that another kernel recomputes
        (merged, the kernel would both compute and read that node)."""
        start = low[id(target)]
        stack, seen = [kernel], {id(kernel)}
        while stack:
            for inp in stack.pop().inputs:
                if target.contains(inp):
                    return True
                source = producer.get(id(inp))
                if source is None:
                    continue
                source = owner(source)
                if source is target:
                    return True
                if id(source) not in seen and high[id(source)] >= start:
                    seen.add(id(source))
                    stack.append(source)
        return False

    groups: dict = {}
    for kernel in kernels:
        signature = _sibling_signature(kernel)
        if signature is not None:
            groups.setdefault(signature, []).append(kernel)
    for members in groups.values():
        for i, one in enumerate(members):
            for other in members[i + 1:i + 1 + SIBLING_WINDOW]:
                a, b = owner(one), owner(other)
                if a is b:
                    continue
                if depends(a, b) or depends(b, a):
                    continue
                if kernel_size(a) + kernel_size(b) > MAX_KERNEL_OPS:
                    continue            # Numba's compile time: lenet's 144 pooling maxima
                _absorb(a, b, producer)     # merged into one took 3 minutes
                a.nodes.sort(key=lambda n: index[id(n)])
                merged_into[id(b)] = a
                low[id(a)] = min(low[id(a)], low[id(b)])
                high[id(a)] = max(high[id(a)], high[id(b)])
    return [k for k in kernels if id(k) not in merged_into]


def _dependency_order(kernels: list[Kernel], producer: dict[int, Kernel]) -> dict[int, int]:
    """id(kernel) -> its place in an order where every kernel comes after the kernels
    whose outputs it reads (Kahn's algorithm)."""
    readers: dict[int, list[Kernel]] = {id(k): [] for k in kernels}
    waiting: dict[int, int] = {}
    for kernel in kernels:
        sources = {id(producer[id(i)]) for i in kernel.inputs if id(i) in producer} - \
            {id(kernel)}
        waiting[id(kernel)] = len(sources)
        for source in sources:
            readers.setdefault(source, []).append(kernel)
    ready = [k for k in kernels if waiting[id(k)] == 0]
    order: dict[int, int] = {}
    while ready:
        kernel = ready.pop()
        order[id(kernel)] = len(order)
        for reader in readers.get(id(kernel), []):
            waiting[id(reader)] -= 1
            if waiting[id(reader)] == 0:
                ready.append(reader)
    for kernel in kernels:                    # in a cycle (a bug caught later): -1, and
        order.setdefault(id(kernel), -1)      # the caller prunes nothing at it
    return order


def _absorb(kernel: Kernel, other: Kernel, producer: dict[int, Kernel]) -> None:
    for node in other.nodes:
        if kernel.contains(node):
            kernel.direct[id(node)] = kernel.direct[id(node)] and other.direct[id(node)]
            continue
        kernel.nodes.append(node)
        kernel.region[id(node)] = other.region[id(node)]
        kernel.direct[id(node)] = other.direct[id(node)]
        if id(node) in other.copies:
            kernel.copies[id(node)] = other.copies[id(node)]
    shared = len({id(n) for n in kernel.inputs} & {id(n) for n in other.inputs})
    kernel.outputs = _unique(kernel.outputs + other.outputs)
    kernel.extra_outputs = _unique(kernel.extra_outputs + other.outputs)
    kernel.consts = _unique(kernel.consts + other.consts)
    kernel.inputs = _unique(kernel.inputs + other.inputs)
    kernel.decisions += [f"merged with sibling {other.root.op.value} "
                         f"({_where(other.root)}): one loop instead of two"
                         + (f", {shared} common buffers read once" if shared else "")
                         ] + other.decisions
    for out in other.outputs:
        producer[id(out)] = kernel


def _execution_order(kernels: list[Kernel], producer: dict[int, Kernel],
                     index: dict[int, int]) -> list[Kernel]:
    """Kahn's topological order of kernels by the buffers they read, earliest root first,
    run-time checks (and what they read) before everything else: a check that raises then
    finds the caller's arrays as they were, and kernels after it may write them in place
    (buffers.py `_nothing_raises_from`)."""
    deps = {id(k): {id(producer[id(i)]) for i in k.inputs if id(i) in producer} - {id(k)}
            for k in kernels}
    dependents: dict[int, list[Kernel]] = {id(k): [] for k in kernels}
    for k in kernels:
        for d in deps[id(k)]:
            dependents[d].append(k)
    early = _feeding_checks(kernels, deps)

    def priority(k: Kernel) -> tuple:
        return (id(k) not in early, index[id(k.root)], id(k), k)
    ready = [priority(k) for k in kernels if not deps[id(k)]]
    heapq.heapify(ready)
    order: list[Kernel] = []
    while ready:
        k = heapq.heappop(ready)[-1]
        order.append(k)
        for user in dependents[id(k)]:
            deps[id(user)].discard(id(k))
            if not deps[id(user)]:
                heapq.heappush(ready, priority(user))
    if len(order) != len(kernels):
        stuck = ", ".join(k.name for k in kernels if k not in order)
        raise AssertionError(f"fusion produced a cycle between kernels: {stuck}")
    return order


def _feeding_checks(kernels: list[Kernel], deps: dict[int, set[int]]) -> set[int]:
    """ids of the run-time check kernels (`xlanb.check_*` library calls) and of every
    kernel they depend on."""
    pending = [id(k) for k in kernels if k.kind == "library" and
               k.root.op is Op.LIBRARY_CALL and k.root.arg[0].startswith("xlanb.check_")]
    found: set[int] = set()
    while pending:
        kid = pending.pop()
        if kid not in found:
            found.add(kid)
            pending.extend(deps[kid])
    return found


def plan_fusion(graph: Graph, enable_fusion: bool = True, row_fusion: bool = True
                ) -> FusionPlan:
    """Group `graph`'s nodes into kernels; `enable_fusion=False` gives one op per kernel;
    `row_fusion` chains kernels sweeping the same rows into `row` kernels (row_fusion.py;
    CPU code generation only)."""
    return _Planner(graph, enable_fusion, row_fusion).plan()
