"""The semantics corpus (tests/frontend/semantics_corpus/) against NumPy.

Each program runs on fresh seeded inputs with NumPy, under `xlanb.jit(f)` and under
`xlanb.jit(f, must_compile=False)`, twice (the first call traces and compiles, the second
takes the cached path).  The return values and every argument after the call (and the
buffer under an argument that is a view) must match NumPy's in dtype, shape and value.
Where NumPy returns an argument or a view of one, xlanb must return that same object or a
view of the same memory; where NumPy returns a new array, so must xlanb; results that are
the same array, or views of one another, in NumPy must be so in xlanb.

Under `jit` a program may instead raise the named xlanb error its `jit_error` gives (a
data-dependent shape, Python control flow on a traced value); under `must_compile=False`
every program must match NumPy, and an internal failure that falls back to NumPy
(`FallbackWarning`) fails the test too.  The kernel suite's 35 kernels are the rest of the
corpus (test_kernel_suite.py); `test_corpus_size` checks the total.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import xlanb
from xlanb.autocluster import FallbackWarning
from xlanb_runtime import flags

from semantics_corpus import expected_jit_errors, programs, sizes
from tolerance import assert_close

PROGRAMS = programs()
# the named error each program may raise under jit instead of NumPy's answer (set by
# `@program(..., jit_error=...)`): data-dependent shapes, Python control flow on values,
# item assignment through traced indices that may repeat, np.ndarray(shape) buffers
EXPECTED_JIT_ERRORS = expected_jit_errors()


def _arrays(args) -> list[np.ndarray]:
    """The array arguments, then the buffers under those that are views (once each)."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    seen = {id(a) for a in arrays}
    for a in list(arrays):
        base = a.base
        if isinstance(base, np.ndarray) and id(base) not in seen:
            seen.add(id(base))
            arrays.append(base)
    return arrays


def _leaves(result) -> list:
    if isinstance(result, (tuple, list)):
        return [leaf for item in result for leaf in _leaves(item)]
    return [result]


def _least_precise_float(args) -> np.dtype | None:
    """The float dtype with the largest epsilon among the arguments (complex64 counts as
    float32): a float64 result computed from float32 data carries float32 roundings."""
    floats = [np.finfo(a.dtype).dtype for a in args
              if isinstance(a, (np.ndarray, np.generic)) and a.dtype.kind in "fc"]
    return max(floats, key=lambda d: np.finfo(d).eps, default=None)


def _compare(expected, got, prog, what, eps_dtype=None):
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), \
            f"{what}: {type(got).__name__} of {len(got) if hasattr(got, '__len__') else '?'}"
        for i, (e, g) in enumerate(zip(expected, got)):
            _compare(e, g, prog, f"{what}[{i}]", eps_dtype)
        return
    if expected is None:
        assert got is None, f"{what}: expected None, got {type(got).__name__}"
        return
    e, g = np.asarray(expected), np.asarray(got)
    assert g.dtype == e.dtype, f"{what}: dtype {g.dtype} != NumPy's {e.dtype}"
    assert g.shape == e.shape, f"{what}: shape {g.shape} != NumPy's {e.shape}"
    dtype = eps_dtype if eps_dtype is not None and e.dtype.kind in "fc" and \
        np.finfo(eps_dtype).eps > np.finfo(e.dtype).eps else None
    scale = None
    if prog.scale is not None and e.dtype.kind in "fc":
        scale = max(prog.scale, float(np.linalg.norm(e.astype(np.complex128).ravel())))
    assert_close(g, e, n=prog.n, k=prog.k, dtype=dtype, scale=scale, err_msg=what)


def _compare_call(prog, args_np, args_x, expected, got):
    """Results and every argument as NumPy left them, and the same sharing of memory
    between results and arguments."""
    eps_dtype = _least_precise_float(args_np)
    _compare(expected, got, prog, "result", eps_dtype)
    arrays_np, arrays_x = _arrays(args_np), _arrays(args_x)
    assert len(arrays_np) == len(arrays_x)
    for i, (e, g) in enumerate(zip(arrays_np, arrays_x)):
        _compare(e, g, prog, f"argument array {i} after the call", eps_dtype)
    results_np, results_x = _leaves(expected), _leaves(got)
    for r, (e, g) in enumerate(zip(results_np, results_x)):
        if not isinstance(e, np.ndarray):
            continue
        for q in range(r):
            if isinstance(results_np[q], np.ndarray):
                assert (g is results_x[q]) == (e is results_np[q]), \
                    f"result {r} is result {q}: NumPy {e is results_np[q]}, xlanb " \
                    f"{g is results_x[q]}"
                shares = isinstance(g, np.ndarray) and np.shares_memory(g, results_x[q])
                assert shares == np.shares_memory(e, results_np[q]), \
                    f"result {r} shares memory with result {q}: NumPy " \
                    f"{np.shares_memory(e, results_np[q])}, xlanb {shares}"
        for i, (a_np, a_x) in enumerate(zip(arrays_np, arrays_x)):
            assert (g is a_x) == (e is a_np), \
                f"result {r} is argument {i}: NumPy {e is a_np}, xlanb {g is a_x}"
            shares = isinstance(g, np.ndarray) and np.shares_memory(g, a_x)
            assert shares == np.shares_memory(e, a_np), \
                f"result {r} shares memory with argument {i}: NumPy " \
                f"{np.shares_memory(e, a_np)}, xlanb {shares}"


def run_program(prog, must_compile: bool, interpreted: bool = False):
    """Run `prog` twice under xlanb (seeds 0 and 1) and compare with NumPy.  A named
    error must leave every argument as it was.  A jitted program past the compile budget
    runs the function itself with NumPy: it is then run again through its trace in the
    reference interpreter (`xlanb.disable_jit()`), whose boundary (write-backs, returned
    arguments, aliasing) is the compiled program's."""
    fn = xlanb.jit(prog.fn, must_compile=must_compile)
    for seed in (0, 1):
        args_np = prog.make_args(np.random.default_rng(seed))
        args_x = prog.make_args(np.random.default_rng(seed))
        with np.errstate(all="ignore"):
            expected = prog.fn(*args_np)
        # loop-heavy programs unroll: keep compiles short here (the budget is a flag)
        with flags.overriding(xla_max_kernels=12), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.simplefilter("error", FallbackWarning)
            try:
                if interpreted:
                    with xlanb.disable_jit():
                        got = fn(*args_x)
                else:
                    got = fn(*args_x)
            except xlanb.errors.CompileError:
                untouched = prog.make_args(np.random.default_rng(seed))
                _compare_call(prog, untouched, args_x, None, None)
                raise
        _compare_call(prog, args_np, args_x, expected, got)
    compiled = getattr(fn, "last_compiled", None) if must_compile else None
    if compiled is not None and compiled.runs_eagerly and not interpreted:
        run_program(prog, must_compile, interpreted=True)


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_program_under_jit(prog):
    allowed = EXPECTED_JIT_ERRORS.get(prog.name)
    if allowed is None:
        run_program(prog, must_compile=True)
        return
    try:
        run_program(prog, must_compile=True)
    except allowed:
        pass                                   # the named error this program may raise


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_program_under_autoclustering(prog):
    run_program(prog, must_compile=False)


def test_corpus_size():
    """`python -m semantics_corpus` (in tests/frontend) prints these counts."""
    counts = sizes()
    print(counts)
    assert all(issubclass(cls, xlanb.errors.CompileError)
               for cls in EXPECTED_JIT_ERRORS.values())
    assert counts["new programs"] >= 120
    assert counts["corpus total"] >= 150


@pytest.fixture
def numpy_tier_only(monkeypatch):
    """Tiered jit whose background compile never runs: every call stays on the NumPy
    tier (a failing call then raises its own error instead of waiting for kernels)."""
    from xlanb_runtime import background, numpy_tier
    monkeypatch.setattr(background.Job, "start", lambda self: None)
    monkeypatch.setattr(background.Job, "wait", lambda self, timeout=None: True)
    calls = []
    driver = numpy_tier.NumpyProgram.driver

    def counted(self, *arrays):
        calls.append(self)
        return driver(self, *arrays)
    monkeypatch.setattr(numpy_tier.NumpyProgram, "driver", counted)
    with flags.overriding(xla_tiered=True):
        yield calls


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_program_on_numpy_tier(prog, numpy_tier_only, tmp_path, monkeypatch):
    """The NumPy tier (the optimized graph op by op) gives NumPy's answers, write-backs
    and sharing, as the compiled program does."""
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path))     # nothing compiled before
    test_program_under_jit(prog)
    assert numpy_tier_only or prog.name in EXPECTED_JIT_ERRORS, "ran no NumPy-tier call"
