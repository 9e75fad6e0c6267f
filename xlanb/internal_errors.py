"""Failures of xlanb's own code become `InternalCompilerError`, never a raw KeyError.

User code raising its own exceptions (or NumPy raising on the user's behalf) is not
xlanb's failure and passes through unchanged; the test is where the innermost frame that
belongs to xlanb or to the user lies.
"""
from __future__ import annotations

import contextlib
import os
import sys

import xlanb_runtime

from .errors import CompileError, InternalCompilerError
from .tracing.capture import is_library_file
from .tracing.source import current_op, user_location
from .tracing.tracer import StaticScalarsNeeded

_INTERNAL_DIRS = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                       for m in (xlanb_runtime, sys.modules[__package__]))


_DELIBERATE = (TypeError, ValueError, IndexError,     # NumPy's own classes for misuse
               OverflowError)


def _is_named(exc: BaseException) -> bool:
    """xlanb's and the runtime's own user-facing errors (CudaUnavailableError, a replica
    mismatch, ...) already name what happened; a failed pass is an internal failure."""
    from xlanb_runtime.passes.pipeline import PassError
    return type(exc).__module__.split(".")[0] in ("xlanb", "xlanb_runtime") and \
        not isinstance(exc, PassError)


def _raised_inside_xlanb(exc: BaseException, compiling: bool = False) -> bool:
    """Whether `exc` is a failure of xlanb's code rather than of the user's.

    The innermost frame that is xlanb's or the user's decides; xlanb's own `raise` of a
    NumPy-style TypeError/ValueError/IndexError (a user mistake NumPy would reject the same
    way) is deliberate, while the same classes out of a library call inside xlanb are not.
    While `compiling` a traced graph no user code runs and user mistakes were all caught
    by tracing, so no exception from xlanb's code is deliberate (an IndexError there is a
    bug in a pass or in code generation).
    """
    tb, owner_is_xlanb, innermost_is_xlanb = exc.__traceback__, False, False
    while tb is not None:
        filename = os.path.abspath(tb.tb_frame.f_code.co_filename)
        innermost_is_xlanb = filename.startswith(_INTERNAL_DIRS) or \
            tb.tb_frame.f_code.co_filename.startswith("<xlanb")
        if innermost_is_xlanb:
            owner_is_xlanb = True
        elif not is_library_file(filename):
            owner_is_xlanb = False
        tb = tb.tb_next
    if not owner_is_xlanb:
        return False
    return compiling or not (innermost_is_xlanb and isinstance(exc, _DELIBERATE))


@contextlib.contextmanager
def named_internal_errors(fn, compiling: bool = False):
    """Failures of xlanb's own code reach the user as InternalCompilerError, never as a raw
    KeyError or RecursionError; the user's own exceptions pass through unchanged.
    `compiling`: the block compiles a traced graph (see `_raised_inside_xlanb`)."""
    try:
        yield
    except (CompileError, StaticScalarsNeeded):
        raise
    except RecursionError as exc:
        raise InternalCompilerError(
            "the program is too deep for xlanb's tracer (Python's recursion limit)",
            op_name=getattr(fn, "__qualname__", None), location=user_location(),
            hint="shorten unrolled loops, or run it with `xlanb.jit(f, must_compile=False)`"
        ) from exc
    except Exception as exc:
        if _is_named(exc) or not _raised_inside_xlanb(exc, compiling):
            raise
        op, location = current_op()
        raise InternalCompilerError(
            f"xlanb failed internally ({type(exc).__name__}: {exc})",
            op_name=op or getattr(fn, "__qualname__", None),
            location=location or user_location(),
            hint="Please report it with the dump from `XLANB_FLAGS=--xla_dump_to=DIR`; "
            "meanwhile `xlanb.jit(f, must_compile=False)` runs it with NumPy") from exc
