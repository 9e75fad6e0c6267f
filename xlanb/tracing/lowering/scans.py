"""Scans as library calls: np.cumsum / cumprod / nancumsum / nancumprod,
np.cumulative_sum / cumulative_prod, `ufunc.accumulate`, and `x.cumsum()` / `x.cumprod()`.

Each is one `library-call` of NumPy's function, so dtypes (cumsum of int32 is int64) and
rounding (NumPy adds in order) are NumPy's.  cumsum has a VJP (a reversed cumsum, in
autodiff/library_rules.py).  A scan as a fusible IR op (a loop kernel carrying the running
value, fused with its producers) is the next step; see docs/numpy_support.md for status.
"""
from __future__ import annotations

import numpy as np

from ..tracer import Tracer
from . import unsupported
from .library import axis_param, call, implements_library, node_of, with_out


def _scan(name: str):
    def rule(a, axis=None, dtype=None, out=None):
        x = node_of(a)
        axis = None if axis is None else axis_param(axis, x.ndim)
        dtype = None if dtype is None else np.dtype(dtype).name
        return with_out(out, call(name, [x], axis=axis, dtype=dtype), name)
    return rule


for _name in ("cumsum", "cumprod", "nancumsum", "nancumprod"):
    implements_library(getattr(np, _name))(_scan(f"np.{_name}"))


def _cumulative(name: str):
    def rule(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        node = node_of(x)
        if axis is None and node.ndim > 1:
            raise ValueError("axis must be specified for multi-dimensional arrays.")
        axis = None if axis is None else axis_param(axis, node.ndim)
        dtype = None if dtype is None else np.dtype(dtype).name
        return with_out(out, call(name, [node], axis=axis, dtype=dtype,
                                  include_initial=bool(include_initial)), name)
    return rule


for _name in ("cumulative_sum", "cumulative_prod"):
    if hasattr(np, _name):
        implements_library(getattr(np, _name))(_cumulative(f"np.{_name}"))


def accumulate(ufunc: np.ufunc, array, axis=0, dtype=None, out=None):
    """`ufunc.accumulate` for binary ufuncs with one output (NumPy's own errors for the
    rest: accumulate of a 0-d array, axis=None on more than one dimension)."""
    what = f"np.{ufunc.__name__}.accumulate"
    if ufunc.nin != 2 or ufunc.nout != 1 or not isinstance(getattr(np, ufunc.__name__, None),
                                                           np.ufunc):
        return unsupported(ufunc.accumulate, (array,), {"axis": axis, "dtype": dtype}, what)
    x = node_of(array)
    if x.ndim == 0:
        raise TypeError("cannot accumulate on a scalar")
    if axis is None:
        if x.ndim != 1:
            raise ValueError("accumulate does not allow multiple axes")
        axis = 0
    axis = axis_param(axis, x.ndim)
    dtype = None if dtype is None else np.dtype(dtype).name
    result = call("np.ufunc.accumulate", [x], ufunc=ufunc.__name__, axis=axis, dtype=dtype)
    return with_out(out[0] if isinstance(out, tuple) else out, result, what)


def _attach_methods() -> None:
    from ..methods import _method
    for name in ("cumsum", "cumprod"):
        setattr(Tracer, name, _method(name, getattr(np, name)))


_attach_methods()
