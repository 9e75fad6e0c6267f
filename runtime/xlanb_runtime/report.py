"""The compile report: what the compiler did to one program and what it predicts.

A timeline of phases (trace, every pass, fusion, codegen and each kernel's Numba compile),
the kernels with their ops, decisions and predicted times, and memory figures.  `to_json()`
is the data the notebook views and the JupyterLab renderer draw; nothing here renders.
"""
from __future__ import annotations

import json
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar


@dataclass
class Phase:
    name: str
    category: str          # trace | pass | fusion | codegen | compile | other
    start: float           # seconds since the report began
    seconds: float
    detail: dict = field(default_factory=dict)


@dataclass
class CompileReport:
    name: str
    target: str = "cpu"
    phases: list[Phase] = field(default_factory=list)
    kernels: list[dict] = field(default_factory=list)
    memory: dict = field(default_factory=dict)
    cost: dict = field(default_factory=dict)
    # the optimized graph: nodes (id, op, shape, dtype, loc, kernels) and edges (src, dst,
    # fused: the value stays in registers inside one kernel, else it goes through memory)
    graph: dict = field(default_factory=dict)
    # measured seconds per kernel and in total, fused and op by op (filled by profiling)
    timings: dict = field(default_factory=dict)
    ir: str = ""                     # the optimized IR with its fusion groups (as_text)
    origin: float = field(default_factory=time.perf_counter)

    # Set by xlanb.notebook (the runtime never imports the front end): the class that draws
    # a report, so scripts get the notebook's pictures from `save_html` and `plot_*`.
    viewer: ClassVar[Any] = None

    def _view(self):
        if CompileReport.viewer is None:
            raise RuntimeError("report views need the front end: `import xlanb.notebook`")
        return CompileReport.viewer(self)

    def save_html(self, path: str) -> None:
        """The report as a standalone HTML page with its charts (PNG) embedded."""
        self._view().save_html(path)

    def plot_timeline(self):
        return self._view().plot_timeline()

    def plot_graph(self):
        return self._view().plot_graph()

    def plot_timing(self):
        return self._view().plot_timing()

    def plot_memory(self):
        return self._view().plot_memory()

    @contextmanager
    def phase(self, name: str, category: str = "other", **detail):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, category, start, time.perf_counter() - start, **detail)

    def add(self, name: str, category: str, start: float, seconds: float, **detail) -> None:
        self.phases.append(Phase(name, category, start - self.origin, seconds, detail))

    @property
    def total_seconds(self) -> float:
        return max((p.start + p.seconds for p in self.phases), default=0.0)

    def seconds(self, category: str) -> float:
        return sum(p.seconds for p in self.phases if p.category == category)

    def to_dict(self) -> dict:
        data = asdict(self)
        data.pop("origin")
        data["version"] = 1
        data["total_seconds"] = self.total_seconds
        return data

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def __str__(self) -> str:
        lines = [f"compile report: {self.name} ({self.target}), {self.total_seconds * 1e3:.1f} ms"]
        for p in self.phases:
            lines.append(f"  {p.start * 1e3:8.2f} ms  {p.seconds * 1e3:8.2f} ms  "
                         f"{p.category:8s} {p.name}")
        for k in self.kernels:
            lines.append(f"  kernel {k['name']} ({k['kind']}): {', '.join(k['ops'])}")
        return "\n".join(lines)
