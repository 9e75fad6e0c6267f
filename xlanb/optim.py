"""Functional optimizers over pytrees, in the style of optax.

An optimizer is a pair of pure functions, so the whole training step (forward, gradient,
update) can be one `xlanb.jit` program:

    opt = optim.adam(1e-3)
    state = opt.init(params)

    @xlanb.jit
    def step(params, state, x, y):
        loss, grads = xlanb.value_and_grad(loss_fn)(params, x, y)
        params, state = opt.update(params, grads, state)
        return params, state, loss

Unlike optax, `update` returns the new parameters rather than updates to add.  Hyper-
parameters are Python floats (constants in the compiled step); everything that changes
per step, including Adam's step counter, lives in the state as arrays, so one compiled
step serves every iteration.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numpy as np

from .pytree import tree_map

Params = Any      # a pytree of arrays


class Optimizer(NamedTuple):
    """`init(params) -> state` and `update(params, grads, state) -> (params, state)`."""
    init: Callable[[Params], Any]
    update: Callable[[Params, Params, Any], tuple[Params, Any]]


class SGDState(NamedTuple):
    velocity: Params | None       # None without momentum


class AdamState(NamedTuple):
    count: np.int32               # steps taken so far (a scalar, as `count + 1` gives)
    mu: Params                    # first moment (EMA of grads)
    nu: Params                    # second moment (EMA of grads squared)


def _zeros_like(params: Params) -> Params:
    return tree_map(np.zeros_like, params)


def sgd(learning_rate: float, momentum: float = 0.0) -> Optimizer:
    """Stochastic gradient descent, with optional heavy-ball momentum.

    momentum = 0:  p <- p - lr * g
    momentum > 0:  v <- momentum * v + g;  p <- p - lr * v     (optax.sgd, torch.optim.SGD)
    """
    if momentum < 0:
        raise ValueError(f"momentum must be >= 0, got {momentum}")

    def init(params: Params) -> SGDState:
        return SGDState(_zeros_like(params) if momentum else None)

    def update(params: Params, grads: Params, state: SGDState):
        if not momentum:
            return tree_map(lambda p, g: p - learning_rate * g, params, grads), state
        velocity = tree_map(lambda v, g: momentum * v + g, state.velocity, grads)
        params = tree_map(lambda p, v: p - learning_rate * v, params, velocity)
        return params, SGDState(velocity)

    return Optimizer(init, update)


def adam(learning_rate: float = 1e-3, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> Optimizer:
    """Adam (Kingma & Ba 2015), the optax form:

        m <- b1 m + (1 - b1) g;   v <- b2 v + (1 - b2) g^2;   t <- t + 1
        p <- p - lr * m_hat / (sqrt(v_hat) + eps),   m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t)

    `t` is an int32 scalar in the state, so the bias corrections are computed inside the
    compiled step and one compiled step serves every iteration.  b1 and b2 are in (0, 1).
    """
    if not (0.0 < b1 < 1.0 and 0.0 < b2 < 1.0):
        raise ValueError(f"adam needs 0 < b1, b2 < 1, got b1={b1}, b2={b2}")

    def init(params: Params) -> AdamState:
        # an np.int32, not a 0-d array: NumPy's `count + 1` is a scalar, so a 0-d array
        # would change the state's type (and the compiled step's signature) after step 1
        return AdamState(np.int32(0), _zeros_like(params), _zeros_like(params))

    def update(params: Params, grads: Params, state: AdamState):
        count = state.count + 1
        mu = tree_map(lambda m, g: b1 * m + (1.0 - b1) * g, state.mu, grads)
        nu = tree_map(lambda v, g: b2 * v + (1.0 - b2) * (g * g), state.nu, grads)

        def step(p, m, v):
            # t in the parameter's dtype: an int32 or float64 t would promote a float32 p.
            # b ** t is written exp(t log b): LLVM turns pow(b, float(int)) into powi, whose
            # helper (__powisf2) Numba does not link.
            t = count.astype(p.dtype)
            m_hat = m / (1.0 - np.exp(t * math.log(b1)))
            v_hat = v / (1.0 - np.exp(t * math.log(b2)))
            return p - learning_rate * m_hat / (np.sqrt(v_hat) + eps)

        return tree_map(step, params, mu, nu), AdamState(count, mu, nu)

    return Optimizer(init, update)
