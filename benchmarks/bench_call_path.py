"""Per-call cost of a jitted function against NumPy's own call, hot and cold.

    python benchmarks/bench_call_path.py            # single-thread mode

Hot: the minimum over a tight loop of calls.  Cold: 32 MB streamed through the caches
before each timed call (what a call after a bandwidth-bound kernel meets: every frame,
attribute and allocation misses); the 20th percentile and the minimum over the calls.  The
programs are tiny (the figure is the call path, mono_call.py and the driver) and a GEMV on a
2000x2000 float32 matrix, where xlanb makes NumPy's own BLAS call and only the call path
differs (implementations in a random order per round: the one after a stream is colder).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import pin_threads  # noqa: E402

if __name__ == "__main__":
    pin_threads(1)

import numpy as np  # noqa: E402

import xlanb  # noqa: E402

RNG = np.random.default_rng(0)


def tiny_programs() -> dict:
    x, y = RNG.standard_normal(8), RNG.standard_normal(8)
    a, b, c = (RNG.standard_normal((64, 64)) for _ in range(3))
    return {"x + 1 (1 array)": (lambda x: x + 1, (x,)),
            "x * y + 1 (2 arrays)": (lambda x, y: x * y + 1, (x, y)),
            "A @ B @ C 64x64 (3 arrays)": (lambda a, b, c: a @ b @ c, (a, b, c))}


def hot_and_cold(fn, args, rounds: int, big: np.ndarray, sink: np.ndarray) -> tuple:
    hot, cold = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        fn(*args)
        hot.append(time.perf_counter() - start)
    for _ in range(rounds // 3):
        np.copyto(sink, big)
        start = time.perf_counter()
        fn(*args)
        cold.append(time.perf_counter() - start)
    return min(hot), float(np.percentile(cold, 20)), min(cold)


def gemv_rounds(rounds: int) -> dict[str, float]:
    """p10 of cold GEMV calls per implementation, in a random order per round."""
    a, x = RNG.standard_normal((2000, 2000), np.float32), RNG.standard_normal(2000, np.float32)
    other = RNG.standard_normal((2000, 2000), np.float32)

    def gemv(a, x):
        return a @ x
    jitted = xlanb.jit(gemv, tiered=False)
    jitted(a, x)
    impls = {"numpy": lambda: gemv(a, x), "xlanb": lambda: jitted(a, x),
             "stream": lambda: other @ x}
    times = {name: [] for name in impls}
    order = np.random.default_rng(1)
    for _ in range(rounds):
        for name in order.permutation(list(impls)):
            start = time.perf_counter()
            impls[name]()
            times[name].append(time.perf_counter() - start)
    return {name: float(np.percentile(ts, 10)) for name, ts in times.items() if name != "stream"}


def main(rounds: int = 600) -> None:
    big = RNG.standard_normal(4_000_000)
    sink = np.empty_like(big)
    print(f"{'program':28s} {'hot numpy/xlanb us':>20s}   cold p20 (min) numpy / xlanb us")
    for name, (fn, args) in tiny_programs().items():
        jitted = xlanb.jit(fn, tiered=False)
        jitted(*args)
        n = hot_and_cold(fn, args, rounds, big, sink)
        j = hot_and_cold(jitted, args, rounds, big, sink)
        print(f"{name:28s} {n[0] * 1e6:9.2f} {j[0] * 1e6:9.2f}   "
              f"{n[1] * 1e6:7.2f} ({n[2] * 1e6:.2f}) / {j[1] * 1e6:7.2f} ({j[2] * 1e6:.2f})")
    g = gemv_rounds(rounds // 2)
    print(f"GEMV 2000x2000 f32, cold p10: numpy {g['numpy'] * 1e6:.1f} us, xlanb "
          f"{g['xlanb'] * 1e6:.1f} us ({g['numpy'] / g['xlanb']:.3f}x)")


if __name__ == "__main__":
    main()
