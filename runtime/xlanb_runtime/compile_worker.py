"""The background compile worker: `python -m xlanb_runtime.compile_worker` (background.py).

Reads compile requests from stdin (length-prefixed pickles: a flattened graph, target,
options, flags, cache directory), compiles each into the disk kernel cache, and answers on
stdout with when it started, how long it took and any error.  It ends when stdin closes.
Anything printed goes to stderr, so the reply stream stays clean.
"""
from __future__ import annotations

import os
import sys
import time
import traceback
import warnings


def _protocol_streams():
    """(requests, replies): binary stdin, and the original stdout, with fd 1 pointed at
    stderr so that a stray print (Numba, a library) cannot corrupt a reply."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return sys.stdin.buffer, replies


def _use_all_cores() -> None:
    """A benchmark pins its process to one core and the worker inherits that: compiling
    there would take the caller's core, so the worker takes every core the machine has."""
    try:
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
    except (AttributeError, OSError):
        pass


def handle(request: dict) -> dict:
    from . import background, flags
    from .compiler import _compile
    from .report import CompileReport
    os.environ["XLANB_CACHE_DIR"] = request["cache_dir"]
    started = time.perf_counter()
    if "kernels" in request:                     # a share of a blocking compile's kernels
        from .parallel_compile import compile_in_worker
        return {"id": request["id"], "ok": True, "started": started, "pid": os.getpid(),
                "kernels": compile_in_worker(request),
                "seconds": time.perf_counter() - started}
    try:
        graph = background.rebuild_graph(request["graph"])
        settings = request["flags"]
        with flags.active(settings), warnings.catch_warnings():
            warnings.simplefilter("ignore")      # the parent's own compile warns
            executable = _compile(graph, request["target"], request["options"],
                                  CompileReport(graph.name, request["target"]))
        background.remember(background.program_key(graph, request["target"],
                                                   request["options"], settings))
        return {"id": request["id"], "ok": True, "started": started, "pid": os.getpid(),
                "seconds": time.perf_counter() - started,
                "kernels": len(executable.kernels)}
    except Exception as error:                   # noqa: BLE001 - reported to the parent
        return {"id": request["id"], "ok": False, "started": started,
                "seconds": time.perf_counter() - started,
                "error": f"{type(error).__name__}: {error}",
                "traceback": traceback.format_exc()}


def _warm_numba() -> None:
    """Numba's one-time compile set-up (every implementation registry: 0.2-0.5 s), done
    while the first request is still on its way (parallel_compile starts the worker early)."""
    from numba.core.registry import cpu_target
    from . import compiler  # noqa: F401 - the kernels' imports
    from .codegen import cached_nrt
    cached_nrt.initialize(cpu_target.target_context)   # Numba's runtime, from the cache
    cpu_target.target_context.refresh()


def main() -> None:
    from .background import receive, send
    requests, replies = _protocol_streams()
    _use_all_cores()
    try:
        os.nice(5)          # the caller's own calls (the NumPy tier) come first
    except (AttributeError, OSError):    # not POSIX
        pass
    _warm_numba()
    while True:
        request = receive(requests)
        if request is None:
            return
        send(replies, handle(request))


if __name__ == "__main__":
    main()
