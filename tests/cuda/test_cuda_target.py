"""The CUDA target (`xlanb.jit(f, target="cuda")`), tested without a GPU.

Numba reads NUMBA_ENABLE_CUDASIM when it is imported, and this pytest process runs the CPU
target, so the device checks run `cuda_cases.py` in subprocesses:
  * simulator: every case compiled for CUDA on Numba's simulator against NumPy or the
    reference interpreter (seed examples, the fusion tests' IR programs, random programs
    from the differential generator, softmax rows, split reductions, scatter-adds, a
    training step, host<->device copy counts, host library kernels, dumps);
  * ptx: every kernel of those programs compiled to sm_90 PTX by NVVM (no GPU needed),
    then assembled by `ptxas` where the CUDA toolkit is installed;
  * no-gpu: without the simulator and without a GPU, the error names the simulator.
The generated source's structure is checked here, in-process (it needs no numba.cuda).
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import xlanb
from xlanb_runtime.codegen import cuda as cuda_codegen
from xlanb_runtime.ir import parse_graph
from xlanb_runtime.passes.fusion import plan_fusion

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SCRIPT = HERE / "cuda_cases.py"
TIMEOUT = 300

_spec = importlib.util.spec_from_file_location("_xlanb_cuda_cases", SCRIPT)
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

requires_numba_cuda = pytest.mark.skipif(
    importlib.util.find_spec("numba_cuda") is None,
    reason="needs numba-cuda (pip install numba-cuda nvidia-cuda-nvrtc)")


def run_cases(*argv: str, simulator: bool) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO), str(REPO / "runtime"), str(REPO / "tests")]   # tests: tolerance.py
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    for name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[name] = "1"
    done = subprocess.run([sys.executable, str(SCRIPT), *argv], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=TIMEOUT)
    lines = [line for line in done.stdout.splitlines() if line.startswith("XLANB-JSON ")]
    assert done.returncode == 0 and lines, \
        f"cuda_cases.py {' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-4000:]}"
    return json.loads(lines[-1][len("XLANB-JSON "):])


@pytest.fixture(scope="module")
def simulator_results():
    return run_cases("simulator", simulator=True)


SIMULATOR_CASES = list(cases.simulator_cases())


# Known problem (2026-11-24): on this project's machines the simulator's results differ from
# run to run.  Different cases fail each run, with garbage values (4e19) that look like
# unwritten or raced buffers.  It happens at the session-start commit 86105e2 too, with
# numba-cuda 0.30.4.  2026-11-27: on a loaded 2-core machine 3 of 6 runs each failed one
# case (row softmax, row layer norm, one-row scans: one block's rows wrong), 2 quiet runs
# passed; on an H100 (and an H200, 2026-11-28) the same cases passed in every run, and
# compute-sanitizer found no shared-memory race (racecheck), barrier misuse (synccheck) or
# bad access (memcheck) in them.  So a case that fails in the batch runs again alone, in a
# fresh simulator process, which decides: a wrong kernel fails there too.


@requires_numba_cuda
@pytest.mark.parametrize("name", SIMULATOR_CASES)
def test_on_simulator(simulator_results, name):
    result = simulator_results[name]
    if not result["ok"]:            # the simulator's run-to-run variation (above)?
        result = run_cases("simulator", name, simulator=True)[name]
    assert result["ok"], result["error"]


@requires_numba_cuda
def test_simulator_ran_the_reduced_differential_set(simulator_results):
    random = [n for n in simulator_results if n.startswith("random_program_")]
    assert len(random) == cases.DIFFERENTIAL_PROGRAMS
    kinds = {k for n in random for k in simulator_results[n]["detail"]}
    assert {"loop", "reduce", "dot"} <= kinds, kinds


@requires_numba_cuda
def test_no_gpu_error_names_the_simulator():
    result = run_cases("no-gpu", simulator=False)
    if "skipped" in result:
        pytest.skip(result["skipped"])
    assert result["raised"] == "CudaUnavailableError", result
    assert result["is_runtime_error"]
    assert "NUMBA_ENABLE_CUDASIM=1" in result["message"]


@requires_numba_cuda
def test_every_kernel_compiles_to_sm90_ptx(tmp_path):
    results = run_cases("ptx", str(tmp_path), simulator=False)
    failures = {n: r["error"] for n, r in results.items() if not r["ok"]}
    if failures and all(("nvvm" in e.lower() or "nvrtc" in e.lower())
                        for e in failures.values()):
        pytest.skip("NVVM is not available: " + next(iter(failures.values()))[-300:])
    assert not failures, "\n".join(f"{n}:\n{e}" for n, e in failures.items())
    files = [f for r in results.values() for f in r["files"]]
    assert any(f.endswith("_finish.ptx") for f in files)       # split reduction
    assert any(f.endswith("_updates.ptx") for f in files)      # scatter atomics
    assert [Path(f).name for f in results["dump_writer"]["files"]] == \
        ["module_0001.dense.dot_fusion_0.ptx"]
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return
    for path in files:
        if not path.endswith(".ptx"):
            continue
        check = subprocess.run([ptxas, "-arch=sm_90", path, "-o", os.devnull],
                               capture_output=True, text=True, timeout=120)
        assert check.returncode == 0, f"ptxas rejected {path}:\n{check.stderr}"


@requires_numba_cuda
def test_launch_configuration_is_made_once_without_the_small_grid_warning():
    """The driver calls `kernel[blocks, threads]` objects made when it was built (making
    one per call cost as much as the launch), and a one-block finishing pass does not
    warn the user about occupancy."""
    from numba import cuda
    from xlanb_runtime.cuda_launch import configured

    @cuda.jit
    def kernel(a):
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        launcher = configured(kernel, cuda_codegen.Launch("kernel", 1, 32))
    assert (launcher.griddim, launcher.blockdim) == ((1, 1, 1), (32, 1, 1))


# -- generated source, in-process (no numba.cuda needed) -----------------------------------
GPU = cuda_codegen.LaunchPolicy.for_gpu(132)


def generated(fn, *args, kind: str):
    graph = xlanb.jit(fn).lower(*args).graph
    kernel = next(k for k in plan_fusion(graph).kernels if k.kind == kind)
    return cuda_codegen.generate(kernel, GPU)


def test_dot_is_a_tiled_shared_memory_gemm_with_the_epilogue_before_the_store():
    x, w, b = np.ones((64, 32), np.float32), np.ones((32, 48), np.float32), np.ones(48,
                                                                                 np.float32)
    gen = generated(lambda x, w, b: np.maximum(x @ w + b, 0), x, w, b, kind="dot")
    assert "cuda.shared.array((16, TILE)" in gen.source and "TILE = 16" in gen.source
    assert "matmul" not in gen.source
    store = gen.source.rindex("out0[")
    assert gen.source.index("syncthreads") < gen.source.index(">= c0") < store
    # 12 tiles of 16 x 16: too few blocks for a larger register tile, one output a thread
    assert [(l.blocks, l.threads) for l in gen.launches] == [(4 * 3, (16, 16))]
    assert "acc0_0" in gen.source and "acc0_1" not in gen.source


@pytest.mark.parametrize("m, n, rows", [(512, 1024, 2), (2048, 2048, 4), (128, 512, 1)])
def test_dot_register_tile_grows_while_every_sm_keeps_two_blocks(m, n, rows):
    x, w = np.ones((m, 8), np.float32), np.ones((8, n), np.float32)
    gen = generated(lambda x, w: x @ w, x, w, kind="dot")
    edge = 16 * rows
    assert f"cuda.shared.array(({edge}, TILE)" in gen.source
    assert f"acc{rows - 1}_{rows - 1} " in gen.source and f"acc{rows}_0 " not in gen.source
    blocks = -(-m // edge) * -(-n // edge)
    assert gen.launches[0].blocks == min(blocks, GPU.max_blocks)
    assert rows == GPU.dot_rows or -(-m // (2 * edge)) * -(-n // (2 * edge)) < \
        GPU.min_dot_blocks


def test_full_reduction_is_split_over_blocks_then_finished():
    gen = generated(lambda v: np.sum(v * 2), np.ones(1 << 20, np.float32), kind="reduce")
    assert gen.functions == ["reduce_fusion_0", "reduce_fusion_0_finish"]
    first, finish = gen.launches
    assert first.threads == 256 and first.blocks == GPU.split_blocks
    assert finish.blocks == 1
    assert "cuda.syncthreads()" in gen.source and "np.float64(0)" in gen.source


def test_row_reduction_uses_one_block_per_row_sized_to_the_row():
    gen = generated(lambda v: np.max(v, axis=1), np.ones((4096, 10), np.float32),
                    kind="reduce")
    (launch,) = gen.launches
    assert launch.threads == 16 and launch.blocks == 4096


def test_loop_kernel_is_grid_stride_with_sizes_as_arguments():
    small = generated(lambda v: np.exp(v) + 1, np.ones((3, 5), np.float32), kind="loop")
    big = generated(lambda v: np.exp(v) + 1, np.ones((300, 5000), np.float32), kind="loop")
    assert "cuda.gridsize(1)" in small.source and "math.exp" in small.source
    assert small.source.split("# launch")[1].split("\n", 1)[1] == \
        big.source.split("# launch")[1].split("\n", 1)[1]             # sizes are arguments
    assert small.launches[0].threads == 128 and big.launches[0].threads == 256


def test_scatter_adds_updates_with_atomics():
    graph = parse_graph(dict((n, t) for n, t, _ in cases.fusion_cases())[
        "scatter_add_with_fused_base_updates_and_indices"])
    kernel = next(k for k in plan_fusion(graph).kernels if k.kind == "scatter")
    gen = cuda_codegen.generate(kernel, GPU)
    assert gen.functions == ["scatter_add_0", "scatter_add_0_updates"]
    assert "cuda.atomic.add(out0, (" in gen.source


def test_scan_is_one_thread_per_row_walking_the_axis_in_order():
    gen = generated(lambda v: np.cumsum(v * v, axis=0) / 2, np.ones((100, 300), np.float32),
                    kind="scan")
    (launch,) = gen.launches
    assert launch.blocks * launch.threads >= 300          # a thread for each of 300 rows
    body = gen.source.split("for k0 in range(")[1]
    assert "sacc = " in body and "(sacc + " in body and body.index("*") < body.index("sacc")
    assert "out0[" in body                                 # the consumer is in the loop
