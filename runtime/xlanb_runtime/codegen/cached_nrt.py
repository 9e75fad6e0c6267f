"""Numba's runtime (NRT) from the disk cache: its machine code compiled once, not per process.

Every compiled kernel calls into the NRT (`NRT_incref`, `NRT_decref`, ...): a few functions
that Numba builds as LLVM IR and compiles with the full optimization pipeline the first
time anything in a process loads or compiles a Numba function (`rtsys.initialize`).  That
compile was 70-100 ms of a warm W5 start (loaded machine), more than any kernel's load; a
load of the same machine code is 5-10 ms.  So the library's object code (with the bitcode
Numba links into later compiles) is kept in the kernel cache:

    $XLANB_CACHE_DIR/kernels/<versions>/nrt/<key>     header, SHA-256 of the payload, payload

`key` hashes what decides the object code without building it: the NRT module's source
file (nrtdynmod.py, by size and modification time: an edited Numba makes other keys), the
Numba settings it reads (NRT debugging, machine bits), the host's target triple, CPU
name and features (Numba's `magic_tuple`, also in its own cache keys) and the
optimization level; the directory names Python, Numba, llvmlite, NumPy and xlanb
(cache.version_tag).  (The key hashed the module's IR text before, which meant building
the module in every process: 3-5 ms of a warm start, for a text that only a Numba
version or those settings change.)  A file that is missing, truncated, corrupt or of
another format is ignored: the NRT compiles as Numba compiles it, and the file is written
again.

`initialize` does what `rtsys.initialize` does (register the C helpers, make the library,
mark the runtime ready), with the library loaded instead of compiled where the cache has
it.  Where this Numba lacks the internals used it calls `rtsys.initialize` itself.
"""
from __future__ import annotations

import hashlib
import os
import pickle

from numba.core import config
from numba.core.compiler_lock import global_compiler_lock
from numba.core.runtime import rtsys

from . import cache

_HEADER = b"xlanb-nrt 1\n"


def initialize(context) -> None:
    """Make Numba's runtime ready in this process for `context` (a CPU target context):
    loaded from the cache, or compiled and then cached."""
    if getattr(rtsys, "_init", False):
        return
    with global_compiler_lock:
        if rtsys._init:
            return
        try:
            from llvmlite import binding as ll
            from numba.core.runtime import _nrt_python as _nrt, nrtdynmod
            codegen = context.codegen()
            path = cache.kernel_dir() / "nrt" / _key(codegen, nrtdynmod.__file__)
        except (ImportError, AttributeError, OSError):   # another Numba: its own way
            rtsys.initialize(context)
            return
        if config.NRT_STATS:
            _nrt.memsys_enable_stats()
        for name, address in _nrt.c_helpers.items():    # as rtsys.initialize names them
            ll.add_symbol(name if name.startswith("_") else "NRT_" + name, address)
        loaded = _load(codegen, path)
        if loaded is None:
            ir_module, library = nrtdynmod.create_nrt_module(context)
            library.enable_object_caching()      # keeps the object code, to be stored
            library.add_ir_module(ir_module)
            library.finalize()
            _store(path, library.serialize_using_object_code())
            loaded = library
        rtsys._library = loaded
        rtsys._init = True


def _key(codegen, module_file: str) -> str:
    stat = os.stat(module_file)
    settings = (config.DEBUG_NRT, getattr(config, "DEBUG_NRT_STACK_LIMIT", None),
                config.MACHINE_BITS)
    digest = hashlib.sha256()
    for part in (f"{module_file}:{stat.st_size}:{stat.st_mtime_ns}", repr(settings),
                 repr(codegen.magic_tuple()), repr(config.OPT)):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:32]


def _load(codegen, path):
    """The library stored at `path`, or None (none there, or not a valid record)."""
    payload = cache.read_record(path, _HEADER)
    if payload is None:
        return None
    try:
        state = pickle.loads(payload)
        name, kind, (object_code, bitcode) = state
        if kind != "object" or not isinstance(object_code, bytes) or \
                not isinstance(bitcode, bytes):
            return None
    except Exception:                    # noqa: BLE001 - any unreadable record is ignored
        return None
    return codegen.unserialize_library(state)


def _store(path, state) -> None:
    # a read-only cache writes nothing: each process compiles the runtime
    cache.write_record(path, _HEADER, pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
