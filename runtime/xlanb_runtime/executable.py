"""Executables: the driver that calls a program's kernels, and what a compiled program shows.

The driver is generated Python (kept in dumps): one straight-line function per program that
binds buffers and calls each kernel once, so the per-call cost is a handful of attribute
loads and Numba dispatches, not an interpreter loop.  Intermediates live in per-thread
arenas allocated on the first call of each thread and reused after (no page faults per
step); outputs are fresh arrays the caller owns.

    def run(p0, p1, p2):
        s = _scratch()                      # this thread's typed views of its arena
        b1 = np.empty((), np.float32)
        b2 = s[0]
        _k1(p0, p1, p2, b2, 10000000)       # fusion.0
        _k2(b2, b1.reshape(1), 10000000)    # reduce_fusion.0
        return (b1,)
"""
from __future__ import annotations

import collections
import inspect
import re
import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .buffers import BufferAssignment, storage_root
from .codegen import cache
from .codegen.cpu import GeneratedKernel
from . import flags
from .collectives import current_communicator
from .ir import Graph, Node, Op, type_str
from .ir.graph import trip_count
from .ir.interpret import evaluate_node, interpret, is_token
from .passes.fusion import FusionPlan, Kernel
from .passes.numpy_ufuncs import FASTER_IN_NUMPY, in_place_base, ufunc_operands


@dataclass
class CompiledKernel:
    """One kernel of a compiled program, as users see it (`compiled.kernels`)."""
    name: str
    kind: str
    ops: list[str]
    source: str
    predicted_seconds: float
    compile_seconds: float = 0.0
    decisions: list[str] = field(default_factory=list)
    flops: float = 0.0
    bytes_accessed: int = 0
    locations: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"CompiledKernel({self.name}, {self.kind}, ops={self.ops})"


# An intermediate matmul result up to this size is NumPy's own allocation, not an arena
# block (the allocator recycles it hot; arenas are for large buffers' page faults).
SMALL_MATMUL_BYTES = 64 << 10
# np.dot calls the BLAS routine np.matmul calls without the ufunc machinery around it:
# 4x4 f64 0.98 vs 1.48 us, 64x64 ~0.3 us less.  Bit for bit the same result for 2-D and
# 1-D operands of one BLAS dtype when each is C- or F-contiguous (48000 shape, layout and
# dtype cases checked); a strided operand can differ (dot copies it, matmul passes its
# strides to gemv), and other dtypes loop in each function's own order.  But np.dot
# zero-fills its result before BLAS writes it (NumPy's cblas_matrixproduct), one more pass
# over the output that matmul skips: above this many bytes of result matmul is faster
# (2000x64 @ 64x1000 f32 2.31 vs 2.00 ms, 200x32x200 f64 50 vs 44 us, 100x100x100 f64
# 26.9 vs 25.8 us; 64x64x64 f64, 32 KiB: a tie), below it dot's lighter call wins.
DOT_RESULT_BYTES = 32 << 10
BLAS_DTYPES = frozenset(map(np.dtype, ("float32", "float64", "complex64", "complex128")))
CONTIGUOUS_STORAGE = ("param", "donated", "const", "fresh", "pooled")   # params: prologue


class _Arenas(threading.local):
    blocks: list | None = None


def all_reduce_call(node: Node, fingerprint: str, description: str,
                    checked: set[int]) -> Callable:
    """An all-reduce through this thread's communicator (identity with none).  The first
    time a communicator runs this program (`checked`: shared by the program's all-reduces),
    the replicas compare the program first."""
    kind = node.arg

    def run(out, x):
        np.copyto(out, x)
        comm = current_communicator()
        if comm is None:
            return
        if id(comm) not in checked:
            comm.check_program(fingerprint, description)
            checked.add(id(comm))
        if flags.current_tracing():
            start = time.perf_counter()
            comm.all_reduce(out, kind)
            from . import trace_events
            trace_events.add(f"all-reduce {kind}", "collective", start,
                             time.perf_counter() - start, bytes=int(out.nbytes))
        else:
            comm.all_reduce(out, kind)
    return run


class NonFiniteError(FloatingPointError):
    """`--xla_debug_nans`: a kernel produced NaN or Inf from finite inputs."""


def nan_checker(plan: FusionPlan) -> Callable:
    """The `--xla_debug_nans` hook: after a kernel, find the op that first went non-finite
    by replaying the kernel's nodes in the interpreter on the same inputs."""
    kernels = {k.name: k for k in plan.kernels}

    def check(name: str, outputs, inputs) -> None:
        if all(np.isfinite(o).all() for o in outputs if o.dtype.kind == "f"):
            return
        kernel = kernels[name]
        values = {id(node): value for node, value in zip(kernel.inputs, inputs)}
        if any(v.dtype.kind == "f" and not np.isfinite(v).all() for v in inputs):
            return                                   # came in from an argument
        for node in kernel.nodes:
            operands = [values[id(i)] if id(i) in values else evaluate_node(i, [])
                        for i in node.inputs]
            result = evaluate_node(node, operands)
            values[id(node)] = result
            if result.dtype.kind == "f" and not np.isfinite(result).all():
                where = f" at {node.loc}" if node.loc else ""
                raise NonFiniteError(
                    f"`{node.op.value}`{where} produced NaN/Inf in kernel {name} from finite "
                    f"inputs (--xla_debug_nans); check its operands' range, e.g. log of 0 "
                    "or overflow in exp")
        raise NonFiniteError(f"kernel {name} produced NaN/Inf from finite inputs")
    return check


def loop_runner(body: "Executable", trips: int, carried: int, dynamic: bool = False
                ) -> Callable:
    """Runs a loop node: the body's compiled program `trips` times (`dynamic`: as many as
    its last input says), the carried values of one trip feeding the next; returns the
    body's outputs after the last trip."""
    run = body.driver
    owned = donated_params(body)

    def loop(*inputs):
        state, invariant = inputs[:carried], inputs[carried:]
        state = tuple(np.array(x, copy=True) if i in owned else x   # written in place
                      for i, x in enumerate(state))
        outputs = state
        for _ in range(trip_count(inputs[-1]) if dynamic else trips):
            outputs = run(*state, *invariant)
            state = outputs[:carried]
        return outputs
    loop.donated = owned
    return loop


def donated_params(body: "Executable") -> frozenset[int]:
    """Indices of the body's parameters its kernels write in place (buffers.py): the loop
    runner hands it copies of their first values, never the caller's arrays."""
    storage = body.buffers.storage
    return frozenset(i for i, p in enumerate(body.plan.graph.params)
                     if storage.get(id(p)) and storage[id(p)].kind == "donated")


def _library_runner(node: Node, compiled: bool) -> Callable:
    """ir.library's runner of the call; `compiled`: with a compiled implementation in
    place of NumPy's function where codegen has one giving NumPy's exact results
    (codegen/histogram.py), else NumPy's own (the NumPy tier: no Numba compile there)."""
    from .ir.library import runner
    name, params = node.arg
    fast = None
    if compiled:
        from .codegen.histogram import compiled_runner
        fast = compiled_runner(name, dict(params), [i.dtype for i in node.inputs])
    return runner(name, dict(params), fast)


def library_results_call(node: Node, compiled: bool = True) -> Callable:
    """A library call with several results: NumPy's function on the inputs (or its
    compiled twin, `_library_runner`), returning its arrays (a tuple that the call's
    `library-result` nodes index)."""
    return _library_runner(node, compiled)


def bound_check(name: str, params) -> Callable:
    """A run-time check (`xlanb.check_*`) bound to its params, which it keeps as
    `check_call` (a program record stores those and binds them again: program_cache)."""
    from .ir.library import FUNCTIONS
    check = FUNCTIONS[name].bind(dict(params))
    check.check_call = (name, tuple(params))
    return check


def library_value_call(node: Node, compiled: bool = True) -> Callable:
    """A library call with one result, returned (a fresh C-ordered array of the node's
    type): for values the program returns, which need no buffer of their own."""
    name = node.arg[0]
    if name.startswith("xlanb.check_"):     # its own u8 token, fresh: run it as it is
        return bound_check(name, node.arg[1])
    call, dtype, shape = _library_runner(node, compiled), node.dtype, node.shape

    def run(*inputs):
        value = call(*inputs)[0]
        if value.dtype != dtype or value.shape != shape:     # NumPy's rule disagreed
            raise AssertionError(f"{name} returned {value.dtype}{list(value.shape)}, its "
                                 f"rule says {dtype}{list(shape)}")
        return value
    run.__name__ = f"library_{name.rsplit('.', 1)[-1]}"
    return run


def library_call(node: Node) -> Callable:
    """A library kernel: the reference op on its input arrays, written into `out` (a
    library call: NumPy's function itself, its one result copied into `out`)."""
    if node.op is Op.LIBRARY_CALL:
        from .ir.library import FUNCTIONS
        name, params = node.arg
        if FUNCTIONS[name].writes_out:             # NumPy writes into the buffer itself
            call = FUNCTIONS[name].bind(dict(params))

            def run_into(out, *inputs):
                call(*inputs, out=out)
            run_into.__name__ = f"library_{name.rsplit('.', 1)[-1]}"
            return run_into
        value = library_value_call(node)

        def run_library(out, *inputs):
            out[...] = value(*inputs)
        run_library.__name__ = value.__name__
        return run_library

    if node.op is Op.ARGREDUCE:                     # a compiled pass (codegen/argreduce.py)
        from .codegen.argreduce import compiled_argreduce
        compiled = compiled_argreduce(node)
        if compiled is not None:
            return compiled

    def run(out, *inputs):
        out[...] = evaluate_node(node, inputs)
    run.__name__ = f"library_{node.op.name.lower()}"
    return run


class DriverBuilder:
    """Writes the straight-line driver source for a fusion plan."""

    def __init__(self, plan: FusionPlan, buffers: BufferAssignment,
                 generated: dict[str, GeneratedKernel], dispatchers: dict[str, Callable],
                 debug_nans: bool = False, for_numba: bool = False):
        self.plan, self.buffers = plan, buffers
        # the subset of Python Numba compiles (codegen/compiled_loop.py): no arena
        self.for_numba = for_numba
        self.generated, self.dispatchers = generated, dispatchers
        self.names: dict[int, str] = {}
        # NumPy's own `empty`, even where a front end wraps the module's (inspect.unwrap)
        self.globals: dict[str, object] = {"np": np, "_empty": inspect.unwrap(np.empty)}
        self.params: list[str] = []     # p0, p1, ...: the program's parameters
        self.prologue: list[str] = []   # per parameter: the line making it C-contiguous
        self.lines: list[str] = []      # the kernel calls
        self.outs: list[str] = []       # the returned expressions
        self.buffer_count = 0
        self.views: list[tuple[int, tuple, np.dtype]] = []   # (block, shape, dtype)
        self.checked_communicators: set[int] = set()
        self.debug_nans = debug_nans

    def program_identity(self) -> tuple[str, str]:
        """(fingerprint, readable signature) replicas compare before their first collective."""
        graph = self.plan.graph
        signature = ", ".join(type_str(p.dtype, p.shape) for p in graph.params)
        return graph.fingerprint(), f"{graph.name}({signature})"

    def new_buffer_name(self, node: Node) -> str:
        if id(node) in self.names:
            raise AssertionError(f"{node!r} is written by two kernels")
        self.buffer_count += 1
        self.names[id(node)] = f"b{self.buffer_count}"
        return self.names[id(node)]

    def bind(self, value, prefix: str) -> str:
        name = f"_{prefix}{len(self.globals)}"
        self.globals[name] = value
        return name

    def var(self, node: Node) -> str:
        if id(node) not in self.names:
            if node.op is Op.CONSTANT:
                value = np.array(node.arg, copy=True)
                if self.for_numba and node.ndim == 0:
                    value = value.reshape(1)
                self.names[id(node)] = self.bind(value, "const")
            else:
                raise AssertionError(f"{node!r} read before it is written")
        return self.names[id(node)]

    def kernel_operand(self, node: Node) -> str:
        """A buffer as a Numba kernel takes it: rank 0 becomes shape (1,)."""
        if node.ndim == 0 and not self.for_numba:
            return f"{self.var(node)}.reshape(1)"
        return self.var(node)

    def buffer_shape(self, node: Node) -> tuple:
        """A value's shape in the driver.  Inside Numba rank 0 is shape (1,) throughout,
        as kernels take it (codegen/compiled_loop.py): a `.reshape(1)` per kernel operand
        cost Numba 40 ms each to compile (npbench syr2k's loop: 107 of them, 4 s)."""
        return (1,) if self.for_numba and node.ndim == 0 else tuple(node.shape)

    def allocate(self, node: Node) -> None:
        storage = self.buffers.storage[id(node)]
        if storage.kind == "update":            # written over its base's buffer
            self.names[id(node)] = self.var(storage.base)
            return
        name = self.new_buffer_name(node)
        if storage.kind == "pooled":
            view = self.scratch_view(storage.block, self.buffer_shape(node), node.dtype)
            self.lines.append(f"{name} = {view}")
        else:
            self.lines.append(f"{name} = _empty({self.buffer_shape(node)!r}, "
                              f"np.{node.dtype.name})")

    def build(self) -> tuple[str, dict]:
        outs = self.emit_program()
        body = "\n".join("    " + line for line in self.prologue + self.lines)
        source = (f"def run({', '.join(self.params)}):\n{body}\n"
                  f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})\n")
        return source, self.globals

    def build_loop(self, carried: int) -> tuple[str, dict]:
        """`loop(trips, params)`: the program run `trips` times, its first `carried`
        outputs becoming its first `carried` params; returns the last trip's outputs.  No
        prologue: the compiled loop takes C-contiguous arrays (codegen/compiled_loop.py).
        The trip count is an argument, so loops that differ only in it share one
        compiled function."""
        outs = self.emit_program()
        params = self.params
        state = ", ".join(params[:carried]) + ("," if carried == 1 else "")
        next_state = ", ".join(f"_next[{i}]" for i in range(carried)) + \
            ("," if carried == 1 else "")
        body = "\n".join("        " + line for line in self.lines)
        source = (f"def loop({', '.join(['trips'] + params)}):\n"
                  f"    for _trip in range(trips):\n{body}\n"
                  f"        _next = ({', '.join(outs)}{',' if len(outs) == 1 else ''})\n"
                  f"        {state} = {next_state}\n"
                  f"    return _next\n")
        return source, self.globals

    def emit_program(self) -> list[str]:
        """The params, their prologue and the kernels' lines; returns the outputs."""
        graph = self.plan.graph
        self.params = [f"p{i}" for i in range(len(graph.params))]
        self.prologue = []
        for p, name in zip(graph.params, self.params):
            self.names[id(p)] = name
            self.prologue.append(f"if not {name}.flags.c_contiguous: "
                                 f"{name} = np.ascontiguousarray({name})")
        for kernel in self.plan.kernels:
            self.emit_kernel(kernel)
        if self.views:              # the arena's typed views (not looked up when unused)
            self.lines.insert(0, "s = _scratch()")
        outs = []
        for out in graph.outputs:
            value = self.var(out)
            root = storage_root(out, self.buffers)
            if self.buffers.storage.get(id(root), None) is None or \
                    self.buffers.storage[id(root)].kind in ("param", "const", "pooled"):
                value = f"{value}.copy()" if self.for_numba else \
                    f"np.array({value}, copy=True)"
            outs.append(value)
        self.outs = outs
        return outs

    def emit_kernel(self, kernel: Kernel) -> None:
        if kernel.kind == "library":
            node = kernel.root
            if node.op is Op.LOOP:                  # the body's program, trips times
                runner = self.bind(self.dispatchers[kernel.name], "loop")
                operands = ", ".join(self.var(i) for i in node.inputs)
                self.lines.append(f"{self.new_buffer_name(node)} = {runner}({operands})"
                                  f"   # {kernel.name}")
                return
            if node.op is Op.LIBRARY_CALL and is_token(node):     # several results
                fn = self.bind(library_results_call(node), "lib")
                operands = ", ".join(self.var(i) for i in node.inputs)
                self.lines.append(f"{self.new_buffer_name(node)} = {fn}({operands})"
                                  f"   # {kernel.name}")
                return
            if node.op in (Op.LOOP_RESULT, Op.LIBRARY_RESULT):
                self.lines.append(f"{self.new_buffer_name(node)} = "
                                  f"{self.var(node.inputs[0])}[{node.arg}]")
                return
            if node.op is Op.TRANSPOSE:                # a returned view (fusion.py)
                self.lines.append(f"{self.new_buffer_name(node)} = "
                                  f"{self.var(node.inputs[0])}.transpose({node.arg!r})"
                                  f"   # {kernel.name}")
                return
            if node.op is Op.RESHAPE:
                source = self.var(node.inputs[0])
                self.lines.append(f"{self.new_buffer_name(node)} = "
                                  f"{source}.reshape({self.buffer_shape(node)!r})")
                return
            base = in_place_base(kernel)
            if base is not None:                     # NumPy's pow over the kernel's output
                exponent = self.bind(node.dtype.type(node.inputs[1].inputs[0].arg), "c")
                self.names[id(node)] = self.var(base)
                self.lines.append(f"np.power({self.var(base)}, {exponent}, "
                                  f"out={self.var(base)})   # {kernel.name}")
                self.check_nans(kernel)
                return
            operands = ufunc_operands(kernel, "library")
            if operands is not None:
                self.emit_ufunc(kernel, operands)
                return
            if node.op is Op.LIBRARY_CALL and \
                    self.buffers.storage[id(node)].kind in ("fresh", "loop"):   # NumPy's own
                fn = self.bind(library_value_call(node), "lib")
                operands = ", ".join(self.var(i) for i in node.inputs)
                self.lines.append(f"{self.new_buffer_name(node)} = {fn}({operands})"
                                  f"   # {kernel.name}")
                self.check_nans(kernel)
                return
            self.allocate(node)
            if node.op is Op.ALL_REDUCE:
                fn = self.bind(all_reduce_call(node, *self.program_identity(),
                                               self.checked_communicators), "allreduce")
            else:
                fn = self.bind(library_call(node), "lib")
            operands = ", ".join(self.var(i) for i in node.inputs)
            self.lines.append(f"{fn}({self.var(node)}, {operands})   # {kernel.name}")
            self.check_nans(kernel)
            return
        gen = self.generated[kernel.name]
        if self.returns_matmul(gen):
            return
        for out in kernel.outputs:
            self.allocate(out)
        if gen.matmul is not None:
            lhs, rhs, out_shape = self.matmul_call(gen)
            out = self.dot_accumulator(gen)
            if self.accumulator_shape(gen) != out_shape:     # a no-op reshape costs
                out = f"{out}.reshape({out_shape!r})"         # a call: small dots feel it
            fn = self.matmul_function(gen, gen.dot_acc[0] != "output" or
                                      self.is_contiguous(gen.dot_acc[1]))
            self.lines.append(f"{fn}({lhs}, {rhs}, out={out})   # {kernel.name}")
        if gen.has_function:
            call_args = [self.call_arg(arg, gen) for arg in gen.args]
            fn = self.bind(self.dispatchers[kernel.name], "k")
            self.lines.append(f"{fn}({', '.join(call_args)})   # {kernel.name}")
        self.check_nans(kernel)

    def matmul_call(self, gen: GeneratedKernel) -> tuple[str, str, tuple]:
        """(lhs, rhs, result shape) of a dot kernel's np.matmul call."""
        lhs, rhs, out_shape = gen.matmul
        flat = int(np.prod(out_shape[:-2])) == 1   # 2-D matmul: NumPy's fastest BLAS path
        lhs_shape = rhs_shape = None
        if flat:
            out_shape = tuple(out_shape[-2:])
            # a matrix times a vector as 1-D operands: NumPy calls BLAS gemv (a gemm with
            # one column is a few % slower on a bandwidth-bound 2000x2000 matrix)
            if out_shape[1] == 1 and out_shape[0] > 1:
                rhs_shape, out_shape = (rhs.matrix[0],), (out_shape[0],)
            elif out_shape[0] == 1 and out_shape[1] > 1:
                lhs_shape, out_shape = (lhs.matrix[1],), (out_shape[1],)
        return (self.matmul_operand(lhs, flat, lhs_shape),
                self.matmul_operand(rhs, flat, rhs_shape), tuple(out_shape))

    def matmul_function(self, gen: GeneratedKernel, contiguous_out: bool) -> str:
        """"np.dot" where it gives np.matmul's result bit for bit (BLAS_DTYPES) and its
        result is small (DOT_RESULT_BYTES), faster; else "np.matmul".  `contiguous_out`:
        the out= buffer, if any, is C-contiguous."""
        lhs, rhs, out_shape = gen.matmul
        dtype = gen.kernel.dot.dtype
        if not contiguous_out or dtype not in BLAS_DTYPES or \
                int(np.prod(out_shape[:-2])) != 1 or \
                int(np.prod(out_shape)) * dtype.itemsize > DOT_RESULT_BYTES:
            return "np.matmul"
        for view in (lhs, rhs):
            copied_or_2d = view.copy or view.perm is None or view.node.ndim == 2
            if view.node.dtype != dtype or not copied_or_2d or \
                    not self.is_contiguous(view.node):
                return "np.matmul"
        return "np.dot"

    def is_contiguous(self, node: Node) -> bool:
        """Whether `node`'s buffer is C-contiguous in the driver (parameters are, after the
        prologue; a library call's own result may be any view)."""
        storage = self.buffers.storage.get(id(storage_root(node, self.buffers)))
        return storage is not None and storage.kind in CONTIGUOUS_STORAGE

    def emit_ufunc(self, kernel: Kernel, operands: list[Node]) -> None:
        """A kernel of one function NumPy runs faster (passes/numpy_ufuncs.py): its ufunc,
        allocating a returned result itself, else writing into the buffer."""
        node = kernel.root
        ufunc = self.bind(FASTER_IN_NUMPY[(node.op, node.dtype)], "ufunc")
        args = ", ".join(self.bind(o.dtype.type(o.arg[()] if isinstance(o.arg, np.ndarray)
                                                  else o.arg), "c")
                         if o.op is Op.CONSTANT else self.var(o) for o in operands)
        if self.buffers.storage[id(node)].kind == "fresh":
            self.lines.append(f"{self.new_buffer_name(node)} = {ufunc}({args})"
                              f"   # {kernel.name}")
        else:
            self.allocate(node)
            self.lines.append(f"{ufunc}({args}, out={self.var(node)})   # {kernel.name}")
        self.check_nans(kernel)

    def returns_matmul(self, gen: GeneratedKernel) -> bool:
        """A bare contraction the program returns, or a small intermediate one, of its
        operands' dtype and in NumPy's result shape, as NumPy's own `b = np.matmul(x, y)`:
        allocating inside matmul costs less than `_empty` and `out=`, and a small block
        from NumPy's allocator less than the thread's arena (64x64 A@B@C, hot: 15.41 ->
        15.13 us for the returned product, 12.21 -> 12.01 for the intermediate too)."""
        kernel = gen.kernel
        dot = kernel.dot
        if gen.matmul is None or gen.has_function or kernel.outputs != [dot]:
            return False
        storage = self.buffers.storage[id(dot)].kind
        if not (storage == "fresh" or storage == "pooled" and
                     dot.nbytes <= SMALL_MATMUL_BYTES) or \
                not gen.matmul[0].node.dtype == gen.matmul[1].node.dtype == dot.dtype:
            return False
        lhs, rhs, out_shape = self.matmul_call(gen)
        if out_shape != tuple(dot.shape):
            return False
        fn = self.matmul_function(gen, True)
        self.lines.append(f"{self.new_buffer_name(dot)} = {fn}({lhs}, {rhs})"
                          f"   # {kernel.name}")
        self.check_nans(kernel)
        return True

    def check_nans(self, kernel: Kernel) -> None:
        if self.debug_nans:
            outs = ", ".join(self.var(o) for o in kernel.outputs)
            ins = ", ".join(self.var(i) for i in kernel.inputs)
            self.lines.append(f"_check_nans({kernel.name!r}, [{outs}], [{ins}])")

    def matmul_operand(self, view, flat: bool, vector: tuple | None = None) -> str:
        """A dot operand as a (*batch, rows, cols) view for np.matmul, (rows, cols) when
        `flat`, or the 1-D `vector` shape of a (k, 1) or (1, k) operand; copies only what
        BLAS could not read in place."""
        src = self.var(view.node)
        current = tuple(view.node.shape)
        if view.perm is not None:
            src = f"{src}.transpose({view.perm!r})"
            current = tuple(current[p] for p in view.perm)
        shape = vector or tuple(view.shape[-2:] if flat else view.shape)
        if current != shape:
            src = f"{src}.reshape({shape!r})"
        if view.copy:
            src = f"np.ascontiguousarray({src})"
        if view.transposed and not vector:
            src += ".T" if flat else ".swapaxes(-1, -2)"
        return src

    def call_arg(self, arg, gen: GeneratedKernel) -> str:
        if arg.kind in ("in", "out"):
            return self.kernel_operand(arg.node)
        if arg.kind == "in_t":                      # a narrow dot's rhs, as (n, k) rows
            return f"np.ascontiguousarray({self.kernel_operand(arg.node)}.T)"
        if arg.kind == "size":          # inside Numba a bare 400 is Literal[int](400): the
            # kernel would compile again for it, and that entry breaks its cache manifest
            return f"np.int64({arg.value})" if self.for_numba else str(arg.value)
        if arg.kind == "const":
            return self.bind(arg.node.dtype.type(arg.node.arg[()]), "c")
        if arg.kind == "scalar":                    # a 0-d input's value
            return f"{self.var(arg.node)}[{'0' if self.for_numba else '()'}]"
        acc = self.dot_accumulator(gen)           # accnd; rank 0 becomes shape (1,)
        return f"{acc}.reshape(1)" if gen.kernel.dot.ndim == 0 else acc

    @staticmethod
    def accumulator_shape(gen: GeneratedKernel) -> tuple:
        where = gen.dot_acc
        return tuple(where[1].shape) if where[0] == "output" else tuple(where[1])

    def dot_accumulator(self, gen: GeneratedKernel) -> str:
        where = gen.dot_acc
        if where[0] == "output":
            return self.var(where[1])
        _, shape, dtype = where
        return self.scratch_view(self.buffers.scratch[gen.name], shape, dtype)

    def scratch_view(self, block: int, shape, dtype) -> str:
        """`s[i]`: a typed view of an arena block, made once per thread (not per call).
        Inside Numba a fresh array."""
        if self.for_numba:
            return f"_empty({tuple(shape)!r}, np.{np.dtype(dtype).name})"
        self.views.append((block, tuple(shape), np.dtype(dtype)))
        return f"s[{len(self.views) - 1}]"


@dataclass(frozen=True)
class InlineDriver:
    """The driver as parts a caller writes into its own function (the front end's call
    guard, xlanb/mono_call.py): the guard and the kernel calls then run in one Python frame.
    Each call through two frames cost about 20 us more than NumPy's own `A @ x` on a
    2000x2000 GEMV (cold caches after 32 MB streamed: every frame, `flags` object and
    thread-local lookup misses)."""
    params: tuple[str, ...]      # the names the body reads its parameters by
    prologue: tuple[str, ...]    # per parameter: the line making it C-contiguous
    body: str                    # the kernel calls, indented 4 (timed when traced)
    outs: tuple[str, ...]        # the returned expressions
    env: dict                    # the driver's globals (kernels, constants, arenas)


@dataclass
class Driver:
    """A built driver: the function, its source, the names it binds (`env`, before `run`
    is defined in it) and its arena: block sizes in bytes and (block, shape, dtype) views."""
    run: Callable
    source: str
    env: dict
    block_bytes: list[int]
    views: list[tuple[int, tuple, np.dtype]]
    inline: InlineDriver | None = None       # its parts, for the call guard to inline


def build_driver(plan: FusionPlan, buffers: BufferAssignment,
                 generated: dict[str, GeneratedKernel],
                 dispatchers: dict[str, Callable], debug_nans: bool = False,
                 traced: bool = False) -> Driver:
    """The driver of a plan, with its parts for inlining; `traced` records every kernel
    call as a trace event (--xla_trace_to)."""
    builder = DriverBuilder(plan, buffers, generated, dispatchers, debug_nans)
    source, env = builder.build()
    env["_check_nans"] = nan_checker(plan)
    body = "".join(f"    {line}\n" for line in builder.lines)
    if traced:
        from . import trace_events
        env.update(_perf=time.perf_counter, _trace=trace_events.kernel_call)
        source = instrument(source, "_trace({name!r}, _t)")
        body = instrument(body, "_trace({name!r}, _t)") if body else body
    bound = dict(env)
    run = make_driver(plan.graph.name, source, env, list(buffers.block_bytes),
                      list(builder.views))
    inline = InlineDriver(tuple(builder.params), tuple(builder.prologue), body,
                          tuple(builder.outs), env)
    return Driver(run, source, bound, list(buffers.block_bytes), list(builder.views),
                  inline)


def make_driver(name: str, source: str, env: dict, block_bytes: list[int],
                views: list[tuple[int, tuple, np.dtype]]) -> Callable:
    """The driver function of `source`, run in `env` (which gets `_scratch`: this thread's
    arena views, allocated on its first call)."""
    arenas = _Arenas()

    def scratch():
        ready = arenas.blocks
        if ready is None:
            blocks = [np.empty(n, np.uint8) for n in block_bytes]
            ready = arenas.blocks = tuple(
                blocks[block].view(dtype)[:int(np.prod(shape, dtype=np.int64))].reshape(shape)
                for block, shape, dtype in views)
        return ready

    env["_scratch"] = scratch
    code = cache.compile_cached(source, f"<xlanb driver {name}>")
    exec(code, env)
    return env["run"]


_KERNEL_LINE = re.compile(r"^(\s+)(?!#).*   # (\S+)$")


def instrument(source: str, record: str = "_timings[{name!r}].append(_perf() - _t)") -> str:
    """The driver with each kernel's work timed: `record` runs after it (default: append
    the seconds to `_timings[name]`; traces use `_trace({name!r}, _t)`).  A kernel spanning
    adjacent lines (a GEMM call and its epilogue) is timed once, over all of them."""
    lines, open_name = [], None
    for line in source.splitlines():
        match = _KERNEL_LINE.match(line)
        name = match.group(2) if match else None
        if open_name is not None and name != open_name:
            lines.append(open_indent + record.format(name=open_name))
            open_name = None
        if match and open_name is None:
            open_indent, open_name = match.group(1), name
            lines.append(f"{open_indent}_t = _perf()")
        lines.append(line)
    if open_name is not None:
        lines.append(open_indent + record.format(name=open_name))
    return "\n".join(lines) + "\n"


# Ops whose value a program may return as a view of another buffer (a transpose of a
# kernel's output, fusion.py), in that buffer's layout rather than C order
RETURNED_VIEW_OPS = frozenset({Op.TRANSPOSE, Op.SLICE, Op.RESHAPE, Op.BROADCAST})


def returned_views(optimized: Graph) -> frozenset[int]:
    """Indices of the outputs a program of this optimized graph may return as views."""
    return frozenset(i for i, o in enumerate(optimized.outputs) if o.op in RETURNED_VIEW_OPS)


class Executable:
    """A compiled program: `run(flat_args)` plus everything the report shows about it."""

    def __init__(self, graph: Graph, optimized: Graph, plan: FusionPlan,
                 kernels: list[CompiledKernel], driver: Callable, driver_source: str,
                 buffers: BufferAssignment, report):
        self.graph, self.optimized, self.plan = graph, optimized, plan
        self.kernels, self.driver, self.driver_source = kernels, driver, driver_source
        self.buffers, self.report = buffers, report
        # why nothing was compiled (over the compile budget): the program runs op by op,
        # and a front end holding the user's function can run that with NumPy instead
        self.over_budget: str = ""
        self.inline: InlineDriver | None = None     # the driver's parts (build_driver)
        # outputs it may return as views, in another layout than C (front end: boundary.py)
        self.returned_views = returned_views(optimized)

    @property
    def timeline(self):
        """The report, for adding phases: unlike `report`, never makes a cached program
        compile what only the report shows (program_cache.CachedExecutable)."""
        return self.report

    def run(self, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        return self.driver(*args)

    __call__ = run

    def profile(self, args: Sequence[np.ndarray], repeats: int = 5) -> dict:
        """Measured seconds (medians over `repeats` calls): per kernel, the whole fused
        program, and op by op in the interpreter (total and per IR op kind).  Also stored
        in `report.timings` for the report views."""
        env = dict(self.driver.__globals__)
        timings: dict[str, list[float]] = collections.defaultdict(list)
        env.update(_perf=time.perf_counter, _timings=timings)
        exec(compile(instrument(self.driver_source), "<xlanb profiled driver>", "exec"), env)
        totals, unfused, per_op = [], [], collections.defaultdict(list)
        env["run"](*args)                                         # warm caches and arenas
        for _ in range(repeats):
            start = time.perf_counter()
            env["run"](*args)
            totals.append(time.perf_counter() - start)
        for _ in range(max(1, repeats // 2)):
            op_times: dict[str, float] = collections.defaultdict(float)
            start = time.perf_counter()
            interpret(self.graph, args, timings=op_times)
            unfused.append(time.perf_counter() - start)
            for op, seconds in op_times.items():
                per_op[op].append(seconds)
        result = {
            "fused_seconds": statistics.median(totals),
            "unfused_seconds": statistics.median(unfused),
            "kernels": {name: statistics.median(ts[1:] or ts) for name, ts in timings.items()},
            "unfused_ops": {op: statistics.median(ts) for op, ts in per_op.items()},
        }
        self.report.timings = result
        return result

    def as_text(self) -> str:
        from .ir.printer import node_names, print_graph
        names = node_names(self.optimized)
        lines = []
        for k in self.plan.kernels:
            members = ", ".join(names[id(n)] for n in k.nodes)
            reads = ", ".join(names.get(id(n), "?") for n in k.inputs)
            writes = ", ".join(names[id(n)] for n in k.outputs)
            lines.append(f"# {k.name} ({k.kind}) = {{{members}}} reads ({reads}) "
                         f"writes ({writes})")
        return "\n".join(lines) + "\n" + print_graph(self.optimized)

    def cost_analysis(self) -> dict:
        flops = sum(k.flops for k in self.kernels)
        bytes_accessed = sum(k.bytes_accessed for k in self.kernels)
        return {"flops": flops, "bytes accessed": bytes_accessed,
                "predicted seconds": sum(k.predicted_seconds for k in self.kernels),
                "kernels": {k.name: {"predicted seconds": k.predicted_seconds,
                                     "flops": k.flops, "bytes accessed": k.bytes_accessed}
                            for k in self.kernels}}

    def memory_analysis(self) -> dict:
        from .buffers import unfused_peak_bytes
        graph = self.graph
        return {"temp_bytes_unfused": unfused_peak_bytes(graph),
                "temp_bytes_fused": self.buffers.pooled_bytes,
                "argument_bytes": sum(p.nbytes for p in graph.params),
                "output_bytes": sum(o.nbytes for o in graph.outputs)}
