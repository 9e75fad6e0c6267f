"""np.poly* on coefficient arrays (highest power first), where the result's length is
known when tracing: polyadd, polysub, polyder, polyint and poly of real roots (fused), and
polyfit (NumPy's least squares, a library call).

Each rule follows NumPy's numpy/lib/_polynomial_impl.py step for step on traced values,
so dtypes and rounding are NumPy's.  What trims coefficients by their values is
data-dependent (a named error under `jit`, NumPy under `must_compile=False`): polymul
and polydiv (np.poly1d drops leading zeros), np.polynomial.polynomial's polyadd/polysub/
polymul/polydiv/polyint and polyutils.trimseq/as_series (trailing zeros), and np.poly of a
matrix or of complex roots (its dtype depends on whether they pair up).  np.poly1d objects
are NumPy's (unsupported here).
"""
from __future__ import annotations

import operator

import numpy as np

from ..tracer import Tracer
from . import DATA_DEPENDENT_HINTS, implements, unsupported
from .library import (call, data_dependent, implements_library, node_of, numpy_check,
                      refuse_data_dependent)
from .promote import wrap

_NO_TRIM = ("Use np.polyadd / np.polysub / np.polyder / np.polyint (no trimming: a length "
            "known when tracing) or np.convolve for a product")
for _func, _detail in ((np.polymul, "np.poly1d drops leading zero coefficients"),
                       (np.polydiv, "the remainder's leading zeros are trimmed")):
    data_dependent(_func, _detail)
    DATA_DEPENDENT_HINTS[_func] = _NO_TRIM

# np.polynomial's series (lowest power first) drop trailing zero coefficients; these skip
# NEP 18, and tracing.capture routes a call from user code here
_SERIES_HINT = ("Use np.polyadd / np.polysub / np.polyint / np.convolve on the coefficients "
                "reversed (highest power first; no trimming)")


def _trimmed(func, what: str, detail: str = "trailing zero coefficients are trimmed"):
    data_dependent(func, detail)
    DATA_DEPENDENT_HINTS[func] = _SERIES_HINT
    implements(func)(lambda *args, **kwargs: unsupported(func, args, kwargs, what))


for _name in ("polyadd", "polysub", "polymul", "polydiv"):
    _trimmed(getattr(np.polynomial.polynomial, _name), f"np.polynomial.polynomial.{_name}")
_trimmed(np.polynomial.polynomial.polyint, "np.polynomial.polynomial.polyint",
         "an all-zero series integrates to a series of length 1, any other one grows by m")
for _name in ("trimseq", "as_series"):
    _trimmed(getattr(np.polynomial.polyutils, _name), f"np.polynomial.polyutils.{_name}")


# -- np.polynomial.Polynomial: NumPy's own class, its series functions traced -----------------
# Polynomial(c)(x) calls polyutils.mapdomain and polynomial.polyval, and Polynomial(c)
# polyutils.as_series(trim=False); these read their arguments with np.array, so
# tracing.capture swaps their code while traces run (CODE_SWAPPED) and a traced argument
# comes here.  The arithmetic of two Polynomials trims (data-dependent: a named error).

_AS_SERIES = np.polynomial.polyutils.as_series      # (while traces run: a wrapper there)


@implements(_AS_SERIES)
def as_series(alist, trim=True):
    """NumPy's as_series on traced coefficients: without trimming, static lengths."""
    if trim:
        return unsupported(_AS_SERIES, (alist,), {"trim": trim},
                           "np.polynomial.polyutils.as_series")
    arrays = [np.atleast_1d(_traced(a)) for a in alist]
    for a in arrays:
        if a.size == 0:
            raise ValueError("Coefficient array is empty")
        if a.ndim != 1:
            raise ValueError("Coefficient array is not 1-d")
    dtype = np.common_type(*[np.empty(0, a.dtype) for a in arrays])
    return [a.astype(dtype) for a in arrays]


@implements(np.polynomial.polyutils.mapdomain)
def mapdomain(x, old, new):
    off, scl = np.polynomial.polyutils.mapparms(old, new)
    return off + scl * _traced(x)


@implements(np.polynomial.polynomial.polyval)
def polyval(x, c, tensor=True):
    """NumPy's Horner loop, with its `tensor` rule for an array x (a traced x is one)."""
    c = np.atleast_1d(_traced(c))
    if c.dtype.char in "?bBhHiIlLqQpP":
        c = c + 0.0
    if isinstance(x, (tuple, list)):
        x = np.asarray(x)
    if isinstance(x, (np.ndarray, Tracer)) and tensor:
        c = c.reshape(c.shape + (1,) * np.ndim(x))
    c0 = c[-1] + x * 0
    for i in range(2, len(c) + 1):
        c0 = c[-i] + c0 * x
    return c0


def _traced(x):
    return x if isinstance(x, Tracer) else wrap(node_of(x))


def _refuse_poly1d(func, *args):
    if any(isinstance(a, np.poly1d) for a in args):
        return unsupported(func, args, {}, f"np.{func.__name__} of an np.poly1d")
    return None


def _combine(func, op):
    def rule(a1, a2):
        refused = _refuse_poly1d(func, a1, a2)
        if refused is not None:
            return refused
        a1, a2 = np.atleast_1d(_traced(a1)), np.atleast_1d(_traced(a2))
        diff = len(a2) - len(a1)                  # the shorter one gets leading zeros
        if diff > 0:
            a1 = np.concatenate((np.zeros(diff, a1.dtype), a1))
        elif diff < 0:
            a2 = np.concatenate((np.zeros(-diff, a2.dtype), a2))
        return op(a1, a2)
    return rule


implements(np.polyadd)(_combine(np.polyadd, operator.add))
implements(np.polysub)(_combine(np.polysub, operator.sub))


@implements(np.polyder)
def polyder(p, m=1):
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    refused = _refuse_poly1d(np.polyder, p)
    if refused is not None:
        return refused
    p = _traced(p)
    for _ in range(m):                            # d/dx sum p_i x^(n-i)
        p = p[:-1] * np.arange(len(p) - 1, 0, -1)
    return p


@implements(np.polyint)
def polyint(p, m=1, k=None):
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    if k is None:
        k = np.zeros(m, float)
    k = np.atleast_1d(k)
    if len(k) == 1 and m > 1:
        k = k[0] * np.ones(m, float)
    if len(k) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    refused = _refuse_poly1d(np.polyint, p)
    if refused is not None:
        return refused
    p = _traced(p)
    for i in range(m):                            # each step: p / (n..1), then k_i
        p = np.concatenate((p / np.arange(len(p), 0, -1), k[i:i + 1]))
    return p


@implements(np.poly)
def poly(seq_of_zeros):
    """The monic polynomial with these real roots: (x - z_0)(x - z_1)..., one root at a
    time as NumPy's convolve with [1, -z] (a shift and a multiply-subtract)."""
    zeros = np.atleast_1d(_traced(seq_of_zeros))
    if zeros.ndim == 2 and zeros.shape[0] == zeros.shape[1] != 0 or zeros.dtype.kind == "c":
        return refuse_data_dependent(
            np.poly, (seq_of_zeros,), {}, "np.poly of a matrix or of complex roots",
            "its dtype depends on the values (complex roots that pair up give real "
            "coefficients)")
    if zeros.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dtype = np.dtype(np.mintypecode(zeros.dtype.char))
    zeros = zeros.astype(dtype)
    if len(zeros) == 0:
        return 1.0
    a = np.ones((1,), dtype)
    for i in range(len(zeros)):
        shifted = np.concatenate((a, np.zeros(1, dtype)))
        behind = np.concatenate((np.zeros(1, dtype), a))
        a = shifted - zeros[i] * behind           # a_k - z a_(k-1)
    return a


@implements_library(np.polyfit)
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """NumPy's least-squares fit as a library call: the coefficients have a static shape
    (NumPy's RankWarning, if any, at run time).  full=True and cov= return the rank and
    singular values (value-dependent) or need more rules: NumPy under must_compile=False."""
    if full or cov is not False or not isinstance(deg, (int, np.integer)) or deg < 0:
        if not isinstance(deg, (int, np.integer)) or deg < 0:
            numpy_check(np.polyfit, np.arange(3.0), np.arange(3.0), deg)
        return unsupported(np.polyfit, (x, y, deg), {"rcond": rcond, "full": full, "w": w,
                                                     "cov": cov}, "np.polyfit(full=, cov=)")
    xs, ys = node_of(x), node_of(y)
    if xs.ndim != 1 or xs.size == 0 or ys.ndim not in (1, 2) or ys.shape[0] != xs.shape[0]:
        numpy_check(np.polyfit, np.zeros(xs.shape), np.zeros(ys.shape), int(deg))
    inputs, keyword = [xs, ys], ()
    if w is not None:
        inputs, keyword = inputs + [node_of(w)], ("w",)
    return call("np.polyfit", inputs, deg=int(deg), rcond=rcond, keyword_arrays=keyword)
