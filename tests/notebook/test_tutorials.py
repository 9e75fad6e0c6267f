"""The tutorials (tutorials/*.ipynb) run top to bottom in a real kernel, and are committed clean.

Each notebook is executed by nbclient in an ipykernel started from this environment, with
tutorials/ as its working directory.  A tutorial passes when no cell raises, every
`%%xla` cell (all but `--quiet` ones) displays the report bundle: the report JSON (valid
against the schema) with its HTML and plain-text fallbacks, and what it prints reads as
prose (byte counts in KiB/MiB, "1 user").  Nothing is written back.
"""
import os
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from xlanb.notebook import MIME_TYPE, validate  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = ROOT / "tutorials"
NOTEBOOKS = ["01_fusion_basics", "02_training_digits", "03_bert_like",
             "04_mirrored_training", "05_inspecting_programs"]
CELL_TIMEOUT_S = 300
# printed text people should not have to decode: "saves 16777216 bytes", "1 users"
RAW_TEXT = re.compile(r"\b\d{4,} bytes\b|\b1 users\b")


def read(name: str):
    return nbformat.read(TUTORIALS / f"{name}.ipynb", as_version=4)


def is_xla_cell(cell) -> bool:
    return cell.cell_type == "code" and cell.source.lstrip().startswith("%%xla")


def printed(nb):
    """(cell index, text) of what each code cell printed or showed as plain text."""
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            text = out.get("text") or out.get("data", {}).get("text/plain", "")
            if text:
                yield i, text if isinstance(text, str) else "".join(text)


def execute(name: str, monkeypatch):
    paths = [str(ROOT), str(ROOT / "runtime"), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    nb = read(name)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                                     resources={"metadata": {"path": str(TUTORIALS)}})
    client.execute()
    return nb


def test_the_tutorials_are_all_here():
    assert sorted(p.stem for p in TUTORIALS.glob("*.ipynb")) == NOTEBOOKS


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_tutorial_has_no_outputs(name):
    nb = read(name)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
             and (c.outputs or c.execution_count is not None)]
    assert not dirty, f"{name}: cells {dirty} have outputs; clear them before committing"
    assert "widgets" not in nb.metadata, f"{name}: saved widget state; clear it"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_tutorial_runs_top_to_bottom(name, monkeypatch):
    nb = execute(name, monkeypatch)
    errors = [(i, out.get("ename"), out.get("evalue"))
              for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
              for out in cell.outputs if out.output_type == "error"]
    assert not errors, f"{name}: {errors}"
    stderr = "".join(out.get("text", "") for cell in nb.cells if is_xla_cell(cell)
                     for out in cell.outputs if out.get("name") == "stderr")
    assert "%%xla" not in stderr and "Error" not in stderr, stderr
    raw = [(i, m[0]) for i, text in printed(nb) for m in RAW_TEXT.finditer(text)]
    assert not raw, f"{name}: raw counts printed: {raw}"
    for i, cell in enumerate(nb.cells):
        if not is_xla_cell(cell) or "--quiet" in cell.source.splitlines()[0]:
            continue
        reports = [out.data for out in cell.outputs
                   if out.output_type == "display_data" and MIME_TYPE in out.data]
        assert len(reports) == 1, f"{name}: cell {i} shows {len(reports)} reports"
        data = reports[0]
        assert {"text/html", "text/plain"} <= set(data), f"{name}: cell {i}: {set(data)}"
        validate(data[MIME_TYPE])
        if "--compare" in cell.source.splitlines()[0]:
            assert data[MIME_TYPE]["compare"]["allclose"], f"{name}: cell {i}"


def test_tutorials_01_and_03_use_the_xla_magic():
    for name in ("01_fusion_basics", "03_bert_like"):
        nb = read(name)
        assert any(is_xla_cell(c) for c in nb.cells), name
        assert any("%load_ext xlanb" in c.source for c in nb.cells), name
