"""Element access in C order on traced arrays, against NumPy: `x.flat` (reads as copies,
as NumPy's flatiter; writes that reach x whatever its layout; iteration, len, copy) and
`np.ndenumerate` (index, value) pairs, each value read when the loop reaches it."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from tolerance import assert_like_numpy


def program(x, i):
    first = x.flat[5] * 2
    window = x.flat[2:7]                       # a copy: the write below must not show
    x.flat[[0, 3]] = -1.0
    x.flat[i] = 7.0                            # a traced index
    total = sum(v for v in x.flat)
    return first, window, total, len(x.flat), x.flat.copy(), x.flat[-1]


@pytest.mark.parametrize("layout", ["c", "transposed", "strided"])
def test_flat_reads_and_writes_like_numpy(layout):
    base = np.arange(24.0).reshape(4, 6)
    x = {"c": base[:3, :4].copy(), "transposed": base[:4, :3].copy().T,
         "strided": base[::2, ::2]}[layout]
    ours, theirs = x.copy(order="K"), x.copy(order="K")
    if layout == "strided":
        ours_base, theirs_base = base.copy(), base.copy()
        ours, theirs = ours_base[::2, ::2], theirs_base[::2, ::2]
    got = xlanb.jit(program)(ours, np.int64(4))
    expected = program(theirs, np.int64(4))
    assert_like_numpy(got[:3] + got[4:], expected[:3] + expected[4:])
    assert got[3] == expected[3]
    np.testing.assert_array_equal(ours, theirs)               # the writes reached x
    if layout == "strided":
        np.testing.assert_array_equal(ours_base, theirs_base)


def test_ndenumerate_reads_each_value_when_reached():
    def f(x):
        total = 0.0
        for (i, j), v in np.ndenumerate(x):
            total = total + v * (i + 2 * j)
            if i == 0:
                x[1, j] = v * 10               # later values see the write, as in NumPy
        return total, [v for _, v in np.ndenumerate(x[:, ::-1])][2]
    ours, theirs = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3)
    assert_like_numpy(xlanb.jit(f)(ours), f(theirs))
    np.testing.assert_array_equal(ours, theirs)
