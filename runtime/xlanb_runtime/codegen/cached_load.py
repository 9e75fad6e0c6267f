"""Loading a kernel from Numba's disk cache without Numba's first-compile set-up.

`Dispatcher.compile` refreshes its target context before it even looks in the cache: the
first call in a process imports every implementation registry Numba has (array math,
linalg, which imports SciPy's linalg, typed containers, random, ...).  That is 0.2-0.5 s
of a warm start here, and it only serves typing and lowering: a cached overload is object
code plus pickled metadata, rebuilt from the code generator alone.  So a checked cache
entry (codegen/cache.py) is loaded the way `Dispatcher.compile` loads it, minus the
refresh: Numba's runtime (NRT), which the object code links against, is initialized
first, and anything the refresh would have provided is only needed by a compile, which
still goes through `Dispatcher.compile` (a miss, or a call with other argument types).

The same goes for the Environments pickled with the object code.  Numba rebuilds each
one from the globals of the module its function came from and imports that module to do
so: every kernel that allocates (`np.empty`, `np.zeros`) carries Environments of
`numba.np.arrayobj`, whose import (with the unicode and hashing modules it pulls in) was
the largest single part of a warm W5 start.  An Environment holds a function's globals for
object mode and its constants for nopython code; our kernels are nopython, so one with no
constants never reads the globals.  While a kernel loads, such an Environment of a
module not yet imported is rebuilt over its module's name only (`_rebuild_env`); any
other goes through Numba's own.

Two more parts of Numba's load are paid once, or only when needed:
- the NRT, which Numba compiles in every process, is loaded from the cache too
  (cached_nrt.py);
- an overload's bitcode (its module for linking into later compiles) is parsed only when
  something links it, not on load: Numba parsed it just to list the module's defined
  symbols, which the object code's symbol table gives as well (object_symbols.py).  Of a
  warm W5 start's 14 kernel loads this was about 40%.

This leans on Numba internals (`_cache._load_overload`, `add_overload`,
`environment._rebuild_env`, `CPUCodeLibrary`'s object-code fields): where they are missing,
`load` answers False and the caller compiles as before, or that part loads Numba's way.
"""
from __future__ import annotations

import contextlib
import sys

from numba.core import environment, sigutils
from numba.core.compiler_lock import global_compiler_lock

from . import cached_nrt
from .object_symbols import defined_symbols

_numba_rebuild_env = getattr(environment, "_rebuild_env", None)


def _rebuild_env(modname, consts, env_name):
    """`environment._rebuild_env` for nopython kernels: an Environment with no constants
    of a module not imported yet is rebuilt without importing it (its globals are read
    only by object-mode code)."""
    env = environment.lookup_environment(env_name)
    if env is not None or consts or modname in sys.modules:
        return env or _numba_rebuild_env(modname, consts, env_name)
    env = environment.Environment({"__name__": modname})
    env.env_name = env_name
    environment.Environment._memo[env_name] = env
    return env


@contextlib.contextmanager
def lazy_environments():
    """Unpickling under this (and Numba's compiler lock) rebuilds Environments with
    `_rebuild_env`: pickle looks the function up by its module and name at load time."""
    if _numba_rebuild_env is None:
        yield
        return
    environment._rebuild_env = _rebuild_env
    try:
        yield
    finally:
        environment._rebuild_env = _numba_rebuild_env


class _LazyLinking:
    """Mixed into a loaded library's class: its module for linking (`_shared_module`) is
    parsed from the stored bitcode the first time Numba asks for it."""

    _bitcode: bytes | None = None

    @property
    def _shared_module(self):
        module = self.__dict__.get("_shared_module")
        if module is None and self._bitcode is not None:
            from llvmlite import binding as ll
            module = self.__dict__["_shared_module"] = ll.parse_bitcode(self._bitcode)
            self._bitcode = None
        return module

    @_shared_module.setter
    def _shared_module(self, module):
        self.__dict__["_shared_module"] = module


_lazy_classes: dict[type, type] = {}


def _unserialize(codegen, state):
    """`codegen.unserialize_library(state)`, with an object-code library's bitcode parsed
    on first use and its defined symbols read from the object code."""
    name, kind, data = state
    symbols = defined_symbols(data[0]) if kind == "object" else None
    if symbols is None:
        return type(codegen).unserialize_library(codegen, state)
    object_code, bitcode = data
    library = codegen.create_library(name)
    base = type(library)
    lazy = _lazy_classes.get(base)
    if lazy is None:
        lazy = _lazy_classes[base] = type(f"Lazy{base.__name__}", (_LazyLinking, base), {})
    library.__class__ = lazy
    library._bitcode = bitcode
    library.enable_object_caching()       # what Numba's `_unserialize` does, in its order
    library._set_compiled_object(object_code)
    library._finalize_final_module()
    codegen._engine._defined_symbols |= symbols
    return library


def shared_library(codegen, name: str, object_codes: list[bytes]):
    """One library holding the machine code of several object-code libraries, loaded into
    Numba's JIT in one go (each object added as is, one relocation and finalize for all),
    or None where one of them is not ELF64 object code this can read.  It has no module for
    linking: nothing compiled later may call into it (program_kernels.py's kernels are
    called from Python only)."""
    if not object_codes or not hasattr(codegen, "_engine") or \
            not hasattr(codegen._engine, "_ee"):
        return None
    symbols = [defined_symbols(code) for code in object_codes]
    if any(found is None for found in symbols):
        return None
    from llvmlite.binding import object_file
    library = codegen.create_library(name)
    library.enable_object_caching()
    library._set_compiled_object(object_codes[0])
    for code in object_codes[1:]:           # loaded with the first, by its finalize
        codegen._engine._ee.add_object_file(object_file.ObjectFileRef.from_data(code))
    library._finalize_final_module()
    for found in symbols:
        codegen._engine._defined_symbols |= found
    return library


@contextlib.contextmanager
def unserializing_as(codegen, library):
    """Under this (and Numba's compiler lock), Numba's unserializing of a library gives
    `library` (one `shared_library` serving each of its kernels' overloads)."""
    codegen.unserialize_library = lambda state: library
    try:
        yield
    finally:
        del codegen.unserialize_library


@contextlib.contextmanager
def _lazy_linking(codegen):
    """Unserializing under this (and Numba's compiler lock) goes through `_unserialize`."""
    if not all(hasattr(codegen, name) for name in ("_engine", "create_library")) or \
            not hasattr(getattr(codegen, "_engine"), "_defined_symbols"):
        yield
        return
    codegen.unserialize_library = lambda state: _unserialize(codegen, state)
    try:
        yield
    finally:
        del codegen.unserialize_library


@contextlib.contextmanager
def unpickling(context):
    """Unpickle an overload's state under this (and Numba's compiler lock): its
    Environments and its library load as `load` loads them."""
    with lazy_environments(), _lazy_linking(context.codegen()):
        yield



def load(dispatcher, signature: tuple) -> bool:
    """Add `signature`'s overload to `dispatcher` from Numba's cache: True if it is there
    now (loaded, or compiled before in this process), False if the cache has no entry for
    it (or this Numba lacks the internals used; then `dispatcher.compile` does it all)."""
    cache = getattr(dispatcher, "_cache", None)
    load_overload = getattr(cache, "_load_overload", None)
    if load_overload is None or not hasattr(dispatcher, "add_overload"):
        return False
    with global_compiler_lock:
        args, _ = sigutils.normalize_signature(signature)
        if tuple(args) in dispatcher.overloads:
            return True
        context = dispatcher.targetctx
        cached_nrt.initialize(context)     # the runtime the object code calls into
        with unpickling(context):
            compiled = load_overload(signature, context)
        if compiled is None:
            return False
        dispatcher._cache_hits[signature] += 1
        if not compiled.objectmode:
            context.insert_user_function(compiled.entry_point, compiled.fndesc,
                                         [compiled.library])
        dispatcher.add_overload(compiled)
        return True
