"""Reductions with a few terms per output, or a few kept elements after the reduced axes
(codegen/cpu.py SHORT_REDUCTION): written out with literal indices so the loop over outputs
(or over the reduced axis) is innermost and vectorizes.  Against NumPy, with the source
checked for the unrolled form."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb_runtime.codegen.cpu import SHORT_REDUCTION
from tolerance import assert_like_numpy

RNG = np.random.default_rng(0)
P64 = RNG.standard_normal((70, 3))
P32 = P64.astype(np.float32)
MASS = RNG.uniform(0.5, 1.5, 70)


def _nbody(pos, mass):
    d = pos[None, :, :] - pos[:, None, :]
    inv3 = ((d ** 2).sum(axis=-1) + 1e-3) ** -1.5
    return (d * (mass[None, :] * inv3)[:, :, None]).sum(axis=1)


TRAILING = {       # a few terms per output, over the last axes
    "squared norms of 3-vectors, f64": (lambda p: (p * p).sum(axis=1), (P64,)),
    "pair distances to a power, f32": (lambda p: (((p[None] - p[:, None]) ** 2).sum(-1)
                                                  + 1) ** np.float32(-1.5), (P32,)),
    "max over 4, keepdims": (lambda x: x.max(axis=-1, keepdims=True) - x[..., :1],
                             (RNG.standard_normal((50, 4)),)),
    "int sum over 2x2": (lambda x: x.sum(axis=(2, 3)),
                         (RNG.integers(-9, 9, (6, 7, 2, 2)),)),
    "mean of pairs, exp": (lambda x: np.exp(x.mean(axis=1)), (P32[:, :2],)),
}
SUFFIX = {         # a block of reduced axes, then a few kept elements
    "n-body forces, f64": (_nbody, (P64, MASS)),
    "n-body forces, f32": (_nbody, (P32, MASS.astype(np.float32))),
    "sum over axis 1 of (n, m, 2)": (lambda x: x.sum(axis=1),
                                     (RNG.standard_normal((5, 40, 2)),)),
    "any over axis 0 of (m, 3)": (lambda x: (x > 2).any(axis=0), (P64,)),
}


def _kernel_sources(fn, args):
    compiled = xlanb.jit(fn, tiered=False).lower(*args).compile()
    return [k.source for k in compiled.kernels if k.kind == "reduce"]


@pytest.mark.parametrize("name", list(TRAILING))
def test_few_terms_per_output(name):
    fn, args = TRAILING[name]
    sources = _kernel_sources(fn, args)
    assert sources and all("for k0 in" not in s for s in sources), sources
    assert_like_numpy(xlanb.jit(fn, tiered=False)(*args), fn(*args), n=SHORT_REDUCTION)


@pytest.mark.parametrize("name", list(SUFFIX))
def test_few_kept_elements_after_the_reduced_axes(name):
    fn, args = SUFFIX[name]
    sources = _kernel_sources(fn, args)
    assert any("a0_1 = " in s for s in sources), sources
    n = int(np.prod(args[0].shape[:-1]))
    assert_like_numpy(xlanb.jit(fn, tiered=False)(*args), fn(*args), n=n)


def test_longer_reductions_keep_their_loop():
    x = RNG.standard_normal((30, SHORT_REDUCTION + 1))
    (source,) = _kernel_sources(lambda x: (x * x).sum(axis=1), (x,))
    assert "for k0 in" in source
