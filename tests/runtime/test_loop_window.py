"""Loops whose trips differ in a slice's length (loop_window.py): they roll into one body
over fixed-size windows and give NumPy's results and argument contents, with the lanes
past each trip's length ignored even where they hold inf or nan."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import xlanb
from xlanb_runtime.passes.loop_reroll import WINDOW_MIN_TRIPS

from tolerance import assert_close


def syrk(alpha, beta, C, A):
    """npbench syrk: a row write growing with i, around an inner loop over k."""
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]


def trisolv(L, x, b):
    """npbench trisolv: a dot over a prefix growing with i (window aligned low)."""
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def back_substitute(U, y):
    """ludcmp's second sweep, forwards: a suffix that shrinks (window aligned high)."""
    x = np.zeros_like(y)
    for i in range(y.shape[0]):
        x[i] = (y[i] - U[i, i + 1:] @ y[i + 1:]) / U[i, i]
    return x


def running_max(x):
    """A max over a growing prefix: the lanes past it must count as -inf."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[:i + 1].max()
    return out


def symm_columns(alpha, C, A, B):
    """npbench symm's inner writes: a column part growing with i, a column per j."""
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            C[:i, j] += alpha * B[i, j] * A[i, :i]


def flipped_dot(r):
    """durbin's `np.flip(r[:k]) @ y[:k]`: reversed, r's window keeps its lanes low (it is
    padded and sliced back), so they line up with y's."""
    y = np.zeros_like(r)
    y[0] = r[0]
    for k in range(1, r.shape[0]):
        y[k] = np.dot(np.flip(r[:k]), y[:k]) * 0.5
    return y


def _check(fn, args, static=(), n=40):
    """The jitted call's results and arguments against NumPy's; the compiled program."""
    expected_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = fn(*expected_args)
    jitted = xlanb.jit(fn, static_argnums=static)
    got = jitted(*got_args)
    if expected is not None:
        assert_close(np.asarray(got), np.asarray(expected), n=n, k=8)
    for e, g in zip(expected_args, got_args):
        if isinstance(e, np.ndarray):
            assert_close(g, e, n=n, k=8)
    return jitted.last_compiled


def _rolled(compiled) -> bool:
    return not compiled.runs_eagerly and " = loop(" in compiled.as_text()


def _upper_inf(n, rng):
    """A well-conditioned lower-triangular matrix whose upper triangle is inf: a lane past
    a trip's length that reached a sum would make it inf or nan."""
    L = np.tril(rng.random((n, n))) + n * np.eye(n)
    L[np.triu_indices(n, 1)] = np.inf
    return L


def test_syrk_rolls_its_growing_rows_and_inner_loop():
    rng = np.random.default_rng(0)
    n = WINDOW_MIN_TRIPS + 2
    args = (1.5, 1.2, rng.random((n, n)), rng.random((n, 9)))
    compiled = _check(syrk, args, static=(0, 1))
    assert _rolled(compiled)


def test_a_prefix_dot_ignores_what_lies_past_the_prefix():
    rng = np.random.default_rng(1)
    n = WINDOW_MIN_TRIPS + 8
    compiled = _check(trisolv, (_upper_inf(n, rng), rng.random(n), rng.random(n)), n=n)
    assert _rolled(compiled)


def test_a_shrinking_suffix_is_a_window_aligned_high():
    rng = np.random.default_rng(2)
    n = WINDOW_MIN_TRIPS + 8
    U = _upper_inf(n, rng).T.copy()           # inf below the diagonal, never read
    compiled = _check(back_substitute, (U, rng.random(n)), n=n)
    assert _rolled(compiled)


def test_a_prefix_max_counts_the_lanes_past_it_as_minus_infinity():
    x = np.linspace(-5.0, 5.0, WINDOW_MIN_TRIPS + 8)[::-1].copy()   # later lanes smaller
    x[1::3] = -np.inf                                                # ... or -inf
    x[5] = 7.0
    compiled = _check(running_max, (x,))
    assert _rolled(compiled)


def test_growing_column_writes_leave_the_rest_of_the_array_alone():
    rng = np.random.default_rng(3)
    n = WINDOW_MIN_TRIPS + 4
    args = (1.5, rng.random((n, 9)), rng.random((n, n)), rng.random((n, 9)))
    compiled = _check(symm_columns, args, static=(0,))
    assert _rolled(compiled)


def test_an_inner_loop_whose_copies_differ_in_a_column_rolls_inside_the_window():
    """symm's `for j` inside its windowed `for i`: the column j of `B[i, j]` and `C[:i, j]`
    is a place of the windowed loop that does not move with i; the inner copies count it
    only where it is a constant of the body, not one body parameter per column (npbench
    symm went over the compile budget with 49 columns: a kernel per column)."""
    rng = np.random.default_rng(5)
    n, columns = WINDOW_MIN_TRIPS + 4, 12
    args = (1.5, rng.random((n, columns)), rng.random((n, n)), rng.random((n, columns)))
    compiled = _check(symm_columns, args, static=(0,))
    assert _rolled(compiled)
    nested = [k.name for k in compiled.kernels if k.name.count("loop.") >= 2]
    assert nested, [k.name for k in compiled.kernels]
    assert len(compiled.kernels) < columns


@pytest.mark.parametrize("n", [WINDOW_MIN_TRIPS + 4])
def test_a_reversed_window_lines_up_with_an_unreversed_one(n):
    rng = np.random.default_rng(4)
    compiled = _check(flipped_dot, (rng.random(n),), n=n)
    assert _rolled(compiled)
    assert " reverse(" in compiled.as_text().split(" = loop(")[1]
