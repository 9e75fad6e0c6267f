"""Elementwise loop kernels whose innermost extent is short run as one loop over flat views
(codegen/cpu.py `flat_space`, codegen/flat.py): results and arguments as NumPy's, for
contiguous and strided arguments, in-place updates, several outputs and scalar operands;
kernels that index by position keep their nest.  Also integer constants written into
kernels as literals."""
from __future__ import annotations

import numba
import numpy as np
import pytest

import xlanb
from xlanb_runtime.codegen.flat import flat_view, write_flat

RNG = np.random.default_rng(3)


def _sources(fn, *args) -> list[str]:
    return [k.source for k in xlanb.jit(fn, tiered=False).lower(*args).compile().kernels
            if getattr(k, "source", None)]


def test_image_normalize_runs_flat_and_matches_numpy():
    img = RNG.integers(0, 256, (40, 33, 3)).astype(np.uint8)
    fn = lambda img: (img.astype(np.float32) / 255.0 - 0.5) / 0.25
    np.testing.assert_allclose(xlanb.jit(fn, tiered=False)(img), fn(img), rtol=1e-6)
    (source,) = _sources(fn, img)
    assert "flat_view(" in source and "range(n1)" not in source, source


def _in_place(x, g, s):
    x += s * g
    x[...] = np.maximum(x, -1.0)


@pytest.mark.parametrize("layout", ["C", "strided", "F"])
def test_in_place_updates_through_flat_views_reach_the_argument(layout):
    """x (n, 3) updated in place, as a contiguous array, a strided view of a wider one and
    an F-ordered one: every argument after the call as NumPy leaves it."""
    base = RNG.standard_normal((500, 6))
    make = {"C": lambda: base[:, :3].copy(), "strided": lambda: base.copy()[:, ::2],
            "F": lambda: np.asfortranarray(base[:, :3])}[layout]
    g = RNG.standard_normal((500, 3))
    want_x, got_x = make(), make()
    _in_place(want_x, g, 0.5)
    assert xlanb.jit(_in_place, tiered=False)(got_x, g, 0.5) is None
    np.testing.assert_array_equal(got_x, want_x)
    if layout == "strided":
        assert not got_x.flags.c_contiguous


def test_several_outputs_and_scalar_operands():
    x = RNG.standard_normal((300, 4)).astype(np.float32)
    y = RNG.standard_normal((300, 4)).astype(np.float32)
    fn = lambda x, y, s: (x * s + y, np.tanh(x) - y * 2, x > y)
    got, want = xlanb.jit(fn, tiered=False)(x, y, np.float32(1.5)), fn(x, y, np.float32(1.5))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)
    assert all("flat_view(" in s for s in _sources(fn, x, y, np.float32(1.5)))


def test_position_dependent_kernels_keep_their_nest():
    """A broadcast row (x + b) or a transpose read beside an untransposed array reads by
    position: no flat loop.  (`x.T * 2 + 1` alone computes x * 2 + 1 flat and returns
    its transpose as a view.)"""
    x, b, y = RNG.standard_normal((200, 5)), RNG.standard_normal(5), RNG.standard_normal((5, 200))
    for fn, args in ((lambda x, b: x + b, (x, b)), (lambda x, y: x.T * 2 + y, (x, y))):
        np.testing.assert_allclose(xlanb.jit(fn, tiered=False)(*args), fn(*args))
        assert not any("flat_view(" in s for s in _sources(fn, *args))


def test_flat_view_of_another_layout_is_a_copy_written_back():
    """For an array Numba types non-contiguous, flat_view copies and write_flat stores
    the copy back, so a kernel compiled for it still writes its argument."""
    @numba.njit
    def double(a):
        f = flat_view(a)
        for i in range(f.size):
            f[i] *= 2.0
        write_flat(a, f)

    wide = RNG.standard_normal((7, 10))
    view = wide[:, ::2]
    want = wide.copy()
    want[:, ::2] *= 2
    double(view)
    np.testing.assert_array_equal(wide, want)
    c = RNG.standard_normal((4, 3))
    want_c = c * 2
    double(c)                                    # C layout: a view, written directly
    assert double.signatures[-1][0].layout == "C"
    np.testing.assert_array_equal(c, want_c)


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.uint64])
def test_integer_constants_are_literals_with_numpys_floor_division(dtype):
    """Integer scalar constants are written into the kernel (codegen/cpu.py value_steps),
    so LLVM divides by them with multiplies: `//` and `%` still floor like NumPy's for
    negative operands, and the kernel takes no argument for them."""
    info = np.iinfo(dtype)
    x = np.concatenate([np.arange(-60, 61), [info.min, info.max, 0]]).astype(dtype) \
        if info.min < 0 else np.array([0, 1, 6, 7, 8, 13, info.max], dtype=dtype)
    fn = lambda x: (x // dtype(7), x % dtype(5), x * dtype(3))
    got, want = xlanb.jit(fn, tiered=False)(x), fn(x)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    (source,) = _sources(fn, x)
    name = np.dtype(dtype).name
    assert f"np.{name}(7)" in source and f"np.{name}(5)" in source, source
