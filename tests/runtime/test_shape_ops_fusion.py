"""Shape-only ops and concatenates inside kernels, and library kernels as the exception.

Through `xlanb.jit` against NumPy: a concatenate (np.stack, np.concatenate, np.hstack)
fuses with what computes its operands, whatever its axis, dtype or kernel kind; a reshape
computed only for its user is written by its producer's loop; every library kernel that
remains says why in its decisions."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb_runtime.passes.fusion import MAX_CONCATENATE_OPERANDS


def _compile(fn, *args):
    return xlanb.jit(fn).lower(*args).compile()


def _kinds(compiled) -> list[str]:
    return [k.kind for k in compiled.kernels]


def _check(fn, *args):
    got, want = xlanb.jit(fn)(*args), fn(*args)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    if np.asarray(want).dtype.kind == "f":        # exp: vecmath's, within 1-2 ulp
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 7)).astype(np.float32)
Y = RNG.standard_normal((6, 3)).astype(np.float32)

CONCATENATES = {
    "stack of shifted slices": (lambda x: np.stack([x[:, i:i + 4] for i in range(3)], 1) * 2,
                                (X,)),
    "concatenate rows, exp operand": (lambda x, y: np.concatenate([np.exp(x), x[:2] + 1]),
                                      (X, X)),
    "hstack of parameters": (lambda x, y: np.hstack([x, y]) - 1, (X, Y)),
    "concatenate then sum per row": (lambda x, y: np.concatenate([x, y * y], 1).sum(1),
                                     (X, Y)),
    "concatenate then full sum": (lambda x, y: np.concatenate([x, -y], 1).max(), (X, Y)),
    "int64": (lambda a, b: np.concatenate([a * 3, b]), (np.arange(12).reshape(4, 3),
                                                        np.arange(6).reshape(2, 3))),
    "bool": (lambda a, b: np.concatenate([a > 0, b < 0], 1), (X, Y)),
    "float64 with empty operand": (lambda a, b: np.concatenate([a, b[:0], a + 1]),
                                   (X.astype(np.float64), X.astype(np.float64))),
}


@pytest.mark.parametrize("name", list(CONCATENATES))
def test_concatenate_fuses_and_matches_numpy(name):
    fn, args = CONCATENATES[name]
    _check(fn, *args)
    assert "library" not in _kinds(_compile(fn, *args)), name


def test_concatenate_keeps_negative_zero_and_nan():
    a = np.array([-0.0, np.nan, np.inf], np.float32)
    fn = lambda a: np.concatenate([a, -a])   # noqa: E731
    got = xlanb.jit(fn)(a)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(fn(a)))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(fn(a)))


def test_stack_of_slices_is_one_kernel():
    fn, args = CONCATENATES["stack of shifted slices"]
    assert len(_compile(fn, *args).kernels) == 1


def test_wide_concatenate_stays_a_library_call_with_its_reason():
    n = MAX_CONCATENATE_OPERANDS + 1
    fn = lambda x: np.concatenate([x[i:i + 1] * 2 for i in range(n)])   # noqa: E731
    x = np.arange(n, dtype=np.float64)
    _check(fn, x)
    library = [k for k in _compile(fn, x).kernels if k.kind == "library"]
    assert [k.ops for k in library] == [["concatenate"]]
    assert "np.concatenate" in library[0].decisions[0]


def test_reshape_of_a_value_computed_for_it_joins_the_producing_loop():
    fn = lambda x: np.concatenate([(x[:, :3] * 2).reshape(1, 18), x.reshape(1, 42)], 1)  # noqa
    _check(fn, X)
    assert _kinds(_compile(fn, X)) == ["loop"]
    fn2 = lambda w: w.reshape(2, 21) @ np.ones((21, 3), np.float32)   # noqa: E731
    _check(fn2, X)


def test_every_library_kernel_records_why():
    def fn(x):
        return np.sort(x * 2).reshape(3, 14), np.argmax(x, axis=1)
    compiled = _compile(fn, X)
    for got, want in zip(xlanb.jit(fn)(X), fn(X)):
        np.testing.assert_array_equal(got, want)
    library = [k for k in compiled.kernels if k.kind == "library"]
    assert library
    for kernel in library:
        assert kernel.decisions and kernel.decisions[0].startswith("library: "), kernel


def test_concatenate_read_at_shifted_indices_is_written_once():
    """np.roll is a concatenate of two slices; a roll of a roll reads the inner one at
    shifted indices.  Recomputed per read, three unrolled life steps would grow 8x per
    step; written once, the program stays small."""
    def life(board):
        for _ in range(3):
            n = sum(np.roll(np.roll(board, i, 0), j, 1)
                    for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
            board = ((n == 3) | ((board == 1) & (n == 2))).astype(board.dtype)
        return board
    board = (np.random.default_rng(1).random((9, 11)) < 0.4).astype(np.int64)
    _check(life, board)
    decisions = [d for k in _compile(life, board).kernels for d in k.decisions]
    assert any("read at shifted indices" in d for d in decisions)


@pytest.mark.parametrize("sizes", [(0, 3), (3, 0), (0, 0), (0, 2, 0), (2, 0, 1)])
def test_concatenate_with_empty_operands(sizes):
    arrays = [np.arange(n, dtype=np.float64) + 10 * i for i, n in enumerate(sizes)]
    fn = lambda *xs: np.concatenate([x * 2 for x in xs])   # noqa: E731
    _check(fn, *arrays)
