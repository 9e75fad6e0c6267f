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

from dataclasses import dataclass, field
from typing import Any

import numpy as np

import xlanb_runtime
from xlanb_runtime.ir import Graph, print_graph

from .pytree import tree_map
from .tracing.source import user_location
from .tracing.tracer import TraceContext, Tracer, trace


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
        """Compile and run everything traced so far; live tracers become concrete inputs."""
        live = [t for t in self.live_tracers() if t.node.op.value != "parameter"]
        if not live:
            return
        nodes = list({id(t.node): t.node for t in live}.values())
        values = self.clusterer.run_cluster(Graph(list(self.params), nodes, self.name),
                                            self.input_values, self.report)
        by_node = {id(n): v for n, v in zip(nodes, values)}
        for tracer in live:
            tracer.node = self.new_param(tracer.shape, tracer.dtype,
                                         by_node[id(tracer.node)]).node

    def materialize(self, tracer: Tracer, what: str) -> np.ndarray:
        self.report.breaks.append(ClusterBreak(what, user_location(),
                                               "needs a concrete value (Python control flow "
                                               "or conversion)"))
        self.flush()
        return self.input_values[tracer.node.arg]

    def call_unsupported(self, func, args: tuple, kwargs: dict, what: str) -> Any:
        self.report.breaks.append(ClusterBreak(what, user_location(),
                                               "no compiled lowering (unsupported or "
                                               "value-dependent output shape)"))
        self.flush()
        concrete = tree_map(lambda v: self.input_values[v.node.arg]
                            if isinstance(v, Tracer) else v, (args, kwargs))
        result = func(*concrete[0], **concrete[1])
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
            executable = xlanb_runtime.compile(graph, self.jitted.target, self.jitted.options)
            self.executables[text] = executable
        report.clusters.append({"ops": len(graph.nodes) - len(graph.params),
                                "kernels": len(executable.kernels),
                                "kernel_names": [k.name for k in executable.kernels]})
        return executable.run(list(input_values))

    def __call__(self, args, kwargs):
        fn = self.jitted.fn
        context = _ClusteringContext(self, getattr(fn, "__name__", "main"))
        traced = trace(fn, args, kwargs, self.jitted.static_argnums, context=context)
        outputs = self.run_cluster(traced.graph, context.input_values, context.report)
        outputs = list(outputs)
        for index, value in traced.const_outputs.items():
            outputs[index] = value
        self.report = context.report
        return traced.unflatten_outputs(outputs)
