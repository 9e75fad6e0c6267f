"""Parallel kernels by measurement: from what size, if any, a kernel split over Numba's
threads beats the same kernel on one thread, on this machine.

A fixed size threshold lost on machines of our kind: on one 2-vCPU machine `sum(x + y*z)`
over 1e7 float32 took 8.06 ms split over 2 threads and 3.00 ms on one (issue 15), on
another the split was faster.  So the threshold is measured, once per machine, CPU count,
thread count and toolchain, and kept in the cache directory
(`$XLANB_CACHE_DIR/calibration/`; delete the file to measure again):

- two streaming kernels, float32 and bandwidth-bound (the case where threads gain least),
  one elementwise (`out = a*b + a`) and one reduction (`sum(a*b)`, a prange reduction),
  run serial and parallel, interleaved, at sizes from 2^16 to 2^22 elements;
- each kind's threshold is the smallest size from which parallel is at least
  `MIN_SPEEDUP` faster at that size and every larger one; no such size means that kind of
  kernel stays serial.

Compute-heavier kernels gain at least as much from threads as the streaming ones, so the
rule never picks threads where they lose.  It costs about 0.2 s, once, at the first compile
that has a kernel large enough to ask; `--xla_cpu_parallel_min_elements=N` fixes the
threshold instead (tests do, so that their kernels do not depend on the machine).
"""
from __future__ import annotations

import json
import os
import platform
import time

import numba
import numpy as np

from . import cache
from .hints import nonnegative

SIZES = tuple(1 << p for p in range(16, 23, 2))     # 64Ki, 256Ki, 1Mi, 4Mi elements
MIN_SPEEDUP = 1.15
ROUNDS = 5
FORMAT = 4          # 3: parallel loops state their index non-negative; 4: passive waits
KINDS = ("map", "reduce")

_measured: dict[str, dict[str, int | None]] = {}


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _stream_serial(a, b, out):
    for i in range(a.shape[0]):
        out[i] = a[i] * b[i] + a[i]


@numba.njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def _stream_parallel(a, b, out):
    for i in numba.prange(a.shape[0]):
        i = nonnegative(i)                  # as generated parallel kernels state it
        out[i] = a[i] * b[i] + a[i]


@numba.njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"})
def _sum_serial(a, b, out):
    total = np.float32(0)
    for i in range(a.shape[0]):
        total += a[i] * b[i]
    out[0] = total


@numba.njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"},
            parallel=True)
def _sum_parallel(a, b, out):
    total = np.float32(0)
    for i in numba.prange(a.shape[0]):
        i = nonnegative(i)
        total += a[i] * b[i]
    out[0] = total


_KERNELS = {"map": (_stream_serial, _stream_parallel), "reduce": (_sum_serial, _sum_parallel)}


def parallel_min_elements(threads: int, kind: str) -> int | None:
    """The smallest `kind` kernel ("map" or "reduce", in loop iterations) worth splitting
    over `threads` threads here, or None when no size is: measured once, then read back."""
    key = machine_key(threads)
    if key not in _measured:
        _measured[key] = _read_or_measure(key, threads)
    return _measured[key][kind]


def machine_key(threads: int) -> str:
    cpu = _cpu_model() or platform.machine()
    raw = f"{cpu}-cpus{os.cpu_count()}-threads{threads}-{cache.version_tag()}"
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in raw)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return ""


def _read_or_measure(key: str, threads: int) -> dict[str, int | None]:
    path = cache.cache_dir() / "calibration" / f"parallel-{key}.json"
    try:
        record = json.loads(path.read_text())
        if record.get("format") == FORMAT:
            return {kind: record["min_elements"][kind] for kind in KINDS}
    except (OSError, ValueError, KeyError, AttributeError, TypeError):
        pass                                # absent or unreadable: measure again
    speedups = {kind: measure_speedups(threads, kind) for kind in KINDS}
    thresholds = {kind: threshold_from(speedups[kind]) for kind in KINDS}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({
            "format": FORMAT, "min_elements": thresholds,
            "speedups": {kind: {str(n): s for n, s in speedups[kind].items()}
                         for kind in KINDS}}))
        os.replace(tmp, path)
    except OSError:
        pass                                # a read-only cache: measure once per process
    return thresholds


def measure_speedups(threads: int, kind: str) -> dict[int, float]:
    """Serial time / parallel time of `kind`'s streaming kernel at SIZES, largest first,
    down to the first size where parallel does not win."""
    previous = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    speedups = {}
    try:
        for n in sorted(SIZES, reverse=True):   # below a size that loses, none is asked
            speedups[n] = _speedup(n, *_KERNELS[kind])
            if speedups[n] < MIN_SPEEDUP:
                break
        return speedups
    finally:
        numba.set_num_threads(previous)


def _speedup(n: int, serial, parallel) -> float:
    a = np.linspace(0, 1, n, dtype=np.float32)
    b, out = a[::-1].copy(), np.empty_like(a)
    times = {serial: [], parallel: []}
    for kernel in times:
        kernel(a, b, out)                   # compile or load, warm the pool and caches
    for _ in range(ROUNDS):
        for kernel, samples in times.items():
            start = time.perf_counter()
            kernel(a, b, out)
            samples.append(time.perf_counter() - start)
    return float(np.median(times[serial]) / np.median(times[parallel]))


def threshold_from(speedups: dict[int, float]) -> int | None:
    """The smallest size from which every measured speedup is at least MIN_SPEEDUP."""
    threshold = None
    for size in sorted(speedups, reverse=True):
        if speedups[size] < MIN_SPEEDUP:
            break
        threshold = size
    return threshold
