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
import importlib
import os
import sys
import sysconfig
import threading
import types

import numpy as np

from .source import _is_internal

CREATION = ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like",
            "full_like", "arange", "linspace", "logspace", "geomspace", "eye", "identity",
            "tri", "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray",
            "copy", "diag", "fromfunction", "indices", "frombuffer")
# NumPy functions that skip NEP 18 dispatch (they call np.asarray on their argument first):
# called from user code on a traced value, their rule in `lowering.FUNCTIONS` runs
# (`_wrap_lowered`): a lowering, or a named error (np.polynomial's trimmed results).
UNDISPATCHED = (("numpy", "asarray_chkfinite"), ("numpy", "ndenumerate"), ("numpy", "nditer"),
                *(("numpy.polynomial.polynomial", name)
                  for name in ("polyadd", "polysub", "polymul", "polydiv", "polyint")),
                ("numpy.polynomial.polyutils", "trimseq"),
                ("numpy.polynomial.polyutils", "as_series"))
# Functions that skip NEP 18 and that users bind by name at import (`from
# numpy.lib.stride_tricks import as_strided`, `ast = np.lib.stride_tricks.as_strided`),
# which a module attribute swap never reaches: while traces run, the function's code object
# is swapped instead (the function keeps its identity, which Numba resolves it by).  A
# traced first argument goes to the rule in `lowering.FUNCTIONS`; anything else to a copy
# of NumPy's own function.
CODE_SWAPPED = (("numpy.lib._stride_tricks_impl", "as_strided"),
                ("numpy.polynomial.polyutils", "as_series"),
                ("numpy.polynomial.polyutils", "mapdomain"),
                ("numpy.polynomial.polynomial", "polyval"))
_TRACED_KINDS = "biufc"
# Scalar types whose call on a traced value is a cast (`np.float32(x)`).
SCALAR_TYPES = ("bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                "uint32", "uint64", "intc", "uintc", "intp", "uintp", "float32", "float64",
                "complex64", "complex128", "single", "double", "csingle", "cdouble", "byte",
                "ubyte", "short", "ushort", "long", "ulong", "longlong", "ulonglong")
_NDARRAY = np.ndarray             # NumPy's array type (out of np's dict while traces run)
_ABSENT = object()                 # a `_wrappers` entry whose name leaves the module's dict

_CAPTURING: contextvars.ContextVar[bool] = contextvars.ContextVar("xlanb_capture",
                                                                  default=False)
_LIBRARY_DIRS = tuple({os.path.abspath(p) + os.sep for p in
                       (sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"],
                        sysconfig.get_paths()["platlib"])})
_lock = threading.Lock()
_active_traces = 0
_originals: dict[tuple[object, str], object] = {}   # (module, name) -> NumPy's function
_wrappers: dict[tuple[object, str], tuple] = {}     # (module, name) -> (NumPy's, wrapper)
_code_swaps: dict[str, tuple] = {}    # name -> (function, its code, entry code, a copy of it)


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


def _is_library_code(filename: str) -> bool:
    """`is_library_file`, memoized for absolute paths (a relative one depends on the
    working directory)."""
    known = _LIBRARY_CODE.get(filename)
    if known is None:
        known = is_library_file(filename)
        if os.path.isabs(filename):
            _LIBRARY_CODE[filename] = known
    return known


_LIBRARY_CODE: dict[str, bool] = {}


def _install() -> None:
    if _originals:
        return
    if not _wrappers:
        _build_wrappers()
    for function, _, entry_code, _ in _code_swaps.values():
        function.__code__ = entry_code
    for (module, name), (original, wrapper) in _wrappers.items():
        _originals[(module, name)] = original
        if wrapper is _ABSENT:
            delattr(module, name)        # served by `_numpy_getattr` while traces run
        else:
            setattr(module, name, wrapper)


def _build_wrappers() -> None:
    """The wrappers, made once: installing them is then a few dozen attribute writes,
    which auto-clustering does at every break."""
    # NumPy's scalar types stay types (`x.dtype.type is np.float32` must hold): they leave
    # the module's dict while traces run, and the module's __getattr__ hands out the type
    # itself, or a cast where user code calls it on a traced value (`np.float32(x)`).
    _wrappers[(np, "__getattr__")] = (np.__dict__.get("__getattr__"), _numpy_getattr)
    for name in SCALAR_TYPES:
        scalar_type = np.__dict__.get(name)
        if isinstance(scalar_type, type) and issubclass(scalar_type, np.generic):
            _wrappers[(np, name)] = (scalar_type, _ABSENT)
    # np.ndarray the same way: a type for isinstance, `np.ndarray(shape, dtype)` called
    # from user code makes an uninitialised array as np.empty does
    _wrappers[(np, "ndarray")] = (np.ndarray, _ABSENT)
    for name in CREATION:
        original = getattr(np, name, None)
        if original is not None:
            _wrappers[(np, name)] = (original, _wrap(original))
    for module_name, name in UNDISPATCHED:
        module = importlib.import_module(module_name)
        original = getattr(module, name, None)
        if original is not None:
            what = f"np{module_name[len('numpy'):]}.{name}"
            _wrappers[(module, name)] = (original, _wrap_lowered(original, what))
    for name in dir(np.random):                   # the global RandomState's draws
        original = getattr(np.random, name)
        if (isinstance(getattr(original, "__self__", None), np.random.RandomState)
                and not name.startswith(("seed", "get_", "set_"))) or name == "seed":
            _wrappers[(np.random, name)] = (original, _wrap_draw(original,
                                                                 f"np.random.{name}"))
    for name in ("ranf", "sample"):               # aliases of random_sample
        original = getattr(np.random, name, None)
        if original is not None:
            _wrappers[(np.random, name)] = (original, _wrap_draw(
                original, f"np.random.{name}", np.random.mtrand._rand.random_sample))
    for module_name, name in CODE_SWAPPED:
        function = getattr(importlib.import_module(module_name), name)
        copy = types.FunctionType(function.__code__, function.__globals__, name,
                                  function.__defaults__, function.__closure__)
        copy.__kwdefaults__ = function.__kwdefaults__
        _code_swaps[name] = (function, function.__code__, _ENTRIES[name].__code__, copy)
    # unseeded: new numbers on every call (np.random.RandomState stays a class: user code
    # tests isinstance against it)
    _wrappers[(np.random, "default_rng")] = (np.random.default_rng, _wrap_unseeded(
        np.random.default_rng, "np.random.default_rng"))


def _uninstall() -> None:
    # in reverse: the scalar types are back before NumPy's own module __getattr__ is
    for (module, name), original in reversed(list(_originals.items())):
        if original is None:
            delattr(module, name)
        else:
            setattr(module, name, original)
    _originals.clear()
    for function, code, _, _ in _code_swaps.values():
        function.__code__ = code


def _wrap_draw(original, what: str, drawn=None):
    """Draws change on every call: a chained draw of the program under jit (NumPy's own
    call at run time), a break under auto-clustering (`TraceContext.random_draw`).
    `drawn`: the global RandomState's method an alias (np.random.ranf) calls."""
    name = original.__name__

    @functools.wraps(original)
    def draw(*args, **kwargs):
        if not _CAPTURING.get() or not _from_user_code(sys._getframe(1), name):
            return original(*args, **kwargs)
        from .source import entry
        from .tracer import current_context
        context = current_context()
        if context is None:
            return original(*args, **kwargs)
        with suspended(), entry(what):
            return context.random_draw(drawn or original, args, kwargs, what)
    draw._xlanb_capture = True
    draw.__wrapped__ = original
    return draw


def _wrap_lowered(original, what: str):
    """`original` called from user code on a traced value: its rule in `lowering.FUNCTIONS`
    (NumPy's own function would ask the tracer for its values)."""
    name = original.__name__

    @functools.wraps(original)
    def call(*args, **kwargs):
        if not _CAPTURING.get() or not any(_holds_tracer(a) for a in args) or \
                not _from_user_code(sys._getframe(1), name):
            return original(*args, **kwargs)
        from .lowering import FUNCTIONS
        from .source import entry
        with suspended(), entry(what):
            return FUNCTIONS[original](*args, **kwargs)
    call._xlanb_capture = True
    call.__wrapped__ = original
    return call


def _as_strided_entry(x, shape=None, strides=None, subok=False, writeable=True):
    """The code run as NumPy's as_strided while traces run (its globals are NumPy's)."""
    import xlanb.tracing.capture as capture
    return capture.swapped_call("as_strided", x, shape, strides, subok, writeable)


def _as_series_entry(alist, trim=True):
    import xlanb.tracing.capture as capture
    return capture.swapped_call("as_series", alist, trim)


def _mapdomain_entry(x, old, new):
    import xlanb.tracing.capture as capture
    return capture.swapped_call("mapdomain", x, old, new)


def _polyval_entry(x, c, tensor=True):
    import xlanb.tracing.capture as capture
    return capture.swapped_call("polyval", x, c, tensor)


_ENTRIES = {"as_strided": _as_strided_entry, "as_series": _as_series_entry,
            "mapdomain": _mapdomain_entry, "polyval": _polyval_entry}


def swapped_call(name: str, *args):
    """A call of a `CODE_SWAPPED` function: its rule where an argument holds a traced
    value (in a trace of this thread), else NumPy's own code."""
    function, _, _, numpy_own = _code_swaps[name]
    if not _CAPTURING.get() or not any(_holds_tracer(a) for a in args):
        return numpy_own(*args)
    from .lowering import FUNCTIONS, public_name
    from .source import entry
    from ..errors import CompileError
    from .tracer import current_context
    try:
        with suspended(), entry(public_name(function).replace("np.stride_tricks", "np.lib."
                                                              "stride_tricks")):
            return FUNCTIONS[function](*args)
    except CompileError as error:       # NumPy's Polynomial.__add__ turns any error into
        context = current_context()     # NotImplemented: `trace` raises this one instead
        if context is not None and context.conversion_error is None:
            context.conversion_error = error
        raise


def _wrap_unseeded(original, what: str):
    """`np.random.default_rng()` with no seed in the traced function: its draws differ on
    every call, so they cannot be made while tracing (a seeded one repeats, as NumPy's)."""
    name = original.__name__

    @functools.wraps(original)
    def make(*args, **kwargs):
        seed = args[0] if args else kwargs.get("seed")
        if seed is not None or not _CAPTURING.get() or \
                not _from_user_code(sys._getframe(1), name):
            return original(*args, **kwargs)
        from .lowering import unsupported
        with suspended():
            return unsupported(original, args, kwargs, what)
    make._xlanb_capture = True
    make.__wrapped__ = original
    return make


def _numpy_getattr(name: str):
    """`numpy.<name>` for the scalar types and np.ndarray, taken out of NumPy's dict while
    traces run: the type itself, except where user code calls it at once (`np.float32(x)`,
    `np.ndarray((n, m))`)."""
    scalar_type = _originals.get((np, name)) or _wrappers.get((np, name), (None,))[0]
    if isinstance(scalar_type, type):
        # xlanb's own lowering reads np.ndarray and np.bool_ hundreds of times a trace:
        # its files answer from a memo before any bytecode is read
        frame = sys._getframe(1)
        if _CAPTURING.get() and not _is_library_code(frame.f_code.co_filename) and \
                is_callee_load(frame, name):
            return _ndarray_constructor if scalar_type is np.ndarray else \
                _scalar_constructor(scalar_type)
        return scalar_type
    numpy_getattr = _wrappers[(np, "__getattr__")][0]
    if numpy_getattr is None:
        raise AttributeError(f"module 'numpy' has no attribute {name!r}")
    return numpy_getattr(name)


@functools.lru_cache(maxsize=None)
def _scalar_constructor(scalar_type: type):
    """`np.float32(x)`: on a traced value NumPy's cast (`x.astype`, the same array when
    the dtype already matches and it has dimensions; a 0-d value stays 0-d, as NumPy's
    scalar); anything else goes to the type itself."""
    def construct(*args, **kwargs):
        if len(args) != 1 or kwargs or not _holds_tracer(args[0]):
            return scalar_type(*args, **kwargs)
        from .lowering.complex_numbers import astype
        from .source import entry
        from .tracer import Tracer
        value, dtype = args[0], np.dtype(scalar_type)
        if isinstance(value, Tracer) and value.ndim > 0 and value.dtype == dtype:
            return value
        if not isinstance(value, Tracer):                  # np.float32([a, b])
            from .lowering.promote import wrap
            value = wrap(_stack_nested(value))
        with suspended(), entry(f"np.{scalar_type.__name__}"):
            result = astype(value, dtype)
        if result.ndim == 0 and result is not value:
            result.numpy_scalar = True           # np.float32(x.sum()) is an np.float32
        return result
    construct.__name__ = scalar_type.__name__
    return construct


def _ndarray_constructor(shape, dtype=float, buffer=None, offset=0, strides=None,
                         order=None):
    """`np.ndarray(shape, dtype)` in the traced function: an uninitialised array, as
    `np.empty(shape, dtype, order)` (a traced root).  Over a buffer or with strides it is
    a view of memory the trace does not own: NumPy's own constructor; over a traced
    array's memory (an argument, an array made here) a named error, where NumPy's
    constructor failed with a bare TypeError about bytes-like objects."""
    if _holds_tracer(buffer):
        from ..errors import UnsupportedNumPyFunctionError
        from .lowering import fail
        from .source import entry
        with entry("np.ndarray(shape, dtype, buffer)"):
            raise fail(UnsupportedNumPyFunctionError,
                       "an array over the memory of a traced array reinterprets its bytes, "
                       "which a compiled program does not have",
                       hint="take a slice, reshape or `.view(dtype)` of the array instead, "
                       "or run the function with NumPy: `xlanb.jit(f, must_compile=False)`")
    if buffer is not None or strides is not None:
        return _NDARRAY(shape, dtype, buffer, offset, strides, order or "C")
    empty = _wrappers[(np, "empty")][0]
    with suspended():
        return _traced_creation(empty, (shape, dtype), {"order": order or "C"})


_SKIPPED = frozenset({"PRECALL", "KW_NAMES", "CACHE", "EXTENDED_ARG", "NOP", "PUSH_NULL"})
_CALLS = frozenset({"CALL", "CALL_KW", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_METHOD"})
_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF",
                    "LOAD_FAST", "LOAD_CLOSURE"})


def _callee_name(instructions: list, k: int) -> str | None:
    """The name loaded as the callable of the call at `instructions[k]`, walking back over
    its arguments by stack effect (None when the code between is not straight-line)."""
    load = _callee_load(instructions, k)
    return None if load is None else load.argval


def _callee_load(instructions: list, k: int):
    """The instruction that loads the callable of the call at `instructions[k]` (None when
    the code between is not straight-line)."""
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
            return ins if ins.opname in _LOADS and isinstance(ins.argval, str) else None
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


@functools.lru_cache(maxsize=4096)
def _callee_loads(code) -> dict[int, str]:
    """Offset -> name of each instruction that loads the callable of a call."""
    instructions = list(dis.get_instructions(code))
    loads = (_callee_load(instructions, k) for k, ins in enumerate(instructions)
             if ins.opname in _CALLS)
    return {load.offset: load.argval for load in loads if load is not None}


def is_callee_load(frame, name: str) -> bool:
    """Whether `frame` is loading `name` to call it at once (`np.float32(x)`), not to
    compare or pass it (`x.dtype.type is np.float32`, `astype(np.float32)`)."""
    return _callee_loads(frame.f_code).get(frame.f_lasti) == name


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
    return not _is_library_code(frame.f_code.co_filename) and is_direct_call(frame, name)


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
    from .datetimes.boundary import is_time_leaf
    from .tracer import Tracer, current_context
    context = current_context()
    if context is None:
        return original(*args, **kwargs)
    name = original.__name__
    if name in _AS_ARRAY and args and _holds_tracer(args[0]):
        return _from_traced(name, args, kwargs)
    from .datetimes.array import DatetimeTracer
    if name in _AS_ARRAY and args and isinstance(args[0], DatetimeTracer):
        return _from_traced_times(name, args, kwargs)
    result = original(*args, **kwargs)
    time_dtype = None
    if isinstance(result, np.ndarray) and is_time_leaf(result):   # traced as its counts
        time_dtype = result.dtype
        result = result.view(np.int64) if result.base is not None else \
            np.array(result.view(np.int64))           # (its own memory: layout exact)
    if isinstance(result, Tracer) or not isinstance(result, np.ndarray) or \
            result.dtype.kind not in _TRACED_KINDS:
        return result
    if name in ("empty", "empty_like"):
        # any content is NumPy's answer; zeros keep the program the same from run to run
        # (its text is the cache key) and small (a splat, not the memory's bytes)
        result = np.zeros_like(result)
    from .lowering.promote import constant_node
    from .views import element_strides
    tracer = context.wrap(constant_node(result))
    if result.base is None and result.flags.writeable:   # its own memory: layout exact
        strides = element_strides(result)
        tracer._strides = strides if strides is not None else False
    return tracer if time_dtype is None else DatetimeTracer(tracer, time_dtype)


_AS_ARRAY = ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray")


def _from_traced_times(name: str, args, kwargs):
    """np.array / np.asarray of a traced datetime array: of its counts, in its dtype (a
    dtype asked for is NumPy's `astype`)."""
    from .datetimes.array import DatetimeTracer
    obj, kwargs = args[0], dict(kwargs)
    dtype = kwargs.pop("dtype", args[1] if len(args) > 1 else None)
    if dtype is not None and np.dtype(dtype) != obj.dtype:
        obj = obj.astype(dtype)
        if not isinstance(obj, DatetimeTracer):
            return _from_traced(name, (obj,) + tuple(args[2:]), kwargs)
        kwargs["copy"] = None if name == "array" else kwargs.get("copy")
    counts = _from_traced(name, (obj.ints, None) + tuple(args[2:]), kwargs)
    return DatetimeTracer(counts, obj.dtype)


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
    order = _ORDERS.get(name, kwargs.get("order", args[3] if name == "array" and
                                         len(args) > 3 else None))
    ndmin = 1 if name in _ORDERS else kwargs.get("ndmin", 0) if name == "array" else 0
    if isinstance(obj, Tracer):
        array = _array_of_tracer(obj, dtype, copy, order)
        if array is obj and obj.numpy_scalar:    # np.asarray(x.sum()): a new 0-d array
            array = obj.context.wrap(obj.node)
        return _with_ndmin(array, ndmin, fresh=array is not obj)
    node = _stack_nested(obj)
    return _with_ndmin(wrap(node if dtype is None else B.convert(node, dtype)), ndmin)


_ORDERS = {"ascontiguousarray": "C", "asfortranarray": "F"}   # and at least 1-D


def _array_of_tracer(obj, dtype, copy, order):
    """np.array/asarray of a Tracer: the Tracer itself (a write through the result reaches
    it) unless a copy is asked for or a dtype or layout change needs one, as NumPy."""
    from xlanb_runtime.ir import builder as B
    from .layout import has_order, with_order
    from .lowering.promote import wrap
    same_dtype = dtype is None or np.dtype(dtype) == obj.dtype
    scalar = (obj.root if obj.root is not None else obj).writeable is None
    if copy is not True and same_dtype and has_order(obj, order) and not scalar:
        return obj                      # (of a NumPy or Python scalar, NumPy makes an array)
    if copy is False:
        raise ValueError("Unable to avoid copy while creating an array as requested.")
    node = obj.node if same_dtype else B.convert(obj.node, dtype)
    return with_order(wrap(node), order, (obj,))


def _with_ndmin(array, ndmin: int, fresh: bool = True):
    """`ndmin=`: ones prepended to the shape (of a new array, or a view of `array`)."""
    from xlanb_runtime.ir import builder as B
    from .lowering.promote import wrap
    from .views import c_strides
    missing = int(ndmin) - array.ndim
    if missing <= 0:
        return array
    if not fresh or array.elem_strides != c_strides(array.shape):
        return array[(None,) * missing]
    result = wrap(B.reshape(array.node, (1,) * missing + array.shape))
    result._strides = c_strides(result.shape)        # a new C array: an exact layout
    return result


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
