"""Triangular loop nests (`for i: for j in range(i)`): the inner loop's trip count counts
with the outer index, so the inner loops roll into one body run a dynamic number of trips
(`LoopBody.dynamic`), their windows as wide as the arrays, and the outer loop rolls around
them.  A reversed prefix by a prefix rolls too (durbin).  Results and argument contents
stay NumPy's; a trip count or width that does not count steadily, or a vector or matrix by
a block of columns that shrinks with i (rolled, twice NumPy's work), leaves the loop
unrolled, with NumPy's answer.  npbench correlation and covariance, a vector by such a
block written to a row and a column of one product, become one product instead
(test_loop_to_matmul.py)."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import xlanb
from xlanb_runtime.ir import builder as B, interpret, parse_graph, print_graph
from xlanb_runtime.ir.graph import Graph, LoopBody
from xlanb_runtime.ir.ops import Op

from tolerance import assert_close


def cholesky(A):
    """npbench cholesky: windowed inner loops of i trips, a windowed write after them."""
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def lu(A):
    """npbench lu: a windowed inner loop, then one whose reads are i long in every trip."""
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]


def ludcmp(A, b):
    """npbench ludcmp: lu, then two substitutions (the second's first slice is empty)."""
    x = np.zeros_like(b)
    y = np.zeros_like(b)
    lu(A)
    for i in range(A.shape[0]):
        y[i] = b[i] - A[i, :i] @ y[:i]
    for i in range(A.shape[0] - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x, y


def gramschmidt(A):
    """npbench gramschmidt: an upper nest, `for j in range(k + 1, n)`, whole columns."""
    Q = np.zeros_like(A)
    R = np.zeros((A.shape[1], A.shape[1]), dtype=A.dtype)
    for k in range(A.shape[1]):
        nrm = np.dot(A[:, k], A[:, k])
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, A.shape[1]):
            R[k, j] = np.dot(Q[:, k], A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


def upper_products(A):
    """Upper and offset: R[i, j] for j in (i, n), from whole columns."""
    n = A.shape[1]
    R = np.zeros((n, n), dtype=A.dtype)
    for i in range(n):
        for j in range(i + 1, n):
            R[i, j] = A[:, i] @ A[:, j] + R[i, j - 1]
    return R


def uneven(A):
    """Inner trip counts that do not count steadily with i (i * i % 11 + 8)."""
    n = A.shape[0]
    out = np.zeros(n, dtype=A.dtype)
    for i in range(n):
        for j in range((i * i) % 11 + 8):
            out[i] += A[i, j % n] * 0.5
    return out


def correlation(M, float_n, data):
    """npbench correlation: a vector by a shrinking block of columns, written to a row and
    a column of `corr` per trip; `data` is normalized in place first (loop-to-matmul
    makes the loop one product: test_loop_to_matmul.py)."""
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr


def covariance(M, float_n, data):
    """npbench covariance: as correlation, but its first trip reads all of `data`, which
    traces no slice (the copies line up from the trip's dot on)."""
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def upper_rows(v, A):
    """A vector by the columns right of i: not rolled (each trip is NumPy's call)."""
    n = A.shape[1]
    out = np.zeros((n, n), dtype=A.dtype)
    for i in range(n - 1):
        out[i, i + 1:] = v @ A[:, i + 1:]
    return out


def block_rows(A):
    """Two columns by a shrinking block of columns (a BLAS product per trip): not rolled."""
    n = A.shape[1]
    out = np.zeros((n, n), dtype=A.dtype)
    for i in range(n - 2):
        out[i, i + 1:] = (A[:, i:i + 2].T @ A[:, i + 1:]).sum(axis=0)
    return out


def uneven_columns(v, A):
    """Windows whose width does not count steadily with i: not rolled."""
    n = A.shape[1]
    out = np.zeros(n, dtype=A.dtype)
    for i in range(n):
        out[i] = (v @ A[:, (i * i) % 7:]).sum()
    return out


def durbin(r):
    """npbench durbin: a reversed prefix of r by a prefix of y, and y's prefix updated by
    its own reverse, both growing with k."""
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def _spd(n, rng):
    A = rng.random((n, n))
    return A @ A.T + n * np.eye(n)


def _check(fn, args, n=60):
    """The jitted call's results and arguments against NumPy's; the compiled program."""
    expected_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = fn(*expected_args)
    jitted = xlanb.jit(fn)
    got = jitted(*got_args)
    if expected is not None:
        expected = expected if isinstance(expected, tuple) else (expected,)
        got = got if isinstance(got, tuple) else (got,)
        for g, e in zip(got, expected):
            assert_close(np.asarray(g), np.asarray(e), n=n, k=8)
    for e, g in zip(expected_args, got_args):
        assert_close(g, e, n=n, k=8)
    return jitted.last_compiled


def _top_loops(compiled) -> int:
    return sum(1 for line in compiled.as_text().splitlines()
               if line.startswith("  %") and " = loop(" in line)


def _has_dynamic_loop(compiled) -> bool:
    """A loop inside a loop body whose trip count is an input (arg=(trips, carried, 1))."""
    return any(line.lstrip().startswith("|") and " = loop(" in line and
               line.split("arg=(")[1].split(")")[0].count(",") == 2
               for line in compiled.as_text().splitlines())


@pytest.mark.parametrize("fn, args", [
    (cholesky, lambda rng: (_spd(24, rng),)),
    (lu, lambda rng: (_spd(20, rng),)),
    (ludcmp, lambda rng: (_spd(20, rng), rng.random(20))),
    (gramschmidt, lambda rng: (rng.random((14, 12)) + np.eye(14, 12),)),
    (upper_products, lambda rng: (rng.random((6, 14)),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_triangular_nest_rolls_around_a_dynamic_inner_loop(fn, args):
    compiled = _check(fn, args(np.random.default_rng(0)))
    assert not compiled.runs_eagerly
    assert _has_dynamic_loop(compiled)
    assert _top_loops(compiled) <= 6        # not a loop per row


def test_a_trip_count_that_does_not_count_steadily_stays_unrolled():
    compiled = _check(uneven, (np.random.default_rng(1).random((12, 12)),))
    assert not _has_dynamic_loop(compiled)


def test_the_ieee_values_past_a_windows_lanes_are_never_read():
    """cholesky reads only the lower triangle: inf above it must not reach a result."""
    rng = np.random.default_rng(2)
    A = _spd(24, rng)
    A[np.triu_indices(24, 1)] = np.inf
    compiled = _check(cholesky, (A,))
    assert _has_dynamic_loop(compiled)


def _counting_body() -> Graph:
    """Body of `s = s + x` whose last parameter is the trip count (unread)."""
    s, x, count = B.parameter(0, (3,), np.float64), B.parameter(1, (3,), np.float64), \
        B.parameter(2, (), np.int64)
    return Graph([s, x, count], [B.binary(Op.ADD, s, x)], "body")


def test_a_dynamic_loop_runs_as_many_trips_as_its_input_says():
    s, x, count = B.parameter(0, (3,), np.float64), B.parameter(1, (3,), np.float64), \
        B.parameter(2, (), np.int64)
    loop = B.loop([s, x, count], LoopBody(1, 1, _counting_body(), dynamic=True))
    graph = Graph([s, x, count], [B.loop_result(loop, 0)], "program")
    for trips in (1, 4, 9):
        got = interpret(graph, [np.zeros(3), np.arange(3.0), np.int64(trips)])[0]
        np.testing.assert_array_equal(got, trips * np.arange(3.0))
    again = parse_graph(print_graph(graph))          # the text keeps it dynamic
    got = interpret(again, [np.zeros(3), np.ones(3), np.int64(5)])[0]
    np.testing.assert_array_equal(got, np.full(3, 5.0))


def _columns(rng, dtype, rows=30, columns=22):
    return (rng.random((rows, columns)) + 0.5).astype(dtype)


@pytest.mark.parametrize("fn", [block_rows, uneven_columns, upper_rows],
                         ids=lambda f: f.__name__)
def test_a_window_that_cannot_roll_keeps_numpys_answer(fn):
    rng = np.random.default_rng(5)
    A = _columns(rng, np.float64)
    A[:, 0] = np.inf             # in every trip's window, in none of its lanes
    args = (A,) if fn is block_rows else (rng.random(A.shape[0]), A)
    compiled = _check(fn, args, n=A.shape[0])
    assert _top_loops(compiled) == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reversed_prefixes_roll(dtype):
    """durbin: each trip's `np.flip` of a growing prefix lines up with the unreversed
    prefix it meets (the lanes past the prefix hold values of other trips)."""
    n = 28
    r = (np.random.default_rng(6).random(n) * 0.1).astype(dtype)
    compiled = _check(durbin, (r,), n=n)
    assert not compiled.runs_eagerly
    assert _top_loops(compiled) == 1
