"""xlanb in notebooks: the `%%xla` cell magic and the compile report's views.

    %load_ext xlanb                     # registers %%xla and %xla_report
    %%xla --compare                     # the cell, compiled as one function
    s = np.sum(x + y * z)

    r = xlanb.notebook.Report(f)        # a jitted function's report, in a script
    r.save_html("report.html"); r.plot_graph()

Modules: `cell` (a cell -> a function: inputs, outputs, line numbers), `magic` (the
magics), `report` (the report data and `Report`), `plots` (matplotlib figures),
`report_html` (static HTML with embedded PNGs), `views` (ipywidgets tabs), `schema`
(`report.schema.json` and its check).  Importing this package does not import IPython,
matplotlib or ipywidgets; each is imported where it is used.
"""
from .report import MIME_TYPE, SCHEMA_VERSION, Report

__all__ = ["MIME_TYPE", "SCHEMA_VERSION", "Report", "load_ipython_extension",
           "unload_ipython_extension", "validate"]


def load_ipython_extension(ip) -> None:
    """`%load_ext xlanb`: register `%%xla` and `%xla_report` in the IPython shell `ip`."""
    from .magic import XlaMagics
    ip.register_magics(XlaMagics)


def unload_ipython_extension(ip) -> None:
    """`%unload_ext xlanb`: remove the magics again."""
    magics = ip.magics_manager.magics
    magics["cell"].pop("xla", None)
    magics["line"].pop("xla_report", None)
    ip.magics_manager.registry.pop("XlaMagics", None)


def _register_viewer() -> None:
    """Let the runtime's `CompileReport.save_html()` / `.plot_*()` draw with `Report`,
    where the runtime offers that seam (`CompileReport.viewer`; the runtime never imports
    the front end, so the front end plugs itself in)."""
    from xlanb_runtime.report import CompileReport
    if hasattr(CompileReport, "viewer"):
        CompileReport.viewer = Report


_register_viewer()


def validate(data: dict) -> None:
    """Raise ValueError if a report dict does not match report.schema.json."""
    from .schema import validate as _validate
    _validate(data)
