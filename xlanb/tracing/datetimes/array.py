"""`DatetimeTracer`: a traced datetime64/timedelta64 array, held as int64 counts.

The IR has no time dtypes.  A datetime64[u] array is traced as a `Tracer` of its int64
counts of u (`ints`: the memory's own bits, so views, writes through them and the call
boundary work as for any int64 array) plus its dtype.  It is not a Tracer: only what is
written here applies to it, and every other NumPy function, ufunc or method on it is an
UnsupportedDTypeError (in `jit(f, must_compile=False)` the call then runs with NumPy),
never an int64 computation with another meaning.

What it does: the ufunc loops NumPy has for times (`ufuncs.py`), indexing and index
writes, shape functions and `np.where`/`np.concatenate` & co. (operands promoted to one
unit as NumPy promotes them), min/max/argmin/argmax (NaT wins, as in NumPy), `np.sort`
(NaT last), `astype` and `view`.
"""
from __future__ import annotations

import builtins

import numpy as np

from ...errors import UnsupportedDTypeError
from ..source import user_location
from . import ufuncs
from .units import NAT, cast, is_time

_HINT = ("Compute on the int64 counts (`x.view(np.int64)`, NaT is the smallest int64), or "
         "run the function with NumPy: `xlanb.jit(f, must_compile=False)`")


def refuse(detail: str, what: str | None = None) -> UnsupportedDTypeError:
    """The error for a datetime operation xlanb does not compile (raise it)."""
    from ..source import current_op
    op, location = current_op()
    return UnsupportedDTypeError(f"{detail}: not compiled for datetime64/timedelta64 arrays",
                                 op_name=what or op, location=location or user_location(),
                                 hint=_HINT)


class DatetimeTracer:
    """A traced datetime64/timedelta64 array: int64 `ints` (a Tracer) and its `dtype`."""

    __slots__ = ("ints", "dtype")
    __hash__ = None

    def __init__(self, ints, dtype: np.dtype):
        self.ints = ints
        self.dtype = np.dtype(dtype)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.ints.shape

    @shape.setter
    def shape(self, shape) -> None:      # NumPy's in-place reshape, of the counts
        self.ints.shape = shape

    ndim = property(lambda self: self.ints.ndim)
    size = property(lambda self: self.ints.size)
    itemsize = property(lambda self: 8)
    nbytes = property(lambda self: self.ints.nbytes)
    T = property(lambda self: DatetimeTracer(self.ints.T, self.dtype))
    context = property(lambda self: self.ints.context)

    def __repr__(self) -> str:
        return f"DatetimeTracer<{self.dtype}{list(self.shape)}>"

    # -- NEP 13 / NEP 18 -----------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return lower_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from .functions import lower_function
        return lower_function(func, args, kwargs)

    def __array__(self, dtype=None, copy=None):
        raise refuse("a concrete value was needed (np.asarray, a write into an array "
                     "that is not traced)", "np.asarray()")

    # -- indexing --------------------------------------------------------------------------
    def __getitem__(self, key):
        return wrap(self.ints[_key(key)], self.dtype)

    def __setitem__(self, key, value) -> None:
        self.ints[_key(key)] = as_counts(value, self.dtype)

    def __len__(self) -> int:
        return len(self.ints)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __bool__(self) -> bool:
        return bool(self.ints)

    # -- methods ---------------------------------------------------------------------------
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if is_time(dtype):
            if dtype.kind != self.dtype.kind:
                raise refuse(f"astype from {self.dtype} to {dtype}", "x.astype()")
            return DatetimeTracer(cast(self.ints, self.dtype, dtype) + np.int64(0), dtype)
        if dtype.kind not in "biuf":
            raise refuse(f"astype to {dtype}", "x.astype()")
        return self.ints.astype(dtype)        # NumPy's cast of the counts (NaT: int64 min)

    def view(self, dtype=None, type=None):
        if isinstance(dtype, builtins.type) and issubclass(dtype, np.ndarray):
            dtype, type = None, dtype
        if type not in (None, np.ndarray):
            raise refuse(f"a view as {getattr(type, '__name__', type)}", "x.view()")
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        if is_time(dtype):
            return DatetimeTracer(self.ints[...], dtype)
        return self.ints.view(dtype)

    def copy(self, order="C"):
        return DatetimeTracer(self.ints.copy(order), self.dtype)

    def reshape(self, *shape, **kwargs):
        return wrap(self.ints.reshape(*shape, **kwargs), self.dtype)

    def ravel(self, order="C"):
        return wrap(self.ints.ravel(order), self.dtype)

    def flatten(self, order="C"):
        return wrap(self.ints.flatten(order), self.dtype)

    def transpose(self, *axes):
        return wrap(self.ints.transpose(*axes), self.dtype)

    def swapaxes(self, a, b):
        return wrap(self.ints.swapaxes(a, b), self.dtype)

    def squeeze(self, axis=None):
        return wrap(self.ints.squeeze(axis), self.dtype)

    def fill(self, value) -> None:
        self[...] = value

    def min(self, axis=None, out=None, keepdims=False):
        return np.min(self, axis=axis, out=out, keepdims=keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        return np.max(self, axis=axis, out=out, keepdims=keepdims)

    def argmin(self, axis=None, out=None, keepdims=False):
        return np.argmin(self, axis=axis, out=out, keepdims=keepdims)

    def argmax(self, axis=None, out=None, keepdims=False):
        return np.argmax(self, axis=axis, out=out, keepdims=keepdims)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return np.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return np.mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims)

    def argsort(self, axis=-1, kind=None, order=None):
        return np.argsort(self, axis=axis, kind=kind, order=order)

    def searchsorted(self, v, side="left", sorter=None):
        return np.searchsorted(self, v, side=side, sorter=sorter)

    def sort(self, axis=-1, kind=None, order=None) -> None:
        self[...] = np.sort(self, axis=axis, kind=kind, order=order)

    def __getattr__(self, name: str):
        if name.startswith("_") or not hasattr(np.ndarray, name):
            raise AttributeError(f"'DatetimeTracer' object has no attribute {name!r}")
        raise refuse(f"`x.{name}`", f"x.{name}")


def _key(key):
    """An index key with traced datetimes refused (NumPy refuses them as indices)."""
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, DatetimeTracer) for k in parts):
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return key


def wrap(ints, dtype: np.dtype):
    """Counts as a time array: traced ones as a DatetimeTracer, concrete ones viewed."""
    from ..tracer import Tracer
    if isinstance(ints, Tracer):
        return DatetimeTracer(ints, dtype)
    if isinstance(ints, (np.ndarray, np.generic)):
        return np.asarray(ints).view(dtype)[()] if np.ndim(ints) == 0 else ints.view(dtype)
    raise refuse(f"a {type(ints).__name__} from indexing")   # x[mask]: MaskedSelection


def as_counts(value, dtype: np.dtype):
    """`value` written into an array of `dtype` (NumPy's unsafe cast), as int64 counts."""
    from ..tracer import Tracer
    if isinstance(value, DatetimeTracer):
        if value.dtype.kind != dtype.kind:
            raise refuse(f"writing {value.dtype} into {dtype}", "x[...] = v")
        return cast(value.ints, value.dtype, dtype)
    if isinstance(value, Tracer):
        if value.dtype.kind == "f":                # C's cast toward zero, NaN: NaT
            return np.where(np.isnan(value), NAT, value.astype(np.int64))
        if value.dtype.kind not in "biu":
            raise refuse(f"writing {value.dtype} into {dtype}", "x[...] = v")
        return value.astype(np.int64)              # the numbers as counts
    scratch = np.empty(np.shape(value), dtype)        # NumPy's own conversion
    scratch[...] = value
    return scratch.view(np.int64)


def lower_ufunc(ufunc, method, inputs, kwargs):
    """`ufunc(*inputs)` with a traced time operand (see `ufuncs.py`)."""
    from ..source import entry
    what = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    with entry(what):
        kwargs = dict(kwargs)
        out = kwargs.pop("out", None)
        rule = ufuncs.RULES.get(ufunc)
        if method != "__call__" or rule is None or kwargs:
            raise refuse(f"`{what}`" + (f" with {sorted(kwargs)}" if kwargs else ""))
        dtypes = tuple(_operand_dtype(x) for x in inputs)
        loop = ufunc.resolve_dtypes(dtypes + (None,) * ufunc.nout)   # NumPy's TypeError
        values = [ufuncs.counts(x, d) for x, d in zip(inputs, loop)]
        results = tuple(wrap(r, d) if is_time(d) else r
                        for r, d in zip(rule(loop)(*values), loop[ufunc.nin:]))
        for result in results:
            _mark_scalar(result)
        if out is not None:
            results = _write_out(out, results, what)
        return results if ufunc.nout > 1 else results[0]


def _operand_dtype(x):
    from ..tracer import Tracer
    if isinstance(x, DatetimeTracer):
        return x.dtype
    if isinstance(x, Tracer):
        return x.weak_type if x.weak_type is not None else x.dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    if type(x) in (bool, int, float, complex):
        return type(x)
    if isinstance(x, (str, list, tuple)):            # NumPy makes an array of them
        return np.asarray(x).dtype
    raise refuse(f"a {type(x).__name__} operand")


def _mark_scalar(result) -> None:
    """0-d ufunc results come back as NumPy scalars (np.datetime64, np.bool_)."""
    ints = result.ints if isinstance(result, DatetimeTracer) else result
    if getattr(ints, "shape", None) == ():
        ints.numpy_scalar = True


def _write_out(out, results, what):
    out = out if isinstance(out, tuple) else (out,)
    for dest, result in zip(out, results):
        if dest is None:
            continue
        if isinstance(dest, DatetimeTracer) != isinstance(result, DatetimeTracer) or \
                not hasattr(dest, "context"):
            raise refuse(f"`out=` of {getattr(dest, 'dtype', type(dest).__name__)}", what)
        if not np.can_cast(result.dtype, dest.dtype, "same_kind"):
            raise TypeError(f"Cannot cast ufunc {what!r} output from {result.dtype!r} to "
                            f"{dest.dtype!r} with casting rule 'same_kind'")
        dest[...] = np.broadcast_to(result, dest.shape)
    return tuple(d if d is not None else r for d, r in zip(out, results))


def _operator(ufunc, reflected: bool = False):
    def method(self, other):
        return ufunc(other, self) if reflected else ufunc(self, other)
    return method


def _inplace(ufunc):
    def method(self, other):
        root = self.ints.root if self.ints.root is not None else self.ints
        if root.writeable is None:       # a scalar (`x[2] += d`): Python rebinds the name
            return ufunc(self, other)
        ufunc(self, other, out=self)
        return self
    return method


for _name, _ufunc in {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                      "truediv": np.true_divide, "floordiv": np.floor_divide,
                      "mod": np.remainder, "divmod": np.divmod}.items():
    setattr(DatetimeTracer, f"__{_name}__", _operator(_ufunc))
    setattr(DatetimeTracer, f"__r{_name}__", _operator(_ufunc, reflected=True))
    if _name != "divmod":
        setattr(DatetimeTracer, f"__i{_name}__", _inplace(_ufunc))
for _name, _ufunc in {"lt": np.less, "le": np.less_equal, "gt": np.greater,
                      "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal}.items():
    setattr(DatetimeTracer, f"__{_name}__", _operator(_ufunc))
DatetimeTracer.__neg__ = lambda self: np.negative(self)
DatetimeTracer.__pos__ = lambda self: np.positive(self)
DatetimeTracer.__abs__ = lambda self: np.absolute(self)
