"""Library calls (sorts, LAPACK, FFTs, scans) inside compiled programs, beside NumPy.

    python benchmarks/bench_library_calls.py [--threads N] [--repeats R]

A library call runs NumPy's own function, so alone it can only tie with NumPy (minus the
driver's per-call cost, a few microseconds); what compiling buys is the work around it:
the elementwise producers and consumers fuse into kernels on either side instead of
running as separate NumPy passes, and the program is not split in two as a fallback
under `must_compile=False` would split it.  Printed: medians of interleaved runs and the
NumPy/jit ratio (> 1: jit faster).  Single-thread mode by default (../shared/PLATFORM.md).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import workloads_main  # noqa: E402


def workloads(np):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1_000_000).astype(np.float32)
    small = rng.standard_normal(64)
    a = rng.standard_normal((256, 256))
    spd = a @ a.T + 256 * np.eye(256)
    b = rng.standard_normal((256, 8))
    signal = rng.standard_normal((64, 4096))

    return {
        "sort 64 (call overhead)": (lambda v: np.sort(v), (small,)),
        "sort 1e6 f32": (lambda v: np.sort(v), (x,)),
        "clip+sort+scale 1e6 f32": (lambda v: np.sort(np.clip(v, -1, 1) * 3) * 0.5 + 1, (x,)),
        "median of |x| 1e6 f32": (lambda v: np.median(np.abs(v) * 2), (x,)),
        "cumsum of x*x 1e6 f32": (lambda v: np.cumsum(v * v) / 1e6, (x,)),
        "solve 256 (8 rhs), residual": (
            lambda m, r: np.abs(m @ np.linalg.solve(m, r) - r).max(), (spd, b)),
        "eigh 256": (lambda m: np.linalg.eigh(m)[0].sum(), (spd,)),
        "rfft power spectrum 64x4096": (
            lambda s: np.log1p(np.abs(np.fft.rfft(s * np.hanning(4096))) ** 2), (signal,)),
    }


def main() -> None:
    workloads_main("library calls", workloads, repeats=15)


if __name__ == "__main__":
    main()
