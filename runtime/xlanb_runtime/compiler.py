"""`compile(graph)`: the pass pipeline, fusion, buffer assignment, codegen and Numba compile.

    graph --run_pipeline--> optimized --plan_fusion--> kernels --generate--> sources
          --numba--> dispatchers --build_driver--> Executable (+ CompileReport)

Each step is recorded in the report's timeline under its stable name.  Compiled kernels are
memoized per process by source and cached on disk by Numba, so a second shape of the same
function (same source, sizes are arguments) costs only tracing and planning.
"""
from __future__ import annotations

import builtins
import collections
import contextvars
import dataclasses
import math
import time
import warnings
from dataclasses import dataclass

import numba
import numpy as np

from . import flags, parallel_compile, program_cache, trace_events
from .buffers import assign_buffers
from .dump import ModuleDumper, fusion_dot
from .codegen import cache
from .codegen.compiled_loop import compiled_loop
from .codegen.cpu import generate, should_parallelize
from .executable import CompiledKernel, Executable, build_driver, loop_runner
from .ir import Graph, Op, interpret, print_graph
from .passes import LOWERING_PIPELINE, OPTIMIZE_PIPELINE, run_pipeline, timed
from .passes import cost_model
from .passes.fusion import FusionPlan, plan_fusion
from .passes.check_merge import merge_moving_checks
from .passes.loop_reroll import reroll_loops
from .passes.loop_to_matmul import loops_to_matmul
from .passes.numpy_ufuncs import numpy_ufunc_kernels
from .report import CompileReport


@dataclass(frozen=True)
class CompileOptions:
    fusion: bool = True
    disabled_passes: tuple[str, ...] = ()
    pipeline: tuple[str, ...] = OPTIMIZE_PIPELINE
    # (param, output) pairs: the caller copies output into param after each call (the
    # front end's write-backs); where safe the program writes it there itself (buffers.py)
    write_into: tuple[tuple[int, int], ...] = ()


_dispatchers: dict[str, object] = {}


def _numba_type(dtype: np.dtype, ndim: int | None):
    scalar = numba.from_dtype(np.dtype(dtype))
    return scalar if ndim is None else numba.types.Array(scalar, max(ndim, 1), "C")


def kernel_signature(gen) -> tuple:
    types = []
    for arg in gen.args:
        if arg.kind == "size":
            types.append(numba.types.int64)
        elif arg.kind in ("const", "scalar"):
            types.append(_numba_type(arg.node.dtype, None))
        else:
            types.append(_numba_type(arg.node.dtype, arg.node.ndim))
    return tuple(types)


def compile_kernel(gen, wait: bool = True) -> tuple[object, float]:
    """The Numba dispatcher for a generated kernel, compiled for its signature."""
    start = time.perf_counter()
    dispatcher = load_kernel(cache.canonical_kernel(gen.source, gen.function),
                             kernel_signature(gen), wait)
    return dispatcher, time.perf_counter() - start


def load_kernel(source: str, signature: tuple, wait: bool = True):
    """The dispatcher of a canonical kernel module (cache.canonical_kernel), compiled for
    `signature`: memoized here, loaded from or compiled into the disk cache (`wait=False`:
    cache.EntryBusy if another process holds its entry)."""
    key = source + repr(signature)
    dispatcher = _dispatchers.get(key)
    if dispatcher is None:
        dispatcher = cache.compile_canonical(source, signature, wait)
        _dispatchers[key] = dispatcher
    return dispatcher


def compile(graph: Graph, target: str = "cpu", options: CompileOptions | None = None,
            report: CompileReport | None = None) -> Executable:
    options = options or CompileOptions()
    with flags.active(flags.from_environment()):
        return _compile(graph, target, options,
                        report or CompileReport(graph.name, target))


def kernel_threads(settings) -> int:
    """Threads a parallel kernel may use: `--xla_cpu_threads`, at most Numba's pool."""
    pool = numba.config.NUMBA_NUM_THREADS
    return min(settings.xla_cpu_threads, pool) if settings.xla_cpu_threads > 0 else pool


def _compile(graph: Graph, target: str, options: CompileOptions,
             report: CompileReport) -> Executable:
    if target == "cuda":
        from .cuda_executable import compile_cuda
        return compile_cuda(graph, options, report)
    settings = flags.current()
    key = None
    if not (settings.xla_dump_to or settings.xla_trace_to):   # those need the whole compile
        key = program_cache.program_key(graph, target, options, settings)
        cached = _from_record(key, graph, target, options, report)
        if cached is not None:
            return cached
    return _compile_graph(graph, target, options, report, key)


def _from_record(key: str, graph: Graph, target: str, options: CompileOptions,
                 report: CompileReport):
    """The program from its record in the disk cache (program_cache.py), or None."""
    start = time.perf_counter()
    record = program_cache.load(key)
    if record is None:
        return None
    settings = flags.current()

    def materialize() -> Executable:             # what only the report shows
        with flags.active(settings):
            return _compile_graph(graph, target, options, CompileReport(graph.name, target))

    executable = program_cache.executable_from(record, graph, report, load_kernel,
                                               materialize)
    report.add("program cache", "compile", start, time.perf_counter() - start,
               kernels=sum(1 for b in record["bindings"].values() if b[0] == "kernel"))
    return executable


# When the outermost compile of this thread began: loop bodies compile as programs of their
# own, inside it, and share its time budget (--xla_max_compile_seconds).
_COMPILE_BEGAN: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "xlanb_compile_began", default=None)


def _compile_graph(graph: Graph, target: str, options: CompileOptions,
                   report: CompileReport, key: str | None = None, donated: int = 0
                   ) -> Executable:
    """The whole compile of `graph`; with a program `key`, its record is written too.
    `donated`: leading parameters its kernels may write in place (a loop body's carried
    state: the loop runner owns those arrays)."""
    if _COMPILE_BEGAN.get() is not None:
        return _compile_program(graph, target, options, report, key, donated)
    token = _COMPILE_BEGAN.set(time.perf_counter())
    try:
        return _compile_program(graph, target, options, report, key, donated)
    finally:
        _COMPILE_BEGAN.reset(token)


def _compile_program(graph: Graph, target: str, options: CompileOptions,
                     report: CompileReport, key: str | None, donated: int) -> Executable:
    settings = flags.current()
    if key is not None:                          # not a report's on-demand compile
        parallel_compile.prepare(graph)
    graph = _reroll(graph, options, report)
    if 0 < settings.xla_max_ops < len(graph.nodes):
        return _too_many_ops(graph, report, settings.xla_max_ops)
    dumper, optimized, plan = optimize_and_plan(graph, options, report)
    if options.fusion:
        threads = kernel_threads(settings)
        plan = numpy_ufunc_kernels(plan, lambda k: should_parallelize(k, threads))
    try:
        loops = _compile_loop_bodies(plan, target, options, report,
                                     settings.xla_max_compile_seconds)
    except _CompileTimeExceeded as exceeded:
        return finish(_over_budget(graph, optimized, plan, report, str(exceeded)), dumper,
                      lambda d, s, e, g: dump_program(d, s, e), {})
    count = sum(1 for k in plan.kernels if k.kind != "library") + \
        sum(len(body.kernels) for body in {id(b): b for _, b in loops.values()}.values())
    if 0 < settings.xla_max_kernels < count:
        note = (f"{count} kernels exceed the compile budget of {settings.xla_max_kernels} "
                "(XLANB_FLAGS=--xla_max_kernels=N)")
        return finish(_over_budget(graph, optimized, plan, report, note), dumper,
                      lambda d, s, e, g: dump_program(d, s, e), {})

    with report.phase("codegen", "codegen"):
        generated = {k.name: generate(k, kernel_threads(settings))
                     for k in plan.kernels if k.kind != "library"}
    scratch = {name: gen.dot_acc[1:] for name, gen in generated.items()
               if gen.dot_acc and gen.dot_acc[0] == "scratch"}
    with report.phase("buffer-assignment", "pass"):
        buffers = assign_buffers(plan, scratch, donated,
                                 () if settings.xla_debug_nans else options.write_into)
    with report.phase("codegen", "codegen"):
        for kernel in plan.kernels:          # stores into an argument, under its own name,
            name = kernel.name               # or a region update staged as buffers decided
            if name in buffers.written_into or name in buffers.staged:
                generated[name] = generate(kernel, kernel_threads(settings),
                                           buffers.written_into.get(name),
                                           buffers.staged.get(name))
    shared = parallel_compile.fan_out([
        (cache.canonical_kernel(gen.source, gen.function), kernel_signature(gen))
        for gen in generated.values() if gen.has_function]) is not None
    try:
        dispatchers, kernels = _compile_kernels(plan, generated, report,
                                                settings.xla_max_compile_seconds, shared)
        for name, (runner, body) in loops.items():
            dispatchers[name] = runner
            kernels.extend(dataclasses.replace(k, name=f"{name}/{k.name}")
                           for k in body.kernels)
    except _CompileTimeExceeded as exceeded:
        return finish(_over_budget(graph, optimized, plan, report, str(exceeded)), dumper,
                      lambda d, s, e, g: dump_program(d, s, e), {})
    with report.phase("driver", "codegen"):
        driver = build_driver(plan, buffers, generated, dispatchers,
                              debug_nans=settings.xla_debug_nans,
                              traced=bool(settings.xla_trace_to))
    executable = Executable(graph, optimized, plan, kernels, driver.run, driver.source,
                            buffers, report)
    executable.generated, executable.dispatchers = generated, dispatchers
    executable.inline = driver.inline
    if key is not None:
        program_cache.store(key, driver, {
            id(dispatchers[name]): (cache.canonical_kernel(gen.source, gen.function),
                                    kernel_signature(gen))
            for name, gen in generated.items() if gen.has_function}, executable.returned_views)
    return finish(executable, dumper, _dump, generated)


def _reroll(graph: Graph, options: CompileOptions, report: CompileReport) -> Graph:
    """`loop-to-matmul`, then `loop-reroll` (CPU): unrolled copies of a Python loop's body
    become one product, or a loop node.  First, per-trip range checks of one array's
    elements become one check (check_merge.py), so they do not keep every copy live."""
    graph = merge_moving_checks(graph)
    if "loop-to-matmul" not in options.disabled_passes:
        start, before, decisions = time.perf_counter(), len(graph.nodes), []
        rewritten = loops_to_matmul(graph, decisions)
        report.add("loop-to-matmul", "pass", start, time.perf_counter() - start,
                   nodes_before=before, nodes_after=len(rewritten.nodes),
                   changed=rewritten is not graph, decisions=decisions)
        graph = rewritten
    if "loop-reroll" in options.disabled_passes:
        return graph
    start = time.perf_counter()
    before = len(graph.nodes)
    rolled = reroll_loops(graph)
    report.add("loop-reroll", "pass", start, time.perf_counter() - start,
               nodes_before=before, nodes_after=len(rolled.nodes), changed=rolled is not graph)
    return rolled


def _too_many_ops(graph: Graph, report: CompileReport, budget: int) -> Executable:
    """A traced program too big to optimize in reasonable time runs op by op as traced.
    The passes and the fusion planner cost tens of microseconds per op each: a Python loop
    over array elements that did not roll (its trips differ in a shape: `A[i, :i]`) traces
    into tens of thousands of ops, and planning them took minutes before the kernel budget
    could refuse them."""
    note = (f"{len(graph.nodes)} traced ops exceed the budget of {budget} ops, counted after "
            "rolling loops (XLANB_FLAGS=--xla_max_ops=N)")
    plan = FusionPlan(graph, [], {})            # nothing planned: planning is what costs
    return finish(_over_budget(graph, graph, plan, report, note), None,
                  lambda d, s, e, g: dump_program(d, s, e), {})


def _compile_loop_bodies(plan, target: str, options: CompileOptions,
                         report: CompileReport, max_seconds: float = 0.0) -> dict:
    """Each loop kernel's body compiled as a program of its own: kernel name -> (runner,
    body executable).  Its phases join this report's timeline under the loop's name.
    Loops with one body (by program_key, and the same carried state) share its
    executable: seidel_2d's 21 loops have a few bodies.  The bodies share the whole
    compile's time budget: past it, or predicted past it by the pace of the distinct
    bodies compiled so far, or when a body itself goes over, `_CompileTimeExceeded`
    (npbench syrk's 70 loops, a row width each, compiled for 5 minutes before)."""
    loops, compiled = {}, {}
    options = dataclasses.replace(options, write_into=())   # the caller's, not a body's
    bodies = [k for k in plan.kernels if k.kind == "library" and k.root.op is Op.LOOP]
    settings = flags.current()
    keys = [(program_cache.program_key(k.root.arg.body, target, options, settings),
             k.root.arg.carried) for k in bodies]
    began = time.perf_counter()
    for kernel, key in zip(bodies, keys):
        spec = kernel.root.arg
        body = compiled.get(key)
        if body is None:
            # paced from the second body on: the first carries the process's one-time
            # Numba costs (lenet's first of four bodies took 13 s on a loaded machine and
            # predicted 55 s; the four took 14 s in all)
            _check_budget(began, len(compiled), len(set(keys)), max_seconds,
                          what="distinct loop bodies", least_done=2)
            body_report = CompileReport(spec.body.name, target, origin=report.origin)
            # a body compiles whole: compiled_loop needs its plan and kernels, not a record
            body = _compile_graph(spec.body, target, options, body_report,
                                  donated=spec.carried)
            if getattr(body, "over_budget", ""):          # op by op on every trip: no
                raise _CompileTimeExceeded(body.over_budget)
            for phase in body_report.phases:
                report.phases.append(dataclasses.replace(
                    phase, name=f"{kernel.name}/{phase.name}"))
            compiled[key] = body
        loops[kernel.name] = (_loop_runner(kernel, body, spec, target, report), body)
    return loops


def _loop_runner(kernel, body: Executable, spec, target: str, report: CompileReport):
    """The loop inside one Numba function where its body allows, else the body's driver
    called once per trip; the choice is one of the kernel's decisions."""
    if target == "cpu":
        with report.phase(f"{kernel.name}/compiled-loop", "compile"):
            try:
                runner = compiled_loop(body, spec.trips, spec.carried, spec.dynamic)
            except numba.core.errors.NumbaError as error:   # the per-trip driver is exact
                runner = None
                kernel.decisions.append(f"loop: trips run by the Python driver (compiling "
                                        f"them as one function: {type(error).__name__})")
        if runner is not None:
            trips = "its input's count of" if spec.dynamic else spec.trips
            kernel.decisions.append(f"loop: {trips} trips in one compiled function "
                                    f"({runner.how})")
            return runner
    return loop_runner(body, spec.trips, spec.carried, spec.dynamic)


class CompileBudgetWarning(UserWarning):
    """A program had more kernels than the compile budget and runs op by op with NumPy."""


class _CompileTimeExceeded(Exception):
    pass


def _over_budget(graph: Graph, optimized: Graph, plan, report: CompileReport,
                 why: str) -> Executable:
    """An executable that runs the optimized program op by op with NumPy (the reference
    interpreter), compiling nothing more: Numba costs 0.1-0.5 s per kernel, and a Python
    loop over array elements unrolls into hundreds of them."""
    state = "optimized" if optimized is not graph else "traced"
    note = (f"{why}: the {state} program runs op by op with NumPy. Python loops over "
            "array elements unroll into many kernels: vectorize the loop, or raise the "
            "budget")
    warnings.warn(f"`{graph.name}`: {note}.", CompileBudgetWarning, stacklevel=2)
    source = "def run(*args):\n    return tuple(_interpret(_program, args))\n"
    env = {"_interpret": interpret, "_program": optimized, "np": np}
    exec(builtins.compile(source, f"<xlanb driver {graph.name}>", "exec"), env)
    nodes = [n for n in optimized.nodes if n.op not in (Op.PARAMETER, Op.CONSTANT)]
    kernel = CompiledKernel(
        "op-by-op", "interpreted", [n.op.value for n in nodes], f"# not compiled: {note}",
        sum(k.predicted_seconds() for k in plan.kernels), 0.0, [note],
        sum(cost_model.node_flops(n) for n in nodes),
        sum(k.read_bytes() + k.write_bytes() for k in plan.kernels),
        sorted({n.loc for n in nodes if n.loc}))
    with report.phase("buffer-assignment", "pass"):
        buffers = assign_buffers(plan, {})
    executable = Executable(graph, optimized, plan, [kernel], env["run"], source, buffers,
                            report)
    executable.over_budget = note
    return executable


def finish(executable, dumper, dump, generated):
    """The target-independent end of a compile: fill the report, write the dumps (`dump`
    is the target's writer) and record the compile timeline in the trace."""
    settings = flags.current()
    _describe(executable.report, executable, executable.plan)
    if dumper:
        dump(dumper, settings, executable, generated)
    if settings.xla_trace_to:
        flags.start_tracing_runs()
        trace_events.record_report(executable.report, settings.xla_trace_to)
    return executable


def optimize_and_plan(graph: Graph, options: CompileOptions, report: CompileReport,
                      row_fusion: bool = True):
    """The target-independent half of a compile: dumps of the input, the pass pipeline and
    the fusion plan (with row kernels where the target generates them), all on the
    report's timeline.  Returns (dumper or None, optimized graph, plan)."""
    settings = flags.current()
    dumper = ModuleDumper(settings.xla_dump_to, graph.name) if settings.xla_dump_to else None
    if dumper and settings.xla_dump_hlo_as_text:
        dumper.write("before_optimizations.txt", print_graph(graph))
    start = time.perf_counter()
    dump = dumper.after_pass(settings.xla_dump_hlo_pass_re) \
        if dumper and settings.xla_dump_hlo_pass_re else None
    optimized, records = run_pipeline(graph, options.pipeline,
                                      disabled=options.disabled_passes, dump=dump)
    # lowerings that grow the graph, after the passes that only simplify it
    optimized, lowered = run_pipeline(optimized, LOWERING_PIPELINE,
                                      disabled=options.disabled_passes, dump=dump)
    records += lowered
    plan = timed("fusion", lambda g: plan_fusion(g, options.fusion, row_fusion), optimized,
                 records)
    _add_records(report, records, start)
    return dumper, optimized, plan


def _compile_kernels(plan, generated, report, max_seconds: float = 0.0,
                     shared: bool = False):
    """Numba-compile every generated kernel; past `max_seconds` of compiling (0: no limit)
    with kernels still to go, give up (`_CompileTimeExceeded`).  It also gives up early
    once even the fastest of the kernels compiled so far, a few seconds' worth, predicts
    the rest will not fit: waiting out the budget only to run with NumPy helps no one,
    but a program that would have compiled in time must not run with NumPy instead.  So
    only kernels that will compile count (`_fresh_compiles`), the first compiled kernel
    does not set the pace (it carries the process's one-time Numba costs), and the pace
    is the fastest kernel, not the mean: kernels differ 10-fold (W5's row and reduce
    kernels take seconds, its epilogues 0.1-0.3 s).  By the mean of all kernels, npbench
    adi, first in a fresh process, was given up after 5 of its 90; it compiles in 20 s.
    `shared`: the compile worker has these kernels too (parallel_compile.py); one whose
    cache entry it holds is left for last, when it is most likely done."""
    dispatchers, seconds = {}, {}
    fresh = _fresh_compiles(plan.kernels, generated)
    start, total, done, fastest = time.perf_counter(), len(fresh), 0, None
    pending, deferred = collections.deque(plan.kernels), set()
    while pending:
        kernel = pending.popleft()
        _check_budget(start, done, total, max_seconds, what="kernels to compile",
                      least_done=2, seconds_each=fastest)
        gen = generated.get(kernel.name)
        if gen is not None and gen.has_function:
            phase_start = time.perf_counter()
            try:
                dispatchers[kernel.name], seconds[kernel.name] = compile_kernel(
                    gen, wait=not shared or kernel.name in deferred)
            except cache.EntryBusy:
                deferred.add(kernel.name)
                pending.append(kernel)
                continue
            report.add(f"numba {kernel.name}", "compile", phase_start, seconds[kernel.name])
        if kernel.name in fresh:
            done += 1
            if done > 1:                        # the first paid Numba's one-time costs
                fastest = min(fastest or math.inf, seconds[kernel.name])
    kernels = []
    for kernel in plan.kernels:
        gen = generated.get(kernel.name)
        kernels.append(CompiledKernel(
            kernel.name, kernel.kind, [n.op.value for n in kernel.nodes],
            gen.source if gen else f"# library call: {_library_what(kernel.root)}",
            kernel.predicted_seconds(), seconds.get(kernel.name, 0.0),
            list(kernel.decisions), sum(cost_model.node_flops(n) for n in kernel.nodes),
            kernel.read_bytes() + kernel.write_bytes(),
            sorted({n.loc for n in kernel.nodes if n.loc})))
    return dispatchers, kernels


def _fresh_compiles(kernels, generated) -> set[str]:
    """The kernels whose compile is to come: not a library kernel, not one whose code an
    earlier kernel shares (one compile), not one the disk cache holds."""
    fresh, seen = set(), set()
    for kernel in kernels:
        gen = generated.get(kernel.name)
        if gen is None or not gen.has_function:
            continue
        source = cache.canonical_kernel(gen.source, gen.function)
        if source not in seen and not cache.probably_cached(source):
            fresh.add(kernel.name)
        seen.add(source)
    return fresh


def _check_budget(start: float, done: int, total: int, max_seconds: float,
                  what: str = "kernels", least_done: int = 1,
                  seconds_each: float | None = None) -> None:
    """Raises `_CompileTimeExceeded` when the compile, begun at `start` (or, for a loop
    body, when its whole program's compile began), is past `max_seconds`, or predicted
    past it by the pace of `done` (at least `least_done`) of `total` steps since `start`:
    `seconds_each` a step where given (None: none measured yet), else their mean."""
    now = time.perf_counter()
    spent = now - start
    overall = now - min(start, _COMPILE_BEGAN.get() or start)
    if seconds_each is None and done >= least_done:
        seconds_each = spent / done
    predicted = overall + (seconds_each or 0.0) * (total - done)
    if 0 < max_seconds < overall or (0 < max_seconds < predicted and
                                     spent > max_seconds / 10):
        raise _CompileTimeExceeded(
            f"compiling took {overall:.1f} s with {total - done} of {total} {what} still "
            f"to go, over {max_seconds:g} s at this pace "
            "(XLANB_FLAGS=--xla_max_compile_seconds=S)")


def _library_what(node) -> str:
    """What a library kernel runs: its op, and for a library call NumPy's function."""
    if node.op is Op.LIBRARY_CALL:
        return f"{node.op.value} {node.arg[0]}"
    if node.op is Op.LIBRARY_RESULT:
        return f"{node.op.value} {node.arg} of {node.inputs[0].arg[0]}"
    return node.op.value


def _describe(report: CompileReport, executable: Executable, plan) -> None:
    report.kernels = [{"name": k.name, "kind": k.kind, "ops": k.ops,
                       "predicted_seconds": k.predicted_seconds,
                       "compile_seconds": k.compile_seconds, "decisions": k.decisions,
                       "flops": k.flops, "bytes_accessed": k.bytes_accessed,
                       "locations": k.locations, "source": k.source}
                      for k in executable.kernels]
    report.graph = graph_summary(plan)
    report.ir = executable.as_text()
    report.memory = executable.memory_analysis()
    report.cost = {k: v for k, v in executable.cost_analysis().items() if k != "kernels"}


def dump_program(dumper: ModuleDumper, settings, executable) -> None:
    """The target-independent dumps: optimized IR, fusion graph, driver."""
    if settings.xla_dump_hlo_as_text:
        dumper.write("after_optimizations.txt", executable.as_text())
    if settings.xla_dump_hlo_as_dot:
        dumper.write("fusion.dot", fusion_dot(executable.plan))
    dumper.write("driver.py", executable.driver_source)


def _dump(dumper: ModuleDumper, settings, executable: Executable, generated) -> None:
    dump_program(dumper, settings, executable)
    if settings.xla_dump_kernels:
        signatures = {name: kernel_signature(gen) for name, gen in generated.items()
                      if gen.has_function}
        dumper.kernels(generated, signatures)


def graph_summary(plan) -> dict:
    """The optimized graph as report data: what the fused-kernel graph view draws."""
    graph = plan.graph
    ids = {id(n): i for i, n in enumerate(graph.nodes)}
    member_of: dict[int, list[str]] = {}
    for kernel in plan.kernels:
        for node in kernel.nodes:
            member_of.setdefault(id(node), []).append(kernel.name)
    nodes = [{"id": ids[id(n)], "op": n.op.value, "shape": list(n.shape),
              "dtype": n.dtype.name, "loc": n.loc, "kernels": member_of.get(id(n), [])}
             for n in graph.nodes]
    edges = []
    for n in graph.nodes:
        for i in n.inputs:
            fused = bool(set(member_of.get(id(n), [])) & set(member_of.get(id(i), [])))
            edges.append({"src": ids[id(i)], "dst": ids[id(n)], "fused": fused})
    return {"nodes": nodes, "edges": edges,
            "outputs": [ids[id(o)] for o in graph.outputs]}


def _add_records(report: CompileReport, records, start: float) -> None:
    t = start
    for rec in records:
        report.add(rec.name, "fusion" if rec.name == "fusion" else "pass", t, rec.seconds,
                   nodes_before=rec.nodes_before, nodes_after=rec.nodes_after,
                   changed=rec.changed)
        t += rec.seconds
