"""Compiler flags: `XLANB_FLAGS` (same spelling as XLA_FLAGS), read at each compile.

    XLANB_FLAGS="--xla_dump_to=/tmp/dump --xla_dump_kernels" python train.py

Unknown flags are an error listing the known ones.  `current()` is the flag set of the
compile in progress (passes read it; they take only a graph).
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import shlex
from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Flags:
    xla_dump_to: str = ""                       # directory for per-module dumps
    xla_dump_hlo_as_text: bool = True           # IR before/after optimization (with dump_to)
    xla_dump_hlo_as_dot: bool = True            # the fusion graph as Graphviz DOT
    xla_dump_hlo_pass_re: str = ""              # IR after each pass whose name matches
    xla_dump_kernels: bool = False              # each kernel's .py, .ll and .s
    xla_trace_to: str = ""                      # Chrome trace event file (Perfetto)
    xla_debug_nans: bool = False                # fail at the first kernel making NaN/Inf
    xla_allreduce_combine_threshold_bytes: int = 32 * 1024 * 1024
    xla_max_kernels: int = 256                  # compile budget; beyond it run op by op
    xla_max_compile_seconds: float = 30.0       # ... and when kernels take longer to compile
    xla_max_ops: int = 8192                     # ... and when the traced program (its loops
                                                # rolled) has more ops than this
    xla_cpu_threads: int = 0                    # threads a kernel may split over (0: Numba's
                                                # NUMBA_NUM_THREADS; 1: no parallel kernel)
    xla_tiered: bool = True                     # a first call answers on the NumPy tier
                                                # while kernels compile in the background
    xla_cpu_parallel_min_elements: int = 0      # split a kernel from this many iterations
                                                # (0: the size measured to win here)
    xla_parallel_compile: bool = True           # a blocking compile hands kernels to the
                                                # compile worker too (parallel_compile.py)


class FlagError(ValueError):
    pass


def parse(text: str, base: Flags | None = None) -> Flags:
    """Flags from `--name=value` words (a bare `--name` sets a boolean)."""
    flags = base or Flags()
    known = {f.name: f for f in fields(Flags)}
    for word in shlex.split(text or ""):
        name, _, value = word.lstrip("-").partition("=")
        if not word.startswith("--") or name not in known:
            raise FlagError(f"unknown flag {word!r} in XLANB_FLAGS; known flags: "
                            + ", ".join(f"--{n}" for n in sorted(known)))
        kind = known[name].type
        try:
            if kind in ("int", int):
                parsed = int(value)
            elif kind in ("float", float):
                parsed = float(value)
            elif kind in ("bool", bool):
                parsed = value.lower() not in ("0", "false", "no") if value else True
            else:
                parsed = value
        except ValueError:
            raise FlagError(f"--{name} needs a number, got {value!r}") from None
        flags = replace(flags, **{name: parsed})
    return flags


_overrides: dict = {}


def update(**values) -> None:
    """Set flags from code (`xlanb.config.update(xla_dump_to="/tmp/d")`); they apply on top
    of XLANB_FLAGS to every later compile."""
    known = {f.name for f in fields(Flags)}
    for name in values:
        if name not in known:
            raise FlagError(f"unknown flag {name!r}; known flags: {', '.join(sorted(known))}")
    _overrides.update(values)


@contextlib.contextmanager
def overriding(**values):
    """`update(**values)` for the duration of a block, then the overrides as they were."""
    saved = dict(_overrides)
    update(**values)
    try:
        yield
    finally:
        _overrides.clear()
        _overrides.update(saved)


def from_environment() -> Flags:
    return replace(parse(os.environ.get("XLANB_FLAGS", "")), **_overrides)


_current: contextvars.ContextVar[Flags] = contextvars.ContextVar("xlanb_flags",
                                                                 default=Flags())


def current() -> Flags:
    return _current.get()


@contextlib.contextmanager
def active(flags: Flags):
    token = _current.set(flags)
    try:
        yield flags
    finally:
        _current.reset(token)


_tracing = False


def start_tracing_runs() -> None:
    """Called by a compile with --xla_trace_to: collectives record run-time events."""
    global _tracing
    _tracing = True


def current_tracing() -> bool:
    return _tracing
