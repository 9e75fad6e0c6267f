"""The JupyterLab extension in a real browser: a notebook with a `%%xla --compare` cell.

One notebook (labpage.py) is opened and run once per session (JupyterLab, a kernel,
Numba compiles); the tests then read the rendered report's DOM: its tabs, the graph (one colour per fusion
group, nodes, fused and memory edges, the user's names, hover text shown in the DOM,
click for kernel source, zoom and pan), the wheel scrolling the notebook until the graph
is clicked into, the timing chart (one axis, round ticks, bars proportional to their
values, labels that follow the flags), the `%%xla` cell's Python highlighting, the "Run
cell with XLA comparison" command and the dark theme (the timeline, kernel, memory views
and text sizes in every tab: test_report_views.py).  Screenshots of every tab in both
themes go to each test's tmp folder and to /tmp/xlanb-screens.  The expected numbers come
from the report data the kernel sent (read from the notebook model), checked against what
this cell must compile to.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from labpage import (COMMAND, KERNEL_IDLE, NO_FUSION, REPORT_DATA, TABS, TIP,
                     assert_kernel_source, cell, hover_text, luminance, notebook_scroller,
                     screenshot_tabs, show_tab)


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


def graph_level(out, level: str) -> None:
    """Show the graph of a report at the "kernels" or the "ops" level."""
    button = "Kernels" if level == "kernels" else "Ops"
    out.locator(f".xlanb-graph-toolbar button[data-action='{button}']").click()
    out.locator(f".xlanb-graph-frame[data-level='{level}']").wait_for(state="attached")


def test_graph_starts_at_the_kernel_level(notebook, screens):
    page, report = notebook
    out = cell(page, 1)
    graph = out.locator(".xlanb-graph-svg")
    assert out.locator(".xlanb-graph-frame").get_attribute("data-level") == "kernels"
    kernels = {k["name"]: k for k in report["kernels"]}
    drawn = graph.locator("g.xlanb-kernel-node")
    assert sorted(drawn.evaluate_all("gs => gs.map(g => g.dataset.kernel)")) == sorted(kernels)
    measured = report["timings"]["kernels"]
    for name, k in kernels.items():
        text = graph.locator(f"g.xlanb-kernel-node[data-kernel='{name}']").text_content()
        assert name in text and k["kind"] in text and f"{len(k['ops'])} ops" in text, text
        assert "in " in text and "out " in text and ("KiB" in text or " B" in text), text
        assert ("µs" in text or "ms" in text) and measured[name] > 0
    # the values between kernels and out of the call are buffers, named by the user
    buffers = graph.locator("g.xlanb-buffer-node .xlanb-node-op").all_text_contents()
    assert {b.split(" \u2192 ")[-1] for b in buffers} >= {"w", "s", "t"}, buffers
    assert graph.locator("g.xlanb-node:not([data-op='parameter'])").count() == 0
    # every kernel's arrows come from what it reads: inputs it recomputes from included
    nodes = {n["id"]: n for n in report["graph"]["nodes"]}
    drawn_edges = set(map(tuple, graph.locator("path.xlanb-edge").evaluate_all(
        "ps => ps.map(p => [p.dataset.src, p.dataset.dst])")))
    for e in report["graph"]["edges"]:
        src, dst = nodes[e["src"]], nodes[e["dst"]]
        if src["op"] == "parameter":
            for k in dst["kernels"]:
                assert (f"n{src['id']}", f"k:{k}") in drawn_edges, (src, k, drawn_edges)
    out.screenshot(path=screens / "light-graph-kernels.png")
    # a click on a kernel shows its ops inside it; its title folds it again
    graph.locator("g.xlanb-kernel-node[data-kernel='fusion.0']").click()
    cluster = graph.locator("g.xlanb-cluster[data-kernel='fusion.0']")
    cluster.wait_for(state="attached")
    inside = [n for n in report["graph"]["nodes"] if "fusion.0" in n["kernels"]]
    assert graph.locator("g.xlanb-node[data-kernel='fusion.0']").count() == len(inside)
    assert graph.locator("g.xlanb-kernel-node[data-kernel='fusion.0']").count() == 0
    assert graph.locator("g.xlanb-kernel-node").count() == len(kernels) - 1
    assert out.locator(".xlanb-graph-detail .xlanb-kernel[data-kernel='fusion.0']").count() == 1
    out.screenshot(path=screens / "light-graph-expanded.png")
    graph.locator(".xlanb-cluster-title[data-kernel='fusion.0']").click()
    graph.locator("g.xlanb-kernel-node[data-kernel='fusion.0']").wait_for(state="attached")
    assert page.errors == []


def test_graph_text_is_never_smaller_than_the_notebook_font(notebook):
    page, _ = notebook
    out = cell(page, 1)
    code_font = float(out.locator(".cm-content").evaluate(
        "e => parseFloat(getComputedStyle(e).fontSize)"))
    assert code_font >= 12
    for level in ("kernels", "ops"):
        graph_level(out, level)
        sizes = out.locator(".xlanb-graph-svg").evaluate(
            "svg => [...svg.querySelectorAll('text')].map(t => "
            "parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a)")
        assert sizes and min(sizes) >= code_font - 0.01, (level, min(sizes), code_font)
    # the graph fills the output's width
    frame = out.locator(".xlanb-graph-frame").bounding_box()
    assert frame["width"] > 900
    graph_level(out, "kernels")


def test_graph_has_one_colour_per_fusion_group(notebook):
    page, report = notebook
    graph_level(cell(page, 1), "ops")
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


def test_graph_names_and_dom_tooltips(notebook, screens):
    page, report = notebook
    out = cell(page, 1)
    graph_level(out, "ops")
    graph = out.locator(".xlanb-graph-svg")
    assert graph.locator("title").count() == 0          # no native SVG tooltips
    exp = graph.locator("g.xlanb-node[data-op='exponential']")
    text = hover_text(page, exp)
    assert "op: exponential" in text and "shape: (1000,)" in text
    assert "dtype: float64" in text and "kernel: fusion.0" in text
    # the notebook location names the cell (In[2]) and the line, not a file
    assert "at: cell [2], line 3" in text, text
    tip = page.locator(".xlanb-tooltip")
    box, tip_box = exp.bounding_box(), tip.bounding_box()
    assert abs(tip_box["x"] - (box["x"] + box["width"] / 2)) < 400   # near the pointer
    out.screenshot(path=screens / "light-graph-tooltip.png")
    page.mouse.move(0, 0)
    tip.wait_for(state="hidden")
    inputs = graph.locator("g.xlanb-node[data-op='parameter']")
    tips = [inputs.nth(i).get_attribute(TIP) for i in range(inputs.count())]
    assert sorted(t.splitlines()[0] for t in tips) == [
        "op: parameter (x)", "op: parameter (y)", "op: parameter (z)"]
    # output nodes carry the user's names: w, s and t are the cell's outputs
    names = {report["graph"]["output_names"][i]: node
             for i, node in enumerate(report["graph"]["outputs"])}
    assert set(names) == {"w", "s", "t"}
    for name, node in names.items():
        label = graph.locator(f"g.xlanb-node[data-node='{node}'] .xlanb-node-op")
        assert label.text_content().endswith(f"\u2192 {name}"), label.text_content()
    assert "\u2192 out" not in graph.text_content()
    # fusion decisions in humanized units and grammar
    decisions = " ".join(d for k in report["kernels"] for d in k.get("decisions", []))
    assert " bytes" not in decisions and "1 users" not in decisions, decisions
    assert page.errors == []


def test_wheel_scrolls_the_notebook_until_the_graph_is_clicked(notebook, screens):
    page, _ = notebook
    out = cell(page, 1)
    graph = out.locator(".xlanb-graph-svg")
    scroller = notebook_scroller(page)
    assert scroller.evaluate("n => n !== null"), "the notebook does not scroll"
    scroller.evaluate("n => { n.scrollTop = 0; }")
    graph.scroll_into_view_if_needed()
    home = graph.get_attribute("viewBox")
    top = scroller.evaluate("n => n.scrollTop")
    box = graph.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 100))
    page.mouse.wheel(0, 300)
    page.wait_for_function("([n, top]) => n.scrollTop > top", arg=[scroller, top])
    assert graph.get_attribute("viewBox") == home             # the graph did not zoom
    hint = out.locator(".xlanb-graph-wheel-hint")
    hint.wait_for(state="visible")                            # it says how to zoom
    assert "Ctrl" in hint.text_content()
    assert out.locator(".xlanb-graph-frame").get_attribute("data-active") == "false"
    # with Ctrl held the wheel zooms the graph and the notebook stays put
    graph.scroll_into_view_if_needed()
    box = graph.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    top = scroller.evaluate("n => n.scrollTop")
    page.keyboard.down("Control")
    page.mouse.wheel(0, -200)
    page.keyboard.up("Control")
    page.wait_for_function("([svg, home]) => svg.getAttribute('viewBox') !== home",
                           arg=[graph.element_handle(), home])
    assert scroller.evaluate("n => n.scrollTop") == top
    out.locator(".xlanb-graph-toolbar button", has_text="Fit").click()
    assert page.errors == []


def test_graph_hover_click_zoom_and_pan(notebook, screens):
    page, report = notebook
    out = cell(page, 1)
    graph = out.locator(".xlanb-graph-svg")
    graph_level(out, "ops")
    exp = graph.locator("g.xlanb-node[data-op='exponential']")
    graph.scroll_into_view_if_needed()
    exp.click()                                       # also makes the wheel zoom
    assert out.locator(".xlanb-graph-frame").get_attribute("data-active") == "true"
    detail = out.locator(".xlanb-graph-detail .xlanb-kernel[data-kernel='fusion.0']")
    source = next(k["source"] for k in report["kernels"] if k["name"] == "fusion.0")
    assert_kernel_source(detail, source)
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
    # a click outside the graph gives the wheel back to the page
    out.locator(".xlanb-headline").click()
    assert out.locator(".xlanb-graph-frame").get_attribute("data-active") == "false"
    assert page.errors == []


def timing_bars(panel) -> list[dict]:
    """Every bar of the timing chart: label, seconds and drawn width in pixels."""
    return panel.locator(".xlanb-timing-chart").evaluate(
        "svg => [...svg.querySelectorAll('rect.xlanb-bar')].map(r => ({label: "
        "r.dataset.label, seconds: parseFloat(r.dataset.seconds), width: "
        "r.getBoundingClientRect().width}))")


def test_timing_bars_share_one_axis(notebook, screens):
    page, report = notebook
    timing = show_tab(page, "Timing")
    chart = timing.locator(".xlanb-timing-chart")
    labels = chart.locator(".xlanb-chart-label").all_text_contents()
    assert labels[:4] == ["time (µs)", "xlanb (fused)", "op by op", "NumPy"] or \
        labels[:4] == ["time (ms)", "xlanb (fused)", "op by op", "NumPy"], labels
    bars = timing_bars(timing)
    compare = report["compare"]
    by_label = {b["label"]: b for b in bars}
    assert by_label["xlanb (fused)"]["seconds"] == pytest.approx(compare["xlanb_seconds"])
    assert by_label["NumPy"]["seconds"] == pytest.approx(compare["numpy_seconds"])
    # one scale for every bar of every section: width / seconds is the same constant
    chart_width = chart.bounding_box()["width"]
    assert chart_width > 900                                  # the chart fills the output
    scale = max(b["width"] for b in bars) / max(b["seconds"] for b in bars)
    for b in bars:
        assert b["width"] == pytest.approx(b["seconds"] * scale, abs=0.75), b
    # per-kernel measured bars, the op-by-op split and the named gap
    for k in report["kernels"]:
        assert f"{k['name']} measured" in by_label and f"{k['name']} predicted" in by_label
    timings = report["timings"]
    kernel_sum = sum(timings["kernels"].values())
    if kernel_sum <= timings["fused_seconds"]:
        gap = by_label["driver, allocation, Python"]
        assert gap["seconds"] == pytest.approx(timings["fused_seconds"] - kernel_sum)
    notes = " ".join(timing.locator(".xlanb-note").all_text_contents())
    assert "driver, allocation, Python" in notes or "more than the whole call" in notes
    assert set(timings["unfused_ops"]) <= set(by_label)
    # round ticks: equal steps of 1, 2 or 5 times a power of ten
    ticks = [float(t) for t in chart.locator(".xlanb-axis-label").all_text_contents()]
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:])}
    assert ticks[0] == 0 and len(steps) == 1, ticks
    step = steps.pop()
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert round(mantissa, 6) in (1, 2, 5), ticks
    # hover a segment: its tooltip is in the DOM
    text = hover_text(page, chart.locator("rect.xlanb-bar").first)
    assert text.startswith("xlanb (fused):")
    page.mouse.move(0, 0)
    cell(page, 1).screenshot(path=screens / "light-timing.png")
    assert page.errors == []


def test_no_fusion_report_never_says_fused(notebook, screens):
    page, _ = notebook
    report = page.evaluate(REPORT_DATA, NO_FUSION)
    assert report["cell"]["options"]["fusion"] is False
    out = cell(page, NO_FUSION).locator(".xlanb-report")
    out.locator(".xlanb-tab[data-tab='Timing']").click()
    panel = out.locator(".xlanb-panel-timing")
    panel.wait_for(state="visible")
    assert "fused" not in panel.locator(".xlanb-timing-chart").text_content()
    assert "xlanb (no fusion)" in panel.locator(".xlanb-chart-label").all_text_contents()
    cell(page, NO_FUSION).screenshot(path=screens / "light-timing-no-fusion.png")
    out.locator(".xlanb-tab[data-tab='Graph']").click()


def test_timing_memory_timeline_ir_and_kernel_tabs(notebook, screens):
    page, report = notebook
    memory = show_tab(page, "Memory")
    assert memory.locator("rect.xlanb-bar").count() == 4
    assert "fusion saves" in memory.locator(".xlanb-chart-title").text_content()
    cell(page, 1).screenshot(path=screens / "light-memory.png")

    timeline = show_tab(page, "Timeline")
    phases = report["phases"]
    assert timeline.locator("rect.xlanb-phase-bar").count() == len(phases) > 0
    cell(page, 1).screenshot(path=screens / "light-timeline.png")

    ir = show_tab(page, "IR")
    assert ir.locator("pre").text_content() == report["ir"] != ""

    kernels = show_tab(page, "Kernels")
    shown = kernels.locator(".xlanb-kernel")
    assert shown.count() == len(report["kernels"])
    for i, k in enumerate(report["kernels"]):
        assert_kernel_source(shown.nth(i), k["source"])
    cell(page, 1).screenshot(path=screens / "light-kernels.png")
    screenshot_tabs(page, screens, "light")
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
    assert luminance(light) < 0.5 < luminance(dark), (light, dark)
    assert out.locator(".xlanb-report").is_visible()
    graph_level(out, "kernels")
    out.screenshot(path=screens / "dark-graph-kernels.png")
    graph_level(out, "ops")
    assert out.locator(".xlanb-graph-svg g.xlanb-node").count() == 12
    background = out.locator(".xlanb-graph-frame").evaluate(
        "e => getComputedStyle(e).backgroundColor")
    assert luminance(background) < 0.5, background
    out.screenshot(path=screens / "dark-graph-cell.png")
    screenshot_tabs(page, screens, "dark")
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
