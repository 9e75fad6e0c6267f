"""Compiled loop functions (codegen/compiled_loop.py) in the kernel cache: a second process
loads them instead of compiling, a damaged entry is recompiled, and loops with one body
source compile once.  Numba also caches in-process, so each run that must read the disk is
a fresh `python -c` process with its own XLANB_CACHE_DIR; it prints one JSON line back:
how many loop functions it compiled (Numba's cache misses: codegen/compiled_loop.py's
compile_count) and loaded, and how far its results and arguments are from NumPy's."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import xlanb
from xlanb_runtime.codegen import compiled_loop

# `shifted` writes its argument x in place (a carried row the loop body updates in place,
# buffers.py), so the loop function takes a donated state; NumPy's x after the call is
# compared too.
PROGRAM = textwrap.dedent("""
    import copy, json
    import numpy as np
    import xlanb
    from xlanb_runtime.codegen import compiled_loop

    def shifted(x, w):
        for k in range(16):
            x[2, 1:] = x[2, :-1] * w[k] + x[2, 1:]
            x[2, :] = x[2, :] * 0.5 + x[2, 0]
        return x

    rng = np.random.default_rng(1)
    args = [rng.random((6, 9)), rng.random(16)]
    expected_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = shifted(*expected_args)
    jitted = xlanb.jit(shifted, tiered=False)
    got = jitted(*got_args)
    executable = jitted.last_compiled.executable
    kernels = [k for k in executable.plan.kernels if k.root.op.value == "loop"]
    runners = [executable.dispatchers[k.name] for k in kernels]
    loops = [r.dispatcher for r in runners if hasattr(r, "dispatcher")]
    print(json.dumps({
        "loops": len(runners), "compiled_loops": len(loops),
        "compiles": compiled_loop.compile_count(),
        "hits": sum(sum(d.stats.cache_hits.values()) for d in loops),
        "modules": [d.py_func.__module__ for d in loops],
        "decisions": [k.decisions[-1] for k in kernels],
        "result": float(np.abs(got - expected).max()),
        "argument": float(np.abs(got_args[0] - expected_args[0]).max()),
        "caller_kept_x": got is got_args[0]}))
""")


def run_program(cache_dir: Path) -> dict:
    env = dict(os.environ, XLANB_CACHE_DIR=str(cache_dir))
    env.pop("NUMBA_CACHE_DIR", None)          # Numba's files beside the modules
    process = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                             text=True, timeout=300)
    assert process.returncode == 0, process.stderr[-4000:]
    return json.loads(process.stdout.splitlines()[-1])


def entry_dir(root: Path, module: str) -> Path:
    (directory,) = (root / "kernels").glob(f"*/{module}")
    return directory


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Cold, warm, after truncating the loop's compiled code, and warm again."""
    root = tmp_path_factory.mktemp("xlanb-loop-cache")
    cold = run_program(root)
    warm = run_program(root)
    (module,) = cold["modules"]
    directory = entry_dir(root, module)
    (data,) = (directory / "__pycache__").glob(f"{module}.*.nbc")
    data.write_bytes(data.read_bytes()[:data.stat().st_size // 2])
    damaged = run_program(root)
    again = run_program(root)
    return {"cold": cold, "warm": warm, "damaged": damaged, "again": again,
            "source": (directory / f"{module}.py").read_text()}


def _assert_numpy_results(run: dict) -> None:
    assert run["result"] < 1e-12 and run["argument"] < 1e-12
    assert run["caller_kept_x"]                    # NumPy returns the argument itself


def test_a_second_process_loads_the_loop_function_without_compiling(runs):
    cold, warm = runs["cold"], runs["warm"]
    assert cold["loops"] == cold["compiled_loops"] == 1
    assert (cold["compiles"], cold["hits"]) == (1, 0)
    assert (warm["compiles"], warm["hits"]) == (0, 1)
    assert warm["modules"] == cold["modules"]
    assert cold["decisions"] == ["loop: 16 trips in one compiled function (compiled)"]
    assert warm["decisions"] == ["loop: 16 trips in one compiled function "
                                 "(loaded from the cache)"]
    for run in (cold, warm):
        _assert_numpy_results(run)


def test_the_loop_module_imports_its_kernels_from_their_entries(runs):
    """The loop's module binds each kernel by its cache entry, so a changed kernel makes
    another loop module (Numba checks only the loop's own source file)."""
    source = runs["source"]
    assert "for _trip in range(trips):" in source
    assert "kernel_module('xlanb_kernel_" in source
    assert "def kernel(trips, p0" in source and "cache=True" in source


def test_a_truncated_loop_entry_is_recompiled_and_recorded_again(runs):
    assert (runs["damaged"]["compiles"], runs["damaged"]["hits"]) == (1, 0)
    assert (runs["again"]["compiles"], runs["again"]["hits"]) == (0, 1)
    for run in (runs["damaged"], runs["again"]):
        _assert_numpy_results(run)


def test_two_loops_with_one_body_source_compile_once(tmp_path, monkeypatch):
    """Also where their trip counts differ: the count is the loop function's argument."""
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path))

    def two(x, y, b):
        for _ in range(24):
            x = np.tanh(0.9 * x + b)
        for _ in range(31):
            y = np.tanh(0.9 * y + b)
        return x, y

    rng = np.random.default_rng(0)
    args = (rng.random((5, 3)), rng.random((5, 3)), rng.random(3))
    before = compiled_loop.compile_count()
    jitted = xlanb.jit(two, tiered=False)
    got = jitted(*args)
    executable = jitted.last_compiled.executable
    kernels = [k for k in executable.plan.kernels if k.root.op.value == "loop"]
    loops = [executable.dispatchers[k.name] for k in kernels]
    assert len(loops) == 2 and loops[0].dispatcher is loops[1].dispatcher
    assert kernels[1].decisions[-1].endswith("(shared with an earlier loop)")
    # one body executable: its passes and kernels compiled once, under the first loop
    report = jitted.last_compiled.report
    compiled_bodies = {p.name.split("/")[0] for p in report.phases
                       if "/" in p.name and p.category == "pass"}
    assert compiled_bodies == {kernels[0].name}
    assert compiled_loop.compile_count() - before <= 1     # 0: an earlier test compiled it
    for g, e in zip(got, two(*args)):
        np.testing.assert_allclose(g, e, rtol=1e-13, atol=0)


def test_a_constant_binding_rebuilds_the_same_bits():
    """Constants are written into the loop's module by value: NaN payloads, signed zeros
    and every dtype come back bit for bit."""
    values = [np.float64(-0.0), np.float32(np.nan), np.int64(-7), np.bool_(True),
              np.complex128(1.5 - 2j), np.array([[1.0, -np.inf], [np.nan, 3.0]]),
              np.array(4, dtype=np.uint8)]
    for value in values:
        expression = compiled_loop._value_binding(value).split("   #")[0]
        rebuilt = eval(expression, {"np": np})
        assert type(rebuilt) is type(value) and rebuilt.dtype == value.dtype
        assert np.asarray(rebuilt).tobytes() == np.asarray(value).tobytes()
        assert np.shape(rebuilt) == np.shape(value)
        if isinstance(rebuilt, np.ndarray):
            assert rebuilt.flags.writeable and rebuilt.flags.c_contiguous
    assert compiled_loop._value_binding(np.ones((3, 4)).T) is None    # not as bound: no
