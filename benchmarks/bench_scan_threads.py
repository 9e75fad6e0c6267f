"""Scans over independent rows split over threads, beside the same scan on one thread.

    python benchmarks/bench_scan_threads.py [--repeats R]

`np.cumsum(a, axis=1)` of a (rows, n) array scans each row on its own: the compiled kernel
splits the rows over Numba's threads (codegen/cpu.py `should_parallelize`, from the size
thread_calibration measured on this machine; forced here, the calibration's own choice
is printed).  Printed, from one process with 2 threads,
interleaved rounds: min and median ms of jit on 1 thread, jit on 2 threads and NumPy, the
paired ratio 1-thread/2-thread, and the load average.  Two-thread figures are noisy on a
shared 2-vCPU VM (../shared/PLATFORM.md): compare the min columns.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import interleaved_times, paired_ratio, pin_threads  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args()
    pin_threads(2)
    import numpy as np
    import xlanb
    from xlanb_runtime import flags
    rng = np.random.default_rng(0)
    cases = {
        "cumsum axis=1 4000x1000 f64": (lambda a: np.cumsum(a, axis=1),
                                        rng.standard_normal((4000, 1000))),
        "cumsum axis=1 of exp 2000x1000 f32": (
            lambda a: np.cumsum(np.exp(a), axis=1),
            rng.standard_normal((2000, 1000)).astype(np.float32)),
        "maximum.accumulate axis=2 40x100x1000 f64": (
            lambda a: np.maximum.accumulate(a, axis=2), rng.standard_normal((40, 100, 1000))),
    }
    from xlanb_runtime.codegen import thread_calibration
    print(f"load average {os.getloadavg()}; calibrated 2-thread threshold for maps: "
          f"{thread_calibration.parallel_min_elements(2, 'map')} elements")
    for name, (fn, a) in cases.items():
        impls = {}
        for threads in (1, 2):       # 2: split whatever the calibration says (printed)
            with flags.overriding(xla_cpu_threads=threads, xla_tiered=False,
                                  xla_cpu_parallel_min_elements=1 if threads > 1 else 0):
                jitted = xlanb.jit(fn)
                jitted(a)                            # compiled under this setting
                parallel = any("numba.prange" in k.source
                               for k in jitted.lower(a).compile().kernels)
            impls[f"jit {threads}t{' (prange)' if parallel else ''}"] = \
                (lambda j=jitted: j(a))
        impls["numpy"] = lambda: fn(a)
        times = interleaved_times(impls, args.repeats)
        serial, parallel = list(times)[:2]
        cells = ", ".join(f"{k} min {min(v) * 1e3:.2f} med {statistics.median(v) * 1e3:.2f}"
                          for k, v in times.items())
        print(f"{name}: {cells}; 1t/2t paired {paired_ratio(times, serial, parallel):.2f}")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
