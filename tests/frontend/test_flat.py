"""Element access in C order on traced arrays, against NumPy: `x.flat` (reads as copies,
as NumPy's flatiter; writes that reach x whatever its layout; iteration, len, copy) and
`np.ndenumerate` (index, value) pairs, each value read when the loop reaches it, and
`np.nditer` of one array in NumPy's order ('C', or 'K': memory order from the strides)."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb.errors import AliasingError, UnsupportedNumPyFunctionError
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


def weighted(x, order="K"):
    total = 0.0
    for i, v in enumerate(np.nditer(x, order=order)):
        total = total + v * (i + 1)            # the visiting order changes the result
    return total


B3 = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("layout", [
    lambda: B3.copy(), lambda: B3[:, 1:, ::2], lambda: B3.transpose(2, 0, 1),
    lambda: B3[::-1], lambda: B3[:, ::-1, ::2].transpose(1, 2, 0),
    lambda: np.asfortranarray(B3)[::-1]],
    ids=["c", "sliced", "transposed", "reversed", "mixed", "fortran-reversed"])
@pytest.mark.parametrize("order", ["K", "C"])
def test_nditer_visits_numpys_order(layout, order):
    """order='K' is the order in memory (axes by stride, negative strides reversed)."""
    x = layout()
    assert_like_numpy(xlanb.jit(weighted)(x, order), weighted(x, order), n=24)


def test_nditer_options_are_a_named_error():
    with pytest.raises(UnsupportedNumPyFunctionError, match="np.nditer"):
        xlanb.jit(lambda x: weighted(x, "F"))(B3)


def _assign_cyclic(x):
    x.flat = [1.0, 2.0, 3.0]                   # `x.flat = v`: was an AttributeError
    x.flat[[0, 1, 2, 7]] = np.array([5.0, 6.0])
    x.flat[2:9] = np.array([[7.0], [8.0]])    # repeated cyclically, in C order
    x.flat[0] = x[1, 1]                        # one element of x: nothing to smear
    return x


def test_flat_assignment_repeats_values_cyclically():
    """NumPy's flatiter fills the selected elements with the values repeated; these were a
    ShapeMismatchError (and `x.flat = v` an AttributeError)."""
    got, expected = np.zeros((3, 4)), np.zeros((3, 4))
    xlanb.jit(_assign_cyclic)(got.T)
    _assign_cyclic(expected.T)
    np.testing.assert_array_equal(got, expected)


def test_flat_assignment_of_a_view_of_itself_is_a_named_error():
    """x.flat[1:5] = x[0, :4]: NumPy's flatiter reads the view while it writes, smearing
    x[0, 0] over the slice; the trace copied it first (0, 0, 1, 2, 3 for 0, 0, 0, 0, 0)."""
    def smear(x):
        x.flat[1:5] = x[0, :4]
        return x
    with pytest.raises(AliasingError, match="flat"):
        xlanb.jit(smear)(np.arange(12.0).reshape(3, 4))
