"""The performance corpus: kernels that users write, in plain NumPy, at realistic sizes.

None is here because xlanb is good at it.  They are the first things a statistician, an ML
engineer, a physicist or an image-processing user writes: stats (logsumexp, likelihoods,
standardize, covariance, cross-entropy), ML layers (softmax, norms, attention, convolution as
loops and as `einsum`, dense layers, optimizer steps), linear algebra (GEMV chains, `A.T @ y`,
small matmuls), physics and stencils, image filters and distance matrices, several in both
float32 and float64.

Each kernel is written once as a factory `make(xp) -> fn`, called with NumPy and with
jax.numpy, so the JAX figure times the same code (kernels whose code JAX cannot run, such as
slice assignment, have `jax=False`).  `make_args(tiny)` builds the inputs: realistic sizes
(NumPy at roughly 0.1-20 ms on one core) or tiny ones for the correctness test
(tests/benchmarks/test_corpus.py).  `bandwidth=True` marks kernels bound by memory traffic:
the benchmark prints the share of the machine's measured bandwidth they reach, counting the
compulsory traffic (inputs read once, outputs written once).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass
class CorpusKernel:
    name: str
    group: str
    make: Callable              # make(xp) -> the kernel, written against the module xp
    make_args: Callable         # make_args(tiny: bool) -> list of arrays
    bandwidth: bool = False     # memory-bound: print the share of measured bandwidth
    jax: bool = True            # JAX can run the same code
    rtol: float | None = None   # None: by the inputs' float dtype (see tolerance())
    atol: float | None = None


def tolerance(kernel: CorpusKernel, args) -> tuple[float, float]:
    """rtol, atol for comparing xlanb with NumPy: float32 kernels differ in summation order
    (vectorized and pairwise sums), float64 ones barely."""
    floats = [a.dtype for a in args if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    single = any(d == np.float32 for d in floats)
    rtol, atol = (2e-4, 1e-5) if single else (1e-8, 1e-10)
    return (kernel.rtol if kernel.rtol is not None else rtol,
            kernel.atol if kernel.atol is not None else atol)


def _rng(seed: int = 0):
    return np.random.default_rng(seed)


def _normal(shape, dtype, seed=0, scale=1.0, shift=0.0):
    return (_rng(seed).standard_normal(shape) * scale + shift).astype(dtype)


def _uniform(shape, dtype, seed=0, low=0.0, high=1.0):
    return _rng(seed).uniform(low, high, shape).astype(dtype)


def _pick(tiny, full, small):
    return small if tiny else full


# ----------------------------------------------------------------------------- stats

def logsumexp_rows(xp):
    def f(x):
        m = x.max(axis=1, keepdims=True)
        return xp.log(xp.exp(x - m).sum(axis=1)) + m[:, 0]
    return f


def gaussian_loglik(xp):
    def f(x, mu, sigma):
        p = xp.exp(-0.5 * ((x - mu) / sigma) ** 2)
        p /= sigma * xp.sqrt(2 * xp.pi)
        return xp.log(p).sum()
    return f


def standardize_columns(xp):
    def f(x):
        return (x - x.mean(axis=0)) / x.std(axis=0)
    return f


def covariance(xp):
    def f(x):
        xc = x - x.mean(axis=0)
        return xc.T @ xc / (x.shape[0] - 1)
    return f


def correlation(xp):
    def f(x):
        xc = x - x.mean(axis=0)
        cov = xc.T @ xc
        d = xp.sqrt(xp.diag(cov))
        return cov / xp.outer(d, d)
    return f


def cross_entropy_labels(xp):
    def f(logits, labels):
        m = logits.max(axis=1, keepdims=True)
        logp = logits - m - xp.log(xp.exp(logits - m).sum(axis=1, keepdims=True))
        return -logp[xp.arange(logits.shape[0]), labels].mean()
    return f


def cross_entropy_onehot(xp):
    def f(logits, onehot):
        z = logits - logits.max(axis=-1, keepdims=True)
        logp = z - xp.log(xp.sum(xp.exp(z), axis=-1, keepdims=True))
        return -(onehot * logp).sum(axis=-1).mean()
    return f


def weighted_mean_var(xp):
    def f(x, w):
        mean = (w * x).sum() / w.sum()
        var = (w * (x - mean) ** 2).sum() / w.sum()
        return mean, var
    return f


def kl_divergence(xp):
    def f(p, q):
        return xp.sum(p * xp.log(p / q))
    return f


def r2_score(xp):
    def f(y, yhat):
        ss_res = ((y - yhat) ** 2).sum()
        ss_tot = ((y - y.mean()) ** 2).sum()
        return 1 - ss_res / ss_tot
    return f


def zscore_outliers(xp):
    def f(x):
        z = (x - x.mean()) / x.std()
        return xp.count_nonzero(xp.abs(z) > 3)
    return f


def logistic_nll(xp):
    def f(X, w, y):
        z = X @ w
        return xp.mean(xp.logaddexp(0, z) - y * z)
    return f


# ----------------------------------------------------------------------------- ML layers

def softmax_rows(xp):
    def f(x):
        e = xp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    return f


def layer_norm(xp):
    def f(x, gamma, beta):
        mean = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, keepdims=True)
        return (x - mean) / xp.sqrt(var + 1e-5) * gamma + beta
    return f


def rms_norm(xp):
    def f(x, gamma):
        return x / xp.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * gamma
    return f


def batch_norm_inference(xp):
    def f(x, mean, var, gamma, beta):
        c = x.shape[1]
        scale = gamma / xp.sqrt(var + 1e-5)
        return (x - mean.reshape(1, c, 1, 1)) * scale.reshape(1, c, 1, 1) \
            + beta.reshape(1, c, 1, 1)
    return f


def attention(xp):
    def f(q, k, v):
        # math.sqrt: a Python float keeps float32 (np.sqrt(64) is a float64 scalar, which
        # NumPy 2 promotes the scores to)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
        s = xp.exp(s - s.max(axis=-1, keepdims=True))
        return (s / s.sum(axis=-1, keepdims=True)) @ v
    return f


def mlp_layer(xp):
    def f(x, w, b):
        return xp.maximum(x @ w + b, 0)
    return f


def mlp_two_layers(xp):
    def f(x, w1, b1, w2, b2):
        h = xp.tanh(x @ w1 + b1)
        return h @ w2 + b2
    return f


def gelu_tanh(xp):
    def f(x):
        return 0.5 * x * (1 + xp.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
    return f


def conv1d_loops(xp):
    def f(x, w):
        n = x.shape[0] - w.shape[0] + 1
        out = xp.zeros(n, x.dtype)
        for k in range(w.shape[0]):
            out += w[k] * x[k:k + n]
        return out
    return f


def conv2d_loops(xp):
    """NCHW convolution, 3x3 'valid', one channel contraction per kernel tap."""
    def f(x, w):
        n, _, h, wd = x.shape
        out = xp.zeros((n, w.shape[0], h - 2, wd - 2), x.dtype)
        for i in range(3):
            for j in range(3):
                out += xp.einsum("nchw,oc->nohw", x[:, :, i:i + h - 2, j:j + wd - 2],
                                 w[:, :, i, j])
        return out
    return f


def conv2d_einsum(xp):
    """The same convolution as one einsum over stacked patches (im2col by slicing)."""
    def f(x, w):
        h, wd = x.shape[2] - 2, x.shape[3] - 2
        patches = xp.stack([x[:, :, i:i + h, j:j + wd] for i in range(3) for j in range(3)],
                           axis=2)
        return xp.einsum("ncthw,oct->nohw", patches, w.reshape(w.shape[0], w.shape[1], 9))
    return f


def depthwise_conv_loops(xp):
    def f(x, w):
        c, h, wd = x.shape
        out = xp.zeros((c, h - 2, wd - 2), x.dtype)
        for i in range(3):
            for j in range(3):
                out += w[:, i, j][:, None, None] * x[:, i:i + h - 2, j:j + wd - 2]
        return out
    return f


def adam_step(xp):
    def f(p, g, m, v):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        mhat = m / (1 - 0.9 ** 10)
        vhat = v / (1 - 0.999 ** 10)
        return p - 1e-3 * mhat / (xp.sqrt(vhat) + 1e-8), m, v
    return f


def sigmoid_bce(xp):
    def f(z, y):
        p = 1 / (1 + xp.exp(-z))
        return -xp.mean(y * xp.log(p + 1e-7) + (1 - y) * xp.log(1 - p + 1e-7))
    return f


def embedding_mean_pool(xp):
    def f(table, idx):
        return table[idx].mean(axis=1)
    return f


# ----------------------------------------------------------------------------- linear algebra

def gemv(xp):
    def f(a, x):
        return a @ x
    return f


def gemv_transposed(xp):
    def f(a, y):
        return a.T @ y
    return f


def least_squares_grad(xp):
    def f(a, x, b):
        r = a @ x - b
        return a.T @ r
    return f


def power_iteration_step(xp):
    def f(a, x):
        y = a @ x
        return y / xp.linalg.norm(y)
    return f


def batched_small_matmul(xp):
    def f(a, b):
        return a @ b
    return f


def matmul_chain_small(xp):
    def f(a, b, c):
        return a @ b @ c
    return f


def quadratic_forms(xp):
    def f(x, a):
        return ((x @ a) * x).sum(axis=1)
    return f


def rigid_transform(xp):
    def f(p, r, t):
        return p @ r.T + t
    return f


# ----------------------------------------------------------------------------- physics, stencils

def laplacian_2d(xp):
    def f(u):
        return (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                - 4 * u[1:-1, 1:-1])
    return f


def jacobi_steps(xp):
    def f(u):
        for _ in range(5):
            u = u.copy()
            u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        return u
    return f


def heat_1d_steps(xp):
    def f(u):
        for _ in range(10):
            u = u.copy()
            u[1:-1] = u[1:-1] + 0.25 * (u[:-2] - 2 * u[1:-1] + u[2:])
        return u
    return f


def wave_2d_step(xp):
    def f(u, u_prev, c2):
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
        return 2 * u[1:-1, 1:-1] - u_prev[1:-1, 1:-1] + c2 * lap
    return f


def nbody_accel(xp):
    def f(pos, mass):
        d = pos[None, :, :] - pos[:, None, :]
        r2 = (d ** 2).sum(axis=-1) + 1e-3
        inv3 = r2 ** -1.5
        return (d * (mass[None, :] * inv3)[:, :, None]).sum(axis=1)
    return f


def lennard_jones_energy(xp):
    def f(pos):
        d = pos[:, None, :] - pos[None, :, :]
        # the identity keeps the diagonal at r2 = 1, where the pair energy is 0
        r2 = (d * d).sum(axis=-1) + xp.eye(pos.shape[0], dtype=pos.dtype)
        s6 = (1.0 / r2) ** 3
        return (4 * (s6 * s6 - s6)).sum() / 2
    return f


def game_of_life_step(xp):
    def f(g):
        n = (g[:-2, :-2] + g[:-2, 1:-1] + g[:-2, 2:] + g[1:-1, :-2] + g[1:-1, 2:]
             + g[2:, :-2] + g[2:, 1:-1] + g[2:, 2:])
        c = g[1:-1, 1:-1]
        return ((n == 3) | ((c == 1) & (n == 2))).astype(g.dtype)
    return f


def haversine(xp):
    def f(lat1, lon1, lat2, lon2):
        dlat = xp.radians(lat2 - lat1)
        dlon = xp.radians(lon2 - lon1)
        a = xp.sin(dlat / 2) ** 2 + xp.cos(xp.radians(lat1)) * xp.cos(xp.radians(lat2)) \
            * xp.sin(dlon / 2) ** 2
        return 6371.0 * 2 * xp.arcsin(xp.sqrt(a))
    return f


# ----------------------------------------------------------------------------- image filters

def box_blur_3x3(xp):
    def f(img):
        return (img[:-2, :-2] + img[:-2, 1:-1] + img[:-2, 2:] + img[1:-1, :-2]
                + img[1:-1, 1:-1] + img[1:-1, 2:] + img[2:, :-2] + img[2:, 1:-1]
                + img[2:, 2:]) / 9
    return f


def sobel_magnitude(xp):
    def f(img):
        gx = (img[:-2, 2:] + 2 * img[1:-1, 2:] + img[2:, 2:]
              - img[:-2, :-2] - 2 * img[1:-1, :-2] - img[2:, :-2])
        gy = (img[2:, :-2] + 2 * img[2:, 1:-1] + img[2:, 2:]
              - img[:-2, :-2] - 2 * img[:-2, 1:-1] - img[:-2, 2:])
        return xp.sqrt(gx * gx + gy * gy)
    return f


def separable_gaussian_blur(xp):
    def f(img):
        k = (0.0625, 0.25, 0.375, 0.25, 0.0625)
        h = sum(k[i] * img[:, i:img.shape[1] - 4 + i] for i in range(5))
        return sum(k[i] * h[i:h.shape[0] - 4 + i, :] for i in range(5))
    return f


def rgb_to_gray_gamma(xp):
    def f(img):
        gray = img @ xp.array([0.299, 0.587, 0.114], dtype=img.dtype)
        return gray ** (1 / 2.2)
    return f


def contrast_stretch(xp):
    def f(img):
        lo, hi = img.min(), img.max()
        return (img - lo) / (hi - lo)
    return f


def unsharp_mask(xp):
    def f(img):
        blur = (img[:-2, 1:-1] + img[2:, 1:-1] + img[1:-1, :-2] + img[1:-1, 2:]
                + img[1:-1, 1:-1]) / 5
        return xp.clip(img[1:-1, 1:-1] + 1.5 * (img[1:-1, 1:-1] - blur), 0, 1)
    return f


# ----------------------------------------------------------------------------- distances

def pairwise_broadcast(xp):
    def f(x, y):
        return xp.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=-1))
    return f


def pairwise_dot_expansion(xp):
    def f(x, y):
        d2 = (x * x).sum(axis=1)[:, None] + (y * y).sum(axis=1)[None, :] - 2 * x @ y.T
        return xp.sqrt(xp.maximum(d2, 0))
    return f


def cosine_similarity(xp):
    def f(x, y):
        xn = x / xp.linalg.norm(x, axis=1, keepdims=True)
        yn = y / xp.linalg.norm(y, axis=1, keepdims=True)
        return xn @ yn.T
    return f


def rbf_kernel(xp):
    def f(x, y):
        d2 = ((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=-1)
        return xp.exp(-0.5 * d2)
    return f


def manhattan_distance(xp):
    def f(x, y):
        return xp.abs(x[:, None, :] - y[None, :, :]).sum(axis=-1)
    return f


# ----------------------------------------------------------------------------- the table

def _table() -> list[CorpusKernel]:
    f32, f64 = np.float32, np.float64
    K = CorpusKernel
    rows = [
        # stats
        K("logsumexp rows 2000x512 f32", "stats", logsumexp_rows,
          lambda t: [_normal(_pick(t, (2000, 512), (7, 33)), f32)], bandwidth=True),
        K("logsumexp rows 2000x512 f64", "stats", logsumexp_rows,
          lambda t: [_normal(_pick(t, (2000, 512), (7, 33)), f64)], bandwidth=True),
        K("gaussian loglik 1e5 f64", "stats", gaussian_loglik,
          lambda t: [_normal(_pick(t, 100_000, 101), f64), np.float64(0.3), np.float64(1.7)],
          bandwidth=True),
        K("gaussian loglik 1e6 f32", "stats", gaussian_loglik,
          lambda t: [_normal(_pick(t, 1_000_000, 101), f32), np.float32(0.3),
                     np.float32(1.7)], bandwidth=True, rtol=1e-3),
        K("standardize cols 4000x256 f64", "stats", standardize_columns,
          lambda t: [_normal(_pick(t, (4000, 256), (9, 5)), f64, scale=3, shift=1)],
          bandwidth=True),
        K("standardize cols 4000x256 f32", "stats", standardize_columns,
          lambda t: [_normal(_pick(t, (4000, 256), (9, 5)), f32, scale=3, shift=1)],
          bandwidth=True, atol=1e-4),
        K("covariance 5000x64 f64", "stats", covariance,
          lambda t: [_normal(_pick(t, (5000, 64), (11, 4)), f64)]),
        K("correlation 5000x64 f32", "stats", correlation,
          lambda t: [_normal(_pick(t, (5000, 64), (11, 4)), f32)], atol=1e-4),
        K("cross-entropy labels 1024x1000 f32", "stats", cross_entropy_labels,
          lambda t: [_normal(_pick(t, (1024, 1000), (6, 10)), f32),
                     _rng(1).integers(0, _pick(t, 1000, 10), _pick(t, 1024, 6))],
          bandwidth=True),
        K("cross-entropy one-hot 1024x1000 f32", "stats", cross_entropy_onehot,
          lambda t: [_normal(_pick(t, (1024, 1000), (6, 10)), f32),
                     np.eye(_pick(t, 1000, 10), dtype=f32)[
                         _rng(1).integers(0, _pick(t, 1000, 10), _pick(t, 1024, 6))]],
          bandwidth=True),
        K("weighted mean+var 1e6 f64", "stats", weighted_mean_var,
          lambda t: [_normal(_pick(t, 1_000_000, 99), f64),
                     _uniform(_pick(t, 1_000_000, 99), f64, seed=1)], bandwidth=True),
        K("KL divergence 1e6 f64", "stats", kl_divergence,
          lambda t: [_uniform(_pick(t, 1_000_000, 99), f64, low=0.1),
                     _uniform(_pick(t, 1_000_000, 99), f64, seed=1, low=0.1)],
          bandwidth=True),
        K("R^2 score 1e6 f32", "stats", r2_score,
          lambda t: [_normal(_pick(t, 1_000_000, 99), f32),
                     _normal(_pick(t, 1_000_000, 99), f32, seed=1, scale=0.1)],
          bandwidth=True, rtol=1e-3),
        K("z-score outlier count 1e6 f64", "stats", zscore_outliers,
          lambda t: [_normal(_pick(t, 1_000_000, 999), f64)], bandwidth=True),
        K("logistic NLL 10000x100 f64", "stats", logistic_nll,
          lambda t: [_normal(_pick(t, (10000, 100), (13, 3)), f64),
                     _normal(_pick(t, 100, 3), f64, seed=1, scale=0.1),
                     (_rng(2).random(_pick(t, 10000, 13)) > 0.5).astype(f64)]),
        # ML layers
        K("softmax rows 2048x1000 f32", "ml", softmax_rows,
          lambda t: [_normal(_pick(t, (2048, 1000), (5, 17)), f32)], bandwidth=True,
          atol=1e-6),
        K("softmax rows 1024x1000 f64", "ml", softmax_rows,
          lambda t: [_normal(_pick(t, (1024, 1000), (5, 17)), f64)], bandwidth=True),
        K("layer norm 4096x512 f32", "ml", layer_norm,
          lambda t: [_normal(_pick(t, (4096, 512), (3, 16)), f32),
                     _normal(_pick(t, 512, 16), f32, seed=1, scale=0.1, shift=1),
                     _normal(_pick(t, 512, 16), f32, seed=2, scale=0.1)], bandwidth=True,
          atol=1e-4),
        K("RMS norm 4096x512 f32", "ml", rms_norm,
          lambda t: [_normal(_pick(t, (4096, 512), (3, 16)), f32),
                     _normal(_pick(t, 512, 16), f32, seed=1, scale=0.1, shift=1)],
          bandwidth=True),
        K("batch norm (inference) 32x64x32x32 f32", "ml", batch_norm_inference,
          lambda t: [_normal(_pick(t, (32, 64, 32, 32), (2, 3, 4, 5)), f32)]
          + [_normal(_pick(t, 64, 3), f32, seed=s) for s in (1,)]
          + [_uniform(_pick(t, 64, 3), f32, seed=2, low=0.5, high=2)]
          + [_normal(_pick(t, 64, 3), f32, seed=s) for s in (3, 4)], bandwidth=True,
          atol=1e-5),
        K("attention 8x256x64 f32", "ml", attention,
          lambda t: [_normal(_pick(t, (8, 256, 64), (2, 5, 4)), f32, seed=s)
                     for s in (0, 1, 2)]),
        K("MLP relu(x@w+b) 256x512x512 f32", "ml", mlp_layer,
          lambda t: [_normal(_pick(t, (256, 512), (5, 7)), f32),
                     _normal(_pick(t, (512, 512), (7, 6)), f32, seed=1, scale=0.05),
                     _normal(_pick(t, 512, 6), f32, seed=2)], atol=1e-4),
        K("MLP two layers 128x256x256x10 f64", "ml", mlp_two_layers,
          lambda t: [_normal(_pick(t, (128, 256), (5, 7)), f64),
                     _normal(_pick(t, (256, 256), (7, 6)), f64, seed=1, scale=0.06),
                     _normal(_pick(t, 256, 6), f64, seed=2),
                     _normal(_pick(t, (256, 10), (6, 3)), f64, seed=3, scale=0.06),
                     _normal(_pick(t, 10, 3), f64, seed=4)]),
        K("GELU (tanh) 2e5 f32", "ml", gelu_tanh,       # NumPy's float32 x**3 is pow: slow
          lambda t: [_normal(_pick(t, 200_000, 99), f32)], bandwidth=True, atol=1e-5),
        K("conv1d loops 1e6 x 9 taps f32", "ml", conv1d_loops,
          lambda t: [_normal(_pick(t, 1_000_000, 40), f32),
                     _normal(9, f32, seed=1)], bandwidth=True, atol=1e-5),
        K("conv2d loops (einsum per tap) 8x16x32x32 f32", "ml", conv2d_loops,
          lambda t: [_normal(_pick(t, (8, 16, 32, 32), (2, 3, 6, 7)), f32),
                     _normal(_pick(t, (32, 16, 3, 3), (4, 3, 3, 3)), f32, seed=1,
                             scale=0.1)], atol=1e-4),
        K("conv2d one einsum 8x16x32x32 f32", "ml", conv2d_einsum,
          lambda t: [_normal(_pick(t, (8, 16, 32, 32), (2, 3, 6, 7)), f32),
                     _normal(_pick(t, (32, 16, 3, 3), (4, 3, 3, 3)), f32, seed=1,
                             scale=0.1)], atol=1e-4),
        K("depthwise conv loops 64x128x128 f32", "ml", depthwise_conv_loops,
          lambda t: [_normal(_pick(t, (64, 128, 128), (3, 6, 7)), f32),
                     _normal(_pick(t, (64, 3, 3), (3, 3, 3)), f32, seed=1)],
          bandwidth=True, atol=1e-5),
        K("Adam step 1e6 f32", "ml", adam_step,
          lambda t: [_normal(_pick(t, 1_000_000, 99), f32, seed=s, scale=sc)
                     for s, sc in ((0, 1), (1, 1), (2, 0.1))]
          + [_uniform(_pick(t, 1_000_000, 99), f32, seed=3, high=0.01)], bandwidth=True),
        K("sigmoid BCE 1e6 f32", "ml", sigmoid_bce,
          lambda t: [_normal(_pick(t, 1_000_000, 99), f32),
                     (_rng(1).random(_pick(t, 1_000_000, 99)) > 0.5).astype(f32)],
          bandwidth=True, rtol=1e-3),
        K("embedding mean-pool 512x32 of 10000x128 f32", "ml", embedding_mean_pool,
          lambda t: [_normal(_pick(t, (10000, 128), (20, 4)), f32),
                     _rng(1).integers(0, _pick(t, 10000, 20), _pick(t, (512, 32), (3, 5)))],
          atol=1e-5),
        # linear algebra
        K("GEMV A@x 2000x2000 f64", "linalg", gemv,
          lambda t: [_normal(_pick(t, (2000, 2000), (9, 7)), f64),
                     _normal(_pick(t, 2000, 7), f64, seed=1)], bandwidth=True),
        K("GEMV A@x 2000x2000 f32", "linalg", gemv,
          lambda t: [_normal(_pick(t, (2000, 2000), (9, 7)), f32),
                     _normal(_pick(t, 2000, 7), f32, seed=1)], bandwidth=True, atol=1e-3),
        K("A.T@y 2000x2000 f64", "linalg", gemv_transposed,
          lambda t: [_normal(_pick(t, (2000, 2000), (9, 7)), f64),
                     _normal(_pick(t, 2000, 9), f64, seed=1)], bandwidth=True),
        K("least-squares grad A.T@(A@x-b) 2000x1000 f64", "linalg", least_squares_grad,
          lambda t: [_normal(_pick(t, (2000, 1000), (9, 7)), f64),
                     _normal(_pick(t, 1000, 7), f64, seed=1),
                     _normal(_pick(t, 2000, 9), f64, seed=2)], bandwidth=True, rtol=1e-7),
        K("least-squares grad 2000x1000 f32", "linalg", least_squares_grad,
          lambda t: [_normal(_pick(t, (2000, 1000), (9, 7)), f32),
                     _normal(_pick(t, 1000, 7), f32, seed=1),
                     _normal(_pick(t, 2000, 9), f32, seed=2)], bandwidth=True, rtol=1e-3,
          atol=1e-2),
        K("power iteration step 1500x1500 f64", "linalg", power_iteration_step,
          lambda t: [_normal(_pick(t, (1500, 1500), (8, 8)), f64),
                     _normal(_pick(t, 1500, 8), f64, seed=1)], bandwidth=True),
        K("batched 4x4 matmul x20000 f64", "linalg", batched_small_matmul,
          lambda t: [_normal(_pick(t, (20000, 4, 4), (5, 4, 4)), f64),
                     _normal(_pick(t, (20000, 4, 4), (5, 4, 4)), f64, seed=1)]),
        K("batched 3x3 matmul x20000 f32", "linalg", batched_small_matmul,
          lambda t: [_normal(_pick(t, (20000, 3, 3), (5, 3, 3)), f32),
                     _normal(_pick(t, (20000, 3, 3), (5, 3, 3)), f32, seed=1)], atol=1e-5),
        K("matmul chain 64x64 A@B@C f64", "linalg", matmul_chain_small,
          lambda t: [_normal(_pick(t, (64, 64), (5, 5)), f64, seed=s) for s in (0, 1, 2)]),
        K("quadratic forms (X@A*X).sum 10000x32 f64", "linalg", quadratic_forms,
          lambda t: [_normal(_pick(t, (10000, 32), (9, 4)), f64),
                     _normal(_pick(t, (32, 32), (4, 4)), f64, seed=1)]),
        K("rigid transform p@R.T+t 100000x3 f32", "linalg", rigid_transform,
          lambda t: [_normal(_pick(t, (100_000, 3), (17, 3)), f32),
                     _normal((3, 3), f32, seed=1), _normal(3, f32, seed=2)],
          bandwidth=True, atol=1e-5),
        # physics, stencils
        K("2-D Laplacian 1024x1024 f64", "physics", laplacian_2d,
          lambda t: [_normal(_pick(t, (1024, 1024), (9, 8)), f64)], bandwidth=True),
        K("2-D Laplacian 1024x1024 f32", "physics", laplacian_2d,
          lambda t: [_normal(_pick(t, (1024, 1024), (9, 8)), f32)], bandwidth=True,
          atol=1e-5),
        K("Jacobi 5 sweeps 512x512 f64", "physics", jacobi_steps,
          lambda t: [_normal(_pick(t, (512, 512), (9, 8)), f64)], jax=False),
        K("heat 1-D 10 steps 1e5 f64", "physics", heat_1d_steps,
          lambda t: [_normal(_pick(t, 100_000, 50), f64)], jax=False),
        K("wave 2-D step 1024x1024 f32", "physics", wave_2d_step,
          lambda t: [_normal(_pick(t, (1024, 1024), (9, 8)), f32),
                     _normal(_pick(t, (1024, 1024), (9, 8)), f32, seed=1),
                     np.float32(0.1)], bandwidth=True, atol=1e-5),
        K("n-body accelerations 256 f64", "physics", nbody_accel,
          lambda t: [_normal(_pick(t, (256, 3), (6, 3)), f64),
                     _uniform(_pick(t, 256, 6), f64, seed=1, low=0.5, high=1.5)]),
        K("Lennard-Jones energy 300 f64", "physics", lennard_jones_energy,
          lambda t: [_uniform(_pick(t, (300, 3), (7, 3)), f64, high=20)], rtol=1e-7),
        K("game of life step 1024x1024 int8", "physics", game_of_life_step,
          lambda t: [(_rng(0).random(_pick(t, (1024, 1024), (9, 8))) > 0.6).astype(np.int8)],
          bandwidth=True),
        K("haversine 2e5 f64", "physics", haversine,
          lambda t: [_uniform(_pick(t, 200_000, 99), f64, seed=s, low=-80, high=80)
                     for s in range(4)], bandwidth=True),
        # image filters
        K("box blur 3x3 2048x2048 f32", "image", box_blur_3x3,
          lambda t: [_uniform(_pick(t, (2048, 2048), (9, 8)), f32)], bandwidth=True),
        K("Sobel magnitude 2048x2048 f32", "image", sobel_magnitude,
          lambda t: [_uniform(_pick(t, (2048, 2048), (9, 8)), f32)], bandwidth=True,
          atol=1e-5),
        K("separable Gaussian 5x5 1024x1024 f64", "image", separable_gaussian_blur,
          lambda t: [_uniform(_pick(t, (1024, 1024), (9, 8)), f64)], bandwidth=True),
        K("RGB->gray + gamma 1024x1024x3 f32", "image", rgb_to_gray_gamma,
          lambda t: [_uniform(_pick(t, (1024, 1024, 3), (5, 4, 3)), f32)], bandwidth=True),
        K("contrast stretch 2048x2048 f32", "image", contrast_stretch,
          lambda t: [_uniform(_pick(t, (2048, 2048), (9, 8)), f32, low=0.2, high=0.7)],
          bandwidth=True, atol=1e-6),
        K("unsharp mask + clip 2048x2048 f32", "image", unsharp_mask,
          lambda t: [_uniform(_pick(t, (2048, 2048), (9, 8)), f32)], bandwidth=True,
          atol=1e-6),
        # distances
        K("pairwise euclid broadcast 500x400x16 f64", "distance", pairwise_broadcast,
          lambda t: [_normal(_pick(t, (500, 16), (7, 3)), f64),
                     _normal(_pick(t, (400, 16), (5, 3)), f64, seed=1)]),
        K("pairwise euclid dot-trick 2000x1000x64 f32", "distance", pairwise_dot_expansion,
          lambda t: [_normal(_pick(t, (2000, 64), (7, 3)), f32),
                     _normal(_pick(t, (1000, 64), (5, 3)), f32, seed=1)], atol=2e-3),
        K("cosine similarity 2000x1000x64 f32", "distance", cosine_similarity,
          lambda t: [_normal(_pick(t, (2000, 64), (7, 3)), f32),
                     _normal(_pick(t, (1000, 64), (5, 3)), f32, seed=1)], atol=1e-5),
        K("RBF kernel matrix 500x400x16 f64", "distance", rbf_kernel,
          lambda t: [_normal(_pick(t, (500, 16), (7, 3)), f64, scale=0.3),
                     _normal(_pick(t, (400, 16), (5, 3)), f64, seed=1, scale=0.3)]),
        K("Manhattan distance 500x400x16 f32", "distance", manhattan_distance,
          lambda t: [_normal(_pick(t, (500, 16), (7, 3)), f32),
                     _normal(_pick(t, (400, 16), (5, 3)), f32, seed=1)], atol=1e-5),
    ]
    return rows


CORPUS: dict[str, CorpusKernel] = {k.name: k for k in _table()}
