"""The NumPy boundary of a compiled call: aliased arguments in, written arguments out.

Inside, a compiled program is a pure function.  At its boundary a call must leave the
caller's world as NumPy would:

* **Aliasing in.** Arguments that share memory (`f(A, A)`, `f(A[1:], A[:-1])`) are found at
  call time by their memory owner (`ndarray.base`), which costs two attribute reads per
  argument when nothing is shared.  Distinct arrays that own their data cannot overlap; an
  argument whose memory belongs to something else (`np.frombuffer`, `as_strided`, ctypes,
  `__array_interface__` wrappers: their `base` is not the array owning the bytes) is
  compared by address with every other argument.  The same array twice becomes one traced
  array (`a is b` inside, as in NumPy); overlapping views become views of one flat
  parameter (the owner's memory) through a `StridedStep`, so a write through one is seen
  through the other.  The pattern, with each view's offset and strides in the flat memory
  (baked into the program), is part of the signature (`AliasPlan.key`).
* **Writes out.** `Traced.writebacks` names the parameters whose root was written; the
  call copies their final values into the caller's arrays (`finish_call`), and only those.
  The program may have written a value straight into its argument (its output is then the
  argument itself, nothing to copy: runtime buffers.py `_write_back_in_place`), so
  read-only arguments are refused before the program runs (`check_writeable`).
* **Arguments returned.** Where the function returns an argument or a view of one, the
  caller gets that same object, or the same view of its memory (`Traced.arg_outputs`); an
  array returned twice, or with a view of it, comes back as one array and its view.
* **Layouts out.** A returned array of two or more dims comes in NumPy's memory order as
  the trace models it (`Traced.output_orders`: as np.ascontiguousarray, np.asfortranarray
  or `copy(order=)` ask; K-order results of ufuncs on transposed inputs; C for the rest:
  reductions, matmul), so that the caller's `y.reshape(-1)` is a view where NumPy's is and
  C code handed `np.ascontiguousarray(y)` reads it in order.  Kernels write C order; a
  program may return a transpose of a buffer as a view (`output_relayouts` names the
  outputs to look at from the executable's `returned_views`, which a program record
  keeps: reading its optimized graph would compile a cached program again; `laid_out`
  copies one into NumPy's order where it differs).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from xlanb_runtime.ir import Node
from xlanb_runtime.ir import builder as B

from ..errors import AliasingError, ReadOnlyArrayError
from .datetimes.boundary import as_counts, as_time_outputs
from .views import ViewStep, apply_steps, is_contiguous, place_flat


@dataclass(frozen=True)
class ArgOutput:
    """An output that is the caller's leaf `leaf` itself, a view (`steps`) of param `param`,
    or the array returned at output index `output` (`return y, y`) or a view of it
    (`return y, y[1:]`), as NumPy returns them."""
    leaf: int | None = None
    param: int | None = None
    steps: tuple = ()
    output: int | None = None


# -- aliasing ---------------------------------------------------------------------------------

def _owner(array: np.ndarray):
    base = array.base
    return array if base is None else base


def _owns_data(owner) -> bool:
    """True for an array that allocated its memory: no array outside its views sees it.
    NumPy collapses a view's `base` to such an array, but stops at a buffer that is not
    one (a memoryview, as_strided's DummyArray, a ctypes object), so arrays over the same
    bytes can then have different `base` objects."""
    return isinstance(owner, np.ndarray) and owner.flags.owndata


def _root(array: np.ndarray) -> np.ndarray:
    """The outermost ndarray on `array`'s chain of bases (`m` for `np.frombuffer(b)[1:]`)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


@dataclass(frozen=True)
class AliasPlan:
    """How array leaves that share memory enter the trace.

    `same[i] = j`: leaf i is the very same array as leaf j (j < i).  `groups`: lists of
    leaves that overlap without being identical; each group is one flat parameter.
    `layouts`: per group, the flat memory's size and each member's (offset, strides) in it,
    which the program bakes in (None where the trace refuses the group).
    """
    same: dict
    groups: tuple[tuple[int, ...], ...]
    layouts: tuple = ()

    @property
    def key(self) -> tuple:
        return (tuple(sorted(self.same.items())), self.groups, self.layouts)


def _data_pointer(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _identical(a: np.ndarray, b: np.ndarray) -> bool:
    return (a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype
            and _data_pointer(a) == _data_pointer(b))


def find_aliases(leaves: Sequence) -> AliasPlan | None:
    """None when no two array leaves share memory (the common, cheap case)."""
    seen = set()
    for leaf in leaves:
        if isinstance(leaf, np.ndarray):
            base = leaf.base                          # (inlined: this runs every call)
            owner = leaf if base is None else base
            if id(owner) in seen or not (isinstance(owner, np.ndarray) and
                                         owner.flags.owndata):
                return _alias_plan(leaves)
            seen.add(id(owner))
    return None


def _alias_plan(leaves: Sequence) -> AliasPlan | None:
    arrays = [i for i, leaf in enumerate(leaves) if isinstance(leaf, np.ndarray)]
    same, groups = {}, []
    for group in _overlap_groups(leaves, arrays):
        first = group[0]
        if all(_identical(leaves[first], leaves[i]) for i in group[1:]):
            same.update({i: first for i in group[1:]})
        else:
            groups.append(tuple(group))
    if not same and not groups:
        return None
    return AliasPlan(same, tuple(groups), tuple(_group_layout(leaves, g) for g in groups))


def _overlap_groups(leaves: Sequence, indices: list[int]) -> list[list[int]]:
    """Connected groups (size >= 2) of the array leaves `indices` whose memory ranges may
    overlap: views of one owner, or anything and an array whose owner is not known."""
    parent = {i: i for i in indices}
    owners = {i: _owner(leaves[i]) for i in indices}
    known = {i: _owns_data(owners[i]) for i in indices}

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    for n, a in enumerate(indices):
        for b in indices[n + 1:]:
            if known[a] and known[b] and owners[a] is not owners[b]:
                continue                    # two allocations: disjoint
            if leaves[a].size and leaves[b].size and \
                    np.may_share_memory(leaves[a], leaves[b]):
                parent[find(b)] = find(a)
    groups: dict[int, list[int]] = {}
    for k in indices:
        groups.setdefault(find(k), []).append(k)
    return [g for g in groups.values() if len(g) > 1]


def _group_layout(leaves: Sequence, group: tuple[int, ...]) -> tuple | None:
    """(flat size, each member's (offset, strides)): what the traced program bakes in for
    a group, so a call whose views sit elsewhere in the owner's memory traces again."""
    try:
        flat = flat_memory(leaves[group[0]])
        steps = [strided_step(flat, leaves[i]) for i in group]
    except AliasingError:
        return None                 # the trace raises it, naming the user's line
    return (flat.size, tuple((s.offset, s.elem_strides) for s in steps))


def flat_memory(array: np.ndarray) -> np.ndarray:
    """The whole memory of `array`'s owner, as a 1-D array of its dtype (a view)."""
    owner = _root(array)
    if owner.dtype != array.dtype or \
            not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        raise AliasingError("arguments share memory with different dtypes or through a "
                            "buffer that is not a contiguous NumPy array",
                            hint="pass copies of the overlapping arguments")
    return owner.ravel(order="K")


@dataclass(frozen=True)
class StridedStep(ViewStep):
    """A view of a flat parameter at element `offset` with element `strides` (aliasing)."""
    offset: int
    shape: tuple[int, ...]
    elem_strides: tuple[int, ...]

    def _indices(self) -> np.ndarray:
        index = np.full(self.shape, self.offset, dtype=np.int64)
        for axis, (n, s) in enumerate(zip(self.shape, self.elem_strides)):
            coords = np.arange(n, dtype=np.int64) * s
            index += coords.reshape((n,) + (1,) * (len(self.shape) - axis - 1))
        return index

    def read(self, parent: Node) -> Node:
        return B.gather(parent, B.constant(self._indices()), 0)

    def write(self, parent: Node, child: Node) -> Node:
        index = self._indices()
        if np.unique(index).size != index.size:
            raise AliasingError("a write through an argument whose elements overlap "
                                "each other (zero or overlapping strides)",
                                hint="pass a copy of that argument")
        return place_flat(parent, index, child)

    def apply(self, array: np.ndarray) -> np.ndarray:
        size = array.itemsize
        return np.lib.stride_tricks.as_strided(
            array[self.offset:], self.shape, tuple(s * size for s in self.elem_strides))

    def strides(self, shape, strides):
        return self.elem_strides


def strided_step(flat: np.ndarray, array: np.ndarray) -> StridedStep:
    if array.dtype != flat.dtype:
        raise AliasingError(f"arguments share memory as different dtypes ({flat.dtype} and "
                            f"{array.dtype})", hint="pass a copy of one of them")
    size = array.itemsize
    offset = _data_pointer(array) - _data_pointer(flat)
    if offset % size or any(s % size for s in array.strides):
        raise AliasingError("overlapping arguments are not aligned to whole elements",
                            hint="pass copies of the overlapping arguments")
    step = StridedStep(offset // size, array.shape, tuple(s // size for s in array.strides))
    extent = [(n - 1) * s for n, s in zip(step.shape, step.elem_strides)]
    low = step.offset + sum(e for e in extent if e < 0)
    high = step.offset + sum(e for e in extent if e > 0)
    if array.size and not 0 <= low <= high < flat.size:
        raise AliasingError("overlapping arguments are views of different NumPy arrays "
                            "over one buffer",
                            hint="pass copies of the overlapping arguments")
    return step


# -- the call ---------------------------------------------------------------------------------

def call_params(traced, leaves: Sequence) -> list:
    """The arrays a compiled program takes, from the caller's flattened arguments
    (datetime64/timedelta64 ones as their int64 counts, Fortran-ordered and other non-C
    contiguous ones transposed into C order: views, so writes reach them)."""
    if not traced.flat_params and not traced.scalar_params and not traced.time_params and \
            not traced.transposed_params:
        return [leaves[i] for i in traced.param_leaves]
    return [flat_memory(leaves[i]) if p in traced.flat_params else
            np.asarray(leaves[i]) if p in traced.scalar_params else
            as_counts(leaves[i]) if p in traced.time_params else
            leaves[i].transpose(traced.transposed_params[p]) if p in traced.transposed_params
            else leaves[i]
            for p, i in enumerate(traced.param_leaves)]


def distinct_outputs(outs: list, count: int) -> list:
    """The first `count` outputs with no array object given twice: a program returns one
    buffer for outputs that compute the same value (`a // b` and `np.divmod(a, b)[0]`), where
    NumPy returns two arrays, and a write into one must not change the other."""
    seen: set = set()
    for i in range(count):
        out = outs[i]
        if isinstance(out, np.ndarray):
            if id(out) in seen:
                outs[i] = out.copy()
            else:
                seen.add(id(out))
    return outs


def check_writeable(traced, params: Sequence) -> None:
    """NumPy's error for a write into a read-only argument, raised before anything is
    written (a program may write an argument in place as it runs, buffers.py)."""
    for p, _ in traced.writebacks:
        if not params[p].flags.writeable:
            raise ReadOnlyArrayError("assignment destination is read-only",
                                     op_name=f"argument {traced.param_leaves[p]}",
                                     hint="pass a writeable array, or copy it first")


def finish_call(traced, params: Sequence, leaves: Sequence, outs: list) -> list:
    """Write back what the program changed, then return the caller's own objects."""
    distinct_outputs(outs, traced.out_tree.num_leaves)
    if traced.writebacks:
        check_writeable(traced, params)
        for p, o in traced.writebacks:
            if outs[o] is not params[p]:          # else written in place (buffers.py)
                np.copyto(params[p], outs[o], casting="unsafe")
    for index, source in traced.arg_outputs.items():
        if source.leaf is not None:
            outs[index] = leaves[source.leaf]
        elif source.output is not None:
            outs[index] = apply_steps(outs[source.output], source.steps)
        else:
            outs[index] = apply_steps(params[source.param], source.steps)
    for index, value in traced.const_outputs.items():
        outs[index] = value
    as_time_outputs(traced.time_outputs, outs)
    as_scalars(traced.scalar_outputs, outs)
    for index in traced.bytes_outputs:             # `return x.tobytes()`: NumPy's bytes
        outs[index] = np.asarray(outs[index]).tobytes()
    return outs


def as_scalars(scalar_outputs: dict, outs: list) -> list:
    """0-d outputs NumPy returns as scalars: np.float64 & co. (`x[()]`), or Python numbers
    for `x.item()` (`Traced.scalar_outputs`)."""
    for index, kind in scalar_outputs.items():
        value = outs[index]
        if isinstance(value, np.ndarray):   # not the caller's own number, returned as is
            outs[index] = value.item() if kind == "python" else value[()]
    return outs


def output_relayouts(traced, executable) -> dict[int, tuple[int, ...]]:
    """{output index: NumPy's axes order} for the outputs `executable` may return in
    another memory layout: a view (`returned_views`: a transpose of a buffer) or an order
    other than the C order its kernels write; every output with an order where the
    executable does not say.  `laid_out` checks those, and only those, per call."""
    views = getattr(executable, "returned_views", None)
    return {i: order for i, order in traced.output_orders.items()
            if views is None or i in views or order != tuple(range(len(order)))}


def laid_out(outs: list, relayouts: dict[int, tuple[int, ...]]) -> list:
    """`outs` with each output of `relayouts` in NumPy's memory order (a copy where the
    program's array lies otherwise)."""
    for i, order in relayouts.items():
        value = outs[i]
        if isinstance(value, np.ndarray) and not _in_order(value, order):
            outs[i] = _copy_in_order(value, order)
    return outs


def _copy_in_order(value: np.ndarray, order: tuple[int, ...]) -> np.ndarray:
    if order == tuple(range(value.ndim)):         # a transposed matrix: a tiled copy
        from xlanb_runtime.codegen.transpose import c_ordered
        return c_ordered(value)
    if order == tuple(reversed(range(value.ndim))):
        return np.asfortranarray(value)
    ordered = np.empty([value.shape[d] for d in order], value.dtype)
    ordered = ordered.transpose(np.argsort(order))
    ordered[...] = value
    return ordered


def _in_order(value: np.ndarray, order: tuple[int, ...]) -> bool:
    if order == tuple(range(value.ndim)):
        return value.flags.c_contiguous
    itemsize = value.itemsize
    if any(s % itemsize for s in value.strides):
        return False
    return is_contiguous(value.shape, [s // itemsize for s in value.strides], order)
