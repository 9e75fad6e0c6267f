"""Blocking compiles on two cores: the compile worker takes a program's kernels from the end
while this process takes them from the front.

A cold compile is nearly all Numba's, kernel by kernel and in proportion to the generated
statements (benchmarks/bench_compile.py), and kernels compile independently.  So before a
blocking compile goes through its kernels in order, it hands the ones not yet in the disk
cache to the compile worker (background.py's process, started on first use), last first.
Both processes go through codegen/cache.py's per-entry lock, and that is all the
coordination there is: a kernel the other one is compiling, each waits for and then loads;
a kernel already in the cache, the worker skips.  This process never waits for the worker
otherwise: while the worker starts (Python, Numba: 0.3-0.7 s) or if it is slow or fails,
this process compiles more of the kernels itself, and the answer is the same either way.

Only where it can pay: an idle core (the 1-minute load average at least one below the
core count) and at least MIN_STATEMENTS generated statements (about 5 ms of Numba each)
to compile, more than the worker's start-up (Python, Numba, its set-up: about 1 s of CPU).
The worker starts when a compile of a graph of MIN_NODES or more begins (`prepare`) and
sets Numba up at once, so that both overlap this process's passes and codegen.

Measured (benchmarks/bench_compile.py, W5, at load 7-8 on 2 cores): this process's CPU
time 4.9 -> 3.4 s (the worker compiled the rest), but no gain in wall time: on a saturated
machine the worker's start-up and compiles only compete for the same cores (W4, whose
compile is shorter than the worker's start-up, lost 1.3 s).  Hence the idle-core gate.
"""
from __future__ import annotations

import os
import threading

from . import flags
from .codegen import cache

MIN_STATEMENTS = 300           # about 1.5 s of Numba: more than the worker's start-up
MIN_NODES = 200                # a graph this big may reach MIN_STATEMENTS (W4: 76, W5: 389)


def statements(source: str) -> int:
    """Non-blank lines of a kernel module's function body."""
    body = source.split(f"\ndef {cache.KERNEL_FUNCTION}(", 1)[-1]
    return sum(1 for line in body.splitlines()[1:] if line.strip())


def _may_pay() -> bool:
    """Parallel compiles are on and a core is idle."""
    cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except OSError:                   # no load average: assume the machine is busy
        busy = float(cores)
    return flags.current().xla_parallel_compile and cores >= 2 and busy <= cores - 1


def prepare(graph) -> None:
    """Start the compile worker now (from a thread), if this compile may hand it kernels:
    its start-up then overlaps this process's passes and codegen."""
    if len(graph.nodes) < MIN_NODES or not _may_pay():
        return
    from . import background
    threading.Thread(target=_start_worker, args=(background,), name="xlanb-worker-start",
                     daemon=True).start()


def _start_worker(background) -> None:
    try:
        background.worker()
    except OSError:                   # no worker: this process compiles every kernel
        pass


def fan_out(kernels: list[tuple[str, tuple]]):
    """Ask the compile worker to compile `kernels` ((canonical source, signature), in the
    order this process will compile them) from the last: its background.Job, or None
    where that cannot pay."""
    if not _may_pay():
        return None
    todo = [(source, signature) for source, signature in kernels
            if not cache.probably_cached(source)]
    if len(todo) < 2 or sum(statements(source) for source, _ in todo) < MIN_STATEMENTS:
        return None
    from . import background
    job = background.Job({"kernels": todo[::-1], "cache_dir": str(cache.cache_dir())},
                         lambda reply: None)
    job.start()
    return job


def compile_in_worker(request: dict) -> int:
    """The worker's side: compile each kernel not yet in the cache; returns how many it
    compiled or loaded.  A kernel that fails is left to the process that asked (which
    compiles it itself and reports the error)."""
    done = 0
    for source, signature in request["kernels"]:
        if cache.probably_cached(source):
            continue
        try:
            cache.compile_canonical(source, signature)
            done += 1
        except Exception:             # noqa: BLE001 - the caller's own compile raises it
            pass
    return done
