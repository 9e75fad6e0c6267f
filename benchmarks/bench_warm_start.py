"""Where a warm start spends its time: a fresh process, a warm disk cache, the first call.

    python benchmarks/bench_warm_start.py                    # W5, 3 fresh processes
    python benchmarks/bench_warm_start.py --workload W4 --repeats 5

First one process compiles the workload's step (tiered: the background compile fills the
cache and writes the program record), into a new cache directory.  Then each repeat, in a
fresh process (single-thread mode, as bench_training.py), imports xlanb and makes the first
call, which loads the compiled program (program_cache.py) and runs it.  Printed per
repeat: wall and CPU seconds of `import xlanb` and of the first call, and the CPU seconds
of its parts (functions wrapped with timers: tracing, the program key, each kernel's load
and within it Numba's runtime and library loads, the driver), and when the compiled program
was ready (its load done, before the step ran: bench_training.py's warm "compiled after").
"trace again" is the fastest of a few more traces of the step in the same process: the
tracer's per-op speed, apart from what only a process's first trace pays (imports, wrappers
built once, cold memos).  CPU time is shown because
this VM is shared: under load a wall-clock figure counts other processes' turns too.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# (module, object path, label): the parts of a warm first call, outermost first
PARTS = [
    ("xlanb.api", "JitFunction._lower", "trace"),
    ("xlanb_runtime.background", "program_key", "program key"),
    ("xlanb_runtime.program_cache", "executable_from", "program load (all)"),
    ("xlanb_runtime.codegen.program_kernels", "load_all", "  kernels from the record"),
    ("xlanb_runtime.codegen.cache", "compile_canonical", "kernel loads (all)"),
    ("xlanb_runtime.codegen.cache", "_import", "  kernel module imports"),
    ("xlanb_runtime.codegen.cached_load", "load", "  Numba cache loads"),
    ("xlanb_runtime.codegen.cached_nrt", "initialize", "    NRT ready"),
    ("numba.core.compiler", "CompileResult._rebuild", "    library rebuilds"),
    ("xlanb_runtime.program_cache", "make_driver", "driver"),
]


def _wrap(seconds: dict, module: str, path: str, label: str) -> None:
    """Replace `module.path` by a wrapper adding its CPU seconds to `seconds[label]` (a
    classmethod is replaced by a function calling the bound original: it is only ever
    called on its class)."""
    import importlib
    try:
        owner = importlib.import_module(module)
    except ImportError:                      # an older runtime without that part
        return
    *parents, name = path.split(".")
    for parent in parents:
        owner = getattr(owner, parent)
    original = getattr(owner, name, None)
    if original is None:
        return

    @functools.wraps(original)
    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            seconds[label] += time.process_time() - start

    setattr(owner, name, timed)


def child(workload: str) -> dict:
    """One fresh process's warm first call (the cache is warm; see `main`)."""
    wall, cpu = time.perf_counter(), time.process_time()
    import xlanb
    imported = (time.perf_counter() - wall, time.process_time() - cpu)
    from training_workloads import TRAINING_WORKLOADS
    seconds: dict = defaultdict(float)
    for part in PARTS:
        _wrap(seconds, *part)
    spec = TRAINING_WORKLOADS[workload]
    args = spec.make_args("full")
    step = xlanb.jit(spec.step, tiered=True)
    wall, cpu = time.perf_counter(), time.process_time()
    step(*args)
    first = (time.perf_counter() - wall, time.process_time() - cpu)
    # when the compiled program was ready to run (as bench_training.py's "compiled after"):
    # the end of its load from the program cache, before the step itself ran
    timeline = step.last_compiled.executable.timeline
    loaded = [p.start + p.seconds for p in timeline.phases if p.name == "program cache"]
    ready = timeline.origin + loaded[0] - wall if loaded else None
    parts = dict(seconds)                 # the first call's (the retraces below add)
    # the tracer's own speed apart from a first trace's one-time work (imports, warm-up):
    # the same step traced again by new jitted functions, the fastest of a few
    again = []
    for _ in range(TRACE_REPEATS):
        fresh, cpu = xlanb.jit(spec.step, tiered=True), time.process_time()
        fresh._lower(args, {})
        again.append(time.process_time() - cpu)
    return {"import": imported, "first": first, "ready": ready, "retrace": min(again),
            "tier": step.last_compiled.tier, "parts": parts}


TRACE_REPEATS = 9


def run_child(workload: str, cache: str, wait: bool = False) -> dict:
    env = dict(os.environ, XLANB_CACHE_DIR=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)        # as bench_training.py's fresh processes
    env["XLANB_FLAGS"] = env.get("XLANB_FLAGS", "").replace("--xla_tiered=false", "")
    command = [sys.executable, __file__, "--child", "--workload", workload] + \
        (["--wait"] if wait else [])
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="W5")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--wait", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from common import pin_threads
    pin_threads(1)
    if args.child:
        os.environ["XLANB_FLAGS"] = os.environ["XLANB_FLAGS"].replace("--xla_tiered=false", "")
        if args.wait:                        # fill the cache: compile in the background
            import xlanb
            from training_workloads import TRAINING_WORKLOADS
            spec = TRAINING_WORKLOADS[args.workload]
            step = xlanb.jit(spec.step, tiered=True)
            step(*spec.make_args("full"))
            assert step.wait_compiled(600) and step.last_compiled.tier == "compiled"
            print(json.dumps({}))
        else:
            print(json.dumps(child(args.workload)))
        return
    print(f"warm start of {args.workload}, 1 thread; load: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="xlanb-warm-") as cache:
        run_child(args.workload, cache, wait=True)
        runs = [run_child(args.workload, cache) for _ in range(args.repeats)]
    for i, run in enumerate(runs):
        (iw, ic), (fw, fc) = run["import"], run["first"]
        ready = "-" if run.get("ready") is None else f"{run['ready'] * 1e3:.0f} ms"
        print(f"run {i}: import xlanb {iw * 1e3:.0f} ms (cpu {ic * 1e3:.0f}); first call "
              f"{fw * 1e3:.0f} ms (cpu {fc * 1e3:.0f}, tier {run['tier']}); compiled program "
              f"ready after {ready}")
        for _, _, label in PARTS:
            if label in run["parts"]:
                print(f"    {label:26s} cpu {run['parts'][label] * 1e3:6.1f} ms")
        if "retrace" in run:
            print(f"    {'trace again (fastest)':26s} cpu {run['retrace'] * 1e3:6.1f} ms")
    print("the first call includes running the step once; parts are CPU ms inside it; "
          "ready after = from the first call until its compiled program was loaded (wall), "
          "the issue's warm-start target is 100 ms for W5")


if __name__ == "__main__":
    main()
