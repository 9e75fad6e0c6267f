"""`xlanb.checkpoint`: save and restore pytrees of arrays, atomically, without pickle.

    xlanb.checkpoint.save("ckpt.npz", {"step": 100, "params": params, "opt": opt_state})
    state = xlanb.checkpoint.restore("ckpt.npz")

The file is an ordinary `.npz`: the leaves as `leaf_0`, `leaf_1`, ... and the structure as
JSON in `__tree__` (dicts with str or int keys, lists, tuples, namedtuples, None; leaves are
arrays, NumPy scalars, or Python bool/int/float/str, which come back as themselves).  It is
loaded with `allow_pickle=False`, so opening a checkpoint runs no code.

Only one replica writes: rank 0 of the current communicator (inside `strategy.run`), else
rank 0 of MPI's COMM_WORLD when MPI is running, else this process.  The writer saves to a
temporary file in the same directory, flushes it to disk and renames it over `path`
(`os.replace` is atomic), so a crash mid-save leaves the previous checkpoint intact.
"""
from __future__ import annotations

import collections
import json
import os
import sys
import tempfile
from typing import Any

import numpy as np

from xlanb_runtime import collectives

__all__ = ["restore", "save", "writer_rank"]

FORMAT = "xlanb-checkpoint"
VERSION = 1
TREE_KEY = "__tree__"
_SCALARS = (bool, int, float, str)


def writer_rank() -> int:
    """This process's rank for checkpointing (0 writes): see the module docstring."""
    communicator = collectives.current_communicator()
    if communicator is not None:
        return communicator.rank
    mpi = sys.modules.get("mpi4py.MPI")           # only if the program already uses MPI
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        return mpi.COMM_WORLD.Get_rank()
    return 0


def save(path: str | os.PathLike, tree: Any) -> str | None:
    """Write `tree` to `path` (exactly that name) on rank 0; other ranks do nothing.

    Returns the path written, or None on ranks that do not write.  Raises TypeError for a
    leaf or key it cannot store (before touching any file).
    """
    if writer_rank() != 0:
        return None
    path = os.fspath(path)
    arrays: dict[str, np.ndarray] = {}
    spec = _encode(tree, arrays)
    header = json.dumps({"format": FORMAT, "version": VERSION, "tree": spec})
    arrays[TREE_KEY] = np.array(header)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, **arrays)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)
    return path


def restore(path: str | os.PathLike) -> Any:
    """The tree saved at `path` (every rank may read it)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"no checkpoint at {path!r}: nothing was saved there yet (check the path; only "
            "rank 0 writes, so on several machines it must be a shared directory)")
    with np.load(path, allow_pickle=False) as data:
        if TREE_KEY not in data.files:
            raise ValueError(f"{path!r} is an .npz file but not an xlanb checkpoint "
                             f"(no {TREE_KEY!r} entry); it has {data.files[:5]}")
        header = json.loads(str(data[TREE_KEY]))
        if header.get("format") != FORMAT or header.get("version", 0) > VERSION:
            raise ValueError(f"{path!r}: unsupported checkpoint format "
                             f"{header.get('format')!r} version {header.get('version')!r}")
        return _decode(header["tree"], data)


# -- structure <-> JSON -----------------------------------------------------------------------

def _encode(tree: Any, arrays: dict[str, np.ndarray]) -> Any:
    if tree is None:
        return {"t": "none"}
    if isinstance(tree, dict):
        keys = list(tree)
        for key in keys:
            if type(key) not in (str, int):
                raise TypeError(f"checkpoint.save: dict keys must be str or int, got "
                                f"{type(key).__name__} {key!r}")
        return {"t": "dict", "keys": [[type(k).__name__, k] for k in keys],
                "children": [_encode(tree[k], arrays) for k in keys]}
    if isinstance(tree, tuple) and hasattr(type(tree), "_fields"):
        cls = type(tree)
        return {"t": "namedtuple", "class": f"{cls.__module__}:{cls.__qualname__}",
                "fields": list(cls._fields), "children": [_encode(c, arrays) for c in tree]}
    if type(tree) in (list, tuple):
        return {"t": type(tree).__name__, "children": [_encode(c, arrays) for c in tree]}
    if type(tree) in _SCALARS:
        return {"t": "scalar", "type": type(tree).__name__, "value": tree}
    if isinstance(tree, (np.ndarray, np.generic)):
        array = np.asarray(tree)
        if array.dtype.hasobject:
            raise TypeError("checkpoint.save: object arrays cannot be stored without pickle; "
                            "convert them to numeric arrays")
        name = f"leaf_{len(arrays)}"
        arrays[name] = array
        return {"t": "generic" if isinstance(tree, np.generic) else "array", "name": name}
    raise TypeError(f"checkpoint.save: cannot store a {type(tree).__name__}; leaves must be "
                    "NumPy arrays or scalars, or Python bool/int/float/str (containers: dict, "
                    "list, tuple, namedtuple, None)")


def _decode(spec: dict, data) -> Any:
    kind = spec["t"]
    if kind == "none":
        return None
    if kind == "array":
        return data[spec["name"]]
    if kind == "generic":
        return data[spec["name"]][()]
    if kind == "scalar":
        return {"bool": bool, "int": int, "float": float, "str": str}[spec["type"]](
            spec["value"])
    children = [_decode(c, data) for c in spec["children"]]
    if kind == "list":
        return children
    if kind == "tuple":
        return tuple(children)
    if kind == "dict":
        keys = [int(k) if t == "int" else k for t, k in spec["keys"]]
        return dict(zip(keys, children))
    if kind == "namedtuple":
        return _namedtuple_class(spec["class"], spec["fields"])(*children)
    raise ValueError(f"corrupt checkpoint: unknown node kind {kind!r}")


def _namedtuple_class(name: str, fields: list[str]) -> type:
    """The saved namedtuple class if its module is already imported and it still has those
    fields, else an equivalent `collections.namedtuple` (restoring never imports anything
    and never fails for a moved class)."""
    module_name, _, qualname = name.partition(":")
    try:
        obj: Any = sys.modules[module_name]
        for part in qualname.split("."):
            obj = getattr(obj, part)
        if isinstance(obj, type) and issubclass(obj, tuple) and \
                list(getattr(obj, "_fields", ())) == fields:
            return obj
    except (KeyError, AttributeError):
        pass
    return collections.namedtuple(qualname.rsplit(".", 1)[-1] or "Restored", fields)


def _fsync_directory(directory: str) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
