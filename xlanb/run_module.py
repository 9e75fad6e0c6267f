"""`python -m xlanb run-module FILE [--inputs inputs.npz]`: re-run a dumped module.

The run_hlo_module of this project, for bug reports: parse an IR text file (a
`before_optimizations.txt` or `after_optimizations.txt` dump), run it compiled and through
the reference interpreter on the given inputs (an .npz with arrays `arg0`, `arg1`, ... or
`arr_0`, `arr_1`, ... as np.savez writes them) or on random ones, compare, print both times.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import xlanb_runtime
from xlanb_runtime.ir import IRParseError, interpret, parse_graph


def random_inputs(graph, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for p in graph.params:
        if p.dtype.kind == "f":
            arrays.append(rng.standard_normal(p.shape).astype(p.dtype))
        elif p.dtype.kind == "b":
            arrays.append(rng.random(p.shape) < 0.5)
        else:
            arrays.append(rng.integers(0, max(2, min(p.shape or (2,))), p.shape).astype(p.dtype))
    return arrays


def load_inputs(path: str, graph) -> list[np.ndarray]:
    with np.load(path) as data:
        names = sorted(data.files, key=lambda n: int("".join(c for c in n if c.isdigit()) or 0))
        arrays = [data[n] for n in names]
    if len(arrays) != len(graph.params):
        raise SystemExit(f"{path} holds {len(arrays)} arrays; the module takes "
                         f"{len(graph.params)} parameters")
    for i, (a, p) in enumerate(zip(arrays, graph.params)):
        if a.shape != p.shape or a.dtype != p.dtype:
            raise SystemExit(f"input {i}: {a.dtype}{list(a.shape)} does not match parameter "
                             f"{p.dtype}{list(p.shape)}")
    return arrays


def _median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_module(path: str, inputs: str | None = None, repeats: int = 5) -> int:
    try:
        with open(path) as handle:
            graph = parse_graph(handle.read())
    except IRParseError as error:
        print(f"{path}: {error}")
        return 2
    args = load_inputs(inputs, graph) if inputs else random_inputs(graph)
    executable = xlanb_runtime.compile(graph)
    compiled = executable.run(args)
    reference = interpret(graph, args)
    worst = 0.0
    for i, (got, want) in enumerate(zip(compiled, reference)):
        if want.dtype.kind == "f":
            scale = np.maximum(np.abs(want), 1.0)
            worst = max(worst, float(np.nanmax(np.abs(got - want) / scale)) if got.size else 0)
            ok = np.allclose(got, want, rtol=1e-4 if want.dtype == np.float32 else 1e-9,
                             atol=1e-5 if want.dtype == np.float32 else 1e-12, equal_nan=True)
        else:
            ok = np.array_equal(got, want)
        print(f"output {i}: {want.dtype}{list(want.shape)} "
              f"{'matches' if ok else 'DIFFERS FROM'} the interpreter")
        if not ok:
            return 1
    fused = _median_seconds(lambda: executable.run(args), repeats)
    op_by_op = _median_seconds(lambda: interpret(graph, args), repeats)
    print(f"{len(executable.kernels)} kernels; max relative difference {worst:.2e}")
    print(f"compiled {fused * 1e3:.3f} ms, interpreter {op_by_op * 1e3:.3f} ms "
          f"({op_by_op / fused:.1f}x)")
    return 0
