"""NumPy ufunc kernels: a loop kernel that is one transcendental on whole arrays runs as
NumPy's own ufunc where NumPy's loop is the faster one.

Generated kernels win by fusion; a kernel of a lone `np.exp(x)` fuses nothing, and for a
few functions NumPy's AVX-512 loops (SVML) beat vecmath's polynomials.  Measured on this
project's machines (1e6 elements, 1 thread, min of 25, NumPy vs generated kernel, ms):

    float32  pow 0.84 vs 1.31 (x ** y: 0.66 vs 1.37)   tanh 0.28 vs 0.39
    float64  pow 2.30 vs 7.81    exp 0.59 vs 0.99    log 0.89 vs 1.07
    exp2     float32 0.35 vs 0.43, float64 0.66 vs 0.97;  tan float32 0.47 vs 0.49
    sinh     float32 0.40 vs 0.60, float64 1.30 vs 1.43;  cosh 0.36 vs 0.64, 0.96 vs 1.44
             (an AVX-512 Xeon, 2026-11; generated faster: tan, arcsin, arccos f64)
    arcsinh  float64 2.16 vs 2.35;  arctanh 0.61 vs 0.65, 1.61 vs 1.78;  expm1 f32 0.33 vs
             0.36 (generated faster or equal: arctan, arccosh, arcsinh f32, log1p)
    (generated faster or equal: f32 exp, log, sin, sqrt; f64 sin, tanh, sqrt)

So such a kernel becomes a `library` kernel calling the ufunc (the driver writes
`b = np.power(x, c)`), with the reason in its decisions; a fused kernel ending in
`... ** c` ends before the pow, which NumPy then runs in place (`split_root_power`), and
one with a float64 `... ** c` inside it is cut in two around NumPy's pow
(`split_interior_power`).  Only where NumPy dispatches its
AVX-512 loops: without them NumPy's pow and tanh are scalar libm calls, several times
slower than vecmath's vectorized ones.  Below MIN_ELEMENTS the choice does not matter and
the generated kernel stays.  CPU only (the CUDA target generates every kernel).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..ir import Node, Op
from .fusion import FusionPlan, Kernel

# (op, dtype) -> NumPy's ufunc, where NumPy's AVX-512 loop was measured faster
FASTER_IN_NUMPY = {
    (Op.POW, np.dtype(np.float32)): np.power, (Op.TANH, np.dtype(np.float32)): np.tanh,
    (Op.POW, np.dtype(np.float64)): np.power, (Op.EXP, np.dtype(np.float64)): np.exp,
    (Op.LOG, np.dtype(np.float64)): np.log,
    (Op.EXP2, np.dtype(np.float32)): np.exp2, (Op.EXP2, np.dtype(np.float64)): np.exp2,
    (Op.TAN, np.dtype(np.float32)): np.tan,
    (Op.SINH, np.dtype(np.float32)): np.sinh, (Op.SINH, np.dtype(np.float64)): np.sinh,
    (Op.COSH, np.dtype(np.float32)): np.cosh, (Op.COSH, np.dtype(np.float64)): np.cosh,
    (Op.ASINH, np.dtype(np.float64)): np.arcsinh,
    (Op.ATANH, np.dtype(np.float32)): np.arctanh, (Op.ATANH, np.dtype(np.float64)): np.arctanh,
    (Op.EXPM1, np.dtype(np.float32)): np.expm1,
}
MIN_ELEMENTS = 1 << 14
_AVX512_LOOPS = ("X86_V4", "AVX512_SKX", "AVX512_ICL", "AVX512_SPR")


def numpy_has_avx512_loops() -> bool:
    """Whether NumPy was built with AVX-512 loops and this CPU runs them."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:                      # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    return bool(__cpu_features__.get("AVX512_SKX")) and \
        any(target in __cpu_dispatch__ for target in _AVX512_LOOPS)


def ufunc_operands(kernel: Kernel, kind: str = "loop") -> list[Node] | None:
    """The operands of a `kind` kernel that is one FASTER_IN_NUMPY op on whole arrays
    (kernel inputs of its shape) or scalar constants broadcast to it, else None."""
    node = kernel.root
    if kernel.kind != kind or len(kernel.outputs) != 1 or kernel.outputs[0] is not node or \
            (node.op, node.dtype) not in FASTER_IN_NUMPY or node.size < MIN_ELEMENTS:
        return None
    operands = []
    for operand in node.inputs:
        if operand.op is Op.BROADCAST and operand.inputs[0].op is Op.CONSTANT and \
                operand.inputs[0].ndim == 0 and kernel.contains(operand):
            operands.append(operand.inputs[0])
        elif not kernel.contains(operand) and operand.shape == node.shape and \
                operand.dtype == node.dtype:
            operands.append(operand)
        else:
            return None
    if any(n is not node and not any(n is i for i in node.inputs) for n in kernel.nodes):
        return None
    return operands


def split_root_power(kernel: Kernel) -> tuple[Kernel, Kernel] | None:
    """(the kernel up to its root's base, an in-place np.power library kernel) for a loop
    kernel whose root is `base ** c` (base computed in it, c a scalar constant), else None.
    pow is the one function whose generated cost beats a second pass over the output:
    NumPy's loop saves ~0.45 ns per float32 element (~5 ns per float64) against ~0.3 ns
    for reading and writing the output again (RGB -> gray + gamma, 1024x1024x3 f32:
    fused 1.69 ms, split 1.48 ms, NumPy 1.50 ms)."""
    node = kernel.root
    if kernel.kind != "loop" or node.op is not Op.POW or len(kernel.outputs) != 1 or \
            kernel.outputs[0] is not node or (node.op, node.dtype) not in FASTER_IN_NUMPY \
            or node.size < MIN_ELEMENTS:
        return None
    base, exponent = node.inputs
    if not (kernel.contains(base) and base.shape == node.shape and base.dtype == node.dtype
            and exponent.op is Op.BROADCAST and exponent.inputs[0].op is Op.CONSTANT
            and exponent.inputs[0].ndim == 0 and kernel.contains(exponent)):
        return None
    users = [n for n in kernel.nodes if any(i is base or i is exponent for i in n.inputs)]
    if users != [node]:
        return None
    head = Kernel(kernel.name, "loop", base,
                  nodes=[n for n in kernel.nodes if n is not node and n is not exponent],
                  inputs=list(kernel.inputs),
                  consts=[c for c in kernel.consts if c is not exponent.inputs[0]],
                  outputs=[base], region=dict(kernel.region), direct=dict(kernel.direct),
                  decisions=list(kernel.decisions))
    tail = _power_kernel(kernel, node, exponent, base,
                         f"library: NumPy's np.power ({node.dtype}, AVX-512 loop) in place "
                         f"on {kernel.name}'s output: faster than the generated pow even "
                         "with the second pass over it")
    return head, tail


def split_interior_power(kernel: Kernel) -> tuple[Kernel, ...] | None:
    """(the kernel up to a float64 `base ** c` inside it, the in-place np.power, the rest
    reading its result) for a loop kernel computing such a pow on its whole iteration
    space where nothing after the pow reads what computed its base (scalar constants
    aside: each part binds its own), else None; (np.power into a buffer of its own, the
    rest) where the base is the kernel's input.  The gap a float64 pow leaves (~5 ns an
    element) pays for two more passes over the base (~0.6 ns): `((img / 255) ** 2.2 * 255)
    .astype(np.uint8)` on 1024x1024 uint8, NumPy 4.6 ms, fused 6.0 ms.  A float32 pow saves
    ~0.45 ns against those passes, so only a root pow is split there (split_root_power)."""
    if kernel.kind != "loop" or kernel.extra_outputs or kernel.stages or kernel.row_locals:
        return None
    for node in kernel.nodes:
        if node.op is not Op.POW or node is kernel.root or node.dtype != np.float64 or \
                node.size < MIN_ELEMENTS or node.shape != kernel.root.shape or \
                any(out is node for out in kernel.outputs):
            continue
        parts = _power_parts(kernel, node)
        if parts is not None:
            return parts
    return None


def _power_parts(kernel: Kernel, node: Node) -> tuple[Kernel, ...] | None:
    base, exponent = node.inputs
    if not (base.shape == node.shape and base.dtype == node.dtype and
            _is_constant_broadcast(exponent) and kernel.contains(exponent)):
        return None
    head_ids = _computed_by(kernel, base)
    head = [n for n in kernel.nodes if id(n) in head_ids]
    shared = {id(n) for n in head if _is_constant_broadcast(n)}
    rest = [n for n in kernel.nodes if id(n) not in head_ids and n is not node and
            not (n is exponent and _users(kernel, exponent) == [node])]
    if any(id(i) in head_ids - shared for later in rest for i in later.inputs) or \
            any(id(out) in head_ids for out in kernel.outputs):
        return None                     # the rest would read the head's values
    rest_ids = {id(n) for n in rest}
    rest = [n for n in kernel.nodes if id(n) in rest_ids or
            id(n) in shared and any(i is n for later in rest for i in later.inputs)]
    last = _part(kernel, f"{kernel.name}.rest", kernel.root, rest, list(kernel.outputs),
                 extra_inputs=[node])
    reason = (f"library: NumPy's np.power ({node.dtype}, AVX-512 loop), then "
              f"{kernel.name}.rest reads it: faster than the generated float64 pow even "
              "with more passes over memory")
    if not head:                        # the base is the kernel's input: a fresh output
        return _power_kernel(kernel, node, exponent, base, reason, ".ufunc"), last
    first = _part(kernel, kernel.name, base, head, [base])
    return first, _power_kernel(kernel, node, exponent, base, reason + " (in place)"), last


def _computed_by(kernel: Kernel, node: Node) -> set[int]:
    """ids of `node` and the nodes of `kernel` it is computed from."""
    seen, stack = set(), [node]
    while stack:
        n = stack.pop()
        if id(n) in seen or not kernel.contains(n):
            continue
        seen.add(id(n))
        stack.extend(n.inputs)
    return seen


def _is_constant_broadcast(node: Node) -> bool:
    return node.op is Op.BROADCAST and node.inputs[0].op is Op.CONSTANT and \
        node.inputs[0].ndim == 0


def _users(kernel: Kernel, node: Node) -> list[Node]:
    return [n for n in kernel.nodes if any(i is node for i in n.inputs)]


def _part(kernel: Kernel, name: str, root: Node, nodes: list[Node], outputs: list[Node],
          extra_inputs: tuple = ()) -> Kernel:
    """A loop kernel of `nodes` (a part of `kernel`, in its order) writing `outputs`."""
    ids = {id(n) for n in nodes}
    read = {id(i) for n in nodes for i in n.inputs if id(i) not in ids}
    return Kernel(name, "loop", root, nodes=list(nodes),
                  inputs=[i for i in kernel.inputs if id(i) in read] + list(extra_inputs),
                  consts=[c for c in kernel.consts if id(c) in read],
                  outputs=outputs,
                  region={i: r for i, r in kernel.region.items() if i in ids},
                  direct={i: d for i, d in kernel.direct.items() if i in ids},
                  decisions=list(kernel.decisions),
                  copies={i: c for i, c in kernel.copies.items() if i in ids})


def _power_kernel(kernel: Kernel, node: Node, exponent: Node, base: Node,
                  decision: str, suffix: str = ".power") -> Kernel:
    """The library kernel running np.power(base, c, out=base) (`in_place_base`), or with
    another suffix np.power(base, c) into a buffer of its own (`ufunc_operands`)."""
    return Kernel(f"{kernel.name}{suffix}", "library", node, nodes=[exponent, node],
                  inputs=[base], consts=[exponent.inputs[0]], outputs=[node],
                  region={id(exponent): "loop", id(node): "loop"},
                  direct={id(exponent): True, id(node): True}, decisions=[decision])


def in_place_base(kernel: Kernel) -> Node | None:
    """The buffer an in-place power kernel (split_root_power) overwrites, else None."""
    if kernel.kind == "library" and kernel.root.op is Op.POW and \
            kernel.name.endswith(".power") and len(kernel.inputs) == 1:
        return kernel.inputs[0]
    return None


def numpy_ufunc_kernels(plan: FusionPlan, parallel: Callable[[Kernel], bool]) -> FusionPlan:
    """Mark the plan's single-ufunc loop kernels that NumPy runs faster as library
    kernels (in place; returns the plan).  A kernel that would run on several threads
    (`parallel`) keeps its generated loop: the figures above are one thread against one,
    and NumPy's ufuncs run on one."""
    if not numpy_has_avx512_loops():
        return plan
    kernels, todo = [], list(reversed(plan.kernels))
    while todo:
        kernel = todo.pop()
        split = None if parallel(kernel) else \
            split_root_power(kernel) or split_interior_power(kernel)
        if split is not None:
            for part in split:
                for out in part.outputs:
                    plan.producer[id(out)] = part
            todo += reversed(split)           # the rest may hold another pow
            continue
        kernels.append(kernel)
        if ufunc_operands(kernel) is None or parallel(kernel):
            continue
        node = kernel.root
        ufunc = FASTER_IN_NUMPY[(node.op, node.dtype)]
        kernel.kind = "library"
        kernel.decisions.append(
            f"library: NumPy's np.{ufunc.__name__} ({node.dtype}, AVX-512 loop) is faster "
            "than a generated loop for a kernel of this one function (nothing to fuse)")
    plan.kernels = kernels
    return plan
