"""Pytrees: nested containers of arrays, flattened to a list of leaves plus a structure.

Containers are dict (keys sorted, like JAX; an OrderedDict keeps its order), list, tuple,
namedtuple and None (a container with no children); anything else is a leaf.  The
structure, a `PyTreeDef`, is an immutable, hashable value: `xlanb.jit` makes it part of its
cache key, so two calls with the same nesting and leaf types share a compiled program.

    >>> leaves, treedef = tree_flatten({"b": [1, 2], "a": (3, None)})
    >>> leaves
    [3, 1, 2]
    >>> tree_unflatten(treedef, ["x", "y", "z"])
    {'a': ('x', None), 'b': ['y', 'z']}
"""
from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

LEAF, NONE, TUPLE, LIST, DICT, NAMEDTUPLE = "leaf", "none", "tuple", "list", "dict", "namedtuple"


@dataclass(frozen=True)
class PyTreeDef:
    """The shape of a pytree without its leaves.

    `kind` is one of leaf/none/tuple/list/dict/namedtuple; `meta` is what rebuilding needs
    (the dict's type and sorted keys, the namedtuple class); `children` are subtrees.
    """
    kind: str
    meta: Any = None
    children: tuple["PyTreeDef", ...] = ()

    @property
    def num_leaves(self) -> int:
        if self.kind == LEAF:
            return 1
        return sum(child.num_leaves for child in self.children)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        return tree_unflatten(self, leaves)

    def __repr__(self) -> str:
        return f"PyTreeDef({_describe(self)})"


_LEAF_DEF = PyTreeDef(LEAF)
_NONE_DEF = PyTreeDef(NONE)


def _describe(treedef: PyTreeDef) -> str:
    kids = [_describe(c) for c in treedef.children]
    if treedef.kind == LEAF:
        return "*"
    if treedef.kind == NONE:
        return "None"
    if treedef.kind == LIST:
        return "[" + ", ".join(kids) + "]"
    if treedef.kind == TUPLE:
        return "(" + ", ".join(kids) + ("," if len(kids) == 1 else "") + ")"
    if treedef.kind == NAMEDTUPLE:
        return f"{treedef.meta.__name__}(" + ", ".join(kids) + ")"
    keys = treedef.meta[1]
    return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(keys, kids)) + "}"


def _sorted_keys(d: dict) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError:                      # keys of mixed types: still deterministic
        return tuple(sorted(d, key=lambda k: (type(k).__name__, repr(k))))


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], PyTreeDef]:
    """Leaves in a fixed order (dicts by sorted key) and the structure to rebuild the tree."""
    leaves: list[Any] = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _flatten(tree: Any, leaves: list, is_leaf) -> PyTreeDef:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF_DEF
    if tree is None:
        return _NONE_DEF
    if isinstance(tree, dict):
        ordered = isinstance(tree, collections.OrderedDict)   # keeps its order, like JAX
        keys = tuple(tree) if ordered else _sorted_keys(tree)
        extra = tree.default_factory if isinstance(tree, collections.defaultdict) else None
        children = tuple(_flatten(tree[k], leaves, is_leaf) for k in keys)
        return PyTreeDef(DICT, (type(tree), keys, extra), children)
    if _is_namedtuple(tree):
        return PyTreeDef(NAMEDTUPLE, type(tree),
                         tuple(_flatten(c, leaves, is_leaf) for c in tree))
    if type(tree) in (tuple, list):
        kind = TUPLE if type(tree) is tuple else LIST
        return PyTreeDef(kind, None, tuple(_flatten(c, leaves, is_leaf) for c in tree))
    leaves.append(tree)
    return _LEAF_DEF


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """The inverse of `tree_flatten`: put `leaves` back into `treedef`'s structure."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"tree_unflatten: {treedef} has {treedef.num_leaves} leaves, "
                         f"got {len(leaves)}")
    iterator = iter(leaves)
    return _unflatten(treedef, iterator)


def _unflatten(treedef: PyTreeDef, leaves) -> Any:
    kind = treedef.kind
    if kind == LEAF:
        return next(leaves)
    if kind == NONE:
        return None
    children = [_unflatten(c, leaves) for c in treedef.children]
    if kind == TUPLE:
        return tuple(children)
    if kind == LIST:
        return children
    if kind == NAMEDTUPLE:
        return treedef.meta(*children)
    cls, keys, extra = treedef.meta
    items = list(zip(keys, children))
    if cls is collections.defaultdict:
        return collections.defaultdict(extra, items)
    try:
        return cls(items)
    except TypeError:
        return dict(items)


def tree_leaves(tree: Any) -> list[Any]:
    return tree_flatten(tree)[0]


def tree_structure(tree: Any) -> PyTreeDef:
    return tree_flatten(tree)[1]


def tree_map(fn: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """fn applied leaf-wise; every tree in `rest` must have `tree`'s structure."""
    leaves, treedef = tree_flatten(tree)
    others = []
    for i, other in enumerate(rest, start=1):
        other_leaves, other_def = tree_flatten(other)
        if other_def != treedef:
            raise ValueError(f"tree_map: tree {i} has structure {other_def}, but tree 0 has "
                             f"{treedef}; all trees must have the same structure")
        others.append(other_leaves)
    return tree_unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others)])


def make_unflattener(treedef: PyTreeDef) -> Callable[[Sequence[Any]], Any]:
    """A function rebuilding `treedef` from a flat sequence, compiled once (the jit call path
    uses it every call, so it avoids walking the structure)."""
    counter = iter(range(treedef.num_leaves))
    env: dict[str, Any] = {}

    def build(node: PyTreeDef) -> str:
        if node.kind == LEAF:
            return f"leaves[{next(counter)}]"
        if node.kind == NONE:
            return "None"
        parts = [build(c) for c in node.children]
        if node.kind == TUPLE:
            return "(" + "".join(p + ", " for p in parts) + ")"
        if node.kind == LIST:
            return "[" + ", ".join(parts) + "]"
        name = f"_cls{len(env)}"
        if node.kind == NAMEDTUPLE:
            env[name] = node.meta
            return f"{name}({', '.join(parts)})"
        cls, keys, extra = node.meta
        if cls is not dict:
            env[name] = lambda items, _n=node: _unflatten(_n, iter(items))
            return f"{name}([{', '.join(parts)}])"
        env[f"_keys{len(env)}"] = keys
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(keys, parts)) + "}"

    if treedef.kind == DICT and treedef.meta[0] is not dict or any(
            not isinstance(k, (str, int)) for k in _dict_keys(treedef)):
        return lambda leaves: tree_unflatten(treedef, leaves)
    source = f"def unflatten(leaves):\n    return {build(treedef)}\n"
    exec(compile(source, "<xlanb unflatten>", "exec"), env)
    return env["unflatten"]


def _dict_keys(treedef: PyTreeDef):
    if treedef.kind == DICT:
        yield from treedef.meta[1]
    for child in treedef.children:
        yield from _dict_keys(child)
