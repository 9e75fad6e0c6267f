"""`xlanb.notebook.Report`: JSON schema, figures, static HTML, widgets.

Reports come from real compiles (fused, unfused, auto-clustered), a JSON round trip and
hand-made edge cases; the schema is checked both with `jsonschema` (when installed) and
with the package's own fallback validator.
"""
import base64
import copy
import io
import json
import re

import numpy as np
import pytest

import xlanb
from xlanb.notebook import Report, validate
from xlanb.notebook.report_html import render_fragment
from xlanb.notebook.schema import check, load_schema

pytest.importorskip("matplotlib")
from matplotlib.figure import Figure  # noqa: E402


def layer(x, w, b):
    h = np.maximum(x @ w + b, 0)
    return h, h.mean(axis=1)


def uses_unique(x):
    return np.sum(np.unique(np.round(x)) * 2)


@pytest.fixture(scope="module")
def args():
    rng = np.random.default_rng(1)
    return (rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 4)).astype(np.float32),
            rng.standard_normal(4).astype(np.float32))


@pytest.fixture(scope="module")
def profiled(args):
    f = xlanb.jit(layer)
    f(*args)
    f.last_compiled.executable.profile(list(args), repeats=2)
    return Report(f, param_names=["x", "w", "b"])


@pytest.fixture(scope="module")
def reports(profiled, args):
    unfused = xlanb.jit(layer, fusion=False)
    compiled = unfused.lower(*args).compile()            # not profiled: no timings
    clustered = xlanb.jit(uses_unique, must_compile=False)
    clustered(args[0])
    return {"profiled": profiled, "unprofiled": Report(compiled),
            "autoclustered": Report(clustered),
            "round-trip": Report.from_json(profiled.to_json()),
            "bare": Report(xlanb_report_without_anything())}


def xlanb_report_without_anything():
    from xlanb_runtime.report import CompileReport
    return CompileReport("empty")


@pytest.mark.parametrize("kind", ["profiled", "unprofiled", "autoclustered", "round-trip",
                                  "bare"])
def test_reports_validate_against_the_schema_with_both_validators(reports, kind):
    data = reports[kind].to_dict()
    validate(data)
    assert check(data, load_schema(), load_schema(), "$") == []
    json.loads(reports[kind].to_json())                      # strict JSON: no NaN


def test_schema_rejects_broken_reports(profiled):
    schema = load_schema()
    broken = [("version", 2), ("kernels", None)]
    for key, value in broken:
        data = copy.deepcopy(profiled.to_dict())
        data[key] = value
        with pytest.raises(ValueError, match="report.schema.json"):
            validate(data)
        assert check(data, schema, schema, "$")
    data = copy.deepcopy(profiled.to_dict())
    data["graph"]["edges"][0]["fused"] = "yes"
    assert check(data, schema, schema, "$")
    del data["summary"]
    with pytest.raises(ValueError, match="summary"):
        validate(data)


def test_report_data_carries_ir_graph_timings_and_derived_summary(reports):
    data = reports["profiled"].to_dict()
    assert "module layer" in data["ir"] and data["param_names"] == ["x", "w", "b"]
    assert data["summary"]["kernels"] == len(data["kernels"]) >= 1
    assert set(data["timings"]["kernels"]) <= {k["name"] for k in data["kernels"]}
    assert data["summary"]["speedup"] == pytest.approx(
        data["timings"]["unfused_seconds"] / data["timings"]["fused_seconds"])
    unfused = reports["unprofiled"].to_dict()
    assert unfused["timings"] == {} and unfused["summary"]["speedup"] is None
    assert all(len(k["ops"]) == 1 for k in unfused["kernels"])
    clustered = reports["autoclustered"].to_dict()
    assert [b["what"] for b in clustered["fallback"]["breaks"]] == ["np.unique"]
    assert len(clustered["fallback"]["clusters"]) == 2
    assert {k["name"].split("/")[0] for k in clustered["kernels"]} == {"cluster0", "cluster1"}


@pytest.mark.parametrize("kind", ["profiled", "unprofiled", "autoclustered", "bare"])
def test_plots_return_figures(reports, kind):
    report = reports[kind]
    for name in ("timeline", "graph", "timing", "memory"):
        fig = getattr(report, f"plot_{name}")()
        assert isinstance(fig, Figure) and fig.axes, name


def test_graph_draws_every_node_and_both_edge_styles(profiled):
    data = profiled.to_dict()
    ax = profiled.plot_graph().axes[0]
    boxes = [t.get_text() for t in ax.texts if t.get_bbox_patch() is not None]
    assert len(boxes) == len(data["graph"]["nodes"])
    assert {"x", "w", "b"} <= set(boxes)                  # parameters show input names
    styles = {e["fused"] for e in data["graph"]["edges"]}
    assert styles == {True, False}                        # the layer has both kinds
    timeline = profiled.plot_timeline().axes[0]
    assert len(timeline.collections) == len(data["phases"])


def test_save_html_embeds_png_charts(tmp_path, profiled):
    path = tmp_path / "report.html"
    profiled.save_html(path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(images) == 4
    from PIL import Image
    for image in images:
        png = base64.b64decode(image)
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
        assert pixels.shape[0] > 150 and pixels.shape[1] > 400
        assert (pixels < 200).mean() > 0.01                   # drawn on, not blank
    assert "module layer" in text and "Kernel sources" in text


def test_html_escapes_everything_from_the_report(profiled):
    data = copy.deepcopy(profiled.to_dict())
    evil = '<script>alert("x")</script>'
    data["name"] = evil
    data["kernels"][0]["source"] = evil
    data["kernels"][0]["ops"] = [evil]
    data["ir"] = evil
    html = render_fragment(Report(data).to_dict(), {})        # the text, without charts
    assert "<script" not in html
    assert html.count("&lt;script&gt;") >= 4


def test_mimebundle_and_text(profiled):
    bundle = profiled.mimebundle()
    assert set(bundle) == {"application/vnd.xlanb.report+json", "text/html", "text/plain"}
    assert bundle["text/plain"].startswith("xlanb: layer (cpu):")
    assert "predicted" in bundle["text/plain"]


def test_widget_has_the_six_tabs(profiled):
    widgets = pytest.importorskip("ipywidgets")
    box = profiled.widget()
    tab = box.children[1]
    assert isinstance(tab, widgets.Tab)
    assert list(tab.titles) == ["Timeline", "Graph", "Timing", "Memory", "IR", "Kernels"]
    assert tab.children[0].value == profiled.pngs()["timeline"]


def test_output_names_and_humanized_text(profiled):
    from xlanb.notebook.report import humanize_text, output_labels, run_label
    graph = profiled.to_dict()["graph"]
    assert graph["output_names"] == ["[0]", "[1]"]          # `layer` returns a tuple
    assert set(output_labels(profiled.to_dict()).values()) == {"[0]", "[1]"}
    cells = {"3774433945.py": 12}
    assert humanize_text("fused add (4 at <xla-cell-3.1>:2): saves 16777216 bytes "
                         "(1 users outside)", cells) == \
        "fused add (4 at cell [3], line 2): saves 16.0 MiB (1 user outside)"
    assert humanize_text("../ipykernel_22638/3774433945.py:24", cells) == "cell [12], line 24"
    assert humanize_text("train.py:41 (2 users outside)", cells) == \
        "train.py:41 (2 users outside)"
    assert run_label({"kernels": [{"ops": ["add", "multiply"]}]}) == "xlanb (fused)"
    assert run_label({"kernels": [{"ops": ["add"]}], "cell": {"options": {"fusion": False}}}) \
        == "xlanb (no fusion)"
