"""Dumps (--xla_dump_to and friends), run-module repros, Chrome traces and --xla_debug_nans."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import xlanb
from xlanb_runtime import trace_events


def train_step(params, x, labels):
    def loss(p):
        logits = x @ p["w"] + p["b"]
        logits = logits - logits.max(axis=1, keepdims=True)
        logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        return -logp[np.arange(x.shape[0]), labels].mean()
    value, grads = xlanb.value_and_grad(loss)(params)
    return {k: params[k] - 0.1 * grads[k] for k in params}, value


def step_args():
    rng = np.random.default_rng(0)
    return ({"w": rng.standard_normal((6, 3)).astype(np.float32),
             "b": np.zeros(3, np.float32)},
            rng.standard_normal((5, 6)).astype(np.float32), rng.integers(0, 3, 5))


def test_dump_flags_leave_ir_dot_and_kernel_listings(tmp_path, monkeypatch):
    monkeypatch.setenv("XLANB_FLAGS", f"--xla_dump_to={tmp_path} --xla_dump_kernels "
                                      "--xla_dump_hlo_pass_re=layout")
    xlanb.jit(train_step)(*step_args())
    names = sorted(p.name for p in tmp_path.iterdir())
    prefix = "module_0001.train_step" if any(n.startswith("module_0001.train_step")
                                             for n in names) else names[0].rsplit(".", 2)[0]
    assert any(n.endswith("before_optimizations.txt") for n in names)
    assert any(n.endswith("after_optimizations.txt") for n in names)
    assert any(n.endswith("fusion.dot") for n in names)
    assert any(n.endswith(".layout.txt") for n in names)
    kernels = [p for p in tmp_path.glob("*.py") if not p.name.endswith("driver.py")]
    assert kernels and prefix
    for source in kernels:
        assert "define" in source.with_suffix(".ll").read_text()
        assert source.with_suffix(".s").read_text().strip()


def test_run_module_reproduces_a_dump_and_reports_parse_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("XLANB_FLAGS", f"--xla_dump_to={tmp_path}")
    args = step_args()
    xlanb.jit(train_step)(*args)
    dumped = next(tmp_path.glob("*after_optimizations.txt"))
    leaves = [args[0]["b"], args[0]["w"], args[1], args[2]]
    np.savez(tmp_path / "inputs.npz", *leaves)
    run = subprocess.run([sys.executable, "-m", "xlanb", "run-module", str(dumped),
                          "--inputs", str(tmp_path / "inputs.npz")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "matches the interpreter" in run.stdout and "DIFFERS" not in run.stdout
    bad = tmp_path / "bad.txt"
    bad.write_text("module m\n  %0 = parameter(), arg=0 : f32[3]\n  %1 = nope(%0) : f32[3]\n"
                   "  return (%1)\n")
    run = subprocess.run([sys.executable, "-m", "xlanb", "run-module", str(bad)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "line 3, column 8" in run.stdout


def test_chrome_trace_has_compile_phases_and_kernel_runs(tmp_path, monkeypatch):
    path = tmp_path / "trace.json"
    monkeypatch.setenv("XLANB_FLAGS", f"--xla_trace_to={path}")
    f = xlanb.jit(train_step)
    for _ in range(2):
        f(*step_args())
    trace_events.flush()
    events = json.loads(path.read_text())["traceEvents"]
    for event in events:                     # the trace-event format's complete events
        assert {"name", "cat", "ph", "ts", "dur", "pid", "tid"} <= set(event)
        assert event["ph"] == "X" and event["dur"] >= 0 and isinstance(event["ts"], float)
    names = {(e["cat"], e["name"]) for e in events}
    compiled = f.last_compiled
    for phase in compiled.report.phases:     # every pass, fusion, codegen, kernel compile
        assert (phase.category, phase.name) in names
    for kernel in compiled.kernels:
        if kernel.kind != "library":
            assert ("compile", f"numba {kernel.name}") in names or kernel.kind == "dot"
            runs = [e for e in events if e["cat"] == "run" and e["name"] == kernel.name]
            assert len(runs) >= 2            # one per call


def test_debug_nans_names_the_op_and_line(monkeypatch):
    monkeypatch.setenv("XLANB_FLAGS", "--xla_debug_nans")

    def f(x):
        y = x * 2
        return np.log(y - 2).sum()
    line = f.__code__.co_firstlineno + 2
    with pytest.raises(xlanb.NonFiniteError, match=f"`log` at .*test_dumps.py:{line}"):
        xlanb.jit(f)(np.array([1.0, 2.0, 3.0]))


def test_unknown_flag_lists_the_known_ones(monkeypatch):
    monkeypatch.setenv("XLANB_FLAGS", "--xla_dump_too=/tmp")
    with pytest.raises(xlanb.config.FlagError, match="--xla_dump_to"):
        xlanb.jit(lambda x: x + 1)(np.ones(2))


def test_config_update_sets_flags(tmp_path):
    from xlanb_runtime import flags
    with flags.overriding():                  # restores the overrides this test sets
        xlanb.config.update(xla_dump_to=str(tmp_path))
        xlanb.jit(lambda x: x * 3)(np.ones(2))
    assert list(tmp_path.glob("*before_optimizations.txt"))
