"""The report's Timeline, Kernels and Memory views in a real browser, and the text size of
every tab.

They read the first `%%xla --compare` cell of the session's notebook (labpage.py):
- the timeline zooms and pans the way the graph does: the wheel scrolls the notebook
  until the timeline is clicked into, then zooms around the pointer; dragging pans, a
  double click zooms to a bar, "Reset" shows the whole compile.  At every zoom, the ticks
  are round, each phase's duration is written beside its bar, bars are proportional to
  their seconds, and every gap wide enough to see is drawn and labelled with its length;
- the Kernels tab is highlighted by JupyterLab: CodeMirror's Python tokens, coloured as
  the notebook's own code cells (light and dark);
- the Memory chart fills the output's width, its bars proportional to their bytes;
- no text in any tab is smaller than the notebook's code font.
Screenshots go to each test's tmp folder and to /tmp/xlanb-screens.
"""
from __future__ import annotations

import math
import re

import pytest
from labpage import TABS, assert_kernel_source, cell, luminance, notebook_scroller, show_tab

UNITS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}
GAP_PIXELS = 3              # timeline.ts: a gap this wide at the current zoom is labelled


def seconds_in(text: str) -> float:
    """The time a label says: "1.48 ms" -> 0.00148."""
    m = re.search(r"(\d+(?:\.\d+)?) (s|ms|µs|ns)\b", text)
    assert m, text
    return float(m[1]) * UNITS[m[2]]


def says(text: str, seconds: float) -> bool:
    """Whether `text` reads `seconds` to the precision it is printed with (2 decimals in
    s and ms, 1 in µs)."""
    shown = seconds_in(text)
    unit = UNITS[re.search(r"(s|ms|µs|ns)\b", text)[1]]
    return abs(shown - seconds) <= unit * 0.0051 + 1e-12 or \
        (unit == 1e-6 and abs(shown - seconds) <= 0.051e-6)


def window(chart) -> tuple[float, float, float]:
    """The timeline's visible window: first and last second, and seconds per pixel."""
    t0, t1, per = chart.evaluate(
        "svg => ['data-t0', 'data-t1', 'data-seconds-per-pixel'].map(a => "
        "parseFloat(svg.getAttribute(a)))")
    return t0, t1, per


def expected_gaps(phases: list[dict], t0: float, t1: float, per: float) -> list[tuple]:
    """(phase, gap seconds, pixels shown) of every untracked gap before a phase that is
    visible in [t0, t1], in start order."""
    end, gaps = 0.0, []
    for p in sorted(phases, key=lambda p: p["start"]):
        gap = p["start"] - end
        if gap > 1e-6:
            shown = (min(p["start"], t1) - max(end, t0)) / per
            gaps.append((p["name"], gap, shown))
        end = max(end, p["start"] + p["seconds"])
    return gaps


ROWS = """svg => [...svg.querySelectorAll('g.xlanb-timeline-row')].map(g => {
  const bar = g.querySelector('rect.xlanb-phase-bar');
  const gap = g.querySelector('.xlanb-timeline-gap');
  return {
    phase: g.dataset.phase,
    value: g.querySelector('.xlanb-chart-value:not(.xlanb-gap-label)').textContent,
    start: parseFloat(bar.dataset.start),
    seconds: parseFloat(bar.dataset.seconds),
    width: parseFloat(bar.getAttribute('width')),
    gap: gap && {
      label: gap.querySelector('.xlanb-gap-label').textContent,
      seconds: parseFloat(gap.querySelector('rect').dataset.seconds),
      tip: gap.querySelector('rect').getAttribute('data-xlanb-tip')
    }
  };
})"""


def assert_timeline_reads(timeline, report) -> None:
    """At the current zoom: round ticks in the window, every duration written, bars
    proportional, and every visible gap drawn and labelled."""
    chart = timeline.locator(".xlanb-timeline-chart")
    t0, t1, per = window(chart)
    assert 0 <= t0 < t1
    ticks = [float(t) for t in chart.locator(".xlanb-axis-label").all_text_contents()]
    unit = UNITS[re.search(r"time \((\w+)\)", chart.text_content())[1]]
    assert len(ticks) >= 2, ticks
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:])}
    assert len(steps) == 1, ticks
    step = steps.pop()
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert round(mantissa, 6) in (1, 2, 5), ticks
    assert t0 - 1e-9 <= ticks[0] * unit and ticks[-1] * unit <= t1 + 1e-9, (ticks, t0, t1)

    phases = sorted(report["phases"], key=lambda p: p["start"])
    rows = chart.evaluate(ROWS)
    assert [r["phase"] for r in rows] == [p["name"] for p in phases]
    for row, phase in zip(rows, phases):
        assert says(row["value"], phase["seconds"]), (row, phase)       # its duration
        if phase["seconds"] / per > 2:                                   # not a sliver
            assert row["width"] == pytest.approx(phase["seconds"] / per, abs=0.06), row
    drawn = [(r["phase"], r["gap"]) for r in rows if r["gap"]]
    gaps = expected_gaps(phases, t0, t1, per)
    must = [(name, gap) for name, gap, shown in gaps if shown >= GAP_PIXELS + 0.01]
    may = {name for name, _, shown in gaps if abs(shown - GAP_PIXELS) < 0.01}
    assert [name for name, _ in drawn if name not in may] == [name for name, _ in must]
    for (name, gap), (_, shown) in zip(must, [d for d in drawn if d[0] not in may]):
        assert shown["label"].startswith("untracked ") and says(shown["label"], gap), shown
        assert shown["seconds"] == pytest.approx(gap)
        assert "between" in shown["tip"] and name in shown["tip"]


def test_timeline_wheel_scrolls_the_page_until_clicked_then_zooms(notebook, screens):
    page, report = notebook
    timeline = show_tab(page, "Timeline")
    frame = timeline.locator(".xlanb-timeline-frame")
    chart = frame.locator(".xlanb-timeline-chart")
    span = max(report["total_seconds"], *(p["start"] + p["seconds"] for p in report["phases"]))
    whole = window(chart)
    assert whole[0] == 0 and whole[1] == pytest.approx(span)
    assert chart.bounding_box()["width"] > 900                    # fills the output's width
    assert_timeline_reads(timeline, report)

    # the wheel over the timeline scrolls the notebook and leaves the zoom alone
    scroller = notebook_scroller(page)
    scroller.evaluate("n => { n.scrollTop = 0; }")
    frame.scroll_into_view_if_needed()
    top = scroller.evaluate("n => n.scrollTop")
    box = frame.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 100))
    page.mouse.wheel(0, 300)
    page.wait_for_function("([n, top]) => n.scrollTop > top", arg=[scroller, top])
    assert window(chart)[:2] == whole[:2]
    hint = frame.locator(".xlanb-wheel-hint")
    hint.wait_for(state="visible")
    assert "Ctrl" in hint.text_content()
    assert frame.get_attribute("data-active") == "false"

    # clicked into, the wheel zooms around the pointer and the notebook stays put
    frame.scroll_into_view_if_needed()
    box = frame.bounding_box()
    x, y = box["x"] + box["width"] * 0.6, box["y"] + box["height"] / 2
    page.mouse.click(x, y)
    assert frame.get_attribute("data-active") == "true"
    top = scroller.evaluate("n => n.scrollTop")
    page.mouse.wheel(0, -300)
    page.wait_for_function(
        "([svg, w]) => parseFloat(svg.getAttribute('data-t1')) - "
        "parseFloat(svg.getAttribute('data-t0')) < w", arg=[chart.element_handle(), span])
    zoomed = window(chart)
    assert 0 < zoomed[0] and zoomed[1] < span and zoomed[2] < whole[2]
    assert scroller.evaluate("n => n.scrollTop") == top
    assert "showing" in timeline.locator(".xlanb-timeline-range").text_content()
    assert_timeline_reads(timeline, report)

    # dragging right shows earlier time, at the same zoom
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 200, y, steps=5)
    page.mouse.up()
    panned = window(chart)
    assert panned[0] < zoomed[0]
    assert panned[1] - panned[0] == pytest.approx(zoomed[1] - zoomed[0])
    assert_timeline_reads(timeline, report)
    cell(page, 1).screenshot(path=screens / "light-timeline-zoomed.png")

    # Reset shows the whole compile; a click outside gives the wheel back to the page
    timeline.locator(".xlanb-timeline-toolbar button[data-action='Reset']").click()
    assert window(chart)[:2] == pytest.approx(whole[:2])
    cell(page, 1).locator(".xlanb-headline").click()
    assert frame.get_attribute("data-active") == "false"
    assert page.errors == []


def test_timeline_double_click_zooms_to_a_phase(notebook, screens):
    page, report = notebook
    timeline = show_tab(page, "Timeline")
    chart = timeline.locator(".xlanb-timeline-chart")
    whole = window(chart)
    # the fusion pass: a sliver of the whole compile, most of the width once zoomed to
    fusion = next(p for p in report["phases"] if p["name"] == "fusion")
    assert fusion["seconds"] / whole[2] < 100
    chart.locator(".xlanb-timeline-row[data-phase='fusion'] rect.xlanb-phase-bar").dblclick()
    t0, t1, per = window(chart)
    assert t0 < fusion["start"] and fusion["start"] + fusion["seconds"] < t1
    # the window is the phase with a margin each side: a tenth of the phase, or at least
    # MIN_WINDOW (1e-4) of the whole compile (the deepest zoom), so the share is known
    margin = max(0.1 * fusion["seconds"], 1e-4 * (whole[1] - whole[0]))
    share = fusion["seconds"] / (fusion["seconds"] + 2 * margin)
    assert fusion["seconds"] / (t1 - t0) == pytest.approx(share, rel=0.02)
    assert fusion["seconds"] / per > 3 * fusion["seconds"] / whole[2]
    assert_timeline_reads(timeline, report)
    cell(page, 1).screenshot(path=screens / "light-timeline-phase.png")
    timeline.locator(".xlanb-timeline-toolbar button[data-action='Reset']").click()
    assert page.errors == []


KEYWORD_COLOUR = """(root, word) => {
  const tokens = [...root.querySelectorAll('span')].filter(s => s.textContent === word);
  return tokens.length ? getComputedStyle(tokens[0]).color : null;
}"""


def assert_highlighted_like_code_cells(page, kernels) -> None:
    """Every kernel source is highlighted by JupyterLab, its keywords coloured as in the
    notebook's code cells."""
    sources = kernels.locator("pre.xlanb-code")
    assert sources.count() >= 2
    kernels.locator("pre.xlanb-code:not([data-highlighted='python'])").first.wait_for(
        state="detached")
    body = kernels.locator("pre.xlanb-kernel-body").first
    spans = body.evaluate("p => [...p.querySelectorAll('span')].map(s => s.className)")
    assert len(spans) > 20 and all(spans), spans[:5]
    # `def` in the kernel as `import` in the first cell: JupyterLab's keyword colour
    cell_keyword = cell(page, 0).locator(".cm-content").evaluate(KEYWORD_COLOUR, "import")
    kernel_keyword = body.evaluate(KEYWORD_COLOUR, "def")
    plain = body.evaluate("p => getComputedStyle(p).color")
    assert cell_keyword and kernel_keyword == cell_keyword != plain, \
        (kernel_keyword, cell_keyword, plain)


def test_kernels_tab_is_highlighted_by_jupyterlab(notebook, screens):
    page, report = notebook
    kernels = show_tab(page, "Kernels")
    assert_highlighted_like_code_cells(page, kernels)
    shown = kernels.locator(".xlanb-kernel")
    for i, k in enumerate(report["kernels"]):               # the text is still the source
        assert_kernel_source(shown.nth(i), k["source"])
    cell(page, 1).screenshot(path=screens / "light-kernels-highlighted.png")
    assert page.errors == []


def test_memory_chart_fills_the_output(notebook, screens):
    page, report = notebook
    memory = show_tab(page, "Memory")
    chart = memory.locator(".xlanb-memory-chart")
    output = cell(page, 1).locator(".jp-OutputArea-child", has=page.locator(".xlanb-report"))
    width = chart.bounding_box()["width"]
    assert width >= 0.9 * output.bounding_box()["width"], (width, output.bounding_box())
    bars = chart.evaluate(
        "svg => [...svg.querySelectorAll('rect.xlanb-bar')].map(r => ({value: "
        "parseFloat(r.dataset.value), width: r.getBoundingClientRect().width}))")
    m = report["memory"]
    assert sorted(b["value"] for b in bars) == sorted(
        [m["temp_bytes_unfused"], m["temp_bytes_fused"], m["argument_bytes"],
         m["output_bytes"]])
    longest = max(bars, key=lambda b: b["value"])
    assert longest["width"] > 0.5 * width                   # the scale uses the width
    scale = longest["width"] / longest["value"]
    for b in bars:
        if b["value"] > 0:
            assert b["width"] == pytest.approx(max(1, b["value"] * scale), abs=0.75), b
    cell(page, 1).screenshot(path=screens / "light-memory-wide.png")
    assert page.errors == []


TEXT_SIZES = """root => {
  const sizes = [];
  for (const e of root.querySelectorAll('*')) {
    const own = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || e.closest('[hidden]') || e.getClientRects().length === 0) continue;
    const svgScale = e instanceof SVGElement ? (e.getScreenCTM() || {a: 1}).a : 1;
    sizes.push([parseFloat(getComputedStyle(e).fontSize) * svgScale,
                e.tagName + '.' + (e.getAttribute('class') || ''), e.textContent.slice(0, 30)]);
  }
  return sizes;
}"""


def test_no_text_is_smaller_than_the_notebook_font(notebook):
    page, _ = notebook
    out = cell(page, 1).locator(".xlanb-report")
    code_font = float(cell(page, 0).locator(".cm-content").evaluate(
        "e => parseFloat(getComputedStyle(e).fontSize)"))
    assert code_font >= 12
    for name in TABS:
        show_tab(page, name)
        if name == "Kernels":                           # open the folded constants too
            out.locator(".xlanb-kernel-preamble").evaluate_all(
                "ds => ds.forEach(d => { d.open = true; })")
        sizes = out.evaluate(TEXT_SIZES)
        assert sizes, name
        small = [s for s in sizes if s[0] < code_font - 0.01]
        assert not small, (name, code_font, small[:5])
    out.locator(".xlanb-kernel-preamble").evaluate_all(
        "ds => ds.forEach(d => { d.open = false; })")
    show_tab(page, "Graph")


def test_dark_theme_timeline_and_kernels(notebook, screens):
    page, _ = notebook
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', "
        "{theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    page.wait_for_timeout(500)            # the theme's stylesheet is applied after the flag
    try:
        kernels = show_tab(page, "Kernels")
        assert luminance(kernels.evaluate("e => getComputedStyle(e).color")) > 0.5
        assert_highlighted_like_code_cells(page, kernels)
        cell(page, 1).screenshot(path=screens / "dark-kernels-highlighted.png")
        timeline = show_tab(page, "Timeline")
        timeline.locator(".xlanb-timeline-row[data-phase='fusion'] rect.xlanb-phase-bar") \
            .dblclick()
        cell(page, 1).screenshot(path=screens / "dark-timeline-zoomed.png")
        timeline.locator(".xlanb-timeline-toolbar button[data-action='Reset']").click()
        show_tab(page, "Memory")
        cell(page, 1).screenshot(path=screens / "dark-memory-wide.png")
    finally:
        page.evaluate(
            "() => window.jupyterapp.commands.execute('apputils:change-theme', "
            "{theme: 'JupyterLab Light'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")
        show_tab(page, "Graph")
    assert page.errors == []
