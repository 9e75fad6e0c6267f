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

import bisect
import contextlib
import contextvars
import dis
import functools
import os
import sys
import sysconfig
import threading

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
_lock = threading.Lock()
_active_traces = 0
_originals: dict[tuple[object, str], object] = {}   # (module, name) -> NumPy's function
_wrappers: dict[tuple[object, str], tuple] = {}     # (module, name) -> (NumPy's, wrapper)


@contextlib.contextmanager
def capture_creation():
    """Within, creation functions called from user code return traced arrays.

    The wrappers are in NumPy's namespace only while some trace runs: Numba resolves
    `np.empty` inside jitted code by identity, so it must see NumPy's own function
    whenever it compiles (`originals_restored` covers compiles in the middle of a trace).
    """
    global _active_traces
    with _lock:
        if _active_traces == 0:
            _install()
        _active_traces += 1
    token = _CAPTURING.set(True)
    try:
        yield
    finally:
        _CAPTURING.reset(token)
        with _lock:
            _active_traces -= 1
            if _active_traces == 0:
                _uninstall()


@contextlib.contextmanager
def suspended():
    """Within, creation functions are NumPy's own (eager fallbacks run real NumPy)."""
    token = _CAPTURING.set(False)
    try:
        yield
    finally:
        _CAPTURING.reset(token)


@contextlib.contextmanager
def originals_restored():
    """NumPy's own functions in its namespace (a Numba compile in the middle of a trace)."""
    with _lock:
        was_installed = bool(_originals)
        _uninstall()
    try:
        with suspended():
            yield
    finally:
        with _lock:
            if was_installed and _active_traces > 0:
                _install()


def is_library_file(filename: str) -> bool:
    """NumPy's, xlanb's (its generated drivers too), the standard library's or an installed
    package's code."""
    return (filename.startswith("<xlanb") or _is_internal(filename)
            or os.path.abspath(filename).startswith(_LIBRARY_DIRS))


def _install() -> None:
    if _originals:
        return
    if not _wrappers:
        _build_wrappers()
    for (module, name), (original, wrapper) in _wrappers.items():
        _originals[(module, name)] = original
        setattr(module, name, wrapper)


def _build_wrappers() -> None:
    """The wrappers, made once: installing them is then a few dozen attribute writes,
    which auto-clustering does at every break."""
    for name in CREATION:
        original = getattr(np, name, None)
        if original is not None:
            _wrappers[(np, name)] = (original, _wrap(original))
    for name in dir(np.random):                   # the global RandomState's draws
        original = getattr(np.random, name)
        if isinstance(getattr(original, "__self__", None), np.random.RandomState) and \
                not name.startswith(("seed", "get_", "set_")):
            _wrappers[(np.random, name)] = (original, _wrap_draw(original,
                                                                 f"np.random.{name}"))


def _uninstall() -> None:
    for (module, name), original in _originals.items():
        setattr(module, name, original)
    _originals.clear()


def _wrap_draw(original, what: str):
    """Draws change on every call: a break under auto-clustering, an error under jit."""
    name = original.__name__

    @functools.wraps(original)
    def draw(*args, **kwargs):
        if not _CAPTURING.get() or not _from_user_code(sys._getframe(1), name):
            return original(*args, **kwargs)
        from .lowering import unsupported
        with suspended():
            return unsupported(original, args, kwargs, what)
    draw._xlanb_capture = True
    draw.__wrapped__ = original
    return draw


_SKIPPED = frozenset({"PRECALL", "KW_NAMES", "CACHE", "EXTENDED_ARG", "NOP", "PUSH_NULL"})
_CALLS = frozenset({"CALL", "CALL_KW", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_METHOD"})
_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF",
                    "LOAD_FAST", "LOAD_CLOSURE"})


def _callee_name(instructions: list, k: int) -> str | None:
    """The name loaded as the callable of the call at `instructions[k]`, walking back over
    its arguments by stack effect (None when the code between is not straight-line)."""
    call = instructions[k]
    need = (call.arg or 0) + (1 if call.opname == "CALL_KW" else 0)
    depth, started = 0, False
    for ins in reversed(instructions[:k]):
        # 3.11 splits a call's stack effect between PRECALL and CALL: skip this call's own
        # PRECALL, count those of calls nested in its arguments (`np.empty(len(a))`)
        if ins.opname in _SKIPPED and not (ins.opname == "PRECALL" and started):
            continue
        started = True
        if depth == need:
            return ins.argval if ins.opname in _LOADS and isinstance(ins.argval, str) else None
        if getattr(ins, "is_jump_target", False) or "JUMP" in ins.opname:
            return None
        depth += dis.stack_effect(ins.opcode, ins.arg, jump=False) if ins.arg is not None \
            else dis.stack_effect(ins.opcode)
        if depth > need:
            return None
    return None


@functools.lru_cache(maxsize=4096)
def _call_sites(code) -> tuple[list[int], dict[int, str | None]]:
    instructions = list(dis.get_instructions(code))
    offsets = [ins.offset for ins in instructions]
    names = {ins.offset: _callee_name(instructions, k)
             for k, ins in enumerate(instructions) if ins.opname in _CALLS}
    return offsets, names


def is_direct_call(frame, name: str) -> bool:
    """Whether `frame` is calling `name` itself at this moment.

    A frame running `rng.normal(size=3)` is also the innermost Python frame when NumPy's
    compiled code calls `np.empty` back through the module: that caller must get a real
    array (a Tracer there would crash the C code), so only a call spelled `np.empty(...)`
    or `empty(...)` in the frame's own code counts.
    """
    offsets, names = _call_sites(frame.f_code)
    index = bisect.bisect_right(offsets, frame.f_lasti) - 1
    return index >= 0 and names.get(offsets[index]) == name


def _from_user_code(frame, name: str) -> bool:
    return not is_library_file(frame.f_code.co_filename) and is_direct_call(frame, name)


def _wrap(original):
    name = original.__name__

    @functools.wraps(original)
    def creation(*args, **kwargs):
        if not _CAPTURING.get() or not _from_user_code(sys._getframe(1), name):
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
    if name in ("empty", "empty_like"):
        # any content is NumPy's answer; zeros keep the program the same from run to run
        # (its text is the cache key) and small (a splat, not the memory's bytes)
        result = np.zeros_like(result)
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
