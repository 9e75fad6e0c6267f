"""The body graph of a rolled loop (`loop-reroll`, loop_reroll.py): copy 0 of its
stretch with the carried values and invariants made parameters, each moving slice or pad
placed at first + trip * step, each counting constant computed from the trip, windows
built by loop_window.py, and the first places as loop inputs (loop_fold.py folds the
constant ones back)."""
from __future__ import annotations

import numpy as np

from ..ir import builder as B
from ..ir.graph import Graph, LoopBody, Node
from ..ir.ops import Op
from .loop_window import WindowBuilder

TRIP = (-1, 1)                  # the carried trip counter's key among carried values'


class BodyMixin:
    """Builds a `_Loop`'s body graph (loop_match.py) from the fields it matched."""

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
        Moves alike (op, shape, first places and steps: the mask and the value of one
        write) share their parameters, so that the write stays one region (codegen/cpu.py
        `region_update`); others do not, even where a place has the same value: the row
        i = 0 of maxpool2d's `out[:, i, j, :] = max(x[:, 2*i:2*i+2, 2*j:2*j+2, :])` would
        share the slice's row 2*i = 0 with the write's, the rows i > 0 not, and the loop
        over rows would not roll.
        """
        keys: dict[tuple, Node] = {}
        for offset, (first, step) in sorted(self.moves.items()):
            for key, f in zip(self._move_keys(offset), first):
                if key not in keys:
                    keys[key] = B.constant(np.asarray(f, key[1])[()])
        for f in self.window_firsts:            # then the windows' (loop_window.py)
            keys.setdefault(("first", "<i8", f), B.constant(np.int64(f)))
        return list(keys.items())

    def _move_keys(self, offset: int) -> list[tuple]:
        """The parameter keys of the first places of the move at `offset`, one per dim."""
        first, step = self.moves[offset]
        template = self.order[self.stretch.start + offset]
        alike = (template.op, template.shape, tuple(first), tuple(step))
        dtype = self._place_dtype(offset).str
        return [("first", dtype, f, dim, alike) for dim, f in enumerate(first)]

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
        firsts = [params[key] for key in self._move_keys(offset)]
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


# The longest vector dot a rolled body computes as a multiply and a sum (`_is_small_vector_dot`).
MAX_ROLLED_VECTOR_DOT = 4096


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
