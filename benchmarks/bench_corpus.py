"""The performance corpus (corpus_kernels.py): NumPy vs xlanb.jit vs jax.jit, kernel by kernel.

    python benchmarks/bench_corpus.py                   # single-thread mode (primary figures)
    python benchmarks/bench_corpus.py --threads 2       # both cores (secondary, noisy here)
    python benchmarks/bench_corpus.py --two-thread-column   # adds the 2-thread run beside
    python benchmarks/bench_corpus.py --filter softmax  # kernels whose name contains it

Every kernel's xlanb result is checked against NumPy (dtype-appropriate allclose) before
anything is timed; a mismatch is reported and fails the run.  Medians of interleaved runs
(the implementations timed round-robin, the order reversed every other round so neither
always runs right after the other; at least --repeats rounds and --min-seconds per kernel,
../shared/PLATFORM.md), each timed call preceded by an untimed one of the same
implementation (--settle 1): it finds the caches as its own last call left them, as in a
loop.  Without it the order [NumPy, xlanb, JAX] reversed every round never runs xlanb
right after itself, while NumPy and JAX do so every other round: on a matrix that fits the
32 MB L3 (2000x2000 f32 GEMV) NumPy took 1.17 ms after itself, 1.25 after xlanb, and xlanb
1.21 after NumPy, 1.29 after JAX (which streams its own copy).  Printed per kernel: NumPy, xlanb and jax.jit medians (JAX when
importable; float64 kernels run with jax_enable_x64), NumPy/xlanb and jax/xlanb (> 1: xlanb
faster; the median of per-round ratios, steadier than a ratio of medians on this VM) with
the NumPy ratio's interquartile range over rounds (a kernel tied with NumPy, one BLAS call
on both sides, reads anywhere in it), the compiled program's kernel count and kinds, and
for memory-bound kernels xlanb's share of the measured read bandwidth (over
100% where the working set fits in the caches: the roofline is measured on 80 MB).  Then the
geometric mean of NumPy/xlanb, the kernels below 1.0x NumPy (and which of them are below
in three rounds of four: the IQR's top under 1.0), and the share at >= 1.0x
jax.jit.  `--two-thread-column` runs the same kernels in a subprocess with 2 threads (the
default setting of this machine kind) and prints its NumPy/xlanb ratio beside.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import pin_threads  # noqa: E402

if __name__ == "__main__":
    _parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _parser.add_argument("--threads", type=int, default=1)
    _parser.add_argument("--repeats", type=int, default=9)
    _parser.add_argument("--min-seconds", type=float, default=0.5,
                         help="time each kernel for at least this long (more rounds)")
    _parser.add_argument("--filter", default="", help="only kernels whose name contains it")
    _parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    _parser.add_argument("--no-jax", action="store_true", help="skip jax.jit")
    _parser.add_argument("--two-thread-column", action="store_true",
                         help="also run the corpus with 2 threads in a subprocess")
    _parser.add_argument("--settle", type=int, default=1,
                         help="untimed calls of the same implementation before each timed "
                         "one (0: the timed call inherits the caches of whichever ran before)")
    _parser.add_argument("--json", help="write the results to this file")
    _parser.add_argument("--estimator", choices=("median", "min"), default="median",
                         help="min: each implementation's fastest round and ratios of those "
                         "(when other processes share the pinned core, a time slice of "
                         "theirs lands in a random half of the rounds)")
    ARGS = _parser.parse_args()
    pin_threads(ARGS.threads)

import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
from collections import Counter  # noqa: E402

import numpy as np  # noqa: E402

import xlanb  # noqa: E402
from common import (blas_description, format_table, interleaved_times,  # noqa: E402
                    measure_bandwidth, paired_ratio, ratio_quartiles)
from corpus_kernels import CORPUS, tolerance  # noqa: E402

try:
    import jax  # noqa: E402
    jax.config.update("jax_enable_x64", True)      # float64 kernels stay float64
    import jax.numpy as jnp  # noqa: E402
except ImportError:  # JAX is optional
    jax = jnp = None


def _leaves(value) -> list:
    return list(value) if isinstance(value, tuple) else [value]


def check_against_numpy(kernel, fn, args) -> None:
    """Raises AssertionError naming the kernel when xlanb's result differs from NumPy's."""
    want = _leaves(kernel.make(np)(*args))
    got = _leaves(fn(*args))
    rtol, atol = tolerance(kernel, args)
    assert len(got) == len(want), f"{kernel.name}: {len(got)} results, NumPy {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert np.shape(g) == np.shape(w), f"{kernel.name}[{i}]: shape {np.shape(g)}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol,
                                   err_msg=f"{kernel.name}, result {i}")


def kernel_kinds(compiled) -> str:
    """'3: row+2 library' style summary of the compiled program's kernels."""
    kinds = Counter(k.kind for k in compiled.kernels)
    return "+".join(f"{n} {kind}" if n > 1 else kind for kind, n in sorted(kinds.items()))


def io_bytes(args, result) -> int:
    """Compulsory traffic: every input read once, every output written once."""
    arrays = [a for a in list(args) + _leaves(result) if isinstance(a, np.ndarray)]
    return sum(a.nbytes for a in arrays)


def _jax_impl(kernel, args):
    if jax is None or ARGS.no_jax or not kernel.jax:
        return None
    jargs = [jnp.asarray(a) for a in args]
    jfn = jax.jit(kernel.make(jnp))
    jax.block_until_ready(jfn(*jargs))
    return lambda: jax.block_until_ready(jfn(*jargs))


def measure(kernel, repeats: int, quick: bool) -> dict:
    args = kernel.make_args(quick)
    fn = kernel.make(np)
    # compiled before the first call: the table is about steady-state speed, and a
    # tiered program's background compile would share the pinned core with the timing
    jitted = xlanb.jit(fn, tiered=False)
    compiled = jitted.lower(*args).compile()
    check_against_numpy(kernel, jitted, args)
    impls = {"numpy": lambda: fn(*args), "xlanb": lambda: jitted(*args)}
    jax_call = _jax_impl(kernel, args)
    if jax_call is not None:
        impls["jax"] = jax_call
    times = interleaved_times(impls, repeats, settle=ARGS.settle,
                              min_seconds=ARGS.min_seconds)
    if ARGS.estimator == "min":
        medians = {name: float(np.min(ts)) for name, ts in times.items()}
        ratios = {other: medians[other] / medians["xlanb"] for other in impls
                  if other != "xlanb"}
    else:
        medians = {name: float(np.median(ts)) for name, ts in times.items()}
        # ratios paired round by round: the VM's speed drifts and stalls for tens of ms,
        # and calls timed back to back share that (common.paired_ratio)
        ratios = {other: paired_ratio(times, other, "xlanb") for other in impls
                  if other != "xlanb"}
    return {"name": kernel.name, "kernels": len(compiled.kernels),
            "rounds": len(times["xlanb"]),
            "kinds": kernel_kinds(compiled), "medians": medians, "ratios": ratios,
            "numpy_iqr": ratio_quartiles(times, "numpy", "xlanb"),
            "bytes": io_bytes(args, fn(*args)) if kernel.bandwidth else None}


def _ms(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def _ratio(value) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _iqr(quartiles) -> str:
    return "-" if quartiles is None else f"{quartiles[0]:.2f}-{quartiles[1]:.2f}"


def table_rows(results: list[dict], bandwidth: float, two_thread: dict | None) -> list:
    header = ["kernel", "numpy ms", "xlanb ms", "jax ms", "np/xlanb", "IQR", "jax/xlanb",
              "kernels", "kinds", "% read bw"]
    if two_thread is not None:
        header.append("np/xlanb 2thr")
    rows = [header]
    for r in results:
        m = r["medians"]
        share = "-" if r["bytes"] is None else \
            f"{r['bytes'] / m['xlanb'] / 1e9 / bandwidth * 100:.0f}%"
        row = [r["name"], _ms(m["numpy"]), _ms(m["xlanb"]), _ms(m.get("jax")),
               _ratio(r["ratios"]["numpy"]), _iqr(r.get("numpy_iqr")),
               _ratio(r["ratios"].get("jax")),
               str(r["kernels"]), r["kinds"], share]
        if two_thread is not None:
            other = two_thread.get(r["name"])
            row.append(_ratio(other["numpy"]) if other else "-")
        rows.append(row)
    return rows


def summary(results: list[dict]) -> list[str]:
    speedups = [r["ratios"]["numpy"] for r in results]
    geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
    slow = [f"{r['name']} ({s:.2f}x, IQR {_iqr(r.get('numpy_iqr'))})"
            for r, s in zip(results, speedups) if s < 1.0]
    # below 1.0x with three rounds in four: slower beyond this machine's noise
    clear = [r["name"] for r in results if r.get("numpy_iqr") and r["numpy_iqr"][1] < 1.0]
    with_jax = [r for r in results if "jax" in r["ratios"]]
    lines = [f"geometric mean NumPy/xlanb: {geo:.2f}x over {len(results)} kernels",
             f"below 1.0x NumPy: {len(slow)}" + (": " + "; ".join(slow) if slow else ""),
             f"of those, IQR wholly below 1.0x: {len(clear)}" +
             (": " + "; ".join(clear) if clear else "")]
    if with_jax:
        wins = sum(r["ratios"]["jax"] >= 1.0 for r in with_jax)
        lines.append(f"at >= 1.0x jax.jit: {wins}/{len(with_jax)} "
                     f"({wins / len(with_jax) * 100:.0f}%)")
    return lines


def run_two_threads() -> dict:
    """The same kernels with 2 threads, in a fresh process (pools read their size at import)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "two.json")
        cmd = [sys.executable, __file__, "--threads", "2", "--repeats", str(ARGS.repeats),
               "--min-seconds", str(ARGS.min_seconds), "--settle", str(ARGS.settle),
               "--filter", ARGS.filter, "--no-jax", "--json", out,
               "--estimator", ARGS.estimator]
        if ARGS.quick:
            cmd.append("--quick")
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
        if not os.path.exists(out):
            return {}
        with open(out) as f:
            return {r["name"]: r["ratios"] for r in json.load(f)["results"]}


def main() -> None:
    print(f"xlanb corpus, {ARGS.threads} thread(s); BLAS: {blas_description()}; "
          f"jax: {'-' if jax is None or ARGS.no_jax else jax.__version__}")
    bw = measure_bandwidth(2_000_000 if ARGS.quick else 20_000_000)["read GB/s"]
    print(f"measured read bandwidth: {bw:.1f} GB/s")
    results, failures = [], []
    for name, kernel in CORPUS.items():
        if ARGS.filter.lower() not in name.lower():
            continue
        try:
            results.append(measure(kernel, ARGS.repeats, ARGS.quick))
        except Exception as exc:            # report every kernel, then fail the run
            failures.append(f"{name}: {type(exc).__name__}: {str(exc)[:400]}")
            print(f"FAILED {failures[-1]}", flush=True)
    if ARGS.json:
        with open(ARGS.json, "w") as f:
            json.dump({"threads": ARGS.threads, "bandwidth": bw, "results": results}, f)
    two = run_two_threads() if ARGS.two_thread_column else None
    print(f"{ARGS.estimator}s of at least {ARGS.repeats} interleaved runs and "
          f"{ARGS.min_seconds:g} s per kernel, {ARGS.settle} untimed call(s) before each; "
          "ratios > 1: xlanb faster")
    print(format_table(table_rows(results, bw, two)))
    if results:
        print("\n".join(summary(results)))
    if failures:
        print(f"{len(failures)} kernel(s) failed:\n  " + "\n  ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
