"""Tracing unmodified NumPy code: the `Tracer`, its `TraceContext`, and `trace()`.

A `Tracer` stands in for an array while a function runs: it has a shape and a dtype but no
values, and every NumPy operation on it (operators, ufuncs through NEP 13 `__array_ufunc__`,
functions through NEP 18 `__array_function__`, methods, indexing) appends IR nodes instead of
computing.  The lowering rules live in `xlanb.tracing.lowering`; this module only routes.

A `TraceContext` owns the graph's parameters.  Its two hooks, `materialize` (a traced value
is needed as a concrete one: `if`, `int()`, `np.asarray`) and `call_unsupported` (no rule, or
the output shape depends on values), raise by default; auto-clustering overrides them to
run that part eagerly and carry on with `new_input(value)`.

Tracers have value semantics, with one exception kept for NumPy fidelity: in-place updates
(`a += b`, `a[i] = v`) rebind the tracer's node, so every name bound to that Python object
sees the update.  Views do not alias: `b = a[0]; b[...] = 1` leaves `a` unchanged, and an
update to an argument is not written back to the caller's array (compiled code is pure).
"""
from __future__ import annotations

import contextvars
import dataclasses
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from xlanb_runtime.ir import Graph, Node, builder, type_str

from ..errors import CompileError, ConcretizationError, TracerLeakError
from ..pytree import PyTreeDef, tree_flatten, tree_unflatten
from .source import entry, user_location

_ACTIVE: contextvars.ContextVar["TraceContext | None"] = contextvars.ContextVar(
    "xlanb_trace_context", default=None)


def current_context() -> "TraceContext | None":
    return _ACTIVE.get()


_CONCRETIZE_HINT = ("Use `np.where(cond, a, b)` for a value-dependent choice, pass the value "
                    "as a static argument (`xlanb.jit(f, static_argnums=...)`), or run this "
                    "part with NumPy: `xlanb.jit(f, must_compile=False)`")


_CONCRETE_USES = [
    ("bool()", "was used as a Python bool (`if`, `while`, `and`/`or`, `assert`)"),
    ("operator.index()", "was used as a Python int (a size, a slice bound, `range()`)"),
    ("np.asarray()", "was converted to a NumPy array (np.asarray/np.array, or code outside "
     "NumPy's dispatch; use np.stack for lists of arrays)"),
    ("x.", "was converted to Python values"),
    ("", "was converted to a Python number"),
]


class TraceContext:
    """One trace: its parameters (`params`, `input_values`) and the user-overridable hooks."""

    def __init__(self, name: str = "main"):
        self.name = name
        self.params: list[Node] = []
        self.input_values: list[np.ndarray | None] = []
        self._tracers: list[weakref.ref] = []
        self.active = True

    # -- building ----------------------------------------------------------------------------
    def new_param(self, shape: Sequence[int], dtype, value: np.ndarray | None = None) -> "Tracer":
        """Append a PARAMETER node; `value` (if known) is recorded in `input_values`."""
        with builder.location(None):
            node = builder.parameter(len(self.params), shape, dtype)
        self.params.append(node)
        self.input_values.append(value)
        return self.wrap(node)

    def new_input(self, value) -> "Tracer":
        """A concrete array becomes a new parameter (auto-clustering resumes from here)."""
        value = np.asarray(value)
        return self.new_param(value.shape, value.dtype, value)

    def wrap(self, node: Node) -> "Tracer":
        tracer = Tracer(node, self)
        self._tracers.append(weakref.ref(tracer))
        return tracer

    def live_tracers(self) -> list["Tracer"]:
        """Tracers of this trace still referenced somewhere (to rebind after a cluster break)."""
        alive = [t for t in (ref() for ref in self._tracers) if t is not None]
        self._tracers = [weakref.ref(t) for t in alive]
        return alive

    # -- hooks ---------------------------------------------------------------------------------
    def materialize(self, tracer: "Tracer", what: str) -> np.ndarray:
        """The concrete value of `tracer`, needed by `what` ("bool()", "int()", "np.asarray()").

        Default: raise ConcretizationError.  Auto-clustering overrides this to run the graph
        so far and return the value.
        """
        use = next((text for prefix, text in _CONCRETE_USES if what.startswith(prefix)),
                   "was needed as a concrete value")
        raise ConcretizationError(
            f"a traced value ({type_str(tracer.dtype, tracer.shape)}) {use}, but while "
            "compiling it has a shape and dtype and no value",
            op_name=what, location=user_location(), hint=_CONCRETIZE_HINT)

    def call_unsupported(self, func: Callable, args: tuple, kwargs: dict, what: str) -> Any:
        """`func(*args, **kwargs)` has no compiled lowering (`what` names it: `np.unique`).

        Default: raise DataDependentShapeError for functions whose output shape depends on
        values, else UnsupportedNumPyFunctionError.  Auto-clustering overrides this to
        materialize the tracers in `args`/`kwargs` and call `func` eagerly.
        """
        from .lowering import unsupported_error
        raise unsupported_error(func, args, what)


class Tracer:
    """An array under tracing: `node` (shape, dtype) in `context`'s graph."""

    __slots__ = ("node", "context", "__weakref__")
    __hash__ = None                      # like ndarray: mutable, compared elementwise

    def __init__(self, node: Node, context: TraceContext):
        self.node = node
        self.context = context

    # -- NEP 13 / NEP 18 -------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return lowering.dispatch_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return lowering.dispatch_function(func, types, args, kwargs)

    # -- abstract value ------------------------------------------------------------------------
    shape = property(lambda self: self.node.shape)
    dtype = property(lambda self: self.node.dtype)
    ndim = property(lambda self: self.node.ndim)
    size = property(lambda self: self.node.size)
    itemsize = property(lambda self: self.node.dtype.itemsize)
    nbytes = property(lambda self: self.node.nbytes)
    T = property(lambda self: np.transpose(self))
    mT = property(lambda self: np.swapaxes(self, -1, -2))
    real = property(lambda self: self if self.dtype.kind != "c" else
                    _unsupported_attribute(self, "real"))

    def __repr__(self) -> str:
        return f"Tracer<{type_str(self.dtype, self.shape)}>"

    __str__ = __repr__

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d traced array)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __copy__(self) -> "Tracer":
        return self.context.wrap(self.node)

    def __deepcopy__(self, memo) -> "Tracer":
        return self.context.wrap(self.node)

    # -- concretization: routed through the context's hook --------------------------------------
    def _concrete(self, what: str) -> np.ndarray:
        with entry(what):
            return np.asarray(self.context.materialize(self, what))

    def _concrete_scalar(self, what: str) -> np.ndarray:
        if self.size != 1:
            raise TypeError(f"only length-1 arrays can be converted to Python scalars "
                            f"(`{what}` on a traced array of shape {self.shape})")
        return self._concrete(what)

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(f"The truth value of an array with more than one element is "
                             f"ambiguous (shape {self.shape}). Use a.any() or a.all()")
        return bool(self._concrete("bool()"))

    def __int__(self) -> int:
        return int(self._concrete_scalar("int()").reshape(()))

    def __float__(self) -> float:
        return float(self._concrete_scalar("float()").reshape(()))

    def __complex__(self) -> complex:
        return complex(self._concrete_scalar("complex()").reshape(()))

    def __index__(self) -> int:
        if self.shape != () or self.dtype.kind not in "iu":
            raise TypeError(f"only integer scalar arrays can be converted to a scalar index "
                            f"(got a traced {type_str(self.dtype, self.shape)})")
        return int(self._concrete("operator.index()"))

    def __array__(self, dtype=None, copy=None):
        value = self._concrete("np.asarray()")
        return value.astype(dtype) if dtype is not None else value

    def item(self, *args):
        return self._concrete("x.item()").item(*args)

    def tolist(self):
        return self._concrete("x.tolist()").tolist()

    # -- indexing ------------------------------------------------------------------------------
    def __getitem__(self, key):
        return lowering.getitem(self, key)

    def __setitem__(self, key, value) -> None:
        lowering.setitem(self, key, value)

    def __contains__(self, value) -> bool:
        return bool(np.any(self == value))

    def __getattr__(self, name: str):
        if name.startswith("_") or not hasattr(np.ndarray, name):
            raise AttributeError(f"'Tracer' object has no attribute {name!r}")
        return lowering.ndarray_fallback(self, name)


def _unsupported_attribute(tracer: Tracer, name: str):
    return lowering.ndarray_fallback(tracer, name)


def _static_indices(static_argnums, nargs: int) -> frozenset[int]:
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    out = set()
    for i in static_argnums:
        if not -nargs <= i < nargs:
            raise ValueError(f"static_argnums={tuple(static_argnums)} refers to argument {i}, "
                             f"but the function was called with {nargs} positional arguments")
        out.add(i % nargs)
    return frozenset(out)


def is_array_leaf(leaf: Any) -> bool:
    """Leaves that become graph parameters; other leaves (Python scalars, ...) are static."""
    return isinstance(leaf, (np.ndarray, np.generic, Tracer))


def flatten_args(args: tuple, kwargs: dict | None = None, static_argnums=()
                 ) -> tuple[list[Any], PyTreeDef, tuple[Any, ...]]:
    """(leaves of the non-static args and kwargs, their treedef, the static args in order).

    The leaves that `is_array_leaf` accepts are the graph's parameters, in this order.
    """
    static = _static_indices(static_argnums, len(args))
    dynamic = tuple(a for i, a in enumerate(args) if i not in static)
    leaves, in_tree = tree_flatten((dynamic, dict(kwargs or {})))
    return leaves, in_tree, tuple(args[i] for i in sorted(static))


@dataclasses.dataclass
class Traced:
    """The result of `trace`: the graph plus what is needed to call it and rebuild results.

    graph.params[i] is the i-th array leaf of `flatten_args(args, kwargs, static_argnums)`
    (positions in `param_leaves`); graph.outputs are the output leaves in `out_tree` order.
    `const_outputs` maps output index -> the plain value the function returned there (it is
    also a constant node of the graph).
    """
    graph: Graph
    in_tree: PyTreeDef
    out_tree: PyTreeDef
    param_leaves: tuple[int, ...]
    static_args: tuple[Any, ...]
    const_outputs: dict[int, Any]

    def unflatten_outputs(self, values: Sequence[Any]) -> Any:
        return tree_unflatten(self.out_tree, values)


def _output_node(context: TraceContext, leaf: Any, index: int) -> Node:
    if isinstance(leaf, Tracer):
        if leaf.context is not context:
            raise TracerLeakError(f"output {index} is a traced value from another trace",
                                  hint="return values computed inside this function")
        return leaf.node
    if isinstance(leaf, (np.ndarray, np.generic, bool, int, float, complex)):
        return builder.constant(np.asarray(leaf))
    raise CompileError(f"output {index} is a {type(leaf).__name__}, which is not an array; "
                       "a compiled function returns arrays, Python scalars or containers "
                       "(tuple, list, dict, namedtuple, None) of them",
                       hint="return it from a wrapper outside the compiled function")


def trace(fn: Callable, args: tuple, kwargs: dict | None = None, static_argnums=(),
          name: str | None = None, context: TraceContext | None = None) -> Traced:
    """Run `fn(*args, **kwargs)` on Tracers and record what it does as an IR Graph.

    Array leaves (ndarray, NumPy scalars) of the non-static arguments become parameters;
    Python scalars and other leaves are passed through unchanged (static: baked into the
    graph); arguments at `static_argnums` are passed through untouched.  Pass `context` to
    use a TraceContext subclass (auto-clustering).
    """
    name = name or getattr(fn, "__name__", "main")
    context = context if context is not None else TraceContext(name)
    leaves, in_tree, static_args = flatten_args(tuple(args), kwargs, static_argnums)
    static = _static_indices(static_argnums, len(args))
    token = _ACTIVE.set(context)
    try:
        traced_leaves, param_leaves = [], []
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, Tracer):
                traced_leaves.append(context.new_param(leaf.shape, leaf.dtype))
            elif is_array_leaf(leaf):
                traced_leaves.append(context.new_input(leaf))
            else:
                traced_leaves.append(leaf)
                continue
            param_leaves.append(i)
        dynamic, traced_kwargs = tree_unflatten(in_tree, traced_leaves)
        dynamic = iter(dynamic)
        call_args = [a if i in static else next(dynamic) for i, a in enumerate(args)]
        result = fn(*call_args, **traced_kwargs)
        out_leaves, out_tree = tree_flatten(result)
        outputs, consts = [], {}
        for i, leaf in enumerate(out_leaves):
            outputs.append(_output_node(context, leaf, i))
            if not isinstance(leaf, Tracer):
                consts[i] = leaf
    finally:
        _ACTIVE.reset(token)
        context.active = False
    graph = Graph(list(context.params), outputs, name)
    return Traced(graph, in_tree, out_tree, tuple(param_leaves), static_args, consts)


from . import lowering  # noqa: E402  (the rules import Tracer from this module)
