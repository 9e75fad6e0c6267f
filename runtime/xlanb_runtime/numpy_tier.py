"""The NumPy tier: a program's optimized graph run op by op with NumPy, so that a first
call answers at once while its kernels compile in another process (`background.py`).

    traced graph --run_pipeline--> optimized graph --plan--> straight-line NumPy calls

The plan is the reference interpreter's table (`ir.interpret.EVAL`) bound node by node into
generated Python, like the compiled driver (executable.py), so a call costs one Python
statement per op and no interpreter dispatch:

    def run(p0, p1):
        v2 = _np.add(p0, p1)
        v3 = _e3(_n3, v2)             # a bound table entry: reduce sum over (0,)
        return (v3,)

The first call runs a checked version that compares every value's dtype and shape with its
node, as the interpreter does; nodes that NumPy types differently (erf computed in float64)
get a conversion in the fast version built right after.  Outputs are copied only where the
op may return a view (of an argument, a constant or a read-only broadcast).  Library calls
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
                         loop_runner)
from .ir import Graph, Op, print_graph
from .ir.interpret import EVAL, _convert, is_token
from .passes import OPTIMIZE_PIPELINE, PASSES, PassError
from .report import CompileReport

# Ops whose NumPy function maps one to one onto a ufunc: called directly, no table entry.
UFUNCS = {
    Op.NEG: "negative", Op.ABS: "absolute", Op.EXP: "exp", Op.EXPM1: "expm1",
    Op.LOG: "log", Op.LOG1P: "log1p", Op.SQRT: "sqrt", Op.TANH: "tanh", Op.SIN: "sin",
    Op.COS: "cos", Op.FLOOR: "floor", Op.CEIL: "ceil", Op.NOT: "invert",
    Op.IS_FINITE: "isfinite", Op.CONJ: "conjugate", Op.ADD: "add", Op.SUB: "subtract",
    Op.MUL: "multiply", Op.POW: "power", Op.MAX: "maximum", Op.MIN: "minimum",
    Op.AND: "bitwise_and", Op.OR: "bitwise_or", Op.XOR: "bitwise_xor", Op.ATAN2: "arctan2",
    Op.EQ: "equal", Op.NE: "not_equal", Op.LT: "less", Op.LE: "less_equal",
    Op.GT: "greater", Op.GE: "greater_equal", Op.SELECT: "where",
}

# Ops whose result is always a new array that shares memory with nothing else: a program
# output made by one needs no copy.  Views (reshape, transpose, slice, broadcast, real),
# constants, parameters, `round` of integers (returns its input) and library calls (NumPy
# may return a view of an argument) are copied when returned.
FRESH = (set(UFUNCS) - {Op.CONJ}) | {
    Op.SIGN, Op.RSQRT, Op.ERF, Op.ROUND_HALF, Op.DIV, Op.FLOOR_DIV, Op.REM, Op.COMPLEX, Op.CONVERT,
    Op.REDUCE, Op.ARGREDUCE, Op.SCAN, Op.DOT, Op.GATHER, Op.SCATTER_ADD, Op.CONCATENATE, Op.PAD,
    Op.DYNAMIC_PAD, Op.RNG_BITS}


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
    (found by the checked first call)."""

    def __init__(self, graph: Graph, fixes: set[int]):
        self.graph, self.fixes = graph, fixes
        self.env: dict = {"_np": np, "_asarray": np.asarray, "_convert": _convert}
        self.names: dict[int, str] = {}
        self.converted: set[int] = set()          # ids of nodes written through _convert
        self.lines: list[str] = []
        self.reuse = reusable_operands(graph, fixes)

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
        expr = self.expression(node)
        if is_tuple_valued(node):
            self.lines.append(f"{name} = {expr}")
        elif index in self.fixes:
            dtype = self.bind(node.dtype, "t")
            self.lines.append(f"{name} = _convert(_asarray({expr}), {dtype})")
            self.converted.add(id(node))
        elif node.ndim == 0:                    # ufuncs return NumPy scalars for rank 0
            self.lines.append(f"{name} = _asarray({expr})")
        elif index in self.reuse:               # into a dead operand's array: no new memory
            into = self.names[id(node.inputs[self.reuse[index]])]
            self.lines.append(f"{name} = {expr[:-1]}, out={into})")
        else:
            self.lines.append(f"{name} = {expr}")

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


# Ops whose result may share memory with their first operand (a view, or the operand
# itself); any op in neither this set nor FRESH may alias any of its operands.
VIEWS = {Op.RESHAPE, Op.TRANSPOSE, Op.SLICE, Op.BROADCAST, Op.REVERSE, Op.REAL, Op.IMAG,
         Op.DYNAMIC_SLICE, Op.ROUND, Op.CONJ}


def reusable_operands(graph: Graph, fixes: set[int]) -> dict[int, int]:
    """Node index -> position of an operand whose array the node's ufunc may write its
    result into (`out=`): an array made by a FRESH op, of the result's shape and dtype,
    that nothing reads later, neither itself nor any view of it.  Each array's views are
    tracked by their root (the array they view); parameters, constants and the operands
    of ops that may alias (library calls, loops) are never written."""
    nodes = graph.nodes
    index_of = {id(n): i for i, n in enumerate(nodes)}
    last = {id(o): len(nodes) for o in graph.outputs}      # outputs live past the end
    for i, node in enumerate(nodes):
        for source in node.inputs:
            last[id(source)] = max(last.get(id(source), -1), i)
    root: dict[int, int] = {}
    members: dict[int, list[int]] = {}           # root -> ids of the values sharing it
    pinned: set[int] = set()
    reuse: dict[int, int] = {}
    for i, node in enumerate(nodes):
        if node.op in UFUNCS and node.op is not Op.SELECT and node.ndim > 0 and \
                i not in fixes:
            for position, source in enumerate(node.inputs):
                r = root.get(id(source))
                if r is not None and r == id(source) and r not in pinned and \
                        index_of[r] not in fixes and source.shape == node.shape and \
                        source.dtype == node.dtype and \
                        all(last.get(m, -1) <= i for m in members[r]):
                    reuse[i] = position
                    break
        if i in reuse:
            r = root[id(node.inputs[reuse[i]])]
        elif node.op in VIEWS:
            r = root.get(id(node.inputs[0]), id(node))
        else:
            r = id(node)
            if node.op not in FRESH:               # may alias its operands, or is fixed
                pinned.add(r)
                pinned.update(root.get(id(s), id(s)) for s in node.inputs)
        root[id(node)] = r
        members.setdefault(r, []).append(id(node))
    return reuse


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
    second builds the straight-line version (thread-safe: both compute the same values)."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self._fast = None
        self._fixes: set[int] | None = None
        self._lock = threading.Lock()
        self.source = ""

    def driver(self, *args):
        fast = self._fast
        if fast is not None:
            return fast(*args)
        with self._lock:
            if self._fixes is None:
                return self._checked_first_call(args)
            if self._fast is None:
                self._fast, self.source = _Source(self.graph, self._fixes).build()
        return self._fast(*args)

    def _checked_first_call(self, args) -> tuple:
        """Run node by node (no source to compile yet: the first answer comes sooner),
        comparing each value's dtype and shape with its node's; a dtype NumPy computes
        differently is converted and remembered for the straight-line version."""
        nodes, fixes = self.graph.nodes, set()
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
                value = node_call(node)(*[values[index_of[id(s)]] for s in node.inputs])
                values[i] = value if is_tuple_valued(node) else _checked(node, value, i, fixes)
                for j in dead.get(i, ()):
                    values[j] = None
        outs = tuple(np.array(values[index_of[id(o)]], copy=True) for o in self.graph.outputs)
        self._fixes = fixes
        return outs


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
