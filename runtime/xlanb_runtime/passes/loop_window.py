"""Windows for `loop-reroll`: loop copies whose slices grow or shrink with the trip roll into
one body that works on a fixed-size window and masks the lanes past the trip's length.

`for i: C[i, :i + 1] *= beta` traces into copies that differ in a shape (the row's width
counts with i), so no one body fits them all.  The copies' ops, wiring and arguments are
alike, and every shape that changes does so by a fixed step per trip (a dim of length
n = first + trip * step).  The body then holds each such dim at its largest length W (the
window) and knows which lanes are the trip's:

    copy i:  %s = slice(%C), ((i, i+1, 1), (0, i+1, 1))      : f64[1, i+1]
             %m = multiply(%s, beta)                          : f64[1, i+1]
             %p = pad(%m, 0), ((i, N-1-i, 0), (0, N-1-i, 0))  : f64[N, N]
    body:    %s = dynamic-slice(%C, trip, 0), sizes=(1, N)    : f64[1, N]   lanes [0, trip+1)
             %m = multiply(%s, beta)                          : f64[1, N]   lanes [0, trip+1)
             %v = select(iota < trip+1, %m, dynamic-slice(%C, trip, 0))
             %w = select(dynamic-pad(true[1, N], trip, 0), dynamic-pad(%v, trip, 0), %C)

A window is aligned low (the trip's lanes are [0, n): `x[a:a+n]`, the window starts at a) or
high (lanes [W - n, W): `x[b-n:b]`, the window ends at b), so that it stays inside the
array; a broadcast scalar holds a value in every lane.  Elementwise ops keep their
operands' lanes (operands must agree); a reduction or a vector dot over a windowed dim
first replaces the other lanes by the identity (0 for sums and dots), since they may hold
anything (inf * 0 is nan), and the dot becomes a multiply and a sum that fuse into one
loop; so does a vector by a matrix whose free dim is windowed (`data[:, i] @ data[:, i+1:]`:
the lanes past the trip's hold sums of other columns, which no write keeps); a write
(`x[a:b] = v` lowers to pads and a select) writes the whole window, x's own values in the
lanes past the trip's, in the form of a static region update.  Anything else on a windowed
value (a matrix-by-matrix dot: a BLAS call per trip; a reshape that merges dims, a gather,
a nested loop) refuses the loop, as does a windowed value that the loop carries or
returns.  What it costs: each trip works on W lanes where NumPy works on n, about twice the
work over a triangular loop, and each write makes its array anew (no dynamic region is
updated in place yet): it pays where NumPy's per-call overhead is most of its time
(npbench syr2k, symm, trisolv), and barely where the array written is large beside the
trip's work (syrk: 4,900 elements made anew for a row of at most 70).  Where a trip's
work is large it loses the factor of two: npbench correlation and covariance (S: a
600-row vector-by-matrix product per trip, 500 windowed columns) ran at about 0.45x
NumPy rolled, whose BLAS call reads only the trip's columns; such a dot now stays
unrolled here, and loop_to_matmul.py, run first, makes those two loops one product.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import builder as B
from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE, Op


# The widest window a trip's lanes may be widened to regardless of their own width (see
# WindowBuilder._widest): a few microseconds of masked lanes per trip at most.
MAX_WIDE_WINDOW = 4096


class NotWindowed(Exception):
    """The loop's copies differ in a way a window cannot express."""


@dataclass(frozen=True)
class Extent:
    """A dim whose length counts with the trip: n = first + trip * step lanes of W."""
    align: str                  # "low": lanes [0, n); "high": [W - n, W); "all": every lane
    first: int = 0
    step: int = 0
    window: int = 0


def shape_steps(order, start: int, period: int, trips: int) -> tuple[dict, int]:
    """Offsets whose shape changes with the trip: offset -> (shape in copy 0, steps per
    trip), and the copies (up to `trips`) over which every change is steady."""
    steps: dict[int, tuple] = {}
    for offset in range(period):
        node = order[start + offset]
        if node.op in (Op.SLICE, Op.PAD):       # where it reads or writes must count too
            trips = min(trips, _steady(order, start, period, trips, offset, _bounds))
        first = node.shape
        step = tuple(b - a for a, b in zip(first, order[start + period + offset].shape))
        if any(step):
            trips = min(trips, _steady(order, start, period, trips, offset, _shape))
            steps[offset] = (first, step)
    return steps, trips


def _bounds(node: Node) -> list[int]:
    return [b for bounds in node.arg for b in bounds[:2]]


def _shape(node: Node) -> tuple[int, ...]:
    return node.shape


def _steady(order, start: int, period: int, trips: int, offset: int, values) -> int:
    """The copies over which `values(node)` at `offset` is first + copy * step."""
    first = values(order[start + offset])
    step = [b - a for a, b in zip(first, values(order[start + period + offset]))]
    for copy in range(2, trips):
        got = values(order[start + copy * period + offset])
        if any(v != f + copy * d for v, f, d in zip(got, first, step)):
            return copy
    return trips


def window_shape(first, step, trips: int) -> tuple[int, ...]:
    """Each dim at its largest length over the trips."""
    return tuple(max(f, f + (trips - 1) * d) for f, d in zip(first, step))


class WindowBuilder:
    """Builds the body nodes of a windowed loop, one template (copy 0) at a time, keeping
    each built node's extents (per dim: an Extent, or None where the dim is whole)."""

    def __init__(self, order, start: int, period: int, trips: int, steps: dict, trip: Node,
                 place=None, wide: bool = False, still: dict | None = None):
        self.order, self.start, self.period, self.trips = order, start, period, trips
        self.steps, self.trip = steps, trip
        self.still = still or {}    # offset -> dims windowed though still in this loop
        self.place = place      # first -> the body's int64 parameter holding it, or None
        self.widths = self._widest() if wide else {}
        self.extents: dict[int, tuple] = {}           # id(built node) -> extents
        self.pads: dict[int, tuple] = {}              # id(windowed pad) -> how it was made
        self.updates: dict[int, tuple] = {}           # id(window write) -> where, base

    def touches(self, offset: int, template: Node, inputs: list[Node]) -> bool:
        """Whether the node at `offset` is the window's business: its shape changes, or
        an input is windowed or a windowed write's pad."""
        return offset in self.steps or offset in self.still or \
            any(self._windowed(i) or id(i) in self.pads for i in inputs)

    def build(self, offset: int, template: Node, inputs: list[Node]) -> Node:
        op = template.op
        if op in ELEMENTWISE:
            return self._elementwise(template, inputs)
        handler = {Op.SLICE: self._slice, Op.PAD: self._pad, Op.BROADCAST: self._broadcast,
                   Op.RESHAPE: self._reshape, Op.TRANSPOSE: self._transpose,
                   Op.REDUCE: self._reduce, Op.DOT: self._dot,
                   Op.REVERSE: self._reverse}.get(op)
        if handler is None:
            raise NotWindowed(f"{op.value} on a windowed value")
        return handler(offset, template, inputs)

    # -- extents ---------------------------------------------------------------------------

    def _windowed(self, node: Node) -> bool:
        return any(e is not None for e in self._of(node))

    def _of(self, node: Node) -> tuple:
        return self.extents.get(id(node), (None,) * node.ndim)

    def _keep(self, node: Node, extents) -> Node:
        self.extents[id(node)] = tuple(extents)
        return node

    def _shape(self, offset: int, template: Node) -> tuple[int, ...]:
        if offset in self.still:
            return tuple(self.widths.get((n, 0), n) if d in self.still[offset] else n
                         for d, n in enumerate(template.shape))
        if offset not in self.steps:
            return template.shape
        first, step = self.steps[offset]
        return tuple(self.widths.get((f, d), w) if d else w
                     for f, d, w in zip(first, step, window_shape(first, step, self.trips)))

    def _widest(self) -> dict[tuple[int, int], int]:
        """Per length first + trip * step that a slice reads: the widest window every such
        slice fits (`A[i, :j]`: the whole row), where that costs at most twice the
        trip's widest lanes or MAX_WIDE_WINDOW lanes.  A window that does not depend on
        the trip count lets the inner loops of a triangular nest (`for i: for j in
        range(i)`) have one body, and the loop around them roll."""
        widths: dict[tuple[int, int], int] = {}
        last = self.trips - 1
        shapes = {**self.steps, **{offset: (self.order[self.start + offset].shape, (0,) * len(
            self.order[self.start + offset].shape)) for offset in self.still}}
        for offset, (first, step) in shapes.items():
            node = self.order[self.start + offset]
            if node.op is not Op.SLICE:
                continue
            try:
                starts, ds = self._linear(offset, lambda n: [a for a, _, _ in n.arg])
                limits, de = self._linear(offset, lambda n: [b for _, b, _ in n.arg])
            except NotWindowed:
                continue
            for d, dim in enumerate(node.inputs[0].shape):
                if not step[d] and d not in self.still.get(offset, ()):
                    continue
                fits = max(dim - max(starts[d], starts[d] + last * ds[d]),
                           min(limits[d], limits[d] + last * de[d]))
                key = (first[d], step[d])
                widths[key] = min(widths.get(key, fits), fits)
        for (first, step), fits in widths.items():
            widest = max(first, first + last * step)
            if fits > max(2 * widest, MAX_WIDE_WINDOW):
                widths[(first, step)] = widest
        return widths

    def _linear(self, offset: int, values) -> tuple[list[int], list[int]]:
        """Per-copy integer tuples `values(node)` as (first, step), checked steady over
        every trip."""
        nodes = [self.order[self.start + c * self.period + offset] for c in range(self.trips)]
        first, second = values(nodes[0]), values(nodes[1])
        step = [b - a for a, b in zip(first, second)]
        for copy, node in enumerate(nodes[2:], start=2):
            if any(v != f + copy * d for v, f, d in zip(values(node), first, step)):
                raise NotWindowed("a place that does not move steadily")
        return list(first), step

    def _count(self, first: int, step: int) -> Node:
        """first + trip * step, an int64 trip quantity.  A fresh node at each use: one
        node shared by several writes and reads split their fusion (syrk: 15 kernels
        where 8 did, 0.88x NumPy where 1.03-1.12x)."""
        if self.place is not None:          # a loop input (loop_body `_first_place_keys`)
            base = self.place(first)
            if not step:
                return base
            return B.binary(Op.ADD, base,
                            B.binary(Op.MUL, self.trip, B.constant(np.int64(step))))
        if not step:
            return B.constant(np.int64(first))
        moved = B.binary(Op.MUL, self.trip, B.constant(np.int64(step)))
        return B.binary(Op.ADD, B.constant(np.int64(first)), moved) if first else moved

    def _mask(self, shape, extents, dims=None, align_all=None) -> Node | None:
        """Where the trip's lanes are (pred, `shape`), over windowed dims (`dims`: only
        those; a dim whose every lane holds the value counts its first n lanes, or its last
        where `align_all` says "high"); None where there is no windowed dim."""
        mask = None
        for d, extent in enumerate(extents):
            if extent is None or (dims is not None and d not in dims):
                continue
            lane = B.iota(shape, np.int64, d)
            n = self._count(extent.first, extent.step)
            align = extent.align if extent.align != "all" else (align_all or {}).get(d, "low")
            if align == "low":
                part = B.binary(Op.LT, lane, B.broadcast(n, shape, ()))
            else:
                edge = B.binary(Op.SUB, B.constant(np.int64(extent.window)), n)
                part = B.binary(Op.GE, lane, B.broadcast(edge, shape, ()))
            mask = part if mask is None else B.binary(Op.AND, mask, part)
        return mask

    def _masked(self, x: Node, fill, dims=None, align_all=None) -> Node:
        """x with every lane outside the trip's set to `fill` (a scalar node or value)."""
        mask = self._mask(x.shape, self._of(x), dims, align_all)
        if mask is None:
            return x
        if not isinstance(fill, Node):
            fill = B.constant(fill, x.dtype)
        return B.select(mask, x, B.broadcast(fill, x.shape, ()))

    # -- ops -------------------------------------------------------------------------------

    def _elementwise(self, template: Node, inputs: list[Node]) -> Node:
        if template.op is Op.SELECT:
            update = self._region_update(template, inputs)
            if update is not None:
                return self._keep(update, [None] * update.ndim)
        merged = [None] * template.ndim
        seen = False
        for x in inputs:
            if x.ndim != template.ndim:
                continue                                  # a scalar operand
            of = self._of(x)
            merged = list(of) if not seen else [_merge(m, e) for m, e in zip(merged, of)]
            seen = True
        node = Node(template.op, inputs, inputs[-1].shape if inputs else template.shape,
                    template.dtype, template.arg, template.loc)
        if any(x.shape != node.shape for x in inputs if x.ndim == node.ndim):
            raise NotWindowed("operands of different windows")
        return self._keep(node, merged)

    def _slice(self, offset: int, template: Node, inputs: list[Node]) -> Node:
        x = inputs[0]
        if self._windowed(x) or any(step != 1 for _, _, step in template.arg):
            raise NotWindowed("a slice of a windowed or strided value")
        starts, start_steps = self._linear(offset, lambda n: [s for s, _, _ in n.arg])
        limits, limit_steps = self._linear(offset, lambda n: [e for _, e, _ in n.arg])
        shape = self._shape(offset, template)
        places, extents = [], []
        for d, size in enumerate(shape):
            s0, ds, e0, de = starts[d], start_steps[d], limits[d], limit_steps[d]
            if ds == de and size == e0 - s0:              # a whole or moving slice
                places.append(self._count(s0, ds))
                extents.append(None)
                continue
            extent = _fitting(x.shape[d], size, self.trips, e0 - s0, de - ds,
                              lows=(s0, ds), highs=(e0, de))
            low = (s0, ds) if extent.align == "low" else (e0 - size, de)
            places.append(self._count(*low))
            extents.append(extent)
        return self._keep(B.dynamic_slice(x, places, shape), extents)

    def _pad(self, offset: int, template: Node, inputs: list[Node]) -> Node:
        x, fill = inputs
        if offset in self.steps or offset in self.still or \
                any(interior for _, _, interior in template.arg):
            raise NotWindowed("a windowed or spread pad")
        lows, low_steps = self._linear(offset, lambda n: [lo for lo, _, _ in n.arg])
        highs, high_steps = self._linear(offset, lambda n: [hi for _, hi, _ in n.arg])
        where, align_all = [], {}
        for d, extent in enumerate(self._of(x)):
            size, out = x.shape[d], template.shape[d]
            if extent is None:
                where.append((lows[d], low_steps[d]))
                continue
            # the trip's lanes land on [low, out - high): the window's low or high edge
            fits_low = all(lows[d] + c * low_steps[d] + size <= out
                           for c in (0, self.trips - 1))
            fits_high = all(out - highs[d] - c * high_steps[d] - size >= 0
                            for c in (0, self.trips - 1))
            if extent.align != "high" and fits_low:
                where.append((lows[d], low_steps[d]))
                align_all[d] = "low"
            elif extent.align != "low" and fits_high:
                where.append((out - highs[d] - size, -high_steps[d]))
                align_all[d] = "high"
            else:
                raise NotWindowed("a window that does not fit where it is written")
        places = [self._count(*w) for w in where]
        padded = B.dynamic_pad(self._masked(x, fill, align_all=align_all), fill, places,
                               template.shape)
        self.pads[id(padded)] = (x, tuple(where), align_all)
        return padded

    def _region_update(self, template: Node, inputs: list[Node]) -> Node | None:
        """`x[a:b] = v` over a window, select(pad(mask), pad(v), x), as the region update
        of the whole window: select(dynamic-pad(all-true), dynamic-pad(v'), x) where v' is
        v in the trip's lanes and x's own values in the others (the form a static write
        has, which buffers.py can update in place); None where it is no such write."""
        mask, value, base = inputs
        if id(mask) not in self.pads or id(value) not in self.pads or self._windowed(base):
            return None
        (splat, where, _), (v, where_v, align_all) = self.pads[id(mask)], self.pads[id(value)]
        if where != where_v or _splat_true(splat) is not True or splat.shape != v.shape:
            return None
        earlier = self.updates.get(id(base))
        if earlier is not None and earlier[:2] == (where, v.shape):
            base = earlier[2]               # a write of the same window, overwritten whole
        places = [self._count(*w) for w in where]
        old = B.dynamic_slice(base, places, v.shape)
        lanes = self._mask(v.shape, self._of(v), align_all=align_all)
        kept = v if lanes is None else B.select(lanes, v, old)
        true = B.broadcast(B.constant(True), v.shape, ())
        false, zero = B.constant(False), B.constant(0, v.dtype)
        update = B.select(B.dynamic_pad(true, false, places, base.shape),
                          B.dynamic_pad(kept, zero, places, base.shape), base)
        self.updates[id(update)] = (where, v.shape, base)
        return update

    def _broadcast(self, offset: int, template: Node, inputs: list[Node]) -> Node:
        x = inputs[0]
        shape = self._shape(offset, template)
        extents = [None] * len(shape)
        first, steps = self.steps.get(offset, (shape, (0,) * len(shape)))
        for d, step in enumerate(steps):
            if step or d in self.still.get(offset, ()):
                extents[d] = Extent("all", first[d], step, shape[d])
        for i, d in enumerate(template.arg):
            if x.shape[i] == shape[d]:
                extents[d] = self._of(x)[i]
            elif x.shape[i] != 1:
                raise NotWindowed("a broadcast between windows")
        return self._keep(B.broadcast(x, shape, template.arg), extents)

    def _reshape(self, offset: int, template: Node, inputs: list[Node]) -> Node:
        x = inputs[0]
        shape = self._shape(offset, template)
        kept = [(n, e) for n, e in zip(x.shape, self._of(x)) if n != 1]
        out = [d for d, n in enumerate(shape) if n != 1]
        if [n for n, _ in kept] != [shape[d] for d in out] or any(
                e is not None and n == 1 for n, e in zip(x.shape, self._of(x))):
            raise NotWindowed("a reshape across a window")
        extents = [None] * len(shape)
        for d, (_, extent) in zip(out, kept):
            extents[d] = extent
        return self._keep(B.reshape(x, shape), extents)

    def _transpose(self, offset: int, template: Node, inputs: list[Node]) -> Node:
        x = inputs[0]
        of = self._of(x)
        return self._keep(B.transpose(x, template.arg), [of[p] for p in template.arg])

    def _reverse(self, offset: int, template: Node, inputs: list[Node]) -> Node:
        """`np.flip` of a window, its lanes kept where they were: reversed, the trip's n
        lanes of W would land on the other edge ([0, n) on [W - n, W)), where no operand
        aligned as the input is lines up with them (durbin's `np.flip(r[:k]) @ y[:k]`).
        So the reversed window is padded with W lanes on that side and sliced back at
        W - n (low) or n (high)."""
        x = inputs[0]
        node, extents = B.reverse(x, template.arg), list(self._of(x))
        for d in template.arg:
            extent = extents[d]
            if extent is None or extent.align == "all":
                continue
            width, n = x.shape[d], self._count(extent.first, extent.step)
            zero = B.constant(0, x.dtype)
            low = extent.align == "high"            # the padding goes before the lanes
            node = B.pad(node, zero, [(width if low and e == d else 0,
                                       0 if low or e != d else width, 0)
                                      for e in range(x.ndim)])
            start = n if low else B.binary(Op.SUB, B.constant(np.int64(width)), n)
            zeros = B.constant(np.int64(0))
            node = B.dynamic_slice(node, [start if e == d else zeros for e in range(x.ndim)],
                                   x.shape)
        return self._keep(node, extents)

    def _reduce(self, offset: int, template: Node, inputs: list[Node]) -> Node:
        kind, axes = template.arg
        x = self._masked(inputs[0], _identity(kind, template.dtype), dims=set(axes))
        of = self._of(inputs[0])
        return self._keep(B.reduce(x, kind, axes),
                          [e for d, e in enumerate(of) if d not in axes])

    def _dot(self, offset: int, template: Node, inputs: list[Node]) -> Node:
        lhs, rhs = inputs
        lb, rb, lc, rc = template.arg
        if lhs.ndim != 1 and rhs.ndim != 1 or lb or len(lc) != 1 or \
                template.dtype.kind not in "iuf" or lhs.dtype != rhs.dtype:
            raise NotWindowed("a matrix-by-matrix dot over a window")
        lof, rof = self._of(lhs), self._of(rhs)
        if any(e is not None for x, of in ((lhs, lof), (rhs, rof)) if x.ndim > 1 for e in of):
            # the rolled trip multiplies the whole window where NumPy's BLAS call reads
            # only the trip's lanes: twice the work over a triangle (npbench
            # correlation's `data[:, i] @ data[:, i+1:M]` rolled: 0.45x NumPy, covariance
            # 0.65x; unrolled, each trip is NumPy's own call)
            raise NotWindowed("a vector-by-matrix dot over a windowed matrix")
        a, b = lc[0], rc[0]
        merged = _merge(lof[a], rof[b])
        if lhs.shape[a] != rhs.shape[b] or merged is not None and merged.align == "all":
            raise NotWindowed("a dot contracting different windows")
        align = {} if merged is None else {0: merged.align}
        lhs_m = self._masked(lhs, 0, {a}, {a: align[0]} if align else None)
        rhs_m = self._masked(rhs, 0, {b}, {b: align[0]} if align else None)
        # a vector times a matrix, summed over the contracted dim: a multiply and a sum
        # that fuse into one kernel, where a BLAS call per trip would keep the trips in
        # the Python driver (codegen/compiled_loop.py; npbench correlation's
        # `data[:, i] @ data[:, i+1:M]`: 0.10x NumPy as a windowed BLAS call)
        vector, matrix, axis = (lhs_m, rhs_m, b) if lhs.ndim == 1 else (rhs_m, lhs_m, a)
        if matrix.ndim > 1:
            vector = B.broadcast(vector, matrix.shape, (axis,))
        node = B.reduce(B.binary(Op.MUL, vector, matrix), "sum", (axis,))
        lfree = [lof[d] for d in range(lhs.ndim) if d != a]
        rfree = [rof[d] for d in range(rhs.ndim) if d != b]
        return self._keep(node, lfree + rfree)


def _splat_true(node: Node) -> bool | None:
    """True where `node` is a broadcast True constant."""
    while node.op is Op.BROADCAST:
        node = node.inputs[0]
    if node.op is Op.CONSTANT and node.dtype == np.bool_ and node.arg.size == 1:
        return bool(node.arg.reshape(()))
    return None


def _merge(a: Extent | None, b: Extent | None) -> Extent | None:
    """The extent of an elementwise result of operands with extents a and b (an operand
    with a value in every lane takes the other's alignment)."""
    if a is None or b is None:
        if a is not None or b is not None:
            raise NotWindowed("a windowed operand beside a whole one")
        return None
    if (a.first, a.step, a.window) != (b.first, b.step, b.window):
        raise NotWindowed("operands whose trip lanes differ")
    if a.align == "all" or a.align == b.align:
        return b
    if b.align == "all":
        return a
    raise NotWindowed("operands whose trip lanes differ")


def _fitting(dim: int, window: int, trips: int, first: int, step: int, lows, highs
             ) -> Extent:
    """The extent of a slice x[start:limit] of `first + trip * step` lanes out of a dim
    of `dim`: its window starts at `start` (low) where it stays inside the dim on every
    trip, else ends at `limit` (high)."""
    last = trips - 1
    if all(lows[0] + c * lows[1] + window <= dim for c in (0, last)):
        return Extent("low", first, step, window)
    if all(highs[0] + c * highs[1] - window >= 0 for c in (0, last)):
        return Extent("high", first, step, window)
    raise NotWindowed("a window that does not fit in its array")


def _identity(kind: str, dtype: np.dtype):
    """The value a reduction of `kind` ignores."""
    if kind in ("sum", "any"):
        return 0 if kind == "sum" else False
    if kind in ("prod", "all"):
        return 1 if kind == "prod" else True
    if dtype.kind == "f":
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    if info is None:
        raise NotWindowed(f"a {kind} of {dtype} over a window")
    return info.min if kind == "max" else info.max
