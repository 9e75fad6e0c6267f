"""xlanb.optim: SGD (with and without momentum) and Adam against hand-computed updates,
over nested pytrees, and the jitted update against the eager one."""
from __future__ import annotations

import math

import numpy as np
import pytest

import xlanb
import tolerance
from xlanb import optim

PARAMS = {"w": np.array([[1.0, -2.0], [0.5, 3.0]], np.float32),
          "layers": [np.array([0.25, -1.0], np.float32)]}
GRADS = {"w": np.array([[0.5, 0.5], [-1.0, 2.0]], np.float32),
         "layers": [np.array([4.0, -0.1], np.float32)]}


def leaves(tree):
    return [tree["w"], tree["layers"][0]]


def assert_tree_close(got, want, **options):
    for g, w in zip(leaves(got), leaves(want)):
        assert g.dtype == np.float32
        tolerance.assert_close(g, w, dtype=np.float32, **options)


def test_sgd_takes_a_plain_gradient_step():
    opt = optim.sgd(0.1)
    state = opt.init(PARAMS)
    assert state == optim.SGDState(None)
    new, state = opt.update(PARAMS, GRADS, state)
    assert_tree_close(new, {"w": [[0.95, -2.05], [0.6, 2.8]], "layers": [[-0.15, -0.99]]})
    assert PARAMS["w"][0, 0] == 1.0                                     # inputs untouched


def test_sgd_momentum_accumulates_velocity():
    opt = optim.sgd(0.1, momentum=0.9)
    p, state = opt.update(PARAMS, GRADS, opt.init(PARAMS))          # v1 = g
    p, state = opt.update(p, GRADS, state)                          # v2 = 0.9 g + g = 1.9 g
    g = GRADS["w"].astype(np.float64)
    tolerance.assert_close(state.velocity["w"], 1.9 * g)
    tolerance.assert_close(p["w"], PARAMS["w"] - 0.1 * (g + 1.9 * g))


def test_adam_matches_hand_computation():
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    opt = optim.adam(lr, b1, b2, eps)
    state = opt.init(PARAMS)
    assert int(state.count) == 0 and not state.mu["w"].any() and not state.nu["w"].any()
    p = PARAMS
    g1 = GRADS
    g2 = {"w": -2 * GRADS["w"], "layers": [GRADS["layers"][0] + 1]}
    p, state = opt.update(p, g1, state)
    p, state = opt.update(p, g2, state)
    assert int(state.count) == 2
    for x0, a, b, got in zip(leaves(PARAMS), leaves(g1), leaves(g2), leaves(p)):
        x, m, v = x0.astype(np.float64), 0.0, 0.0
        for t, g in ((1, a.astype(np.float64)), (2, b.astype(np.float64))):
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            x = x - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
        # Adam divides by sqrt(v) + eps: each step within a few float32 roundings
        tolerance.assert_close(got, x, k=32)
        assert got.dtype == np.float32


def test_adam_first_step_moves_each_weight_by_the_learning_rate():
    opt = optim.adam(0.05)
    new, _ = opt.update(PARAMS, GRADS, opt.init(PARAMS))
    for x0, g, x1 in zip(leaves(PARAMS), leaves(GRADS), leaves(new)):
        # x0 - x1 cancels: its rounding is relative to |x0|, not to the step
        tolerance.assert_close(x0 - x1, 0.05 * np.sign(g), k=16, scale=np.linalg.norm(x0))


@pytest.mark.parametrize("opt", [optim.sgd(0.1), optim.sgd(0.1, 0.5), optim.adam(0.01)],
                         ids=["sgd", "momentum", "adam"])
def test_jitted_update_matches_eager(opt):
    update = xlanb.jit(opt.update)
    eager = compiled = (PARAMS, opt.init(PARAMS))
    for _ in range(3):
        eager = opt.update(eager[0], GRADS, eager[1])
        compiled = update(compiled[0], GRADS, compiled[1])
    assert_tree_close(compiled[0], eager[0], k=32)           # 3 steps of a few roundings
    assert type(compiled[1]) is type(eager[1])
    if isinstance(eager[1], optim.AdamState):
        assert int(compiled[1].count) == 3
    assert update.cache_info().misses == 1          # the state's structure and shapes persist


def test_float64_params_stay_float64():
    p = {"w": np.ones(3)}
    new, state = optim.adam(0.1).update(p, {"w": np.ones(3)}, optim.adam(0.1).init(p))
    assert new["w"].dtype == np.float64
    tolerance.assert_close(new["w"], 1 - 0.1 / (1 + 1e-8))           # 1 - lr g / (|g| + eps)


def test_bad_hyperparameters_raise():
    with pytest.raises(ValueError, match="momentum"):
        optim.sgd(0.1, momentum=-1)
    with pytest.raises(ValueError, match="b1"):
        optim.adam(b1=1.0)


def test_adam_bias_correction_late_in_training():
    # after many steps with a constant gradient, m_hat -> g and v_hat -> g^2: step = lr
    opt = optim.adam(0.1)
    p = {"w": np.zeros(1, np.float32)}
    state = opt.init(p)._replace(count=np.asarray(9999, np.int32))
    state = state._replace(mu={"w": np.full(1, 2.0, np.float32)},
                           nu={"w": np.full(1, 4.0, np.float32)})
    new, _ = opt.update(p, {"w": np.full(1, 2.0, np.float32)}, state)
    correction = math.sqrt(1 - 0.999 ** 10000) / (1 - 0.9 ** 10000)
    tolerance.assert_close(-new["w"], 0.1 * correction, dtype=np.float32)
