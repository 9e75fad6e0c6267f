"""np.polyadd / polysub / polyder / polyint / poly (real roots) under `jit` against NumPy,
over float64, float32 and int coefficients, orders and integration constants; the
functions whose result is trimmed by its values (np.polymul, np.polydiv, np.poly of
complex roots or a matrix) are DataDependentShapeError under `jit` and NumPy's under
`must_compile=False`."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb.errors import DataDependentShapeError, UnsupportedNumPyFunctionError
from tolerance import assert_like_numpy

P = np.array([3.0, -2.0, 0.5, 1.0])
Q = np.array([1.0, 4.0])
CASES = {
    "polyadd": lambda p, q: (np.polyadd(p, q), np.polyadd(q, p), np.polyadd(p, p)),
    "polysub": lambda p, q: (np.polysub(q, p), np.polysub(p, q)),
    "polyder": lambda p, q: (np.polyder(p), np.polyder(p, 2), np.polyder(p, 0),
                             np.polyder(p, 5)),
    "polyint": lambda p, q: (np.polyint(p), np.polyint(p, 2, k=[1.0, 2.0]),
                             np.polyint(q, 3, k=0.5), np.polyint(p, 0)),
    "poly": lambda p, q: (np.poly(p), np.poly(q[:1])),
    "composed": lambda p, q: np.polyval(np.polyder(np.polyadd(p, q)), p),
}


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_static_length_polynomials_match_numpy(name, dtype):
    p, q = P.astype(dtype), Q.astype(dtype)
    assert_like_numpy(xlanb.jit(CASES[name])(p, q), CASES[name](p, q), n=8)


def test_polynomials_with_traced_constants_and_errors():
    k = np.array([0.25, -1.0])
    assert_like_numpy(xlanb.jit(lambda p, k: np.polyint(p, 2, k=k))(P, k),
                      np.polyint(P, 2, k=k))
    assert xlanb.jit(lambda p: np.poly(p[:0]))(P) == 1.0
    with pytest.raises(ValueError, match="positive"):
        xlanb.jit(lambda p: np.polyder(p, -1))(P)
    with pytest.raises(ValueError, match="rank-1"):
        xlanb.jit(lambda p: np.polyint(p, 3, k=[1.0, 2.0]))(P)


@pytest.mark.parametrize("fn", [lambda p, q: np.polymul(p, q),
                                lambda p, q: np.polydiv(p, q),
                                lambda p, q: np.poly(p + 1j),
                                lambda p, q: np.poly(np.outer(q, q))],
                         ids=["polymul", "polydiv", "poly complex", "poly matrix"])
def test_trimmed_results_are_data_dependent(fn):
    with pytest.raises(DataDependentShapeError):
        xlanb.jit(fn)(P, Q)
    got, expected = xlanb.jit(fn, must_compile=False)(P, Q), fn(P, Q)
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_allclose(g, e, rtol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda p, q: np.polynomial.polynomial.polyadd(p, q),
    lambda p, q: np.polynomial.polynomial.polysub(p, q),
    lambda p, q: np.polynomial.polynomial.polymul(p, q),
    lambda p, q: np.polynomial.polynomial.polydiv(p, q),
    lambda p, q: np.polynomial.polynomial.polyint(p),
    lambda p, q: np.polynomial.polyutils.trimseq(p),
    lambda p, q: np.polynomial.polyutils.as_series([p, q])],
    ids=["polyadd", "polysub", "polymul", "polydiv", "polyint", "trimseq", "as_series"])
def test_series_functions_that_trim_are_named(fn):
    """np.polynomial's series (lowest power first) drop trailing zeros: a named error that
    points at the np.poly* functions, and NumPy's result under must_compile=False."""
    with pytest.raises(DataDependentShapeError, match="np.polyadd"):
        xlanb.jit(fn)(P, Q)
    got, expected = xlanb.jit(fn, must_compile=False)(P, Q), fn(P, Q)
    for g, e in zip(got if isinstance(got, (tuple, list)) else (got,),
                    expected if isinstance(expected, (tuple, list)) else (expected,)):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_polyfit_is_numpys_least_squares():
    x = np.linspace(0, 2, 20)
    y = 3 * x ** 2 - x + 0.5 + 0.01 * np.sin(7 * x)
    w = np.linspace(1, 2, 20)
    fn = lambda x, y, w: (np.polyfit(x, y, 2), np.polyfit(x, np.stack([y, 2 * y], 1), 1),  # noqa
                          np.polyfit(x, y, 2, w=w), np.polyfit(x, y, 3, rcond=1e-10),
                          np.polyval(np.polyfit(x * 2, y, 3), x))
    compiled = xlanb.jit(fn).lower(x, y, w).compile()
    assert "library-call" in compiled.as_text()
    assert_like_numpy(compiled(x, y, w), fn(x, y, w), n=20)
    with pytest.raises(UnsupportedNumPyFunctionError, match="full="):
        xlanb.jit(lambda x, y: np.polyfit(x, y, 2, full=True))(x, y)
    with pytest.raises(ValueError, match="deg >= 0"):
        xlanb.jit(lambda x, y: np.polyfit(x, y, -1))(x, y)


Poly = np.polynomial.Polynomial
POLYNOMIAL_CLASS = {
    "static": lambda x, c: Poly([1.0, 2.0, 3.0])(x),
    "domain_window": lambda x, c: Poly([1.0, 2.0, 3.0], domain=[0, 2], window=[-1, 2])(x),
    "traced_coefficients": lambda x, c: Poly(c)(x) + Poly(c.astype(np.int64))(2 * x),
    "coef_attribute": lambda x, c: Poly(c * 2).coef,
    "static_arithmetic": lambda x, c: (Poly([1.0, 2.0]) * Poly([0.5, 1.0]) + 1).deriv()(x),
    # NumPy's `tensor` rule: each column of a 2-D c is a polynomial over all of x
    "polyval_tensor": lambda x, c: np.polynomial.polynomial.polyval(x, np.outer(c, [1, 2])),
}


@pytest.mark.parametrize("name", sorted(POLYNOMIAL_CLASS))
def test_polynomial_class_compiles(name):
    x, c = np.linspace(-1.0, 2.0, 5), np.array([1.0, -2.0, 0.5])
    fn = POLYNOMIAL_CLASS[name]
    assert_like_numpy(xlanb.jit(fn)(x, c), fn(x, c))


def test_polynomial_arithmetic_on_traced_coefficients_is_named():
    """Polynomial.__add__ turns errors into NotImplemented (a TypeError): jit raises the
    named error instead, and must_compile=False gives NumPy's result."""
    def fn(x, c):
        return (Poly(c) + Poly(c[:2]))(x)
    x, c = np.linspace(-1.0, 2.0, 5), np.array([1.0, -2.0, 0.5])
    with pytest.raises(DataDependentShapeError, match="trimmed"):
        xlanb.jit(fn)(x, c)
    np.testing.assert_allclose(xlanb.jit(fn, must_compile=False)(x, c), fn(x, c))
