"""Hypothesis: random sequences of in-place statements on views of one or two arrays (the
same array twice included), run by NumPy and by xlanb (jit and auto-clustering); every
argument and the returned values must match afterwards."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import xlanb

SHAPE = (4, 6)
VIEWS = [                                   # (name, view of a (4, 6) array)
    ("all", lambda a: a),
    ("row", lambda a: a[1]),
    ("rows", lambda a: a[1:3]),
    ("stride", lambda a: a[:, ::2]),
    ("reversed", lambda a: a[::-1, 1:5]),
    ("transpose", lambda a: a.T),
    ("flat", lambda a: a.reshape(-1)[3:15]),
    ("newaxis", lambda a: a[None, 2, :][0]),
]
STATEMENTS = [                              # (name, statement on a view v, other array w)
    ("iadd", lambda v, w: v.__iadd__(1.5)),
    ("imul_view", lambda v, w: v.__imul__(w.reshape(-1)[:v.size].reshape(v.shape))),
    ("setitem_all", lambda v, w: v.__setitem__(..., 2.0)),
    ("setitem_first", lambda v, w: v.__setitem__(0, -1.0)),
    ("ufunc_out", lambda v, w: np.multiply(v, 0.5, out=v)),
    ("copyto", lambda v, w: np.copyto(v, w.reshape(-1)[-v.size:].reshape(v.shape))),
    ("fill", lambda v, w: v.fill(0.25)),
    ("mask", lambda v, w: v.__setitem__(v > 0.5, 0.0)),
]

statement = st.tuples(st.integers(0, 1), st.sampled_from(range(len(VIEWS))),
                      st.sampled_from(range(len(STATEMENTS))))


def program(steps):
    def fn(a, b):
        arrays = (a, b)
        for target, view, stmt in steps:
            v = VIEWS[view][1](arrays[target])
            STATEMENTS[stmt][1](v, arrays[1 - target])
        return a.sum() + 2 * b.sum(), a
    return fn


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(statement, min_size=1, max_size=5), aliased=st.booleans(),
       must_compile=st.booleans())
def test_random_in_place_programs(steps, aliased, must_compile):
    fn = program(steps)
    base = np.random.default_rng(len(steps)).random(SHAPE)
    other = np.random.default_rng(7).random(SHAPE)
    e_a, g_a = base.copy(), base.copy()
    e_b, g_b = (e_a, g_a) if aliased else (other.copy(), other.copy())
    expected = fn(e_a, e_b)
    got = xlanb.jit(fn, must_compile=must_compile)(g_a, g_b)
    np.testing.assert_allclose(g_a, e_a, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(g_b, e_b, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    assert got[1] is g_a
