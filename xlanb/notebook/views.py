"""The report as ipywidgets: a headline over six tabs.

    Timeline | Graph | Timing | Memory | IR | Kernels

Charts are the report's PNGs (`Report.pngs()`, rendered once and shared with the HTML
fallback) in `Image` widgets; IR and kernel sources are escaped text in `<pre>`.  Returns
None when ipywidgets is not installed: the display bundle's HTML then stands in.
"""
from __future__ import annotations

from html import escape

from .report import headline, timing_lines

TABS = ("Timeline", "Graph", "Timing", "Memory", "IR", "Kernels")


def _pre(widgets, text: str):
    return widgets.HTML(f'<pre style="max-height:40em;overflow:auto;font-size:12px">'
                        f'{escape(text)}</pre>')


def report_widget(report):
    try:
        import ipywidgets as widgets
    except ImportError:
        return None
    data, pngs = report.data, report.pngs()
    charts = [widgets.Image(value=pngs[name], format="png",
                            layout=widgets.Layout(max_width="100%", height="auto"))
              for name in ("timeline", "graph", "timing", "memory")]
    kernels = data.get("kernels", [])
    sources = widgets.Accordion(children=[_pre(widgets, k.get("source", "")) for k in kernels])
    for i, k in enumerate(kernels):
        sources.set_title(i, f"{k['name']} ({k['kind']}): {', '.join(k['ops'])}")
    tab = widgets.Tab(children=charts + [_pre(widgets, data.get("ir") or "(no IR)"),
                                         sources])
    for i, title in enumerate(TABS):
        tab.set_title(i, title)
    lines = [headline(data)] + timing_lines(data)
    fallback = data.get("fallback")
    if fallback and fallback.get("breaks"):
        lines.append(f"{len(fallback['breaks'])} parts ran with NumPy: " + "; ".join(
            f"{b['location'] or '?'} {b['what']}" for b in fallback["breaks"]))
    header = widgets.HTML("<br>".join(escape(line) for line in lines))
    box = widgets.VBox([header, tab])
    box.add_class("xlanb-report-widget")
    return box
