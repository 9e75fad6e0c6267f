"""Blocking compiles hand kernels to the compile worker (runtime/xlanb_runtime/
parallel_compile.py): the worker compiles them into the shared disk cache, from which this
process then loads them, computing the same."""
from __future__ import annotations

import numba
import numpy as np
import pytest

from xlanb_runtime import background, flags, parallel_compile
from xlanb_runtime.codegen import cache

SIGNATURE = (numba.float64[::1], numba.float64[::1])


def kernel_source(k: int) -> str:
    return (f"import numba\n\n\n@numba.njit(cache=True)\ndef {cache.KERNEL_FUNCTION}(x, out):\n"
            f"    for i in range(x.shape[0]):\n        out[i] = 2 * x[i] + {k}\n")


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(parallel_compile, "MIN_STATEMENTS", 0)
    monkeypatch.setattr(parallel_compile.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(parallel_compile.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    yield
    background.shutdown()


def test_the_worker_compiles_the_kernels_this_process_then_loads():
    kernels = [(kernel_source(k), SIGNATURE) for k in (1, 2, 3)]
    with flags.active(flags.Flags()):
        job = parallel_compile.fan_out(kernels)
    assert job is not None and job.wait(300) and job.ok, job.error
    assert job.reply["kernels"] == 3                  # none was in the cache before
    x = np.arange(5.0)
    for k, (source, signature) in zip((1, 2, 3), kernels):
        assert cache.probably_cached(source)
        dispatcher = cache.compile_canonical(source, signature)
        out = np.empty_like(x)
        dispatcher(x, out)
        np.testing.assert_array_equal(out, 2 * x + k)
        assert dispatcher.stats.cache_hits[signature] == 1       # the worker's entry
        assert dispatcher.stats.cache_misses[signature] == 0


def test_nothing_is_handed_out_when_it_cannot_pay(monkeypatch):
    kernels = [(kernel_source(k), SIGNATURE) for k in (4, 5)]
    with flags.active(flags.Flags(xla_parallel_compile=False)):
        assert parallel_compile.fan_out(kernels) is None
    with flags.active(flags.Flags()):
        assert parallel_compile.fan_out(kernels[:1]) is None   # one kernel: nothing to share
        monkeypatch.setattr(parallel_compile.os, "getloadavg", lambda: (1.5, 1.5, 1.5))
        assert parallel_compile.fan_out(kernels) is None      # no idle core
        monkeypatch.setattr(parallel_compile.os, "cpu_count", lambda: 1)
        assert parallel_compile.fan_out(kernels) is None
    assert background.worker_pid() is None


def test_an_entry_another_holder_is_compiling_is_not_waited_for_unless_asked():
    import fcntl
    source = kernel_source(6)
    entry = cache.kernel_dir() / cache.module_name_for(source)
    entry.mkdir(parents=True)
    with open(entry / "lock", "ab") as held:        # as the worker holds it while compiling
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        with pytest.raises(cache.EntryBusy):
            cache.compile_canonical(source, SIGNATURE, wait=False)
    dispatcher = cache.compile_canonical(source, SIGNATURE, wait=False)   # free again
    out = np.empty(3)
    dispatcher(np.arange(3.0), out)
    np.testing.assert_array_equal(out, 2 * np.arange(3.0) + 6)
