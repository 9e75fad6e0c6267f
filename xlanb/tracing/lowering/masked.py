"""`x[mask]` with a traced boolean mask: a selection that compiles where its shape never shows.

NumPy's `x[mask]` has as many elements as `mask` has True values, a shape known only at
run time.  Most uses never look at that shape, and they compile:

    x[mask].sum() / .mean() / .prod() / .any() / .all()   ->  np.sum(x, where=mask), ...
    x[mask].max() / .min()      ->  np.max(x, where=mask, initial=lowest), and a run-time
                                    check raising NumPy's ValueError for an empty selection
    y[mask] = x[mask] * 2 + 1                               ->  y = np.where(mask, x*2+1, y)
    (x[mask] ** 2).sum()                                    ->  elementwise, then masked sum

A `MaskedSelection` holds the source array's value *at the time of indexing* and the mask.
Ufuncs whose array operands are selections under the same mask (or scalars, traced ones
included) give a new selection.  Anything that needs the selected elements as an array
(`len`, `.shape`, a sort, returning it) asks the trace for them through `materialize`, which is a `DataDependentShapeError`
under `jit` and NumPy under `must_compile=False`.
"""
from __future__ import annotations

import operator

import numpy as np

from xlanb_runtime.ir import Node
from xlanb_runtime.ir import builder as B

from ..tracer import Tracer, current_context
from . import unsupported
from .library import call
from .promote import to_node, wrap

_REDUCTIONS = {np.sum: "sum", np.mean: "mean", np.prod: "prod", np.any: "any",
               np.all: "all", np.max: "max", np.min: "min", np.amax: "max", np.amin: "min"}
_EXTREMES = {"max": np.max, "min": np.min}


def _bound(dtype: np.dtype, lowest: bool):
    """The value below (`lowest`) or above every other of `dtype`: a max's or min's start."""
    if dtype.kind == "b":
        return not lowest
    if dtype.kind == "f":
        return -np.inf if lowest else np.inf
    info = np.iinfo(dtype)
    return info.min if lowest else info.max


class MaskedSelection:
    """`source[mask]` kept as (source node, mask node) while its shape is not needed."""

    __array_priority__ = 20

    def __init__(self, source: Node, mask: Node):
        self.source = source            # the indexed array's value when it was indexed
        self.mask = mask                # bool, source.shape[:mask.ndim]
        self.dtype = source.dtype
        self.ndim = source.ndim - mask.ndim + 1
        self.array: Tracer | None = None    # the elements, once something needed them

    @property
    def lazy(self) -> bool:
        """Not yet materialized: the selection is still (source, mask)."""
        return self.array is None

    # -- what compiles ---------------------------------------------------------------------
    def full_mask(self, shape) -> Node:
        mask = self.mask
        if mask.shape != tuple(shape):
            mask = B.broadcast(mask, shape, tuple(range(mask.ndim)))
        return mask

    def _reduce(self, name: str, dtype=None):
        func = next(f for f, n in _REDUCTIONS.items() if n == name)
        if self.ndim != 1 or not self.lazy:
            return getattr(self.materialize(f"x[mask].{name}()"), name)()
        if name in _EXTREMES:
            return self._extreme(name)
        source = wrap(self.source)
        kwargs = {"where": wrap(self.full_mask(self.source.shape))}
        if dtype is not None:
            kwargs["dtype"] = dtype
        return func(source, **kwargs)

    def sum(self, axis=None, dtype=None, **kwargs):
        return self._reduce("sum", dtype) if axis is None and not kwargs else \
            self._fallback("sum", axis=axis, dtype=dtype, **kwargs)

    def mean(self, axis=None, dtype=None, **kwargs):
        return self._reduce("mean", dtype) if axis is None and not kwargs else \
            self._fallback("mean", axis=axis, dtype=dtype, **kwargs)

    def prod(self, axis=None, dtype=None, **kwargs):
        return self._reduce("prod", dtype) if axis is None and not kwargs else \
            self._fallback("prod", axis=axis, dtype=dtype, **kwargs)

    def any(self, axis=None, **kwargs):
        return self._reduce("any") if axis is None and not kwargs else \
            self._fallback("any", axis=axis, **kwargs)

    def all(self, axis=None, **kwargs):
        return self._reduce("all") if axis is None and not kwargs else \
            self._fallback("all", axis=axis, **kwargs)

    def max(self, axis=None, **kwargs):
        return self._reduce("max") if axis is None and not kwargs else \
            self._fallback("max", axis=axis, **kwargs)

    def min(self, axis=None, **kwargs):
        return self._reduce("min") if axis is None and not kwargs else \
            self._fallback("min", axis=axis, **kwargs)

    def _extreme(self, name: str):
        """`x[mask].max()` as `np.max(x, where=mask, initial=the dtype's lowest value)`:
        the same value (a selected NaN propagates, an unselected one does not), and for
        an empty selection NumPy's ValueError, raised by a run-time check the program
        keeps live (`xlanb.check_selected`), before any argument is written."""
        dtype = np.dtype(self.dtype)
        if dtype.kind not in "biuf":             # complex, datetimes: no total order here
            return self._fallback(name)
        mask = wrap(self.full_mask(self.source.shape))
        reduction = "maximum" if name == "max" else "minimum"
        current_context().checks.append(to_node(call("xlanb.check_selected", [mask],
                                                     reduction=reduction)))
        return _EXTREMES[name](wrap(self.source), where=mask,
                               initial=_bound(dtype, lowest=name == "max"))

    def _fallback(self, name: str, **kwargs):
        return getattr(self.materialize(f"x[mask].{name}()"), name)(**kwargs)

    def __array_function__(self, func, types, args, kwargs):
        name = _REDUCTIONS.get(func)
        if name is not None and args and args[0] is self and len(args) == 1 and \
                set(kwargs) <= {"dtype"} and self.lazy:
            return self._reduce(name, kwargs.get("dtype"))
        return func(*_materialized(args, func), **_materialized(kwargs, func))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        arrays = [x for x in inputs if isinstance(x, MaskedSelection) or (
            isinstance(x, (Tracer, np.ndarray)) and x.ndim > 0)]     # 0-d: a scalar
        if method == "__call__" and not kwargs and all(
                isinstance(x, MaskedSelection) and x.lazy and same_value(x.mask, self.mask)
                and x.source.shape == self.source.shape for x in arrays):
            full = [wrap(x.source) if isinstance(x, MaskedSelection) else x for x in inputs]
            result = ufunc(*full)
            if isinstance(result, tuple):
                return tuple(MaskedSelection(r.node, self.mask) for r in result)
            return MaskedSelection(result.node, self.mask)
        what = f"np.{ufunc.__name__} of x[mask]"
        return getattr(ufunc, method)(*_materialized(inputs, what),
                                      **_materialized(kwargs, what))

    # -- everything else needs the elements ------------------------------------------------
    def materialize(self, what: str = "x[mask]") -> Tracer:
        """The selected elements as an array (a value-dependent shape).  Kept: from then on
        this object stands for that array, so writes into it (`np.add(z, c, out=z)`,
        `z[0] = 1`, `z += 1`) are seen by every later use, as in NumPy."""
        if self.array is None:
            self.array = unsupported(operator.getitem, (wrap(self.source), wrap(self.mask)),
                                     {}, f"{what} (boolean mask)")
        return self.array

    def __setitem__(self, key, value):
        self.materialize("x[mask][...] = v")[key] = value

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.materialize(f"x[mask].{name}"), name)

    def __len__(self):
        return len(self.materialize("len(x[mask])"))

    def __iter__(self):
        return iter(self.materialize("iter(x[mask])"))

    def __getitem__(self, key):
        return self.materialize("x[mask][...]")[key]

    def __bool__(self):
        return bool(self.materialize("bool(x[mask])"))

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.materialize("np.asarray(x[mask])"), dtype=dtype)


def same_value(a: Node, b: Node, depth: int = 12) -> bool:
    """Whether two nodes provably hold the same value (`x > 0.2` traced twice)."""
    from xlanb_runtime.ir.graph import arg_key
    stack = [(a, b, 0)]
    while stack:
        a, b, level = stack.pop()
        if a is b:
            continue
        if level >= depth or a.op is not b.op or a.shape != b.shape or a.dtype != b.dtype \
                or len(a.inputs) != len(b.inputs) or arg_key(a.arg) != arg_key(b.arg) or \
                a.op.value in ("parameter", "rng-bits"):
            return False
        stack.extend((x, y, level + 1) for x, y in zip(a.inputs, b.inputs))
    return True


def _materialized(tree, what):
    what = what if isinstance(what, str) else f"np.{getattr(what, '__name__', what)}"
    if isinstance(tree, MaskedSelection):
        return tree.materialize(f"{what} of x[mask]")
    if isinstance(tree, (list, tuple)):
        return type(tree)(_materialized(x, what) for x in tree)
    if isinstance(tree, dict):
        return {k: _materialized(v, what) for k, v in tree.items()}
    return tree


def _operator(symbol: str, ufunc, reflected: bool = False):
    def method(self, other):
        return ufunc(other, self) if reflected else ufunc(self, other)
    method.__name__ = symbol
    return method


for _name, _ufunc in {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                      "truediv": np.true_divide, "floordiv": np.floor_divide,
                      "mod": np.remainder, "pow": np.power, "and": np.bitwise_and,
                      "or": np.bitwise_or, "xor": np.bitwise_xor}.items():
    setattr(MaskedSelection, f"__{_name}__", _operator(_name, _ufunc))
    setattr(MaskedSelection, f"__r{_name}__", _operator(_name, _ufunc, reflected=True))
for _name, _ufunc in {"lt": np.less, "le": np.less_equal, "gt": np.greater,
                      "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal}.items():
    setattr(MaskedSelection, f"__{_name}__", _operator(_name, _ufunc))
def _inplace(symbol: str, ufunc):
    """`s *= k`: every reference to `s` sees the change, as in NumPy.  Still lazy when the
    result is a selection under the same mask and dtype (`v[x > 1] *= -1` compiles)."""
    def method(self, other):
        if self.lazy:
            result = ufunc(self, other)
            if isinstance(result, MaskedSelection) and result.lazy and \
                    result.mask is self.mask and result.dtype == self.dtype:
                self.source = result.source
                return self
        array = self.materialize(f"x[mask] {symbol}=")
        getattr(array, f"__i{symbol}__")(other)
        return self
    return method


for _name, _ufunc in {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                      "truediv": np.true_divide, "floordiv": np.floor_divide,
                      "mod": np.remainder, "pow": np.power, "and": np.bitwise_and,
                      "or": np.bitwise_or, "xor": np.bitwise_xor}.items():
    setattr(MaskedSelection, f"__i{_name}__", _inplace(_name, _ufunc))
MaskedSelection.__neg__ = lambda self: np.negative(self)
MaskedSelection.__abs__ = lambda self: np.absolute(self)
MaskedSelection.__hash__ = None
