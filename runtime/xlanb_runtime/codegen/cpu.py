"""CPU code generation: one fused kernel -> the Python source of one Numba function.

Sizes and scalar constants are runtime arguments, so a kernel's source depends on its ops,
dtypes, ranks and broadcast pattern but not on the array sizes: a new shape re-plans in
milliseconds and reuses the compiled machine code (Numba specializes on dtype, ndim and
layout only).  Every value is computed per element of an iteration space by index
arithmetic; broadcast, transpose, slice and reverse only change the index expression.

    # fusion.0 (loop): multiply, add      <- header: group, ops, the user's lines
    def fusion_0(in0, in1, out0, n0, c0):
        for i0 in range(n0):
            v0 = (in0[i0] * c0)
            v1 = (v0 + in1[i0])
            out0[i0] = v1

Reductions accumulate in float64 for float32 inputs (NumPy-level accuracy at 10^7
elements) in kernels compiled with `reassoc`, so LLVM vectorizes the accumulation; vector
math functions are separate Numba functions with their own (non-reassociating) flags.
Long float32 sums (whole arrays, rows from BLOCKED_ROW_MIN terms) add float32 blocks of
SUM_BLOCK terms first, so the loop runs at the full float32 vector width, and a chain of
vector math functions in such a block is split in two loops (`fission_cut`).
"""
from __future__ import annotations

import collections
import contextlib
import functools
import hashlib
import inspect
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from ..ir import Node, Op
from ..ir.ops import ELEMENTWISE, EXPENSIVE, SCAN_COMBINE
from ..passes.fusion import Kernel
from ..passes.gemv_fusion import transposed_gemv_operands
from ..passes.row_fusion import row_space
from .. import flags
from . import complex_math, flat, half, hints, rng, templates, thread_calibration
from .complex_math import CEXP_VEC_MAX_REAL
from .vecmath import REASSOC_SAFE, SEALED, TRIG_LIBM, TRIG_MAX_F32, TRIG_MAX_F64

# No `arcp`: with it LLVM turns float32 `y / np.sqrt(x)` into an rsqrt estimate plus a
# Newton step, which gives nan for x = 0 and x = inf (NumPy: inf, 0) and is not correctly
# rounded (1/sqrt(4) = 0.49999997); NumPy's division is IEEE division.  No `contract`:
# NumPy rounds each multiply and add, and one fma rounding instead moves results across
# a truncation (a uint8 alpha blend, `(a * 0.3 + b * 0.7).astype(np.uint8)`, differed in
# 0.26% of its pixels); vecmath's polynomials fuse through explicit muladd calls.  Dot
# kernels contract (CONTRACTING_KINDS): NumPy's BLAS fuses its products too.
BASE_FASTMATH = ("nsz", "afn")
CONTRACTING_KINDS = ("dot", "gemv_pair")
MAX_INDEX_TEXT = 200     # characters: a longer index expression becomes a variable
SCAN_CHUNK = 256         # elements of a last-axis scan per pass through its L1 buffer


@dataclass
class KernelArg:
    kind: str            # in | in_t (passed transposed) | out | size | const | accnd (a
    #                      dot kernel's accumulator) | scalar (a 0-d input's value)
    name: str
    node: Node | None = None
    value: object = None  # sizes: the int


@dataclass
class GeneratedKernel:
    kernel: Kernel
    function: str
    source: str
    args: list[KernelArg] = field(default_factory=list)
    dot_acc: tuple | None = None   # ("output", node) or ("scratch", shape, dtype)
    # dot kernels: (lhs OperandView, rhs OperandView, (*batch, m, n))
    matmul: tuple | None = None

    @property
    def has_function(self) -> bool:
        """False for a bare contraction: NumPy's matmul is the whole kernel."""
        return self.kernel.kind != "dot" or self.matmul is None or \
            any(a.kind in ("accnd", "out") for a in self.args)

    @property
    def name(self) -> str:
        return self.kernel.name


def _vecmath_digest() -> str:
    try:
        from . import vecmath
        return hashlib.sha256(inspect.getsource(vecmath).encode()).hexdigest()[:12]
    except (ImportError, OSError):
        return "none"


_VECMATH_DIGEST = _vecmath_digest()
_RNG_DIGEST = hashlib.sha256(inspect.getsource(rng).encode()).hexdigest()[:12]
_HALF_DIGEST = hashlib.sha256(inspect.getsource(half).encode()).hexdigest()[:12]
_FLAT_DIGEST = hashlib.sha256(inspect.getsource(flat).encode()).hexdigest()[:12]
_HINTS_DIGEST = hashlib.sha256(inspect.getsource(hints).encode()).hexdigest()[:12]
# alloc is read, not imported: its import is left to the kernels that use it
_ALLOC_DIGEST = hashlib.sha256(
    (Path(__file__).parent / "alloc.py").read_bytes()).hexdigest()[:12]
_COMPLEX_MATH_DIGEST = hashlib.sha256(
    inspect.getsource(complex_math).encode()).hexdigest()[:12]
_VECMATH_NAMES = {name for pair in templates.VECMATH.values() for name in pair} | {
    "fmaximum", "fminimum"} | set(templates.POW) | set(templates.ATAN2) | \
    set(templates.REMAINDER) | set(TRIG_LIBM.values())


class _Codegen:
    merged_views_enabled = True           # `input_at`; the CUDA emitter turns it off

    def __init__(self, kernel: Kernel, parallel: bool = False, in_place=None,
                 staged: bool | None = None):
        self.k = kernel
        # a region update's staging as buffer assignment decided it from where each
        # buffer lives (buffers.py `region_staging`); None: `region_needs_staging`'s guess
        self.staged = staged
        self.parallel = parallel          # the outermost loop becomes a numba.prange
        # id(output) -> the input whose buffer it is written into (buffers.py), stored
        # through the input's own name: one pointer, which LLVM vectorizes without the
        # run-time overlap check that two names of one buffer fail
        self.in_place: dict[int, Node] = in_place or {}
        self.args: list[KernelArg] = []
        self.buffer_names: dict[int, str] = {}
        self.const_names: dict[int, str] = {}
        self.lines: list[str] = []
        self.depth = 1
        self.counter = 0
        self.reduce_vars: dict[int, str] = {}
        self.dot_acc_name: str | None = None
        self.dot_acc: tuple | None = None
        self.matmul: tuple | None = None
        self.strides: dict[int, list[str]] = {}     # rng-bits node -> its dims' size args
        self.tag = ""                     # accumulator name prefix: row kernels' stages
        self.narrow = False               # a dot generated whole (gen_narrow_dot)
        self.merged_views: dict[str, int] = {}     # input -> ndim, read through `input_at`
        self.loop_carried = True          # sums accumulate in loops (they need `reassoc`)
        self.row_local_names: dict[int, str] = {}   # row kernels' one-row buffers
        self.row_buffer_locals: set[int] = set()     # ... that are a reduction's row buffer

    # -- arguments ---------------------------------------------------------------------
    def _arg(self, kind: str, prefix: str, node=None, value=None) -> str:
        name = f"{prefix}{sum(a.kind == kind for a in self.args)}"
        self.args.append(KernelArg(kind, name, node, value))
        return name

    def input_name(self, node: Node) -> str:
        if id(node) not in self.buffer_names:
            self.buffer_names[id(node)] = self._arg("in", "in", node)
        return self.buffer_names[id(node)]

    def const_name(self, node: Node) -> str:
        if id(node) not in self.const_names:
            self.const_names[id(node)] = self._arg("const", "c", node)
        return self.const_names[id(node)]

    def size_names(self, shape, prefix: str = "n") -> list[str]:
        return [self._arg("size", prefix, value=int(d)) for d in shape]

    # -- emission ----------------------------------------------------------------------
    def emit(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def fresh(self) -> str:
        self.counter += 1
        return f"v{self.counter}"

    def open_loops(self, sizes: list[str], var: str, parallel: bool = False
                   ) -> tuple[str, ...]:
        names = []
        for i, size in enumerate(sizes):
            name = f"{var}{i}"
            loop = "numba.prange" if parallel and i == 0 else "range"
            self.emit(f"for {name} in {loop}({size}):")
            self.depth += 1
            names.append(name)
        return tuple(names)

    @contextlib.contextmanager
    def distributed_loop(self, streamed: bool = False):
        """The body emitted inside (of the loop just opened, one level deeper) is split
        into one such loop per store (`distribute_stores`); a `streamed` loop (its arrays
        past the caches) only where that loads no array twice."""
        start = len(self.lines)
        self.depth += 1
        yield
        self.depth -= 1
        header, groups = self.lines[start - 1], distribute_stores(self.lines[start:],
                                                                  streamed)
        del self.lines[start - 1:]
        for group in groups:
            self.lines += [header] + group

    @staticmethod
    def at(buffer: str, idx: tuple[str, ...]) -> str:
        return f"{buffer}[{', '.join(idx) if idx else '0'}]"

    def value(self, node: Node, idx: tuple[str, ...], cache: dict) -> str:
        """A variable holding `node` at index `idx`, emitting the code to compute it.

        `value_steps` asks for its operands by yielding them, and `run_steps` computes
        them on an explicit stack: a chain of any depth emits one statement per node, in
        the same order as a recursive walk, without nearing Python's recursion limit."""
        cached = cache.get((id(node), idx))
        if cached is not None:
            return cached
        return run_steps(self.value_steps, node, idx, cache)

    def value_steps(self, node: Node, idx: tuple[str, ...], cache: dict):
        """`value` as a generator: `yield (operand, index)` receives that operand's
        variable."""
        key = (id(node), idx)
        if key in cache:
            return cache[key]
        if id(node) in self.reduce_vars:
            return self.reduce_vars[id(node)]
        if node.op is Op.CONSTANT and node.shape == ():
            if node.dtype.kind in "iu":     # a literal: LLVM divides by it with a multiply
                # and shifts, as NumPy's libdivide does (`x // 7`, `x % 5`: 0.93x NumPy as
                # a kernel argument); float constants stay arguments (kernels reuse)
                value = node.arg[()] if isinstance(node.arg, np.ndarray) else node.arg
                return f"{templates.CAST[node.dtype.name]}({int(value)})"
            return self.const_name(node)
        if node.op is Op.DOT and node is self.k.dot and self.narrow:
            return f"{NARROW_ACCUMULATORS[idx[0]]}{idx[-1]}"    # (row, literal column)
        if node.op is Op.DOT and node is self.k.dot:
            result = self._load(self.dot_acc_name, idx)
        elif not self.k.contains(node):
            result = self._assign(self.input_at(node, idx))
        elif node.op is Op.IOTA:
            result = self._assign(templates.convert(idx[node.arg], np.dtype(np.int64),
                                                    node.dtype))
        elif node.op is Op.RNG_BITS:
            seed = (yield (node.inputs[0], ()))
            result = self._assign(f"splitmix64({seed}, {self.flat_index(node, idx)})")
        elif node.op is Op.BROADCAST:
            operand = node.inputs[0]
            mapped = tuple("0" if operand.shape[i] == 1 else idx[d]
                           for i, d in enumerate(node.arg))
            return (yield (operand, mapped))
        elif node.op is Op.TRANSPOSE:
            mapped = [""] * node.ndim
            for k, p in enumerate(node.arg):
                mapped[p] = idx[k]
            return (yield (node.inputs[0], tuple(mapped)))
        elif node.op is Op.SLICE:
            mapped = tuple(_affine(i, start, step) for i, (start, _, step) in zip(idx, node.arg))
            return (yield (node.inputs[0], self._short(mapped)))
        elif node.op is Op.RESHAPE:
            return (yield (node.inputs[0], self._short(self._reshape_index(node, idx))))
        elif node.op is Op.GATHER:           # np.take: indices clamped into range
            operand, indices = node.inputs
            axis, rank = node.arg, indices.ndim
            position = (yield (indices, idx[axis:axis + rank]))
            clamped = self._assign(clamp(position, indices.dtype, operand.shape[axis] - 1))
            mapped = idx[:axis] + (clamped,) + idx[axis + rank:]
            return (yield (operand, mapped))
        elif node.op is Op.REVERSE:
            mapped = tuple(f"({n - 1} - {_atom(i)})" if d in node.arg else i
                           for d, (i, n) in enumerate(zip(idx, node.shape)))
            return (yield (node.inputs[0], self._short(mapped)))
        elif node.op is Op.DYNAMIC_SLICE:    # starts read at run time, clamped in range
            operand, starts = node.inputs[0], node.inputs[1:]
            mapped = []
            for d, (i, size) in enumerate(zip(idx, node.arg)):
                start = (yield (starts[d], ()))
                clamped = self._assign(clamp(start, starts[d].dtype, operand.shape[d] - size))
                mapped.append(f"({i} + {clamped})")
            return (yield (operand, tuple(mapped)))
        elif node.op in (Op.PAD, Op.DYNAMIC_PAD):
            result = yield from self._pad_value(node, idx)
        elif node.op is Op.CONCATENATE:
            result = yield from self._concatenate_value(node, idx, cache)
        else:
            operands = []
            for operand in node.inputs:
                operands.append((yield (operand, idx)))
            operand_dtype = node.inputs[-1].dtype
            result = self._assign(templates.expression(node.op, node.dtype, operands,
                                                       operand_dtype))
        cache[key] = result
        return result

    def _pad_value(self, node: Node, idx: tuple[str, ...]):
        """The operand where `idx` falls inside it, else the padding value.  The operand is
        read at a clamped index either way, so no load leaves its buffer."""
        operand, fill = node.inputs[:2]
        fill_value = (yield (fill, ()))
        if 0 in operand.shape:
            return fill_value
        if node.op is Op.PAD:
            lows = [low for low, _, _ in node.arg]
            steps = [interior + 1 for _, _, interior in node.arg]
        else:                                # lows read at run time, clamped as XLA does
            lows, steps = [], [1] * node.ndim
            for d, low in enumerate(node.inputs[2:]):
                value = (yield (low, ()))
                lows.append(self._assign(
                    clamp(value, low.dtype, node.shape[d] - operand.shape[d])))
        inside, mapped = [], []
        for i, low, n, step in zip(idx, lows, operand.shape, steps):
            if low == 0 and n == node.shape[len(mapped)]:
                mapped.append(i)
                continue
            if step == 1:
                inside.append(f"{low} <= {i} < {low} + {n}")
                mapped.append(clamp(f"{i} - {low}", np.dtype(np.int64), n - 1))
                continue
            # an interior pad (a strided slice's update): every step-th element is one
            inside.append(f"{low} <= {i} < {low + (n - 1) * step + 1} and "
                          f"({i} - {low}) % {step} == 0")
            mapped.append(clamp(f"({i} - {low}) // {step}", np.dtype(np.int64), n - 1))
        value = (yield (operand, self._short(tuple(mapped))))
        if not inside:
            return value
        return self._assign(f"{value} if {' and '.join(inside)} else {fill_value}")

    def _concatenate_value(self, node: Node, idx: tuple[str, ...], cache: dict):
        """The operand whose range holds idx[axis], read in its own branch: one load per
        element (selects over every operand load them all, 2x slower for np.stack of 9
        slices), and the branch is the same along inner axes, which LLVM unswitches."""
        axis = node.arg
        position, low = idx[axis], 0
        parts = [x for x in node.inputs if x.shape[axis]]
        if len(parts) <= 1:       # one operand holds every element (or none: never read)
            return (yield ((parts or node.inputs)[0], idx))
        result = self.fresh()
        for n, x in enumerate(parts):
            high = low + x.shape[axis]
            head = "else:" if n == len(parts) - 1 else \
                f"{'if' if n == 0 else 'elif'} {position} < {high}:"
            self.emit(head)
            self.depth += 1
            outside = dict(cache)            # values computed in a branch stay in it
            mapped = idx[:axis] + (_affine(position, -low, 1),) + idx[axis + 1:]
            value = (yield (x, self._short(mapped)))
            self.emit(f"{result} = {value}")
            cache.clear()
            cache.update(outside)
            self.depth -= 1
            low = high
        return result

    def _short(self, idx: tuple[str, ...]) -> tuple[str, ...]:
        """`idx` with index expressions longer than MAX_INDEX_TEXT held in variables, so
        index arithmetic of a long chain of slices or reverses stays flat in the source
        (deeply nested expressions overflow Python's own parser)."""
        if all(len(i) <= MAX_INDEX_TEXT for i in idx):
            return idx
        return tuple(self._assign(i) if len(i) > MAX_INDEX_TEXT else i for i in idx)

    def flat_index(self, node: Node, idx: tuple[str, ...]) -> str:
        """C-order flat index of `idx` in `node`'s shape, Horner style over size arguments
        (the source stays size-free): ((i0 * r1) + i1) * r2 + i2."""
        if id(node) not in self.strides:
            self.strides[id(node)] = self.size_names(node.shape[1:], "r")
        text = idx[0] if idx else "0"
        for i, size in zip(idx[1:], self.strides[id(node)]):
            text = f"(({text} * {size}) + {i})"
        return text

    def _reshape_index(self, node: Node, idx: tuple[str, ...]) -> tuple[str, ...]:
        """The operand's index for a reshape, group by group: the dims of the two shapes
        pair up into groups of equal size, and only a group that splits or merges dims
        needs arithmetic (sizes are literals: divisions by constants)."""
        source = node.inputs[0].shape
        mapped = ["0"] * len(source)
        if 0 in source:                    # no element: the loops never run
            return tuple(mapped)
        for out_dims, in_dims in _reshape_groups(node.shape, source):
            if len(out_dims) == 1 and len(in_dims) == 1:
                mapped[in_dims[0]] = idx[out_dims[0]]
                continue
            terms, stride = [], 1
            for d in reversed(out_dims):
                terms.append(idx[d] if stride == 1 else f"{_atom(idx[d])} * {stride}")
                stride *= node.shape[d]
            flat = " + ".join(reversed(terms))
            if len(in_dims) > 1:
                flat = self._assign(flat)
            stride = 1
            for position, d in enumerate(reversed(in_dims)):
                quotient = flat if stride == 1 else f"({flat} // {stride})"
                # the group's first dim needs no modulo: the flat index is in range
                mapped[d] = _atom(quotient) if position == len(in_dims) - 1 else \
                    f"({quotient} % {source[d]})"
                stride *= source[d]
        return tuple(mapped)

    def input_at(self, node: Node, idx: tuple[str, ...]) -> str:
        """`in0[i, j, 2]` written `in0_m[i, 3 * j + 2]` (a view merging the last two dims)
        when the last index is a literal.  LLVM versions a loop on a runtime stride being 1,
        and for the stride 3 of an (n, m, 3) input always runs the scalar copy; a literal
        stride lets it load interleaved groups (RGB->gray+gamma 1024x1024x3 f32: 30 ms ->
        1.6 ms once the loop has a vecmath call)."""
        if id(node) in self.row_local_names:     # at the row it is on (row_fusion)
            return f"{self.row_local_names[id(node)]}[{idx[-1]}]"
        name = self.input_name(node)
        extent = node.shape[-1] if node.ndim >= 2 else 1
        if extent < 2 or not self.merged_views_enabled or not _LITERAL.match(idx[-1]):
            return self.at(name, idx)
        self.merged_views[name] = node.ndim
        return self.at(f"{name}_m", idx[:-2] + (f"{extent} * {_atom(idx[-2])} + {idx[-1]}",))

    def merged_view_lines(self) -> list[str]:
        lines = []
        for name, ndim in self.merged_views.items():
            dims = [f"{name}.shape[{d}]" for d in range(ndim - 2)]
            dims.append(f"{name}.shape[{ndim - 2}] * {name}.shape[{ndim - 1}]")
            lines.append(f"    {name}_m = {name}.reshape(({', '.join(dims)},))")
        return lines

    def _load(self, buffer: str, idx) -> str:
        return self._assign(self.at(buffer, idx))

    def _assign(self, expr: str) -> str:
        name = self.fresh()
        self.emit(f"{name} = {expr}")
        return name

    def write_outputs(self, nodes, idx, cache, space) -> None:
        for node in nodes:
            node_idx = adapt_index(idx, space, node.shape)
            value = self.value(node, node_idx, cache)
            if id(node) in self.row_local_names:
                if id(node) not in self.row_buffer_locals:
                    self.emit(f"{self.row_local_names[id(node)]}[{node_idx[-1]}] = {value}")
                continue
            self.emit(f"{self.at(self.output_names[id(node)], node_idx)} = {value}")

    # -- kernel kinds ------------------------------------------------------------------
    def generate(self) -> GeneratedKernel:
        k = self.k
        # outputs first in the argument list after inputs are discovered: collect names now
        self.output_names = {id(o): self.input_name(self.in_place[id(o)])
                             if id(o) in self.in_place else f"out{i}"
                             for i, o in enumerate(k.outputs)}
        body = {"loop": self.gen_loop, "reduce": self.gen_reduce, "dot": self.gen_dot,
                "scatter": self.gen_scatter, "row": self.gen_row, "scan": self.gen_scan,
                "gemv_pair": self.gen_gemv_pair}[k.kind]
        body()
        self.lines = self.merged_view_lines() + hoist_invariants(self.lines)
        for i, out in enumerate(k.outputs):
            if id(out) in self.in_place:
                continue
            if out is not k.dot or self.dot_acc_name or self.narrow:  # else matmul writes it
                self.args.append(KernelArg("out", f"out{i}", out))
        self.pass_scalar_params()
        order = {"accnd": 0, "in": 1, "in_t": 1, "out": 2, "size": 3, "const": 4, "scalar": 4}
        self.args.sort(key=lambda a: order[a.kind])
        function = re.sub(r"\W", "_", k.name)
        return GeneratedKernel(k, function, self.render(function), self.args, self.dot_acc,
                               self.matmul)

    def pass_scalar_params(self) -> None:
        """A 0-d input read only as `in0[0]` is passed as a number (a `scalar` argument):
        a parameter's caller's Python float goes straight in, where a (1,)-array view of
        a 0-d array cost a NumPy conversion, a reshape and an array argument (about 0.4
        us each of a 100-element axpby's 2 us); another kernel's 0-d result, its value."""
        stored = {id(node) for node in self.in_place.values()}   # written in place
        for i, arg in enumerate(self.args):
            node = arg.node
            if arg.kind != "in" or node is None or node.ndim != 0 or id(node) in stored:
                continue
            element = re.compile(rf"\b{arg.name}\[0\]")
            if any(re.search(rf"\b{arg.name}\b", element.sub("", line)) for line in self.lines):
                continue                        # read otherwise (a view, a flat loop)
            self.lines = [element.sub(arg.name, line) for line in self.lines]
            self.args[i] = KernelArg("scalar", arg.name, node)

    def can_rerun(self) -> bool:
        """Whether running the whole body again recomputes every output: no output is
        stored over an input (in place, a region update, an epilogue over BLAS's
        product in the output) and no scatter adds into what an earlier pass wrote."""
        over_product = self.dot_acc is not None and self.dot_acc[0] == "output" and \
            self.dot_acc[1] is not self.k.dot
        return not self.in_place and kernel_region_update(self.k) is None and \
            not over_product and self.k.kind != "scatter"

    def gen_loop(self) -> None:
        update = kernel_region_update(self.k)
        if update is not None:
            self.gen_region_update(*update)
            return
        root = self.k.root
        flat = flat_space(self.k)       # then every array is read and written at (i0,)
        start = len(self.lines)
        sizes = self.size_names(flat or root.shape)
        if not sizes:
            self.write_outputs(self.k.outputs, (), {}, root.shape)
            return
        outer = self.open_loops(sizes[:-1], "i", self.parallel)
        inner = f"i{len(outer)}"
        loop = "numba.prange" if self.parallel and not outer else "range"
        self.emit(f"for {inner} in {loop}({sizes[-1]}):")
        with self.distributed_loop(streams_past_cache(self.k)):
            self.write_outputs(self.k.outputs, outer + (inner,), {}, root.shape)
        if flat is not None:
            self.flatten_arrays(start)

    def flatten_arrays(self, start: int) -> None:
        """The loop emitted from `start` reads and writes its arrays through flat views
        (flat.py): `in0[i0]` becomes `fin0[i0]`, `fin0 = flat_view(in0)` comes first and
        `write_flat(...)` after it for each array it stores into."""
        body = [_ARRAY_ACCESS.sub(r"f\1[", line) for line in self.lines[start:]]
        used = sorted(set(_ARRAY_ACCESS.findall("\n".join(self.lines[start:]))))
        written = sorted({m for line in self.lines[start:] for m in _STORE.findall(line)})
        indent = "    " * self.depth
        self.lines[start:] = [f"{indent}f{name} = flat_view({name})" for name in used] + \
            body + [f"{indent}write_flat({name}, f{name})" for name in written]

    def gen_region_update(self, base: Node, value: Node, lows) -> None:
        """`x[a:b] = v` (select(pad(mask), pad(v), x) with one region): copy x, then write
        v over the region.  Two plain loops that vectorize, where the select would test
        every element and clamp every read.  Given x's own buffer as out0 (an in-place
        update, buffers.py) it skips the copy.  A region placed at run time (a rolled
        loop's `x[:, j] = v`) starts where XLA's dynamic-update-slice clamps it.  Where v
        may read x elsewhere than at the element it replaces (`y[:, j] = y[:, j - 1] * b`),
        v is computed into a region-sized temporary first, so an in-place write never
        changes what a later element reads (`region_needs_staging`)."""
        root = self.k.root
        starts = [self._region_start(low, d, value.shape[d]) for d, low in enumerate(lows)]
        staged = None
        if region_needs_staging(self.k, (base, value, lows)) if self.staged is None \
                else self.staged:
            staged = self.fresh()
            self.emit(f"{staged} = {empty(value.shape, value.dtype)}")
            region = self.open_loops(self.size_names(value.shape, "u"), "k", self.parallel)
            self.emit(f"{self.at(staged, region)} = {self.value(value, region, {})}")
            self.depth -= len(region)
        out = self.output_names[id(root)]     # x's own name where written into x
        if id(root) not in self.in_place:
            if not self.k.contains(base):      # its buffer may be out0's (buffers.py):
                self.emit(f"if out0 is not {self.input_name(base)}:")    # then no copy
                self.depth += 1
            idx = self.open_loops(self.size_names(root.shape), "i", self.parallel)
            self.emit(f"out0[{', '.join(idx) or '0'}] = {self.value(base, idx, {})}")
            self.depth -= len(idx) + (not self.k.contains(base))
        region = self.open_loops(self.size_names(value.shape, "u"), "k", self.parallel)
        target = tuple(_affine(k, int(start), low.step) if isinstance(low, Stride) else
                       k if start == "0" else f"{k} + {start}"
                       for k, start, low in zip(region, starts, lows))
        computed = self.at(staged, region) if staged else self.value(value, region, {})
        self.emit(f"{out}[{', '.join(target) or '0'}] = {computed}")

    def _region_start(self, low, dim: int, size: int) -> str:
        """Where the region starts along `dim`: a pad's constant, or a dynamic pad's place
        read at run time and clamped so the region fits, as the interpreter does."""
        if isinstance(low, Stride):
            return str(low.low)
        if isinstance(low, (int, np.integer)):
            return str(int(low))
        place = self.value(low, (), {})
        return self._assign(clamp(place, low.dtype, self.k.root.shape[dim] - size))

    def gen_scatter(self) -> None:
        """out = base; out[..., indices[k], ...] += updates[k] (indices clamped); a scatter
        assigns instead, in k's order (the update loop is serial: the last write wins)."""
        root = self.k.root
        base, indices, updates = root.inputs
        axis, rank = root.arg, indices.ndim
        # the driver may hand the base's own buffer as out0 (buffers.py `_scatter_base`)
        own_buffer = any(i is base for i in self.k.inputs)
        if own_buffer:
            self.emit(f"if out0.ctypes.data != {self.input_name(base)}.ctypes.data:")
            self.depth += 1
        idx = self.open_loops(self.size_names(root.shape), "i", self.parallel)
        self.emit(f"out0[{', '.join(idx) or '0'}] = {self.value(base, idx, {})}")
        self.depth -= len(idx) + own_buffer
        upd = self.open_loops(self.size_names(updates.shape, "u"), "k")
        cache: dict = {}
        position = self.value(indices, upd[axis:axis + rank], cache)
        row = self._assign(clamp(position, indices.dtype, base.shape[axis] - 1))
        target = upd[:axis] + (row,) + upd[axis + rank:]
        value = self.value(updates, upd, cache)
        assign = "+=" if root.op is Op.SCATTER_ADD else "="
        self.emit(f"out0[{', '.join(target)}] {assign} {value}")

    def gen_scan(self) -> None:
        """Loops in dim order with the scan axis among them, so each row along the axis is
        visited in order.  The running value starts at the first element, as NumPy's
        accumulate, and combines with the op's own template (NumPy's wrap, NaN and
        complex rules).  Along an inner axis (`sacc`: one per suffix index) the suffix loop
        is independent and vectorizes, producers and consumers included:

            for k0 in range(n0):                 # cumprod(x, axis=0) - 1
                for s0 in range(n1):
                    v2 = v1 if k0 == 0 else (sacc[s0] * v1)
                    sacc[s0] = v2
                    out0[k0, s0] = (v2 - c0)

        Along the last axis the running value is a scalar, and with expensive producers
        or consumers the row goes through a buffer (`_scan_rows`).  A parallel scan
        (`should_parallelize`: rows before the axis) splits the outermost of those loops
        over threads, each row with its own running state, made inside that loop."""
        scan = self.k.scan
        kind, axis = scan.arg
        dtype = scan.dtype
        sizes = self.size_names(scan.shape)
        suffix = sizes[axis + 1:]
        if not suffix and any(n.op in EXPENSIVE for n in self.k.nodes):
            self._scan_rows(scan, sizes)
            return
        outer: tuple = ()
        if self.parallel:                # independent rows: state private to each
            outer = self.open_loops(sizes[:axis], "i", parallel=True)
        if suffix:                      # every row of the suffix restarts at k0 == 0
            self.emit(f"sacc = {empty(suffix, dtype)}")
        else:                           # typed before the loops, for Numba's inference
            self.emit(f"sacc = {templates.CAST[dtype.name]}(0)")
        if not self.parallel:
            outer = self.open_loops(sizes[:axis], "i")
        self.emit(f"for k0 in range({sizes[axis]}):")
        self.depth += 1
        inner = self.open_loops(suffix, "s")
        idx = outer + ("k0",) + inner
        cache: dict = {}
        value = self.value(scan.inputs[0], idx, cache)
        running = self.at("sacc", inner) if inner else "sacc"
        combined = templates.expression(SCAN_COMBINE[kind], dtype, [running, value], dtype)
        if inner:
            self.reduce_vars[id(scan)] = self._assign(f"{value} if k0 == 0 else {combined}")
            self.emit(f"{running} = {self.reduce_vars[id(scan)]}")
        else:
            self.emit(f"sacc = {value} if k0 == 0 else {combined}")
            self.reduce_vars[id(scan)] = "sacc"
        self.write_outputs(self.k.outputs, idx, cache, scan.shape)

    def _scan_rows(self, scan: Node, sizes: list[str]) -> None:
        """A scan along the last axis with expensive elementwise work around it, SCAN_CHUNK
        elements at a time through an L1 buffer:
        the producers fill it (a loop that vectorizes: exp, tanh), a sequential loop scans
        it in place carrying `sacc` across chunks, and the consumers read it (vectorizes
        again).  One loop doing all three would run vector math one element at a time
        (np.cumsum(np.exp(a), axis=1): 2.7x slower than NumPy)."""
        kind, axis = scan.arg
        dtype = scan.dtype
        n = sizes[axis]
        outer: tuple = ()
        if self.parallel:                # a buffer per row, in the parallel loop
            outer = self.open_loops(sizes[:axis], "i", parallel=True)
        self.emit(f"sbuf = {empty([SCAN_CHUNK], dtype)}")
        self.emit(f"sacc = {templates.CAST[dtype.name]}(0)")   # typed for Numba
        if not self.parallel:
            outer = self.open_loops(sizes[:axis], "i")
        idx = outer + ("k0",)
        self.emit(f"for base0 in range(0, {n}, {SCAN_CHUNK}):")
        self.depth += 1
        self.emit(f"span0 = {SCAN_CHUNK} if {n} - base0 > {SCAN_CHUNK} else {n} - base0")
        self.emit("for j0 in range(span0):")
        self.depth += 1
        self.emit("k0 = base0 + j0")
        self.emit(f"sbuf[j0] = {self.value(scan.inputs[0], idx, {})}")
        self.depth -= 1
        self.emit("for j0 in range(span0):")
        self.depth += 1
        combined = templates.expression(SCAN_COMBINE[kind], dtype, ["sacc", "sbuf[j0]"], dtype)
        self.emit(f"sacc = sbuf[j0] if base0 + j0 == 0 else {combined}")
        self.emit("sbuf[j0] = sacc")
        self.depth -= 1
        self.emit("for j0 in range(span0):")
        self.depth += 1
        self.emit("k0 = base0 + j0")
        self.reduce_vars[id(scan)] = self._load("sbuf", ("j0",))
        self.write_outputs(self.k.outputs, idx, {}, scan.shape)

    def gen_reduce(self) -> None:
        reds = self.k.reductions
        in_shape = reds[0].inputs[0].shape
        axes = reds[0].arg[1]
        rank = len(in_shape)
        first_reduced = min(axes) if axes else rank
        pure = all(d >= first_reduced for d in axes) and \
            list(axes) == list(range(first_reduced, rank))
        in_outputs = [o for o in self.k.outputs if self.k.region[id(o)] == "in"]
        out_outputs = [o for o in self.k.outputs if self.k.region[id(o)] != "in"]
        sizes = self.size_names(in_shape, "m")
        kept = [d for d in range(rank) if d not in axes]
        accs = [(red, _cpu_accumulator(red)) for red in reds]
        # rows that also store outputs go through row buffers (see _row_then_combine), which
        # threads would share: single-threaded kernels only
        row_then_sum = (pure and in_outputs and first_reduced == rank - 1 and rank > 1
                        and not self.parallel)
        if row_then_sum:
            self._row_buffers(accs, sizes[-1])
        if pure:
            outer = self.open_loops(sizes[:first_reduced], "j", self.parallel)
            self._init_accumulators(accs)
            if row_then_sum:
                self._row_then_combine(accs, outer, sizes[-1], in_outputs,
                                       lambda i, last: f"{self.tag}a{i}")
            # full 1-D sums are long enough for float32 blocks to pay; rows (outer loops)
            # are short and run faster with the float64 accumulator alone
            elif rank == 1 and first_reduced == 0 and any(_blocked_sum(red) for red in reds):
                self._blocked_accumulate(accs, outer, sizes[-1], in_outputs,
                                         self.parallel and not outer)
            elif outer and first_reduced == rank - 1 and \
                    self._rows_blocked(reds, in_shape[-1]):
                self._blocked_accumulate(accs, outer, sizes[-1], in_outputs, False)
            elif not in_outputs and 0 < int(np.prod(in_shape[first_reduced:])) <= \
                    (SHORT_REDUCTION if outer else NUMPY_SEQUENTIAL_SUM):
                # a few terms per output (|d|^2 of 3-vectors): written out with literal
                # indices, so the loop over outputs is innermost and vectorizes, its loads
                # at literal strides (`input_at`); a runtime 3-trip loop left it scalar.
                # A whole sum of a few terms: in order, as NumPy adds them (np.trace of a
                # 4x4 product difference: 0, not -2e-16 from a reassociated sum)
                self.loop_carried = False     # no sum loop: vecmath inlines, unsealed
                for literal in np.ndindex(*in_shape[first_reduced:]):
                    self._accumulate(accs, outer + tuple(map(str, literal)), in_outputs,
                                     lambda i: f"{self.tag}a{i}")
            else:
                # a full sum/prod parallelizes as a prange reduction over its outermost loop
                inner = self.open_loops(sizes[first_reduced:], "k",
                                        self.parallel and not outer)
                self._accumulate(accs, outer + inner, in_outputs, lambda i: f"{self.tag}a{i}")
                self.depth -= len(inner)
            out_idx = outer
        else:
            if rank - 1 in kept and not in_outputs and \
                    self._short_suffix_reduce(accs, sizes, axes, in_shape, out_outputs):
                return
            if rank - 1 in kept and self._middle_reduce(accs, sizes, axes, in_outputs,
                                                        out_outputs):
                return
            kept_sizes = [sizes[d] for d in kept]
            self._filled_accumulators(accs, kept_sizes or [1])
            if rank - 1 in kept:
                self._row_accumulate(accs, sizes, kept, in_outputs)
            else:
                idx = self.open_loops(sizes, "j")
                kept_idx = tuple(idx[d] for d in kept)
                self._accumulate(accs, idx, in_outputs,
                                 lambda i: self.at(f"{self.tag}acc{i}", kept_idx))
                self.depth -= rank
            out_idx = self.open_loops(kept_sizes, "e")
            for i in range(len(accs)):
                self.emit(f"{self.tag}a{i} = {self.at(f'{self.tag}acc{i}', out_idx)}")
        self._finish_reduce(accs, out_outputs, out_idx)

    def _filled_accumulators(self, accs, shape: list) -> None:
        """`acc{i} = np.full(shape, init)` as an allocation and a fill loop: Numba's np.full
        is a Python implementation it compiles once per process (about 0.2 s)."""
        for i, (red, (acc_dtype, init, _)) in enumerate(accs):
            self.emit(f"{self.tag}acc{i} = {empty(shape, acc_dtype)}")
        fill = self.open_loops([str(n) for n in shape], "f")
        for i, (red, (acc_dtype, init, _)) in enumerate(accs):
            self.emit(f"{self.at(f'{self.tag}acc{i}', fill)} = {init}")
        self.depth -= len(fill)

    def _short_suffix_reduce(self, accs, sizes, axes, in_shape, out_outputs) -> bool:
        """Reductions over a block of axes followed by a few kept elements (a sum over the
        bodies of (n, n, 3) forces): one scalar accumulator per kept element, written out
        with literal indices, so the loop over the reduced axes is innermost with no inner
        loop of 3 trips left in it (n-body forces 256 f64: 25 us).  False: more than
        SHORT_REDUCTION kept elements follow, or the axes are not one block."""
        first, last = min(axes), max(axes)
        suffix = in_shape[last + 1:]
        if list(axes) != list(range(first, last + 1)) or \
                not 0 < int(np.prod(suffix)) <= SHORT_REDUCTION:
            return False
        literals = [tuple(map(str, index)) for index in np.ndindex(*suffix)]
        # summed in order, without `reassoc`: NumPy's order, and the terms (differences
        # of recomputed positions) keep their rounding; the few sums per row are cheap
        self.loop_carried = False
        prefix = self.open_loops(sizes[:first], "j")
        for n in range(len(literals)):
            for i, (red, (acc_dtype, init, _)) in enumerate(accs):
                self.emit(f"{self.tag}a{i}_{n} = {init}")
        middle = self.open_loops(sizes[first:last + 1], "r")
        for n, literal in enumerate(literals):
            self._accumulate(accs, prefix + middle + literal, [],
                             lambda i, n=n: f"{self.tag}a{i}_{n}")
        self.depth -= len(middle)
        for n, literal in enumerate(literals):
            for i in range(len(accs)):
                self.emit(f"{self.tag}a{i} = {self.tag}a{i}_{n}")
            self._finish_reduce(accs, out_outputs, prefix + literal)
        self.depth -= len(prefix)
        return True

    def _middle_reduce(self, accs, sizes, axes, in_outputs, out_outputs) -> bool:
        """Reductions over a block of middle axes, kept axes on both sides (a mean over
        axis 1 of (n, k, d), an embedding bag): per prefix index, an accumulator as big as
        the suffix is reset, filled row by row and finished (epilogue written) before the
        next prefix index, all in L1.  One accumulator of the whole kept shape streams
        through memory twice, and its epilogue is a sweep of its own.  False: not such a
        reduction."""
        rank = len(sizes)
        first, last = min(axes), max(axes)
        if first == 0 or last == rank - 1 or list(axes) != list(range(first, last + 1)):
            return False
        suffix = sizes[last + 1:]
        for i, (red, (acc_dtype, init, _)) in enumerate(accs):
            self.emit(f"{self.tag}acc{i} = {empty(suffix, acc_dtype)}")
        self._row_buffers(accs, sizes[-1])
        prefix = self.open_loops(sizes[:first], "j")
        fill = self.open_loops(suffix, "f")
        for i, (red, (acc_dtype, init, _)) in enumerate(accs):
            self.emit(f"{self.at(f'{self.tag}acc{i}', fill)} = {init}")
        self.depth -= len(fill)
        middle = self.open_loops(sizes[first:-1], "r")
        kept_inner = middle[last + 1 - first:]       # suffix loops but the last
        self._row_then_combine(accs, prefix + middle, sizes[-1], in_outputs,
                               lambda i, j: self.at(f"{self.tag}acc{i}", kept_inner + (j,)))
        self.depth -= len(middle)
        out = self.open_loops(suffix, "e")
        for i in range(len(accs)):
            self.emit(f"{self.tag}a{i} = {self.at(f'{self.tag}acc{i}', out)}")
        self._finish_reduce(accs, out_outputs, prefix + out)
        self.depth -= len(out) + len(prefix)
        return True

    def _init_accumulators(self, accs) -> None:
        for i, (red, (acc_dtype, init, _)) in enumerate(accs):
            self.emit(f"{self.tag}a{i} = {init}")

    def _finish_reduce(self, accs, out_outputs, out_idx) -> None:
        """The reduced values as variables, then the epilogue's outputs at `out_idx`."""
        for i, (red, (acc_dtype, _, _)) in enumerate(accs):
            self.reduce_vars[id(red)] = self._assign(
                templates.convert(f"{self.tag}a{i}", np.dtype(acc_dtype), red.dtype))
        self.write_outputs(out_outputs, out_idx, {}, accs[0][0].shape)

    def gen_row(self) -> None:
        """Row kernels (passes/row_fusion.py): loops over the rows, and in each row every
        stage sweeps it in turn.  A later stage reads an earlier one's outputs (at this
        row, still in cache) through the same argument; reduced values it reads are the
        earlier stage's variables."""
        group = self.k
        rows = self.size_names(row_space(group.stages[0])[:-1], "m")
        # stages share the rows, not the row length (shared inputs join unequal rows)
        lengths = [self.size_names(row_space(stage)[-1:], "m")[0] for stage in group.stages]
        for out in group.outputs:
            self.buffer_names[id(out)] = self.output_names[id(out)]
        row_buffers = not self.parallel          # shared by threads otherwise
        stores = {}
        for s, stage in enumerate(group.stages):
            self.tag = f"s{s}_"
            if stage.kind == "reduce":
                accs = [(red, _cpu_accumulator(red)) for red in stage.reductions]
                in_outputs = [o for o in stage.outputs if stage.region[id(o)] == "in"]
                stores[s] = (accs, in_outputs)
                if in_outputs and row_buffers:
                    self._row_buffers(accs, lengths[s])
                    self._reuse_row_buffers(accs)
        local_lines = self._row_local_buffers(group, lengths)
        if not self.parallel:
            self.lines += [f"    {line}" for line in local_lines]
        outer = self.open_loops(rows, "j", self.parallel)
        if self.parallel:           # one per row: a prange's iterations share nothing
            for line in local_lines:
                self.emit(line)
        for s, stage in enumerate(group.stages):
            self.k, self.tag = stage, f"s{s}_"
            if stage.kind == "reduce":
                self._reduce_stage(stage, *stores[s], outer, lengths[s], row_buffers)
                continue
            self.emit(f"for k0 in range({lengths[s]}):")
            with self.distributed_loop():
                self.write_outputs(stage.outputs, outer + ("k0",), {}, stage.root.shape)
        self.k, self.tag = group, ""

    def _reuse_row_buffers(self, accs) -> None:
        """A reduction's row buffer holding a row-local value (a softmax's `e`, stored
        for its sum) is where later stages read it."""
        for i, (red, _) in enumerate(accs):
            node = red.inputs[0]
            if any(node is n for n in self.k.row_locals) and \
                    id(node) not in self.row_local_names:
                self.row_local_names[id(node)] = f"{self.tag}row{i}"
                self.row_buffer_locals.add(id(node))

    def _row_local_buffers(self, group, lengths) -> list[str]:
        """Allocations of the row kernel's one-row buffers (row_fusion.keep_rows_local)
        not already a reduction's row buffer."""
        lines = []
        for n, node in enumerate(group.row_locals):
            if id(node) in self.row_local_names:
                continue
            s = next(s for s, stage in enumerate(group.stages)
                     if any(node is out for out in stage.outputs))
            name = self.row_local_names[id(node)] = f"loc{n}"
            # np.empty under a prange: Numba hoists it out of the loop body, one buffer
            # per thread (its parfors compile np.empty anyway); else alloc.py's `empty`
            allocation = f"np.empty({lengths[s]}, np.{node.dtype.name})" if self.parallel \
                else empty([lengths[s]], node.dtype)
            lines.append(f"{name} = {allocation}")
        return lines

    def _reduce_stage(self, stage, accs, in_outputs, outer, size, row_buffers) -> None:
        self._init_accumulators(accs)
        if in_outputs and row_buffers:
            self._row_then_combine(accs, outer, size, in_outputs,
                                   lambda i, last: f"{self.tag}a{i}")
        elif self._rows_blocked(stage.reductions, row_space(stage)[-1]):
            self._blocked_accumulate(accs, outer, size, in_outputs, False)
        else:
            inner = self.open_loops([size], "k")
            self._accumulate(accs, outer + inner, in_outputs, lambda i: f"{self.tag}a{i}")
            self.depth -= 1
        out_outputs = [o for o in stage.outputs if stage.region[id(o)] != "in"]
        self._finish_reduce(accs, out_outputs, outer)

    def _accumulate(self, accs, idx, in_outputs, target, partial=frozenset(),
                    store=False, cache=None) -> None:
        """Combine each reduction's input at `idx` into its accumulator (`store`: write
        it to `target` as is); reductions in `partial` add into their float32 block
        partial `p{i}` instead.  `cache`: values already computed (`value`)."""
        cache = {} if cache is None else cache
        for i, (red, (acc_dtype, _, combine)) in enumerate(accs):
            value = self.value(red.inputs[0], idx, cache)
            if i in partial:
                self.emit(f"{self.tag}p{i} = {self.tag}p{i} + {value}")
                continue
            if store:
                self.emit(f"{target(i)} = {value}")
                continue
            value = templates.convert(value, red.inputs[0].dtype, np.dtype(acc_dtype))
            self.emit(f"{target(i)} = {combine.format(a=target(i), v=value)}")
        self.write_outputs(in_outputs, idx, cache, accs[0][0].inputs[0].shape)

    def _row_accumulate(self, accs, sizes, kept, in_outputs) -> None:
        """Column reductions (the innermost dim is kept), one row at a time."""
        self._row_buffers(accs, sizes[-1])
        outer = self.open_loops(sizes[:-1], "j")
        self._row_then_combine(
            accs, outer, sizes[-1], in_outputs,
            lambda i, last: self.at(f"{self.tag}acc{i}",
                                    tuple((outer + (last,))[d] for d in kept)))
        self.depth -= len(outer)

    def _row_buffers(self, accs, size: str) -> None:
        for i, (red, _) in enumerate(accs):      # input dtype: widening stores (f32 -> f64)
            # in the first loop stop it vectorizing too
            self.emit(f"{self.tag}row{i} = {empty([size], red.inputs[0].dtype)}")

    def _row_then_combine(self, accs, outer, size: str, in_outputs, target) -> None:
        """One row: a loop storing each reduction's inputs in its row buffer (and the
        outputs), then one short loop per accumulator combining the row into `target(i,
        index)`.  Accumulating in the loop that stores outputs stops LLVM vectorizing it
        (it cannot rule out aliasing); split, both loops vectorize: 3x on a gelu-backward
        bias gradient, 1.7x on a softmax's exp-and-sum."""
        last = f"j{len(outer)}"
        self.emit(f"for {last} in range({size}):")
        if not in_outputs and all(red.inputs[0].dtype == np.dtype(acc_dtype)
                                  for red, (acc_dtype, _, _) in accs):
            # nothing stored but the accumulators, nothing widened: one loop vectorizes
            # (column sums of a 500x2000 float64: 0.36 -> 0.31 ms, NumPy 0.31)
            with self.distributed_loop():
                self._accumulate(accs, outer + (last,), [], lambda i: target(i, last))
            return
        with self.distributed_loop():
            self._accumulate(accs, outer + (last,), in_outputs,
                             lambda i: f"{self.tag}row{i}[{last}]", store=True)
        for i, (red, (acc_dtype, _, combine)) in enumerate(accs):
            self.emit(f"for {last} in range({size}):")
            value = templates.convert(f"{self.tag}row{i}[{last}]", red.inputs[0].dtype,
                                      np.dtype(acc_dtype))
            self.emit(f"    {target(i, last)} = "
                      f"{combine.format(a=target(i, last), v=value)}")

    def _blocked_accumulate(self, accs, outer, size, in_outputs, parallel) -> None:
        """Sums of float32 add blocks of SUM_BLOCK elements in float32 (which vectorizes
        8 wide) and the block sums in float64: NumPy-level accuracy at full speed.  A
        chain of vector math functions is split in two loops per block (`_fission_cut`)."""
        partial = frozenset(i for i, (red, _) in enumerate(accs) if _blocked_sum(red))
        idx_var = f"k{len(outer)}"
        idx = outer + (idx_var,)
        # the block buffer is one per kernel call: never under a prange (rows' outer loop
        # included), where threads would share it
        cut = None if parallel or self.parallel or in_outputs or len(accs) != 1 else \
            fission_cut(accs[0][0].inputs[0], self.k)
        # the last block is shorter: one loop body for all of them (a separate remainder
        # loop repeated the body, the larger part of a row kernel's compile)
        self.emit(f"nb_ = ({size} + {SUM_BLOCK - 1}) // {SUM_BLOCK}")
        loop = "numba.prange" if parallel else "range"
        self.emit(f"for kb_ in {loop}(nb_):")
        self.depth += 1
        self._reset_partials(partial)
        left = f"{size} - kb_ * {SUM_BLOCK}"
        self.emit(f"span_ = {SUM_BLOCK} if {left} > {SUM_BLOCK} else {left}")
        self.emit("for kk_ in range(span_):")
        self.depth += 1
        self.emit(f"{idx_var} = kb_ * {SUM_BLOCK} + kk_")
        cache = {}
        if cut is not None:
            buf = f"{self.tag}fb_"
            self.lines.insert(0, "    " * 1 + f"{buf} = {empty([SUM_BLOCK], cut.dtype)}")
            self.emit(f"{buf}[kk_] = {self.value(cut, idx, {})}")
            self.depth -= 1
            self.emit("for kk_ in range(span_):")
            self.depth += 1
            self.emit(f"{idx_var} = kb_ * {SUM_BLOCK} + kk_")
            cache[(id(cut), idx)] = self._assign(f"{buf}[kk_]")
        self._accumulate(accs, idx, in_outputs, lambda i: f"{self.tag}a{i}", partial,
                         cache=cache)
        self.depth -= 1
        self._flush_partials(partial)
        self.depth -= 1

    def _rows_blocked(self, reds, length: int) -> bool:
        """Whether sums along rows of `length` add float32 blocks (_blocked_accumulate)
        rather than each term into the float64 accumulator: a float64 term makes LLVM
        vectorize the whole loop 4 wide, vector math included.  Blocked, the loop runs
        8 wide (AVX2) with NumPy-level accuracy (its error measured below NumPy's pairwise
        sum's).  1 thread, ms, float64 terms -> blocks: exp(x).sum(axis=1) 2000x512 f32
        1.30-1.48 -> 0.68-0.71, 50000x16 1.20-1.40 -> 0.76-0.94; x.sum(axis=1) 2000x512
        0.11 -> 0.09, 20000x33 0.13-0.15 -> 0.08-0.14.  Shorter rows never fill the
        vector loop, and a plain sum of 16 lost (0.13-0.23 -> 0.17-0.28)."""
        if not any(_blocked_sum(red) for red in reds):
            return False
        expensive = any(n.op in EXPENSIVE for n in self.k.nodes)
        return length >= (BLOCKED_ROW_MIN_EXPENSIVE if expensive else BLOCKED_ROW_MIN)

    def _reset_partials(self, partial) -> None:
        for i in sorted(partial):
            self.emit(f"{self.tag}p{i} = np.float32(0)")

    def _flush_partials(self, partial) -> None:
        for i in sorted(partial):
            self.emit(f"{self.tag}a{i} = {self.tag}a{i} + np.float64({self.tag}p{i})")

    def gen_dot(self) -> None:
        """The contraction runs as NumPy's matmul (its BLAS) into the accumulator; the
        generated function is the epilogue, applied in place when the result allows.
        Dots with a few output columns are generated whole (`gen_narrow_dot`)."""
        dot = self.k.dot
        if is_narrow_dot(dot, self.k):
            self.gen_narrow_dot(dot)
            return
        lb, rb, lc, rc = dot.arg
        lhs, rhs = dot.inputs
        lfree = [d for d in range(lhs.ndim) if d not in lb + lc]
        rfree = [d for d in range(rhs.ndim) if d not in rb + rc]
        batch = tuple(lhs.shape[d] for d in lb)
        m = int(np.prod([lhs.shape[d] for d in lfree], dtype=np.int64))
        n = int(np.prod([rhs.shape[d] for d in rfree], dtype=np.int64))
        self.matmul = (_operand_view(lhs, list(lb), lfree, list(lc)),
                       _operand_view(rhs, list(rb), list(rc), rfree), batch + (m, n))
        epilogue = [o for o in self.k.outputs if o is not dot]
        if dot in self.k.outputs:
            self.dot_acc = ("output", dot)
        elif (epilogue == [self.k.root] and self.k.root.dtype == dot.dtype
              and self.k.root.shape == dot.shape and not _guarded_math(self.k)):
            self.dot_acc = ("output", self.k.root)     # epilogue runs in place
        else:
            self.dot_acc = ("scratch", dot.shape, dot.dtype)
        if epilogue:
            if self.dot_acc == ("output", self.k.root):
                # in place: read the product from the output itself.  Passed twice, as
                # accnd and out0, the one buffer fails LLVM's run-time alias check and
                # the epilogue runs scalar (tanh(x @ w + b) in f64: 3x slower)
                self.dot_acc_name = self.output_names[id(self.k.root)]
            else:
                self.args.append(KernelArg("accnd", "accnd", dot))
                self.dot_acc_name = "accnd"
            sizes = self.size_names(dot.shape)
            idx = self.open_loops(sizes, "i", self.parallel)
            self.write_outputs(epilogue, idx, {}, dot.shape)

    def gen_narrow_dot(self, dot: Node) -> None:
        """lhs (m, k) times rhs with n <= NARROW_DOT_COLUMNS columns, as a loop over the
        lhs rows holding n accumulators that LLVM vectorizes along k (a classifier head,
        784 -> 10: BLAS runs it at under half its speed).  The rhs is read as (n, k) rows:
        as it is when the dot reads it transposed, else the driver passes a transposed
        copy (n * k elements, small).  The epilogue is unrolled over the n columns.
        Where the rhs outgrows L1 and both rows' accumulators fit in the CPU's vector
        registers, rows go in pairs: each rhs load then serves two rows, which halves the
        rhs traffic from L2 (2000x2000 @ 2000x10, 1 thread: float32 2.2 -> 1.2 ms, BLAS
        2.0; float64 3.0-4.5 -> 1.9-2.4 ms, BLAS 3.8; 256x784 @ 784x10 float64 0.21 ->
        0.11 ms).  An rhs within L1 keeps one row at a time: pairs gained 10% there
        (W4's 784x10 float32) and took W4's compile 1.30 -> 1.45 s."""
        lhs, rhs = dot.inputs
        self.narrow = True
        lhs_name = self.input_name(lhs)
        rows = self._arg("in_t", "rt", rhs) if tuple(dot.arg[3]) == (0,) else \
            self.input_name(rhs)
        m, n = dot.shape
        sizes = self.size_names((m, lhs.shape[1]), "n")
        loop = "numba.prange" if self.parallel else "range"
        rhs_bytes = n * lhs.shape[1] * dot.dtype.itemsize
        if m >= 2 and rhs_bytes > NARROW_PAIRED_RHS_BYTES and \
                len(NARROW_ROW_NAMES) * n + 3 <= vector_registers():
            self.emit(f"for p0 in {loop}({sizes[0]} // 2):")
            self.emit("    i0 = 2 * p0")
            self.emit("    i0b = i0 + 1")
            self._narrow_rows(dot, NARROW_ROW_NAMES, lhs_name, rows, sizes[1])
            self.emit(f"for i0 in range({sizes[0]} - {sizes[0]} % 2, {sizes[0]}):")
        else:
            self.emit(f"for i0 in {loop}({sizes[0]}):")
        self._narrow_rows(dot, NARROW_ROW_NAMES[:1], lhs_name, rows, sizes[1])

    def _narrow_rows(self, dot: Node, row_names: tuple, lhs: str, rows: str, k: str) -> None:
        """The body of a narrow dot's row loop for the rows `row_names` (`i0`, `i0b`):
        their accumulators (`d3`, `e3`: row, column), the k loop, the epilogue."""
        self.depth += 1
        accs = [NARROW_ACCUMULATORS[r] for r in row_names]
        zero = f"_zero_{dot.dtype.name}"
        for acc in accs:
            for j in range(dot.shape[1]):
                self.emit(f"{acc}{j} = {zero}")
        self.emit(f"for k0 in range({k}):")
        for acc, row in zip(accs, row_names):
            self.emit(f"    x{acc} = {lhs}[{row}, k0]")
        for j in range(dot.shape[1]):
            self.emit(f"    b_ = {rows}[{j}, k0]")
            for acc in accs:
                self.emit(f"    {acc}{j} += x{acc} * b_")
        for row in row_names:
            for j in range(dot.shape[1]):
                self.write_outputs(self.k.outputs, (row, str(j)), {}, dot.shape)
        self.depth -= 1

    def gen_gemv_pair(self) -> None:
        """`A.T @ g(A @ x)` (passes/gemv_fusion.py) in one sweep over A's rows,
        GEMV_PAIR_ROWS at a time: each row times x, the first kernel's epilogue at each
        row, then the rows (now in L1) times their values added into an (n,) accumulator
        in one pass, which loads and stores the accumulator once per GEMV_PAIR_ROWS rows;
        the last rows one by one.  The second kernel's epilogue runs over the accumulator.
        The inner loops vectorize (the row sums under `reassoc`)."""
        first, second = self.k.stages
        d1, d2 = first.dot, second.dot
        matrix, x = d1.inputs
        vector = transposed_gemv_operands(d2)[1]
        self.narrow = True                    # the dots are generated whole, summed reassociated
        a, xs = self.input_name(matrix), self.input_name(x)
        rows, cols = self.size_names(matrix.shape, "n")
        self.emit(f"acc_ = {empty([cols], d2.dtype)}")       # np.zeros compiles once
        self.emit(f"for j0 in range({cols}):")                # per process: a fill loop
        self.emit(f"    acc_[j0] = {templates.CAST[d2.dtype.name]}(0)")
        step = GEMV_PAIR_ROWS
        self.emit(f"for i0 in range(0, {rows} - {step - 1}, {step}):")
        self.gemv_pair_rows(first, vector, d1, [f"i{r}" for r in range(step)], a, xs, cols)
        self.emit(f"for t0 in range({rows} - {rows} % {step}, {rows}):")   # the last rows
        self.gemv_pair_rows(first, vector, d1, ["t0"], a, xs, cols)
        self.emit(f"for j0 in range({cols}):")
        self.emit("    t_ = acc_[j0]")
        self.depth += 1
        self.reduce_vars[id(d2)] = "t_"
        self.write_outputs(second.outputs, ("j0",), {}, d2.shape)
        self.depth -= 1

    def gemv_pair_rows(self, first, vector: Node, d1: Node, rows: list[str], a: str,
                       xs: str, cols: str) -> None:
        """The body of the sweep over `rows` (the first, the loop's variable, and the next
        ones after it): their sums, epilogues, and one accumulating pass."""
        self.depth += 1
        for r, row in enumerate(rows[1:], 1):
            self.emit(f"{row} = {rows[0]} + {r}")
        for r in range(len(rows)):
            self.emit(f"s{r}_ = _zero_{d1.dtype.name}")
        self.emit(f"for k0 in range({cols}):")
        for r, row in enumerate(rows):
            self.emit(f"    s{r}_ += {a}[{row}, k0] * {xs}[k0]")
        values = [self.gemv_row_value(first, vector, d1, row, f"s{r}_", f"v{r}_")
                  for r, row in enumerate(rows)]
        terms = " + ".join(f"{a}[{row}, k0] * {v}" for row, v in zip(rows, values))
        self.emit(f"for k0 in range({cols}):")
        self.emit(f"    acc_[k0] += {terms}")
        self.depth -= 1

    def gemv_row_value(self, first, vector: Node, d1: Node, row: str, total: str,
                       name: str) -> str:
        """The first kernel's outputs at `row` (its dot's row sum in `total`), and the
        second dot's vector there, held in `name` (the next row's code reuses names)."""
        self.reduce_vars[id(d1)] = total
        cache: dict = {}
        self.write_outputs(first.outputs, (row,), cache, d1.shape)
        self.emit(f"{name} = {self.value(vector, (row,), cache)}")
        return name

    def render(self, function: str) -> str:
        k = self.k
        locs = sorted({n.loc for n in k.nodes if n.loc})
        body = "\n".join(guard_fast_math(self.lines, self.can_rerun()))
        used = sorted(name for name in _VECMATH_NAMES if re.search(rf"\b{name}\(", body))
        # reassoc lets LLVM vectorize the accumulation; Numba inlines vecmath with the
        # caller's flags, so functions whose accuracy does not survive reassoc come as
        # their sealed copies (LLVM inlines those with their own flags)
        reassociate = (k.kind in ("reduce", "row") or self.narrow) and self.loop_carried
        sealed = [name for name in used if reassociate and name in SEALED and
                  name not in REASSOC_SAFE]            # (libm's calls need no sealing)
        fastmath = set(BASE_FASTMATH) | ({"reassoc"} if reassociate else set()) | \
            ({"contract"} if k.kind in CONTRACTING_KINDS else set())
        if re.search(r"\*\*", body):        # float powers call pow_f32/pow_f64 instead
            # with `afn` LLVM turns pow(x, float(int)) into powi, whose runtime helper
            # (__powisf2) Numba does not link: the process would crash.  Integer powers
            # too: Numba computes int32 ** int32 through a float64 pow
            fastmath.discard("afn")
        header = [
            f"# xlanb kernel {k.name} ({k.kind}): {', '.join(dict.fromkeys(k.ops))}",
            f"# user lines: {', '.join(locs) if locs else 'n/a'}",
            f"# vecmath {_VECMATH_DIGEST}",
            "import math",
            "import numba",
            "import numpy as np",
        ]
        if used:
            names = [f"{SEALED[name]} as {name}" if name in sealed else name for name in used]
            names.append("prefer_wide_vectors")     # vecmath is compute bound: 512 bits
            header.append(f"from xlanb_runtime.codegen.vecmath import {', '.join(names)}")
            body = "    prefer_wide_vectors()\n" + body
        if "cmath." in body:
            header.append("import cmath")
        helpers = [name for name in complex_math.HELPERS if re.search(rf"\b{name}\(", body)]
        if helpers:                       # complex division and power as NumPy's loops
            header.append(f"from xlanb_runtime.codegen.complex_math import "
                          f"{', '.join(helpers)}  # {_COMPLEX_MATH_DIGEST}")
        halves = [name for name in ("round_half_f32", "round_half_f64")
                  if re.search(rf"\b{name}\(", body)]
        if halves:
            header.append(f"from xlanb_runtime.codegen.half import {', '.join(halves)}"
                          f"  # {_HALF_DIGEST}")
        if re.search(r"(?<![.\w])empty\(", body):      # scratch arrays (alloc.py)
            header.append(f"from xlanb_runtime.codegen.alloc import empty  # {_ALLOC_DIGEST}")
        if re.search(r"\bflat_view\(", body):              # flat loops (flat.py)
            header.append(f"from xlanb_runtime.codegen.flat import flat_view, write_flat"
                          f"  # {_FLAT_DIGEST}")
        if re.search(r"\bsplitmix64\(", body):
            header.append(f"from xlanb_runtime.codegen.rng import splitmix64  # {_RNG_DIGEST}")
        body = _parallel_bodies(body, wide=bool(used))
        if "nonnegative(" in body:
            header.append(f"from xlanb_runtime.codegen.hints import nonnegative"
                          f"  # {_HINTS_DIGEST}")
        # serial kernels skip Numba passes they never need (kernel_pipeline.py)
        if "numba.prange" in body:
            options = ", parallel=True"
        else:
            options = ", pipeline_class=KernelCompiler"
            header.append("from xlanb_runtime.codegen.kernel_pipeline import KernelCompiler")

        header.append(templates.module_constants())
        params = ", ".join(a.name for a in self.args)
        flags = ", ".join(f'"{f}"' for f in sorted(fastmath))
        # only Python (the driver) calls a kernel: no C-callable wrapper (2-3% of a cold
        # compile: one LLVM module fewer per kernel)
        return "\n".join(header + [
            "",
            f'@numba.njit(cache=True, nogil=True, no_cfunc_wrapper=True, error_model="numpy", '
            f'fastmath={{{flags}}}{options})',
            f"def {function}({params}):",
            body if body.strip() else "    pass",
            "",
        ])


_PRANGE = re.compile(r"^(\s*)for (\w+) in numba\.prange\(.*\):$")


def _parallel_bodies(body: str, wide: bool) -> str:
    """Each prange loop's body starts by restating its index as `nonnegative` (hints.py:
    without it every array access keeps NumPy's negative-index wraparound, and the loop ran
    4-5x slower per thread than the serial one) and, where the kernel asks for 512-bit
    vectors (`wide`), by asking again: Numba compiles a prange body as a function of its
    own, which the kernel's `prefer_wide_vectors()` does not reach (a float32 sum of log
    terms: 2.6 -> 1.7 ms on one thread)."""
    lines = []
    for line in body.split("\n"):
        lines.append(line)
        match = _PRANGE.match(line)
        if match:
            indent, index = match.groups()
            lines.append(f"{indent}    {index} = nonnegative({index})")
            if wide:
                lines.append(f"{indent}    prefer_wide_vectors()")
    return "\n".join(lines)


# a kernel array's element access and a store into one (flatten_arrays)
_ARRAY_ACCESS = re.compile(r"\b((?:in|out)\d+)\[")
_STORE = re.compile(r"^\s*((?:in|out)\d+)\[[^\]]*\] = ")
FLAT_INNER_MAX = 32     # a nest whose innermost trip count is below this runs flat


def flat_space(kernel: Kernel) -> tuple[int] | None:
    """(size,) where a loop kernel's nest can run as one loop over flat views (flat.py):
    at least 2-D with an innermost extent under FLAT_INNER_MAX (which LLVM would not
    vectorize), every output and non-scalar input of the root's shape, and every node
    elementwise or a broadcast scalar, so each value is read at its own element."""
    root = kernel.root
    if root.ndim < 2 or root.shape[-1] >= FLAT_INNER_MAX or root.size < 2 or \
            any(o.shape != root.shape for o in kernel.outputs) or \
            any(i.shape != root.shape and i.ndim != 0 for i in kernel.inputs):
        return None
    for node in kernel.nodes:
        if node.op not in ELEMENTWISE and not (
                node.op is Op.BROADCAST and node.inputs[0].ndim == 0):
            return None
    return (root.size,)


_ASSIGN = re.compile(r"^\s*(v\d+) = (.*)$")
_VARIABLE = re.compile(r"\bv\d+\b")
_VECMATH_CALL = re.compile(r"\b\w+_f(?:32|64)\(")
_LITERAL = re.compile(r"^[\d\s()+*-]+$")       # an index expression with no variable


_FOR = re.compile(r"^(\s*)for (\w+) in ")
_ANY_STORE = re.compile(r"^\s*(\w+)\[.*\] = ")
_BOUND = re.compile(r"^\s*(?:for )?(\w+) (?:=|in) ")
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _past_trig_range(bits: str) -> Callable[[str], str]:
    limit = TRIG_MAX_F32 if bits == "32" else TRIG_MAX_F64
    return lambda arg: f"abs({arg}) > np.float{bits}({limit!r})"


# Fast functions that hold only inside a range, with their exact twin and the test of an
# argument outside: sin, cos and tan reduce their argument exactly up to TRIG_MAX (2^20
# float32, 2^40 float64; past it they returned 0 or 1: np.sin(1e300) was 0.0,
# np.sin(np.float32(1e8)) too, silently); the complex exp as exp(x) (cos y + i sin y)
# where exp(x) is finite and normal and the trig functions hold.
FAST_MATH = {
    **{f"{f}_f{b}": (TRIG_LIBM[f"{f}_f{b}"], _past_trig_range(b))
       for f in ("sin", "cos", "tan") for b in ("32", "64")},
    "cexp_vec": ("cexp", lambda z: f"not (abs({z}.real) < {CEXP_VEC_MAX_REAL!r} and "
                                   f"abs({z}.imag) < {TRIG_MAX_F64!r})"),
}
_FAST_NAME = re.compile(rf"\b({'|'.join(FAST_MATH)})\(")
_FAST_CALL = re.compile(rf"\b({'|'.join(FAST_MATH)})\(([^()]*)\)")


def _guarded_math(kernel: Kernel) -> bool:
    """Whether the kernel computes a FAST_MATH function (its body may run twice, so its
    epilogue may not overwrite the product it reads: `can_rerun`)."""
    return any(n.op in (Op.SIN, Op.COS, Op.TAN) or
               (n.op is Op.EXP and n.dtype.kind == "c") for n in kernel.nodes)


def guard_fast_math(lines: list[str], can_rerun: bool) -> list[str]:
    """A kernel body whose FAST_MATH functions hold for any argument.  The body notes
    arguments outside their range as it runs (a bool or-reduction: the loops still
    vectorize, about 6% slower on a lone sin; an integer sum made float32 sin 3x slower)
    and, where there was any, runs once more with the exact twins, recomputing every
    output from the inputs.  Where it cannot (an output stored over an input:
    `can_rerun`), or an argument is not a plain name, the body calls the twins only."""
    text = "\n".join(lines)
    if not _FAST_NAME.search(text):
        return lines
    precise = [_FAST_NAME.sub(lambda m: f"{FAST_MATH[m.group(1)][0]}(", line)
               for line in lines]
    calls = list(_FAST_CALL.finditer(text))
    if not can_rerun or len(calls) != len(_FAST_NAME.findall(text)) or \
            not all(re.fullmatch(r"\w+", call.group(2)) for call in calls) or \
            any(line.strip().startswith("return") for line in lines):
        return precise
    parallel = any("numba.prange" in line for line in lines)
    guarded = ["    fast_ = np.uint8(0)" if parallel else "    fast_ = False"]
    for line in lines:
        indent = line[:len(line) - len(line.lstrip())]
        for call in _FAST_CALL.finditer(line):
            outside = FAST_MATH[call.group(1)][1](call.group(2))
            # a prange takes no `|=` reduction: max of a byte (40% slower unsplit)
            guarded.append(f"{indent}fast_ = max(fast_, np.uint8({outside}))" if parallel
                           else f"{indent}fast_ |= {outside}")
        guarded.append(line)
    return guarded + ["    if fast_:"] + ["    " + line for line in precise]


def hoist_invariants(lines: list[str]) -> list[str]:
    """Loop-invariant code motion on the generated source: a value computed once
    (`vN = expr`, assigned nowhere else) in a loop's body, whose expression reads no name
    bound in that loop and no array the kernel writes, moves before the loop.  A gather's
    index (`table[idx[i, j], k]`, loaded and clamped per k) is then read once per (i, j):
    LLVM cannot hoist it itself, since the loop's stores might alias the index array, and
    the recomputation also stops it vectorizing the loop (4x on an embedding bag)."""
    assigned = collections.Counter(m.group(1) for line in lines
                                   if (m := _ASSIGN.match(line)))
    written = {m.group(1) for line in lines if (m := _ANY_STORE.match(line))}
    reads_written = re.compile(rf"\b(?:{'|'.join(map(re.escape, written))})\[") \
        if written else None
    moved = True
    while moved:
        moved = False
        for h, header in enumerate(lines):
            loop = _FOR.match(header)
            if not loop:
                continue
            indent = len(loop.group(1))
            end = h + 1
            while end < len(lines) and _indent(lines[end]) > indent:
                end += 1
            body = lines[h + 1:end]
            bound = {m.group(1) for line in body if (m := _BOUND.match(line))}
            bound.add(loop.group(2))
            hoisted: list[str] = []
            for line in body:
                value = _ASSIGN.match(line)
                if not value or _indent(line) != indent + 4 or assigned[value.group(1)] != 1:
                    continue
                expr = value.group(2)
                if set(_NAME.findall(expr)) & bound or \
                        (reads_written and reads_written.search(expr)):
                    continue
                hoisted.append(line)
                bound.discard(value.group(1))
            if hoisted:
                kept = [line for line in body if line not in hoisted]
                lines = lines[:h] + [line[4:] for line in hoisted] + [header] + kept + \
                    lines[end:]
                moved = True
                break
    return lines


_ROW_STORE = re.compile(r"^\s*(\w*row\d+\[\w+\]) = (v\d+)$")


DISTRIBUTED_STORES = 3          # a loop body with fewer stores stays one loop


def stores_in_one_loop(kernel: Kernel) -> bool:
    """Whether a loop kernel stores its outputs in one loop, in `kernel.outputs` order,
    each after computing its value (`distribute_stores` keeps so few stores whole)."""
    return kernel.kind == "loop" and len(kernel.outputs) < DISTRIBUTED_STORES


# Bytes a loop kernel's arrays span, from which it streams them from memory (above this
# machine kind's L2 of 2 MB a core, with room for the rest)
STREAMED_BYTES = 1 << 20


def streams_past_cache(kernel: Kernel) -> bool:
    """Whether a loop kernel is bound by memory: cheap arithmetic (no EXPENSIVE op, no
    complex value) over arrays (its outputs and the inputs of its root's shape) that
    together span more than the L2 (STREAMED_BYTES).  Reading one twice then costs
    bandwidth; in a kernel of vector math or complex arithmetic, each store's own loop
    vectorizes where one loop of them all may not (4 complex results of 1e6 elements:
    27 ms in four loops, 46 in one)."""
    if any(n.op in EXPENSIVE or n.dtype.kind == "c" for n in kernel.nodes):
        return False
    arrays = kernel.outputs + [i for i in kernel.inputs if i.shape == kernel.root.shape]
    return sum(a.nbytes for a in arrays) > STREAMED_BYTES


def distribute_stores(body: list[str], streamed: bool = False) -> list[list[str]]:
    """Loop distribution of straight-line loop body: one loop per store, each with the
    assignments its value needs.  A loop storing to many arrays does not vectorize (LLVM
    cannot rule out aliasing among so many pointers); one store per loop does: 2.4x on a
    layer-norm backward's nine bias/scale gradients.  Stores whose values share a vecmath
    call stay in one loop, so that no exp or tanh is computed twice.  A body with branches
    (a fused concatenate) stays whole.

    A value an earlier loop stored in a row buffer (`rowK[j] = vN`: the buffer has vN's
    dtype, and only that store writes it) is loaded back from there by later loops instead
    of recomputed from its inputs: the same bits, fewer loads, and fewer statements for
    Numba to compile (W5's layer-norm backward kernel: 229 -> 184 statements).

    Where cheap arithmetic streams its arrays from memory (`streamed`), a body whose
    loops would load an array more than once in all stays whole: a leapfrog step storing
    x, a and v, each computed from the last, ran 3 loops loading x, v and a up to 3 times
    (1e5 float64: 326 us against 233 in one loop; 8 chained stores 1284 against 584)."""
    if any(line.rstrip().endswith(":") for line in body):
        return [body]
    defs, stores = {}, []
    for line in body:
        match = _ASSIGN.match(line)
        if match:
            defs[match.group(1)] = line
        else:
            stores.append(line)
    if len(stores) < DISTRIBUTED_STORES:
        return [body]

    def needs(lines: list[str], reused=frozenset()) -> set[str]:
        """The variables `lines` read, through the defs, stopping at `reused` ones."""
        found, stack = set(), [n for line in lines
                               for n in _VARIABLE.findall(line.split(" = ", 1)[1])]
        while stack:
            name = stack.pop()
            if name in defs and name not in found:
                found.add(name)
                if name not in reused:
                    stack += _VARIABLE.findall(defs[name].split(" = ", 1)[1])
        return found

    groups = [(needs([store]), [store]) for store in stores]
    merged: list[tuple[set[str], list[str]]] = []
    for names, members in groups:
        costly = {n for n in names if _VECMATH_CALL.search(defs[n])}
        for other in merged:
            if costly & other[0]:
                other[0].update(names)
                other[1].extend(members)
                break
        else:
            merged.append((names, members))
    loops, stored = [], {}            # stored: variable -> the row element holding it
    for _, members in merged:
        names = needs(members, frozenset(stored))
        loops.append([_reload(line, stored) for line in body if _ASSIGN.match(line)
                      and _ASSIGN.match(line).group(1) in names] + members)
        for store in members:
            match = _ROW_STORE.match(store)
            if match and match.group(2) in defs:
                stored.setdefault(match.group(2), match.group(1))
    if streamed and _array_loads(loops) > _array_loads([body]):
        return [body]
    return loops


def _array_loads(loops: list[list[str]]) -> int:
    """Arrays the loops load, counted once per loop reading one."""
    return sum(len({name for line in loop if _ASSIGN.match(line)
                    for name in _ARRAY_ACCESS.findall(line)}) for loop in loops)


def _reload(line: str, stored: dict[str, str]) -> str:
    """`line` (`vN = ...`), or a load of vN from the row element an earlier loop stored
    it in."""
    name = _ASSIGN.match(line).group(1)
    if name not in stored:
        return line
    return f"{line[:len(line) - len(line.lstrip())]}{name} = {stored[name]}"


def _reshape_groups(shape, source) -> list[tuple[list[int], list[int]]]:
    """Pairs (dims of `shape`, dims of `source`) of equal element count, size-1 dims left
    out: (8, 128, 256) from (8, 128, 4, 64) -> [0]~[0], [1]~[1], [2]~[2, 3]."""
    out_dims = [d for d, n in enumerate(shape) if n != 1]
    in_dims = [d for d, n in enumerate(source) if n != 1]
    groups, i, j = [], 0, 0
    while i < len(out_dims) and j < len(in_dims):
        outs, ins = [out_dims[i]], [in_dims[j]]
        out_size, in_size = shape[out_dims[i]], source[in_dims[j]]
        i, j = i + 1, j + 1
        while out_size != in_size:
            if out_size < in_size:
                outs.append(out_dims[i])
                out_size *= shape[out_dims[i]]
                i += 1
            else:
                ins.append(in_dims[j])
                in_size *= source[in_dims[j]]
                j += 1
        groups.append((outs, ins))
    return groups


def adapt_index(idx: tuple[str, ...], space, shape) -> tuple[str, ...]:
    """The index of a node whose shape equals `space` up to size-1 dims."""
    if tuple(shape) == tuple(space):
        return idx
    outer = iter(i for i, n in zip(idx, space) if n != 1)
    return tuple("0" if n == 1 else next(outer) for n in shape)


def run_steps(steps, *args):
    """Run the generator `steps(*args)`, and each `steps(*request, *args[2:])` it yields,
    on an explicit stack; a yield receives its request's result.  What a recursive
    function would compute, at any depth."""
    extra = args[2:]
    stack, result = [steps(*args)], None
    while stack:
        try:
            request = stack[-1].send(result)
        except StopIteration as done:
            stack.pop()
            result = done.value
            continue
        stack.append(steps(*request, *extra))
        result = None
    return result


def _affine(index: str, start: int, step: int) -> str:
    text = index if step == 1 else f"{step} * {_atom(index)}"
    return text if start == 0 else f"({start} + {text})"


_NAME_OR_NUMBER = re.compile(r"-?[\w.]+")


def _atom(expr: str) -> str:
    """`expr` as one operand of an arithmetic operator: index expressions compose (a
    reverse of a reshape's "i0 * 4 + i1"), and `7 - i0 * 4 + i1` is not `7 - (i0*4 + i1)`."""
    return expr if _NAME_OR_NUMBER.fullmatch(expr) else f"({expr})"


def clamp(value: str, dtype: np.dtype, high: int) -> str:
    """`min(max(value, 0), high)` for an integer `value` of `dtype`, as an int64
    conditional expression.  Numba's builtin min and max are Python implementations it
    compiles once per process and argument types (about 40 ms each); a conditional
    compiles to two selects.  The literals and casts keep the result an int64 index:
    Numba unifies uint64 with int64 as float64, so uint64 compares with a uint64 bound and
    is cast after (it is below `high` there, so it fits)."""
    dtype = np.dtype(dtype)
    assert dtype.kind in "iub", f"clamped index of dtype {dtype}"
    if high < 0:                    # an empty axis: min(anything, high) is high
        return str(high)
    v = _atom(value)
    if dtype == np.uint64:
        return f"(np.int64({v}) if {v} < np.uint64({high}) else {high})"
    if dtype.kind in "ub":          # never below 0
        return f"(np.int64({v}) if {v} < {high} else {high})"
    return f"({high} if {v} > {high} else (0 if {v} < 0 else np.int64({v})))"


def empty(shape, dtype) -> str:
    """Source allocating a scratch array (`codegen/alloc.py`: no Numba np.empty compile)
    of `shape`, a list of size names or ints."""
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    return f"empty(({dims}), {templates.CAST[np.dtype(dtype).name]})"


@dataclass(frozen=True)
class OperandView:
    """How the driver hands a dot operand to np.matmul: `node` transposed by `perm` (None:
    as is) and reshaped to (*batch, rows, cols), its last two axes swapped if `transposed`,
    copied first if `copy` (a view NumPy could not pass to BLAS)."""
    node: Node
    perm: tuple | None
    shape: tuple
    transposed: bool
    copy: bool

    @property
    def matrix(self) -> tuple:
        """(rows, cols) of the matrix np.matmul receives (`shape`'s last two, swapped
        where `transposed`)."""
        rows, cols = self.shape[-2:]
        return (cols, rows) if self.transposed else (rows, cols)


def _operand_view(node: Node, batch: list[int], first: list[int], second: list[int]
                  ) -> OperandView:
    """Batch dims stay apart (np.matmul loops over them with any strides), so a
    head-split attention operand reaches BLAS as a strided view instead of a copy."""
    size = lambda dims: int(np.prod([node.shape[d] for d in dims], dtype=np.int64))
    batch_shape = tuple(node.shape[d] for d in batch)
    rank = node.ndim
    if batch + first + second == list(range(rank)):
        return OperandView(node, None, batch_shape + (size(first), size(second)), False,
                           False)
    if batch + second + first == list(range(rank)):
        return OperandView(node, None, batch_shape + (size(second), size(first)), True,
                           False)
    perm = tuple(batch + first + second)
    return OperandView(node, perm, batch_shape + (size(first), size(second)), False,
                       not _blas_view(node, first, second))


def _blas_view(node: Node, first: list[int], second: list[int]) -> bool:
    """Whether the (rows, cols) matrices of `node` with `first` and `second` dims merged
    are a reshape view NumPy's matmul passes to BLAS (one unit stride, the other no
    smaller than that axis' extent) rather than a copy or its slow non-BLAS loop."""
    strides = [int(np.prod(node.shape[d + 1:], dtype=np.int64)) for d in range(node.ndim)]

    def merged(dims):                    # (extent, stride) of the group, None if no view
        dims = [d for d in dims if node.shape[d] != 1]
        for a, b in zip(dims, dims[1:]):
            if strides[a] != strides[b] * node.shape[b]:
                return None
        extent = int(np.prod([node.shape[d] for d in dims], dtype=np.int64))
        return extent, (strides[dims[-1]] if dims else 1)

    rows, cols = merged(first), merged(second)
    if rows is None or cols is None:
        return True                      # reshape copies to C order: BLAS-ready
    (m, row_stride), (n, col_stride) = rows, cols
    return (col_stride == 1 and row_stride >= n) or (row_stride == 1 and col_stride >= m)


SUM_BLOCK = 256
# Row lengths from which sums along rows add float32 blocks (_Codegen._rows_blocked): rows
# of vector math, and rows of plain terms
BLOCKED_ROW_MIN_EXPENSIVE = 16
BLOCKED_ROW_MIN = 32
# gemv_pair rows per step of the sweep: the accumulator is loaded and stored once per
# step.  Least-squares gradient 2000x1000, 1 thread, loaded machine, NumPy/xlanb paired
# medians for 1 / 2 / 4 rows: f64 1.13 / 1.37 / 1.63 and 1.12 / 1.25 / 1.66; f32
# 0.95 / 1.11 / 1.18 (f32's 8 MB stays in the L3 between NumPy's two GEMVs)
GEMV_PAIR_ROWS = 4


# Vector math functions: each a long dependency chain (40-60 cycles on Zen 3)
TRANSCENDENTAL = EXPENSIVE - {Op.DIV, Op.SQRT, Op.RSQRT}
FISSION_MAX_NODES = 200     # kernels beyond: no search for a loop fission cut (quadratic)


def fission_cut(root: Node, kernel: Kernel) -> Node | None:
    """Where to split the loop computing `root` per element in two (loop fission through
    an L1 buffer of SUM_BLOCK values), or None.  A chain of two vector math functions
    (log of exp, ...) in one loop body is one dependency chain of 100+ cycles per vector:
    the FP scheduler (64 entries on Zen 3) fills with waiting instructions and the loop
    runs at a fraction of its throughput (llvm-mca: 115 cycles per 8 elements against 30
    of resources, for the Gaussian log-likelihood).  Split, each loop's chain is about half
    as long.  1 thread, 1e6 float32, ms: sum(log(exp(x) + 1)) 3.22 -> 2.11; Gaussian
    log-likelihood 3.75 -> 2.05; float64 (4 lanes, throughput bound) 8.2 -> 8.2.

    The cut is one value at the root's index (an elementwise node of the kernel) with a
    function before it and one after, which the part after it needs alone among the
    values of expensive ops before it (nothing is computed twice); of those, the one
    splitting the functions on the longest path most evenly, the latest on a tie."""
    if len(kernel.nodes) > FISSION_MAX_NODES:
        return None
    chain: dict[int, int] = {}          # functions on the longest path to a node
    for node in kernel.nodes:
        inner = [chain.get(id(i), 0) for i in node.inputs
                 if kernel.contains(i) and i.shape == node.shape]
        chain[id(node)] = max(inner, default=0) + (node.op in TRANSCENDENTAL)
    total = chain.get(id(root), 0)
    if total < 2:
        return None
    best, best_score = None, None
    for position, cut in enumerate(kernel.nodes):
        if cut is root or cut.op not in ELEMENTWISE or cut.shape != root.shape or \
                cut.dtype.kind != "f" or chain[id(cut)] < 1:
            continue
        before = _ancestors(cut, kernel)
        after = _ancestors(root, kernel, stop=cut) - {cut}
        if not any(n.op in TRANSCENDENTAL for n in after - before) or \
                any(n.op in EXPENSIVE for n in after & before):
            continue
        score = (abs(2 * chain[id(cut)] - total), -position)
        if best_score is None or score < best_score:
            best, best_score = cut, score
    return best


def _ancestors(node: Node, kernel: Kernel, stop: Node | None = None) -> set:
    """The kernel's nodes `node` is computed from (itself included), not looking past
    `stop`."""
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n in seen or not kernel.contains(n):
            continue
        seen.add(n)
        if n is not stop:
            todo.extend(n.inputs)
    return seen


def _blocked_sum(red: Node) -> bool:
    return red.arg[0] == "sum" and red.inputs[0].dtype == np.float32


def _accumulator(red: Node) -> tuple[str, str, str]:
    """(accumulator dtype, initial value source, combine template over {a} and {v})."""
    kind = red.arg[0]
    dtype = red.dtype
    if kind in ("sum", "prod"):
        acc = {"f": "float64", "c": "complex128", "i": "int64"}.get(dtype.kind, "uint64")
        init = f"np.{acc}({0 if kind == 'sum' else 1})"
        return acc, init, "{a} + {v}" if kind == "sum" else "{a} * {v}"
    if kind in ("any", "all"):
        return "bool", ("False" if kind == "any" else "True"), \
            "{a} | {v}" if kind == "any" else "{a} & {v}"
    cmp = ">=" if kind == "max" else "<="
    if dtype.kind == "f":
        init = f"np.{dtype.name}({'-np.inf' if kind == 'max' else 'np.inf'})"
        return dtype.name, init, f"{{a}} if ({{a}} {cmp} {{v}} or {{a}} != {{a}}) else {{v}}"
    info = np.iinfo(dtype)
    init = f"np.{dtype.name}({info.min if kind == 'max' else info.max})"
    return dtype.name, init, f"{{a}} if {{a}} {cmp} {{v}} else {{v}}"


def _cpu_accumulator(red: Node) -> tuple[str, str, str]:
    """_accumulator, with float max/min combined by the vectorizing NaN-propagating
    intrinsics (the CUDA target keeps the compare-and-select form).  The new value comes
    first: without AVX-512, x86 lowers maximum(a, v) to `a if a is NaN else max`, and an
    accumulator `a` loaded from and stored to memory then becomes a masked store
    (vmaskmovps), microcoded on AMD's Zen: column max/min of 2000x512 float32 0.8 ms
    against NumPy's 0.3; with the NaN test on `v` it is a plain store."""
    acc_dtype, init, combine = _accumulator(red)
    if red.arg[0] in ("max", "min") and red.dtype in (np.float32, np.float64):
        combine = ("fmaximum" if red.arg[0] == "max" else "fminimum") + "({v}, {a})"
    return acc_dtype, init, combine


NARROW_DOT_COLUMNS = 16
NARROW_ROW_NAMES = ("i0", "i0b")                # a narrow dot's rows, in pairs
NARROW_PAIRED_RHS_BYTES = 32 * 1024             # ... where its rhs is larger (past L1)
NARROW_ACCUMULATORS = {"i0": "d", "i0b": "e"}   # their accumulators' prefixes
SHORT_REDUCTION = 4         # terms per output up to which a trailing reduction is unrolled
NUMPY_SEQUENTIAL_SUM = 7    # terms NumPy's pairwise sum adds in order (below its 8 blocks)


def is_narrow_dot(dot: Node, kernel: Kernel) -> bool:
    """A plain 2-D float dot, lhs (m, k) read along k, at most NARROW_DOT_COLUMNS output
    columns, whose epilogue reads it elementwise at its own index (the generated loop
    holds one row of it in registers)."""
    lb, _, lc, rc = dot.arg
    lhs, rhs = dot.inputs
    if lb or lhs.ndim != 2 or rhs.ndim != 2 or tuple(lc) != (1,) \
            or dot.dtype not in (np.float32, np.float64):
        return False
    m, n = dot.shape
    if not (n <= NARROW_DOT_COLUMNS and m >= 4 * n and lhs.shape[1] >= 4 * NARROW_DOT_COLUMNS):
        return False
    users = [u for u in kernel.nodes if any(i is dot for i in u.inputs)]
    return all(u.op in ELEMENTWISE and u.shape == dot.shape for u in users)


@functools.cache
def vector_registers() -> int:
    """SIMD registers in the code Numba generates: 32 where it targets this host and the
    host has AVX-512, else 16 (AVX2; SSE2 on a generic x86-64 target)."""
    import llvmlite.binding as llvm
    import numba
    if numba.config.CPU_NAME not in (None, "host"):
        return 16
    return 32 if llvm.get_host_cpu_features().get("avx512f") else 16


def should_parallelize(kernel: Kernel, threads: int) -> bool:
    """Wake the thread pool only for loops it can split safely, and only from the size
    where threads were measured to win on this machine (thread_calibration)."""
    if threads < 2:
        return False
    if kernel.kind == "scan":           # the rows before its axis are independent
        axis = kernel.scan.arg[1]
        if axis == 0 or kernel.scan.shape[0] < threads:
            return False
    space = kernel.space("in") if kernel.kind == "reduce" else kernel.root.shape
    if kernel.kind == "reduce":
        reds = kernel.reductions
        axes = reds[0].arg[1]
        rank = len(space)
        suffix = list(axes) == list(range(min(axes, default=rank), rank))
        full_sum = len(axes) == rank and all(r.arg[0] in ("sum", "prod") for r in reds)
        if not suffix or not (len(axes) < rank or full_sum) or any(
                kernel.region[id(o)] == "in" for o in kernel.outputs):
            return False
    elements = int(np.prod(space, dtype=np.int64))
    fixed = flags.current().xla_cpu_parallel_min_elements
    if fixed > 0:
        return elements >= fixed
    if elements < min(thread_calibration.SIZES):
        return False                # below every measured size: never worth asking
    threshold = thread_calibration.parallel_min_elements(
        threads, "reduce" if kernel.kind == "reduce" else "map")
    return threshold is not None and elements >= threshold


class Stride(NamedTuple):
    """Where a strided region starts along a dim, and its step: `x[1::3] = v`."""
    low: int
    step: int


def region_update(node: Node):
    """(x, v, lows) when `node` is `x` with one region replaced by `v`: the lowering of
    `x[a:b, c:d] = v`, select(pad(all-true, false), pad(v, _), x).  `lows`: where the
    region starts per dimension, an int for a pad, a `Stride` for an interior pad (a
    strided slice, `x[a:b:s] = v`), a 0-d integer node for a dynamic pad (a rolled loop's
    moving write, placed at run time)."""
    if node.op is not Op.SELECT or node.ndim == 0:
        return None
    mask, padded, base = node.inputs
    if mask.op is Op.PAD and padded.op is Op.PAD and mask.arg == padded.arg:
        lows = tuple(low if interior == 0 else Stride(low, interior + 1)
                     for low, _, interior in padded.arg)
    elif mask.op is Op.DYNAMIC_PAD and padded.op is Op.DYNAMIC_PAD and \
            mask.inputs[0].shape == padded.inputs[0].shape and \
            all(same_place(a, b) for a, b in zip(mask.inputs[2:], padded.inputs[2:])):
        lows = tuple(padded.inputs[2:])
    else:
        return None
    inside, outside = mask.inputs[:2]
    if not (_splat_value(inside) is True and _splat_value(outside) is False):
        return None
    return base, padded.inputs[0], lows


def same_place(a: Node, b: Node) -> bool:
    """Two 0-d places known equal: one node, or scalar constants of one value."""
    return a is b or (a.op is Op.CONSTANT and b.op is Op.CONSTANT and a.shape == () and
                      b.shape == () and a.arg.item() == b.arg.item())


def region_value_is_local(kernel: Kernel, update) -> bool:
    """Whether v of the kernel's `x[a:b] = v` reads x only at the element it replaces:
    through a slice of exactly the region, then only elementwise ops and reshapes (a
    broadcast, reduction or shifted read of x would read elements already overwritten
    in place), or through a slice of elements outside the region, which no store of the
    kernel changes (ghost cells: `u[:, 0] = u[:, -2]`).  Then v is written straight into
    the region; else it is staged (`gen_region_update`)."""
    base, value, lows = update
    padded, mask = kernel.root.inputs[1], kernel.root.inputs[0]
    derived: set[int] = set()                  # kernel nodes computed from x
    for node in kernel.nodes:
        reads = [i for i in node.inputs if i is base or id(i) in derived]
        if not reads or node is kernel.root:
            continue
        if node.op is Op.SLICE and node.inputs[0] is base and \
                _slice_outside_region(node, lows, value.shape):
            continue                           # reads only elements nothing overwrites
        if any(i is base for i in node.inputs):
            if not _same_region_slice(node, lows, value.shape):
                return False
        elif node.op in (Op.PAD, Op.DYNAMIC_PAD) and node is padded:
            pass
        elif not (node.op in ELEMENTWISE or node.op in (Op.CONVERT, Op.RESHAPE)) or \
                any(i.size != node.size for i in reads):
            return False
        derived.add(id(node))
    return id(mask) not in derived and not any(i is base for i in (mask, padded))


def region_needs_staging(kernel: Kernel, update, apart=frozenset()) -> bool:
    """Whether v must be computed whole before the region is written over x's buffer: it
    reads x elsewhere than at the element it replaces, or it reads another array of x's
    size, which may live in x's buffer (a view, or an earlier update of x in place:
    buffers.py), unless that input is in `apart` (ids of inputs known to live elsewhere:
    buffers.py `region_staging`)."""
    base, value, _ = update
    if not region_value_is_local(kernel, update):
        return True
    return any(i is not base and i.size == base.size and id(i) not in apart
               for i in kernel.inputs)


def same_region(a, b) -> bool:
    """Whether two `region_update`s replace the same elements."""
    return a[1].shape == b[1].shape and all(
        same_place(x, y) if isinstance(x, Node) and isinstance(y, Node) else
        not isinstance(x, Node) and not isinstance(y, Node) and x == y
        for x, y in zip(a[2], b[2]))


def _slice_outside_region(node: Node, lows, shape) -> bool:
    """Whether a static slice of x reads no element of the region (placed at `lows`, of
    `shape`): along some dimension their indices do not meet (apart, or interleaved:
    `x[::2]` against `x[1::2]`, two progressions whose starts differ by no multiple of
    the steps' gcd)."""
    for (start, stop, step), low, n in zip(node.arg, lows, shape):
        if isinstance(low, Node):
            continue                           # placed at run time: may meet anywhere
        first, every = (low, 1) if isinstance(low, (int, np.integer)) else (low.low, low.step)
        region = range(first, first + every * n, every)
        read = range(start, stop, step)
        if not read or not region or read[-1] < region[0] or region[-1] < read[0] or \
                (start - first) % math.gcd(step, every):
            return True
        if len(read) * len(region) <= 1 << 16 and not set(read).intersection(region):
            return True
    return False


def _same_region_slice(node: Node, lows, shape) -> bool:
    """A slice of x reading exactly the region's elements: starting where it does, with
    its step, of its shape."""
    if tuple(node.shape) != tuple(shape):
        return False
    if node.op is Op.SLICE:
        return all(isinstance(low, (int, np.integer)) and start == low and step == 1 or
                   isinstance(low, Stride) and start == low.low and step == low.step
                   for (start, _, step), low in zip(node.arg, lows))
    return node.op is Op.DYNAMIC_SLICE and all(
        not isinstance(low, (int, np.integer)) and same_place(start, low)
        for start, low in zip(node.inputs[1:], lows))


def kernel_region_update(kernel: Kernel):
    """`region_update` of a one-output kernel's root whose mask and padded value the
    kernel computes (a pad read from another kernel's buffer is not a region)."""
    update = region_update(kernel.root) if len(kernel.outputs) == 1 else None
    if update is None or not all(kernel.contains(p) for p in kernel.root.inputs[:2]):
        return None
    return update


def _splat_value(node: Node):
    while node.op is Op.BROADCAST:
        node = node.inputs[0]
    if node.op is Op.CONSTANT and node.arg.size == 1 and node.dtype == np.bool_:
        return bool(node.arg.reshape(()))
    return None


def generate(kernel: Kernel, threads: int = 1, in_place=None,
             staged: bool | None = None) -> GeneratedKernel:
    """Source and calling convention of one fused kernel (not library kernels).
    `in_place`: {id(output): input} for outputs written into an input's buffer.
    `staged`: whether a region update computes its value whole first (buffers.py
    `region_staging`); None: `region_needs_staging`, not knowing the buffers."""
    return _Codegen(kernel, should_parallelize(kernel, threads), in_place,
                    staged).generate()
