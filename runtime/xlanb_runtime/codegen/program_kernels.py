"""A program's kernels loaded from its own record: no module import, no per-kernel cache entry.

A warm start loaded each kernel of a program from its own entry of the kernel cache
(cache.py): import the kernel's module (which builds a caching Numba dispatcher), take the
entry's lock, read and hash its Numba files against the manifest, read Numba's index, then
its data file.  For W5's 19 kernel bindings that was about 55 ms CPU of bookkeeping around
the part that matters, the object code loaded into LLVM (quiet machine; 19 libraries).

So the program record (program_cache.py) also keeps each kernel's compiled overload, as
Numba's cache keeps it (`CompileResult._reduce`, pickled by Numba's serializer), and a
warm start rebuilds them from there: the record's SHA-256 already vouches for every byte,
and its key names the toolchain and the runtime, so none of the per-entry checks is
needed.  The kernels' object code is loaded as one library (cached_load.shared_library:
one LLVM finalize instead of one per kernel; W5's library rebuilds went from about 20 to
2-4 ms CPU).  Each overload is put in a `RecordedKernel`: a Numba CPU dispatcher over a stub
function with the kernel's argument names, holding that one overload.  Calls dispatch by
argument types in Numba's C code as before; a call with other types (which a driver never
makes: its kernels' signatures are the types it passes) loads the real kernel from the
kernel cache and dispatches there, so no call ever runs code compiled for other types.

`serialize` answers None where a kernel cannot go this way (an overload Numba would not
cache, this Numba lacking the internals used), and `load_all` None for every kernel if one
does not rebuild: the caller then loads them from the kernel cache.
"""
from __future__ import annotations

import pickle
import sys
from typing import Callable

from numba.core import compiler, funcdesc, serialize as numba_serialize, sigutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher

from . import cache, cached_load, cached_nrt


def serialize(dispatcher, signature: tuple) -> bytes | None:
    """`dispatcher`'s overload for `signature` as Numba's cache pickles it, or None: the
    kernel entry's data file where its manifest vouches for it (a library compiled in this
    process has handed its object code to LLVM by now, so it cannot serialize itself),
    else the overload serialized here."""
    data = cache.entry_data(dispatcher, signature)
    if data is not None:
        return data
    args, _ = sigutils.normalize_signature(signature)
    cres = getattr(dispatcher, "overloads", {}).get(tuple(args))
    if cres is None or cres.objectmode or cres.lifted or \
            getattr(cres.library, "has_dynamic_globals", True):
        return None
    try:
        with global_compiler_lock:
            return numba_serialize.dumps(cres._reduce())
    except Exception:                      # noqa: BLE001 - then the kernel cache serves it
        return None


def host() -> str:
    """The machine the object code is for (Numba's `magic_tuple`: target triple, CPU name
    and features, which Numba's own cache keys hold too): a record copied to another CPU
    must not hand it code for instructions it may lack."""
    from numba.core.registry import cpu_target
    return repr(cpu_target.target_context.codegen().magic_tuple())


def load_all(kernels: list[tuple[bytes, Callable]], name: str) -> list:
    """The kernels whose overloads `serialize` wrote, each `(state, fallback)` (`fallback()`:
    the real dispatcher, for calls of other types), their machine code in one library
    named `name`: a RecordedKernel each, or None for each where they do not rebuild here
    (then none is loaded, and the caller loads them from the kernel cache)."""
    from numba.core.registry import cpu_target
    context = cpu_target.target_context
    codegen = context.codegen()
    try:
        with global_compiler_lock:
            cached_nrt.initialize(context)     # the runtime the object code calls into
            with cached_load.lazy_environments():
                payloads = [pickle.loads(state) for state, _ in kernels]
            if not all(payload[0][1] == "object" for payload in payloads):
                return [None] * len(kernels)
            for payload in payloads:      # before any code loads: a parallel kernel's
                for init in payload[7] or ():   # (launching the threading layer) defines
                    init()                # symbols its object code links against
            library = cached_load.shared_library(
                codegen, name, [payload[0][2][0] for payload in payloads])
            if library is None:
                return [None] * len(kernels)
            with cached_load.unserializing_as(codegen, library):
                return [RecordedKernel(_rebuild(context, payload), fallback)
                        for payload, (_, fallback) in zip(payloads, kernels)]
    except Exception:                      # noqa: BLE001 - then the kernel cache serves it
        return [None] * len(kernels)


def _rebuild(context, payload: tuple):
    """`CompileResult._rebuild`, with the kernel's module not looked up: Numba imports it to
    name the entry point's module, and a kernel module that is not imported (the point
    here) was a failed search of every `sys.path` entry, about 1 ms a kernel.  The entry
    point is named after Numba's dynamic module instead; nothing else reads it."""
    fndesc = payload[1]
    modname = fndesc.modname
    if modname not in sys.modules:
        fndesc.modname = funcdesc._dynamic_modname
    try:
        return compiler.CompileResult._rebuild(context, *payload)
    finally:
        fndesc.modname = modname


_stubs: dict[tuple, object] = {}


def _stub(argnames: tuple[str, ...]):
    """A function with these argument names that is never run (the dispatcher's `py_func`:
    its signature folds arguments; compiles go to the real kernel)."""
    stub = _stubs.get(argnames)
    if stub is None:
        namespace: dict = {}
        exec(f"def kernel({', '.join(argnames)}):\n    raise NotImplementedError\n",
             namespace)
        stub = _stubs[argnames] = namespace["kernel"]
    return stub


class RecordedKernel(CPUDispatcher):
    """A dispatcher holding one overload rebuilt from a program record; a call with other
    argument types compiles nothing from its stub: the real kernel (`fallback()`, loaded
    from or compiled into the kernel cache) compiles for them and runs."""

    def __init__(self, cres, fallback):
        super().__init__(_stub(tuple(cres.fndesc.args)), targetoptions={"nopython": True})
        self._fallback, self._real = fallback, None
        cres.target_context.insert_user_function(cres.entry_point, cres.fndesc,
                                                 [cres.library])
        self.add_overload(cres)

    def _compile_for_args(self, *args, **kws):
        if self._real is None:
            self._real = self._fallback()
        return self._real._compile_for_args(*args, **kws)

    def compile(self, sig):
        args, _ = sigutils.normalize_signature(sig)
        existing = self.overloads.get(tuple(args))
        if existing is not None:
            return existing.entry_point
        if self._real is None:
            self._real = self._fallback()
        return self._real.compile(sig)
