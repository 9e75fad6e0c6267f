"""Softmax regression: one dense layer trained with cross-entropy (the MNIST tutorial model).

    params = softmax_regression.init(0, num_features=64, num_classes=10)
    step: loss, grads = value_and_grad(softmax_regression.loss)(params, x, y); SGD(0.5)
"""
from __future__ import annotations

import numpy as np

from .. import nn
from . import accuracy_of


def init(key_or_seed=0, num_features: int = 784, num_classes: int = 10,
         dtype=np.float32) -> dict:
    """{"w": (features, classes), "b": (classes,)}, both zero (the loss is convex, so zero is
    a fine start and needs no key; the argument is kept so all models init alike)."""
    return {"w": np.zeros((num_features, num_classes), dtype),
            "b": np.zeros((num_classes,), dtype)}


def apply(params: dict, x):
    """Logits (batch, classes) for inputs x (batch, features)."""
    return nn.dense(params, x)


def loss(params: dict, x, y):
    """Mean cross-entropy of the logits against integer labels y."""
    return nn.cross_entropy(apply(params, x), y)


def predict(params: dict, x):
    return np.argmax(apply(params, x), axis=-1)


def accuracy(params: dict, x, y) -> float:
    return accuracy_of(apply(params, x), y)
