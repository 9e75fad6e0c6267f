"""Nodes and graphs: the SSA program every pass consumes and produces.

A `Node` is immutable once built: (op, inputs, shape, dtype, arg) plus `loc`, the user's
source line it came from (carried through passes so errors and reports can point at it),
and `serial`, its place in creation order (a trace builds nodes in the order the user's
code runs: what `loop-reroll` reads iterations from).
A `Graph` is a list of parameters and a list of outputs; its nodes are whatever the outputs
reach, in a deterministic topological order.
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from .ops import Op


_serials = itertools.count()
# the classes of NumPy's dtype instances (np.dtype("float32") is a Float32DType)
_DTYPE_CLASSES = frozenset(type(np.dtype(c)) for c in "?bhilqBHILQefdgFDGSUVOMm")


class Node:
    __slots__ = ("op", "inputs", "shape", "dtype", "arg", "loc", "serial", "__weakref__")

    def __init__(self, op: Op, inputs: Sequence["Node"], shape: tuple[int, ...],
                 dtype: np.dtype, arg: Any = None, loc: str | None = None):
        self.serial = next(_serials)
        self.op = op
        self.inputs = tuple(inputs)
        # the common case cheaply (traces build nodes by the thousand): a tuple of ints
        # and a dtype stay as they are; NumPy integers and other dtype-likes convert
        self.shape = tuple(map(int, shape))
        self.dtype = dtype if type(dtype) in _DTYPE_CLASSES else np.dtype(dtype)
        self.arg = arg
        self.loc = loc

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def key(self) -> tuple:
        """Structural identity given the inputs' identities (what CSE merges on)."""
        return (self.op, tuple(id(i) for i in self.inputs), self.shape, self.dtype.str,
                arg_key(self.arg))

    def __repr__(self) -> str:
        return f"Node({self.op.value}, {type_str(self.dtype, self.shape)})"


def arg_key(arg: Any) -> Any:
    """A hashable stand-in for a node's arg (constants carry arrays, loops a body)."""
    if isinstance(arg, np.ndarray):
        return ("array", arg.dtype.str, arg.shape, arg.tobytes())
    if isinstance(arg, LoopBody):
        return ("loop", arg.trips, arg.carried, arg.dynamic, arg.fingerprint)
    return arg


@dataclass(frozen=True, eq=False)
class LoopBody:
    """The arg of a `loop` node: run `body` `trips` times.

    The loop's inputs are the body's params: the first `carried` are the initial values of
    the loop-carried state, the rest are read by every iteration unchanged.  The body's
    first `carried` outputs are the state's next values; any further outputs are values of
    the last iteration that the program reads after the loop.  `loop-result(loop), arg=k`
    is the body's output k after the last trip.

    A `dynamic` loop runs as many trips as its last input says (an int64 scalar, also the
    body's last parameter, which the body may ignore): an inner loop whose trip count
    counts with the trip of a loop around it (`for k: for j in range(k + 1, n)`), so that
    the outer copies have one body.  `trips` is then the count traced first, an estimate;
    the count is at least 1 on every trip (loop-reroll makes it only from traced counts)."""
    trips: int
    carried: int
    body: "Graph"
    dynamic: bool = False

    def count(self, inputs) -> int:
        """The trips to run, given the loop's inputs."""
        return trip_count(inputs[-1]) if self.dynamic else self.trips

    @functools.cached_property
    def fingerprint(self) -> str:
        return self.body.fingerprint()


def trip_count(value) -> int:
    """A dynamic loop's trip count from its input (rank 0 may run as shape (1,))."""
    return int(np.asarray(value).reshape(-1)[0])


DTYPE_NAMES = {"bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
               "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
               "float16": "f16", "float32": "f32", "float64": "f64",
               "complex64": "c64", "complex128": "c128"}
DTYPES_BY_NAME = {v: np.dtype(k) for k, v in DTYPE_NAMES.items()}


def type_str(dtype: np.dtype, shape: tuple[int, ...]) -> str:
    """HLO-style type: f32[4,8]."""
    return f"{DTYPE_NAMES[np.dtype(dtype).name]}[{','.join(str(d) for d in shape)}]"


class Graph:
    """A program: `params[i]` is flat argument i; `outputs` are returned in order."""

    def __init__(self, params: Sequence[Node], outputs: Sequence[Node], name: str = "main"):
        self.params = list(params)
        self.outputs = list(outputs)
        self.name = name
        self._nodes: list[Node] | None = None

    @property
    def nodes(self) -> list[Node]:
        """Every node reachable from the outputs (and all params), topologically ordered."""
        if self._nodes is None:
            self._nodes = topological_order(self.outputs, self.params)
        return self._nodes

    def users(self) -> dict[int, list[Node]]:
        """id(node) -> nodes that read it (an output also counts as a use, by `None`)."""
        users: dict[int, list[Node]] = {id(n): [] for n in self.nodes}
        for n in self.nodes:
            for i in n.inputs:
                users[id(i)].append(n)
        return users

    def fingerprint(self) -> str:
        """A structural hash: equal for graphs that print the same (large constants
        hashed by their bytes, not printed)."""
        from .printer import print_graph
        return hashlib.sha256(print_graph(self, digest_arrays=True).encode()).hexdigest()[:16]

    def __len__(self) -> int:
        return len(self.nodes)

    def __repr__(self) -> str:
        return f"Graph({self.name}, {len(self.params)} params, {len(self.nodes)} nodes)"


def topological_order(outputs: Iterable[Node], extra: Iterable[Node] = ()) -> list[Node]:
    """Post-order DFS without recursion, so deep chains don't hit the recursion limit."""
    order: list[Node] = []
    seen: set[int] = set()
    for root in list(extra) + list(outputs):
        if id(root) in seen:
            continue
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            for inp in reversed(node.inputs):
                if id(inp) not in seen:
                    stack.append((inp, False))
    return order


def rebuild(graph: Graph, rewrite, name: str | None = None) -> Graph:
    """Copy `graph` bottom-up; `rewrite(node, new_inputs)` returns the replacement node.

    The helper every pass uses: it maps old nodes to new ones in topological order, so a
    rewrite sees its inputs already rewritten.
    """
    mapping: dict[int, Node] = {}
    changed = False
    for node in graph.nodes:
        new_inputs = tuple(mapping[id(i)] for i in node.inputs)
        mapping[id(node)] = new = rewrite(node, new_inputs)
        changed = changed or new is not node
    if not changed and (name is None or name == graph.name):
        return graph                     # nothing rewritten: the same graph object
    return Graph([mapping[id(p)] for p in graph.params],
                 [mapping[id(o)] for o in graph.outputs], name or graph.name)


def with_inputs(node: Node, inputs: Sequence[Node]) -> Node:
    """The same node over new inputs (itself when nothing changed)."""
    if all(a is b for a, b in zip(node.inputs, inputs)):
        return node
    return Node(node.op, inputs, node.shape, node.dtype, node.arg, node.loc)
