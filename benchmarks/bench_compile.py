"""Where a cold compile's time goes: W4 and W5 compiled into an empty cache (issue 16).

    python benchmarks/bench_compile.py                   # W4 W5, single-thread mode
    python benchmarks/bench_compile.py --workloads W5 --kernels 10
    python benchmarks/bench_compile.py --workloads W5 --llvm-passes 15   # + LLVM's passes

Each workload's first call compiles in the foreground (`tiered=False`) into an empty kernel
cache, after a tiny jit has paid Numba's start-up.  Printed per workload: wall and CPU
seconds (CPU time moves less than wall time on a loaded machine), kernels and generated
statements, then the compile split by phase and the kernels that cost the most.  The
phases come from Numba's event API (`numba:run_pass`, exclusive of nested compiles) and
from timers around Numba's code library (LLVM's passes and machine code), so `typing`,
`lowering` etc. are Numba's own work on our generated source.

Findings (2026-11-24, Numba 0.68, 1 thread, load 1.4; figures move with load):
- W5 (19 compiled kernels, about 1,000 generated statements) took 5.3 s: lowering to
  LLVM IR in Python 1.1 s, LLVM machine code 0.8 s, LLVM module optimization 0.7 s, LLVM
  function passes 0.6 s, typing 0.5 s, IR text parsing 0.35 s, Numba's untyped passes
  about 0.5 s, the CPython wrappers 0.2 s.  Nearly all of it scales with the amount of
  generated code: a 10-statement kernel costs about 75 ms, the 230-statement
  reduce_fusion.2 (layer-norm and bias gradients) 1.4 s.
- One compile unit per program does not help here.  All W5 kernels lowered into one
  Numba code library (one module optimization, one machine-code pass): 5.02 s against
  5.19 s.  All of them in one function: 10.1 s against 8.2 s (loaded machine): LLVM's
  machine code generation grows faster than linearly with the function.
- What helped: identical kernels compile once (W5's six SGD epilogues differed only in
  their names: -13%), no C-callable wrapper per kernel (2-3%), and serial kernels skip
  Numba passes they never need (codegen/kernel_pipeline.py, about 5%): W5 5.8-6.0 ->
  4.6-4.9 s CPU, W4 1.6 -> 1.2-1.4 s, at load 5.
- Kernels compiled in the compile worker too (runtime/xlanb_runtime/parallel_compile.py;
  compare with XLANB_FLAGS=--xla_parallel_compile=false): at load 7-8, W5's CPU time in
  this process 4.9 -> 3.4 s, wall time unchanged (9.9-10.0 vs 8.2-11.2 s) and W4's wall
  worse (2.8 -> 4.1 s: its compile is shorter than the worker's start-up).  On a saturated
  machine a second process only competes for the same cores, so it runs only when a core
  is idle (load average <= cores - 1) and for 300+ statements.  The printed CPU seconds
  are this process's only.
- Left: lighter LLVM optimization (Numba's opt level is one global setting of its code
  generator, not per function); fewer generated statements (only 5% of W5's are
  duplicates).  The targets (W4 0.5 s, W5 2 s) need about 2 ms per generated statement
  instead of Numba's 5: emitting LLVM IR from the fused kernels directly, without
  Numba's bytecode analysis, typing and lowering, is the root cut left.
- 2026-11-27 (load 5 on 2 cores: wall about 2x CPU, CPU about 3x a quiet machine's; phases
  of the first run below).  W4 3.96 s CPU: lowering 23%, LLVM machine code 14%, typing
  12%, LLVM module optimization 10%, LLVM function passes 10%, Numba's other passes 9%,
  IR text -> module 7%, CPython wrappers 3%, dispatcher 2%, xlanb 5% (tracing 17 ms,
  passes 20 ms, fusion 20 ms, codegen 34 ms, buffers 5 ms).  W5 14.9 s CPU: lowering 19%,
  machine code 16%, module optimization 14%, other passes 12%, typing 12%, function passes
  10%, IR text 6%, wrappers 4%, xlanb 5%.  One kernel dominates W5: reduce_fusion.2 (the
  layer-norm backward's nine column sums, 30 input arrays, 21 loops) took 10.7 of 31 s
  wall at 184 statements: LLVM's cost grows faster than the function.  Skipping Numba's
  per-function LLVM passes (the module pipeline optimizes everything again) made W4
  slower (3.2 -> 3.9 s CPU): the module passes then start from unoptimized IR.  Loops
  that reload a value an earlier distributed loop stored in a row buffer, instead of
  recomputing it, cut that kernel 229 -> 184 statements (W5 813 -> 768), about 4% of W5's
  compile (within this machine's noise).
- 2026-11-28 (load 2-4 on 2 cores; CPU about 3x a quiet machine's).  Per Numba pipeline
  run, cold W4 spent 0.5-1.0 s wall compiling Numba's OWN implementations, once per
  process: np.empty (two shape types, 0.21-0.36 s, plus its allocator trampolines 0.07-0.15
  s), np.full 0.19-0.21 s, builtin min and max on ints 0.21-0.28 s (one compile per
  signature).  Kernels now allocate through an intrinsic (codegen/alloc.py: np.empty's
  LLVM IR at the call site), fill accumulators with a loop and clamp indices with int64
  conditionals (cpu.clamp): no Numba helper compiles in W4 or W5.  Blocked float32 sums
  run their short last block in the same loop instead of a remainder loop repeating the
  body (about 40% of a layer-norm row kernel's statements).  Cold CPU seconds, fresh
  processes alternated with main, 3 rounds at load 2.2-3.1: W4 3.99 3.24 3.92 -> 3.09
  3.05 3.46, W5 15.26 15.50 17.13 -> 13.69 14.95 14.86 (about -15% and -10%).  Numba's
  per-function LLVM passes at O1 instead of O3 (the module passes still at O3): W4 -15%,
  W5 within noise in 4 rounds; not adopted (a global Numba setting, kernel speed unmeasured).  What is left is per statement: native lowering (Numba's lowering plus all of
  LLVM) 66% of W4's CPU, typing 13%, SSA reconstruction 6.5%, bytecode 2.5%.
- 2026-11-28, LLVM's passes (`--llvm-passes`; XLANB_FLAGS=--xla_parallel_compile=false,
  load 1.5, CPU seconds).  W4 2.67 s: all LLVM passes 0.77 s (29%).  W5 14.7 s (13 Numba
  kernels, 770 statements): LLVM passes 5.4 s (37%): InstCombine 12% of them, instruction
  selection 11%, loop strength reduction 9%, SROA 8%, register allocation 6%, correlated
  value propagation 5%, LoopLoadElimination 4%, LoopVectorize 4%.  The vectorizer's
  run-time alias checks (loop access analysis, in those last two) are about 3% of W5.
  reduce_fusion.2 is not superlinear: compiled alone with the first N of its row loop's 30
  statement groups, 0: 0.76-0.84 s, 5: 1.3-1.4, 10: 1.6-1.8, 20: 2.7-2.9, all: 2.6-3.2 s,
  linear at about 0.1 s per loop on top of 0.8 s for its 46 arguments, 18 scratch arrays
  and epilogue; its share of W5 is its size (a quarter of the statements).  Numba's
  lowering makes about 17,000 named LLVM values of its 184 statements.  A 6-statement
  kernel costs 0.14-0.21 s, so W5's 13 kernels pay about 2 s before any statement.  Per
  Numba pass (W4, 3.45 s CPU): native lowering (Numba's and all of LLVM) 65%, typing 14%,
  inline_inlinables 6% (each call of an `inline="always"` vecmath function runs the
  callee's untyped pipeline again), bytecode 3%, SSA 2%.
  Tried on reduce_fusion.2 (and row kernels) compiled alone, interleaved, load 1.2-4.3 (one
  compile varies +-20% here); none adopted:
  - `while` loops instead of `for ... in range`: slower (2.3-3.2 -> 3.2-3.6 s).
  - the j2 loops' 3-D accesses through row views hoisted per (j0, j1) (13 arrays): no
    change (2.2-3.8 vs 2.6-3.5 s).
  - scratch arrays' data pointer from NRT's C `NRT_MemInfo_data` declared `noalias` (as
    malloc; LLVM then knows scratch overlaps nothing): run-time checks 23 -> 6 blocks,
    compile within noise, 5% more machine code (more loops vectorized; speed unmeasured).
  - Numba's first ("cheap") module pipeline skipped: module optimization 0.60 -> 0.39 s,
    the totals within noise, identical machine code.
  - `noalias` on every kernel argument (Numba's `flags.noalias`, as its parfors set it
    where no arguments alias): machine code row_fusion.2 3811 -> 2835 lines, row_fusion.4
    2027 -> 1717, fusion.1 1428 -> 1137; compile row_fusion.4 1.1-1.3 -> 0.7-1.1 s,
    row_fusion.2 1.4-2.1 -> 1.1-1.9 s, reduce_fusion.2 within noise; whole workloads,
    cold, 3 rounds alternated: W4 2.39-3.29 -> 3.09-3.22 s CPU, W5 14.4-16.2 -> 14.3-15.5
    s: no gain worth its proof.  (Correct only where no argument a kernel writes overlaps
    another of its arguments at any call: buffer assignment would have to prove that per
    kernel, since a region update's or a pooled output can take an input's buffer.)
  Same code alternated with main, 2 rounds, load 2: W4 2.9 2.3 / 3.5 2.1 s CPU, W5 13.5
  13.7 / 14.5 12.2 s: one configuration moves +-15% from run to run here.
  So the cost is per generated statement and per kernel, spread over Numba's lowering and
  LLVM's ordinary passes; no one LLVM setting holds a large share.
- 2026-11-28, the fixed cost of one kernel: 11 distinct one-statement kernels (a*b, a-b,
  a/b, ...; 1e5 float64) compiled cold after a warm-up kernel, load 1.6: 0.13-0.19 s CPU
  each (median), of which Numba's compile 0.12-0.18 s.  Per kernel (event timers,
  exclusive): LLVM machine code 32 ms, LLVM function passes 26, module optimization 22,
  lowering 22, Numba's other passes 26 (half of it Python's collector, below), IR text ->
  module 17, typing 12, CPython wrapper 11 (it is called: the driver calls kernels
  through the dispatcher), dispatcher 4; xlanb's tracing, passes, codegen and driver
  about 11 ms; cache bookkeeping (source, manifest, Numba's index and data pickles) about
  5 ms.  The final module holds 3 functions (kernel, wrapper, NRT_decref linked from
  Numba's runtime), 387 lines of assembly.  Each llvmlite call fires two Numba
  `numba:llvm_lock` events (about 650 calls a kernel, about 2%; a Numba global, left).
  The one avoidable part was Python's cyclic collector: each full collection walks every
  object of the process, and a compile triggers them (W5: 5 full, 54 middle collections;
  1.3-1.8 s of 11-14 s CPU; W4 0.17-0.23 of 2.1-2.8 s; trivial kernels 12-19 ms each).
  Compiles now freeze the existing objects for the collector and, before unfreezing,
  collect once what the compile made (codegen/compile_gc.py).  Collector time, fresh
  processes, load 1.1-1.4: W5 1.63-1.79 -> 0.74 s, W4 0.24-0.25 -> 0.14 s, trivial
  kernels 17 -> 4 ms each (median CPU 0.200 -> 0.172 s); peak RSS unchanged (W4+W5 394 ->
  391 MB).  Freezing without that closing collection (first commit) took W5's collector
  time to 0.2-0.3 s but peak RSS to 434-441 MB (the compile's cyclic garbage waited in
  the oldest generation for a full collection); measured with it, bench_compile cold CPU
  seconds alternated with main, 3 rounds, load 2-3 (wall about 2x CPU): W5 14.0 16.9 14.2
  -> 13.8 12.2 10.1, W4 2.9 3.2 3.3 -> 3.3 3.4 2.3 (within noise).  Whole-workload CPU
  totals move +-15% here, more than the collector's share: judge this cut by the
  collector's time.  Generated code and kernel speed are unchanged (the compile's inputs
  are the same).  Also tried, W5 collector time: collection off during a compile
  0.34-0.55 s (the first young collection afterwards walks all the compile's objects),
  gen-0 threshold 10,000 0.66 s.
- 2026-11-29, the floor under a front end of our own (quiet machine, load 0.5): W4 cold
  1.30 s (6 Numba kernels, 168 statements): Numba's front end (typing, lowering, its
  other passes, wrappers) 0.59 s, LLVM 0.59 s, xlanb 0.11 s.  LLVM alone on the kernels'
  final IR as Numba leaves it (already optimized, with its CPython wrapper; parsed, O3
  module passes again,
  machine code, llvmlite 0.50): 0.03-0.13 s a kernel, 0.44 s for W4's six (emission
  about half).  So IR emitted directly from the fused kernels, skipping Numba's front
  end, would still spend about 0.4 s in LLVM at O3 plus xlanb's 0.11 s: over W4's 0.5 s
  target unless the vectorized, unrolled machine code itself gets smaller (O2, fewer
  unrolled bodies).  Not started: a second code generator to keep equal to NumPy's
  semantics, for about half the compile time.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import pin_threads  # noqa: E402

if __name__ == "__main__":
    _parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _parser.add_argument("--workloads", nargs="+", default=["W4", "W5"])
    _parser.add_argument("--kernels", type=int, default=6, help="costliest kernels shown")
    _parser.add_argument("--llvm-passes", type=int, default=0,
                         help="costliest LLVM passes shown (0: LLVM's timers stay off)")
    ARGS = _parser.parse_args()
    pin_threads(1)

import collections  # noqa: E402
import functools  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import re  # noqa: E402

import numpy as np  # noqa: E402
from llvmlite import binding as llvm  # noqa: E402
from numba.core import codegen, event, lowering  # noqa: E402

import xlanb  # noqa: E402
from common import format_table  # noqa: E402
from training_workloads import TRAINING_WORKLOADS  # noqa: E402

# Numba's code library methods timed as phases (internal names: absent ones are skipped)
LIBRARY_PHASES = [
    (codegen.CPUCodeLibrary, "_optimize_functions", "LLVM function passes"),
    (codegen.CPUCodeLibrary, "_optimize_final_module", "LLVM module optimization"),
    (getattr(codegen, "JITCodeLibrary", None), "_finalize_specific", "LLVM machine code"),
    (codegen.CPUCodeLibrary, "add_ir_module", "LLVM IR text -> module"),
    (lowering.Lower, "lower", "lowering (Python -> LLVM IR)"),
    (lowering.Lower, "create_cpython_wrapper", "CPython wrappers"),
]
PASS_PHASES = {"nopython_type_inference": "typing", "native_lowering": "lowering rest"}


class PhaseClock(event.Listener):
    """Exclusive seconds per phase: time spent in a nested phase (a callee's compile, a
    timed library method) counts there, not in its caller."""

    def __init__(self):
        self.seconds: dict[str, float] = collections.defaultdict(float)
        self.compiles = 0                 # Numba dispatcher compiles (kernels, helpers)
        self.stack: list[list] = []

    def push(self, name: str) -> None:
        self.stack.append([name, time.perf_counter(), 0.0])

    def pop(self) -> None:
        name, start, nested = self.stack.pop()
        spent = time.perf_counter() - start
        self.seconds[name] += spent - nested
        if self.stack:
            self.stack[-1][2] += spent

    def on_start(self, ev) -> None:
        if ev.kind == "numba:run_pass":
            name = ev.data["name"].split(" [", 1)[0]
            self.push(PASS_PHASES.get(name, "Numba's other passes"))
        else:
            self.compiles += 1
            self.push("Numba dispatcher (outside passes)")

    def on_end(self, ev) -> None:
        self.pop()

    def timed(self, method, name: str):
        @functools.wraps(method)
        def run(*args, **kwargs):
            self.push(name)
            try:
                return method(*args, **kwargs)
            finally:
                self.pop()
        return run


def install(clock: PhaseClock) -> None:
    for owner, attribute, name in LIBRARY_PHASES:
        if owner is not None and hasattr(owner, attribute):
            setattr(owner, attribute, clock.timed(getattr(owner, attribute), name))
    for kind in ("numba:run_pass", "numba:compile"):
        event.register(kind, clock)


# one row of LLVM's "Pass execution timing report": (seconds (share%)) columns, then the name
_PASS_ROW = re.compile(r"^\s*((?:[\d.]+ \(\s*[\d.]+%\)\s+)+)(\S.*?)(?: #\d+)?\s*$")
_COLUMN = re.compile(r"---\s*([A-Za-z+ ]+?)\s*---")


def llvm_pass_seconds(report: str) -> dict[str, float]:
    """CPU seconds (user + system) per LLVM pass name in a timing report, all instances of a
    pass summed (LLVM numbers them `#13`, one per pass manager run); wall time where the
    report has no CPU column."""
    seconds: dict[str, float] = collections.defaultdict(float)
    column = None
    for line in report.splitlines():
        headers = _COLUMN.findall(line)
        if headers:
            column = next((i for i, h in enumerate(headers) if h == "User+System"),
                          len(headers) - 1)
            continue
        row = _PASS_ROW.match(line)
        if column is not None and row and not row.group(2).startswith("Total"):
            values = re.findall(r"([\d.]+) \(", row.group(1))
            if column < len(values):
                seconds[row.group(2)] += float(values[column])
    return seconds


def llvm_pass_table(seconds: dict[str, float], shown: int) -> str:
    total = sum(seconds.values())
    rows = [["LLVM pass (all instances)", "CPU s", "share"]] + [
        [name, f"{s:.3f}", f"{s / total:.0%}"]
        for name, s in sorted(seconds.items(), key=lambda item: -item[1])[:shown]]
    rows.append(["all LLVM passes (this process)", f"{total:.3f}", "100%"])
    return format_table(rows)


def statements(source: str) -> int:
    body = source.split("\ndef ", 1)[-1]
    return sum(1 for line in body.splitlines()[1:] if line.strip())


def profile(name: str, clock: PhaseClock) -> str:
    spec = TRAINING_WORKLOADS[name]
    args = spec.make_args("full")
    step = xlanb.jit(spec.step, tiered=False)
    clock.seconds.clear()
    clock.compiles = 0
    if ARGS.llvm_passes:
        llvm.report_and_reset_timings()
    wall, cpu = time.perf_counter(), time.process_time()
    step(*args)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    compiled = step.last_compiled
    kernels = [k for k in compiled.kernels if k.compile_seconds > 0.005]   # not memo hits
    lines = [f"{name}: {wall:.2f} s ({cpu:.2f} s CPU), {len(compiled.kernels)} kernels, "
             f"{len(kernels)} compiled by Numba (with its helpers: {clock.compiles} Numba "
             f"compiles), {sum(statements(k.source) for k in kernels)} generated statements"]
    total = sum(clock.seconds.values())
    rows = [["phase", "s", "share"]] + [
        [phase, f"{s:.3f}", f"{s / wall:.0%}"]
        for phase, s in sorted(clock.seconds.items(), key=lambda item: -item[1])]
    rows.append(["xlanb (tracing, passes, codegen, cache)", f"{wall - total:.3f}",
                 f"{(wall - total) / wall:.0%}"])
    lines.append(format_table(rows))
    costly = sorted(kernels, key=lambda k: -k.compile_seconds)[:ARGS.kernels]
    rows = [["kernel", "statements", "compile s"]] + [
        [k.name, str(statements(k.source)), f"{k.compile_seconds:.3f}"] for k in costly]
    lines.append(format_table(rows))
    if ARGS.llvm_passes:
        seconds = llvm_pass_seconds(llvm.report_and_reset_timings())
        lines.append(llvm_pass_table(seconds, ARGS.llvm_passes) if seconds else
                     "LLVM reported no pass timings (compiled in the worker process?)")
    return "\n".join(lines)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="xlanb-compile-") as cache:
        os.environ["XLANB_CACHE_DIR"] = cache
        if "xla_max_compile_seconds" not in os.environ.get("XLANB_FLAGS", ""):
            xlanb.config.update(xla_max_compile_seconds=1e9)
        if ARGS.llvm_passes:
            llvm.set_time_passes(True)
        start = time.perf_counter()
        xlanb.jit(lambda x: x + 1, tiered=False)(np.ones(8, np.float32))
        print(f"Numba start-up + a first tiny jit: {time.perf_counter() - start:.2f} s; "
              f"load average {os.getloadavg()[0]:.1f}")
        clock = PhaseClock()
        install(clock)
        for name in ARGS.workloads:
            print()
            print(profile(name, clock))


if __name__ == "__main__":
    main()
