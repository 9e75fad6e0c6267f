"""Matrix-vector products whose matrix is computed for them alone (`alpha * A @ x`), and
inner products of a computed vector (also one other kernels read), become reduces that
compute the matrix (vector) as they sweep it (passes/expand.py `gemv_as_reduce`): one
kernel, no matrix written out; against NumPy, and left to BLAS where the matrix is an
argument or is read elsewhere."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb

from tolerance import assert_close

RNG = np.random.default_rng(0)


def _normal(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


CASES = {
    "gesummv": (lambda a, b, A, B, x: a * A @ x + b * B @ x,
                (1.5, 1.2, _normal(60, 40), _normal(60, 40), _normal(40))),
    "vector on the left": (lambda A, y: y @ np.tanh(A), (_normal(50, 30), _normal(50))),
    "float32": (lambda A, x: (A * 2.0 - 1.0) @ x, (_normal(33, 70, dtype=np.float32),
                                                 _normal(70, dtype=np.float32))),
    "transposed computed matrix": (lambda A, x: np.exp(A).T @ x, (_normal(40, 50),
                                                                 _normal(40))),
    "computed vector": (lambda A, x: np.sqrt(A * A) @ np.exp(x), (_normal(20, 30),
                                                                 _normal(30))),
    "non-finite entries": (lambda A, x: (A / A) @ x,
                           (np.where(RNG.random((20, 10)) < 0.1, 0.0, 1.0), _normal(10))),
    "inner product of a rolled vector": (lambda x, y: np.dot(x, np.roll(y, 1)),
                                         (_normal(30), _normal(30))),
    "inner product, both computed": (lambda x, y: (x - 1.0) @ np.exp(y),
                                     (_normal(25), _normal(25))),
}


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")      # 0 / 0
@pytest.mark.parametrize("name", CASES)
def test_computed_matrix_times_vector_is_one_reduce_and_matches_numpy(name):
    fn, args = CASES[name]
    jitted = xlanb.jit(fn)
    got, expected = jitted(*args), fn(*args)
    matrix = next((a for a in args if np.ndim(a) == 2), None)
    assert_close(got, expected, n=args[0].size if matrix is None else matrix.shape[1])
    text = jitted.last_compiled.as_text()
    assert " dot(" not in text and "reduce(" in text
    kinds = [k.kind for k in jitted.last_compiled.kernels]
    assert kinds.count("reduce") == 1 and "dot" not in kinds      # exp(x): a loop first


def test_argument_matrices_and_shared_ones_stay_blas_dots():
    A, x = _normal(30, 20), _normal(20)

    def shared(A, x):
        scaled = 2.0 * A
        return scaled @ x, scaled.sum()
    for fn in (lambda A, x: A @ x, shared):
        jitted = xlanb.jit(fn)
        got, expected = jitted(A, x), fn(A, x)
        for g, e in zip(np.atleast_1d(got) if not isinstance(got, tuple) else got,
                        np.atleast_1d(expected) if not isinstance(expected, tuple)
                        else expected):
            assert_close(g, e, n=20)
        assert " dot(" in jitted.last_compiled.as_text()


def test_chained_inner_products_of_shared_vectors_all_become_reduces():
    """Inner products of a vector other kernels read too (`r @ r` beside `r - alpha *
    Ap`), one after another: each is a reduce, also those after the first rewritten (the
    pass once matched only the first, later dots being new nodes)."""
    def steps(r, q):
        r = r - q
        for _ in range(3):
            s = r @ r
            r = r - (s / 100.0) * q
        return r, s
    r, q = _normal(200), _normal(200)
    jitted = xlanb.jit(steps)
    for got, expected in zip(jitted(r, q), steps(r, q)):
        assert_close(got, expected, n=200 * 3)
    kinds = [k.kind for k in jitted.last_compiled.kernels]
    assert "dot" not in kinds and kinds.count("reduce") >= 3, kinds
