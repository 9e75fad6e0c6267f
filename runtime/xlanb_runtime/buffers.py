"""Buffer assignment: where every value a kernel writes lives at run time.

Storage classes:
  param   the caller's argument (read only; returned values never alias it)
  const   a constant array bound once into the program
  fresh   allocated per call: program outputs (the caller keeps them) and what they view
  pooled  an intermediate: lives in a per-thread arena block reused across calls, and
          blocks are shared by intermediates whose lifetimes do not overlap
  view    a reshape of another value (no copy)
  update  `x[a:b] = v` written over x's own buffer (see below)
  donated a parameter the caller lets the program overwrite: a rolled loop's carried state,
          which the loop runner copies once before the first trip (codegen/compiled_loop.py),
          or an argument the call writes back anyway (`write_into`), whose new value the
          program writes straight into it (XLA's input/output aliasing)
  loop    a loop's results: arrays its body's program returned (fresh on every trip); also
          a library call's results where it has several or where its function takes no
          `out=` (the arrays NumPy returned)

The pass walks kernels in execution order, frees a block after its value's last reader and
hands it to the next intermediate that fits (smallest fitting block first).

In-place region updates (XLA's in-place dynamic-update-slice): a loop kernel computing
`x[a:b] = v` (select(pad(mask), pad(v), x)) copies x and writes v over the region
(codegen/cpu.py).  Where x lives in a buffer nothing reads after that kernel (a pooled
intermediate, or a donated parameter) and v reads x only at the element it replaces, the
kernel's output takes x's buffer and the copy is skipped: a loop writing one row per trip
of a carried array costs the row, not the array (npbench syrk: 4,900 elements rewritten
per trip for a row of at most 70).  Peak pooled
bytes are compared with the op-by-op baseline in `memory_analysis()`.
"""
from __future__ import annotations

import bisect

from dataclasses import dataclass, field

import numpy as np

from .ir import Graph, Node, Op
from .ir.interpret import is_token
from .codegen.cpu import (kernel_region_update, region_needs_staging, region_update,
                          same_region, stores_in_one_loop)
from .ir.ops import CONTROL_FLOW, ELEMENTWISE
from .passes.fusion import FusionPlan
from .passes.numpy_ufuncs import in_place_base


@dataclass
class Storage:
    kind: str                      # param | const | fresh | pooled | view | loop
    block: int | None = None       # pooled: arena block index
    base: Node | None = None       # view: the viewed node


@dataclass
class BufferAssignment:
    storage: dict[int, Storage] = field(default_factory=dict)
    block_bytes: list[int] = field(default_factory=list)
    scratch: dict[str, int] = field(default_factory=dict)   # kernel name -> block (dot acc)
    # loop kernel name -> {id(output): the parameter whose buffer it is written into}
    # (`_write_back_in_place`: the kernel is generated storing through that input's name)
    written_into: dict[str, dict[int, Node]] = field(default_factory=dict)
    # region-update kernel name -> whether it computes v whole before writing the region,
    # where that differs from codegen's guess without the buffers (`region_staging`)
    staged: dict[str, bool] = field(default_factory=dict)

    @property
    def pooled_bytes(self) -> int:
        return sum(self.block_bytes)


ALIASES = ("view", "update")       # kinds sharing their base's buffer


def _root(node: Node, storage: dict[int, Storage]) -> Node:
    while storage.get(id(node)) and storage[id(node)].kind in ALIASES:
        node = storage[id(node)].base
    return node


def storage_root(node: Node, buffers: BufferAssignment) -> Node:
    """The node whose buffer `node` lives in (itself unless a view or an in-place update)."""
    return _root(node, buffers.storage)


def assign_buffers(plan: FusionPlan, scratch_needs: dict[str, tuple],
                   donated: int | None = None, write_into: tuple = ()) -> BufferAssignment:
    """`scratch_needs`: kernel name -> (shape, dtype) of a temporary it needs while running.
    `donated`: None (no in-place updates: the CUDA kernels have no region loops), else
    how many leading parameters the program may overwrite (their storage becomes
    "donated" where a kernel updates one in place).  `write_into`: (param, output) pairs
    the caller copies back after the call; where safe the output is written straight into
    the parameter's buffer (`_write_back_in_place`)."""
    graph = plan.graph
    result = BufferAssignment()
    storage = result.storage
    for p in graph.params:
        storage[id(p)] = Storage("param")
    for node in graph.nodes:
        if node.op is Op.CONSTANT:
            storage[id(node)] = Storage("const")
    for kernel in plan.kernels:
        if kernel.kind == "library" and kernel.root.op in (Op.RESHAPE, Op.TRANSPOSE):
            storage[id(kernel.root)] = Storage("view", base=kernel.root.inputs[0])
        elif in_place_base(kernel) is not None:      # np.power(b, c, out=b)
            storage[id(kernel.root)] = Storage("view", base=in_place_base(kernel))
        elif kernel.kind == "library" and (kernel.root.op in CONTROL_FLOW or
                                           kernel.root.op is Op.LIBRARY_RESULT or
                                           is_token(kernel.root) or
                                           returns_own_array(kernel.root)):
            storage[id(kernel.root)] = Storage("loop")
    if donated is not None:
        finals = final_values(plan, write_into, storage)
        _update_in_place(plan, storage, set(map(id, graph.params[:donated])), finals)
        _write_back_in_place(plan, storage, finals, result.written_into)
        result.staged = region_staging(plan, storage, finals)
        _region_updates_in_place(plan, storage, result.written_into)
    outputs = {id(_root(o, storage)) for o in graph.outputs}

    last_use: dict[int, int] = {}
    for step, kernel in enumerate(plan.kernels):
        for inp in kernel.inputs:
            last_use[id(_root(inp, storage))] = step
    free: list[tuple[int, int]] = []           # (bytes, block), sorted: best fit by bisect
    releases: dict[int, list[int]] = {}
    for step, kernel in enumerate(plan.kernels):
        for out in kernel.outputs:
            if id(out) in storage:
                continue
            if id(out) in outputs:
                storage[id(out)] = Storage("fresh")
                continue
            block = _take_block(result, free, out.nbytes)
            storage[id(out)] = Storage("pooled", block)
            releases.setdefault(last_use.get(id(out), step), []).append(block)
        if kernel.name in scratch_needs:
            shape, dtype = scratch_needs[kernel.name]
            nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            block = _take_block(result, free, nbytes)
            result.scratch[kernel.name] = block
            releases.setdefault(step, []).append(block)
        for block in releases.pop(step, []):
            bisect.insort(free, (result.block_bytes[block], block))
    return result


def returns_own_array(node: Node) -> bool:
    """A library call of a function without `out=` (np.linalg.cholesky, solve, sort...):
    its value is the array NumPy returns, used as it is.  A buffer of the program's own
    would cost a copy of the result (npbench cholesky2, 1000x1000 f64: 8 MB per call)."""
    if node.op is not Op.LIBRARY_CALL or is_token(node):
        return False
    from .ir.library import FUNCTIONS
    return not FUNCTIONS[node.arg[0]].writes_out


def _update_in_place(plan: FusionPlan, storage: dict[int, Storage], donated: set[int],
                     finals: dict[int, Node]) -> None:
    """Region-update kernels whose base buffer is dead after them write over it (module
    docstring).  A buffer's values are read until the last kernel reading any node that
    lives in it; the program's outputs are read at the end.  A later kernel that reads x
    only as the base of an update of the same region is no reader of the old value: it
    replaces those elements itself (`x[k] = a; x[k] = x[k] * b` simplifies to two
    updates of the old x)."""
    end = len(plan.kernels)
    read: dict[int, int] = {}                  # node -> last step reading it
    overwrites: dict[int, tuple] = {}          # node -> (node, [(step, update)]): read as
    for step, kernel in enumerate(plan.kernels):                 # a same-region base only
        over = _overwritten_base(kernel)
        for inp in kernel.inputs:
            if over is not None and inp is over[0]:
                overwrites.setdefault(id(inp), (inp, []))[1].append((step, over))
            else:
                read[id(inp)] = step
    for out in plan.graph.outputs:
        read[id(out)] = end
    last: dict[int, int] = {}                  # buffer root -> last step reading it
    for node, step in [(n, read[id(n)]) for n in plan.graph.nodes if id(n) in read]:
        root = id(_root(node, storage))
        last[root] = max(last.get(root, -1), step)
    for step, kernel in enumerate(plan.kernels):
        base = _in_place_base(kernel, storage)
        if base is None:
            continue
        root = _root(base, storage)
        kind = storage[id(root)].kind if id(root) in storage else None
        if kind is not None and not (kind in ("param", "donated") and id(root) in donated
                                     or kind in ("param", "donated") and
                                     _whole_buffer(base, root, storage) and
                                     _scattered_toward(kernel.root, finals.get(id(root)))
                                     and _nothing_raises_from(plan, step)):
            continue                           # the caller's, a constant, NumPy's result
        if last.get(id(root), -1) > step:
            continue                           # x's old value is read later
        if _old_values_read(kernel, base, root, step, overwrites, storage):
            continue                           # a later update keeps other old elements
        if kind is not None:
            storage[id(root)] = Storage("donated")
        storage[id(kernel.root)] = Storage("update", base=base)
        # the new value (and views of it) is read until then, in the same buffer
        last[id(root)] = max(step, last.get(id(kernel.root), step))


def _whole_buffer(base: Node, root: Node, storage: dict[int, Storage]) -> bool:
    """`base` is the parameter `root` itself, or an earlier update's value that took all
    of its buffer (not a view of part of it)."""
    own = storage.get(id(base))
    return base is root or own is not None and own.kind == "update" and \
        base.shape == root.shape and base.dtype == root.dtype


def _scattered_toward(node: Node, final: Node | None) -> bool:
    """Whether `final` (the value written back into a parameter) is `node`, or `node`
    after further scatters or region updates into it: `x[i] = v; x[i] += 1` scatters
    twice into x, and the first may take x's buffer as the second does (later kernels
    still reading x's old value, or an output of the first, keep it from doing so:
    `_update_in_place`).  Ghost cells, `u[:, 0] = u[:, -2]; u[:, -1] = u[:, 1]; ...`,
    are four region updates: the first copied all of u into a new buffer, which the call
    then copied back (1024x1024 float64: 1.2 ms, NumPy 0.017)."""
    while final is not None and final is not node:
        if final.op in (Op.SCATTER, Op.SCATTER_ADD):
            final = final.inputs[0]
        elif (update := region_update(final)) is not None:
            final = update[0]
        else:
            return False
    return final is node


def final_values(plan: FusionPlan, write_into: tuple, storage: dict[int, Storage]
                 ) -> dict[int, Node]:
    """{id(param): the value the caller copies into it} for the `write_into` pairs whose
    value could take the parameter's buffer: of its type, neither it nor a view of it
    output anywhere else (the caller would get its own argument back as a new array),
    one value per parameter."""
    graph = plan.graph
    finals: dict[int, Node] = {}
    for p, o in write_into:
        param, value = graph.params[p], graph.outputs[o]
        if value.op is Op.PARAMETER or value.shape != param.shape or \
                value.dtype != param.dtype or id(param) in finals or \
                sum(_root(out, storage) is value for out in graph.outputs) != 1:
            continue
        finals[id(param)] = value
    return finals


def _nothing_raises_from(plan: FusionPlan, step: int) -> bool:
    """Whether no kernel from `step` on can raise: a call that fails must leave the
    caller's arrays as they were, so nothing is written in place before a library call
    (a NumPy or LAPACK function, a loop, a collective) that may still fail.  Generated
    kernels do not raise (error_model="numpy"); a reshape or a transpose is a view."""
    return all(k.kind != "library" or k.root.op in (Op.RESHAPE, Op.TRANSPOSE)
               for k in plan.kernels[step:])


def _write_back_in_place(plan: FusionPlan, storage: dict[int, Storage],
                         finals: dict[int, Node], written_into: dict) -> None:
    """XLA's input/output aliasing for arguments written back: the loop kernel computing
    the value the caller copies into parameter p writes it into p's buffer instead (no
    fresh buffer, no copy), where that is what NumPy's in-place ops would leave:

        w -= lr * g     before: b1 = empty; k(p0, p1, b1); copyto(p0, b1)
                        after:  k(p0, p1, p0)

    Safe when the kernel reads p, and whatever it computes from p, only at the element it
    writes (elementwise ops of the output's shape: each element is loaded before it is
    stored, in one trip of the loop), no later kernel and no output reads p's old value,
    and nothing after can raise.  Arguments never share memory here (the call path gives
    overlapping arguments one flat parameter, boundary.py).

    The kernel is then generated storing through the parameter's own name
    (`written_into`, codegen/cpu.py): given one buffer under two names, LLVM's run-time
    overlap check before the vectorized loop failed and the loop ran scalar (an Adam step
    on 1e5 float64: 1250 us in place against 310-480 us into a fresh buffer)."""
    if not finals:
        return
    last = _last_reads(plan, storage)
    producers = {id(out): (step, kernel) for step, kernel in enumerate(plan.kernels)
                 for out in kernel.outputs}
    placed: dict[str, dict[int, int]] = {}     # kernel -> {id(value): id(its param)}
    for param in plan.graph.params:
        value = finals.get(id(param))
        if value is None or id(value) in storage or id(value) not in producers:
            continue
        step, kernel = producers[id(value)]
        into = {**placed.get(kernel.name, {}), id(value): id(param)}
        if kernel.kind == "loop" and last.get(id(param), -1) <= step and \
                _reads_only_in_place(kernel, param, value, storage) and \
                _outputs_read_apart(kernel, into) and _nothing_raises_from(plan, step):
            placed[kernel.name] = into
            storage[id(param)] = Storage("donated")
            storage[id(value)] = Storage("update", base=param)
            if kernel_region_update(kernel) is None:    # (`_region_updates_in_place`)
                written_into.setdefault(kernel.name, {})[id(value)] = param


def region_staging(plan: FusionPlan, storage: dict[int, Storage], finals: dict[int, Node]
                   ) -> dict[str, bool]:
    """{kernel name: whether its `x[a:b] = v` computes v whole before writing the region}
    for the region updates where the buffers decide otherwise than codegen's guess
    (`region_needs_staging`, which stages whenever v reads an array of x's size):

        x[1:-1] += 0.5 * g[1:-1]   before: v1 = empty(n - 2); v1[k] = ...; out0[k + 1] = v1[k]
                                   after:  out0[k + 1] = in0[k + 1] + c0 * in1[k + 1]

    Staging guards the region's elements against a store into x's buffer changing what
    a later element reads.  An update that does not take x's buffer (its output has one
    of its own) stores nothing any input reads.  One that does reads `_apart_from` inputs
    from other memory."""
    staged = {}
    for kernel in plan.kernels:
        update = kernel_region_update(kernel) if kernel.kind == "loop" else None
        if update is None or not region_needs_staging(kernel, update):
            continue
        own = storage.get(id(kernel.root))
        if own is None or own.kind != "update":
            staged[kernel.name] = False
        elif not region_needs_staging(kernel, update, _apart_from(kernel, update[0],
                                                                  storage, finals)):
            staged[kernel.name] = False
    return staged


def _region_updates_in_place(plan: FusionPlan, storage: dict[int, Storage],
                             written_into: dict) -> None:
    """A region update given x's buffer stores through x's own name, with no copy of x
    (as `_write_back_in_place`'s kernels do): under two names of one buffer, LLVM's
    run-time overlap check before the vectorized region loop fails and it runs scalar."""
    for kernel in plan.kernels:
        update = kernel_region_update(kernel) if kernel.kind == "loop" else None
        own = storage.get(id(kernel.root))
        if update is not None and own is not None and own.kind == "update" and \
                own.base is update[0] and not kernel.contains(update[0]):
            written_into.setdefault(kernel.name, {})[id(kernel.root)] = update[0]


def _apart_from(kernel, base: Node, storage: dict[int, Storage], finals: dict[int, Node]
                ) -> frozenset[int]:
    """ids of the kernel's inputs that cannot share memory with x's buffer: a constant,
    and, where x is an argument the call writes back (`finals`: the caller's arguments
    never share memory then, the call path gives overlapping ones one flat parameter,
    xlanb/tracing/boundary.py), another argument or an array the program allocated.  Not
    a library call's or loop's result (NumPy may return an argument itself), and not a
    loop body's parameters (a trip's outputs may view each other)."""
    root = _root(base, storage)
    checked = id(root) in finals
    apart = set()
    for node in kernel.inputs:
        other = _root(node, storage)
        kind = storage[id(other)].kind if id(other) in storage else "fresh"
        if other is root or kind in ("view", "update"):
            continue
        if kind == "const" or checked and kind in ("param", "donated", "fresh", "pooled"):
            apart.add(id(node))
    return frozenset(apart)


def _outputs_read_apart(kernel, into: dict[int, int]) -> bool:
    """Whether each output of the kernel reads, of the parameters it writes in place
    (`into`: id(value) -> id(param)), at most the one its own value goes into.
    The kernel may store its outputs in any order, in one loop or in several (codegen's
    loop distribution): then no store into a parameter precedes a read of it for
    another output (momentum: `w -= lr * m` after `m *= b; m += g` reads m's new value
    from m's parameter).  Stored in one loop in output order (codegen/cpu.py
    `stores_in_one_loop`), an output reads none that an earlier output writes: each
    element of a later one's parameter is loaded before its store (momentum's w, then m,
    both in place)."""
    written = set(into.values())
    if stores_in_one_loop(kernel):       # an output may read what a later one writes:
        written = set()                  # each element is loaded before that store
    for out in kernel.outputs:
        own = into.get(id(out))
        if any(p != own for p in _inputs_reached(kernel, out) & written):
            return False
        if stores_in_one_loop(kernel) and own is not None:
            written.add(own)
    return True


def _inputs_reached(kernel, node: Node) -> set[int]:
    """ids of the kernel's inputs that its value of `node` is computed from."""
    reached, seen, stack = set(), set(), [node]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if kernel.contains(n):
            stack.extend(n.inputs)
        else:
            reached.add(id(n))
    return reached


def _last_reads(plan: FusionPlan, storage: dict[int, Storage]) -> dict[int, int]:
    """Buffer root -> the last kernel step reading any value in it (outputs: the end)."""
    read: dict[int, int] = {}
    for step, kernel in enumerate(plan.kernels):
        for inp in kernel.inputs:
            read[id(inp)] = step
    for out in plan.graph.outputs:
        read[id(out)] = len(plan.kernels)
    last: dict[int, int] = {}
    for node in plan.graph.nodes:
        if id(node) in read:
            root = id(_root(node, storage))
            last[root] = max(last.get(root, -1), read[id(node)])
    return last


def _reads_only_in_place(kernel, param: Node, value: Node, storage) -> bool:
    """Whether the kernel reads `param`'s buffer only as `param` itself, and `param` and
    everything computed from it only elementwise at `value`'s shape, each output of that
    shape (its loop runs over those elements once: no shifted, reversed, transposed,
    broadcast or reduced read of an element already overwritten)."""
    if any(out.shape != value.shape for out in kernel.outputs) or any(
            i is not param and _root(i, storage) is param for i in kernel.inputs):
        return False
    derived = {id(param)}
    for node in kernel.nodes:
        if any(id(i) in derived for i in node.inputs):
            if not (node.op in ELEMENTWISE or node.op is Op.CONVERT) or \
                    node.shape != value.shape:
                return False
            derived.add(id(node))
    return True


def _overwritten_base(kernel):
    """The region update of a kernel that reads its x only as the select's base (v does
    not read x), or None."""
    update = kernel_region_update(kernel) if kernel.kind == "loop" else None
    if update is None or kernel.contains(update[0]):
        return None
    base = update[0]
    if any(base in node.inputs for node in kernel.nodes if node is not kernel.root):
        return None
    return update


def _old_values_read(kernel, base: Node, root: Node, step: int, overwrites, storage
                     ) -> bool:
    """Whether a later kernel keeps elements of x's buffer, as they were before this
    kernel's update, that the update replaces: an update of another region, or of a
    node other than x in x's buffer (a view).  A scatter's rows are not a region: any
    later update of x's buffer counts."""
    update = kernel_region_update(kernel) if kernel.kind == "loop" else None
    for node, uses in overwrites.values():
        if _root(node, storage) is root and any(
                later > step and (node is not base or update is None
                                  or not same_region(over, update))
                for later, over in uses):
            return True
    return False


def _in_place_base(kernel, storage: dict[int, Storage]) -> Node | None:
    """x of a loop kernel computing `x[a:b] = v` from x in its own buffer.  v reads x, or
    a value that may share x's buffer, only at the element it replaces, or the kernel
    computes v whole before writing (codegen/cpu.py `region_needs_staging`).  Or x of a
    scatter kernel whose indices and updates read nothing in x's buffer (`x[idx] = v`,
    `np.add.at(x, idx, v)`): its base loop is then skipped, and only updated rows written."""
    if kernel.kind == "scatter":
        return _scatter_base(kernel, storage)
    if kernel.kind != "loop" or len(kernel.outputs) != 1 or kernel.outputs[0] is not \
            kernel.root:
        return None
    update = kernel_region_update(kernel)
    if update is None or kernel.contains(update[0]):
        return None
    base = update[0]
    if not region_needs_staging(kernel, update) and any(
            i is not base and _root(i, storage) is _root(base, storage)
            for i in kernel.inputs):
        return None                            # cannot happen: aliases have x's size
    return base


def _scatter_base(kernel, storage: dict[int, Storage]) -> Node | None:
    """The base of a scatter kernel that may take its buffer: an input of the kernel, and
    no other input (what the indices and updates are computed from) in its buffer; a
    gathered x[idx] of the same x would read rows earlier updates replaced."""
    base = kernel.root.inputs[0]
    if kernel.contains(base) or len(kernel.outputs) != 1 or any(
            i is not base and _root(i, storage) is _root(base, storage) for i in kernel.inputs):
        return None
    if any(base in node.inputs for node in kernel.nodes if node is not kernel.root):
        return None
    return base


def _take_block(result: BufferAssignment, free: list[tuple[int, int]], nbytes: int) -> int:
    """The smallest free block that holds `nbytes`, else a new one.  Sorted and bisected:
    a program of 40,000 ops sorted its free list once per op (minutes)."""
    at = bisect.bisect_left(free, (nbytes, -1))
    if at < len(free):
        return free.pop(at)[1]
    result.block_bytes.append(max(-(-nbytes // 64) * 64, 64))   # aligned, any dtype views
    return len(result.block_bytes) - 1


def unfused_peak_bytes(graph: Graph) -> int:
    """Peak bytes of intermediates alive when the graph runs op by op (no fusion)."""
    nodes = graph.nodes
    last = {}
    for step, node in enumerate(nodes):
        for inp in node.inputs:
            last[id(inp)] = step
    outputs = {id(o) for o in graph.outputs}
    live, peak = 0, 0
    dying: dict[int, int] = {}
    for step, node in enumerate(nodes):
        if node.op not in (Op.PARAMETER, Op.CONSTANT) and id(node) not in outputs:
            live += node.nbytes
            dying[last.get(id(node), step)] = dying.get(last.get(id(node), step), 0) + \
                node.nbytes
        peak = max(peak, live)
        live -= dying.pop(step, 0)
    return peak
