"""`--xla_cpu_threads`: which kernels may split over threads (the rest of the thread
story is Numba's pool and the BLAS's, set by their own variables)."""
import numba
import numpy as np
import pytest

import xlanb_runtime
from xlanb_runtime import flags
from xlanb_runtime.ir import Graph, Op, builder as B
from xlanb_runtime.codegen.cpu import PARALLEL_MIN_ELEMENTS


def _big_add() -> Graph:
    x = B.parameter(0, (PARALLEL_MIN_ELEMENTS,), np.float32)
    return Graph([x], [B.binary(Op.ADD, x, x)], "big_add")


@pytest.mark.parametrize("threads", [0, 1, 2])
def test_threads_flag_decides_parallel_kernels(threads):
    with flags.overriding(xla_cpu_threads=threads):
        executable = xlanb_runtime.compile(_big_add())
    pool = numba.config.NUMBA_NUM_THREADS
    allowed = min(threads, pool) if threads else pool
    parallel = any("numba.prange" in k.source for k in executable.kernels)
    assert parallel == (allowed >= 2)
    x = np.arange(PARALLEL_MIN_ELEMENTS, dtype=np.float32)
    np.testing.assert_array_equal(executable.run([x])[0], x + x)


def test_threads_flag_parses():
    assert flags.parse("--xla_cpu_threads=1").xla_cpu_threads == 1
