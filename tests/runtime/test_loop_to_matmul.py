"""`loop-to-matmul`: a loop whose trip i writes row i and/or column i of one product over a
window of columns that moves with i (npbench correlation, covariance) compiles to one dot of
the whole operands and a masked write.  Results and argument contents stay NumPy's (the GEMM
sums in another order: dtype tolerances); loops that only look alike (a trip reading an
earlier trip's write, a window that does not move steadily, a vector from another column
than the row written, operands changed inside the loop) stay as traced, with NumPy's
answer."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import xlanb
from xlanb_runtime.compiler import CompileOptions, compile as compile_graph
from xlanb_runtime.ir import interpret

from test_loop_triangular import correlation, covariance
from tolerance import assert_close


def _check(fn, args, n: int, static=()):
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


def _dots(compiled) -> list[str]:
    """The types of the compiled program's dots (`f64[22,22]`), loop bodies' too."""
    return [line.rsplit(" : ", 1)[1].split()[0] for line in compiled.as_text().splitlines()
            if " = dot(" in line]


def _name(dtype) -> str:
    return "f32" if dtype == np.float32 else "f64"


def _columns(rng, dtype, rows=30, columns=22):
    return (rng.random((rows, columns)) + 0.5).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", [correlation, covariance], ids=lambda f: f.__name__)
def test_npbench_triangular_products_become_one_dot(fn, dtype):
    data = _columns(np.random.default_rng(3), dtype)
    M, N = data.shape[1], data.shape[0]
    compiled = _check(fn, (M, float(N), data), n=N, static=(0, 1))
    assert not compiled.runs_eagerly
    assert _dots(compiled) == [f"{_name(dtype)}[{M},{M}]"]      # 21 or 22 per-trip dots without


def writes_around_the_loop(M, data):
    """Writes before and after the loop, over elements the loop writes too (row 0) and
    does not (the corners)."""
    corr = np.zeros((M, M), dtype=data.dtype)
    corr[0, :] = 7.0
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    corr[M - 1, M - 1] = 1.0
    return corr


def a_write_inside_each_trip(M, data):
    """polybench's own correlation: each trip writes its diagonal element first, so no
    run of the product's writes is longer than one trip."""
    corr = np.zeros((M, M), dtype=data.dtype)
    for i in range(M - 1):
        corr[i, i] = 1.0
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    corr[M - 1, M - 1] = 1.0
    return corr


@pytest.mark.parametrize("fn, products", [(writes_around_the_loop, ["f64[8,8]"]),
                                          (a_write_inside_each_trip, [])],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_writes_around_and_inside_the_loop_stay_in_order(fn, products):
    data = _columns(np.random.default_rng(8), np.float64, rows=12, columns=8)
    compiled = _check(fn, (8, data), n=12, static=(0,))
    assert [t for t in _dots(compiled) if t == "f64[8,8]"] == products


def upper_rows_in_place(X, Y, out):
    """Row writes only, into an argument: what the trips never write (the lower
    triangle) keeps the caller's values."""
    for i in range(out.shape[0]):
        out[i, i:] = X[:, i] @ Y[:, i:] * 0.5


def whole_rows_and_columns(X, Y):
    """Trip i writes all of column i, then all of row i, of X.T @ Y (not symmetric): each
    element keeps the later trip's write, the row write on the diagonal."""
    n = X.shape[1]
    out = np.full((n, n), -1.0, dtype=X.dtype)
    for i in range(n):
        out[:, i] = X[:, i] @ Y
        out[i, :] = X[:, i] @ Y
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_writes_into_an_argument_keep_the_rest_of_it(dtype):
    rng = np.random.default_rng(4)
    X, Y = _columns(rng, dtype), _columns(rng, dtype)
    out = rng.random((22, 22)).astype(dtype)
    compiled = _check(upper_rows_in_place, (X, Y, out), n=30)
    assert _dots(compiled) == [f"{_name(dtype)}[22,22]"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_later_of_two_overlapping_writes_wins(dtype):
    rng = np.random.default_rng(5)
    X, Y = _columns(rng, dtype, columns=12), _columns(rng, dtype, columns=12)
    compiled = _check(whole_rows_and_columns, (X, Y), n=30)
    assert _dots(compiled) == [f"{_name(dtype)}[12,12]"]


def reads_an_earlier_trip(C):
    """Trip i reads column i of C after the earlier trips wrote into it."""
    for i in range(C.shape[0]):
        C[i, i:] = C[:, i] @ C[:, i:]


def moves_unsteadily(A):
    """Windows starting at i * i % n: rows of a product, but no triangle of it."""
    n = A.shape[1]
    out = np.zeros((n, n), dtype=A.dtype)
    for i in range(n):
        out[i, (i * i) % n:] = A[:, i] @ A[:, (i * i) % n:]
    return out


def another_column(A):
    """Row i gets the product of column i + 1, not column i."""
    n = A.shape[1]
    out = np.zeros((n, n), dtype=A.dtype)
    for i in range(n - 1):
        out[i, i:] = A[:, i + 1] @ A[:, i:]
    return out


def changed_inside(A):
    """Each trip scales a column of A before reading it."""
    n = A.shape[1]
    out = np.zeros((n, n), dtype=A.dtype)
    for i in range(n):
        A[:, i] *= 2.0
        out[i, i:] = A[:, i] @ A[:, i:]
    return out


@pytest.mark.parametrize("fn", [reads_an_earlier_trip, moves_unsteadily, another_column,
                                changed_inside], ids=lambda f: f.__name__)
def test_loops_that_only_look_alike_keep_numpys_answer(fn):
    rng = np.random.default_rng(6)        # small: each unrolled trip compiles kernels
    A = rng.random((8, 8)) * 0.05 if fn is reads_an_earlier_trip else \
        _columns(rng, np.float64, rows=12, columns=8)
    compiled = _check(fn, (A,), n=A.shape[0])
    assert all(t != f"f64[{A.shape[1]},{A.shape[1]}]" for t in _dots(compiled))


def test_the_pass_can_be_disabled_and_agrees_with_the_unrolled_trace():
    """The rewritten program against the traced one, both run by the interpreter."""
    data = _columns(np.random.default_rng(7), np.float64, rows=12, columns=8)
    M, N = data.shape[1], data.shape[0]
    graph = xlanb.jit(covariance, static_argnums=(0, 1)).lower(M, float(N), data).graph
    rewritten = compile_graph(graph)
    kept = compile_graph(graph, options=CompileOptions(disabled_passes=("loop-to-matmul",)))
    product = f"f64[{M},{M}]"
    assert _dots(rewritten) == [product] and product not in _dots(kept)
    expected = interpret(graph, [data])
    for got in (rewritten.run([data]), kept.run([data])):
        for g, e in zip(got, expected):
            assert_close(g, e, n=N)
