"""Background compiles: a program's kernels compiled in a worker process while the NumPy tier
answers its calls (numpy_tier.py), then the switch-over to the compiled executable.

    call 1 ──► trace, passes ──► the NumPy tier answers; calls 2..k: the NumPy tier
                  └─► worker process: compile(graph) into the disk cache
                        └─► reader thread: compile(graph) here, each kernel a disk-cache
                            load ──► switch-over: calls k+1... run compiled code

Why a process: Numba's typing and lowering hold the GIL, so a compile thread would stall the
caller's NumPy calls.  One worker (`python -m xlanb_runtime.compile_worker`, started on first
use, reused, ended at exit) takes requests in order over a pipe; it imports only the runtime,
never the user's `__main__` (which `multiprocessing`'s spawn would re-run).  The worker writes
the disk cache (codegen/cache.py, locked and checked per entry); the parent's own compile of
the same graph then only loads.  A failed background compile leaves the program on the NumPy
tier (with a `BackgroundCompileWarning`): the cache stays valid and arguments are untouched,
since the worker never sees them.

A program compiled before (`program_cache.compiled_before`) is not tiered: a new process
with a warm cache loads its kernels and driver in the foreground, faster than a NumPy-tier
call of most programs.
"""
from __future__ import annotations

import _thread
import atexit
import dataclasses
import os
import pickle
import struct
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Callable

from .ir import Graph, Node
from .program_cache import compiled_before, program_key, remember
from .ir.graph import LoopBody
from .report import CompileReport

_HEADER = struct.Struct("<Q")


class BackgroundCompileWarning(UserWarning):
    """A background compile failed: the program keeps running on the NumPy tier."""


# -- graphs across processes -----------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class FlatLoop:
    """A loop node's body in a flattened graph."""
    trips: int
    carried: int
    body: tuple
    dynamic: bool = False


def flatten_graph(graph: Graph) -> tuple:
    """A graph as plain data (no recursion per node, so deep graphs pickle): nodes in
    creation order (what `loop-reroll` reads), each with its inputs as indices."""
    nodes = sorted(graph.nodes, key=lambda n: n.serial)
    index = {id(n): i for i, n in enumerate(nodes)}
    rows = [(n.op, tuple(index[id(i)] for i in n.inputs), n.shape, n.dtype,
             FlatLoop(n.arg.trips, n.arg.carried, flatten_graph(n.arg.body),
                      n.arg.dynamic)
             if isinstance(n.arg, LoopBody) else n.arg, n.loc) for n in nodes]
    return (graph.name, rows, [index[id(p)] for p in graph.params],
            [index[id(o)] for o in graph.outputs])


def rebuild_graph(flat: tuple) -> Graph:
    name, rows, params, outputs = flat
    nodes: list[Node] = []
    for op, inputs, shape, dtype, arg, loc in rows:
        if isinstance(arg, FlatLoop):
            arg = LoopBody(arg.trips, arg.carried, rebuild_graph(arg.body), arg.dynamic)
        nodes.append(Node(op, [nodes[i] for i in inputs], shape, dtype, arg, loc))
    return Graph([nodes[i] for i in params], [nodes[i] for i in outputs], name)


# -- the worker process ------------------------------------------------------------------------
def send(stream, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def receive(stream):
    """The next message, or None at end of stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


class Job:
    """One background compile: done when the program switched to its compiled executable
    (`ok`) or stayed on the NumPy tier (`error` says why).  Sent to the worker by
    `start()`, which the front end calls once the first call has its answer: the worker's
    start-up then does not compete with that call for the CPU."""

    def __init__(self, request: dict | Callable[[], dict], finish: Callable[[dict], None]):
        # `request` may be a function making it: run on the sending thread, after the
        # first answer (flattening W5's graph: about 1 ms)
        self._request, self._finish, self._event = request, finish, threading.Event()
        self._started = threading.Lock()
        self.sent = threading.Event()          # the worker is running (or failed to start)
        self.ok, self.error = False, ""
        self.reply: dict | None = None         # the worker's answer, once done

    def start(self) -> None:
        """Send the request from a thread (once; later calls do nothing): starting the
        worker process costs 5-20 ms that the call starting it need not wait for.  A bare
        thread: `threading.Thread.start` waits until the new thread runs, and on one core
        (a pinned benchmark) that thread's Popen then held the GIL for 3-9 ms of the first
        call; this one runs when the caller next yields the GIL."""
        if not self._started.acquire(blocking=False):
            return
        _thread.start_new_thread(self._send, ())

    def _send(self) -> None:
        try:
            if callable(self._request):
                self._request = self._request()
            request_worker = worker()
        except Exception as error:        # noqa: BLE001 - the job fails; the NumPy tier stays
            self.complete({"ok": False, "error": "cannot start the compile worker: "
                           f"{type(error).__name__}: {error}"})
            return
        finally:
            self.sent.set()
        request_worker.submit(self._request, self)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the job is done (True) or `timeout` seconds passed (False)."""
        self.start()
        return self._event.wait(timeout)

    @property
    def done(self) -> bool:
        return self._event.is_set()

    def complete(self, reply: dict) -> None:
        self.reply = reply
        try:
            if not reply.get("ok"):
                raise RuntimeError(reply.get("error") or "the compile worker failed")
            self._finish(reply)
            self.ok = True
        except Exception as error:          # noqa: BLE001 - any failure keeps the NumPy tier
            self.error = f"{type(error).__name__}: {error}"
        finally:
            self._event.set()


# The worker's command line (tests point it at a worker that fails).
WORKER_COMMAND = (sys.executable, "-m", "xlanb_runtime.compile_worker")


class Worker:
    """The compile worker process and the thread reading its replies."""

    def __init__(self):
        self.pid_owner = os.getpid()
        self._lock = threading.Lock()
        self._jobs: dict[int, Job] = {}
        self._next = 0
        self.process = subprocess.Popen(
            list(WORKER_COMMAND),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=_worker_environment(), close_fds=True)
        self._reader = threading.Thread(target=self._read, name="xlanb-compile-reader",
                                        daemon=True)
        self._reader.start()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None and self.pid_owner == os.getpid()

    def submit(self, request: dict, job: Job) -> None:
        with self._lock:
            self._next += 1
            request["id"] = self._next
            self._jobs[self._next] = job
            try:
                send(self.process.stdin, request)
            except (OSError, ValueError) as error:
                del self._jobs[self._next]
                job.complete({"ok": False, "error": f"compile worker unreachable: {error}"})

    def _read(self) -> None:
        while True:
            try:
                reply = receive(self.process.stdout)
            except Exception:                  # noqa: BLE001 - a garbled pipe: worker lost
                reply = None
            if reply is None:
                break
            with self._lock:
                job = self._jobs.pop(reply["id"], None)
            if job is not None:
                job.complete(reply)            # the switch-over compile runs here
        code = self.process.wait()
        with self._lock:
            jobs, self._jobs = list(self._jobs.values()), {}
        for job in jobs:
            job.complete({"ok": False, "error": f"the compile worker exited (code {code})"})

    def stop(self, timeout: float = 1.0) -> None:
        """Close the pipe (the worker ends after its current compile), and past `timeout`
        seconds end it: exit should not wait for a long compile (a killed compile leaves
        the cache valid: see codegen/cache.py)."""
        if self.pid_owner != os.getpid():
            return
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout)


def _worker_environment() -> dict:
    """The caller's environment, plus where the runtime lives and Numba's thread count as
    this process has it (both decide the generated kernels and their cache entries)."""
    import numba
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    env["NUMBA_NUM_THREADS"] = str(numba.config.NUMBA_NUM_THREADS)
    return env


_worker: Worker | None = None
_worker_lock = threading.Lock()


def worker() -> Worker:
    """The running worker, started on first use (and again after it died)."""
    global _worker
    with _worker_lock:
        if _worker is None or not _worker.alive:
            _worker = Worker()
        return _worker


def worker_pid() -> int | None:
    return _worker.process.pid if _worker is not None and _worker.alive else None


def shutdown() -> None:
    """End the worker (at exit; tests call it too).  A later compile starts a new one."""
    global _worker
    with _worker_lock:
        if _worker is not None:
            _worker.stop()
        _worker = None


atexit.register(shutdown)


def compile_in_background(graph: Graph, target: str, options, settings,
                          switch: Callable[[dict], None]) -> Job:
    """A job compiling `graph` in the worker (sent by `Job.start()`); when the worker is
    done, `switch(reply)` runs on the reader thread (it compiles in this process from the
    now warm disk cache and swaps tiers).  A program compiled before is not tiered: the
    front end loads it in the foreground (program_cache.py)."""
    from .codegen.cache import cache_dir
    worker_flags = dataclasses.replace(settings, xla_dump_to="", xla_trace_to="",
                                       xla_dump_kernels=False, xla_parallel_compile=False)
    directory = str(cache_dir())

    def request() -> dict:
        return {"graph": flatten_graph(graph), "target": target, "options": options,
                "flags": worker_flags, "cache_dir": directory}
    return Job(request, switch)


def add_worker_phases(report: CompileReport, reply: dict) -> None:
    """The worker's compile on this report's timeline, as one `background compile` phase
    (perf_counter is the system's monotonic clock, shared by both processes)."""
    if "started" not in reply:
        return
    report.add("background compile", "compile", reply["started"], reply["seconds"],
               worker_pid=reply.get("pid"), kernels=reply.get("kernels", 0))


def warn_failed(name: str, job: Job) -> None:
    warnings.warn(f"`{name}`: the background compile failed ({job.error}); calls keep "
                  "running op by op with NumPy (the NumPy tier). jit(f, tiered=False) "
                  "compiles in the foreground and raises the error.",
                  BackgroundCompileWarning, stacklevel=5)    # at the user's call


__all__ = ["BackgroundCompileWarning", "Job", "compile_in_background", "compiled_before",
           "program_key", "remember", "shutdown", "worker_pid"]
