"""Auto-clustering (`jit(f, must_compile=False)`): compile what can be, run the rest eagerly.

Like TensorFlow's auto-clustering or torch.compile's graph breaks.  Each call runs `f` on
tracers; when it reaches something the compiler cannot take (an unsupported function, a
value-dependent shape, Python control flow on a traced value), the graph so far becomes a
cluster: it is compiled (cached by its structure), run, and every live traced value is
replaced by its concrete result as a new input.  The unsupported call then runs with NumPy
and tracing resumes.  `f.report` lists every cluster and every break with its reason and
the user's line.

Cost: `f` is re-traced on every call (its control flow may depend on values), so per-call
overhead is that of tracing, and each break writes the live values out to memory.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import xlanb_runtime
from xlanb_runtime.ir import Graph, Op, interpret, print_graph

from .errors import InternalCompilerError
from .internal_errors import named_internal_errors
from .pytree import tree_map
from .tracing.boundary import finish_call
from .tracing.capture import suspended
from .tracing.source import user_location
from .tracing.tracer import (TraceContext, Tracer, flatten_args, trace,
                             trace_learning_statics)
from .tracing.views import apply_steps


@dataclass
class ClusterBreak:
    what: str              # np.unique / bool() / ...
    location: str | None
    reason: str


@dataclass
class AutoClusterReport:
    clusters: list[dict] = field(default_factory=list)
    breaks: list[ClusterBreak] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"auto-clustering: {len(self.clusters)} compiled clusters, "
                 f"{len(self.breaks)} breaks"]
        for i, c in enumerate(self.clusters):
            lines.append(f"  cluster {i}: {c['ops']} ops in {c['kernels']} kernels")
        for b in self.breaks:
            lines.append(f"  break at {b.location or '?'}: {b.what}: {b.reason}")
        return "\n".join(lines)


class _ClusteringContext(TraceContext):
    def __init__(self, clusterer: "AutoClusterer", name: str):
        super().__init__(name)
        self.clusterer = clusterer
        self.report = AutoClusterReport()

    def flush(self) -> None:
        """Compile and run everything traced so far; live roots become concrete inputs
        (views read through their roots, so they follow)."""
        live = [t for t in self.live_tracers()
                if t.root is None and t.node.op not in (Op.PARAMETER, Op.CONSTANT)]
        if not live:
            return
        nodes = list({id(t.node): t.node for t in live}.values())
        values = self.clusterer.run_cluster(Graph(list(self.params), nodes, self.name),
                                            self.input_values, self.report)
        by_node = {id(n): v for n, v in zip(nodes, values)}
        for tracer in live:
            tracer.rebind(self.new_param(tracer.shape, tracer.dtype,
                                         by_node[id(tracer.node)]).node)

    def value_of(self, tracer: Tracer) -> np.ndarray:
        """The concrete value of a tracer whose root is an input (after `flush`)."""
        root = tracer.root if tracer.root is not None else tracer
        value = self.input_values[root.node.arg]
        return apply_steps(value, tracer.steps) if tracer.root is not None else value

    def materialize(self, tracer: Tracer, what: str) -> np.ndarray:
        self.report.breaks.append(ClusterBreak(what, user_location(),
                                               "needs a concrete value (Python control flow "
                                               "or conversion)"))
        self.flush()
        return self.value_of(tracer)

    def call_unsupported(self, func, args: tuple, kwargs: dict, what: str) -> Any:
        """Run `func` with NumPy on copies of the traced values; writes it makes to them
        (`x.sort()`, `np.random.shuffle(x)`) become writes to the traced arrays."""
        self.report.breaks.append(ClusterBreak(what, user_location(),
                                               "no compiled lowering (unsupported or "
                                               "value-dependent output shape)"))
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
        return tree_map(lambda v: self.new_input(v) if isinstance(v, np.ndarray) else v,
                        result)


class AutoClusterer:
    """Runs a JitFunction with must_compile=False."""

    def __init__(self, jitted):
        self.jitted = jitted
        self.executables: dict[str, Any] = {}
        self.report = AutoClusterReport()

    def run_cluster(self, graph: Graph, input_values, report: AutoClusterReport):
        text = print_graph(graph, show_locations=False)
        executable = self.executables.get(text)
        if executable is None:
            try:
                with named_internal_errors(self.jitted.fn):
                    executable = xlanb_runtime.compile(graph, self.jitted.target,
                                                       self.jitted.options)
            except InternalCompilerError as exc:
                warnings.warn(f"{exc} The cluster runs op by op with NumPy instead.",
                              FallbackWarning, stacklevel=4)
                executable = _Interpreted(graph)
            self.executables[text] = executable
        report.clusters.append({"ops": len(graph.nodes) - len(graph.params),
                                "kernels": len(executable.kernels),
                                "kernel_names": [k.name for k in executable.kernels]})
        with suspended():                 # the program allocates real arrays
            return executable.run(list(input_values))

    def __call__(self, args, kwargs):
        fn = self.jitted.fn
        try:
            with named_internal_errors(fn):
                return self._call(fn, args, kwargs)
        except InternalCompilerError as exc:
            warnings.warn(f"{exc} `{getattr(fn, '__qualname__', fn)}` runs with NumPy for "
                          "this call.", FallbackWarning, stacklevel=3)
            return fn(*args, **kwargs)

    def _call(self, fn, args, kwargs):
        leaves, in_tree, _ = flatten_args(args, kwargs, self.jitted.static_argnums)
        statics = self.jitted._static_leaves.setdefault(in_tree, set())

        def trace_once(static_leaves):
            context = _ClusteringContext(self, getattr(fn, "__name__", "main"))
            return context, trace(fn, args, kwargs, self.jitted.static_argnums,
                                  context=context, static_leaves=static_leaves,
                                  scalars_traced=True)
        context, traced = trace_learning_statics(trace_once, statics)
        outputs = self.run_cluster(traced.graph, context.input_values, context.report)
        outputs = finish_call(traced, context.input_values, leaves, list(outputs))
        self.report = context.report
        return traced.unflatten_outputs(outputs)


class _Interpreted:
    """A cluster that failed to compile, run by the reference interpreter (NumPy)."""

    kernels: tuple = ()

    def __init__(self, graph: Graph):
        self.graph = graph

    def run(self, values):
        return interpret(self.graph, values)


class FallbackWarning(UserWarning):
    """Part of a `must_compile=False` function ran with NumPy after an internal failure."""
