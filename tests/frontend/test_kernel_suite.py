"""Public-suite-style NumPy kernels under jit and auto-clustering: NumPy's results, and
every argument left as NumPy leaves it (in dtype, shape and value) after the call."""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import xlanb
from xlanb_runtime import flags

from kernel_suite import cases
from tolerance import assert_close

CASES = cases()


def _compare(expected, got):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for e, g in zip(expected, got):
            _compare(e, g)
        return
    if expected is None:
        assert got is None
        return
    e, g = np.asarray(expected), np.asarray(got)
    assert g.dtype == e.dtype and g.shape == e.shape
    if e.dtype.kind in "fc":
        # chains of dots and loop-carried updates of well-conditioned inputs (size <= 12)
        assert_close(g, e, n=64, k=32)
    else:
        np.testing.assert_array_equal(g, e)


def _run(kernel, args, must_compile, interpreted=False):
    expected_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
    with np.errstate(all="ignore"):
        expected = kernel(*expected_args)
    jitted = xlanb.jit(kernel, must_compile=must_compile)
    # loop-heavy kernels unroll: keep compiles short here (the budget is a flag)
    with flags.overriding(xla_max_kernels=12), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if interpreted:
            with xlanb.disable_jit():
                got = jitted(*got_args)
        else:
            got = jitted(*got_args)
    _compare(expected, got)
    for e, g in zip(expected_args, got_args):
        if isinstance(e, np.ndarray):
            _compare(e, g)
    return jitted


@pytest.mark.parametrize("must_compile", [True, False], ids=["jit", "autocluster"])
@pytest.mark.parametrize("name,kernel,args", CASES, ids=[c[0] for c in CASES])
def test_kernel_matches_numpy_including_arguments(name, kernel, args, must_compile):
    jitted = _run(kernel, args, must_compile)
    compiled = jitted.last_compiled if must_compile else None
    if compiled is not None and compiled.runs_eagerly:
        # past the compile budget jit runs the kernel itself with NumPy: check its trace
        # (write-backs, returned arguments) in the reference interpreter instead
        _run(kernel, args, must_compile, interpreted=True)


def test_per_row_loops_merge_siblings_without_a_cycle():
    """A softmax per row written as a Python loop: dozens of same-shape row kernels that
    sibling merging pairs up; a missed dependency between them made a kernel cycle."""
    def row_softmax_loop(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            e = np.exp(x[i] - x[i].max())
            out[i] = e / e.sum()
        return out
    x = np.random.default_rng(0).random((40, 16))
    assert_close(xlanb.jit(row_softmax_loop)(x), row_softmax_loop(x), n=16)
