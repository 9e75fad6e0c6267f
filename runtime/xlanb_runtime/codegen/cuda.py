"""CUDA code generation: one fused kernel -> the Python source of `numba.cuda.jit` kernels.

The emitter is the CPU one (`cpu._Codegen.value` computes a node at an index expression,
through the shared `templates.expression` table); CUDA overrides only what differs: the loop
skeletons below, math functions (`math.exp` on the device, NumPy's under the simulator, where
Python's `math` raises instead of returning NaN/Inf), the dot value (a register, not a
buffer) and `splitmix64` (a device function in the module).  One skeleton per kind:

    loop     grid-stride over the flat output index, decomposed into per-dim indices
             with the sizes passed as arguments:
                 for f_ in range(cuda.grid(1), nt_, cuda.gridsize(1)):
                     i1 = f_ % n1; q_ = f_ // n1; i0 = q_ ...
    reduce   one block per output element (grid-stride over them): each thread folds a
             strided share of the reduced elements (writing the input region's extra
             outputs on the way), a shared-memory tree combines the block (power-of-two
             block, `cuda.syncthreads()` per level), thread 0 applies the epilogue and
             stores.  With few outputs each is split over `ns_` blocks that write partials,
             and `<name>_finish` (one block per output) combines them and runs the epilogue.
    dot      a tiled shared-memory GEMM over the (batch, m, k) x (batch, k, n) views; the
             views are index arithmetic on the operands as they lie in memory (no transpose
             copies), and the fused epilogue runs on the accumulator before the store.
    scan     grid-stride over the rows across the scan axis, one thread per row walking
             the axis in order (a register carries the running value).  A single row
             (a 1-D cumsum) is one block instead: each thread folds a contiguous chunk,
             thread 0 scans the chunk totals in shared memory, and each thread rescans
             its chunk from the total before it (two passes over the input).
    scatter  `<name>` writes the base (its producers fused), then `<name>_updates` adds
             the updates with `cuda.atomic.add` at the rows their indices name (clamped).

Every function of a kernel's module takes the same arguments, so the executable binds them
once; `launches` says which functions run, in order, with which grid.  Sizes are arguments
(as on the CPU); the block and tile edges are module constants (shared arrays need them).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numba
import numpy as np

from ..ir import Node, Op
from ..ir.ops import SCAN_COMBINE
from ..ir.interpret import SPLITMIX_GAMMA, SPLITMIX_MUL1, SPLITMIX_MUL2
from ..passes.fusion import Kernel
from . import templates
from .cpu import KernelArg, _accumulator, _Codegen


class CudaUnavailableError(RuntimeError):
    """`target="cuda"` with neither a CUDA GPU nor Numba's CUDA simulator.

        xlanb.jit(f, target="cuda")(x)      # on a machine without a GPU: this error
        NUMBA_ENABLE_CUDASIM=1 python f.py  # fix: run the same kernels on the simulator
    """


class UnsupportedOnDevice(Exception):
    """A kernel this generator does not emit for the device (it runs on the host)."""


def is_simulator() -> bool:
    """Whether Numba runs CUDA kernels on its simulator (NUMBA_ENABLE_CUDASIM=1)."""
    return bool(numba.config.ENABLE_CUDASIM)


def check_available() -> None:
    """Raise CudaUnavailableError unless a GPU or the simulator can run the kernels."""
    try:
        from numba import cuda
        available = is_simulator() or cuda.is_available()
        reason = "" if available else "numba.cuda.is_available() is False"
    except Exception as error:                     # numba-cuda missing or broken
        available = False
        reason = f"numba.cuda failed to load: {error}; `pip install numba-cuda`"
    if not available:
        raise CudaUnavailableError(
            f"target='cuda' needs a CUDA GPU, and none is usable here ({reason}). To run "
            "the CUDA kernels without a GPU, set NUMBA_ENABLE_CUDASIM=1 in the environment "
            "before Python starts (Numba's CUDA simulator, slow: keep arrays small), or "
            "use target='cpu'.")


SCAN_BLOCK = 256           # threads scanning one row (power of two: a full warp multiple)


@dataclass(frozen=True)
class LaunchPolicy:
    """How launch configurations are chosen from the shapes."""
    threads: int = 256        # loop and scatter blocks (128 for small kernels)
    max_blocks: int = 4224    # grid cap (32 per SM); grid-stride loops cover the rest
    reduce_threads: int = 256  # largest reduction block (a power of two)
    tile: int = 16            # dot tile edge: tile x tile threads per block
    split_blocks: int = 528   # blocks a reduction with few outputs is spread over
    dot_rows: int = 4         # most outputs per thread along each dot tile edge
    min_dot_blocks: int = 264  # a dot's register tile shrinks until it has this many blocks

    @staticmethod
    def for_gpu(sm_count: int = 132) -> "LaunchPolicy":
        return LaunchPolicy(max_blocks=32 * sm_count, split_blocks=4 * sm_count,
                            min_dot_blocks=2 * sm_count)


# The simulator runs every thread as a Python thread and every barrier as a poll of all of
# them: few threads, small blocks (the grid-stride loops keep any grid correct).
SIMULATOR_POLICY = LaunchPolicy(threads=32, max_blocks=2, reduce_threads=8, tile=4,
                                split_blocks=4, dot_rows=2, min_dot_blocks=1)


def launch_policy() -> LaunchPolicy:
    if is_simulator():
        return SIMULATOR_POLICY
    from numba import cuda
    return LaunchPolicy.for_gpu(cuda.get_current_device().MULTIPROCESSOR_COUNT)


@dataclass
class Launch:
    function: str
    blocks: int
    threads: int | tuple[int, int]


@dataclass
class GeneratedCudaKernel:
    kernel: Kernel
    function: str
    source: str
    args: list[KernelArg] = field(default_factory=list)   # kinds: in out scratch size const
    launches: list[Launch] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.kernel.name


# alias -> (under the simulator: NumPy, NaN/Inf like the device; on the device)
DEVICE_MATH = {
    "_exp": ("np.exp", "math.exp"), "_expm1": ("np.expm1", "math.expm1"),
    "_exp2_f32": ("np.exp2", "libdevice.exp2f"), "_exp2_f64": ("np.exp2", "libdevice.exp2"),
    "_log": ("np.log", "math.log"), "_log1p": ("np.log1p", "math.log1p"),
    "_tanh": ("np.tanh", "math.tanh"), "_sin": ("np.sin", "math.sin"),
    "_cos": ("np.cos", "math.cos"), "_erf": ("math.erf", "math.erf"),
    "_tan": ("np.tan", "math.tan"), "_asin": ("np.arcsin", "math.asin"),
    "_acos": ("np.arccos", "math.acos"), "_sinh": ("np.sinh", "math.sinh"),
    "_cosh": ("np.cosh", "math.cosh"), "_atan": ("np.arctan", "math.atan"),
    "_asinh": ("np.arcsinh", "math.asinh"), "_acosh": ("np.arccosh", "math.acosh"),
    "_atanh": ("np.arctanh", "math.atanh"),
    "_sqrt": ("np.sqrt", "math.sqrt"), "_floor": ("np.floor", "math.floor"),
    "_ceil": ("np.ceil", "math.ceil"), "_atan2": ("np.arctan2", "math.atan2"),
    "_rint_f32": ("np.rint", "libdevice.rintf"), "_rint_f64": ("np.rint", "libdevice.rint"),
}
_UNARY_MATH = {Op.EXP: "_exp", Op.EXP2: "_exp2", Op.EXPM1: "_expm1", Op.LOG: "_log",
               Op.LOG1P: "_log1p", Op.TANH: "_tanh", Op.SIN: "_sin", Op.COS: "_cos", Op.ERF: "_erf",
               Op.TAN: "_tan", Op.ASIN: "_asin", Op.ACOS: "_acos", Op.SINH: "_sinh",
               Op.COSH: "_cosh", Op.ATAN: "_atan", Op.ASINH: "_asinh",
               Op.ACOSH: "_acosh", Op.ATANH: "_atanh",
               Op.SQRT: "_sqrt", Op.FLOOR: "_floor", Op.CEIL: "_ceil", Op.ROUND: "_rint"}
ATOMIC_ADD_DTYPES = {np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64,
                                           np.uint32, np.uint64)}


def expression(op: Op, dtype: np.dtype, operands: list[str], operand_dtype: np.dtype) -> str:
    """`templates.expression`, with the math functions CUDA spells differently."""
    dtype, operand_dtype = np.dtype(dtype), np.dtype(operand_dtype)
    cast = templates.CAST[dtype.name]
    if op in _UNARY_MATH:
        if op in (Op.FLOOR, Op.CEIL, Op.ROUND) and operand_dtype.kind != "f":
            return templates.convert(operands[0], operand_dtype, dtype)      # integral
        fn = _UNARY_MATH[op]
        if fn in ("_rint", "_exp2"):         # libdevice's are per dtype
            fn += "_f32" if operand_dtype == np.float32 else "_f64"
        return f"{cast}({fn}({operands[0]}))"
    if op is Op.RSQRT:
        return f"({templates.typed_constant(1, dtype)} / {cast}(_sqrt({operands[0]})))"
    if op is Op.ATAN2:
        return f"{cast}(_atan2({operands[0]}, {operands[1]}))"
    if op is Op.POW and operand_dtype.kind == "f":     # the device's pow, not vecmath's
        return f"{cast}({operands[0]} ** {operands[1]})"
    if op is Op.REM and operand_dtype.kind == "f":     # the device's fmod, not vecmath's
        return f"({operands[0]} % {operands[1]})"
    return templates.expression(op, dtype, operands, operand_dtype)


def _next_pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


def _prod(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


class _CudaCodegen(_Codegen):
    merged_views_enabled = False       # literal-stride views (`input_at`): an LLVM matter

    def __init__(self, kernel: Kernel, policy: LaunchPolicy):
        super().__init__(kernel)
        self.policy = policy
        self.functions: list[tuple[str, list[str]]] = []
        self.launches: list[Launch] = []
        self.dot_var: str | None = None
        self.base = re.sub(r"\W", "_", kernel.name)

    # -- arguments and functions -------------------------------------------------------
    def named(self, kind: str, name: str, value=None, node=None) -> str:
        self.args.append(KernelArg(kind, name, node, value))
        return name

    def begin(self, suffix: str = "") -> str:
        name = self.base + suffix
        self.lines = []
        self.depth = 1
        self.functions.append((name, self.lines))
        return name

    def block(self, header: str) -> None:
        self.emit(header)
        self.depth += 1

    def grid(self, function: str, n: int) -> None:
        """Grid-stride launch for `n` elements: 128 or 256 threads a block."""
        if n == 0:
            return
        threads = min(self.policy.threads, 128 if n < (1 << 16) else 256)
        blocks = max(1, min(-(-n // threads), self.policy.max_blocks))
        self.launches.append(Launch(function, blocks, threads))

    def decompose(self, flat: str, sizes: list[str], prefix: str) -> tuple[str, ...]:
        """Per-dim C-order indices of the flat index `flat` over `sizes`."""
        names = tuple(f"{prefix}{d}" for d in range(len(sizes)))
        rest = flat
        for d in range(len(sizes) - 1, 0, -1):
            self.emit(f"{names[d]} = {rest} % {sizes[d]}")
            self.emit(f"q{prefix}_ = {rest} // {sizes[d]}")
            rest = f"q{prefix}_"
        if sizes:
            self.emit(f"{names[0]} = {rest}")
        return names

    def value_steps(self, node: Node, idx: tuple[str, ...], cache: dict):
        if node is self.k.dot and self.dot_var is not None:
            return self.dot_var
        if node.op in _UNARY_MATH or node.op in (Op.RSQRT, Op.ATAN2, Op.POW, Op.REM):
            key = (id(node), idx)
            if key in cache:
                return cache[key]
            if self.k.contains(node):
                operands = []
                for operand in node.inputs:
                    operands.append((yield (operand, idx)))
                cache[key] = self._assign(expression(node.op, node.dtype, operands,
                                                     node.inputs[-1].dtype))
                return cache[key]
        return (yield from super().value_steps(node, idx, cache))

    # -- kernel kinds ------------------------------------------------------------------
    def generate(self) -> GeneratedCudaKernel:
        k = self.k
        complex_values = {n.dtype for m in k.nodes for n in (m, *m.inputs)
                          if n.dtype.kind == "c"}
        if any(n.op is Op.ROUND_HALF for n in k.nodes):   # its helper is a CPU function
            raise UnsupportedOnDevice("float16 rounding has no CUDA kernel yet")
        if any(n.op is Op.BITCAST for n in k.nodes):
            raise UnsupportedOnDevice("a bitcast (x.view(dtype)) has no CUDA kernel yet")
        if complex_values:                 # correct on the host; device kernels: not yet
            raise UnsupportedOnDevice(f"{', '.join(sorted(map(str, complex_values)))} values "
                                      "have no CUDA kernels")
        self.output_names = {id(o): f"out{i}" for i, o in enumerate(k.outputs)}
        {"loop": self.gen_loop, "reduce": self.gen_reduce, "dot": self.gen_dot,
         "scatter": self.gen_scatter, "scan": self.gen_scan}[k.kind]()
        for i, out in enumerate(k.outputs):
            self.args.append(KernelArg("out", f"out{i}", out))
        order = {"in": 0, "out": 1, "scratch": 2, "size": 3, "const": 4}
        self.args.sort(key=lambda a: order[a.kind])
        names = [name for name, _ in self.functions]
        return GeneratedCudaKernel(k, names[0], self.render(), self.args, self.launches, names)

    def gen_loop(self) -> None:
        root = self.k.root
        function = self.begin()
        sizes = self.size_names(root.shape)
        total = self.named("size", "nt_", _prod(root.shape))
        self.block(f"for f_ in range(cuda.grid(1), {total}, cuda.gridsize(1)):")
        idx = self.decompose("f_", sizes, "i")
        self.write_outputs(self.k.outputs, idx, {}, root.shape)
        self.grid(function, _prod(root.shape))

    def gen_scan(self) -> None:
        """Grid-stride over the rows (every index but the scan axis'), one thread per row
        walking the axis in order with its running value in a register, the fused
        producers and consumers computed per element as on the CPU."""
        scan = self.k.scan
        kind, axis = scan.arg
        rows = _prod(scan.shape[:axis] + scan.shape[axis + 1:])
        if rows == 1 and scan.shape[axis] > 1:
            self._scan_one_row(scan)
            return
        function = self.begin()
        sizes = self.size_names(scan.shape)
        total = self.named("size", "nt_", rows)
        self.block(f"for f_ in range(cuda.grid(1), {total}, cuda.gridsize(1)):")
        row = self.decompose("f_", sizes[:axis] + sizes[axis + 1:], "i")
        self.emit(f"sacc = {templates.CAST[scan.dtype.name]}(0)")
        self.block(f"for k0 in range({sizes[axis]}):")
        idx = row[:axis] + ("k0",) + row[axis:]
        cache: dict = {}
        value = self.value(scan.inputs[0], idx, cache)
        combined = expression(SCAN_COMBINE[kind], scan.dtype, ["sacc", value], scan.dtype)
        self.emit(f"sacc = {value} if k0 == 0 else {combined}")
        self.reduce_vars[id(scan)] = "sacc"
        self.write_outputs(self.k.outputs, idx, cache, scan.shape)
        self.grid(function, rows)

    def _scan_one_row(self, scan: Node) -> None:
        """One row scanned by one block of SCANB threads, chunk by chunk (a blocked
        two-pass scan): fold each chunk, scan the chunk totals, rescan each chunk from
        the total before it and write.  Sums combine in another order than NumPy's
        sequential loop (within rounding); max/min/integer scans are exact."""
        kind, axis = scan.arg
        dtype, cast = scan.dtype, templates.CAST[scan.dtype.name]
        function = self.begin()
        n = self.size_names(scan.shape)[axis]
        idx = tuple("k0" if d == axis else "0" for d in range(scan.ndim))
        self.emit("t_ = cuda.threadIdx.x")
        self.emit(f"tot_ = cuda.shared.array(SCANB, {cast})")
        self.emit(f"ch_ = ({n} + SCANB - 1) // SCANB")
        self.emit("lo_ = t_ * ch_")
        self.emit(f"hi_ = min(lo_ + ch_, {n})")
        self.emit(f"sacc = {cast}(0)")
        self.block("for k0 in range(lo_, hi_):")                 # pass 1: chunk totals
        value = self.value(scan.inputs[0], idx, {})
        combined = expression(SCAN_COMBINE[kind], dtype, ["sacc", value], dtype)
        self.emit(f"sacc = {value} if k0 == lo_ else {combined}")
        self.depth -= 1
        self.emit("tot_[t_] = sacc")
        self.emit("cuda.syncthreads()")
        self.block("if t_ == 0:")                               # inclusive scan of totals
        self.block("for j_ in range(1, SCANB):")
        self.block(f"if j_ * ch_ < {n}:")
        totals = expression(SCAN_COMBINE[kind], dtype, ["tot_[j_ - 1]", "tot_[j_]"], dtype)
        self.emit(f"tot_[j_] = {totals}")
        self.depth -= 3
        self.emit("cuda.syncthreads()")
        self.emit(f"sacc = tot_[t_ - 1] if t_ > 0 else {cast}(0)")
        self.block("for k0 in range(lo_, hi_):")                 # pass 2: rescan, write
        cache: dict = {}
        value = self.value(scan.inputs[0], idx, cache)
        combined = expression(SCAN_COMBINE[kind], dtype, ["sacc", value], dtype)
        self.emit(f"sacc = {value} if k0 == 0 else {combined}")
        self.reduce_vars[id(scan)] = "sacc"
        self.write_outputs(self.k.outputs, idx, cache, scan.shape)
        self.launches.append(Launch(function, 1, SCAN_BLOCK))

    def gen_scatter(self) -> None:
        """out = base (one function); out[..., indices[k], ...] += updates[k] (another)."""
        root = self.k.root
        base, indices, updates = root.inputs
        axis, rank = root.arg, indices.ndim
        if root.op is Op.SCATTER:
            raise UnsupportedOnDevice("a scatter's last write wins: its updates run in order")
        if root.dtype not in ATOMIC_ADD_DTYPES:
            raise UnsupportedOnDevice(f"no atomic add for {root.dtype}")
        function = self.begin()
        sizes = self.size_names(root.shape)
        total = self.named("size", "nt_", _prod(root.shape))
        self.block(f"for f_ in range(cuda.grid(1), {total}, cuda.gridsize(1)):")
        idx = self.decompose("f_", sizes, "i")
        self.emit(f"{self.at('out0', idx)} = {self.value(base, idx, {})}")
        self.grid(function, _prod(root.shape))

        function = self.begin("_updates")
        usizes = self.size_names(updates.shape, "u")
        utotal = self.named("size", "nu_", _prod(updates.shape))
        self.block(f"for f_ in range(cuda.grid(1), {utotal}, cuda.gridsize(1)):")
        upd = self.decompose("f_", usizes, "k")
        cache: dict = {}
        position = self.value(indices, upd[axis:axis + rank], cache)
        row = self._assign(f"min(max({position}, 0), {base.shape[axis] - 1})")
        target = upd[:axis] + (row,) + upd[axis + rank:]
        value = self.value(updates, upd, cache)
        where = target[0] if len(target) == 1 else f"({', '.join(target)})"
        self.emit(f"cuda.atomic.add(out0, {where}, {value})")
        self.grid(function, _prod(updates.shape))

    def gen_reduce(self) -> None:
        k, policy = self.k, self.policy
        reds = k.reductions
        in_shape, axes = reds[0].inputs[0].shape, reds[0].arg[1]
        kept = [d for d in range(len(in_shape)) if d not in axes]
        n_out = _prod([in_shape[d] for d in kept])
        n_red = _prod([in_shape[d] for d in axes])
        split = 1
        if n_out < policy.split_blocks:
            split = max(1, min(-(-policy.split_blocks // max(n_out, 1)),
                               -(-n_red // (4 * policy.reduce_threads))))
        threads = min(policy.reduce_threads, _next_pow2(-(-n_red // split)))
        accs = [(red, _accumulator(red)) for red in reds]
        in_outputs = [o for o in k.outputs if k.region[id(o)] == "in"]
        out_outputs = [o for o in k.outputs if k.region[id(o)] != "in"]
        sizes = self.size_names(in_shape, "m")
        kept_sizes, red_sizes = [sizes[d] for d in kept], [sizes[d] for d in axes]
        no = self.named("size", "no_", n_out)
        nr = self.named("size", "nr_", n_red)
        ns = self.named("size", "ns_", split)
        parts = [self.named("scratch", f"part{i}", (n_out * split if split > 1 else 1,
                                                    acc[0]), red)
                 for i, (red, acc) in enumerate(accs)]

        def epilogue() -> None:
            for i, (red, (acc_dtype, _, _)) in enumerate(accs):
                self.reduce_vars[id(red)] = self._assign(
                    templates.convert(f"sh{i}[0]", np.dtype(acc_dtype), red.dtype))
            self.write_outputs(out_outputs, out_idx, {}, reds[0].shape)

        # pass 1: each block folds its share of one output element's reduced elements
        function = self.begin()
        self.shared_accumulators(accs)
        self.block(f"for b_ in range(cuda.blockIdx.x, {no} * {ns}, cuda.gridDim.x):")
        self.emit(f"o_ = b_ // {ns}")
        self.emit(f"s_ = b_ - o_ * {ns}")
        out_idx = self.decompose("o_", kept_sizes, "j")
        for i, (_, (_, init, _)) in enumerate(accs):
            self.emit(f"a{i} = {init}")
        self.block(f"for r_ in range(s_ * cuda.blockDim.x + t_, {nr}, "
                   f"{ns} * cuda.blockDim.x):")
        red_idx = iter(self.decompose("r_", red_sizes, "k"))
        kept_idx = iter(out_idx)
        idx = tuple(next(red_idx) if d in axes else next(kept_idx)
                    for d in range(len(in_shape)))
        self._accumulate(accs, idx, in_outputs, lambda i: f"a{i}")
        self.depth -= 1
        self.tree(accs)
        self.block("if t_ == 0:")
        self.block(f"if {ns} == 1:")
        epilogue()
        self.depth -= 1
        self.block("else:")
        for i in range(len(accs)):
            self.emit(f"{parts[i]}[b_] = sh{i}[0]")
        self.launches.append(Launch(function, max(1, min(n_out * split, policy.max_blocks)),
                                    threads))
        if split == 1:
            return
        # pass 2: one block per output element combines its partials, then the epilogue
        function = self.begin("_finish")
        self.shared_accumulators(accs)
        self.block(f"for o_ in range(cuda.blockIdx.x, {no}, cuda.gridDim.x):")
        out_idx = self.decompose("o_", kept_sizes, "j")
        for i, (_, (_, init, _)) in enumerate(accs):
            self.emit(f"a{i} = {init}")
        self.block(f"for s_ in range(t_, {ns}, cuda.blockDim.x):")
        for i, (_, (_, _, combine)) in enumerate(accs):
            self.emit(f"y_ = {parts[i]}[o_ * {ns} + s_]")
            self.emit(f"a{i} = {combine.format(a=f'a{i}', v='y_')}")
        self.depth -= 1
        self.tree(accs)
        self.block("if t_ == 0:")
        epilogue()
        self.launches.append(Launch(function, max(1, min(n_out, policy.max_blocks)),
                                    min(policy.reduce_threads, _next_pow2(split))))

    def shared_accumulators(self, accs) -> None:
        self.emit("t_ = cuda.threadIdx.x")
        for i, (_, (acc_dtype, _, _)) in enumerate(accs):
            self.emit(f"sh{i} = cuda.shared.array(BLOCK, {templates.CAST[acc_dtype]})")

    def tree(self, accs) -> None:
        """Store each thread's accumulator, then halve the block until sh[0] holds all."""
        for i in range(len(accs)):
            self.emit(f"sh{i}[t_] = a{i}")
        self.emit("cuda.syncthreads()")
        self.emit("w_ = cuda.blockDim.x // 2")
        self.block("while w_ > 0:")
        self.block("if t_ < w_:")
        for i, (_, (_, _, combine)) in enumerate(accs):
            self.emit(f"x_ = sh{i}[t_]")
            self.emit(f"y_ = sh{i}[t_ + w_]")
            self.emit(f"sh{i}[t_] = {combine.format(a='x_', v='y_')}")
        self.depth -= 1
        self.emit("cuda.syncthreads()")
        self.emit("w_ //= 2")
        self.depth -= 1

    def dot_rows(self, batch: int, m: int, n: int) -> int:
        """Outputs per thread along each edge: the largest power of two up to the policy's
        that still gives every SM two blocks (a register tile reuses each shared-memory load
        R times, but fewer, larger tiles leave SMs idle on small products)."""
        rows = self.policy.dot_rows
        while rows > 1:
            edge = rows * self.policy.tile
            if batch * -(-m // edge) * -(-n // edge) >= self.policy.min_dot_blocks:
                break
            rows //= 2
        return rows

    def gen_dot(self) -> None:
        """C[b, i, j] = sum_k A[b, i, k] B[b, k, j]: a block of TILE x TILE threads computes
        an (R*TILE) x (R*TILE) tile of C, each thread R x R outputs held in registers (rows
        ty + i*TILE, columns tx + j*TILE: neighbouring threads load and store neighbouring
        columns); A and B are read where they lie (batch, free and contracting dims
        decomposed per load), the epilogue runs on each output before its store."""
        k, tile = self.k, self.policy.tile
        dot = k.dot
        lb, rb, lc, rc = dot.arg
        lhs, rhs = dot.inputs
        lfree = [d for d in range(lhs.ndim) if d not in lb + lc]
        rfree = [d for d in range(rhs.ndim) if d not in rb + rc]
        a, b = self.input_name(lhs), self.input_name(rhs)
        lsizes, rsizes = self.size_names(lhs.shape, "l"), self.size_names(rhs.shape, "r")
        batch, m, n = (_prod([lhs.shape[d] for d in lb]), _prod([lhs.shape[d] for d in lfree]),
                       _prod([rhs.shape[d] for d in rfree]))
        nb = self.named("size", "nb_", batch)
        nm = self.named("size", "nm_", m)
        nn = self.named("size", "nn_", n)
        nk = self.named("size", "nk_", _prod([lhs.shape[d] for d in lc]))
        rows = self.dot_rows(batch, m, n)
        edge = rows * tile
        kind = dot.dtype.kind
        acc_dtype = dot.dtype if kind == "f" else np.dtype(
            {"i": np.int64, "u": np.uint64, "b": np.bool_}[kind])
        zero = "False" if kind == "b" else f"{templates.CAST[acc_dtype.name]}(0)"
        shared_zero = "False" if kind == "b" else f"{templates.CAST[dot.dtype.name]}(0)"
        cast = templates.CAST[dot.dtype.name]

        def operand_index(sizes, groups) -> tuple[str, ...]:
            """The operand's index from (flat var, its dims) pairs."""
            index = [""] * len(sizes)
            for flat, dims, prefix in groups:
                for d, name in zip(dims, self.decompose(flat, [sizes[d] for d in dims],
                                                        prefix)):
                    index[d] = name
            return tuple(index)

        def load(shared: str, slot: str, bound: str, buffer: str, index_of) -> None:
            self.block(f"if {bound}:")
            self.emit(f"{shared}[{slot}] = {self.at(buffer, index_of())}")
            self.depth -= 1
            self.block("else:")
            self.emit(f"{shared}[{slot}] = {shared_zero}")
            self.depth -= 1

        function = self.begin()
        self.emit("tx_ = cuda.threadIdx.x")
        self.emit("ty_ = cuda.threadIdx.y")
        self.emit(f"sa_ = cuda.shared.array(({edge}, TILE), {cast})")
        self.emit(f"sb_ = cuda.shared.array((TILE, {edge}), {cast})")
        self.emit(f"tm_ = ({nm} + {edge - 1}) // {edge}")
        self.emit(f"tn_ = ({nn} + {edge - 1}) // {edge}")
        self.block(f"for g_ in range(cuda.blockIdx.x, {nb} * tm_ * tn_, cuda.gridDim.x):")
        self.emit("bb_ = g_ // (tm_ * tn_)")
        self.emit("q_ = g_ - bb_ * (tm_ * tn_)")
        self.emit(f"r0_ = (q_ // tn_) * {edge} + ty_")
        self.emit(f"c0_ = (q_ % tn_) * {edge} + tx_")
        pairs = [(i, j) for i in range(rows) for j in range(rows)]
        for i, j in pairs:
            self.emit(f"acc{i}_{j} = {zero}")
        self.block(f"for k0_ in range(0, {nk}, TILE):")
        self.emit("ka_ = k0_ + tx_")
        for i in range(rows):
            self.emit(f"row_ = r0_ + {i * tile}")
            load("sa_", f"ty_ + {i * tile}, tx_", f"row_ < {nm} and ka_ < {nk}", a,
                 lambda: operand_index(lsizes, [("bb_", lb, "lb"), ("row_", lfree, "lm"),
                                                ("ka_", lc, "lk")]))
        self.emit("kb_ = k0_ + ty_")
        for j in range(rows):
            self.emit(f"col_ = c0_ + {j * tile}")
            load("sb_", f"ty_, tx_ + {j * tile}", f"kb_ < {nk} and col_ < {nn}", b,
                 lambda: operand_index(rsizes, [("bb_", rb, "rb"), ("kb_", rc, "rk"),
                                                ("col_", rfree, "rn")]))
        self.emit("cuda.syncthreads()")
        for kk in range(tile):       # unrolled: shared-memory addresses become constants
            for i in range(rows):
                self.emit(f"a{i}_ = sa_[ty_ + {i * tile}, {kk}]")
            for j in range(rows):
                self.emit(f"b{j}_ = sb_[{kk}, tx_ + {j * tile}]")
            for i, j in pairs:
                product = f"(a{i}_ & b{j}_)" if kind == "b" else f"a{i}_ * b{j}_"
                self.emit(f"acc{i}_{j} = acc{i}_{j} {'|' if kind == 'b' else '+'} {product}")
        self.emit("cuda.syncthreads()")
        self.depth -= 1
        for i, j in pairs:
            self.emit(f"row_ = r0_ + {i * tile}")
            self.emit(f"col_ = c0_ + {j * tile}")
            self.block(f"if row_ < {nm} and col_ < {nn}:")
            out_index = (list(self.decompose("bb_", [lsizes[d] for d in lb], "ob"))
                         + list(self.decompose("row_", [lsizes[d] for d in lfree], "om"))
                         + list(self.decompose("col_", [rsizes[d] for d in rfree], "on")))
            self.dot_var = self._assign(templates.convert(f"acc{i}_{j}", acc_dtype,
                                                          dot.dtype))
            self.write_outputs(k.outputs, tuple(out_index), {}, dot.shape)
            self.depth -= 1
        tiles = batch * -(-m // edge) * -(-n // edge)
        if tiles:
            self.launches.append(Launch(function, max(1, min(tiles, self.policy.max_blocks)),
                                        (tile, tile)))

    # -- source ------------------------------------------------------------------------
    def render(self) -> str:
        k = self.k
        locs = sorted({n.loc for n in k.nodes if n.loc})
        params = ", ".join(a.name for a in self.args)
        bodies = []
        for name, lines in self.functions:
            bodies += ["", "@cuda.jit", f"def {name}({params}):", "\n".join(lines)]
        body = "\n".join(bodies)
        launches = "; ".join(f"{l.function}[{l.blocks}, {l.threads}]" for l in self.launches)
        header = [
            f"# xlanb kernel {k.name} ({k.kind}, cuda): {', '.join(dict.fromkeys(k.ops))}",
            f"# user lines: {', '.join(locs) if locs else 'n/a'}",
            f"# launch: {launches or 'none (empty)'}",
            "import math",
            "import numba",
            "import numpy as np",
            "from numba import cuda",
            "",
            "_SIM = bool(numba.config.ENABLE_CUDASIM)  # simulator: NumPy math (NaN, no raise)",
        ]
        used = sorted(name for name in DEVICE_MATH if re.search(rf"\b{name}\(", body))
        if used:
            header.append("if _SIM:")
            header += [f"    {name} = {DEVICE_MATH[name][0]}" for name in used]
            header.append("else:")
            if any(DEVICE_MATH[name][1].startswith("libdevice") for name in used):
                header.append("    from numba.cuda import libdevice")
            header += [f"    {name} = {DEVICE_MATH[name][1]}" for name in used]
        header += [line for line in templates.module_constants().splitlines()
                   if re.search(rf"\b{line.split(' = ')[0]}\b", body)]
        if "BLOCK" in body:
            header.append(f"BLOCK = {self.policy.reduce_threads}  # largest reduction block")
        if "SCANB" in body:
            header.append(f"SCANB = {SCAN_BLOCK}  # threads of a one-row scan")
        if "TILE" in body:
            header.append(f"TILE = {self.policy.tile}  # dot tile edge")
        if re.search(r"\bsplitmix64\(", body):
            header.append(SPLITMIX64)
        return "\n".join(header) + "\n" + body + "\n"


SPLITMIX64 = f'''
_GAMMA = np.uint64({int(SPLITMIX_GAMMA)})
_MUL1 = np.uint64({int(SPLITMIX_MUL1)})
_MUL2 = np.uint64({int(SPLITMIX_MUL2)})


@cuda.jit(device=True)
def splitmix64(key, counter):
    """rng-bits element `counter` of stream `key` (twin of codegen/rng.py)."""
    z = np.uint64(key) + (np.uint64(counter) + np.uint64(1)) * _GAMMA
    z = (z ^ (z >> np.uint64(30))) * _MUL1
    z = (z ^ (z >> np.uint64(27))) * _MUL2
    return z ^ (z >> np.uint64(31))'''


def generate(kernel: Kernel, policy: LaunchPolicy | None = None) -> GeneratedCudaKernel:
    """Source, arguments and launches of one fused kernel (not library kernels); raises
    UnsupportedOnDevice for a kernel that must run on the host."""
    return _CudaCodegen(kernel, policy or launch_policy()).generate()


def signature(gen: GeneratedCudaKernel) -> tuple:
    """Numba types of a generated kernel's arguments (for eager compiles and PTX)."""
    types = []
    for arg in gen.args:
        if arg.kind == "size":
            types.append(numba.types.int64)
        elif arg.kind == "const":
            types.append(numba.from_dtype(arg.node.dtype))
        elif arg.kind == "scratch":
            types.append(numba.types.Array(numba.from_dtype(np.dtype(arg.value[1])), 1, "C"))
        else:
            types.append(numba.types.Array(numba.from_dtype(arg.node.dtype),
                                           max(arg.node.ndim, 1), "C"))
    return tuple(types)


def load_functions(gen: GeneratedCudaKernel) -> dict[str, object]:
    """The module's `cuda.jit` kernels by name (the source is imported from a file, like
    the CPU's, so tracebacks and the simulator show its lines)."""
    from . import cache
    module = cache.load_module(gen.source)
    return {name: getattr(module, name) for name in gen.functions}


def compile_ptx(gen: GeneratedCudaKernel, cc: tuple[int, int] = (9, 0)) -> dict[str, str]:
    """PTX per function of a kernel (needs NVVM, not the simulator)."""
    from numba import cuda
    if is_simulator():
        raise RuntimeError("compile_ptx does not work under the CUDA simulator "
                           "(NUMBA_ENABLE_CUDASIM=1)")
    functions = load_functions(gen)
    sig = signature(gen)
    return {name: cuda.compile_ptx(fn.py_func, sig, cc=cc)[0]
            for name, fn in functions.items()}
