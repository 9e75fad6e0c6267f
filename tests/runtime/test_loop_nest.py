"""Loop nests over output pixels (npbench lenet, resnet): a convolution's and a max pool's
double loop each roll into one nest, whatever row the first copy is, and a short nest
rolls row by row with one body; the programs compile under jit and give NumPy's results
and argument contents."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import xlanb
from xlanb_runtime.ir.ops import Op
from xlanb_runtime.passes.loop_reroll import reroll_loops

from tolerance import assert_close


def conv2d(x, w):
    k, n = w.shape[0], x.shape[0]
    h, v = x.shape[1] - k + 1, x.shape[2] - k + 1
    out = np.empty((n, h, v, w.shape[3]), dtype=x.dtype)
    for i in range(h):
        for j in range(v):
            out[:, i, j, :] = np.sum(x[:, i:i + k, j:j + k, :, np.newaxis] *
                                     w[np.newaxis, :, :, :], axis=(1, 2, 3))
    return out


def maxpool2d(x):
    out = np.empty([x.shape[0], x.shape[1] // 2, x.shape[2] // 2, x.shape[3]], x.dtype)
    for i in range(x.shape[1] // 2):
        for j in range(x.shape[2] // 2):
            out[:, i, j, :] = np.max(x[:, 2 * i:2 * i + 2, 2 * j:2 * j + 2, :], axis=(1, 2))
    return out


def lenet_like(x, w1, b1, w2, b2, fc):
    """Two conv loops, two maxpool loops (the second 4x4: a short nest), a dense layer."""
    y = maxpool2d(np.maximum(conv2d(x, w1) + b1, 0))
    y = maxpool2d(np.maximum(conv2d(y, w2) + b2, 0))
    return y.reshape(y.shape[0], -1) @ fc


def batchnorm2d(x, eps=1e-5):
    return (x - x.mean(axis=0, keepdims=True)) / np.sqrt(x.std(axis=0, keepdims=True) + eps)


def resnet_like(x, w1, w2):
    """A padded conv, batch norm, a 3x3 conv, batch norm, the residual."""
    padded = np.zeros((x.shape[0], x.shape[1] + 2, x.shape[2] + 2, w1.shape[3]), x.dtype)
    padded[:, 1:-1, 1:-1, :] = conv2d(x, w1)
    y = np.maximum(batchnorm2d(padded), 0)
    y = batchnorm2d(conv2d(y, w2))
    return np.maximum(y + x, 0)


def _rolled(fn, args):
    return reroll_loops(xlanb.jit(fn).lower(*args).traced.graph)


def _loops(graph):
    return [n for n in graph.nodes if n.op is Op.LOOP]


def _random(shape, dtype, rng):
    return rng.random(shape).astype(dtype)


def test_a_conv_double_loop_rolls_into_one_nest():
    # rows 0 and 9 rolled apart before (their places coincided with other places, and
    # the row loop lost its last copy): three loops, three bodies to compile
    rng = np.random.default_rng(0)
    rolled = _rolled(conv2d, (_random((2, 14, 14, 1), np.float32, rng),
                              _random((5, 5, 1, 3), np.float32, rng)))
    (nest,) = _loops(rolled)
    assert nest.arg.trips == 10
    (inner,) = _loops(nest.arg.body)
    assert inner.arg.trips == 10


def test_a_maxpool_double_loop_rolls_into_one_nest():
    # its rows of 12 windows (10 nodes each) were below MIN_ROLLED_NODES: 1,440 nodes
    # stayed unrolled
    rng = np.random.default_rng(0)
    rolled = _rolled(maxpool2d, (_random((2, 24, 24, 3), np.float32, rng),))
    (nest,) = _loops(rolled)
    assert nest.arg.trips == 12 and _loops(nest.arg.body)[0].arg.trips == 12
    assert len(rolled.nodes) < 20


def test_a_short_nest_rolls_row_by_row_with_one_body():
    rng = np.random.default_rng(0)
    rolled = _rolled(maxpool2d, (_random((2, 8, 8, 3), np.float32, rng),))
    rows = _loops(rolled)
    assert [r.arg.trips for r in rows] == [4] * 4
    assert len({r.arg.fingerprint for r in rows}) == 1       # compiled once, not per row


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_lenet_like_network_compiles_and_matches_numpy(dtype):
    rng = np.random.default_rng(1)
    args = (_random((2, 20, 20, 1), dtype, rng), _random((3, 3, 1, 4), dtype, rng) - 0.5,
            _random((4,), dtype, rng), _random((3, 3, 4, 6), dtype, rng) - 0.5,
            _random((6,), dtype, rng), _random((6 * 3 * 3, 5), dtype, rng))
    rolled = _rolled(lenet_like, args)
    # conv 18x18 and pool 9x9 as nests, conv 7x7 as 7 rows of one body; pool 3x3 unrolled
    assert len({loop.arg.fingerprint for loop in _loops(rolled)}) == 3
    assert len(rolled.nodes) < 300
    expected_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = lenet_like(*expected_args)
    jitted = xlanb.jit(lenet_like)
    got = jitted(*got_args)
    assert not jitted.last_compiled.runs_eagerly
    assert_close(got, expected, n=4 * 9 * 6 * 9, k=4)
    for e, g in zip(expected_args, got_args):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_resnet_like_block_compiles_and_matches_numpy(dtype):
    rng = np.random.default_rng(2)
    args = (_random((4, 10, 10, 6), dtype, rng), _random((1, 1, 6, 3), dtype, rng),
            _random((3, 3, 3, 6), dtype, rng))
    rolled = _rolled(resnet_like, args)
    loops = _loops(rolled)
    assert len(loops) == 2 and all(_loops(loop.arg.body) for loop in loops)
    expected_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = resnet_like(*expected_args)
    jitted = xlanb.jit(resnet_like)
    got = jitted(*got_args)
    assert not jitted.last_compiled.runs_eagerly
    # batch norm over 4 samples divides by a small std: its conditioning, not the dtype's
    assert_close(got, expected, n=9 * 3 * 4, k=64)
    for e, g in zip(expected_args, got_args):
        np.testing.assert_array_equal(g, e)
