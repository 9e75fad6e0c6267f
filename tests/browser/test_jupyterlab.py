"""The JupyterLab extension in a real browser: a notebook with a `%%xla --compare` cell.

One notebook is opened and run once per module (JupyterLab, a kernel, Numba compiles);
the tests then read the rendered report's DOM: its tabs, the graph (one colour per fusion
group, nodes, fused and memory edges, hover text, click for kernel source, zoom and pan),
the charts, the `%%xla` cell's Python highlighting, the "Run cell with XLA comparison"
command and the dark theme.  Screenshots go to each test's tmp folder and to
/tmp/xlanb-screens.  The expected numbers come from the report data the kernel sent
(read from the notebook model), checked against what this cell must compile to.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

MIME_TYPE = "application/vnd.xlanb.report+json"
TABS = ["Timeline", "Graph", "Timing", "Memory", "IR", "Kernels"]
COMMAND = "xlanb:run-cell-compare"
CELLS = [
    "%load_ext xlanb\n"
    "import numpy as np\n"
    "rng = np.random.default_rng(0)\n"
    "x, y, z = (rng.standard_normal(1000) for _ in range(3))",
    # a reduction, then elementwise work that needs its result: two fusion groups
    "%%xla --compare\n"
    "w = x + y * z\n"
    "s = np.sum(w)\n"
    "t = np.exp(w - s) * 2.0",
    "q = np.sqrt(x * x + y * y)\n"
    "r = q.max()",
]

KERNEL_IDLE = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const session = panel && panel.sessionContext && panel.sessionContext.session;
  return !!(session && session.kernel && session.kernel.status === 'idle');
}"""

ALL_RUN = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const session = panel.sessionContext.session;
  return session && session.kernel && session.kernel.status === 'idle' &&
    panel.content.widgets.every(c => c.model.type !== 'code' || c.model.executionCount);
}"""

REPORT_DATA = """(index) => {
  const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
  for (let i = 0; i < cell.model.outputs.length; i++) {
    const data = cell.model.outputs.get(i).data;
    if (data['%s']) { return data['%s']; }
  }
  return null;
}""" % (MIME_TYPE, MIME_TYPE)


@pytest.fixture(scope="module")
def notebook(lab, browser):
    """The test notebook opened in JupyterLab with all its cells run: (page, report)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, lab.root / "xla_compare.ipynb")
    context = browser.new_context(viewport={"width": 1400, "height": 1500})
    page = context.new_page()
    page.set_default_timeout(120_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    page.goto(f"{lab.url}/lab/tree/xla_compare.ipynb")
    page.wait_for_selector(".jp-Notebook .jp-Cell", state="attached")
    page.wait_for_function(KERNEL_IDLE)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_selector(".jp-Cell .xlanb-report .xlanb-node", state="attached")
    page.wait_for_function(ALL_RUN)
    report = page.evaluate(REPORT_DATA, 1)
    assert report is not None, "the %%xla cell has no report output"
    yield page, report
    context.close()


def cell(page, index: int):
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def show_tab(page, name: str):
    """Click a tab of the first report and return its (visible) panel."""
    report = cell(page, 1).locator(".xlanb-report")
    report.locator(f".xlanb-tab[data-tab='{name}']").click()
    panel = report.locator(f".xlanb-panel-{name.lower()}")
    panel.wait_for(state="visible")
    return panel


def test_report_renders_with_its_tabs(notebook, screens):
    page, report = notebook
    out = cell(page, 1)
    assert out.locator(".xlanb-report").count() == 1
    assert out.locator(".xlanb-tab").all_text_contents() == TABS
    headline = out.locator(".xlanb-headline").text_content()
    assert "8 ops in 2 kernels" in headline, headline
    assert "results agree" in out.locator(".xlanb-compare").text_content()
    # the report renderer is the one shown, not the ipywidgets fallback nor the HTML copy
    assert out.locator(".jp-OutputArea-output .widget-tab").count() == 0
    assert out.locator(".xlanb-panel-graph").is_visible()
    out.screenshot(path=screens / "light-graph-cell.png")
    page.screenshot(path=screens / "light-notebook.png", full_page=True)
    assert page.errors == []


def test_graph_has_one_colour_per_fusion_group(notebook):
    page, report = notebook
    graph = cell(page, 1).locator(".xlanb-graph-svg")
    kernels = [k["name"] for k in report["kernels"]]
    assert len(kernels) == 2                       # reduce_fusion + the loop fusion after it
    nodes = graph.locator("g.xlanb-node")
    drawn = len([n for n in report["graph"]["nodes"]
                 if n["op"] != "parameter" or any(n["id"] in (e["src"], e["dst"])
                                                  for e in report["graph"]["edges"])])
    assert nodes.count() == drawn == 12
    first_kernels = set(graph.evaluate(
        "svg => [...svg.querySelectorAll('g.xlanb-node')].map(g => g.dataset.kernel)"))
    assert first_kernels - {""} == set(kernels)
    colours = set(graph.evaluate(
        "svg => [...svg.querySelectorAll('g.xlanb-node')].map(g => "
        "[...g.classList].find(c => c.startsWith('xlanb-color-')))"))
    assert len(colours - {"xlanb-color-none"}) == len(kernels)
    assert "xlanb-color-none" in colours            # inputs and constants
    # different fusion groups get different fill colours
    fills = set(graph.evaluate(
        "svg => [...svg.querySelectorAll('g.xlanb-node:not(.xlanb-color-none) rect')]"
        ".map(r => getComputedStyle(r).fill)"))
    assert len(fills) == len(kernels)
    edges = {(e["src"], e["dst"], e["fused"]) for e in report["graph"]["edges"]}
    assert graph.locator("path.xlanb-edge").count() == len(edges)   # one arrow per pair
    fused = graph.locator("path.xlanb-edge-fused")
    assert fused.count() == sum(fused for _, _, fused in edges) > 0
    assert fused.first.evaluate("p => getComputedStyle(p).strokeDasharray") != "none"
    assert graph.locator("path.xlanb-edge-memory").first.evaluate(
        "p => getComputedStyle(p).strokeDasharray") == "none"
    assert graph.locator("g.xlanb-node-output").count() == len(set(report["graph"]["outputs"]))


def test_graph_hover_click_zoom_and_pan(notebook, screens):
    page, report = notebook
    out = cell(page, 1)
    graph = out.locator(".xlanb-graph-svg")
    exp = graph.locator("g.xlanb-node[data-op='exponential']")
    title = exp.locator("title").text_content()
    assert "op: exponential" in title and "shape: (1000,)" in title
    assert "dtype: float64" in title and "kernel: fusion.0" in title
    inputs = graph.locator("g.xlanb-node[data-op='parameter'] title").all_text_contents()
    assert sorted(t.splitlines()[0] for t in inputs) == [
        "op: parameter (x)", "op: parameter (y)", "op: parameter (z)"]
    exp.hover()

    exp.click()
    detail = out.locator(".xlanb-graph-detail .xlanb-kernel[data-kernel='fusion.0']")
    source = next(k["source"] for k in report["kernels"] if k["name"] == "fusion.0")
    assert detail.locator("pre").text_content() == source
    in_fusion = [n for n in report["graph"]["nodes"] if "fusion.0" in n["kernels"]]
    assert graph.locator("g.xlanb-node.xlanb-selected").count() == len(in_fusion)
    out.screenshot(path=screens / "light-graph-kernel-selected.png")

    def view_box():
        return [float(v) for v in graph.get_attribute("viewBox").split()]

    home = view_box()
    box = graph.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -300)
    page.wait_for_function(
        "([svg, w]) => parseFloat(svg.getAttribute('viewBox').split(' ')[2]) < w",
        arg=[graph.element_handle(), home[2]])
    zoomed = view_box()
    assert zoomed[2] < home[2] and zoomed[3] < home[3]
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 80, box["y"] + box["height"] / 2 + 40,
                    steps=5)
    page.mouse.up()
    panned = view_box()
    assert panned[0] < zoomed[0] and panned[1] < zoomed[1]
    assert panned[2] == pytest.approx(zoomed[2])
    out.screenshot(path=screens / "light-graph-zoomed.png")
    out.locator(".xlanb-graph-toolbar button", has_text="Fit").click()
    assert view_box() == pytest.approx(home)
    assert page.errors == []


def test_timing_memory_timeline_ir_and_kernel_tabs(notebook, screens):
    page, report = notebook
    timing = show_tab(page, "Timing")
    assert timing.locator(".xlanb-timing-total rect.xlanb-bar").count() == 3
    assert timing.locator(".xlanb-timing-total .xlanb-chart-label").all_text_contents() == [
        "xlanb (fused)", "op by op", "NumPy"]
    assert timing.locator(".xlanb-timing-kernels rect.xlanb-bar").count() == 2 * len(
        report["kernels"])
    cell(page, 1).screenshot(path=screens / "light-timing.png")

    memory = show_tab(page, "Memory")
    assert memory.locator("rect.xlanb-bar").count() == 4
    assert "fusion saves" in memory.locator(".xlanb-chart-title").text_content()
    cell(page, 1).screenshot(path=screens / "light-memory.png")

    timeline = show_tab(page, "Timeline")
    assert timeline.locator("rect.xlanb-bar").count() == len(report["phases"]) > 0
    cell(page, 1).screenshot(path=screens / "light-timeline.png")

    ir = show_tab(page, "IR")
    assert ir.locator("pre").text_content() == report["ir"] != ""

    kernels = show_tab(page, "Kernels")
    assert kernels.locator(".xlanb-kernel pre").all_text_contents() == [
        k["source"] for k in report["kernels"]]
    cell(page, 1).screenshot(path=screens / "light-kernels.png")
    show_tab(page, "Graph")
    assert page.errors == []


def test_xla_cell_is_highlighted_as_python(notebook):
    page, _ = notebook
    editor = cell(page, 1).locator(".cm-content")
    assert editor.get_attribute("data-language") == "python"
    # the body is tokenised as Python: the number literal gets its own highlight span
    assert editor.locator("span", has_text="2.0").count() >= 1


def test_run_cell_with_xla_comparison_command(notebook, screens):
    page, _ = notebook
    assert page.evaluate(f"() => window.jupyterapp.commands.label('{COMMAND}')") == \
        "Run cell with XLA comparison"
    page.evaluate("() => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = 2; }")
    plain = cell(page, 2)
    # the cell toolbar of the active cell has the command's button
    plain.locator(f".jp-cell-toolbar [data-command='{COMMAND}']").wait_for(state="attached")
    # and the command palette lists it
    page.keyboard.press("Control+Shift+C")
    page.locator(".lm-CommandPalette-input").fill("XLA comparison")
    item = page.locator(".lm-CommandPalette-item", has_text="Run cell with XLA comparison")
    item.wait_for(state="visible")
    page.keyboard.press("Escape")

    page.evaluate(f"() => window.jupyterapp.commands.execute('{COMMAND}')")
    plain.locator(".xlanb-report .xlanb-node").first.wait_for(state="attached")
    page.wait_for_function(KERNEL_IDLE)
    source = page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets[2].model.sharedModel"
        ".getSource()")
    assert source.startswith("%%xla --compare\nq = np.sqrt(")
    assert "results agree" in plain.locator(".xlanb-compare").text_content()
    # running it again keeps one magic line
    page.evaluate(f"() => window.jupyterapp.commands.execute('{COMMAND}')")
    page.wait_for_function(KERNEL_IDLE)
    source = page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets[2].model.sharedModel"
        ".getSource()")
    assert source.count("%%xla") == 1
    plain.screenshot(path=screens / "light-command-cell.png")
    assert page.errors == []


def _luminance(css_colour: str) -> float:
    r, g, b = [float(v) for v in css_colour[css_colour.index("(") + 1:-1].split(",")[:3]]
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def test_dark_theme(notebook, screens):
    page, _ = notebook
    out = cell(page, 1)
    light = out.locator(".xlanb-headline").evaluate("e => getComputedStyle(e).color")
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', "
        "{theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    page.wait_for_timeout(500)            # the theme's stylesheet is applied after the flag
    dark = out.locator(".xlanb-headline").evaluate("e => getComputedStyle(e).color")
    assert _luminance(light) < 0.5 < _luminance(dark), (light, dark)
    assert out.locator(".xlanb-report").is_visible()
    assert out.locator(".xlanb-graph-svg g.xlanb-node").count() == 12
    background = out.locator(".xlanb-graph-frame").evaluate(
        "e => getComputedStyle(e).backgroundColor")
    assert _luminance(background) < 0.5, background
    out.screenshot(path=screens / "dark-graph-cell.png")
    show_tab(page, "Timing")
    out.screenshot(path=screens / "dark-timing.png")
    show_tab(page, "Graph")
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', "
        "{theme: 'JupyterLab Light'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")
    assert page.errors == []


def test_labextension_is_installed():
    """The set-up command installed the built extension where JupyterLab finds it."""
    from jupyter_core.paths import jupyter_path
    found = [Path(p) / "xlanb-jupyterlab" / "package.json"
             for p in jupyter_path("labextensions")]
    found = [p for p in found if p.exists()]
    assert found, "xlanb-jupyterlab is not in any labextensions folder: run the set-up"
    meta = json.loads(found[0].read_text())
    assert meta["jupyterlab"]["mimeExtension"] and meta["jupyterlab"]["extension"]
    assert (found[0].parent / "static" / meta["jupyterlab"]["_build"]["load"]
            .removeprefix("static/")).exists()
    listing = subprocess.run([sys.executable, "-m", "jupyter", "labextension", "list"],
                             capture_output=True, text=True, timeout=120)
    text = listing.stdout + listing.stderr
    line = next((ln for ln in text.splitlines() if "xlanb-jupyterlab" in ln), "")
    assert "enabled" in line and "OK" in line, text
