"""Shape functions: reshape, transpose and friends, joining, splitting, flipping, padding.

All shapes are static, so each lowers to data-movement nodes (`reshape`, `transpose`,
`broadcast`, `concatenate`, `slice`, `reverse`, `pad`) plus an iota mask for tril/triu.
NumPy's argument conventions (negative axes, -1 in reshape, tuples or ints) are normalized
here; the IR only ever sees explicit, non-negative ones.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from xlanb_runtime.ir import Node, Op
from xlanb_runtime.ir import builder as B

from ...errors import ShapeMismatchError
from ..layout import with_concatenated_order, with_order
from ..tracer import Tracer
from ..views import (ReshapeStep, TransposeStep, broadcast_strides, is_contiguous,
                     keep_order)
from . import fail, implements, unsupported, unsupported_option
from .promote import (broadcast_shapes, broadcast_to, normalize_axes, normalize_axis,
                      result_type, scalar, shape_of, to_node, wrap)


def _shape_arg(shape) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) or hasattr(shape, "__index__"):
        return (operator.index(shape),)
    return tuple(operator.index(n) for n in shape)


def _view_step(source: Node, node: Node):
    """The view step taking `source` to `node`, if `node` is a reshape/transpose of it."""
    if node is source:
        return ReshapeStep(node.shape)
    if node.inputs and node.inputs[0] is source:
        if node.op is Op.TRANSPOSE:
            return TransposeStep(node.arg)
        if node.op is Op.RESHAPE:
            return ReshapeStep(node.shape)
    return None


def _view_rule(rule):
    """Make `rule`'s result a view of its array argument where NumPy returns a view."""
    @functools.wraps(rule)
    def view_rule(a, *args, **kwargs):
        out = rule(a, *args, **kwargs)
        if not isinstance(a, Tracer):
            return out
        step = _view_step(a.node, out.node)
        view = a.view(step, out.node) if step is not None else None
        return out if view is None else view
    return view_rule


def reshape_node(x: Node, shape) -> Node:
    shape = list(_shape_arg(shape))
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = int(np.prod([n for n in shape if n != -1], dtype=np.int64))
        if known == 0 or x.size % known:
            raise fail(ShapeMismatchError, f"cannot reshape array of size {x.size} into "
                       f"shape {tuple(shape)}")
        shape[shape.index(-1)] = x.size // known
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        raise fail(ShapeMismatchError, f"cannot reshape array of size {x.size} into shape "
                   f"{tuple(shape)}")
    return B.reshape(x, shape)


@implements(np.reshape)
@_view_rule
def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if order != "C":
        raise unsupported_option("reshape", "order=", "only C order is compiled; leave the "
                                 "default")
    return wrap(reshape_node(to_node(a), shape if shape is not None else newshape))


@implements(np.ravel)
def ravel(a, order="C"):
    """NumPy's PyArray_Ravel: the elements in C, F, A (F when only F-contiguous) or K
    (memory, `keep_order`) order; a view when they are contiguous in that order, else a
    copy (`x[::2].ravel()` is a copy, though `x[::2].reshape(-1)` is a view)."""
    if order not in ("C", "F", "A", "K"):
        raise unsupported_option("ravel", "order=", "orders are 'C', 'F', 'A' and 'K'")
    if not isinstance(a, Tracer):
        x = to_node(a)
        return wrap(B.reshape(x, (x.size,)))
    shape, strides = a.shape, a.elem_strides
    c_order = tuple(range(a.ndim))
    if order == "A":
        f_only = is_contiguous(shape, strides, c_order[::-1]) and \
            not is_contiguous(shape, strides, c_order)
        order = "F" if f_only else "C"
    if order == "K" and strides is None:
        raise unsupported_option("ravel", "order='K'", "the strides of this array are not "
                                 "whole elements; use order='C'")
    if order == "K" and not is_contiguous(shape, strides, c_order):
        axes = keep_order(shape, [strides])
    else:
        axes = c_order if order in ("C", "K") else c_order[::-1]
    ordered = a if axes == c_order else np.transpose(a, axes)
    if is_contiguous(shape, strides, axes):
        return np.reshape(ordered, (a.size,))         # a view
    return wrap(B.reshape(ordered.node, (a.size,)))   # a copy


@implements(np.transpose, getattr(np, "permute_dims", None))
@_view_rule
def transpose(a, axes=None):
    x = to_node(a)
    if axes is None:
        perm = tuple(reversed(range(x.ndim)))
    else:
        perm = tuple(normalize_axis(p, x.ndim) for p in axes)
        if sorted(perm) != list(range(x.ndim)):
            raise ValueError(f"axes {tuple(axes)} don't match array of rank {x.ndim}")
    return wrap(B.transpose(x, perm))


@implements(np.swapaxes)
@_view_rule
def swapaxes(a, axis1, axis2):
    x = to_node(a)
    perm = list(range(x.ndim))
    i, j = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return wrap(B.transpose(x, perm))


@implements(np.moveaxis)
@_view_rule
def moveaxis(a, source, destination):
    x = to_node(a)
    src = np.lib.array_utils.normalize_axis_tuple(source, x.ndim, "source")
    dst = np.lib.array_utils.normalize_axis_tuple(destination, x.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return wrap(B.transpose(x, order))


def expand_node(x: Node, axis) -> Node:
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out_ndim = x.ndim + len(axes)
    axes = normalize_axes(tuple(axes), out_ndim)
    dims = iter(x.shape)
    return B.reshape(x, [1 if d in axes else next(dims) for d in range(out_ndim)])


@implements(np.expand_dims)
@_view_rule
def expand_dims(a, axis):
    return wrap(expand_node(to_node(a), axis))


@implements(np.squeeze)
@_view_rule
def squeeze(a, axis=None):
    x = to_node(a)
    if axis is None:
        axes = tuple(d for d, n in enumerate(x.shape) if n == 1)
    else:
        axes = normalize_axes(axis, x.ndim)
        if any(x.shape[d] != 1 for d in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not "
                             "equal to one")
    return wrap(B.reshape(x, [n for d, n in enumerate(x.shape) if d not in axes]))


def as_tracer(a) -> Tracer:
    """`a` itself when traced (views of it write through), else a constant array."""
    return a if isinstance(a, Tracer) else wrap(to_node(a))


def _read_only_broadcast(array, shape) -> Tracer:
    """A broadcast copy standing for NumPy's read-only view: a write raises, as NumPy's,
    and its layout is the view's (a stretched axis steps by 0), so that a ravel or reshape
    of it is a copy where NumPy's is."""
    operand = as_tracer(array)
    result = _read_only(wrap(broadcast_to(operand.node, shape)))
    strides = operand.elem_strides
    if strides is not None and result.shape != operand.shape:
        result._strides = broadcast_strides(shape, operand.shape, strides)
    return result


@implements(np.broadcast_to)
def broadcast_to_(array, shape, subok=False):
    """NumPy's read-only view (a copy that refuses writes)."""
    return _read_only_broadcast(array, _shape_arg(shape))


@implements(np.broadcast_arrays)
def broadcast_arrays(*args, subok=False):
    """NumPy returns the arguments themselves when all have the broadcast shape, else a
    view each: writeable where the shape is the array's own (a write reaches it), and
    overlapping elsewhere (NumPy writes with a warning; here a read-only copy raises)."""
    shape = broadcast_shapes(*(shape_of(a) for a in args))
    arrays = [as_tracer(a) for a in args]
    if all(a.shape == shape for a in arrays):
        return tuple(arrays)
    return tuple(a[...] if a.shape == shape else _read_only_broadcast(a, shape)
                 for a in arrays)


def concat_nodes(arrays, axis, dtype=None) -> Node:
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    dtype = np.dtype(dtype) if dtype is not None else result_type(*arrays)
    nodes = [to_node(a, dtype) for a in arrays]
    if axis is None:
        nodes = [B.reshape(n, (n.size,)) for n in nodes]
        axis = 0
    first = nodes[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, first.ndim)
    for i, n in enumerate(nodes[1:], start=1):
        if n.ndim != first.ndim:
            raise fail(ShapeMismatchError, f"all the input arrays must have same number of "
                       f"dimensions, but the array at index 0 has {first.ndim} dimension(s) "
                       f"and the array at index {i} has {n.ndim}: {first.shape} and {n.shape}")
        for d in range(first.ndim):
            if d != axis and n.shape[d] != first.shape[d]:
                raise fail(ShapeMismatchError, f"all the input array dimensions except for "
                           f"the concatenation axis must match exactly, but along dimension "
                           f"{d}, the array at index 0 has size {first.shape[d]} and the "
                           f"array at index {i} has size {n.shape[d]}")
    return B.concatenate(nodes, axis)


@implements(np.concatenate, getattr(np, "concat", None))
def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if out is not None:
        raise unsupported_option("concatenate", "out=", "assign the result instead")
    arrays = list(arrays)
    result = wrap(concat_nodes(arrays, axis, dtype))
    return result if axis is None else with_concatenated_order(result, arrays)


@implements(np.stack)
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if out is not None:
        raise unsupported_option("stack", "out=", "assign the result instead")
    arrays = list(arrays)
    shapes = {tuple(shape_of(a)) for a in arrays}
    if len(shapes) != 1:
        raise fail(ShapeMismatchError, "all input arrays must have the same shape, got "
                   + " and ".join(str(s) for s in sorted(shapes)))
    ndim = len(shapes.pop())
    axis = normalize_axis(axis, ndim + 1)
    dtype = np.dtype(dtype) if dtype is not None else result_type(*arrays)
    expanded = [expand_node(to_node(a, dtype), axis) for a in arrays]
    return with_concatenated_order(wrap(concat_nodes(expanded, axis)), arrays,
                                   [n.shape for n in expanded])


def _atleast(x: Node, ndim: int) -> Node:
    if x.ndim >= ndim:
        return x
    if ndim == 3 and x.ndim == 2:
        return B.reshape(x, x.shape + (1,))
    if ndim == 3 and x.ndim == 1:
        return B.reshape(x, (1,) + x.shape + (1,))
    return B.reshape(x, (1,) * (ndim - x.ndim) + x.shape)


# NumPy's views: the new axes of np.atleast_{1,2,3}d by the input's ndim (0-d: all new)
_ATLEAST_KEYS = {(1, 0): (None,), (2, 0): (None, None), (2, 1): (None, ...),
                 (3, 0): (None, None, None), (3, 1): (None, ..., None), (3, 2): (..., None)}


def _atleast_rule(ndim):
    def rule(*arys):
        out = []
        for a in arys:
            a = as_tracer(a)
            out.append(a if a.ndim >= ndim else a[_ATLEAST_KEYS[ndim, a.ndim]])
        return out[0] if len(out) == 1 else tuple(out)
    return rule


atleast_1d = implements(np.atleast_1d)(_atleast_rule(1))
atleast_2d = implements(np.atleast_2d)(_atleast_rule(2))
atleast_3d = implements(np.atleast_3d)(_atleast_rule(3))


@implements(np.hstack)
def hstack(tup, *, dtype=None, casting="same_kind"):
    tup = list(tup)
    nodes = [_atleast(to_node(a), 1) for a in tup]
    dtype = dtype if dtype is not None else result_type(*tup)
    result = wrap(concat_nodes([wrap(n) for n in nodes], 0 if nodes[0].ndim == 1 else 1, dtype))
    return with_concatenated_order(result, tup, [n.shape for n in nodes])


@implements(np.vstack)
def vstack(tup, *, dtype=None, casting="same_kind"):
    tup = list(tup)
    dtype = dtype if dtype is not None else result_type(*tup)
    nodes = [_atleast(to_node(a), 2) for a in tup]
    return with_concatenated_order(wrap(concat_nodes([wrap(n) for n in nodes], 0, dtype)),
                                   tup, [n.shape for n in nodes])


@implements(np.append)
def append(arr, values, axis=None):
    if axis is None:
        return wrap(concat_nodes([wrap(B.reshape(n, (n.size,))) for n in
                                  (to_node(arr), to_node(values))], 0, result_type(arr, values)))
    return concatenate((arr, values), axis=axis)


@implements(np.meshgrid)
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays: each 1-D input broadcast along the other dims (the first two
    swapped for indexing='xy'); copies, as NumPy's default copy=True gives."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    nodes = [to_node(x) for x in xi]
    nodes = [B.reshape(n, (n.size,)) for n in nodes]
    shape = [n.shape[0] for n in nodes]
    axes = list(range(len(nodes)))
    if indexing == "xy" and len(nodes) > 1:
        shape[0], shape[1] = shape[1], shape[0]
        axes[0], axes[1] = 1, 0
    out = []
    for n, axis in zip(nodes, axes):
        placed = [1] * len(nodes)
        placed[axis] = n.shape[0]
        node = B.reshape(n, placed)
        out.append(wrap(node if sparse else B.broadcast(node, tuple(shape),
                                                        tuple(range(len(nodes))))))
    return tuple(out)


@implements(np.shape)
def shape(a):
    return tuple(shape_of(a))


@implements(np.ndim)
def ndim(a):
    return len(shape_of(a))


@implements(np.size)
def size(a, axis=None):
    s = shape_of(a)
    return int(np.prod(s, dtype=np.int64)) if axis is None else s[normalize_axis(axis, len(s))]


@implements(np.copy)
def copy(a, order="K", subok=False):
    return with_order(wrap(to_node(a)), order, (a,))


@implements(getattr(np, "astype", None))
def astype(x, dtype, /, *, copy=True, device=None):
    from .complex_numbers import astype as cast      # complex -> real warns like NumPy
    return with_order(cast(x, dtype), "K", (x,))


@implements(np.flip)
def flip(m, axis=None):
    """NumPy's view `m[::-1]` along the axes (a write through it reaches m)."""
    m = as_tracer(m)
    axes = normalize_axes(axis, m.ndim)
    return m[tuple(slice(None, None, -1) if d in axes else slice(None)
                   for d in range(m.ndim))]


@implements(np.fliplr)
def fliplr(m):
    m = as_tracer(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return m[:, ::-1]


@implements(np.flipud)
def flipud(m):
    m = as_tracer(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return m[::-1, ...]


def _triangle(lower: bool):
    def rule(m, k=0):
        x = to_node(m)
        if x.ndim < 2:
            return unsupported(np.tril if lower else np.triu, (m, k), {})
        rows, cols = x.shape[-2:]
        row = B.iota((rows, cols), np.int64, 0)
        col = B.iota((rows, cols), np.int64, 1)
        diagonal = B.binary(Op.SUB, col, row)
        bound = B.broadcast(scalar(k, np.int64), (rows, cols))
        keep = B.binary(Op.LE if lower else Op.GE, diagonal, bound)
        keep = B.broadcast(keep, x.shape)
        return wrap(B.select(keep, x, B.broadcast(scalar(0, x.dtype), x.shape)))
    return rule


tril = implements(np.tril)(_triangle(True))
triu = implements(np.triu)(_triangle(False))


def _diagonal(x: Node, offset: int) -> Node:
    """The `offset` diagonal of the last two axes: a strided slice of them flattened."""
    rows, cols = x.shape[-2:]
    first_row, first_col = max(-offset, 0), max(offset, 0)
    count = max(0, min(rows - first_row, cols - first_col))
    flat = B.reshape(x, x.shape[:-2] + (rows * cols,))
    start = first_row * cols + first_col
    if count == 0:
        return slice_axis(flat, x.ndim - 2, 0, 0)
    return slice_axis(flat, x.ndim - 2, start, start + (count - 1) * (cols + 1) + 1, cols + 1)


def _read_only(tracer: Tracer) -> Tracer:
    """NumPy's read-only views (diagonals, broadcasts): a write raises as in NumPy."""
    tracer.writeable = False
    return tracer


@implements(np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    x = to_node(a)
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    axis1, axis2 = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    if axis1 == axis2:
        raise ValueError("axis1 and axis2 cannot be the same")
    rest = [d for d in range(x.ndim) if d not in (axis1, axis2)]
    x = B.transpose(x, rest + [axis1, axis2])
    return _read_only(wrap(_diagonal(x, operator.index(offset))))


def _diagonal_matrix(v: Node, k: int) -> Node:
    """The square matrix with `v` (1-D) on its k-th diagonal, zeros elsewhere."""
    n = v.shape[0] + abs(k)
    row, col = B.iota((n, n), np.int64, 0), B.iota((n, n), np.int64, 1)
    on = B.binary(Op.EQ, B.binary(Op.SUB, col, row), B.broadcast(scalar(k, np.int64), (n, n)))
    position = row if k >= 0 else col                # v[i] sits in row i (k >= 0)
    last = B.broadcast(scalar(max(v.shape[0] - 1, 0), np.int64), (n, n))
    values = B.gather(v, B.binary(Op.MIN, position, last), 0) if v.shape[0] else \
        B.broadcast(scalar(0, v.dtype), (n, n))
    return B.select(on, values, B.broadcast(scalar(0, v.dtype), (n, n)))


@implements(np.diag)
def diag(v, k=0):
    x = to_node(v)
    k = operator.index(k)
    if x.ndim == 1:
        return wrap(_diagonal_matrix(x, k))
    if x.ndim == 2:
        return _read_only(wrap(_diagonal(x, k)))
    raise ValueError("Input must be 1- or 2-d.")


@implements(np.diagflat)
def diagflat(v, k=0):
    x = to_node(v)
    return wrap(_diagonal_matrix(B.reshape(x, (x.size,)), operator.index(k)))


def slice_axis(x: Node, axis: int, start: int, stop: int, step: int = 1) -> Node:
    specs = [(0, n, 1) for n in x.shape]
    specs[axis] = (start, stop, step)
    return B.slice_(x, specs)


def _split(name, strict: bool):
    def rule(ary, indices_or_sections, axis=0):
        x = to_node(ary)
        axis = normalize_axis(axis, x.ndim)
        n = x.shape[axis]
        if isinstance(indices_or_sections, (int, np.integer)):
            sections = int(indices_or_sections)
            if strict and n % sections:
                raise ValueError("array split does not result in an equal division")
            base, extra = divmod(n, sections)
            sizes = [base + 1] * extra + [base] * (sections - extra)
            bounds = np.cumsum([0] + sizes).tolist()
        else:
            bounds = [0] + [min(max(int(i) + (n if i < 0 else 0), 0), n)
                            for i in indices_or_sections] + [n]
        whole = as_tracer(ary)                     # NumPy's pieces are views of it
        return [whole[(slice(None),) * axis + (slice(a, max(a, b)),)]
                for a, b in zip(bounds, bounds[1:])]
    return rule


split = implements(np.split)(_split("split", True))
array_split = implements(np.array_split)(_split("array_split", False))


@implements(np.pad)
def pad(array, pad_width, mode="constant", **kwargs):
    """Constant padding is a pad op; the modes that copy elements (edge, reflect, symmetric,
    wrap) read x through an index map per axis, np.pad of arange(n) itself: a gather
    that fuses with the consumer, with NumPy's own answer for every width.  The result
    is Fortran-ordered where x is (and not also C-ordered), as NumPy's `_pad_simple`
    allocates it."""
    x = to_node(array)
    value = kwargs.pop("constant_values", 0)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    if mode == "constant" and not kwargs and np.ndim(value) == 0:
        config = [(int(lo), int(hi), 0) for lo, hi in widths]
        return with_order(wrap(B.pad(x, scalar(value, x.dtype), config)), "A", (array,),
                          shape=x.shape)
    if mode not in _COPYING_PAD_MODES or (widths < 0).any() or \
            any(n == 0 for n in x.shape) or set(kwargs) - {"reflect_type"} or \
            kwargs.get("reflect_type", "even") != "even":   # "odd" computes new values
        return unsupported(np.pad, (array, pad_width), dict(kwargs, mode=mode))
    for axis, (lo, hi) in enumerate(widths.tolist()):
        if lo or hi:
            index = np.pad(np.arange(x.shape[axis]), (lo, hi), mode=mode)
            x = B.gather(x, B.constant(index.astype(np.int64)), axis)
    return with_order(wrap(x), "A", (array,), shape=np.shape(array))


_COPYING_PAD_MODES = ("edge", "reflect", "symmetric", "wrap")


@implements(np.roll)
def roll(a, shift, axis=None):
    x = to_node(a)
    if axis is None:
        flat = B.reshape(x, (x.size,))
        return wrap(B.reshape(to_node(roll(wrap(flat), shift, 0)), x.shape))
    shifts = np.broadcast_to(shift, np.shape(axis)).reshape(-1)
    axes = np.atleast_1d(axis).reshape(-1)
    for s, ax in zip(shifts.tolist(), axes.tolist()):
        ax = normalize_axis(ax, x.ndim)
        n = x.shape[ax]
        if n == 0:
            continue
        k = int(s) % n
        if k:
            x = B.concatenate([slice_axis(x, ax, n - k, n), slice_axis(x, ax, 0, n - k)], ax)
    return with_order(wrap(x), "K", (a,))       # NumPy fills an empty_like(a)


@implements(np.repeat)
def repeat(a, repeats, axis=None):
    x = to_node(a)
    if not isinstance(repeats, (int, np.integer)):
        return unsupported(np.repeat, (a, repeats), {"axis": axis})
    if axis is None:
        x, axis = B.reshape(x, (x.size,)), 0
    axis = normalize_axis(axis, x.ndim)
    r = int(repeats)
    wide = B.broadcast(expand_node(x, axis + 1), x.shape[:axis + 1] + (r,) + x.shape[axis + 1:])
    out = list(x.shape)
    out[axis] *= r
    return wrap(B.reshape(wide, out))


@implements(np.tile)
def tile(A, reps):
    x = to_node(A)
    reps = (int(reps),) if isinstance(reps, (int, np.integer)) else tuple(int(r) for r in reps)
    ndim = max(len(reps), x.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    x = B.reshape(x, (1,) * (ndim - x.ndim) + x.shape)
    interleaved = B.reshape(x, [v for n in x.shape for v in (1, n)])
    wide = B.broadcast(interleaved, [v for r, n in zip(reps, x.shape) for v in (r, n)])
    return wrap(B.reshape(wide, [r * n for r, n in zip(reps, x.shape)]))


def _with_ends(a, shape: tuple, axis: int, prepend, append):
    """np.diff's `prepend`/`append`: a scalar broadcast to one slice along `axis`, an array
    as it is, concatenated as NumPy does (its dtype promotion, its shape errors)."""
    parts = []
    for value in (prepend, append):
        if value is np._NoValue:
            parts.append([])
            continue
        if np.ndim(value) == 0:
            end = list(shape)
            end[axis] = 1
            value = np.broadcast_to(value, tuple(end))
        parts.append([value])
    return np.concatenate(parts[0] + [a] + parts[1], axis=axis)


@implements(np.diff)
def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    if n == 0:
        return a
    x = to_node(a)
    axis = normalize_axis(axis, x.ndim)
    if prepend is not np._NoValue or append is not np._NoValue:
        a = _with_ends(a, x.shape, axis, prepend, append)
        x = to_node(a)
    for _ in range(n):
        size = x.shape[axis]
        hi, lo = slice_axis(x, axis, min(1, size), size), slice_axis(x, axis, 0, max(size - 1, 0))
        x = B.binary(Op.NE if x.dtype == np.bool_ else Op.SUB, hi, lo)
    return with_order(wrap(x), "K", (a,), shape=np.shape(a))   # a ufunc on views of `a`
