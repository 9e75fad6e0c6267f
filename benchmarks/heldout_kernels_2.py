"""Held-out kernels, second batch: written 2026-11-28 (late session) as a user of NumPy
would write them, without reading xlanb's kernels first, to find slow or wrong compiled
code the first batch (heldout_kernels.py) no longer finds.  Same form: (name, function,
arguments maker); bench_heldout.py runs every batch."""
from __future__ import annotations

import numpy as np

from heldout_kernels import R, f32, f64, nrm, uni  # noqa: F401  (one random stream)


def pairwise_dist(X, Y):
    d2 = (X * X).sum(1)[:, None] + (Y * Y).sum(1)[None, :] - 2 * X @ Y.T
    return np.sqrt(np.maximum(d2, 0))


def rbf_kernel(X, Y, gamma=0.5):
    d2 = (X * X).sum(1)[:, None] + (Y * Y).sum(1)[None, :] - 2 * X @ Y.T
    return np.exp(-gamma * d2)


def cosine_sim(X, Y):
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    Yn = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    return Xn @ Yn.T


def batchnorm_train(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=0)
    var = x.var(axis=0)
    return gamma * (x - mu) / np.sqrt(var + eps) + beta


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x / (1 + np.exp(-x))


def log_softmax(z):
    m = z.max(axis=1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=1, keepdims=True))


def kl_rows(p, q):
    return (p * np.log(p / q)).sum(axis=1)


def focal_loss(p, y, g=2.0):
    pt = np.where(y == 1, p, 1 - p)
    return -np.mean((1 - pt) ** g * np.log(pt))


def running_max(x):
    return np.maximum.accumulate(x)


def zscore_clip(x):
    return np.clip((x - x.mean()) / x.std(), -3, 3)


def hist_fixed(x):
    return np.histogram(x, bins=50, range=(0.0, 1.0))[0]


def moving_avg_convolve(x):
    return np.convolve(x, np.ones(5) / 5, mode="valid")


def zero_crossings(x):
    return ((x[:-1] * x[1:]) < 0).sum()


def avg_pool_2x2(img):
    h, w = img.shape
    return img.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))


def max_pool_2x2(img):
    h, w = img.shape
    return img.reshape(h // 2, 2, w // 2, 2).max(axis=(1, 3))


def rgb_to_gray(img):
    return img @ np.array([0.299, 0.587, 0.114], dtype=img.dtype)


def gamma_correct(img):
    return ((img / 255.0) ** 2.2 * 255).astype(np.uint8)


def sobel_mag(a):
    gx = (a[:-2, 2:] + 2 * a[1:-1, 2:] + a[2:, 2:]) - (a[:-2, :-2] + 2 * a[1:-1, :-2] + a[2:, :-2])
    gy = (a[2:, :-2] + 2 * a[2:, 1:-1] + a[2:, 2:]) - (a[:-2, :-2] + 2 * a[:-2, 1:-1] + a[:-2, 2:])
    return np.hypot(gx, gy)


def blur5_rows(a):
    return (a[:, :-4] + 4 * a[:, 1:-3] + 6 * a[:, 2:-2] + 4 * a[:, 3:-1] + a[:, 4:]) / 16


def nbody_acc(pos, mass):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d ** 2).sum(-1) + 1e-3
    inv = mass[None, :] / r2 ** 1.5
    return (d * inv[:, :, None]).sum(1)


def verlet(x, v, a, dt=0.01):
    x += v * dt + 0.5 * a * dt ** 2
    v += a * dt
    return x, v


def heat_steps(u, k=0.1):
    for _ in range(10):
        u[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


def mc_pi(x, y):
    return 4.0 * (x * x + y * y < 1).mean()


def poly_features(x):
    return np.column_stack([np.ones_like(x), x, x ** 2, x ** 3])


def normal_eq(X, y):
    return np.linalg.solve(X.T @ X, X.T @ y)


def ridge_step(w, X, y, lam=0.1, lr=1e-3):
    grad = X.T @ (X @ w - y) / len(y) + lam * w
    return w - lr * grad


def adam_inplace(p, g, m, v, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    m *= b1
    m += (1 - b1) * g
    v *= b2
    v += (1 - b2) * g * g
    p -= lr * m / (np.sqrt(v) + eps)


def weighted_avg(x, w):
    return np.average(x, weights=w, axis=0)


def row_norms(x):
    return np.linalg.norm(x, axis=1)


def attn_scores(q, k):
    return np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1])


def tensordot_contract(a, b):
    return np.tensordot(a, b, axes=([1, 2], [0, 1]))


def nan_to_zero(x):
    return np.where(np.isnan(x), 0.0, x)


def nanmean_cols(x):
    return np.nanmean(x, axis=0)


def frac_positive_cols(x):
    return (x > 0).mean(axis=0)


def cumsum_axis0(x):
    return np.cumsum(x, axis=0)


def ptp_rows(x):
    return np.ptp(x, axis=1)


def group_sums(labels, x):
    return np.bincount(labels, weights=x, minlength=16)


def int_hash(x):
    return (x * np.uint64(2654435761)) % np.uint64(2 ** 32)


def sinc_eval(x):
    return np.sinc(x)


def power_spectrum(z):
    return np.abs(z) ** 2


def upper_tri_values(x):
    return x[np.triu_indices(x.shape[0], 1)]


def hwc_to_chw(img):
    return np.ascontiguousarray(img.transpose(2, 0, 1))


def std_ddof1(x):
    return x.std(axis=0, ddof=1)


def median_rows(x):
    return np.median(x, axis=1)


def round2(x):
    return np.round(x, 2)


def signed_sqrt(x):
    return np.sign(x) * np.sqrt(np.abs(x))


def prod_rows(x):
    return np.prod(x, axis=1)


def all_finite(x):
    return np.all(np.isfinite(x))


def argsort_rows(x):
    return np.argsort(x, axis=1)


def isin_small(x):
    return np.isin(x, np.array([3, 7, 11]))


def logaddexp_reduce(x):
    return np.logaddexp.reduce(x, axis=1)


def smooth_labels(onehot, eps=0.1):
    return onehot * (1 - eps) + eps / onehot.shape[1]


def mae_rows_f32(a, b):
    return np.abs(a - b).mean(axis=1)


def relu6_f32(x):
    return np.minimum(np.maximum(x, 0), 6)


def outer_sum0(x, y):
    return np.outer(x, y).sum(axis=0)


def minmax_scale_cols(x):
    lo, hi = x.min(axis=0), x.max(axis=0)
    return (x - lo) / (hi - lo)


def dot_rows_f32(a, b):
    return (a * b).sum(-1)


def cumsum_reset_mask(x):
    return np.cumsum(np.where(x > 0, x, 0.0))


def sq_err_int(a, b):
    d = a.astype(np.int64) - b.astype(np.int64)
    return (d * d).sum()


def returns_stats(prices):
    r = np.diff(np.log(prices))
    return r.mean(), r.std(), (r > 0).mean()


def drawdown(prices):
    peak = np.maximum.accumulate(prices)
    return ((prices - peak) / peak).min()


def ewma_loop(x, alpha=0.1):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = alpha * x[i] + (1 - alpha) * out[i - 1]
    return out


def bollinger(x, w=20):
    c = np.cumsum(np.insert(x, 0, 0.0))
    ma = (c[w:] - c[:-w]) / w
    return ma, x[w - 1:] - ma


def window_rms(x):
    frames = x.reshape(-1, 256)
    return np.sqrt((frames ** 2).mean(axis=1))


def hann_frames(x):
    frames = x.reshape(-1, 512)
    return frames * np.hanning(512)


def fir_highpass(x):
    return x[2:] - 2 * x[1:-1] + x[:-2]


def complex_rotate(z, theta):
    return z * np.exp(1j * theta)


def magnitude_db(z):
    return 20 * np.log10(np.abs(z) + 1e-12)


def quaternion_mul(q, r):
    w1, x1, y1, z1 = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    w2, x2, y2, z2 = r[:, 0], r[:, 1], r[:, 2], r[:, 3]
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                     w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                     w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=1)


def rotate_points(p, angle):
    c, s = np.cos(angle), np.sin(angle)
    R = np.array([[c, -s], [s, c]])
    return p @ R.T


def bbox_iou(a, b):
    x1 = np.maximum(a[:, 0], b[:, 0])
    y1 = np.maximum(a[:, 1], b[:, 1])
    x2 = np.minimum(a[:, 2], b[:, 2])
    y2 = np.minimum(a[:, 3], b[:, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / (area_a + area_b - inter)


def haversine(lat1, lon1, lat2, lon2):
    lat1, lon1, lat2, lon2 = map(np.radians, (lat1, lon1, lat2, lon2))
    a = np.sin((lat2 - lat1) / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2
    return 6371.0 * 2 * np.arcsin(np.sqrt(a))


def gradient_descent_steps(w, X, y):
    for _ in range(5):
        w = w - 0.01 * X.T @ (X @ w - y) / X.shape[0]
    return w


def power_iteration(A):
    v = np.ones(A.shape[0]) / np.sqrt(A.shape[0])
    for _ in range(10):
        v = A @ v
        v = v / np.linalg.norm(v)
    return v @ A @ v


def gram_schmidt_step(Q, a):
    return a - Q @ (Q.T @ a)


def softmax_temp_f32(z, t=np.float32(0.5)):
    z = z / t
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def triplet_loss(a, p, n, margin=1.0):
    dp = ((a - p) ** 2).sum(1)
    dn = ((a - n) ** 2).sum(1)
    return np.maximum(dp - dn + margin, 0).mean()


def dice_coef(pred, target):
    inter = (pred * target).sum(axis=(1, 2))
    return 2 * inter / (pred.sum(axis=(1, 2)) + target.sum(axis=(1, 2)) + 1e-7)


def rmsnorm_f32(x, g):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + np.float32(1e-6)) * g


def embedding_bag(table, idx):
    return table[idx].mean(axis=1)


def pixel_threshold(img):
    return np.where(img > 128, 255, 0).astype(np.uint8)


def alpha_blend(a, b, alpha):
    return (a.astype(np.float32) * alpha + b.astype(np.float32) * (1 - alpha)).astype(np.uint8)


def bit_count_parity(x):
    y = x ^ (x >> 1)
    y = y ^ (y >> 2)
    y = (y & 0x1111111111111111) * 0x1111111111111111
    return (y >> 60) & 1


def lcg_ints(x):
    return (x * 6364136223846793005 + 1442695040888963407) >> 33


def clip_grad_rows(g, max_norm=1.0):
    n = np.sqrt((g * g).sum(1, keepdims=True))
    return g * np.minimum(1.0, max_norm / (n + 1e-6))


def sigmoid_bce_f32(z, y):
    return np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


def angle_between(u, v):
    c = (u * v).sum(1) / (np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1))
    return np.arccos(np.clip(c, -1, 1))


def colsum_where(x):
    return np.where(x > 0, x, 0).sum(axis=0)


def mean_abs_dev(x):
    return np.abs(x - np.median(x)).mean()


def spline_eval(t):
    return ((2 * t - 3) * t * t + 1, ((t - 2) * t + 1) * t, (-2 * t + 3) * t * t, (t - 1) * t * t)


KERNELS = [
    ("pairwise dist 1000x500x64", pairwise_dist, lambda: [nrm(1000, 64), nrm(500, 64)]),
    ("RBF kernel 1000x500x64 f32", rbf_kernel, lambda: [nrm(1000, 64, dt=f32) / 8,
                                                        nrm(500, 64, dt=f32) / 8]),
    ("cosine sim 1000x500x64", cosine_sim, lambda: [nrm(1000, 64), nrm(500, 64)]),
    ("batchnorm train 256x512 f32", batchnorm_train,
     lambda: [nrm(256, 512, dt=f32), uni(512, dt=f32), nrm(512, dt=f32)]),
    ("GELU tanh 1e6 f32", gelu_tanh, lambda: [nrm(1_000_000, dt=f32)]),
    ("SiLU 1e6 f32", silu, lambda: [nrm(1_000_000, dt=f32)]),
    ("log-softmax 2000x100", log_softmax, lambda: [nrm(2000, 100)]),
    ("KL rows 2000x100", kl_rows, lambda: [uni(2000, 100, lo=0.01), uni(2000, 100, lo=0.01)]),
    ("focal loss 1e6", focal_loss,
     lambda: [uni(1_000_000, lo=0.01, hi=0.99), R.integers(0, 2, 1_000_000)]),
    ("maximum.accumulate 1e6", running_max, lambda: [nrm(1_000_000)]),
    ("zscore clip 1e6 f32", zscore_clip, lambda: [nrm(1_000_000, dt=f32)]),
    ("histogram 50 bins 1e6", hist_fixed, lambda: [uni(1_000_000)]),
    ("convolve valid 5 1e6", moving_avg_convolve, lambda: [nrm(1_000_000)]),
    ("zero crossings 1e6", zero_crossings, lambda: [nrm(1_000_000)]),
    ("avg pool 2x2 1024x1024 f32", avg_pool_2x2, lambda: [nrm(1024, 1024, dt=f32)]),
    ("max pool 2x2 1024x1024 f32", max_pool_2x2, lambda: [nrm(1024, 1024, dt=f32)]),
    ("rgb to gray 1024x1024x3 f32", rgb_to_gray, lambda: [uni(1024, 1024, 3, dt=f32)]),
    ("gamma correct uint8 1024x1024", gamma_correct,
     lambda: [R.integers(0, 256, (1024, 1024), dtype=np.uint8)]),
    ("sobel magnitude 1024x1024 f32", sobel_mag, lambda: [nrm(1024, 1024, dt=f32)]),
    ("blur 5-tap rows 1024x1024", blur5_rows, lambda: [nrm(1024, 1024)]),
    ("n-body acc 300", nbody_acc, lambda: [nrm(300, 3), uni(300, lo=0.5)]),
    ("verlet in place 1e6", verlet, lambda: [nrm(1_000_000), nrm(1_000_000), nrm(1_000_000)]),
    ("heat 10 steps in place 1e5", heat_steps, lambda: [nrm(100_000)]),
    ("monte carlo pi 1e6", mc_pi, lambda: [uni(1_000_000), uni(1_000_000)]),
    ("poly features 1e5", poly_features, lambda: [nrm(100_000)]),
    ("normal equations 10000x16", normal_eq, lambda: [nrm(10000, 16), nrm(10000)]),
    ("ridge step 5000x64", ridge_step, lambda: [nrm(64), nrm(5000, 64), nrm(5000)]),
    ("adam in place 1e6 f32", adam_inplace,
     lambda: [nrm(1_000_000, dt=f32), nrm(1_000_000, dt=f32), nrm(1_000_000, dt=f32),
              uni(1_000_000, dt=f32)]),
    ("np.average weights 10000x32", weighted_avg, lambda: [nrm(10000, 32), uni(10000)]),
    ("linalg.norm rows 1e5x3", row_norms, lambda: [nrm(100_000, 3)]),
    ("attention scores 2x4x128x32 f32", attn_scores,
     lambda: [nrm(2, 4, 128, 32, dt=f32), nrm(2, 4, 128, 32, dt=f32)]),
    ("tensordot 64x32x16 . 32x16x8", tensordot_contract,
     lambda: [nrm(64, 32, 16), nrm(32, 16, 8)]),
    ("nan to zero 1e6", nan_to_zero,
     lambda: [np.where(uni(1_000_000) < 0.1, np.nan, nrm(1_000_000))]),
    ("nanmean cols 10000x16", nanmean_cols,
     lambda: [np.where(uni(10000, 16) < 0.1, np.nan, nrm(10000, 16))]),
    ("frac positive cols 10000x64", frac_positive_cols, lambda: [nrm(10000, 64)]),
    ("cumsum axis0 1000x1000", cumsum_axis0, lambda: [nrm(1000, 1000)]),
    ("ptp rows 2000x256", ptp_rows, lambda: [nrm(2000, 256)]),
    ("bincount weights 1e6 16 groups", group_sums,
     lambda: [R.integers(0, 16, 1_000_000), nrm(1_000_000)]),
    ("int hash uint64 1e6", int_hash,
     lambda: [R.integers(0, 2 ** 40, 1_000_000).astype(np.uint64)]),
    ("sinc 1e6", sinc_eval, lambda: [nrm(1_000_000) * 4]),
    ("power spectrum c128 1e6", power_spectrum,
     lambda: [nrm(1_000_000) + 1j * nrm(1_000_000)]),
    ("triu values 500x500", upper_tri_values, lambda: [nrm(500, 500)]),
    ("HWC to CHW 512x512x3 f32", hwc_to_chw, lambda: [nrm(512, 512, 3, dt=f32)]),
    ("std ddof=1 cols 10000x32", std_ddof1, lambda: [nrm(10000, 32)]),
    ("median rows 1000x101", median_rows, lambda: [nrm(1000, 101)]),
    ("round 2 decimals 1e6", round2, lambda: [nrm(1_000_000)]),
    ("signed sqrt 1e6 f32", signed_sqrt, lambda: [nrm(1_000_000, dt=f32)]),
    ("prod rows 1000x64", prod_rows, lambda: [uni(1000, 64, lo=0.9, hi=1.1)]),
    ("all finite 1e6", all_finite, lambda: [nrm(1_000_000)]),
    ("argsort rows 1000x100", argsort_rows, lambda: [nrm(1000, 100)]),
    ("isin 3 values 1e6 int", isin_small, lambda: [R.integers(0, 20, 1_000_000)]),
    ("logaddexp.reduce rows 1000x100", logaddexp_reduce, lambda: [nrm(1000, 100)]),
    ("label smoothing 10000x100 f32", smooth_labels,
     lambda: [np.eye(100, dtype=f32)[R.integers(0, 100, 10000)]]),
    ("MAE rows 2000x512 f32", mae_rows_f32,
     lambda: [nrm(2000, 512, dt=f32), nrm(2000, 512, dt=f32)]),
    ("relu6 1e6 f32", relu6_f32, lambda: [nrm(1_000_000, dt=f32) * 4]),
    ("outer sum0 2000x2000", outer_sum0, lambda: [nrm(2000), nrm(2000)]),
    ("minmax scale cols 10000x64", minmax_scale_cols, lambda: [nrm(10000, 64)]),
    ("dot rows 1e5x32 f32", dot_rows_f32,
     lambda: [nrm(100_000, 32, dt=f32), nrm(100_000, 32, dt=f32)]),
    ("cumsum of positives 1e6", cumsum_reset_mask, lambda: [nrm(1_000_000)]),
    ("sq err uint8 as int64 1e6", sq_err_int,
     lambda: [R.integers(0, 256, 1_000_000, dtype=np.uint8),
              R.integers(0, 256, 1_000_000, dtype=np.uint8)]),
]

KERNELS += [
    ("log returns stats 1e6", returns_stats, lambda: [np.exp(np.cumsum(nrm(1_000_000) * 1e-3))]),
    ("max drawdown 1e6", drawdown, lambda: [np.exp(np.cumsum(nrm(1_000_000) * 1e-3))]),
    ("EWMA python loop 2000", ewma_loop, lambda: [nrm(2000)]),
    ("bollinger cumsum w20 1e6", bollinger, lambda: [nrm(1_000_000)]),
    ("frame RMS 256 1e6 f32", window_rms, lambda: [nrm(1_048_576, dt=f32)]),
    ("hann frames 512 1e6", hann_frames, lambda: [nrm(1_048_576)]),
    ("FIR 2nd diff 1e6 f32", fir_highpass, lambda: [nrm(1_000_000, dt=f32)]),
    ("complex rotate c128 1e6", complex_rotate,
     lambda: [nrm(1_000_000) + 1j * nrm(1_000_000), nrm(1_000_000)]),
    ("magnitude dB c64 1e6", magnitude_db,
     lambda: [(nrm(1_000_000) + 1j * nrm(1_000_000)).astype(np.complex64)]),
    ("quaternion mul 1e5", quaternion_mul, lambda: [nrm(100_000, 4), nrm(100_000, 4)]),
    ("rotate points 1e5x2", rotate_points, lambda: [nrm(100_000, 2), np.float64(0.3)]),
    ("bbox IoU 1e5", bbox_iou,
     lambda: [np.sort(uni(100_000, 4), axis=1)[:, [0, 1, 2, 3]],
              np.sort(uni(100_000, 4), axis=1)[:, [0, 1, 2, 3]]]),
    ("haversine 1e6", haversine,
     lambda: [uni(1_000_000, lo=-80, hi=80), uni(1_000_000, lo=-180, hi=180),
              uni(1_000_000, lo=-80, hi=80), uni(1_000_000, lo=-180, hi=180)]),
    ("5 GD steps 5000x32", gradient_descent_steps,
     lambda: [nrm(32), nrm(5000, 32), nrm(5000)]),
    ("power iteration 10 256x256", power_iteration,
     lambda: [(lambda a: a @ a.T)(nrm(256, 256))]),
    ("gram-schmidt step 1000x20", gram_schmidt_step,
     lambda: [np.linalg.qr(nrm(1000, 20))[0], nrm(1000)]),
    ("softmax temp 1000x1000 f32", softmax_temp_f32, lambda: [nrm(1000, 1000, dt=f32)]),
    ("triplet loss 10000x64", triplet_loss,
     lambda: [nrm(10000, 64), nrm(10000, 64), nrm(10000, 64)]),
    ("dice 16x128x128 f32", dice_coef,
     lambda: [uni(16, 128, 128, dt=f32), (uni(16, 128, 128) > 0.5).astype(f32)]),
    ("RMSNorm 4096x512 f32", rmsnorm_f32, lambda: [nrm(4096, 512, dt=f32), uni(512, dt=f32)]),
    ("embedding bag 4096x8 of 10000x64 f32", embedding_bag,
     lambda: [nrm(10000, 64, dt=f32), R.integers(0, 10000, (4096, 8))]),
    ("threshold uint8 1024x1024", pixel_threshold,
     lambda: [R.integers(0, 256, (1024, 1024), dtype=np.uint8)]),
    ("alpha blend uint8 1024x1024x3", alpha_blend,
     lambda: [R.integers(0, 256, (1024, 1024, 3), dtype=np.uint8),
              R.integers(0, 256, (1024, 1024, 3), dtype=np.uint8), np.float32(0.3)]),
    ("parity bits int64 1e6", bit_count_parity,
     lambda: [R.integers(0, 2 ** 62, 1_000_000)]),
    ("LCG int64 1e6", lcg_ints, lambda: [R.integers(0, 2 ** 62, 1_000_000)]),
    ("clip grad rows 10000x128", clip_grad_rows, lambda: [nrm(10000, 128)]),
    ("sigmoid BCE 1e6 f32", sigmoid_bce_f32,
     lambda: [nrm(1_000_000, dt=f32), (uni(1_000_000) > 0.5).astype(f32)]),
    ("angle between 1e5x3", angle_between, lambda: [nrm(100_000, 3), nrm(100_000, 3)]),
    ("colsum where 10000x64", colsum_where, lambda: [nrm(10000, 64)]),
    ("mean abs dev median 1e6", mean_abs_dev, lambda: [nrm(1_000_000)]),
    ("hermite basis 1e6", spline_eval, lambda: [uni(1_000_000)]),
]
