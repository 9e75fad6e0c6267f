"""Memory layout on traced arrays: `x.strides`, `x.flags` and `np.lib.stride_tricks.as_strided`.

NumPy shows where an array's elements sit in memory, and `as_strided` reads memory by it.
xlanb knows that layout exactly for arguments (the caller's strides are in the signature),
arrays made in the function by creation functions, `x.copy()`, 0-d arrays, 1-D results
of computations, and views of all of these (views.py keeps their strides step by step).  The layout
of any other computed array follows NumPy's allocation rules (order 'K' from its inputs),
which xlanb does not model: reading it is a named error, never a guess.

as_strided with static shape and strides is a view: each element's memory offset from x's
first element must be an element of x (`x`'s strides say which), so the view is a gather
of x's elements (`AsStridedStep`).  A write through it scatters back into x when no two
of its elements share memory; overlapping windows are read-only here (a named error), and
`writeable=False` is NumPy's read-only view.  Memory outside x's elements (its base's
other elements, or padding) is not read: a named error says to call it on the base.

Flags that the signature does not fix (writeable, owndata, aligned of an argument) are
recorded in `context.flag_leaves`; `jit` then keys its cache on them (api.JitFunction).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlanb_runtime.ir import Node, Op
from xlanb_runtime.ir import builder as B

from ...errors import FALLBACK_HINT, AliasingError, ReadOnlyArrayError, \
    UnsupportedNumPyFunctionError
from ..source import user_location
from ..tracer import Tracer
from ..views import ViewStep, place_flat
from . import fail, implements
from .library import node_of
from .promote import wrap

_LAYOUT_HINT = ("xlanb knows the memory layout of arguments, arrays made by creation "
                "functions (np.zeros, np.arange, ...), `x.copy()` (C order) and views of "
                "these; call `.copy()` first, " + FALLBACK_HINT)


def root_of(x: Tracer) -> Tracer:
    return x.root if x.root is not None else x


# Ops that may compute what NumPy returns as a view with other strides (np.flip's negative
# stride, np.diagonal's long one, np.broadcast_to's zero): a 1-D root made by one of these
# has an unknown layout.  Any other 1-D computed array NumPy allocates contiguous.
_VIEW_LIKE = frozenset({Op.PARAMETER, Op.CONSTANT, Op.BROADCAST, Op.RESHAPE, Op.TRANSPOSE,
                        Op.SLICE, Op.DYNAMIC_SLICE, Op.REVERSE, Op.GATHER, Op.REAL, Op.IMAG,
                        Op.BITCAST})


def layout_known(x: Tracer) -> bool:
    """Whether x's strides are NumPy's: its root's layout is exact (an argument, a creation
    function's array, a C-order copy: an explicit `_strides`), or the root is 0-d, or 1-D
    and freshly computed (not by a `_VIEW_LIKE` op).  n-D computed arrays: NumPy lays
    them out in order 'K' from their inputs, which xlanb does not model."""
    root = root_of(x)
    if id(root) in root.context.argument_roots or root._strides is not None:
        return True
    return root.ndim == 0 or (root.ndim == 1 and root._node.op not in _VIEW_LIKE)


def element_strides(x: Tracer, what: str) -> tuple[int, ...]:
    """x's strides in elements, as NumPy has them, or a named error naming `what`."""
    strides = x.elem_strides if layout_known(x) else None
    if strides is None:
        reason = ("its layout in NumPy depends on how NumPy computed it" if not
                  layout_known(x) else "its strides are not whole elements")
        raise fail(UnsupportedNumPyFunctionError, f"`{what}` needs the memory layout of a "
                   f"traced array, and {reason}", hint=_LAYOUT_HINT)
    return strides


def byte_strides(x: Tracer) -> tuple[int, ...]:
    """`x.strides`: NumPy's strides in bytes."""
    return tuple(s * x.itemsize for s in element_strides(x, "x.strides"))


# -- as_strided --------------------------------------------------------------------------------

def _offsets(shape, strides) -> np.ndarray:
    """The memory offset (in elements) of every element of an array, in C order."""
    offsets = np.zeros(tuple(shape), dtype=np.int64)
    for axis, (n, s) in enumerate(zip(shape, strides)):
        step = np.arange(n, dtype=np.int64) * s
        offsets += step.reshape((n,) + (1,) * (len(shape) - axis - 1))
    return offsets


@dataclass(frozen=True, eq=False)
class AsStridedStep(ViewStep):
    """`as_strided(x, shape, strides)`: element i of the view is x's flat element
    `index[i]` (C order).  Writes scatter back when the elements are distinct."""
    index: np.ndarray                  # int64, the view's shape
    byte_strides: tuple[int, ...]
    writeable: bool
    overlapping: bool

    def read(self, parent: Node) -> Node:
        return B.gather(B.reshape(parent, (parent.size,)), B.constant(self.index), 0)

    def write(self, parent: Node, child: Node) -> Node:
        what = "a view from np.lib.stride_tricks.as_strided"
        if not self.writeable:
            raise ReadOnlyArrayError(f"assignment destination is read-only ({what} made "
                                     "with writeable=False)", location=user_location(),
                                     hint="Write to the array it views instead")
        if self.overlapping:
            raise AliasingError(f"a write through {what} whose elements share memory "
                                "(overlapping windows): NumPy's result depends on the order "
                                "of its memory writes", location=user_location(),
                                hint="Write to the array it views instead, "
                                + FALLBACK_HINT)
        flat = B.reshape(parent, (parent.size,))
        return B.reshape(place_flat(flat, self.index, child), parent.shape)

    def apply(self, array: np.ndarray) -> np.ndarray:
        return np.lib.stride_tricks.as_strided(array, self.index.shape, self.byte_strides,
                                               writeable=self.writeable)

    def strides(self, shape, strides):
        return None                    # set by `as_strided` (the view's own strides)


@implements(np.lib.stride_tricks.as_strided)
def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    """A view of x's elements at the given byte strides (see the module docstring).
    np.lib.stride_tricks.as_strided skips NEP 18: tracing.capture routes calls here."""
    what = "np.lib.stride_tricks.as_strided"
    x = x if isinstance(x, Tracer) else wrap(node_of(x))
    own = element_strides(x, what)
    shape = x.shape if shape is None else tuple(int(n) for n in shape)
    strides = tuple(s * x.itemsize for s in own) if strides is None else \
        tuple(int(s) for s in strides)
    if len(shape) != len(strides):
        raise ValueError("mismatch in length of strides and shape")
    if any(n < 0 for n in shape):
        raise ValueError("negative dimensions are not allowed")
    if any(s % x.itemsize for s in strides):
        raise fail(UnsupportedNumPyFunctionError, f"strides {strides} are not whole "
                   f"elements of {x.dtype} ({x.itemsize} bytes)", hint=FALLBACK_HINT)
    elem = tuple(s // x.itemsize for s in strides)
    index = _element_index(_offsets(x.shape, own).reshape(-1), _offsets(shape, elem))
    step = AsStridedStep(index, strides, bool(writeable),
                         np.unique(index).size != index.size)
    view = x.view(step, node=step.read(x.node))
    view._strides = elem
    return view


def _element_index(x_offsets: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """For each memory offset, the flat index of x's element there (a named error when
    one is not x's: NumPy would read memory that x does not show)."""
    order = np.argsort(x_offsets, kind="stable")
    ordered = x_offsets[order]
    if offsets.size and not ordered.size:
        found = np.zeros(offsets.shape, bool)
        spot = np.zeros(offsets.shape, np.int64)
    else:
        spot = np.clip(np.searchsorted(ordered, offsets), 0, max(ordered.size - 1, 0))
        found = ordered[spot] == offsets if ordered.size else np.ones(offsets.shape, bool)
    if not found.all():
        first = int(offsets[~found].reshape(-1)[0])
        raise fail(UnsupportedNumPyFunctionError,
                   f"the view reads memory outside the array's own elements (element "
                   f"offset {first} from its first element), which a compiled program "
                   "does not hold", hint="Call as_strided on the whole array (the base "
                   "of the slice) with strides that stay inside it, " + FALLBACK_HINT)
    return order[spot].astype(np.int64)


# -- flags -------------------------------------------------------------------------------------

def _is_contiguous(shape, strides) -> bool:
    """NumPy's C-contiguity test in elements (size-1 dims are ignored; empty: True)."""
    if 0 in shape:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


class TracedFlags:
    """`x.flags` of a traced array: NumPy's flags object, read-only, with the values NumPy
    gives for the arguments this program was compiled for (see the module docstring)."""
    __slots__ = ("_values",)

    def __init__(self, values: dict[str, bool]):
        object.__setattr__(self, "_values", values)

    def __getattr__(self, name: str) -> bool:
        key = _FLAG_NAMES.get(name.lower())
        if key is None:
            raise AttributeError(f"'flagsobj' object has no attribute {name!r}")
        return self._values[key]

    def __getitem__(self, name: str) -> bool:
        key = _FLAG_NAMES.get(str(name).lower())
        if key is None:
            raise KeyError("Unknown flag")
        return self._values[key]

    def __setattr__(self, name, value) -> None:
        _refuse_flag_write(name)

    __setitem__ = __setattr__

    def __repr__(self) -> str:
        names = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED",
                 "WRITEBACKIFCOPY")
        return "\n".join(f"  {n} : {self._values[n]}" for n in names) + "\n"


_FLAG_NAMES = {
    "c_contiguous": "C_CONTIGUOUS", "c": "C_CONTIGUOUS", "contiguous": "C_CONTIGUOUS",
    "f_contiguous": "F_CONTIGUOUS", "f": "F_CONTIGUOUS", "fortran": "FORTRAN",
    "owndata": "OWNDATA", "o": "OWNDATA", "writeable": "WRITEABLE", "w": "WRITEABLE",
    "aligned": "ALIGNED", "a": "ALIGNED", "writebackifcopy": "WRITEBACKIFCOPY",
    "x": "WRITEBACKIFCOPY", "behaved": "BEHAVED", "b": "BEHAVED", "carray": "CARRAY",
    "ca": "CARRAY", "farray": "FARRAY", "fa": "FARRAY", "forc": "FORC", "fnc": "FNC",
}


def _refuse_flag_write(name) -> None:
    raise fail(UnsupportedNumPyFunctionError, f"setting `x.flags.{name}` inside a compiled "
               "function would change the caller's array object",
               hint="Set the flag outside the compiled function, or copy the array")


def flags(x: Tracer) -> TracedFlags:
    """`x.flags`: contiguity from x's strides, WRITEABLE from the view chain and the
    argument, OWNDATA for roots (an argument: its own flag), ALIGNED from the argument."""
    strides = element_strides(x, "x.flags")
    root = root_of(x)
    leaf = root.context.argument_leaves.get(id(root))
    writeable = bool(root.writeable) and all(getattr(s, "writeable", True) for s in x.steps)
    owndata, aligned = x.root is None or id(x) in root.context.argument_views, True
    if leaf is not None:                # facts outside the signature: the cache keys on them
        index, array = leaf
        root.context.flag_leaves.add(index)
        owndata = owndata and array.flags.owndata
        aligned = bool(array.flags.aligned)
    c = _is_contiguous(x.shape, strides)
    f = _is_contiguous(x.shape[::-1], strides[::-1])
    values = {"C_CONTIGUOUS": c, "F_CONTIGUOUS": f, "OWNDATA": bool(owndata),
              "WRITEABLE": writeable, "ALIGNED": aligned, "WRITEBACKIFCOPY": False,
              "FORTRAN": f and not c, "BEHAVED": aligned and writeable,
              "CARRAY": c and aligned and writeable, "FARRAY": f and not c and aligned
              and writeable, "FORC": f or c, "FNC": f and not c}
    return TracedFlags(values)


def flag_facts(array) -> tuple[bool, bool, bool] | None:
    """The flags of an argument that its (shape, dtype, strides) key does not fix."""
    if not isinstance(array, np.ndarray):
        return None
    fl = array.flags
    return fl.writeable, fl.owndata, fl.aligned


# -- tobytes -----------------------------------------------------------------------------------

class TracedBytes:
    """`x.tobytes(order)` of a traced array: a program output that the call turns into
    NumPy's bytes (`Traced.bytes_outputs`).  Any use of it inside the function needs the
    values: auto-clustering computes them, `jit` raises ConcretizationError."""
    __slots__ = ("array", "order")

    def __init__(self, array: Tracer, order: str):
        self.array, self.order = array, order

    def output_node(self) -> Node:
        """The values whose C-order bytes are the result ('F': the reversed transpose)."""
        node = self.array.node
        return B.transpose(node, tuple(reversed(range(node.ndim)))) if self.order == "F" \
            else node

    def value(self) -> bytes:
        return self.array._concrete("x.tobytes()").tobytes(self.order)

    def __repr__(self) -> str:
        return f"TracedBytes<{self.array.nbytes} bytes>"

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.value(), name)          # .decode(), .hex(), ...


def _delegate(name: str):
    def method(self, *args):
        return getattr(self.value(), name)(*args)
    method.__name__ = name
    return method


for _name in ("__bytes__", "__len__", "__eq__", "__ne__", "__hash__", "__getitem__",
              "__iter__", "__add__", "__radd__", "__contains__", "__lt__", "__le__", "__gt__",
              "__ge__", "__mul__"):
    setattr(TracedBytes, _name, _delegate(_name) if _name != "__bytes__" else
            (lambda self: self.value()))


def tobytes(x: Tracer, order: str = "C") -> TracedBytes:
    """`x.tobytes()`: returned from the function, NumPy's bytes of x's values in C (or F)
    order; 'A' (F order for F-contiguous x) reads x's layout."""
    if order in (None, "A", "K"):
        order = "F" if flags(x).fnc else "C"
    if order not in ("C", "F"):
        raise ValueError("order must be one of 'C', 'F', 'A', or 'K' (got '%s')" % order)
    return TracedBytes(x, order)
