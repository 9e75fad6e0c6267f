"""Array creation from traced arrays: zeros_like, ones_like, full_like, empty_like.

Creation functions without a traced argument (np.zeros, np.arange, np.eye, np.linspace)
never reach the tracer: they run eagerly and give concrete arrays, which become constants
(uniform ones as a scalar constant + broadcast) when they meet a Tracer.  The `*_like`
forms dispatch on their traced argument and lower to a broadcast scalar constant; only the
shape and dtype of the argument are used, never its values.
"""
from __future__ import annotations

import operator

import numpy as np

from ..tracer import Tracer
from . import implements
from .promote import broadcast_to, dtype_of, full, shape_of, to_node, wrap


def _filled(a, value, dtype, shape):
    shape = shape_of(a) if shape is None else (
        (operator.index(shape),) if np.ndim(shape) == 0 else tuple(shape))
    dtype = np.dtype(dtype) if dtype is not None else dtype_of(a)
    if isinstance(value, Tracer) or np.ndim(value) != 0:
        return wrap(broadcast_to(to_node(value, dtype), shape))
    return wrap(full(value, shape, dtype))


@implements(np.zeros_like, np.empty_like)
def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _filled(a, 0, dtype, shape)


@implements(np.ones_like)
def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _filled(a, 1, dtype, shape)


@implements(np.full_like)
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _filled(a, fill_value, dtype, shape)
