"""A held-out public suite, run unchanged: npbench's NumPy kernels under xlanb.jit.

    git clone https://github.com/spcl/npbench /tmp/npbench
    python benchmarks/bench_npbench.py --npbench /tmp/npbench            # preset S, 1 thread
    python benchmarks/bench_npbench.py --npbench /tmp/npbench --only gemm atax

npbench (SPCL) times the same kernels written for NumPy, Numba, DaCe, JAX...; here each
benchmark's own `<name>_numpy.py` kernel and `<name>.py` initializer are imported from the
checkout as they are, with the sizes of its `bench_info/<name>.json` preset.  Only the jit
call is ours: `xlanb.jit(kernel, static_argnums=<its non-array arguments>)`, as npbench's
JAX versions mark them.  Each benchmark runs in its own subprocess (a time limit per
benchmark; a crash or a runaway trace stays contained).

Printed per benchmark: whether it compiled (or the error class that stopped it), the
largest difference from NumPy over every output and every array argument after the call
(relative to that array's largest magnitude), NumPy's and xlanb's best time of the
interleaved rounds (the order reversed every other round, so neither side always runs
right after the other), NumPy/xlanb of those best times, the median and interquartile range
of the per-round ratios (a kernel that is one library call on both sides is a tie that
reads anywhere in that range), and the compiled program's kernel count.  Then the share
that compiles, the geometric mean of NumPy/xlanb over those, and the ones below 1.0x.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import paired_ratio, pin_threads, ratio_quartiles  # noqa: E402

if __name__ == "__main__":
    _parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _parser.add_argument("--npbench", required=True, help="path of an npbench checkout")
    _parser.add_argument("--preset", default="S", help="npbench size preset (S, M, L)")
    _parser.add_argument("--only", nargs="*", default=[], help="benchmark names to run")
    _parser.add_argument("--repeats", type=int, default=7)
    _parser.add_argument("--threads", type=int, default=1)
    _parser.add_argument("--timeout", type=float, default=300.0,
                         help="seconds allowed per benchmark (compile included)")
    _parser.add_argument("--json", help="write the results to this file")
    _parser.add_argument("--one", help=argparse.SUPPRESS)       # the subprocess's benchmark
    ARGS = _parser.parse_args()
    pin_threads(ARGS.threads)

import copy  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def benchmark_info(root: Path, name: str) -> dict:
    return json.loads((root / "bench_info" / f"{name}.json").read_text())["benchmark"]


def prepare(root: Path, info: dict, preset: str):
    """The kernel, its arguments in order and the indices of its static (non-array) ones."""
    folder = root / "npbench" / "benchmarks" / info["relative_path"]
    sys.path.insert(0, str(folder))              # some kernels import siblings
    kernel_module = load_module(folder / f"{info['module_name']}_numpy.py",
                                f"npb_{info['module_name']}_numpy")
    params = dict(info["parameters"][preset])
    values = dict(params)
    init_spec = info.get("init")                 # absent: every argument is a parameter
    if init_spec:
        init = load_module(folder / f"{info['module_name']}.py",
                           f"npb_init_{info['module_name']}")
        made = getattr(init, init_spec["func_name"])(*(params[a]
                                                      for a in init_spec["input_args"]))
        if len(init_spec["output_args"]) == 1:
            made = (made,)
        values.update(zip(init_spec["output_args"], made))
    args = [values[a] for a in info["input_args"]]
    static = tuple(i for i, a in enumerate(info["input_args"])
                   if a not in info.get("array_args", []))
    return getattr(kernel_module, info["func_name"]), args, static


def as_arrays(result) -> list:
    if result is None:
        return []
    if isinstance(result, (tuple, list)):
        return [np.asarray(r) for r in result]
    return [np.asarray(result)]


def largest_difference(expected: list, actual: list) -> float:
    """max |a - e| / max |e| over arrays (inf where shapes or counts differ)."""
    if len(expected) != len(actual):
        return math.inf
    worst = 0.0
    for e, a in zip(expected, actual):
        if e.shape != a.shape:
            return math.inf
        if e.size == 0:
            continue
        e64 = e.astype(np.complex128 if e.dtype.kind == "c" else np.float64)
        a64 = a.astype(e64.dtype)
        finite = np.isfinite(e64)
        if not np.array_equal(finite, np.isfinite(a64)):
            return math.inf
        scale = np.abs(e64[finite]).max(initial=0.0) or 1.0
        worst = max(worst, float(np.abs(a64[finite] - e64[finite]).max(initial=0.0)) / scale)
    return worst


def round_times(impls: dict, args: list, repeats: int) -> dict[str, list[float]]:
    """Each implementation's seconds per round, `repeats` interleaved rounds on fresh
    copies of the arguments, the order reversed every other round (common.py)."""
    times: dict[str, list[float]] = {name: [] for name in impls}
    order = list(impls)
    for _ in range(repeats):
        for name in order:
            fresh = copy.deepcopy(args)
            start = time.perf_counter()
            impls[name](*fresh)
            times[name].append(time.perf_counter() - start)
        order.reverse()
    return times


def run_one(root: Path, name: str, preset: str, repeats: int) -> dict:
    import xlanb
    info = benchmark_info(root, name)
    kernel, args, static = prepare(root, info, preset)
    record = {"name": name, "status": "compiled"}
    numpy_args = copy.deepcopy(args)
    expected = as_arrays(kernel(*numpy_args))
    jitted = xlanb.jit(kernel, static_argnums=static)
    ours_args = copy.deepcopy(args)
    start = time.perf_counter()
    try:
        actual = as_arrays(jitted(*ours_args))
    except Exception as error:                          # the suite's verdict, not a crash
        record.update(status=type(error).__name__, error=str(error).splitlines()[0][:160])
        return record
    record["first_call_s"] = time.perf_counter() - start
    if jitted.last_compiled.runs_eagerly:       # over a compile budget: NumPy, as written
        record["status"] = "over budget (eager)"
        record["error"] = jitted.last_compiled.executable.over_budget[:160]   # which budget
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    record["difference"] = largest_difference(
        expected + [numpy_args[i] for i in arrays], actual + [ours_args[i] for i in arrays])
    try:
        record["kernels"] = len(jitted.lower(*copy.deepcopy(args)).compile().kernels)
    except Exception:
        record["kernels"] = None
    times = round_times({"numpy": kernel, "xlanb": jitted}, args, repeats)
    best = {name: min(ts) for name, ts in times.items()}
    record.update(numpy_s=best["numpy"], xlanb_s=best["xlanb"],
                  ratio=best["numpy"] / best["xlanb"],
                  paired=paired_ratio(times, "numpy", "xlanb"),
                  paired_iqr=ratio_quartiles(times, "numpy", "xlanb"))
    return record


def run_isolated(name: str) -> dict:
    command = [sys.executable, __file__, "--npbench", ARGS.npbench, "--preset", ARGS.preset,
               "--repeats", str(ARGS.repeats), "--threads", str(ARGS.threads), "--one", name]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=ARGS.timeout)
    except subprocess.TimeoutExpired:
        return {"name": name, "status": f"timeout>{ARGS.timeout:.0f}s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {"name": name, "status": "crashed", "error": tail[:160]}


def _paired(r: dict) -> str:
    if "paired" not in r:
        return "-"
    low, high = r["paired_iqr"]
    return f"{r['paired']:.2f}x [{low:.2f}, {high:.2f}]"


def report(results: list[dict]) -> None:
    print(f"{'benchmark':26} {'status':26} {'max diff':>9} {'NumPy ms':>9} {'xlanb ms':>9} "
          f"{'NumPy/xlanb':>11} {'paired [IQR]':>19} {'kernels':>7}")
    for r in results:
        if "ratio" not in r:
            print(f"{r['name']:26} {r['status']:26} {r.get('error', '')}")
            continue
        print(f"{r['name']:26} {r['status']:26} {r['difference']:9.1e} "
              f"{r['numpy_s'] * 1e3:9.3f} {r['xlanb_s'] * 1e3:9.3f} {r['ratio']:10.2f}x "
              f"{_paired(r):>19} {str(r['kernels']):>7}  {r.get('error', '')}")
    compiled = [r for r in results if r["status"] == "compiled"]
    print(f"\ncompiled under jit: {len(compiled)}/{len(results)}; over a compile budget "
          f"(run eagerly): {sum(r['status'].startswith('over') for r in results)}")
    if compiled:
        geo = math.exp(sum(math.log(r["ratio"]) for r in compiled) / len(compiled))
        slow = [f"{r['name']} {r['ratio']:.2f}x (paired {_paired(r)})" for r in compiled
                if r["ratio"] < 1.0]
        print(f"geometric mean NumPy/xlanb over those: {geo:.2f}x")
        print(f"below 1.0x NumPy: {len(slow)}: {', '.join(slow) or '-'}")


def main() -> None:
    root = Path(ARGS.npbench)
    if ARGS.one:
        print(json.dumps(run_one(root, ARGS.one, ARGS.preset, ARGS.repeats)))
        return
    names = ARGS.only or sorted(p.stem for p in (root / "bench_info").glob("*.json"))
    results = []
    for name in names:
        results.append(run_isolated(name))
        print(f"  {name}: {results[-1]['status']}", file=sys.stderr, flush=True)
    report(results)
    if ARGS.json:
        Path(ARGS.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
