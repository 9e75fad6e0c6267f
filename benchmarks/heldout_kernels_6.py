"""Held-out kernels, sixth batch (2026-11-29): image processing, graphs and sparse data as
dense NumPy, statistics and data wrangling, recurrent cells and training pieces, iterative
solvers written as Python loops, integer and bit tricks.  Written before running any of
them.  Same form as heldout_kernels.py.

What they found on their first run (fixed the same day, so no longer held out), single
thread: 47 of 49 compiled, none differing from NumPy, geometric mean 2.88x; label
propagation (2000x2000 @ 2000x10) 0.89x (the generated narrow dot re-read its rhs from L2
for every lhs row), conjugate gradient 0.87x (each step's kernel recomputed the residual
back to step 0, 30 arguments a kernel, and r @ r ran as a BLAS GEMM on views), a 256x256
DFT matrix 0.84x (complex exp through cmath, scalar); np.add.reduceat unsupported, and
np.bincount(minlength=n) with n an argument refused (its error now names static_argnums,
which compiles it).  Looking into the complex exp found np.sin, cos and tan of arguments
past 2^20 (float32) or 2^40 (float64) silently 0 or 1, fixed too."""
from __future__ import annotations

import numpy as np

from heldout_kernels import R, f32, f64, nrm, uni  # noqa: F401  (one random stream)

N = 1_000_000


# -- images ------------------------------------------------------------------------------

def hist_equalize(img):
    hist = np.bincount(img.ravel(), minlength=256)
    cdf = np.cumsum(hist).astype(np.float64)
    cdf = (cdf - cdf.min()) * 255.0 / (cdf[-1] - cdf.min())
    return cdf.astype(np.uint8)[img]


def erode_3x3(img):
    out = img[1:-1, 1:-1].copy()
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            out = np.minimum(out, img[1 + dy:img.shape[0] - 1 + dy, 1 + dx:img.shape[1] - 1 + dx])
    return out


def integral_image(img):
    return img.cumsum(0).cumsum(1)


def box_mean_from_integral(img, k=8):
    s = np.zeros((img.shape[0] + 1, img.shape[1] + 1))
    s[1:, 1:] = img.cumsum(0).cumsum(1)
    return (s[k:, k:] - s[:-k, k:] - s[k:, :-k] + s[:-k, :-k]) / (k * k)


def downsample_mean(img):
    h, w = img.shape
    return img.reshape(h // 4, 4, w // 4, 4).mean(axis=(1, 3))


def upsample_nearest(img):
    return img.repeat(2, axis=0).repeat(2, axis=1)


def unsharp_mask(img, amount=1.5):
    blur = (img[:-2, 1:-1] + img[2:, 1:-1] + img[1:-1, :-2] + img[1:-1, 2:] + img[1:-1, 1:-1]) / 5
    sharp = img[1:-1, 1:-1] + amount * (img[1:-1, 1:-1] - blur)
    return np.clip(sharp, 0.0, 1.0)


def hsv_value_saturation(rgb):
    mx = rgb.max(axis=-1)
    mn = rgb.min(axis=-1)
    s = np.where(mx > 0, (mx - mn) / np.where(mx > 0, mx, 1), 0)
    return mx, s


def median3x3_stack(img):
    h, w = img.shape
    stack = np.stack([img[dy:h - 2 + dy, dx:w - 2 + dx] for dy in range(3) for dx in range(3)])
    return np.median(stack, axis=0)


# -- graphs and sparse data, dense ---------------------------------------------------------

def pagerank(adj, iters=20, d=0.85):
    out_deg = adj.sum(1)
    P = adj / np.where(out_deg > 0, out_deg, 1)[:, None]
    n = adj.shape[0]
    r = np.full(n, 1.0 / n)
    for _ in range(iters):
        r = (1 - d) / n + d * (P.T @ r)
    return r


def sym_norm_adj(adj):
    deg = adj.sum(1)
    dinv = 1.0 / np.sqrt(np.maximum(deg, 1e-12))
    return dinv[:, None] * adj * dinv[None, :]


def gcn_layer(adj_norm, h, w):
    return np.maximum(adj_norm @ (h @ w), 0)


def triangle_count(adj):
    return np.trace(adj @ adj @ adj) / 6


def coo_spmv(rows, cols, vals, x, n):
    return np.bincount(rows, weights=vals * x[cols], minlength=n)


def csr_row_sums(vals, indptr):
    return np.add.reduceat(vals, indptr[:-1])


def label_propagation_step(adj, labels_onehot):
    scores = adj @ labels_onehot
    return scores.argmax(1)


# -- statistics and data wrangling -------------------------------------------------------

def gaussian_kde(samples, grid, bw=0.3):
    z = (grid[:, None] - samples[None, :]) / bw
    return np.exp(-0.5 * z * z).sum(1) / (len(samples) * bw * np.sqrt(2 * np.pi))


def welch_t(a, b):
    ma, mb = a.mean(0), b.mean(0)
    va, vb = a.var(0, ddof=1), b.var(0, ddof=1)
    return (ma - mb) / np.sqrt(va / a.shape[0] + vb / b.shape[0])


def spearman_cols(x):
    ranks = x.argsort(0).argsort(0).astype(np.float64)
    ranks -= ranks.mean(0)
    cov = ranks.T @ ranks
    d = np.sqrt(np.diag(cov))
    return cov / d[:, None] / d[None, :]


def mahalanobis(x, mu, cov):
    d = x - mu
    return np.sqrt(np.einsum("ij,jk,ik->i", d, np.linalg.inv(cov), d))


def gmm_estep(x, means, log_w, var=1.0):
    d2 = ((x[:, None, :] - means[None, :, :]) ** 2).sum(-1)
    logp = log_w[None, :] - 0.5 * d2 / var
    m = logp.max(1, keepdims=True)
    lse = m + np.log(np.exp(logp - m).sum(1, keepdims=True))
    return np.exp(logp - lse)


def group_mean(keys, values, groups=64):
    sums = np.bincount(keys, weights=values, minlength=groups)
    counts = np.bincount(keys, minlength=groups)
    return sums / np.maximum(counts, 1)


def demean_by_group(keys, values, groups=64):
    sums = np.bincount(keys, weights=values, minlength=groups)
    counts = np.bincount(keys, minlength=groups)
    return values - (sums / np.maximum(counts, 1))[keys]


def winsorize(x, lo=1, hi=99):
    a, b = np.percentile(x, [lo, hi])
    return np.clip(x, a, b)


def lag_features(x):
    lag1 = np.concatenate([[np.nan], x[:-1]])
    lag2 = np.concatenate([[np.nan, np.nan], x[:-2]])
    return np.stack([x, lag1, lag2, x - lag1], axis=1)


def forward_fill(x):
    idx = np.where(np.isnan(x), 0, np.arange(len(x)))
    np.maximum.accumulate(idx, out=idx)
    return x[idx]


def rolling_zscore(x, w=50):
    c1 = np.cumsum(np.concatenate([[0.0], x]))
    c2 = np.cumsum(np.concatenate([[0.0], x * x]))
    m = (c1[w:] - c1[:-w]) / w
    v = (c2[w:] - c2[:-w]) / w - m * m
    return (x[w - 1:] - m) / np.sqrt(np.maximum(v, 1e-12))


def bin_counts_digitize(x, edges):
    return np.bincount(np.digitize(x, edges), minlength=len(edges) + 1)


def bootstrap_means(x, idx):
    return x[idx].mean(1)


# -- learning ------------------------------------------------------------------------------

def lstm_cell(x, h, c, W, U, b):
    z = x @ W + h @ U + b
    n = h.shape[1]
    i = 1 / (1 + np.exp(-z[:, :n]))
    f = 1 / (1 + np.exp(-z[:, n:2 * n]))
    o = 1 / (1 + np.exp(-z[:, 2 * n:3 * n]))
    g = np.tanh(z[:, 3 * n:])
    c = f * c + i * g
    return o * np.tanh(c), c


def gru_cell(x, h, Wz, Wr, Wh):
    xh = np.concatenate([x, h], axis=1)
    z = 1 / (1 + np.exp(-(xh @ Wz)))
    r = 1 / (1 + np.exp(-(xh @ Wr)))
    hh = np.tanh(np.concatenate([x, r * h], axis=1) @ Wh)
    return (1 - z) * h + z * hh


def positional_encoding(pos, dim=128):
    i = np.arange(dim // 2)
    angle = pos[:, None] / (10000.0 ** (2 * i / dim))[None, :]
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=1)


def ce_with_labels(logits, labels):
    m = logits.max(1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(1)) + m[:, 0]
    return (lse - np.take_along_axis(logits, labels[:, None], 1)[:, 0]).mean()


def knn_predict(train, train_y, test, k=5):
    d = (test ** 2).sum(1)[:, None] - 2 * test @ train.T + (train ** 2).sum(1)[None, :]
    nn = np.argpartition(d, k, axis=1)[:, :k]
    return train_y[nn].mean(1)


def contrastive_infonce(a, b, t=0.1):
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    s = a @ b.T / t
    s = s - s.max(1, keepdims=True)
    return -(np.diag(s) - np.log(np.exp(s).sum(1))).mean()


def rmsprop_in_place(w, g, cache, lr=1e-3, rho=0.9):
    cache *= rho
    cache += (1 - rho) * g * g
    w -= lr * g / (np.sqrt(cache) + 1e-8)
    return w


def conv2d_loops(x, k):
    kh, kw = k.shape
    h, w = x.shape
    out = np.zeros((h - kh + 1, w - kw + 1), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            out += k[i, j] * x[i:i + h - kh + 1, j:j + w - kw + 1]
    return out


def cosine_lr_warmup(steps, base=0.1, warm=100, total=10000):
    warmup = base * steps / warm
    cos = 0.5 * base * (1 + np.cos(np.pi * (steps - warm) / (total - warm)))
    return np.where(steps < warm, warmup, cos)


# -- iterative solvers in Python loops -----------------------------------------------------

def jacobi_poisson(u, f, iters=10, h2=1e-4):
    for _ in range(iters):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                - h2 * f[1:-1, 1:-1])
    return u


def conjugate_gradient(A, b, iters=10):
    """Out of place (`x = x + alpha * p`), where loop_programs.py's updates in place: a
    new array a step, which fusion met as a recurrence unrolled 10 times."""
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs = r @ r
    for _ in range(iters):
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def newton_sqrt(a, iters=6):
    x = np.where(a > 1, a / 2, 1.0)
    for _ in range(iters):
        x = 0.5 * (x + a / x)
    return x


def simpson(y, dx=1e-3):
    return dx / 3 * (y[0] + y[-1] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum())


def dft_matrix(x):
    n = x.shape[0]
    k = np.arange(n)
    W = np.exp(-2j * np.pi * np.outer(k, k) / n)
    return W @ x


def red_black_sweep(u):
    u[1:-1:2, 1:-1:2] = 0.25 * (u[0:-2:2, 1:-1:2] + u[2::2, 1:-1:2] + u[1:-1:2, 0:-2:2] + u[1:-1:2, 2::2])
    u[2:-1:2, 2:-1:2] = 0.25 * (u[1:-2:2, 2:-1:2] + u[3::2, 2:-1:2] + u[2:-1:2, 1:-2:2] + u[2:-1:2, 3::2])
    return u


# -- integers and bits ---------------------------------------------------------------------

def xorshift64(state, rounds=8):
    for _ in range(rounds):
        state ^= state << np.uint64(13)
        state ^= state >> np.uint64(7)
        state ^= state << np.uint64(17)
    return state


def gray_code(x):
    return x ^ (x >> 1)


def adler32_like(data):
    a = (1 + np.cumsum(data.astype(np.int64))) % 65521
    b = np.cumsum(a) % 65521
    return (b[-1] << 16) | a[-1]


def pack_rgb(r, g, b):
    return (r.astype(np.uint32) << 16) | (g.astype(np.uint32) << 8) | b.astype(np.uint32)


def morton2d(x, y):
    def spread(v):
        v = v.astype(np.uint64)
        v = (v | (v << np.uint64(8))) & np.uint64(0x00FF00FF)
        v = (v | (v << np.uint64(4))) & np.uint64(0x0F0F0F0F)
        v = (v | (v << np.uint64(2))) & np.uint64(0x33333333)
        v = (v | (v << np.uint64(1))) & np.uint64(0x55555555)
        return v
    return spread(x) | (spread(y) << np.uint64(1))


def _adjacency(n, p, seed=1):
    rng = np.random.default_rng(seed)
    return (rng.random((n, n)) < p).astype(np.float64)


def _sym_adjacency(n, p):
    a = np.triu(_adjacency(n, p), 1)
    return a + a.T


def _csr_indptr(nnz, rows):
    cuts = np.sort(R.choice(np.arange(1, nnz), rows - 1, replace=False))
    return np.concatenate([[0], cuts, [nnz]]).astype(np.int64)


def _nan_holes(n):
    x = R.standard_normal(n)
    x[R.random(n) < 0.2] = np.nan
    x[0] = 0.0
    return x


KERNELS = [
    ("histogram equalize uint8 1024x1024", hist_equalize,
     lambda: [R.integers(0, 200, (1024, 1024), dtype=np.uint8)]),
    ("erode 3x3 1024x1024 f32", erode_3x3, lambda: [nrm(1024, 1024, dt=f32)]),
    ("integral image 1024x1024", integral_image, lambda: [uni(1024, 1024)]),
    ("box mean via integral 1024x1024 k8", box_mean_from_integral, lambda: [uni(1024, 1024)]),
    ("downsample mean 4x4 2048x2048 f32", downsample_mean, lambda: [uni(2048, 2048, dt=f32)]),
    ("upsample nearest 512x512", upsample_nearest, lambda: [uni(512, 512)]),
    ("unsharp mask 1024x1024 f32", unsharp_mask, lambda: [uni(1024, 1024, dt=f32)]),
    ("HSV value/saturation 1024x1024x3 f32", hsv_value_saturation,
     lambda: [uni(1024, 1024, 3, dt=f32)]),
    ("median 3x3 via stack 256x256", median3x3_stack, lambda: [uni(256, 256)]),
    ("pagerank 20 iterations 1000", pagerank, lambda: [_adjacency(1000, 0.01)]),
    ("symmetric normalized adjacency 2000", sym_norm_adj, lambda: [_sym_adjacency(2000, 0.01)]),
    ("GCN layer 1000x64->32", gcn_layer,
     lambda: [sym_norm_adj(_sym_adjacency(1000, 0.01)), nrm(1000, 64), nrm(64, 32)]),
    ("triangle count 300", triangle_count, lambda: [_sym_adjacency(300, 0.05)]),
    ("COO SpMV 1e6 nnz 1e5 rows", coo_spmv,
     lambda: [R.integers(0, 100_000, N), R.integers(0, 100_000, N), nrm(N), nrm(100_000),
              100_000]),
    ("CSR row sums reduceat 1e6 / 1e4", csr_row_sums,
     lambda: [nrm(N), _csr_indptr(N, 10_000)]),
    ("label propagation 2000x10", label_propagation_step,
     lambda: [_sym_adjacency(2000, 0.01), np.eye(10)[R.integers(0, 10, 2000)]]),
    ("Gaussian KDE 1e4 samples 200 grid", gaussian_kde,
     lambda: [nrm(10_000), np.linspace(-4, 4, 200)]),
    ("Welch t cols 5000x32 vs 4000x32", welch_t, lambda: [nrm(5000, 32), nrm(4000, 32) + 0.1]),
    ("Spearman cols 2000x16", spearman_cols, lambda: [nrm(2000, 16)]),
    ("Mahalanobis 1e5x4", mahalanobis,
     lambda: [nrm(100_000, 4), nrm(4), np.cov(nrm(50, 4), rowvar=False) + np.eye(4)]),
    ("GMM E-step 10000x2 k8", gmm_estep, lambda: [nrm(10_000, 2), nrm(8, 2) * 3, np.log(uni(8) + 0.1)]),
    ("group mean 1e6 into 64", group_mean, lambda: [R.integers(0, 64, N), nrm(N)]),
    ("demean by group 1e6 / 64", demean_by_group, lambda: [R.integers(0, 64, N), nrm(N)]),
    ("winsorize 1e6", winsorize, lambda: [nrm(N)]),
    ("lag features 1e5", lag_features, lambda: [nrm(100_000)]),
    ("forward fill NaNs 1e6", forward_fill, lambda: [_nan_holes(N)]),
    ("rolling z-score 1e6 w50", rolling_zscore, lambda: [nrm(N)]),
    ("digitize + bincount 1e6 / 20", bin_counts_digitize,
     lambda: [nrm(N), np.linspace(-3, 3, 20)]),
    ("bootstrap means 200x1000 of 1e4", bootstrap_means,
     lambda: [nrm(10_000), R.integers(0, 10_000, (200, 1000))]),
    ("LSTM cell 64x256 f32", lstm_cell,
     lambda: [nrm(64, 128, dt=f32), nrm(64, 256, dt=f32), nrm(64, 256, dt=f32),
              nrm(128, 1024, dt=f32) * 0.1, nrm(256, 1024, dt=f32) * 0.1, nrm(1024, dt=f32)]),
    ("GRU cell 64x128 f32", gru_cell,
     lambda: [nrm(64, 64, dt=f32), nrm(64, 128, dt=f32), nrm(192, 128, dt=f32) * 0.1,
              nrm(192, 128, dt=f32) * 0.1, nrm(192, 128, dt=f32) * 0.1]),
    ("positional encoding 2048x128", positional_encoding, lambda: [np.arange(2048.0)]),
    ("cross-entropy labels 4096x1000 f32", ce_with_labels,
     lambda: [nrm(4096, 1000, dt=f32), R.integers(0, 1000, 4096)]),
    ("kNN k5 200 of 5000x16", knn_predict,
     lambda: [nrm(5000, 16), uni(5000), nrm(200, 16)]),
    ("InfoNCE 512x128 f32", contrastive_infonce,
     lambda: [nrm(512, 128, dt=f32), nrm(512, 128, dt=f32)]),
    ("RMSprop in place 1e6 f32", rmsprop_in_place,
     lambda: [nrm(N, dt=f32), nrm(N, dt=f32), uni(N, dt=f32)]),
    ("conv2d loops 5x5 512x512 f32", conv2d_loops,
     lambda: [nrm(512, 512, dt=f32), nrm(5, 5, dt=f32)]),
    ("cosine LR warmup 1e5 steps", cosine_lr_warmup, lambda: [np.arange(100_000.0) / 10]),
    ("Jacobi Poisson 10 sweeps 512x512", jacobi_poisson, lambda: [nrm(512, 512), nrm(512, 512)]),
    ("conjugate gradient 10 it 500", conjugate_gradient,
     lambda: [(lambda m: m @ m.T + 500 * np.eye(500))(nrm(500, 500)), nrm(500)]),
    ("Newton sqrt 6 it 1e6", newton_sqrt, lambda: [uni(N, hi=100)]),
    ("Simpson rule 1e6+1", simpson, lambda: [np.sin(np.linspace(0, 3, N + 1))]),
    ("DFT matrix 256 complex", dft_matrix, lambda: [nrm(256) + 1j * nrm(256)]),
    ("red-black sweep 1024x1024", red_black_sweep, lambda: [nrm(1024, 1024)]),
    ("xorshift64 8 rounds 1e6", xorshift64,
     lambda: [R.integers(1, 2**63, N, dtype=np.int64).astype(np.uint64)]),
    ("Gray code int32 1e6", gray_code, lambda: [R.integers(0, 2**31 - 1, N, dtype=np.int32)]),
    ("Adler-32 like 1e6 uint8", adler32_like,
     lambda: [R.integers(0, 256, N, dtype=np.uint8)]),
    ("pack RGB uint8 1024x1024", pack_rgb,
     lambda: [R.integers(0, 256, (1024, 1024), dtype=np.uint8) for _ in range(3)]),
    ("Morton 2-D codes 1e6", morton2d,
     lambda: [R.integers(0, 65536, N, dtype=np.uint16), R.integers(0, 65536, N, dtype=np.uint16)]),
]
