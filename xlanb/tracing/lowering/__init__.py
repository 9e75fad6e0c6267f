"""Lowering rules: NumPy functions, ufuncs, methods and indexing on Tracers -> IR nodes.

`FUNCTIONS` maps a NumPy function to its rule; a rule takes the NumPy signature and returns
Tracers.  Register one with `@implements(np.sum, np.add.reduce, ...)` in the module of its
kind (ufuncs, reductions, shape_ops, linalg, indexing, creation).  The dispatchers below wrap
each call in `source.entry(what)` so nodes carry the user's line and errors name the call,
and turn IR shape-rule violations into `ShapeMismatchError`.  Functions without a rule go
to the context's `call_unsupported` hook.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from xlanb_runtime.ir.builder import IRDTypeError, IRShapeError

from ...errors import (FALLBACK_HINT, CompileError, DataDependentShapeError, DTypeError,
                       UnsupportedNumPyFunctionError)
from ..source import current_op, entry, user_location
from ..tracer import Tracer, current_context

FUNCTIONS: dict[Callable, Callable] = {}


def implements(*funcs: Callable):
    """Register the decorated rule for each NumPy function in `funcs` (None: absent here)."""
    def register(rule):
        for func in funcs:
            if func is not None:
                FUNCTIONS[func] = rule
        return rule
    return register


def fail(cls: type[CompileError], detail: str, hint: str | None = None) -> CompileError:
    """An error naming the operation being lowered and the user's line (raise it)."""
    what, loc = current_op()
    return cls(detail, op_name=what, location=loc or user_location(), hint=hint)


class translate_errors:
    """`with translate_errors():` the IR builder's shape and dtype errors become the
    user's errors.  A class: entered once per traced operation."""
    __slots__ = ()

    def __enter__(self) -> None:
        pass

    def __exit__(self, kind, exc, tb) -> None:
        if kind is None:
            return
        if issubclass(kind, IRDTypeError):
            raise fail(DTypeError, str(exc), hint="Take real values first (np.real, "
                       "np.abs), " + FALLBACK_HINT) from None
        if issubclass(kind, IRShapeError):
            from ...errors import ShapeMismatchError
            raise fail(ShapeMismatchError, exc.detail) from None


def public_name(func: Any) -> str:
    """`np.sum`, `np.linalg.norm`, `np.add.accumulate`: how the user spelled it."""
    if isinstance(func, np.ufunc):
        return f"np.{func.__name__}"
    self = getattr(func, "__self__", None)
    if isinstance(self, np.ufunc):
        return f"np.{self.__name__}.{func.__name__}"
    module = getattr(func, "__module__", None) or ""
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    if module == "numpy" or module.startswith("numpy."):
        module = "np" + module[len("numpy"):]
        module = module.replace("._core", "").replace(".lib", "")
        return f"{module}.{name}"
    return f"{module}.{name}" if module else name


DATA_DEPENDENT = {np.unique, np.nonzero, np.argwhere, np.flatnonzero, np.extract,
                  np.compress, operator.getitem}
DATA_DEPENDENT_DETAIL: dict[Callable, str] = {}     # a reason of its own (np.linalg.eig)
_DATA_DEPENDENT_HINT = ("Keep shapes static with a mask, e.g. `np.where(mask, x, 0)`, "
                        "or `xlanb.jit(f, must_compile=False)` to run it with NumPy")
_MASK = ("Use the mask itself: `np.where(mask, x, 0)` keeps the shape, `x[mask].sum()` (or "
         ".mean(), .max()) and `np.count_nonzero(mask)` reduce it")
_SET = "`np.isin(x, y)` gives a mask of x's shape"
# What to use instead, per function (the error's hint and the support table's note); each
# ends with `must_compile=False`, which runs the call with NumPy.
DATA_DEPENDENT_HINTS: dict[Callable, str] = {
    np.nonzero: _MASK, np.argwhere: _MASK, np.flatnonzero: _MASK, np.extract: _MASK,
    np.compress: _MASK, np.where: _MASK, np.ndarray.nonzero: _MASK,
    np.unique: "Keep a mask of static shape: `s = np.sort(x)`, `first = np.concatenate(("
               "[True], s[1:] != s[:-1]))`, then `np.where(first, s, 0)` or `first.sum()`",
    np.bincount: "Pass `minlength=` above every value (the counts' length under jit), or "
                 "count into a length known when tracing: `(x[:, None] == np.arange(n))"
                 ".sum(0)`",
    np.intersect1d: _SET, np.union1d: _SET, np.setdiff1d: _SET, np.setxor1d: _SET,
    np.trim_zeros: "Slice with bounds known when tracing, or keep the zeros",
    np.roots: "Evaluate the polynomial with `np.polyval` where that is what you need",
    np.linalg.eig: "Use `np.linalg.eigh` for a symmetric or Hermitian matrix (a fixed dtype)",
    np.linalg.eigvals: "Use `np.linalg.eigvalsh` for a symmetric or Hermitian matrix",
    np.real_if_close: "Use `np.real(x)` where the values are known to be real",
}
for _name in ("unique_all", "unique_counts", "unique_inverse", "unique_values"):
    if hasattr(np, _name):
        DATA_DEPENDENT_HINTS[getattr(np, _name)] = DATA_DEPENDENT_HINTS[np.unique]


# Functions with no lowering by design, other than data-dependent shapes: (what happens,
# what to use instead); the error's text and the support table's note.
UNSUPPORTED_REASONS: dict[Callable, tuple[str, str]] = {}


def data_dependent_hint(func: Callable) -> str:
    """What to use instead of `func` under jit, ending with the must_compile=False way."""
    specific = DATA_DEPENDENT_HINTS.get(func)
    if specific is None:
        return _DATA_DEPENDENT_HINT
    return f"{specific}, or `xlanb.jit(f, must_compile=False)` to run it with NumPy"


def is_data_dependent(func: Callable, args: tuple) -> bool:
    return func in DATA_DEPENDENT or (func is np.where and len(args) == 1)


def unsupported_error(func: Callable, args: tuple, what: str) -> CompileError:
    """The default `call_unsupported` error for `func` (named `what` to the user)."""
    op, loc = current_op()
    loc = loc or user_location()
    if is_data_dependent(func, args):
        return DataDependentShapeError(
            DATA_DEPENDENT_DETAIL.get(func, "the output shape depends on the input values, "
                                      "so the shape is not inferable at compile time"),
            op_name=what, location=loc, hint=data_dependent_hint(func))
    if func is getattr(np.random.default_rng, "__wrapped__", np.random.default_rng):
        return UnsupportedNumPyFunctionError(
            "a generator made without a seed inside the function draws different numbers "
            "on every call, but a compiled program would repeat the first call's",
            op_name=what, location=loc,
            hint="Make the generator outside and pass it in as an argument, give it a "
            f"seed, {FALLBACK_HINT}")
    if is_random_draw(func):
        return UnsupportedNumPyFunctionError(
            "NumPy's random state draws new numbers on every call, but a compiled program "
            "would repeat the first call's numbers", op_name=what, location=loc,
            hint="Use `xlanb.random` with a key argument, pass the random array in, "
            f"{FALLBACK_HINT}")
    detail, hint = UNSUPPORTED_REASONS.get(
        func, ("xlanb has no compiled lowering for this function",
               "Rewrite it with supported NumPy functions"))
    return UnsupportedNumPyFunctionError(detail, op_name=what, location=loc,
                                         hint=f"{hint}, {FALLBACK_HINT}")


def is_random_draw(func: Callable) -> bool:
    """A draw from NumPy's global random state (np.random.rand, ...) or a generator."""
    owner = getattr(func, "__self__", None)
    return isinstance(owner, (np.random.RandomState, np.random.Generator))


def unsupported(func: Callable, args: tuple, kwargs: dict, what: str | None = None) -> Any:
    """Hand `func(*args, **kwargs)` to the context's hook (default: raise)."""
    context = current_context()
    if context is None:
        context = next((a.context for a in args if isinstance(a, Tracer)), None)
    what = what or public_name(func)
    if context is None:
        raise unsupported_error(func, args, what)
    return context.call_unsupported(func, args, kwargs, what)


def unsupported_option(what: str, option: str, hint: str) -> CompileError:
    return fail(UnsupportedNumPyFunctionError, f"the `{option}` argument is not supported "
                f"on traced arrays when compiling", hint=hint[:1].upper() + hint[1:])


_HANDLED = (Tracer, np.ndarray, np.generic)   # read once (np.ndarray leaves np's dict in a trace)


def _handles(types) -> bool:
    return all(issubclass(t, _HANDLED) for t in types)


# Functions whose 0-d results NumPy returns as scalars (np.float64, np.int64, np.bool_),
# as it does for ufuncs: reductions, statistics, products, and elementwise functions written
# in Python over ufuncs.  Any other function's 0-d result stays a 0-d array (np.where,
# np.copy, np.asarray, x.reshape(()) are arrays in NumPy too).
SCALAR_RESULTS = frozenset(getattr(np, name) for name in (
    "sum", "prod", "mean", "std", "var", "max", "min", "amax", "amin", "ptp", "argmax",
    "argmin", "all", "any", "nansum", "nanprod", "nanmean", "nanstd", "nanvar", "nanmax",
    "nanmin", "nanargmax", "nanargmin", "median", "nanmedian", "percentile",
    "nanpercentile", "quantile", "nanquantile", "average", "count_nonzero", "dot", "vdot",
    "inner", "trace", "einsum", "round", "around", "clip", "interp", "polyval",
    "trapezoid", "sinc", "nan_to_num", "angle", "take", "searchsorted", "digitize",
    "isclose", "fix") if hasattr(np, name)) | frozenset(
    (np.linalg.norm, np.linalg.det, np.linalg.slogdet, np.linalg.cond,
     np.linalg.matrix_rank, np.linalg.lstsq))


def mark_numpy_scalars(result, inputs) -> Any:
    """Mark the 0-d traced results NumPy gives as scalars rather than 0-d arrays; the
    call's outputs are returned the same way (`Traced.scalar_outputs`)."""
    for value in (result if isinstance(result, tuple) else (result,)):
        if isinstance(value, Tracer) and value.shape == () and \
                not any(value is x for x in inputs):
            value.numpy_scalar = True
    return result


def dispatch_function(func, types, args, kwargs):
    """NEP 18 entry: `np.func(..., tracer, ...)`."""
    if not _handles(types):
        return NotImplemented
    what = public_name(func)
    with entry(what), translate_errors():
        rule = FUNCTIONS.get(func)
        if rule is None:
            return unsupported(func, args, kwargs, what)
        result = rule(*args, **kwargs)
        if func in SCALAR_RESULTS and kwargs.get("out") is None and \
                not _einsum_by_blas(func, args, kwargs):
            mark_numpy_scalars(result, args)
        return result


def _einsum_by_blas(func, args, kwargs) -> bool:
    """np.einsum(..., optimize=...) of several operands: NumPy's last contraction is then
    (almost always) tensordot's, and its 0-d result a 0-d array, not a scalar (a scalar
    would make `e += 1` rebind e where NumPy writes the array other names share)."""
    return func is np.einsum and kwargs.get("optimize", False) is not False and \
        len(args) > 2                  # the subscripts and two or more operands


def dispatch_ufunc(ufunc, method, inputs, kwargs, what: str | None = None):
    """NEP 13 entry: `np.ufunc(..., tracer, ...)` and its methods (reduce, outer)."""
    from .ufuncs import lower_ufunc
    if not _handles(type(x) for x in inputs if hasattr(x, "__array_ufunc__")):
        return NotImplemented
    what = what or (public_name(ufunc) if method == "__call__"
                    else f"np.{ufunc.__name__}.{method}")
    with entry(what), translate_errors():
        result = lower_ufunc(ufunc, method, inputs, kwargs)
        if kwargs.get("out") is None:
            mark_numpy_scalars(result, inputs)
        return result


def getitem(x: Tracer, key):
    from .indexing import lower_getitem
    with entry("x[...]"), translate_errors():
        result = lower_getitem(x, key)
        if not any(k is Ellipsis for k in (key if isinstance(key, tuple) else (key,))):
            mark_numpy_scalars(result, (x,))     # x[1, 2] is a scalar, x[1, ...] not
        elif isinstance(result, Tracer) and result is not x:
            result.numpy_scalar = False          # (lowering may index within itself)
        return result


def setitem(x: Tracer, key, value) -> None:
    from .indexing import lower_setitem
    with entry("x[...] = v"), translate_errors():
        lower_setitem(x, key, value)


def ndarray_fallback(x: Tracer, name: str):
    """`x.name` for an ndarray attribute with no Tracer rule: route to the hook."""
    attr = getattr(np.ndarray, name)
    what = f"x.{name}" + ("()" if callable(attr) else "")
    if not callable(attr):
        with entry(what):
            return unsupported(operator.attrgetter(name), (x,), {}, what)

    def method(*args, **kwargs):
        with entry(what):
            return unsupported(attr, (x,) + args, kwargs, what)
    return method


from . import (ufuncs, reductions, shape_ops, linalg, indexing, creation,  # noqa: E402,F401,I001
               inplace, complex_numbers)
from . import library  # noqa: E402,F401,I001  (sorts, LAPACK, FFTs, scans: library calls)
from . import stride_tricks  # noqa: E402,F401,I001  (x.strides, x.flags, as_strided)
