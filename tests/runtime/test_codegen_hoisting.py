"""Loop-invariant code motion on generated kernel source (codegen/cpu.py
`hoist_invariants`): what moves out of a loop, what must stay, and a gather whose index is
hoisted still matching NumPy."""
from __future__ import annotations

import numpy as np

import xlanb
from xlanb_runtime.codegen.cpu import hoist_invariants

KERNEL = """\
    acc0 = np.empty((m2,), np.float64)
    for j0 in range(m0):
        a0 = np.float64(0)
        for j1 in range(m1):
            v1 = in0[j0]
            v2 = (v1 * c0)
            v3 = in1[j0, j1]
            v4 = (v3 + v2)
            v5 = acc0[j1]
            a0 = a0 + v4
            acc0[j1] = v4
            if j1 < 2:
                v6 = v2
                v7 = v6
            else:
                v7 = v1
            out0[j0, j1] = v7
        out1[j0] = a0""".split("\n")


def test_invariant_values_move_before_their_loop():
    lines = hoist_invariants(KERNEL)
    inner = lines.index("        for j1 in range(m1):")
    assert lines[inner - 2:inner] == ["        v1 = in0[j0]", "        v2 = (v1 * c0)"]


def test_what_depends_on_the_loop_or_is_written_stays():
    lines = hoist_invariants(KERNEL)
    inner = lines.index("        for j1 in range(m1):")
    body = lines[inner + 1:]
    for kept in ("            v3 = in1[j0, j1]",          # reads the loop's index
                 "            v5 = acc0[j1]",             # an array the kernel writes
                 "            a0 = a0 + v4",              # an accumulator
                 "                v6 = v2",               # inside a branch
                 "                v7 = v1"):              # assigned in two branches
        assert kept in body, kept
    assert "        a0 = np.float64(0)" in lines[:inner]  # reset per row, not hoisted


def test_gather_with_hoisted_index_matches_numpy():
    rng = np.random.default_rng(0)
    table = rng.standard_normal((40, 24)).astype(np.float32)
    idx = rng.integers(-40, 40, (6, 5))
    fn = lambda t, i: (t[i] * 2).sum(axis=1)       # noqa: E731
    kernels = xlanb.jit(fn).lower(table, idx).compile().kernels   # and the index check's
    assert any("in0[j0, r0]" in k.source or "in1[j0, r0]" in k.source for k in kernels)
    # float32 sums: xlanb accumulates in float64, NumPy pairwise in float32
    np.testing.assert_allclose(xlanb.jit(fn)(table, idx), fn(table, idx), rtol=1e-5,
                               atol=1e-5)
