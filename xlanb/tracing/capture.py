"""Arrays made inside a traced function are traced too: `np.zeros`, `np.array([a, b])`, ...

A user's function builds results in arrays it makes itself (`out = np.empty((n, m))`, then
`out[i] = ...` in a loop; `np.array([a, b])` of traced scalars).  NumPy's creation
functions take no array argument, so NEP 18 never hands them to the tracer, and a plain
ndarray cannot take a traced write.

Design: while `trace()` runs the user's function, NumPy's creation functions (the
attributes of the `numpy` module listed in `CREATION`) are replaced by wrappers that check
two things: that a trace is active in this thread or context (`capture_creation`), and
that the caller is the user's code, not NumPy, xlanb or another library (the caller's
file, as `source.user_location` decides).  Then the eager result becomes a *traced root*
with a constant node, which takes traced writes like any argument; `np.array` and
`np.asarray` of Tracers (or of nested lists holding them) stack them instead.

Why not proxy globals or bytecode capture: helpers the function calls (and helpers of
helpers) have their own globals, and `from numpy import zeros` binds before any proxy
could; a module attribute swap reaches every `np.zeros(...)` spelled through the module,
costs one flag check per creation call outside traces, and is undone by nothing since the
wrappers defer to the originals whenever no trace is active.  Names imported with
`from numpy import zeros` before xlanb was imported keep the originals: those arrays stay
concrete and a traced write into one is a `ConcretizationError` that says so.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import sys
import sysconfig

import numpy as np

from .source import _is_internal

CREATION = ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like",
            "full_like", "arange", "linspace", "logspace", "geomspace", "eye", "identity",
            "tri", "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray",
            "copy", "diag", "fromfunction", "indices", "frombuffer")
_TRACED_KINDS = "biufc"

_CAPTURING: contextvars.ContextVar[bool] = contextvars.ContextVar("xlanb_capture",
                                                                  default=False)
_LIBRARY_DIRS = tuple({os.path.abspath(p) + os.sep for p in
                       (sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"],
                        sysconfig.get_paths()["platlib"])})
_installed = False


@contextlib.contextmanager
def capture_creation():
    """Within, creation functions called from user code return traced arrays."""
    _install()
    token = _CAPTURING.set(True)
    try:
        yield
    finally:
        _CAPTURING.reset(token)


@contextlib.contextmanager
def suspended():
    """Within, creation functions are NumPy's own (eager fallbacks run real NumPy)."""
    token = _CAPTURING.set(False)
    try:
        yield
    finally:
        _CAPTURING.reset(token)


def is_library_file(filename: str) -> bool:
    """NumPy's, xlanb's (its generated drivers too), the standard library's or an installed
    package's code."""
    return (filename.startswith("<xlanb") or _is_internal(filename)
            or os.path.abspath(filename).startswith(_LIBRARY_DIRS))


def _install() -> None:
    global _installed
    if _installed:
        return
    for name in CREATION:
        original = getattr(np, name, None)
        if original is not None and not getattr(original, "_xlanb_capture", False):
            setattr(np, name, _wrap(original))
    _installed = True


def _wrap(original):
    @functools.wraps(original)
    def creation(*args, **kwargs):
        if not _CAPTURING.get() or is_library_file(sys._getframe(1).f_code.co_filename):
            return original(*args, **kwargs)
        with suspended():
            return _traced_creation(original, args, kwargs)
    creation._xlanb_capture = True
    creation.__wrapped__ = original
    return creation


def _traced_creation(original, args, kwargs):
    from .tracer import Tracer, current_context
    context = current_context()
    if context is None:
        return original(*args, **kwargs)
    name = original.__name__
    if name in ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray") \
            and args and _holds_tracer(args[0]):
        return _from_traced(name, args, kwargs)
    result = original(*args, **kwargs)
    if isinstance(result, Tracer) or not isinstance(result, np.ndarray) or \
            result.dtype.kind not in _TRACED_KINDS:
        return result
    from .lowering.promote import constant_node
    return context.wrap(constant_node(result))


def _holds_tracer(obj) -> bool:
    from .tracer import Tracer
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_holds_tracer(item) for item in obj)
    return False


def _from_traced(name: str, args, kwargs):
    """np.array / np.asarray of a Tracer or of nested sequences holding Tracers."""
    from .tracer import Tracer
    from .lowering.promote import wrap
    from xlanb_runtime.ir import builder as B
    obj, dtype = args[0], kwargs.get("dtype", args[1] if len(args) > 1 else None)
    copy = kwargs.get("copy", True if name == "array" else None)
    if isinstance(obj, Tracer):
        if dtype is None or np.dtype(dtype) == obj.dtype:
            return obj if (copy is not True) else wrap(obj.node)
        return wrap(B.convert(obj.node, dtype))
    node = _stack_nested(obj)
    return wrap(node if dtype is None else B.convert(node, dtype))


def _stack_nested(obj):
    """Nested lists/tuples of Tracers and numbers as one node (NumPy's dtype discovery)."""
    from .tracer import Tracer
    from .lowering.promote import to_node
    from xlanb_runtime.ir import builder as B
    if isinstance(obj, Tracer):
        return obj.node
    if not isinstance(obj, (list, tuple)):
        return to_node(np.asarray(obj))
    parts = [_stack_nested(item) for item in obj]
    if not parts:
        return to_node(np.asarray(obj))
    shapes = {p.shape for p in parts}
    if len(shapes) != 1:
        from ..errors import ShapeMismatchError
        raise ShapeMismatchError("setting an array element with a sequence: the nested "
                                 f"sequence is inhomogeneous (element shapes {sorted(shapes)})",
                                 op_name="np.array")
    dtype = np.result_type(*(p.dtype for p in parts))
    shape = parts[0].shape
    pieces = [B.reshape(B.convert(p, dtype), (1,) + shape) for p in parts]
    return B.concatenate(pieces, 0)
