"""Compiler-core benchmarks W1, W2, W3, W6: xlanb vs NumPy eager vs interpreter vs jax.jit.

    python benchmarks/bench_core.py                 # single-thread mode (primary figures)
    python benchmarks/bench_core.py --threads 2     # both cores (secondary, noisy here)

Every ratio is measured side by side in one run (implementations interleaved).  Also
printed: the machine's memory bandwidth (the roofline), cold and warm (disk cache) compile
times of W6 in fresh processes, the compile time of a second shape, and the per-call
overhead of a jitted `x + 1` on 8 floats.
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
    _parser.add_argument("--repeats", type=int, default=15)
    _parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ARGS = _parser.parse_args()
    pin_threads(ARGS.threads)

import os  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import xlanb  # noqa: E402
from common import (blas_description, format_table, interleaved_medians,  # noqa: E402
                    measure_bandwidth, per_call_seconds)
from workloads import WORKLOADS  # noqa: E402

try:
    import jax  # noqa: E402
    import jax.numpy as jnp  # noqa: E402
    jax.config.update("jax_enable_x64", False)
except ImportError:  # JAX is optional
    jax = jnp = None


def run_workload(name: str, spec, repeats: int, quick: bool) -> list[str]:
    args = spec.make_args(quick)
    compiled = xlanb.jit(spec.fn)
    expected = spec.fn(*args)
    got = compiled(*args)
    np.testing.assert_allclose(got, expected, rtol=spec.rtol, atol=spec.atol)
    kernels = len(compiled.lower(*args).compile().kernels)
    impls = {"numpy": lambda: spec.fn(*args), "xlanb": lambda: compiled(*args)}
    if jax is not None and spec.jax_fn is not None:
        jargs = [jnp.asarray(a) for a in args]
        jfn = jax.jit(spec.jax_fn)
        impls["jax.jit"] = lambda: jfn(*jargs).block_until_ready()
    if name == "W2":
        impls["sgemm alone"] = lambda: np.matmul(args[0], args[1])
    medians = interleaved_medians(impls, repeats)
    if name == "W2":
        print(f"W2: xlanb {medians['xlanb'] * 1e3:.2f} ms vs NumPy sgemm alone "
              f"{medians['sgemm alone'] * 1e3:.2f} ms "
              f"({(medians['xlanb'] / medians['sgemm alone'] - 1) * 100:+.1f}%)")
    with xlanb.disable_jit():
        compiled(*args)
        interp = interleaved_medians({"interp": lambda: compiled(*args)}, max(3, repeats // 3),
                                     warmup=1)["interp"]
    x = medians["xlanb"]
    row = [name, f"{kernels}", f"{medians['numpy'] * 1e3:.2f}", f"{interp * 1e3:.2f}",
           f"{x * 1e3:.2f}",
           f"{medians['jax.jit'] * 1e3:.2f}" if "jax.jit" in medians else "-",
           f"{medians['numpy'] / x:.2f}x",
           f"{medians['jax.jit'] / x:.2f}x" if "jax.jit" in medians else "-",
           f"{spec.bytes_moved(args) / x / 1e9:.1f}"]
    return row


def compile_times_subprocess(quick: bool) -> dict[str, tuple[float, float]]:
    """W6 compile time cold (empty kernel cache) and warm (second process, same cache).

    Each process first jits a tiny `x + 1`, which pays Numba's one-time start-up (target
    initialization, SciPy's BLAS import); that is reported apart from W6's own compile."""
    code = (
        "import sys, time; sys.path.insert(0, %r)\n"
        "import numpy as np, xlanb\n"
        "from workloads import WORKLOADS\n"
        "spec = WORKLOADS['W6']; args = spec.make_args(%r)\n"
        "t = time.perf_counter(); xlanb.jit(lambda x: x + 1)(np.ones(8, np.float32))\n"
        "startup = time.perf_counter() - t\n"
        "f = xlanb.jit(spec.fn); t = time.perf_counter(); f.lower(*args).compile()\n"
        "print(startup, time.perf_counter() - t)\n") % (
            str(Path(__file__).resolve().parent), quick)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XLANB_CACHE_DIR=cache)
        runs = {}
        for name in ("cold", "warm"):
            out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
            runs[name] = (float(out[-2]), float(out[-1]))
    return runs


def second_shape_seconds() -> dict[str, float]:
    spec = WORKLOADS["W6"]
    f = xlanb.jit(spec.fn)
    first = [np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32),
             np.ones(512, np.float32), np.zeros(512, np.float32)]
    second = [np.random.default_rng(1).standard_normal((384, 768)).astype(np.float32),
              np.ones(768, np.float32), np.zeros(768, np.float32)]
    start = time.perf_counter()
    f.lower(*first).compile()
    t_first = time.perf_counter() - start
    start = time.perf_counter()
    f.lower(*second).compile()
    return {"first shape": t_first, "second shape": time.perf_counter() - start}


def call_overhead() -> dict[str, float]:
    x = np.ones(8, np.float32)
    f = xlanb.jit(lambda x: x + 1)
    f(x)
    out = {"xlanb jit(x + 1)": per_call_seconds(lambda: f(x)),
           "numpy x + 1": per_call_seconds(lambda: x + 1)}
    if jax is not None:
        jx = jnp.asarray(x)
        jf = jax.jit(lambda x: x + 1)
        jf(jx).block_until_ready()
        out["jax.jit(x + 1)"] = per_call_seconds(lambda: jf(jx), calls=5000)
    return out


def main() -> None:
    print(f"xlanb core benchmarks, {ARGS.threads} thread(s); BLAS: {blas_description()}")
    bw = measure_bandwidth(5_000_000 if ARGS.quick else 50_000_000)
    print(f"memory bandwidth: read {bw['read GB/s']:.1f} GB/s, triad {bw['triad GB/s']:.1f} "
          "GB/s")
    rows = [["workload", "kernels", "numpy ms", "interp ms", "xlanb ms", "jax ms",
             "vs numpy", "vs jax", "xlanb GB/s"]]
    for name, spec in WORKLOADS.items():
        rows.append(run_workload(name, spec, ARGS.repeats, ARGS.quick))
    print(format_table(rows))
    w1 = [r for r in rows if r[0] == "W1"]
    if w1:
        print(f"W1 at {float(w1[0][-1]) / bw['read GB/s'] * 100:.0f}% of measured read "
              "bandwidth")
    ct = compile_times_subprocess(ARGS.quick)
    print(f"W6 compile: cold {ct['cold'][1]:.2f} s, warm (disk cache, new process) "
          f"{ct['warm'][1]:.3f} s; Numba start-up + a first tiny jit before it: cold "
          f"{ct['cold'][0]:.2f} s, warm {ct['warm'][0]:.2f} s")
    ss = second_shape_seconds()
    print(f"W6 compile in one process: first shape {ss['first shape']:.3f} s, second shape "
          f"{ss['second shape'] * 1e3:.1f} ms (kernels reused)")
    for name, seconds in call_overhead().items():
        print(f"per-call: {name}: {seconds * 1e6:.2f} us")


if __name__ == "__main__":
    main()
