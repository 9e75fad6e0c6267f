"""Compile-time scaling: time per node of every pass on long unrolled traces (issue 13).

    python benchmarks/bench_passes.py                    # 2,500 / 5,000 / 10,000 / 20,000 nodes
    python benchmarks/bench_passes.py --sizes 2500 5000 --programs scalar-loop
    python benchmarks/bench_passes.py --profile 20000    # cProfile of one compile, top 25

Each program is a Python loop that tracing unrolls (its trip count picks the node count).
It is traced, then compiled by `xlanb_runtime.compile` with `loop-reroll` disabled (it
would roll these loops, and the passes would see a small program: its own time on the
whole trace is the `loop-reroll` row) and with Numba's own compile stubbed out: Numba
costs about 3 ms per generated statement whatever xlanb does, and is not a pass.
Everything else runs as in a real compile, and the CompileReport's timeline gives each
phase's seconds (the pass pipeline records every pass).  `other` is the rest of the
compile (driver, report, checks between passes: fingerprints and the verifier).  Under
load the absolute figures move; linear work shows as a flat row of microseconds per node
(`x20k/2.5k` near 1), quadratic work as a row that doubles with each size.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import format_table  # noqa: E402

import xlanb  # noqa: E402
import xlanb_runtime  # noqa: E402
from xlanb_runtime import compiler  # noqa: E402
from xlanb_runtime.ir import interpret, parse_graph, print_graph, verify  # noqa: E402
from xlanb_runtime.passes.loop_reroll import reroll_loops  # noqa: E402

SIZES = (2500, 5000, 10000, 20000)


# -- programs: loops a loop capture would not roll (each step reads other elements) --------

def scalar_loop(steps: int):
    """The issue's example: one scalar read per step, summed (one long kernel)."""
    def f(a):
        acc = 0.0
        for i in range(steps):
            acc = acc + np.tanh(a[i % a.shape[0], i % a.shape[1]])
        return acc
    return f, (np.random.default_rng(0).random((7, 5)),)


def stencil_1d(steps: int):
    """A 3-point stencil whose boundary moves each step: a kernel and a concatenate per
    step (many kernels of one shape: sibling merging, ordering, buffer assignment)."""
    def f(u):
        for t in range(steps):
            w = 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:]
            u = np.concatenate([u[:1] * (1.0 + 1e-3 * (t % 7)), w, u[-1:]])
        return u
    return f, (np.random.default_rng(0).random(64),)


def rows_2d(steps: int):
    """Per-step row normalization of a 2-D field (reductions over rows: row fusion)."""
    def f(x):
        for t in range(steps):
            x = x - x.max(axis=1, keepdims=True) * (0.5 + 1e-3 * (t % 5))
            x = np.tanh(x) + x[:, ::-1] * 0.1
        return x
    return f, (np.random.default_rng(0).random((16, 32)),)


PROGRAMS = {"scalar-loop": scalar_loop, "stencil-1d": stencil_1d, "rows-2d": rows_2d}


# -- measuring -----------------------------------------------------------------------------

class _StubDispatcher:
    """Stands in for a Numba dispatcher: the benchmark never runs the program."""

    def __call__(self, *args):
        raise RuntimeError("bench_passes compiles without Numba; nothing can run")


def _no_numba(gen):
    return _StubDispatcher(), 0.0


def traced_graph(program, nodes: int):
    """The traced graph of `program` unrolled to about `nodes` nodes (and its seconds)."""
    probe = xlanb.jit(program(40)[0]).lower(*program(40)[1]).graph
    base = xlanb.jit(program(20)[0]).lower(*program(20)[1]).graph
    per_step = max((len(probe) - len(base)) / 20, 1e-9)
    steps = max(1, round((nodes - (len(base) - 20 * per_step)) / per_step))
    fn, args = program(steps)
    start = time.perf_counter()
    graph = xlanb.jit(fn).lower(*args).graph
    return graph, time.perf_counter() - start


def measure(graph) -> dict[str, float]:
    """Seconds of each phase of one compile of `graph`, Numba stubbed out; repeated
    passes (simplify and cse run twice) are summed under their name."""
    report = xlanb_runtime.CompileReport(graph.name) if hasattr(
        xlanb_runtime, "CompileReport") else compiler.CompileReport(graph.name)
    original = compiler.compile_kernel
    compiler.compile_kernel = _no_numba
    try:
        start = time.perf_counter()
        xlanb_runtime.compile(graph, "cpu",
                              compiler.CompileOptions(disabled_passes=("loop-reroll",)),
                              report)
        total = time.perf_counter() - start
    finally:
        compiler.compile_kernel = original
    start = time.perf_counter()
    reroll_loops(graph)
    report.add("loop-reroll", "pass", start, time.perf_counter() - start)
    seconds: dict[str, float] = {}
    for phase in report.phases:
        if phase.category == "compile":            # the stubbed Numba calls
            continue
        seconds[phase.name] = seconds.get(phase.name, 0.0) + phase.seconds
    seconds["other"] = total - sum(v for k, v in seconds.items() if k != "loop-reroll")
    seconds["compile total"] = total
    return seconds


def ir_tools(graph) -> dict[str, float]:
    """Seconds of the IR's own walks: print, parse, verify, interpret."""
    seconds = {}
    start = time.perf_counter()
    text = print_graph(graph)
    seconds["print"] = time.perf_counter() - start
    start = time.perf_counter()
    parse_graph(text)
    seconds["parse"] = time.perf_counter() - start
    start = time.perf_counter()
    verify(graph)
    seconds["verify"] = time.perf_counter() - start
    args = [np.ones(p.shape, p.dtype) for p in graph.params]
    start = time.perf_counter()
    interpret(graph, args)
    seconds["interpret"] = time.perf_counter() - start
    return seconds


def best_of(repeats: int, fn, *args) -> dict[str, float]:
    runs = [fn(*args) for _ in range(repeats)]
    return {name: min(run[name] for run in runs) for name in runs[0]}


def bench(name: str, sizes, repeats: int) -> None:
    columns, counts = [], []
    for size in sizes:
        graph, trace_seconds = traced_graph(PROGRAMS[name], size)
        seconds = {"trace": trace_seconds, **best_of(repeats, measure, graph),
                   **best_of(repeats, ir_tools, graph)}
        columns.append(seconds)
        counts.append(len(graph))
        print(f"  {name}: {len(graph)} nodes, compile {seconds['compile total']:.2f} s",
              file=sys.stderr)
    rows = [["us per node"] + [f"{n} nodes" for n in counts] + [f"x{counts[-1] // 1000}k/"
                                                                f"{counts[0] / 1000:g}k"]]
    for phase in columns[0]:
        per_node = [c.get(phase, 0.0) / n * 1e6 for c, n in zip(columns, counts)]
        growth = per_node[-1] / per_node[0] if per_node[0] > 0.05 else float("nan")
        rows.append([phase] + [f"{v:.1f}" for v in per_node] + [f"{growth:.2f}"])
    print(f"\n{name} (nodes after tracing; best of {repeats})")
    print(format_table(rows))


def profile(name: str, size: int) -> None:
    graph, _ = traced_graph(PROGRAMS[name], size)
    profiler = cProfile.Profile()
    profiler.enable()
    measure(graph)
    profiler.disable()
    pstats.Stats(profiler).sort_stats(os.environ.get("BENCH_SORT", "cumulative")).print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--programs", nargs="+", default=list(PROGRAMS),
                        choices=list(PROGRAMS))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--profile", type=int, metavar="NODES",
                        help="profile one compile of each program at this size instead")
    args = parser.parse_args()
    for name in args.programs:
        if args.profile:
            profile(name, args.profile)
        else:
            bench(name, args.sizes, args.repeats)


if __name__ == "__main__":
    main()
