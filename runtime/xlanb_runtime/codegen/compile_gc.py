"""Python's cyclic garbage collector kept off the process's existing objects while Numba compiles.

A Numba compile allocates a few hundred thousand Python objects per kernel (its IR, types,
llvmlite's IR objects), so the collector runs hundreds of times during a cold compile, and
each full collection walks every object of the process: Numba's and NumPy's modules, the
traced program, and whatever the user's notebook holds.  Measured (cold, one thread,
XLANB_FLAGS=--xla_parallel_compile=false, CPU seconds in the collector's own callbacks):
W5 1.3-1.8 s of its 11-14 s (5 full collections), W4 0.17-0.23 s of 2.1-2.8 s.

`frozen_heap()` moves the objects that exist when a compile starts into the collector's
permanent generation (`gc.freeze`) and puts them back afterwards (`gc.unfreeze`): the
collections during the compile then walk only objects made by the compile.  Before
unfreezing, one full collection (which skips the frozen objects too) frees the compile's
own cyclic garbage: without it, garbage promoted to the oldest generation waited for the
next full collection of the whole heap, and W4+W5's peak RSS grew 393 -> 434 MB.  With
it, measured the same way: W5's collector time 1.6-1.8 -> 0.74 s, W4's 0.24 -> 0.14 s, a
one-statement kernel's 17 -> 4 ms, peak RSS unchanged (benchmarks/bench_compile.py).

Nothing is collected that would not have been: objects frozen during the compile are only
skipped for its duration.  A process that froze objects itself (a server that freezes before
forking) is left alone: its permanent generation is not ours to unfreeze.
"""
from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def frozen_heap():
    """While the body runs, collections skip the objects that existed when it started."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield                           # someone else's freeze, or collection switched off
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.collect()                    # the compile's garbage: frozen objects are skipped
        gc.unfreeze()
