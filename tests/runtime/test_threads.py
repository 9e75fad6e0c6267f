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
