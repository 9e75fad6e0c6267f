"""Scans (cumsum, cumprod, ufunc.accumulate) as fused `scan` kernels, beside NumPy.

    python benchmarks/bench_scans.py [--threads N] [--repeats R]

NumPy runs each step of `np.cumsum(x * x) / n` as its own pass over memory (multiply,
scan, divide: three arrays written); the compiled program is one loop that reads x once
and writes the result once.  A bare scan can only tie with NumPy's accumulate loop (both
are a sequential add per element).  Printed: medians of interleaved runs, the NumPy/jit
ratio (> 1: jit faster) and the load average.  Single-thread mode by default
(../shared/PLATFORM.md).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import workloads_main  # noqa: E402


def workloads(np):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1_000_000).astype(np.float32)
    m = rng.uniform(0.99, 1.01, (1000, 1000))
    return {
        "cumsum 1e6 f32 (bare)": (lambda v: np.cumsum(v), (x,)),
        "cumsum(x*x)/n 1e6 f32": (lambda v: np.cumsum(v * v) / 1e6, (x,)),
        "cumsum axis=1 of exp, 1000x1000 f64": (
            lambda a: np.cumsum(np.exp(a - 1.0), axis=1) * 0.5, (m,)),
        "cumprod axis=0 1000x1000 f64": (lambda a: np.cumprod(a, axis=0) - 1.0, (m,)),
        "maximum.accumulate axis=1 of |a-1|": (
            lambda a: np.maximum.accumulate(np.abs(a - 1.0), axis=1), (m,)),
    }


def main() -> None:
    workloads_main("scans", workloads, repeats=15, kernels=True)


if __name__ == "__main__":
    main()
