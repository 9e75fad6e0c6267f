"""Where generated kernel modules live, and how they are loaded so Numba can cache them.

Numba's `cache=True` only works for functions defined in a real `.py` file imported as a
module registered in `sys.modules` (../shared/PLATFORM.md).  So each kernel's source is
written to `$XLANB_CACHE_DIR/kernels/<module>.py` (default: the user cache dir), named by a
hash of its source and of the runtime version, and imported from there.  Files are written
to a temporary name and renamed, so a crash or a failed compile never leaves a half-written
module; Numba invalidates its own index entries by the file's content.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import tempfile
from pathlib import Path

from .. import __version__ as runtime_version

_loaded: dict[str, object] = {}


def cache_dir() -> Path:
    root = os.environ.get("XLANB_CACHE_DIR")
    if root:
        path = Path(root)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
        path = Path(base) / "xlanb"
    return path


_USER_LINES = re.compile(r"^# user lines: .*\n", re.M)


def canonical_source(source: str) -> str:
    """The source without its `# user lines:` comment: the same kernel written at another
    line (an edited notebook cell, moved code) shares one cache entry."""
    return _USER_LINES.sub("", source)


def module_name_for(source: str) -> str:
    digest = hashlib.sha256((runtime_version + "\0" + source).encode()).hexdigest()[:20]
    return f"xlanb_kernel_{digest}"


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".py")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_module(source: str):
    """Import (writing first if needed) the module holding `source`; memoized per process."""
    source = canonical_source(source)
    name = module_name_for(source)
    module = _loaded.get(name)
    if module is not None:
        return module
    path = cache_dir() / "kernels" / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        _write_atomically(path, source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    _loaded[name] = module
    return module
