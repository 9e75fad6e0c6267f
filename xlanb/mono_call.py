"""The monomorphic call path: a jitted function called again with arrays like last time.

Most programs are called in a loop with the same kinds of arrays.  The general path
(`JitFunction.__call__`) builds a signature key of the pytree, hashes it, looks it up, checks
aliasing and unpacks the leaves, about 7 us per call on this project's machines (and up to
~17 us right after a kernel that streamed a large matrix through the caches, since each
step's code and data are then cold).  For a call made only of ndarrays, `make_guard` writes
one function that checks exactly that signature (type, shape, strides, dtype), that no two
arguments share a base, and calls the driver: one guard, as JavaScript engines' inline
caches and TorchDynamo's guards do.  Anything else (another signature, a pytree, a Python
number, a program that writes arguments back or returns several values) returns MISS and
takes the general path, which stays the reference.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

MISS = object()                 # the guard did not match: take the general path
MAX_ARGS = 16


def make_guard(compiled, args: tuple) -> Callable | None:
    """`guard(args) -> result | MISS` for calls of `compiled` with arrays like `args`, or
    None where the general path must run every call (not all ndarrays, arguments written
    back, several outputs, an over-budget program that runs eagerly)."""
    if not compiled._single or compiled.runs_eagerly or not 0 < len(args) <= MAX_ARGS:
        return None
    if any(type(a) is not np.ndarray for a in args):
        return None
    n = len(args)
    names = [f"p{i}" for i in range(n)]
    env = {"MISS": MISS, "ND": np.ndarray, "C": compiled}
    lines = ["def guard(args):",
             f"    if len(args) != {n}:",
             "        return MISS",
             f"    {', '.join(names)}{',' if n == 1 else ''} = args"]
    for i, a in enumerate(args):
        env[f"S{i}"], env[f"T{i}"], env[f"D{i}"] = a.shape, a.strides, a.dtype
        lines += [f"    if type(p{i}) is not ND or p{i}.shape != S{i} or "
                  f"p{i}.strides != T{i} or p{i}.dtype is not D{i}:",
                  "        return MISS"]
    if n > 1:                   # find_aliases: arrays sharing a base take the general path
        for i in range(n):
            lines.append(f"    o{i} = p{i} if p{i}.base is None else p{i}.base")
        owners = ", ".join(f"id(o{i})" for i in range(n))
        lines += [f"    if len({{{owners}}}) != {n}:", "        return MISS"]
    params = ", ".join(names[i] for i in compiled.traced.param_leaves)
    lines.append(f"    return C._driver({params})[0]")
    exec(compile("\n".join(lines), "<xlanb call guard>", "exec"), env)
    return env["guard"]
