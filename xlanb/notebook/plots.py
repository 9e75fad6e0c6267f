"""The report's four charts as matplotlib Figures, drawn from the report dict alone.

Figures are made with `matplotlib.figure.Figure` (Agg canvas), never through pyplot, so
they do not pile up in pyplot's figure list or show twice under the inline backend.

  timeline  one bar per phase (trace, each pass, fusion, codegen, each Numba compile) on a
            time axis in ms, coloured by category
  graph     the optimized IR in layers (topological generations, left to right); nodes
            coloured by fusion kernel, values passed through memory drawn solid and thick,
            values kept in registers inside a kernel dashed and thin
  timing    total time op by op / NumPy / fused; per kernel predicted beside measured
  memory    peak temporaries op by op and after fusion (+ arguments and outputs)
"""
from __future__ import annotations

import io
import sys

from .report import format_bytes, format_seconds, output_labels, plural, run_label

CATEGORY_COLOURS = {"trace": "#4c72b0", "pass": "#55a868", "fusion": "#dd8452",
                    "codegen": "#8172b3", "compile": "#c44e52", "tier": "#937860",
                    "other": "#8c8c8c"}
CATEGORY_LABELS = {"trace": "tracing", "pass": "IR pass", "fusion": "fusion",
                   "codegen": "code generation", "compile": "Numba compile",
                   "tier": "NumPy tier / switch-over", "other": "other"}
NO_KERNEL = "#d9d9d9"                    # parameters and constants (not in any kernel)
MAX_DPI_PIXELS = 2400                    # cap on a PNG's longest side


def _figure(width: float, height: float):
    from matplotlib.figure import Figure
    _show_inline(Figure)
    return Figure(figsize=(width, height), layout="constrained")


def _show_inline(figure_class) -> None:
    """In IPython, make a bare Figure display as a PNG even when pyplot's inline backend
    was never set up (our figures do not go through pyplot)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return
    png = shell.display_formatter.formatters.get("image/png")
    if png is None:
        return
    try:
        png.lookup_by_type(figure_class)
    except KeyError:
        png.for_type(figure_class, figure_png)


def _empty(fig, ax, message: str) -> None:
    ax.set_axis_off()
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes,
            color="#555555")


def figure_png(fig, dpi: int = 100) -> bytes:
    """PNG bytes of a figure, at a dpi that keeps its longest side under MAX_DPI_PIXELS.

    Charts have few colours, so a 128-colour palette PNG looks the same at about a third
    of the bytes (they are stored twice in a saved notebook: HTML and widget state)."""
    width, height = fig.get_size_inches()
    dpi = min(dpi, int(MAX_DPI_PIXELS / max(width, height)))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, facecolor="white")
    try:
        from PIL import Image
    except ImportError:                                  # Pillow comes with matplotlib
        return buf.getvalue()
    buf.seek(0)
    image = Image.open(buf).convert("RGB").quantize(colors=128,
                                                     method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def kernel_colours(data: dict) -> dict[str, str]:
    """A colour per kernel name, stable across the charts of one report."""
    from matplotlib import colormaps
    names = [k["name"] for k in data.get("kernels", [])]
    palette = [colormaps[m](i) for m, n in (("Set3", 12), ("Pastel1", 9), ("Pastel2", 8))
               for i in range(n)]                  # light colours, so black labels read
    palette = [c for c in palette if max(c[:3]) - min(c[:3]) > 0.1]   # greys mean "input"
    return {name: palette[i % len(palette)] for i, name in enumerate(names)}


# -- timeline ---------------------------------------------------------------------------
def plot_timeline(data: dict):
    phases = data.get("phases", [])
    fig = _figure(9, min(1.2 + 0.28 * max(len(phases), 1), 14))
    ax = fig.add_subplot()
    if not phases:
        _empty(fig, ax, "no compile phases recorded")
        return fig
    total = max(p["start"] + p["seconds"] for p in phases) * 1e3
    for row, p in enumerate(phases):
        colour = CATEGORY_COLOURS.get(p["category"], CATEGORY_COLOURS["other"])
        start, width = p["start"] * 1e3, p["seconds"] * 1e3
        ax.broken_barh([(start, max(width, total * 0.002))], (row - 0.4, 0.8),
                       facecolors=colour)
        ax.text(start + width + total * 0.01, row, format_seconds(p["seconds"]),
                va="center", fontsize=7, color="#333333")
    ax.set_yticks(range(len(phases)), [p["name"] for p in phases], fontsize=8)
    ax.set_ylim(len(phases) - 0.5, -0.5)                 # first phase on top
    ax.set_xlim(0, total * 1.15)
    ax.set_xlabel("time since tracing began (ms)")
    used = list(dict.fromkeys(p["category"] for p in phases))
    per_category = {c: sum(p["seconds"] for p in phases if p["category"] == c) for c in used}
    spent = ", ".join(f"{CATEGORY_LABELS.get(c, c)} {format_seconds(s)}"
                      for c, s in per_category.items())
    ax.set_title(f"Compile timeline of {data['name']}: {format_seconds(total / 1e3)} in "
                 f"total\n({spent})", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color=CATEGORY_COLOURS.get(c, CATEGORY_COLOURS["other"]),
                             label=CATEGORY_LABELS.get(c, c)) for c in used],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False,
              title="phase kind", title_fontsize=8)
    return fig


# -- fused-kernel graph ---------------------------------------------------------------------
def graph_layers(data: dict):
    """(networkx DiGraph whose nodes carry a `layer`, node dicts by id).

    Layers are topological generations, except that constants move down to just above
    their first user (no long edges from the top).  Within a layer, nodes are added in
    the order of their predecessors' mean position (one barycentre sweep), which is the
    order `multipartite_layout` keeps: fewer crossing edges."""
    import networkx as nx
    graph = data.get("graph") or {}
    nodes = {n["id"]: n for n in graph.get("nodes", [])}
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    for e in graph.get("edges", []):
        g.add_edge(e["src"], e["dst"], fused=e["fused"])
    layer = {}
    for depth, generation in enumerate(nx.topological_generations(g)):
        for node in generation:
            layer[node] = depth
    for node, info in nodes.items():
        users = [layer[u] for u in g.successors(node)]
        if info["op"] == "constant" and users:
            layer[node] = min(users) - 1
    order: dict[int, float] = {}
    for depth in range(max(layer.values(), default=-1) + 1):
        members = [n for n in nodes if layer[n] == depth]
        def barycentre(n, members=members):
            preds = [order[p] for p in g.predecessors(n) if p in order]
            return sum(preds) / len(preds) if preds else members.index(n) - len(members) / 2
        for rank, n in enumerate(sorted(members, key=barycentre)):
            order[n] = rank - (len(members) - 1) / 2       # layers are centred
    ordered = nx.DiGraph()
    for n in sorted(nodes, key=lambda n: (layer[n], order[n])):
        ordered.add_node(n, layer=layer[n])
    ordered.add_edges_from(g.edges(data=True))
    return ordered, nodes


def node_label(node: dict, param_names: list[str], param_index: dict[int, int]) -> str:
    if node.get("label"):
        return node["label"]
    if node["op"] == "parameter":
        index = param_index[node["id"]]
        return param_names[index] if index < len(param_names) else f"arg{index}"
    return node["op"]


def plot_graph(data: dict):
    import networkx as nx
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    g, nodes = graph_layers(data)
    outputs = set((data.get("graph") or {}).get("outputs", []))
    out_names = output_labels(data)
    unused = [n for n in g if nodes[n]["op"] == "parameter" and g.degree(n) == 0
              and n not in outputs]
    g.remove_nodes_from(unused)                         # inputs no op reads
    if len(g) == 0:
        fig = _figure(6, 2)
        _empty(fig, fig.add_subplot(), "no graph in this report")
        return fig
    layers = max(nx.get_node_attributes(g, "layer").values()) + 1
    widest = max(sum(1 for n in g if g.nodes[n]["layer"] == i) for i in range(layers))
    fig = _figure(min(4.5 + 1.3 * widest, 20), min(1.5 + 0.5 * layers, 24))
    ax = fig.add_subplot()
    ax.set_axis_off()
    pos = nx.multipartite_layout(g, subset_key="layer", align="horizontal")
    pos = {n: (x, -y) for n, (x, y) in pos.items()}           # first layer on top
    colours = kernel_colours(data)
    small = len(nodes) > 60
    params = sorted(n for n in nodes if nodes[n]["op"] == "parameter")
    param_index = {n: i for i, n in enumerate(params)}
    margin = 9 if small else 16                     # points between box and arrow tip
    memory = [(u, v) for u, v, d in g.edges(data=True) if not d["fused"]]
    fused = [(u, v) for u, v, d in g.edges(data=True) if d["fused"]]
    common = dict(ax=ax, arrows=True, arrowsize=8 if small else 11, node_size=0,
                  min_source_margin=margin, min_target_margin=margin)
    nx.draw_networkx_edges(g, pos, edgelist=memory, width=2.2, edge_color="#333333",
                           style="solid", **common)
    nx.draw_networkx_edges(g, pos, edgelist=fused, width=1.0, edge_color="#888888",
                           style="dashed", **common)
    shared = False
    for n in g:
        node = nodes[n]
        kernels = node["kernels"]
        shared |= len(kernels) > 1
        label = node_label(node, data.get("param_names") or [], param_index)
        if n in outputs:
            label += f" \u2192 {out_names.get(n, 'out')}"
        x, y = pos[n]
        ax.text(x, y, label, ha="center", va="center", fontsize=6 if small else 8,
                zorder=3, bbox=dict(boxstyle="round,pad=0.35",
                                    facecolor=colours.get((kernels or [None])[0], NO_KERNEL),
                                    edgecolor="#333333",
                                    linewidth=2.0 if len(kernels) > 1 else 0.8,
                                    linestyle="--" if len(kernels) > 1 else "-"))
    kernels = data.get("kernels", [])
    handles = [Patch(facecolor=colours[k["name"]], edgecolor="#333333",
                     label=f"{k['name']} ({k['kind']}, {len(k['ops'])} ops)")
               for k in kernels[:16]]
    if len(kernels) > 16:
        handles.append(Patch(color="white", label=f"... {len(kernels) - 16} more"))
    handles += [Patch(facecolor=NO_KERNEL, edgecolor="#333333", label="input / constant"),
                Line2D([], [], color="#333333", lw=2.2, label="value through memory"),
                Line2D([], [], color="#888888", lw=1.0, ls="--",
                       label="fused: stays in registers")]
    if shared:
        handles.append(Patch(facecolor="white", edgecolor="#333333", lw=2.0, ls="--",
                             label="recomputed in several kernels"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7,
              title="colour = kernel (fusion group)", title_fontsize=8, frameon=False)
    s = data["summary"]
    ax.set_title(f"Fused-kernel graph of {data['name']}: {plural(s['ops'], 'op')} in "
                 f"{plural(s['kernels'], 'kernel')}; data flows downwards", fontsize=10)
    ax.margins(0.1, 0.12)
    return fig


# -- timing ----------------------------------------------------------------------------------
def _unit(values: list[float]) -> tuple[float, str]:
    top = max([v for v in values if v] or [1.0])
    if top >= 1:
        return 1.0, "s"
    if top >= 1e-3:
        return 1e3, "ms"
    return 1e6, "µs"


def plot_timing(data: dict):
    timings = data.get("timings") or {}
    compare = data.get("compare") or {}
    kernels = data.get("kernels", [])
    fig = _figure(11, max(2.8, min(1.5 + 0.35 * len(kernels), 12)))
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.4])
    totals = []
    if compare.get("numpy_seconds") is not None:
        totals.append(("NumPy (eager)", compare["numpy_seconds"], "#8c8c8c"))
    unfused = compare.get("op_by_op_seconds", timings.get("unfused_seconds"))
    if unfused is not None:
        totals.append(("op by op\n(interpreter)", unfused, "#dd8452"))
    fused = compare.get("xlanb_seconds", timings.get("fused_seconds"))
    if fused is not None:
        totals.append((run_label(data).replace(" (", "\n("), fused, "#4c72b0"))
    if not totals:
        _empty(fig, left, "whole-program time not measured\n(%%xla --compare measures "
                          "it;\nin a script: executable.profile(args))")
    else:
        scale, unit = _unit([t[1] for t in totals])
        y = range(len(totals))
        left.barh(y, [t[1] * scale for t in totals], color=[t[2] for t in totals])
        left.set_yticks(y, [t[0] for t in totals], fontsize=8)
        left.invert_yaxis()
        for i, (_, seconds, _) in enumerate(totals):
            text = format_seconds(seconds)
            if fused and seconds is not fused:
                text += f" = {seconds / fused:.1f}x"
            left.text(seconds * scale, i, "  " + text, va="center", fontsize=7)
        left.set_xlim(0, max(t[1] for t in totals) * scale * 1.55)
        left.set_xlabel(f"time per call ({unit}, median)")
        left.set_title(f"Whole program (\u00d7 = times the {run_label(data)} time)",
                       fontsize=10)
        left.grid(axis="x", alpha=0.3)
    measured = timings.get("kernels", {})
    if not kernels:
        _empty(fig, right, "no kernels")
    else:
        names = [k["name"] for k in kernels]
        predicted = [k.get("predicted_seconds") or 0.0 for k in kernels]
        actual = [measured.get(n) for n in names]
        scale, unit = _unit(predicted + [a or 0.0 for a in actual])
        rows = range(len(names))
        right.barh([r - 0.2 for r in rows], [p * scale for p in predicted], height=0.4,
                   color="#c6dbef", edgecolor="#4c72b0", label="predicted (cost model)")
        right.barh([r + 0.2 for r in rows], [(a or 0.0) * scale for a in actual],
                   height=0.4, color="#4c72b0", label="measured")
        for r, a in zip(rows, actual):
            if a is None:
                right.text(0, r + 0.2, "  not measured", va="center", fontsize=7)
        right.set_yticks(rows, names, fontsize=8)
        right.invert_yaxis()
        right.set_xlabel(f"time per call ({unit})")
        right.set_title("Per kernel: predicted vs measured", fontsize=10)
        right.legend(fontsize=7, loc="lower right")
        right.grid(axis="x", alpha=0.3)
    fig.suptitle(f"Timing of {data['name']}", fontsize=11)
    return fig


# -- memory ------------------------------------------------------------------------------------
def plot_memory(data: dict):
    memory = data.get("memory") or {}
    fig = _figure(8, 2.8)
    ax = fig.add_subplot()
    if not memory:
        _empty(fig, ax, "no memory figures in this report")
        return fig
    rows = [("temporaries,\nop by op", memory.get("temp_bytes_unfused", 0), "#dd8452"),
            ("temporaries,\nfused", memory.get("temp_bytes_fused", 0), "#4c72b0"),
            ("arguments", memory.get("argument_bytes", 0), "#d9d9d9"),
            ("outputs", memory.get("output_bytes", 0), "#d9d9d9")]
    top = max(r[1] for r in rows) or 1
    scale, unit = next(((s, u) for u, s in (("GiB", 2 ** 30), ("MiB", 2 ** 20),
                                             ("KiB", 2 ** 10)) if top >= s), (1, "B"))
    ax.barh(range(len(rows)), [r[1] / scale for r in rows], color=[r[2] for r in rows])
    ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=8)
    ax.invert_yaxis()
    for i, (_, value, _) in enumerate(rows):
        ax.text(value / scale, i, "  " + format_bytes(value), va="center", fontsize=8)
    ax.set_xlim(0, top / scale * 1.3)
    ax.set_xlabel(f"peak bytes ({unit})")
    saved = memory.get("temp_bytes_unfused", 0) - memory.get("temp_bytes_fused", 0)
    note = f"fusion saves {format_bytes(saved)}" if saved > 0 else "fusion saves no memory"
    ax.set_title(f"Peak temporary memory of {data['name']}: {note}", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return fig
