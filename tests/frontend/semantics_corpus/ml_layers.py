"""ML layers in NumPy: dense + relu, softmax, layer and batch norm (running statistics
updated in place as arguments), optimizer steps updating weights in place, losses,
attention, convolutions and pooling as loops."""
import numpy as np

from xlanb.errors import ConcretizationError

from . import program


def _f32(r, *shape):
    return r.normal(size=shape).astype(np.float32)


@program(lambda r: (r.normal(size=(4, 5)), r.normal(size=(5, 3)), r.normal(size=3)))
def dense_relu(x, W, b):
    return np.maximum(x @ W + b, 0)


@program(lambda r: (_f32(r, 4, 5), _f32(r, 5, 3), _f32(r, 3)), n=8)
def dense_relu_inplace_mask(x, W, b):
    h = x @ W
    h += b
    h[h < 0] = 0
    return h


@program(lambda r: (r.normal(size=(3, 6)) * 3,))
def softmax_rows(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


@program(lambda r: (r.normal(size=(5, 4)), r.integers(0, 4, 5)))
def cross_entropy_labels(logits, y):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -log_p[np.arange(len(y)), y].mean()
    grad = np.exp(log_p)
    grad[np.arange(len(y)), y] -= 1
    return loss, grad / len(y)


@program(lambda r: (_f32(r, 3, 8), np.ones(8, np.float32), np.zeros(8, np.float32), 1e-5),
         n=8)
def layer_norm(x, gamma, beta, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(var + eps) + beta


@program(lambda r: (r.normal(size=(6, 4)) * 2 + 1, r.random(4) + 0.5, r.normal(size=4),
                    np.zeros(4), np.ones(4), 0.1))
def batch_norm_train_running_stats(x, gamma, beta, running_mean, running_var, momentum):
    mean = x.mean(axis=0)
    var = x.var(axis=0)
    running_mean *= 1 - momentum
    running_mean += momentum * mean
    running_var[:] = (1 - momentum) * running_var + momentum * var * len(x) / (len(x) - 1)
    return gamma * (x - mean) / np.sqrt(var + 1e-5) + beta


@program(lambda r: (r.normal(size=(5, 3)), r.normal(size=(5, 3)), 0.1))
def sgd_step(w, g, lr):
    w -= lr * g


@program(lambda r: (r.normal(size=6), np.zeros(6), r.normal(size=6), 0.05, 0.9))
def momentum_step(w, v, g, lr, mu):
    v *= mu
    v -= lr * g
    w += v


@program(lambda r: (r.normal(size=(3, 4)), np.zeros((3, 4)), np.zeros((3, 4)),
                    r.normal(size=(3, 4)), 3, 1e-3))
def adam_step(w, m, v, g, t, lr):
    b1, b2, eps = 0.9, 0.999, 1e-8
    m[:] = b1 * m + (1 - b1) * g
    v[:] = b2 * v + (1 - b2) * g ** 2
    m_hat = m / (1 - b1 ** t)
    v_hat = v / (1 - b2 ** t)
    w -= lr * m_hat / (np.sqrt(v_hat) + eps)


@program(lambda r: (_f32(r, 6), np.zeros(6, np.float32), _f32(r, 6), np.float32(0.01)),
         n=8)
def rmsprop_step_float32(w, cache, g, lr):
    cache[:] = 0.9 * cache + 0.1 * g * g
    w -= lr * g / (np.sqrt(cache) + 1e-6)


@program(lambda r: (r.normal(size=5), np.zeros(5), r.normal(size=(3, 5)), 0.1))
def adagrad_loop(w, G, grads, lr):
    for g in grads:
        G += g * g
        w -= lr * g / np.sqrt(G + 1e-8)


@program(lambda r: (r.normal(size=(4, 8)), r.normal(size=(5, 8)), r.normal(size=(5, 6))))
def attention(q, k, v):
    scores = q @ k.T / np.sqrt(q.shape[-1])
    scores -= scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(axis=-1, keepdims=True)
    return w @ v


@program(lambda r: (r.normal(size=(2, 5, 8)), r.normal(size=(8, 8)) / 3, 2))
def multihead_self_attention(x, Wqkv, heads):
    B, T, D = x.shape
    hd = D // heads
    q = (x @ Wqkv).reshape(B, T, heads, hd).transpose(0, 2, 1, 3)
    k = (x @ Wqkv.T).reshape(B, T, heads, hd).transpose(0, 2, 1, 3)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
    mask = np.triu(np.ones((T, T), dtype=bool), 1)
    s = np.where(mask, -1e9, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ q).transpose(0, 2, 1, 3).reshape(B, T, D)


@program(lambda r: (r.normal(size=12), r.normal(size=3)))
def conv1d_loop(x, w):
    k = len(w)
    out = np.empty(len(x) - k + 1)
    for i in range(len(out)):
        out[i] = np.dot(x[i:i + k], w)
    return out


@program(lambda r: (_f32(r, 2, 6, 6), _f32(r, 3, 2, 3, 3)), n=32)
def conv2d_channels_loop(x, w):
    C_out, C_in, kh, kw = w.shape
    H, W = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    out = np.zeros((C_out, H, W), dtype=np.float32)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, i:i + H, j:j + W]
            out += np.einsum("oc,chw->ohw", w[:, :, i, j], patch)
    return out


@program(lambda r: (r.normal(size=(2, 6, 4)),))
def maxpool_2x2_reshape(x):
    C, H, W = x.shape
    return x.reshape(C, H // 2, 2, W // 2, 2).max(axis=(2, 4))


@program(lambda r: (r.normal(size=(4, 5)), r.random((4, 5)) > 0.3, 0.3))
def dropout_with_given_mask(x, keep, p):
    return x * keep / (1 - p)


@program(lambda r: (_f32(r, 3, 7),), n=8)
def gelu_tanh_float32(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


@program(lambda r: (r.normal(size=8), r.normal(size=8), np.zeros(8)))
def mse_loss_and_grad_into(pred, y, grad):
    diff = pred - y
    grad[:] = 2 * diff / len(y)
    return np.mean(diff ** 2)


@program(lambda r: (r.normal(size=(3, 3)), 0.1, 0.01))
def weight_decay_inplace(w, lr, wd):
    w *= 1 - lr * wd
    return w


@program(lambda r: (r.normal(size=(6, 3)), r.integers(0, 6, 5)))
def embedding_lookup_and_grad(E, idx):
    out = E[idx]
    grad = np.zeros_like(E)
    np.add.at(grad, idx, np.ones_like(out))
    return out, grad


@program(lambda r: (r.normal(size=(10, 3)), (r.random(10) > 0.5).astype(float), 10, 0.5))
def logistic_regression_train(X, y, epochs, lr):
    w = np.zeros(X.shape[1])
    for _ in range(epochs):
        p = 1 / (1 + np.exp(-(X @ w)))
        w -= lr * X.T @ (p - y) / len(y)
    return w


@program(lambda r: (r.normal(size=7) * 3, 1.0))
def grad_clip_numpy_minimum(g, max_norm):
    norm = np.sqrt(np.sum(g ** 2))
    g *= np.minimum(1.0, max_norm / norm)
    return norm


@program(lambda r: (r.normal(size=7) * 3, 1.0), jit_error=ConcretizationError)
def grad_clip_python_if(g, max_norm):
    norm = np.linalg.norm(g)
    if norm > max_norm:
        g *= max_norm / norm
    return norm


@program(lambda r: (r.normal(size=(4, 3)), r.normal(size=(3, 2)), r.normal(size=(4, 2))))
def two_layer_backprop(X, W, Y):
    H = np.tanh(X @ W)
    err = H - Y
    dW = X.T @ (err * (1 - H ** 2))
    W -= 0.1 * dW
    return 0.5 * np.sum(err ** 2)


@program(lambda r: (r.normal(size=(5, 4)),))
def log_softmax_logsumexp(z):
    m = np.max(z, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    return z - lse, lse.ravel()


@program(lambda r: (r.normal(size=(3, 4)), 0.9, np.zeros((3, 4)), r.normal(size=(3, 4))))
def ema_of_weights(shadow, decay, ema, w):
    ema[...] = decay * ema + (1 - decay) * w
    shadow -= (1 - decay) * (shadow - w)
