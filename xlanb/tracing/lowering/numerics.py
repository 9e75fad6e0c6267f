"""Convolution, interpolation, set membership and nan-statistics as library calls.

np.convolve / correlate (but for up to MAX_FUSED_TAPS taps: fused shifted slices) / interp /
isin (but for a few test values) / nanvar / nanstd / nanargmax / nanargmin run
NumPy's own function inside the compiled program (ir/library.py), so dtypes, rounding and
NumPy's run-time errors (nanargmax of an all-NaN slice) are NumPy's.  nansum / nanprod /
nanmax / nanmin / nanmean are fused compositions (compositions.py).
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from xlanb_runtime.ir import builder as B

from ..tracer import Tracer, current_context
from . import unsupported
from .library import (axis_param, call, implements_library, node_of, numpy_check,
                      static_param, with_out)
from .promote import to_node, wrap


def _one_dimensional(x, what: str, position: int):
    node = node_of(x)
    if node.ndim != 1:
        raise ValueError(f"object too deep for desired array" if node.ndim > 1 else
                         f"{what}: argument {position} must be 1-D, got a 0-d array")
    return node


def _correlation(name: str):
    def rule(a, v, mode="full"):
        x, y = _one_dimensional(a, name, 1), _one_dimensional(v, name, 2)
        if x.size == 0:
            raise ValueError("a cannot be empty")
        if y.size == 0:
            raise ValueError("v cannot be empty")
        if mode not in ("full", "same", "valid"):
            numpy_check(getattr(np, name), np.ones(1), np.ones(1), mode=mode)
        if name == "convolve" and y.size > x.size:          # NumPy swaps them too
            x, y = y, x
        if y.size <= MAX_FUSED_TAPS and y.size <= x.size and x.dtype.kind in "biuf" and \
                y.dtype.kind in "biuf":
            return _taps(wrap(x), wrap(y)[::-1] if name == "convolve" else wrap(y), mode)
        return call(f"np.{name}", [x, y], mode=mode)
    return rule


# Filter taps np.convolve / np.correlate sums as shifted slices, fused, at most: NumPy's
# loop takes a dot product per output (a 5-tap moving average of 1e6 float64: 1.05 ms;
# 31 taps, 1 thread: 12.7 ms against about 2.5 fused)
MAX_FUSED_TAPS = 32
# ... in chains of at most this many: a longer chain of alike steps is a loop to
# passes/loop_reroll.py, whose rolled trips each make a pass over memory (31 taps of 1e6
# in one chain: 26.5 ms)
TAP_CHAIN = 16


def _taps(x, taps, mode: str):
    """np.correlate(x, taps, mode) of real or integer values, len(taps) <= len(x): the
    products summed in tap order in chains of TAP_CHAIN (NumPy's dot per output sums them
    in its own order), 'full' over x with len(taps) - 1 zeros each side, 'same' its
    middle len(x) values."""
    m = taps.shape[0]
    if mode != "valid":
        x = np.concatenate([np.zeros(m - 1, x.dtype), x, np.zeros(m - 1, x.dtype)])
    n = x.shape[0] - m + 1
    total = None
    for first in range(0, m, TAP_CHAIN):
        chain = x[first:first + n] * taps[first]
        for j in range(first + 1, min(first + TAP_CHAIN, m)):
            chain = chain + x[j:j + n] * taps[j]
        total = chain if total is None else total + chain
    if mode == "same":
        start = (m - 1) // 2
        total = total[start:start + x.shape[0] - 2 * (m - 1)]
    return total


for _name in ("convolve", "correlate"):
    implements_library(getattr(np, _name))(_correlation(_name))


@implements_library(np.interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    params = {}
    for key, value in (("left", left), ("right", right), ("period", period)):
        if value is not None:
            value = static_param(value, key)
            if np.ndim(value) != 0:
                return unsupported(np.interp, (x, xp, fp), {"left": left, "right": right,
                                                            "period": period}, "np.interp")
            params[key] = value.item() if isinstance(value, np.generic) else value
    xp_node, fp_node = node_of(xp), node_of(fp)
    if xp_node.ndim != 1 or fp_node.ndim != 1:
        raise ValueError("object too deep for desired array")
    if xp_node.shape != fp_node.shape:
        raise ValueError("fp and xp are not of the same length.")
    if xp_node.size == 0:
        raise ValueError("array of sample points is empty")
    return call("np.interp", [x, xp_node, fp_node], **params)


# Test values np.isin compares each element with, fused, at most: NumPy itself loops over
# `x == t` below about ten (np.isin(x of 1e6, 3 values): 12.8 ms, fused compares 0.5 ms)
FUSED_ISIN_VALUES = 16


@implements_library(np.isin)
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """NumPy's call, or for a few test values one fused `x == t0 | x == t1 | ...` (NumPy's
    own equality: NaN matches nothing, mixed dtypes compare as `==` promotes them)."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    values = node_of(test_elements)
    if kind is None and 0 < values.size <= FUSED_ISIN_VALUES and \
            values.dtype.kind in "biuf" and node_of(element).dtype.kind in "biuf":
        flat = np.reshape(wrap(values), -1)
        hit = functools.reduce(operator.or_, [wrap(to_node(element)) == flat[i]
                                              for i in range(values.size)])
        return ~hit if invert else hit
    params = {"assume_unique": bool(assume_unique), "invert": bool(invert)}
    if kind is not None:
        params["kind"] = kind
    return call("np.isin", [element, test_elements], **params)


def _nan_spread(name: str, func):
    def rule(a, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, *,
             where=np._NoValue, mean=np._NoValue, correction=np._NoValue):
        if where is not np._NoValue or mean is not np._NoValue:
            return unsupported(func, (a,), {"axis": axis, "dtype": dtype, "ddof": ddof,
                                            "keepdims": keepdims, "where": where,
                                            "mean": mean, "correction": correction},
                               f"np.{name}(where=/mean=)")
        if correction is not np._NoValue:
            if ddof != 0:
                raise ValueError("ddof and correction can't be provided simultaneously.")
            ddof = correction
        x = node_of(a)
        if x.ndim == 0 and axis is not None and x.dtype.kind in "fc":
            x, keepdims = B.reshape(x, (1,)), False    # NumPy's NaN path: a 0-d result
        result = call(f"np.{name}", [x], axis=axis_param(axis, x.ndim),
                      dtype=None if dtype is None else np.dtype(dtype).name,
                      ddof=static_param(ddof, "ddof"), keepdims=keepdims is True)
        return with_out(out, result, f"np.{name}")
    return rule


for _name in ("nanvar", "nanstd"):
    implements_library(getattr(np, _name))(_nan_spread(_name, getattr(np, _name)))


def _nan_arg(name: str):
    def rule(a, axis=None, out=None, *, keepdims=np._NoValue):
        x = node_of(a)
        scalar = x.ndim == 0 and axis is not None
        if scalar:                                # NumPy takes a 0-d array as a (1,) one
            x, keepdims = B.reshape(x, (1,)), False       # and returns a scalar
        axis = None if axis is None else axis_param(operator.index(axis), x.ndim)
        result = call(f"np.{name}", [x], axis=axis, keepdims=keepdims is True)
        return with_out(out, result, f"np.{name}")
    return rule


for _name in ("nanargmax", "nanargmin"):
    implements_library(getattr(np, _name))(_nan_arg(_name))


@implements_library(np.asarray_chkfinite)
def asarray_chkfinite(a, dtype=None, order=None):
    """NumPy's check of the values, at run time inside the compiled program: an inf or NaN
    raises NumPy's ValueError from the call (the program's writes into arguments, which
    come after it, never happen)."""
    x = node_of(a)
    dtype = None if dtype is None else np.dtype(dtype).name
    numpy_check(np.asarray_chkfinite, np.ones((1,) * x.ndim, x.dtype), dtype=dtype)
    if isinstance(a, Tracer) and (dtype is None or np.dtype(dtype) == x.dtype):
        # NumPy returns `a` itself: the result is the same array (writes through it
        # reach `a`), and the check is kept live as a hidden output of the program
        current_context().checks.append(to_node(call("xlanb.check_finite", [x])))
        return a
    return call("np.asarray_chkfinite", [x], dtype=dtype)
