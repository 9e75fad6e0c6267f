"""Training-step benchmarks W4, W5: xlanb.jit(step) vs op by op vs hand-written NumPy vs jax.jit.

    python benchmarks/bench_training.py                 # single-thread mode (primary figures)
    python benchmarks/bench_training.py --threads 2     # both cores (secondary, noisy here)

A step is value_and_grad of a plain NumPy loss plus an SGD update (training_workloads.py).
Before timing, the hand-written gradients are checked against finite differences (and JAX),
and every implementation's step against the hand-written one.  Timed side by side in one
interleaved run: the compiled step, hand-written NumPy and jax.jit, each timed on its
second call of the round (steady state, as in a loop of steps: the first call brings its
own arrays back into cache); then, interleaved with
the compiled step again and fewer repeats, the same step op by op under
`xlanb.disable_jit()` (the "without XLA" run).  The ms columns are medians; the ratio
columns are medians of per-round ratios (the calls of one round run back to back and share
this VM's drifting speed).  Also printed: the compiled step's kernel
count, compile times (first call minus a steady-state call; kernels compiled into an empty
cache directory, after a tiny jit has paid Numba's start-up) and after how many steps
compiling pays off: compile time / (op-by-op step - compiled step).

First, time to first result: each in a fresh process with an empty kernel cache, the first
call of the tiered `xlanb.jit(step)` (answered on the NumPy tier while the kernels compile
in the background), the hand-written NumPy step (its first call and its steady step) and
jax.jit's first call; target: xlanb's first call within 1.5x the steady NumPy step + 50 ms.
The fresh processes keep Python bytecode (.pyc) as a user's interpreter does, even where
PYTHONDONTWRITEBYTECODE is set.
`--first-result-only` prints just that table.  The other figures compile in the foreground
(`--xla_tiered=false`, set by common.pin_threads).
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
    _parser.add_argument("--first-call", choices=("xlanb", "numpy", "jax"),
                         help=argparse.SUPPRESS)      # a fresh child process's one measure
    _parser.add_argument("--workload", help=argparse.SUPPRESS)
    _parser.add_argument("--first-result-only", action="store_true",
                         help="only the time to first result in fresh processes")
    ARGS = _parser.parse_args()
    pin_threads(ARGS.threads)

import os  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

_start = time.perf_counter()
import xlanb  # noqa: E402
IMPORT_SECONDS = time.perf_counter() - _start     # in a fresh process: numba, scipy, ...
from common import (blas_description, format_table, interleaved_medians,  # noqa: E402
                    interleaved_times, paired_ratio)
from training_workloads import TRAINING_WORKLOADS, check_gradients  # noqa: E402

try:
    import jax  # noqa: E402
    import jax.numpy as jnp  # noqa: E402
    jax.config.update("jax_enable_x64", False)
except ImportError:  # JAX is optional
    jax = jnp = None

TARGETS = {"W4": 0.8, "W5": 0.7}        # time ratio xlanb / jax.jit to reach


def assert_same_step(got, want, spec, what: str) -> None:
    """(new_params, loss) of one implementation against the hand-written step's."""
    (got_params, got_loss), (want_params, want_loss) = got, want
    np.testing.assert_allclose(np.asarray(got_loss), want_loss, rtol=spec.rtol,
                               err_msg=f"{what}: loss")
    for name, value in want_params.items():
        np.testing.assert_allclose(np.asarray(got_params[name]), value, rtol=spec.rtol,
                                   atol=spec.atol, err_msg=f"{what}: new {name!r}")


def timed(fn):
    """(fn(), seconds it took): for first calls, which include compiling."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def run_workload(name: str, spec, repeats: int, quick: bool) -> list[str]:
    args = spec.make_args("quick" if quick else "full")
    want = spec.numpy_step(*args)
    compiled = xlanb.jit(spec.step)
    got, first = timed(lambda: compiled(*args))
    assert_same_step(got, want, spec, "xlanb.jit")
    kernels = len(compiled.last_compiled.kernels)

    def op_by_op():
        with xlanb.disable_jit():
            return compiled(*args)

    assert_same_step(op_by_op(), want, spec, "op by op")
    impls = {"xlanb": lambda: compiled(*args), "numpy": lambda: spec.numpy_step(*args)}
    if jax is not None and spec.jax_step is not None:
        jargs = jax.tree_util.tree_map(jnp.asarray, args)
        jstep = jax.jit(spec.jax_step)
        got, jax_first = timed(lambda: jax.block_until_ready(jstep(*jargs)))
        assert_same_step(got, want, spec, "jax.jit")
        impls["jax.jit"] = lambda: jax.block_until_ready(jstep(*jargs))
    times = interleaved_times(impls, repeats, settle=1)
    medians = {impl: statistics.median(ts) for impl, ts in times.items()}
    slow = interleaved_medians({"xlanb": lambda: compiled(*args), "op by op": op_by_op},
                               max(3, repeats // 3), warmup=1)
    x, jx = medians["xlanb"], medians.get("jax.jit")
    vs_jax = paired_ratio(times, "xlanb", "jax.jit") if jx else None
    compile_s = first - x
    saved = slow["op by op"] - slow["xlanb"]
    payoff = f"{compile_s / saved:.0f}" if saved > 0 else "never"
    verdict = "-" if jx is None else \
        f"<= {TARGETS[name]}x " + ("met" if vs_jax <= TARGETS[name] else "missed")
    return [name, f"{kernels}", f"{medians['numpy'] * 1e3:.2f}",
            f"{slow['op by op'] * 1e3:.2f}", f"{x * 1e3:.2f}",
            f"{jx * 1e3:.2f}" if jx else "-",
            f"{1 / paired_ratio(times, 'xlanb', 'numpy'):.2f}x",
            f"{vs_jax:.2f}x" if jx else "-",
            verdict, f"{compile_s:.2f}", f"{jax_first - jx:.2f}" if jx else "-", payoff]


def first_call(mode: str, name: str, quick: bool) -> dict:
    """In a fresh process with an empty cache: seconds of the first call of `mode`'s step
    (xlanb tiered, hand-written NumPy or jax.jit), checked against the NumPy step.  NumPy
    also reports its steady step; xlanb the seconds until calls run compiled code."""
    spec = TRAINING_WORKLOADS[name]
    args = spec.make_args("quick" if quick else "full")
    if mode == "numpy":
        _, seconds = timed(lambda: spec.numpy_step(*args))
        steady = statistics.median(timed(lambda: spec.numpy_step(*args))[1]
                                   for _ in range(7))
        return {"first": seconds, "steady": steady}
    if mode == "jax":
        jargs = jax.tree_util.tree_map(jnp.asarray, args)
        jstep = jax.jit(spec.jax_step)
        got, seconds = timed(lambda: jax.block_until_ready(jstep(*jargs)))
        assert_same_step(got, spec.numpy_step(*args), spec, "jax.jit first call")
        return {"first": seconds}
    start = time.perf_counter()
    step = xlanb.jit(spec.step, tiered=True)
    got, seconds = timed(lambda: step(*args))
    tier = step.last_compiled.tier
    assert step.wait_compiled(600), "background compile did not finish in 600 s"
    # when calls could run compiled code: the switch-over, or a warm start's program load
    # (the timeline: `report` would first compile what only the report shows)
    timeline = step.last_compiled.executable.timeline
    ready = max(p.start + p.seconds for p in timeline.phases
                if p.name in ("switch-over", "program cache"))
    switched = timeline.origin + ready - start
    assert_same_step(got, spec.numpy_step(*args), spec, "xlanb first call")
    assert_same_step(step(*args), spec.numpy_step(*args), spec, "xlanb compiled call")
    return {"first": seconds, "tier": tier, "switched": switched,
            "import": IMPORT_SECONDS, "final_tier": step.last_compiled.tier}


def fresh_process(mode: str, name: str, cache: str) -> dict:
    """`first_call` in a new interpreter with the kernel cache directory `cache`."""
    import json
    import subprocess
    env = dict(os.environ, XLANB_CACHE_DIR=cache)
    # A user's Python keeps the bytecode of the modules it imports; this project's
    # machines set PYTHONDONTWRITEBYTECODE, which makes every fresh process compile
    # xlanb's and the lowering modules' source again (W4's first call: 61 -> 40 ms).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["XLANB_FLAGS"] = env.get("XLANB_FLAGS", "").replace("--xla_tiered=false", "")
    command = [sys.executable, __file__, "--threads", str(ARGS.threads),
               "--first-call", mode, "--workload", name] + (["--quick"] if ARGS.quick else [])
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} {name} first call failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def first_result_table() -> str:
    """Time to first result in fresh processes: with an empty cache (xlanb answers on the
    NumPy tier), then again with the cache that run left (xlanb loads its kernels)."""
    rows = [["workload", "numpy step ms", "numpy first ms", "xlanb first ms", "tier",
             "target ms", "met", "jax first ms", "compiled after s",
             "warm: first ms", "import xlanb ms", "compiled after s"]]
    for name in TRAINING_WORKLOADS:
        with tempfile.TemporaryDirectory(prefix="xlanb-first-") as cache:
            numpy_run = fresh_process("numpy", name, cache)
            mine = fresh_process("xlanb", name, cache)
            warm = fresh_process("xlanb", name, cache)
            theirs = fresh_process("jax", name, cache) if jax is not None else None
        target = 1.5 * numpy_run["steady"] + 0.05
        rows.append([name, f"{numpy_run['steady'] * 1e3:.1f}",
                     f"{numpy_run['first'] * 1e3:.1f}", f"{mine['first'] * 1e3:.1f}",
                     mine["tier"], f"{target * 1e3:.1f}",
                     "yes" if mine["first"] <= target else "no",
                     f"{theirs['first'] * 1e3:.1f}" if theirs else "-",
                     f"{mine['switched']:.2f}",
                     f"{warm['first'] * 1e3:.1f} ({warm['tier']})",
                     f"{warm['import'] * 1e3:.0f}", f"{warm['switched']:.2f}"])
    return format_table(rows)


def main() -> None:
    print(f"xlanb training benchmarks, {ARGS.threads} thread(s); BLAS: {blas_description()}")
    print("\ntime to first result (fresh process, empty cache; tiered xlanb.jit):")
    print(first_result_table())
    print("target = 1.5 x the NumPy step (steady) + 50 ms; numpy first = its first call in "
          "a fresh process; compiled after = from the first call until calls run compiled "
          "code (the background compile); warm = a new process with the kernels and program "
          "record that run left in the cache (its `import xlanb` took the ms shown; "
          "compiled after = from the first call until its compiled program was loaded, "
          "before the first call's step ran)\n")
    if ARGS.first_result_only:
        return
    for line in check_gradients():
        print(f"check: {line}")
    rows = [["workload", "kernels", "numpy ms", "op-by-op ms", "xlanb ms", "jax ms",
             "vs numpy", "xlanb/jax", "target", "compile s", "jax compile s",
             "pays off after (steps)"]]
    with tempfile.TemporaryDirectory(prefix="xlanb-bench-") as cache:
        os.environ["XLANB_CACHE_DIR"] = cache      # cold compiles: an empty kernel cache
        _, startup = timed(lambda: xlanb.jit(lambda x: x + 1)(np.ones(8, np.float32)))
        print(f"Numba start-up + a first tiny jit: {startup:.2f} s (not in the compile times)")
        for name, spec in TRAINING_WORKLOADS.items():
            rows.append(run_workload(name, spec, ARGS.repeats, ARGS.quick))
    print(format_table(rows))
    print("numpy = hand-written forward + backward; op-by-op = the traced step under "
          "xlanb.disable_jit(); ratios = medians of per-round ratios; compile s = first "
          "call - steady-state call")


if __name__ == "__main__":
    if ARGS.first_call:
        import json
        print(json.dumps(first_call(ARGS.first_call, ARGS.workload, ARGS.quick)))
    else:
        main()
