"""`python -m xlanb demo`: the seed documents' canonical examples, eager vs compiled.

Runs each example eagerly (NumPy), op by op through the interpreter (the "without XLA"
run) and compiled, checks they agree, and prints times and kernel counts; then shows
recompilation on a new shape, a must-compile error and auto-clustering.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import xlanb


def model_fn(x, y, z):
    return np.sum(x + y * z)


def dense_relu(x, w, b):
    return np.maximum(x @ w + b, 0)


def layer_norm_gelu(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + 1e-5) * gamma + beta
    return 0.5 * y * (1 + np.tanh(0.7978845608 * (y + 0.044715 * y ** 3)))


def softmax_cross_entropy(logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -logp[np.arange(logits.shape[0]), labels].mean()


def recompiled_on_launch(a, b):
    return a + b


def not_compilable(x):
    return np.unique(x)


def _median_ms(fn, repeats: int = 7) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _examples(rng):
    f32 = np.float32
    return [
        ("reduce_sum(x + y*z), 10^6", model_fn,
         [rng.standard_normal(10**6).astype(f32) for _ in range(3)]),
        ("relu(x @ w + b), 256x512x512", dense_relu,
         [rng.standard_normal((256, 512)).astype(f32),
          rng.standard_normal((512, 512)).astype(f32) / 23, rng.standard_normal(512).astype(f32)]),
        ("layer norm + gelu, 1024x512", layer_norm_gelu,
         [rng.standard_normal((1024, 512)).astype(f32), np.ones(512, f32), np.zeros(512, f32)]),
        ("softmax cross-entropy, 256x10", softmax_cross_entropy,
         [rng.standard_normal((256, 10)).astype(f32), rng.integers(0, 10, 256)]),
    ]


def run_demo() -> None:
    rng = np.random.default_rng(0)
    print("xlanb demo: the seed examples, NumPy eager vs op-by-op vs compiled\n")
    header = f"{'example':32s} {'kernels':>7s} {'unfused':>7s} {'compile s':>9s} " \
             f"{'numpy ms':>9s} {'op-by-op ms':>11s} {'xlanb ms':>9s} {'speedup':>8s}"
    print(header)
    for title, fn, args in _examples(rng):
        jitted = xlanb.jit(fn)
        start = time.perf_counter()
        compiled = jitted.lower(*args).compile()
        compile_s = time.perf_counter() - start
        unfused = xlanb.jit(fn, fusion=False).lower(*args).compile()
        np.testing.assert_allclose(jitted(*args), fn(*args), rtol=2e-4, atol=2e-5)
        eager = _median_ms(lambda: fn(*args))
        with xlanb.disable_jit():
            interp = _median_ms(lambda: jitted(*args), 3)
        fast = _median_ms(lambda: jitted(*args))
        print(f"{title:32s} {len(compiled.kernels):7d} {len(unfused.kernels):7d} "
              f"{compile_s:9.2f} {eager:9.2f} {interp:11.2f} {fast:9.2f} {eager / fast:7.1f}x")

    print("\nrecompiled_on_launch(a, b) = a + b")
    f = xlanb.jit(recompiled_on_launch)
    for shape in [(1, 10), (1, 100), (1, 10)]:
        start = time.perf_counter()
        f(np.ones(shape, np.float32), np.ones(shape, np.float32))
        print(f"  shape {shape}: {(time.perf_counter() - start) * 1e3:7.1f} ms, "
              f"cache {f.cache_info()}")

    print("\nnot_compilable(x) = np.unique(x) under must-compile semantics:")
    try:
        xlanb.jit(not_compilable)(np.array([3, 1, 3]))
    except xlanb.CompileError as error:
        print(f"  {type(error).__name__}: {error}")
    clustered = xlanb.jit(not_compilable, must_compile=False)
    print(f"  with must_compile=False: {clustered(np.array([3, 1, 3]))}")
    print("  " + str(clustered.report).replace("\n", "\n  "))

    compiled = xlanb.jit(model_fn).lower(*_examples(rng)[0][2]).compile()
    print("\nmodel_fn.lower(x, y, z).compile().as_text():")
    print(compiled.as_text())
    print(compiled.kernels[0].source.split("@numba.njit", 1)[-1])
