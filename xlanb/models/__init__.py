"""Reference models written with `xlanb.nn`: plain functions over a params pytree.

Each module has `init(key_or_seed, ...) -> params`, `apply(params, x, ...) -> logits`,
`loss(params, x, y, ...)`, `predict` and `accuracy`, and trains with `xlanb.optim`:

    from xlanb.models import mlp
    params = mlp.init(0, sizes=(64, 128, 10))
    loss, grads = xlanb.value_and_grad(mlp.loss)(params, x, y)
"""
from __future__ import annotations

import numpy as np


def as_key(key_or_seed):
    """An `xlanb.random` key from an int seed; a key (0-d uint64 array) is returned as is."""
    from .. import random
    if isinstance(key_or_seed, (int, np.integer)) and not isinstance(key_or_seed, bool):
        return random.key(int(key_or_seed))
    return key_or_seed


def accuracy_of(logits: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of rows whose argmax equals the label (eager: returns a Python float)."""
    return float(np.mean(np.argmax(logits, axis=-1) == labels))


from . import bert, mlp, softmax_regression  # noqa: E402

__all__ = ["as_key", "accuracy_of", "bert", "mlp", "softmax_regression"]
