"""Reductions: sum, prod, max, min, mean, var, std, argmax, argmin, any, all, count_nonzero.

Each lowers to one `reduce` (or `arg-reduce`) node over normalized axes, with `convert`
nodes for NumPy's result dtypes (sum of int32 -> int64, mean of int -> float64) and a
`reshape` for `keepdims`.  mean/var/std are compositions (sum / n; mean of squared
deviations, like NumPy's two-pass `_var`).  `ufunc.reduce` for add/multiply/maximum/
minimum/logical_and/logical_or maps onto the same rules.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from xlanb_runtime.ir import Node, Op
from xlanb_runtime.ir import builder as B

from ..layout import with_order, with_reduced_order
from ..tracer import Tracer, current_context
from . import implements, unsupported
from .promote import dtype_of, normalize_axes, normalize_axis, scalar, to_node, wrap

_NoValue = np._NoValue


def _traced(a) -> Tracer:
    """`a` as a Tracer, its layout kept (a reduction's result takes the input's order)."""
    return a if isinstance(a, Tracer) else wrap(to_node(a))


def _keep(node: Node, in_shape: tuple[int, ...], axes: tuple[int, ...], keepdims) -> Node:
    if keepdims is True:
        return B.reshape(node, [1 if d in axes else n for d, n in enumerate(in_shape)])
    return node


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def _default_dtype(numpy_fn, dtype, in_dtype) -> np.dtype:
    """The dtype NumPy gives `numpy_fn` on this input (asked of NumPy on a tiny array)."""
    if dtype is not None:
        return np.dtype(dtype)
    return np.asarray(numpy_fn(np.zeros(2, dtype=in_dtype))).dtype


def _options_unsupported(func, a, where, out, kwargs: dict):
    """Options that compiled code does not take go to the hook (NumPy runs them)."""
    if out is not None:
        from . import unsupported_option
        raise unsupported_option(func.__name__, "out=", "assign the result instead")
    if where is not _NoValue and where is not True:
        kwargs["where"] = where
    if kwargs.get("initial", _NoValue) is _NoValue:
        kwargs.pop("initial", None)
    return bool(kwargs)


def _masked(x: Node, where, fill) -> Node:
    """x where `where` holds (broadcast), else the reduction's identity `fill`."""
    if where is _NoValue or where is True:
        return x
    mask = to_node(where, bool)
    mask = B.broadcast(mask, x.shape) if mask.shape != x.shape else mask
    return B.select(mask, x, B.broadcast(scalar(fill, x.dtype), x.shape))


def _with_out(out, result):
    """`out=`: the result written into `out`, which is returned (NumPy's convention)."""
    if out is None:
        return result
    from .inplace import assign, destination
    return assign(destination(out, "out="), result, "unsafe")


def _route(func, a, kwargs: dict):
    """Hand the call to the hook, named by its unsupported options: `np.sum(where=...)`."""
    kwargs = {k: v for k, v in kwargs.items() if v is not _NoValue}
    options = [k for k in ("where", "initial", "mean") if k in kwargs]
    what = f"np.{func.__name__}({', '.join(k + '=...' for k in options)})"
    return unsupported(func, (a,), kwargs, what)


def reduce_node(x: Node, kind: str, axis, keepdims=False, dtype=None) -> Node:
    """reduce-`kind` of `x` over `axis` (NumPy axis conventions), in `dtype` if given."""
    axes = normalize_axes(axis, x.ndim)
    if dtype is not None:
        x = B.convert(x, dtype)
    if kind in ("any", "all"):
        x = B.convert(x, bool)
    return _keep(B.reduce(x, kind, axes), x.shape, axes, keepdims)


def _laid_out(rule):
    """`rule` (a reduction of `a` over `axis`) whose new result lies in memory as NumPy's
    (layout.with_reduced_order: the input's order, as a ufunc reduction's), not C order:
    what `x.strides`, `x.flags` and view-or-copy (`r.reshape(-1)`) see."""
    signature = inspect.signature(rule)

    @functools.wraps(rule)
    def reduction(*args, **kwargs):
        result = rule(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        given = bound.arguments
        if given.get("out") is not None or not isinstance(result, Tracer) or \
                result.ndim < 2:
            return result
        where = given.get("where", _NoValue)
        mask = () if where is _NoValue or where is True else (where,)
        axes = normalize_axes(given["axis"], np.ndim(given["a"]))
        return with_reduced_order(result, given["a"], axes, given["keepdims"] is True, mask)
    return reduction


def _summation(numpy_fn, kind):
    identity = 0 if kind == "sum" else 1
    combine = Op.ADD if kind == "sum" else Op.MUL

    def rule(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
             where=_NoValue):
        x = to_node(a)
        result = _default_dtype(numpy_fn, dtype, x.dtype)
        stepped = None
        if result == np.float16 and where is _NoValue and initial is _NoValue:
            stepped = _half_in_steps(a, B.convert(x, result), kind, axis, keepdims)
        node = stepped if stepped is not None else reduce_node(
            _masked(B.convert(x, result), where, identity), kind, axis, keepdims)
        if initial is not _NoValue:
            node = B.binary(combine, node, B.broadcast(scalar(initial, result), node.shape))
        return _with_out(out, wrap(node))
    return rule


def _half_in_steps(a, x: Node, kind: str, axis, keepdims) -> Node | None:
    """A float16 sum/prod as NumPy computes it, where that is not one float32 pass.

    NumPy's float16 loop adds a whole inner loop in float32 and rounds once, but its
    iterator runs the inner loop over the axis innermost in memory: when that axis is
    kept (np.sum(x, axis=0) of a C array), each addition is rounded to float16, and a
    partial sum past 65504 is inf for good ([6e4, 6e4, -6e4] sums to inf, not 6e4).  Then
    the reduced axes the iterator walks outside its inner loop are added in float16 steps
    (the last element of a float16 cumsum/cumprod, NumPy's own loop), after one float32
    pass over the reduced axes that form its inner loop.  None: one float32 pass is it."""
    from ..views import keep_order
    axes = normalize_axes(axis, x.ndim)
    strides = a.elem_strides if isinstance(a, Tracer) else None
    if strides is None:
        strides = tuple(int(np.prod(x.shape[d + 1:], dtype=np.int64)) for d in range(x.ndim))
    order = [d for d in keep_order(x.shape, [strides]) if x.shape[d] > 1]
    inner = []                               # reduced axes of the inner loop, coalesced
    for d in reversed(order):
        if d not in axes or (inner and strides[inner[-1]] * x.shape[inner[-1]] != strides[d]):
            break
        inner.append(d)
    steps = [d for d in order if d in axes and d not in inner]
    if not steps or x.size == 0:
        return None
    kept = [d for d in range(x.ndim) if d not in axes]
    node = x
    if inner:                                # one float32 pass, rounded to float16
        node = _keep(B.reduce(node, kind, tuple(sorted(inner))), x.shape, inner, True)
    rest = [d for d in range(x.ndim) if d not in kept and d not in steps]   # now size 1
    moved = B.transpose(node, kept + steps + rest)
    lead = [x.shape[d] for d in kept]
    flat = wrap(B.reshape(moved, lead + [_count(x.shape, tuple(steps))]))
    scan = np.cumsum if kind == "sum" else np.cumprod
    last = scan(flat, axis=len(kept))[(slice(None),) * len(kept) + (-1,)]
    node = B.reshape(last.node, lead)
    if keepdims is True:
        return B.reshape(node, [1 if d in axes else n for d, n in enumerate(x.shape)])
    return node


sum_ = implements(np.sum)(_laid_out(_summation(np.sum, "sum")))
prod = implements(np.prod)(_laid_out(_summation(np.prod, "prod")))


def _ordered(numpy_fn, a, kwargs: dict):
    """max/min/argmax/argmin of complex values (NumPy's lexicographic order, NaNs first):
    NumPy's own function as a library call; with where=/initial= the hook."""
    from .library import axis_param, call
    kwargs = {k: v for k, v in kwargs.items() if v is not _NoValue}
    out = kwargs.pop("out", None)
    x = to_node(a)
    params = {"axis": axis_param(kwargs.pop("axis", None), x.ndim),
              "keepdims": bool(kwargs.pop("keepdims", False))}
    inputs, keyword = [x], []
    where = kwargs.pop("where", True)
    if where is not True:                  # a mask: NumPy's keyword array
        inputs.append(to_node(where, bool))
        keyword.append("where")
    if "initial" in kwargs:
        initial = kwargs.pop("initial")
        if isinstance(initial, Tracer):    # a traced number (a global): a 0-d input
            inputs.append(to_node(initial))
            keyword.append("initial")
        else:
            params["initial"] = initial
    if keyword:
        params["keyword_arrays"] = tuple(keyword)
    return _with_out(out, call(f"np.{numpy_fn.__name__}", inputs, **params))


def _extremum(numpy_fn, kind):
    def rule(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
        kwargs = {"axis": axis, "keepdims": keepdims, "initial": initial, "where": where}
        if where is not _NoValue and where is not True and initial is _NoValue:
            return _route(numpy_fn, a, kwargs)      # NumPy raises: no identity to fill with
        if dtype_of(a).kind == "c":
            return _ordered(numpy_fn, a, dict(kwargs, out=out))
        x = to_node(a)
        boolean = x.dtype == np.bool_
        if boolean:                     # False < True: the max/min of their 0/1 bytes
            x = B.convert(x, np.uint8)
        if initial is not _NoValue:
            x = _masked(x, where, initial)
        node = reduce_node(x, kind, axis, keepdims)
        if initial is not _NoValue:
            op = Op.MAX if kind == "max" else Op.MIN
            node = B.binary(op, node, B.broadcast(scalar(initial, node.dtype), node.shape))
        return _with_out(out, wrap(B.convert(node, np.bool_) if boolean else node))
    return rule


max_ = implements(np.max, np.amax)(_laid_out(_extremum(np.max, "max")))
min_ = implements(np.min, np.amin)(_laid_out(_extremum(np.min, "min")))


def _boolean(numpy_fn, kind):
    def rule(a, axis=None, out=None, keepdims=False, *, where=_NoValue):
        x = B.convert(to_node(a), bool)
        node = reduce_node(_masked(x, where, kind == "all"), kind, axis, keepdims)
        return _with_out(out, wrap(node))
    return rule


any_ = implements(np.any)(_laid_out(_boolean(np.any, "any")))
all_ = implements(np.all)(_laid_out(_boolean(np.all, "all")))


@implements(np.count_nonzero)
@_laid_out
def count_nonzero(a, axis=None, *, keepdims=False):
    x = to_node(a)
    nonzero = B.convert(B.convert(x, bool), np.intp)
    return wrap(reduce_node(nonzero, "sum", axis, keepdims))


def mean_node(x: Node, axis, keepdims=False, dtype=None) -> Node:
    result = _default_dtype(np.mean, dtype, x.dtype)
    acc = _mean_accumulator(result, dtype)
    axes = normalize_axes(axis, x.ndim)
    total = reduce_node(x, "sum", axes, keepdims, acc)
    return _divide(total, B.broadcast(scalar(_count(x.shape, axes), acc), total.shape), result)


def _mean_accumulator(result: np.dtype, dtype) -> np.dtype:
    """np.mean of float16 sums in float32 unless dtype= asks for float16 (NumPy's _mean:
    then, as np.var's mean, it sums in float16, and overflows past 65504 as NumPy does)."""
    return np.dtype(np.float32) if result == np.float16 and dtype is None else result


def _divide(total: Node, count: Node, result: np.dtype) -> Node:
    """total / count as `result`.  An integer dtype= (np.mean(x, dtype=np.int64)): NumPy
    sums in it, true-divides in float64 and casts back unsafely (truncation)."""
    if total.dtype.kind in "iu":
        total, count = B.convert(total, np.float64), B.convert(count, np.float64)
    return B.convert(B.binary(Op.DIV, total, count), result)


@implements(np.mean)
@_laid_out
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NoValue):
    x = to_node(a)
    if where is _NoValue or where is True:
        return _with_out(out, wrap(mean_node(x, axis, keepdims, dtype)))
    result = _default_dtype(np.mean, dtype, x.dtype)
    acc = _mean_accumulator(result, dtype)
    total = reduce_node(_masked(B.convert(x, acc), where, 0), "sum", axis, keepdims)
    ones = _masked(B.broadcast(scalar(1, acc), x.shape), where, 0)
    count = reduce_node(ones, "sum", axis, keepdims)
    return _with_out(out, wrap(_divide(total, count, result)))


def var_node(x: Node, axis, keepdims=False, dtype=None, ddof=0) -> Node:
    """Mean squared deviation; complex: of |x - mean|^2 (NumPy's real result)."""
    result = _default_dtype(np.var, dtype, x.dtype)
    axes = normalize_axes(axis, x.ndim)
    if x.dtype.kind != "c":
        x = B.convert(x, result)
    mean_kept = mean_node(x, axes, True, x.dtype)
    centered = B.binary(Op.SUB, x, B.broadcast(mean_kept, x.shape))
    total = reduce_node(B.convert(abs_squared(centered), result), "sum", axes, keepdims)
    count = max(_count(x.shape, axes) - ddof, 0)
    return B.binary(Op.DIV, total, B.broadcast(scalar(count, result), total.shape))


def abs_squared(x: Node) -> Node:
    """x*x, or re^2 + im^2 for complex x."""
    if x.dtype.kind != "c":
        return B.binary(Op.MUL, x, x)
    re, im = B.unary(Op.REAL, x), B.unary(Op.IMAG, x)
    return B.binary(Op.ADD, B.binary(Op.MUL, re, re), B.binary(Op.MUL, im, im))


def _spread(numpy_fn, take_sqrt: bool):
    def rule(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
             mean=_NoValue, correction=_NoValue):
        extra = {k: v for k, v in (("mean", mean),) if v is not _NoValue}
        if correction is not _NoValue:
            ddof = correction
        if _options_unsupported(numpy_fn, a, where, out, extra):
            return _route(numpy_fn, a, dict(extra, axis=axis, dtype=dtype, ddof=ddof,
                                                    keepdims=keepdims, where=where))
        node = var_node(to_node(a), axis, keepdims, dtype, ddof)
        return wrap(B.unary(Op.SQRT, node) if take_sqrt else node)
    return rule


var = implements(np.var)(_laid_out(_spread(np.var, False)))
std = implements(np.std)(_laid_out(_spread(np.std, True)))


def _argreduce(kind):
    def rule(a, axis=None, out=None, *, keepdims=False):
        if out is not None:
            from . import unsupported_option
            raise unsupported_option(kind, "out=", "assign the result instead")
        x = to_node(a)
        if x.dtype.kind == "c":
            return _ordered(np.argmax if kind == "argmax" else np.argmin, a,
                            {"axis": axis, "keepdims": keepdims})
        if axis is None:
            node = B.argreduce(B.reshape(x, (x.size,)), kind, 0)
            return wrap(B.reshape(node, (1,) * x.ndim) if keepdims else node)
        axis = normalize_axis(axis, x.ndim)
        return wrap(_keep(B.argreduce(x, kind, axis), x.shape, (axis,), keepdims))
    return rule


argmax = implements(np.argmax)(_argreduce("argmax"))
argmin = implements(np.argmin)(_argreduce("argmin"))

_UFUNC_REDUCTIONS = {np.add: sum_, np.multiply: prod, np.maximum: max_, np.minimum: min_,
                     np.logical_and: all_, np.logical_or: any_}


def _log_add_exp_reduce(exp, log):
    """`np.logaddexp.reduce` (`exp, log` = np.exp, np.log) or `np.logaddexp2.reduce`
    (np.exp2, np.log2) of floats: max + log(sum(exp(x - max))), one row pass instead of
    NumPy's chain of pairwise logaddexps (its result within rounding: each of NumPy's steps
    rounds, this sums exponentials at most 1).  A slice of -infs gives -inf, one +inf or
    NaN gives it (the max is replaced by 0 where not finite), an empty one -inf (the
    identity), as NumPy."""
    def rule(a, axis=0, out=None, keepdims=False):
        x = _traced(a)
        axes = tuple(range(x.ndim)) if axis is None else normalize_axes(axis, x.ndim)
        if any(x.shape[d] == 0 for d in axes):
            return _with_out(out, np.full(
                [n for d, n in enumerate(x.shape) if keepdims or d not in axes],
                -np.inf, x.dtype))
        peak = np.max(x, axis=axes, keepdims=True)
        peak = np.where(np.isfinite(peak), peak, np.zeros((), x.dtype))
        total = log(np.sum(exp(x - peak), axis=axes, keepdims=True)) + peak
        return _with_out(out, total if keepdims else np.squeeze(total, axis=axes))
    return rule


_LOG_ADD_EXP_REDUCTIONS = {np.logaddexp: _log_add_exp_reduce(np.exp, np.log),
                           np.logaddexp2: _log_add_exp_reduce(np.exp2, np.log2)}


def _parity(a, axis=0, out=None, keepdims=False):
    """`np.logical_xor.reduce`: whether an odd number of the values are non-zero (NumPy's
    bool result; False, the identity, for an empty slice)."""
    x = _traced(a)
    counts = np.sum(x != 0, axis=axis, dtype=np.int64, keepdims=keepdims)
    return _with_out(out, (counts & 1) == 1)


def ufunc_reduce(ufunc, a, axis=0, dtype=None, out=None, keepdims=False, **kwargs):
    """`np.add.reduce(x, axis=0)` and friends (note the default axis is 0, not None)."""
    if ufunc in _LOG_ADD_EXP_REDUCTIONS and dtype is None and not kwargs and \
            dtype_of(a).kind == "f":
        return _LOG_ADD_EXP_REDUCTIONS[ufunc](a, axis=axis, out=out, keepdims=keepdims)
    if ufunc is np.logical_xor and dtype is None and not kwargs and \
            dtype_of(a).kind in "biuf":
        return _parity(a, axis=axis, out=out, keepdims=keepdims)
    rule = _UFUNC_REDUCTIONS.get(ufunc)
    if rule is None or kwargs:
        return unsupported(ufunc.reduce, (a,), dict(kwargs, axis=axis, dtype=dtype,
                                                    keepdims=keepdims))
    if rule in (sum_, prod):
        return rule(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
    x = a if dtype is None else with_order(wrap(B.convert(to_node(a), dtype)), "K", (a,))
    return rule(x, axis=axis, out=out, keepdims=keepdims)


@implements(np.average)
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """np.mean without weights; with weights NumPy's sum(a * w) / sum(w) in the result
    dtype, `w` of a's shape or of a's along `axis`, and NumPy's ZeroDivisionError for
    weights summing to zero from a run-time check (`xlanb.check_weights`)."""
    x = to_node(a)
    if weights is None:
        avg = np.mean(_traced(a), axis, keepdims=keepdims)
        if not returned:
            return avg
        count = x.size if axis is None else int(np.prod(
            [x.shape[d] for d in normalize_axes(axis, x.ndim)], dtype=np.int64))
        return avg, np.full(avg.shape, count, dtype=avg.dtype) if avg.shape else \
            avg.dtype.type(count)
    return _weighted_average(_traced(a), axis, weights, returned, keepdims)


def _weighted_average(a, axis, weights, returned: bool, keepdims: bool):
    from .library import call
    axes = None if axis is None else normalize_axes(axis, a.ndim)
    w = _traced(weights)
    if a.shape != w.shape:                      # NumPy's _weights_are_valid
        if axes is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.shape != tuple(a.shape[ax] for ax in axes):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        w = np.transpose(w, np.argsort(axes)).reshape(
            tuple(s if ax in axes else 1 for ax, s in enumerate(a.shape)))
    result_dtype = np.result_type(a.dtype, w.dtype, "f8") if a.dtype.kind in "biu" else \
        np.result_type(a.dtype, w.dtype)
    keep = {"keepdims": keepdims} if keepdims else {}
    total = np.sum(w, axis=axes, dtype=result_dtype, **keep)
    current_context().checks.append(to_node(call("xlanb.check_weights", [to_node(total)])))
    avg = np.multiply(a, w, dtype=result_dtype).sum(axes, **keep) / total
    if not returned:
        return avg
    if total.shape != avg.shape:
        total = np.broadcast_to(total, avg.shape).copy()
    return avg, total
