"""datetime64/timedelta64 programs compiled (tracing/datetimes: int64 counts, NaT kept by
selects in the fused loop), beside NumPy.

    python benchmarks/bench_datetime.py [--threads N] [--repeats R]

NumPy runs one pass over memory per time ufunc (each NaT-aware); the compiled program fuses
the unit casts, NaT tests and comparisons into one loop.  Printed: medians of interleaved
runs, the NumPy/jit ratio (> 1: jit faster) and the load average.  Single-thread mode by
default (../shared/PLATFORM.md).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import workloads_main  # noqa: E402


def workloads(np):
    rng = np.random.default_rng(0)
    stamps = rng.integers(0, 10**9, 1_000_000).view("M8[s]")
    stamps[::17] = np.datetime64("NaT")
    later = stamps + rng.integers(0, 10**5, stamps.size).astype("m8[s]")
    start = np.datetime64("2000-01-01")
    return {
        "isnat(d) | (d - t0 > 3600 h) (1e6 M8[s])": (
            lambda d, e: np.isnat(d) | ((d - start) > np.timedelta64(3600, "h")),
            (stamps, later)),
        "where(isnat(d), t0, d).astype(M8[D])": (
            lambda d, e: np.where(np.isnat(d), start, d).astype("M8[D]"), (stamps, later)),
        "(e - d) / 1 h, NaT -> nan": (
            lambda d, e: (e - d) / np.timedelta64(1, "h"), (stamps, later)),
        "max(e - d)": (lambda d, e: (e - d).max(), (stamps, later)),
    }


def main() -> None:
    workloads_main("datetime64", workloads, repeats=11)


if __name__ == "__main__":
    main()
