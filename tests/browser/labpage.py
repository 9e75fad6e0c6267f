"""The notebook the browser tests read, and helpers to find things in it.

`open_notebook` writes CELLS to a notebook, opens it in JupyterLab (a 1400x1500 page,
its errors collected in `page.errors`) and runs every cell; conftest.py opens it once
per session for every test module.  Cell 1 is a `%%xla --compare` cell with two fusion
groups, cell NO_FUSION the same kind of cell under `--no-fusion`, and the last cell is
long enough that the notebook scrolls.
"""
from __future__ import annotations

import nbformat

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
    # the same kind of cell without fusion: its report must not say "fused"
    "%%xla --no-fusion --compare\n"
    "v = x * 2.0 + 1.0",
    # long enough that the notebook scrolls
    "\n".join(f"# line {i}" for i in range(80)),
]
NO_FUSION = 3

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


def cell(page, index: int):
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def show_tab(page, name: str):
    """Click a tab of the first report and return its (visible) panel."""
    report = cell(page, 1).locator(".xlanb-report")
    report.locator(f".xlanb-tab[data-tab='{name}']").click()
    panel = report.locator(f".xlanb-panel-{name.lower()}")
    panel.wait_for(state="visible")
    return panel



TIP = "data-xlanb-tip"



def assert_kernel_source(section, source: str) -> None:
    """The kernel's function is shown first; imports and constants are folded below it;
    together they are the whole source."""
    body = section.locator("pre.xlanb-kernel-body").text_content()
    assert body.startswith("# xlanb kernel") and "\ndef " in body
    assert "= np.float32(1)" not in body                # the constants are folded away
    folded = section.locator(".xlanb-kernel-preamble pre")
    rest = folded.text_content() if folded.count() else ""
    assert not section.locator(".xlanb-kernel-preamble").evaluate_all(
        "ds => ds.some(d => d.open)")
    def lines(text: str) -> list[str]:
        return sorted(line for line in text.split("\n") if line.strip())

    assert lines(body + "\n" + rest) == lines(source)



def hover_text(page, locator) -> str:
    """Hover `locator` and return the text of the tooltip shown in the page's DOM."""
    page.mouse.move(0, 0)
    locator.hover()
    tip = page.locator(".xlanb-tooltip")
    tip.wait_for(state="visible")
    return tip.inner_text()



def notebook_scroller(page):
    """The element that scrolls the notebook (JupyterLab's windowed list)."""
    return cell(page, 1).element_handle().evaluate_handle("""e => {
      for (let n = e.parentElement; n; n = n.parentElement) {
        const style = getComputedStyle(n);
        if (/(auto|scroll)/.test(style.overflowY) && n.scrollHeight > n.clientHeight) {
          return n;
        }
      }
      return null;
    }""")



def screenshot_tabs(page, screens, theme: str) -> None:
    """A screenshot of every tab of the first report, as a user sees it."""
    for name in TABS:
        show_tab(page, name)
        page.mouse.move(0, 0)
        cell(page, 1).screenshot(path=screens / f"{theme}-{name.lower()}.png")
    show_tab(page, "Graph")



def luminance(css_colour: str) -> float:
    """The relative luminance (0 black, 1 white) of a CSS rgb() colour."""
    r, g, b = [float(v) for v in css_colour[css_colour.index("(") + 1:-1].split(",")[:3]]
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def open_notebook(lab, browser):
    """Open the test notebook in JupyterLab and run all its cells; yields (page, report),
    the report being the first `%%xla` cell's data, and closes the page after."""
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
