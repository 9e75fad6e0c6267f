"""NumPy functions written in NumPy: compositions of lowered functions, so they fuse.

Each rule follows NumPy's own implementation (numpy/lib/*.py) step for step on traced
values, so dtypes and rounding are NumPy's: ptp, sinc, isneginf/isposinf, the nan-
reductions nansum/nanprod/nanmax/nanmin/nanmean, kron, cross (3-vectors), vander,
trapezoid, column_stack/dstack/row_stack, hsplit/vsplit/dsplit, rot90, select,
array_equal/array_equiv, resize, ediff1d, unwrap, cov/corrcoef (without weights), delete
(static indices) and sliding_window_view (a gather; NumPy's read-only view).
Functions whose result's shape depends on the values (set operations, the unique_*
family, trim_zeros, roots) are marked data-dependent: named errors under `jit`, NumPy
under `must_compile=False`.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from ..tracer import Tracer
from . import implements, unsupported
from .library import data_dependent, node_of
from .promote import normalize_axis, wrap

for _func, _detail in (
        (np.intersect1d, None), (np.union1d, None), (np.setdiff1d, None),
        (np.setxor1d, None), (np.trim_zeros, None),
        *((getattr(np, name), None) for name in ("unique_all", "unique_counts",
                                                 "unique_inverse", "unique_values")
          if hasattr(np, name)),
        (np.roots, "the number of roots depends on the leading zeros, and their dtype on "
         "whether any is complex")):
    data_dependent(_func, _detail)


def _traced(x):
    return x if isinstance(x, Tracer) else wrap(node_of(x))


# -- elementwise ---------------------------------------------------------------------------

@implements(np.sinc)
def sinc(x):
    x = _traced(x)
    y = np.pi * np.where(x == 0, 1.0e-20, x)
    return np.sin(y) / y


def _signed_inf(negative: bool):
    def rule(x, out=None):
        x = _traced(x)
        if x.dtype.kind == "c":
            raise TypeError("This operation is not supported for complex values because "
                            "it would be ambiguous.")
        result = np.isinf(x) & ((x < 0) if negative else (x > 0))
        if out is not None:
            from .inplace import assign, destination
            return assign(destination(out, "np.isneginf"), result, "unsafe")
        return result
    return rule


implements(np.isneginf)(_signed_inf(True))
implements(np.isposinf)(_signed_inf(False))


# -- reductions ----------------------------------------------------------------------------

@implements(np.ptp)
def ptp(a, axis=None, out=None, keepdims=np._NoValue):
    a = _traced(a)
    keep = {} if keepdims is np._NoValue else {"keepdims": keepdims}
    result = np.subtract(np.max(a, axis, **keep), np.min(a, axis, **keep))
    if out is not None:
        from .inplace import assign, destination
        return assign(destination(out, "np.ptp"), result, "unsafe")
    return result


def _nan_filled(a, value):
    """NumPy's `_replace_nan`: a copy with NaN -> value (inexact dtypes only)."""
    a = _traced(a)
    if a.dtype.kind not in "fc":
        return a, None
    mask = np.isnan(a)
    return np.where(mask, value, a).astype(a.dtype), mask


def _nan_sum_prod(func, fill):
    def rule(a, axis=None, dtype=None, out=None, keepdims=np._NoValue,
             initial=np._NoValue, where=np._NoValue):
        filled, _ = _nan_filled(a, fill)
        return func(filled, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                    initial=initial, where=where)
    return rule


implements(np.nansum)(_nan_sum_prod(np.sum, 0))
implements(np.nanprod)(_nan_sum_prod(np.prod, 1))


def _nan_extremum(func, fill):
    def rule(a, axis=None, out=None, keepdims=np._NoValue, initial=np._NoValue,
             where=np._NoValue):
        if initial is not np._NoValue or where is not np._NoValue:
            return unsupported(getattr(np, f"nan{func.__name__}"), (a,), {
                "axis": axis, "keepdims": keepdims, "initial": initial, "where": where},
                f"np.nan{func.__name__}(initial=/where=)")
        filled, mask = _nan_filled(a, fill)
        keep = {} if keepdims is np._NoValue else {"keepdims": keepdims}
        result = func(filled, axis=axis, **keep)
        if mask is not None:                  # an all-NaN slice is NaN, as NumPy
            result = np.where(np.all(mask, axis=axis, **keep), np.nan, result).astype(
                filled.dtype)
        if out is not None:
            from .inplace import assign, destination
            return assign(destination(out, f"np.nan{func.__name__}"), result, "unsafe")
        return result
    return rule


implements(np.nanmax)(_nan_extremum(np.max, -np.inf))
implements(np.nanmin)(_nan_extremum(np.min, np.inf))


@implements(np.nanmean)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, *, where=np._NoValue):
    """NumPy: sum of the non-NaN values / their count, divided in the sum's dtype."""
    filled, mask = _nan_filled(a, 0)
    keep = {} if keepdims is np._NoValue else {"keepdims": keepdims}
    if mask is None or where is not np._NoValue:
        if where is not np._NoValue:
            return unsupported(np.nanmean, (a,), {"axis": axis, "dtype": dtype,
                                                  "where": where, **keep}, "np.nanmean")
        return np.mean(filled, axis=axis, dtype=dtype, out=out, **keep)
    count = np.sum(~mask, axis=axis, dtype=np.intp, **keep)
    total = np.sum(filled, axis=axis, dtype=dtype, **keep)
    result = np.true_divide(total, count).astype(total.dtype)
    if out is not None:
        from .inplace import assign, destination
        return assign(destination(out, "np.nanmean"), result, "unsafe")
    return result


# -- building arrays -----------------------------------------------------------------------

@implements(np.kron)
def kron(a, b):
    a, b = _traced(a), _traced(b)
    if a.ndim == 0 or b.ndim == 0:
        return np.multiply(a, b)
    nda, ndb = a.ndim, b.ndim
    nd = max(nda, ndb)
    as_ = (1,) * max(0, ndb - nda) + a.shape
    bs = (1,) * max(0, nda - ndb) + b.shape
    a_arr = np.reshape(a, as_)
    b_arr = np.reshape(b, bs)
    a_arr = np.expand_dims(a_arr, axis=tuple(range(1, nd * 2, 2)))
    b_arr = np.expand_dims(b_arr, axis=tuple(range(0, nd * 2, 2)))
    return np.multiply(a_arr, b_arr).reshape(tuple(int(x) * int(y)
                                                   for x, y in zip(as_, bs)))


@implements(np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """3-vectors, NumPy's formula (cp0 = a1 b2 - a2 b1, ...); 2-vectors go to NumPy."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _traced(a), _traced(b)
    a = np.moveaxis(a, axisa, -1)
    b = np.moveaxis(b, axisb, -1)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        return unsupported(np.cross, (a, b), {}, "np.cross of 2-vectors")
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    cp = np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return np.moveaxis(cp, -1, axisc)


@implements(np.vander)
def vander(x, N=None, increasing=False):
    """NumPy's: a column of ones, then x multiplied along by `multiply.accumulate` in
    promote_types(x.dtype, int); columns reversed unless `increasing`."""
    x = _traced(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = x.shape[0] if N is None else operator.index(N)
    dtype = np.promote_types(x.dtype, int)
    if n == 0:
        return np.zeros((x.shape[0], 0), dtype)
    columns = [np.ones((x.shape[0], 1), dtype)]
    if n > 1:
        repeated = np.broadcast_to(x[:, None], (x.shape[0], n - 1)).astype(dtype)
        columns.append(np.multiply.accumulate(repeated, axis=1))
    v = np.concatenate(columns, axis=1)
    return v if increasing else v[:, ::-1]


@implements(np.trapezoid)
def trapezoid(y, x=None, dx=1.0, axis=-1):
    y = _traced(y)
    if x is None:
        d = dx
    else:
        x = _traced(x)
        if x.ndim == 1:
            d = np.diff(x)
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = d.reshape(shape)
        else:
            d = np.diff(x, axis=axis)
    nd = y.ndim
    slice1, slice2 = [slice(None)] * nd, [slice(None)] * nd
    slice1[axis] = slice(1, None)
    slice2[axis] = slice(None, -1)
    return (d * (y[tuple(slice1)] + y[tuple(slice2)]) / 2.0).sum(axis)


@implements(np.column_stack)
def column_stack(tup):
    arrays = []
    for v in tup:
        arr = _traced(v)
        if arr.ndim < 2:
            arr = np.reshape(arr, (-1, 1) if arr.ndim == 1 else (1, 1))
        arrays.append(arr)
    return np.concatenate(arrays, 1)


@implements(np.dstack)
def dstack(tup):
    arrs = np.atleast_3d(*tup)
    if not isinstance(arrs, tuple):
        arrs = (arrs,)
    return np.concatenate(arrs, 2)


if hasattr(np, "row_stack"):
    implements(np.row_stack)(lambda tup, *, dtype=None, casting="same_kind":
                             np.vstack(tup, dtype=dtype, casting=casting))


def _split_along(axis_of, name: str, least: int):
    def rule(ary, indices_or_sections):
        ary = _traced(ary)
        if ary.ndim < least:
            raise ValueError(f"{name} only works on arrays of {least} or more dimensions")
        return np.split(ary, indices_or_sections, axis_of(ary))
    return rule


implements(np.hsplit)(_split_along(lambda a: 1 if a.ndim > 1 else 0, "hsplit", 1))
implements(np.vsplit)(_split_along(lambda a: 0, "vsplit", 2))
implements(np.dsplit)(_split_along(lambda a: 2, "dsplit", 3))


@implements(np.rot90)
def rot90(m, k=1, axes=(0, 1)):
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    m = _traced(m)
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if axes[0] >= m.ndim or axes[0] < -m.ndim or axes[1] >= m.ndim or axes[1] < -m.ndim:
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k = operator.index(k) % 4
    if k == 0:
        return m[:]
    if k == 2:
        return np.flip(np.flip(m, axes[0]), axes[1])
    axes_list = list(range(m.ndim))
    axes_list[axes[0]], axes_list[axes[1]] = axes_list[axes[1]], axes_list[axes[0]]
    if k == 1:
        return np.transpose(np.flip(m, axes[1]), axes_list)
    return np.flip(np.transpose(m, axes_list), axes[1])


@implements(np.select)
def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    choices = [c if type(c) in (int, float, complex) or isinstance(c, Tracer)
               else np.asarray(c) for c in choicelist]
    choices.append(default if type(default) in (int, float, complex) or
                   isinstance(default, Tracer) else np.asarray(default))
    from .promote import result_type
    dtype = result_type(*choices)
    for i, cond in enumerate(condlist):
        cond_dtype = cond.dtype if hasattr(cond, "dtype") else np.asarray(cond).dtype
        if cond_dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    shape = np.broadcast_shapes(*(np.shape(c) for c in list(condlist) + choices))
    default = choices[-1]
    result = np.broadcast_to(default.astype(dtype), shape) if isinstance(default, Tracer) \
        else np.full(shape, default, dtype)
    for cond, choice in zip(condlist[::-1], choices[-2::-1]):    # NumPy: copyto(where=)
        result = np.where(cond, choice, result)
    return _traced(result).astype(dtype)


@implements(np.piecewise)
def piecewise(x, condlist, funclist, *args, **kw):
    """NumPy's own steps: `y[cond] = func(x[cond])` per condition into zeros_like(x), an
    extra function for where no condition holds.  The selections stay lazy (masked.py):
    a function of elementwise steps compiles as selects; one that needs the selected
    values themselves (a sum over them) is a named error.  NumPy skips a function whose
    selection is empty; here it runs on the lazy selection and nothing is written."""
    x = _traced(x)
    first = None if np.isscalar(condlist) else condlist[0]   # NumPy's test: a list of
    listed = isinstance(first, (list, np.ndarray)) or \
        isinstance(first, Tracer) and first.ndim > 0             # conditions, or one
    if np.isscalar(condlist) or (not listed and x.ndim != 0):
        condlist = [condlist]
    conds = [np.broadcast_to(_traced(c).astype(np.bool_), x.shape) for c in condlist]
    if len(conds) == len(funclist) - 1:
        conds.append(~functools.reduce(operator.or_, conds))
    elif len(conds) != len(funclist):
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    y = np.zeros_like(x)
    for cond, func in zip(conds, funclist):
        y[cond] = func(x[cond], *args, **kw) if callable(func) else func
    return y


@implements(np.array_equal)
def array_equal(a1, a2, equal_nan=False):
    """A traced bool (NumPy's is a Python bool: `if np.array_equal(...)` needs its value,
    like np.allclose)."""
    a1, a2 = _traced(a1), _traced(a2)
    if a1.shape != a2.shape:
        return np.False_
    if not equal_nan or a1.dtype.kind not in "fc" and a2.dtype.kind not in "fc":
        return np.all(a1 == a2)
    both_nan = np.isnan(a1) & np.isnan(a2)
    return np.all((a1 == a2) | both_nan)


@implements(np.array_equiv)
def array_equiv(a1, a2):
    a1, a2 = _traced(a1), _traced(a2)
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return np.False_
    return np.all(a1 == a2)


@implements(np.resize)
def resize(a, new_shape):
    if isinstance(new_shape, (int, np.integer)):
        new_shape = (new_shape,)
    a = np.ravel(_traced(a))
    new_size = 1
    for dim in new_shape:
        new_size *= dim
        if dim < 0:
            raise ValueError("all elements of `new_shape` must be non-negative")
    if a.size == 0 or new_size == 0:
        return np.zeros(new_shape, a.dtype)
    repeats = (new_size + a.size - 1) // a.size
    return np.reshape(np.concatenate((a,) * repeats)[:new_size], new_shape)


@implements(np.ediff1d)
def ediff1d(ary, to_end=None, to_begin=None):
    ary = np.ravel(_traced(ary))
    pieces = []
    for name, extra in (("to_begin", to_begin), ("to_end", to_end)):
        if extra is not None and not np.can_cast(np.asarray(extra).dtype if not
                                                  isinstance(extra, Tracer) else
                                                  extra.dtype, ary.dtype, "same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under "
                            "the `same_kind` rule.")
    if to_begin is not None:
        pieces.append(np.ravel(_traced(to_begin)).astype(ary.dtype))
    pieces.append(ary[1:] - ary[:-1])
    if to_end is not None:
        pieces.append(np.ravel(_traced(to_end)).astype(ary.dtype))
    return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)


@implements(np.unwrap)
def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    p = _traced(p)
    axis = normalize_axis(axis, p.ndim)
    dd = np.diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    slice1 = [slice(None)] * p.ndim
    slice1[axis] = slice(1, None)
    slice1 = tuple(slice1)
    dtype = np.result_type(dd.dtype, period)
    if np.issubdtype(dtype, np.integer):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high = period / 2
        boundary_ambiguous = True
    interval_low = -interval_high
    ddmod = np.mod(dd - interval_low, period) + interval_low
    if boundary_ambiguous:
        ddmod = np.where((ddmod == interval_low) & (dd > 0), interval_high, ddmod).astype(
            ddmod.dtype)
    ph_correct = ddmod - dd
    ph_correct = np.where(abs(dd) < discont, 0, ph_correct).astype(ph_correct.dtype)
    head = [slice(None)] * p.ndim
    head[axis] = slice(0, 1)
    return np.concatenate([p[tuple(head)].astype(dtype),
                           (p[slice1] + np.cumsum(ph_correct, axis)).astype(dtype)], axis)


@implements(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    if fweights is not None or aweights is not None:
        return unsupported(np.cov, (m,), {"y": y, "rowvar": rowvar, "bias": bias,
                                          "ddof": ddof, "fweights": fweights,
                                          "aweights": aweights, "dtype": dtype},
                           "np.cov(fweights=/aweights=)")
    m = _traced(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(m.dtype, np.float64) if y is None else \
            np.result_type(m.dtype, _traced(y).dtype, np.float64)
    x = np.atleast_2d(m).astype(dtype)
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if x.shape[0] == 0:
        return np.array([]).reshape(0, 0)
    if y is not None:
        yy = np.atleast_2d(_traced(y)).astype(dtype)
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        x = np.concatenate((x, yy), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    avg = np.mean(x, axis=1)
    fact = max(x.shape[1] - ddof, 0)
    x = x - avg[:, None]
    c = np.dot(x, x.T.conj())
    c = c * np.true_divide(1, fact)
    return np.squeeze(c)


@implements(np.corrcoef)
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = np.diag(c)
    stddev = np.sqrt(d.real)
    c = c / stddev[:, None]
    c = c / stddev[None, :]
    if c.dtype.kind == "c":
        return np.clip(c.real, -1, 1) + 1j * np.clip(c.imag, -1, 1)
    return np.clip(c, -1, 1)


@implements(np.delete)
def delete(arr, obj, axis=None):
    """Static `obj` (an int, a slice, indices or a boolean mask): what is kept is known
    when tracing, so the result is a gather of the kept positions."""
    if isinstance(obj, Tracer):
        return unsupported(np.delete, (arr, obj), {"axis": axis}, "np.delete(traced obj)")
    arr = _traced(arr)
    if axis is None:
        arr, axis = np.ravel(arr), 0
    axis = normalize_axis(axis, arr.ndim)
    n = arr.shape[axis]
    keep = np.delete(np.arange(n), obj)                  # NumPy's own index rules
    return np.take(arr, keep, axis=axis)


@implements(np.lib.stride_tricks.sliding_window_view)
def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """Windows as a gather of static indices: NumPy's read-only view, as a read-only copy
    (a write raises as in NumPy).  writeable=True writes through to x in NumPy: a named
    error here (the windows overlap)."""
    x = _traced(x)
    if writeable:
        return unsupported(np.lib.stride_tricks.sliding_window_view, (x, window_shape),
                           {"axis": axis, "writeable": writeable},
                           "np.lib.stride_tricks.sliding_window_view(writeable=True)")
    window_shape = tuple(window_shape) if np.iterable(window_shape) else (window_shape,)
    if axis is None:
        axis = tuple(range(x.ndim))
        if len(window_shape) != len(axis):
            raise ValueError(f"Since axis is `None`, must provide window_shape for all "
                             f"dimensions of `x`; got {len(window_shape)} window_shape "
                             f"elements and `x.ndim` is {x.ndim}.")
    else:
        axis = tuple(normalize_axis(a, x.ndim) for a in (axis if np.iterable(axis)
                                                         else (axis,)))
    out = x
    for ax, dim in zip(axis, window_shape):
        if out.shape[ax] < dim:
            raise ValueError("window shape cannot be larger than input array shape")
        starts = out.shape[ax] - dim + 1
        index = np.arange(starts)[:, None] + np.arange(dim)[None, :]
        out = np.take(out, index, axis=ax)             # ax -> (starts, dim)
        out = np.moveaxis(out, ax + 1, -1)             # the window dim goes last
    root = out.root if out.root is not None else out
    if root is not (x.root if x.root is not None else x):      # the windows, not x itself
        root.writeable = False
    return out
