"""xlanb.nn: each function against a direct NumPy (float64) reference, its shapes and
dtypes, the stability of log_softmax / cross_entropy on huge logits, and jit == eager."""
from __future__ import annotations

import math

import numpy as np
import pytest

import xlanb
from tolerance import assert_close, magnitude
from xlanb import nn, random

RNG = np.random.default_rng(0)


def f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def ref_erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(x, np.float64))


def ref_log_softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    top = x.max(axis=axis, keepdims=True)
    return x - top - np.log(np.exp(x - top).sum(axis=axis, keepdims=True))


# -- activations and losses ---------------------------------------------------------------

def test_relu_and_dense_match_numpy():
    x, w, b = f32(4, 3), f32(3, 5), f32(5)
    np.testing.assert_array_equal(nn.relu(x), np.where(x > 0, x, 0))
    out = nn.dense({"w": w, "b": b}, x)
    assert_close(out, x.astype(np.float64) @ w + b, n=3,
                 scale=magnitude(lambda x, w, b: x @ w + b, x, w, b))
    assert out.dtype == np.float32 and out.shape == (4, 5)


def test_erf_is_accurate_to_float32():
    x = np.linspace(-6, 6, 2001)
    np.testing.assert_allclose(nn.erf(x), ref_erf(x), rtol=0, atol=2e-7)
    assert nn.erf(np.float32(0.5)).dtype == np.float32
    assert nn.erf(0.0) == 0.0


@pytest.mark.parametrize("approximate", [True, False])
def test_gelu_matches_its_formula(approximate):
    x = np.linspace(-8, 8, 401).astype(np.float32)
    x64 = x.astype(np.float64)
    if approximate:
        ref = 0.5 * x64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64 ** 3)))
    else:
        ref = 0.5 * x64 * (1 + ref_erf(x64 / np.sqrt(2)))
    out = nn.gelu(x, approximate=approximate)
    assert out.dtype == np.float32
    assert_close(out, ref)


def test_gelu_forms_differ_by_little():
    x = np.linspace(-5, 5, 101)
    assert np.abs(nn.gelu(x) - nn.gelu(x, approximate=False)).max() < 1e-3


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_and_log_softmax_match_reference(axis):
    x = f32(5, 7, scale=3)
    n = x.shape[axis]
    assert_close(nn.log_softmax(x, axis), ref_log_softmax(x, axis), n=n)
    assert_close(nn.softmax(x, axis), np.exp(ref_log_softmax(x, axis)), n=n)
    assert_close(nn.softmax(x, axis).sum(axis), 1.0, n=n)
    assert nn.softmax(x, axis).dtype == nn.log_softmax(x, axis).dtype == np.float32


def test_log_softmax_and_cross_entropy_are_stable_for_huge_logits():
    logits = np.array([[1e4, 0.0, -1e4], [-3e4, 3e4, 0.0], [50.0, 50.0, 50.0]], np.float32)
    labels = np.array([0, 2, 1])
    logp = nn.log_softmax(logits)
    assert np.all(np.isfinite(logp))
    for row in range(3):                       # each row on its own scale (1e4, 3e4, 50)
        assert_close(logp[row], ref_log_softmax(logits)[row], n=3)
    assert np.all(np.isfinite(nn.softmax(logits)))
    loss = nn.cross_entropy(logits, labels)
    expected = -np.mean(ref_log_softmax(logits)[np.arange(3), labels])   # (0 + 3e4 + ln 3)/3
    assert np.isfinite(loss)
    assert_close(loss, expected, n=3)


def test_cross_entropy_is_the_mean_negative_log_likelihood():
    logits, labels = f32(6, 4), RNG.integers(0, 4, 6)
    expected = np.mean([-ref_log_softmax(logits[i])[labels[i]] for i in range(6)])
    assert_close(nn.cross_entropy(logits, labels), expected, n=6 * 4)
    # leading dimensions are flattened: (2, 3, C) with (2, 3) labels is the same loss
    assert_close(nn.cross_entropy(logits.reshape(2, 3, 4), labels.reshape(2, 3)), expected,
                 n=6 * 4)


# -- normalization, embeddings, dropout ---------------------------------------------------

def test_layer_norm_matches_reference_and_uses_scale_and_bias():
    x = f32(3, 4, 8, scale=5) + 10
    params = {"scale": f32(8), "bias": f32(8)}
    x64 = x.astype(np.float64)
    normalized = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    out = nn.layer_norm(params, x)
    assert out.dtype == np.float32 and out.shape == x.shape
    # centring x = 10 +- 5 loses |x| / std ~ 3 of float32's precision: k = 8 * 3
    assert_close(out, normalized * params["scale"] + params["bias"], n=8, k=24)
    plain = nn.layer_norm(nn.layer_norm_init(8), x)
    assert_close(plain.mean(-1), 0, n=8, k=24, scale=magnitude(lambda p: p.mean(-1), plain))
    assert_close(plain.std(-1), 1, n=8, k=24)


def test_embedding_gathers_rows():
    table, ids = f32(10, 4), RNG.integers(0, 10, (2, 3))
    out = nn.embedding(table, ids)
    assert out.shape == (2, 3, 4)
    np.testing.assert_array_equal(out, table[ids])


def test_dropout_is_identity_in_eval_and_inverted_in_training():
    x = np.ones((200, 100), np.float32)
    key = random.key(0)
    assert nn.dropout(key, x, 0.3, train=False) is x
    assert nn.dropout(None, x, 0.0, train=True) is x
    out = nn.dropout(key, x, 0.3, train=True)
    assert out.dtype == np.float32 and out.shape == x.shape
    kept = out != 0
    assert_close(out[kept], 1 / 0.7, dtype=np.float32)                  # survivors scaled
    assert abs(kept.mean() - 0.7) < 0.01                                 # 20000 draws
    np.testing.assert_array_equal(out, nn.dropout(key, x, 0.3, train=True))   # same key
    assert not np.array_equal(out, nn.dropout(random.key(1), x, 0.3, train=True))


def test_dropout_rejects_bad_arguments():
    with pytest.raises(ValueError, match="rate"):
        nn.dropout(random.key(0), np.ones(3), 1.0, train=True)
    with pytest.raises(ValueError, match="random key"):
        nn.dropout(None, np.ones(3), 0.5, train=True)


# -- attention ----------------------------------------------------------------------------

def ref_attention(params, x, mask, num_heads):
    """Per batch row and head, with explicit loops, in float64."""
    x = x.astype(np.float64)
    batch, seq, features = x.shape
    d = features // num_heads

    def proj(name, v):
        return v @ params[name]["w"] + params[name]["b"]

    out = np.zeros_like(x)
    for b in range(batch):
        q, k, v = proj("query", x[b]), proj("key", x[b]), proj("value", x[b])
        heads = []
        for h in range(num_heads):
            cols = slice(h * d, (h + 1) * d)
            scores = q[:, cols] @ k[:, cols].T / np.sqrt(d)
            scores = np.where(mask[b][None, :] > 0, scores, -np.inf)
            heads.append(np.exp(ref_log_softmax(scores)) @ v[:, cols])
        out[b] = proj("output", np.concatenate(heads, axis=1))
    return out


def test_multi_head_attention_matches_loop_reference_and_ignores_padding():
    params = nn.multi_head_attention_init(random.key(0), 8)
    x = f32(2, 5, 8)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int32)
    out = nn.multi_head_attention(params, x, mask, num_heads=2)
    assert out.shape == x.shape and out.dtype == np.float32
    n = 8 * 5 * 8                       # projection, attention over 5, output projection
    assert_close(out, ref_attention(params, x, mask, 2), n=n)
    changed = x.copy()
    changed[0, 3:] = 100.0                                  # edit only padded positions
    again = nn.multi_head_attention(params, changed, mask, num_heads=2)
    assert_close(again[0, :3], out[0, :3], n=n)
    no_mask = nn.multi_head_attention(params, x, None, num_heads=2)
    assert_close(no_mask[1], out[1], n=n)


def test_multi_head_attention_checks_head_count():
    params = nn.multi_head_attention_init(random.key(0), 8)
    with pytest.raises(ValueError, match="divisible"):
        nn.multi_head_attention(params, f32(1, 2, 8), None, num_heads=3)


# -- initializers -------------------------------------------------------------------------

def test_initializers_shapes_dtypes_and_ranges():
    key = random.key(3)
    w = nn.glorot_uniform(key, (300, 200))
    limit = math.sqrt(6 / 500)
    assert w.shape == (300, 200) and w.dtype == np.float32
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.95 * limit
    assert abs(w.std() - limit / math.sqrt(3)) < 0.01 * limit
    n = nn.normal_init(key, (400, 100), stddev=0.02, dtype=np.float64)
    assert n.dtype == np.float64 and abs(n.std() - 0.02) < 0.001 and abs(n.mean()) < 0.001
    assert np.array_equal(nn.zeros(None, (2, 3)), np.zeros((2, 3), np.float32))
    assert nn.ones(None, (2,), np.float64).dtype == np.float64
    np.testing.assert_array_equal(w, nn.glorot_uniform(key, (300, 200)))   # deterministic
    with pytest.raises(ValueError, match="2 dimensions"):
        nn.glorot_uniform(key, (5,))
    layer = nn.dense_init(key, 3, 4)
    assert layer["w"].shape == (3, 4) and not layer["b"].any()


# -- jit == eager -------------------------------------------------------------------------

X = f32(4, 6, 8, scale=2)
MASK = np.array([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4, [1] * 6], np.int32)
MHA = nn.multi_head_attention_init(random.key(1), 8)
LN = {"scale": f32(8), "bias": f32(8)}
LOGITS, LABELS = f32(12, 5, scale=50), RNG.integers(0, 5, 12)

# name: (fn, args, n: the longest chain of reductions, see tests/tolerance.py)
JIT_CASES = {
    "activations": (lambda x: (nn.relu(x), nn.gelu(x), nn.gelu(x, approximate=False),
                               nn.erf(x)), (X,), 1),
    "softmaxes": (lambda x: (nn.softmax(x), nn.log_softmax(x, axis=1)), (X,), 8),
    "cross_entropy": (nn.cross_entropy, (LOGITS, LABELS), 12 * 5),
    "layer_norm": (nn.layer_norm, (LN, X), 8),
    "embedding": (nn.embedding, (f32(10, 3), RNG.integers(0, 10, (2, 4))), 1),
    "attention": (lambda p, x, m: nn.multi_head_attention(p, x, m, 2), (MHA, X, MASK),
                  8 * 6 * 8),
    "attention_dropout": (lambda p, x, m, k: nn.multi_head_attention(
        p, x, m, 4, key=k, dropout_rate=0.5, train=True), (MHA, X, MASK, random.key(7)),
        8 * 6 * 8),
}


@pytest.mark.parametrize("name", list(JIT_CASES))
def test_jit_matches_eager(name):
    fn, args, n = JIT_CASES[name]
    eager, compiled = fn(*args), xlanb.jit(fn)(*args)
    if not isinstance(eager, tuple):
        eager, compiled = (eager,), (compiled,)
    for got, want in zip(compiled, eager, strict=True):
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert_close(got, want, n=n)


# -- gradients ----------------------------------------------------------------------------

def test_gradient_through_the_layers_matches_finite_differences():
    """value_and_grad of a small float64 model built from every differentiable layer, checked
    along a random direction with central differences (the tracer's VJPs compose right)."""
    rng = np.random.default_rng(1)
    params = {"table": rng.standard_normal((7, 8)),
              "mha": nn.multi_head_attention_init(random.key(2), 8, dtype=np.float64),
              "ln": {"scale": rng.standard_normal(8), "bias": rng.standard_normal(8)},
              "out": nn.dense_init(random.key(3), 8, 3, dtype=np.float64)}
    ids = rng.integers(0, 7, (2, 4))
    mask = np.array([[1, 1, 1, 0], [1, 1, 1, 1]])
    labels = np.array([0, 2])

    def loss(p):
        x = nn.embedding(p["table"], ids)
        x = nn.layer_norm(p["ln"], x + nn.multi_head_attention(p["mha"], x, mask, 2))
        x = nn.gelu(x) + nn.gelu(x, approximate=False) + nn.relu(x)
        return nn.cross_entropy(nn.dense(p["out"], x[:, 0, :]), labels) + \
            np.mean(nn.log_softmax(x) * nn.softmax(x))

    value, grads = xlanb.value_and_grad(loss)(params)
    assert_close(value, loss(params), n=8 * 4 * 8)
    leaves, treedef = xlanb.pytree.tree_flatten(params)
    direction = [rng.standard_normal(np.shape(leaf)) for leaf in leaves]
    eps = 1e-6

    def shifted(sign):
        return loss(treedef.unflatten([leaf + sign * eps * d
                                       for leaf, d in zip(leaves, direction)]))

    numeric = (shifted(1) - shifted(-1)) / (2 * eps)
    analytic = sum(np.sum(g * d) for g, d in zip(xlanb.pytree.tree_leaves(grads), direction))
    # central differences, h = 1e-6 in float64: rounding 1e-16 |f| / h, truncation h^2
    assert_close(analytic, numeric, tol=1e-7)
