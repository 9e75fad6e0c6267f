"""Shared benchmark plumbing: thread pinning, interleaved timing, bandwidth, reporting.

Import `pin_threads` and call it BEFORE importing NumPy/Numba: the pools read their thread
counts at import.  Single-thread mode (the primary figures on our 2-vCPU machines, see
../shared/PLATFORM.md) pins the process to one core and every pool to one thread.
"""
from __future__ import annotations

import os
import statistics
import time


def pin_threads(threads: int) -> None:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMBA_NUM_THREADS"):
        os.environ[var] = str(threads)
    os.environ.setdefault("NUMBA_THREADING_LAYER", "omp")
    # Old-OpenBLAS workarounds set on some machines select a slower sgemm kernel.
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        os.environ.pop(var, None)
    if threads == 1:
        os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
    if hasattr(os, "sched_setaffinity"):
        _pin_cpus(threads)
    compile_before_first_result()


def _pin_cpus(threads: int) -> None:
    """One thread: the process on one core.  More: on every core again, since a process
    started by a pinned one (the 2-thread column's subprocess) inherits its one core, and
    two threads on one core made every parallel kernel lose (and the thread calibration
    find that threads never win)."""
    if threads == 1:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        return
    try:
        os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
    except OSError:                     # a container's cpuset narrower than cpu_count
        pass


def compile_before_first_result() -> None:
    """Benchmarks time compiled steps and compile times: a first call compiles before it
    returns (`--xla_tiered=false`) instead of answering on the NumPy tier.  Time to first
    result with tiering is measured on its own (bench_training.py)."""
    text = os.environ.get("XLANB_FLAGS", "")
    if "xla_tiered" not in text:
        os.environ["XLANB_FLAGS"] = f"{text} --xla_tiered=false".strip()


def blas_description() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    parts = []
    for pool in threadpool_info():
        if pool.get("user_api") == "blas":
            parts.append(f"{pool.get('internal_api')} {pool.get('version')} "
                         f"kernel={pool.get('architecture')} threads={pool.get('num_threads')}")
    return "; ".join(parts) or "no BLAS pool found"


def interleaved_times(impls: dict, repeats: int, warmup: int = 2, settle: int = 0,
                      min_seconds: float = 0.0) -> dict[str, list[float]]:
    """Seconds of each implementation per round, timed round-robin so noise hits all
    alike, the order reversed every other round: no implementation always runs right
    after the same other one (whose freed memory, cache footprint and frequency state it
    would inherit).  At least `repeats` rounds, more until `min_seconds` have passed (a
    fast kernel gets enough rounds for its median to settle).  `settle` untimed calls
    precede each timed one: the timed call then finds the caches as its own previous call
    left them (a training loop's steady state) instead of as the other implementation
    left them (JAX reads its own copies of the arrays)."""
    for fn in impls.values():
        for _ in range(warmup):
            fn()
    times: dict[str, list[float]] = {name: [] for name in impls}
    order, begin, rounds = list(impls), time.perf_counter(), 0
    while rounds < repeats or time.perf_counter() - begin < min_seconds:
        for name in order:
            fn = impls[name]
            for _ in range(settle):
                fn()
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
        order.reverse()
        rounds += 1
    return times


def interleaved_medians(impls: dict, repeats: int, warmup: int = 2) -> dict[str, float]:
    """Median seconds of each implementation, timed round-robin."""
    return {name: statistics.median(ts)
            for name, ts in interleaved_times(impls, repeats, warmup).items()}


def paired_ratio(times: dict[str, list[float]], a: str, b: str) -> float:
    """Median over rounds of a's time / b's in the same round.  This VM's speed drifts by
    20-30% over seconds; two calls timed back to back share the drift, so the paired
    ratio is steadier than the ratio of the two medians."""
    return statistics.median(x / y for x, y in zip(times[a], times[b]))


def ratio_quartiles(times: dict[str, list[float]], a: str, b: str) -> tuple[float, float]:
    """25th and 75th percentiles over rounds of a's time / b's in the same round: the
    spread `paired_ratio`'s median comes with (a kernel tied with NumPy reads anywhere in
    it from run to run)."""
    ratios = sorted(x / y for x, y in zip(times[a], times[b]))
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    return quartiles[0], quartiles[2]


def per_call_seconds(fn, calls: int = 20000, rounds: int = 5) -> float:
    """Median over rounds of the mean time of a tight loop of calls (overhead figures)."""
    results = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        results.append((time.perf_counter() - start) / calls)
    return statistics.median(results)


def measure_bandwidth(n: int = 50_000_000, repeats: int = 7) -> dict[str, float]:
    """Read-only sum and triad bandwidth (GB/s) with Numba loops, as the roofline."""
    import numba
    import numpy as np

    @numba.njit(parallel=True, fastmath=True)
    def read_sum(a):        # float32 partial sums: the fastest read loop Numba emits
        total = np.float32(0)
        for i in numba.prange(a.size):
            total += a[i]
        return total

    @numba.njit(parallel=True, fastmath=True)
    def triad(a, b, c, s):
        for i in numba.prange(a.size):
            a[i] = b[i] + s * c[i]

    a = np.ones(n, np.float32)
    b = np.ones(n, np.float32)
    c = np.ones(n, np.float32)
    read_sum(a)
    triad(a, b, c, np.float32(2.0))
    medians = interleaved_medians({"read": lambda: read_sum(a),
                                   "triad": lambda: triad(a, b, c, np.float32(2.0))},
                                  repeats)
    return {"read GB/s": a.nbytes / medians["read"] / 1e9,
            "triad GB/s": 3 * a.nbytes / medians["triad"] / 1e9}


def workloads_main(title: str, workloads, repeats: int = 15, kernels: bool = False) -> None:
    """The main of a benchmark of `workloads(np) -> {name: (fn, inputs)}`: parses
    --threads/--repeats, pins threads, and prints NumPy and jit medians of interleaved runs,
    their ratio (> 1: jit faster), optionally the kernel kinds, and the load average."""
    import argparse
    parser = argparse.ArgumentParser(description=title)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=repeats)
    args = parser.parse_args()
    pin_threads(args.threads)
    import numpy as np
    import xlanb

    rows = [["workload", "NumPy ms", "jit ms", "NumPy/jit"] + (["kernels"] if kernels else [])]
    for name, (fn, inputs) in workloads(np).items():
        jitted = xlanb.jit(fn)
        with np.errstate(over="ignore"):
            jitted(*inputs)                                 # compile outside the timing
            times = interleaved_medians({"numpy": lambda: fn(*inputs),
                                         "jit": lambda: jitted(*inputs)}, args.repeats)
        row = [name, f"{times['numpy'] * 1e3:.3f}", f"{times['jit'] * 1e3:.3f}",
               f"{times['numpy'] / times['jit']:.2f}x"]
        if kernels:
            row.append(",".join(k.kind for k in jitted.lower(*inputs).compile().kernels))
        rows.append(row)
    print(f"{title}, {args.threads} thread(s), medians of {args.repeats} interleaved runs, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(format_table(rows))


def format_table(rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                               for i, (c, w) in enumerate(zip(r, widths))) for r in rows)
