"""Row fusion: chains of kernels that each sweep the same rows become one pass per row.

A softmax is three kernels after `fusion` (max, exp-and-sum, divide), a layer norm three
(mean, variance, normalize): each reads its rows from memory again, and each is a kernel
call.  When every kernel of such a chain iterates over rows of one shape, and each reads
what the earlier ones wrote only at the row it is on, they become stages of one `row`
kernel: the generated loop visits a row once and runs the stages in order on it, while
it is still in L1 (XLA's softmax / layer-norm fusion, on a CPU):

    reduce_fusion.1 (reduce) = max(s)            row_fusion.0 (row), per row:
    reduce_fusion.2 (reduce) = e, sum(e)    ->     stage 1  m = max(s)
    fusion.1 (loop) = e / sum                      stage 2  e = exp(s - m), t = sum(e)
                                                   stage 3  p = e / t

Stages: reductions over the last axis only, and loop kernels over the full row space or
over its rows (the reduced shape).  A stage reads an earlier stage's output at its own
row, or the merge is refused: `row_local` follows the stage's index arithmetic
symbolically to check.  A merge is also refused when a kernel outside the chain stands
between two stages (it would need the first stage's output before the row kernel ends).
A kernel that only shares an input with a chain joins it too: the row is read once.

Whole-row values that only later stages read (a softmax's `e`) are kept in a buffer of one
row (`keep_rows_local`), not written to an array the size of the input; other outputs of
earlier stages stay buffers (later stages read them back from cache).  The gain is one
sweep over memory and one call instead of several.  A chain with reductions takes
no stage whose vector math is inaccurate under `reassoc` (tanh, erf...): the kernel is one
function with one set of fastmath flags, and its reductions need `reassoc` to vectorize.  Target: CPU (the CUDA code
generator schedules reductions per block, without stages).
"""
from __future__ import annotations

from ..ir import Node, Op
from ..ir.ops import ELEMENTWISE
from .fusion import (MAX_KERNEL_OPS, Kernel, _unique, is_unit_reshape, kernel_size, squeezed,
                     writes_a_region)

ROW = "row"                            # index token of the swept (last) axis
ROW_KIND = "row"


def row_space(kernel: Kernel) -> tuple[int, ...] | None:
    """The (rows..., row length) shape a kernel sweeps, or None if it is not a stage."""
    if kernel.kind == "reduce":
        red = kernel.reductions[0]
        shape = red.inputs[0].shape
        if len(shape) >= 2 and tuple(red.arg[1]) == (len(shape) - 1,):
            return shape
        return None
    if kernel.kind == "loop" and len(kernel.root.shape) >= 2 and not (
            kernel.root.op is Op.SELECT and writes_a_region(kernel.root)):
        return kernel.root.shape
    return None                 # a region write writes its region only (codegen/cpu.py)


def _natural_index(shape, rows: tuple[int, ...]) -> tuple | None:
    """Index tokens of a value of `shape` iterated as a whole row (rows + (n,)) or as one
    value per row (rows, size-1 dims allowed)."""
    if squeezed(shape) == squeezed(rows) and len(shape) <= len(rows) + 1:
        outer = iter(("o", d) for d, n in enumerate(rows) if n != 1)
        return tuple(next(outer) if n != 1 else "0" for n in shape)
    if tuple(shape[:-1]) == tuple(rows):
        return tuple(("o", d) for d in range(len(rows))) + (ROW,)
    return None


def _operand_index(node: Node, idx: tuple) -> list[tuple[Node, tuple]]:
    """(input, index tokens) read when `node` is computed at `idx`; None tokens: an index
    this check does not follow (it then refuses)."""
    if node.op is Op.REDUCE:
        rank = node.inputs[0].ndim
        kept = iter(idx)
        return [(node.inputs[0], tuple(ROW if d in node.arg[1] else next(kept)
                                       for d in range(rank)))]
    if node.op is Op.BROADCAST:
        operand = node.inputs[0]
        return [(operand, tuple("0" if operand.shape[i] == 1 else idx[d]
                                for i, d in enumerate(node.arg)))]
    if node.op is Op.TRANSPOSE:
        mapped = [None] * node.ndim
        for k, p in enumerate(node.arg):
            mapped[p] = idx[k]
        return [(node.inputs[0], tuple(mapped))]
    if node.op is Op.RESHAPE and is_unit_reshape(node):
        outer = iter(i for i, n in zip(idx, node.shape) if n != 1)
        return [(node.inputs[0], tuple("0" if n == 1 else next(outer)
                                       for n in node.inputs[0].shape))]
    if node.op in ELEMENTWISE:
        return [(i, idx if i.shape == node.shape else None) for i in node.inputs]
    return [(i, None) for i in node.inputs]


def row_local(stage: Kernel, rows: tuple[int, ...], earlier: set[int]) -> bool:
    """Whether `stage` reads the buffers in `earlier` only at the row it is computing."""
    wanted = {id(n) for n in stage.inputs} & earlier
    if not wanted:
        return True
    anchor = stage.reductions[0] if stage.kind == "reduce" else stage.root
    start = [(out, _natural_index(out.shape, rows)) for out in stage.outputs]
    if stage.kind == "reduce":
        start.append((anchor, _natural_index(anchor.shape, rows)))
    stack, seen = list(start), set()
    while stack:
        node, idx = stack.pop()
        key = (id(node), idx)
        if key in seen:
            continue
        seen.add(key)
        if not stage.contains(node) or node.op in (Op.PARAMETER, Op.CONSTANT):
            if id(node) in wanted and (idx is None or idx != _natural_index(node.shape,
                                                                              rows)):
                return False
            continue
        if idx is None:
            return False            # an in-stage value at an index not followed
        stack.extend(_operand_index(node, idx))
    return True


def merge_rows(kernels: list[Kernel], producer: dict[int, Kernel],
               index: dict[int, int]) -> list[Kernel]:
    """Fold chains of row stages (`kernels` in execution order) into `row` kernels; the
    caller orders the result again (a group runs when its last stage's inputs are
    ready)."""
    merged: list[Kernel] = []
    owner: dict[int, Kernel] = {}              # id(stage kernel) -> its row kernel
    groups: dict[tuple, list[Kernel]] = {}     # rows shape -> its row kernels, oldest first
    for kernel in kernels:
        space = row_space(kernel)
        if space is None:
            merged.append(kernel)
            continue
        candidates = groups.setdefault(tuple(space[:-1]), [])
        upstream = _upstream_of_inputs(kernel, producer, owner)
        group = next((g for g in reversed(candidates)
                      if _joins(g, kernel, space, upstream)), None)
        if group is None:
            group = Kernel("", ROW_KIND, kernel.root, stages=[])
            candidates.append(group)
            merged.append(group)
        _append_stage(group, kernel, producer)
        owner[id(kernel)] = group
    result = [_unwrap(k, producer) for k in merged]
    for kernel in result:
        kernel.nodes.sort(key=lambda n: index[id(n)])
    return result


def _joins(group: Kernel, kernel: Kernel, space, upstream: dict[int, set[int]]) -> bool:
    """Whether `kernel` can run as the next stage of `group`: it reads something the
    group writes or reads (a buffer swept once for both), every other buffer it reads is
    ready before the group starts, and it reads the group's outputs only at its own
    row.  `upstream` maps each input to the kernels it is computed from."""
    rows = tuple(space[:-1])
    if kernel_size(group) + kernel_size(kernel) > MAX_KERNEL_OPS:
        return False            # one Numba function: its compile time grows faster than it
    written = {id(o) for o in group.outputs}
    read = {id(i) for i in group.inputs}
    if not any(id(i) in written or id(i) in read for i in kernel.inputs):
        return False
    if any(id(group) in upstream.get(id(i), ()) for i in kernel.inputs
           if id(i) not in written):
        return False
    return row_local(kernel, rows, written)


def _upstream_of_inputs(kernel: Kernel, producer: dict, owner: dict) -> dict[int, set[int]]:
    """id(input) -> ids of the kernels (or row groups) that input is computed from,
    through any chain.  Walked once per kernel, not once per candidate group: on a long
    unrolled loop a walk per candidate made row fusion cubic in the kernel count."""
    walks: dict[int, set[int]] = {}
    result = {}
    for inp in kernel.inputs:
        source = producer.get(id(inp))
        if source is None:
            continue
        source = owner.get(id(source), source)
        if id(source) not in walks:
            walks[id(source)] = _upstream(source, producer, owner)
        result[id(inp)] = walks[id(source)]
    return result


def _upstream(kernel: Kernel, producer: dict, owner: dict) -> set[int]:
    """ids of `kernel` and every kernel it reads from, through any chain."""
    stack, seen = [kernel], {id(kernel)}
    while stack:
        for inp in stack.pop().inputs:
            source = producer.get(id(inp))
            if source is None:
                continue
            source = owner.get(id(source), source)
            if id(source) not in seen:
                seen.add(id(source))
                stack.append(source)
    return seen


def depends_on(kernel: Kernel, target: Kernel, producer: dict, owner: dict | None = None
               ) -> bool:
    """Whether `kernel` reads, through any chain of kernels, what `target` writes.
    `producer` maps an array's id to the kernel writing it; `owner` a kernel's id to the
    group that absorbed it (row fusion's merged stages)."""
    return id(target) in _upstream(kernel, producer, owner or {})


def _append_stage(group: Kernel, stage: Kernel, producer) -> None:
    written = {id(o) for o in group.outputs}
    group.stages.append(stage)
    group.root = stage.root
    for node in stage.nodes:
        if not group.contains(node):
            group.nodes.append(node)
            group.region[id(node)] = stage.region[id(node)]
            group.direct[id(node)] = stage.direct[id(node)]
    group.inputs = _unique(group.inputs + [i for i in stage.inputs if id(i) not in written])
    group.outputs = _unique(group.outputs + stage.outputs)
    group.consts = _unique(group.consts + stage.consts)
    if len(group.stages) > 1:
        group.decisions.append(f"row fusion: {stage.kind} stage {len(group.stages)} "
                               f"({stage.root.op.value}) runs on each row as it is swept")
    group.decisions += stage.decisions
    for out in stage.outputs:
        producer[id(out)] = group


def _unwrap(kernel: Kernel, producer) -> Kernel:
    """A row kernel of one stage is that stage's kernel again."""
    if kernel.kind != ROW_KIND or len(kernel.stages) > 1:
        return kernel
    stage = kernel.stages[0]
    for out in stage.outputs:
        producer[id(out)] = stage
    return stage


def keep_rows_local(kernels: list[Kernel], is_output: set[int]) -> None:
    """Move each row kernel's whole-row values that no other kernel reads and the program
    does not return from its outputs to `row_locals`: the generated code keeps the row
    it is on in a buffer of one row, which later stages read (row_local checked they read
    it only at that row).  A softmax of 1024x1000 then writes one output array, not two
    (its `e` went to a scratch array the size of the input, ~1/3 of its memory traffic)."""
    read_elsewhere: dict[int, set[int]] = {}
    for kernel in kernels:
        for inp in kernel.inputs:
            read_elsewhere.setdefault(id(inp), set()).add(id(kernel))
    for kernel in kernels:
        if kernel.kind != ROW_KIND or len(kernel.stages) < 2:
            continue
        local = [o for o in kernel.outputs
                 if id(o) not in is_output and not read_elsewhere.get(id(o))
                 and _whole_row(kernel, o)]
        if not local:
            continue
        kernel.row_locals = local
        kernel.outputs = [o for o in kernel.outputs if not any(o is n for n in local)]
        kernel.decisions.append(
            f"row fusion: {', '.join(n.op.value for n in local)} kept one row at a time, "
            f"in a buffer of {local[0].shape[-1]} elements: only later stages read it")


def _whole_row(kernel: Kernel, node: Node) -> bool:
    """Whether a stage before the last writes `node` element by element over its rows
    (not one value per row)."""
    for stage in kernel.stages[:-1]:
        if any(node is out for out in stage.outputs):
            return node.shape == row_space(stage) and stage.region[id(node)] != "out"
    return False
