"""Where a traced loop's copies are, for `loop-reroll` (loop_reroll.py): keys that
say which nodes two copies share, the periods those keys repeat with, and the stretches of
the creation order that repeat, begun where a trip begins."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..ir.graph import Graph, Node, arg_key
from ..ir.ops import Op
from .loop_moves import _is_counting_constant


MIN_TRIPS = 8                   # fewer trips stay unrolled (loop_reroll.py)
_CANDIDATE_PERIODS = 8          # most frequent distances tried per search


@dataclass
class _Stretch:
    start: int                  # index in creation order of copy 0's first node
    period: int                 # nodes per copy
    trips: int


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


def _end(stretch: "_Stretch") -> int:
    return stretch.start + stretch.trips * stretch.period


def _copy_nodes(order: list[Node], stretch: "_Stretch") -> int:
    """Nodes one copy holds, a rolled loop's body counted in: a row of conv2d is a few
    nodes around a loop over its columns."""
    copy = order[stretch.start:stretch.start + stretch.period]
    return stretch.period + sum(len(n.arg.body.nodes) for n in copy if n.op is Op.LOOP)


def _aligned(context: "_Context", stretch: "_Stretch", keys: list[int] | None = None
             ) -> "_Stretch":
    """The stretch starting after any loop results it opens with: a copy that begins
    with the result of a loop in the copy before would carry the loop node itself (a
    first inner loop unlike the rest leaves its result just before a stretch's keys).
    With `keys`, the copies go on past the old end while the keys still repeat: the
    last copy ends with its own loop's result, just past the stretch (conv2d's rows:
    each a loop over its columns and that loop's result; the row loop lost its last
    row, which then compiled as a body of its own)."""
    end, start = _end(stretch), stretch.start
    while start < end and context.order[start].op is Op.LOOP_RESULT:
        start += 1
    if start == stretch.start:
        return stretch
    period = stretch.period
    trips = (end - start) // period
    while keys is not None and start + (trips + 1) * period <= len(keys) and \
            keys[start + trips * period:start + (trips + 1) * period] == \
            keys[start:start + period]:
        trips += 1
    return _Stretch(start, period, trips)


def _before_loops(stretch: "_Stretch", loops: list["_Loop"]) -> "_Stretch":
    """The stretch cut to the whole copies before the first loop found inside it."""
    inside = [loop.stretch.start for loop in loops
              if stretch.start < loop.stretch.start < _end(stretch)]
    if not inside:
        return stretch
    trips = (min(inside) - stretch.start) // stretch.period
    return _Stretch(stretch.start, stretch.period, trips)


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


def _periodic_stretches(keys: list[int], period: int, index: int, least: int):
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
