"""Held-out kernels, third batch (2026-11-28, late session): layouts and sizes the first
two batches do not try, written before running any of them.  Fortran-ordered and strided
arguments, small arrays called in a loop (where per-call cost shows), integer and boolean
logic, and indexing patterns.  Same form as heldout_kernels.py."""
from __future__ import annotations

import numpy as np

from heldout_kernels import R, f32, f64, nrm, uni  # noqa: F401  (one random stream)


def axpby(a, x, b, y):
    return a * x + b * y


def norm_rows(x):
    return x / np.sqrt((x * x).sum(axis=1, keepdims=True))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def col_center(x):
    return x - x.mean(axis=0)


def small_step(p, g, v, lr=0.01, mu=0.9):
    v = mu * v - lr * g
    return p + v, v


def small_mlp(x, w1, w2):
    return np.tanh(x @ w1) @ w2


def take_cols(x, idx):
    return np.take(x, idx, axis=1)


def choose_sel(c, a, b):
    return np.choose(c, [a, b])


def put_along(x, idx):
    y = x.copy()
    np.put_along_axis(y, idx, 0.0, axis=1)
    return y


def strided_sum(x):
    return x[::2, ::3].sum()


def fortran_elementwise(x):
    return np.exp(x) * 2 + 1


def fortran_row_sum(x):
    return x.sum(axis=1)


def transposed_add(a, b):
    return a.T + b


def bool_logic(a, b, c):
    return (a & ~b) | (b ^ c)


def int_clip_shift(x):
    return np.clip(x, -1000, 1000) >> 2


def popcount8(x):
    x = x - ((x >> 1) & 0x55)
    x = (x & 0x33) + ((x >> 2) & 0x33)
    return (x + (x >> 4)) & 0x0F


def where_broadcast(x, row, col):
    return np.where(x > 0, row[None, :], col[:, None])


def stack_stats(x):
    return np.stack([x.min(0), x.max(0), x.mean(0), x.std(0)])


def concat_features(a, b):
    return np.concatenate([a, b * 2, a - b], axis=1)


def rot90_add(x):
    return np.rot90(x) + x


def reverse_cumsum(x):
    return np.cumsum(x[::-1])[::-1]


def diag_update(a, d):
    return a + np.diag(d)


def trace_product(a, b):
    return np.trace(a @ b)


def outer_mask(x, y):
    return np.outer(x > 0, y > 0).sum()


def float16_scale(x):
    return (x * np.float16(0.5) + np.float16(1)).astype(np.float16)


def int32_dot(a, b):
    return (a.astype(np.int64) * b).sum()


def expand_mul(x, w):
    return np.expand_dims(x, 1) * w


def squeeze_sum(x):
    return np.squeeze(x, axis=1).sum(axis=0)


def sort_topk(x):
    return np.sort(x, axis=1)[:, -5:]


def searchsorted_bins(x, edges):
    return np.searchsorted(edges, x)


def linalg_norm_fro(x):
    return np.linalg.norm(x)


def det_small(a):
    return np.linalg.det(a)


def tril_mask_fill(x):
    return np.where(np.tril(np.ones_like(x, dtype=bool)), x, -np.inf)


def piecewise_np(x):
    return np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * v])


def select_np(x):
    return np.select([x < -1, x > 1], [x + 1, x - 1], default=0.0)


def meshgrid_eval(x, y):
    X, Y = np.meshgrid(x, y)
    return np.sin(X) * np.cos(Y)


def einsum_trace_batch(a):
    return np.einsum("bii->b", a)


def einsum_outer_batch(a, b):
    return np.einsum("bi,bj->bij", a, b)


def nan_safe_div(a, b):
    return np.divide(a, b, out=np.zeros_like(a), where=b != 0)


def sign_flip_inplace(x):
    x[x < 0] *= -1
    return x


def repeat_interleave(x):
    return np.repeat(x, 2)


def clip_norm_global(x, m=1.0):
    n = np.linalg.norm(x)
    return x * np.minimum(1.0, m / n)


def lerp(a, b, t):
    return a + (b - a) * t


F = lambda a: np.asfortranarray(a)             # noqa: E731


KERNELS = [
    ("axpby 100 (small)", axpby, lambda: [1.5, nrm(100), -0.5, nrm(100)]),
    ("norm rows 16x8 (small)", norm_rows, lambda: [nrm(16, 8)]),
    ("sigmoid 64 f32 (small)", sigmoid, lambda: [nrm(64, dt=f32)]),
    ("col center 32x4 (small)", col_center, lambda: [nrm(32, 4)]),
    ("momentum step 256 (small)", small_step, lambda: [nrm(256), nrm(256), nrm(256)]),
    ("MLP 8x16x16x4 (small)", small_mlp, lambda: [nrm(8, 16), nrm(16, 16), nrm(16, 4)]),
    ("take cols 1000x256 of 64", take_cols, lambda: [nrm(1000, 256), R.integers(0, 256, 64)]),
    ("choose 2-way 1e6", choose_sel,
     lambda: [R.integers(0, 2, 1_000_000), nrm(1_000_000), nrm(1_000_000)]),
    ("put_along_axis 1000x100", put_along,
     lambda: [nrm(1000, 100), R.integers(0, 100, (1000, 3))]),
    ("strided sum [::2,::3] 2000x2000", strided_sum, lambda: [nrm(2000, 2000)]),
    ("F-order exp*2+1 1000x1000", fortran_elementwise, lambda: [F(nrm(1000, 1000))]),
    ("F-order row sums 2000x500", fortran_row_sum, lambda: [F(nrm(2000, 500))]),
    ("a.T + b 1000x1000", transposed_add, lambda: [nrm(1000, 1000), nrm(1000, 1000)]),
    ("bool logic 1e6", bool_logic,
     lambda: [nrm(1_000_000) > 0, nrm(1_000_000) > 0, nrm(1_000_000) > 0]),
    ("int clip shift 1e6", int_clip_shift, lambda: [R.integers(-5000, 5000, 1_000_000)]),
    ("popcount uint8 1e6", popcount8,
     lambda: [R.integers(0, 256, 1_000_000, dtype=np.uint8)]),
    ("where broadcast 1000x1000", where_broadcast,
     lambda: [nrm(1000, 1000), nrm(1000), nrm(1000)]),
    ("stack col stats 10000x32", stack_stats, lambda: [nrm(10000, 32)]),
    ("concat features 10000x32", concat_features, lambda: [nrm(10000, 32), nrm(10000, 32)]),
    ("rot90 + x 1000x1000", rot90_add, lambda: [nrm(1000, 1000)]),
    ("reverse cumsum 1e6", reverse_cumsum, lambda: [nrm(1_000_000)]),
    ("a + diag(d) 1000", diag_update, lambda: [nrm(1000, 1000), nrm(1000)]),
    ("trace(a @ b) 256", trace_product, lambda: [nrm(256, 256), nrm(256, 256)]),
    ("outer mask sum 2000", outer_mask, lambda: [nrm(2000), nrm(2000)]),
    ("float16 scale 1e6", float16_scale, lambda: [nrm(1_000_000, dt=np.float16)]),
    ("int32 dot as int64 1e6", int32_dot,
     lambda: [R.integers(-1000, 1000, 1_000_000, dtype=np.int32),
              R.integers(-1000, 1000, 1_000_000, dtype=np.int32)]),
    ("expand_dims mul 10000x64", expand_mul, lambda: [nrm(10000), nrm(64)]),
    ("squeeze sum 10000x1x64", squeeze_sum, lambda: [nrm(10000, 1, 64)]),
    ("sort top5 rows 1000x100", sort_topk, lambda: [nrm(1000, 100)]),
    ("searchsorted 1e6 into 1000", searchsorted_bins,
     lambda: [nrm(1_000_000), np.sort(nrm(1000))]),
    ("linalg.norm frobenius 1000x1000", linalg_norm_fro, lambda: [nrm(1000, 1000)]),
    ("det 64x64", det_small, lambda: [nrm(64, 64)]),
    ("tril mask fill 512x512 f32", tril_mask_fill, lambda: [nrm(512, 512, dt=f32)]),
    ("piecewise 1e6", piecewise_np, lambda: [nrm(1_000_000)]),
    ("select 1e6", select_np, lambda: [nrm(1_000_000)]),
    ("meshgrid sin*cos 1000", meshgrid_eval, lambda: [nrm(1000), nrm(1000)]),
    ("einsum bii->b 10000x8x8", einsum_trace_batch, lambda: [nrm(10000, 8, 8)]),
    ("einsum bi,bj->bij 10000x16", einsum_outer_batch,
     lambda: [nrm(10000, 16), nrm(10000, 16)]),
    ("divide where b!=0 1e6", nan_safe_div,
     lambda: [nrm(1_000_000), np.where(nrm(1_000_000) > 0, nrm(1_000_000), 0.0)]),
    ("x[x<0] *= -1 1e6", sign_flip_inplace, lambda: [nrm(1_000_000)]),
    ("repeat 2 1e6", repeat_interleave, lambda: [nrm(1_000_000)]),
    ("global clip norm 1e6", clip_norm_global, lambda: [nrm(1_000_000)]),
    ("lerp 1e6 f32", lerp,
     lambda: [nrm(1_000_000, dt=f32), nrm(1_000_000, dt=f32), np.float32(0.25)]),
]
