"""Multi-layer perceptron: dense + ReLU hidden layers, a dense output layer of logits.

    params = mlp.init(0, sizes=(64, 128, 10))     # 64 inputs, one hidden layer, 10 classes
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import nn
from . import accuracy_of, as_key


def init(key_or_seed=0, sizes: Sequence[int] = (784, 128, 10), dtype=np.float32) -> dict:
    """{"layers": [dense params for each consecutive pair in `sizes`]} (Glorot kernels)."""
    if len(sizes) < 2:
        raise ValueError(f"sizes needs at least (inputs, outputs), got {tuple(sizes)}")
    from .. import random
    keys = random.split(as_key(key_or_seed), len(sizes) - 1)
    return {"layers": [nn.dense_init(keys[i], sizes[i], sizes[i + 1], dtype=dtype)
                       for i in range(len(sizes) - 1)]}


def apply(params: dict, x):
    """Logits (batch, sizes[-1]) for x (batch, sizes[0])."""
    *hidden, last = params["layers"]
    for layer in hidden:
        x = nn.relu(nn.dense(layer, x))
    return nn.dense(last, x)


def loss(params: dict, x, y):
    return nn.cross_entropy(apply(params, x), y)


def predict(params: dict, x):
    return np.argmax(apply(params, x), axis=-1)


def accuracy(params: dict, x, y) -> float:
    return accuracy_of(apply(params, x), y)
