"""Auto-clustering (`jit(f, must_compile=False)`): compile what can be, run the rest eagerly.

Like TensorFlow's auto-clustering or torch.compile's graph breaks.  A call runs `f` on
tracers; when it reaches something the compiler cannot take (an unsupported function, a
value-dependent shape, Python control flow on a traced value), the graph so far becomes a
cluster: it is compiled, run, and every live traced value is replaced by its concrete
result as a new input.  The unsupported call then runs with NumPy and tracing resumes.

Caching.  A cluster is keyed by its own graph: the nodes its outputs need and the inputs
it reads, renumbered in the order it reads them, so a loop with a break per iteration
compiles a handful of clusters, not one per iteration.  A call whose trace had no break
did not depend on any value, so that trace (a whole-function program, like `jit`'s) is
kept per signature and later calls with that signature run it without tracing.

`f.report` accumulates over calls: each distinct cluster once, with its op and kernel
counts, hits and compile seconds; each distinct break once, with its count, reason and the
user's line.  Cost: a call with breaks is traced again (its control flow may depend on
values), and each break writes the live values out to memory.

Never far behind NumPy.  For small arrays tracing can cost more than the work itself (a
loop of tiny steps with a break each), and a compiled program can lose to NumPy's own
loops, so for every signature `PathChoice` times the compiled path (the whole program, or
tracing with clusters) and plain NumPy (the function itself, called on the caller's
arrays: NumPy's semantics by definition) on real calls, and runs the faster, measuring the
other again from time to time.  A call also compiles new clusters for at most
`CALL_COMPILE_BUDGET_SECONDS`; clusters met after that run op by op with NumPy and compile
on a later call, so no first call waits for dozens of compiles.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import xlanb_runtime
from xlanb_runtime.ir import Graph, Node, Op, interpret, print_graph
from xlanb_runtime.ir.graph import topological_order, with_inputs

from .api import _fast_signature
from .errors import (AliasingError, ArraySubclassError, InternalCompilerError, TracerLeakError,
                     UnsupportedDTypeError)
from .internal_errors import named_internal_errors
from .pytree import tree_map
from .tracing.boundary import find_aliases, finish_call
from .tracing.capture import originals_restored, suspended
from .tracing.source import user_location
from .tracing.tracer import (TraceContext, Tracer, flatten_args, trace,
                             trace_learning_statics)
from .tracing.views import apply_steps


@dataclass
class ClusterBreak:
    what: str              # np.unique / bool() / ...
    location: str | None
    reason: str
    count: int = 1


@dataclass
class AutoClusterReport:
    """Distinct clusters (dicts: ops, kernels, kernel_names, hits, compile_seconds) and
    distinct breaks, over every call so far."""
    clusters: list[dict] = field(default_factory=list)
    breaks: list[ClusterBreak] = field(default_factory=list)
    paths: dict[str, PathChoice] = field(default_factory=dict)   # signature -> choice
    _cluster_index: dict = field(default_factory=dict, repr=False)
    _break_index: dict = field(default_factory=dict, repr=False)

    def record_cluster(self, key: str, ops: int, kernels: list[str], seconds: float) -> None:
        entry = self._cluster_index.get(key)
        if entry is None:
            entry = self._cluster_index[key] = {
                "ops": ops, "kernels": len(kernels), "kernel_names": kernels, "hits": 0,
                "compile_seconds": seconds}
            self.clusters.append(entry)
        elif kernels and not entry["kernels"]:         # ran op by op, compiled since
            entry.update(kernels=len(kernels), kernel_names=kernels, compile_seconds=seconds)
        entry["hits"] += 1

    def record_break(self, what: str, location: str | None, reason: str) -> None:
        entry = self._break_index.get((what, location))
        if entry is None:
            entry = self._break_index[(what, location)] = ClusterBreak(what, location,
                                                                       reason, 0)
            self.breaks.append(entry)
        entry.count += 1

    def __str__(self) -> str:
        lines = [f"auto-clustering: {len(self.clusters)} compiled clusters, "
                 f"{len(self.breaks)} breaks"]
        for i, c in enumerate(self.clusters):
            lines.append(f"  cluster {i}: {c['ops']} ops in {c['kernels']} kernels, "
                         f"{c['hits']} runs, compiled in {c['compile_seconds']:.3f} s")
        for b in self.breaks:
            lines.append(f"  break at {b.location or '?'} ({b.count}x): {b.what}: "
                         f"{b.reason}")
        for signature, choice in self.paths.items():
            lines.append(f"  {signature}: {choice.describe()}")
        return "\n".join(lines)


def cluster_graph(params: list[Node], outputs: list[Node], name: str
                  ) -> tuple[Graph, list[int]]:
    """The cluster computing `outputs`: only the parameters it reads, renumbered in reading
    order (its printed text is its cache key), and their indices among `params`."""
    mapping: dict[int, Node] = {}
    used: list[int] = []
    for node in topological_order(outputs):
        if node.op is Op.PARAMETER:
            mapping[id(node)] = Node(Op.PARAMETER, (), node.shape, node.dtype, len(used))
            used.append(node.arg)
        else:
            mapping[id(node)] = with_inputs(node, [mapping[id(i)] for i in node.inputs])
    new_params = [mapping[id(params[i])] for i in used]
    return Graph(new_params, [mapping[id(o)] for o in outputs], name), used


CALL_COMPILE_BUDGET_SECONDS = 2.0


@dataclass
class PathChoice:
    """Compiled (the whole program, or clusters) or plain NumPy, for one signature.

    Each path is timed on real calls: `SAMPLES` calls each after the first (which
    compiles), then the faster one runs, untimed.  The slower is measured once more
    whenever the faster has run for `REMEASURE_AFTER` times the slower's time (the first
    timings may have caught compiles or a busy machine), so re-measuring costs at most
    ~5%."""
    SAMPLES = 2
    REMEASURE_AFTER = 20.0
    seconds: dict = field(default_factory=lambda: {"clustered": [], "numpy": []})
    since_remeasure: float = 0.0         # seconds the faster path ran since
    whole: Any = None                    # the Compiled program of a call without breaks
    numpy_only: str = ""                 # why the compiled path is never tried again
    _fastest: dict = field(default_factory=dict, repr=False)    # path -> min(seconds)

    def next_path(self) -> tuple[str, bool]:
        """The path for the next call, and whether to time it (the faster path's calls
        are not timed once settled: they count its best time, and cost no clock reads)."""
        if self.numpy_only:
            return "numpy", False
        for path in ("clustered", "numpy"):
            if len(self.seconds[path]) < self.SAMPLES:
                return path, True
        fastest = self._fastest
        best, other = ("clustered", "numpy") if fastest["clustered"] <= fastest["numpy"] \
            else ("numpy", "clustered")
        if self.since_remeasure >= self.REMEASURE_AFTER * fastest[other]:
            self.since_remeasure = 0.0
            return other, True
        self.since_remeasure += fastest[best]
        return best, False

    def record(self, path: str, seconds: float) -> None:
        times = self.seconds[path]
        times.append(seconds)
        del times[:-self.SAMPLES]
        self._fastest[path] = min(times)

    def best(self) -> str | None:
        if self.numpy_only:
            return "numpy"
        if not all(self.seconds.values()):
            return None
        return min(self.seconds, key=lambda path: min(self.seconds[path]))

    def describe(self) -> str:
        if self.numpy_only:
            return f"runs with NumPy: {self.numpy_only}"
        measured = ", ".join(f"{path} {min(times) * 1e6:.0f} us" for path, times
                             in self.seconds.items() if times)
        if self.whole is not None:
            measured = measured.replace("clustered", "compiled")
        best = self.best()
        if best is None:
            return f"measuring ({measured or 'no call timed yet'})"
        compiled = "compiled (no break)" if self.whole is not None else "clustered"
        return f"runs {'with NumPy' if best == 'numpy' else compiled} ({measured})"


TRACE_BUDGET_SECONDS = 2.0


class _TraceTooLong(BaseException):
    """Tracing one call took longer than TRACE_BUDGET_SECONDS (compiles not counted).  A
    BaseException, so a user's `except Exception` around traced code cannot swallow it."""


class _ClusteringContext(TraceContext):
    def __init__(self, clusterer: "AutoClusterer", name: str):
        super().__init__(name)
        self.clusterer = clusterer
        self.report = clusterer.report
        self.breaks = 0
        self.readonly_reasons: dict[int, str] = {}
        self.started = time.perf_counter()
        self.wrapped = 0

    def wrap(self, node: Node) -> Tracer:
        """Every traced value passes here: a long trace (a loop over array elements,
        unrolled) is cut off, and the call runs with NumPy instead."""
        self.wrapped += 1
        if self.wrapped % 256 == 0:
            tracing = time.perf_counter() - self.started - self.clusterer.call_compile_seconds
            if tracing > TRACE_BUDGET_SECONDS:
                raise _TraceTooLong
        return super().wrap(node)

    def flush(self) -> None:
        """Compile and run everything traced so far; live roots become concrete inputs
        (views read through their roots, so they follow)."""
        live = [t for t in self.live_tracers()
                if t.root is None and t.node.op not in (Op.PARAMETER, Op.CONSTANT)]
        if not live:
            return
        nodes = list({id(t.node): t.node for t in live}.values())
        values = self.clusterer.run_cluster(list(self.params), nodes, self.name,
                                            self.input_values)
        by_node = {id(n): v for n, v in zip(nodes, values)}
        for tracer in live:
            tracer.rebind(self.new_param(tracer.shape, tracer.dtype,
                                         by_node[id(tracer.node)]).node)

    def value_of(self, tracer: Tracer) -> np.ndarray:
        """The concrete value of a tracer whose root is an input (after `flush`)."""
        root = tracer.root if tracer.root is not None else tracer
        if root.node.op is Op.CONSTANT:      # an array made in the function, never written
            value = root.node.arg
        else:
            value = self.input_values[root.node.arg]
        return apply_steps(value, tracer.steps) if tracer.root is not None else value

    def materialize(self, tracer: Tracer, what: str) -> np.ndarray:
        self.breaks += 1
        self.report.record_break(what, user_location(), "needs a concrete value (Python "
                                 "control flow or conversion)")
        self.flush()
        return self.value_of(tracer)

    def random_state_argument(self, leaf) -> None:
        """Draws from a generator argument run eagerly while tracing; the trace depends on
        the generator's state, so it is traced again on every call (never cached)."""
        self.breaks += 1
        self.report.record_break(type(leaf).__name__, user_location(), "a random generator "
                                 "argument: its draws run with NumPy on every call")

    def random_draw(self, func, args: tuple, kwargs: dict, what: str) -> Any:
        """`np.random.<name>(...)` runs with NumPy when the trace gets here (a break)."""
        return self.call_unsupported(func, args, kwargs, what)

    def drew_while_tracing(self, fn, bit_generators: list) -> None:
        """A global generator drew while tracing: eager, so right for this call; a break
        keeps the trace from being cached as a whole program that would repeat it."""
        self.breaks += 1
        self.report.record_break("random draw", user_location(), "a random generator that "
                                 "is not an argument was drawn from")

    def write_untraced(self, func, args: tuple, kwargs: dict, what: str, error) -> Any:
        """NumPy writes into the untraced array (a global) when the trace gets here."""
        return self.call_unsupported(func, args, kwargs, what)

    def call_unsupported(self, func, args: tuple, kwargs: dict, what: str) -> Any:
        """Run `func` with NumPy on copies of the traced values; writes it makes to them
        (`x.sort()`, `np.random.shuffle(x)`) become writes to the traced arrays."""
        self.breaks += 1
        self.report.record_break(what, user_location(), "no compiled lowering (unsupported "
                                 "or value-dependent output shape)")
        self.flush()
        copies: list[tuple[Tracer, np.ndarray, np.ndarray]] = []

        def concrete(v):
            if not isinstance(v, Tracer):
                return v
            value = self.value_of(v)
            copy = np.array(value, copy=True)
            copies.append((v, value, copy))
            return copy
        call_args, call_kwargs = tree_map(concrete, (args, kwargs))
        with suspended():
            result = func(*call_args, **call_kwargs)
        for tracer, before, after in copies:
            if tracer.writeable and not np.array_equal(before, after, equal_nan=after.dtype.kind
                                                       in "fc"):
                tracer.node = self.new_input(after).node
        inputs = [after for _, _, after in copies]
        return tree_map(lambda v: self._result(v, inputs, what) if isinstance(v, np.ndarray)
                        else v, result)

    def _result(self, value: np.ndarray, inputs: list, what: str) -> Tracer:
        """An eager result as a traced input; a view of an input cannot be written through
        (the write would not reach the traced array), so it becomes read-only."""
        tracer = self.new_input(value)
        if any(np.shares_memory(value, array) for array in inputs):
            tracer.writeable = False
            self.readonly_reasons[id(tracer)] = what
        return tracer


class AutoClusterer:
    """Runs a JitFunction with must_compile=False."""

    def __init__(self, jitted):
        self.jitted = jitted
        self.executables: dict[str, Any] = {}        # cluster text -> Executable
        self.interpreted: dict[str, Graph] = {}      # clusters that failed to compile
        self.compile_seconds: dict[str, float] = {}
        self.call_compile_seconds = 0.0              # spent compiling in this call
        self.paths: dict = {}                        # signature -> PathChoice
        self.known_fast: dict = {}                   # arrays-only key -> PathChoice
        self.report = AutoClusterReport()

    def compiled_cluster(self, graph: Graph) -> tuple[str, Any]:
        """(cache key, executable or None when it runs op by op) for a cluster graph.
        Past this call's compile budget a new cluster runs op by op, compiling later."""
        text = print_graph(graph, show_locations=False)
        if text in self.executables or text in self.interpreted:
            return text, self.executables.get(text)
        if self.call_compile_seconds > CALL_COMPILE_BUDGET_SECONDS:
            return text, None
        start = time.perf_counter()
        try:
            with named_internal_errors(self.jitted.fn, compiling=True), originals_restored():
                self.executables[text] = xlanb_runtime.compile(graph, self.jitted.target,
                                                               self.jitted.options)
        except InternalCompilerError as exc:
            warnings.warn(f"{exc} The cluster runs op by op with NumPy instead.",
                          FallbackWarning, stacklevel=5)
            self.interpreted[text] = graph
        self.compile_seconds[text] = time.perf_counter() - start
        self.call_compile_seconds += self.compile_seconds[text]
        return text, self.executables.get(text)

    def run_cluster(self, params: list[Node], outputs: list[Node], name: str,
                    input_values) -> list:
        """Compile (or reuse) and run the cluster computing `outputs`."""
        graph, used = cluster_graph(params, outputs, name)
        values = [input_values[i] for i in used]
        if all(o.op in (Op.PARAMETER, Op.CONSTANT) for o in graph.outputs):
            return interpret(graph, values)            # nothing to compile: no cluster
        text, executable = self.compiled_cluster(graph)
        kernels = [k.name for k in executable.kernels] if executable is not None else []
        self.report.record_cluster(text, len(graph.nodes) - len(graph.params), kernels,
                                   self.compile_seconds.get(text, 0.0))
        with originals_restored():        # the program allocates real arrays
            if executable is None:
                return interpret(graph, values)
            return executable.run(values)

    def __call__(self, args, kwargs):
        args = self.jitted._with_free_variables(args)       # read from globals: inputs
        fast = _fast_signature(args, kwargs, scalars=False) if self.jitted._simple else None
        if fast is not None and find_aliases(fast[1]) is None:
            known = self.known_fast.get(fast[0])     # arrays only: a cheaper key
            if known is not None:
                return self._run_known(known, args, kwargs, fast[1], None)
        else:
            fast = None
        return self._guarded(self._call, args, kwargs, fast)

    def _guarded(self, method, args, kwargs, *more):
        """`method` with xlanb's own failures named; on one, the call runs with NumPy."""
        fn = self.jitted.fn
        try:
            with named_internal_errors(fn):
                return method(args, kwargs, *more)
        except InternalCompilerError as exc:
            warnings.warn(f"{exc} `{getattr(fn, '__qualname__', fn)}` runs with NumPy for "
                          "this call.", FallbackWarning, stacklevel=4)
            return self._numpy_call(args, kwargs)
        except AliasingError as exc:      # arguments share memory in a way no trace can
            self.report.record_break("aliased arguments", exc.location, exc.detail)
            return self._numpy_call(args, kwargs)   # (other dtypes): NumPy's own call
        except TracerLeakError as exc:    # it assigns a global: a Python side effect
            self.report.record_break("assigns a global", exc.location, exc.detail)
            return self._numpy_call(args, kwargs)
        except ArraySubclassError as exc:  # np.matrix & co.: refused before tracing
            self.report.record_break("ndarray subclass argument", exc.location, exc.detail)
            return self._numpy_call(args, kwargs)
        except UnsupportedDTypeError as exc:   # strings, records, '>f8', an operation on
            self.report.record_break("unsupported dtype", exc.location, exc.detail)
            leaves, key = self.jitted.signature(args, kwargs)     # times not lowered:
            self._choice(key, leaves).numpy_only = f"unsupported dtype: {exc.detail}"
            return self._numpy_call(args, kwargs)             # later calls skip the trace

    def _numpy_call(self, args, kwargs):
        """The user's function with NumPy, on the user's arguments (without the values of
        its free variables, which it reads itself)."""
        if self.jitted._sources:
            args = args[:-1]
        return self.jitted.fn(*args, **kwargs)

    def _call(self, args, kwargs, fast):
        leaves, key = self.jitted.signature(args, kwargs)
        known = self.paths.get(key)
        if known is None:                              # the first call
            result = self._clustered(args, kwargs, leaves, key)
            known = self.paths.get(key)
            if fast is not None and known is not None:
                self.known_fast[fast[0]] = known
            return result
        return self._run_known(known, args, kwargs, leaves, key)

    def _run_known(self, known: "PathChoice", args, kwargs, leaves, key):
        """A call of a signature seen before: the faster of its compiled path (the whole
        program, or tracing with clusters) and plain NumPy."""
        path, timed = known.next_path()
        start = time.perf_counter() if timed else 0.0
        if path == "numpy":                          # (no trace runs: nothing to suspend)
            result = self._numpy_call(args, kwargs)
        elif known.whole is not None:                 # run as `jit` runs it
            whole = known.whole
            self.report.record_cluster(whole.cache_text, whole.ops,
                                       [k.name for k in whole.kernels], 0.0)
            result = whole.call_flat(leaves)
        else:
            result = self._guarded(self._clustered_again, args, kwargs, leaves, key)
        if timed:
            known.record(path, time.perf_counter() - start)
        return result

    def _clustered_again(self, args, kwargs, leaves, key):
        if key is None:
            leaves, key = self.jitted.signature(args, kwargs)
        return self._clustered(args, kwargs, leaves, key)

    def _clustered(self, args, kwargs, leaves, key):
        """Trace the call, compiling and running a cluster at each break."""
        fn = self.jitted._function_to_trace()
        _, in_tree, _ = flatten_args(args, kwargs, self.jitted.static_argnums)
        statics = self.jitted._static_leaves.setdefault(in_tree, set())
        self.call_compile_seconds = 0.0

        def trace_once(static_leaves):
            context = _ClusteringContext(self, getattr(fn, "__name__", "main"))
            return context, trace(fn, args, kwargs, self.jitted.static_argnums,
                                  context=context, static_leaves=static_leaves,
                                  scalars_traced=True)
        try:
            context, traced = trace_learning_statics(trace_once, statics)
        except _TraceTooLong:
            choice = self._choice(key, leaves)
            choice.numpy_only = f"its trace took more than {TRACE_BUDGET_SECONDS:g} s"
            with suspended():                    # nothing was written back: run it anew
                return self._numpy_call(args, kwargs)
        if not context.breaks and not traced.flag_leaves:    # x.flags: traced per call
            compiled = self._whole_program(traced)
            if compiled is not None:
                key = self.jitted.signature(args, kwargs)[1]       # with learned statics
                self._choice(key, leaves).whole = compiled
                return compiled.call_flat(leaves)
        self._choice(key, leaves)
        graph = traced.graph
        outputs = self.run_cluster(graph.params, graph.outputs, graph.name,
                                   context.input_values)
        outputs = finish_call(traced, context.input_values, leaves, list(outputs))
        return traced.unflatten_outputs(outputs)

    def _choice(self, key, leaves) -> "PathChoice":
        if key not in self.paths:
            self.paths[key] = self.report.paths[_describe_leaves(leaves)] = PathChoice()
        return self.paths[key]

    def _whole_program(self, traced):
        """A break-free trace as a jit program (None if it had to run op by op)."""
        from .api import Compiled
        text, executable = self.compiled_cluster(traced.graph)
        if executable is None:
            return None
        compiled = Compiled(executable, traced)
        compiled.cache_text = text
        compiled.ops = len(traced.graph.nodes) - len(traced.graph.params)
        self.report.record_cluster(text, compiled.ops, [k.name for k in executable.kernels],
                                   self.compile_seconds.get(text, 0.0))
        return compiled


def _describe_leaves(leaves) -> str:
    """`f64[256,256], float`: a signature as the report shows it."""
    return ", ".join(f"{leaf.dtype}[{','.join(map(str, leaf.shape))}]"
                     if isinstance(leaf, np.ndarray) else type(leaf).__name__
                     for leaf in leaves)


class FallbackWarning(UserWarning):
    """Part of a `must_compile=False` function ran with NumPy after an internal failure."""
