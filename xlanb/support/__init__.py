"""The NumPy support table: what `xlanb.jit` does with each NumPy name it knows about.

`python -m xlanb support` prints it; `python -m xlanb support --markdown` writes the copy
kept in docs/numpy_support.md (tests/frontend/test_support_table.py checks that the copy is
current).  Nothing here is a hand-written status: each comes from the lowering registry.

  fused          lowered to IR ops that fusion groups into compiled kernels.  Functions:
                 a rule in `lowering.FUNCTIONS`, or a creation function that `capture`
                 traces (its array is a constant of the program that takes traced writes).
                 Ufuncs and ndarray members: a trace of a small call succeeds.
  library call   lowered to a `library-call` node: NumPy or LAPACK runs inside the compiled
                 program, between kernels (`lowering.library.LIBRARY_FUNCTIONS`).
  data-dependent shape  never compiled by design: the result's shape (or dtype) depends
                 on the values (`lowering.DATA_DEPENDENT`: np.unique, np.nonzero).  `jit`
                 raises DataDependentShapeError, which says what to use instead;
                 `jit(f, must_compile=False)` runs it with NumPy.  Counted apart, so the
                 comparison with Numba (which returns such arrays) stays honest.
  fallback only  never compiled by design: a value needed in Python (`x.item()`).  `jit`
                 raises a named error; `jit(f, must_compile=False)` runs it with NumPy.
  unsupported    no lowering yet: `jit` raises UnsupportedNumPyFunctionError, which says
                 what to do; `jit(f, must_compile=False)` runs it with NumPy.

Which names: NumPy's functions that dispatch through `__array_function__` (np, np.linalg,
np.fft), every ufunc and ufunc method, ndarray's public methods and attributes, every
function with a lowering rule, and every name in Numba's documented support list
(`numba_numpy.txt`, with its source), so the counts compare like with like.
"""
from __future__ import annotations

import functools
import importlib
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

FUSED, LIBRARY, FALLBACK, UNSUPPORTED = "fused", "library call", "fallback only", "unsupported"
DATA_DEPENDENT = "data-dependent shape"
STATUSES = (FUSED, LIBRARY, DATA_DEPENDENT, FALLBACK, UNSUPPORTED)
COMPILED = (FUSED, LIBRARY)
ABSENT = "not in this NumPy"           # a Numba-listed name NumPy has since removed

KINDS = ("function", "ufunc", "ufunc method", "ndarray member", "other")
_MODULES = ("numpy", "numpy.linalg", "numpy.fft")
NUMBA_LIST = Path(__file__).with_name("numba_numpy.txt")


@dataclass(frozen=True)
class Entry:
    name: str            # np.sort, np.linalg.solve, np.add, np.ufunc.reduce, ndarray.sum
    kind: str            # one of KINDS
    status: str          # one of STATUSES, or ABSENT
    note: str = ""
    numba: bool = False  # in Numba's documented list


def numba_names() -> list[str]:
    """Numba's documented NumPy support, as listed in `numba_numpy.txt`."""
    lines = NUMBA_LIST.read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def resolve(name: str) -> Any:
    """The NumPy object a table name stands for (None: not in this NumPy)."""
    if name.startswith("ndarray."):
        return getattr(np.ndarray, name[len("ndarray."):], None)
    parts = name.split(".")
    if parts[0] != "np":
        return None
    obj: Any = np
    for i, part in enumerate(parts[1:], start=1):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                nxt = getattr(obj, part, None)
        except Exception:
            nxt = None
        if nxt is None and i < len(parts) - 1 and isinstance(obj, type(np)):
            try:
                nxt = importlib.import_module(f"{obj.__name__}.{part}")
            except ImportError:
                nxt = None
        if nxt is None:
            return None
        obj = nxt
    return obj


# -- statuses from the registry ----------------------------------------------------------------

def _registry():
    from ..tracing import capture
    from ..tracing.lowering import DATA_DEPENDENT, FUNCTIONS, is_random_draw
    from ..tracing.lowering.library import LIBRARY_FUNCTIONS
    creation = {getattr(np, n) for n in capture.CREATION if hasattr(np, n)}
    return FUNCTIONS, LIBRARY_FUNCTIONS, DATA_DEPENDENT, creation, is_random_draw


def function_status(func: Callable) -> tuple[str, str]:
    """(status, note) of a NumPy function (or class), from the lowering registry."""
    functions, library, data_dependent, creation, is_random_draw = _registry()
    if func in library:
        return LIBRARY, ""
    if func in functions:
        return FUSED, ""
    if func in data_dependent:
        return DATA_DEPENDENT, _data_dependent_note(func)
    if func in creation:
        return FUSED, "made when traced: a constant of the program that takes traced writes"
    if is_random_draw(func) or _is_generator_method(func) or \
            getattr(func, "__module__", "") == "numpy.random":      # np.random.seed, ranf
        return random_status(func)
    if isinstance(func, type) and issubclass(func, np.generic):     # np.float32(x)
        status, note = _probe_call(_user_probe(f"np.{func.__name__}(x[0])"), (np.ones(3),))
        return (status or UNSUPPORTED), note
    return UNSUPPORTED, ""


def _is_generator_method(func) -> bool:
    owner = getattr(func, "__qualname__", "").split(".")[0]
    return owner in ("Generator", "RandomState") and \
        getattr(func, "__module__", "").startswith("numpy.random")


def _probe_status(fn: Callable, shape, dtype, *more) -> tuple[str, str]:
    """Trace `fn` on arrays of `shape`/`dtype` (and `more` (shape, dtype) pairs): the
    status is what tracing does.  ("", note) when the probe itself was wrong (a TypeError
    from its arguments): the caller decides from the registry."""
    args = [np.ones(shape, dtype)] + [np.ones(s, d) for s, d in more]
    return _probe_call(fn, tuple(args))


def _probe_call(fn: Callable, args: tuple) -> tuple[str, str]:
    """`_probe_status` on these arguments."""
    from xlanb_runtime.ir import Op
    from ..errors import (CompileError, ConcretizationError, DataDependentShapeError,
                          UnsupportedNumPyFunctionError)
    from ..tracing.tracer import Tracer, trace

    def kept(*xs):                        # traced results, and the inputs (never empty)
        result = fn(*xs)
        leaves = result if isinstance(result, (tuple, list)) else [result]
        return tuple(r for r in leaves if isinstance(r, Tracer)) + \
            tuple(x for x in xs if isinstance(x, Tracer))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = trace(kept, args, name="probe")
    except DataDependentShapeError:
        return DATA_DEPENDENT, _DATA_DEPENDENT_NOTE
    except ConcretizationError:
        return FALLBACK, "needs a value in Python"
    except UnsupportedNumPyFunctionError:
        return UNSUPPORTED, ""
    except CompileError as error:
        return "", type(error).__name__
    except Exception as error:            # noqa: BLE001 (a probe reports, never raises)
        return "", f"fails when traced: {type(error).__name__}"
    ops = {n.op for n in traced.graph.nodes}
    library_ops = {getattr(Op, "LIBRARY_CALL", None)} - {None}
    return (LIBRARY if ops & library_ops else FUSED), ""


_RANDOM_NOTE = "NumPy's own draw at run time, on the same state: NumPy's stream"
_DATA_DEPENDENT_NOTE = ("the output's shape depends on the values: use a mask "
                        "(np.where(mask, x, 0)) or must_compile=False")


def _data_dependent_note(func) -> str:
    """What the error says to use instead (lowering.DATA_DEPENDENT_HINTS)."""
    from ..tracing.lowering import DATA_DEPENDENT_HINTS
    hint = DATA_DEPENDENT_HINTS.get(func)
    if hint is None:
        return _DATA_DEPENDENT_NOTE
    return f"the output's shape depends on the values: {hint[0].lower()}{hint[1:]}, or " \
        "must_compile=False"

def unsupported_note(func) -> str:
    """What the error says to use instead (lowering.UNSUPPORTED_REASONS), or ""."""
    from ..tracing.lowering import UNSUPPORTED_REASONS
    reason = UNSUPPORTED_REASONS.get(func)
    return "" if reason is None else f"{reason[1][0].lower()}{reason[1][1:]}"

# Arguments for the probe calls of random draws (the rest take none).
_RANDOM_ARGS = {
    "beta": (2.0, 3.0), "binomial": (5, 0.5), "chisquare": (2.0,), "dirichlet": ([1.0, 2.0],),
    "f": (2.0, 3.0), "gamma": (2.0,), "geometric": (0.5,), "hypergeometric": (5, 5, 3),
    "logseries": (0.5,), "multinomial": (5, [0.5, 0.5]), "negative_binomial": (5, 0.5),
    "noncentral_chisquare": (2.0, 1.0), "noncentral_f": (2.0, 3.0, 1.0), "pareto": (2.0,),
    "power": (2.0,), "standard_gamma": (2.0,), "standard_t": (3.0,),
    "triangular": (0.0, 0.5, 1.0), "vonmises": (0.0, 1.0), "wald": (1.0, 1.0),
    "weibull": (2.0,), "zipf": (2.0,), "rand": (3,), "randn": (3,), "randint": (0, 5),
    "integers": (0, 5), "choice": (5,), "permutation": (5,), "seed": (0,),
    "shuffle": ("x",),
}


def _user_probe(call: str, *more: str) -> Callable:
    """`def probe(x, *more): return call` as if a user wrote it: from a file that is not
    xlanb's own, so tracing intercepts the calls that only user code gets intercepted
    (np.random draws, np.float32(x)).  A None result returns x."""
    source = (f"def probe({', '.join(('x',) + more)}):\n    r = {call}\n"
              "    return x if r is None else x[0] * 0 + r\n")
    scope: dict = {"np": np}
    exec(compile(source, "support_probe.py", "exec"), scope)    # noqa: S102 (our text)
    return scope["probe"]


def random_status(func) -> tuple[str, str]:
    """A random draw's status: trace a call of it spelled as users spell it (through the
    module, or on a Generator argument) from a file that is not xlanb's own."""
    name = func.__name__
    args = ", ".join("x" if a == "x" else repr(a) for a in _RANDOM_ARGS.get(name, ()))
    on_argument = _is_generator_method(func) and getattr(func, "__self__", None) is None
    call = f"rng.{name}({args})" if on_argument else f"np.random.{name}({args})"
    rng = np.random.RandomState(0) if "RandomState." in func.__qualname__ else \
        np.random.default_rng(0)
    status, note = _probe_call(_user_probe(call, "rng"), (np.ones(3), rng))
    return status or UNSUPPORTED, note or (_RANDOM_NOTE if status in COMPILED else "")

# Example calls for the listed names that never reach the lowering registry: functions
# and classes that take no array (window functions, np.iinfo) or are written in Python on
# top of other NumPy calls (np.polynomial).  Their status is what tracing the call does.
_P = np.polynomial.polynomial
PROBES: dict[str, Callable] = {
    "np.bartlett": lambda x: x * np.bartlett(3),
    "np.blackman": lambda x: x * np.blackman(3),
    "np.hamming": lambda x: x * np.hamming(3),
    "np.hanning": lambda x: x * np.hanning(3),
    "np.kaiser": lambda x: x * np.kaiser(3, 2.0),
    "np.broadcast_shapes": lambda x: np.broadcast_to(x, np.broadcast_shapes(x.shape, (2, 1))),
    "np.isscalar": lambda x: x * np.isscalar(x),
    "np.tril_indices": lambda x: np.outer(x, x)[np.tril_indices(3)],
    "np.triu_indices": lambda x: np.outer(x, x)[np.triu_indices(3)],
    "np.diag_indices": lambda x: np.outer(x, x)[np.diag_indices(3)],
    "np.mask_indices": lambda x: np.outer(x, x)[np.mask_indices(3, np.triu)],
    "np.dtype": lambda x: x.astype(np.dtype("float32")),
    "np.finfo": lambda x: x * np.finfo(x.dtype).eps,
    "np.iinfo": lambda x: x + np.iinfo(np.int32).max,
    "np.ndindex": lambda x: sum(x[i] for i in np.ndindex(x.shape)),
    "np.ndenumerate": _user_probe("sum(v for _, v in np.ndenumerate(x))"),  # skips NEP 18
    "np.nditer": _user_probe("sum(v for v in np.nditer(x))"),             # skips NEP 18
    "np.polynomial.polynomial.Polynomial": lambda x: _P.Polynomial([1.0, 2.0])(x),
    "np.polynomial.polynomial.polyval": lambda x: _P.polyval(x, [1.0, 2.0]),
    "np.polynomial.polynomial.polyadd": _user_probe("np.polynomial.polynomial.polyadd(x, x)"),
    "np.polynomial.polynomial.polysub": _user_probe("np.polynomial.polynomial.polysub(x, x)"),
    "np.polynomial.polynomial.polymul": _user_probe("np.polynomial.polynomial.polymul(x, x)"),
    "np.polynomial.polynomial.polydiv": _user_probe("np.polynomial.polynomial.polydiv(x, x)"),
    "np.polynomial.polynomial.polyint": _user_probe("np.polynomial.polynomial.polyint(x)"),
    # np.polynomial's series functions skip NEP 18: seen only in user code (capture.py)
    "np.polynomial.polyutils.as_series":
        _user_probe("np.polynomial.polyutils.as_series([x])[0]"),
    "np.polynomial.polyutils.trimseq": _user_probe("np.polynomial.polyutils.trimseq(x)"),
    # not dispatched by NEP 18: the tracer sees it only in user code (capture.UNDISPATCHED)
    "np.asarray_chkfinite": _user_probe("np.asarray_chkfinite(x) + 1"),
    "np.lib.stride_tricks.as_strided":
        _user_probe("np.lib.stride_tricks.as_strided(x, (2, 2), (8, 8))"),
    "np.lib.stride_tricks.sliding_window_view":
        lambda x: np.lib.stride_tricks.sliding_window_view(x, 2),
}


def probe(name: str) -> tuple[str, str]:
    """The status of `PROBES[name]`, traced on a float64 array of 3 elements."""
    status, note = _probe_status(PROBES[name], (3,), np.float64)
    if status == DATA_DEPENDENT:              # the function's own advice, where it has one
        note = _data_dependent_note(resolve(name))
    elif status in COMPILED:
        note = NOTES.get(name, note)
    return (status or UNSUPPORTED), note


# -- ufuncs ------------------------------------------------------------------------------------

_PROBE_KINDS = "dlq?"      # float64 first, then int64 (bitwise ufuncs), then bool
_NUMERIC = "?bhilqBHILQefdgFDG"


def _loop_dtypes(ufunc: np.ufunc, chars: str = _PROBE_KINDS) -> list[np.dtype] | None:
    """The input dtypes of the ufunc's first loop on `chars` (all inputs of one kind, else
    the first all-numeric loop that has one: ldexp's float64, int64)."""
    loops = [types.split("->")[0] for types in ufunc.types]
    for char in chars:
        for ins in loops:
            if all(c == char for c in ins):
                return [np.dtype(c) for c in ins]
    for char in chars:
        for ins in loops:
            if char in ins and all(c in _NUMERIC for c in ins):
                return [np.dtype(c) for c in ins]
    return None


def _probe_shapes(ufunc: np.ufunc) -> list[tuple[int, ...]]:
    """Operand shapes for a probe call: (3,) each, or for a generalized ufunc its core
    dimensions at 3 each (np.vecmat's (n),(n,m) takes a vector and a matrix)."""
    from ..tracing.lowering.library import core_dimensions
    if ufunc.signature is None:
        return [(3,)] * ufunc.nin
    return [(3,) * len(core) for core in core_dimensions(ufunc)]


def ufunc_status(ufunc: np.ufunc) -> tuple[str, str]:
    dtypes = _loop_dtypes(ufunc)
    if dtypes is None:                        # datetime-only ufuncs (isnat): probe on dates
        if not _loop_dtypes(ufunc, "Mm"):
            return UNSUPPORTED, unsupported_note(ufunc) or "no numeric loop"
        dtypes = [np.dtype("M8[s]")] * ufunc.nin
    shapes = _probe_shapes(ufunc)
    status, note = _probe_status(lambda *xs: ufunc(*xs), shapes[0], dtypes[0],
                                 *zip(shapes[1:], dtypes[1:]))
    if status in COMPILED and _loop_dtypes(ufunc, "D"):
        complex_status, _ = _probe_status(lambda *xs: ufunc(*xs), shapes[0], np.complex128,
                                          *[(s, np.complex128) for s in shapes[1:]])
        if complex_status not in COMPILED:
            note = f"complex inputs: {complex_status}"
    return status or UNSUPPORTED, note


_UFUNC_METHODS = {
    "reduce": lambda u: lambda x: u.reduce(x),
    "accumulate": lambda u: lambda x: u.accumulate(x),
    "outer": lambda u: lambda x: u.outer(x, x),
    "at": lambda u: lambda x: u.at(x, np.array([0, 1]), 1),
    "reduceat": lambda u: lambda x: u.reduceat(x, [0, 2]),
}


def ufunc_method_entries(numba: set[str]) -> list[Entry]:
    """One row per ufunc method: the best status over the binary ufuncs, and which."""
    binary = sorted({u for u in _ufuncs().values() if u.nin == 2 and u.nout == 1
                     and _loop_dtypes(u) is not None}, key=lambda u: u.__name__)
    entries = []
    for method, make in _UFUNC_METHODS.items():
        by_status: dict[str, list[str]] = {}
        for ufunc in binary:
            dtype = _loop_dtypes(ufunc)[0]
            status, _ = _probe_status(make(ufunc), (4,), dtype)
            by_status.setdefault(status or UNSUPPORTED, []).append(ufunc.__name__)
        best = next((s for s in STATUSES if s in by_status), UNSUPPORTED)
        note = ""
        if best in COMPILED:
            done = sorted(by_status.get(FUSED, []) + by_status.get(LIBRARY, []))
            note = f"{len(done)} of {len(binary)} binary ufuncs: {', '.join(done)}"
            if by_status.get(FUSED) and by_status.get(LIBRARY):     # say which fuse
                note += f" (fused: {', '.join(sorted(by_status[FUSED]))}; the others " \
                    "library calls)"
        name = f"np.ufunc.{method}"
        entries.append(Entry(name, "ufunc method", best, note, name in numba))
    return entries


@functools.lru_cache(maxsize=None)
def _ufuncs() -> dict[str, np.ufunc]:
    return {f"np.{n}": getattr(np, n) for n in dir(np)
            if not n.startswith("_") and isinstance(getattr(np, n), np.ufunc)}


# -- ndarray members ---------------------------------------------------------------------------

# Arguments for ndarray methods that need some (the probe calls the rest with none).
_MEMBER_ARGS = {"reshape": ((4, 3),), "astype": (np.float32,), "view": (np.int64,),
                "take": ([0],), "repeat": (2,), "fill": (0.0,), "searchsorted": (0.5,),
                "partition": (1,), "argpartition": (1,), "put": ([0], 1.0),
                "choose": ([0, 1],), "compress": ([True, False, True],),
                "getfield": (np.float64,), "setfield": (1.0, np.float64),
                "resize": ((4, 3),), "__contains__": (2.0,), "swapaxes": (0, 1), "item": (1,),
                "dot": lambda x: (x.T,)}
# The limits of a compiled name, in the table's note.
NOTES = {
    "np.bincount": "with `minlength=` above every value (a run-time check); without it the "
                   "length depends on the values (DataDependentShapeError)",
    "np.linalg.lstsq": "for a matrix of full rank where it has more rows than columns "
                       "(NumPy's residuals are empty otherwise: a run-time error)",
    "ndarray.tobytes": "NumPy's bytes where the function returns them; any other use needs "
                       "the values (ConcretizationError under jit)",
    "ndarray.flags": "the argument's flags: the cache keys on the flags read; computed n-D "
                     "arrays (layout unknown) raise",
    "ndarray.strides": "in bytes, as NumPy's; computed n-D arrays (layout unknown) raise",
    "np.lib.stride_tricks.as_strided": "a view of x's own elements; writes through it "
                                       "when they are distinct; n-D computed x raises",
    "np.polynomial.polynomial.Polynomial": "construction (coefficients traced or not) and "
                                           "evaluation; arithmetic of two trims zeros "
                                           "(data-dependent)",
}
# Methods probed on something made from the (3, 4) float array: a 1-D array for
# searchsorted, indices for choose.
_MEMBER_RECEIVER = {"searchsorted": lambda x: x[0],
                    "choose": lambda x: (x > 1).astype(np.intp)}


def member_status(name: str) -> tuple[str, str]:
    """An ndarray method (called as `_MEMBER_ARGS` says) or attribute on a traced array."""
    attr = getattr(np.ndarray, name)
    args = _MEMBER_ARGS.get(name, ())
    if callable(attr):
        status, note = _probe_status(
            lambda x: getattr(_MEMBER_RECEIVER.get(name, lambda y: y)(x), name)(
                *(args(x) if callable(args) else args)), (3, 4), np.float64)
    else:
        status, note = _probe_status(lambda x: getattr(x, name), (3, 4), np.float64)
    if (status or UNSUPPORTED) == UNSUPPORTED:
        note = unsupported_note(attr) or note
    elif status in COMPILED:
        note = NOTES.get(f"ndarray.{name}", note)
    return (status or UNSUPPORTED), note


# -- the table ---------------------------------------------------------------------------------

def _public_functions() -> dict[str, Any]:
    """np/np.linalg/np.fft functions that dispatch through __array_function__."""
    found: dict[str, Any] = {}
    for module_name in _MODULES:
        module = importlib.import_module(module_name)
        prefix = "np" + module_name[len("numpy"):]
        for name in dir(module):
            if name.startswith("_"):
                continue
            obj = getattr(module, name)
            if type(obj).__name__ == "_ArrayFunctionDispatcher":
                found[f"{prefix}.{name}"] = obj
    return found


def _registered_functions() -> dict[str, Any]:
    from ..tracing.lowering import DATA_DEPENDENT, FUNCTIONS, public_name
    found = {}
    for func in list(FUNCTIONS) + list(DATA_DEPENDENT):
        name = public_name(func)
        if name.startswith("np.") and resolve(name) is func:
            found[name] = func
    return found


def support_table() -> list[Entry]:
    """Every entry, sorted by kind then name (probed once per process: each status is
    found by tracing or compiling a call, which takes a few minutes for all of them)."""
    return list(_support_table())


@functools.lru_cache(maxsize=1)
def _support_table() -> tuple[Entry, ...]:
    numba = set(numba_names())
    entries: dict[str, Entry] = {}
    ufuncs = _ufuncs()
    for name, ufunc in ufuncs.items():
        status, note = ufunc_status(ufunc)
        if ufunc.__name__ != name[3:]:
            note = "; ".join(filter(None, [f"alias of np.{ufunc.__name__}", note]))
        entries[name] = Entry(name, "ufunc", status, note, name in numba)
    for entry in ufunc_method_entries(numba):
        entries[entry.name] = entry
    functions = {**_public_functions(), **_registered_functions()}
    for name, func in functions.items():
        if name not in entries:
            status, note = probe(name) if name in PROBES else function_status(func)
            note = NOTES.get(name, note)
            entries[name] = Entry(name, "function", status, note, name in numba)
    for name in PROBES:
        if name not in entries and resolve(name) is not None:
            status, note = probe(name)
            kind = "other" if isinstance(resolve(name), type) else "function"
            entries[name] = Entry(name, kind, status, note, name in numba)
    for name in sorted(n for n in dir(np.ndarray) if not n.startswith("_")):
        status, note = member_status(name)
        entries[f"ndarray.{name}"] = Entry(f"ndarray.{name}", "ndarray member", status, note,
                                           f"ndarray.{name}" in numba)
    for name in sorted(numba - set(entries)):
        obj = resolve(name)
        if obj is None:
            entries[name] = Entry(name, "other", ABSENT, f"removed from NumPy {_np_version()}"
                                  , True)
            continue
        kind = "function" if callable(obj) and not isinstance(obj, type) else "other"
        if name.startswith("ndarray."):
            status, note = member_status(name[len("ndarray."):])
            kind = "ndarray member"
        elif name in PROBES:
            status, note = probe(name)
        else:
            status, note = function_status(obj)
        entries[name] = Entry(name, kind, status, note, True)
    return tuple(sorted(entries.values(), key=lambda e: (KINDS.index(e.kind), e.name)))


def _np_version() -> str:
    return ".".join(np.__version__.split(".")[:2])


def counts(entries: list[Entry], numba_only: bool = False) -> dict[str, int]:
    """Entries per status (names absent from this NumPy are left out)."""
    chosen = [e for e in entries if e.status != ABSENT and (e.numba or not numba_only)]
    result = {status: sum(e.status == status for e in chosen) for status in STATUSES}
    result["total"] = len(chosen)
    result["compiled"] = result[FUSED] + result[LIBRARY]
    return result


def summary_lines(entries: list[Entry]) -> list[str]:
    numba, every = counts(entries, numba_only=True), counts(entries)
    absent = sum(e.status == ABSENT for e in entries)
    return [
        f"Numba's documented NumPy support: {numba['total']} names in NumPy {_np_version()}"
        f" ({absent} more are no longer in NumPy); Numba compiles all {numba['total']}.",
        f"xlanb compiles {numba['compiled']} of them: {numba[FUSED]} fused, "
        f"{numba[LIBRARY]} as library calls; {numba[DATA_DEPENDENT]} have data-dependent "
        f"shapes (a named error under jit by design), {numba[FALLBACK]} fallback only, "
        f"{numba[UNSUPPORTED]} unsupported.",
        f"Over all {every['total']} names in the table: {every['compiled']} compiled "
        f"({every[FUSED]} fused, {every[LIBRARY]} library calls), {every[DATA_DEPENDENT]} "
        f"data-dependent shapes, {every[FALLBACK]} fallback only, "
        f"{every[UNSUPPORTED]} unsupported.",
    ]


def format_text(entries: list[Entry], numba_only: bool = False,
                status: str | None = None) -> str:
    rows = [e for e in entries if (e.numba or not numba_only)
            and (status is None or e.status == status)]
    width = max((len(e.name) for e in rows), default=10) + 2
    lines = summary_lines(entries) + [""]
    lines.append(f"{'name':<{width}}{'status':<22}{'numba':<7}note")
    for e in rows:
        lines.append(f"{e.name:<{width}}{e.status:<22}{'yes' if e.numba else '':<7}{e.note}"
                     .rstrip())
    return "\n".join(lines) + "\n"


_SECTIONS = {"function": "Functions", "ufunc": "Ufuncs", "ufunc method": "Ufunc methods",
             "ndarray member": "ndarray methods and attributes",
             "other": "Classes and other names from Numba's list"}


def format_markdown(entries: list[Entry]) -> str:
    numba, every = counts(entries, numba_only=True), counts(entries)
    out = [
        "# NumPy support",
        "",
        "<!-- Generated by `python -m xlanb support --markdown > docs/numpy_support.md`; "
        "do not edit. tests/frontend/test_support_table.py checks it is current. -->",
        "",
        f"What `xlanb.jit` does with each NumPy name it knows about (NumPy {_np_version()}), "
        "derived from xlanb's lowering registry, beside Numba's documented NumPy support "
        "(the names Numba compiles in nopython mode; the list and its source are in "
        "`xlanb/support/numba_numpy.txt`).",
        "",
        "| status | meaning | in Numba's list | all names |",
        "|---|---|---:|---:|",
    ]
    meaning = {
        FUSED: "lowered to IR ops that fuse into compiled kernels",
        LIBRARY: "a library call (NumPy/LAPACK) inside the compiled program",
        DATA_DEPENDENT: "never compiled by design: the result's shape depends on the "
                        "values; `jit` raises DataDependentShapeError saying what to use "
                        "instead, `jit(f, must_compile=False)` runs it with NumPy",
        FALLBACK: "never compiled by design (a value needed in Python): `jit` raises a "
                  "named error, `jit(f, must_compile=False)` runs it with NumPy",
        UNSUPPORTED: "no lowering yet: `jit` raises UnsupportedNumPyFunctionError, "
                     "`jit(f, must_compile=False)` runs it with NumPy",
    }
    for status in STATUSES:
        out.append(f"| {status} | {meaning[status]} | {numba[status]} | {every[status]} |")
    out.append(f"| **compiled** | fused or library call | **{numba['compiled']}** of "
               f"{numba['total']} | {every['compiled']} of {every['total']} |")
    out += ["", *(f"- {line}" for line in summary_lines(entries)), ""]
    for kind in KINDS:
        rows = [e for e in entries if e.kind == kind]
        if not rows:
            continue
        out += [f"## {_SECTIONS[kind]}", "", "| name | status | in Numba's list | note |",
                "|---|---|---|---|"]
        for e in rows:
            note = e.note.replace("|", "\\|")
            out.append(f"| `{e.name}` | {e.status} | {'yes' if e.numba else ''} | {note} |")
        out.append("")
    return "\n".join(out)


def add_arguments(parser) -> None:
    """The options of `python -m xlanb support`."""
    parser.add_argument("--markdown", action="store_true",
                        help="the Markdown copy kept in docs/numpy_support.md")
    parser.add_argument("--numba", action="store_true", help="only Numba's listed names")
    parser.add_argument("--status", choices=STATUSES + (ABSENT,), help="only this status")


def run(args) -> int:
    entries = support_table()
    text = format_markdown(entries) if args.markdown else \
        format_text(entries, args.numba, args.status)
    print(text, end="")
    return 0
