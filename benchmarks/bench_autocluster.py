"""What `jit(f, must_compile=False)` costs beside `jit` and NumPy (the README's table).

    python benchmarks/bench_autocluster.py            # default threads, empty kernel cache

Four functions on 256x256 float64 (and one on 8 floats): no break, one `if` on an array
value, a 50-step loop with an `if` per step, and `x + 1`.  For each: the first call (trace
and compile into an empty cache), then medians of 50 calls of NumPy, auto-clustering and,
where it compiles, `jit`, and the path auto-clustering settled on.
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import format_table  # noqa: E402


def no_break(x):
    y = np.tanh(x) * 2 + 1
    return (y * y).sum(axis=1)


def one_break(x):
    y = np.tanh(x) * 2 + 1
    if y.mean() > 1.5:                  # Python `if` on a traced value: a break
        y = y - 1
    return (y * y).sum(axis=1)


def break_per_step(x):
    acc = x[0].copy()
    for i in range(1, 50):
        if acc[0] > 10:                 # a break per step
            acc = acc * 0.5
        acc = acc + x[i]
    return acc


def add_one(x):
    return x + 1


def median_seconds(fn, calls: int = 50) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    os.environ.setdefault("XLANB_CACHE_DIR", tempfile.mkdtemp(prefix="xlanb-bench-"))
    warnings.simplefilter("ignore")
    global np
    import numpy as np
    import xlanb
    big = np.random.default_rng(0).random((256, 256))
    rows = [["function", "first call", "NumPy", "must_compile=False", "jit", "runs"]]
    for fn, x in ((no_break, big), (one_break, big), (break_per_step, big),
                  (add_one, np.ones(8))):
        clustered = xlanb.jit(fn, must_compile=False)
        start = time.perf_counter()
        clustered(x)
        first = time.perf_counter() - start
        for _ in range(8):                      # the path choice's timed calls
            clustered(x)
        cells = {"numpy": median_seconds(lambda: fn(x)),
                 "clustered": median_seconds(lambda: clustered(x))}
        try:
            jitted = xlanb.jit(fn)
            jitted(x)
            cells["jit"] = median_seconds(lambda: jitted(x))
        except xlanb.CompileError as exc:
            cells["jit"] = type(exc).__name__
        choice = next(iter(clustered.report.paths.values()))
        rows.append([fn.__name__, f"{first * 1e3:.0f} ms", f"{cells['numpy'] * 1e6:.0f} us",
                     f"{cells['clustered'] * 1e6:.0f} us",
                     cells["jit"] if isinstance(cells["jit"], str)
                     else f"{cells['jit'] * 1e6:.0f} us", choice.describe()])
    print(format_table(rows))


if __name__ == "__main__":
    main()
