"""Training-step workloads W4 and W5, each as one SGD step written three ways.

W4  softmax regression, 784 -> 10, batch 256 float32       the seed's training step
W5  one BERT-like encoder layer (post-LN), batch 8, seq 128, hidden 256, 4 heads,
    ffn 1024, gelu (tanh form), masked mean-squared-error on its output

Every step takes (params, *data) and returns (new_params, loss); params is a dict of arrays.
    step         the plain NumPy loss under xlanb.value_and_grad + SGD: what xlanb.jit compiles
    numpy_step   the forward, a hand-written backward (the manual VJP) and the same update:
                 what a NumPy user writes without autodiff
    jax_step     jax.value_and_grad of the same loss (written once over a module `xp`)
`check_gradients()` checks the hand-written gradients against central finite differences in
float64 at tiny sizes, and against JAX's when JAX is installed.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

import xlanb

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = jnp = None

W4_LR = 0.5
W5_LR = 0.1
W5_HEADS = 4
GELU_C = 0.7978845608          # sqrt(2 / pi)
LN_EPS = 1e-5
MASK_NEG = -10000.0            # BERT's additive attention mask for padding


def sgd(params, grads, lr):
    return {k: p - lr * grads[k] for k, p in params.items()}


# -- W4: softmax regression ------------------------------------------------------------------
def w4_loss(params, x, labels, xp=np):
    logits = x @ params["w"] + params["b"]
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))
    return -logp[xp.arange(x.shape[0]), labels].mean()


def w4_step(params, x, labels):
    loss, grads = xlanb.value_and_grad(w4_loss)(params, x, labels)
    return sgd(params, grads, W4_LR), loss


def w4_numpy_value_and_grad(params, x, labels):
    n = x.shape[0]
    rows = np.arange(n)
    logits = x @ params["w"]
    logits += params["b"]
    logits -= logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    sums = probs.sum(axis=1, keepdims=True)
    loss = np.log(sums[:, 0]).mean() - logits[rows, labels].mean()
    probs /= sums                                   # d loss / d logits = (softmax - onehot) / n
    probs[rows, labels] -= 1
    probs /= n
    return loss, {"w": x.T @ probs, "b": probs.sum(axis=0)}


def w4_numpy_step(params, x, labels):
    loss, grads = w4_numpy_value_and_grad(params, x, labels)
    return sgd(params, grads, W4_LR), loss


def w4_args(size: str = "full", dtype=np.float32, seed: int = 0) -> list:
    n, features, classes = {"full": (256, 784, 10), "quick": (64, 784, 10),
                            "tiny": (5, 6, 3)}[size]
    rng = np.random.default_rng(seed)
    params = {"w": (0.01 * rng.standard_normal((features, classes))).astype(dtype),
              "b": (0.01 * rng.standard_normal(classes)).astype(dtype)}
    x = rng.standard_normal((n, features)).astype(dtype)
    labels = rng.integers(0, classes, n)
    return [params, x, labels]


# -- W5: BERT-like encoder layer -------------------------------------------------------------
def layer_norm(x, gamma, beta, xp=np):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / xp.sqrt(var + LN_EPS) * gamma + beta


def gelu(u, xp=np):
    return 0.5 * u * (1 + xp.tanh(GELU_C * (u + 0.044715 * u ** 3)))


def w5_loss(params, h, mask, target, heads=W5_HEADS, xp=np):
    b, s, hidden = h.shape
    d = hidden // heads
    p = params

    def split(t):                                   # (b, s, hidden) -> (b, heads, s, d)
        return t.reshape(b, s, heads, d).transpose(0, 2, 1, 3)

    q = split(h @ p["wq"] + p["bq"])
    k = split(h @ p["wk"] + p["bk"])
    v = split(h @ p["wv"] + p["bv"])
    scores = q @ k.transpose(0, 1, 3, 2) / d ** 0.5 \
        + ((1 - mask) * MASK_NEG)[:, None, None, :]
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = xp.exp(scores)
    attn = e / e.sum(axis=-1, keepdims=True)
    ctx = (attn @ v).transpose(0, 2, 1, 3).reshape(b, s, hidden)
    x1 = layer_norm(h + ctx @ p["wo"] + p["bo"], p["ln1_g"], p["ln1_b"], xp)
    f = gelu(x1 @ p["w1"] + p["b1"], xp) @ p["w2"] + p["b2"]
    y = layer_norm(x1 + f, p["ln2_g"], p["ln2_b"], xp)
    return ((y - target) ** 2 * mask[:, :, None]).sum() / (mask.sum() * hidden)


def w5_step(params, h, mask, target):
    loss, grads = xlanb.value_and_grad(w5_loss)(params, h, mask, target)
    return sgd(params, grads, W5_LR), loss


def _layer_norm_fwd(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    rstd = 1 / np.sqrt((centered * centered).mean(axis=-1, keepdims=True) + LN_EPS)
    xhat = centered * rstd
    return xhat * gamma + beta, (xhat, rstd)


def _layer_norm_bwd(dy, gamma, saved):
    """dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma."""
    xhat, rstd = saved
    dgamma = (dy * xhat).sum(axis=0)
    dbeta = dy.sum(axis=0)
    g = dy * gamma
    dx = g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)
    dx *= rstd
    return dx, dgamma, dbeta


def w5_numpy_value_and_grad(params, h, mask, target, heads=W5_HEADS):
    p = params
    b, s, hidden = h.shape
    d, n = hidden // heads, b * s
    scale = d ** -0.5
    x = h.reshape(n, hidden)                        # rows = tokens: one GEMM per projection

    def split(t):                                   # (n, hidden) -> (b, heads, s, d)
        return t.reshape(b, s, heads, d).transpose(0, 2, 1, 3)

    def merge(t):                                   # (b, heads, s, d) -> (n, hidden)
        return t.transpose(0, 2, 1, 3).reshape(n, hidden)

    # forward, keeping what the backward needs
    q, k, v = (split(x @ p[w] + p[bias]) for w, bias in (("wq", "bq"), ("wk", "bk"),
                                                         ("wv", "bv")))
    scores = q @ k.transpose(0, 1, 3, 2)
    scores *= scale
    scores += ((1 - mask) * MASK_NEG)[:, None, None, :]
    scores -= scores.max(axis=-1, keepdims=True)
    attn = np.exp(scores)
    attn /= attn.sum(axis=-1, keepdims=True)
    ctx = merge(attn @ v)
    x1, ln1 = _layer_norm_fwd(x + ctx @ p["wo"] + p["bo"], p["ln1_g"], p["ln1_b"])
    u = x1 @ p["w1"] + p["b1"]
    t = np.tanh(GELU_C * (u + 0.044715 * (u * u * u)))
    act = 0.5 * u * (1 + t)
    y, ln2 = _layer_norm_fwd(x1 + act @ p["w2"] + p["b2"], p["ln2_g"], p["ln2_b"])
    weight = mask.reshape(n, 1) / (mask.sum() * hidden)
    diff = y - target.reshape(n, hidden)
    loss = (diff * diff * weight).sum()

    # backward
    g = {}
    dr2, g["ln2_g"], g["ln2_b"] = _layer_norm_bwd(2 * diff * weight, p["ln2_g"], ln2)
    g["w2"], g["b2"] = act.T @ dr2, dr2.sum(axis=0)
    dact = dr2 @ p["w2"].T                          # gelu' = 0.5(1+t) + 0.5u(1-t^2) c (1+3a u^2)
    du = dact * (0.5 * (1 + t) + 0.5 * u * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * u * u))
    g["w1"], g["b1"] = x1.T @ du, du.sum(axis=0)
    dx1 = dr2 + du @ p["w1"].T                      # residual + ffn input
    dr1, g["ln1_g"], g["ln1_b"] = _layer_norm_bwd(dx1, p["ln1_g"], ln1)
    g["wo"], g["bo"] = ctx.T @ dr1, dr1.sum(axis=0)
    dctx = split(dr1 @ p["wo"].T)
    dv = attn.transpose(0, 1, 3, 2) @ dctx
    dattn = dctx @ v.transpose(0, 1, 3, 2)          # softmax': attn * (da - sum(da * attn))
    dscores = attn * (dattn - (dattn * attn).sum(axis=-1, keepdims=True))
    dscores *= scale
    dq = dscores @ k
    dk = dscores.transpose(0, 1, 3, 2) @ q
    for name, dt in (("q", dq), ("k", dk), ("v", dv)):
        dt = merge(dt)
        g["w" + name], g["b" + name] = x.T @ dt, dt.sum(axis=0)
    return loss, g


def w5_numpy_step(params, h, mask, target):
    loss, grads = w5_numpy_value_and_grad(params, h, mask, target)
    return sgd(params, grads, W5_LR), loss


def w5_args(size: str = "full", dtype=np.float32, seed: int = 0) -> list:
    b, s, hidden, ffn = {"full": (8, 128, 256, 1024), "quick": (2, 32, 64, 256),
                         "tiny": (2, 4, 8, 16)}[size]
    rng = np.random.default_rng(seed)

    def dense(fan_in, fan_out):
        return (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(dtype)

    def small(*shape):
        return (0.1 * rng.standard_normal(shape)).astype(dtype)

    params = {}
    for name in "qkvo":
        params["w" + name], params["b" + name] = dense(hidden, hidden), small(hidden)
    params["w1"], params["b1"] = dense(hidden, ffn), small(ffn)
    params["w2"], params["b2"] = dense(ffn, hidden), small(hidden)
    for ln in ("ln1", "ln2"):
        params[ln + "_g"], params[ln + "_b"] = (1 + small(hidden)).astype(dtype), small(hidden)
    h = rng.standard_normal((b, s, hidden)).astype(dtype)
    lengths = rng.integers(s // 2, s + 1, b)        # padding at the end of each sequence
    mask = (np.arange(s)[None, :] < lengths[:, None]).astype(dtype)
    mask[0, -1] = 0                                 # at least one padded position
    target = rng.standard_normal((b, s, hidden)).astype(dtype)
    return [params, h, mask, target]


# -- JAX versions: the same losses over jax.numpy --------------------------------------------
def _jax_step(loss, lr):
    grad_fn = jax.value_and_grad(partial(loss, xp=jnp))

    def step(params, *data):
        value, grads = grad_fn(params, *data)
        return sgd(params, grads, lr), value
    return step


def _jax_versions():
    if jax is None:
        return {}
    return {"W4": _jax_step(w4_loss, W4_LR), "W5": _jax_step(w5_loss, W5_LR)}


@dataclass
class TrainingWorkload:
    loss: Callable                   # plain NumPy loss(params, *data) -> scalar
    step: Callable                   # xlanb.value_and_grad(loss) + SGD
    numpy_value_and_grad: Callable   # hand-written forward + backward
    numpy_step: Callable
    jax_step: Callable | None
    make_args: Callable[..., list]   # (size "full" | "quick" | "tiny", dtype, seed)
    rtol: float = 1e-4               # float32 step results, xlanb vs hand-written
    atol: float = 1e-5


_JAX = _jax_versions()
TRAINING_WORKLOADS = {
    "W4": TrainingWorkload(w4_loss, w4_step, w4_numpy_value_and_grad, w4_numpy_step,
                           _JAX.get("W4"), w4_args),
    "W5": TrainingWorkload(w5_loss, w5_step, w5_numpy_value_and_grad, w5_numpy_step,
                           _JAX.get("W5"), w5_args, rtol=1e-3, atol=1e-5),
}


# -- gradient checks -------------------------------------------------------------------------
def finite_difference_grads(loss: Callable, params: dict, *data, eps: float = 1e-6) -> dict:
    """Central differences (f(p + eps) - f(p - eps)) / 2 eps, one parameter entry at a time."""
    grads = {}
    for name, value in params.items():
        grad = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            saved = value[index]
            value[index] = saved + eps
            up = loss(params, *data)
            value[index] = saved - eps
            down = loss(params, *data)
            value[index] = saved
            grad[index] = (up - down) / (2 * eps)
        grads[name] = grad
    return grads


def _assert_grads_close(got: dict, want: dict, what: str, rtol: float, atol: float) -> None:
    assert got.keys() == want.keys(), f"{what}: parameters {sorted(got)} vs {sorted(want)}"
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=rtol, atol=atol,
                                   err_msg=f"{what}: gradient of {name!r}")


def check_gradients(names=("W4", "W5"), against_jax: bool | None = None) -> list[str]:
    """Hand-written loss and gradients vs the plain loss, finite differences and JAX.

    Tiny sizes, float64.  against_jax=None means "when JAX is installed".  Raises
    AssertionError on a mismatch; returns one line per check that passed."""
    if against_jax is None:
        against_jax = jax is not None
    done = []
    for name in names:
        spec = TRAINING_WORKLOADS[name]
        params, *data = spec.make_args("tiny", np.float64, seed=1)
        loss, grads = spec.numpy_value_and_grad(params, *data)
        np.testing.assert_allclose(loss, spec.loss(params, *data), rtol=1e-12,
                                   err_msg=f"{name}: hand-written forward vs plain loss")
        fd = finite_difference_grads(spec.loss, params, *data)
        _assert_grads_close(grads, fd, f"{name} hand-written vs finite differences",
                            rtol=1e-5, atol=1e-8)
        done.append(f"{name}: hand-written gradients = finite differences (float64, "
                    f"{sum(p.size for p in params.values())} entries)")
        if against_jax:
            with jax.enable_x64(True):
                jloss, jgrads = jax.jit(jax.value_and_grad(partial(spec.loss, xp=jnp)))(
                    {k: jnp.asarray(p) for k, p in params.items()},
                    *[jnp.asarray(a) for a in data])
                jgrads = {k: np.asarray(g) for k, g in jgrads.items()}
            np.testing.assert_allclose(loss, float(jloss), rtol=1e-12)
            _assert_grads_close(grads, jgrads, f"{name} hand-written vs JAX", rtol=1e-9,
                                atol=1e-12)
            done.append(f"{name}: hand-written gradients = JAX's (float64)")
    return done
