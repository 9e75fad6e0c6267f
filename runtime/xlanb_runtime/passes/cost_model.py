"""The cost model: bytes moved, flops and launch overhead, per node and per fused kernel.

Fusion asks it what a merge saves (the bytes of an intermediate written and read back) and
the compiled program reports its predictions beside the measured times.  The machine figures
are this project's measured single-core numbers (../shared/PLATFORM.md); they only need to be
right in proportion, since decisions compare alternatives on the same machine.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import Node, Op
from ..ir.ops import ELEMENTWISE, EXPENSIVE


@dataclass(frozen=True)
class Machine:
    bytes_per_second: float = 44e9        # one-core triad bandwidth
    flops_per_second: float = 250e9       # one-core sgemm
    elementwise_per_second: float = 4e9   # simple vectorized element ops per second
    expensive_per_second: float = 1e9     # exp/tanh/log... with vector math
    launch_seconds: float = 1e-6          # one Numba call from the driver


MACHINE = Machine()


def node_flops(node: Node) -> float:
    """Floating-point work of one node, counting an expensive op as 10 flops."""
    if node.op is Op.DOT:
        lhs = node.inputs[0]
        contract = 1
        for d in node.arg[2]:
            contract *= lhs.shape[d]
        return 2.0 * node.size * contract
    if node.op is Op.REDUCE or node.op is Op.SCAN:
        return float(node.inputs[0].size)
    if node.op in ELEMENTWISE:
        return node.size * (10.0 if node.op in EXPENSIVE else 1.0)
    if node.op is Op.LIBRARY_CALL:
        from ..ir import library
        return library.flops(node.arg[0], node.inputs, dict(node.arg[1]))
    return 0.0


def node_seconds(node: Node, machine: Machine = MACHINE) -> float:
    """Compute time of one node executed on its own (without memory traffic)."""
    if node.op is Op.DOT:
        return node_flops(node) / machine.flops_per_second
    if node.op in EXPENSIVE:
        return node.size / machine.expensive_per_second
    if node.op in ELEMENTWISE or node.op in (Op.REDUCE, Op.SCAN, Op.LIBRARY_CALL):
        return node_flops(node) / machine.elementwise_per_second
    return 0.0


def predict_seconds(compute_nodes, read_bytes: int, write_bytes: int,
                    machine: Machine = MACHINE) -> float:
    """Roofline-style: the larger of memory time and compute time, plus a launch."""
    memory = (read_bytes + write_bytes) / machine.bytes_per_second
    compute = sum(node_seconds(n, machine) for n in compute_nodes)
    return max(memory, compute) + machine.launch_seconds


def unfused_seconds(node: Node, machine: Machine = MACHINE) -> float:
    """Prediction for the node run as its own kernel (the op-by-op baseline)."""
    read = sum(i.nbytes for i in node.inputs)
    return predict_seconds([node], read, node.nbytes, machine)


def recompute_factor(node: Node, region_elements: int) -> float:
    """How many times each element of `node` is computed when fused into a region."""
    return region_elements / max(node.size, 1)
