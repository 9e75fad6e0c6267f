"""In-place region updates (buffers.py): `x[a:b] = v` over a buffer nothing reads afterwards
writes only the region, as XLA's in-place dynamic-update-slice does for a while loop's
carried buffers; results and arguments stay NumPy's, including where v reads x."""
from __future__ import annotations

import copy

import numpy as np

import xlanb

from tolerance import assert_close


def syrk(alpha, beta, C, A):
    """npbench's syrk: each inner loop rolls, carrying C and writing one row per trip."""
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]


def _check(fn, args, static=()):
    expected_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = fn(*expected_args)
    jitted = xlanb.jit(fn, static_argnums=static)
    got = jitted(*got_args)
    for e, g in zip(*(r if isinstance(r, tuple) else (r,) for r in (expected, got))):
        assert_close(np.asarray(g), np.asarray(e), n=40, k=4)
    for e, g in zip(expected_args, got_args):
        if isinstance(e, np.ndarray):
            assert_close(g, e, n=40, k=4)
    return jitted.lower(*copy.deepcopy(args)).compile()


def _donated(compiled) -> list:
    """Per rolled loop, the carried parameters its body writes in place."""
    dispatchers = compiled.executable.dispatchers
    return [sorted(dispatchers[k.name].donated) for k in compiled.executable.plan.kernels
            if k.name.startswith("loop.")]


def test_a_loop_writing_one_row_of_its_carried_array_updates_it_in_place():
    rng = np.random.default_rng(0)
    args = [1.5, 1.2, rng.random((10, 10)), rng.random((10, 16))]
    compiled = _check(syrk, args)
    donated = _donated(compiled)
    assert donated and all(d == [1] for d in donated)     # C: carried after the trip count


def test_reads_of_other_elements_of_the_row_are_staged_then_written_in_place():
    """v reads x shifted, or one element broadcast: written straight in place those reads
    would see values already replaced, so the kernel computes v into a temporary first."""
    def shifted(x, w):
        for k in range(16):
            x[2, 1:] = x[2, :-1] * w[k] + x[2, 1:]
            x[2, :] = x[2, :] * 0.5 + x[2, 0]
        return x

    rng = np.random.default_rng(1)
    compiled = _check(shifted, [rng.random((6, 9)), rng.random(16)])
    assert any(d for d in _donated(compiled))
    body_sources = "\n".join(k.source for k in compiled.kernels)
    assert "empty((1, 8), np.float64)" in body_sources and \
        "empty((1, 9), np.float64)" in body_sources


def test_a_carried_first_value_that_the_caller_keeps_is_copied_not_written():
    def rows(x, w):
        y = np.array(x)                    # NumPy copies: x stays as it was
        for k in range(16):
            y[3, :] = y[3, :] * w[k] + 1.0
        return y

    rng = np.random.default_rng(2)
    x = rng.random((5, 7))
    before = x.copy()
    compiled = _check(rows, [x, rng.random(16)])
    assert any(d for d in _donated(compiled))
    got = xlanb.jit(rows)(x, np.ones(16))
    np.testing.assert_array_equal(x, before)
    assert_close(got, rows(before.copy(), np.ones(16)), n=40, k=4)


def test_an_intermediate_updated_once_is_written_in_place():
    def update(x):
        y = np.sin(x)
        total = y.sum()                    # y is read twice: a buffer of its own
        y[1, 2:5] = y[1, 2:5] + total      # so the sum runs first
        return y

    x = np.random.default_rng(3).random((40, 60))
    compiled = _check(update, [x])
    (region,) = [k.source for k in compiled.kernels if "+ 2] = " in k.source]
    # stored through y's own name: no copy of y, no second name of its buffer
    assert "in0[k0 + 1, k1 + 2] = " in region and "out0" not in region, region
    storage = compiled.executable.buffers.storage
    assert any(s.kind == "update" for s in storage.values())


def deriche_rows(img, b1, b2):
    """npbench deriche's first sweep: each trip writes one column of y from the two
    columns before it (a strided region, placed at run time once the loop rolls)."""
    y = np.empty_like(img)
    y[:, 0] = img[:, 0]
    y[:, 1] = img[:, 1] + b1 * y[:, 0]
    for j in range(2, img.shape[1]):
        y[:, j] = img[:, j] + b1 * y[:, j - 1] + b2 * y[:, j - 2]
    return y


def test_a_rolled_column_write_reading_earlier_columns_updates_in_place():
    """The array is 10x the column's size and more: rolled, each trip writes its column
    into the carried buffer (the value staged first, as it reads other columns)."""
    img = np.random.default_rng(4).random((12, 40))
    compiled = _check(deriche_rows, [img, 0.6, -0.3], static=(1, 2))
    assert any(d for d in _donated(compiled))
    sources = "\n".join(k.source for k in compiled.kernels)
    assert "empty((12, 1), np.float64)" in sources     # the staged column


def thomas_forward(c, d, w, a):
    """npbench vadv's forward sweep: two writes to one slab of c and of d per trip, the
    second reading the first (simplified to two updates of the trip's first c)."""
    for k in range(1, c.shape[2] - 1):
        c[:, :, k] = w[:, :, k] * 0.5
        divided = 1.0 / (a - c[:, :, k - 1] * w[:, :, k])
        c[:, :, k] = c[:, :, k] * divided
        d[:, :, k] = (d[:, :, k] - d[:, :, k - 1] * w[:, :, k]) * divided
    return c, d


def test_two_writes_of_one_region_per_trip_update_in_place():
    rng = np.random.default_rng(5)
    args = [rng.random((5, 6, 20)), rng.random((5, 6, 20)), rng.random((5, 6, 20)),
            rng.random((5, 6)) + 2.0]
    compiled = _check(thomas_forward, args)
    donated = _donated(compiled)
    assert donated and all(len(d) == 2 for d in donated)    # c and d, in place
    loops = [d.source for d in compiled.executable.dispatchers.values()
             if hasattr(d, "source")]
    # every write of a slab lands in c's or d's own buffer: no trip makes a new array
    assert loops and not any("_empty((5, 6, 20)" in source for source in loops)


def periodic_ghost_cells(u):
    u[:, 0] = u[:, -2]
    u[:, -1] = u[:, 1]
    u[0, :] = u[-2, :]
    u[-1, :] = u[1, :]


def haar_lifting(x):
    x[1::2] -= x[::2]
    x[::2] += 0.5 * x[1::2]


def test_a_chain_of_region_updates_writes_the_argument_in_place():
    """Four region updates of an argument: the first copied all of it into a new buffer,
    which the call copied back (1024x1024: 1.2 ms for NumPy's 0.013).  Each region update
    now takes the argument's buffer, as a chain of scatters does."""
    u = np.random.default_rng(3).standard_normal((40, 30))
    compiled = _check(periodic_ghost_cells, (u,))
    driver = compiled.executable.driver_source
    assert "_empty(" not in driver and "s[0]" not in driver, driver


def test_a_region_update_reading_elements_outside_it_is_not_staged():
    """`u[:, 0] = u[:, -2]` and `x[1::2] -= x[::2]` (interleaved progressions) read only
    elements the update does not write: v goes straight into the region, with no
    temporary holding it first (Haar lifting 1e6: 0.48x NumPy staged, 1.8x now)."""
    for fn, arg in ((haar_lifting, np.random.default_rng(4).standard_normal(1000)),
                    (periodic_ghost_cells, np.random.default_rng(5).standard_normal((9, 7)))):
        compiled = _check(fn, (arg,))
        for kernel in compiled.kernels:
            assert "empty((" not in kernel.source, kernel.source


def test_a_region_update_through_a_reversed_view_is_one_update_of_the_array():
    """`x[::-1] = x` then `x[-2::-3] *= 0.5`: the second update was a select of reversed
    pads, whose operands fusion wrote out whole (two 1e6 arrays) before a second kernel
    read them reversed; reverse(reverse(x)) is now x and the update a region update."""
    def negative_steps(x):
        x[::-1] = x
        x[-2::-3] *= 0.5
        return x

    compiled = _check(negative_steps, (np.random.default_rng(6).standard_normal(1000),))
    assert len(compiled.kernels) == 2
    assert "reverse" not in compiled.kernels[0].source.split("\n")[0]
