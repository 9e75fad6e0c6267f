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
    # a sum of 1000 signed terms: its rounding is relative to the terms, not to the sum
    "_bound = 8 * np.finfo(np.float32).eps * np.sqrt(1000) * np.abs(x + y * z).sum()\n"
    "assert abs(s - np.sum(x + y * z)) <= _bound, (s, np.sum(x + y * z))\n"
    "print('ok', type(s).__name__)",
    # the digits training step (softmax regression, one SGD step of batch 100)
    "import xlanb\n"
    "(x_train, y_train), _ = xlanb.datasets.load_digits()\n"
    "xb, yb = x_train[:100], y_train[:100]\n"
    "w = np.zeros((64, 10), np.float32); b = np.zeros(10, np.float32)",
    "%%xla --compare\n"
    "logits = xb @ w + b\n"
    "_shifted = logits - logits.max(axis=1, keepdims=True)\n"
    "_p = np.exp(_shifted) / np.exp(_shifted).sum(axis=1, keepdims=True)\n"
    "_g = (_p - (yb[:, None] == np.arange(10))) / xb.shape[0]\n"
    "w_new = w - 0.5 * (xb.T @ _g)\n"
    "b_new = b - 0.5 * _g.sum(axis=0)",
    "_s = np.exp(xb @ w + b); _s /= _s.sum(axis=1, keepdims=True)\n"
    "_g = (_s - np.eye(10)[yb]) / 100\n"
    "assert np.allclose(w_new, w - 0.5 * xb.T @ _g, atol=1e-6)\n"
    "assert np.allclose(b_new, b - 0.5 * _g.sum(axis=0), atol=1e-6)\n"
    "print('step ok')",
    # a function defined in a cell: its ops' locations name the cell, not ipykernel's file
    "def _double_exp(v):\n"
    "    return np.exp(v) * 2\n"
    "print(xlanb.jit(_double_exp).lower(x).as_text())",
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
    number = saved.cells[1].execution_count          # In[N], as the kernel numbered the cell
    assert data[MIME_TYPE]["cell"]["filename"] == f"<xla-cell-{number}>"
    assert data["text/html"].count("data:image/png;base64,") == 4
    assert data["text/plain"].startswith(f"xlanb: xla_cell_{number} (cpu)")
    if "application/vnd.jupyter.widget-view+json" in data:      # ipywidgets installed
        assert saved.metadata["widgets"]
    assert "ok" in "".join(out.get("text", "") for out in saved.cells[2].outputs)
    step = [out for out in saved.cells[4].outputs if out.output_type == "display_data"]
    assert len(step) == 1 and step[0].data[MIME_TYPE]["compare"]["allclose"]
    validate(step[0].data[MIME_TYPE])
    pngs = step[0].data["text/html"].split("data:image/png;base64,")[1:]
    assert len(pngs) == 4 and all(len(png.split('"')[0]) > 2000 for png in pngs)
    assert "step ok" in "".join(out.get("text", "") for out in saved.cells[5].outputs)
    text = "".join(out.get("text", "") for out in saved.cells[6].outputs)
    assert f'exponential(%0) : f32[1000] loc="cell [{saved.cells[6].execution_count}], ' \
        'line 2"' in text, text
