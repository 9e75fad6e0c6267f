"""Arrays and numbers a function reads from globals and closures: inputs of every call.

NumPy code reads module-level arrays and settings all the time (`W` updated in place by a
training loop, `lr = 0.1` edited in a notebook cell).  A trace that baked their values in
as constants would return stale results, silently, once they change; JAX has that caveat,
but JAX's arrays cannot change in place, and NumPy's do.  So `jit` treats them as extra
arguments:

- `scan(fn)` finds, once, the *sources*: the global names `fn` (its nested code, and the
  Python functions it calls, transitively to `MAX_DEPTH`) reads, and its closure cells,
  that hold an array or a number (ndarray, NumPy scalar, Python int/float/complex/bool,
  str), or a NumPy random generator (its draws then run on it at every call).  Other values (modules, functions, lists, objects) are not sources: an array
  reached through them (`model.W`, `CACHE["w"]`) is still read when traced.
- each call fetches the sources' current values and passes them as one more argument,
  so they take part in the signature like any argument: arrays by shape, dtype and
  layout (a rebound array of the same shape needs no new trace), numbers as weakly typed
  traced scalars (static where used as a size), strings and bools by value;
- while tracing, `bound()` points each source at its traced value, so every read (`x @ W`,
  `W[0]`, `W.sum()`, helpers' reads) is traced and every write (`W[0] = v`, `W += g`)
  is written back into the caller's array after the call, as NumPy does.  A function
  that rebinds a global or a closure variable is refused with a TracerLeakError (it
  would keep a traced value): a compiled program has no Python side effects to repeat;
  under `must_compile=False` such a function runs with NumPy.
"""
from __future__ import annotations

import dataclasses
import types
from typing import Any, Sequence

import numpy as np

from .source import _is_internal

MAX_DEPTH = 4
# Generators too: a global `rng` is passed in, so its draws are NumPy's own at run time
# (tracing/lowering/random_draws.py), keyed by the generator object itself.
_VALUE_TYPES = (np.ndarray, np.generic, int, float, complex, bool, str,
                np.random.Generator, np.random.RandomState)


@dataclasses.dataclass(frozen=True, eq=False)
class Source:
    """A global name in a module's namespace, or a closure cell (compared and hashed by
    identity: a namespace dict has no hash)."""
    name: str
    namespace: dict | None = None
    cell: types.CellType | None = None

    def fetch(self) -> Any:
        if self.cell is not None:
            return self.cell.cell_contents
        return self.namespace[self.name]

    def store(self, value: Any) -> None:
        if self.cell is not None:
            self.cell.cell_contents = value
        else:
            self.namespace[self.name] = value

    def describe(self) -> str:
        return f"closure variable `{self.name}`" if self.cell is not None else \
            f"global `{self.name}`"


def scan(fn) -> tuple[Source, ...]:
    """The sources `fn` reads, in a fixed order (empty for what is not a Python function)."""
    found: dict[tuple, Source] = {}
    _visit(getattr(fn, "__func__", fn), 0, found, set())
    return tuple(found.values())


def _visit(fn, depth: int, found: dict, seen: set) -> None:
    if not isinstance(fn, types.FunctionType) or id(fn) in seen or depth > MAX_DEPTH:
        return
    seen.add(id(fn))
    # xlanb's own wrappers (`grad(loss)`) and NumPy's functions: only the user's
    # functions they hold are visited; their own globals and settings are not sources
    users = not _is_internal(fn.__code__.co_filename)
    namespace = fn.__globals__
    for name in code_names(fn.__code__) if users else ():
        if name in namespace:
            _consider(namespace[name], Source(name, namespace=namespace), depth, found, seen)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:                  # an empty cell: defined later in the scope
            continue
        _consider(value, Source(name, cell=cell), depth, found, seen, users)


def _consider(value, source: Source, depth: int, found: dict, seen: set,
              users: bool = True) -> None:
    if isinstance(value, _VALUE_TYPES):
        if not users:
            return
        key = (id(source.cell),) if source.cell is not None else \
            (id(source.namespace), source.name)
        found.setdefault(key, source)
    else:
        inner = getattr(value, "fn", None)  # a jitted helper: its Python function
        _visit(value if isinstance(value, types.FunctionType) else inner, depth + 1,
               found, seen)


def code_names(code: types.CodeType) -> list[str]:
    """The global and attribute names a function's code (and its nested code) uses."""
    names, stack = [], [code]
    while stack:
        current = stack.pop()
        names.extend(current.co_names)
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return list(dict.fromkeys(names))


def fetch(sources: Sequence[Source]) -> tuple:
    return tuple(source.fetch() for source in sources)


class bound:
    """While tracing: each source holds its traced value; afterwards the caller's values
    again.  A source the function rebound is a named error (after restoring it)."""

    def __init__(self, sources: Sequence[Source], traced: Sequence[Any]):
        self.sources, self.traced = sources, traced
        self.originals: tuple = ()

    def __enter__(self):
        self.originals = fetch(self.sources)
        for source, value in zip(self.sources, self.traced):
            source.store(value)
        return self

    def __exit__(self, kind, exc, tb):
        rebound = [source for source, value in zip(self.sources, self.traced)
                   if source.fetch() is not value]
        for source, value in zip(self.sources, self.originals):
            source.store(value)
        if rebound and kind is None:
            from ..errors import TracerLeakError
            names = ", ".join(source.describe() for source in rebound)
            raise TracerLeakError(
                f"the function assigns {names}: a compiled program cannot repeat a Python "
                "side effect on each call",
                hint="return the new value and assign it outside the compiled function")
        return False


def with_free_variables(fn, sources: Sequence[Source]):
    """`fn` taking its free variables' values as one more positional argument (a tuple)."""
    import functools

    @functools.wraps(fn)
    def traced_with_free_variables(*args, **kwargs):
        *user_args, values = args
        with bound(sources, values):
            return fn(*user_args, **kwargs)

    return traced_with_free_variables
