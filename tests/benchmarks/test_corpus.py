"""Every kernel of the performance corpus (benchmarks/corpus_kernels.py), at tiny sizes,
compiled with xlanb.jit and compared with NumPy: the benchmark times only kernels that
compute NumPy's answer.  Correctness only, no timings."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import xlanb  # noqa: E402
from corpus_kernels import CORPUS, tolerance  # noqa: E402


def _leaves(value):
    return list(value) if isinstance(value, tuple) else [value]


@pytest.mark.parametrize("name", list(CORPUS))
def test_corpus_kernel_matches_numpy(name):
    kernel = CORPUS[name]
    args = kernel.make_args(True)
    want = _leaves(kernel.make(np)(*args))
    got = _leaves(xlanb.jit(kernel.make(np))(*args))
    rtol, atol = tolerance(kernel, args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def test_corpus_is_large_and_covers_every_group():
    groups = {k.group for k in CORPUS.values()}
    assert len(CORPUS) >= 40
    assert groups == {"stats", "ml", "linalg", "physics", "image", "distance"}
