"""`x[mask]` with a traced mask: reductions and same-mask updates compile, the rest is named.

Also `where=`/`initial=`/`out=` on reductions, which the masked reductions lower to.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import xlanb
from xlanb.errors import DataDependentShapeError


def run_both(fn, args, must_compile=True):
    expected_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = fn(*expected_args)
    got = xlanb.jit(fn, must_compile=must_compile)(*got_args)
    for e, g in zip(expected_args, got_args):
        np.testing.assert_allclose(g, e, rtol=1e-12)
    pairs = zip(expected, got) if isinstance(expected, tuple) else [(expected, got)]
    for e, g in pairs:
        if e is None:
            assert g is None
            continue
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=1e-12)


def _reductions(x):
    m = x > 0.5
    return x[m].sum(), x[m].mean(), (x[m] ** 2).sum(), np.sum(x[m] * 2), x[m].any(), \
        np.prod(x[m] + 1)


def _same_mask_update(x, y):
    y[x > 0.2] = x[x > 0.2] * 2 + 1


def _snapshot_before_write(x):
    m = x > 0.3
    selected = x[m]
    x[m] = 0.0
    return selected.sum()


def _row_mask(v, keep):
    v[keep] = -v[keep]


def _mask_with_basic_entries(x, rows, cols):
    x[rows, 1] = 0.0                 # NumPy: x[:, 1][rows] = 0.0
    x[:, cols] = -1.0                # a mask after a full slice
    x[..., cols[:3]] = 7.0           # a mask over the trailing dims
    x[rows, 2:, ::2] = 3.5


def _julia_step(z, c):
    alive = np.abs(z) < 2
    z[alive] = z[alive] ** 2 + c              # c: a traced Python scalar, broadcast
    return alive


MODES = [pytest.param(True, id="jit"), pytest.param(False, id="autocluster")]
RNG = np.random.default_rng(3)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn,args", [
    (_reductions, (RNG.random(12),)), (_same_mask_update, (RNG.random(9), np.zeros(9))),
    (_snapshot_before_write, (RNG.random(8),)),
    (_row_mask, (RNG.random((5, 3)), RNG.random(5) > 0.5)),
    (_julia_step, (RNG.random(7) * 3 + 0.5j, -0.8 + 0.156j)),
    (_mask_with_basic_entries, (RNG.random((4, 5, 3)), RNG.random(4) > 0.5,
                                RNG.random(5) > 0.5))])
def test_masked_selections_match_numpy(fn, args, mode):
    run_both(fn, args, mode)


def _extremes(x):
    keep = ~(x > 0.9)                         # a NaN is kept: it propagates, as in NumPy
    return x[keep].max(), x[keep].min(), np.max(x[x >= 0.3]), np.amin(x[x < 0.7]), \
        (x[keep] * 2).max()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("values", [
    pytest.param(np.where(np.arange(11) == 4, np.nan, RNG.random(11)), id="f64-nan-kept"),
    pytest.param(np.where(np.arange(11) == 4, 2.0, RNG.random(11)), id="f64"),
    pytest.param(RNG.random(9).astype(np.float32), id="f32"),
    pytest.param((RNG.random(9) * 0.99).astype(np.float64)[::-2], id="f64-reversed")])
def test_selection_max_and_min_compile(values, mode):
    """`x[mask].max()` / `.min()` lower to a reduction with `where=mask` (and a run-time
    check for an empty selection): they compile, with NumPy's values."""
    with np.errstate(invalid="ignore"):
        run_both(_extremes, (values,), mode)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64])
def test_integer_selection_extremes(dtype):
    x = RNG.permutation(np.repeat(np.arange(0, 40, 3), 2)).astype(dtype)     # with ties
    run_both(lambda x: (x[x > 10].max(), x[x < 30].min(), x[x != 6].min()), (x,))


def test_bool_selection_extremes():
    x, keep = RNG.random(10) > 0.5, np.arange(10) % 3 == 0
    run_both(lambda x, keep: (x[keep].max(), x[keep].min(), x[~x].max()), (x, keep))


@pytest.mark.parametrize("name,reduction", [("max", "maximum"), ("min", "minimum")])
def test_an_empty_selection_raises_numpys_error_from_the_compiled_program(name, reduction):
    x = np.linspace(0.0, 1.0, 6)
    before = x.copy()
    f = xlanb.jit(lambda x: getattr(x[x > 2.0], name)())
    with pytest.raises(ValueError, match=f"reduction operation {reduction} which has no "
                                         "identity"):
        getattr(x[x > 2.0], name)()
    with pytest.raises(ValueError, match=f"reduction operation {reduction} which has no "
                                         "identity"):
        f(x)
    np.testing.assert_array_equal(x, before)
    assert f(x + 2.5) == getattr(x + 2.5, name)()              # the same program, selected
    assert all(k.kind != "interpreted" for k in f.last_compiled.kernels)


def test_empty_selection_mean_is_nan_like_numpy():
    x = np.zeros(4)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        expected = x[x > 1].mean()
    got = xlanb.jit(lambda x: x[x > 1].mean())(x)
    assert np.isnan(got) and np.isnan(expected)


def _selection_written_in_place(x):
    s = x[x > 0.3]
    alias = s
    np.multiply(s, 2, out=s)                  # writes into the selection (a copy of x's)
    s += 1
    s[0] = -1.0
    return np.concatenate(([alias.sum()], s * x[x > 0.3], x[(s > 1).astype(int)]))


@pytest.mark.parametrize("fn", [lambda x: len(x[x > 0.5]),
                                _selection_written_in_place,
                                lambda x: np.sort(x[x > 0.5]), lambda x: x[x > 0.5],
                                lambda x: 2 * x[x > 0.5] + 1])
def test_shape_dependent_uses_are_named_under_jit_and_run_under_autoclustering(fn):
    x = RNG.random(10)
    with pytest.raises(DataDependentShapeError):
        xlanb.jit(fn)(x)
    np.testing.assert_allclose(xlanb.jit(fn, must_compile=False)(x), fn(x))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [
    lambda x, m: np.sum(x, where=m), lambda x, m: np.sum(x, axis=1, where=m, initial=2.0),
    lambda x, m: np.prod(x, axis=0, where=m), lambda x, m: np.mean(x, axis=0, where=m),
    lambda x, m: np.max(x, where=m, initial=-1.0),
    lambda x, m: np.min(x, axis=1, where=m, initial=5.0),
    lambda x, m: np.any(x > 0.9, where=m), lambda x, m: np.all(x > 0.1, axis=0, where=m),
    lambda x, m: np.sum((x * 10).astype(np.int32), where=m, axis=0)])
def test_reduction_where_and_initial(fn, mode):
    x = RNG.random((4, 5))
    run_both(fn, (x, x > 0.4), mode)


def test_reduction_out():
    def f(x, out):
        np.sum(x, axis=0, out=out)
        return np.max(x, axis=1, out=None)
    run_both(f, (RNG.random((3, 4)), np.zeros(4)))
