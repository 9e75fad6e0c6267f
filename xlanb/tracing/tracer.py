"""Tracing unmodified NumPy code: the `Tracer`, its `TraceContext`, and `trace()`.

A `Tracer` stands in for an array while a function runs: it has a shape and a dtype but no
values, and every NumPy operation on it (operators, ufuncs through NEP 13 `__array_ufunc__`,
functions through NEP 18 `__array_function__`, methods, indexing) appends IR nodes instead of
computing.  The lowering rules live in `xlanb.tracing.lowering`; this module only routes.

A `TraceContext` owns the graph's parameters.  Its two hooks, `materialize` (a traced value
is needed as a concrete one: `if`, `int()`, `np.asarray`) and `call_unsupported` (no rule, or
the output shape depends on values), raise by default; auto-clustering overrides them to
run that part eagerly and carry on with `new_input(value)`.

Tracers keep NumPy's reference semantics.  In-place updates (`a += b`, `a[i] = v`, ufunc
`out=`) change the Tracer object itself, so every name bound to it sees the update; views
(`b = a[0]`, `a.T`, `a.reshape(...)`) write through to their root (`views.py`).  The compiled
program stays pure: `trace()` records which arguments were written (`Traced.writebacks`) and
which outputs are arguments or views of them (`Traced.arg_outputs`), and the caller's arrays
are updated and returned as NumPy would (`boundary.py`).
"""
from __future__ import annotations

import operator

import contextvars
import dataclasses
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from xlanb_runtime.ir import Graph, Node, Op, builder, interpret, type_str
from xlanb_runtime.ir.graph import DTYPE_NAMES

from ..errors import (CompileError, ConcretizationError, TracerLeakError,
                      UnsupportedNumPyFunctionError)
from ..pytree import PyTreeDef, tree_flatten, tree_unflatten
from .source import entry, user_location
from .capture import capture_creation
from .views import c_strides, is_contiguous, keep_order, read_through, write_through
from .datetimes.boundary import is_time_leaf, split_outputs

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
    ("np.asarray()", "was converted to a NumPy array: written into an array that is not "
     "traced (a global; one made by the constructor `np.ndarray(shape)`: use "
     "`np.empty(shape)`; or one made by a creation function imported by name, `from numpy "
     "import zeros`: spell it `np.zeros` inside the function), or passed to code outside "
     "NumPy's dispatch"),
    ("x.", "was converted to Python values"),
    ("", "was converted to a Python number"),
]


class TraceContext:
    """One trace: its parameters (`params`, `input_values`) and the user-overridable hooks."""

    def __init__(self, name: str = "main"):
        self.name = name
        self.params: list[Node] = []
        self.input_values: list[np.ndarray | None] = []
        self.scalar_leaves: dict[int, int] = {}     # param index -> leaf (Python scalars)
        self._tracers: list[weakref.ref] = []
        self.active = True
        # the first conversion error of a Tracer (`float(t)` while compiling): NumPy turns
        # one raised inside `a[0] = t` into "setting an array element with a sequence"
        self.conversion_error: BaseException | None = None
        self.argument_roots: set[int] = set()       # id() of the Tracers of array arguments
        self.self_overlapping: set[int] = set()     # ... whose elements share memory
        # id(root) -> (leaf index, the caller's array); None for an alias group's memory
        self.argument_leaves: dict[int, tuple[int, np.ndarray] | None] = {}
        self.argument_views: set[int] = set()   # ids of transposed arguments (_Arguments)
        self.flag_leaves: set[int] = set()   # leaves whose x.flags the function read
        self.random_token: Node | None = None       # the last random draw's state token
        self.random_draws = 0
        self.checks: list[Node] = []    # run-time checks kept live for the error they raise
        self.checked_ranges: set = set()    # what `check_within` checked already

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
        if node.dtype is not None and not _compiles(node.dtype):
            _refuse_dtype_made_by(node)
        tracer = Tracer(node, self)
        self._tracers.append(weakref.ref(tracer))
        return tracer

    def live_tracers(self) -> list["Tracer"]:
        """Tracers of this trace still referenced somewhere (to rebind after a cluster break)."""
        alive = [t for t in (ref() for ref in self._tracers) if t is not None]
        self._tracers = [weakref.ref(t) for t in alive]
        return alive

    def scalar_leaves_read_by(self, node: Node) -> frozenset[int]:
        """Leaf indices of the traced Python-scalar arguments that `node` depends on."""
        if not self.scalar_leaves:
            return frozenset()
        found, seen, stack = set(), {id(node)}, [node]
        while stack:
            current = stack.pop()
            if current.op is Op.PARAMETER and current.arg in self.scalar_leaves and \
                    current is self.params[current.arg]:
                found.add(self.scalar_leaves[current.arg])
            for source in current.inputs:
                if id(source) not in seen:
                    seen.add(id(source))
                    stack.append(source)
        return frozenset(found)

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

    def random_state_argument(self, leaf: Any) -> Any:
        """An argument is a NumPy Generator/RandomState: the function gets a stand-in whose
        draws are chained library calls on `leaf` at run time (None: trace `leaf` as is)."""
        if isinstance(leaf, np.random.BitGenerator):
            raise UnsupportedNumPyFunctionError(
                "an argument is a bit generator: its raw draws cannot be compiled",
                op_name=type(leaf).__name__, location=user_location(),
                hint="Pass a `np.random.Generator` instead, or "
                "`xlanb.jit(f, must_compile=False)`")
        from .lowering.random_draws import TracedRandomState
        return TracedRandomState(leaf)

    def random_draw(self, func: Callable, args: tuple, kwargs: dict, what: str) -> Any:
        """`np.random.<name>(...)` (NumPy's global state) called by the traced function:
        a chained draw that runs NumPy's own function on every run of the program."""
        from .lowering.random_draws import draw
        return draw(None, func.__name__, args, kwargs, what)

    def drew_while_tracing(self, fn: Callable, bit_generators: list) -> None:
        """A random state that is not an argument (a global `rng`) was drawn from while
        tracing: the program would repeat those numbers.  Default: raise."""
        from .lowering.random_draws import baked_draw_error
        raise baked_draw_error(fn, bit_generators)

    def write_untraced(self, func: Callable, args: tuple, kwargs: dict, what: str,
                       error: CompileError) -> Any:
        """`func` writes into an array that is not traced (`out=` a global, `BUF += x`).

        Default: raise `error`.  Auto-clustering runs `func` with NumPy, which writes it."""
        raise error

    def call_unsupported(self, func: Callable, args: tuple, kwargs: dict, what: str) -> Any:
        """`func(*args, **kwargs)` has no compiled lowering (`what` names it: `np.unique`).

        Default: raise DataDependentShapeError for functions whose output shape depends on
        values, else UnsupportedNumPyFunctionError.  Auto-clustering overrides this to
        materialize the tracers in `args`/`kwargs` and call `func` eagerly.
        """
        from .lowering import unsupported_error
        raise unsupported_error(func, args, what)


class StaticScalarsNeeded(Exception):
    """Internal: Python-scalar arguments (leaf indices) were needed as Python values
    (`range(n)`, `np.zeros(n)`, `if alpha > 0`); the caller retraces with them static."""

    def __init__(self, leaves: frozenset[int]):
        super().__init__(sorted(leaves))
        self.leaves = leaves


def trace_learning_statics(trace_once: Callable[[frozenset], "Traced"],
                           learned: set) -> "Traced":
    """`trace_once(static_leaves)`, retried with the scalar leaves it needed made static
    (`learned` keeps them for later calls: one recompile per value, not a failure)."""
    while True:
        try:
            return trace_once(frozenset(learned))
        except StaticScalarsNeeded as needed:
            if needed.leaves <= learned:
                raise AssertionError("internal: static scalar leaves did not stick")
            learned |= needed.leaves


_CONTEXT_DEPENDENT = frozenset({Op.PARAMETER, Op.ALL_REDUCE})


def constant_value(node: Node) -> np.ndarray | None:
    """The value of a node that depends on no parameter (arrays made in the function)."""
    if node.op is Op.CONSTANT:
        return node.arg
    seen, stack = {id(node)}, [node]
    while stack:
        current = stack.pop()
        if current.op in _CONTEXT_DEPENDENT:
            return None
        for source in current.inputs:
            if id(source) not in seen:
                seen.add(id(source))
                stack.append(source)
    value, = interpret(Graph([], [node], "constant"), [])
    value.flags.writeable = False
    return value


class Tracer:
    """An array under tracing: `node` (shape, dtype) in `context`'s graph.

    A *root* owns its memory (`root is None`); a *view* reads and writes through `root`
    along `steps` (see `views.py`).  `weak_type` is the Python type of a traced Python
    scalar argument, which promotes weakly like the scalar would (NEP 50).
    """

    __slots__ = ("_node", "context", "root", "steps", "_seen", "_version", "_strides",
                 "weak_type", "writeable", "numpy_scalar", "__weakref__")
    __hash__ = None                      # like ndarray: mutable, compared elementwise

    def __init__(self, node: Node, context: TraceContext):
        self._node = node
        self.context = context
        self.root: Tracer | None = None
        self.steps: tuple = ()
        self._seen = 0                   # the root's version that `_node` was read at
        self._version = 0                # bumped by every write to a root
        self._strides = None             # None: C order; False: not whole elements
        self.weak_type = None
        self.writeable = True
        self.numpy_scalar = False        # NumPy's result here is a scalar when 0-d

    # -- value and writes ------------------------------------------------------------------
    @property
    def node(self) -> Node:
        root = self.root
        if root is not None and self._seen != root._version:
            self._node = read_through(root._node, self.steps)
            self._seen = root._version
        return self._node

    @node.setter
    def node(self, value: Node) -> None:
        """Write `value` into this array (and through a view into its root)."""
        root = self.root if self.root is not None else self
        if not root.writeable:
            from ..errors import ReadOnlyArrayError
            view_of = getattr(self.context, "readonly_reasons", {}).get(id(root))
            if view_of is not None:
                raise ReadOnlyArrayError(
                    f"the array written here is a view that `{view_of}` returned when it ran "
                    "with NumPy; the write could not reach the array it views",
                    location=user_location(), hint="write to the original array with "
                    "indexing instead, or run the whole function with NumPy")
            raise ReadOnlyArrayError("assignment destination is read-only",
                                     location=user_location(),
                                     hint="pass a writeable array, or copy it first "
                                     "(`x = x.copy()`)")
        if id(root) in self.context.self_overlapping:
            from ..errors import AliasingError
            raise AliasingError("a write into an argument whose elements overlap each other "
                                "(strides that reach one memory location twice, as "
                                "`as_strided` makes): NumPy's result depends on the order "
                                "of its writes", location=user_location(),
                                hint="pass a copy of that argument")
        if value.shape != self.shape:
            raise AssertionError(f"internal: writing {value.shape} into {self.shape}")
        if self.root is None:
            self._node = value
            self._version += 1
            return
        root._node = write_through(root._node, self.steps, value)
        root._version += 1
        self._node, self._seen = value, root._version

    def rebind(self, node: Node) -> None:
        """A root now reads `node` (the same value, e.g. a cluster's result), views too."""
        self._node = node
        self._version += 1

    @property
    def elem_strides(self) -> tuple[int, ...] | None:
        """Strides in elements (None when unknown: views of it are copies).  A computed
        array is taken as C order, which decides view or copy (the values are the same
        either way); `strides` and `flags` show only layouts known to be NumPy's."""
        if self._strides is None:
            return c_strides(self.shape)
        return None if self._strides is False else self._strides

    @property
    def strides(self) -> tuple[int, ...]:
        """NumPy's strides in bytes (lowering.stride_tricks: a named error where the
        layout is not known to be NumPy's)."""
        from .lowering.stride_tricks import byte_strides
        with entry("x.strides"):
            return byte_strides(self)

    @property
    def flags(self):
        """NumPy's flags of this array (lowering.stride_tricks.flags)."""
        from .lowering.stride_tricks import flags
        with entry("x.flags"):
            return flags(self)

    def view(self, step=None, node: Node | None = None, *, dtype=None,
             type=None) -> "Tracer | None":
        """A view of this array through `step`; None when NumPy would copy instead.  As
        NumPy's `x.view(dtype=None, type=None)` (no ViewStep given): `numpy_view`."""
        from .views import ReshapeStep, ViewStep
        if not isinstance(step, ViewStep):
            return self.numpy_view(step if dtype is None else dtype,
                                   node if type is None else type)
        strides = step.strides(self.shape, self.elem_strides)
        if strides is None and isinstance(step, ReshapeStep):
            return None
        root = self.root if self.root is not None else self
        if root.writeable is None:   # a scalar's `reshape`, `[None]`: a new array in NumPy
            return self.context.wrap(node if node is not None else step.read(self.node))
        source = self.node
        if node is None and source.op is Op.CONSTANT:      # fold views of made arrays
            node = builder.constant(step.apply(source.arg))
        view = self.context.wrap(node if node is not None else step.read(source))
        view.root, view.steps, view._seen = root, self.steps + (step,), root._version
        view._strides = strides if strides is not None else False
        return view

    # -- NEP 13 / NEP 18 -------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return lowering.dispatch_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return lowering.dispatch_function(func, types, args, kwargs)

    # -- abstract value ------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.node.shape

    @shape.setter
    def shape(self, shape) -> None:
        """`a.shape = s`: the same memory seen with another shape, as NumPy's in-place
        reshape (refused, as NumPy does, where that would need a copy)."""
        from .lowering.shape_ops import reshape_node
        from .views import ReshapeStep, reshape_strides
        old = self.shape
        node = reshape_node(self.node, shape)
        strides = reshape_strides(old, self.elem_strides, node.shape)
        if strides is None:               # NumPy raises an AttributeError here
            from ..errors import ShapeMismatchError
            raise ShapeMismatchError("incompatible shape for in-place modification",
                                     op_name="x.shape = ...", location=user_location(),
                                     hint="Use `.reshape()` to make a copy with the "
                                     "desired shape")
        if self.root is not None:
            self.steps = self.steps + (ReshapeStep(node.shape),)
            self._node = node
        elif id(self) in self.context.argument_roots:
            from ..errors import UnsupportedNumPyFunctionError
            raise UnsupportedNumPyFunctionError(
                "setting the shape of an argument would change the caller's array object",
                op_name="x.shape = ...", location=user_location(),
                hint="reshape a view instead: `y = x.reshape(...)`")
        else:                     # views made before keep seeing the memory as they did
            for tracer in self.context.live_tracers():
                if tracer.root is self:
                    tracer.steps = (ReshapeStep(old),) + tracer.steps
            self._node = node
            self._version += 1
        known = self._strides is not None           # an exact layout stays exact
        self._strides = strides if known or strides != c_strides(node.shape) else None
    dtype = property(lambda self: self.node.dtype)
    ndim = property(lambda self: self.node.ndim)
    size = property(lambda self: self.node.size)
    itemsize = property(lambda self: self.node.dtype.itemsize)
    nbytes = property(lambda self: self.node.nbytes)
    T = property(lambda self: np.transpose(self))
    mT = property(lambda self: np.swapaxes(self, -1, -2))
    @property
    def real(self) -> "Tracer":
        """A view (writes reach this array), as NumPy's `z.real`."""
        if self.dtype.kind != "c":
            return self
        from .views import PartStep
        return self._part_of(self.view(PartStep("real")))

    @real.setter
    def real(self, value) -> None:
        self.real[...] = value

    @property
    def imag(self) -> "Tracer":
        """A view for complex arrays; read-only zeros for real ones, as in NumPy."""
        if self.dtype.kind != "c":
            zeros = self.context.wrap(builder.broadcast(
                builder.constant(np.zeros((), self.dtype)), self.shape))
            zeros.writeable = False
            return self._part_of(zeros)
        from .views import PartStep
        return self._part_of(self.view(PartStep("imag")))

    def _part_of(self, part: "Tracer") -> "Tracer":
        """A scalar's real and imaginary parts are scalars (np.float64), an array's arrays."""
        part.numpy_scalar = self.numpy_scalar
        return part

    @imag.setter
    def imag(self, value) -> None:
        self.imag[...] = value

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
        if self.ndim == 1 and self.node.op is Op.CONSTANT:
            return iter(self.node.arg)     # NumPy scalars: nothing to write through
        return (self[i] for i in range(self.shape[0]))

    def __copy__(self) -> "Tracer":
        return self.context.wrap(self.node)

    def __deepcopy__(self, memo) -> "Tracer":
        return self.context.wrap(self.node)

    # -- concretization: routed through the context's hook --------------------------------------
    def _concrete(self, what: str) -> np.ndarray:
        value = constant_value(self.node)
        if value is not None:
            return value
        try:
            scalars = self.context.scalar_leaves_read_by(self.node)
            if scalars:
                raise StaticScalarsNeeded(scalars)
            with entry(what):
                return np.asarray(self.context.materialize(self, what))
        except (StaticScalarsNeeded, CompileError) as exc:
            if self.context.conversion_error is None:   # `trace` re-raises it if swallowed
                self.context.conversion_error = exc
            raise

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
        value = value.astype(dtype) if dtype is not None else value.view()
        value.flags.writeable = False      # a write to it could not reach the traced array
        return value

    def item(self, *args):
        """NumPy's Python scalar, traced: a 0-d value that promotes as a Python scalar does
        (weak: `x32.item() * x32` stays float32).  It computes on like any traced value;
        only a use in Python (`if x.item() > 0`, `float(...)`) needs a value, and raises."""
        from .lowering.promote import _WEAK_BY_KIND, to_node, wrap
        if len(args) == 1 and isinstance(args[0], tuple):
            args = args[0]
        if not args:
            if self.size != 1:
                raise ValueError("can only convert an array of size 1 to a Python scalar")
            value = self.reshape(())
        elif len(args) == 1:                     # a flat (C-order) index
            index = operator.index(args[0])
            if not -self.size <= index < self.size:
                raise IndexError(f"index {index} is out of bounds for size {self.size}")
            value = self.reshape(-1)[index % self.size]
        elif len(args) == self.ndim:
            value = self[tuple(operator.index(i) for i in args)]
        else:
            raise ValueError("incorrect number of indices for array")
        node = to_node(value)
        # a Python float/int/complex holds the value exactly at 64 bits (unsigned: as is)
        wide = {"f": np.float64, "i": np.int64, "c": np.complex128}.get(node.dtype.kind)
        result = wrap(builder.convert(node, wide) if wide is not None else node)
        result.weak_type = _WEAK_BY_KIND.get(node.dtype.kind)
        return result

    def numpy_view(self, dtype=None, array_type=None):
        """`x.view()`, `x.view(dtype)` of the same itemsize (the same bytes, writes going
        through to x) and `x.view(np.ndarray)`; other sizes and subclasses are named."""
        from .views import BitcastStep
        if isinstance(dtype, type) and issubclass(dtype, np.ndarray):
            dtype, array_type = None, dtype
        target = self.dtype if dtype is None else np.dtype(dtype)
        if target.kind in "Mm" and self.dtype == np.int64 and array_type in (None, np.ndarray):
            from .datetimes.array import DatetimeTracer     # the same counts, as times
            return DatetimeTracer(self[...], target)
        if array_type not in (None, np.ndarray) or target.itemsize != self.dtype.itemsize \
                or (target != self.dtype and not all(
                    t.kind in "iuf" and t != np.float16 for t in (target, self.dtype))):
            what = f"x.view({target})" if array_type in (None, np.ndarray) else \
                f"x.view({getattr(array_type, '__name__', array_type)})"
            return lowering.unsupported(np.ndarray.view, (self, dtype), {}, what)
        if target == self.dtype:
            return self[...]
        return self.view(BitcastStep(target, self.dtype))

    @property
    def flat(self):
        """NumPy's flat iterator over the traced elements (views.FlatIterator)."""
        from .views import FlatIterator
        return FlatIterator(self)

    @flat.setter
    def flat(self, value) -> None:
        """`x.flat = v`: every element, from v repeated in C order (NumPy's flatiter)."""
        self.flat[:] = value

    def tolist(self):
        return self._concrete("x.tolist()").tolist()

    def tobytes(self, order="C"):
        """NumPy's bytes where the function returns them (lowering.stride_tricks)."""
        from .lowering.stride_tricks import tobytes
        with entry("x.tobytes()"):
            return tobytes(self, order)

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


def has_tracer(tree: Any) -> bool:
    """Whether a pytree of arguments holds a Tracer."""
    from .datetimes.array import DatetimeTracer
    leaves, _ = tree_flatten(tree)
    return any(isinstance(leaf, (Tracer, DatetimeTracer)) for leaf in leaves)


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

    graph.params[p] is the array leaf `param_leaves[p]` of `flatten_args(args, kwargs,
    static_argnums)`, or, for p in `flat_params`, the flat memory of that leaf's owner (an
    alias group).  graph.outputs are the output leaves in `out_tree` order, then one output
    per `writebacks` entry (param index, output index), then `effects` outputs that keep
    random draws and run-time checks live (nobody reads them).  `const_outputs` maps
    output index -> the plain value the function returned there; `arg_outputs` output index -> the
    argument (or view of one) returned there (`boundary.ArgOutput`).
    """
    graph: Graph
    in_tree: PyTreeDef
    out_tree: PyTreeDef
    param_leaves: tuple[int, ...]
    static_args: tuple[Any, ...]
    const_outputs: dict[int, Any]
    writebacks: tuple[tuple[int, int], ...] = ()
    arg_outputs: dict = dataclasses.field(default_factory=dict)
    flat_params: frozenset = frozenset()
    alias_key: Any = None
    scalar_params: frozenset = frozenset()        # params that are Python scalars
    effects: int = 0    # trailing outputs that only keep effects live (random draws, checks)
    flag_leaves: frozenset = frozenset()   # leaves whose flags it read: part of the key
    bytes_outputs: frozenset = frozenset()  # outputs returned as `.tobytes()` of the array
    scalar_outputs: dict = dataclasses.field(default_factory=dict)   # index -> "numpy"/"python"
    # datetime64/timedelta64 leaves and outputs, which the program takes and gives as
    # their int64 counts: param index -> dtype, output index -> dtype (datetimes/)
    time_params: dict = dataclasses.field(default_factory=dict)
    time_outputs: dict = dataclasses.field(default_factory=dict)
    # param index -> the axes, outer to inner, in which its leaf lies contiguous (not C
    # order: Fortran-ordered, a transpose, moved axes): the param takes the leaf
    # transposed into them (C-ordered, the caller's memory), which the function sees
    # transposed back (`transposed_argument`)
    transposed_params: dict = dataclasses.field(default_factory=dict)
    # output index -> the axes, outer to inner, of NumPy's contiguous layout of it (2-D
    # and up: `memory_order`), which the caller gets (boundary.py)
    output_orders: dict = dataclasses.field(default_factory=dict)

    @property
    def is_pure(self) -> bool:
        """No argument written, returned or aliased, no time dtype to convert: outputs
        are just the program's (then `effects` tokens, which the caller drops)."""
        return not (self.writebacks or self.arg_outputs or self.flat_params
                    or self.bytes_outputs or self.time_params or self.time_outputs)

    def unflatten_outputs(self, values: Sequence[Any]) -> Any:
        return tree_unflatten(self.out_tree, list(values)[:self.out_tree.num_leaves])


def _output_node(context: TraceContext, leaf: Any, index: int) -> Node:
    if isinstance(leaf, Tracer):
        if leaf.context is not context:
            raise TracerLeakError(f"output {index} is a traced value from another trace",
                                  hint="return values computed inside this function")
        return leaf.node
    if isinstance(leaf, (np.ndarray, np.generic, bool, int, float, complex)):
        if is_time_leaf(leaf):               # returned as it is (const_outputs)
            return builder.constant(np.zeros((), np.int8))
        leaf = np.asarray(leaf)
        if not _compiles(leaf.dtype):
            from ..errors import UnsupportedDTypeError
            raise UnsupportedDTypeError(
                f"output {index} is an array of {_dtype_words(leaf.dtype)}; "
                f"{_COMPILED_DTYPES}", location=user_location(),
                hint="return it from a wrapper outside the compiled function, or run the "
                "function with NumPy: `xlanb.jit(f, must_compile=False)`")
        return builder.constant(leaf)
    if isinstance(leaf, (bytes, str)):         # returned as they are (const_outputs)
        return builder.constant(np.zeros((), np.int8))
    raise CompileError(f"output {index} is a {type(leaf).__name__}, which is not an array; "
                       "a compiled function returns arrays, Python scalars or containers "
                       "(tuple, list, dict, namedtuple, None) of them",
                       hint="return it from a wrapper outside the compiled function")


def _returned_output(out_leaves: list, arg_outputs: dict, i: int):
    """An ArgOutput when output `i` is an array made in the function that an earlier output
    already returns, or a view of one that another output returns (NumPy gives the same
    object, or a view of its memory)."""
    from .boundary import ArgOutput
    leaf = out_leaves[i]
    if not isinstance(leaf, Tracer):
        return None
    for j, other in enumerate(out_leaves):
        if j in arg_outputs or not isinstance(other, Tracer) or other.root is not None:
            continue
        if other is leaf and j < i:
            return ArgOutput(output=j)
        if leaf.root is other:
            return ArgOutput(output=j, steps=leaf.steps)
    return None


_RANDOM_STATES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def _refuse_subclass(index: int, leaf) -> None:
    """An ndarray subclass changes what NumPy's operators and functions do (np.matrix's
    `*` is a matrix product, a masked array's results are masked), which a trace of plain
    ndarrays would silently drop.  np.memmap only maps a file: traced as its ndarray."""
    if isinstance(leaf, np.ndarray) and type(leaf) not in (np.ndarray, np.memmap):
        from ..errors import ArraySubclassError
        name = f"{type(leaf).__module__}.{type(leaf).__qualname__}"
        raise ArraySubclassError(
            f"it is a {name}, an ndarray subclass whose operations differ from ndarray's",
            op_name=f"argument {index}",
            hint="pass np.asarray(x) if plain ndarray semantics are meant, or run the "
            "function with NumPy: `xlanb.jit(f, must_compile=False)`")


def _compiles(dtype: np.dtype) -> bool:
    """Only dtypes the IR has, in the machine's byte order, reach the kernels: Numba has no
    big-endian loads and the IR no strings, records, datetimes or long double.  Asked for
    every traced value, and NumPy's `dtype.name` is Python code (~2 us): memoized by
    dtype (equal dtypes have the same name and byte order)."""
    known = _COMPILES.get(dtype)
    if known is None:
        known = _COMPILES[dtype] = dtype.name in DTYPE_NAMES and dtype.isnative
    return known


_COMPILES: dict[np.dtype, bool] = {}


_COMPILED_DTYPES = ("xlanb compiles bool, integers, float16/32/64, complex64/128 and "
                    "datetime64/timedelta64 with a unit in the machine's byte order")


def _dtype_words(dtype: np.dtype) -> str:
    what = ("a non-native (byte-swapped) " + dtype.name if dtype.name in DTYPE_NAMES
            else dtype.name if dtype.fields is None else "a structured dtype")
    return f"{what} ({dtype.str})"


def _refuse_unsupported_dtype(index: int, leaf) -> None:
    if not isinstance(leaf, (np.ndarray, np.generic)) or _compiles(leaf.dtype):
        return
    from ..errors import UnsupportedDTypeError
    raise UnsupportedDTypeError(
        f"its dtype is {_dtype_words(leaf.dtype)}; {_COMPILED_DTYPES}",
        op_name=f"argument {index}",
        hint=f"{_conversion(leaf.dtype)}, or run the function with NumPy: "
        "`xlanb.jit(f, must_compile=False)`")


def _refuse_dtype_made_by(node: Node) -> None:
    from ..errors import UnsupportedDTypeError
    raise UnsupportedDTypeError(
        f"it makes an array of {_dtype_words(node.dtype)}; {_COMPILED_DTYPES}",
        op_name=node.op.value, location=node.loc or user_location(),
        hint="compute in a supported dtype (float64 for long double, int64 for datetimes), "
        "or run the function with NumPy: `xlanb.jit(f, must_compile=False)`")


def _conversion(dtype: np.dtype) -> str:
    if dtype.name in DTYPE_NAMES:
        return f"convert it at the call: x.astype(np.{dtype.name}) (native byte order)"
    target = {"f": "np.float64", "c": "np.complex128", "M": "np.int64",
              "m": "np.int64"}.get(dtype.kind)
    return (f"convert it at the call: x.astype({target})" if target
            else "pass its numeric fields as separate arrays")


class _Arguments:
    """The traced stand-ins for a call's leaves, and what became of them after the call."""

    def __init__(self, context: TraceContext, leaves: list, static_leaves):
        from .boundary import find_aliases, flat_memory, strided_step
        self.context = context
        self.aliases = find_aliases(leaves)
        self.param_leaves: list[int] = []
        self.flat_params: set[int] = set()
        self.roots: list[tuple[int, Tracer]] = []       # (param index, root) of arrays
        self.leaf_of: dict[int, int] = {}               # id(tracer) -> leaf index
        self.traced: list = []
        same = self.aliases.same if self.aliases else {}
        grouped = {i: g for g in (self.aliases.groups if self.aliases else ()) for i in g}
        flat_roots: dict = {}
        self.time_params: dict[int, np.dtype] = {}    # param index -> time dtype
        self.transposed_params: dict[int, tuple[int, ...]] = {}
        for i, leaf in enumerate(leaves):
            _refuse_subclass(i, leaf)
            if is_time_leaf(leaf) and i not in static_leaves:
                self._time_argument(i, leaf, same, grouped)
                continue
            _refuse_unsupported_dtype(i, leaf)
            if isinstance(leaf, _RANDOM_STATES):
                stand_in = context.random_state_argument(leaf)
                if stand_in is not None:           # draws on it are chained library calls
                    self.traced.append(stand_in)
                    continue
            if i in same:
                tracer = self.traced[same[i]]
            elif i in grouped:
                group = grouped[i]
                if group not in flat_roots:
                    flat = flat_memory(leaf)
                    flat_roots[group] = (flat, self._param(i, flat, flat=True))
                flat, root = flat_roots[group]
                tracer = root.view(strided_step(flat, leaf))
                tracer.writeable = bool(leaf.flags.writeable)
            elif i in static_leaves:
                self.traced.append(leaf)
                continue
            elif (axes := transposed_argument(leaf)) is not None:
                tracer = self._transposed_param(i, leaf, axes)
            else:
                tracer = self._param(i, leaf)
            self.leaf_of[id(tracer)] = i
            self.traced.append(tracer)

    def _transposed_param(self, i: int, leaf: np.ndarray, axes: tuple[int, ...]) -> Tracer:
        """An argument contiguous in the order of `axes` (outer to inner), not C order:
        the program takes `leaf.transpose(axes)` (C-ordered: its kernels index it as they
        index any parameter, with no copy into C order first), and the function sees that
        parameter transposed back, a view, so writes reach it."""
        from .views import TransposeStep
        root = self._param(i, leaf.transpose(axes))
        self.transposed_params[len(self.param_leaves) - 1] = axes
        self.context.argument_leaves[id(root)] = (i, leaf)
        view = root.view(TransposeStep(tuple(int(d) for d in np.argsort(axes))))
        self.context.argument_views.add(id(view))   # x.flags.owndata is the argument's
        return view

    def _time_argument(self, i: int, leaf, same: dict, grouped: dict) -> None:
        """A datetime64/timedelta64 leaf: a parameter of its int64 counts, seen by the
        function as a DatetimeTracer (datetimes/boundary.py)."""
        from .datetimes.array import DatetimeTracer
        from .datetimes.boundary import as_counts, refuse_overlapping
        if i in grouped:
            raise refuse_overlapping(i)
        if i in same:
            tracer = self.traced[same[i]].ints
        else:
            self.time_params[len(self.param_leaves)] = leaf.dtype
            tracer = self._param(i, as_counts(leaf))
        self.leaf_of[id(tracer)] = i
        self.traced.append(DatetimeTracer(tracer, leaf.dtype))

    def _param(self, leaf_index: int, leaf, flat: bool = False) -> Tracer:
        from .views import element_strides, overlaps_itself
        context = self.context
        if isinstance(leaf, Tracer):
            tracer = context.new_param(leaf.shape, leaf.dtype)
        elif is_array_leaf(leaf):
            tracer = context.new_input(leaf)
        else:                                           # a Python scalar: traced, weak
            tracer = context.new_input(np.asarray(leaf))
            tracer.weak_type = type(leaf)
            context.scalar_leaves[len(self.param_leaves)] = leaf_index
        if flat:
            self.flat_params.add(len(self.param_leaves))
        self.param_leaves.append(leaf_index)
        if isinstance(leaf, np.ndarray):
            strides = element_strides(leaf)
            tracer._strides = strides if strides is not None else False   # 0-d: ()
            tracer.writeable = bool(leaf.flags.writeable)
            if tracer.writeable and overlaps_itself(leaf.shape, leaf.strides):
                context.self_overlapping.add(id(tracer))
            self.roots.append((len(self.param_leaves) - 1, tracer))
            context.argument_roots.add(id(tracer))
            context.argument_leaves[id(tracer)] = None if flat else (leaf_index, leaf)
        else:
            tracer.writeable = None                     # immutable: in-place ops rebind
        return tracer

    def argument_output(self, leaf):
        """An ArgOutput when `leaf` is an argument or a view of one, else None."""
        from .boundary import ArgOutput
        if not isinstance(leaf, Tracer):
            return None
        index = self.leaf_of.get(id(leaf))
        if index is not None:
            return ArgOutput(leaf=index)
        if leaf.root is not None:
            for p, root in self.roots:
                if root is leaf.root:
                    return ArgOutput(param=p, steps=leaf.steps)
        return None

    def writebacks(self) -> list[tuple[int, Tracer]]:
        params = self.context.params
        return [(p, root) for p, root in self.roots if root._node is not params[p]]


def trace(fn: Callable, args: tuple, kwargs: dict | None = None, static_argnums=(),
          name: str | None = None, context: TraceContext | None = None,
          static_leaves=frozenset(), scalars_traced: bool = False) -> Traced:
    """Run `fn(*args, **kwargs)` on Tracers and record what it does as an IR Graph.

    Array leaves (ndarray, NumPy scalars) of the non-static arguments become parameters;
    with `scalars_traced`, Python scalars too (weakly typed, like JAX), except the leaf
    indices in `static_leaves`; other leaves are passed through unchanged (static: baked
    into the graph); arguments at `static_argnums` are passed through untouched.  Writes to
    arguments become `writebacks`; arguments that share memory are traced as aliases.  Pass
    `context` to use a TraceContext subclass (auto-clustering).
    """
    name = name or getattr(fn, "__name__", "main")
    context = context if context is not None else TraceContext(name)
    leaves, in_tree, static_args = flatten_args(tuple(args), kwargs, static_argnums)
    static = _static_indices(static_argnums, len(args))
    if not scalars_traced:
        static_leaves = frozenset(i for i, leaf in enumerate(leaves)
                                  if not is_array_leaf(leaf)) | static_leaves
    else:
        static_leaves = frozenset(i for i, leaf in enumerate(leaves)
                                  if not is_traceable_leaf(leaf)) | static_leaves
    token = _ACTIVE.set(context)
    try:
        arguments = _Arguments(context, leaves, static_leaves)
        dynamic, traced_kwargs = tree_unflatten(in_tree, arguments.traced)
        dynamic = iter(dynamic)
        call_args = [a if i in static else next(dynamic) for i, a in enumerate(args)]
        from .lowering.random_draws import drawn_since, snapshot_states
        states = snapshot_states(fn, (args, kwargs))
        with capture_creation():
            try:
                result = fn(*call_args, **traced_kwargs)
            except Exception as exc:
                swallowed = context.conversion_error
                if swallowed is not None and exc is not swallowed:
                    raise swallowed from None    # NumPy's ValueError for `a[0] = tracer`
                raise
        if context.conversion_error is not None:   # caught by the user's code, which
            raise context.conversion_error         # then went on without the value
        drawn = drawn_since(states, fn, (args, kwargs))
        if drawn:                                  # a global `rng`: its numbers baked in
            context.drew_while_tracing(fn, drawn)
        out_leaves, out_tree = tree_flatten(result)
        outputs, consts, arg_outputs, output_orders = [], {}, {}, {}
        from .lowering.masked import MaskedSelection
        out_leaves = [leaf.materialize("returning x[mask]")   # `return x[mask]`
                      if isinstance(leaf, MaskedSelection) else leaf for leaf in out_leaves]
        from .lowering.stride_tricks import TracedBytes
        out_leaves, time_outputs = split_outputs(out_leaves)
        bytes_outputs, scalar_outputs = set(), {}
        for i, leaf in enumerate(out_leaves):
            if isinstance(leaf, TracedBytes):               # `return x.tobytes()`
                bytes_outputs.add(i)
                outputs.append(leaf.output_node())
                continue
            kind = _scalar_kind(leaf)
            if kind is not None:
                scalar_outputs[i] = kind
            source = arguments.argument_output(leaf)
            if source is None:
                source = _returned_output(out_leaves, arg_outputs, i)
            if source is not None:
                arg_outputs[i] = source
                outputs.append(builder.constant(np.zeros((), np.int8)))
                continue
            outputs.append(_output_node(context, leaf, i))
            if not isinstance(leaf, Tracer):
                consts[i] = leaf
            elif (order := memory_order(leaf)) is not None:
                output_orders[i] = order
        writebacks = []
        for p, root in arguments.writebacks():
            writebacks.append((p, len(outputs)))
            outputs.append(root.node)
        effects = 0
        if context.random_token is not None:       # keeps every draw live (the caller
            outputs.append(context.random_token)   # ignores it)
            effects = 1
        outputs.extend(context.checks)              # as do checks (np.asarray_chkfinite)
        effects += len(context.checks)
    finally:
        _ACTIVE.reset(token)
        context.active = False
    graph = Graph(list(context.params), outputs, name)
    aliases = arguments.aliases
    return Traced(graph, in_tree, out_tree, tuple(arguments.param_leaves), static_args,
                  consts, tuple(writebacks), arg_outputs, frozenset(arguments.flat_params),
                  aliases.key if aliases else None, frozenset(context.scalar_leaves),
                  effects, frozenset(context.flag_leaves), frozenset(bytes_outputs),
                  scalar_outputs, dict(arguments.time_params), time_outputs,
                  dict(arguments.transposed_params), output_orders)


def memory_order(leaf: Tracer) -> tuple[int, ...] | None:
    """The axes, outer to inner, in which a returned array of two or more dims lies
    contiguous in NumPy's memory, as the trace models it (`layout.with_order`: as asked by
    np.ascontiguousarray, np.asfortranarray, `copy(order=)`, order='K' of ufuncs on
    transposed inputs; C order for other new arrays: reductions, matmul), or None where
    NumPy's is not contiguous (a strided view of a temporary)."""
    strides = leaf.elem_strides
    if leaf.ndim < 2 or strides is None:
        return None
    order = keep_order(leaf.shape, [strides])
    return order if is_contiguous(leaf.shape, strides, order) else None


def transposed_argument(leaf) -> tuple[int, ...] | None:
    """The axes, outer to inner, in which an argument goes in transposed: an ndarray of two
    or more dims contiguous in an order other than C (Fortran order, `x.T`, moved axes),
    which kernels read in its own memory order as the C-ordered `leaf.transpose(axes)`
    (a copy into C order first cost more than the kernels: row sums of a 2000x500
    Fortran-ordered one 1.8 ms, NumPy 0.31; a mean over axis 1 of a (64, 256, 128) array
    transposed (2, 0, 1) 10.8 ms, NumPy 0.78); None for the rest."""
    if type(leaf) is not np.ndarray or leaf.ndim < 2 or leaf.size <= 1 or \
            leaf.flags.c_contiguous:
        return None
    if leaf.flags.f_contiguous:
        return tuple(range(leaf.ndim - 1, -1, -1))
    size = leaf.itemsize
    if any(s <= 0 or s % size for s in leaf.strides):
        return None
    strides = [s // size for s in leaf.strides]
    axes = keep_order(leaf.shape, [strides])
    return axes if is_contiguous(leaf.shape, strides, axes) else None


def _scalar_kind(leaf) -> str | None:
    """How NumPy returns a 0-d result: "python" for `x.item()` (and Python-scalar
    arithmetic on it), "numpy" for a ufunc's, a reduction's or an integer index's
    (np.float64, ...), None for a 0-d array."""
    if not isinstance(leaf, Tracer) or leaf.shape != ():
        return None
    if leaf.weak_type is not None:
        return "python"
    return "numpy" if leaf.numpy_scalar else None


def is_traceable_leaf(leaf: Any) -> bool:
    """Arrays, and Python numbers (traced as weakly typed scalars).  A Python bool stays
    static: two values at most, and Python computes with it as an int (`True + True`,
    `~flag`), which a traced np.bool_ would not."""
    return is_array_leaf(leaf) or type(leaf) in (int, float, complex)


from . import lowering  # noqa: E402  (the rules import Tracer from this module)
