"""Where in the user's code a traced operation happened, and which operation it was.

`user_location()` walks the stack to the first frame outside xlanb, xlanb_runtime and NumPy
and formats it as "file.py:LINE" (the path relative to the working directory when that is
shorter than the absolute one, else the base name), or as "cell [12], line 3" for code of
a notebook cell (ipykernel compiles each cell from a temporary file named by a hash of its
text, which tells the user nothing).  `entry(what)` marks the outermost
traced operation: nodes built inside get its location as `loc`, and errors raised inside
name it (`np.unique`, `operator +`) together with that location.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import sys

import numpy as np

import xlanb_runtime
from xlanb_runtime.ir import builder


def _package_dir(module_file: str) -> str:
    return os.path.dirname(os.path.abspath(module_file)) + os.sep


def _internal_dirs() -> tuple[str, ...]:
    xlanb_init = os.path.join(os.path.dirname(os.path.dirname(__file__)), "__init__.py")
    return tuple(_package_dir(f) for f in (xlanb_init, xlanb_runtime.__file__, np.__file__))


_INTERNAL = _internal_dirs()
_CONTEXTLIB = os.path.abspath(contextlib.__file__)
# Modules of the package that hold example user code (their lines are the user's lines).
_EXAMPLES = frozenset(os.path.join(_INTERNAL[0], name) for name in ("demo.py",))


@functools.lru_cache(maxsize=4096)     # asked for every traced op: paths are slow to normalize
def _is_internal(filename: str) -> bool:
    path = os.path.abspath(filename)
    return (path.startswith(_INTERNAL) or path == _CONTEXTLIB) and path not in _EXAMPLES


def format_location(filename: str, lineno: int) -> str:
    cell = _notebook_cell(filename)
    if cell is not None:
        return f"cell [{cell}], line {lineno}"
    return _file_location(filename, lineno)


def _notebook_cell(filename: str) -> int | None:
    """The In[N] of the notebook cell compiled from `filename` (not cached: a cell run
    again keeps its file name and gets a new number)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    names = getattr(getattr(shell, "compile", None), "_filename_map", None)
    return names.get(filename) if names else None


@functools.lru_cache(maxsize=4096)
def _file_location(filename: str, lineno: int) -> str:
    absolute = os.path.abspath(filename)
    try:
        relative = os.path.relpath(absolute)
    except ValueError:                    # another drive on Windows
        relative = absolute
    if filename.startswith("<") or len(relative) >= len(absolute):
        relative = os.path.basename(filename)
    return f"{relative}:{lineno}"


def user_location() -> str | None:
    """"file.py:LINE" of the innermost frame that is the user's code (None if none is)."""
    frame = sys._getframe(1)
    while frame is not None:
        if not _is_internal(frame.f_code.co_filename):
            return format_location(frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return None


_current_op: contextvars.ContextVar[tuple[str, str | None] | None] = contextvars.ContextVar(
    "xlanb_current_op", default=None)


def current_op() -> tuple[str | None, str | None]:
    """(what, location) of the traced operation being lowered, or (None, None)."""
    value = _current_op.get()
    return value if value is not None else (None, None)


class entry:
    """`with entry(what):` lowers one user-visible operation; nested operations keep the
    outer name and line.  A class (entered once per traced operation, where contextlib's
    generator machinery cost more than the work)."""
    __slots__ = ("what", "tokens")

    def __init__(self, what: str):
        self.what = what

    def __enter__(self) -> None:
        if _current_op.get() is not None:
            self.tokens = None
            return
        loc = user_location()
        self.tokens = (_current_op.set((self.what, loc)), builder._location.set(loc))

    def __exit__(self, *exc) -> None:
        if self.tokens is not None:
            builder._location.reset(self.tokens[1])
            _current_op.reset(self.tokens[0])
