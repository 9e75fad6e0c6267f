"""Held-out kernels (heldout_kernels.py): NumPy vs xlanb.jit on code the compiler was not
tuned for, each result and argument checked against NumPy first.

    python benchmarks/bench_heldout.py                  # single-thread mode
    python benchmarks/bench_heldout.py --filter arctan  # kernels whose name contains it
    python benchmarks/bench_heldout.py --batch 2        # one batch only (1 to 8)

Per kernel: whether xlanb's outputs and arguments after the call match NumPy's (outputs
and every argument, with NumPy's own call on copies of the same arrays; float tolerance by
dtype; a first call and a second through the call guard), the error class where jit
refuses the program (a named error by design for data-dependent shapes), NumPy's and
xlanb's medians of interleaved rounds (common.py), the
paired NumPy/xlanb ratio with its interquartile range, and a mark on those below 1.0x.
Then the geometric mean and the list below 1.0x, and a non-zero exit on any mismatch.
Arguments updated in place (an optimizer step, `x[mask] = 0`) keep changing while timed,
as in a training loop.
"""
from __future__ import annotations

import argparse
import copy
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import interleaved_times, paired_ratio, pin_threads, ratio_quartiles  # noqa: E402

if __name__ == "__main__":
    _parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _parser.add_argument("--threads", type=int, default=1)
    _parser.add_argument("--filter", default="", help="run the kernels whose name contains it")
    _parser.add_argument("--batch", type=int, choices=(1, 2, 3, 4, 5, 6, 7, 8), default=None,
                         help="one batch only (heldout_kernels.py, heldout_kernels_2.py .. _8)")
    _parser.add_argument("--repeats", type=int, default=9)
    _parser.add_argument("--min-seconds", type=float, default=0.5)
    ARGS = _parser.parse_args()
    pin_threads(ARGS.threads)

import numpy as np  # noqa: E402

import xlanb  # noqa: E402
import heldout_kernels  # noqa: E402
import heldout_kernels_2  # noqa: E402
import heldout_kernels_3  # noqa: E402
import heldout_kernels_4  # noqa: E402
import heldout_kernels_5  # noqa: E402
import heldout_kernels_6  # noqa: E402
import heldout_kernels_7  # noqa: E402
import heldout_kernels_8  # noqa: E402

BATCHES = {1: heldout_kernels.KERNELS, 2: heldout_kernels_2.KERNELS,
           3: heldout_kernels_3.KERNELS, 4: heldout_kernels_4.KERNELS,
           5: heldout_kernels_5.KERNELS, 6: heldout_kernels_6.KERNELS,
           7: heldout_kernels_7.KERNELS, 8: heldout_kernels_8.KERNELS}


def _leaves(value) -> list:
    return list(value) if isinstance(value, tuple) else [value]


def mismatch(got, want, single: bool = False) -> str:
    """'' where `got` is NumPy's `want` (float tolerance by dtype: float16's a rounding
    flip of its 11-bit significand, which one float32 ulp moves; float32's where the
    computation had `single` precision operands: NumPy's float64 result of float32 steps
    carries their rounding), else what differs."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{got.shape} vs NumPy's {want.dtype}{want.shape}"
    if want.dtype.kind in "fc":
        tol = 2e-3 if want.dtype == np.float16 else \
            2e-4 if single or want.dtype in (np.float32, np.complex64) else 1e-9
        scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
        if np.allclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True):
            return ""
        return f"max difference {np.abs(got - want).max():.3g}"
    return "" if np.array_equal(got, want) else f"{int((got != want).sum())} elements differ"


def check(fn, jitted, make) -> tuple[list, str]:
    """(arguments for timing, '' or what differs from NumPy in outputs or arguments).  Two
    calls on fresh copies of the same arrays: the first compiles and runs the general path,
    the second the call guard (mono_call.py)."""
    args = make()
    problems = []
    for call in ("first", "second"):
        ours, numpy_args = copy.deepcopy(args), copy.deepcopy(args)
        single = any(np.asarray(a).dtype in (np.float32, np.complex64, np.float16)
                     for a in args)
        want, got = fn(*numpy_args), jitted(*ours)
        problems += [f"{call} call, output {i}: {m}"
                     for i, (g, w) in enumerate(zip(_leaves(got), _leaves(want)))
                     if (m := mismatch(g, w, single))]
        problems += [f"{call} call, argument {i}: {m}"
                     for i, (g, w) in enumerate(zip(ours, numpy_args))
                     if (m := mismatch(g, w, single))]
    return ours, "; ".join(problems)


def main() -> int:
    print(f"held-out kernels, {ARGS.threads} thread(s); ratios > 1: xlanb faster")
    print(f"{'kernel':42s} {'numpy ms':>9s} {'xlanb ms':>9s} {'np/xlanb':>9s} {'IQR':>11s}  check")
    ratios, below, wrong = {}, [], []
    batches = [ARGS.batch] if ARGS.batch else sorted(BATCHES)
    for name, fn, make in [kernel for b in batches for kernel in BATCHES[b]]:
        if ARGS.filter not in name:
            continue
        jitted = xlanb.jit(fn, tiered=False)
        try:
            args, problem = check(fn, jitted, make)
        except Exception as error:             # noqa: BLE001 - a refusal is a result
            print(f"{name:42s} {'':>9s} {'':>9s} {'':>9s} {'':>11s}  {type(error).__name__}")
            continue
        times = interleaved_times({"numpy": lambda: fn(*args), "xlanb": lambda: jitted(*args)},
                                  ARGS.repeats, min_seconds=ARGS.min_seconds)
        ratio = paired_ratio(times, "numpy", "xlanb")
        low, high = ratio_quartiles(times, "numpy", "xlanb")
        ratios[name] = ratio
        if problem:
            wrong.append(name)
        if ratio < 1.0:
            below.append(f"{name} ({ratio:.2f}x, IQR {low:.2f}-{high:.2f})")
        print(f"{name:42s} {np.median(times['numpy']) * 1e3:9.3f} "
              f"{np.median(times['xlanb']) * 1e3:9.3f} {ratio:8.2f}x {low:5.2f}-{high:<5.2f}  "
              f"{'WRONG: ' + problem if problem else 'ok'}{'  <' if ratio < 1.0 else ''}",
              flush=True)
    if ratios:
        geomean = math.exp(sum(map(math.log, ratios.values())) / len(ratios))
        print(f"geometric mean NumPy/xlanb: {geomean:.2f}x over {len(ratios)} kernels")
    print(f"below 1.0x NumPy: {len(below)}{': ' + '; '.join(below) if below else ''}")
    print(f"differing from NumPy: {len(wrong)}{': ' + ', '.join(wrong) if wrong else ''}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
