"""Pytrees: flatten/unflatten round trips, leaf order, hashable structures, tree_map."""
from __future__ import annotations

import collections

import numpy as np
import pytest

from xlanb.pytree import (PyTreeDef, tree_flatten, tree_leaves, tree_map, tree_structure,
                          tree_unflatten)

Point = collections.namedtuple("Point", "x y")

TREES = [
    1.0,
    None,
    (),
    [],
    {},
    (1, 2),
    [1, (2, 3), [4]],
    {"b": 1, "a": 2, "c": [3, None]},
    Point(1, Point(2, 3)),
    {"params": {"w": np.ones(2), "b": np.zeros(1)}, "step": 3, "extra": (None, "tag")},
    collections.OrderedDict([("z", 1), ("y", 2)]),
    collections.defaultdict(list, {"k": [1, 2]}),
]


@pytest.mark.parametrize("tree", TREES, ids=repr)
def test_round_trip(tree):
    leaves, treedef = tree_flatten(tree)
    rebuilt = tree_unflatten(treedef, leaves)
    assert type(rebuilt) is type(tree)
    assert all(a is b for a, b in zip(tree_leaves(rebuilt), leaves))
    if not any(isinstance(leaf, np.ndarray) for leaf in leaves):
        assert rebuilt == tree
    assert treedef.num_leaves == len(leaves)
    assert hash(treedef) == hash(tree_structure(rebuilt)) and treedef == tree_structure(rebuilt)


def test_dict_leaves_in_sorted_key_order_like_jax():
    leaves, treedef = tree_flatten({"b": [1, 2], "a": (3, None)})
    assert leaves == [3, 1, 2]
    assert tree_unflatten(treedef, ["x", "y", "z"]) == {"a": ("x", None), "b": ["y", "z"]}
    assert repr(treedef) == "PyTreeDef({'a': (*, None), 'b': [*, *]})"


def test_none_is_an_empty_node_and_arrays_are_leaves():
    leaves, treedef = tree_flatten([None, np.arange(3), (None,)])
    assert len(leaves) == 1 and isinstance(leaves[0], np.ndarray)
    assert treedef.num_leaves == 1


def test_structures_are_hashable_cache_keys():
    cache = {tree_structure({"a": 1, "b": (2, 3)}): "hit"}
    assert cache[tree_structure({"b": (7, 8), "a": 9})] == "hit"
    assert tree_structure((1, 2)) != tree_structure([1, 2])
    assert tree_structure(Point(1, 2)) != tree_structure((1, 2))
    assert tree_structure({"a": 1}) != tree_structure({"b": 1})
    assert isinstance(tree_structure(1), PyTreeDef)


def test_tree_map_over_several_trees():
    a = {"w": np.ones(2), "b": [1.0, 2.0]}
    b = {"w": np.full(2, 3.0), "b": [10.0, 20.0]}
    out = tree_map(lambda x, y: x + y, a, b)
    np.testing.assert_array_equal(out["w"], np.full(2, 4.0))
    assert out["b"] == [11.0, 22.0]
    assert tree_map(lambda x: x * 2, Point(1, None)) == Point(2, None)


def test_tree_map_structure_mismatch_names_both():
    with pytest.raises(ValueError, match=r"tree 1 has structure .*\[\*\].*tree 0 has"):
        tree_map(lambda x, y: x, [1, 2], [1])


def test_unflatten_checks_leaf_count():
    with pytest.raises(ValueError, match="has 2 leaves, got 3"):
        tree_unflatten(tree_structure((1, 2)), [1, 2, 3])


def test_is_leaf_and_tree_leaves():
    tree = {"a": (1, 2), "b": [3]}
    assert tree_leaves(tree) == [1, 2, 3]
    leaves, _ = tree_flatten(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), 3]
