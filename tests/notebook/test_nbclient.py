"""A notebook using `%%xla`, executed by nbclient in a real ipykernel.

Checks what a saved notebook keeps: the report JSON (valid against the schema), the HTML
fallback with PNG charts, the text fallback, no error outputs, and results equal NumPy's.
"""
import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from xlanb.notebook import MIME_TYPE, validate  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

CELLS = [
    "%load_ext xlanb\n"
    "import numpy as np\n"
    "rng = np.random.default_rng(0)\n"
    "x, y, z = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))",
    "%%xla --compare -n 2\n"
    "s = np.sum(x + y * z)",
    "assert np.allclose(s, np.sum(x + y * z), rtol=1e-4), (s, np.sum(x + y * z))\n"
    "print('ok', type(s).__name__)",
]


def test_notebook_with_xla_cell_saves_report_and_fallbacks(tmp_path, monkeypatch):
    paths = [str(ROOT), str(ROOT / "runtime"), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    path = tmp_path / "xla.ipynb"
    nbformat.write(nb, path)
    saved = nbformat.read(path, as_version=4)
    outputs = [out for cell in saved.cells for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    reports = [out for out in saved.cells[1].outputs if out.output_type == "display_data"]
    assert len(reports) == 1
    data = reports[0].data
    assert {MIME_TYPE, "text/html", "text/plain"} <= set(data)
    validate(data[MIME_TYPE])
    assert data[MIME_TYPE]["compare"]["allclose"]
    assert data[MIME_TYPE]["cell"]["filename"] == "<xla-cell-2>"
    assert data["text/html"].count("data:image/png;base64,") == 4
    assert data["text/plain"].startswith("xlanb: xla_cell_2 (cpu)")
    if "application/vnd.jupyter.widget-view+json" in data:      # ipywidgets installed
        assert saved.metadata["widgets"]
    assert "ok" in "".join(out.get("text", "") for out in saved.cells[2].outputs)
