"""Array creation from traced arrays: zeros_like, ones_like, full_like, empty_like, and
np.linspace between traced end points.

Creation functions without a traced argument (np.zeros, np.arange, np.eye, np.linspace)
never reach the tracer: they run eagerly and give concrete arrays, which become constants
(uniform ones as a scalar constant + broadcast) when they meet a Tracer.  The `*_like`
forms dispatch on their traced argument and lower to a broadcast scalar constant; only the
shape and dtype of the argument are used, never its values.
"""
from __future__ import annotations

import operator

import numpy as np

from xlanb_runtime.ir import builder as B

from ..tracer import Tracer
from . import implements
from .promote import broadcast_to, dtype_of, full, result_type, shape_of, to_node, wrap


def _filled(a, value, dtype, shape):
    shape = shape_of(a) if shape is None else (
        (operator.index(shape),) if np.ndim(shape) == 0 else tuple(shape))
    dtype = np.dtype(dtype) if dtype is not None else dtype_of(a)
    if isinstance(value, Tracer) or np.ndim(value) != 0:
        return wrap(broadcast_to(to_node(value, dtype), shape))
    return wrap(full(value, shape, dtype))


def _like(a, result, order, shape):
    """NumPy's *_like layout: `a`'s (order='K'), also for another shape of as many axes."""
    from ..layout import with_order
    if shape is None or np.ndim(a) != result.ndim:
        return with_order(result, order if shape is None else "C", (a,))
    return with_order(result, order, (a,), shape=np.shape(a))


@implements(np.zeros_like, np.empty_like)
def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _like(a, _filled(a, 0, dtype, shape), order, shape)


@implements(np.ones_like)
def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _like(a, _filled(a, 1, dtype, shape), order, shape)


@implements(np.full_like)
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _like(a, _filled(a, fill_value, dtype, shape), order, shape)


@implements(np.linspace)
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """np.linspace with traced scalar end points (`np.linspace(0, L, n)`, L an argument),
    following NumPy's formula step by step so the values round as NumPy's do; the number
    of points must be known (a traced one is retraced static)."""
    from . import unsupported
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if np.ndim(start) or np.ndim(stop) or axis != 0 or device is not None:
        return unsupported(np.linspace, (start, stop, num), dict(
            endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis), "np.linspace")
    div = (num - 1) if endpoint else num
    dt = np.result_type(result_type(start, stop), 1.0)
    delta = np.subtract(stop, start, dtype=dt)
    y = np.arange(0, num, dtype=dt)
    if div > 0:
        step = delta / div
        y = np.where(step == 0, y / div * delta, y * step)
    else:
        step = np.nan
        y = y * delta
    y = y + start
    if endpoint and num > 1:                      # y[-1] = stop, exactly
        y = np.concatenate([y[:-1], wrap(B.reshape(to_node(stop, dt), (1,)))])
    out_dtype = dt if dtype is None else np.dtype(dtype)
    if out_dtype.kind in "iu":
        y = np.floor(y)
    y = y.astype(out_dtype)
    return (y, step) if retstep else y
