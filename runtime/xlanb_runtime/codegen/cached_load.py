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

This leans on Numba internals (`_cache._load_overload`, `add_overload`): where they are
missing, `load` answers False and the caller compiles as before.
"""
from __future__ import annotations

from numba.core import sigutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.runtime import rtsys


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
        rtsys.initialize(context)          # the runtime the object code calls into
        compiled = load_overload(signature, context)
        if compiled is None:
            return False
        dispatcher._cache_hits[signature] += 1
        if not compiled.objectmode:
            context.insert_user_function(compiled.entry_point, compiled.fndesc,
                                         [compiled.library])
        dispatcher.add_overload(compiled)
        return True
