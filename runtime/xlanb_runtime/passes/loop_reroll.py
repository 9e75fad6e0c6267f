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

This module runs the searches; the rest lives beside it: loop_search.py (the keys, periods
and stretches of copies), loop_moves.py (places and constants that move with the trip),
loop_match.py (whether a stretch is a loop: `_Loop`), loop_body.py (its body graph),
loop_window.py (windows over shapes that change) and loop_fold.py.
"""
from __future__ import annotations

from ..ir.graph import Graph, Node
from ..ir.ops import Op
from .loop_fold import fold_constant_inputs
from .loop_match import (MAX_DEPTH, MIN_ROLLED_NODES, SHORT_TRIPS,  # noqa: F401
                         WINDOW_MIN_TRIPS, _Loop)
from .loop_moves import MAX_WRITE_SPREAD, SMALL_WRITE_TARGET  # noqa: F401
from .loop_moves import _is_counting_constant
from .loop_search import (MIN_TRIPS, _Context, _Stretch, _aligned, _before_loops,
                          _candidate_periods, _copy_arg, _end, _interned_keys, _later_phases,
                          _periodic_stretches, _window_periods)
from .loop_window import NotWindowed


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
    if not loops:
        return None
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
            stretch = _before_loops(
                _aligned(context, _before_loops(stretch, loops), keys), loops)
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


def _resume_after(loop: "_Loop", stretch: "_Stretch", index: int) -> int:
    """Where the search goes on after a loop found in `stretch`: right after the loop
    where its moves cut it short (conv2d's 31 inner loops of 31 trips each trace as one
    stretch of 961 copies, their slices' starts steady only within a row), so one search
    rolls every inner loop and the next rolls the loop around them."""
    return _end(loop.stretch) if _end(loop.stretch) < _end(stretch) else index


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
    long |= {m.fingerprint(name) for m in loops if m.nest_row}
    return [m for m in loops
            if m.stretch.trips >= MIN_TRIPS or m.fingerprint(name) in long]


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
