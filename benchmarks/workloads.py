"""The benchmark workloads, written once in plain NumPy (and once for jax.numpy).

W1  np.sum(x + y*z) on 10^7 float32                       the seed's model_fn
W2  relu(x @ w + b), 512x1024 @ 1024x1024 float32          a dense layer, epilogue fused
W3  tanh(x)*0.5 + exp(-x*x) - sqrt(abs(x)+1), 10^7 float32 transcendental-heavy chain
W6  layer norm + gelu (tanh form) on 4096x1024 float32     reductions + epilogues
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

try:
    import jax.numpy as jnp
except ImportError:
    jnp = None


def w1(x, y, z):
    return np.sum(x + y * z)


def w2(x, w, b):
    return np.maximum(x @ w + b, 0)


def w3(x):
    return np.tanh(x) * 0.5 + np.exp(-x * x) - np.sqrt(np.abs(x) + 1)


def w6(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + 1e-5) * gamma + beta
    return 0.5 * y * (1 + np.tanh(0.7978845608 * (y + 0.044715 * y ** 3)))


def _jax_versions():
    if jnp is None:
        return {}

    def j1(x, y, z):
        return jnp.sum(x + y * z)

    def j2(x, w, b):
        return jnp.maximum(x @ w + b, 0)

    def j3(x):
        return jnp.tanh(x) * 0.5 + jnp.exp(-x * x) - jnp.sqrt(jnp.abs(x) + 1)

    def j6(x, gamma, beta):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        y = (x - mean) / jnp.sqrt(var + 1e-5) * gamma + beta
        return 0.5 * y * (1 + jnp.tanh(0.7978845608 * (y + 0.044715 * y ** 3)))
    return {"W1": j1, "W2": j2, "W3": j3, "W6": j6}


@dataclass
class Workload:
    fn: Callable
    jax_fn: Callable | None
    make_args: Callable[[bool], list]
    bytes_moved: Callable[[list], int]     # compulsory traffic: inputs read + output written
    rtol: float = 1e-5
    atol: float = 1e-5


def _rng():
    return np.random.default_rng(0)


def _vectors(count: int, quick: bool):
    n = 10**5 if quick else 10**7
    return [_rng().standard_normal(n).astype(np.float32) + i for i in range(count)]


def _dense_args(quick: bool):
    m, k, n = (64, 128, 128) if quick else (512, 1024, 1024)
    rng = _rng()
    return [rng.standard_normal((m, k)).astype(np.float32),
            (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32),
            rng.standard_normal(n).astype(np.float32)]


def _norm_args(quick: bool):
    m, n = (256, 512) if quick else (4096, 1024)
    rng = _rng()
    return [rng.standard_normal((m, n)).astype(np.float32),
            (1 + 0.1 * rng.standard_normal(n)).astype(np.float32),
            (0.1 * rng.standard_normal(n)).astype(np.float32)]


def _io_bytes(result_bytes_per_input_bytes: float):
    return lambda args: int(sum(a.nbytes for a in args) * result_bytes_per_input_bytes)


_JAX = _jax_versions()
WORKLOADS = {
    "W1": Workload(w1, _JAX.get("W1"), lambda q: _vectors(3, q), _io_bytes(1.0),
                   rtol=1e-4),
    "W2": Workload(w2, _JAX.get("W2"), _dense_args,
                   lambda a: a[0].nbytes + a[1].nbytes + a[0].shape[0] * a[1].shape[1] * 4,
                   rtol=1e-4, atol=1e-4),
    "W3": Workload(w3, _JAX.get("W3"), lambda q: _vectors(1, q), _io_bytes(2.0),
                   rtol=1e-5, atol=2e-6),
    "W6": Workload(w6, _JAX.get("W6"), _norm_args, lambda a: 2 * a[0].nbytes,
                   rtol=1e-4, atol=1e-5),
}
