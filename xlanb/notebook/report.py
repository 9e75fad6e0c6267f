"""`Report`: one compile report as data, text, static HTML, matplotlib figures and widgets.

    r = xlanb.notebook.Report(f)                 # a jitted function, Compiled, CompileReport,
    r.plot_timeline(); r.plot_graph()            #   a report dict or its JSON
    r.plot_timing(); r.plot_memory()             # matplotlib Figures (no pyplot state)
    r.save_html("report.html")                   # the same pictures, as PNGs in one file
    r.to_json()                                  # versioned data (schema: report.schema.json)

The data is `CompileReport.to_dict()` (version 1) plus what only the front end knows: the
optimized IR text, the cell that was compiled, the `--compare` measurements and the parts
that fell back to NumPy, and a few derived numbers (`summary`).  Everything a view draws is
read from this dict, so a report saved as JSON draws the same as a live one.
"""
from __future__ import annotations

import json
import math
import os
import re
from typing import Any

import numpy as np

MIME_TYPE = "application/vnd.xlanb.report+json"
SCHEMA_VERSION = 1


class Report:
    """A compile report with its pictures; see the module docstring."""

    def __init__(self, source: Any, *, ir: str | None = None, cell: dict | None = None,
                 compare: dict | None = None, fallback: dict | None = None,
                 param_names: list[str] | None = None):
        data = report_data(source)
        if ir is not None:
            data["ir"] = ir
        if cell is not None:
            data["cell"] = cell
        if compare is not None:
            data["compare"] = compare
        if fallback is not None:
            data["fallback"] = fallback
        if param_names is not None:
            data["param_names"] = list(param_names)
        data.setdefault("ir", "")
        for key in ("cell", "compare", "fallback"):
            data.setdefault(key, None)
        data.setdefault("param_names", [])
        humanize(data, cell_numbers())
        data["summary"] = summarize(data)
        self.data = jsonable(data)
        self._pngs: dict[str, bytes] = {}

    # -- data ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return self.data

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.data, allow_nan=False, **kwargs)

    @classmethod
    def from_json(cls, text: str) -> "Report":
        return cls(json.loads(text))

    def validate(self) -> None:
        """Raise ValueError if the data does not match report.schema.json."""
        from .schema import validate
        validate(self.data)

    # -- pictures ------------------------------------------------------------------------
    def plot_timeline(self):
        from .plots import plot_timeline
        return plot_timeline(self.data)

    def plot_graph(self):
        from .plots import plot_graph
        return plot_graph(self.data)

    def plot_timing(self):
        from .plots import plot_timing
        return plot_timing(self.data)

    def plot_memory(self):
        from .plots import plot_memory
        return plot_memory(self.data)

    def pngs(self) -> dict[str, bytes]:
        """PNG bytes of every chart, rendered once: {timeline, graph, timing, memory}."""
        if not self._pngs:
            from .plots import figure_png
            for name in ("timeline", "graph", "timing", "memory"):
                self._pngs[name] = figure_png(getattr(self, f"plot_{name}")())
        return self._pngs

    # -- output formats ------------------------------------------------------------------
    def to_html(self) -> str:
        """An HTML fragment (escaped text, charts as embedded PNGs)."""
        from .report_html import render_fragment
        return render_fragment(self.data, self.pngs())

    def save_html(self, path) -> None:
        """Write a self-contained HTML page: tables, the four charts, IR and kernels."""
        from .report_html import render_page
        with open(path, "w", encoding="utf-8") as f:
            f.write(render_page(self.data, self.pngs()))

    def __str__(self) -> str:
        return text_summary(self.data)

    def __repr__(self) -> str:
        s = self.data["summary"]
        return (f"<xlanb Report {self.data['name']!r}: {s['ops']} ops in {s['kernels']} "
                f"kernels>")

    def mimebundle(self) -> dict:
        """{report JSON, static HTML, plain text}: what every front end can show."""
        return {MIME_TYPE: self.data, "text/html": self.to_html(), "text/plain": str(self)}

    def _repr_mimebundle_(self, include=None, exclude=None):
        return self.mimebundle()

    def widget(self):
        """An ipywidgets view (tabs), or None when ipywidgets is not installed."""
        from .views import report_widget
        return report_widget(self)


# -- building the data --------------------------------------------------------------------
def report_data(source: Any) -> dict:
    """The report dict of a CompileReport, Compiled, JitFunction, Report, dict or JSON."""
    if isinstance(source, Report):
        return dict(source.data)
    if isinstance(source, str):
        return json.loads(source)
    if isinstance(source, dict):
        return dict(source)
    from xlanb_runtime.report import CompileReport
    if isinstance(source, CompileReport):
        return source.to_dict()
    from ..api import Compiled, JitFunction
    if isinstance(source, Compiled):
        data = source.report.to_dict()
        data["ir"] = source.as_text()
        if data.get("graph"):
            names = output_names(source.traced.out_tree)
            data["graph"]["output_names"] = names + [None] * (
                len(data["graph"].get("outputs", [])) - len(names))
        return data
    if isinstance(source, JitFunction):
        if source._autocluster is not None:
            return autocluster_data(source)
        if source.last_compiled is None:
            raise ValueError(f"`{getattr(source, '__name__', source)}` has not been compiled "
                             "yet: call it once with arguments first")
        return report_data(source.last_compiled)
    raise TypeError(f"cannot make a report from a {type(source).__name__}; pass a jitted "
                    "function, a Compiled, a CompileReport or a report dict")


def autocluster_data(jitted) -> dict:
    """One report for an auto-clustered function: its compiled clusters side by side.

    Phases keep their real times (each cluster's report has its own origin); kernel and
    phase names get a `cluster<i>/` prefix; graph node ids are offset per cluster."""
    clusterer = jitted._autocluster
    executables = list(clusterer.executables.values())
    name = getattr(jitted, "__name__", "main")
    data: dict = {"version": SCHEMA_VERSION, "name": name, "target": jitted.target,
                  "phases": [], "kernels": [], "memory": {}, "cost": {},
                  "graph": {"nodes": [], "edges": [], "outputs": []}, "timings": {},
                  "ir": ""}
    origin = min((e.report.origin for e in executables), default=0.0)
    irs, offset = [], 0
    memory_keys = ("temp_bytes_unfused", "temp_bytes_fused", "argument_bytes", "output_bytes")
    for i, executable in enumerate(executables):
        part = executable.report.to_dict()
        prefix = f"cluster{i}/" if len(executables) > 1 else ""
        shift = executable.report.origin - origin
        for phase in part["phases"]:
            data["phases"].append(dict(phase, name=prefix + phase["name"],
                                       start=phase["start"] + shift))
        for kernel in part["kernels"]:
            data["kernels"].append(dict(kernel, name=prefix + kernel["name"]))
        for key in memory_keys:
            value = part["memory"].get(key, 0)
            data["memory"][key] = max(data["memory"].get(key, 0), value)
        for key, value in part["cost"].items():
            data["cost"][key] = data["cost"].get(key, 0) + value
        graph = part.get("graph") or {}
        params = 0
        for node in graph.get("nodes", []):
            node = dict(node, id=node["id"] + offset,
                        kernels=[prefix + k for k in node["kernels"]])
            if node["op"] == "parameter":
                node["label"] = f"{prefix}in{params}"
                params += 1
            data["graph"]["nodes"].append(node)
        for edge in graph.get("edges", []):
            data["graph"]["edges"].append(dict(edge, src=edge["src"] + offset,
                                               dst=edge["dst"] + offset))
        data["graph"]["outputs"] += [o + offset for o in graph.get("outputs", [])]
        offset += len(graph.get("nodes", []))
        irs.append(f"# cluster {i}\n{executable.as_text()}")
    data["total_seconds"] = max((p["start"] + p["seconds"] for p in data["phases"]),
                                default=0.0)
    data["ir"] = "\n".join(irs)
    data["fallback"] = fallback_data(clusterer.report)
    return data


def output_names(out_tree) -> list[str | None]:
    """The user's name of each output leaf, in `out_tree` order: a returned dict's keys
    (`mean`), then indices and nested keys (`[0]`, `grads['w']`); None for a lone leaf."""
    from xlanb.pytree import DICT, LEAF, NAMEDTUPLE

    names: list[str | None] = []

    def walk(tree, path: str) -> None:
        if tree.kind == LEAF:
            names.append(path or None)
        elif tree.kind == DICT:
            for key, child in zip(tree.meta[1], tree.children):
                walk(child, f"{path}[{key!r}]" if path else str(key))
        elif tree.kind == NAMEDTUPLE:
            for field, child in zip(tree.meta._fields, tree.children):
                walk(child, f"{path}.{field}" if path else field)
        else:
            for i, child in enumerate(tree.children):
                walk(child, f"{path}[{i}]")

    walk(out_tree, "")
    return names


# -- humanizing ---------------------------------------------------------------------------
_XLA_CELL = re.compile(r"<xla-cell-(\d+)(?:\.\d+)?>:(\d+)")
_PY_FILE_LINE = re.compile(r"((?:[^\s:()<>]*/)?([^\s/:()<>]+\.py)):(\d+)")
_BYTES = re.compile(r"\b(\d+) bytes\b")
_USERS = re.compile(r"\b1 users\b")


def cell_numbers() -> dict[str, int]:
    """{file name of a notebook cell's code: its In[N]}, from the running IPython (ipykernel
    compiles each cell from a temporary file named by a hash of its text); {} elsewhere."""
    try:
        from IPython import get_ipython
    except ImportError:
        return {}
    shell = get_ipython()
    names = getattr(getattr(shell, "compile", None), "_filename_map", None) or {}
    return {os.path.basename(str(name)): number for name, number in names.items()}


def humanize_text(text: str, cells: dict[str, int]) -> str:
    """Byte counts as KiB/MiB, "1 user", and notebook locations as "cell [12], line 3"."""
    text = _XLA_CELL.sub(lambda m: f"cell [{m[1]}], line {m[2]}", text)
    if cells:
        text = _PY_FILE_LINE.sub(
            lambda m: f"cell [{cells[m[2]]}], line {m[3]}" if m[2] in cells else m[0], text)
    text = _BYTES.sub(lambda m: format_bytes(int(m[1])), text)
    return _USERS.sub("1 user", text)


def humanize(data: dict, cells: dict[str, int]) -> None:
    """Rewrite, in place, what people read in the report: locations, decisions, breaks."""
    for node in (data.get("graph") or {}).get("nodes", []):
        if node.get("loc"):
            node["loc"] = humanize_text(node["loc"], cells)
    for kernel in data.get("kernels", []):
        for key in ("decisions", "locations"):
            if kernel.get(key):
                kernel[key] = [humanize_text(t, cells) for t in kernel[key]]
        if kernel.get("source"):                  # the header's "# user lines: ..."
            lines = kernel["source"].split("\n")
            kernel["source"] = "\n".join(
                humanize_text(line, cells) if line.startswith("# user lines:") else line
                for line in lines)
    for b in (data.get("fallback") or {}).get("breaks", []):
        if b.get("location"):
            b["location"] = humanize_text(b["location"], cells)
    if data.get("ir") and cells:
        data["ir"] = _PY_FILE_LINE.sub(
            lambda m: f"cell [{cells[m[2]]}], line {m[3]}" if m[2] in cells else m[0],
            data["ir"])


def fallback_data(auto_report) -> dict:
    """The auto-clustering report as data: compiled clusters and the breaks between them."""
    return {"clusters": [dict(c) for c in auto_report.clusters],
            "breaks": [{"what": b.what, "location": b.location, "reason": b.reason}
                       for b in auto_report.breaks]}


def summarize(data: dict) -> dict:
    """Derived numbers the views show in their headlines."""
    nodes = (data.get("graph") or {}).get("nodes", [])
    ops = sum(1 for n in nodes if n["op"] not in ("parameter", "constant"))
    if not nodes:
        ops = sum(len(k["ops"]) for k in data.get("kernels", []))
    kernels = data.get("kernels", [])
    timings = data.get("timings") or {}
    memory = data.get("memory") or {}
    compare = data.get("compare") or {}
    fused, unfused = timings.get("fused_seconds"), timings.get("unfused_seconds")
    speedup = compare.get("speedup_vs_op_by_op")
    if speedup is None and fused and unfused:
        speedup = unfused / fused
    return {
        "ops": ops,
        "kernels": len(kernels),
        "fused_kernels": sum(1 for k in kernels if len(k["ops"]) > 1),
        "compile_seconds": data.get("total_seconds", 0.0),
        "numba_seconds": sum(k.get("compile_seconds", 0.0) for k in kernels),
        "predicted_seconds": sum(k.get("predicted_seconds", 0.0) for k in kernels),
        "measured_seconds": fused,
        "speedup": speedup,
        "temp_bytes_saved": memory.get("temp_bytes_unfused", 0)
        - memory.get("temp_bytes_fused", 0),
        "fallback_breaks": len((data.get("fallback") or {}).get("breaks", [])),
    }


def jsonable(value: Any) -> Any:
    """Plain JSON data: NumPy scalars unwrapped, tuples as lists, NaN/inf as null."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


# -- text ---------------------------------------------------------------------------------
def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def format_bytes(count: float | None) -> str:
    if count is None:
        return "-"
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if abs(count) >= size:
            return f"{count / size:.1f} {unit}"
    return f"{int(count)} B"


def run_label(data: dict) -> str:
    """The compiled run's name as its flags say: "xlanb (no fusion)" for a --no-fusion
    cell, "xlanb (fused)" when a kernel fused ops, else "xlanb"."""
    options = (data.get("cell") or {}).get("options") or {}
    if options.get("fusion") is False:
        return "xlanb (no fusion)"
    if any(len(k.get("ops", [])) > 1 for k in data.get("kernels", [])):
        return "xlanb (fused)"
    return "xlanb"


def output_labels(data: dict) -> dict[int, str]:
    """{output node id: the user's name(s) for it}, for outputs the report names."""
    graph = data.get("graph") or {}
    labels: dict[int, list[str]] = {}
    for node, name in zip(graph.get("outputs", []), graph.get("output_names") or []):
        if name:
            labels.setdefault(node, []).append(name)
    return {node: ", ".join(names) for node, names in labels.items()}


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def headline(data: dict) -> str:
    s = data["summary"]
    return (f"xlanb: {data['name']} ({data['target']}): {plural(s['ops'], 'op')} in "
            f"{plural(s['kernels'], 'kernel')} ({s['fused_kernels']} fused), compiled in "
            f"{format_seconds(s['compile_seconds'])}")


def timing_lines(data: dict) -> list[str]:
    compare, timings = data.get("compare"), data.get("timings") or {}
    lines = []
    if compare:
        parts = [f"xlanb {format_seconds(compare.get('xlanb_seconds'))}"]
        if compare.get("op_by_op_seconds") is not None:
            parts.append(f"op by op {format_seconds(compare['op_by_op_seconds'])} "
                         f"({_ratio(compare.get('speedup_vs_op_by_op'))})")
        if compare.get("numpy_seconds") is not None:
            parts.append(f"NumPy {format_seconds(compare['numpy_seconds'])} "
                         f"({_ratio(compare.get('speedup_vs_numpy'))})")
        lines.append("time: " + ", ".join(parts) + f" (median of {compare.get('repeat', 1)})")
        verdict = "agree" if compare.get("allclose") else "DIFFER"
        lines.append(f"results {verdict} with {compare.get('reference', 'op by op')} "
                     f"(max abs diff {compare.get('max_abs_diff', 0):.3g})")
    elif timings.get("fused_seconds") is not None:
        lines.append(f"time: {run_label(data)} {format_seconds(timings['fused_seconds'])}, "
                     f"op by op "
                     f"{format_seconds(timings.get('unfused_seconds'))} "
                     f"({_ratio(data['summary']['speedup'])})")
    return lines


def _ratio(speedup: float | None) -> str:
    if not speedup:
        return "-"
    return f"xlanb {speedup:.1f}x faster" if speedup >= 1 else \
        f"xlanb {1 / speedup:.1f}x slower"


def text_summary(data: dict) -> str:
    lines = [headline(data)]
    cell = data.get("cell")
    if cell:
        lines.append(f"  inputs: {', '.join(cell['inputs']) or '-'}; "
                     f"outputs: {', '.join(cell['outputs']) or '-'}")
    measured = (data.get("timings") or {}).get("kernels", {})
    for k in data.get("kernels", []):
        lines.append(f"  {k['name']} ({k['kind']}): {', '.join(k['ops'])}; predicted "
                     f"{format_seconds(k['predicted_seconds'])}, measured "
                     f"{format_seconds(measured.get(k['name']))}")
    lines += ["  " + line for line in timing_lines(data)]
    memory = data.get("memory") or {}
    if memory:
        lines.append(f"  peak temporaries: {format_bytes(memory.get('temp_bytes_unfused'))} "
                     f"op by op -> {format_bytes(memory.get('temp_bytes_fused'))} fused")
    fallback = data.get("fallback")
    if fallback and fallback["breaks"]:
        lines.append(f"  ran with NumPy ({plural(len(fallback['breaks']), 'break')}):")
        for b in fallback["breaks"]:
            lines.append(f"    {b['location'] or '?'}: {b['what']}: {b['reason']}")
    return "\n".join(lines)
