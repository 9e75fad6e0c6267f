"""Draws from NumPy's random state as `library-call` nodes: NumPy's own stream, in order.

A compiled program that calls `np.random.normal(size=3)` or `rng.integers(0, 5, 4)` must
draw new numbers on every call, exactly the numbers eager NumPy would draw.  So the draw is
not computed here: the node calls NumPy's own method at run time, on the same random state
(the legacy global `RandomState`, or the `Generator`/`RandomState` object the traced
function was given), and consumes it as NumPy would.

    %3 = library-call(%1), arg=('np.random.draw', (('args', ()), ('chained', False),
         ('draw', 0), ('kwargs', (('size', ('value', (3,))),)), ('method', 'normal'),
         ('source', 'global'))) : u8[]
    %4 = library-result(%3), arg=0 : f64[3]       the numbers
    %5 = library-result(%3), arg=1 : u8[]         the state token the next draw reads

Draws are effects, not values, so three things keep them from being treated as pure:
  * a chain: every draw but the first takes the previous draw's token (result 1) as its
    first input, so every schedule runs them in trace order;
  * `draw` in params numbers them, so `cse` never merges two equal-looking draws;
  * the front end returns the last token as a hidden output, so no draw is dead code.

`source` is "global" (NumPy's module-level functions: `np.random.seed`, `np.random.rand`)
or a key of `SOURCES`, which holds the generator objects programs draw from (a printed
module that names one only runs in the process that traced it); `kind` says what kind of
state it is, so shapes and dtypes come from a private state of that kind anywhere.  `args`/`kwargs` lay out
the call: `("array", k)` is the draw's array input k (after the token), `("value", v)` a
static value.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

NAME = "np.random.draw"
SOURCES: dict[int, Any] = {}                    # id -> a Generator or RandomState object
# Calls that take an array and return it permuted in place (NumPy returns None).
IN_PLACE = frozenset({"shuffle"})
# Calls that set the state and return nothing to use.
SETS_STATE = frozenset({"seed"})


def source_key(state: Any) -> int:
    """The key a program names `state` by (kept alive while the process runs)."""
    SOURCES[id(state)] = state
    return id(state)


def _global_function(method: str) -> Callable:
    """NumPy's module-level `np.random.<method>` (its own, not a tracing wrapper)."""
    return inspect.unwrap(getattr(np.random, method))


def kind_of(state: Any) -> str:
    """What a probe needs of a state: "RandomState", or a Generator's bit generator's
    class name ("PCG64")."""
    if isinstance(state, np.random.Generator):
        return type(state.bit_generator).__name__
    return "RandomState"


def _method(source, method: str, probe: bool, kind: str = "RandomState") -> Callable:
    """The callable a draw runs: on the real state, or (`probe`) on a private state of the
    same kind seeded arbitrarily, for shapes and dtypes without consuming the real one (so
    a compile in another process, which has no `SOURCES`, can type the node)."""
    if probe:
        if kind == "RandomState":
            return getattr(np.random.RandomState(0), method)
        bit_generator = getattr(np.random, kind, np.random.PCG64)
        return getattr(np.random.Generator(bit_generator(0)), method)
    if source == "global":
        return _global_function(method)
    state = SOURCES.get(source)
    if state is None:
        raise RuntimeError(f"np.random.draw: random state {source} is not in this process "
                           "(a printed program that draws runs only where it was traced)")
    return getattr(state, method)


def _layout(spec, arrays) -> list:
    return [arrays[v] if kind == "array" else v for kind, v in spec]


def _call(fn: Callable, method: str, arrays, args, kwargs):
    """`fn` on the laid-out arguments; (value, ) as an array (None -> a u8 zero)."""
    positional = _layout(args, arrays)
    keywords = {k: v for k, v in zip((k for k, _ in kwargs), _layout([s for _, s in kwargs],
                                                                      arrays))}
    if method in IN_PLACE:
        target = np.array(positional[0], copy=True)
        fn(target, *positional[1:], **keywords)
        return target
    value = fn(*positional, **keywords)
    return np.zeros((), np.uint8) if value is None else np.asarray(value)


def probe(kind: str, method: str, arrays, args=(), kwargs=()) -> Any:
    """What NumPy's call returns for stand-in arrays, on a private state of `kind`: its
    type (a Python float for `rng.normal()`), shape and dtype."""
    fn = _method(None, method, probe=True, kind=kind)
    with np.errstate(all="ignore"):
        if method in IN_PLACE or method in SETS_STATE:
            return _call(fn, method, arrays, args, kwargs)
        positional = _layout(args, arrays)
        keywords = dict(zip((k for k, _ in kwargs),
                            _layout([s for _, s in kwargs], arrays)))
        return fn(*positional, **keywords)


def results(inputs, source=None, method=None, args=(), kwargs=(), draw=0,
            chained=False, kind="RandomState"):
    """[(value shape, dtype), (token: (), u8)], from NumPy's own call on a private state."""
    arrays = [np.ones(i.shape, i.dtype) for i in inputs[1 if chained else 0:]]
    value = np.asarray(probe(kind, method, arrays, args, kwargs))
    if method in SETS_STATE:
        value = np.zeros((), np.uint8)
    return [(value.shape, value.dtype), ((), np.dtype(np.uint8))]


def bind(params: dict) -> Callable:
    """`(*inputs) -> (value, token)`: NumPy's call on the real state, every run."""
    source, method = params["source"], params["method"]
    args, kwargs = params.get("args", ()), params.get("kwargs", ())
    skip = 1 if params.get("chained") else 0
    token = np.zeros((), np.uint8)
    resolved: list[Callable] = []     # the state is looked up at the first run, not when
                                      # the driver is built (a compile worker builds it
                                      # without the generator objects, and never runs it)

    def draw(*inputs):
        if not resolved:
            resolved.append(_method(source, method, probe=False))
        return _call(resolved[0], method, inputs[skip:], args, kwargs), token
    return draw
