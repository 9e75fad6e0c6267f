"""Mirrored training over MPI: step time on 1 vs 2 ranks, MPI calls per step, all-reduce cost.

    python benchmarks/bench_distributed.py            # launches mpiexec -n 1 and -n 2 itself
    python benchmarks/bench_distributed.py --batch 512 --repeats 100

Each rank runs the compiled MLP step (6 parameter arrays; value_and_grad, all-reduce MEAN
of the gradients, SGD) on the same per-replica batch, in single-thread mode with rank r
pinned to core r (weak scaling: 2 ranks do twice the work of 1 in the ideal same time).
Printed per rank count:
- the step's median time, with the combiner (default) and without it
  (`--xla_allreduce_combine_threshold_bytes=0`), and the MPI all-reduce calls per step;
- the time spent in `MpiCommunicator.all_reduce` per call against a raw mpi4py
  `Allreduce(IN_PLACE, SUM)` of the same bytes, timed interleaved with the steps: the
  difference is xlanb's collective overhead (argument checks, the MEAN division).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import format_table, pin_threads  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
NO_COMBINER = "--xla_allreduce_combine_threshold_bytes=0"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256, help="per-replica batch")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("--worker", help=argparse.SUPPRESS)     # OUT.json: run as a rank
    return parser.parse_args()


# -- a rank ----------------------------------------------------------------------------------

def worker(args: argparse.Namespace) -> None:
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    rank = int(os.environ.get("PMI_RANK", "0"))
    pin_threads(1)
    if cores:
        os.sched_setaffinity(0, {cores[rank % len(cores)]})

    import numpy as np
    from mpi4py import MPI

    import xlanb
    from xlanb import distribute, optim
    from xlanb.models import mlp

    strategy = distribute.MultiWorkerMirroredStrategy()
    comm = strategy.communicator
    sizes = (64, args.hidden, args.hidden, 10)
    optimizer = optim.sgd(0.1)

    def step(params, x, y):
        loss, grads = xlanb.value_and_grad(mlp.loss)(params, x, y)
        grads = distribute.get_replica_context().all_reduce("mean", grads)
        params, _ = optimizer.update(params, grads, optim.SGDState(None))
        return params, loss

    # Time every all-reduce the compiled step makes (the communicator's own work).
    spent: list[float] = []
    sizes_seen: list[int] = []
    inner = comm.all_reduce

    def timed_all_reduce(buffer, kind):
        start = time.perf_counter()
        inner(buffer, kind)
        spent.append(time.perf_counter() - start)
        sizes_seen.append(buffer.nbytes)
    comm.all_reduce = timed_all_reduce

    rng = np.random.default_rng(rank)
    x = rng.random((args.batch, sizes[0]), dtype=np.float32)
    y = rng.integers(0, 10, args.batch)
    params = mlp.init(0, sizes)
    raw_comm = MPI.COMM_WORLD.Clone()
    results = {}
    for label, flags in (("combined", ""), ("uncombined", NO_COMBINER)):
        os.environ["XLANB_FLAGS"] = flags            # read at compile time
        train_step = xlanb.jit(step)
        for _ in range(3):                           # compile and warm up
            params, _ = strategy.run(train_step, args=(params, x, y))
        spent.clear()
        sizes_seen.clear()
        calls_before = comm.calls
        steps = []
        for _ in range(args.repeats):
            raw_comm.Barrier()
            start = time.perf_counter()
            params, _ = strategy.run(train_step, args=(params, x, y))
            steps.append(time.perf_counter() - start)
        results[label] = {
            "step_ms": statistics.median(steps) * 1e3,
            "calls_per_step": (comm.calls - calls_before) / args.repeats,
            "bytes_per_step": sum(sizes_seen) / args.repeats,
            "in_step_us": statistics.median(spent) * 1e6,
            "largest_bytes": max(sizes_seen),
        }
    # The communicator against raw mpi4py on the combined buffer's bytes, interleaved, each
    # call after a barrier (so neither includes waiting for a late rank).
    buffer = np.ones(results["combined"]["largest_bytes"] // 4, np.float32)
    calls = {"sum": lambda: inner(buffer, "sum"), "mean": lambda: inner(buffer, "mean"),
             "raw": lambda: raw_comm.Allreduce(MPI.IN_PLACE, buffer, MPI.SUM)}
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(5 * args.repeats):
        for name, call in calls.items():
            buffer[...] = 1.0
            raw_comm.Barrier()
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    results["collective_us"] = {name: statistics.median(t) * 1e6 for name, t in times.items()}
    if comm.rank == 0:
        Path(args.worker).write_text(json.dumps({"ranks": comm.size, **results}))


# -- the launcher ----------------------------------------------------------------------------

def main() -> None:
    args = parse_args()
    if args.worker:
        worker(args)
        return
    mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) \
        or shutil.which("mpiexec")
    if mpiexec is None:
        raise SystemExit("mpiexec not found: pip install mpich mpi4py")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), str(REPO / "runtime"),
                                                      env.get("PYTHONPATH")]))
    rows = [["ranks", "variant", "step ms", "MPI calls/step", "KB/step",
             "all-reduce us in step"]]
    collective_rows = [["ranks", "KB", "raw Allreduce us", "xlanb sum us", "overhead",
                        "xlanb mean us", "overhead"]]
    for n in (int(r) for r in args.ranks.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out.json"
            command = [mpiexec, "-n", str(n), sys.executable, __file__, "--worker", str(out),
                       "--batch", str(args.batch), "--hidden", str(args.hidden),
                       "--repeats", str(args.repeats)]
            subprocess.run(command, env=env, check=True, timeout=600)
            result = json.loads(out.read_text())
        for variant in ("combined", "uncombined"):
            r = result[variant]
            rows.append([str(n), variant, f"{r['step_ms']:.3f}", f"{r['calls_per_step']:g}",
                         f"{r['bytes_per_step'] / 1024:.0f}", f"{r['in_step_us']:.1f}"])
        c = result["collective_us"]
        collective_rows.append([str(n), f"{result['combined']['largest_bytes'] / 1024:.0f}",
                                f"{c['raw']:.1f}", f"{c['sum']:.1f}",
                                f"{(c['sum'] / c['raw'] - 1) * 100:+.0f}%", f"{c['mean']:.1f}",
                                f"{(c['mean'] / c['raw'] - 1) * 100:+.0f}%"])
    print(f"MLP 64-{args.hidden}-{args.hidden}-10 float32, per-replica batch {args.batch}, "
          f"{args.repeats} steps, single-thread ranks pinned to cores; medians")
    print(format_table(rows))
    print("(all-reduce us in step: per MpiCommunicator.all_reduce call inside the compiled "
          "step, waiting for the other rank included)\n")
    print(format_table(collective_rows))
    print("(one call after a barrier; mean = sum + the division by the number of ranks)")


if __name__ == "__main__":
    main()
