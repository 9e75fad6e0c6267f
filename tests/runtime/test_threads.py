"""Which kernels split over threads: `--xla_cpu_threads`, and the size from which threads
win on this machine (`thread_calibration`, or `--xla_cpu_parallel_min_elements`).  The
rest of the thread story is Numba's pool and the BLAS's, set by their own variables."""
import json

import numba
import numpy as np
import pytest

import xlanb_runtime
from xlanb_runtime import flags
from xlanb_runtime.codegen import thread_calibration
from xlanb_runtime.ir import Graph, Op, builder as B
from tolerance import assert_close

SIZE = 1 << 16


def _big_add(size: int = SIZE) -> Graph:
    x = B.parameter(0, (size,), np.float32)
    return Graph([x], [B.binary(Op.ADD, x, x)], "big_add")


def _is_parallel(executable) -> bool:
    return any("numba.prange" in k.source for k in executable.kernels)


@pytest.mark.parametrize("threads", [0, 1, 2])
def test_threads_flag_decides_parallel_kernels(threads):
    with flags.overriding(xla_cpu_threads=threads, xla_cpu_parallel_min_elements=SIZE):
        executable = xlanb_runtime.compile(_big_add())
    pool = numba.config.NUMBA_NUM_THREADS
    allowed = min(threads, pool) if threads else pool
    assert _is_parallel(executable) == (allowed >= 2)
    x = np.arange(SIZE, dtype=np.float32)
    np.testing.assert_array_equal(executable.run([x])[0], x + x)


def test_a_kernel_below_the_threshold_stays_serial():
    with flags.overriding(xla_cpu_threads=2, xla_cpu_parallel_min_elements=SIZE + 1):
        assert not _is_parallel(xlanb_runtime.compile(_big_add()))


def test_threads_flag_parses():
    parsed = flags.parse("--xla_cpu_threads=1 --xla_cpu_parallel_min_elements=4096")
    assert (parsed.xla_cpu_threads, parsed.xla_cpu_parallel_min_elements) == (1, 4096)


def test_threshold_is_the_size_from_which_every_larger_one_wins():
    win, lose = thread_calibration.MIN_SPEEDUP + 0.1, thread_calibration.MIN_SPEEDUP - 0.1
    assert thread_calibration.threshold_from({1: lose, 2: win, 4: win}) == 2
    assert thread_calibration.threshold_from({1: win, 2: lose, 4: win}) == 4
    assert thread_calibration.threshold_from({1: win, 2: win, 4: lose}) is None
    assert thread_calibration.threshold_from({4: lose}) is None


@pytest.fixture
def fresh_calibration(tmp_path, monkeypatch):
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(thread_calibration, "_measured", {})
    return tmp_path


def test_calibration_is_measured_once_and_read_back(fresh_calibration, monkeypatch):
    """The measured thresholds are kept on disk; a new process (here: an emptied memo)
    reads them instead of measuring, and the compiler follows them."""
    first = {kind: thread_calibration.parallel_min_elements(2, kind)
             for kind in thread_calibration.KINDS}
    files = list((fresh_calibration / "calibration").glob("parallel-*.json"))
    assert len(files) == 1
    record = json.loads(files[0].read_text())
    assert record["min_elements"] == first
    assert all(size in thread_calibration.SIZES or size is None for size in first.values())

    monkeypatch.setattr(thread_calibration, "_measured", {})
    monkeypatch.setattr(thread_calibration, "measure_speedups",
                        lambda *a: pytest.fail("measured again"))
    record["min_elements"] = {"map": SIZE, "reduce": None}
    files[0].write_text(json.dumps(record))
    with flags.overriding(xla_cpu_threads=2):
        executable = xlanb_runtime.compile(_big_add())
    assert _is_parallel(executable) == (min(2, numba.config.NUMBA_NUM_THREADS) >= 2)


def test_an_unreadable_calibration_is_measured_again(fresh_calibration, monkeypatch):
    directory = fresh_calibration / "calibration"
    directory.mkdir()
    key = thread_calibration.machine_key(2)
    (directory / f"parallel-{key}.json").write_text('{"format": 2, "min_elem')
    measured = {}
    monkeypatch.setattr(thread_calibration, "measure_speedups",
                        lambda threads, kind: measured.setdefault(kind, {1 << 16: 0.5}))
    assert thread_calibration.parallel_min_elements(2, "map") is None
    assert set(measured) == set(thread_calibration.KINDS)
    record = json.loads((directory / f"parallel-{key}.json").read_text())
    assert record["min_elements"] == {"map": None, "reduce": None}


def _scan_graph(shape, axis, expensive=False) -> Graph:
    x = B.parameter(0, shape, np.float64)
    body = B.unary(Op.EXP, x) if expensive else x
    return Graph([x], [B.scan(body, "sum", axis)], "scan")


@pytest.mark.parametrize("shape,axis,expensive,split", [
    ((64, 300), 1, False, True), ((64, 300), 1, True, True),   # rows: split, buffered too
    ((8, 16, 40), 2, False, True), ((8, 16, 40), 1, False, True),
    ((300, 64), 0, False, False)])                          # along the first axis: serial
def test_scans_split_their_independent_rows(shape, axis, expensive, split):
    with flags.overriding(xla_cpu_threads=2, xla_cpu_parallel_min_elements=64):
        executable = xlanb_runtime.compile(_scan_graph(shape, axis, expensive))
    assert _is_parallel(executable) == (split and numba.config.NUMBA_NUM_THREADS >= 2)
    x = np.random.default_rng(0).uniform(-1, 1, shape)
    expected = np.cumsum(np.exp(x) if expensive else x, axis=axis)
    np.testing.assert_allclose(executable.run([x])[0], expected, rtol=1e-12)


def test_nonnegative_index_turns_gathers_into_vector_loads():
    """A loop from a start LLVM cannot see (a prange body's) keeps NumPy's negative-index
    wraparound on every access and vectorizes into gathers, if at all; with the index
    stated non-negative the accesses are plain vector loads, as in `range(n)`."""
    import re
    from xlanb_runtime.codegen.hints import nonnegative

    def stencil(hinted):
        @numba.njit(error_model="numpy", fastmath={"nsz", "contract", "afn"})
        def kernel(a, out, lo, hi):
            for i in range(lo, hi):
                if hinted:
                    i = nonnegative(i)
                out[i] = a[i] + a[i + 1] * np.float32(2) + a[i + 2]
        return kernel

    a = np.random.default_rng(1).uniform(-1, 1, 1002).astype(np.float32)
    want = a[:-2] + a[1:-1] * np.float32(2) + a[2:]
    for hinted in (False, True):
        kernel, out = stencil(hinted), np.zeros(1000, np.float32)
        kernel(a, out, 0, 1000)
        np.testing.assert_array_equal(out, want)
    ir_text = kernel.inspect_llvm(kernel.signatures[0])
    assert "masked.gather" not in ir_text
    assert re.search(r"load <\d+ x float>", ir_text), "the hinted loop did not vectorize"


@pytest.mark.parametrize("reduce", [False, True])
def test_parallel_loop_bodies_state_their_index_nonnegative(reduce):
    """Every prange body of a generated kernel starts with `i = nonnegative(i)` (and asks
    for wide vectors again where the kernel computes vecmath functions: its own function
    to LLVM), and computes NumPy's answer on two threads."""
    import re
    n = 1 << 16
    x = B.parameter(0, (n + 2,), np.float32)
    taps = [B.slice_(x, [(k, n + k, 1)]) for k in range(3)]
    value = B.binary(Op.ADD, B.binary(Op.ADD, taps[0], taps[1]), B.unary(Op.EXP, taps[2]))
    out = B.reduce(value, "sum", (0,)) if reduce else value
    with flags.overriding(xla_cpu_threads=2, xla_cpu_parallel_min_elements=1024):
        executable = xlanb_runtime.compile(Graph([x], [out], "taps"))
    a = np.random.default_rng(2).uniform(-1, 1, n + 2).astype(np.float32)
    want = a[:-2] + a[1:-1] + np.exp(a[2:])
    got = executable.run([a])[0]
    assert_close(got, want.astype(np.float64).sum() if reduce else want,
                 n=n if reduce else 1)
    if numba.config.NUMBA_NUM_THREADS < 2:
        return
    source = "\n".join(k.source for k in executable.kernels)
    loops = re.findall(r"for (\w+) in numba\.prange\(.*\):\n\s*(\w+) = nonnegative\((\w+)\)"
                       r"\n\s*prefer_wide_vectors\(\)", source)
    assert loops and len(loops) == source.count("numba.prange")
    assert all(a == b == c for a, b, c in loops)


@pytest.mark.parametrize("preset,want", [
    ({}, "PASSIVE"), ({"OMP_WAIT_POLICY": "ACTIVE"}, "ACTIVE"), ({"GOMP_SPINCOUNT": "1000"}, None)])
def test_openmp_workers_wait_passively_unless_the_user_chose(preset, want):
    """Spinning OpenMP workers starved OpenBLAS's threads on 2 cores (thread_pools.py):
    importing the runtime asks for passive waits, before Numba loads its OpenMP pool; a
    user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT stands."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")}
    env.update(preset)
    code = "import os, xlanb_runtime; print(os.environ.get('OMP_WAIT_POLICY'))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == str(want)
