"""`%load_ext xlanb`, `%%xla` and `%xla_report`, driven through a real IPython shell.

Oracles: NumPy on the same inputs, the report schema, and the shell's own namespace and
display outputs.  Arrays are small: every kernel here is a real Numba compile.
"""
import numpy as np
import pytest

pytest.importorskip("IPython")
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

import xlanb  # noqa: E402
from xlanb.notebook import MIME_TYPE, validate  # noqa: E402
from xlanb.notebook.cell import cell_names, make_cell_function, parse_cell  # noqa: E402
from tolerance import assert_close  # noqa: E402

CELL = "w = x + y * z\ns = np.sum(w)\n"


@pytest.fixture(scope="module")
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "xlanb")
    rng = np.random.default_rng(0)
    shell.user_ns.update(np=np, x=rng.standard_normal(1000).astype(np.float32),
                         y=rng.standard_normal(1000).astype(np.float32),
                         z=rng.standard_normal(1000).astype(np.float32))
    yield shell
    shell.run_line_magic("unload_ext", "xlanb")


def magics(shell):
    return shell.magics_manager.registry["XlaMagics"]


def run_xla(shell, options: str, cell: str):
    with capture_output() as captured:
        shell.run_cell_magic("xla", options, cell)
    return captured


def run_cell(shell, options: str, cell: str):
    """The cell as a user runs it (`%%xla` on its first line): (result, captured output)."""
    with capture_output() as captured:
        result = shell.run_cell(f"%%xla {options}\n{cell}", store_history=True)
    return result, captured


def bundles(captured) -> list[dict]:
    return [out.data for out in captured.outputs]


# -- which names a cell reads and writes --------------------------------------------------
def test_inputs_are_names_read_before_assigned_and_outputs_top_level_stores():
    names = cell_names(parse_cell(
        "w = x + y\n"
        "x = w * 2\n"             # x read above, so an input; also assigned: an output
        "_t = np.tanh(w)\n"       # np is read (a global, filtered later), _t is private
        "s += _t.sum()\n"         # augmented assignment reads s first
        "f = lambda a: a + q\n"   # q read inside the lambda; a is the lambda's own
        "v = [k * 2 for k in range(3)]\n"))   # k belongs to the comprehension
    assert names.reads == ["x", "y", "np", "s", "q", "range"]
    assert names.assigns == ["w", "x", "_t", "s", "f", "v"]


def test_only_arrays_and_numbers_become_inputs_and_private_names_stay_local():
    ns = {"np": np, "x": np.ones(3), "scale": 2.0, "label": "text", "sizes": [1, 2]}
    cell = make_cell_function("_t = x * scale\nout = _t + len(sizes)\n", ns,
                              "<xla-cell-test>")
    assert cell.inputs == ["x", "scale"]
    assert cell.outputs == ["out"]
    np.testing.assert_array_equal(cell.fn(ns["x"], 2.0)["out"], np.full(3, 4.0))


def test_top_level_return_is_a_clear_error():
    from xlanb.notebook.cell import CellSyntaxError
    with pytest.raises(CellSyntaxError, match="<c>:2: .*top-level `return`"):
        parse_cell("a = 1\nreturn a\n", "<c>")


# -- %%xla --------------------------------------------------------------------------------
def test_compare_cell_lands_numpy_equal_outputs_and_displays_three_mimetypes(ip):
    captured = run_xla(ip, "--compare -n 2", CELL)
    x, y, z = (ip.user_ns[k] for k in "xyz")
    assert_close(ip.user_ns["w"], x + y * z)
    assert_close(ip.user_ns["s"], np.sum(x + y * z), n=1000,
                 scale=np.sum(np.abs(x) + np.abs(y * z)))
    assert isinstance(ip.user_ns["w"], np.ndarray)
    [bundle] = bundles(captured)
    assert {MIME_TYPE, "text/html", "text/plain"} <= set(bundle)
    data = bundle[MIME_TYPE]
    validate(data)
    assert data["version"] == 1
    assert data["cell"]["inputs"] == ["x", "y", "z"]
    assert data["cell"]["outputs"] == ["s", "w"]
    assert data["compare"]["allclose"] and data["compare"]["reference"] == \
        "op by op and NumPy"
    assert data["compare"]["op_by_op_seconds"] > 0 and data["timings"]["kernels"]
    assert any(loc.startswith("cell [") for k in data["kernels"]
               for loc in k["locations"])
    assert bundle["text/html"].count("data:image/png;base64,") == 4
    assert "results agree" in bundle["text/plain"]


def test_running_the_same_cell_again_reuses_the_compiled_function(ip):
    run_xla(ip, "--quiet", CELL)
    cache = dict(magics(ip)._cache)
    ip.user_ns["x"] = ip.user_ns["x"] * 2
    captured = run_xla(ip, "--quiet", CELL)
    assert magics(ip)._cache.keys() == cache.keys()
    assert captured.outputs == []                                  # --quiet: no display
    x, y, z = (ip.user_ns[k] for k in "xyz")
    assert_close(ip.user_ns["w"], x + y * z)


def test_no_fusion_compiles_one_kernel_per_op(ip):
    run_xla(ip, "--no-fusion --quiet", CELL)
    data = magics(ip).last_report.to_dict()
    assert [k["ops"] for k in data["kernels"]] == [["multiply"], ["add"], ["reduce"]]
    assert data["cell"]["options"]["fusion"] is False


def test_unsupported_code_falls_back_to_numpy_and_says_where(ip):
    cell = "u = np.unique(np.round(x * 4))\nv = np.sum(u * 2)\n"
    captured = run_xla(ip, "--compare -n 1", cell)
    expected = np.unique(np.round(ip.user_ns["x"] * 4))
    np.testing.assert_array_equal(ip.user_ns["u"], expected)
    assert_close(ip.user_ns["v"], np.sum(expected * 2), n=expected.size,
                 scale=np.sum(np.abs(expected * 2)))
    assert "1 part ran with NumPy" in captured.stdout
    assert "np.unique" in captured.stdout and "u = np.unique(np.round(x * 4))" in \
        captured.stdout
    data = bundles(captured)[0][MIME_TYPE]
    validate(data)
    assert [b["what"] for b in data["fallback"]["breaks"]] == ["np.unique"]
    assert data["compare"]["allclose"] and data["compare"]["reference"] == "NumPy"


# (cell, options, the class xlanb.jit raises for the same code, its built-in base)
FAILING_CELLS = [
    ("a = x * 2\nc = x[:10] + y\n", "", xlanb.errors.ShapeMismatchError, ValueError),
    ("a = x * 2\nc = ~a\n", "", xlanb.errors.DTypeError, TypeError),
    ("a = x * 2\nc = np.apply_along_axis(np.sum, 0, a)\n", "--must-compile",
     xlanb.errors.UnsupportedNumPyFunctionError, NotImplementedError),
    ("a = x * 2\nc = np.unique(a)\n", "--must-compile",
     xlanb.errors.DataDependentShapeError, TypeError),
    ("a = x * 2\nif a.sum() > 0:\n    c = a\n", "--must-compile",
     xlanb.errors.ConcretizationError, TypeError),
]


@pytest.mark.parametrize("cell,options,cls,builtin", FAILING_CELLS,
                         ids=[c[2].__name__ for c in FAILING_CELLS])
def test_failing_cell_raises_what_jit_raises_shown_in_short(ip, cell, options, cls, builtin):
    ip.user_ns.pop("c", None)
    result, captured = run_cell(ip, options, cell)
    error = result.error_in_exec
    assert type(error) is cls and isinstance(error, builtin)
    function = make_cell_function(cell, ip.user_ns, "<xla-cell-test>")
    with pytest.raises(cls):                          # the same class as the jitted code's
        xlanb.jit(function.fn)(*[ip.user_ns[n] for n in function.inputs])
    shown = captured.stdout + captured.stderr
    assert shown.lstrip().startswith(f"{cls.__name__}: "), shown
    assert "<xla-cell-" in shown and "Traceback" not in shown
    assert len(shown.strip().splitlines()) <= 3
    assert "c" not in ip.user_ns                     # nothing lands from a failed cell


def test_error_quotes_the_cell_line_and_tb_shows_the_traceback(ip):
    result, captured = run_cell(ip, "", "a = x * 2\nc = x[:10] + y\n")
    assert "| c = x[:10] + y" in captured.stdout + captured.stderr
    result, captured = run_cell(ip, "--tb", "a = x * 2\nc = x[:10] + y\n")
    assert isinstance(result.error_in_exec, xlanb.errors.ShapeMismatchError)
    assert "Traceback" in captured.stdout + captured.stderr


def test_python_error_in_the_cell_is_raised_and_short_too(ip):
    result, captured = run_cell(ip, "", "a = x * 2\nb = a + undefined_name\n")
    assert isinstance(result.error_in_exec, NameError)
    shown = captured.stdout + captured.stderr
    assert shown.lstrip().startswith("NameError: name 'undefined_name' is not defined")
    assert "| b = a + undefined_name" in shown and "Traceback" not in shown


def test_bad_options_are_usage_errors(ip):
    from IPython.core.error import UsageError
    with pytest.raises(UsageError, match="--repeat needs a positive"):
        ip.run_cell_magic("xla", "-n 0", CELL)
    with pytest.raises(UsageError, match="invalid choice"):
        ip.run_cell_magic("xla", "--target tpu", CELL)


def test_cells_are_named_by_their_input_number(ip):
    result, _ = run_cell(ip, "--quiet", "q = x * 3\n")
    assert result.error_in_exec is None
    number = result.execution_count                   # the cell's In[N], from IPython
    assert magics(ip).last_report.to_dict()["cell"]["filename"] == f"<xla-cell-{number}>"


def test_cuda_target_without_a_gpu_is_a_short_error(ip):
    numba = pytest.importorskip("numba")
    from numba import cuda
    if numba.config.ENABLE_CUDASIM or cuda.is_available():
        pytest.skip("a GPU or the CUDA simulator is there: --target cuda would run")
    result, captured = run_cell(ip, "--target cuda", "q = x * 2\n")
    shown = captured.stdout + captured.stderr
    assert result.error_in_exec is not None
    assert "cuda" in shown.lower() and "Traceback" not in shown


def test_dump_option_writes_dumps_or_says_it_is_not_available(ip, tmp_path):
    from dataclasses import fields
    from xlanb_runtime import flags
    captured = run_xla(ip, f"--quiet --dump {tmp_path}", CELL)
    if "xla_dump_to" in {f.name for f in fields(flags.Flags)}:
        assert any(p.name.endswith(".after_optimizations.txt") for p in tmp_path.iterdir())
    else:
        assert "--dump skipped" in captured.stdout


# -- %xla_report ----------------------------------------------------------------------------
def test_xla_report_shows_a_jitted_functions_report(ip):
    ip.run_cell("import xlanb\n"
                "@xlanb.jit\n"
                "def scaled_sum(a):\n"
                "    return np.sum(a * 3)\n"
                "not_called = xlanb.jit(lambda a: a + 1)\n")
    ip.run_cell("total = scaled_sum(x)")
    with capture_output() as captured:
        ip.run_line_magic("xla_report", "scaled_sum")
    [bundle] = bundles(captured)
    validate(bundle[MIME_TYPE])
    assert bundle[MIME_TYPE]["name"] == "scaled_sum"
    assert "module scaled_sum" in bundle[MIME_TYPE]["ir"]
    with capture_output() as captured:
        ip.run_line_magic("xla_report", "not_called")
    assert "has not been compiled yet" in captured.stderr and not captured.outputs


def test_dump_option_wins_over_an_earlier_config_update(ip, tmp_path):
    """--dump applies on top of `xlanb.config.update` (a stale xla_dump_to="" from an
    earlier cell used to silence it)."""
    from xlanb_runtime import flags
    with flags.overriding(xla_dump_to=""):
        run_xla(ip, f"--quiet --dump {tmp_path}", CELL)
    assert any(p.name.endswith(".after_optimizations.txt") for p in tmp_path.iterdir())


def test_a_tiered_cell_shows_the_switch_over_on_its_timeline(ip, tmp_path, monkeypatch):
    """With tiering on (the default outside the tests), a cell's first run answers on the
    NumPy tier; the cell waits for the background compile before it times and reports, so
    its timeline holds the NumPy tier, the background compile and the switch-over."""
    from xlanb_runtime import background, flags
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path))    # not compiled before
    cell = "t = np.tanh(x) * y\nm = np.max(t)\n"
    try:
        with flags.overriding(xla_tiered=True):
            captured = run_xla(ip, "-n 1", cell)
    finally:
        background.shutdown()
    x, y = ip.user_ns["x"], ip.user_ns["y"]
    assert_close(ip.user_ns["t"], np.tanh(x) * y)
    data = bundles(captured)[0][MIME_TYPE]
    validate(data)
    names = [p["name"] for p in data["phases"]]
    for phase in ("numpy-tier", "numpy-tier call", "background compile", "switch-over"):
        assert phase in names
    assert data["kernels"] and all(k["kind"] != "numpy" for k in data["kernels"])
