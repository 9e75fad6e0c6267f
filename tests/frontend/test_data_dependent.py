"""Functions whose result's shape (or dtype) depends on the values: under `jit` each raises
DataDependentShapeError naming the call and the user's line and saying what to use instead;
under `must_compile=False` each runs with NumPy and gives NumPy's answer.  The support table
reports them as "data-dependent shape", apart from what compiles."""
import numpy as np
import pytest

import xlanb
from xlanb.errors import DataDependentShapeError

X = np.array([3.0, 0.0, 1.0, 3.0, 0.0, 2.0])
M = np.array([[2.0, 1.0], [-1.0, 3.0]])

# name in the table -> (a call of it, its argument, text of the advice)
CALLS = {
    "np.unique": (lambda x: np.unique(x), X, "np.sort"),
    "np.nonzero": (lambda x: np.nonzero(x), X, "np.where(mask"),
    "np.argwhere": (lambda x: np.argwhere(x > 1), X, "np.where(mask"),
    "np.flatnonzero": (lambda x: np.flatnonzero(x), X, "np.where(mask"),
    "np.extract": (lambda x: np.extract(x > 1, x), X, "x[mask].sum()"),
    "ndarray.nonzero": (lambda x: x.nonzero(), X, "np.where"),
    "np.intersect1d": (lambda x: np.intersect1d(x, x[:3]), X, "np.isin"),
    "np.union1d": (lambda x: np.union1d(x, x[:3]), X, "np.isin"),
    "np.setdiff1d": (lambda x: np.setdiff1d(x, x[:3]), X, "np.isin"),
    "np.setxor1d": (lambda x: np.setxor1d(x, x[:3]), X, "np.isin"),
    "np.trim_zeros": (lambda x: np.trim_zeros(x), X, "Slice"),
    "np.roots": (lambda x: np.roots(x[:3] + 1), X, "np.polyval"),
    "np.linalg.eig": (lambda a: np.linalg.eig(a), M, "np.linalg.eigh"),
    "np.linalg.eigvals": (lambda a: np.linalg.eigvals(a), M, "np.linalg.eigvalsh"),
}
# ... and functions whose shape depends on the values in some of their forms only (the
# support table counts them as compiled, with a note)
SOMETIMES = {
    "np.bincount": (lambda x: np.bincount(x.astype(np.int64)), X, "minlength="),
    "np.histogram(bins='auto')": (lambda x: np.histogram(x, bins="auto"), X, "must_compile"),
}


def _assert_same(expected, got):
    if isinstance(expected, tuple):
        for e, g in zip(expected, got):
            _assert_same(e, g)
        return
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(CALLS) + sorted(SOMETIMES))
def test_named_error_under_jit_says_what_to_use(name):
    fn, arg, advice = {**CALLS, **SOMETIMES}[name]
    with pytest.raises(DataDependentShapeError) as info:
        xlanb.jit(fn)(arg)
    message = str(info.value)
    assert advice in message and "must_compile=False" in message, message
    assert "test_data_dependent.py" in message            # the user's line


@pytest.mark.parametrize("name", sorted(CALLS) + sorted(SOMETIMES))
def test_runs_with_numpy_under_must_compile_false(name):
    fn, arg, _ = {**CALLS, **SOMETIMES}[name]
    _assert_same(fn(arg), xlanb.jit(fn, must_compile=False)(arg))
