"""NumPy's random draws under `jit`: NumPy's own stream, call after call.

`np.random.normal(size=3)` (the legacy global state) and `rng.integers(0, 5, 4)` on a
`Generator` or `RandomState` the function is given lower to `np.random.draw` library calls
(`xlanb_runtime.ir.random_calls`): at run time the node calls NumPy's own method on the
same state, so a compiled function consumes the random state exactly as the eager one,
and `np.random.seed(0)` inside the function reseeds on every call as NumPy does.  The
draws of one trace form a chain (each reads the previous one's token), which keeps their
order; the last token is a hidden output of the program, so none is dead code.

What cannot be honoured is refused, never baked in: a generator the function reads from a
global or a closure is drawn from while tracing, which would freeze its numbers into the
program.  `trace` compares the state of every bit generator the function can reach
before and after the trace, and looks for one it can reach only after (made while tracing
and kept: `snapshot_states` / `drawn_since`); `jit` raises a named error that says to pass
the generator in as an argument.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from xlanb_runtime.ir import Node
from xlanb_runtime.ir import builder as B
from xlanb_runtime.ir.random_calls import (IN_PLACE, NAME, SETS_STATE, kind_of, probe,
                                           source_key)

from ...errors import FALLBACK_HINT, UnsupportedNumPyFunctionError
from ..capture import _holds_tracer, _stack_nested
from ..reachable import bit_generators
from ..tracer import Tracer, current_context
from . import fail
from .promote import constant_node, to_node, wrap

_STATES = (np.random.Generator, np.random.RandomState)


def draw(state: Any, method: str, args: tuple, kwargs: dict, what: str) -> Any:
    """`state.method(*args, **kwargs)` (state None: NumPy's global functions) as a chained
    draw of the current trace; returns what NumPy's call would (None for seed/shuffle)."""
    context = current_context()
    inputs: list[Node] = []
    arg_spec = tuple(_spec(a, inputs, what) for a in args)
    kwarg_spec = tuple((k, _spec(v, inputs, what)) for k, v in sorted(kwargs.items()))
    token = getattr(context, "random_token", None)
    count = getattr(context, "random_draws", 0)
    source = "global" if state is None else source_key(state)
    kind = "RandomState" if state is None else kind_of(state)
    params = dict(source=source, kind=kind, method=method, args=arg_spec,
                  kwargs=kwarg_spec, draw=count, chained=token is not None)
    try:
        node = B.library_call(NAME, ([token] if token is not None else []) + inputs, params)
    except (TypeError, ValueError, ArithmeticError) as exc:
        if any(kind == "array" for kind, _ in arg_spec + tuple(s for _, s in kwarg_spec)):
            raise fail(UnsupportedNumPyFunctionError,
                       f"NumPy refused stand-in arrays for its traced arguments ({exc})",
                       hint=f"Pass those arguments as Python values, {FALLBACK_HINT}")
        raise exc.with_traceback(None) from None      # NumPy's own error for the call
    context.random_token = B.library_result(node, 1)
    context.random_draws = count + 1
    if method in SETS_STATE:
        return None
    value = wrap(B.library_result(node, 0))
    if method in IN_PLACE:
        from . import inplace
        inplace.assign(inplace.destination(args[0], what), value, "unsafe")
        return None
    stand_in = probe(kind, method, [np.ones(n.shape, n.dtype) for n in inputs],
                     arg_spec, kwarg_spec)
    if type(stand_in) in (int, float, complex):       # `rng.normal()`: a Python float
        value.weak_type = type(stand_in)
    return value


def _spec(value: Any, inputs: list, what: str) -> tuple:
    """("array", k) for a traced or concrete array (input k), else ("value", v)."""
    if isinstance(value, (Tracer, np.ndarray)):
        inputs.append(to_node(value) if isinstance(value, Tracer) else constant_node(value))
        return ("array", len(inputs) - 1)
    if isinstance(value, (list, tuple)) and _holds_tracer(value):   # [a, b] of Tracers
        inputs.append(_stack_nested(value))
        return ("array", len(inputs) - 1)
    if isinstance(value, type) and issubclass(value, np.generic):
        return ("value", np.dtype(value).name)          # dtype=np.float32
    if isinstance(value, np.dtype):
        return ("value", value.name)
    if value is None or isinstance(value, (bool, int, float, complex, str, np.generic,
                                           list, tuple)):
        return ("value", value)
    raise fail(UnsupportedNumPyFunctionError,
               f"an argument of type {type(value).__name__} cannot be passed to a compiled "
               "random draw", hint=f"Pass numbers, tuples or arrays, {FALLBACK_HINT}")


class TracedRandomState:
    """What a traced function gets for a Generator/RandomState argument: each method call
    is a chained draw on the real object at run time.  Anything else (its bit generator,
    its state, spawn) is refused: reading it while tracing would freeze a value."""

    __slots__ = ("_state",)

    def __init__(self, state):
        self._state = state

    def __getattr__(self, name: str):
        method = getattr(self._state, name, None)
        if name.startswith("_") or not callable(method) or name in _NOT_DRAWS:
            from ..source import entry
            with entry(f"{type(self._state).__name__}.{name}"):
                raise fail(UnsupportedNumPyFunctionError,
                           f"`{name}` of a random generator argument cannot be compiled: "
                           "only its draws (normal, integers, random, ...) are",
                           hint=f"Use it outside the function, {FALLBACK_HINT}")
        what = f"{type(self._state).__name__}.{name}"

        def call(*args, **kwargs):
            from ..source import entry
            with entry(what):
                return draw(self._state, name, args, kwargs, what)
        return call

    def __repr__(self) -> str:
        return f"traced {self._state!r}"


_NOT_DRAWS = frozenset({"spawn", "get_state", "set_state", "seed", "__getstate__",
                        "__setstate__", "__reduce__", "bit_generator"})


# -- refusing draws that happened while tracing --------------------------------------------------

def snapshot_states(fn, inputs) -> list[tuple[Any, Any]]:
    """(bit generator, its state) of every bit generator `fn` called on `inputs` can
    reach (tracing/reachable.py: a walk of what it names, not of the whole heap)."""
    return [(bg, bg.state) for bg in bit_generators(fn, inputs)]


def drawn_since(snapshot, fn, inputs) -> list[Any]:
    """The bit generators whose state changed since `snapshot`, and those `fn` can reach
    now that it could not before: made while tracing and kept (an `lru_cache`d or lazily
    made generator), so NumPy would go on drawing from them on the next call, while the
    trace's draws from them would be baked in."""
    known = {id(bg) for bg, _ in snapshot}       # alive while `snapshot` is: ids stay
    return [bg for bg, state in snapshot if not _same(bg.state, state)] + \
        [bg for bg in bit_generators(fn, inputs) if id(bg) not in known]


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and \
            all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def owner_names(fn, bit_generators) -> list[str]:
    """How `fn` names the generators of these bit generators (its globals and closure)."""
    scopes = dict(getattr(fn, "__globals__", {}))
    for name, cell in zip(getattr(getattr(fn, "__code__", None), "co_freevars", ()),
                          getattr(fn, "__closure__", None) or ()):
        try:
            scopes[name] = cell.cell_contents
        except ValueError:
            continue
    wanted = {id(bg) for bg in bit_generators}
    names = []
    for name, value in scopes.items():
        bg = getattr(value, "bit_generator", None) if isinstance(value, _STATES) else None
        if isinstance(value, np.random.RandomState):
            bg = value._bit_generator
        if bg is not None and id(bg) in wanted:
            names.append(name)
    return sorted(names)


def baked_draw_error(fn, bit_generators) -> UnsupportedNumPyFunctionError:
    from ..source import user_location
    names = owner_names(fn, bit_generators)
    is_global = any(bg is getattr(np.random.mtrand._rand, "_bit_generator", None)
                    for bg in bit_generators)
    what = ", ".join(f"`{n}`" for n in names) or (
        "NumPy's global random state (a function imported from np.random before xlanb)"
        if is_global else "a NumPy random generator")
    code = getattr(fn, "__code__", None)
    where = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}" if code else None
    return UnsupportedNumPyFunctionError(
        f"{what} was drawn from while tracing `{getattr(fn, '__name__', fn)}`: it is not an "
        "argument of the function, so a compiled program would repeat those numbers on "
        "every call", op_name="random draw", location=where or user_location(),
        hint="Pass the generator in as an argument (`f(x, rng)`), call `np.random.<fn>` "
        f"through the module, {FALLBACK_HINT}")
