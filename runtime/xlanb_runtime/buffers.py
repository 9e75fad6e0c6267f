"""Buffer assignment: where every value a kernel writes lives at run time.

Storage classes:
  param   the caller's argument (read only; returned values never alias it)
  const   a constant array bound once into the program
  fresh   allocated per call: program outputs (the caller keeps them) and what they view
  pooled  an intermediate: lives in a per-thread arena block reused across calls, and
          blocks are shared by intermediates whose lifetimes do not overlap
  view    a reshape of another value (no copy)
  loop    a loop's results: arrays its body's program returned (fresh on every trip); also
          a library call's results where it has several (the arrays NumPy returned)

The pass walks kernels in execution order, frees a block after its value's last reader and
hands it to the next intermediate that fits (smallest fitting block first).  Peak pooled
bytes are compared with the op-by-op baseline in `memory_analysis()`.
"""
from __future__ import annotations

import bisect

from dataclasses import dataclass, field

import numpy as np

from .ir import Graph, Node, Op
from .ir.interpret import is_token
from .ir.ops import CONTROL_FLOW
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

    @property
    def pooled_bytes(self) -> int:
        return sum(self.block_bytes)


def _root(node: Node, storage: dict[int, Storage]) -> Node:
    while storage.get(id(node)) and storage[id(node)].kind == "view":
        node = storage[id(node)].base
    return node


def assign_buffers(plan: FusionPlan, scratch_needs: dict[str, tuple]) -> BufferAssignment:
    """`scratch_needs`: kernel name -> (shape, dtype) of a temporary it needs while running."""
    graph = plan.graph
    result = BufferAssignment()
    storage = result.storage
    for p in graph.params:
        storage[id(p)] = Storage("param")
    for node in graph.nodes:
        if node.op is Op.CONSTANT:
            storage[id(node)] = Storage("const")
    for kernel in plan.kernels:
        if kernel.kind == "library" and kernel.root.op is Op.RESHAPE:
            storage[id(kernel.root)] = Storage("view", base=kernel.root.inputs[0])
        elif in_place_base(kernel) is not None:      # np.power(b, c, out=b)
            storage[id(kernel.root)] = Storage("view", base=in_place_base(kernel))
        elif kernel.kind == "library" and (kernel.root.op in CONTROL_FLOW or
                                           kernel.root.op is Op.LIBRARY_RESULT or
                                           is_token(kernel.root)):
            storage[id(kernel.root)] = Storage("loop")
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
