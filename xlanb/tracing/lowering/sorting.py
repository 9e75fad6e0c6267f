"""Sorting, selection and order statistics as library calls: NumPy's exact results.

np.sort / argsort / partition / argpartition / searchsorted, np.median / percentile /
quantile and their nan-forms, np.histogram / histogram_bin_edges / digitize, and the
ndarray methods (`x.sort()` sorts in place, as NumPy).  Each is one `library-call` of
NumPy's own function, so ties come out in NumPy's order for every `kind` (quicksort's
included), NaNs sort last and complex values lexicographically, as eager NumPy does.

Static arguments (axis, kind, kth, method, bins when an int, range) are params of the call;
array arguments (q, bins as edges, weights, sorter) are inputs.  Value-dependent shapes are
named errors: `np.bincount` without `minlength=` (its length is max(x) + 1) and
`np.histogram(bins='auto')`.  `np.bincount(x, minlength=n)` is a `scatter-add` into n
counts (fused), with run-time checks that every value is in [0, n).
"""
from __future__ import annotations

import operator

import numpy as np

from ...errors import UnsupportedNumPyFunctionError
from xlanb_runtime.ir import builder as B

from ..layout import with_order, with_reduced_order
from ..tracer import Tracer
from . import fail, implements, unsupported
from .library import (axis_param, call, check_within, implements_library, node_of,
                      numpy_check, refuse_data_dependent, static_param, with_out)
from .promote import normalize_axes, to_node, wrap

BINCOUNT_DETAIL = ("the output's length is max(x) + 1, which depends on the values; "
                   "with minlength= above every value it is minlength")


@implements(np.bincount)
def bincount(x, weights=None, minlength=0):
    """NumPy's counts (or sums of weights, in float64) of each value of x, where x's values
    are known to stay below `minlength`: a run-time check raises where one does not (NumPy's
    result would be longer), and NumPy's ValueError for a negative one."""
    minlength = operator.index(static_param(minlength, "minlength"))
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if minlength == 0:
        return refuse_data_dependent(np.bincount, (x, weights), {"minlength": 0},
                                     "np.bincount", BINCOUNT_DETAIL)
    index, values = to_node(x), None if weights is None else to_node(weights)
    numpy_check(np.bincount, np.zeros(1, index.dtype), minlength=1, weights=None
                if values is None else np.zeros(1, values.dtype))    # NumPy's TypeErrors
    if index.ndim != 1:
        raise ValueError("object too deep for desired array" if index.ndim else
                         "object of too small depth for desired array")
    if values is not None and values.shape != index.shape:
        raise ValueError("The weights and list don't have the same length.")
    index = B.convert(index, np.int64) if index.dtype == np.bool_ else index
    check_within(index, 0, minlength - 1, "ValueError",
                 "'list' argument must have no negative elements",
                 f"np.bincount under jit: a value ({{value}}) is not below minlength="
                 f"{minlength}, so NumPy's result would be longer than the {minlength} "
                 "counts compiled for; pass a minlength above every value, or run it with "
                 "`xlanb.jit(f, must_compile=False)`")
    dtype = np.dtype(np.intp if values is None else np.float64)
    values = B.broadcast(B.constant(np.ones((), dtype)), index.shape) if values is None \
        else B.convert(values, dtype)
    zeros = B.broadcast(B.constant(np.zeros((), dtype)), (minlength,))
    return wrap(B.scatter_add(zeros, index, values, 0))


def _no_order(order, what: str) -> None:
    if order is not None:
        raise fail(UnsupportedNumPyFunctionError, "`order=` sorts structured arrays, which "
                   "xlanb does not trace", hint=f"sort the field itself: `{what}(x['f'])`")


def _sort_axis(a, axis):
    x = node_of(a)
    if axis is None:
        return x, None
    return x, axis_param(operator.index(axis), x.ndim)


def _check_kind(kind, stable) -> None:
    numpy_check(np.sort, np.zeros(1), kind=kind, stable=stable)   # NumPy's error: bad kind


@implements_library(np.sort)
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    _no_order(order, "np.sort")
    _check_kind(kind, stable)
    x, axis = _sort_axis(a, axis)
    return with_order(call("np.sort", [x], axis=axis, kind=kind, stable=stable), "K", (a,))


@implements_library(np.argsort)
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    _no_order(order, "np.argsort")
    _check_kind(kind, stable)
    if np.ndim(a) == 0 and axis is not None:      # NumPy sorts a 0-d array as a (1,) one
        a = B.reshape(node_of(a), (1,))
    x, axis = _sort_axis(a, axis)
    return call("np.argsort", [x], axis=axis, kind=kind, stable=stable)


def _kth(kth, x, axis):
    kth = static_param(kth, "kth")
    length = x.size if axis is None else x.shape[axis]
    values = kth if isinstance(kth, (tuple, list)) else [kth]
    for k in values:
        if x.size and not -length <= operator.index(k) < length:   # empty: NumPy's no check
            raise ValueError(f"kth(={k}) out of bounds ({length})")
    return tuple(operator.index(k) for k in kth) if isinstance(kth, (tuple, list)) \
        else operator.index(kth)


@implements_library(np.partition)
def partition(a, kth, axis=-1, kind="introselect", order=None):
    _no_order(order, "np.partition")
    x, axis = _sort_axis(a, axis)
    return with_order(call("np.partition", [x], kth=_kth(kth, x, axis), axis=axis, kind=kind),
                      "K", (a,))          # NumPy sorts a copy in the input's order


@implements_library(np.argpartition)
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    _no_order(order, "np.argpartition")
    x, axis = _sort_axis(a, axis)
    return call("np.argpartition", [x], kth=_kth(kth, x, axis), axis=axis, kind=kind)


@implements_library(np.searchsorted)
def searchsorted(a, v, side="left", sorter=None):
    if np.ndim(a) != 1:
        raise ValueError("object too deep for desired array")
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    if sorter is None:
        return call("np.searchsorted", [a, v], side=side)
    return call("np.searchsorted", [a, v, sorter], side=side, keyword_arrays=("sorter",))


# -- order statistics ---------------------------------------------------------------------

def _median(name: str, func):
    def rule(a, axis=None, out=None, overwrite_input=False, keepdims=False):
        x = node_of(a)
        axis = axis_param(axis, x.ndim)
        result = call(name, [x], axis=axis, keepdims=bool(keepdims))
        if out is None:              # a reduction of a partitioned copy: the input's order
            result = with_reduced_order(result, a, normalize_axes(axis, x.ndim),
                                        bool(keepdims))
        return with_out(out, result, name)
    return rule


def _quantile(name: str, func):
    def rule(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
        if weights is not None or interpolation is not None:
            return unsupported(func, (a, q), {"axis": axis, "method": method,
                                              "keepdims": keepdims, "weights": weights,
                                              "interpolation": interpolation}, name)
        x = node_of(a)
        if x.dtype.kind == "c":                  # NumPy's first check
            raise TypeError("a must be an array of real numbers")
        params = dict(axis=axis_param(axis, x.ndim), method=method, keepdims=bool(keepdims))
        if type(q) in (int, float):           # weak, as NumPy takes it: a param
            result = call(name, [x], q=q, **params)
        else:
            result = call(name, [x, q], **params)
        return with_out(out, result, name)
    return rule


for _name in ("median", "nanmedian"):
    implements_library(getattr(np, _name))(_median(f"np.{_name}", getattr(np, _name)))
for _name in ("quantile", "percentile", "nanquantile", "nanpercentile"):
    implements_library(getattr(np, _name))(_quantile(f"np.{_name}", getattr(np, _name)))


# -- histograms ---------------------------------------------------------------------------

def _histogram_call(name: str, func, a, bins, range, density, weights):
    if isinstance(bins, str):
        return refuse_data_dependent(
            func, (a,), {"bins": bins, "range": range, "weights": weights}, f"{name}(bins="
            f"{bins!r})", "the number of bins is chosen from the values")
    range = static_param(range, "range")
    inputs, keyword, params = [a], [], {}
    if isinstance(bins, (Tracer, np.ndarray, list, tuple)):
        inputs.append(bins)
        keyword.append("bins")
    else:
        params["bins"] = operator.index(bins)
    if weights is not None:
        inputs.append(weights)
        keyword.append("weights")
    if range is not None:
        params["range"] = tuple(float(r) for r in range)
    if density is not None:
        params["density"] = bool(density)
    return call(name, inputs, keyword_arrays=tuple(keyword), **params)


@implements_library(np.histogram)
def histogram(a, bins=10, range=None, density=None, weights=None):
    return _histogram_call("np.histogram", np.histogram, a, bins, range, density, weights)


@implements_library(np.histogram_bin_edges)
def histogram_bin_edges(a, bins=10, range=None, weights=None):
    return _histogram_call("np.histogram_bin_edges", np.histogram_bin_edges, a, bins, range,
                           None, weights)


@implements_library(np.digitize)
def digitize(x, bins, right=False):
    return call("np.digitize", [x, bins], right=bool(right))


# -- ndarray methods ----------------------------------------------------------------------

def _sort_method(x, axis=-1, kind=None, order=None, *, stable=None):
    """x.sort(): in place, as NumPy."""
    from . import inplace
    inplace.assign(x, sort(x, axis, kind, order, stable=stable), "unsafe")


def _partition_method(x, kth, axis=-1, kind="introselect", order=None):
    from . import inplace
    inplace.assign(x, partition(x, kth, axis, kind, order), "unsafe")


def _attach_methods() -> None:
    from ..methods import _method
    methods = {"sort": _sort_method, "argsort": np.argsort, "partition": _partition_method,
               "argpartition": np.argpartition,
               "searchsorted": lambda x, v, side="left", sorter=None:
               searchsorted(x, v, side, sorter)}
    for name, func in methods.items():
        setattr(Tracer, name, _method(name, func))


_attach_methods()
