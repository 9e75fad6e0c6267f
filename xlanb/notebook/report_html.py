"""Static HTML of a report: the fallback for front ends without the xlanb renderer, and
`Report.save_html`.

Tables and text come from the report dict and every piece of it goes through
`html.escape` (kernel sources, IR, names, user lines): nothing from the compiler or the
user's code is ever written into the page as markup.  Charts are PNGs embedded as
`data:image/png;base64` URIs, so the file stands alone.
"""
from __future__ import annotations

import base64
from html import escape

from .report import format_bytes, format_seconds, headline, timing_lines

CHARTS = (("timeline", "Compile timeline"), ("graph", "Fused-kernel graph"),
          ("timing", "Timing: op by op vs fused, predicted vs measured"),
          ("memory", "Peak temporary memory"))

_TABLE = ('border="1" cellpadding="3" '
          'style="border-collapse:collapse;border-color:#ccc;margin:4px 0;text-align:left"')


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f'<table class="xlanb-table" {_TABLE}><tr>{head}</tr>{body}</table>'



def _png(name: str, title: str, png: bytes) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure class="xlanb-chart xlanb-chart-{escape(name)}" style="margin:8px 0">'
            f'<figcaption><b>{escape(title)}</b></figcaption>'
            f'<img alt="{escape(title)}" style="max-width:100%" '
            f'src="data:image/png;base64,{data}"></figure>')


def _pre(text: str) -> str:
    return (f'<pre style="max-height:30em;overflow:auto;background:#f7f7f7;padding:4px">'
            f'{escape(text)}</pre>')


def render_fragment(data: dict, pngs: dict[str, bytes]) -> str:
    parts = ['<div class="xlanb-report" style="font-family:sans-serif;font-size:13px">',
             f"<h3 class=\"xlanb-headline\">{escape(headline(data))}</h3>"]
    cell = data.get("cell")
    if cell:
        parts.append(f"<p>inputs: <code>{escape(', '.join(cell['inputs']) or '-')}</code>; "
                     f"outputs: <code>{escape(', '.join(cell['outputs']) or '-')}</code></p>")
    for line in timing_lines(data):
        parts.append(f"<p>{escape(line)}</p>")
    fallback = data.get("fallback")
    if fallback and fallback.get("breaks"):
        parts.append(f"<h4>Ran with NumPy ({len(fallback['breaks'])} breaks, "
                     f"{len(fallback['clusters'])} compiled clusters)</h4>")
        parts.append(_table(["where", "what", "why"],
                            [[b["location"] or "?", b["what"], b["reason"]]
                             for b in fallback["breaks"]]))
    measured = (data.get("timings") or {}).get("kernels", {})
    parts.append("<h4>Kernels</h4>")
    parts.append(_table(
        ["kernel", "kind", "ops", "predicted", "measured", "Numba compile", "user lines"],
        [[k["name"], k["kind"], ", ".join(k["ops"]), format_seconds(k["predicted_seconds"]),
          format_seconds(measured.get(k["name"])), format_seconds(k["compile_seconds"]),
          ", ".join(k.get("locations", []))] for k in data.get("kernels", [])]))
    memory = data.get("memory") or {}
    if memory:
        parts.append(_table(["peak temporaries op by op", "fused", "arguments", "outputs"],
                            [[format_bytes(memory.get("temp_bytes_unfused")),
                              format_bytes(memory.get("temp_bytes_fused")),
                              format_bytes(memory.get("argument_bytes")),
                              format_bytes(memory.get("output_bytes"))]]))
    for name, title in CHARTS:
        if name in pngs:
            parts.append(_png(name, title, pngs[name]))
    decisions = [(k["name"], d) for k in data.get("kernels", []) for d in k.get("decisions", [])]
    if decisions:
        parts.append("<details><summary>Fusion decisions</summary>"
                     + _table(["kernel", "decision"], [list(d) for d in decisions])
                     + "</details>")
    if data.get("ir"):
        parts.append(f"<details><summary>Optimized IR</summary>{_pre(data['ir'])}</details>")
    kernels = data.get("kernels", [])
    if kernels:
        parts.append("<details><summary>Kernel sources</summary>")
        for k in kernels:
            parts.append(f"<details style=\"margin-left:1em\"><summary>{escape(k['name'])}"
                         f"</summary>{_pre(k.get('source', ''))}</details>")
        parts.append("</details>")
    parts.append("</div>")
    return "\n".join(parts)


def render_page(data: dict, pngs: dict[str, bytes]) -> str:
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{escape('xlanb report: ' + data['name'])}</title></head>\n<body>\n"
            f"{render_fragment(data, pngs)}\n</body></html>\n")
