"""Loop-heavy programs under `jit` and `must_compile=False`, beside NumPy (issue 13).

    python benchmarks/bench_loops.py                 # single-thread mode, empty kernel cache
    python benchmarks/bench_loops.py --only jacobi_1d heat_3d --repeats 9
    python benchmarks/bench_loops.py --scaling       # jacobi_1d compile at T = 10 and 2,000

For each program of `loop_programs.PROGRAMS`: the first call under `jit` (trace + compile
into an empty cache: the wait a user sees), its kernel count (loop bodies included), the
steady time under `jit` and under `must_compile=False` (after its warm-up calls, so the
clustered-or-NumPy choice has been made), NumPy's time, and NumPy's time divided by each
(above 1: faster than NumPy).  Every call gets fresh copies of the arguments (programs
write them); copying is not timed.  Results are checked against NumPy.
"""
from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import blas_description, format_table, pin_threads  # noqa: E402


def _close(got, expected) -> bool:
    import numpy as np
    if isinstance(expected, tuple):
        return all(_close(g, e) for g, e in zip(got, expected))
    if expected is None:
        return got is None
    g, e = np.asarray(got), np.asarray(expected)
    if g.shape != e.shape:
        return False
    if e.dtype.kind in "fc":
        scale = np.linalg.norm(e.astype(complex if e.dtype.kind == "c" else float))
        return bool(np.linalg.norm(g - e) <= 1e-6 * max(scale, 1e-300))
    return bool(np.array_equal(g, e))


def _timed(fn, args) -> tuple[float, object]:
    fresh = copy.deepcopy(args)
    start = time.perf_counter()
    result = fn(*fresh)
    return time.perf_counter() - start, (result, fresh)


def measure(name: str, program, repeats: int) -> list[str]:
    import numpy as np
    import xlanb
    fn, make_args, static = program
    args = make_args(np.random.default_rng(0))
    expected_time, (expected, expected_args) = _timed(fn, args)
    row = [name]
    jitted = xlanb.jit(fn, static_argnums=static)
    try:
        first, (got, got_args) = _timed(jitted, args)
        kernels = sum(1 for k in jitted.last_compiled.kernels if k.kind != "library")
        ok = _close(got, expected) and _close(tuple(got_args), tuple(expected_args))
        row += [f"{first:.2f} s", str(kernels)]
    except xlanb.CompileError as exc:
        jitted, ok = None, True
        row += [type(exc).__name__, "-"]
    clustered = xlanb.jit(fn, static_argnums=static, must_compile=False)
    first_clustered, (got, got_args) = _timed(clustered, args)
    ok = ok and _close(got, expected) and _close(tuple(got_args), tuple(expected_args))
    for _ in range(6):                        # the path choice: 2 + 2 timed calls
        _timed(clustered, args)
    impls = {"numpy": fn, "clustered": clustered}
    if jitted is not None:
        impls["jit"] = jitted
    times: dict[str, list[float]] = {k: [] for k in impls}
    for _ in range(repeats):
        for key, impl in impls.items():
            times[key].append(_timed(impl, args)[0])
    medians = {k: statistics.median(v) for k, v in times.items()}
    paths = [c.best() for c in clustered.report.paths.values()]
    row += [f"{medians['numpy'] * 1e3:.3f}",
            f"{medians['jit'] * 1e3:.3f}" if "jit" in medians else "-",
            f"{medians['numpy'] / medians['jit']:.2f}x" if "jit" in medians else "-",
            f"{first_clustered:.2f} s", f"{medians['clustered'] * 1e3:.3f}",
            f"{medians['numpy'] / medians['clustered']:.2f}x",
            paths[0] if paths else "whole", "ok" if ok else "MISMATCH"]
    return row


def scaling() -> None:
    """jacobi_1d's first call at T = 10 and T = 2,000, each in a new process with an empty
    cache: trace, compile (loop-reroll and the other passes, codegen, Numba) and kernels.
    `compile` is what `jit(f).lower(...).compile()` costs, as in JAX; the trace runs the
    Python loop, so it grows with T."""
    import subprocess
    rows = [["T", "trace s", "compile s", "of it Numba s", "trace + compile s", "kernels"]]
    for steps in (10, 2000):
        out = subprocess.run([sys.executable, __file__, "--scaling-one", str(steps)],
                             capture_output=True, text=True, check=True).stdout
        rows.append(out.split())
    print(format_table(rows))


def scaling_one(steps: int) -> None:
    import numpy as np
    import xlanb
    from loop_programs import jacobi_1d
    rng = np.random.default_rng(0)
    args = (steps, rng.random(1000), rng.random(1000))
    jitted = xlanb.jit(jacobi_1d, static_argnums=(0,))
    start = time.perf_counter()
    lowered = jitted.lower(*args)
    traced = time.perf_counter()
    compiled = lowered.compile()
    done = time.perf_counter()
    report = compiled.report
    kernels = sum(1 for k in compiled.kernels if k.kind != "library")
    print(steps, f"{traced - start:.3f}", f"{done - traced:.3f}",
          f"{report.seconds('compile'):.3f}", f"{done - start:.3f}", kernels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--scaling", action="store_true")
    parser.add_argument("--scaling-one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--warm-cache", action="store_true",
                        help="keep $XLANB_CACHE_DIR (default: an empty one)")
    options = parser.parse_args()
    pin_threads(options.threads)
    if not options.warm_cache:
        os.environ["XLANB_CACHE_DIR"] = tempfile.mkdtemp(prefix="xlanb-bench-")
    warnings.simplefilter("ignore")
    if options.scaling_one:
        scaling_one(options.scaling_one)
        return
    if options.scaling:
        scaling()
        return
    from loop_programs import PROGRAMS
    print(f"threads={options.threads}; {blas_description()}; medians of {options.repeats}")
    rows = [["program", "jit 1st call", "kernels", "NumPy ms", "jit ms", "vs NumPy",
             "clustered 1st", "clustered ms", "vs NumPy", "runs", "check"]]
    for name, program in PROGRAMS.items():
        if options.only and name not in options.only:
            continue
        rows.append(measure(name, program, options.repeats))
        print(format_table(rows[-1:]), flush=True)
    print()
    print(format_table(rows))


if __name__ == "__main__":
    main()
