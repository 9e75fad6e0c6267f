"""Scans: np.cumsum / cumprod / nancumsum / nancumprod, np.cumulative_sum / cumulative_prod,
`ufunc.accumulate`, and `x.cumsum()` / `x.cumprod()`.

Each lowers to one IR `scan` (sum/prod/max/min along an axis), which fuses with its
elementwise producers and consumers (`np.cumsum(x * x) / n` is one loop).  The result
dtype is NumPy's, asked of NumPy on a tiny array (cumsum of int32 is int64, of bool int64,
`dtype=` casts first), and the scan combines in that dtype in order, as NumPy's accumulate
does.  `axis=None` flattens (a 0-d array becomes (1,)).  nancumsum/nancumprod replace NaNs
by the identity first, as NumPy's `_replace_nan`.

What has no IR form runs NumPy's own function as a `library-call`: a float16 result (NumPy
rounds the running value to float16 at every step; a float16 input scanned in float32 is
an IR scan), complex max/min (NumPy's lexicographic order), and accumulate of other ufuncs
(np.subtract.accumulate, np.logical_or.accumulate, ...).
"""
from __future__ import annotations

import operator

import numpy as np

from xlanb_runtime.ir import Node, Op
from xlanb_runtime.ir import builder as B

from ..layout import with_order
from ..tracer import Tracer
from . import implements, unsupported
from .library import axis_param, call, check_within, node_of, numpy_check, with_out
from .promote import scalar, wrap

_KINDS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}
_BOOL_KINDS = {"sum": "max", "prod": "min", "max": "max", "min": "min"}   # or, and


def _result_dtype(numpy_fn, x: Node, **kwargs) -> np.dtype:
    """The dtype NumPy's scan gives x's dtype with these keywords (NumPy's own error for a
    dtype it refuses)."""
    numpy_check(numpy_fn, np.zeros(1, x.dtype), **kwargs)
    with np.errstate(all="ignore"):
        return np.asarray(numpy_fn(np.zeros(1, x.dtype), **kwargs)).dtype


def has_scan_form(kind: str, x: Node, dtype: np.dtype) -> bool:
    """Whether a scan of `kind` of x in `dtype` is an IR scan (else NumPy's library
    call): not a float16 result, not complex max/min."""
    dtype = np.dtype(dtype)
    return dtype.kind in "biufc" and dtype != np.float16 and not (
        dtype.kind == "c" and kind in ("max", "min"))


def scan_node(x: Node, kind: str, axis: int | None, dtype: np.dtype) -> Node:
    """x converted to `dtype` and scanned along `axis` (None: flattened)."""
    if axis is None:
        x, axis = B.reshape(x, (x.size,)), 0
    if dtype == np.bool_:
        kind = _BOOL_KINDS[kind]
    return B.scan(B.convert(x, dtype), kind, axis)


def _nan_as(x: Node, identity) -> Node:
    """NaNs (either part, for complex) replaced by `identity`: NumPy's `_replace_nan`."""
    if x.dtype.kind not in "fc":
        return x
    return B.select(B.binary(Op.EQ, x, x), x, B.broadcast(scalar(identity, x.dtype), x.shape))


def _scan(name: str, kind: str, nan_identity=None):
    numpy_fn = getattr(np, name)

    def rule(a, axis=None, dtype=None, out=None):
        x = node_of(a)
        if x.ndim == 0:                      # NumPy scans a 0-d array as a (1,) one
            x = B.reshape(x, (1,))
        axis = None if axis is None else axis_param(operator.index(axis), x.ndim)
        result = _result_dtype(numpy_fn, x, dtype=dtype)
        if not has_scan_form(kind, x, result):
            dtype = None if dtype is None else np.dtype(dtype).name
            scanned = call(f"np.{name}", [x], axis=axis, dtype=dtype)
        else:
            if nan_identity is not None:
                x = _nan_as(x, nan_identity)
            scanned = wrap(scan_node(x, kind, axis, result))
        return with_out(out, with_order(scanned, "K", (a,)), name)    # NumPy's order
    return rule


for _name, _kind, _nan in (("cumsum", "sum", None), ("cumprod", "prod", None),
                           ("nancumsum", "sum", 0), ("nancumprod", "prod", 1)):
    implements(getattr(np, _name))(_scan(_name, _kind, _nan))


def _cumulative(name: str, kind: str):
    numpy_fn = getattr(np, name)
    identity = 0 if kind == "sum" else 1

    def rule(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        node = node_of(x)
        if axis is None and node.ndim > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` "
                             "argument is required.")          # NumPy's words
        if node.ndim == 0:
            node = B.reshape(node, (1,))
        axis = 0 if axis is None else axis_param(operator.index(axis), node.ndim)
        result = _result_dtype(lambda v, **k: numpy_fn(v, axis=0, **k), node, dtype=dtype)
        if not has_scan_form(kind, node, result):
            dtype = None if dtype is None else np.dtype(dtype).name
            scanned = call(f"np.{name}", [node], axis=axis, dtype=dtype,
                           include_initial=bool(include_initial))
        else:
            scanned = scan_node(node, kind, axis, result)
            if include_initial:
                config = [(0, 0, 0)] * node.ndim
                config[axis] = (1, 0, 0)
                scanned = B.pad(scanned, scalar(identity, result), config)
            scanned = wrap(scanned)
        return with_out(out, with_order(scanned, "K", (x,)), name)
    return rule


for _name, _kind in (("cumulative_sum", "sum"), ("cumulative_prod", "prod")):
    if hasattr(np, _name):
        implements(getattr(np, _name))(_cumulative(_name, _kind))


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
    if isinstance(axis, tuple):            # NumPy takes one axis in a tuple
        if len(axis) != 1:
            raise ValueError("accumulate does not allow multiple axes")
        axis = axis[0]
    if axis is None:
        if x.ndim != 1:
            raise ValueError("accumulate does not allow multiple axes")
        axis = 0
    axis = axis_param(operator.index(axis), x.ndim)
    out = out[0] if isinstance(out, tuple) else out
    kind = _KINDS.get(ufunc.__name__)
    if kind is not None:
        result = _result_dtype(ufunc.accumulate, x, dtype=dtype)
        if has_scan_form(kind, x, result):
            return with_out(out, with_order(wrap(scan_node(x, kind, axis, result)), "K",
                                            (array,)), what)
    dtype = None if dtype is None else np.dtype(dtype).name
    result = call("np.ufunc.accumulate", [x], ufunc=ufunc.__name__, axis=axis, dtype=dtype)
    return with_out(out, with_order(result, "K", (array,)), what)


def reduceat(ufunc: np.ufunc, array, indices, axis=0, dtype=None, out=None):
    """`ufunc.reduceat` of a binary ufunc along one axis: NumPy's own call (a library
    call; its result has one element per index, a static shape), after a run-time check
    of the indices against the axis (NumPy's IndexError, before any kernel writes)."""
    what = f"np.{ufunc.__name__}.reduceat"
    params = {"axis": axis, "dtype": dtype}
    if ufunc.nin != 2 or ufunc.nout != 1 or not isinstance(getattr(np, ufunc.__name__, None),
                                                           np.ufunc):
        return unsupported(ufunc.reduceat, (array, indices), params, what)
    x, where = node_of(array), node_of(indices)
    if where.ndim != 1 or where.dtype.kind not in "iu":
        return unsupported(ufunc.reduceat, (array, indices), params,
                           f"{what} with indices that are not a 1-D integer array")
    if x.ndim == 0:
        raise TypeError("cannot reduceat a scalar")
    axis = axis_param(operator.index(axis), x.ndim)
    check_within(where, 0, x.shape[axis] - 1, "IndexError",
                 f"index {{value}} out-of-bounds in {ufunc.__name__}.reduceat "
                 f"[0, {x.shape[axis]})")
    dtype = None if dtype is None else np.dtype(dtype).name
    result = call("np.ufunc.reduceat", [x, where], ufunc=ufunc.__name__, axis=axis,
                  dtype=dtype)
    return with_out(out[0] if isinstance(out, tuple) else out, result, what)


def _attach_methods() -> None:
    from ..methods import _method
    for name in ("cumsum", "cumprod"):
        setattr(Tracer, name, _method(name, getattr(np, name)))


_attach_methods()
