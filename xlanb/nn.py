"""Neural-network building blocks as plain NumPy functions over arrays and pytrees.

Every function here is ordinary NumPy: it runs eagerly on ndarrays and traces unchanged
under `xlanb.jit` and `xlanb.value_and_grad`.  Parameters are pytrees (dicts of arrays), so
a model is a function `apply(params, x)` and an optimizer maps one params tree to the next.

    params = nn.dense_init(key, 64, 10)
    logits = nn.dense(params, x)                 # x @ w + b
    loss = nn.cross_entropy(logits, labels)      # mean over the batch

Rules that keep a function traceable: no Python branching on array values (`np.where`
instead), shapes known from the arguments' shapes, and Python values (`train`, `rate`,
`num_heads`) used only as constants.  Randomness comes from an explicit `xlanb.random` key.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

Params = Any          # a pytree of arrays: dict / list / tuple of np.ndarray

# Additive score for padded attention positions: exp() of it is exactly 0 in float32, and
# unlike -inf or finfo.min it cannot overflow or give inf - inf = nan for a fully padded row.
MASK_VALUE = -1e9


def _random():
    from . import random     # imported late: xlanb.random imports xlanb, which may import us
    return random


# -- initializers (JAX's signature: init(key, shape, dtype)) -----------------------------

def glorot_uniform(key, shape: tuple[int, ...], dtype=np.float32) -> np.ndarray:
    """U(-limit, limit), limit = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio 2010).

    fan_in is shape[-2] and fan_out shape[-1], each times the product of the other
    dimensions (the receptive field), as in `jax.nn.initializers.glorot_uniform`.
    """
    shape = tuple(shape)
    if len(shape) < 2:
        raise ValueError(f"glorot_uniform needs a shape with at least 2 dimensions, got {shape}")
    receptive = math.prod(shape[:-2])
    fan_in, fan_out = shape[-2] * receptive, shape[-1] * receptive
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return _random().uniform(key, shape, dtype=dtype, minval=-limit, maxval=limit)


def normal_init(key, shape: tuple[int, ...], stddev: float = 0.02,
                dtype=np.float32) -> np.ndarray:
    """N(0, stddev^2): BERT's initializer for embeddings and dense kernels (stddev 0.02)."""
    return (_random().normal(key, tuple(shape), dtype=dtype) * stddev).astype(dtype)


def zeros(key, shape: tuple[int, ...], dtype=np.float32) -> np.ndarray:
    """Zeros; `key` is ignored and may be None (same signature as the other initializers)."""
    return np.zeros(tuple(shape), dtype)


def ones(key, shape: tuple[int, ...], dtype=np.float32) -> np.ndarray:
    """Ones; `key` is ignored and may be None."""
    return np.ones(tuple(shape), dtype)


# -- layers -------------------------------------------------------------------------------

def dense_init(key, in_features: int, out_features: int, kernel_init=glorot_uniform,
               dtype=np.float32) -> dict:
    """{"w": (in, out) from `kernel_init`, "b": (out,) zeros}."""
    return {"w": kernel_init(key, (in_features, out_features), dtype=dtype),
            "b": np.zeros((out_features,), dtype)}


def dense(params: dict, x):
    """x @ w + b over the last axis of x (any leading batch dimensions)."""
    return x @ params["w"] + params["b"]


def layer_norm_init(features: int, dtype=np.float32) -> dict:
    """{"scale": ones, "bias": zeros}, both (features,)."""
    return {"scale": np.ones((features,), dtype), "bias": np.zeros((features,), dtype)}


def layer_norm(params: dict, x, eps: float = 1e-5):
    """(x - mean) / sqrt(var + eps) * scale + bias over the last axis (Ba et al. 2016)."""
    mean = np.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=-1, keepdims=True)
    return centered / np.sqrt(var + eps) * params["scale"] + params["bias"]


def embedding(table, ids):
    """Rows of `table` (vocab, features) at integer `ids` of any shape: ids.shape + (features,)."""
    return np.take(table, ids, axis=0)


def dropout(key, x, rate: float, train: bool):
    """Inverted dropout: zero each element with probability `rate`, scale the rest by 1/(1-rate).

    Identity when `train` is False or `rate` is 0 (both Python values, so the traced program
    has no dropout at all in eval mode).  In training `key` is an `xlanb.random` key; use a
    fresh one (`random.split` / `fold_in`) every step, or every step drops the same units.
    """
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"dropout rate must be in [0, 1), got {rate}")
    if not train or rate == 0.0:
        return x
    if key is None:
        raise ValueError("dropout with train=True and rate > 0 needs a random key, "
                         "e.g. `key=xlanb.random.fold_in(base_key, step)`")
    keep_prob = 1.0 - rate
    keep = _random().bernoulli(key, keep_prob, np.shape(x))
    return np.where(keep, x / keep_prob, 0)


# -- activations --------------------------------------------------------------------------

def relu(x):
    return np.maximum(x, 0)


# Abramowitz & Stegun 7.1.26: erf(x) = 1 - (a1 t + ... + a5 t^5) exp(-x^2), t = 1/(1 + p x),
# x >= 0, absolute error <= 1.5e-7 (below float32's resolution near 1).
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def erf(x):
    """The error function from NumPy ufuncs (NumPy has none and SciPy may be absent).

    Abramowitz & Stegun 7.1.26, absolute error <= 1.5e-7: fine for float32 models, not a
    float64-accurate erf.  It is built from abs/exp/sign so it traces and differentiates.
    """
    a1, a2, a3, a4, a5 = _ERF_A
    z = np.abs(x)
    t = 1.0 / (1.0 + _ERF_P * z)
    poly = t * (a1 + t * (a2 + t * (a3 + t * (a4 + t * a5))))
    return np.sign(x) * (1.0 - poly * np.exp(-z * z))


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_SQRT_HALF = math.sqrt(0.5)


def gelu(x, approximate: bool = True):
    """GELU (Hendrycks & Gimpel 2016).

    approximate=True: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))   (BERT's, JAX's default)
    approximate=False: 0.5 x (1 + erf(x / sqrt(2)))                     (the exact form)
    """
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))))
    return 0.5 * x * (1.0 + erf(x * _SQRT_HALF))


def softmax(x, axis: int = -1):
    """exp(x) / sum(exp(x)), with the max subtracted first so large logits do not overflow."""
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis: int = -1):
    """x - logsumexp(x), computed as s - log(sum(exp(s))) with s = x - max(x): never overflows,
    and the largest entry's log-probability is exact."""
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def cross_entropy(logits, labels):
    """Mean over the batch of -log softmax(logits)[label], for integer (sparse) labels.

    logits: (..., classes); labels: integers of shape logits.shape[:-1].  The same as
    `tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)`.
    """
    classes = np.shape(logits)[-1]
    logp = log_softmax(np.reshape(logits, (-1, classes)))
    flat = np.reshape(labels, (-1,))
    n = np.shape(logp)[0]
    return -np.mean(logp[np.arange(n), flat])


# -- attention ----------------------------------------------------------------------------

def multi_head_attention_init(key, features: int, kernel_init=glorot_uniform,
                              dtype=np.float32) -> dict:
    """Four (features, features) dense layers: query, key, value, output."""
    keys = _random().split(key, 4)
    names = ("query", "key", "value", "output")
    return {name: dense_init(keys[i], features, features, kernel_init, dtype)
            for i, name in enumerate(names)}


def _split_heads(x, num_heads: int):
    batch, seq, features = np.shape(x)
    return np.transpose(np.reshape(x, (batch, seq, num_heads, features // num_heads)),
                        (0, 2, 1, 3))                                  # (b, heads, seq, d)


def multi_head_attention(params: dict, x, mask, num_heads: int, key=None,
                         dropout_rate: float = 0.0, train: bool = False):
    """Self-attention of x (batch, seq, features) over itself, in `num_heads` heads.

    mask: (batch, seq) with 1 for real tokens and 0 for padding (or None); padded keys get
    MASK_VALUE added to their scores, so no query attends to them.  With `train` and a
    `dropout_rate`, dropout is applied to the attention probabilities (as in BERT and
    `tf.keras.layers.MultiHeadAttention`), using `key`.
    """
    batch, seq, features = np.shape(x)
    if features % num_heads:
        raise ValueError(f"features ({features}) must be divisible by num_heads ({num_heads})")
    head_dim = features // num_heads
    q = _split_heads(dense(params["query"], x), num_heads)
    k = _split_heads(dense(params["key"], x), num_heads)
    v = _split_heads(dense(params["value"], x), num_heads)
    scores = (q @ np.swapaxes(k, -1, -2)) * (1.0 / math.sqrt(head_dim))  # (b, h, seq, seq)
    if mask is not None:
        padding = 1.0 - np.reshape(mask, (batch, 1, 1, seq)).astype(scores.dtype)
        scores = scores + padding * MASK_VALUE
    probs = dropout(key, softmax(scores, axis=-1), dropout_rate, train)
    context = np.reshape(np.transpose(probs @ v, (0, 2, 1, 3)), (batch, seq, features))
    return dense(params["output"], context)
