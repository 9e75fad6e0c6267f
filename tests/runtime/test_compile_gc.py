"""A kernel compile keeps Python's collector off the process's existing objects
(codegen/compile_gc.py): every collection during it sees them frozen, and afterwards the
heap is as before: unfrozen, or still frozen where the process froze it itself, also
when the compile fails."""
from __future__ import annotations

import gc
import uuid

import numba
import numpy as np
import pytest
from numba.core import event

from xlanb_runtime.codegen import cache

SIGNATURE = (numba.float64[::1], numba.float64[::1], numba.int64)


def kernel_source(body: str = "out[i] = x[i] * 2.0") -> str:
    """A canonical kernel module of its own (the comment makes its cache entry new)."""
    return "\n".join([
        f"# test kernel {uuid.uuid4().hex}",
        "import numba",
        "@numba.njit(cache=True, nogil=True)",
        "def kernel(x, out, n):",
        "    for i in range(n):",
        f"        {body}",
        ""])


class _Compiling(event.Listener):
    """Whether a Numba compile is under way."""
    depth = 0

    def on_start(self, ev):
        self.depth += 1

    def on_end(self, ev):
        self.depth -= 1


@pytest.fixture
def collections(tmp_path, monkeypatch):
    """Frozen-object counts seen at the start of each collection during Numba's compiles
    while the test runs, with collections made frequent so that a compile surely runs some."""
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path))
    seen: list[int] = []
    compiling = _Compiling()

    def record(phase, info):
        if phase == "start" and compiling.depth:
            seen.append(gc.get_freeze_count())

    threshold = gc.get_threshold()
    gc.set_threshold(50, threshold[1], threshold[2])
    gc.callbacks.append(record)
    try:
        with event.install_listener("numba:compile", compiling):
            yield seen
    finally:
        gc.callbacks.remove(record)
        gc.set_threshold(*threshold)


def test_collections_during_a_compile_skip_existing_objects(collections):
    assert gc.get_freeze_count() == 0
    existing = len(gc.get_objects())
    dispatcher = cache.compile_canonical(kernel_source(), SIGNATURE)
    during = list(collections)
    assert len(during) > 10, "the compile ran too few collections to tell"
    assert all(count >= existing // 2 for count in during), during[:20]
    assert gc.get_freeze_count() == 0             # unfrozen again
    out = np.empty(5)
    dispatcher(np.arange(5.0), out, 5)
    np.testing.assert_array_equal(out, np.arange(5.0) * 2)


def test_a_failed_compile_leaves_the_heap_unfrozen(collections):
    with pytest.raises(numba.core.errors.TypingError):
        cache.compile_canonical(kernel_source("out[i] = x[i] + undefined_name"), SIGNATURE)
    assert gc.get_freeze_count() == 0


def test_a_process_freeze_is_left_alone(collections):
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        cache.compile_canonical(kernel_source(), SIGNATURE)
        # not unfrozen by the compile (frozen objects that die leave the count)
        assert gc.get_freeze_count() > frozen // 2
    finally:
        gc.unfreeze()
