"""Rolled loops run inside one Numba function, not one Python call per trip.

A `loop` node's body is compiled as a program of its own (compiler._compile_loop_bodies),
and by default `executable.loop_runner` calls the body's Python driver `trips` times.  A
driver call costs microseconds (a Numba dispatch per kernel, argument checks, the arena):
a loop over array elements whose trips do a few scalar ops (`trace += np.tanh(a[i, i])`
over 2000 trips: 3 scalar kernels per trip) then ran 2-3x slower than NumPy itself.

When every kernel of the body is a Numba kernel (no library call, matmul, nested loop or
collective), the body's driver is written again in the subset of Python Numba compiles
(`DriverBuilder(..., for_numba=True)`: buffers from `np.empty`, no arena, no layout checks)
and wrapped in the trip loop:

    def loop(trips, p0, p1, p2, p3):
        for _trip in range(trips):
            b1 = np.empty((1,), np.int64)       # rank 0 is shape (1,) throughout
            _k3(p0, b1, _c2)                     # fusion.0
            ...
            p0, p1, p2 = b1, b2, b3               # the carried state, one trip on
        return (b1, b2, b3)

The kernels are called from compiled code (Numba calls their native entry points
directly).  Each trip's buffers are fresh arrays, so a trip never writes what the state
it reads lives in, except a region update that buffers.py proved safe in place.  The
wrapper makes the inputs contiguous and writeable once, before the
first trip: the function is compiled for C-contiguous writeable arrays, as the trips make
the state (a read-only or strided first value would not unify with them).  A carried
array the body updates in place (`x[i] = v` over a buffer nothing reads afterwards,
buffers.py) is copied once there too, and then each trip writes only its region.

Compiling the loop function costs more than its kernels did (Numba links every kernel's
code into it and generates machine code for the whole again: 1-6 s a loop on npbench's
seidel_2d), so it is cached as kernels are (codegen/cache.py): the source becomes a
canonical kernel module (`loop_module`) whose globals import each kernel from its own
cache entry's module, by name (the hash of the kernel's source), and rebuild each
constant from its bytes:

    _c2 = np.frombuffer(bytes.fromhex("cdccccccccccec3f"), "<f8")[0]   # 0.9
    _k3 = kernel_module('xlanb_kernel_1797e823d8778801fc2c').kernel

    @numba.njit(cache=True, nogil=True)
    def kernel(trips, p0, p1):
        for _trip in range(trips):
            ...

So the module's name, a hash of that text, changes with any kernel it calls (Numba checks
only the loop's own source file), and `compiler.load_kernel` gives it the kernels' whole
life: loops with one module share one dispatcher in a process (seidel_2d's 21 loops have
a few sources), and another process loads the entry checked under the cache's rules
(manifest, lock, a failed compile leaves it intact) instead of compiling.  A binding that
is neither (a kernel not from this cache directory's entry, an array not laid out as
bound) leaves the loop compiled in memory, as before.
"""
from __future__ import annotations

from typing import Callable

import numba
import numpy as np

from . import cache
from ..ir import Op
from ..ir.graph import trip_count
from ..ir.interpret import is_token


def numba_compilable(body) -> bool:
    """Whether the body executable's driver can run inside Numba: only Numba kernels,
    views and loop results (no library call, matmul, nested loop or collective)."""
    if getattr(body, "over_budget", "") or "_check_nans(" in body.driver_source or \
            "_trace(" in body.driver_source:
        return False            # --xla_debug_nans and --xla_trace_to act on every trip
    plan, generated = body.plan, body.generated
    for kernel in plan.kernels:
        if kernel.kind == "library":
            if kernel.root.op is not Op.RESHAPE or is_token(kernel.root):
                return False
            continue
        gen = generated.get(kernel.name)
        if gen is None or gen.matmul is not None or gen.dot_acc or not gen.has_function:
            return False
    return bool(plan.kernels)


def compiled_loop(body, trips: int, carried: int, dynamic: bool = False) -> Callable | None:
    """The loop as one Numba function (called like `loop_runner`'s), or None where the
    body cannot run inside Numba; `dynamic`: the trip count is the last input's value."""
    from ..executable import DriverBuilder, donated_params
    if not numba_compilable(body):
        return None
    builder = DriverBuilder(body.plan, body.buffers, body.generated, body.dispatchers,
                            for_numba=True)
    source, env = builder.build_loop(carried)
    graph = body.plan.graph
    signature = (numba.types.int64,) + tuple(      # rank 0 as shape (1,): buffer_shape
        numba.types.Array(numba.from_dtype(p.dtype), max(p.ndim, 1), "C")
        for p in graph.params)
    scalars = tuple(out.ndim == 0 for out in graph.outputs)
    module = loop_module(source, env)
    compiled_before = compile_count()
    if module is not None:          # in-process memo and disk cache, as for kernels
        from ..compiler import load_kernel
        loop = load_kernel(module, signature)
    else:
        exec(compile(source, f"<xlanb loop {body.plan.graph.name}>", "exec"), env)
        loop = numba.njit(signature, nogil=True)(env["loop"])   # compiles now
    how = "shared with an earlier loop" if id(loop) in _seen else None
    _seen.setdefault(id(loop), loop)
    how = how or ("compiled" if compile_count() > compiled_before else "loaded from the cache")

    owned = donated_params(body)

    def run(*inputs):
        count = trip_count(inputs[-1]) if dynamic else trips
        outputs = loop(count, *(_fresh_layout(x, i in owned) for i, x in enumerate(inputs)))
        return tuple(o.reshape(()) if scalar else o for o, scalar in zip(outputs, scalars))
    run.source, run.donated, run.dispatcher, run.how = module or source, owned, loop, how
    return run


_seen: dict[int, object] = {}      # every loop dispatcher of this process, by id


def compile_count() -> int:
    """How many loop functions this process compiled (not loaded from the disk cache,
    nor reused from an earlier loop with the same module)."""
    return sum(sum(d.stats.cache_misses.values()) for d in _seen.values())


def loop_module(source: str, env: dict) -> str | None:
    """The loop's source as a canonical kernel module (codegen/cache.py) whose globals
    are what `env` binds: each kernel imported from its cache entry's module, each
    constant written out by value.  None where a binding is neither (then the loop
    compiles in memory only)."""
    lines = [_MODULE_HEADER]
    for name, value in env.items():
        if name in ("np", "_empty", "__builtins__"):
            continue
        line = _kernel_binding(value) if callable(value) else _value_binding(value)
        if line is None:
            return None
        lines.append(f"{name} = {line}")
    module = "\n".join(lines) + "\n\n" + _DECORATOR + "\n" + source
    return cache.canonical_kernel(module, "loop")


_MODULE_HEADER = """\
# xlanb compiled loop (codegen/compiled_loop.py)
import inspect
import numba
import numpy as np
from xlanb_runtime.codegen.cache import kernel_module
_empty = inspect.unwrap(np.empty)"""
_DECORATOR = "@numba.njit(cache=True, nogil=True)"


def _kernel_binding(dispatcher) -> str | None:
    """`kernel_module("xlanb_kernel_...").kernel`: the kernel a loop calls, by its cache
    entry; None unless that entry's module is where `dispatcher` comes from."""
    name = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    if not name.startswith("xlanb_kernel_"):
        return None
    try:
        same = getattr(cache.kernel_module(name), cache.KERNEL_FUNCTION, None) is dispatcher
    except (OSError, ImportError, SyntaxError):
        return None
    return f"kernel_module({name!r}).{cache.KERNEL_FUNCTION}" if same else None


def _value_binding(value) -> str | None:
    """A constant as the expression that rebuilds it bit for bit (a C-contiguous,
    writeable array as bound, or a NumPy scalar), its value in a comment."""
    if isinstance(value, np.generic):
        array, index = np.asarray(value).reshape(1), "[0]"
    elif isinstance(value, np.ndarray) and value.flags.c_contiguous and \
            value.flags.writeable and value.dtype.kind in "biufc":
        array, index = value, f".reshape({value.shape!r}).copy()"
    else:
        return None
    if array.dtype.kind not in "biufc":
        return None
    data = np.ascontiguousarray(array).tobytes().hex()
    shown = np.array2string(np.asarray(value), threshold=4).replace("\n", " ")
    return f'np.frombuffer(bytes.fromhex("{data}"), "{array.dtype.str}"){index}   # {shown}'


def _fresh_layout(x: np.ndarray, written: bool) -> np.ndarray:
    """An input as the compiled signature takes it: C-contiguous and writeable, as the
    state a trip makes is (a copy where it is not, or where the body writes it in place:
    a donated parameter, buffers.py), and rank 0 as shape (1,), as inside the loop."""
    if not (x.flags.c_contiguous and x.flags.writeable and not written):
        x = np.array(x, order="C", copy=True)
    return x.reshape(1) if x.ndim == 0 else x
