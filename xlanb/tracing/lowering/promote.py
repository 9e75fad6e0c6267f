"""Operands for strict IR ops: NumPy 2 dtype promotion and broadcasting made explicit.

The IR's binary ops need equal shapes and dtypes, so every rule turns its NumPy operands
(Tracers, ndarrays, NumPy scalars, Python scalars, lists) into nodes here: constants for
concrete values, `convert` to the dtype NumPy would compute in, `broadcast` to the common
shape.  Python int/float/complex are *weak* (NEP 50): `float32_array * 2.0` stays float32.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from xlanb_runtime.ir import Node
from xlanb_runtime.ir import builder as B

from ...errors import DTypeError, ShapeMismatchError, TracerLeakError
from ..tracer import Tracer, current_context

WEAK_TYPES = (int, float, complex)
# NumPy's array type, read once: while traces run np.ndarray leaves NumPy's dict and each
# read goes through the module's __getattr__ (capture.py), hundreds of times a trace here
_OPERAND_TYPES = (Tracer, np.ndarray, np.generic, bool, int, float, complex, list, tuple)
_UNIFORM_CONSTANT_MIN = 16     # larger uniform arrays become scalar constant + broadcast


def is_weak(x: Any) -> bool:
    """A Python int/float/complex (not bool, not a NumPy scalar): promotes weakly."""
    return type(x) in WEAK_TYPES


def is_operand(x: Any) -> bool:
    """Something NumPy would turn into an array operand."""
    return isinstance(x, _OPERAND_TYPES)


def concrete(x: Any) -> np.ndarray:
    """A non-traced operand as an array (lists holding Tracers are stacked by the caller)."""
    return np.asarray(x)


def promotion_type(x: Any):
    """What `ufunc.resolve_dtypes` takes: a dtype, or the Python type of a weak scalar."""
    if isinstance(x, Tracer) and x.weak_type is not None:
        if x.weak_type is bool:          # Python bools are not weak in NEP 50: np.bool_
            return np.dtype(np.bool_)
        return x.weak_type               # a traced Python scalar argument
    if isinstance(x, (Tracer, Node)):
        return x.dtype
    if is_weak(x):
        return type(x)
    return concrete(x).dtype


def dtype_of(x: Any) -> np.dtype:
    return x.dtype if isinstance(x, (Tracer, Node)) else np.asarray(x).dtype


def shape_of(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, (Tracer, Node)) else np.shape(x)


def result_type(*xs: Any) -> np.dtype:
    """np.result_type with NEP 50 weak Python scalars."""
    values = [x if is_weak(x) or isinstance(x, bool) else
              x.weak_type(0) if isinstance(x, Tracer) and x.weak_type is not None else
              dtype_of(x) for x in xs]
    try:
        return np.result_type(*values)
    except TypeError as exc:
        from . import fail
        raise fail(DTypeError, f"no common dtype for {', '.join(map(str, values))}: {exc}")


def has_tracer(xs: Sequence[Any]) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def constant_node(value: np.ndarray) -> Node:
    value = np.asarray(value)
    if value.size >= _UNIFORM_CONSTANT_MIN:
        first = value.reshape(-1)[:1]
        if np.array_equal(value, np.broadcast_to(first.reshape(()), value.shape),
                          equal_nan=value.dtype.kind in "fc"):
            return B.broadcast(B.constant(first.reshape(())), value.shape)
    return B.constant(value)


def to_node(x: Any, dtype=None) -> Node:
    """Any operand as a node, converted to `dtype` when given (NumPy astype semantics)."""
    if isinstance(x, Node):
        return B.convert(x, dtype) if dtype is not None else x
    if isinstance(x, Tracer):
        context = current_context()
        if context is not None and x.context is not context:
            from . import fail
            raise fail(TracerLeakError, "a traced value from another (finished) trace was used",
                       hint="don't keep traced values in globals or closures across calls")
        node = x.node
        if dtype is not None and x.weak_type is int and _narrower_int(dtype):
            _needs_static(x)              # NumPy 2 raises when the int does not fit
        return B.convert(node, dtype) if dtype is not None else node
    if isinstance(x, (list, tuple)) and has_tracer(x):
        return to_node(np.stack(x), dtype)       # dispatches to the stack rule
    if is_weak(x) or isinstance(x, bool):
        if dtype is None:
            return B.constant(np.asarray(x))
        dtype = np.dtype(dtype)
        if dtype.kind in "iub" and isinstance(x, int) and not isinstance(x, bool):
            try:
                return B.constant(np.array(x, dtype=dtype))
            except OverflowError as exc:       # NumPy 2's error for `int8_array + 300`
                raise OverflowError(str(exc)) from None
        return B.constant(np.asarray(x).astype(dtype))
    value = concrete(x)
    if dtype is not None:
        value = value.astype(dtype)
    return constant_node(value)


def _narrower_int(dtype) -> bool:
    """An integer dtype that some Python ints (int64 when traced) do not fit."""
    dtype = np.dtype(dtype)
    return dtype.kind == "u" or (dtype.kind == "i" and dtype.itemsize < 8)


def _needs_static(x: Tracer) -> None:
    """A traced Python int meets a narrower integer array (`int8_array + k`): NumPy raises
    OverflowError when k does not fit, so trace again with k's value (static)."""
    from ..tracer import StaticScalarsNeeded
    leaves = x.context.scalar_leaves_read_by(x.node)
    if leaves:
        raise StaticScalarsNeeded(leaves)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """NumPy broadcasting; ShapeMismatchError names both shapes when they don't fit."""
    shapes = [tuple(s) for s in shapes]
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, n in enumerate(shape, start=ndim - len(shape)):
            if n == out[i] or n == 1:
                continue
            if out[i] == 1:
                out[i] = n
                continue
            from . import fail
            text = " and ".join(_fmt(s) for s in shapes)
            raise fail(ShapeMismatchError, f"operands could not be broadcast together: {text}")
    return tuple(out)


def _fmt(shape: tuple[int, ...]) -> str:
    return "(" + ",".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def broadcast_to(node: Node, shape: Sequence[int]) -> Node:
    shape = tuple(shape)
    if node.shape == shape:
        return node
    broadcast_shapes(node.shape, shape)
    if len(shape) < node.ndim or any(a not in (1, b) for a, b in
                                     zip(node.shape, shape[len(shape) - node.ndim:])):
        from . import fail
        raise fail(ShapeMismatchError, f"cannot broadcast shape {_fmt(node.shape)} to "
                   f"{_fmt(shape)}")
    return B.broadcast(node, shape)


def operands(xs: Sequence[Any], dtypes: Sequence[Any] | Any) -> tuple[list[Node], tuple]:
    """Nodes for `xs`, converted to `dtypes` (one per operand or shared) and broadcast."""
    if not isinstance(dtypes, (list, tuple)):
        dtypes = [dtypes] * len(xs)
    shape = broadcast_shapes(*(shape_of(x) for x in xs))
    nodes = [broadcast_to(to_node(x, d), shape) for x, d in zip(xs, dtypes)]
    return nodes, shape


def wrap(node: Node) -> Tracer:
    context = current_context()
    if context is None:
        from . import fail
        raise fail(TracerLeakError, "a traced value was used after its function finished "
                   "tracing", hint="return values from the compiled function instead of "
                   "keeping traced values in globals or closures")
    return context.wrap(node)


def scalar(value, dtype) -> Node:
    return B.constant(np.asarray(value).astype(dtype))


def full(value, shape: Sequence[int], dtype) -> Node:
    return B.broadcast(scalar(value, dtype), tuple(shape))


def normalize_axis(axis: int, ndim: int) -> int:
    return int(np.lib.array_utils.normalize_axis_index(int(axis), ndim))


def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """None -> all axes; int or tuple -> normalized tuple (AxisError like NumPy)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)) or isinstance(axis, Tracer):
        axis = (operator_index(axis),)
    try:
        return tuple(np.lib.array_utils.normalize_axis_tuple(tuple(axis), ndim))
    except (ValueError, IndexError) as exc:     # NumPy's AxisError, raised as xlanb's own
        raise exc.with_traceback(None) from None


def operator_index(x) -> int:
    import operator
    return operator.index(x)


_WEAK_BY_KIND = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def is_weakly_typed(x: Any) -> bool:
    """A Python scalar, or a traced one (a scalar argument, or arithmetic on them)."""
    return is_weak(x) or isinstance(x, bool) or (isinstance(x, Tracer) and
                                                  x.weak_type is not None)


def mark_weak(result: Any, inputs: Sequence[Any]) -> Any:
    """Arithmetic on weak scalars only stays weak (`alpha * beta` is a Python float)."""
    if isinstance(result, Tracer) and result.shape == () and inputs and \
            all(is_weakly_typed(x) for x in inputs):
        result.weak_type = _WEAK_BY_KIND.get(result.dtype.kind)
    return result
