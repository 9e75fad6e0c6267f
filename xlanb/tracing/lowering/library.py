"""NumPy functions that run as library calls inside the compiled program.

A solver, a factorization, a sort or an FFT has no fusible IR: it lowers to one
`library-call` node (`xlanb_runtime.ir.library` holds what each name runs), which the
program calls between its fused kernels, with its inputs and outputs in the program's
buffers.  Unlike a fallback under `must_compile=False` it does not split the program.

`@implements_library(np.sort, ...)` registers a rule as `@implements` does and records the
function in `LIBRARY_FUNCTIONS`, which the support table (`python -m xlanb support`) reads
to report it as "library call".
"""
from __future__ import annotations

from typing import Callable

from . import implements

LIBRARY_FUNCTIONS: set[Callable] = set()


def implements_library(*funcs: Callable | None):
    """`@implements(*funcs)`, and the functions are reported as library calls."""
    def register(rule):
        implements(*funcs)(rule)
        LIBRARY_FUNCTIONS.update(f for f in funcs if f is not None)
        return rule
    return register
