"""Held-out kernels: NumPy code as users write it, gathered to look for slow or wrong
compiled code outside the corpus (corpus_kernels.py) and npbench.  Each entry is (name,
function, arguments maker); bench_heldout.py checks every output and argument against
NumPy and times both.  Written 2026-11-28 without looking at xlanb's kernels first; what
they found then (arctan/arcsin/arccos 20-50x slower than NumPy, an HxWx3 image loop that
did not vectorize, np.cov's transposing copy, np.dot's zero-fill, np.pad's edge modes)
is fixed, so they are no longer held out: add new ones rather than tune these."""
from __future__ import annotations

import numpy as np

R = np.random.default_rng(0)
f32, f64 = np.float32, np.float64


def nrm(*shape, dt=f64):
    return R.standard_normal(shape).astype(dt)


def uni(*shape, dt=f64, lo=0, hi=1):
    return R.uniform(lo, hi, shape).astype(dt)


def kmeans_assign(X, C):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    return d.argmin(1)


def kmeans_update(X, onehot):
    return (onehot.T @ X) / onehot.sum(0)[:, None]


def ce_grad(logits, onehot):
    e = np.exp(logits - logits.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    return (p - onehot) / logits.shape[0]


def horner(x):
    return np.polyval([0.1, -0.5, 2.0, 1.0, -3.0], x)


def rolling_mean(x):
    c = np.cumsum(x)
    return (c[50:] - c[:-50]) / 50


def quantize(x):
    return np.round(np.clip(x * 127, -128, 127)).astype(np.int8)


def leaky(x):
    return np.where(x > 0, x, 0.01 * x)


def minmax_img(img):
    return (img - img.min()) / (img.max() - img.min())


def outer_update(A, x, y):
    A += 0.1 * np.outer(x, y)


def trapz(y, x):
    return np.trapezoid(y, x)


def total_variation(x):
    return np.abs(np.diff(x)).sum()


def l1_rows(x):
    return x / x.sum(axis=1, keepdims=True)


def dist_point(X, p):
    return np.linalg.norm(X - p, axis=1)


def ema(x):
    s = np.empty_like(x)
    s[0] = x[0]
    for t in range(1, x.shape[0]):
        s[t] = 0.1 * x[t] + 0.9 * s[t - 1]
    return s


def mse_grad(X, w, y):
    r = X @ w - y
    return (r ** 2).mean(), 2 * X.T @ r / X.shape[0]


def softplus(x):
    return np.logaddexp(0, x)


def polar(x, y):
    return np.hypot(x, y), np.arctan2(y, x)


def col_scale(x):
    mn, mx = x.min(0), x.max(0)
    return (x - mn) / (mx - mn)


def one_hot(labels):
    return np.eye(10)[labels]


def accuracy(logits, y):
    return (logits.argmax(1) == y).mean()


def rowdot(a, b):
    return np.einsum('ij,ij->i', a, b)


def bmm_einsum(a, b):
    return np.einsum('bij,bjk->bik', a, b)


def causal_softmax(s):
    m = np.tril(np.ones(s.shape, dtype=bool))
    s = np.where(m, s, -np.inf)
    e = np.exp(s - s.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def cdf(p):
    return np.cumsum(p) / p.sum()


def max3(a, b, c):
    return np.maximum(np.maximum(a, b), c) - np.minimum(np.minimum(a, b), c)


def sum64(x):
    return x.sum(dtype=np.float64)


def roll_lap(u):
    return np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4 * u


def vnorm(x):
    return np.linalg.norm(x)


def col_std(x):
    return x.std(axis=0)


def tiny_mlp(x, w1, w2):
    return np.tanh(x @ w1) @ w2


def concat_mean(a, b):
    return np.concatenate([a, b]).mean()


def count_above(x):
    return (x > 0.5).sum()


def binning(x, edges):
    return np.searchsorted(edges, x)


def dropout(x, mask):
    return x * mask / 0.9


def escape(c):
    z = np.zeros_like(c)
    n = np.zeros(c.shape, np.int32)
    for _ in range(20):
        z = np.where(np.abs(z) < 2, z * z + c, z)
        n += np.abs(z) < 2
    return n


def sgd_clip(w, g):
    n = np.linalg.norm(g)
    w -= 0.01 * g * np.minimum(1.0, 1.0 / n)


def huber(r):
    a = np.abs(r)
    return np.where(a < 1, 0.5 * r * r, a - 0.5).mean()


def logistic_grad(X, w, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return X.T @ (p - y) / len(y)


def pca_cov(X):
    Xc = X - X.mean(0)
    return Xc.T @ Xc / (X.shape[0] - 1)


def smooth_l1_rows(x):
    return np.sqrt((x * x).sum(-1) + 1e-6).mean()


def gather_rows_sum(table, idx):
    return table[idx].sum(0)


def cumprod_returns(r):
    return np.cumprod(1 + r) - 1


def masked_fill_mean(x, m):
    return np.where(m, x, 0).sum(1) / np.maximum(m.sum(1), 1)


def normalize_vectors_inplace(v):
    v /= np.linalg.norm(v, axis=1, keepdims=True)


def transpose_copy(x):
    return np.ascontiguousarray(x.T) * 2


def tile(x):
    return np.tile(x, (4, 1)) + 1


def repeat(x):
    return np.repeat(x, 3, axis=0) * 2


def pad(x):
    return np.pad(x, 2, mode="edge") * 0.5


def cross(a, b):
    return np.cross(a, b)


def kron(a, b):
    return np.kron(a, b)


def diff2(x):
    return np.diff(x, n=2)


def add_at(x, idx, v):
    np.add.at(x, idx, v)


def mask_set(x):
    x[x < 0] = 0


def idx_inc(x, idx):
    x[idx] += 1.0


def take_along(x, idx):
    return np.take_along_axis(x, idx, axis=1)


def argmax1(x):
    return x.argmax(1)


def argmin0(x):
    return x.argmin(0)


def cumsum1(x):
    return np.cumsum(x, axis=1)


def sort1(x):
    return np.sort(x, axis=1)


def det3(a):
    return np.linalg.det(a)


def inv3(a):
    return np.linalg.inv(a)


def flip(x):
    return np.flip(x, 0) - x


def triu(x):
    return np.triu(x) + np.tril(x, -1).T


def interp(x, xp, fp):
    return np.interp(x, xp, fp)


def bincount(x):
    return np.bincount(x, minlength=100)


def clip_inplace(x):
    np.clip(x, -1, 1, out=x)


def mean_keep(x):
    return x - x.mean(axis=(1, 2), keepdims=True)


def std_all(x):
    return (x - x.mean()) / x.std()


def percentile(x):
    return np.percentile(x, [5, 50, 95], axis=0)


def where_idx(x):
    return np.where(x > 0, np.arange(x.shape[0]), -1)


def stack3(a, b, c):
    return np.stack([a, b, c], axis=-1).sum(-1)


def outer_sub(x):
    return (x[:, None] - x[None, :]) ** 2


def vander(x):
    return np.vander(x, 5)


def any_nan_rows(x):
    return np.isnan(x).any(axis=1)


def allclose_rows(a, b):
    return np.abs(a - b).max(axis=1) < 1e-3


def linspace_eval(a):
    return np.sin(np.linspace(0, 1, a.shape[0]) * a)


def int_ops(a, b):
    return (a * 3 + b) // 7 % 5


def bool_ops(a, b):
    return (a & ~b) | (a ^ b)


def astype_round(x):
    return (x * 255).round().astype(np.uint8)


def uint8_img(img):
    return (img.astype(np.float32) / 255.0 - 0.5) / 0.25


def softmax_axis0(x):
    e = np.exp(x - x.max(0))
    return e / e.sum(0)


def matvec_batch(a, x):
    return np.einsum("bij,bj->bi", a, x)


def norm_cols(x):
    return np.linalg.norm(x, axis=0)


def cov_np(x):
    return np.cov(x, rowvar=False)


def corrcoef(x):
    return np.corrcoef(x, rowvar=False)

# lone NumPy functions on 1e6 elements, float32 and float64 (the sweep that found atan2)
UNARY = ["tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arctanh", "exp2",
         "log2", "log10", "cbrt", "exp", "log", "sin", "tanh", "expm1", "log1p", "sqrt",
         "reciprocal", "floor", "rint", "sign"]
BINARY = ["arctan2", "hypot", "power", "fmod", "mod", "logaddexp", "copysign"]


def _unary(name):
    ufunc = getattr(np, name)
    return lambda x: ufunc(x)


def _binary(name):
    ufunc = getattr(np, name)
    return lambda x, y: ufunc(x, y)


def ufunc_cases() -> list:
    cases = []
    for dt in (f32, f64):
        tag = np.dtype(dt).name
        x = lambda dt=dt: uni(1_000_000, dt=dt, lo=-0.9, hi=0.9)
        y = lambda dt=dt: uni(1_000_000, dt=dt, lo=0.5, hi=2)
        cases += [(f"np.{n} 1e6 {tag}", _unary(n), lambda x=x: [x()]) for n in UNARY]
        cases += [(f"np.{n} 1e6 {tag}", _binary(n), lambda x=x, y=y: [x(), y()])
                  for n in BINARY]
    return cases


KERNELS = [
    ("kmeans assign 5000x16 k32", kmeans_assign, lambda: [nrm(5000, 16), nrm(32, 16)]),
    ("kmeans update 5000x16 k32", kmeans_update,
     lambda: [nrm(5000, 16), np.eye(32)[R.integers(0, 32, 5000)]]),
    ("CE grad 1024x100 f32", ce_grad,
     lambda: [nrm(1024, 100, dt=f32), np.eye(100, dtype=f32)[R.integers(0, 100, 1024)]]),
    ("polyval 1e6", horner, lambda: [nrm(1_000_000)]),
    ("rolling mean 1e6", rolling_mean, lambda: [nrm(1_000_000)]),
    ("quantize int8 1e6 f32", quantize, lambda: [nrm(1_000_000, dt=f32)]),
    ("leaky relu 1e6 f32", leaky, lambda: [nrm(1_000_000, dt=f32)]),
    ("minmax img 1024x1024 f32", minmax_img, lambda: [uni(1024, 1024, dt=f32)]),
    ("outer update 1000x1000", outer_update, lambda: [nrm(1000, 1000), nrm(1000), nrm(1000)]),
    ("trapezoid 1e6", trapz, lambda: [nrm(1_000_000), np.sort(uni(1_000_000))]),
    ("total variation 1e6", total_variation, lambda: [nrm(1_000_000)]),
    ("L1 rows 2000x512", l1_rows, lambda: [uni(2000, 512)]),
    ("dist to point 1e5x3", dist_point, lambda: [nrm(100_000, 3), nrm(3)]),
    ("EMA loop 2000", ema, lambda: [nrm(2000)]),
    ("MSE+grad 5000x50", mse_grad, lambda: [nrm(5000, 50), nrm(50), nrm(5000)]),
    ("softplus logaddexp 1e6", softplus, lambda: [nrm(1_000_000)]),
    ("polar hypot/arctan2 1e6 f32", polar,
     lambda: [nrm(1_000_000, dt=f32), nrm(1_000_000, dt=f32)]),
    ("col scale 10000x64", col_scale, lambda: [nrm(10000, 64)]),
    ("one-hot eye[labels] 1e5", one_hot, lambda: [R.integers(0, 10, 100_000)]),
    ("accuracy argmax 10000x10", accuracy, lambda: [nrm(10000, 10), R.integers(0, 10, 10000)]),
    ("einsum rowdot 1e5x16", rowdot, lambda: [nrm(100_000, 16), nrm(100_000, 16)]),
    ("einsum bmm 64x32x32", bmm_einsum, lambda: [nrm(64, 32, 32), nrm(64, 32, 32)]),
    ("causal softmax 512x512 f32", causal_softmax, lambda: [nrm(512, 512, dt=f32)]),
    ("cdf cumsum 1e6", cdf, lambda: [uni(1_000_000)]),
    ("max3-min3 1e6 f32", max3, lambda: [nrm(1_000_000, dt=f32) for _ in range(3)]),
    ("sum f32 as f64 1e6", sum64, lambda: [nrm(1_000_000, dt=f32)]),
    ("np.roll laplacian 1024x1024", roll_lap, lambda: [nrm(1024, 1024)]),
    ("vector norm 1e6", vnorm, lambda: [nrm(1_000_000)]),
    ("col std 10000x64", col_std, lambda: [nrm(10000, 64)]),
    ("tiny MLP 32x64x32x10", tiny_mlp, lambda: [nrm(32, 64), nrm(64, 32), nrm(32, 10)]),
    ("concat mean 2x5e5", concat_mean, lambda: [nrm(500_000), nrm(500_000)]),
    ("count above 1e6", count_above, lambda: [uni(1_000_000)]),
    ("searchsorted 1e5 into 100", binning, lambda: [uni(100_000), np.linspace(0, 1, 100)]),
    ("dropout 1e6 f32", dropout,
     lambda: [nrm(1_000_000, dt=f32), (uni(1_000_000) > 0.1).astype(f32)]),
    ("escape-time 20 it 256x256 c128", escape,
     lambda: [uni(256, 256, lo=-2, hi=1) + 1j * uni(256, 256, lo=-1.5, hi=1.5)]),
    ("sgd clip-norm 1e6 in place", sgd_clip, lambda: [nrm(1_000_000), nrm(1_000_000)]),
    ("huber 1e6", huber, lambda: [nrm(1_000_000)]),
    ("logistic grad 10000x100", logistic_grad,
     lambda: [nrm(10000, 100), nrm(100) * 0.1, (uni(10000) > 0.5).astype(f64)]),
    ("PCA covariance 10000x64", pca_cov, lambda: [nrm(10000, 64)]),
    ("row norm mean 1e5x8 f32", smooth_l1_rows, lambda: [nrm(100_000, 8, dt=f32)]),
    ("gather rows sum 1000 of 50000x64 f32", gather_rows_sum,
     lambda: [nrm(50000, 64, dt=f32), R.integers(0, 50000, 1000)]),
    ("cumprod returns 1e6", cumprod_returns, lambda: [nrm(1_000_000) * 1e-3]),
    ("masked fill mean 2000x256", masked_fill_mean, lambda: [nrm(2000, 256), uni(2000, 256) > 0.3]),
    ("normalize rows in place 1e5x3", normalize_vectors_inplace, lambda: [nrm(100_000, 3)]),
    ("transpose copy 2000x2000", transpose_copy, lambda: [nrm(2000, 2000)]),
    ("tile 1000x256 x4", tile, lambda: [nrm(1000, 256)]),
    ("repeat 1000x256 x3", repeat, lambda: [nrm(1000, 256)]),
    ("pad edge 1024x1024", pad, lambda: [nrm(1024, 1024)]),
    ("cross 1e5x3", cross, lambda: [nrm(100_000, 3), nrm(100_000, 3)]),
    ("kron 64x64 8x8", kron, lambda: [nrm(64, 64), nrm(8, 8)]),
    ("diff n=2 1e6", diff2, lambda: [nrm(1_000_000)]),
    ("np.add.at 1e5 into 1000", add_at,
     lambda: [np.zeros(1000), R.integers(0, 1000, 100_000), nrm(100_000)]),
    ("x[x<0]=0 1e6", mask_set, lambda: [nrm(1_000_000)]),
    ("x[idx] += 1 1e4 of 1e6", idx_inc,
     lambda: [nrm(1_000_000), R.choice(1_000_000, 10_000, replace=False)]),
    ("take_along_axis 1000x100", take_along,
     lambda: [nrm(1000, 100), R.integers(0, 100, (1000, 5))]),
    ("argmax axis1 10000x10", argmax1, lambda: [nrm(10000, 10)]),
    ("argmin axis0 10000x64", argmin0, lambda: [nrm(10000, 64)]),
    ("cumsum axis1 1000x1000", cumsum1, lambda: [nrm(1000, 1000)]),
    ("sort axis1 1000x100", sort1, lambda: [nrm(1000, 100)]),
    ("det batch 10000x3x3", det3, lambda: [nrm(10000, 3, 3)]),
    ("inv batch 10000x3x3", inv3, lambda: [nrm(10000, 3, 3) + 3 * np.eye(3)]),
    ("flip - x 1000x1000", flip, lambda: [nrm(1000, 1000)]),
    ("triu + tril.T 1000x1000", triu, lambda: [nrm(1000, 1000)]),
    ("interp 1e5 on 1000", interp, lambda: [uni(100_000), np.linspace(0, 1, 1000), nrm(1000)]),
    ("bincount 1e6", bincount, lambda: [R.integers(0, 100, 1_000_000)]),
    ("clip out=x 1e6", clip_inplace, lambda: [nrm(1_000_000)]),
    ("mean keepdims 64x32x32", mean_keep, lambda: [nrm(64, 32, 32)]),
    ("standardize all 1e6", std_all, lambda: [nrm(1_000_000)]),
    ("percentile 3 axis0 10000x16", percentile, lambda: [nrm(10000, 16)]),
    ("where with arange 1e6", where_idx, lambda: [nrm(1_000_000)]),
    ("stack 3 sum 1e6", stack3, lambda: [nrm(1_000_000) for _ in range(3)]),
    ("outer diff sq 2000", outer_sub, lambda: [nrm(2000)]),
    ("vander 1e5 x5", vander, lambda: [nrm(100_000)]),
    ("any nan rows 10000x100", any_nan_rows, lambda: [nrm(10000, 100)]),
    ("rows close 10000x100", allclose_rows, lambda: [nrm(10000, 100), nrm(10000, 100)]),
    ("sin(linspace*a) 1e6", linspace_eval, lambda: [nrm(1_000_000)]),
    ("int ops 1e6", int_ops,
     lambda: [R.integers(-1000, 1000, 1_000_000), R.integers(-1000, 1000, 1_000_000)]),
    ("bool ops 1e6", bool_ops, lambda: [uni(1_000_000) > 0.5, uni(1_000_000) > 0.3]),
    ("to uint8 1e6", astype_round, lambda: [uni(1_000_000)]),
    ("uint8 normalize 1024x1024x3", uint8_img,
     lambda: [R.integers(0, 256, (1024, 1024, 3)).astype(np.uint8)]),
    ("softmax axis0 1000x512 ", softmax_axis0, lambda: [nrm(1000, 512)]),
    ("einsum bij,bj->bi 10000x8x8", matvec_batch, lambda: [nrm(10000, 8, 8), nrm(10000, 8)]),
    ("norm cols 10000x64", norm_cols, lambda: [nrm(10000, 64)]),
    ("np.cov 10000x32", cov_np, lambda: [nrm(10000, 32)]),
    ("np.corrcoef 10000x32", corrcoef, lambda: [nrm(10000, 32)]),
] + ufunc_cases()
