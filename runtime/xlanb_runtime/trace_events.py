"""Chrome trace events (`--xla_trace_to=FILE`): open the file in Perfetto or chrome://tracing.

Compile phases (trace, every pass, fusion, codegen, each kernel's Numba compile) and runs
(every kernel call, every collective with its bytes) become complete ("X") events on one
time axis; the process id is the MPI rank, so a multi-rank job's files line up.  Events are
kept in memory and the file is rewritten at each compile, on `flush()` and at exit.
"""
from __future__ import annotations

import atexit
import json
import os
import threading
import time

_lock = threading.Lock()
_events: list[dict] = []
_paths: set[str] = set()


def _rank() -> int:
    from .collectives import current_communicator
    comm = current_communicator()
    if comm is not None:
        return comm.rank
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "MPI_LOCALRANKID"):
        if name in os.environ:
            return int(os.environ[name])
    return 0


def add(name: str, category: str, start: float, seconds: float, **args) -> None:
    """One complete event; `start` is a time.perf_counter() value."""
    event = {"name": name, "cat": category, "ph": "X", "ts": start * 1e6,
             "dur": seconds * 1e6, "pid": _rank(), "tid": threading.get_ident() % 100000}
    if args:
        event["args"] = args
    with _lock:
        _events.append(event)


def record_report(report, path: str) -> None:
    """The compile timeline of `report` (phases), then write `path`."""
    for phase in report.phases:
        add(phase.name, phase.category, report.origin + phase.start, phase.seconds,
            module=report.name)
    flush(path)


def kernel_call(name: str, start: float) -> None:
    add(name, "run", start, time.perf_counter() - start)


def flush(path: str | None = None) -> None:
    if path:
        _paths.add(path)
    with _lock:
        data = {"traceEvents": list(_events), "displayTimeUnit": "ms"}
    for target in _paths:
        directory = os.path.dirname(os.path.abspath(target))
        os.makedirs(directory, exist_ok=True)
        temporary = f"{target}.tmp{os.getpid()}"
        with open(temporary, "w") as handle:
            json.dump(data, handle)
        os.replace(temporary, target)


atexit.register(flush)
