"""Python operators and ndarray methods on `Tracer`, attached to the class at import.

Operators go through the ufunc lowering with the operator's name (`operator +`) so errors
point at the expression the user wrote; methods enter `x.sum()` and call the same rules as
the NumPy functions.  In-place operators (`a += b`) follow NumPy: the result keeps a's
shape and dtype (same_kind casting) and the Tracer object itself is updated.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xlanb_runtime.ir import builder as B

from ..errors import DTypeError, ShapeMismatchError
from .lowering import dispatch_ufunc, fail, translate_errors
from .lowering.promote import is_operand
from .source import entry
from .tracer import Tracer

_BINARY = {
    "add": (np.add, "+"), "sub": (np.subtract, "-"), "mul": (np.multiply, "*"),
    "truediv": (np.true_divide, "/"), "floordiv": (np.floor_divide, "//"),
    "mod": (np.remainder, "%"), "pow": (np.power, "**"), "matmul": (np.matmul, "@"),
    "and": (np.bitwise_and, "&"), "or": (np.bitwise_or, "|"), "xor": (np.bitwise_xor, "^"),
    "lshift": (np.left_shift, "<<"), "rshift": (np.right_shift, ">>"),
    "divmod": (np.divmod, "divmod()"),
}
_COMPARE = {"lt": (np.less, "<"), "le": (np.less_equal, "<="), "gt": (np.greater, ">"),
            "ge": (np.greater_equal, ">="), "eq": (np.equal, "=="),
            "ne": (np.not_equal, "!=")}
_UNARY = {"neg": (np.negative, "unary -"), "pos": (np.positive, "unary +"),
          "abs": (np.absolute, "abs()"), "invert": (np.invert, "~")}


def _forward(ufunc, symbol):
    def operator_method(self, other):
        if not is_operand(other):
            return NotImplemented
        return dispatch_ufunc(ufunc, "__call__", (self, other), {}, f"operator {symbol}")
    return operator_method


def _reflected(ufunc, symbol):
    def operator_method(self, other):
        if not is_operand(other):
            return NotImplemented
        return dispatch_ufunc(ufunc, "__call__", (other, self), {}, f"operator {symbol}")
    return operator_method


def _inplace(ufunc, symbol):
    def operator_method(self, other):
        if not is_operand(other):
            return NotImplemented
        what = f"operator {symbol}="
        with entry(what), translate_errors():
            result = dispatch_ufunc(ufunc, "__call__", (self, other), {}, what)
            if self.writeable is None or self.numpy_scalar:
                # a scalar argument, or a value NumPy gives as a scalar (`s = x.sum()`):
                # immutable, so `s += 1` rebinds s, as in Python, and `t = s` keeps its value
                return result
            if result.shape != self.shape:
                raise fail(ShapeMismatchError, f"non-broadcastable output operand with shape "
                           f"{self.shape} doesn't match the broadcast shape {result.shape}")
            if not np.can_cast(result.dtype, self.dtype, "same_kind"):
                raise fail(DTypeError, f"cannot cast the result from {result.dtype} to "
                           f"{self.dtype} with casting rule 'same_kind'",
                           hint=f"write `x = x {symbol} y` to get a new {result.dtype} array")
            self.node = B.convert(result.node, self.dtype)
        return self
    return operator_method


def _unary(ufunc, symbol):
    def operator_method(self):
        return dispatch_ufunc(ufunc, "__call__", (self,), {}, f"operator {symbol}")
    return operator_method


for _name, (_ufunc, _symbol) in _BINARY.items():
    setattr(Tracer, f"__{_name}__", _forward(_ufunc, _symbol))
    setattr(Tracer, f"__r{_name}__", _reflected(_ufunc, _symbol))
    if _name != "divmod":
        setattr(Tracer, f"__i{_name}__", _inplace(_ufunc, _symbol))
for _name, (_ufunc, _symbol) in _COMPARE.items():
    setattr(Tracer, f"__{_name}__", _forward(_ufunc, _symbol))
for _name, (_ufunc, _symbol) in _UNARY.items():
    setattr(Tracer, f"__{_name}__", _unary(_ufunc, _symbol))


def _method(name: str, func):
    def method(self, *args, **kwargs):
        with entry(f"x.{name}()"):
            result = func(self, *args, **kwargs)
        if self.numpy_scalar and isinstance(result, Tracer) and result.shape == ():
            result.numpy_scalar = True    # a scalar's methods give scalars: s.astype(f32)
        return result
    method.__name__ = name
    method.__doc__ = f"Like ndarray.{name}; lowers through `{getattr(func, '__name__', name)}`."
    return method


def _shape_args(args):
    """x.reshape(2, 3) and x.reshape((2, 3)); x.transpose(1, 0) and x.transpose((1, 0))."""
    if len(args) == 1 and (args[0] is None or isinstance(args[0], Sequence)):
        return args[0]
    return args


def _reshape(x, *shape, order="C", copy=None):
    return np.reshape(x, _shape_args(shape), order=order)


def _transpose(x, *axes):
    return np.transpose(x, _shape_args(axes) if axes else None)


def _astype(x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    from .layout import has_order, with_order
    from .lowering.complex_numbers import astype
    if not copy and np.dtype(dtype) == x.dtype and has_order(x, order):
        return x                                   # NumPy's astype(copy=False): x itself
    return with_order(astype(x, dtype), order, (x,))    # complex -> real warns as NumPy


def _flatten(x, order="C"):
    """Always a copy (ravel may return a view)."""
    flat = np.ravel(x, order=order)
    return flat.context.wrap(flat.node)


def _copy(x, order="C"):
    """A new array in NumPy's layout for `order` (layout.with_order): an exact layout,
    which `x.strides` and `x.flags` show."""
    from .layout import with_order
    return with_order(x.context.wrap(x.node), order, (x,))


def _fill(x, value):
    from .lowering.inplace import fill
    fill(x, value)


def _clip(x, min=None, max=None, out=None, **kwargs):
    """ndarray.clip: either bound may be left out (np.clip needs both before NumPy 2.1)."""
    return np.clip(x, min, max, out=out, **kwargs)


_METHODS = {
    "sum": np.sum, "prod": np.prod, "mean": np.mean, "var": np.var, "std": np.std,
    "max": np.max, "min": np.min, "argmax": np.argmax, "argmin": np.argmin, "any": np.any,
    "all": np.all, "clip": _clip, "dot": np.dot, "swapaxes": np.swapaxes,
    "squeeze": np.squeeze, "ravel": np.ravel, "take": np.take, "repeat": np.repeat,
    "round": np.round, "trace": np.trace, "diagonal": np.diagonal, "nonzero": np.nonzero,
    "conj": np.conjugate, "conjugate": np.conjugate,
    "reshape": _reshape, "transpose": _transpose, "astype": _astype, "flatten": _flatten,
    "copy": _copy, "fill": _fill, "put": np.put,
}
for _name, _func in _METHODS.items():
    setattr(Tracer, _name, _method(_name, _func))
Tracer.__round__ = _method("__round__", lambda x, ndigits=None: np.round(x, ndigits or 0))
