"""Indexing: `x[key]`, `x[key] = v`, `np.take`, `np.take_along_axis`, `np.*_indices_from`.

Basic indexing (ints, slices with any step, None, Ellipsis) is static: `reverse` for
negative steps, one `slice`, one `reshape` to drop int dims and insert new ones.  Integer
array indices (concrete or traced) then become one `gather`: a single index gathers on its
axis; several are broadcast and linearized (i0 * n1 + i1) into a gather on the operand with
those axes merged, placed like NumPy does (in place when adjacent, else first).  Negative
traced indices wrap with select(i < 0, i + n, i); concrete ones are wrapped and bounds-
checked now.  A boolean mask made of concrete values is just integer indices; a traced one
has a data-dependent shape and goes to the `call_unsupported` hook.

`x[key] = v` with basic indexing rebinds the Tracer to select(mask, pad(v), x), where pad
places v (broadcast, converted to x's dtype) at the slice and mask is the same pad of
`True`.  `x[bool_mask] = scalar` is select(mask, scalar, x), and `x[mask, 1] = scalar` the
same into the basic view `x[:, 1]`.  With integer-array indices
(and full slices), `scatter-add` places v and counts hits for the mask: exact for a scalar v,
for an array v when the indices are provably distinct (`g[np.arange(n), labels] -= 1`, or a
single traced index), and for concrete indices that repeat (only each target's last write
is placed, as NumPy's last write wins).  Otherwise the update goes to the
`call_unsupported` hook, after a retrace with the Python-scalar arguments the key reads made
static (`A[i, 1:] = v` for an int argument i).
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from xlanb_runtime.ir import Node, Op
from xlanb_runtime.ir import builder as B

from ..capture import _holds_tracer, _stack_nested
from ..tracer import StaticScalarsNeeded, Tracer
from ..views import IndexStep
from .masked import MaskedSelection, same_value
from . import implements, unsupported
from .library import check_within
from .promote import (broadcast_shapes, broadcast_to, constant_node, dtype_of, normalize_axis,
                      scalar, shape_of, to_node, wrap)


def index_update(x, key, value):
    """The pure form of `x[key] = value` (what the hook runs eagerly when asked)."""
    out = np.array(x, copy=True)
    out[key] = value
    return out


@dataclass
class _Plan:
    """Basic indexing as reverse -> slice -> reshape, plus the advanced entries left over."""
    reverse: list[int] = field(default_factory=list)
    specs: list[tuple[int, int, int]] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)       # per source dim, after slicing
    out_shape: list[int] = field(default_factory=list)    # after the reshape
    # (position after the reshape, index node, concrete wrapped index or None if traced)
    advanced: list[tuple[int, Node, Any]] = field(default_factory=list)
    mask: Any = None                                      # set when a traced mask is seen


def _is_bool_array(k) -> bool:
    if isinstance(k, list) and _holds_tracer(k):
        return _stack_nested(k).dtype == np.bool_
    return isinstance(k, (np.ndarray, list, Tracer)) and np.dtype(
        k.dtype if isinstance(k, (np.ndarray, Tracer)) else np.asarray(k).dtype) == np.bool_


def _normalize_key(shape: tuple[int, ...], key) -> list:
    """Entries (int, slice, None, index array) covering every dim; Ellipsis expanded."""
    key = list(key) if isinstance(key, tuple) else [key]
    entries = []
    for k in key:
        if isinstance(k, MaskedSelection):     # x[a[m]]: the selected values as indices
            k = k.materialize("x[mask] as an index")
        if isinstance(k, Tracer) and k.node.op is Op.CONSTANT:
            k = k.node.arg                     # an index array made in the function
        if isinstance(k, list) and _holds_tracer(k):
            k = wrap(_stack_nested(k))         # A[[0, p]] with a traced p: an index array
        elif isinstance(k, list):
            k = np.asarray(k)
            k = k.astype(np.intp) if k.size == 0 else k
        if isinstance(k, np.ndarray) and k.dtype == np.bool_ and k.ndim > 0:
            entries.extend(np.nonzero(k))          # a concrete mask is static indices
        elif isinstance(k, (bool, np.bool_)) or (isinstance(k, np.ndarray) and
                                                 k.dtype == np.bool_):
            raise IndexError("scalar boolean indices are not supported when compiling")
        else:
            entries.append(k)
    consumed = sum(1 for k in entries if k is not None and k is not Ellipsis
                   and not (isinstance(k, Tracer) and k.dtype == np.bool_))
    consumed += sum(k.ndim for k in entries if isinstance(k, Tracer) and k.dtype == np.bool_)
    ellipses = [i for i, k in enumerate(entries) if k is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                         f"but {consumed} were indexed")
    fill = [slice(None)] * (len(shape) - consumed)
    if ellipses:
        i = ellipses[0]
        return entries[:i] + fill + entries[i + 1:]
    return entries + fill


def _is_array_index(k) -> bool:
    """Traced indices (even 0-d: their value is unknown) and concrete arrays of rank >= 1."""
    return isinstance(k, Tracer) or (isinstance(k, np.ndarray) and k.ndim > 0)


def _plan(x: Node, key) -> _Plan:
    entries = _normalize_key(x.shape, key)
    plan = _Plan()
    if any(isinstance(k, Tracer) and k.dtype == np.bool_ for k in entries):
        plan.mask = True
        return plan
    advanced_mode = any(_is_array_index(k) for k in entries)
    dim = 0
    for k in entries:
        if k is None:
            plan.out_shape.append(1)
            continue
        n = x.shape[dim]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            count = len(range(start, stop, step))
            if step < 0:
                plan.reverse.append(dim)
                start, step = n - 1 - start, -step
            plan.specs.append((start, start + (count - 1) * step + 1, step) if count
                              else (0, 0, 1))
            plan.counts.append(count)
            plan.out_shape.append(count)
        elif _is_array_index(k) or advanced_mode:
            if not isinstance(k, (Tracer, np.ndarray)):
                k = np.asarray(operator.index(k))
            plan.specs.append((0, n, 1))
            plan.counts.append(n)
            known = None if isinstance(k, Tracer) else np.where(k < 0, k + n, k)
            plan.advanced.append((len(plan.out_shape), _index_node(k, n, dim), known))
            plan.out_shape.append(n)
        else:
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
            i += n if i < 0 else 0
            plan.specs.append((i, i + 1, 1))
            plan.counts.append(1)
        dim += 1
    return plan


def _index_node(index, n: int, axis: int) -> Node:
    """Indices as an int64 node with negative entries wrapped (bounds-checked if concrete)."""
    if isinstance(index, Tracer):
        if index.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type, "
                             f"got a traced {index.dtype}")
        node = B.convert(to_node(index), np.int64)
        # NumPy's IndexError (the kernels themselves clamp, for memory safety only)
        check_within(node, -n, n - 1, "IndexError",
                     f"index {{value}} is out of bounds for axis {axis} with size {n}")
        if index.dtype.kind == "i":
            size = B.broadcast(scalar(n, np.int64), node.shape)
            negative = B.binary(Op.LT, node, B.broadcast(scalar(0, np.int64), node.shape))
            node = B.select(negative, B.binary(Op.ADD, node, size), node)
        return node
    array = np.asarray(index)
    if array.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    bad = array[(array >= n) | (array < -n)]
    if bad.size:
        raise IndexError(f"index {bad.reshape(-1)[0]} is out of bounds for axis {axis} with "
                         f"size {n}")
    return constant_node(np.where(array < 0, array + n, array).astype(np.int64))


def _basic(x: Node, plan: _Plan) -> Node:
    y = B.reverse(x, plan.reverse)
    y = B.slice_(y, plan.specs)
    return B.reshape(y, plan.out_shape)


def _merge(y: Node, positions: list[int]) -> tuple[Node, list[int]]:
    """y with the indexed axes moved first and flattened into one: (M, rest...)."""
    rest = [d for d in range(y.ndim) if d not in positions]
    merged = B.transpose(y, positions + rest)
    size = int(np.prod([y.shape[p] for p in positions], dtype=np.int64))
    return B.reshape(merged, [size] + [y.shape[d] for d in rest]), rest


def _linear(advanced, sizes: list[int], shape: tuple[int, ...]) -> Node:
    """i0 * (n1 * n2 ...) + i1 * (n2 ...) + ...: one index into the merged axis."""
    linear = None
    for (_, index, _), stride in zip(advanced, np.cumprod([1] + sizes[:0:-1])[::-1].tolist()):
        term = broadcast_to(index, shape)
        if stride != 1:
            term = B.binary(Op.MUL, term, B.broadcast(scalar(stride, np.int64), shape))
        linear = term if linear is None else B.binary(Op.ADD, linear, term)
    return linear


def _placement(positions: list[int], k: int, ndim: int) -> list[int] | None:
    """The permutation taking (index dims, rest) to NumPy's order (None: already there)."""
    first = positions[0]
    adjacent = positions == list(range(first, first + len(positions)))
    if not adjacent or first == 0:
        return None                                  # NumPy puts the index dims first
    return list(range(k, k + first)) + list(range(k)) + list(range(k + first, ndim))


def _advanced(y: Node, advanced) -> Node:
    if len(advanced) == 1:
        (position, index, _), = advanced
        return B.gather(y, index, position)
    positions = [p for p, _, _ in advanced]
    shape = broadcast_shapes(*(i.shape for _, i, _ in advanced))
    merged, _ = _merge(y, positions)
    out = B.gather(merged, _linear(advanced, [y.shape[p] for p in positions], shape), 0)
    perm = _placement(positions, len(shape), out.ndim)
    return out if perm is None else B.transpose(out, perm)


def _provably_unique(advanced, shape) -> bool:
    """Linear indices are mixed-radix numbers: one distinct concrete digit makes all distinct.
    A single index (`A[i] = row` with a traced scalar i) cannot repeat."""
    if int(np.prod(shape, dtype=np.int64)) <= 1:
        return True
    for _, _, known in advanced:
        if known is not None:
            digits = np.broadcast_to(known, shape).reshape(-1)
            if np.unique(digits).size == digits.size:
                return True
    return False


def _last_writes(advanced, sizes: list[int], shape) -> tuple[np.ndarray, np.ndarray] | None:
    """For concrete indices: (positions of each target's last write in the flattened index
    shape, those targets), NumPy's last-write-wins order; None if an index is traced."""
    if any(known is None for _, _, known in advanced):
        return None
    linear = np.zeros(shape, np.int64)
    for (_, _, known), stride in zip(advanced, np.cumprod([1] + sizes[:0:-1])[::-1].tolist()):
        linear = linear + np.broadcast_to(known, shape).astype(np.int64) * stride
    linear = linear.reshape(-1)
    _, first_from_end = np.unique(linear[::-1], return_index=True)
    keep = np.sort(linear.size - 1 - first_from_end)
    return keep.astype(np.int64), linear[keep]


def _advanced_update(x: Node, plan: _Plan, value) -> Node | None:
    """x[i0, :, i1] = v with integer-array indices and full slices.

    A scalar v is a scatter of it (the same value whichever write lands last); an array v with
    provably distinct indices, or concrete ones (then only the last write to each target is
    scattered), is a sum; with traced indices that may repeat, a `scatter` assigns in index
    order (NumPy's last write wins).  None: can't.
    """
    full = all(spec == (0, n, 1) for spec, n in zip(plan.specs, x.shape))
    if plan.reverse or not full or tuple(plan.out_shape) != x.shape:
        return None
    positions = [p for p, _, _ in plan.advanced]
    shape = broadcast_shapes(*(i.shape for _, i, _ in plan.advanced))
    merged, rest = _merge(x, positions)
    written = linear = _linear(plan.advanced, [x.shape[p] for p in positions], shape)
    v = to_node(value, x.dtype)
    last = None if v.ndim == 0 or _provably_unique(plan.advanced, shape) else \
        _last_writes(plan.advanced, [x.shape[p] for p in positions], shape)
    if v.ndim == 0:            # every write the same value: a scatter in any order, no
        # count of hits over all of x (put_along_axis of 3 per row into 1000x100: 0.094 ms
        # with the count, NumPy 0.045); in place where x is an argument (buffers.py)
        updates = B.broadcast(v, tuple(shape) + tuple(merged.shape[1:]))
        return _restore(B.scatter(merged, linear, updates, 0), x, positions, rest)
    k, rest_shape = len(shape), [x.shape[d] for d in rest]
    perm = _placement(positions, k, k + len(rest))
    target = shape + tuple(rest_shape)
    if perm is not None:
        target = tuple(target[p] for p in perm)
    while v.ndim > len(target) and v.shape[0] == 1:
        v = B.reshape(v, v.shape[1:])
    v = broadcast_to(v, target)
    if perm is not None:
        v = B.transpose(v, list(np.argsort(perm)))
    if last is None and not _provably_unique(plan.advanced, shape):
        return _restore(B.scatter(merged, linear, v, 0), x, positions, rest)
    if last is not None:             # repeated concrete indices: the last write wins
        keep, targets = last
        v = B.gather(B.reshape(v, (int(np.prod(shape, dtype=np.int64)),) + tuple(rest_shape)),
                     constant_node(keep), 0)
        linear = constant_node(targets)
    zeros = B.broadcast(scalar(0, x.dtype), merged.shape)
    placed = B.scatter_add(zeros, linear, v, 0)
    ones = B.broadcast(scalar(1, np.int32), shape)
    hits = B.scatter_add(B.broadcast(scalar(0, np.int32), merged.shape[:1]), written, ones, 0)
    hit = B.binary(Op.GT, hits, B.broadcast(scalar(0, np.int32), hits.shape))
    return _restore(B.select(B.broadcast(hit, merged.shape, (0,)), placed, merged), x,
                    positions, rest)


def _restore(merged: Node, x: Node, positions: list[int], rest: list[int]) -> Node:
    """`_merge`'s inverse: the merged axis split back and every axis in x's order."""
    updated = B.reshape(merged, [x.shape[p] for p in positions] + [x.shape[d] for d in rest])
    return B.transpose(updated, list(np.argsort(positions + rest)))


def basic_read(x: Node, plan: _Plan) -> Node:
    """x[key] for a basic key (the read of an `IndexStep` view)."""
    return _basic(x, plan)


def _basic_key(shape: tuple[int, ...], key) -> tuple | None:
    """The key with Ellipsis expanded and ints normalized, or None if it is not basic."""
    entries = _normalize_key(shape, key)
    out = []
    for k in entries:
        if k is None or isinstance(k, slice):
            out.append(k)
        elif isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
            out.append(int(k))
        else:
            return None
    return tuple(out)


def _selection_mask(x: Tracer, key) -> Node | None:
    """The mask node when `key` is one traced boolean array over x's leading dims."""
    if isinstance(key, Tracer) and key.dtype == np.bool_ and key.ndim >= 1 and \
            key.shape == x.shape[:key.ndim]:
        return key.node
    return None


def lower_getitem(x: Tracer, key):
    plan = _plan(x.node, key)
    if plan.mask is not None:
        mask = _selection_mask(x, key)
        if mask is not None:                     # its shape waits until something needs it
            return MaskedSelection(x.node, mask)
        return unsupported(operator.getitem, (x, key), {}, "x[mask] (boolean mask)")
    if not plan.advanced:                  # basic indexing: a view, as in NumPy
        basic = _basic_key(x.shape, key)
        if basic is not None:
            view = x.view(IndexStep(basic, plan))
            return _numpy_scalar(view) if _selects_one_element(x.ndim, key) else view
    y = _basic(x.node, plan)
    if plan.advanced:
        y = _advanced(y, plan.advanced)
    return wrap(y)


def _selects_one_element(ndim: int, key) -> bool:
    """`x[i, j]` with an integer for every axis (or `z[()]` of a 0-d z): NumPy returns a
    scalar, a copy, where `x[i, ...]` or `x[i, None]` would be a 0-d view."""
    entries = key if isinstance(key, tuple) else (key,)
    return len(entries) == ndim and all(
        isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))
        for k in entries)


def _numpy_scalar(view: Tracer) -> Tracer:
    """The element's value now, as a new array that augmented assignment rebinds (`s =
    x[0]; s += 1` leaves x alone, as NumPy's scalar does)."""
    scalar = view.context.wrap(view.node)
    scalar.writeable = None
    return scalar


def _mask_among_basic(ndim: int, key) -> tuple[int, Any, tuple] | None:
    """(dims before the mask, the mask, basic entries after it) for a key with one boolean
    array and otherwise only full slices (or one Ellipsis) before it and basic entries after
    it: `x[mask]`, `x[mask, 1]`, `x[:, mask]`, `x[..., mask]`.  None for any other key."""
    entries = key if isinstance(key, tuple) else (key,)
    masks = [i for i, k in enumerate(entries) if _is_bool_array(k) and np.ndim(k) >= 1]
    if len(masks) != 1:
        return None
    p = masks[0]
    mask, before, after = entries[p], entries[:p], tuple(entries[p + 1:])
    if any(isinstance(k, (Tracer, np.ndarray, list)) for k in after):
        return None
    if before == (Ellipsis,) and not after:
        return ndim - np.ndim(mask), mask, ()
    if not all(isinstance(k, slice) and k == slice(None) for k in before):
        return None
    return len(before), mask, after


def _scalar_mask_update(x: Tracer, key, value) -> Node | None:
    """x[mask] = scalar, with a boolean mask over x's leading dims (or over the dims after
    leading full slices, `x[:, mask] = 0`): a select."""
    split = _mask_among_basic(x.ndim, key)
    if split is None or split[2] or np.ndim(value) != 0 or isinstance(value, (list, tuple)):
        return None
    lead, mask, _ = split
    mask = to_node(mask)
    if mask.shape != x.shape[lead:lead + mask.ndim]:
        raise IndexError(f"boolean index of shape {mask.shape} does not match the indexed "
                         f"array's shape {x.shape}")
    mask = B.broadcast(mask, x.shape, tuple(range(lead, lead + mask.ndim)))
    return B.select(mask, broadcast_to(to_node(value, x.dtype), x.shape), x.node)


def _masked_view_update(x: Tracer, key, value) -> bool:
    """`x[mask, 1] = scalar` as NumPy means it: `x[:, 1][mask] = scalar`, a masked write
    into a basic view of x (which reaches x).  False if the key is not of that form."""
    split = _mask_among_basic(x.ndim, key)
    if split is None or not split[2] or np.ndim(value) != 0 or \
            isinstance(value, (list, tuple)):
        return False
    lead, mask, after = split
    view = x[(slice(None),) * (lead + np.ndim(mask)) + after]
    view[(slice(None),) * lead + (mask,)] = value
    return True


def _scalar_arguments_read(x: Tracer, key) -> frozenset[int]:
    """The Python-scalar arguments that the traced entries of `key` depend on."""
    entries = list(key) if isinstance(key, tuple) else [key]
    found = frozenset()
    while entries:
        k = entries.pop()
        if isinstance(k, list):
            entries.extend(k)
        elif isinstance(k, Tracer):
            found |= x.context.scalar_leaves_read_by(k.node)
    return found


def lower_setitem(x: Tracer, key, value) -> None:
    if isinstance(value, MaskedSelection):
        mask = _selection_mask(x, key)
        if mask is not None and value.lazy and same_value(mask, value.mask) and \
                value.source.shape == x.shape:                     # y[m] = f(x[m])
            x.node = B.select(value.full_mask(x.shape), to_node(value.source, x.dtype),
                              x.node)
            return
        value = value.materialize("x[mask] as a value")
    masked = _scalar_mask_update(x, key, value)
    if masked is not None:
        x.node = masked
        return
    if _masked_view_update(x, key, value):
        return
    plan = _plan(x.node, key)
    if plan.advanced and plan.mask is None:
        updated = _advanced_update(x.node, plan, value)
        if updated is not None:
            x.node = updated
            return
    if plan.mask is not None or plan.advanced:
        needed = _scalar_arguments_read(x, key)
        if needed:                 # `A[i, 1:] = v`, i a Python int argument: retrace, i static
            raise StaticScalarsNeeded(needed)
        result = unsupported(index_update, (x, key, value), {},
                             "x[index_array] = v (item assignment through an index array)")
        x.node = to_node(result, x.dtype)
        return
    target = tuple(plan.out_shape)
    v = to_node(value, x.dtype)
    while v.ndim > len(target) and v.shape[0] == 1:
        v = B.reshape(v, v.shape[1:])               # NumPy drops leading 1s of the value
    v = broadcast_to(v, target)
    if 0 in plan.counts:
        return
    x.node = basic_update(x.node, plan, v)


def basic_update(x: Node, plan: _Plan, value: Node) -> Node:
    """x with x[key] = value for a basic key (`value` has the shape of x[key])."""
    v = B.reshape(value, plan.counts)
    if 0 in plan.counts:
        return x
    if all(spec == (0, n, 1) for spec, n in zip(plan.specs, x.shape)):
        return B.reverse(v, plan.reverse)
    config = [(a, n - (a + (c - 1) * s + 1), s - 1)     # in the frame of the reversed x
              for (a, _, s), c, n in zip(plan.specs, plan.counts, x.shape)]
    placed = B.reverse(B.pad(v, scalar(0, x.dtype), config), plan.reverse)
    inside = B.pad(B.broadcast(scalar(True, bool), v.shape), scalar(False, bool), config)
    return B.select(B.reverse(inside, plan.reverse), placed, x)


@implements(np.take)
def take(a, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        from . import unsupported_option
        raise unsupported_option("take", "out=", "assign the result instead")
    x = to_node(a)
    if axis is None:
        x, axis = B.reshape(x, (x.size,)), 0
    axis = normalize_axis(axis, x.ndim)
    n = x.shape[axis]
    if mode == "raise":
        index = _index_node(indices, n, axis)
    else:
        index = B.convert(to_node(indices), np.int64)
        limit = B.broadcast(scalar(n, np.int64), index.shape)
        if mode == "wrap":
            index = B.binary(Op.REM, index, limit)
        else:                                        # clip
            index = B.binary(Op.MIN, B.binary(Op.MAX, index, B.broadcast(
                scalar(0, np.int64), index.shape)), B.binary(Op.SUB, limit, B.broadcast(
                    scalar(1, np.int64), index.shape)))
    return wrap(B.gather(x, index, axis))


@implements(np.take_along_axis)
def take_along_axis(arr, indices, axis=-1):
    x = to_node(arr)
    if axis is None:
        x, axis = B.reshape(x, (x.size,)), 0
    axis = normalize_axis(axis, x.ndim)
    index_shape = tuple(shape_of(indices))
    if len(index_shape) != x.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    shape = list(broadcast_shapes(tuple(1 if d == axis else n for d, n in enumerate(x.shape)),
                                  tuple(1 if d == axis else n for d, n in
                                        enumerate(index_shape))))
    shape[axis] = index_shape[axis]
    source = list(shape)
    source[axis] = x.shape[axis]
    x = broadcast_to(x, source)
    index = broadcast_to(_index_node(indices, x.shape[axis], axis), shape)
    strides = np.cumprod([1] + source[:0:-1])[::-1].tolist()
    linear = None
    for d, stride in enumerate(strides):
        coord = index if d == axis else B.iota(shape, np.int64, d)
        if stride != 1:
            coord = B.binary(Op.MUL, coord, B.broadcast(scalar(stride, np.int64), tuple(shape)))
        linear = coord if linear is None else B.binary(Op.ADD, linear, coord)
    return wrap(B.gather(B.reshape(x, (x.size,)), linear, 0))


@implements(np.put_along_axis)
def put_along_axis(arr, indices, values, axis):
    """NumPy's own construction: `arr[index arrays] = values`, `indices` along `axis` and
    aranges along the other axes (a write into `arr`, repeated indices as NumPy's)."""
    if not isinstance(arr, Tracer) or axis is None:
        return unsupported(np.put_along_axis, (arr, indices, values), {"axis": axis},
                           "np.put_along_axis" + ("(axis=None)" if axis is None else ""))
    axis = normalize_axis(axis, arr.ndim)
    if len(shape_of(indices)) != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    if np.dtype(dtype_of(indices)).kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    index = tuple(indices if d == axis else
                  np.arange(n).reshape((1,) * d + (-1,) + (1,) * (arr.ndim - d - 1))
                  for d, n in enumerate(arr.shape))
    arr[index] = values


@implements(np.put)
def put(a, ind, v, mode="raise"):
    """`a.flat[ind] = v` in a's C order, `v` repeated as NumPy repeats it to the indices'
    count; mode 'raise' (NumPy's IndexError from the index check), 'wrap' or 'clip'."""
    if not isinstance(a, Tracer):
        return unsupported(np.put, (a, ind, v), {"mode": mode}, "np.put into an array "
                           "that is not traced")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    index = np.ravel(ind if isinstance(ind, Tracer) else np.asarray(ind))
    values = np.ravel(v if isinstance(v, Tracer) else np.asarray(v))
    if index.size == 0 or values.size == 0:
        return
    if mode == "wrap":
        index = np.mod(index, a.size)
    elif mode == "clip":
        index = np.clip(index, 0, a.size - 1)
    if values.size < index.size:
        values = np.tile(values, -(-index.size // values.size))
    flat = np.ravel(a).copy()
    flat[index] = values[:index.size]
    a[...] = flat.reshape(a.shape)


@implements(np.ix_)
def ix_(*args):
    """The open mesh: each 1-D index sequence reshaped along its own axis (integer ones;
    a traced boolean sequence would index through its nonzero positions, a shape that
    depends on the values)."""
    from .library import refuse_data_dependent
    mesh = []
    for k, seq in enumerate(args):
        seq = seq if isinstance(seq, Tracer) else np.asarray(seq)
        if isinstance(seq, Tracer) and seq.dtype == np.bool_:
            return refuse_data_dependent(np.ix_, args, {}, "np.ix_ of a boolean mask")
        if seq.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if not isinstance(seq, Tracer):
            seq = np.nonzero(seq)[0] if seq.dtype == np.bool_ else \
                seq.astype(np.intp) if seq.size == 0 else seq
        mesh.append(seq.reshape((1,) * k + (seq.size,) + (1,) * (len(args) - k - 1)))
    return tuple(mesh)


@implements(np.diag_indices_from)
def diag_indices_from(arr):
    """Index arrays that depend only on the shape: concrete, as NumPy gives them."""
    shape = shape_of(arr)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return np.diag_indices(shape[0], len(shape))


@implements(np.tril_indices_from)
def tril_indices_from(arr, k=0):
    shape = shape_of(arr)
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return np.tril_indices(shape[-2], k=k, m=shape[-1])


@implements(np.triu_indices_from)
def triu_indices_from(arr, k=0):
    shape = shape_of(arr)
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return np.triu_indices(shape[-2], k=k, m=shape[-1])
