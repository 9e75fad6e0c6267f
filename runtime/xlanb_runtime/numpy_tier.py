"""The NumPy tier: a program's optimized graph run op by op with NumPy, so that a first
call answers at once while its kernels compile in another process (`background.py`).

    traced graph --run_pipeline--> optimized graph --plan--> straight-line NumPy calls

The plan is the reference interpreter's table (`ir.interpret.EVAL`) bound node by node into
generated Python, like the compiled driver (executable.py), so a call costs one Python
statement per op and no interpreter dispatch:

    def run(p0, p1, _b):
        v2 = _np.add(p0, p1, out=_b[0])
        v3 = _f3(v2, out=_b[1])        # a bound call: reduce sum over (0,)
        v4 = _np.exp(v3)               # an output: memory of its own
        return (v4,)

Intermediate values are written into an arena of buffers kept from call to call
(tier_buffers.py): a first call then touches few fresh pages.  The first call runs a
checked version that compares every value's dtype and shape with its node, as the
interpreter does; nodes that NumPy types differently (erf computed in float64) get a
conversion in the fast version built right after.  Outputs are copied only where the op
may return a view (of an argument, a constant or a read-only broadcast).  Library calls
and loops go through the compiled driver's own runners, so both tiers call NumPy alike.
"""
from __future__ import annotations

import builtins
import functools
import operator
import threading
import time
from typing import Callable

import numpy as np

from . import flags
from .executable import (CompiledKernel, library_results_call, library_value_call,
                         loop_runner, returned_views)
from .ir import Graph, Op, print_graph
from .ir.interpret import EVAL, _convert, is_token
from .passes import OPTIMIZE_PIPELINE, PASSES, PassError
from .report import CompileReport
from .tier_buffers import FRESH, UFUNCS, ArenaPool, BufferPlan, plan_buffers


def node_call(node) -> Callable:
    """The NumPy callable computing `node` from its operands' values: a ufunc, a library
    call or a loop through the compiled driver's runners, else the interpreter's entry."""
    if node.op in UFUNCS:
        return getattr(np, UFUNCS[node.op])
    if node.op is Op.LOOP:
        return loop_runner(NumpyProgram(node.arg.body), node.arg.trips, node.arg.carried,
                           node.arg.dynamic)
    if node.op is Op.LIBRARY_CALL:
        return library_results_call(node, compiled=False) if is_token(node) else \
            library_value_call(node, compiled=False)
    if node.op in (Op.LOOP_RESULT, Op.LIBRARY_RESULT):
        return operator.itemgetter(node.arg)
    return functools.partial(EVAL[node.op], node)


def is_tuple_valued(node) -> bool:
    """A loop or a library call with several results: its value is a tuple."""
    return node.op is Op.LOOP or (node.op is Op.LIBRARY_CALL and is_token(node))


class _Source:
    """Writes one program's Python: a statement per node, its callables bound as globals.
    `fixes`: the node indices whose NumPy result needs a conversion to the node's dtype
    (found by the checked first call); `buffers`: where values are written (`_b`)."""

    def __init__(self, graph: Graph, fixes: set[int], buffers: BufferPlan):
        self.graph, self.fixes, self.buffers = graph, fixes, buffers
        self.env: dict = {"_np": np, "_asarray": np.asarray, "_convert": _convert}
        self.names: dict[int, str] = {}
        self.converted: set[int] = set()          # ids of nodes written through _convert
        self.lines: list[str] = []

    def bind(self, value, prefix: str) -> str:
        name = f"_{prefix}{len(self.env)}"
        self.env[name] = value
        return name

    def expression(self, node) -> str:
        operands = ", ".join(self.names[id(i)] for i in node.inputs)
        if node.op in UFUNCS:
            return f"_np.{UFUNCS[node.op]}({operands})"
        if node.op in (Op.LOOP_RESULT, Op.LIBRARY_RESULT):
            return f"{operands}[{node.arg}]"
        return f"{self.bind(node_call(node), 'f')}({operands})"

    def statement(self, index: int, node) -> None:
        if node.op is Op.CONSTANT:
            self.names[id(node)] = self.bind(np.asarray(node.arg), "c")
            return
        name = self.names[id(node)] = f"v{index}"
        if index in self.buffers.slots:
            self.lines.append(f"{name} = {self.into(index, node)}")
            return
        expr = self.expression(node)
        if is_tuple_valued(node):
            self.lines.append(f"{name} = {expr}")
        elif index in self.fixes:
            dtype = self.bind(node.dtype, "t")
            self.lines.append(f"{name} = _convert(_asarray({expr}), {dtype})")
            self.converted.add(id(node))
        elif node.ndim == 0:                    # ufuncs return NumPy scalars for rank 0
            self.lines.append(f"{name} = _asarray({expr})")
        else:
            self.lines.append(f"{name} = {expr}")

    def into(self, index: int, node) -> str:
        """The call writing node `index` into its buffer."""
        call = self.buffers.calls[index]
        function = f"_np.{call.__name__}" if isinstance(call, np.ufunc) else \
            self.bind(call, "f")
        operands = ", ".join(self.names[id(i)] for i in node.inputs)
        return f"{function}({operands}, out=_b[{self.buffers.slots[index]}])"

    def output(self, node) -> str:
        value = self.names[id(node)]
        if node.op in FRESH and node.ndim > 0 and id(node) not in self.converted:
            return value
        return f"_np.array({value}, copy=True)"

    def build(self):
        """(run, source)."""
        params = [f"p{i}" for i in range(len(self.graph.params))]
        for param, name in zip(self.graph.params, params):
            self.names[id(param)] = name
        params.append("_b")
        dead = _last_uses(self.graph)
        for index, node in enumerate(self.graph.nodes):
            if node.op is not Op.PARAMETER:
                self.statement(index, node)
            if index in dead:          # free what no later op reads: memory is reused
                self.lines.append(f"del {', '.join(f'v{i}' for i in dead[index])}")
        outs = [self.output(o) for o in self.graph.outputs]
        body = "\n".join("        " + line for line in self.lines) or "        pass"
        source = (f"def run({', '.join(params)}):\n"
                  f"    with _np.errstate(all='ignore'):\n{body}\n"
                  f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})\n")
        code = builtins.compile(source, f"<xlanb numpy tier {self.graph.name}>", "exec")
        exec(code, self.env)
        return self.env["run"], source


def _last_uses(graph: Graph) -> dict[int, list[int]]:
    """Statement index -> the computed values (by index) read for the last time there;
    outputs, parameters and constants are never freed."""
    nodes = graph.nodes
    index_of = {id(n): i for i, n in enumerate(nodes)}
    kept = {id(o) for o in graph.outputs}
    last: dict[int, int] = {}
    for i, node in enumerate(nodes):
        for source in node.inputs:
            if source.op not in (Op.PARAMETER, Op.CONSTANT) and id(source) not in kept:
                last[index_of[id(source)]] = i
    dead: dict[int, list[int]] = {}
    for value, at in last.items():
        dead.setdefault(at, []).append(value)
    return {at: sorted(set(values)) for at, values in dead.items()}


class NumpyProgram:
    """A graph as a callable: `driver(*arrays)` returns its outputs as the compiled driver
    does.  The first call runs node by node, checking each value against its node; the
    second builds the straight-line version (thread-safe: both compute the same values,
    each call in an arena of its own)."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self._fast = None
        self._fixes: set[int] | None = None
        self._arenas: ArenaPool | None = None
        self._lock = threading.Lock()
        self.source = ""

    def driver(self, *args):
        fast = self._fast
        if fast is None:
            with self._lock:
                if self._fixes is None:
                    return self._checked_first_call(args)
                if self._fast is None:
                    self._fast, self.source = _Source(self.graph, self._fixes,
                                                      self._arenas.plan).build()
            fast = self._fast
        arenas = self._arenas
        buffers = arenas.take()
        try:
            return fast(*args, buffers)
        finally:
            arenas.give(buffers)

    def _checked_first_call(self, args) -> tuple:
        """Run node by node (no source to compile yet: the first answer comes sooner),
        comparing each value's dtype and shape with its node's; a dtype NumPy computes
        differently is converted and remembered for the straight-line version."""
        nodes, fixes = self.graph.nodes, set()
        plan = plan_buffers(self.graph)
        arenas = ArenaPool(plan)
        buffers = arenas.take()
        index_of = {id(n): i for i, n in enumerate(nodes)}
        values: list = [None] * len(nodes)
        for position, param in enumerate(self.graph.params):
            values[index_of[id(param)]] = args[position]
        dead = _last_uses(self.graph)
        with np.errstate(all="ignore"):
            for i, node in enumerate(nodes):
                if node.op is Op.PARAMETER:
                    continue
                if node.op is Op.CONSTANT:
                    values[i] = np.asarray(node.arg)
                    continue
                operands = [values[index_of[id(s)]] for s in node.inputs]
                if i in plan.slots:
                    value = plan.calls[i](*operands, out=buffers[plan.slots[i]])
                else:
                    value = node_call(node)(*operands)
                values[i] = value if is_tuple_valued(node) else _checked(node, value, i, fixes)
                for j in dead.get(i, ()):
                    values[j] = None
        outs = tuple(_returned(o, values[index_of[id(o)]], index_of[id(o)] in fixes)
                     for o in self.graph.outputs)
        arenas.give(buffers)
        self._fixes, self._arenas = fixes, arenas
        return outs


def _returned(node, value, converted: bool):
    """An output as returned: a copy where it may share memory (see `_Source.output`)."""
    if node.op in FRESH and node.ndim > 0 and not converted:
        return value
    return np.array(value, copy=True)


def _checked(node, value, index: int, fixes: set[int]):
    value = np.asarray(value)
    if value.dtype != node.dtype:
        fixes.add(index)
        value = _convert(value, node.dtype)
    if value.shape != node.shape:
        raise AssertionError(f"numpy tier: {node.op.value} produced {value.shape}, "
                             f"expected {node.shape}")
    return value


class NumpyTierExecutable:
    """What a program runs on before its kernels are compiled: the `Executable` interface
    the front end calls (`driver`, `graph`, `report`, `kernels`, `as_text`, analyses)."""

    tier = "numpy"
    over_budget = ""

    def __init__(self, graph: Graph, optimized: Graph, report: CompileReport):
        self.graph, self.optimized, self.report = graph, optimized, report
        self.returned_views = returned_views(optimized)
        self.program = NumpyProgram(optimized)
        self.driver = self.program.driver
        note = "runs op by op with NumPy (the NumPy tier) until its kernels are compiled"
        self.kernels = [CompiledKernel("numpy-tier", "numpy",
                                       [n.op.value for n in optimized.nodes],
                                       f"# not compiled: {note}", 0.0, 0.0, [note])]

    def run(self, args):
        return self.driver(*args)

    __call__ = run

    def as_text(self) -> str:
        return "# numpy-tier (not compiled)\n" + print_graph(self.optimized)

    def cost_analysis(self) -> dict:
        return {}

    def memory_analysis(self) -> dict:
        return {}


def plan_program(graph: Graph, options, report: CompileReport) -> NumpyTierExecutable:
    """The NumPy-tier executable of `graph`: the pass pipeline, then the plan.  Nothing is
    compiled; the report's timeline gets one `numpy-tier` phase holding the passes."""
    if flags.from_environment().xla_trace_to:
        flags.start_tracing_runs()           # NumPy-tier calls become trace events
    start = time.perf_counter()
    optimized, seconds = optimize(graph, options)
    executable = NumpyTierExecutable(graph, optimized, report)
    report.add("numpy-tier", "tier", start, time.perf_counter() - start, passes=seconds,
               nodes_before=len(graph.nodes), nodes_after=len(optimized.nodes))
    return executable


# The default pipeline's first half: what makes op-by-op NumPy fast (W5: simplify, cse and
# dce make the step 3x faster than the traced graph; layout and the second simplify and
# cse, a third of the pipeline's time, change nothing measurable for NumPy).
NUMPY_TIER_PIPELINE = ("simplify", "cse", "dce")


def optimize(graph: Graph, options) -> tuple[Graph, dict[str, float]]:
    """The pass pipeline without its books: no verifier and no fingerprint per pass (each
    prints the graph: most of the pipeline's time on a small program).  The background
    compile runs the whole pipeline with both, and the first call checks every value's
    dtype and shape.  A custom pipeline (`CompileOptions.pipeline`) runs as given.
    Returns the graph and each pass's seconds."""
    pipeline = NUMPY_TIER_PIPELINE if tuple(options.pipeline) == OPTIMIZE_PIPELINE \
        else options.pipeline
    seconds: dict[str, float] = {}
    for name in pipeline:
        if name in options.disabled_passes:
            continue
        start = time.perf_counter()
        try:
            graph = PASSES[name](graph)
        except Exception as error:
            raise PassError(f"pass '{name}' failed: {type(error).__name__}: {error}",
                            name) from error
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start
    return graph, seconds
