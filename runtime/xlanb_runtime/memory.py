"""The process allocator's settings: compiled programs hand out fresh arrays on every call.

A compiled call returns new arrays, and a rolled loop's body makes new ones on every trip,
while the previous ones are freed.  With glibc's defaults an array above 128 KiB comes from
`mmap`, or from the top of the heap, which `free` gives back to the kernel as soon as more
than 128 KiB lies unused there.  The next allocation then touches fresh pages, one page
fault per 4 KiB, and on our VMs a page fault costs microseconds: a 100,000-element
float64 stencil step spent 700 of its 900 us faulting pages in.  Raising both thresholds
keeps freed memory in the process for the next call (NumPy's own temporaries benefit as
much).  The price is memory: up to `TRIM_BYTES` of freed heap stays with the process.

`XLANB_TUNE_MALLOC=0` leaves the allocator alone.  Other C libraries (no `mallopt`) are
left alone too.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_BYTES = 32 << 20          # glibc's largest allowed threshold on 64-bit
TRIM_BYTES = 256 << 20

_tuned: bool | None = None


def tune_allocator() -> bool:
    """Raise glibc's mmap and trim thresholds once per process; True if they were set."""
    global _tuned
    if _tuned is not None:
        return _tuned
    _tuned = False
    if os.environ.get("XLANB_TUNE_MALLOC", "1") == "0":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    _tuned = bool(mallopt(M_MMAP_THRESHOLD, MMAP_BYTES)) and \
        bool(mallopt(M_TRIM_THRESHOLD, TRIM_BYTES))
    return _tuned
