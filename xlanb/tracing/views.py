"""Views of traced arrays and writes through them: NumPy's aliasing, made functional.

In NumPy, basic indexing (`M[0]`, `x[::2]`, `x[..., None]`), transposes (`.T`, `swapaxes`)
and layout-compatible reshapes (`reshape`, `ravel` of a contiguous array) return *views*:
a write through the view changes its base.  A traced view keeps a link to its *root* (the
traced array that owns the memory: an argument, or an array made inside the function) and
the chain of `ViewStep`s from the root to it:

    M (root) --IndexStep(0)--> row         row *= 2

Reading `row` replays the steps on M's current node (`read_through`).  Writing `row`
computes its new value, then `write_through` scatters it back, step by step in reverse,
into a new node for M (torch.compile's functionalization).  The compiled program stays
pure; `trace()` writes each argument's final root value back to the caller's array.

Whether a reshape is a view depends on the memory layout, so every Tracer carries
`strides` in elements: the caller's strides for arguments, NumPy's rules for views
(`reshape_strides` is NumPy's no-copy reshape test), NumPy's order='K' layout for the
results of ufuncs and of copies that keep the layout (`keep_order`: `a.T * 2` is
F-contiguous, so its `reshape(-1)` is a copy), and C order for other new arrays.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from xlanb_runtime.ir import Node
from xlanb_runtime.ir import builder as B


def c_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a C-contiguous array."""
    strides, step = [], 1
    for n in reversed(tuple(shape)):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


def element_strides(array: np.ndarray) -> tuple[int, ...] | None:
    """The array's strides in elements (None when a stride is not a whole item)."""
    size = array.itemsize
    if size == 0 or any(s % size for s in array.strides):
        return None
    return tuple(s // size for s in array.strides)


def reshape_strides(shape: Sequence[int], strides: Sequence[int] | None,
                    new_shape: Sequence[int]) -> tuple[int, ...] | None:
    """Strides of `reshape(new_shape)` as a view, or None when NumPy would copy.

    NumPy's `_attempt_nocopy_reshape`: size-1 dims are dropped, then each group of old
    dims whose product equals a group of new dims must be contiguous within itself.
    """
    new_shape = tuple(int(n) for n in new_shape)
    if strides is None:
        return None
    if math.prod(shape) == 0:
        return c_strides(new_shape)
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    dims, olds = [n for n, _ in old], [s for _, s in old]
    new_strides = [0] * len(new_shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new_shape) and oi < len(dims):
        np_, op = new_shape[ni], dims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new_shape[nj]
                nj += 1
            else:
                op *= dims[oj]
                oj += 1
        if any(olds[k] != dims[k + 1] * olds[k + 1] for k in range(oi, oj - 1)):
            return None
        new_strides[nj - 1] = olds[oj - 1]
        for nk in range(nj - 1, ni, -1):
            new_strides[nk - 1] = new_strides[nk] * new_shape[nk]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    last = new_strides[ni - 1] if ni >= 1 else 1
    for nk in range(ni, len(new_shape)):
        new_strides[nk] = last
    return tuple(new_strides)


def is_contiguous(shape: Sequence[int], strides: Sequence[int] | None,
                  axes: Sequence[int]) -> bool:
    """Whether the elements, read with `axes` from outer to inner, lie one after the other
    in memory (positive unit steps; size-1 axes do not count; empty arrays are): NumPy's
    C_CONTIGUOUS (`axes` in order), F_CONTIGUOUS (reversed) and ravel('K')'s view test."""
    if strides is None:
        return False
    if math.prod(shape) == 0:
        return True
    step = 1
    for d in reversed(tuple(axes)):
        if shape[d] != 1:
            if strides[d] != step:
                return False
            step *= shape[d]
    return True


def keep_order(shape: Sequence[int], operand_strides: Sequence[Sequence[int]]) -> tuple:
    """The axes, outer to inner, in which NumPy's iterator walks operands of these element
    strides for order='K' (npyiter_find_best_axis_ordering, strides not negated): a stable
    insertion sort by decreasing |stride| where a zero stride or a size-1 axis decides
    nothing, and operands that disagree keep C order.  ravel('K') reads in this order and
    a ufunc lays out its result in it."""
    ndim = len(shape)
    strides = [[0 if shape[d] == 1 else s[d] for d in range(ndim)] for s in operand_strides]

    def swap(j0: int, j1: int) -> bool | None:
        return _vote((s[j0], s[j1]) for s in strides if s[j0] != 0 and s[j1] != 0)
    # the iterator's axes: innermost first
    return tuple(reversed(_insertion_sort(list(range(ndim - 1, -1, -1)), swap)))


def concatenated_order(shapes: Sequence[Sequence[int]],
                       operand_strides: Sequence[Sequence[int]]) -> tuple:
    """The axes, outer to inner, of np.concatenate's result from operands of these shapes
    and element strides (PyArray_CreateMultiSortedStridePerm): keep_order's stable
    insertion sort, but from C order by decreasing |stride|, where an axis of size 1 in an
    operand decides nothing for it."""
    def swap(j0: int, j1: int) -> bool | None:
        return _vote((s[j1], s[j0]) for shape, s in zip(shapes, operand_strides)
                     if shape[j0] != 1 and shape[j1] != 1)
    return tuple(_insertion_sort(list(range(len(shapes[0]))), swap))


def _vote(pairs) -> bool | None:
    """NumPy's stride comparison of two axes over the operands that have both, as
    (stride of the axis being placed, stride of the one it may pass): None where no
    operand decides, else whether it passes (the first operand that says so, unless a
    later one disagrees)."""
    decided, swap = False, False
    for placed, other in pairs:
        if abs(other) <= abs(placed):
            swap = False
        elif not decided:
            swap = True
        decided = True
    return swap if decided else None


def _insertion_sort(perm: list, swap) -> list:
    """NumPy's stable insertion sort of axes: `swap(j0, j1)` says whether axis j0 moves
    before j1 (None: undecided, look further back)."""
    for i0 in range(1, len(perm)):
        j0, ipos = perm[i0], i0
        for i1 in range(i0 - 1, -1, -1):
            moves = swap(j0, perm[i1])
            if moves is None:
                continue
            if not moves:
                break
            ipos = i1
        if ipos != i0:
            perm[ipos + 1:i0 + 1] = perm[ipos:i0]
            perm[ipos] = j0
    return perm


def strides_in_order(shape: Sequence[int], axes: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a new contiguous array whose axes lie outer to inner as `axes`."""
    strides, step = [0] * len(shape), 1
    for d in reversed(tuple(axes)):
        strides[d] = step
        step *= max(int(shape[d]), 1)
    return tuple(strides)


def broadcast_strides(shape: Sequence[int], operand_shape: Sequence[int],
                      strides: Sequence[int]) -> tuple[int, ...]:
    """An operand's element strides broadcast to `shape` (a stretched axis steps by 0)."""
    pad = len(shape) - len(operand_shape)
    return (0,) * pad + tuple(0 if n == 1 else s for n, s in zip(operand_shape, strides))


def overlaps_itself(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether two elements may share memory (in any unit): True unless, with the axes of
    more than one element sorted by |stride|, each stride steps over everything the inner
    axes span (NumPy's arrays and views always do; `as_strided` may not).  An empty
    array has no elements to share (NumPy gives np.zeros((0, 3)) strides (0, 0))."""
    if 0 in tuple(shape):
        return False
    span = 0
    for n, s in sorted(((n, abs(s)) for n, s in zip(shape, strides) if n > 1),
                       key=lambda item: item[1]):
        if s <= span:
            return True
        span += s * (n - 1)
    return False

class ViewStep:
    """One step of a view chain: how to read the child from its parent, and write it back."""

    def read(self, parent: Node) -> Node:
        raise NotImplementedError

    def write(self, parent: Node, child: Node) -> Node:
        """The parent's new node once the child holds `child` (same shape and dtype)."""
        raise NotImplementedError

    def apply(self, array: np.ndarray) -> np.ndarray:
        """The same view of a concrete array (to return the caller's own memory)."""
        raise NotImplementedError

    def expression(self, base: str, name: str) -> tuple[str, object]:
        """`apply` as Python source for generated code (the call guard's): the expression
        taking the view of `base`, reading the value it returns under `name`."""
        return f"{name}.apply({base})", self

    def strides(self, shape: tuple[int, ...], strides) -> tuple[int, ...] | None:
        raise NotImplementedError


@dataclass(frozen=True)
class IndexStep(ViewStep):
    """Basic indexing: ints, slices (any step), None and Ellipsis."""
    key: tuple
    plan: object                       # indexing._Plan with no advanced entries

    def read(self, parent):
        from .lowering.indexing import basic_read
        return basic_read(parent, self.plan)

    def write(self, parent, child):
        from .lowering.indexing import basic_update
        return basic_update(parent, self.plan, child)

    def apply(self, array):
        # a view, as the traced step is: `x[1, 2, ...]` is a 0-d view where `x[1, 2]` would
        # be a scalar copy (a trailing Ellipsis changes nothing else)
        return array[self._view_key()]

    def _view_key(self) -> tuple:
        return self.key if Ellipsis in self.key else self.key + (Ellipsis,)

    def expression(self, base, name):
        return f"{base}[{name}]", self._view_key()

    def strides(self, shape, strides):
        if strides is None:
            return None
        out, dim = [], 0
        for k in self.key:
            if k is None:
                out.append(0)
                continue
            if isinstance(k, slice):
                out.append(strides[dim] * k.indices(shape[dim])[2])
            dim += 1
        return tuple(out)


@dataclass(frozen=True)
class TransposeStep(ViewStep):
    perm: tuple[int, ...]

    def read(self, parent):
        return B.transpose(parent, self.perm)

    def write(self, parent, child):
        return B.transpose(child, list(np.argsort(self.perm)))

    def apply(self, array):
        return array.transpose(self.perm)

    def expression(self, base, name):
        return f"{base}.transpose({name})", self.perm

    def strides(self, shape, strides):
        return None if strides is None else tuple(strides[p] for p in self.perm)


@dataclass(frozen=True)
class ReshapeStep(ViewStep):
    shape: tuple[int, ...]

    def read(self, parent):
        return B.reshape(parent, self.shape)

    def write(self, parent, child):
        return B.reshape(child, parent.shape)

    def apply(self, array):
        return array.reshape(self.shape)

    def expression(self, base, name):
        return f"{base}.reshape({name})", self.shape

    def strides(self, shape, strides):
        return reshape_strides(shape, strides, self.shape)


def read_through(root: Node, steps: Sequence[ViewStep]) -> Node:
    for step in steps:
        root = step.read(root)
    return root


def write_through(root: Node, steps: Sequence[ViewStep], value: Node) -> Node:
    """The root's new node after the view reached by `steps` is set to `value`."""
    parents = [root]
    for step in steps[:-1]:
        parents.append(step.read(parents[-1]))
    for step, parent in zip(reversed(steps), reversed(parents)):
        value = step.write(parent, value)
    return value


def place_flat(flat: Node, index: np.ndarray, values: Node) -> Node:
    """`flat` (1-D) with `values` written at the distinct positions `index` (same shape)."""
    hit = np.zeros(flat.shape, dtype=bool)
    hit[index.reshape(-1)] = True
    zeros = B.broadcast(B.constant(np.zeros((), flat.dtype)), flat.shape)
    placed = B.scatter_add(zeros, B.constant(index), values, 0)
    return B.select(B.constant(hit), placed, flat)


def apply_steps(array: np.ndarray, steps: Sequence[ViewStep]) -> np.ndarray:
    for step in steps:
        array = step.apply(array)
    return array


@dataclass(frozen=True)
class PartStep(ViewStep):
    """`z.real` / `z.imag` of a complex array: a strided view of every other float."""
    part: str                          # "real" or "imag"

    def read(self, parent):
        from xlanb_runtime.ir import Op
        return B.unary(Op.REAL if self.part == "real" else Op.IMAG, parent)

    def write(self, parent, child):
        from xlanb_runtime.ir import Op
        kept = B.unary(Op.IMAG if self.part == "real" else Op.REAL, parent)
        child = B.convert(child, kept.dtype)
        real, imag = (child, kept) if self.part == "real" else (kept, child)
        return B.binary(Op.COMPLEX, real, imag)      # exact parts (no inf * 0j -> nan)

    def apply(self, array):
        return getattr(array, self.part)

    def strides(self, shape, strides):
        return None if strides is None else tuple(2 * s for s in strides)


@dataclass(frozen=True)
class BitcastStep(ViewStep):
    """`x.view(dtype)` of the same itemsize: the same bytes read as another dtype."""
    dtype: np.dtype
    source: np.dtype

    def read(self, parent):
        return B.bitcast(parent, self.dtype)

    def write(self, parent, child):
        return B.bitcast(child, self.source)

    def apply(self, array):
        return array.view(self.dtype)

    def strides(self, shape, strides):
        return strides                  # the same itemsize: the same element strides


def _root_of(tracer):
    return tracer if tracer.root is None else tracer.root


def _repeated(value, shape):
    """NumPy's flatiter assignment: the values, in C order, repeated cyclically (or cut)
    to fill the selected elements (`x.flat[:6] = [1, 2]` writes 1, 2, 1, 2, 1, 2)."""
    from .tracer import Tracer
    if not isinstance(value, Tracer):
        try:
            value = np.asarray(value)
        except Exception:                 # a list holding traced values: as given
            return value
    count, size = math.prod(shape), math.prod(value.shape)
    if shape == () and size > 1:
        raise ValueError("Error setting single item of array.")
    if size in (0, 1) or (size == count and value.ndim <= 1):
        return value if size == count or size <= 1 else np.reshape(value, shape)
    return np.reshape(np.ravel(value)[np.arange(count) % size], shape)


class FlatIterator:
    """`x.flat` of a traced array: its elements in C order, read by index (static or
    traced), iterated, or written (`x.flat[i] = v` changes x, as NumPy's flatiter does,
    whatever x's layout: the whole array is rewritten from its updated flat copy)."""
    __slots__ = ("base",)

    def __init__(self, base):
        self.base = base

    def _flat(self):
        return self.base.reshape(-1)

    def __len__(self) -> int:
        return self.base.size

    def __getitem__(self, key):              # NumPy's flatiter reads copies, never views
        return self._flat()[key].copy()

    def __setitem__(self, key, value) -> None:
        from .tracer import Tracer
        if isinstance(value, Tracer) and value.size > 1 and \
                _root_of(value) is _root_of(self.base):
            from ..errors import AliasingError
            from .tracer import user_location
            raise AliasingError("`x.flat[...] = v` with v a view of x: NumPy's flat iterator "
                                "reads v while it writes x (x.flat[1:5] = x[0, :4] smears "
                                "x[0, 0]), so the result depends on the order of the writes",
                                location=user_location(), hint="assign a copy: `v.copy()`")
        flat = self._flat().copy()
        if np.size(value) > 1:           # (a mask's count is data-dependent: no cycling)
            value = _repeated(value, flat[key].shape)
        flat[key] = value
        self.base[...] = flat.reshape(self.base.shape)

    def __iter__(self):
        return iter(self._flat().copy())

    def copy(self):
        return self._flat().copy()
