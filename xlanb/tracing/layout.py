"""The memory layout NumPy gives a new array, recorded on its Tracer.

A compiled program has no layouts (its kernels write what they like), but NumPy code can
see one: whether `y.reshape(-1)` or `y.ravel()` is a view (a write through it reaching
`y`) or a copy, the order of `ravel('K')` and `np.nditer`, `y.strides`.  NumPy lays out
the result of a ufunc, `np.copy`, `astype` and `*_like` in the order of the input's memory
(order='K': `np.exp(a.T)` is F-contiguous), and that of `np.array(x, order=...)`,
`np.asfortranarray` and `x.copy(order=...)` as asked.  `with_order` records that layout in
the result's element strides (views.keep_order is NumPy's rule) as an exact layout that
`x.strides` and `x.flags` may show; other new arrays are taken as C order, which decides
view or copy, but `x.strides` and `x.flags` do not claim it.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .tracer import Tracer
from .views import (broadcast_strides, c_strides, concatenated_order, element_strides,
                    is_contiguous, keep_order, reshape_strides, strides_in_order)


def _operand_strides(shape: tuple, inputs: Sequence) -> list[tuple]:
    """The element strides of the array inputs, broadcast to `shape`."""
    found = []
    for x in inputs:
        if isinstance(x, Tracer):
            strides = x.elem_strides
        elif isinstance(x, np.ndarray):
            strides = element_strides(x)
        else:
            continue
        if strides is not None and x.ndim:
            found.append(broadcast_strides(shape, x.shape, strides))
    return found


def with_order(result, order: str | None, inputs: Sequence = (), shape=None):
    """`result`, a new array made from `inputs`, laid out as NumPy's `order` lays it out:
    'C', 'F', 'A' (F when the one input is F- and not C-contiguous) or 'K'/None (the
    inputs' memory order).  `shape`: the inputs' (broadcast) shape, where the result's
    differs (`np.zeros_like(a, shape=...)`)."""
    if not isinstance(result, Tracer) or result.root is not None or result.ndim < 2 or \
            any(result is x for x in inputs):
        return result
    c_order = tuple(range(result.ndim))
    operands = shape or result.shape
    strides = _operand_strides(operands, inputs)
    shape = result.shape
    if order == "A":
        order = "F" if len(strides) == 1 and is_contiguous(operands, strides[0], c_order[::-1]) \
            and not is_contiguous(operands, strides[0], c_order) else "C"
    if order == "F":
        axes = c_order[::-1]
    elif order in ("K", None) and strides:
        axes = keep_order(shape, strides)
    else:
        axes = c_order
    laid_out = strides_in_order(shape, axes)
    result._strides = laid_out          # explicit: an exact layout (stride_tricks.layout_known)
    return result


def with_concatenated_order(result, inputs: Sequence, shapes: Sequence | None = None):
    """`result`, np.concatenate's of `inputs` (np.stack's, hstack's...: each taken with
    `shapes`, where given, the shape NumPy concatenates it in: size-1 axes added), laid out
    as NumPy lays it out (views.concatenated_order): the inputs' memory order."""
    if not isinstance(result, Tracer) or result.ndim < 2:
        return result
    shapes = shapes or [np.shape(x) for x in inputs]
    strides = []
    for x, shape in zip(inputs, shapes):
        known = x.elem_strides if isinstance(x, Tracer) else \
            element_strides(x) if isinstance(x, np.ndarray) else c_strides(np.shape(x))
        known = reshape_strides(np.shape(x), known, shape)
        if known is None:           # a layout not known: C order, not claimed
            return result
        strides.append(known)
    result._strides = strides_in_order(result.shape, concatenated_order(shapes, strides))
    return result


def with_reduced_order(result, a, axes: Sequence[int], keepdims: bool, operands=()):
    """`result`, a ufunc reduction of `a` over `axes` (normalized), laid out as NumPy lays
    it out: the order its iterator walks `a` (and `operands`, a where= mask) in for
    order='K' (views.keep_order), less the reduced axes or with them as size-1 axes."""
    if not isinstance(result, Tracer) or result.ndim < 2 or result.root is not None:
        return result
    shape = np.shape(a)
    kept = [d for d in range(len(shape)) if d not in axes]
    expected = tuple(1 if d in axes else n for d, n in enumerate(shape)) if keepdims \
        else tuple(shape[d] for d in kept)
    strides = _operand_strides(shape, (a, *operands))
    if result.shape != expected or not strides:
        return result
    order = keep_order(shape, strides)
    if not keepdims:
        order = [kept.index(d) for d in order if d in kept]
    result._strides = strides_in_order(result.shape, order)
    return result


def has_order(x: Tracer, order: str | None) -> bool:
    """Whether `x` is already laid out as `order` asks ('C', 'F'; 'A', 'K', None: any)."""
    c_order = tuple(range(x.ndim))
    if order == "C":
        return is_contiguous(x.shape, x.elem_strides, c_order)
    if order == "F":
        return is_contiguous(x.shape, x.elem_strides, c_order[::-1])
    return True
