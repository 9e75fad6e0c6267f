"""The CUDA target: compile a plan's kernels with numba.cuda and drive them on the device.

    graph --run_pipeline--> optimized --plan_fusion--> kernels --codegen.cuda--> sources
          --numba.cuda.jit--> kernels --CudaDriverBuilder--> CudaExecutable

The same pass pipeline and fusion plan as the CPU target.  Arguments are copied host ->
device once, the kernels run in order on the device (intermediates stay there, in blocks
shared by values whose lifetimes do not overlap, as on the CPU), and outputs are copied
device -> host once at the end.  Library kernels (concatenate, pad, arg-reduce, all-reduce,
and library calls: sorts, LAPACK, FFTs) run on the host between device kernels: their operands come to the host and their results
go back only where a device kernel reads them, and those copies are counted apart.  The
driver is generated straight-line Python, kept in dumps:

    def run(p0, p1):
        d = _device()                                      # this thread's device buffers
        _h2d(d[0], p0)                                     # argument 0 -> device
        _h2d(d[1], p1)
        _k3(d[0], d[1], d[2], 4, 1000)                     # fusion.0
        h1 = _d2h(d[2], (1000,))                           # output -> host
        return (h1,)

`_k3` is the kernel with its launch configuration (`fusion_0[4, 256]`), made once when
the driver is built; its launch parameters are packed on its first call (cuda_launch.py).
"""
from __future__ import annotations

import inspect
import threading
import time

import numpy as np

from .buffers import BufferAssignment, assign_buffers
from .codegen import cuda as cuda_codegen
from .cuda_launch import PackedLaunch
from .dump import ModuleDumper
from .executable import (CompiledKernel, Executable, all_reduce_call, library_call,
                         library_results_call)
from .ir import Graph, Node, Op, type_str
from .ir.interpret import evaluate_node, is_token
from .passes import cost_model
from .passes.fusion import FusionPlan, Kernel
from .report import CompileReport


def compile_cuda(graph: Graph, options, report: CompileReport) -> "CudaExecutable":
    """`compile(graph, target="cuda")`: the CPU target's pipeline and plan, CUDA kernels."""
    from .compiler import finish, optimize_and_plan
    cuda_codegen.check_available()
    dumper, optimized, plan = optimize_and_plan(graph, options, report, row_fusion=False)

    policy = cuda_codegen.launch_policy()
    generated, on_host = {}, {}
    with report.phase("codegen", "codegen"):
        for kernel in plan.kernels:
            if kernel.kind == "library":
                continue
            try:
                generated[kernel.name] = cuda_codegen.generate(kernel, policy)
            except cuda_codegen.UnsupportedOnDevice as why:
                on_host[kernel.name] = f"runs on the host: {why}"
    with report.phase("buffer-assignment", "pass"):
        buffers = assign_buffers(plan, {})
    functions, kernels = _compile_kernels(plan, generated, on_host, report)
    with report.phase("driver", "codegen"):
        builder = CudaDriverBuilder(plan, buffers, generated, functions)
        source = builder.build()
    executable = CudaExecutable(graph, optimized, plan, kernels, source, buffers, report,
                                builder)
    return finish(executable, dumper, _dump, generated)


def _compile_kernels(plan: FusionPlan, generated, on_host, report):
    """Load every generated module; on a GPU, compile each function for its signature now
    (under the simulator there is nothing to compile)."""
    functions, kernels = {}, []
    for kernel in plan.kernels:
        gen = generated.get(kernel.name)
        seconds = 0.0
        if gen is not None:
            start = time.perf_counter()
            functions[kernel.name] = cuda_codegen.load_functions(gen)
            if not cuda_codegen.is_simulator():
                signature = cuda_codegen.signature(gen)
                for fn in functions[kernel.name].values():
                    fn.compile(signature)
            seconds = time.perf_counter() - start
            report.add(f"numba.cuda {kernel.name}", "compile", start, seconds)
        if gen is not None:
            source = gen.source
        elif kernel.kind == "library":
            source = f"# library call on the host: {kernel.root.op.value}"
        else:
            source = f"# {kernel.name} {on_host[kernel.name]} (reference interpreter)"
        launches = [f"launch {l.function}[{l.blocks}, {l.threads}]"
                    for l in (gen.launches if gen else [])]
        kernels.append(CompiledKernel(
            kernel.name, kernel.kind, [n.op.value for n in kernel.nodes], source,
            kernel.predicted_seconds(), seconds,
            list(kernel.decisions) + launches + ([on_host[kernel.name]]
                                                 if kernel.name in on_host else []),
            sum(cost_model.node_flops(n) for n in kernel.nodes),
            kernel.read_bytes() + kernel.write_bytes(),
            sorted({n.loc for n in kernel.nodes if n.loc})))
    return functions, kernels


def host_kernel(kernel: Kernel):
    """A fused kernel the device code generator does not emit, run node by node on the
    host with the reference interpreter: inputs in `kernel.inputs` order -> outputs."""
    def run(*inputs):
        values = {id(node): value for node, value in zip(kernel.inputs, inputs)}
        for node in kernel.nodes:
            operands = [values[id(i)] if id(i) in values else evaluate_node(i, [])
                        for i in node.inputs]
            values[id(node)] = evaluate_node(node, operands)
        return tuple(values[id(o)] for o in kernel.outputs)
    run.__name__ = f"host_{kernel.name.replace('.', '_')}"
    return run


class _DeviceState(threading.local):
    buffers: tuple | None = None


class CudaDriverBuilder:
    """Writes the driver: where each value lives (host, device) is tracked while the
    kernels are emitted in order, and a copy is emitted only where a value is needed on
    the other side."""

    def __init__(self, plan: FusionPlan, buffers: BufferAssignment, generated, functions):
        self.plan, self.buffers = plan, buffers
        self.generated, self.functions = generated, functions
        # NumPy's own `empty`, even where a front end wraps the module's (inspect.unwrap)
        self.globals: dict[str, object] = {"np": np, "_empty": inspect.unwrap(np.empty)}
        self.lines: list[str] = []
        self.host: dict[int, str] = {}       # id(node) -> host expression
        self.device: dict[int, str] = {}     # id(node) -> device expression
        self.fresh: set[int] = set()         # host values allocated per call (returnable)
        self.slots: list[tuple] = []         # (block or None, shape, dtype) of d[i]
        self.counter = 0
        self.copies = {"host_to_device_copies": 0, "host_to_device_bytes": 0,
                       "device_to_host_copies": 0, "device_to_host_bytes": 0,
                       "library_copies": 0, "library_copy_bytes": 0}
        self.constant_bytes = 0
        self.host_kernels: list[str] = []
        self.checked_communicators: set[int] = set()

    def program_identity(self) -> tuple[str, str]:
        """(fingerprint, readable signature) replicas compare before their first collective."""
        graph = self.plan.graph
        signature = ", ".join(type_str(p.dtype, p.shape) for p in graph.params)
        return graph.fingerprint(), f"{graph.name}({signature})"

    # -- names and places --------------------------------------------------------------
    def bind(self, value, prefix: str) -> str:
        name = f"_{prefix}{len(self.globals)}"
        self.globals[name] = value
        return name

    def fresh_name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def slot(self, node: Node) -> str:
        """The device buffer a value is written to: its pooled block, or its own."""
        storage = self.buffers.storage.get(id(node))
        block = storage.block if storage is not None and storage.kind == "pooled" else None
        self.slots.append((block, tuple(node.shape) or (1,), node.dtype))
        return f"d[{len(self.slots) - 1}]"

    def count(self, direction: str, node: Node, library: bool) -> None:
        self.copies[f"{direction}_copies"] += 1
        self.copies[f"{direction}_bytes"] += node.nbytes
        if library:
            self.copies["library_copies"] += 1
            self.copies["library_copy_bytes"] += node.nbytes

    def on_device(self, node: Node) -> str:
        if id(node) in self.device:
            return self.device[id(node)]
        if node.op is Op.CONSTANT:                   # uploaded once, at compile time
            from numba import cuda
            value = np.ascontiguousarray(np.asarray(node.arg, node.dtype).reshape(
                node.shape or (1,)))
            self.constant_bytes += value.nbytes
            self.device[id(node)] = self.bind(cuda.to_device(value), "dconst")
            return self.device[id(node)]
        source = self.on_host(node)
        target = self.slot(node)
        self.lines.append(f"_h2d({target}, {source})"
                          + ("   # argument -> device" if node.op is Op.PARAMETER else ""))
        self.count("host_to_device", node, library=node.op is not Op.PARAMETER)
        self.device[id(node)] = target
        return target

    def on_host(self, node: Node, output: bool = False) -> str:
        if id(node) in self.host:
            return self.host[id(node)]
        if node.op is Op.CONSTANT:
            self.host[id(node)] = self.bind(np.array(node.arg, node.dtype, copy=True),
                                            "const")
            return self.host[id(node)]
        if id(node) not in self.device:
            raise AssertionError(f"{node!r} read before it is written")
        name = self.fresh_name("h")
        self.lines.append(f"{name} = _d2h({self.device[id(node)]}, {node.shape!r})"
                          + ("   # output -> host" if output else ""))
        self.count("device_to_host", node, library=not output)
        self.host[id(node)] = name
        self.fresh.add(id(node))
        return name

    # -- the driver --------------------------------------------------------------------
    def build(self) -> str:
        graph = self.plan.graph
        params = [f"p{i}" for i in range(len(graph.params))]
        for p, name in zip(graph.params, params):
            self.host[id(p)] = name
        self.lines.append("d = _device()")
        for kernel in self.plan.kernels:
            self.emit_kernel(kernel)
        outs = []
        for out in graph.outputs:
            value = self.on_host(out, output=True)
            if id(out) not in self.fresh:
                value = f"np.array({value}, copy=True)"
            outs.append(value)
        body = "\n".join("    " + line for line in self.lines)
        source = (f"def run({', '.join(params)}):\n{body}\n"
                  f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})\n")
        return source

    def emit_kernel(self, kernel: Kernel) -> None:
        gen = self.generated.get(kernel.name)
        if gen is None:
            self.emit_host_kernel(kernel)
            return
        call_args = []
        for arg in gen.args:
            if arg.kind == "in":
                call_args.append(self.on_device(arg.node))
            elif arg.kind == "out":
                self.device[id(arg.node)] = self.slot(arg.node)
                call_args.append(self.device[id(arg.node)])
            elif arg.kind == "scratch":
                size, dtype = arg.value
                self.slots.append((None, (size,), np.dtype(dtype)))
                call_args.append(f"d[{len(self.slots) - 1}]")
            elif arg.kind == "size":
                call_args.append(str(arg.value))
            else:
                call_args.append(self.bind(arg.node.dtype.type(arg.node.arg[()]), "c"))
        for launch in gen.launches:
            fn = self.bind(PackedLaunch(self.functions[kernel.name][launch.function],
                                        launch), "k")
            self.lines.append(f"{fn}({', '.join(call_args)})   # {kernel.name}")

    def emit_host_kernel(self, kernel: Kernel) -> None:
        node = kernel.root
        if kernel.kind == "library" and node.op is Op.RESHAPE:       # a view, no copy
            source = node.inputs[0]
            if id(source) in self.device:
                name = self.fresh_name("v")
                self.lines.append(f"{name} = {self.device[id(source)]}.reshape("
                                  f"{tuple(node.shape) or (1,)!r})")
                self.device[id(node)] = name
            if id(source) in self.host or id(source) not in self.device:
                name = self.fresh_name("v")
                self.lines.append(f"{name} = {self.on_host(source)}.reshape({node.shape!r})")
                self.host[id(node)] = name
            return
        self.host_kernels.append(kernel.name)
        inputs = ", ".join(self.on_host(i) for i in kernel.inputs)
        if kernel.kind == "library" and is_token(node):    # a library call's results
            out = self.fresh_name("t")
            fn = self.bind(library_results_call(node), "lib")
            operands = ", ".join(self.on_host(i) for i in node.inputs)
            self.lines.append(f"{out} = {fn}({operands})   # {kernel.name}")
            self.host[id(node)] = out
            return
        if kernel.kind == "library":
            out = self.fresh_name("h")
            self.lines.append(f"{out} = _empty({node.shape!r}, np.{node.dtype.name})")
            if node.op is Op.ALL_REDUCE:
                fn = self.bind(all_reduce_call(node, *self.program_identity(),
                                               self.checked_communicators), "allreduce")
            else:
                fn = self.bind(library_call(node), "lib")
            operands = ", ".join(self.on_host(i) for i in node.inputs)
            self.lines.append(f"{fn}({out}, {operands})   # {kernel.name}")
            self.host[id(node)] = out
            self.fresh.add(id(node))
            return
        names = [self.fresh_name("h") for _ in kernel.outputs]
        fn = self.bind(host_kernel(kernel), "host")
        self.lines.append(f"{', '.join(names)}, = {fn}({inputs})   # {kernel.name}")
        for out, name in zip(kernel.outputs, names):
            self.host[id(out)] = name
            self.fresh.add(id(out))

    @property
    def device_bytes(self) -> int:
        dedicated = sum(int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
                        for block, shape, dtype in self.slots if block is None)
        return self.buffers.pooled_bytes + dedicated + self.constant_bytes


class CudaExecutable(Executable):
    """A program compiled for the CUDA target; `transfers` counts the copies made by
    calls so far (the report's figures are per call)."""

    def __init__(self, graph: Graph, optimized: Graph, plan: FusionPlan,
                 kernels: list[CompiledKernel], driver_source: str,
                 buffers: BufferAssignment, report, builder: CudaDriverBuilder):
        self.builder = builder
        self.transfers = {"host_to_device_copies": 0, "host_to_device_bytes": 0,
                          "device_to_host_copies": 0, "device_to_host_bytes": 0}
        driver = self._make_driver(driver_source)
        super().__init__(graph, optimized, plan, kernels, driver, driver_source, buffers,
                         report)

    def _make_driver(self, source: str):
        from numba import cuda
        builder, transfers = self.builder, self.transfers
        state = _DeviceState()
        block_bytes = list(builder.buffers.block_bytes)
        slots = list(builder.slots)

        def device():
            ready = state.buffers
            if ready is None:
                blocks = [cuda.device_array(n, np.uint8) for n in block_bytes]
                ready = state.buffers = tuple(
                    cuda.device_array(shape, dtype) if block is None else
                    blocks[block].view(dtype)[:int(np.prod(shape, dtype=np.int64))]
                    .reshape(shape)
                    for block, shape, dtype in slots)
            return ready

        def h2d(target, host):
            host = np.ascontiguousarray(host, dtype=target.dtype).reshape(target.shape)
            target.copy_to_device(host)
            transfers["host_to_device_copies"] += 1
            transfers["host_to_device_bytes"] += host.nbytes

        def d2h(source, shape):
            host = source.copy_to_host().reshape(shape)
            transfers["device_to_host_copies"] += 1
            transfers["device_to_host_bytes"] += host.nbytes
            return host

        env = dict(builder.globals, _device=device, _h2d=h2d, _d2h=d2h)
        code = compile(source, f"<xlanb cuda driver {builder.plan.graph.name}>", "exec")
        exec(code, env)
        return env["run"]

    def device_seconds(self, args, repeats: int = 20) -> float:
        """Median seconds of the program's device work alone, with the arguments already on
        the device and the outputs left there (what CuPy or jax.jit on device arrays time);
        host library kernels and their copies are included."""
        import statistics
        from numba import cuda
        self.run(args)                                  # stages the arguments on the device
        lines = [line for line in self.driver_source.splitlines()
                 if not line.rstrip().endswith(("# argument -> device", "# output -> host"))
                 and not line.lstrip().startswith("return ")]
        env = dict(self.driver.__globals__)
        exec(compile("\n".join(lines) + "\n", "<xlanb cuda device-only driver>", "exec"), env)
        device_only = env["run"]
        times = []
        for _ in range(repeats + 1):
            cuda.synchronize()
            start = time.perf_counter()
            device_only(*args)
            cuda.synchronize()
            times.append(time.perf_counter() - start)
        return statistics.median(times[1:])

    def memory_analysis(self) -> dict:
        figures = super().memory_analysis()
        figures.update(self.builder.copies)
        figures.update({"device_bytes": self.builder.device_bytes,
                        "constant_upload_bytes": self.builder.constant_bytes,
                        "host_kernels": list(self.builder.host_kernels)})
        return figures


def _dump(dumper: ModuleDumper, settings, executable: CudaExecutable, generated) -> None:
    from .compiler import dump_program
    dump_program(dumper, settings, executable)
    if not settings.xla_dump_kernels:
        return
    for name, gen in generated.items():
        dumper.write(f"{gen.function}.py", gen.source)
        write_ptx(dumper, gen)


def write_ptx(dumper: ModuleDumper, gen) -> None:
    """`<kernel function>.ptx` per function (sm_90), or `.ptx.txt` saying why not."""
    if cuda_codegen.is_simulator():
        why = ("not generated: the CUDA simulator (NUMBA_ENABLE_CUDASIM=1) runs kernels as "
               "Python and has no NVVM; unset it on a machine with the CUDA toolkit (or "
               "the nvidia-cuda-nvcc / nvidia-cuda-nvrtc wheels) to get PTX")
        for function in gen.functions:
            dumper.write(f"{function}.ptx.txt", f"PTX for {function} {why}\n")
        return
    try:
        listings = cuda_codegen.compile_ptx(gen)
    except Exception as error:                   # NVVM missing or unusable: say so
        for function in gen.functions:
            dumper.write(f"{function}.ptx.txt", f"PTX for {function} not generated: NVVM "
                         f"is not available ({type(error).__name__}: {error})\n")
        return
    for function, ptx in listings.items():
        dumper.write(f"{function}.ptx", ptx)


def lower_to_ptx(graph: Graph, options=None, cc: tuple[int, int] = (9, 0)) -> dict[str, str]:
    """PTX of every device function the CUDA target would generate for `graph`, with the
    GPU launch policy: needs NVVM but no GPU (and not the simulator)."""
    from .compiler import CompileOptions, optimize_and_plan
    options = options or CompileOptions()
    _, _, plan = optimize_and_plan(graph, options, CompileReport(graph.name, "cuda"),
                                  row_fusion=False)
    listings = {}
    for kernel in plan.kernels:
        if kernel.kind == "library":
            continue
        try:
            gen = cuda_codegen.generate(kernel, cuda_codegen.LaunchPolicy.for_gpu())
        except cuda_codegen.UnsupportedOnDevice:
            continue
        listings.update(cuda_codegen.compile_ptx(gen, cc))
    return listings
