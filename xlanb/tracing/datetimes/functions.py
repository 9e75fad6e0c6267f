"""NumPy functions on traced datetime64/timedelta64 arrays (`DatetimeTracer`).

Shape and selection functions (`np.where`, `np.concatenate`, `np.reshape`, ...) promote
their time operands to one dtype as NumPy does (`np.result_type`, with NumPy's TypeError
where it refuses), run on the int64 counts and give that dtype back.  Reductions follow
NumPy's NaT rules: `np.min`/`np.max` give NaT when any element is NaT, `np.argmin`/
`np.argmax` the first NaT's index, `np.sort` (and a stable `np.argsort`) puts NaT last,
a timedelta `np.sum`/`np.mean` is NaT where any element is, `np.nanmin`/`np.nanmax`
skip NaT; `np.diff`, `np.searchsorted`, `*_like` and `np.copyto` work on times.  Any other function is an
UnsupportedDTypeError.
"""
from __future__ import annotations

import numpy as np

from ..lowering import public_name, SCALAR_RESULTS
from ..source import entry
from .array import DatetimeTracer, refuse, wrap
from .units import INT64_MAX, NAT, cast, is_time

# functions that move or select elements: they run on the counts
_SHAPE_FUNCTIONS = frozenset((
    np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.squeeze,
    np.expand_dims, np.broadcast_to, np.copy, np.flip, np.roll, np.tile, np.repeat,
    np.concatenate, np.stack, np.hstack, np.vstack, np.atleast_1d, np.atleast_2d,
    np.where, np.take, np.fliplr, np.flipud, np.rot90, np.array, np.asarray,
    np.ascontiguousarray))


def _numpy_function(func):
    """NumPy's own function where `func` is capture's wrapper of it (this module may be
    imported while a trace has the creation functions wrapped)."""
    return func.__wrapped__ if getattr(func, "_xlanb_capture", False) else func


def lower_function(func, args, kwargs):
    what = public_name(func)
    func = _numpy_function(func)
    with entry(what):
        if func in _SHAPE_FUNCTIONS:
            return _on_counts(func, args, kwargs)
        rule = _RULES.get(func)
        if rule is None:
            raise refuse(f"`{what}`")
        result = rule(*args, **kwargs)
        if func in SCALAR_RESULTS:
            _mark_scalar(result)
        return result


def _mark_scalar(result):
    ints = result.ints if isinstance(result, DatetimeTracer) else result
    if getattr(ints, "shape", None) == ():
        ints.numpy_scalar = True


def _is_data(x) -> bool:
    return isinstance(x, DatetimeTracer) or (
        isinstance(x, (np.ndarray, np.generic)) and is_time(x.dtype))


# where each function takes its data: np.where's values, a sequence's arrays, else args[0]
_DATA = {np.where: slice(1, 3), np.concatenate: slice(0, 1), np.stack: slice(0, 1),
         np.hstack: slice(0, 1), np.vstack: slice(0, 1)}


def _on_counts(func, args, kwargs):
    """`func` on the counts of its data promoted to one time dtype; data that is not a
    time array (`np.where(c, d, 0)`: NumPy's promotion refuses it) is refused."""
    place = _DATA.get(func, slice(0, 1))
    data = []

    def collect(x, sequence: bool):
        if sequence and isinstance(x, (list, tuple)):
            for item in x:
                collect(item, False)
        elif _is_data(x):
            data.append(x)
        else:
            raise refuse(f"a {getattr(x, 'dtype', type(x).__name__)} operand among "
                         "datetime64/timedelta64 ones")
    for x in args[place]:
        collect(x, func in _DATA and func is not np.where)
    for key in ("dtype", "out", "like"):
        if kwargs.get(key) is not None:
            raise refuse(f"the `{key}` argument")
    common = np.result_type(*[x.dtype for x in data])     # NumPy's TypeError if none

    def convert(x):
        if isinstance(x, (list, tuple)):
            return type(x)(convert(item) for item in x)
        if isinstance(x, DatetimeTracer):
            return cast(x.ints, x.dtype, common)
        return np.asarray(x).astype(common).view(np.int64)
    converted = list(args)
    converted[place] = [convert(x) for x in args[place]]
    result = func(*converted, **kwargs)
    if isinstance(result, (list, tuple)):
        return type(result)(wrap(r, common) for r in result)
    return wrap(result, common)


def _counts_of(x):
    if not isinstance(x, DatetimeTracer):
        raise refuse(f"a {type(x).__name__} operand")
    return x.ints


def _min(a, axis=None, out=None, keepdims=False, **kwargs):
    """NaT is the smallest int64: the int64 minimum already is NumPy's (NaT wins)."""
    _no_options(out, kwargs)
    return wrap(np.min(_counts_of(a), axis=axis, keepdims=keepdims), a.dtype)


def _max(a, axis=None, out=None, keepdims=False, **kwargs):
    _no_options(out, kwargs)
    ints = _counts_of(a)
    has_nat = np.any(ints == NAT, axis=axis, keepdims=keepdims)
    return wrap(np.where(has_nat, NAT, np.max(ints, axis=axis, keepdims=keepdims)),
                a.dtype)


def _argmin(a, axis=None, out=None, keepdims=False):
    _no_options(out, {})
    return np.argmin(_counts_of(a), axis=axis, keepdims=keepdims)     # NaT first: its index


def _argmax(a, axis=None, out=None, keepdims=False):
    _no_options(out, {})
    ints = _counts_of(a)
    nat = ints == NAT
    return np.where(np.any(nat, axis=axis, keepdims=keepdims),
                    np.argmax(nat, axis=axis, keepdims=keepdims),
                    np.argmax(ints, axis=axis, keepdims=keepdims))


def _sort(a, axis=-1, kind=None, order=None, **kwargs):
    """NaT last: sort `v - 1` (NaT wraps to the largest int64, the rest keep their order)
    and add the 1 back."""
    if order is not None or kwargs:
        raise refuse("`order=` or other options of np.sort")
    one = np.int64(1)
    return wrap(np.sort(_counts_of(a) - one, axis=axis, kind=kind) + one, a.dtype)


def _sum(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Timedeltas: NumPy adds with its `mm->m` loop, so one NaT makes the sum NaT."""
    _no_options(out, kwargs, dtype)
    ints = _timedelta_counts(a, "np.sum")
    total = np.sum(ints, axis=axis, keepdims=keepdims)
    return wrap(np.where(np.any(ints == NAT, axis=axis, keepdims=keepdims), NAT, total),
                a.dtype)


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """NumPy's mean of timedeltas: the sum divided by the count with the `mq->m` loop
    (C division, toward zero)."""
    _no_options(out, kwargs, dtype)
    count = a.size if axis is None else int(np.prod(
        [a.shape[i] for i in np.atleast_1d(axis)], dtype=np.int64))
    total = _sum(a, axis=axis, keepdims=keepdims)
    return np.true_divide(total, count)


def _timedelta_counts(a, what: str):
    ints = _counts_of(a)
    if a.dtype.kind != "m":
        raise TypeError(f"{what} of datetime64 values: NumPy has no add loop for them")
    return ints


def _argsort(a, axis=-1, kind=None, order=None, **kwargs):
    """Stable sorts only: NumPy's default introsort orders equal datetimes differently
    from its int64 sort, a stable sort has one answer (NaT last, as `_sort`)."""
    if kind not in ("stable", "mergesort") or order is not None or kwargs:
        raise refuse("np.argsort other than kind='stable'")
    return np.argsort(_counts_of(a) - np.int64(1), axis=axis, kind="stable")


def _nanmin(a, axis=None, out=None, keepdims=False, **kwargs):
    """NaT skipped (NaT where a slice is all NaT, as NumPy, which also warns)."""
    _no_options(out, kwargs)
    ints = _counts_of(a)
    nat = ints == NAT
    least = np.min(np.where(nat, INT64_MAX, ints), axis=axis, keepdims=keepdims)
    return wrap(np.where(np.all(nat, axis=axis, keepdims=keepdims), NAT, least), a.dtype)


def _nanmax(a, axis=None, out=None, keepdims=False, **kwargs):
    """NaT is the smallest int64: the int64 maximum skips it (and is NaT when all are)."""
    _no_options(out, kwargs)
    return wrap(np.max(_counts_of(a), axis=axis, keepdims=keepdims), a.dtype)


def _diff(a, n=1, axis=-1, **kwargs):
    """Successive differences with the time subtraction (NaT-aware, datetimes give
    timedeltas), as NumPy's np.diff computes them."""
    if kwargs:
        raise refuse("`prepend=`/`append=` of np.diff")
    axis = axis % a.ndim if a.ndim else axis
    for _ in range(int(n)):
        later = tuple(slice(1, None) if i == axis else slice(None) for i in range(a.ndim))
        earlier = tuple(slice(None, -1) if i == axis else slice(None) for i in range(a.ndim))
        a = np.subtract(a[later], a[earlier])
    return a


def _like(fill):
    def rule(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
        if dtype is not None and np.dtype(dtype) != a.dtype or kwargs:
            raise refuse("a dtype or option other than the array's")
        counts = np.zeros_like(_counts_of(a), order=order) if shape is None else \
            np.zeros(shape, np.int64, order="C" if order in ("K", "A") else order)
        return wrap(counts + np.int64(fill), a.dtype)
    return rule


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    if dtype is not None and np.dtype(dtype) != a.dtype or kwargs:
        raise refuse("a dtype or option other than the array's")
    zeros = _like(0)(a, order=order, shape=shape)
    zeros[...] = fill_value
    return zeros


def _copyto(dst, src, casting="same_kind", where=True):
    """`np.copyto` into a traced time array (NumPy's casting check, then an index write)."""
    from ..tracer import Tracer
    if not isinstance(dst, DatetimeTracer) or where is not True:
        raise refuse("np.copyto other than into a datetime64/timedelta64 array")
    source = src.dtype if isinstance(src, (DatetimeTracer, Tracer)) else np.asarray(src).dtype
    if not np.can_cast(source, dst.dtype, casting):
        raise TypeError(f"Cannot cast array data from {source!r} to {dst.dtype!r} "
                        f"according to the rule {casting!r}")
    dst[...] = np.broadcast_to(src, dst.shape) if isinstance(src, DatetimeTracer) else src


def _searchsorted(a, v, side="left", sorter=None):
    """On `v - 1` keys as `_sort`: NaT orders last, every comparison NumPy's binary search
    makes comes out the same, so the indices are NumPy's (sorted `a` or not)."""
    if sorter is not None or not isinstance(a, DatetimeTracer) or not _is_data(v):
        raise refuse("np.searchsorted other than of times in a time array, without sorter")
    common = np.result_type(a.dtype, v.dtype)
    one = np.int64(1)
    keys = cast(v.ints, v.dtype, common) if isinstance(v, DatetimeTracer) else \
        np.asarray(v).astype(common).view(np.int64)
    return np.searchsorted(cast(a.ints, a.dtype, common) - one, keys - one, side=side)


def _no_options(out, kwargs, dtype=None) -> None:
    if out is not None or kwargs or dtype is not None:
        raise refuse("`out=`, `initial=` or `where=` of a datetime reduction")


def _shape(a):
    return a.shape


_RULES = {
    np.min: _min, np.amin: _min, np.max: _max, np.amax: _max, np.argmin: _argmin,
    np.argmax: _argmax, np.sort: _sort, np.argsort: _argsort, np.sum: _sum, np.mean: _mean,
    np.nanmin: _nanmin, np.nanmax: _nanmax, np.diff: _diff, np.zeros_like: _like(0),
    np.empty_like: _like(0), np.ones_like: _like(1), np.full_like: _full_like,
    np.copyto: _copyto, np.searchsorted: _searchsorted, np.shape: _shape, np.ndim: lambda a: a.ndim,
    np.size: lambda a, axis=None: a.size if axis is None else a.shape[axis]}
# keyed by NumPy's own functions, also when imported while capture wraps the creation ones
_SHAPE_FUNCTIONS = frozenset(_numpy_function(f) for f in _SHAPE_FUNCTIONS)
_RULES = {_numpy_function(f): rule for f, rule in _RULES.items()}
