"""NumPy functions that run as library calls inside the compiled program.

A solver, a factorization, a sort or an FFT has no fusible IR here (scans do: scans.py
lowers them to `scan` ops, and keeps a library call only where no IR form exists): it lowers to
one `library-call` node (`xlanb_runtime.ir.library` says what each name runs and its
shape/dtype rule), which the program calls between its fused kernels, with its inputs and
outputs in the program's buffers.  Unlike a fallback under `must_compile=False` it does
not split the program, and it runs NumPy's own function, so results are NumPy's exactly.

`@implements_library(np.sort, ...)` registers a rule as `@implements` does and records the
function in `LIBRARY_FUNCTIONS`, which the support table (`python -m xlanb support`) reads
to report it as "library call".  `call(name, inputs, **params)` builds the node(s) and
returns Tracers.  `data_dependent(func, detail)` marks a function whose result's shape or
dtype depends on the values (np.bincount, np.linalg.eig): `jit` raises
DataDependentShapeError, `must_compile=False` runs it with NumPy.

The rules live in sorting.py (sorts, selection, statistics, histograms), scans.py (float16
and complex max/min scans), decompositions.py (np.linalg) and fft.py.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from xlanb_runtime.ir import Node
from xlanb_runtime.ir import builder as B

from ..tracer import Tracer, current_context
from . import DATA_DEPENDENT, DATA_DEPENDENT_DETAIL, implements
from .promote import constant_node, normalize_axis, to_node, wrap

LIBRARY_FUNCTIONS: set[Callable] = set()


def implements_library(*funcs: Callable | None):
    """`@implements(*funcs)`, and the functions are reported as library calls."""
    def register(rule):
        implements(*funcs)(rule)
        LIBRARY_FUNCTIONS.update(f for f in funcs if f is not None)
        return rule
    return register


def node_of(x: Any):
    """A Tracer's node, or a constant of `np.asarray(x)`: what NumPy's function would
    make of the argument itself (a Python float is float64 here, as NumPy converts it)."""
    if isinstance(x, (Tracer, Node)):
        return to_node(x)
    return constant_node(np.asarray(x))


def call(name: str, inputs: Sequence[Any], **params) -> Any:
    """`name` on `inputs` (Tracers, arrays or scalars): a Tracer for a function with one
    result, a tuple of Tracers for several."""
    try:
        node = B.library_call(name, [node_of(x) for x in inputs], params)
    except (TypeError, ValueError, IndexError, ArithmeticError) as exc:
        raise exc.with_traceback(None) from None     # NumPy's own error for the arguments
    results = B.library_results(node)
    if results is None:
        return wrap(node)
    return tuple(wrap(B.library_result(node, k)) for k in range(len(results)))


def check_within(node: Node, lower: int | None, upper: int | None, error: str,
                 message: str, upper_message: str | None = None) -> None:
    """NumPy's `error` (an IndexError or ValueError with `message`, the offending value
    as {value}; `upper_message` where it is above `upper`, if given) where an integer
    node's values leave [lower, upper] (None: unbounded), from
    a run-time check (`xlanb.check_range`, run before any kernel writes an argument,
    fusion.py).  None where its values are within by construction (an argmax, an iota, a
    clip: ir/value_range.py), or were checked already."""
    from xlanb_runtime.ir.value_range import value_range
    bounds = value_range(node)
    below = lower is not None and (bounds is None or bounds[0] < lower)
    above = upper is not None and (bounds is None or bounds[1] > upper)
    context = current_context()
    key = (id(node), lower, upper, message)
    if node.size == 0 or not (below or above) or key in context.checked_ranges:
        return
    context.checked_ranges.add(key)
    messages = {"message": message if below or not upper_message else upper_message}
    if below and above and upper_message:
        messages["upper_message"] = upper_message
    context.checks.append(to_node(call("xlanb.check_range", [node],
                                       lower=lower if below else None,
                                       upper=upper if above else None, error=error,
                                       where=B.current_location() or "?", **messages)))


def numpy_check(fn: Callable, *args, **kwargs) -> None:
    """Run NumPy's `fn` on stand-in arguments for its own error (a bad `kind`, a dtype
    LAPACK has no routine for), raised here: xlanb's deliberate error, not a failure."""
    try:
        with np.errstate(all="ignore"):
            fn(*args, **kwargs)
    except (TypeError, ValueError, IndexError, ArithmeticError) as exc:
        raise exc.with_traceback(None) from None


def axis_param(axis, ndim: int):
    """A static axis (int, tuple of ints or None), normalized as NumPy does."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        from .promote import normalize_axes
        return normalize_axes(tuple(axis), ndim)
    return normalize_axis(axis, ndim)


def static_param(value, what: str):
    """A parameter that must be known when tracing (kth, bins, n): never a traced value."""
    if isinstance(value, Tracer) or (isinstance(value, (tuple, list)) and
                                     any(isinstance(v, Tracer) for v in value)):
        from . import unsupported_option
        raise unsupported_option(what, what, f"pass `{what}` as a Python value (an "
                                 "argument it comes from can be static: "
                                 "`xlanb.jit(f, static_argnums=...)`), or run with "
                                 "`xlanb.jit(f, must_compile=False)`")
    if isinstance(value, np.ndarray):
        value = value.tolist()
    return value


def with_out(out, result, what: str):
    """`out=`: the result written into a traced array, which is returned (as NumPy)."""
    if out is None:
        return result
    from . import inplace
    return inplace.assign(inplace.destination(out, what), result, "unsafe")


def data_dependent(func: Callable, detail: str | None = None) -> None:
    """`func`'s result has a shape (or dtype) that depends on the values, always."""
    DATA_DEPENDENT.add(func)
    if detail:
        DATA_DEPENDENT_DETAIL[func] = detail


_SOMETIMES: dict[Callable, Callable] = {}


def refuse_data_dependent(func: Callable, args: tuple, kwargs: dict, what: str,
                          detail: str | None = None):
    """A call of `func` whose result's shape depends on the values with these arguments
    (`np.histogram(x, bins='auto')`): `jit` raises DataDependentShapeError naming `what`,
    `must_compile=False` runs it with NumPy."""
    from . import DATA_DEPENDENT_HINTS, unsupported
    stand_in = _SOMETIMES.get(func)
    if stand_in is None:                     # a function of its own in DATA_DEPENDENT
        def stand_in(*a, **k):
            return func(*a, **k)
        _SOMETIMES[func] = stand_in
        data_dependent(stand_in, detail)
        if func in DATA_DEPENDENT_HINTS:
            DATA_DEPENDENT_HINTS[stand_in] = DATA_DEPENDENT_HINTS[func]
    return unsupported(stand_in, args, kwargs, what)


def ufunc_call(ufunc: np.ufunc, inputs: tuple, dtype=None):
    """A ufunc without a fused lowering (np.cbrt, np.gcd, np.frexp, np.expm1 on complex):
    NumPy's own loop as a library call.  The loop is the one NumPy picks (NEP 50 weak
    scalars included, `ufuncs._resolve`), passed as `signature=` so NumPy runs exactly it.
    Generalized ufuncs (core dimensions: np.matvec) and loops on no number (np.isnat) go
    to the context's hook."""
    from . import unsupported
    from .array_functions import GUFUNCS
    from .promote import mark_weak, operands
    from .ufuncs import _resolve
    if ufunc in GUFUNCS and dtype is None:           # matvec, vecmat, vecdot: contractions
        _check_core_dimensions(ufunc, inputs)
        return GUFUNCS[ufunc](*inputs)
    if ufunc.signature is not None or not all(
            isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex))
            for x in inputs):
        return unsupported(ufunc, inputs, {} if dtype is None else {"dtype": dtype})
    loop = [np.dtype(t) for t in _resolve(ufunc, inputs, dtype)]
    if any(t.kind not in "biufc" for t in loop):
        return unsupported(ufunc, inputs, {} if dtype is None else {"dtype": dtype})
    nodes, _ = operands(inputs, loop[:ufunc.nin])
    result = call("np.ufunc.__call__", nodes, ufunc=ufunc.__name__,
                  signature=tuple(t.name for t in loop))
    return mark_weak(result, inputs) if ufunc.nout == 1 else result


def core_dimensions(ufunc: np.ufunc) -> list[list[str]]:
    """Each input's core dimension names from a generalized ufunc's signature:
    np.vecmat's "(n),(n,m)->(m)" gives [["n"], ["n", "m"]] ("?" marks an optional one)."""
    cores = ufunc.signature.split("->")[0].replace(" ", "")[1:-1].split("),(")
    return [[d for d in core.split(",") if d] for core in cores]


def _check_core_dimensions(ufunc: np.ufunc, inputs: tuple) -> None:
    """NumPy's ValueError for an operand with fewer dimensions than the gufunc's core
    signature needs (np.vecmat on two vectors), before the contraction indexes it."""
    for position, (x, core) in enumerate(zip(inputs, core_dimensions(ufunc))):
        needed = len([d for d in core if not d.endswith("?")])
        if np.ndim(x) < needed:
            raise ValueError(f"{ufunc.__name__}: Input operand {position} does not have "
                             f"enough dimensions (has {np.ndim(x)}, gufunc core with "
                             f"signature {ufunc.signature} requires {needed})")


from . import (sorting, scans, decompositions, fft, numerics, compositions,  # noqa: E402,F401,I001
               array_functions, polynomials)
