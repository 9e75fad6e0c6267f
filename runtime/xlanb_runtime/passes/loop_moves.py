"""How the copies of a traced loop may differ, for `loop-reroll` (loop_reroll.py): a
slice's or pad's place that moves by a steady step per trip, a scalar constant that
counts with the trip, an inner loop's trip count that does; and which moving writes are
worth a loop (each trip makes the array written anew unless it is carried)."""
from __future__ import annotations

import math

import numpy as np

from ..ir.graph import Node
from ..ir.ops import Op


# A rolled write `out[i] = v` makes the whole array anew each trip (the body is pure), where
# NumPy writes v in place: worth it only while the array is a few times v's size, or a few
# times the trip's own work (`res[i] = radius[ring].mean()` over 4e5 radii: the 1000-entry
# `res` made anew costs nothing beside it).
MAX_WRITE_SPREAD = 16
# ... but an array this small is made anew in well under a microsecond, less than NumPy's
# own call overhead for the trip (npbench symm's first row: 50 writes `temp2[j] = 0.0`
# into 50 elements stayed unrolled and fused into one kernel that took 18 s to compile).
SMALL_WRITE_TARGET = 1024
# Ops that make or fill an array rather than work on one: not the trip's work.
_FILLING = {Op.PAD, Op.DYNAMIC_PAD, Op.SELECT, Op.BROADCAST, Op.CONSTANT, Op.IOTA}


def _places(node: Node) -> list[int]:
    """Where a slice starts, or where a pad puts its operand, per dimension."""
    return [start for start, _, _ in node.arg]


def _is_counting_constant(node: Node) -> bool:
    """A real scalar constant: it may count with the trip (`N[I] = n`, `rmax * i / npt`)."""
    return node.op is Op.CONSTANT and node.shape == () and node.dtype.kind in "iuf"


def _constant_step(order, stretch, offset, trips) -> tuple[int, int | float | None]:
    """A scalar constant's step per trip (0: the same in every copy) and the copies over
    which value = first + copy * step holds exactly; step None where it cannot count
    (a float that is not a whole number: first + trip * step would round otherwise)."""
    if trips < 2:                   # an earlier move cut the copies to one (a -0.0)
        return trips, 0
    dtype = order[stretch.start + offset].dtype
    values = [order[stretch.start + c * stretch.period + offset].arg.item()
              for c in range(trips)]
    step, exact = values[1] - values[0], None
    if step and dtype.kind == "f":     # whole numbers below 2**mantissa: every sum exact
        exact = 2 ** np.finfo(dtype).nmant
        if not all(float(v).is_integer() and abs(v) < exact for v in values[:2]):
            return 1, None
    if dtype.kind == "u" and step < 0:
        return 1, None              # a negative step has no unsigned constant
    for copy in range(trips):
        if not _same_number(values[copy], values[0] + copy * step) or (
                exact is not None and abs(values[copy]) >= exact):
            return copy, step
    return trips, step


def _trips_step(order, stretch, offset, trips) -> tuple[int, int]:
    """An inner loop's trip count's step per trip of the loop around it (`for j in
    range(k + 1, n)`: -1), and the copies over which count = first + copy * step holds;
    its body is then one dynamic loop, run as many trips as the count says."""
    counts = [order[stretch.start + c * stretch.period + offset].arg.trips
              for c in range(trips)]
    step = counts[1] - counts[0] if trips > 1 else 0
    for copy, count in enumerate(counts):
        if count != counts[0] + copy * step:
            return copy, step
    return trips, step


def _same_number(value, counted) -> bool:
    """Equal, a zero's sign included: -0.0 == 0.0 in Python, but not to NumPy's atan2,
    copysign or 1 / x, and first + trip * step gives +0.0 for a traced -0.0 (`(5.0 - k) *
    -1.0` at k = 5) unless first is -0.0 and the step negative."""
    return value == counted and math.copysign(1, value) == math.copysign(1, counted)


def _moves(context, stretch, trips, skip=()) -> tuple[dict[int, tuple], int]:
    """Offsets of slices and pads whose places move with the trip, and of scalar
    constants that count with it: offset -> (places or value in copy 0, steps per trip);
    and the copies (up to `trips`) over which every move is steady.  Only unit-stride
    slices and interior-free pads can move."""
    order = context.order
    moves: dict[int, tuple] = {}
    last = stretch.start + (trips - 1) * stretch.period     # a windowed trip's largest
    sizes = [max(order[stretch.start + offset].size, order[last + offset].size)
             for offset in range(stretch.period)
             if order[stretch.start + offset].op not in _FILLING]
    # a windowed trip (one around an inner loop still unrolled) does all of its nodes' work
    work = max(sum(sizes) if skip else max(sizes, default=0), 1)
    for offset in range(stretch.period):
        node = order[stretch.start + offset]
        if offset in skip:
            continue                            # windowed: loop_window places it
        if _is_counting_constant(node):
            steady, step = _constant_step(order, stretch, offset, trips)
            if step is None:
                return {}, 1
            trips = min(trips, steady)
            if step:
                moves[offset] = ((node.arg.item(),), (step,))
            continue
        if node.op is Op.LOOP and not node.arg.dynamic:
            steady, step = _trips_step(order, stretch, offset, trips)
            trips = min(trips, steady)
            if step:
                moves[offset] = ((node.arg.trips,), (step,))
            continue
        if node.op not in (Op.SLICE, Op.PAD):
            continue
        first = _places(node)
        step = tuple(b - a for a, b in zip(first, _places(
            order[stretch.start + stretch.period + offset])))
        for copy in range(2, trips):
            places = _places(order[stretch.start + copy * stretch.period + offset])
            if any(p != f + copy * d for p, f, d in zip(places, first, step)):
                trips = copy
                break
        if any(step) and any(third != (1 if node.op is Op.SLICE else 0)
                             for _, _, third in node.arg):
            return {}, 1                      # a strided slice or spread pad: no loop
        if any(step) and node.op is Op.PAD and node.size > SMALL_WRITE_TARGET and \
                node.size > MAX_WRITE_SPREAD * max(node.inputs[0].size, work, 1) and \
                not _writes_carried_region(context, stretch, offset):
            return {}, 1                      # a small write into a big array: see above
        if any(step):
            moves[offset] = (tuple(first), step)
        elif _is_plain(node):       # a still place is a loop input too: an outer loop
            moves[offset] = (tuple(first), step)    # may count it (`Q[:, k]` in `for j`)
    return moves, trips


def _is_plain(node: Node) -> bool:
    """A unit-stride slice or interior-free pad: one a dynamic place can express (and
    loop_fold.py makes static again where the place stays a constant)."""
    return all(third == (1 if node.op is Op.SLICE else 0) for _, _, third in node.arg)


def _writes_carried_region(context: "_Context", stretch: "_Stretch", offset: int) -> bool:
    """Whether the pad at `offset` only places a region write `x[:, j] = v` into x carried
    from the trip before (select(pad(mask), pad(v), x), x in the previous copy): the body
    updates x in its own buffer (buffers.py: a carried array is donated), so a trip costs
    the region, not the array, and MAX_WRITE_SPREAD does not apply.  Read in copy 1,
    whose carried x is copy 0's, reached through this trip's earlier writes to it."""
    order, position = context.order, context.position
    node = order[stretch.start + stretch.period + offset]
    readers = context.readers.get(id(node), [])
    if len(readers) != 1 or readers[0] is None or readers[0].op is not Op.SELECT:
        return False
    mask, padded, base = readers[0].inputs
    if node not in (mask, padded) or mask.op is not Op.PAD or padded.op is not Op.PAD or \
            mask.arg != padded.arg or mask.dtype != np.bool_:
        return False
    copy1 = stretch.start + stretch.period
    while base.op is Op.SELECT and copy1 <= position.get(id(base), -1) < \
            copy1 + stretch.period and base.inputs[0].op is Op.PAD:
        base = base.inputs[2]                 # an earlier write of this trip (`ccol[k] =
    at = position.get(id(base))               # ...; ccol[k] = ccol[k] * d`)
    return at is not None and stretch.start <= at < copy1
