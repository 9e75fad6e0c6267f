"""Whole programs in the disk cache: which programs compiled before, and their drivers.

A new process with a warm kernel cache used to redo all of a compile but Numba's part: the
pass pipeline, fusion, the kernels' and the driver's source (W5: 0.3 s of a 0.55 s warm
first call).  A program's record keeps what its driver needs instead: the driver source,
its arena layout and what each name it calls is bound to (a kernel, by canonical source
and signature; a constant's value), and each kernel's compiled overload (Numba's cache
data, codegen/program_kernels.py).  Loading one costs one file read, the kernels' machine
code loaded as one library, and an `exec` (a record made on another CPU, by Numba's
`magic_tuple`, loads its kernels from the kernel cache instead):

    $XLANB_CACHE_DIR/kernels/<versions>/programs/<key>     written by every CPU compile

`key` (program_key) hashes the graph, target, options, the flags that reach the kernels,
Numba's thread count and a stamp of the runtime's own source files: a changed compiler
never replays an old driver.  (Not in it: the measured thread calibration, which only
decides whether big kernels run serial or parallel; a record keeps its compile's choice.
Code that patches the compiler at run time, as a test may, needs a cache of its own.)  A file may be empty (a marker: compiled before, no record)
or a record: a header, the SHA-256 of the payload, the payload (a pickle).  A record that
is truncated, corrupt, of another format or unreadable is ignored and the program compiles
from its graph (its kernels still come from the kernel cache, checked there), then the
record is written again.  Programs whose drivers bind anything else (library calls, loops,
all-reduces, NaN checks, trace hooks) get a marker only.

The executable a record makes (`CachedExecutable`) runs at once; its optimized graph,
plan, kernels and report contents come from compiling the graph again (loads only) the
first time something asks for them (their phases join the timeline when they ran).
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import os
import pickle
import threading
import weakref
from pathlib import Path
from typing import Callable

import numpy as np

from .codegen import cache, program_kernels
from .executable import Driver, Executable, InlineDriver, bound_check, make_driver
from .ir import Graph

_HEADER = b"xlanb-program 4\n"
# flags that change what a compile writes beside the kernels, or how it gets them, not the
# kernels or the driver themselves
_OUTPUT_ONLY_FLAGS = ("xla_dump_to", "xla_dump_hlo_as_text", "xla_dump_hlo_as_dot",
                      "xla_dump_hlo_pass_re", "xla_dump_kernels", "xla_trace_to",
                      "xla_tiered", "xla_parallel_compile")
_PLAIN_NAMES = ("np", "_empty", "_check_nans", "_scratch")   # bound the same in every driver


# -- keys ----------------------------------------------------------------------------------
def program_key(graph: Graph, target: str, options, settings) -> str:
    """What decides a program's kernels and driver: its IR, target, options, the flags that
    reach the kernels, Numba's thread count and the runtime's source files."""
    import numba
    kept = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)
            if f.name not in _OUTPUT_ONLY_FLAGS}
    parts = (target, repr(options), repr(sorted(kept.items())),
             str(numba.config.NUMBA_NUM_THREADS), runtime_stamp())
    known = _keys.get(graph)                # a first call asks up to three times
    if known is not None and known[0] == parts:
        return known[1]
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() + b"\0")
    _hash_graph(graph, digest)
    key = digest.hexdigest()[:32]
    _keys[graph] = (parts, key)
    return key


_keys: "weakref.WeakKeyDictionary[Graph, tuple]" = weakref.WeakKeyDictionary()


def _hash_graph(graph: Graph, digest) -> None:
    """Each node's op, operands (by position), type and arg: a few microseconds a node,
    where printing the graph costs ten times more (this runs on every first call).  An
    arg whose repr names an address (an object without a repr of its value) would say
    nothing about its contents: the key is then unique to this call."""
    from .ir.graph import arg_key
    index = {id(n): i for i, n in enumerate(graph.nodes)}
    for node in graph.nodes:
        key = arg_key(node.arg)
        if isinstance(key, tuple) and key and key[0] == "array":
            digest.update(key[3])
            key = key[:3]
        text = repr((node.op.value, [index[id(i)] for i in node.inputs], node.shape,
                     node.dtype.str, key))
        if " at 0x" in text:
            digest.update(os.urandom(16))
        digest.update(text.encode())
    digest.update(repr(([index[id(p)] for p in graph.params],
                        [index[id(o)] for o in graph.outputs])).encode())


_stamp: list[str] = []


def runtime_stamp() -> str:
    """The runtime's source files by name, size and modification time (once a process):
    an edited compiler makes other keys, without hashing its sources on every start."""
    if not _stamp:
        digest = hashlib.sha256()
        for name, info in sorted(_source_files(str(Path(__file__).resolve().parent))):
            digest.update(f"{name}:{info.st_size}:{info.st_mtime_ns}\n".encode())
        _stamp.append(digest.hexdigest()[:16])
    return _stamp[0]


def _source_files(root: str, prefix: str = "") -> list[tuple[str, os.stat_result]]:
    """(relative path, stat) of each `.py` file under `root`: `os.scandir` reads a
    directory's entries with their types (pathlib's rglob took 4.5 ms of a first call)."""
    found = []
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                found += _source_files(entry.path, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".py"):
                found.append((prefix + entry.name, entry.stat()))
    return found


def _path(key: str) -> Path:
    return cache.kernel_dir() / "programs" / key


def compiled_before(key: str) -> bool:
    return _path(key).exists()


def remember(key: str) -> None:
    """Mark a program compiled (its kernels are in the disk cache); a record stays."""
    try:
        path = _path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:                # a read-only cache: the next process starts tiered
        pass


# -- records -------------------------------------------------------------------------------
def store(key: str, driver: Driver, kernels: dict[int, tuple[str, tuple]],
          views: frozenset[int] = frozenset()) -> None:
    """Write `driver`'s record (`kernels`: id of each bound dispatcher -> (canonical source,
    signature); `views`: the outputs it returns as views, `Executable.returned_views`); a
    driver binding anything else gets a marker only."""
    bindings, overloads, kept = {}, {}, set()
    for name, value in driver.env.items():
        if name in _PLAIN_NAMES:
            continue
        if id(value) in kernels:
            bindings[name] = ("kernel",) + kernels[id(value)]
            if kernels[id(value)] in kept:        # a kernel bound to two names: once
                continue
            kept.add(kernels[id(value)])
            state = program_kernels.serialize(value, kernels[id(value)][1])
            if state is not None:
                overloads[name] = state
        elif isinstance(value, (np.ndarray, np.generic)):
            bindings[name] = ("value", value)
        elif getattr(value, "check_call", None) is not None:    # a run-time check
            bindings[name] = ("check",) + value.check_call
        else:
            remember(key)
            return
    if "_check_nans(" in driver.source:
        remember(key)
        return
    inline = driver.inline
    parts = None if inline is None else (inline.params, inline.prologue, inline.body,
                                         inline.outs)
    payload = pickle.dumps({"source": driver.source, "bindings": bindings,
                            "block_bytes": driver.block_bytes, "views": driver.views,
                            "inline": parts, "overloads": overloads,
                            "returned_views": tuple(sorted(views)),
                            "host": program_kernels.host()}, protocol=pickle.HIGHEST_PROTOCOL)
    cache.write_record(_path(key), _HEADER, payload)


def load(key: str) -> dict | None:
    """The record stored under `key`, or None (none, a marker, or not a valid record)."""
    payload = cache.read_record(_path(key), _HEADER)
    if payload is None:
        return None
    try:
        record = pickle.loads(payload)
        record["source"], record["bindings"], record["block_bytes"], record["views"], \
            record["returned_views"]
    except Exception:                  # noqa: BLE001 - any unreadable record is ignored
        return None
    return record


def executable_from(record: dict, graph: Graph, report, load_kernel: Callable,
                    materialize: Callable[[], Executable]) -> "CachedExecutable":
    """The executable of a record: its kernels from the overloads it keeps, else each from
    the kernel cache (`load_kernel(source, signature)`), the driver from its source."""
    env: dict = {"np": np, "_empty": inspect.unwrap(np.empty)}
    kernels = _kernels(record, load_kernel, graph.name)
    for name, binding in record["bindings"].items():
        env[name] = kernels[name] if binding[0] == "kernel" else \
            bound_check(*binding[1:]) if binding[0] == "check" else binding[1]
    run = make_driver(graph.name, record["source"], env, record["block_bytes"],
                      record["views"])
    executable = CachedExecutable(graph, run, record["source"], report, materialize)
    executable.returned_views = frozenset(record["returned_views"])
    parts = record.get("inline")
    if parts is not None:        # the call guard runs the kernel calls itself (mono_call)
        executable.inline = InlineDriver(*parts, env)
    return executable


def _kernels(record: dict, load_kernel: Callable, program: str) -> dict:
    """The kernel bound to each name of a record: rebuilt from the overloads it keeps
    (codegen/program_kernels.py; names bound to one kernel share it), else each loaded
    from the kernel cache."""
    distinct: dict[tuple, list[str]] = {}
    for name, binding in record["bindings"].items():
        if binding[0] == "kernel":
            distinct.setdefault((binding[1], repr(binding[2])), []).append(name)
    # object code for another CPU (a copied cache) is never loaded: the kernel cache's
    # entries, which Numba keys by CPU, serve instead
    overloads = record.get("overloads", {}) if record.get("host") == program_kernels.host() \
        else {}
    fallbacks = {key: _fallback(load_kernel, *record["bindings"][names[0]][1:])
                 for key, names in distinct.items()}
    recorded = [None] * len(distinct)
    if all(names[0] in overloads for names in distinct.values()):
        recorded = program_kernels.load_all(
            [(overloads[names[0]], fallbacks[key]) for key, names in distinct.items()],
            f"xlanb_program_{program}")
    kernels = {}
    for (key, names), kernel in zip(distinct.items(), recorded):
        kernel = kernel if kernel is not None else fallbacks[key]()
        kernels.update((name, kernel) for name in names)
    return kernels


def _fallback(load_kernel: Callable, source: str, signature: tuple) -> Callable:
    return lambda: load_kernel(source, signature)


class CachedExecutable(Executable):
    """A program loaded from its record: it runs at once; the optimized graph, plan,
    kernels and buffers, and the report's contents beyond its timeline, come from
    compiling the graph again (from warm caches) the first time something reads them."""

    def __init__(self, graph: Graph, driver: Callable, driver_source: str, report,
                 materialize: Callable[[], Executable]):
        self.graph, self.driver, self.driver_source = graph, driver, driver_source
        self._timeline, self.over_budget = report, ""
        self._materialize, self._full = materialize, None
        self._lock = threading.Lock()
        self.inline: InlineDriver | None = None

    def full(self) -> Executable:
        with self._lock:
            if self._full is None:
                self._full = full = self._materialize()
                report, shift = self._timeline, full.report.origin - self._timeline.origin
                for name in ("kernels", "memory", "cost", "graph", "ir"):
                    setattr(report, name, getattr(full.report, name))
                # the passes, fusion and codegen, on the timeline when they ran
                report.phases += [dataclasses.replace(p, start=p.start + shift)
                                  for p in full.report.phases]
        return self._full

    optimized = property(lambda self: self.full().optimized)
    plan = property(lambda self: self.full().plan)
    kernels = property(lambda self: self.full().kernels)
    buffers = property(lambda self: self.full().buffers)

    @property
    def timeline(self):
        return self._timeline

    @property
    def report(self):
        self.full()
        return self._timeline
