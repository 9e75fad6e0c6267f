"""np.pad's edge, reflect, symmetric and wrap modes compile (shape_ops.pad): x read
through an index map per axis (np.pad of arange), any width, as NumPy pads; the odd
reflection, which computes values, keeps NumPy's loop (a named error under jit)."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb.errors import UnsupportedNumPyFunctionError

RNG = np.random.default_rng(11)
WIDTHS = [1, 2, ((1, 0), (0, 3)), ((0, 0), (2, 1)), ((3, 1), (1, 2))]


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap", "constant"])
@pytest.mark.parametrize("width", WIDTHS, ids=[str(w) for w in WIDTHS])
def test_pad_mode_matches_numpy(mode, width):
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    fn = lambda x: np.pad(x, width, mode=mode) * 2
    got, want = xlanb.jit(fn, tiered=False)(x), fn(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap"])
def test_pad_of_an_image_and_integers(mode):
    img = RNG.integers(0, 255, (6, 7, 3)).astype(np.uint8)
    fn = lambda img: np.pad(img, ((2, 2), (1, 3), (0, 0)), mode=mode)
    np.testing.assert_array_equal(xlanb.jit(fn, tiered=False)(img), fn(img))


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "wrap"])
def test_pad_wider_than_the_array_reflects_again(mode):
    x = RNG.standard_normal((4, 3))
    fn = lambda x: np.pad(x, ((9, 5), (0, 7)), mode=mode)
    np.testing.assert_array_equal(xlanb.jit(fn, tiered=False)(x), fn(x))


def test_odd_reflection_is_a_named_error():
    x = RNG.standard_normal(4)
    with pytest.raises(UnsupportedNumPyFunctionError, match="np.pad"):
        xlanb.jit(lambda x: np.pad(x, 2, mode="reflect", reflect_type="odd"), tiered=False)(x)
