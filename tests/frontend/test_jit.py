"""xlanb.jit end to end: the issue's acceptance examples, stages, caching, auto-clustering."""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import xlanb
from tolerance import assert_close, magnitude

RNG = np.random.default_rng(0)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def model_fn(x, y, z):
    return np.sum(x + y * z)


def dense_relu(x, w, b):
    return np.maximum(x @ w + b, 0)


def relu_squared_plus_3(x):
    return np.maximum(x, 0) ** 2 + 3


def mean_relu_squared(x):
    return np.mean(np.maximum(x, 0) ** 2)


# (fn, make_args, n): n is the longest reduction (see tests/tolerance.py)
ONE_KERNEL_CASES = [
    (model_fn, lambda: (f32(1000), f32(1000), f32(1000)), 1000),
    (dense_relu, lambda: (f32(16, 32), f32(32, 8), f32(8)), 32),
    (relu_squared_plus_3, lambda: (f32(7, 9),), 1),
    (mean_relu_squared, lambda: (f32(50, 3),), 150),
]


@pytest.mark.parametrize("fn,make_args,n", ONE_KERNEL_CASES,
                         ids=lambda v: getattr(v, "__name__", ""))
def test_seed_examples_compile_to_one_kernel_and_match_numpy(fn, make_args, n):
    args = make_args()
    compiled = xlanb.jit(fn).lower(*args).compile()
    assert len(compiled.kernels) == 1, compiled.as_text()
    got = xlanb.jit(fn)(*args)
    assert_close(got, fn(*args), n=n, scale=magnitude(fn, *args))
    assert np.asarray(got).dtype == np.asarray(fn(*args)).dtype


def test_recompiles_per_shape_and_hits_cache():
    f = xlanb.jit(lambda a, b: a + b)
    f(np.ones((1, 10), np.float32), np.ones((1, 10), np.float32))
    f(np.ones((1, 100), np.float32), np.ones((1, 100), np.float32))
    assert f.cache_info().misses == 2
    out = f(np.ones((1, 10), np.float32), np.ones((1, 10), np.float32))
    info = f.cache_info()
    assert (info.hits, info.misses) == (1, 2)
    np.testing.assert_array_equal(out, np.full((1, 10), 2, np.float32))


def test_second_shape_reuses_compiled_kernels():
    from xlanb_runtime import compiler
    f = xlanb.jit(relu_squared_plus_3)
    a = f.lower(f32(4, 6)).compile()
    compiled_before = dict(compiler._dispatchers)         # Numba dispatchers by source
    b = f.lower(f32(9, 2)).compile()
    assert [k.source for k in a.kernels] == [k.source for k in b.kernels]
    assert compiler._dispatchers == compiled_before       # nothing new was compiled


def test_recompilation_warning_names_the_changing_argument():
    def add_bias(x, b):
        return x + b
    f = xlanb.jit(add_bias)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 11):
            f(np.ones(n, np.float32), np.ones(1, np.float32))
    messages = [str(w.message) for w in caught if w.category is xlanb.RecompilationWarning]
    assert len(messages) == 1
    assert "`x`" in messages[0] and "argument 0" in messages[0]


def test_unique_is_a_compile_error_naming_the_function_and_line():
    def not_compilable(x):
        return np.unique(x)
    line = inspect.getsourcelines(not_compilable)[1] + 1
    with pytest.raises(xlanb.CompileError) as info:
        xlanb.jit(not_compilable)(np.array([3, 1, 3, 2]))
    message = str(info.value)
    assert "unique" in message and f"test_jit.py:{line}" in message


def test_unique_runs_under_auto_clustering_and_matches_numpy():
    def with_unique(x):
        y = x * 2
        u = np.unique(y)
        return u.sum() + y.max()
    f = xlanb.jit(with_unique, must_compile=False)
    x = np.array([3.0, 1.0, 3.0, 2.0])
    assert_close(f(x), with_unique(x))
    report = f.report
    assert len(report.breaks) == 1 and "unique" in report.breaks[0].what
    assert len(report.clusters) == 2


def test_stages_api():
    args = (f32(100), f32(100), f32(100))
    lowered = xlanb.jit(model_fn).lower(*args)
    assert "multiply" in lowered.as_text()
    compiled = lowered.compile()
    text = compiled.as_text()
    assert "reduce" in text and "fusion" in text
    kernel = compiled.kernels[0]
    assert {"multiply", "add", "reduce"} <= set(kernel.ops)
    assert "def " in kernel.source
    cost = compiled.cost_analysis()
    assert cost["flops"] > 0 and cost["bytes accessed"] >= 3 * 100 * 4
    memory = compiled.memory_analysis()
    assert memory["temp_bytes_unfused"] > memory["temp_bytes_fused"]
    report = compiled.report
    names = [p.name for p in report.phases]
    assert "trace" in names and "fusion" in names and "simplify" in names
    assert '"phases"' in report.to_json()


def test_disable_jit_runs_the_interpreter():
    f = xlanb.jit(model_fn)
    args = (f32(10), f32(10), f32(10))
    with xlanb.disable_jit():
        out = f(*args)
    assert f.cache_info().misses == 0
    assert_close(out, model_fn(*args), n=10, scale=magnitude(model_fn, *args))


def test_pytrees_in_and_out():
    @xlanb.jit
    def step(params, x):
        h = x @ params["w"] + params["b"]
        return {"out": h, "norm": (h * h).sum()}, [h.max()]
    params = {"w": f32(4, 3), "b": f32(3)}
    x = f32(5, 4)
    got, (mx,) = step(params, x)
    h = x @ params["w"] + params["b"]
    terms = (x, params["w"], params["b"])                 # h's rounding is relative to these
    assert_close(got["out"], h, n=4, scale=magnitude(lambda x, w, b: x @ w + b, *terms))
    assert_close(got["norm"], (h * h).sum(), n=4 * 15)
    assert_close(mx, h.max(), n=4, scale=magnitude(lambda x, w, b: (x @ w + b).max(), *terms))


def test_inputs_are_not_modified_and_outputs_are_fresh():
    f = xlanb.jit(lambda x: x)
    x = f32(4)
    assert f(x) is x                     # NumPy returns the argument itself
    y = xlanb.jit(lambda x: x + 0)(x)
    y[0] = 100
    assert x[0] != 100


def test_no_fusion_option_gives_one_kernel_per_op():
    args = (f32(100), f32(100), f32(100))
    unfused = xlanb.jit(model_fn, fusion=False).lower(*args).compile()
    assert len(unfused.kernels) == 3
    assert_close(unfused.executable.run(args)[0], model_fn(*args), n=100,
                 scale=magnitude(model_fn, *args))


def test_power_of_converted_integer_does_not_crash():
    """`afn` once let LLVM emit powi, whose helper Numba does not link (a segfault)."""
    f = xlanb.jit(lambda t: 0.9 ** t.astype(np.float32))
    assert_close(f(np.full((), 3, np.int32)), np.float32(0.9) ** 3)


def test_one_compiled_function_called_from_several_threads():
    """Intermediates live in per-thread arenas, so concurrent calls do not collide."""
    from concurrent.futures import ThreadPoolExecutor

    def normalize(x):
        centered = x - x.mean(axis=1, keepdims=True)
        return centered / np.sqrt((centered ** 2).mean(axis=1, keepdims=True) + 1e-5)

    f = xlanb.jit(normalize)
    inputs = [f32(64, 32) * (i + 1) for i in range(8)]
    f(inputs[0])
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda x: [f(x) for _ in range(20)][-1], inputs))
    for x, got in zip(inputs, results):
        assert_close(got, normalize(x), n=32)


@pytest.mark.parametrize("must_compile", [True, False], ids=["jit", "autocluster"])
def test_python_int_argument_as_an_index_in_item_assignment(must_compile):
    def update(A, i, k, v):
        A[i] = 2 * A[k]              # one traced index: an exact dynamic update
        A[i, 1:] = v                 # not a whole row: retraced with i static
        A[[0, k]] += 1               # a list holding a traced int is an index array
        return A[k]
    f = xlanb.jit(update, must_compile=must_compile)
    for i, k in [(1, 2), (3, 0), (1, 2)]:
        got_A, want_A = np.arange(16.0).reshape(4, 4), np.arange(16.0).reshape(4, 4)
        got, want = f(got_A, i, k, 0.5), update(want_A, i, k, 0.5)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got_A, want_A)
