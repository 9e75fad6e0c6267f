"""`loop-reroll`: a traced Python loop that unrolled into T copies of one body becomes a
`loop` node, so its compile time and kernel count stop growing with T.

A trace runs the user's loop, so `for t in range(T): B[1:-1] = f(A); A[1:-1] = g(B)` reaches
the compiler as T copies of the same nodes.  Tracing builds nodes in the order the code runs
(`Node.serial`), so the copies are a periodic stretch of the creation order: the same op,
type, arg and source line every P nodes.  The pass finds such stretches, then checks that
the copies are wired alike: each input of a node in copy k is a node of copy k at a fixed
offset, the copy k-d node at a fixed offset for a fixed d <= MAX_DEPTH (loop-carried
state; d = 2 where a scheme keeps two time levels, `prev, cur = cur, nxt`; the first d
copies read the state's initial values there), or one node from before the loop
(loop-invariant).  A value carried d trips is d body parameters, each passed one place
down per trip.  Nothing outside
may read a copy but the last.  The body graph is copy 0 with its carried inputs and
invariants made parameters; the loop's results replace the last copy's values wherever the
rest of the program reads them.

A slice whose start, or a pad whose edges, move by the same step every trip (`a[i, i]`
reads, `out[i] = v` writes: x[a:b] = v lowers to pads), and a real scalar constant that
counts with the trip (`N[mask] = n`, `rmax * i / npt`: whole numbers in a float) are the
differences copies may have: the body counts its trips (a carried int64), places a
`dynamic-slice` or `dynamic-pad` at first + trip * step (a pad only where the array is at
most MAX_WRITE_SPREAD times the part written or the trip's work, or at most
SMALL_WRITE_TARGET elements: each trip makes the array anew) and computes the constant as
first + trip * step.  Copies may also differ in shapes that count with the trip (`x[:i]`):
loop_window.py rolls those into one body over fixed-size windows, searched first, so that
an inner loop still unrolled rolls inside the windowed body (syrk's `for k` inside its
`for i`).  Not rerolled: loops whose iterations differ in anything else: those stay
unrolled, and the compile budget bounds them.  Loops of fewer than `MIN_TRIPS`
iterations, or of fewer than `MIN_ROLLED_NODES` nodes in all, also stay unrolled: there
fusing across iterations is worth more than the smaller program.  One search rolls every
loop it finds (stretches that do not overlap) and then runs again, so a loop around rolled
loops rolls too: one search per level of nesting; then the loops' constant places fold
back into their bodies (loop_fold.py).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..ir import builder as B
from ..ir.graph import Graph, LoopBody, Node, arg_key
from ..ir.ops import Op
from .loop_fold import fold_constant_inputs
from .loop_window import NotWindowed, WindowBuilder, shape_steps

MIN_TRIPS = 8
# Nodes a stretch must hold to roll: a short loop of elementwise steps fuses into one
# kernel unrolled, and rolled would run a kernel per trip (8 steps of x * 0.999 + 0.5:
# 1.4 ms fused, 17.7 ms rolled).
MIN_ROLLED_NODES = 128
MAX_DEPTH = 3                   # trips a value may be carried (time levels of a scheme)
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
# Trips a windowed loop must have (loop_window.py): below it, a body per shape compiles
# within the budget (0.5-4 s each) and runs faster: no masked lanes, and its writes have
# static places, which buffers.py updates in place.
WINDOW_MIN_TRIPS = 16
# ... but a loop of as few as this many trips rolls where its body is one that rolled in
# the same search: the inner loops of a triangular nest (`for k: for j in range(k + 1,
# n)`) whose trips ran short.  Their outer copies then hold one loop each, with one body,
# and the outer loop rolls over them too (a dynamic loop: its trip count an input).
SHORT_TRIPS = 2
# The longest vector dot a rolled body computes as a multiply and a sum (`_is_small_vector_dot`).
MAX_ROLLED_VECTOR_DOT = 4096
_CANDIDATE_PERIODS = 8          # most frequent distances tried per search


@dataclass
class _Stretch:
    start: int                  # index in creation order of copy 0's first node
    period: int                 # nodes per copy
    trips: int


def reroll_loops(graph: Graph) -> Graph:
    """The graph with each rerollable stretch of T >= MIN_TRIPS copies as a loop node."""
    while True:
        rolled = _roll_all(graph)
        if rolled is None:          # no loop around them rolls: their constant places
            return fold_constant_inputs(graph, _substitute)     # go back inside
        graph = rolled


def _roll_all(graph: Graph) -> Graph | None:
    """The graph with every loop found in one search rolled (stretches that do not
    overlap), substituted in one rewrite: one pass per level of loop nesting, not one per
    loop (npbench syrk's 70 inner loops over a 70,000-node trace: 80 s one at a time,
    each search and rewrite walking the whole graph)."""
    order = sorted((n for n in graph.nodes if n.op is not Op.PARAMETER),
                   key=lambda n: n.serial)
    if len(order) < 2 * MIN_TRIPS:
        return None
    # constants that count first; then, where some constant differs between copies without
    # counting (`x * c[k]`), stretches that keep it the same, as before constants counted
    context = _Context(graph, order)
    # loops whose copies differ in a shape first (their bodies hold loops still unrolled,
    # which roll inside the body once it is windowed); then the usual search
    args = [_copy_arg(n, counting=True) for n in order]      # shared by three key sets
    keys = blind = _interned_keys(order, True, blind="rank", args=args)
    windowed = _interned_keys(order, True, blind="operands", args=args)
    loops = _find_loops(context, keys, windowed=windowed)
    if not loops:                   # (keys made only when needed: 80,000 nodes in symm)
        keys = counting = _interned_keys(order, counting=True, args=args)
        windowed, loops = None, _find_loops(context, counting)
        if not loops and any(_is_counting_constant(n) for n in order):
            exact = _interned_keys(order, counting=False)
            if max(exact) > max(counting):
                keys, loops = exact, _find_loops(context, exact)
    if not loops:
        return None
    loops += _find_loops(context, keys, windowed, like=loops, blind=blind)
    loops = _unified(context, loops, blind)
    replaced: dict[int, Node] = {}
    for loop in loops:
        replaced.update(loop.replacements(graph.name))
    return _substitute(graph, replaced)


def _find_loops(context: "_Context", keys: list[int], windowed: list[int] | None = None,
                like: list["_Loop"] | None = None, blind: list[int] | None = None
                ) -> list["_Loop"]:
    """Every loop one search finds, stretches that do not overlap; `windowed`: only loops
    whose copies differ in a shape (loop_window.py), their periods found with these finer
    keys.  `like`: loops found already; then only the loops of at least SHORT_TRIPS trips
    outside them whose body is one of theirs (see SHORT_TRIPS)."""
    loops: list[_Loop] = list(like or ())
    if like:
        bodies = {loop.fingerprint(context.graph.name) for loop in like}
        kinds = {_kind(loop, blind) for loop in like if not loop.steps}
        periods, least = sorted({loop.stretch.period for loop in like}), SHORT_TRIPS
    else:
        periods = _window_periods(context.order, windowed) if windowed else \
            _candidate_periods(keys)
        least = MIN_TRIPS
    for period in periods:
        index = 0
        while True:
            stretch, index = next(_periodic_stretches(keys, period, index, least), (None, 0))
            if stretch is None:
                break
            head = max((_end(loop.stretch) for loop in loops
                        if loop.stretch.start <= stretch.start < _end(loop.stretch)),
                       default=None)
            if head is not None:    # starts in a loop already found (a copy's phase can
                index = head        # start a node early): search again after that loop
                continue
            stretch = _aligned(context, _before_loops(stretch, loops))
            loop = _Loop.match(context, stretch, windowed is not None, least) \
                if stretch.trips >= least else None
            if loop is None and windowed is not None and stretch.trips > least:
                # the first copy may read an empty slice, which traces as [0:0], not
                # where the others' places put it (`A[i, i + 1:]` at i = n - 1): roll
                # the copies after it
                for later in _later_phases(context, stretch):
                    loop = _Loop.match(context, later, True, least)
                    if loop is not None:
                        stretch = later
                        break
            if loop is not None and like and \
                    loop.fingerprint(context.graph.name) not in bodies and \
                    (loop.steps or _kind(loop, blind) not in kinds):
                loop = None
            if loop is not None:
                loops.append(loop)
                index = _resume_after(loop, stretch, index)
    return loops[len(like or ()):]


class _Context:
    """What every match in one search reads: the creation order, each node's place in
    it, and each node's readers (None: a program output)."""

    def __init__(self, graph: Graph, order: list[Node]):
        self.graph, self.order = graph, order
        self.position = {id(n): i for i, n in enumerate(order)}
        self.readers: dict[int, list] = {}
        for node in graph.nodes:
            for inp in node.inputs:
                self.readers.setdefault(id(inp), []).append(node)
        for out in graph.outputs:
            self.readers.setdefault(id(out), []).append(None)


def _copy_nodes(order: list[Node], stretch: "_Stretch") -> int:
    """Nodes one copy holds, a rolled loop's body counted in: a row of conv2d is a few
    nodes around a loop over its columns."""
    copy = order[stretch.start:stretch.start + stretch.period]
    return stretch.period + sum(len(n.arg.body.nodes) for n in copy if n.op is Op.LOOP)


def _later_phases(context: "_Context", stretch: "_Stretch") -> list["_Stretch"]:
    """Where a windowed stretch that did not match may roll after its first copy: the
    copies after it, then those copies begun where a trip begins.  A first trip that
    reads a whole array traces no slice (npbench covariance's `data[:, i:M]` at i = 0), so
    the keys line up from the trip's dot on, and each copy closes with the slices the
    next copy's dot reads: carried from trip to trip, they change shape.  Such a tail
    reads nothing of its own copy before it, nor of another copy: it is the start of the
    next trip, so the copies are begun there."""
    period = stretch.period
    later = _Stretch(stretch.start + period, period, stretch.trips - 1)
    back = period - _independent_tail(context, later)
    if 0 < back < period and later.trips > 2:
        begun = later.start - back
        return [later, _Stretch(begun, period, (_end(stretch) - begun) // period)]
    return [later]


def _independent_tail(context: "_Context", stretch: "_Stretch") -> int:
    """The least offset o > 0 where the nodes [o, period) of the stretch's second copy
    read only each other and nodes from before the stretch (period where there is none)."""
    position, period = context.position, stretch.period
    base = stretch.start + period
    least, found = period, period
    for offset in range(period - 1, 0, -1):
        for inp in context.order[base + offset].inputs:
            at = position.get(id(inp), -1)
            if base <= at:
                least = min(least, at - base)
            elif at >= stretch.start:
                return found                    # reads another copy: the trip's state
        if least >= offset:
            found = offset
    return found


def _aligned(context: "_Context", stretch: "_Stretch") -> "_Stretch":
    """The stretch starting after any loop results it opens with: a copy that begins
    with the result of a loop in the copy before would carry the loop node itself (a
    first inner loop unlike the rest leaves its result just before a stretch's keys)."""
    end, start = _end(stretch), stretch.start
    while start < end and context.order[start].op is Op.LOOP_RESULT:
        start += 1
    if start == stretch.start:
        return stretch
    return _Stretch(start, stretch.period, (end - start) // stretch.period)


def _resume_after(loop: "_Loop", stretch: "_Stretch", index: int) -> int:
    """Where the search goes on after a loop found in `stretch`: right after the loop
    where its moves cut it short (conv2d's 31 inner loops of 31 trips each trace as one
    stretch of 961 copies, their slices' starts steady only within a row), so one search
    rolls every inner loop and the next rolls the loop around them."""
    return _end(loop.stretch) if _end(loop.stretch) < _end(stretch) else index


def _end(stretch: "_Stretch") -> int:
    return stretch.start + stretch.trips * stretch.period


def _before_loops(stretch: "_Stretch", loops: list["_Loop"]) -> "_Stretch":
    """The stretch cut to the whole copies before the first loop found inside it."""
    inside = [loop.stretch.start for loop in loops
              if stretch.start < loop.stretch.start < _end(stretch)]
    if not inside:
        return stretch
    trips = (min(inside) - stretch.start) // stretch.period
    return _Stretch(stretch.start, stretch.period, trips)


def _interned_keys(order: list[Node], counting: bool, blind: str = "", args=None
                   ) -> list[int]:
    """What two copies of a node share: op, type, arg and source line (as small ints); a
    slice's starts may differ (its steps may not), `_moves` checks how; so may a real
    scalar constant's value where `counting`; where `blind`, so may shapes (only the rank
    counts, and with "operands" its operands' ops), which loop_window.py checks.  `args`:
    each node's `_copy_arg` where already made."""
    ids: dict = {}
    if args is None:
        args = [_copy_arg(n, counting) for n in order]
    if blind:                           # a pad's edges add up to what its shapes leave
        args = [_blind_pad(a) if n.op is Op.PAD else a for n, a in zip(order, args)]
        return [ids.setdefault((n.op, _shape_key(n, blind), n.dtype.str, a, n.loc), len(ids))
                for n, a in zip(order, args)]
    return [ids.setdefault((n.op, n.shape, n.dtype.str, a, n.loc), len(ids))
            for n, a in zip(order, args)]


def _blind_pad(arg: tuple) -> tuple:
    return tuple((0, interior) for _, interior in arg)


def _shape_key(node: Node, blind: str) -> tuple:
    """What a shape-blind key keeps: the rank, and with "operands" its operands' ops (on
    one source line `b[i] - L[i, :i] @ x[:i]` slices b and x alike but for what they
    slice; the first trip reads x's parameter where the others read a select, so these
    keys find the period, not the stretch)."""
    if blind == "operands":
        return (node.ndim, tuple(i.op for i in node.inputs))
    return (node.ndim,)


def _copy_arg(node: Node, counting: bool):
    if counting and _is_counting_constant(node):
        return ("scalar", node.dtype.str)         # its value may step with the trip
    if counting and node.op is Op.LOOP:           # so may its trip count (a dynamic
        spec = node.arg                           # loop's is an input)
        return ("loop", spec.carried, spec.dynamic, spec.fingerprint)
    if node.op is Op.SLICE:
        return tuple(step for _, _, step in node.arg)
    if node.op is Op.PAD:
        return tuple((low + high, interior) for low, high, interior in node.arg)
    return arg_key(node.arg)


TRIP = (-1, 1)                  # the carried trip counter's key among carried values'


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


def _kind(loop: "_Loop", blind: list[int]) -> tuple:
    """What loops whose bodies differ only in shapes share: period and shape-blind keys."""
    start, period = loop.stretch.start, loop.stretch.period
    return (period, tuple(blind[start:start + period]))


def _unified(context: "_Context", loops: list["_Loop"], blind: list[int]) -> list["_Loop"]:
    """The loops, those of one kind whose bodies differ in shapes rebuilt with windows over
    the dims that differ (loop_window.py, the length a loop input), so that they share one
    body: lu's `for j in range(i, n): A[i, j] -= A[i, :i] @ A[:i, j]` reads i lanes in the
    copy for row i, the same in each of its trips.  A loop around them then rolls.  Loops
    of fewer than MIN_TRIPS trips (found only for their kind) that share no body with a
    longer one are dropped: rolled alone they gain nothing."""
    name = context.graph.name
    kinds: dict[tuple, list] = {}
    for loop in loops:
        if not loop.steps:
            kinds.setdefault(_kind(loop, blind), []).append(loop)
    for members in kinds.values():
        if len(members) < 2 or len({m.fingerprint(name) for m in members}) == 1:
            continue
        order = context.order
        still: dict[int, set] = {}
        for offset in range(members[0].stretch.period):
            shapes = {order[m.stretch.start + offset].shape for m in members}
            dims = {d for d in range(order[members[0].stretch.start + offset].ndim)
                    if len({s[d] for s in shapes}) > 1}
            if dims:
                still[offset] = dims
        before = len({m.fingerprint(name) for m in members})
        kept = [(m.body, m.window_firsts) for m in members]
        for m in members:
            m.still, m.window_firsts = still, []
            try:
                m.body = m._body_graph(name, *m._outputs())
            except NotWindowed:
                m.body = None
        if any(m.body is None for m in members) or \
                len({m.fingerprint(name) for m in members}) >= before:
            for m, (body, firsts) in zip(members, kept):     # no gain: as they were
                m.still, m.body, m.window_firsts = {}, body, firsts
    long = {m.fingerprint(name) for m in loops if m.stretch.trips >= MIN_TRIPS}
    return [m for m in loops
            if m.stretch.trips >= MIN_TRIPS or m.fingerprint(name) in long]


def _too_short(order, stretch, trips: int, least: int) -> bool:
    if trips < least:
        return True
    return least >= MIN_TRIPS and trips * _copy_nodes(order, stretch) < MIN_ROLLED_NODES


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


def _candidate_periods(keys: list[int]) -> list[int]:
    """Distances between successive nodes of one key, most frequent first."""
    last: dict[int, int] = {}
    distances: Counter = Counter()
    for index, key in enumerate(keys):
        if key in last:
            distances[index - last[key]] += 1
        last[key] = index
    return [d for d, count in distances.most_common(_CANDIDATE_PERIODS)
            if count >= MIN_TRIPS - 1]


def _window_periods(order: list[Node], keys: list[int]) -> list[int]:
    """Distances between successive places where a node of one (shape-blind) key changes
    shape, most frequent first: a loop around the nodes whose copies differ in a shape
    (`C[i, :i+1]` changes width once per outer trip, however many inner trips read it)."""
    last: dict[int, tuple] = {}
    changed: dict[int, int] = {}
    distances: Counter = Counter()
    for index, (key, node) in enumerate(zip(keys, order)):
        if key in last and last[key] != node.shape:
            if key in changed:
                distances[index - changed[key]] += 1
            changed[key] = index
        last[key] = node.shape
    return [d for d, count in distances.most_common(_CANDIDATE_PERIODS)
            if count >= MIN_TRIPS - 1]


def _periodic_stretches(keys: list[int], period: int, index: int = 0,
                        least: int = MIN_TRIPS):
    """Maximal stretches from `index` on where keys repeat with `period`, at least
    `least` copies long; each with the index the search resumes at."""
    n = len(keys)
    while index + period < n:
        if keys[index] != keys[index + period]:
            index += 1
            continue
        end = index
        while end + period < n and keys[end] == keys[end + period]:
            end += 1
        trips = (end - index + period) // period
        if trips >= least:
            yield _Stretch(index, period, trips), end + 1
        index = end + 1


class _Loop:
    """A stretch whose copies are wired alike: what the loop node needs."""

    def __init__(self, order, stretch, pattern, carried_init, invariants, results, moves,
                 steps=None):
        self.order, self.stretch, self.moves = order, stretch, moves
        self.steps = steps or {}            # offset -> shape steps (loop_window.py)
        self.pattern = pattern              # per offset: per input (kind, offset | node)
        self.carried_init = carried_init    # carried offset -> initial value node
        self.invariants = invariants        # nodes from before the loop, in first-use order
        self.results = results              # offsets the rest of the program reads
        self.window_firsts: list[int] = []  # first places of windows (loop_window.py)
        self.wide = True                    # windows as wide as they fit (loop_window.py)
        self.still: dict[int, set] = {}     # offset -> dims windowed across loops (`_unified`)

    @classmethod
    def match(cls, context: _Context, stretch: _Stretch, windowed: bool = False,
              least: int = MIN_TRIPS) -> "_Loop | None":
        """The loop of `stretch`'s copies (at least `least` of them, SHORT_TRIPS only for
        a body rolled already, so no floor on its nodes), None where they differ."""
        order, position = context.order, context.position
        start, period = stretch.start, stretch.period

        def where(node: Node) -> tuple[int, int] | None:
            """(copy, offset) of a node inside the stretch, None outside it."""
            i = position.get(id(node))
            if i is None or i < start or i >= start + stretch.trips * period:
                return None
            return divmod(i - start, period)

        pattern: list[list[tuple]] = []
        carried_init: dict[tuple[int, int], Node] = {}   # (offset, trips back) -> value
        model = min(MAX_DEPTH, stretch.trips - 1)         # this copy sets the pattern
        for offset in range(period):
            node = order[start + model * period + offset]
            slots = []
            for inp in node.inputs:
                at = where(inp)
                if at is None:
                    slots.append(("invariant", inp))
                elif at[0] == model:
                    slots.append(("body", at[1]))
                else:
                    slots.append(("carried", (at[1], model - at[0])))
            pattern.append(slots)
        trips = stretch.trips
        for copy in range(trips):
            if not cls._wired_alike(order, stretch, pattern, copy, where, carried_init):
                trips = copy
                break
        if _too_short(order, stretch, trips, least):
            return None
        for (offset, _), init in carried_init.items():  # the state keeps one type
            carried = order[start + offset]
            if (init.shape, init.dtype) != (carried.shape, carried.dtype):
                return None
        steps = {}
        if windowed:
            steps, trips = shape_steps(order, start, period, trips)
            if not steps or trips < (WINDOW_MIN_TRIPS if least >= MIN_TRIPS else least) or \
                    any(offset in steps for offset, _ in carried_init):
                return None
        windowed_offsets = set(steps) | {     # and what reads a windowed value
            offset for offset, slots in enumerate(pattern)
            if any(kind == "body" and what in steps for kind, what in slots)}
        moves, trips = _moves(context, stretch, trips, skip=windowed_offsets)
        if _too_short(order, stretch, trips, least):
            return None
        if steps or any(any(step) for _, step in moves.values()):   # the trip counts
            carried_init[TRIP] = B.constant(np.int64(0))
        stretch = _Stretch(start, period, trips)
        end = start + trips * period
        results = cls._results(context, stretch, end)
        if results is None or any(r in steps for r in results):
            return None
        invariants = list({id(inp): inp for slots in pattern for kind, inp in slots
                           if kind == "invariant"}.values())
        loop = cls(order, stretch, pattern, carried_init, invariants, results, moves, steps)
        if steps:
            try:                                # built now: a refusal leaves it unrolled
                loop.body = loop._body_graph(context.graph.name, *loop._outputs())
            except NotWindowed:                 # windows as wide as the trips need
                loop.wide, loop.window_firsts = False, []
                try:
                    loop.body = loop._body_graph(context.graph.name, *loop._outputs())
                except NotWindowed:
                    return None
        return loop

    def fingerprint(self, name: str) -> str:
        """The body's fingerprint (the body built once, kept for `replacements`)."""
        if getattr(self, "body", None) is None:
            self.body = self._body_graph(name, *self._outputs())
        return self.body.fingerprint()

    @staticmethod
    def _wired_alike(order, stretch, pattern, copy, where, carried_init) -> bool:
        base = stretch.start + copy * stretch.period
        for offset, slots in enumerate(pattern):
            node = order[base + offset]
            for inp, (kind, what) in zip(node.inputs, slots):
                at = where(inp)
                if kind == "invariant":
                    ok = inp is what
                elif kind == "body":
                    ok = at == (copy, what)
                elif copy < what[1]:                     # carried: an initial value
                    key = (what[0], what[1] - copy)      # the value `key[1]` trips back
                    ok = at is None and carried_init.setdefault(key, inp) is inp
                else:
                    ok = at == (copy - what[1], what[0])
                if not ok:
                    return False
        return True

    @staticmethod
    def _results(context: _Context, stretch, end) -> list[int] | None:
        """Offsets of last-copy nodes read after the loop; None if anything else escapes
        (an earlier copy read after the loop, or returned)."""
        order, position = context.order, context.position
        last_copy = end - stretch.period
        results: set[int] = set()
        for i in range(stretch.start, end):
            for reader in context.readers.get(id(order[i]), ()):
                at = None if reader is None else position.get(id(reader))
                if at is not None and stretch.start <= at < end:
                    continue                   # read inside the loop
                if i < last_copy:
                    return None
                results.add(i - last_copy)
        return sorted(results)

    def replacements(self, name: str) -> dict[int, Node]:
        """id(last-copy node read after the loop) -> the loop's result replacing it."""
        stretch, order = self.stretch, self.order
        carried, extra = self._outputs()
        body = getattr(self, "body", None) or self._body_graph(name, carried, extra)
        spec = LoopBody(stretch.trips, len(carried), body)
        first = order[stretch.start]
        places = self._first_places(first.serial)
        if TRIP in self.carried_init:           # in the program's order where the loop is
            self.carried_init[TRIP].serial = first.serial
        loop = B.loop([self.carried_init[c] for c in carried] + self.invariants + places,
                      spec, first.loc)
        loop.serial = first.serial
        output_of = {offset: carried.index((offset, 1)) for offset, back in carried
                     if back == 1}
        output_of.update({offset: len(carried) + k for k, offset in enumerate(extra)})
        last = stretch.start + (stretch.trips - 1) * stretch.period
        replaced: dict[int, Node] = {}
        for offset in self.results:
            result = B.loop_result(loop, output_of[offset])
            result.serial = first.serial
            replaced[id(order[last + offset])] = result
        return replaced

    def _outputs(self) -> tuple[list[tuple[int, int]], list[int]]:
        """The carried values (offset, trips back), and the results not carried."""
        carried = sorted(self.carried_init)
        return carried, [r for r in self.results if (r, 1) not in self.carried_init]

    def _body_graph(self, name: str, carried: list[tuple[int, int]], extra: list[int]
                    ) -> Graph:
        """Parameters: the carried values (offset, trips back), then the invariants.
        Outputs: each carried value one trip later (this trip's node for 1 trip back,
        the parameter one place up for more), then the extra results."""
        params: dict = {}
        for index, (offset, back) in enumerate(carried):
            node = self.carried_init[TRIP] if (offset, back) == TRIP else \
                self.order[self.stretch.start + offset]
            params[("carried", (offset, back))] = B.parameter(index, node.shape, node.dtype)
        for index, node in enumerate(self.invariants, start=len(carried)):
            params[("invariant", id(node))] = B.parameter(index, node.shape, node.dtype)
        for index, (key, place) in enumerate(self._first_place_keys(),
                                             start=len(carried) + len(self.invariants)):
            params[key] = B.parameter(index, (), place.dtype)
        built: list[Node] = []

        def place(first: int) -> Node:
            key = ("first", "<i8", first)
            if key not in params:
                self.window_firsts.append(first)
                params[key] = B.parameter(len(params), (), np.int64)
            return params[key]
        window = WindowBuilder(self.order, self.stretch.start, self.stretch.period,
                               self.stretch.trips, self.steps, params.get(("carried", TRIP)),
                               place, self.wide, self.still)
        for offset, slots in enumerate(self.pattern):
            template = self.order[self.stretch.start + offset]
            inputs = [built[what] if kind == "body" else
                      params[("carried", what)] if kind == "carried" else
                      params[("invariant", id(what))] for kind, what in slots]
            if (self.steps or self.still) and window.touches(offset, template, inputs):
                with B.location(template.loc):
                    built.append(window.build(offset, template, inputs))
            elif template.op is Op.LOOP and offset not in self.moves:
                built.append(B.loop(inputs, template.arg, template.loc))
            elif offset in self.moves:
                built.append(self._moving(offset, template, inputs,
                                          params.get(("carried", TRIP)), params))
            elif _is_small_vector_dot(template):
                with B.location(template.loc):
                    built.append(B.reduce(B.binary(Op.MUL, *inputs), "sum", (0,)))
            else:
                built.append(Node(template.op, inputs, template.shape, template.dtype,
                                  template.arg, template.loc))
        outputs = [self._next_trip(params[("carried", TRIP)]) if (offset, back) == TRIP
                   else built[offset] if back == 1
                   else params[("carried", (offset, back - 1))]
                   for offset, back in carried] + [built[r] for r in extra]
        return Graph(list(params.values()), outputs, f"{name}.loop_body")

    def _first_place_keys(self) -> list[tuple[tuple, Node]]:
        """Per distinct first place of the moves: its body parameter's key and its value
        in copy 0 (a scalar of the place's dtype).  The first places are loop inputs, not
        constants of the body: a loop around this one (`for i: for j: out[:, i, j] =
        ...`) then finds copies of one body whose inputs count with its own trip, and
        rolls too (once none does, loop_fold.py puts the constant ones back in the body).
        Equal places share one parameter, so the mask and the value of one write stay one
        region (codegen/cpu.py `region_update`)."""
        keys: dict[tuple, Node] = {}
        for offset, (first, _) in sorted(self.moves.items()):
            dtype = self._place_dtype(offset)
            for f in first:
                key = ("first", dtype.str, f)
                if key not in keys:
                    keys[key] = B.constant(np.asarray(f, dtype)[()])
        for f in self.window_firsts:            # then the windows' (loop_window.py)
            keys.setdefault(("first", "<i8", f), B.constant(np.int64(f)))
        return list(keys.items())

    def _place_dtype(self, offset: int) -> np.dtype:
        template = self.order[self.stretch.start + offset]
        return template.dtype if template.op is Op.CONSTANT else np.dtype(np.int64)

    def _first_places(self, serial: int) -> list[Node]:
        """The loop's inputs holding its moves' first places, created where the loop
        stands in the program's order."""
        places = [place for _, place in self._first_place_keys()]
        for place in places:
            place.serial = serial
        return places

    def _moving(self, offset: int, template: Node, inputs: list[Node], trip: Node,
                params: dict) -> Node:
        """The slice or pad of copy `trip`: placed at first + trip * step; the constant of
        copy `trip`: first + trip * step, in its dtype (first: a loop input)."""
        first, step = self.moves[offset]
        dtype = self._place_dtype(offset)
        firsts = [params[("first", dtype.str, f)] for f in first]
        with B.location(template.loc):
            if template.op is Op.LOOP:
                count = B.binary(Op.ADD, firsts[0],
                                 B.binary(Op.MUL, trip, B.constant(np.int64(step[0]))))
                return _dynamic_loop(template, inputs, count)
            if template.op is Op.CONSTANT:
                dtype = template.dtype
                count = trip if dtype == trip.dtype else B.convert(trip, dtype)
                return B.binary(Op.ADD, firsts[0],
                                B.binary(Op.MUL, count, B.constant(step[0], dtype)))
            places = [B.binary(Op.ADD, f, B.binary(Op.MUL, trip, B.constant(np.int64(d))))
                      if d else f for f, d in zip(firsts, step)]
            if template.op is Op.SLICE:
                return B.dynamic_slice(inputs[0], places, template.shape)
            return B.dynamic_pad(inputs[0], inputs[1], places, template.shape)

    @staticmethod
    def _next_trip(trip: Node) -> Node:
        return B.binary(Op.ADD, trip, B.constant(np.int64(1)))


def _is_small_vector_dot(node: Node) -> bool:
    """A dot of two vectors short enough that a BLAS call's overhead is most of its time:
    in a loop body it becomes a multiply and a sum, which fuse into a kernel, so the body
    can run inside one compiled function (codegen/compiled_loop.py: a BLAS call keeps
    every trip in the Python driver; gramschmidt's `np.dot(Q[:, k], A[:, j])`)."""
    return node.op is Op.DOT and node.ndim == 0 and \
        all(x.ndim == 1 for x in node.inputs) and \
        node.inputs[0].size <= MAX_ROLLED_VECTOR_DOT and node.dtype.kind in "iuf" and \
        all(x.dtype == node.dtype for x in node.inputs)


def _dynamic_loop(template: Node, inputs: list[Node], count: Node) -> Node:
    """The loop `template` over `inputs`, run `count` trips (its body takes the count as
    one more parameter, which it does not read)."""
    spec = template.arg
    body = spec.body
    param = B.parameter(len(body.params), (), np.int64)
    graph = Graph(list(body.params) + [param], list(body.outputs), body.name)
    return B.loop(list(inputs) + [count], LoopBody(spec.trips, spec.carried, graph, True),
                  template.loc)


def _substitute(graph: Graph, replaced: dict[int, Node]) -> Graph:
    """The graph reading `replaced[id(old)]` (a loop's result) wherever it read `old`;
    rewritten nodes keep their creation serial, so a later search sees the program's
    order.  A loop whose inputs were rewritten (its first state is an earlier loop's
    result) is rebuilt on the new ones, once."""
    mapping: dict[int, Node] = {}

    def new(node: Node) -> Node:
        return mapping.get(id(node), node)

    def rewired(node: Node) -> Node:
        inputs = [new(i) for i in node.inputs]
        if all(a is b for a, b in zip(inputs, node.inputs)):
            return node
        copy = Node(node.op, inputs, node.shape, node.dtype, node.arg, node.loc)
        copy.serial = node.serial
        mapping[id(node)] = copy
        return copy
    for node in graph.nodes:
        if id(node) in replaced:
            result = replaced[id(node)]
            loop = result.inputs[0]
            if id(loop) not in mapping:
                mapping[id(loop)] = rewired(loop)
            mapping[id(node)] = rewired(result)
            continue
        rewired(node)
    return Graph(graph.params, [new(o) for o in graph.outputs], graph.name)
