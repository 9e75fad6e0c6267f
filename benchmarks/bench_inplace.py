"""Programs that update their arguments in place, per call, against NumPy (issue 15).

    python benchmarks/bench_inplace.py                  # this checkout, 1 thread
    python benchmarks/bench_inplace.py --compare /work/main   # and another checkout's xlanb

An optimizer step (`w -= lr * g`, momentum, Adam), a slice update (`x[1:-1] += ...`) and a
ufunc with `out=` are the steps a training loop runs every iteration on small arrays, where
a program that computes into a fresh buffer and copies it back into the argument costs
more than NumPy's own in-place loops.  Each case runs at 64, 1k, 100k and 1M elements.

Printed per case and size: NumPy's median per-call time, xlanb's, and NumPy/xlanb.  xlanb
compiles in the foreground (`tiered=False`): a tiered program answers on the NumPy tier
until its background compile lands, which took longer than the whole timing at 64
elements, so the figures were the NumPy tier's.  With
`--compare DIR`, each case also runs under the xlanb checkout at DIR (PYTHONPATH=DIR and
DIR/runtime) in a subprocess that alternates with this checkout's, so both columns come
from the same load; the results are checked against NumPy (every argument after a call).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import pin_threads  # noqa: E402

if __name__ == "__main__":
    _parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _parser.add_argument("--compare", help="another xlanb checkout to time side by side")
    _parser.add_argument("--sizes", type=int, nargs="*", default=[64, 1000, 100_000,
                                                                    1_000_000])
    _parser.add_argument("--only", nargs="*", default=[])
    _parser.add_argument("--rounds", type=int, default=5)
    _parser.add_argument("--one", help=argparse.SUPPRESS)   # the subprocess's case, as JSON
    ARGS = _parser.parse_args()
    pin_threads(1)

import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def sgd(w, g):
    w -= 0.01 * g


def momentum(w, m, g):
    m *= 0.9
    m += g
    w -= 0.01 * m


def adam(w, m, v, g):
    m *= 0.9
    m += 0.1 * g
    v *= 0.999
    v += 0.001 * g * g
    w -= 0.001 * m / (np.sqrt(v) + 1e-8)


def slice_update(x, g):
    x[1:-1] += 0.5 * g[1:-1]


def add_out(a, b, c):
    np.add(a, b, out=c)


CASES = {"sgd": (sgd, 2), "momentum": (momentum, 3), "adam": (adam, 4),
         "slice_update": (slice_update, 2), "add_out": (add_out, 3)}


def arguments(count: int, n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.random(n) + 0.5 for _ in range(count)]


def per_call(fn, args, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter() - start) / calls


def time_case(name: str, n: int, rounds: int) -> dict:
    """NumPy's and xlanb's median per-call seconds, and the largest difference of any
    argument after one call from the same inputs."""
    import xlanb
    fn, count = CASES[name]
    jitted = xlanb.jit(fn, tiered=False)   # the compiled program, not the NumPy tier
    expected, got = arguments(count, n), arguments(count, n)
    fn(*expected)
    jitted(*got)
    error = max(float(np.max(np.abs(e - g))) for e, g in zip(expected, got))
    args_np, args_x = arguments(count, n), arguments(count, n)
    calls = max(10, min(20_000, int(2e7 // (n * count + 2000))))
    numpy_times, xlanb_times = [], []
    for _ in range(rounds):
        numpy_times.append(per_call(fn, args_np, calls))
        xlanb_times.append(per_call(jitted, args_x, calls))
    return {"numpy": statistics.median(numpy_times), "xlanb": statistics.median(xlanb_times),
            "error": error}


def in_checkout(directory: str, name: str, n: int, rounds: int) -> dict:
    env = dict(os.environ, PYTHONPATH=f"{directory}:{directory}/runtime")
    out = subprocess.run([sys.executable, __file__, "--one",
                          json.dumps([name, n, rounds])], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    if ARGS.one:
        print(json.dumps(time_case(*json.loads(ARGS.one))))
        return
    here = str(Path(__file__).resolve().parent.parent)
    print(f"load: {os.getloadavg()[0]:.2f}  (1 thread; per-call medians in us)")
    header = f"{'case':<14}{'n':>9}{'numpy':>10}{'xlanb':>10}{'np/xlanb':>10}"
    print(header + (f"{'base':>10}{'np/base':>10}" if ARGS.compare else "") + "  max err")
    for name in ARGS.only or CASES:
        for n in ARGS.sizes:
            ours = in_checkout(here, name, n, ARGS.rounds)
            base = in_checkout(ARGS.compare, name, n, ARGS.rounds) if ARGS.compare \
                else None
            row = (f"{name:<14}{n:>9}{ours['numpy'] * 1e6:>10.2f}{ours['xlanb'] * 1e6:>10.2f}"
                   f"{ours['numpy'] / ours['xlanb']:>9.2f}x")
            if base:
                row += (f"{base['xlanb'] * 1e6:>10.2f}"
                        f"{base['numpy'] / base['xlanb']:>9.2f}x")
            print(row + f"  {ours['error']:.1e}", flush=True)


if __name__ == "__main__":
    main()
