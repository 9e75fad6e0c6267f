"""Compiler flags: `XLANB_FLAGS` (same spelling as XLA_FLAGS), read at each compile.

    XLANB_FLAGS="--xla_allreduce_combine_threshold_bytes=1048576" python train.py

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
    xla_allreduce_combine_threshold_bytes: int = 32 * 1024 * 1024


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
            parsed = int(value) if kind in ("int", int) else value or True
        except ValueError:
            raise FlagError(f"--{name} needs an integer, got {value!r}") from None
        flags = replace(flags, **{name: parsed})
    return flags


def from_environment() -> Flags:
    return parse(os.environ.get("XLANB_FLAGS", ""))


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
