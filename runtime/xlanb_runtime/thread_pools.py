"""Two thread pools on a few cores: Numba's OpenMP workers wait asleep, not spinning.

A program's parallel kernels run on Numba's pool (GNU OpenMP by default) and its matrix
products on OpenBLAS's own threads.  Each pool's idle workers spin for a while after their
work (libgomp: GOMP_SPINCOUNT, some 300k iterations), on the cores the other pool needs
next.  On 2 cores, `relu(x @ w + b)` (256x512x512 float32) with a parallel epilogue took
7.8 ms against NumPy's 0.61; with OpenMP's workers waiting passively (OMP_WAIT_POLICY),
0.55 ms.  libgomp reads the variable when Numba first loads it, at the first parallel
kernel, so setting it when xlanb_runtime is imported is in time.  A user's own setting
(OMP_WAIT_POLICY or GOMP_SPINCOUNT) stands.  The thread calibration measures parallel
kernels under the same policy, so its thresholds include the cost of waking a sleeping
worker.
"""
from __future__ import annotations

import os

OWN_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")


def passive_openmp_waits() -> None:
    """OMP_WAIT_POLICY=PASSIVE unless the user chose how OpenMP threads wait."""
    if not any(name in os.environ for name in OWN_SETTINGS):
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
