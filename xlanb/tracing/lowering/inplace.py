"""Writes into existing arrays: `out=`, `np.copyto`, `x.fill`, `np.fill_diagonal`, `np.putmask`,
`np.add.at`.

Each computes the new contents as a node and assigns it to the destination Tracer
(`tracer.node = ...`), which writes through views into the root; `trace()` writes argument
roots back to the caller.  NumPy's rules are kept: the value broadcasts to the destination's
shape (never the reverse) and is cast under `casting` ('same_kind' for ufuncs and copyto);
the function returns the destination itself, as NumPy returns `out`.
"""
from __future__ import annotations

import numpy as np

from xlanb_runtime.ir import Op
from xlanb_runtime.ir import builder as B

from ...errors import DTypeError, ShapeMismatchError, UnsupportedNumPyFunctionError
from ..tracer import Tracer
from . import fail, implements
from .promote import broadcast_shapes, broadcast_to, dtype_of, shape_of, to_node


def destination(out, what: str) -> Tracer:
    """The Tracer behind an `out=` argument (a Tracer or a 1-tuple holding one)."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise fail(UnsupportedNumPyFunctionError, f"`out=` with {len(out)} arrays",
                       hint="write each output separately")
        out = out[0]
    if not isinstance(out, Tracer):
        raise fail(UnsupportedNumPyFunctionError,
                   f"`out=` is a {type(out).__name__} that is not traced (a global or an "
                   f"array made before the call), so {what} cannot write into it",
                   hint="pass the array as an argument of the compiled function, or assign "
                   "the result instead")
    return out


def assign(dest: Tracer, value, casting: str = "same_kind", where=True) -> Tracer:
    """dest[...] = value (broadcast to dest, cast under `casting`), only where `where`."""
    dtype = dtype_of(value)
    if not np.can_cast(dtype, dest.dtype, casting):
        raise fail(DTypeError, f"cannot cast from {dtype} to {dest.dtype} with casting "
                   f"rule {casting!r}", hint=f"convert explicitly: `.astype({dest.dtype})`")
    shape = broadcast_shapes(shape_of(value), dest.shape)
    if shape != dest.shape:
        raise fail(ShapeMismatchError, f"non-broadcastable output operand with shape "
                   f"{dest.shape} doesn't match the broadcast shape {shape}")
    node = broadcast_to(to_node(value, dest.dtype), dest.shape)
    if where is not True:
        mask = broadcast_to(to_node(where, bool), dest.shape)
        node = B.select(mask, node, dest.node)
    dest.node = node
    return dest


@implements(np.copyto)
def copyto(dst, src, casting="same_kind", where=True):
    assign(destination(dst, "np.copyto"), src, casting, where)


def fill(x: Tracer, value) -> None:
    """ndarray.fill: any value NumPy can cast to x's dtype (unsafe casting)."""
    assign(x, np.asarray(value) if not isinstance(value, Tracer) else value, "unsafe")


@implements(np.fill_diagonal)
def fill_diagonal(a, val, wrap=False):
    dest = destination(a, "np.fill_diagonal")
    if dest.ndim < 2 or (dest.ndim > 2 and len(set(dest.shape)) != 1):
        raise ValueError("All dimensions of input must be of equal length")
    if wrap and dest.ndim == 2 and dest.shape[0] > dest.shape[1] + 1:
        from . import unsupported_option
        raise unsupported_option("fill_diagonal", "wrap=True", "leave it False")
    if not isinstance(val, Tracer):      # NumPy's own error: inf or NaN into integers
        from .library import numpy_check
        numpy_check(np.fill_diagonal, np.zeros((1,) * dest.ndim, dest.dtype), val)
    diagonal = None
    for axis in range(dest.ndim):
        index = B.iota(dest.shape, np.int64, axis)
        diagonal = index if diagonal is None else B.select(
            B.binary(Op.EQ, diagonal, index), index, B.broadcast(
                B.constant(np.asarray(-1, np.int64)), dest.shape))
    on_diagonal = B.binary(Op.GE, diagonal, B.broadcast(B.constant(np.asarray(0, np.int64)),
                                                        dest.shape))
    values = to_node(val, dest.dtype)
    if values.ndim == 0:
        placed = B.broadcast(values, dest.shape)
    else:
        count = min(dest.shape)
        flat = B.reshape(values, (values.size,))
        index = B.binary(Op.REM, diagonal, B.broadcast(B.constant(
            np.asarray(flat.shape[0], np.int64)), dest.shape))
        index = B.select(on_diagonal, index, B.broadcast(B.constant(np.asarray(0, np.int64)),
                                                         dest.shape))
        placed = B.gather(flat, index, 0) if count else B.broadcast(
            B.constant(np.zeros((), dest.dtype)), dest.shape)
    dest.node = B.select(on_diagonal, placed, dest.node)


@implements(np.putmask)
def putmask(a, mask, values):
    dest = destination(a, "np.putmask")
    if np.ndim(values) != 0 and not isinstance(values, Tracer):
        values = np.asarray(values)
    if shape_of(values) not in ((), dest.shape):
        from . import unsupported_option
        raise unsupported_option("putmask", "values=", "pass a scalar or an array of a's "
                                 "shape (NumPy repeats shorter ones)")
    assign(dest, values, "unsafe", where=mask)


def ufunc_at(ufunc, a, indices, b=None):
    """np.add.at(a, indices, b) / np.subtract.at: every index adds, repeated ones too, as
    a `scatter-add` on axis 0 (integer indices; other forms run with NumPy)."""
    from . import unsupported
    from .indexing import _index_node
    from .ufuncs import _resolve
    what = f"np.{ufunc.__name__}.at"
    index_dtype = dtype_of(indices) if isinstance(indices, Tracer) else (
        np.asarray(indices).dtype if not isinstance(indices, (tuple, slice)) else None)
    if b is None or index_dtype is None or index_dtype.kind not in "iu" or \
            not isinstance(a, Tracer):
        return unsupported(getattr(ufunc, "at"), (a, indices, b), {}, what)
    dest = destination(a, what)
    if dest.ndim == 0:
        raise IndexError("too many indices for array: array is 0-dimensional")
    index = _index_node(indices if isinstance(indices, Tracer) else np.asarray(indices),
                        dest.shape[0], 0)
    dtype = np.dtype(_resolve(ufunc, (dest, b), None)[-1])
    if not np.can_cast(dtype, dest.dtype, "same_kind"):
        raise fail(DTypeError, f"cannot cast ufunc '{ufunc.__name__}' output from {dtype} to "
                   f"{dest.dtype} with casting rule 'same_kind'",
                   hint=f"convert the values explicitly: `.astype({dest.dtype})`")
    shape = index.shape + dest.shape[1:]
    values = broadcast_to(to_node(b, dest.dtype), shape)
    if ufunc is np.subtract:
        values = B.unary(Op.NEG, values)
    dest.node = B.scatter_add(dest.node, index, values, 0)
