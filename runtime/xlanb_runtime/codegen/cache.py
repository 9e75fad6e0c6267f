"""The on-disk kernel cache: where generated modules live, and when Numba's entries are trusted.

Numba's `cache=True` only works for functions defined in a real `.py` file imported as a
module registered in `sys.modules` (../shared/PLATFORM.md).  So each kernel's source is
written to a file named by a hash of its source, imported from there, and Numba keeps its
index (`.nbi`) and compiled code (`.nbc`) beside it.  One directory per entry, so that
checking an entry never lists a directory holding every other one:

    $XLANB_CACHE_DIR/kernels/<versions>/     e.g. cpython-311-numba0.68.1-llvmlite0.50.0-...
        xlanb_kernel_<hash>/
            xlanb_kernel_<hash>.py               the canonical source (canonical_kernel)
            manifest.json                        SHA-256 of each Numba file below
            xlanb_kernel_<hash>.code             the module's bytecode (`_KernelLoader`)
            lock                                 locked while the entry is checked and compiled
            __pycache__/xlanb_kernel_<hash>.kernel-<line>.py311.{nbi,1.nbc,...}
        code/<hash>                              a generated driver's bytecode (compile_cached)

A compiled loop (codegen/compiled_loop.py) is an entry like any other: its module calls
the kernels of other entries, imported by name (`kernel_module`).

An entry is trusted only if its source file holds exactly the expected text and its Numba
files are exactly those its manifest lists, with the same hashes; otherwise those files
are deleted and the kernel is recompiled.  Why each part is needed (Numba 0.68):
- Numba writes each file atomically (temp file + `os.replace`), but a truncated index or
  data file (a full disk, a killed copy) raises a pickle error from the call that compiles,
  and a corrupt data file of the right length is loaded unchecked.
- Its index and data are two files, each rewritten whole.  Two processes adding different
  signatures of one function at once can leave the index naming the other signature's
  data, and a process killed between the two writes leaves an index naming a missing or
  stale data file.  So every check, compile and manifest write of one module happens under
  an exclusive lock on its `lock` file (across processes and threads): of two processes
  compiling the same kernel, the second waits and then loads the first one's entry.
- Numba's index records Numba's version, but the compiled code also depends on llvmlite,
  NumPy, Python and xlanb; the directory is named after all of them, so another version's
  files are never read.  (Changes to `vecmath`/`rng`, whose code kernels inline, reach the
  key through the digests in the kernel's header comment.)
- A compile that raises (a typing error, an interrupted save) leaves the entry as it was:
  the files checked before the compile are written back and new ones removed.  A process
  killed outright leaves files its manifest does not list, which the next check discards.
"""
from __future__ import annotations

import _imp
import contextlib
import hashlib
import importlib.machinery
import importlib.util
import json
import marshal
import os
import re
import sys
import tempfile
from pathlib import Path

from . import cached_load
from .compile_gc import frozen_heap

try:
    import fcntl
except ImportError:          # not POSIX: no lock between processes (the checks still hold)
    fcntl = None

_MANIFEST_FORMAT = 1
_NUMBA_SUFFIXES = (".nbi", ".nbc")

_loaded: dict[Path, object] = {}


def cache_dir() -> Path:
    root = os.environ.get("XLANB_CACHE_DIR")
    if root:
        path = Path(root)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
        path = Path(base) / "xlanb"
    return path


def version_tag() -> str:
    """The toolchain that compiled an entry: Python, Numba, llvmlite, NumPy and xlanb."""
    import llvmlite
    import numba
    import numpy
    from .. import __version__ as xlanb_version
    versions = (sys.implementation.cache_tag, numba.__version__, llvmlite.__version__,
                numpy.__version__, xlanb_version)
    tag = _tags.get(versions)
    if tag is None:
        tag = re.sub(r"[^A-Za-z0-9._-]", "_", "{}-numba{}-llvmlite{}-numpy{}-xlanb{}".format(
            *versions))
        _tags[versions] = tag
    return tag


_tags: dict[tuple, str] = {}


def kernel_dir() -> Path:
    """This toolchain's directory of kernel modules."""
    return cache_dir() / "kernels" / version_tag()


_USER_LINES = re.compile(r"^# user lines: .*\n", re.M)
_GROUP_NAME = re.compile(r"^# xlanb kernel \S+ ", re.M)
KERNEL_FUNCTION = "kernel"       # the name every CPU kernel is compiled under


def canonical_source(source: str) -> str:
    """The source without its `# user lines:` comment and with its header's fusion-group
    name blanked: the same kernel written at another line (an edited notebook cell, moved
    code) or made by another group shares one cache entry."""
    return _GROUP_NAME.sub("# xlanb kernel ", _USER_LINES.sub("", source))


def canonical_kernel(source: str, function: str) -> str:
    """The module `compile_function` compiles for `function` of `source`: its canonical
    source with the function renamed KERNEL_FUNCTION.  Fusion groups that generate the
    same code then share one Numba compile and one cache entry (W5's six SGD-update
    epilogues differed only in their names: 0.4 s of its 5 s cold compile)."""
    renamed, count = re.subn(rf"^def {re.escape(function)}\(", f"def {KERNEL_FUNCTION}(",
                             canonical_source(source), flags=re.M)
    if count != 1:
        raise AssertionError(f"kernel source defines `{function}` {count} times, not once")
    return renamed


def module_name_for(source: str) -> str:
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    return f"xlanb_kernel_{digest}"


def load_module(source: str):
    """Import (writing first if needed) the module holding `source`; memoized per process.
    Compiling through it bypasses the cache checks: CPU kernels use `compile_function`."""
    source = canonical_source(source)
    name = module_name_for(source)
    path = kernel_dir() / name / f"{name}.py"
    _write_source(path, source)
    return _import(path)


def kernel_module(name: str):
    """The module of entry `name` (module_name_for): how a compiled loop's module
    (codegen/compiled_loop.py) binds the kernels it calls.  The one this process holds
    already, wherever from (a name is its source's hash: another cache directory's
    module of that name is the same code), else this toolchain's entry imported.  Only
    imports: the entry's Numba files are checked where its kernel is compiled or loaded
    (`compile_canonical`), which the loop's body did before."""
    module = sys.modules.get(name)
    return module if module is not None else _import(kernel_dir() / name / f"{name}.py")


def compile_function(source: str, function: str, signature: tuple):
    """The Numba dispatcher `function` of the module holding `source`, compiled for
    `signature`: loaded from a checked cache entry, or compiled and recorded in one.
    The module holds `canonical_kernel(source, function)`."""
    return compile_canonical(canonical_kernel(source, function), signature)


def probably_cached(source: str) -> bool:
    """Whether the module of a canonical kernel source has an entry (for some signature):
    a hint that costs one `stat`; `compile_canonical` decides."""
    name = module_name_for(source)
    return (kernel_dir() / name / "manifest.json").exists()


class EntryBusy(Exception):
    """`compile_canonical(..., wait=False)`: another process or thread holds the entry."""


def compile_canonical(source: str, signature: tuple, wait: bool = True):
    """`compile_function` for a module source that is already `canonical_kernel`'s; with
    `wait=False`, raises EntryBusy instead of waiting for another holder of its lock."""
    function = KERNEL_FUNCTION
    name = module_name_for(source)
    entry = kernel_dir() / name
    with _locked(entry / "lock", wait):
        rewritten = _write_source(entry / f"{name}.py", source)
        module = _import(entry / f"{name}.py")
        manifest = entry / "manifest.json"
        checked = _read_files(_numba_files(module, name))
        if rewritten or _read_manifest(manifest) != _hashes(checked):
            _discard(checked, manifest)      # untrusted: Numba must not read any of it
            checked = {}
        dispatcher = getattr(module, function)
        compiled = sum(dispatcher.stats.cache_misses.values())
        try:
            if not (checked and cached_load.load(dispatcher, signature)):
                with frozen_heap():          # collections skip the process's other objects
                    dispatcher.compile(signature)
        except BaseException:
            _restore(checked, _numba_files(module, name))
            raise
        if sum(dispatcher.stats.cache_misses.values()) == compiled and manifest.exists():
            return dispatcher                 # loaded, or compiled before: nothing written
        written = _hashes(_read_files(_numba_files(module, name)))
        if written != _hashes(checked) or not manifest.exists():
            write_atomically(manifest, json.dumps(
                {"format": _MANIFEST_FORMAT, "files": written}, indent=1, sort_keys=True))
    return dispatcher


def entry_data(dispatcher, signature: tuple) -> bytes | None:
    """The bytes of Numba's data file for `dispatcher`'s overload of `signature` (a kernel
    of this cache), as its manifest vouches for them; None if the entry has no such file
    or the file is not the one the manifest lists."""
    numba_cache = getattr(dispatcher, "_cache", None)
    try:
        name = dispatcher.__module__
        # the signature as the kernel was compiled with (compile_canonical): Numba keys
        # its index by it as given
        key = numba_cache._index_key(signature, dispatcher.targetctx.codegen())
        data_name = numba_cache._cache_file._load_index().get(key)
        if data_name is None:
            return None
        path = Path(numba_cache._cache_file._data_path(data_name))
        data = path.read_bytes()
    except Exception:                  # noqa: BLE001 - no entry, or another Numba's cache
        return None
    listed = _read_manifest(kernel_dir() / name / "manifest.json") or {}
    if listed.get(path.name) != hashlib.sha256(data).hexdigest():
        return None
    return data


@contextlib.contextmanager
def _locked(path: Path, wait: bool = True):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as handle:          # "a": never truncates another holder's file
        if fcntl is not None:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                raise EntryBusy(str(path.parent)) from None
        yield                                 # closing the file releases the lock


def _write_source(path: Path, source: str) -> bool:
    """Write `source` to `path` unless it already holds exactly that; True if written."""
    try:
        if path.read_bytes() == source.encode():
            return False
    except OSError:
        pass
    write_atomically(path, source)
    return True


def write_record(path: Path, header: bytes, payload: bytes) -> None:
    """`header`, the payload's SHA-256 and the payload, written atomically (a record that
    `read_record` trusts only whole and unchanged).  A read-only cache writes nothing."""
    data = header + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
    try:
        write_atomically(path, data)
    except OSError:
        pass


def read_record(path: Path, header: bytes) -> bytes | None:
    """The payload of a record `write_record` wrote with `header`, or None (no file, another
    format, or a payload that does not match its digest: truncated or corrupt)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(header):
        return None
    digest, _, payload = data[len(header):].partition(b"\n")
    if hashlib.sha256(payload).hexdigest().encode() != digest:
        return None
    return payload


def write_atomically(path: Path, text: str | bytes) -> None:
    """A temp file in the same directory, then `os.replace`: readers see the old file or
    the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode() if isinstance(text, str) else text
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.name}-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


_CODE_HEADER = b"xlanb-code 1\n"


def compile_cached(source: str, filename: str):
    """`compile(source, filename, "exec")`, its bytecode kept in the cache under a hash of
    both: a warm start's drivers load instead of compiling (W5's 130-line driver: about
    4 ms of its first call).  A record that is missing, damaged or unreadable is compiled
    again and rewritten; the directory is per Python version (`version_tag`), as the
    marshal format is."""
    key = hashlib.sha256(f"{filename}\0{source}".encode()).hexdigest()[:32]
    path = kernel_dir() / "code" / key
    payload = read_record(path, _CODE_HEADER)
    if payload is not None:
        try:
            return marshal.loads(payload)
        except (ValueError, EOFError, TypeError):
            pass
    code = compile(source, filename, "exec")
    write_record(path, _CODE_HEADER, marshal.dumps(code))
    return code


class _KernelLoader(importlib.machinery.SourceFileLoader):
    """Imports a kernel module from its bytecode, kept beside the source as
    `<module>.code`: the SHA-256 of the source it was compiled from, the SHA-256 of the
    marshalled code, then the code.  Python's own `.pyc` files are not written where
    PYTHONDONTWRITEBYTECODE is set (as on this project's machines), and a warm start then
    compiled every kernel module's source again: 55 of the 125 ms that importing W5's 14
    kernel modules took (loaded machine).  A file that does not match its source or its
    checksum is compiled again and rewritten, never trusted; the directory is per Python
    version (`version_tag`), as the marshal format is."""

    def get_code(self, fullname):
        source = self.get_data(self.path)
        path = Path(self.path).with_suffix(".code")
        digest = hashlib.sha256(source).digest()
        try:
            blob = path.read_bytes()
            if blob[:32] == digest and hashlib.sha256(blob[64:]).digest() == blob[32:64]:
                code = marshal.loads(blob[64:])
                # the file it was compiled from may have moved (a copied cache): Numba
                # finds its index through the code's file name, as Python's .pyc loads do
                _imp._fix_co_filename(code, self.path)
                return code
        except (OSError, ValueError, EOFError, TypeError):
            pass
        code = self.source_to_code(source, self.path)
        data = marshal.dumps(code)
        try:
            write_atomically(path, digest + hashlib.sha256(data).digest() + data)
        except OSError:                       # a read-only cache: compile each time
            pass
        return code


def _import(path: Path):
    module = _loaded.get(path)
    if module is not None:
        return module
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path,
                                                  loader=_KernelLoader(name, str(path)))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    _loaded[path] = module
    return module


def _numba_files(module, name: str) -> list[Path]:
    """The module's Numba index and data files (not Numba's temp files), wherever Numba
    keeps them (`__pycache__` beside the source, or under NUMBA_CACHE_DIR)."""
    directories = {Path(obj._cache.cache_path) for obj in vars(module).values()
                   if getattr(obj, "__module__", None) == name
                   and getattr(getattr(obj, "_cache", None), "cache_path", None)}
    files = []
    for directory in directories:
        try:
            entries = list(directory.iterdir())
        except OSError:
            continue
        files += [p for p in entries
                  if p.name.startswith(name + ".") and p.suffix in _NUMBA_SUFFIXES]
    return sorted(files)


def _read_files(paths: list[Path]) -> dict[Path, bytes]:
    contents = {}
    for path in paths:
        try:
            contents[path] = path.read_bytes()
        except OSError:                       # removed meanwhile (outside the lock): absent
            pass
    return contents


def _hashes(contents: dict[Path, bytes]) -> dict[str, str]:
    return {path.name: hashlib.sha256(data).hexdigest() for path, data in contents.items()}


def _read_manifest(path: Path) -> dict[str, str] | None:
    """The file hashes a manifest records, or None if it is missing, unreadable or not
    a manifest of this format (then nothing it would vouch for is trusted)."""
    try:
        manifest = json.loads(path.read_text())
        files = manifest["files"]
        if manifest.get("format") != _MANIFEST_FORMAT or not isinstance(files, dict):
            return None
        return files
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _discard(contents: dict[Path, bytes], manifest: Path) -> None:
    manifest.unlink(missing_ok=True)
    for path in contents:
        path.unlink(missing_ok=True)


def _restore(checked: dict[Path, bytes], now: list[Path]) -> None:
    """Put the Numba files back as they were checked: a failed compile changes nothing."""
    for path in now:
        if path not in checked:
            path.unlink(missing_ok=True)
    for path, data in checked.items():
        try:
            if path.read_bytes() == data:
                continue
        except OSError:
            pass
        write_atomically(path, data)
