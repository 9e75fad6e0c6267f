"""xlanb.grad / value_and_grad on plain NumPy code: finite differences, jit vs interpreter,
pytrees, argnums, has_aux and the errors JAX users expect."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from tolerance import assert_close

RNG = np.random.default_rng(3)


def softmax_cross_entropy(params, x, labels):
    logits = x @ params["w"] + params["b"]
    logits = logits - logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -logp[np.arange(x.shape[0]), labels].mean()


def layer_norm_gelu_loss(params, x):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + 1e-5) * params["g"] + params["b"]
    y = 0.5 * y * (1 + np.tanh(0.79788456 * (y + 0.044715 * y ** 3)))
    return (y * y).sum()


def attention_loss(params, x):
    q, k, v = x @ params["q"], x @ params["k"], x @ params["v"]
    scores = np.einsum("bqd,bkd->bqk", q, k) / np.sqrt(q.shape[-1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return np.tanh(weights @ v).sum()


CASES = [
    ("softmax_ce", softmax_cross_entropy,
     lambda: ({"w": RNG.standard_normal((5, 3)), "b": RNG.standard_normal(3)},
              RNG.standard_normal((4, 5)), np.array([0, 2, 1, 2]))),
    ("layer_norm_gelu", layer_norm_gelu_loss,
     lambda: ({"g": 1 + 0.1 * RNG.standard_normal(6), "b": 0.1 * RNG.standard_normal(6)},
              RNG.standard_normal((3, 6)))),
    ("attention", attention_loss,
     lambda: ({n: 0.5 * RNG.standard_normal((4, 4)) for n in "qkv"},
              RNG.standard_normal((2, 3, 4)))),
]


# Central differences with h = 1e-6 in float64: rounding eps * |f| / h ~ 1e-10 |f| and
# truncation h^2 * |third derivative|, relative to the gradient's norm
FD_TOL = 1e-7


def numeric_grad(fn, params, rest, eps=1e-6):
    grads = {}
    for name, value in params.items():
        grad = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            plus = {k: v.copy() for k, v in params.items()}
            minus = {k: v.copy() for k, v in params.items()}
            plus[name][index] += eps
            minus[name][index] -= eps
            grad[index] = (fn(plus, *rest) - fn(minus, *rest)) / (2 * eps)
        grads[name] = grad
    return grads


@pytest.mark.parametrize("name,fn,make", CASES, ids=[c[0] for c in CASES])
def test_gradients_match_finite_differences_and_jit_matches_interpreter(name, fn, make):
    params, *rest = make()
    loss, grads = xlanb.value_and_grad(fn)(params, *rest)          # eager: interpreter
    n = 6 * 4 * 3                       # the cases' longest chain: 6 features, 4 rows, 3 keys
    assert_close(loss, fn(params, *rest), n=n)
    numeric = numeric_grad(fn, params, rest)
    for key in params:
        assert_close(grads[key], numeric[key], tol=FD_TOL, err_msg=key)
    jitted_loss, jitted_grads = xlanb.jit(xlanb.value_and_grad(fn))(params, *rest)
    assert_close(jitted_loss, loss, n=n)
    for key in params:
        assert_close(jitted_grads[key], grads[key], n=n, err_msg=key)


def test_argnums_tuple_and_has_aux():
    def f(x, y, scale):
        z = (x * y).sum() * scale
        return z, {"z": z, "double": 2 * x}
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    (value, aux), (gx, gy) = xlanb.jit(xlanb.value_and_grad(f, argnums=(0, 1),
                                                             has_aux=True))(x, y, 2.0)
    assert_close(gx, 2 * y)
    assert_close(gy, 2 * x)
    assert_close(aux["double"], 2 * x)
    assert_close(value, aux["z"])


def test_grad_returns_only_gradients_and_float32_stays_float32():
    x = RNG.standard_normal(4).astype(np.float32)
    g = xlanb.jit(xlanb.grad(lambda x: (x ** 3).sum()))(x)
    assert g.dtype == np.float32
    assert_close(g, 3 * x ** 2)


def test_same_array_twice_differentiates_only_the_chosen_argument():
    x = RNG.standard_normal(3)
    g = xlanb.grad(lambda a, b: (a * b).sum())(x, x)
    assert_close(g, x)


def test_prod_gradient_at_zeros_is_the_product_of_the_others():
    """d prod(x) / dx_i was prod(x) / x_i: nan at a zero (np.prod([2, 0, 5, 3]) gave
    [0, nan, 0, 0], true [0, 30, 0, 0]); over several axes too."""
    x = np.array([[2.0, 0.0, 5.0], [3.0, 0.0, 1.0], [4.0, 2.0, 0.5]])
    def others(i, axes):             # the product of the others, by brute force
        mask = np.zeros(x.shape, bool)
        mask[i] = True
        reduced = np.prod(np.where(mask, 1.0, x), axis=axes, keepdims=True)
        return np.broadcast_to(reduced, x.shape)[i]
    for axes in (None, 0, 1, (0, 1)):
        g = xlanb.grad(lambda v: (np.prod(v, axis=axes) * 1.5).sum())(x)
        want = np.array([1.5 * others(i, axes) for i in np.ndindex(x.shape)]).reshape(x.shape)
        assert_close(g, want)


def test_power_zero_gradient_is_zero_at_zero():
    """d x**0 / dx was 0 * 0**-1 = nan at x = 0."""
    x = np.array([0.0, 1.0, -2.0])
    assert_close(xlanb.grad(lambda v, p: (v ** p).sum())(x, 0.0), np.zeros(3))
    assert_close(xlanb.grad(lambda v: (v ** 0.0 + v ** 2.0).sum())(x), 2 * x)


def test_integer_input_is_a_clear_error():
    with pytest.raises(TypeError, match="floating-point"):
        xlanb.grad(lambda n: (n * 2).sum())(np.arange(3))


def test_non_scalar_loss_is_a_clear_error():
    with pytest.raises(TypeError, match="float scalar"):
        xlanb.jit(xlanb.grad(lambda x: x * 2))(np.ones(3))


def test_training_step_forward_and_backward_fuse_into_one_program():
    params = {"w": RNG.standard_normal((8, 4)).astype(np.float32) * 0.1,
              "b": np.zeros(4, np.float32)}
    x = RNG.standard_normal((16, 8)).astype(np.float32)
    labels = RNG.integers(0, 4, 16)

    @xlanb.jit
    def step(params, x, labels):
        loss, grads = xlanb.value_and_grad(softmax_cross_entropy)(params, x, labels)
        return {k: params[k] - 0.5 * grads[k] for k in params}, loss

    new, loss = step(params, x, labels)
    with xlanb.disable_jit():
        ref_new, ref_loss = step(params, x, labels)
    assert_close(loss, ref_loss, n=8 * 4)
    for key in params:
        assert_close(new[key], ref_new[key], n=8 * 16, err_msg=key)
    kernels = step.lower(params, x, labels).compile().kernels
    assert sum(k.kind == "dot" for k in kernels) == 2     # forward x@w and backward x.T@g


def test_stacked_layer_norm_gradient_regression():
    """Once gave garbage gradients (an extra output that formed a kernel cycle)."""
    def layer_norm(x, g, b):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * g + b

    def loss(x, g, b, t):
        return (layer_norm(layer_norm(x, g, b) + x, g, b) * t).sum()

    x, t = RNG.standard_normal((4, 6)), RNG.standard_normal((4, 6))
    g, b = 1 + 0.1 * RNG.standard_normal(6), 0.1 * RNG.standard_normal(6)
    compiled = xlanb.jit(xlanb.grad(loss))(x, g, b, t)
    for _ in range(2):
        assert_close(xlanb.jit(xlanb.grad(loss))(x, g, b, t), compiled)
    assert_close(compiled, xlanb.grad(loss)(x, g, b, t), n=6 * 4)
