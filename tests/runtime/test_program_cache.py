"""Program records (runtime/xlanb_runtime/program_cache.py): a program compiled before loads
its driver and kernels without passes, fusion or codegen, computes what NumPy computes, and
a damaged or stale record is never trusted."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import numba
import numpy as np
import pytest

import xlanb
from tolerance import assert_close
from xlanb_runtime import program_cache
from xlanb_runtime.codegen import cache, program_kernels
from xlanb_runtime.executable import Driver


@pytest.fixture(scope="module")
def shared_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def shared_cache(shared_dir, monkeypatch):
    """One cache for the tests that damage a record: its kernels compile once."""
    monkeypatch.setenv("XLANB_CACHE_DIR", str(shared_dir))


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path / "cache"))


def step(params, x, labels):
    def loss(p):
        logits = x @ p["w"] + p["b"]
        logits = logits - logits.max(axis=1, keepdims=True)
        logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        return -logp[np.arange(x.shape[0]), labels].mean()
    value, grads = xlanb.value_and_grad(loss)(params)
    params["b"] += 0.5                        # an in-place update of an argument
    return {k: params[k] - 0.1 * grads[k] for k in params}, value


def numpy_step(params, x, labels):
    params = {k: v.copy() for k, v in params.items()}
    logits = x @ params["w"] + params["b"]
    logits = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    value = -np.log(p[np.arange(x.shape[0]), labels]).mean()
    dlogits = p.copy()
    dlogits[np.arange(x.shape[0]), labels] -= 1
    dlogits /= x.shape[0]
    grads = {"w": x.T @ dlogits, "b": dlogits.sum(axis=0)}
    params["b"] += 0.5
    return {k: params[k] - 0.1 * grads[k] for k in params}, value, params


def args():
    rng = np.random.default_rng(0)
    return ({"w": rng.standard_normal((6, 3)).astype(np.float32),
             "b": np.zeros(3, np.float32)},
            rng.standard_normal((5, 6)).astype(np.float32), rng.integers(0, 3, 5))


def run_and_check():
    """A new jit of `step` (as in a new process), called once: checked against NumPy,
    arguments included.  Returns its Compiled."""
    f = xlanb.jit(step, tiered=False)
    params, x, labels = args()
    (new, value) = f(params, x, labels)
    want_new, want_value, want_params = numpy_step(*args())
    assert_close(value, want_value, n=30)
    for k in new:
        assert_close(new[k], want_new[k], n=30)
        assert_close(params[k], want_params[k], n=1)
    return f.last_compiled


def phases(compiled) -> list[str]:
    return [p.name for p in compiled._executable.timeline.phases]


def records() -> list:
    return sorted((cache.kernel_dir() / "programs").iterdir())


def test_a_program_compiled_before_loads_from_its_record(fresh_cache):
    cold = run_and_check()
    assert "fusion" in phases(cold) and "program cache" not in phases(cold)
    (record,) = records()
    assert program_cache.load(record.name) is not None
    warm = run_and_check()
    assert phases(warm) == ["trace", "program cache"]      # no passes, fusion, codegen
    # what only the report shows is compiled on demand, the same as the cold compile's
    assert [k.name for k in warm.kernels] == [k.name for k in cold.kernels]
    assert warm.as_text() == cold.as_text()
    assert [k["name"] for k in warm.report.kernels] == [k["name"] for k in cold.report.kernels]
    assert "fusion" in phases(warm)                        # joined the timeline when it ran


DAMAGE = {
    "truncated": lambda data: data[:len(data) // 2],
    "flipped byte": lambda data: data[:-40] + bytes([data[-40] ^ 1]) + data[-39:],
    "other format": lambda data: data.replace(program_cache._HEADER, b"xlanb-program 9\n", 1),
    "garbage": lambda data: b"\x80\x04garbage",
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_record_is_ignored_and_written_again(shared_cache, damage):
    run_and_check()
    (record,) = records()
    good = record.read_bytes()
    record.write_bytes(DAMAGE[damage](good))
    assert program_cache.load(record.name) is None
    again = run_and_check()
    assert "fusion" in phases(again) and "program cache" not in phases(again)
    assert record.read_bytes() == good                     # the same record, whole again


def test_an_edited_runtime_makes_other_keys(fresh_cache, monkeypatch):
    run_and_check()
    monkeypatch.setattr(program_cache, "_stamp", ["edited"])
    again = run_and_check()
    assert "fusion" in phases(again)
    assert len(records()) == 2


def test_a_driver_binding_more_than_kernels_and_values_gets_a_marker_only(fresh_cache):
    driver = Driver(lambda: None, "def run():\n    return (_lib3(),)\n",
                    {"np": np, "_lib3": len}, [], [])
    program_cache.store("k" * 32, driver, {})
    assert program_cache.compiled_before("k" * 32)
    assert program_cache.load("k" * 32) is None


# -- kernels from the record (codegen/program_kernels.py) -----------------------------------
def bound_kernels(compiled) -> list:
    """The kernels the warm driver calls, one per distinct object."""
    env = compiled._executable.driver.__globals__
    return list({id(v): v for v in env.values() if hasattr(v, "overloads")}.values())


def forget_loaded_kernels(monkeypatch) -> None:
    """As in a new process: no kernel module or dispatcher memoized.  A dispatcher an
    earlier test compiled into its own cache directory (the memo is keyed by source) has no
    entry in this one to put in the record."""
    from xlanb_runtime import compiler
    cache._loaded.clear()
    monkeypatch.setattr(compiler, "_dispatchers", {})


def test_a_warm_program_runs_kernels_rebuilt_from_its_record(fresh_cache, monkeypatch):
    """As in a new process (nothing memoized): every kernel comes from the record, one
    overload each, and no kernel-cache entry is opened; answers and arguments are NumPy's."""
    forget_loaded_kernels(monkeypatch)
    run_and_check()
    forget_loaded_kernels(monkeypatch)
    entries, original = [], cache.compile_canonical

    def counted(*args, **kwargs):            # a kernel-cache entry opened
        entries.append(args)
        return original(*args, **kwargs)
    monkeypatch.setattr(cache, "compile_canonical", counted)
    warm = run_and_check()
    kernels = bound_kernels(warm)
    (path,) = records()
    record = program_cache.load(path.name)
    assert kernels and all(isinstance(k, program_kernels.RecordedKernel) for k in kernels), \
        (phases(warm), record and len(record["overloads"]), len(kernels),
         record and record["host"] == program_kernels.host())
    assert all(len(k.overloads) == 1 for k in kernels)
    assert entries == []
    # their machine code is one library, loaded in one go
    assert len({id(k.overloads[k.signatures[0]].library) for k in kernels}) == 1


def test_an_overload_that_does_not_rebuild_loads_from_the_kernel_cache(fresh_cache,
                                                                      monkeypatch):
    """A record whose overload state is not Numba's (valid record, bad state): the
    program's kernels come from the kernel cache instead, and the answers stay NumPy's."""
    forget_loaded_kernels(monkeypatch)
    run_and_check()
    (path,) = records()
    record = program_cache.load(path.name)
    assert record["overloads"]
    damaged = next(iter(record["overloads"]))
    record["overloads"][damaged] = b"\x80\x04not an overload"
    cache.write_record(path, program_cache._HEADER, pickle.dumps(record))
    warm = run_and_check()
    env = warm._executable.driver.__globals__
    assert not isinstance(env[damaged], program_kernels.RecordedKernel)
    assert isinstance(env[damaged], numba.core.registry.CPUDispatcher)
    assert not any(isinstance(k, program_kernels.RecordedKernel) for k in bound_kernels(warm))


def test_a_record_for_another_cpu_loads_its_kernels_from_the_kernel_cache(fresh_cache,
                                                                         monkeypatch):
    """Object code compiled for another CPU (a cache copied between machines) is never
    loaded from the record: Numba's own entries, keyed by CPU, serve."""
    forget_loaded_kernels(monkeypatch)
    run_and_check()
    (path,) = records()
    record = program_cache.load(path.name)
    assert record["host"] == program_kernels.host() and record["overloads"]
    record["host"] = "('x86_64-unknown-linux-gnu', 'another-cpu', '')"
    cache.write_record(path, program_cache._HEADER, pickle.dumps(record))
    warm = run_and_check()
    kernels = bound_kernels(warm)
    assert kernels and not any(isinstance(k, program_kernels.RecordedKernel) for k in kernels)


PARALLEL_PROGRAM = """
import json
import numpy as np
import xlanb
from xlanb_runtime.codegen import program_kernels


def f(x, y):
    return np.exp(x) * 2 + y, (x * y).sum(axis=1)


rng = np.random.default_rng(0)
x, y = (rng.standard_normal((1024, 256)).astype(np.float32) for _ in range(2))
g = xlanb.jit(f, tiered=False)
z, s = g(x, y)
env = g.last_compiled._executable.driver.__globals__
kernels = {id(v): v for v in env.values() if hasattr(v, "overloads")}.values()
print(json.dumps({"z": z.tolist(), "s": s.tolist(),
                  "recorded": [isinstance(k, program_kernels.RecordedKernel) for k in kernels]}))
"""


def test_a_parallel_kernel_runs_from_the_record_in_a_new_process(tmp_path):
    """A prange kernel's object code calls Numba's threading layer, which its overload's
    `reload_init` launches: it must run before that code loads (else a new process
    crashed on the first call)."""
    env = dict(os.environ, XLANB_CACHE_DIR=str(tmp_path / "cache"),
               XLANB_FLAGS="--xla_cpu_parallel_min_elements=1000 --xla_cpu_threads=2",
               NUMBA_NUM_THREADS="2")
    runs = []
    for _ in range(2):                       # a cold compile, then a warm start
        done = subprocess.run([sys.executable, "-c", PARALLEL_PROGRAM], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((1024, 256)).astype(np.float32) for _ in range(2))
    sources = list((tmp_path / "cache").glob("kernels/*/xlanb_kernel_*/*.py"))
    assert any("numba.prange" in p.read_text() for p in sources)
    for run in runs:
        assert_close(np.array(run["z"], np.float32), np.exp(x) * 2 + y, n=4)
        assert_close(np.array(run["s"], np.float32), (x * y).sum(axis=1), n=64)
    assert runs[0]["recorded"] and not any(runs[0]["recorded"])
    assert all(runs[1]["recorded"])


KERNEL = """\
import numba
import numpy as np


@numba.njit(cache=True)
def scale(x, out):
    for i in range(x.shape[0]):
        out[i] = 2 * x[i] + 1
"""


def test_a_recorded_kernel_called_with_other_types_runs_the_real_kernel(fresh_cache):
    """Numba's type dispatch guards a recorded kernel: other dtypes, or a strided view
    where its signature says C-contiguous, run the real kernel compiled for them, never the
    recorded code on the wrong layout."""
    signature = (numba.float32[::1], numba.float32[::1])
    real = cache.compile_function(KERNEL, "scale", signature)
    state = program_kernels.serialize(real, signature)
    fallbacks = []
    (kernel,) = program_kernels.load_all([(state, lambda: fallbacks.append(1) or real)],
                                         "scale_program")
    assert isinstance(kernel, program_kernels.RecordedKernel)
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    kernel(x, out)
    np.testing.assert_array_equal(out, 2 * x + 1)
    assert fallbacks == []
    wide, out64 = np.arange(5.0), np.zeros(5)
    kernel(wide, out64)
    np.testing.assert_array_equal(out64, 2 * wide + 1)
    strided, out_s = np.arange(12, dtype=np.float32)[::3], np.zeros(4, np.float32)
    kernel(strided, out_s)
    np.testing.assert_array_equal(out_s, 2 * strided + 1)
    assert fallbacks == [1] and len(kernel.overloads) == 1 and len(real.overloads) == 3


# -- drivers' bytecode (codegen/cache.compile_cached) ---------------------------------------
def counting_compiles(monkeypatch) -> list:
    """The file names `compile` is called with from here on."""
    import builtins
    calls, original = [], builtins.compile

    def counted(source, filename, *args, **kwargs):
        calls.append(filename)
        return original(source, filename, *args, **kwargs)
    monkeypatch.setattr(builtins, "compile", counted)
    return calls


def test_a_warm_driver_loads_its_bytecode_instead_of_compiling(fresh_cache, monkeypatch):
    run_and_check()
    cache._loaded.clear()                  # as in a new process: nothing memoized
    from xlanb_runtime import compiler
    monkeypatch.setattr(compiler, "_dispatchers", {})
    calls = counting_compiles(monkeypatch)
    warm = run_and_check()
    assert phases(warm) == ["trace", "program cache"]
    assert not [name for name in calls if name.startswith("<xlanb driver")]


CODE_DAMAGE = dict(DAMAGE, **{
    "other format": lambda data: data.replace(b"xlanb-code 1", b"xlanb-code 9", 1)})


@pytest.mark.parametrize("damage", sorted(CODE_DAMAGE))
def test_a_damaged_bytecode_record_is_compiled_again(fresh_cache, monkeypatch, damage):
    source, name = "def run(x):\n    return (x + 1,)\n", "<xlanb driver damaged>"
    cache.compile_cached(source, name)
    (record,) = (cache.kernel_dir() / "code").iterdir()
    good = record.read_bytes()
    record.write_bytes(CODE_DAMAGE[damage](good))
    calls = counting_compiles(monkeypatch)
    env: dict = {}
    exec(cache.compile_cached(source, name), env)
    assert env["run"](1) == (2,) and calls == [name]
    exec(cache.compile_cached(source, name), env)          # rewritten: loads again
    assert calls == [name] and record.read_bytes() == good
