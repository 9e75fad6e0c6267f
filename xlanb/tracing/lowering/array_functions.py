"""More NumPy array functions, as NumPy writes them on top of lowered ones (they fuse):
insert (static indices), block, choose (and `x.choose`), ravel_multi_index,
rollaxis, unstack, polyval, fix, gradient, and the generalized ufuncs
matvec / vecmat / vecdot (contractions: fused `dot` kernels).  np.lexsort and
np.sort_complex run as library calls (NumPy's sort), np.i0 too (NumPy's Chebyshev series).
np.real_if_close has a dtype that depends on the values (a named error under `jit`).

Static index arguments (insert's `obj`, a shape) are resolved when tracing by NumPy itself
run on index arrays, so NumPy's rules (negative indices, broadcasting of `values`, the
order of equal insertion points) hold by construction.
"""
from __future__ import annotations

import operator

import numpy as np

from ..tracer import Tracer
from . import implements, unsupported
from .library import call, data_dependent, implements_library, node_of
from .promote import normalize_axis, wrap

data_dependent(np.real_if_close, "the result is real or complex depending on the values")


def _traced(x):
    return x if isinstance(x, Tracer) else wrap(node_of(x))


@implements(np.insert)
def insert(arr, obj, values, axis=None):
    """NumPy's np.insert run on position codes (>= 0: an element of arr, < 0: one of
    values), then a gather of each: the result's layout is NumPy's by construction."""
    if isinstance(obj, Tracer):
        return unsupported(np.insert, (arr, obj, values), {"axis": axis},
                           "np.insert(traced obj)")
    arr = _traced(arr)
    if axis is None:
        arr, axis = np.ravel(arr), 0
    values = _traced(values).astype(arr.dtype)
    arr_codes = np.arange(arr.size).reshape(arr.shape)
    value_codes = -1 - np.arange(values.size).reshape(values.shape)
    codes = np.insert(arr_codes, obj, value_codes, axis=axis)    # NumPy's own rules
    from_arr = np.take(np.ravel(arr), np.maximum(codes, 0))
    from_values = np.take(np.ravel(values), np.maximum(-1 - codes, 0)) if values.size \
        else from_arr
    return np.where(codes >= 0, from_arr, from_values)


@implements(np.block)
def block(arrays):
    """Nested lists concatenated from the innermost level out, as NumPy's `_block`."""
    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else (0 if not isinstance(
            x, list) else 1)

    levels = depth(arrays)
    if levels == 0:
        return _traced(arrays)

    def ndim_of(x):
        return max(ndim_of(v) for v in x) if isinstance(x, list) else np.ndim(x)

    result_ndim = max(ndim_of(arrays), levels)

    def assemble(x, level):
        if not isinstance(x, list):
            value = _traced(x)
            return np.reshape(value, (1,) * (result_ndim - value.ndim) + value.shape)
        parts = [assemble(v, level + 1) for v in x]
        return np.concatenate(parts, axis=-(levels - level))
    return assemble(arrays, 0)


@implements(np.choose)
def choose(a, choices, out=None, mode="raise"):
    """select(a == k, choices[k]) for static choices; mode 'wrap'/'clip' map a first.
    mode='raise' (the default) raises NumPy's ValueError for an index out of range from
    a run-time check the program keeps live (`xlanb.check_choice`)."""
    index = _traced(a)
    choices = [c for c in choices]
    n = len(choices)
    if mode == "raise":
        from .promote import to_node
        index.context.checks.append(to_node(call("xlanb.check_choice", [index.node],
                                                 choices=n)))
    elif mode == "wrap":
        index = np.mod(index, n)
    elif mode == "clip":
        index = np.clip(index, 0, n - 1)
    else:
        raise ValueError(f"clipmode not understood: {mode!r}")
    result = choices[-1]
    for k in range(n - 2, -1, -1):
        result = np.where(index == k, choices[k], result)
    from .promote import result_type
    result = _traced(result).astype(result_type(*choices))
    if out is not None:
        from .inplace import assign, destination
        return assign(destination(out, "np.choose"), result, "unsafe")
    return np.broadcast_to(result, np.broadcast_shapes(
        index.shape, *(np.shape(c) for c in choices)))


def _choose_method(x, choices, out=None, mode="raise"):
    return choose(x, choices, out, mode)


@implements(np.ravel_multi_index)
def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Coordinates to flat indices; mode 'raise' (the default) raises NumPy's ValueError
    for a coordinate outside its dim from a run-time check (`check_within`)."""
    from .library import check_within
    from .promote import to_node
    dims = tuple(operator.index(d) for d in dims)
    modes = mode if isinstance(mode, (tuple, list)) else (mode,) * len(dims)
    coords = []
    for value, dim, how in zip(multi_index, dims, modes):
        value = _traced(value).astype(np.intp)
        if how == "raise":
            check_within(to_node(value), 0, dim - 1, "ValueError",
                         "invalid entry in coordinates array")
            coords.append(value)
        elif how in ("wrap", "clip"):
            coords.append(np.mod(value, dim) if how == "wrap" else
                          np.clip(value, 0, dim - 1))
        else:
            raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' "
                             f"(got {how!r})")
    order_dims = list(range(len(dims))) if order == "C" else list(range(len(dims)))[::-1]
    total, stride = 0, 1
    for k in order_dims[::-1]:
        total = total + coords[k] * stride
        stride *= dims[k]
    return _traced(total).astype(np.intp)


@implements(np.unravel_index)
def unravel_index(indices, shape, order="C"):
    """Flat indices to a tuple of coordinate arrays (np.intp), NumPy's ValueError for an
    index outside [0, size) from a run-time check (`check_within`; none for an argmax)."""
    from .library import check_within
    from .promote import to_node
    shape = (operator.index(shape),) if np.ndim(shape) == 0 else \
        tuple(operator.index(d) for d in shape)
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    index = _traced(indices)
    if index.dtype.kind not in "iu":
        raise TypeError("only int indices permitted")
    index = index.astype(np.intp)
    size = int(np.prod(shape, dtype=np.int64))
    check_within(to_node(index), 0, size - 1, "ValueError",
                 f"index {{value}} is out of bounds for array with size {size}")
    coords, stride = [None] * len(shape), 1
    for k in (range(len(shape))[::-1] if order == "C" else range(len(shape))):
        coords[k] = index // stride % shape[k] if stride > 1 else index % shape[k]
        stride *= shape[k]
    return tuple(coords)


@implements(np.rollaxis)
def rollaxis(a, axis, start=0):
    a = _traced(a)
    n = a.ndim
    axis = normalize_axis(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, "
                                      f"but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return a[...]
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return np.transpose(a, axes)


if hasattr(np, "unstack"):
    @implements(np.unstack)
    def unstack(x, /, *, axis=0):
        x = _traced(x)
        if x.ndim == 0:
            raise ValueError("Input array must be at least 1-d.")
        return tuple(np.moveaxis(x, axis, 0))


@implements(np.polyval)
def polyval(p, x):
    """Horner's rule, as NumPy: y = 0; y = y * x + c for each coefficient."""
    p = _traced(p)
    x = _traced(x)
    y = np.zeros_like(x)
    for k in range(p.shape[0]):
        y = y * x + p[k]
    return y


@implements(np.fix)
def fix(x, out=None):
    return np.trunc(x, out=out)


@implements_library(np.lexsort)
def lexsort(keys, axis=-1):
    if isinstance(keys, Tracer):
        # NumPy iterates the array: a 1-D one is that many 0-d keys
        keys = [keys[k] for k in range(keys.shape[0])] if keys.ndim >= 1 else []
    keys = list(keys)
    if not keys:
        raise TypeError("need sequence of keys with len(keys) > 0 in lexsort")
    return call("np.lexsort", [np.stack([_traced(k) for k in keys])],
                axis=operator.index(axis))


@implements_library(np.sort_complex)
def sort_complex(a):
    return call("np.sort_complex", [a])


@implements_library(np.i0)
def i0(x):
    return call("np.i0", [x])


@implements(np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1):
    """Uniform spacing (scalars or none) only: NumPy's central differences inside and
    first- or second-order one-sided differences at the edges, with NumPy's formulas."""
    f = _traced(f)
    axes = tuple(range(f.ndim)) if axis is None else tuple(
        normalize_axis(a, f.ndim) for a in (axis if np.iterable(axis) else (axis,)))
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes) and all(np.ndim(v) == 0 for v in varargs):
        spacing = list(varargs)
    else:
        return unsupported(np.gradient, (f, *varargs), {"axis": axis,
                                                        "edge_order": edge_order},
                           "np.gradient(coordinates)")
    if any(isinstance(h, Tracer) for h in spacing) or edge_order not in (1, 2):
        return unsupported(np.gradient, (f, *varargs), {"axis": axis,
                                                        "edge_order": edge_order},
                           "np.gradient")
    otype = f.dtype if f.dtype.kind in "fc" else np.dtype(np.float64)    # ints: float64
    f = f.astype(otype)
    outs = []
    for ax, h in zip(axes, spacing):
        n = f.shape[ax]
        if n < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")

        def part(lo, hi):
            index = [slice(None)] * f.ndim
            index[ax] = slice(lo, hi)
            return f[tuple(index)]
        interior = (part(2, None) - part(None, -2)) / (2.0 * h)
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / h
            last = (part(-1, None) - part(-2, -1)) / h
        else:                                  # NumPy's coefficients, in its order
            first = (-1.5 / h) * part(0, 1) + (2.0 / h) * part(1, 2) + (-0.5 / h) * part(2, 3)
            last = (0.5 / h) * part(-3, -2) + (-2.0 / h) * part(-2, -1) + \
                (1.5 / h) * part(-1, None)
        outs.append(np.concatenate([first, interior, last], axis=ax).astype(otype))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _attach_methods() -> None:
    from ..methods import _method
    setattr(Tracer, "choose", _method("choose", _choose_method))
    setattr(Tracer, "compress", _method("compress", lambda x, condition, axis=None,
                                        out=None: np.compress(condition, x, axis, out)))


_attach_methods()


# -- generalized ufuncs (core dimensions): contractions ----------------------------------------

def _vecdot(x1, x2):
    from .promote import result_type
    dtype = result_type(x1, x2)
    return np.sum(np.conj(x1) * x2 if dtype.kind == "c" else np.multiply(x1, x2), axis=-1,
                  dtype=dtype)


GUFUNCS = {
    getattr(np, "matvec", None): lambda a, v: np.matmul(a, _traced(v)[..., None])[..., 0],
    getattr(np, "vecmat", None): lambda v, a: np.matmul(np.conj(_traced(v))[..., None, :],
                                                        a)[..., 0, :],
    getattr(np, "vecdot", None): _vecdot,
}
GUFUNCS.pop(None, None)


# -- dtype queries: answered from the traced values' dtypes, never their values -------------

def _dtype_stand_in(x):
    """What NumPy's dtype rules see of `x`: a traced Python scalar stays a (weak) Python
    scalar, a traced array is its dtype."""
    if isinstance(x, Tracer):
        return x.weak_type(0) if x.weak_type is not None else x.dtype
    return x


@implements(np.result_type)
def result_type(*arrays_and_dtypes):
    return np.result_type(*(_dtype_stand_in(x) for x in arrays_and_dtypes))


@implements(np.can_cast)
def can_cast(from_, to, casting="safe"):
    return np.can_cast(_dtype_stand_in(from_), to, casting)


@implements(np.min_scalar_type)
def min_scalar_type(a):
    """An array's own dtype; a 0-d value's type depends on the value (NumPy's rule)."""
    if isinstance(a, Tracer) and a.ndim == 0:
        return unsupported(np.min_scalar_type, (a,), {}, "np.min_scalar_type(0-d value)")
    return a.dtype if isinstance(a, Tracer) else np.min_scalar_type(a)


@implements(np.ndenumerate)
def ndenumerate(arr):
    """(index, value) pairs in C order, each value read when the loop reaches it (a write
    into `arr` inside the loop shows in later values, as NumPy's iterator) as a copy.
    np.ndenumerate skips NEP 18: tracing.capture routes a call from user code here."""
    arr = arr if isinstance(arr, Tracer) else wrap(node_of(arr))
    return ((index, arr[index].copy()) for index in np.ndindex(arr.shape))


def _in_memory_order(arr: Tracer):
    """`arr` permuted and flipped so that its C order is NumPy's order='K' (the order of
    the elements in memory: axes by decreasing stride, negative strides reversed); None
    where the layout is unknown or broadcast (a zero stride)."""
    strides = arr.elem_strides
    if strides is None or any(s == 0 and n > 1 for s, n in zip(strides, arr.shape)):
        return None
    axes = sorted(range(arr.ndim), key=lambda d: -abs(strides[d]))      # stable on ties
    view = np.transpose(arr, axes)
    flipped = tuple(i for i, d in enumerate(axes) if strides[d] < 0 and arr.shape[d] > 1)
    return np.flip(view, axis=flipped) if flipped else view


@implements(np.nditer)
def nditer(op, flags=None, op_flags=None, op_dtypes=None, order="K", casting="safe",
           op_axes=None, itershape=None, buffersize=0):
    """`for v in np.nditer(x)` over one traced array: each element as a 0-d copy, in
    NumPy's order ('C', or 'K': the order in memory, from the array's strides).  Several
    operands, flags, writes, casts and the other orders are a named error (NumPy under
    must_compile=False).  np.nditer skips NEP 18: tracing.capture routes it here."""
    options = {"flags": flags, "op_flags": op_flags, "op_dtypes": op_dtypes, "order": order,
               "casting": casting, "op_axes": op_axes, "itershape": itershape,
               "buffersize": buffersize}
    arr = op if isinstance(op, Tracer) else None
    plain = (arr is not None and not flags and not op_flags and op_dtypes is None
             and casting == "safe" and op_axes is None and itershape is None
             and order in ("C", "K"))
    ordered = arr if order == "C" else _in_memory_order(arr) if plain else None
    if not plain or ordered is None:
        return unsupported(np.nditer, (op,), options,
                           "np.nditer (several operands, flags, or an order other than "
                           "'C' or 'K')")
    return (ordered[index].copy() for index in np.ndindex(ordered.shape))
