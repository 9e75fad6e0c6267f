"""Whether a stretch of copies is a loop, for `loop-reroll` (loop_reroll.py): `_Loop.match`
checks that the copies are wired alike (inputs from the same copy, carried from a copy
up to MAX_DEPTH back, or invariant), which nodes the program reads after the loop, what
moves (loop_moves.py) and which shapes change (loop_window.py); `replacements` gives the
loop node's results for the last copy's values."""
from __future__ import annotations

import numpy as np

from ..ir import builder as B
from ..ir.graph import LoopBody, Node
from .loop_body import TRIP, BodyMixin
from .loop_moves import _moves
from .loop_search import MIN_TRIPS, _Context, _Stretch, _copy_nodes
from .loop_window import NotWindowed, shape_steps

# Nodes a stretch must hold to roll: a short loop of elementwise steps fuses into one
# kernel unrolled, and rolled would run a kernel per trip (8 steps of x * 0.999 + 0.5:
# 1.4 ms fused, 17.7 ms rolled).
MIN_ROLLED_NODES = 128
MAX_DEPTH = 3                   # trips a value may be carried (time levels of a scheme)
# Trips a windowed loop must have (loop_window.py): below it, a body per shape compiles
# within the budget (0.5-4 s each) and runs faster: no masked lanes, and its writes have
# static places, which buffers.py updates in place.
WINDOW_MIN_TRIPS = 16
# ... but a loop of as few as this many trips rolls where its body is one that rolled in
# the same search: the inner loops of a triangular nest (`for k: for j in range(k + 1,
# n)`) whose trips ran short.  Their outer copies then hold one loop each, with one body,
# and the outer loop rolls over them too (a dynamic loop: its trip count an input).
SHORT_TRIPS = 2
# The fewest trips of a row of a loop nest that rolls row by row (`_is_row_of_nest`).
NEST_MIN_TRIPS = 4


def _too_short(order, stretch, trips: int, least: int) -> bool:
    """Whether `trips` of the stretch's copies are too few to roll.  Copies cut short by
    their moves (slices whose starts step only within a row) in a stretch of at least
    MIN_TRIPS such runs are the inner loop of a nest, which rolls whole once the search
    after this one rolls the loop around it: the nest's nodes count (maxpool2d's rows
    of 12 windows, 10 nodes each, fell below MIN_ROLLED_NODES, and its 1,440 nodes stayed
    unrolled)."""
    if trips < least:
        return True
    nest = stretch.trips if stretch.trips >= MIN_TRIPS * trips else trips
    return least >= MIN_TRIPS and nest * _copy_nodes(order, stretch) < MIN_ROLLED_NODES


def _is_row_of_nest(context: _Context, stretch: _Stretch, cut: int, skip, least: int
                    ) -> bool:
    """Whether the stretch's first `cut` copies, too few to roll alone, are the first row
    of a nest: rows of `cut` copies (at least NEST_MIN_TRIPS) whose moves are steady
    within a row, at least two rows, MIN_TRIPS copies and MIN_ROLLED_NODES nodes in all.
    Each row then rolls, and the rows share one body (loop_fold.py leaves the places in
    which they differ as inputs): lenet's 4x4 maxpool2d, 16 unrolled windows fused into
    kernels that took 7.5 s to compile."""
    if least < MIN_TRIPS or not NEST_MIN_TRIPS <= cut < least or \
            stretch.trips < max(MIN_TRIPS, 2 * cut) or \
            stretch.trips * _copy_nodes(context.order, stretch) < MIN_ROLLED_NODES:
        return False
    row = _Stretch(stretch.start + cut * stretch.period, stretch.period, stretch.trips - cut)
    return _moves(context, row, min(cut + 1, row.trips), skip=skip)[1] == cut


class _Loop(BodyMixin):
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
        self.nest_row = False               # a row of a nest, short (`_is_row_of_nest`)

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
        moves, cut = _moves(context, stretch, trips, skip=windowed_offsets)
        row = _too_short(order, stretch, cut, least)
        if row and not _is_row_of_nest(context, _Stretch(start, period, trips), cut,
                                       windowed_offsets, least):
            return None
        trips = cut
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
        loop.nest_row = row
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
