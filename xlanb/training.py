"""A minimal training loop: build a compiled step from a loss and an optimizer, then run it.

    step = training.make_train_step(mlp.loss, optim.sgd(0.5))     # xlanb.jit'ed
    params, opt_state, losses = training.train(step, params, opt.init(params), data, 1000)

The step is one program (forward, `value_and_grad`, optimizer update), compiled on its
first call and reused: batches must keep one shape (`datasets.batches` drops remainders).
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Iterable

import numpy as np

from .optim import Optimizer


def make_train_step(loss_fn: Callable[..., Any], optimizer: Optimizer, jit: bool = True,
                    **jit_options) -> Callable:
    """`step(params, opt_state, *batch) -> (params, opt_state, loss)`.

    `loss_fn(params, *batch)` returns a scalar; its gradient is taken with respect to
    params.  jit=False gives the same step run eagerly with NumPy (the baseline).
    """
    from . import jit as xlanb_jit, value_and_grad   # late: xlanb may import this module

    def step(params, opt_state, *batch):
        loss, grads = value_and_grad(loss_fn)(params, *batch)
        params, opt_state = optimizer.update(params, grads, opt_state)
        return params, opt_state, loss

    step.__name__ = f"train_step_{getattr(loss_fn, '__name__', 'loss')}"
    return xlanb_jit(step, **jit_options) if jit else step


def train(step_fn: Callable, params: Any, opt_state: Any, batches: Iterable[tuple],
          steps: int) -> tuple[Any, Any, np.ndarray]:
    """Run `steps` steps of `step_fn` over `batches` (tuples of arrays); returns the final
    params and optimizer state and the per-step losses as a float64 array."""
    losses = np.empty(steps)
    count = 0
    for batch in itertools.islice(batches, steps):
        params, opt_state, loss = step_fn(params, opt_state, *batch)
        losses[count] = loss
        count += 1
    if count < steps:
        raise ValueError(f"`batches` ran out after {count} of {steps} steps; pass an "
                         "endless iterator (datasets.batches(..., epochs=None))")
    return params, opt_state, losses
