"""float32 sums along rows (codegen/cpu.py `_rows_blocked`): rows long enough add float32
blocks of SUM_BLOCK terms and the block sums in float64, so the loop (vector math
included) vectorizes at the full float32 width instead of the float64 accumulator's half.
Checked against NumPy, against the exact (float64) sum with NumPy's own error as the bar,
in the generated source and in the kernel's LLVM IR."""
from __future__ import annotations

import re

import numpy as np
import pytest

import xlanb
from xlanb_runtime.codegen.cpu import BLOCKED_ROW_MIN, BLOCKED_ROW_MIN_EXPENSIVE, SUM_BLOCK
from tolerance import assert_like_numpy

RNG = np.random.default_rng(0)

BODIES = {
    "plain": (lambda x: x.sum(axis=1), lambda x: x),
    "exp": (lambda x: np.exp(x).sum(axis=1), np.exp),
    "logsumexp": (lambda x: np.log(np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1)),
                  None),
    "mean of squares": (lambda x: (x * x).mean(axis=1), lambda x: x * x),
}
LENGTHS = [8, 16, 33, SUM_BLOCK, 2 * SUM_BLOCK + 5]


def _reduce_sources(fn, x):
    compiled = xlanb.jit(fn).lower(x).compile()
    return [k.source for k in compiled.kernels if k.kind in ("reduce", "row")]


@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("body", list(BODIES))
def test_row_sums_match_numpy(body, length):
    fn, terms = BODIES[body]
    x = (RNG.standard_normal((40, length)) + 0.25).astype(np.float32)
    got = xlanb.jit(fn)(x)
    assert got.dtype == np.float32
    assert_like_numpy(got, fn(x), n=length)
    if terms is not None:                   # no less accurate than NumPy's pairwise sum
        exact = terms(x.astype(np.float64)).sum(axis=1)
        if body == "mean of squares":
            exact = exact / length
        scale = np.abs(terms(x.astype(np.float64))).sum(axis=1) / (length if body ==
                                                                   "mean of squares" else 1)
        ours = np.max(np.abs(got - exact) / scale)
        numpys = np.max(np.abs(fn(x) - exact) / scale)
        assert ours <= 2 * numpys + 2 * np.finfo(np.float32).eps, (ours, numpys)


@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("body", ["plain", "exp"])
def test_rows_from_the_threshold_add_float32_blocks(body, length):
    fn = BODIES[body][0]
    sources = _reduce_sources(fn, RNG.standard_normal((8, length)).astype(np.float32))
    blocked = any(f"// {SUM_BLOCK}" in s for s in sources)
    threshold = BLOCKED_ROW_MIN_EXPENSIVE if body == "exp" else BLOCKED_ROW_MIN
    assert blocked == (length >= threshold), sources


def test_float64_row_sums_keep_their_accumulator():
    sources = _reduce_sources(BODIES["exp"][0], RNG.standard_normal((8, 512)))
    assert sources and not any(f"// {SUM_BLOCK}" in s for s in sources), sources


def _exp_widths(fn, x, dump, monkeypatch) -> set[int]:
    """The vector widths of exp's rounding step (llvm.rint: the one rint in these kernels)
    in the LLVM IR of `fn`'s kernels."""
    monkeypatch.setenv("XLANB_FLAGS", f"--xla_dump_to={dump} --xla_dump_kernels")
    monkeypatch.setenv("XLANB_CACHE_DIR", str(dump / "cache"))
    assert_like_numpy(xlanb.jit(fn)(x), fn(x), n=x.shape[-1])
    listings = [p.read_text() for p in dump.glob("*fusion*.ll")]
    assert listings
    return {int(w) for text in listings for w in re.findall(r"@llvm\.rint\.v(\d+)f32", text)}


def test_logsumexp_rows_vectorize_at_full_float32_width(tmp_path, monkeypatch):
    """The reason for the blocks: with float64 terms LLVM ran exp 4 lanes wide (<4 x
    float>) on AVX2; blocked, the row's exp runs as wide as an elementwise float32 exp on
    this CPU (8 with AVX2, 16 with AVX-512, 4 on a generic x86-64)."""
    x = RNG.standard_normal((64, 512)).astype(np.float32)
    rows = _exp_widths(BODIES["logsumexp"][0], x, tmp_path / "rows", monkeypatch)
    full = _exp_widths(lambda v: np.exp(v) * 2, x, tmp_path / "elementwise", monkeypatch)
    assert full and max(rows) == max(full), (rows, full)


# ---------------------------------------------------------------------------
# Loop fission of vector math chains (codegen/cpu.py `fission_cut`)
# ---------------------------------------------------------------------------

X32 = (RNG.standard_normal(3 * SUM_BLOCK + 17) * 2).astype(np.float32)


def _gaussian_loglik(x, mu, sigma):
    p = np.exp(-0.5 * ((x - mu) / sigma) ** 2)
    p /= sigma * np.sqrt(2 * np.pi)         # float64 divisor, float32 p: exp, convert, log
    return np.log(p).sum()


CHAINS = {      # name: (fn, args, split in two loops per block?)
    "softplus": (lambda x: np.log(np.exp(x) + 1).sum(), (X32,), True),
    "gaussian log-likelihood": (_gaussian_loglik, (X32, np.float32(0.3), np.float32(1.7)),
                                True),
    "rows of log(1 + tanh^2)": (lambda x: np.log1p(np.tanh(x) ** 2).sum(axis=1),
                                (RNG.standard_normal((6, 2 * SUM_BLOCK + 5)).astype(np.float32),), True),
    "one function": (lambda x: np.exp(x).sum(), (X32,), False),
    "two side by side": (lambda x: (np.exp(x) * np.sin(x)).sum(), (X32,), False),
    # cut at the exp both parts read: the second loop reads it from the buffer
    "an exp both parts read": (lambda x: (np.log(np.exp(x) + 1) * np.exp(x)).sum(),
                               (X32,), True),
    # the sigmoid both logs read (sigmoid BCE)
    "two logs of one sigmoid": (lambda z, y: -np.mean(y * np.log(1 / (1 + np.exp(-z)) + 1e-7)
                                                      + (1 - y) * np.log(1 - 1 / (1 + np.exp(-z))
                                                                         + 1e-7)),
                                (X32, (X32 > 0).astype(np.float32)), True),
    # float64 sums have no float32 blocks; 4 lanes are throughput bound (no gain measured)
    "float64 chain": (lambda x: np.log(np.exp(x) + 1).sum(), (X32.astype(np.float64),), False),
}


@pytest.mark.parametrize("name", list(CHAINS))
def test_vector_math_chains_split_in_two_loops_and_match_numpy(name):
    fn, args, split = CHAINS[name]
    compiled = xlanb.jit(fn).lower(*args).compile()
    sources = [k.source for k in compiled.kernels if k.kind in ("reduce", "row")]
    assert any("fb_[kk_] = " in s for s in sources) == split, sources
    for source in sources:          # each function once per element: nothing recomputed
        block = source.split("for kb_ in range(nb_):")[-1].split("nb_ * ")[0]
        calls = re.findall(r"\b(\w+_f(?:32|64))\(", block)
        assert len(calls) == len(set(calls)) or name == "two logs of one sigmoid", calls
    n = args[0].shape[-1]
    assert_like_numpy(xlanb.jit(fn)(*args), fn(*args), n=n)


def test_a_split_chain_keeps_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 100.0, -100.0, 1e-30] * 70,
                 np.float32)
    fn = CHAINS["softplus"][0]
    with np.errstate(all="ignore"):
        want = fn(x)
    np.testing.assert_equal(xlanb.jit(fn)(x), want)
    y = np.where(np.isnan(x), 1.0, x).astype(np.float32)
    with np.errstate(all="ignore"):
        assert_like_numpy(xlanb.jit(fn)(y), fn(y), n=y.size)


def test_a_parallel_kernel_never_shares_the_split_buffer_between_rows():
    """Rows summed under a prange keep the chain in one loop: the block buffer is one per
    call, so threads running rows at once would write each other's values."""
    from xlanb_runtime.codegen.cpu import _Codegen
    from xlanb_runtime.passes.fusion import plan_fusion
    fn = CHAINS["rows of log(1 + tanh^2)"][0]
    x = RNG.standard_normal((64, 2 * SUM_BLOCK + 5)).astype(np.float32)
    graph = xlanb.jit(fn).lower(x).graph
    (kernel,) = [k for k in plan_fusion(graph).kernels if k.kind in ("reduce", "row")]
    serial = _Codegen(kernel, False).generate().source
    parallel = _Codegen(kernel, True).generate().source
    assert "fb_[kk_] = " in serial
    assert "numba.prange" in parallel and "fb_" not in parallel
