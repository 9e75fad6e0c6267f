"""Where a rolled program's compile goes, cold and warm: npbench programs with many loops.

    python benchmarks/bench_loop_compile.py --npbench /tmp/npbench
    python benchmarks/bench_loop_compile.py --npbench /tmp/npbench --only seidel_2d adi

Each benchmark is traced and compiled in the foreground (`tiered=False`) twice, each time
in a fresh process: first into an empty cache (`cold`), then into the cache the first one
filled (`warm`).  Printed per run: tracing seconds, compile seconds, and the compile
split by the report's phases: `kernels` (Numba compiles or cache loads of fused kernels,
loop bodies' included), `loops` (the loop wrappers: codegen/compiled_loop.py), `passes`
(the pass pipeline, fusion, codegen and buffer assignment, loop bodies' included), the
number of loops, and how many loop wrappers Numba compiled rather than loaded.
Run it with XLANB_FLAGS=--xla_max_compile_seconds=0 to see the whole compile (a cold
compile over the budget stops early, and its warm run then compiles the rest).

Findings (2026-11-27, no budget, 1 thread, load 3-4 from other work: seconds move 2x
with load; `before` = the loop function njit-compiled in every process, `after` = cached
as a kernel module, shared by loops of one body, trips an argument):
                      cold compile (loop wrappers)   warm compile (loop wrappers)
    deriche           32.5 (8.8)  -> 25.0 (7.8)       7.0 (5.1)   ->  3.9 (0.09)
    vadv              59.2 (15.2) -> 52.9 (12.0)     14.3 (12.7)  ->  1.5 (0.09)
    conv2d_bias       28.6 (10.4) -> 27.9 (8.6)      13.3 (11.4)  ->  1.8 (0.05)
    adi               72.0 (37.5) -> 43.0 (10.1)     36.2 (29.0)  -> 13.4 (0.18)
    syr2k             63.0 (34.5) -> 74.2 (46.0)     42.9 (30.9)  -> 12.9 (0.14)
    seidel_2d        186.3 (108.7)-> 51.6 (2.9)     198.8 (124.8) -> 41.2 (0.10)
- A loop wrapper costs more than its kernels did: Numba links every kernel it calls into
  it and optimizes and generates machine code for the whole again.  Cold, the kernels
  (vadv 40 s, deriche 15 s) and the passes before the loops (seidel_2d 22-40 s, adi
  10 s) are the rest; warm, the passes and tracing (the program's record does not hold
  loops: program_cache.py) are most of what is left.
- In syr2k's one loop function 107 `.reshape(1)` operands (rank 0 as kernels take it)
  cost Numba's lowering about 4 s; rank 0 is now shape (1,) throughout the function
  (profiled wrapper compile, warm kernels: lowering 8.9-20.8 s -> 0.9-2.7 s).  With it,
  at load 1.5: syr2k cold 37.8 (23.1) -> 13.0 (5.4), warm 15.0 (9.1) -> 3.8 (0.03);
  at load 2: vadv cold 47.7 (12.6) -> 39.8 (8.8), warm 14.9 (13.5) -> 1.6 (0.07).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import pin_threads  # noqa: E402

DEFAULT = ["syr2k", "deriche", "vadv", "conv2d_bias", "adi", "seidel_2d"]


def run_one(root: Path, name: str, preset: str) -> dict:
    import copy
    import xlanb
    from bench_npbench import benchmark_info, prepare
    from xlanb_runtime.codegen import compiled_loop
    info = benchmark_info(root, name)
    kernel, args, static = prepare(root, info, preset)
    jitted = xlanb.jit(kernel, static_argnums=static, tiered=False)
    start = time.perf_counter()
    lowered = jitted.lower(*copy.deepcopy(args))
    traced = time.perf_counter() - start
    start = time.perf_counter()
    compiled = lowered.compile()
    total = time.perf_counter() - start
    split = {"kernels": 0.0, "loops": 0.0, "passes": 0.0}
    loops = 0
    for phase in compiled.report.phases:
        last = phase.name.rsplit("/", 1)[-1]
        if last == "compiled-loop":
            split["loops"] += phase.seconds
            loops += 1
        elif phase.category == "compile":
            split["kernels"] += phase.seconds
        elif phase.category in ("pass", "fusion", "codegen"):
            split["passes"] += phase.seconds
    eager = getattr(compiled.executable, "over_budget", "")
    return {"name": name, "trace_s": traced, "compile_s": total, **split, "loop_count": loops,
            "wrapper_compiles": getattr(compiled_loop, "compile_count", lambda: -1)(),
            "eager": eager}


def run_isolated(args, name: str, cache_dir: str) -> dict:
    import os
    command = [sys.executable, __file__, "--npbench", args.npbench, "--preset", args.preset,
               "--one", name]
    env = dict(os.environ, XLANB_CACHE_DIR=cache_dir)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout,
                              env=env)
    except subprocess.TimeoutExpired:
        return {"name": name, "error": f"timeout>{args.timeout:.0f}s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"name": name, "error": (done.stderr.strip().splitlines() or ["?"])[-1][:160]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--npbench", required=True)
    parser.add_argument("--preset", default="S")
    parser.add_argument("--only", nargs="*", default=DEFAULT)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    pin_threads(1)
    if args.one:
        print(json.dumps(run_one(Path(args.npbench), args.one, args.preset)))
        return
    print(f"{'benchmark':12} {'run':5} {'trace s':>8} {'compile s':>9} {'kernels':>8} "
          f"{'loops':>6} {'passes':>7} {'#loops':>6} {'wrappers compiled':>17}")
    for name in args.only:
        with tempfile.TemporaryDirectory(prefix="xlanb-loop-compile-") as cache_dir:
            for run in ("cold", "warm"):
                r = run_isolated(args, name, cache_dir)
                if "error" in r:
                    print(f"{name:12} {run:5} {r['error']}")
                    continue
                print(f"{name:12} {run:5} {r['trace_s']:8.2f} {r['compile_s']:9.2f} "
                      f"{r['kernels']:8.2f} {r['loops']:6.2f} {r['passes']:7.2f} "
                      f"{r['loop_count']:6d} {r['wrapper_compiles']:17d}"
                      f"{'  eager: ' + r['eager'][:90] if r['eager'] else ''}", flush=True)


if __name__ == "__main__":
    main()
