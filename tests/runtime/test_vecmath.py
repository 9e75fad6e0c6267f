"""Accuracy, special values, vectorization and caching of xlanb_runtime.codegen.vecmath.

Each function is called from a small njit loop kernel compiled the way generated
kernels are (error_model="numpy", fastmath=codegen.cpu.BASE_FASTMATH) and
compared in ULPs with a reference that is (almost) correctly rounded:
float32 -> the float64 NumPy result rounded to float32; float64 -> the
np.longdouble NumPy result rounded to float64 (mpmath for erf).  The reference
itself is rounded, so a measured 1 ulp means "< 1.5 ulp".
"""
import math
import os
import re
import subprocess
import sys

import numpy as np
import numba
import pytest

from xlanb_runtime.codegen import vecmath as vm
from xlanb_runtime.codegen.cpu import BASE_FASTMATH

KERNEL_FASTMATH = set(BASE_FASTMATH)
F32, F64 = np.float32, np.float64

# Max ULP error allowed (measured maximum on the dev machine + 1 for slack;
# measured: f32 exp/exp2/expm1/log/log1p/erf/acos 1, tanh/sigmoid/sin/cos/asin 2, tan 3;
# f64 exp/exp2/log/log1p/sin/erf/acos 1, expm1/tanh/sigmoid/cos/asin 2, tan 3).  asin's
# 2: near |x| = 1/2, pi/2 - 2 asin(s) cancels a bit; NumPy's float32 arcsin: 3.
ULP_BOUND = {
    "exp": (2, 2), "exp2": (2, 2), "expm1": (2, 3), "log": (2, 2), "log1p": (2, 2),
    "tanh": (3, 3), "sigmoid": (3, 3), "sin": (3, 2), "cos": (3, 3), "erf": (2, 2),
    "tan": (4, 4), "asin": (3, 3), "acos": (2, 2), "sinh": (3, 3), "cosh": (3, 3),
    "atan": (3, 2), "asinh": (4, 3), "acosh": (3, 3), "atanh": (3, 2),
}

_KERNELS = {}


def kernel_for(fname):
    """njit loop `out[i] = fn(x[i])` compiled like a generated kernel (memoized)."""
    if fname not in _KERNELS:
        fn = getattr(vm, fname)

        @numba.njit(error_model="numpy", fastmath=KERNEL_FASTMATH)
        def k(x, out):
            for i in range(x.shape[0]):
                out[i] = fn(x[i])

        _KERNELS[fname] = k
    return _KERNELS[fname]


def apply(name, x):
    fname = vm.VECMATH[name][0 if x.dtype == F32 else 1]
    out = np.empty_like(x)
    kernel_for(fname)(x, out)
    return out


def ulp_distance(a, b):
    """|a - b| in units in the last place (via ordered integer views); +-0 equal,
    nan vs nan = 0, nan vs number = inf."""
    ity = np.int32 if a.dtype == F32 else np.int64

    def ordered(v):
        i = v.view(ity).astype(np.int64)
        return np.where(i >= 0, i, np.int64(np.iinfo(ity).min) - i)

    oa, ob = ordered(a), ordered(b)
    hi, lo = np.maximum(oa, ob), np.minimum(oa, ob)
    d = (hi.view(np.uint64) - lo.view(np.uint64)).astype(np.float64)
    na, nb = np.isnan(a), np.isnan(b)
    d[na & nb] = 0.0
    d[na ^ nb] = np.inf
    return d


# ---------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------

_LD_OK = np.finfo(np.longdouble).nmant >= 63


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


_NUMPY_NAME = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
               "acosh": "arccosh", "atanh": "arctanh"}


def reference(name, x):
    with np.errstate(all="ignore"):
        if x.dtype == F32:
            xd = x.astype(F64)
            if name == "erf":
                r = np.frompyfunc(math.erf, 1, 1)(xd).astype(F64)
            elif name == "sigmoid":
                r = _sigmoid(xd)
            else:
                r = getattr(np, _NUMPY_NAME.get(name, name))(xd)
            return r.astype(F32)
        if name == "erf":
            try:
                import mpmath
            except ImportError:  # math.erf (glibc, < 1 ulp) as a fallback
                return np.frompyfunc(math.erf, 1, 1)(x).astype(F64)
            mpmath.mp.prec = 80
            f = np.frompyfunc(lambda v: float(mpmath.erf(v)) if math.isfinite(v)
                              else math.erf(v), 1, 1)
            return f(x).astype(F64)
        xl = x.astype(np.longdouble)
        r = _sigmoid(xl) if name == "sigmoid" else getattr(np, _NUMPY_NAME.get(name, name))(xl)
        return r.astype(F64)


# ---------------------------------------------------------------------------
# inputs: dense grids over the useful domain + edge cases
# ---------------------------------------------------------------------------


def _specials(dt):
    fi = np.finfo(dt)
    tiny_sub = fi.smallest_subnormal
    v = [0.0, -0.0, np.nan, np.inf, -np.inf, tiny_sub, -tiny_sub, fi.tiny, -fi.tiny,
         fi.max, -fi.max, 1.0, -1.0, fi.eps, -fi.eps]
    g = np.geomspace(tiny_sub, 1.0, 4000)
    return np.concatenate([np.array(v), g, -g])


def _dense(lo, hi, n=100_001, seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([np.linspace(lo, hi, n), rng.uniform(lo, hi, n)])


def _positive(dt, n=100_000, seed=1):
    rng = np.random.default_rng(seed)
    fi = np.finfo(dt)
    lo, hi = np.log2(float(fi.smallest_subnormal)), float(fi.maxexp)
    return np.concatenate([np.exp2(rng.uniform(lo, hi, n)),
                           1.0 + rng.uniform(-0.5, 0.5, n // 2),
                           1.0 + np.geomspace(1e-16, 1e-3, 2000),
                           1.0 - np.geomspace(1e-16, 1e-3, 2000)])


def inputs(name, dt):
    sp = _specials(dt)
    is32 = dt == F32
    if name == "exp":
        parts = [_dense(-104, 89) if is32 else _dense(-746, 710)]
    elif name == "exp2":        # past both ends: inf, the smallest subnormals, 0
        parts = [_dense(-151, 129) if is32 else _dense(-1076, 1025), _dense(-2, 2, seed=3)]
    elif name == "expm1":
        parts = [_dense(-20, 89) if is32 else _dense(-40, 710)]
    elif name == "log":
        parts = [_positive(dt)]
    elif name == "log1p":
        pos = _positive(dt)
        parts = [pos, pos[pos < 1] - 1.0, _dense(-1, 2)]
    elif name == "tanh":
        parts = [_dense(-10, 10) if is32 else _dense(-20, 20)]
    elif name == "sigmoid":
        parts = [_dense(-110, 110) if is32 else _dense(-750, 750)]
    elif name in ("sin", "cos"):
        tmax = vm.TRIG_MAX_F32 if is32 else vm.TRIG_MAX_F64
        sp = sp[~(np.abs(sp) > tmax)]
        parts = [_dense(-1e4, 1e4), _dense(-10, 10, seed=2),
                 _dense(-tmax, tmax, n=20_001, seed=3)]
    elif name == "tan":
        tmax = vm.TRIG_MAX_F32 if is32 else vm.TRIG_MAX_F64
        sp = sp[~(np.abs(sp) > tmax)]
        parts = [_dense(-10, 10), _dense(-1e4, 1e4, seed=2),
                 np.pi / 2 + np.geomspace(1e-7, 1e-3, 200)]   # near the poles
    elif name in ("asin", "acos"):      # |x| > 1 among the specials: nan
        ends = 1 - np.geomspace(1e-16 if not is32 else 1e-7, 0.5, 2000)
        parts = [_dense(-1, 1), ends, -ends, np.geomspace(1e-30, 0.5, 2000)]
    elif name in ("sinh", "cosh"):      # to overflow and past it: the |x|/2 branch
        parts = [_dense(-90, 90) if is32 else _dense(-711, 711), _dense(-2, 2, seed=3),
                 np.geomspace(1e-30, 1, 2000)]
    elif name == "atan":        # the reduction's bounds tan(pi/8), tan(3pi/8) inside
        parts = [_dense(-50, 50), _dense(-3, 3, seed=2), np.geomspace(1e-30, 1e30, 2000)]
    elif name == "asinh":       # the series' end at 1/2, and on past overflow of a^2
        big = np.geomspace(1, float(np.finfo(dt).max), 20_000)
        parts = [_dense(-3, 3), _dense(-1e6, 1e6, seed=2), big, -big]
    elif name == "acosh":       # near 1, where the result is small; below 1: nan
        big = np.geomspace(1, float(np.finfo(dt).max), 20_000)
        parts = [1 + np.geomspace(1e-16, 1e3, 20_000), _dense(1, 10), _dense(-3, 1, seed=2), big]
    elif name == "atanh":       # up to the poles at +-1; past them: nan
        ends = 1 - np.geomspace(1e-16 if not is32 else 1e-7, 0.5, 2000)
        parts = [_dense(-1, 1), ends, -ends, np.geomspace(1e-30, 0.5, 2000)]
    elif name == "erf":
        parts = [_dense(-5, 5) if is32 else _dense(-7, 7, n=10_001)]
        if not is32:
            sp = sp[::8]
    else:
        raise KeyError(name)
    return np.concatenate([np.asarray(p, dtype=dt) for p in parts + [sp]])


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(vm.VECMATH))
def test_ulp_error(name, dt):
    if dt == F64 and not _LD_OK and name != "erf":
        pytest.skip("np.longdouble is not extended precision here")
    x = inputs(name, dt)
    got = apply(name, x)
    ref = reference(name, x)
    d = ulp_distance(got, ref)
    i = int(np.argmax(d))
    bound = ULP_BOUND[name][0 if dt == F32 else 1]
    assert d[i] <= bound, (
        f"{name}[{dt.__name__}]: {d[i]:g} ulp at x={x[i]!r}: got {got[i]!r}, "
        f"reference {ref[i]!r}")


_INF, _NAN = np.inf, np.nan
SPECIAL_CASES = {
    "exp": [(_NAN, _NAN), (_INF, _INF), (-_INF, 0.0), (0.0, 1.0), (1000.0, _INF),
            (-1000.0, 0.0)],
    "exp2": [(_NAN, _NAN), (_INF, _INF), (-_INF, 0.0), (0.0, 1.0), (-0.0, 1.0), (1.0, 2.0),
             (-1.0, 0.5), (10.0, 1024.0), (2000.0, _INF), (-2000.0, 0.0)],
    "expm1": [(_NAN, _NAN), (_INF, _INF), (-_INF, -1.0), (0.0, 0.0), (1000.0, _INF),
              (-1000.0, -1.0)],
    "log": [(_NAN, _NAN), (_INF, _INF), (-_INF, _NAN), (0.0, -_INF), (-0.0, -_INF),
            (-1.0, _NAN), (1.0, 0.0)],
    "log1p": [(_NAN, _NAN), (_INF, _INF), (-_INF, _NAN), (-1.0, -_INF), (-2.0, _NAN),
              (0.0, 0.0)],
    "tanh": [(_NAN, _NAN), (_INF, 1.0), (-_INF, -1.0), (0.0, 0.0), (100.0, 1.0),
             (-100.0, -1.0)],
    "sigmoid": [(_NAN, _NAN), (_INF, 1.0), (-_INF, 0.0), (0.0, 0.5), (1000.0, 1.0),
                (-1000.0, 0.0)],
    "sin": [(_NAN, _NAN), (_INF, _NAN), (-_INF, _NAN), (0.0, 0.0)],
    "cos": [(_NAN, _NAN), (_INF, _NAN), (-_INF, _NAN), (0.0, 1.0)],
    "erf": [(_NAN, _NAN), (_INF, 1.0), (-_INF, -1.0), (0.0, 0.0), (10.0, 1.0),
            (-10.0, -1.0)],
    "tan": [(_NAN, _NAN), (_INF, _NAN), (-_INF, _NAN), (0.0, 0.0)],
    "asin": [(_NAN, _NAN), (_INF, _NAN), (1.5, _NAN), (-1.5, _NAN), (0.0, 0.0),
             (1.0, np.pi / 2), (-1.0, -np.pi / 2)],
    "acos": [(_NAN, _NAN), (-_INF, _NAN), (1.5, _NAN), (-1.5, _NAN), (1.0, 0.0),
             (-1.0, np.pi), (0.0, np.pi / 2)],
    "sinh": [(_NAN, _NAN), (_INF, _INF), (-_INF, -_INF), (0.0, 0.0), (1000.0, _INF),
             (-1000.0, -_INF)],
    "cosh": [(_NAN, _NAN), (_INF, _INF), (-_INF, _INF), (0.0, 1.0), (-1000.0, _INF)],
    "atan": [(_NAN, _NAN), (_INF, np.pi / 2), (-_INF, -np.pi / 2), (0.0, 0.0), (1.0, np.pi / 4),
             (-1.0, -np.pi / 4)],
    "asinh": [(_NAN, _NAN), (_INF, _INF), (-_INF, -_INF), (0.0, 0.0)],
    "acosh": [(_NAN, _NAN), (_INF, _INF), (-_INF, _NAN), (1.0, 0.0), (0.5, _NAN), (-1e30, _NAN)],
    "atanh": [(_NAN, _NAN), (1.0, _INF), (-1.0, -_INF), (0.0, 0.0), (1.5, _NAN), (-_INF, _NAN)],
}


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(SPECIAL_CASES))
def test_special_values(name, dt):
    xs = np.array([c[0] for c in SPECIAL_CASES[name]], dtype=dt)
    want = np.array([c[1] for c in SPECIAL_CASES[name]], dtype=dt)
    got = apply(name, xs)
    assert got.dtype == dt
    np.testing.assert_array_equal(got, want, err_msg=f"{name}[{dt.__name__}] at {xs}")


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
def test_trig_beyond_domain_stays_bounded(dt):
    fi = np.finfo(dt)
    tmax = vm.TRIG_MAX_F32 if dt == F32 else vm.TRIG_MAX_F64
    big = np.geomspace(tmax, float(fi.max) / 2, 2000)
    x = np.concatenate([big, -big, [fi.max, -fi.max]]).astype(dt)
    for name in ("sin", "cos"):
        y = apply(name, x)
        assert np.all(np.abs(y) <= 1), name


# lanes of a vectorized loop: 128-bit vectors on a generic x86-64 CPU (NUMBA_CPU_NAME=generic,
# SSE2) hold 2 doubles, AVX-512 16 floats
VECTOR_WIDTHS = {F32: {4, 8, 16}, F64: {2, 4, 8, 16}}


def _vector_types(ir_text, elem):
    return {int(n) for n in re.findall(r"<(\d+) x %s>" % elem, ir_text)}


@pytest.mark.parametrize("name", sorted(vm.VECMATH))
def test_f32_loop_vectorizes_without_double(name):
    """The reason this module exists: the f32 loop must vectorize (and stay f32)."""
    x = np.linspace(0.5, 2, 64).astype(F32)
    apply(name, x)
    k = kernel_for(vm.VECMATH[name][0])
    ir_text = k.inspect_llvm(k.signatures[0])
    widths = _vector_types(ir_text, "float")
    assert widths & {4, 8, 16}, f"{name}: no <N x float> vector in the loop IR"
    assert "double" not in ir_text, f"{name}: float32 code promoted to double"
    libm = re.findall(r"call [^\n]*@(?:exp|expm1|log|log1p|tanh|sin|cos|erf)f?\(", ir_text)
    assert not libm, f"{name}: scalar libm call left in the loop: {libm}"


def test_f64_exp_loop_vectorizes():
    x = np.linspace(0.5, 2, 64)
    apply("exp", x)
    k = kernel_for("exp_f64")
    assert _vector_types(k.inspect_llvm(k.signatures[0]), "double") & {2, 4, 8}


# A scalar float64 <-> integer conversion in the machine code: x86 without AVX-512DQ has no
# vector float64 <-> int64 conversion, so LLVM splits a vector `fptosi`/`sitofp` on i64 into
# one scalar conversion per lane (vectorized in the IR, scalar in the code: exp_f64 ran at
# 5 ns/element on Zen 3).  The functions build and read exponents with bit operations instead.
_SCALAR_F64_INT = re.compile(r"\bv?cvt(?:t?sd2si|si2sd)\w*\b")


def _kernel_asm(kernel) -> str:
    asm = kernel.inspect_asm(kernel.signatures[0])
    return asm[:asm.find(".Lfunc_end0")]        # the kernel, not its CPython wrapper


@pytest.mark.parametrize("fname", sorted(
    [pair[1] for pair in vm.VECMATH.values()] + list(vm.POW)))
def test_float64_lanes_have_no_scalar_integer_conversions(fname):
    """Every function computing in float64 lanes (pow_f32 included) keeps its exponent
    arithmetic in vector registers: no scalar cvttsd2si / cvtsi2sd anywhere in the kernel,
    vector loop or remainder."""
    x = np.linspace(0.5, 2, 64).astype(F32 if fname == "pow_f32" else F64)
    if fname in vm.POW:
        apply_pow(x, x)
        k = _POW_KERNELS[fname]
    else:
        kernel_for(fname)(x, np.empty_like(x))
        k = kernel_for(fname)
    scalar = _SCALAR_F64_INT.findall(_kernel_asm(k))
    assert not scalar, f"{fname}: scalar float64/int conversions in the kernel: {scalar}"


def test_ulp_distance_helper():
    one = np.array([1.0, 0.0, -0.0, np.nan, np.nan, 1.0], dtype=F32)
    other = np.array([np.nextafter(F32(1), F32(2)), -0.0, np.finfo(F32).smallest_subnormal,
                      np.nan, 1.0, -1.0], dtype=F32)
    d = ulp_distance(one, other)
    assert list(d[:5]) == [1.0, 0.0, 1.0, 0.0, np.inf]
    assert d[5] == 2 * 0x3F800000


def test_callable_from_python_and_table():
    assert set(vm.VECMATH) == {"exp", "exp2", "expm1", "log", "log1p", "tanh", "sigmoid",
                               "sin", "cos", "tan", "asin", "acos", "sinh", "cosh", "atan",
                               "asinh", "acosh", "atanh", "erf"}
    for name, (n32, n64) in vm.VECMATH.items():
        assert callable(getattr(vm, n32)) and callable(getattr(vm, n64))
    assert vm.exp_f64(1.0) == pytest.approx(math.e, rel=1e-15)
    assert vm.erf_f32(np.float32(0.5)) == pytest.approx(math.erf(0.5), rel=1e-6)


_GEN_MODULE = '''
import numba, numpy as np
from xlanb_runtime.codegen.vecmath import exp_f32, tanh_f32, erf_f64

@numba.njit(error_model="numpy", fastmath={"nsz", "contract", "afn"}, cache=True)
def kernel(x, y, out32, out64):
    for i in range(x.shape[0]):
        v = x[i]
        out32[i] = tanh_f32(v) * np.float32(0.5) + exp_f32(-v * v) - np.sqrt(abs(v) + np.float32(1.0))
        out64[i] = erf_f64(y[i])
'''

_DRIVER = '''
import importlib.util, sys, numpy as np
name = "xk_vecmath_cache_test"
spec = importlib.util.spec_from_file_location(name, sys.argv[1])
m = importlib.util.module_from_spec(spec)
sys.modules[name] = m
spec.loader.exec_module(m)
x = np.linspace(-4, 4, 1001).astype(np.float32)
y = x.astype(np.float64)
o32 = np.empty_like(x); o64 = np.empty_like(y)
m.kernel(x, y, o32, o64)
np.save(sys.argv[2], np.concatenate([o32.astype(np.float64), o64]))
print("HITS", sum(m.kernel.stats.cache_hits.values()),
      "MISSES", sum(m.kernel.stats.cache_misses.values()))
'''


def test_cached_generated_module(tmp_path):
    """A generated .py kernel module with cache=True calling vecmath works from a
    fresh process, and the second process loads it from Numba's cache."""
    mod = tmp_path / "xk_vecmath_cache_test.py"
    mod.write_text(_GEN_MODULE)
    drv = tmp_path / "driver.py"
    drv.write_text(_DRIVER)
    env = dict(os.environ)
    env.pop("NUMBA_DISABLE_JIT", None)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba_cache")
    runtime_dir = os.path.dirname(os.path.dirname(vm.__file__))
    runtime_dir = os.path.dirname(runtime_dir)   # .../runtime (parent of xlanb_runtime)
    env["PYTHONPATH"] = os.pathsep.join(
        [runtime_dir] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    outs = []
    for run in range(2):
        res = tmp_path / f"out{run}.npy"
        p = subprocess.run([sys.executable, str(drv), str(mod), str(res)],
                           capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == 0, p.stderr[-3000:]
        line = [ln for ln in p.stdout.splitlines() if ln.startswith("HITS")][-1]
        hits, misses = int(line.split()[1]), int(line.split()[3])
        assert (hits, misses) == ((0, 1) if run == 0 else (1, 0)), line
        outs.append(np.load(res))
    np.testing.assert_array_equal(outs[0], outs[1])
    x = np.linspace(-4, 4, 1001).astype(np.float32).astype(F64)
    want = np.concatenate([np.tanh(x) * 0.5 + np.exp(-x * x) - np.sqrt(np.abs(x) + 1),
                           [math.erf(v) for v in x]])
    np.testing.assert_allclose(outs[0], want, rtol=0, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reassoc_safe_functions_keep_accuracy_in_a_reassociating_reduction(dtype):
    """A fused softmax sum is compiled with `reassoc`; REASSOC_SAFE promises that is fine."""
    from xlanb_runtime.codegen.vecmath import REASSOC_SAFE, exp_f32, exp_f64
    assert {"exp_f32", "exp_f64"} <= REASSOC_SAFE
    exp = exp_f32 if dtype == np.float32 else exp_f64

    @numba.njit(fastmath=KERNEL_FASTMATH | {"reassoc"}, error_model="numpy")
    def kernel(x, out):
        total = np.float64(0)
        for i in range(x.size):
            value = exp(x[i])
            out[i] = value
            total = total + np.float64(value)
        return total

    x = np.linspace(-80, 80, 200_001).astype(dtype)
    out = np.empty_like(x)
    kernel(x, out)
    reference = np.exp(x.astype(np.longdouble)).astype(dtype)
    ints = np.int32 if dtype == np.float32 else np.int64
    ulps = np.abs(out.view(ints).astype(np.int64) - reference.view(ints).astype(np.int64))
    assert ulps.max() <= 2


_REDUCTIONS = {}


def sealed_reduction(fname):
    """`acc += sealed_f(x[i])` with out[i] written, compiled like a generated reduction
    kernel: the caller reassociates, the sealed copy keeps its own flags (memoized)."""
    if fname not in _REDUCTIONS:
        fn = getattr(vm, vm.SEALED[fname])

        @numba.njit(error_model="numpy", fastmath=KERNEL_FASTMATH | {"reassoc"})
        def k(x, out):
            total = x.dtype.type(0)
            for i in range(x.shape[0]):
                value = fn(x[i])
                out[i] = value
                total += value
            return total

        _REDUCTIONS[fname] = k
    return _REDUCTIONS[fname]


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(vm.VECMATH))
def test_sealed_copy_in_a_reassociating_reduction_equals_the_inlined_function(name, dt):
    """Reductions over any vecmath function are compiled with `reassoc` and call the
    sealed copy: its values are bit for bit those of the function inlined without it."""
    grid = np.concatenate([np.linspace(-30, 30, 4001), np.geomspace(1e-30, 1e4, 2001),
                           [0.0, -0.0, np.inf, -np.inf, np.nan, 88.5, -103.5]]).astype(dt)
    fname = vm.VECMATH[name][0 if dt == F32 else 1]
    out = np.empty_like(grid)
    with np.errstate(all="ignore"):
        sealed_reduction(fname)(grid, out)
        want = apply(name, grid)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(vm.VECMATH))
def test_reduction_over_a_sealed_copy_vectorizes(name, dt):
    """The reason sealed copies exist: LLVM inlines them into the reassociating loop,
    which then vectorizes with no libm call left (see the module docstring).  On a generic
    x86-64 CPU (SSE2) LLVM's cost model may keep a float64 loop with a division scalar
    (atan: two lanes): inlined, but not vectorized."""
    x = np.linspace(1.5, 2, 64).astype(dt)
    fname = vm.VECMATH[name][0 if dt == F32 else 1]
    k = sealed_reduction(fname)
    k(x, np.empty_like(x))
    ir_text = k.inspect_llvm(k.signatures[0])
    assert not re.search(r"call [^\n]*@\w*sealed_%s" % fname, ir_text), f"{name}: not inlined"
    element = "float" if dt == F32 else "double"
    if dt == F32 or os.environ.get("NUMBA_CPU_NAME") != "generic":
        assert _vector_types(ir_text, element) & VECTOR_WIDTHS[dt], \
            f"{name}: reduction not vectorized"
    libm = re.findall(r"call [^\n]*@(?:exp|expm1|log|log1p|tanh|sin|cos|erf)f?\(", ir_text)
    assert not libm, f"{name}: scalar libm call left in the loop: {libm}"


# ---------------------------------------------------------------------------
# pow (binary: vm.POW)
# ---------------------------------------------------------------------------

# measured on the dev machine: 1 ulp for both (+1 slack)
POW_ULP_BOUND = {F32: 2, F64: 2}
_POW_KERNELS = {}


def apply_pow(x, y):
    fname = vm.POW[0 if x.dtype == F32 else 1]
    if fname not in _POW_KERNELS:
        fn = getattr(vm, fname)

        @numba.njit(error_model="numpy", fastmath=KERNEL_FASTMATH)
        def k(x, y, out):
            for i in range(x.shape[0]):
                out[i] = fn(x[i], y[i])

        _POW_KERNELS[fname] = k
    out = np.empty_like(x)
    _POW_KERNELS[fname](x, y, out)
    return out


def pow_reference(x, y):
    with np.errstate(all="ignore"):
        if x.dtype == F32:
            return np.power(x.astype(F64), y.astype(F64)).astype(F32)
        return np.power(x.astype(np.longdouble), y.astype(np.longdouble)).astype(F64)


def pow_inputs(dt, n=200_000, seed=0):
    """(x, y) pairs: the whole exponent range with moderate y; x near 1 and anywhere with
    y large enough to reach overflow and underflow (where y log x's error shows); negative
    x with integral y; and every pair of special values."""
    rng = np.random.default_rng(seed)
    fi = np.finfo(dt)
    lo, hi = np.log2(float(fi.smallest_subnormal)), float(fi.maxexp)
    big = float(np.log(fi.max)) * 1.1
    xs, ys = [], []
    x = np.exp2(rng.uniform(lo, hi, n))
    xs.append(x), ys.append(rng.uniform(-3, 3, n))
    x = 1 + rng.uniform(-0.3, 0.42, n)
    xs.append(x), ys.append(rng.uniform(-big, big, n) / np.log(x))
    x = np.exp(rng.uniform(-8, 8, n))
    xs.append(x), ys.append(rng.uniform(-big, big, n) / np.log(x))
    xs.append(-np.exp(rng.uniform(-5, 5, n))), ys.append(rng.integers(-40, 40, n))
    sp = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0,
          2.5, -2.5, fi.smallest_subnormal, -fi.smallest_subnormal, fi.max, -fi.max]
    gx, gy = np.meshgrid(sp, sp)
    xs.append(gx.ravel()), ys.append(gy.ravel())
    with np.errstate(all="ignore"):
        return (np.concatenate(xs).astype(dt), np.concatenate(ys).astype(dt))


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
def test_pow_ulp_error(dt):
    if dt == F64 and not _LD_OK:
        pytest.skip("np.longdouble is not extended precision here")
    x, y = pow_inputs(dt)
    got, ref = apply_pow(x, y), pow_reference(x, y)
    d = ulp_distance(got, ref)
    i = int(np.argmax(d))
    assert d[i] <= POW_ULP_BOUND[dt], (
        f"pow[{dt.__name__}]: {d[i]:g} ulp at x={x[i]!r}, y={y[i]!r}: got {got[i]!r}, "
        f"reference {ref[i]!r}")


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
def test_pow_special_values_are_numpys(dt):
    """C99's table (F.9.4.4), as np.power gives it: where NumPy's result is 0, +-1, inf or
    nan, the same value with the same sign; elsewhere within the ulp bound."""
    sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, -2.0, 0.5, -0.5,
                   3.0, -3.0, 2.5, -2.5], dtype=dt)
    gx, gy = (g.ravel() for g in np.meshgrid(sp, sp))
    with np.errstate(all="ignore"):
        want = np.power(gx, gy)
    got = apply_pow(gx, gy)
    edge = np.isnan(want) | np.isinf(want) | (want == 0) | (np.abs(want) == 1)
    for i in np.flatnonzero(edge):
        assert (np.isnan(got[i]) and np.isnan(want[i])) or (
            got[i] == want[i] and np.signbit(got[i]) == np.signbit(want[i])), (
            f"pow[{dt.__name__}]({gx[i]!r}, {gy[i]!r}) = {got[i]!r}, NumPy {want[i]!r}")
    assert ulp_distance(got, want).max() <= POW_ULP_BOUND[dt]


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
def test_pow_loop_vectorizes(dt):
    x = np.linspace(0.5, 2, 64).astype(dt)
    apply_pow(x, x)
    k = _POW_KERNELS[vm.POW[0 if dt == F32 else 1]]
    ir_text = k.inspect_llvm(k.signatures[0])
    assert _vector_types(ir_text, "float" if dt == F32 else "double") & VECTOR_WIDTHS[dt]
    assert not re.findall(r"call [^\n]*@(?:llvm\.)?pow", ir_text)
    if dt == F32:       # computed in float64 lanes by design: those must vectorize too
        assert _vector_types(ir_text, "double") & VECTOR_WIDTHS[F64], "scalar float64 lanes"


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
def test_sealed_pow_inlines_into_a_reassociating_sum(dt):
    """sum(x ** y) compiles with `reassoc`: the sealed pow (marked alwaysinline; LLVM left it
    a scalar call) must inline, vectorize and keep its accuracy (its own flags, not the kernel's,
    so bits may differ from the function inlined into a kernel that has it)."""
    fname = vm.POW[0 if dt == F32 else 1]
    fn = getattr(vm, vm.SEALED[fname])

    @numba.njit(error_model="numpy", fastmath=KERNEL_FASTMATH | {"reassoc"})
    def k(x, y, out):
        total = x.dtype.type(0)
        for i in range(x.shape[0]):
            value = fn(x[i], y[i])
            out[i] = value
            total += value
        return total

    x, y = pow_inputs(dt, n=2000)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        k(x, y, out)
    assert ulp_distance(out, pow_reference(x, y)).max() <= POW_ULP_BOUND[dt]
    ir_text = k.inspect_llvm(k.signatures[0])
    assert _vector_types(ir_text, "float" if dt == F32 else "double") & VECTOR_WIDTHS[dt]
    assert not re.findall(r"call [^\n]*@_ZN13xlanb_runtime\S*sealed_pow", ir_text), "a call left"


# ---------------------------------------------------------------------------
# atan2 (binary: vm.ATAN2)
# ---------------------------------------------------------------------------

# measured on the dev machine: 2 ulp for both (+1 slack)
ATAN2_ULP_BOUND = {F32: 3, F64: 3}
_ATAN2_KERNELS = {}


def apply_atan2(y, x, fastmath=KERNEL_FASTMATH, sealed=False):
    """out[i] = atan2(y[i], x[i]) in a kernel compiled like a generated one; `sealed`: the
    sealed copy, summed in a loop compiled with `reassoc` (a fused reduction)."""
    fname = vm.ATAN2[0 if x.dtype == F32 else 1]
    key = fname, sealed
    if key not in _ATAN2_KERNELS:
        fn = getattr(vm, vm.SEALED[fname] if sealed else fname)

        @numba.njit(error_model="numpy", fastmath=fastmath | {"reassoc"})
        def summing(y, x, out):
            total = x.dtype.type(0)
            for i in range(x.shape[0]):
                value = fn(y[i], x[i])
                out[i] = value
                total += value
            return total

        @numba.njit(error_model="numpy", fastmath=fastmath)
        def storing(y, x, out):
            for i in range(x.shape[0]):
                out[i] = fn(y[i], x[i])

        _ATAN2_KERNELS[key] = summing if sealed else storing
    out = np.empty_like(x)
    _ATAN2_KERNELS[key](y, x, out)
    return out


def atan2_inputs(dt, n=100_000, seed=0):
    """(y, x): normal pairs, ratios across 60 binades of either sign, ratios around the
    reduction's tan(pi/8) and 1, the whole exponent range (subnormals included) and every
    pair of special values."""
    rng = np.random.default_rng(seed)
    fi = np.finfo(dt)
    lo, hi = np.log2(float(fi.smallest_subnormal)), float(fi.maxexp) - 1
    sign = lambda: rng.choice([-1.0, 1.0], n)
    t = np.concatenate([np.linspace(0.40, 0.43, n), np.linspace(0.99, 1.01, n)])
    ys = [rng.standard_normal(n), np.exp2(rng.uniform(-30, 30, n)) * sign(), t,
          np.exp2(rng.uniform(lo, hi, n)) * sign()]
    xs = [rng.standard_normal(n), np.exp2(rng.uniform(-30, 30, n)) * sign(), np.ones(2 * n),
          np.exp2(rng.uniform(lo, hi, n)) * sign()]
    sp = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, -0.5, fi.max, -fi.max,
          fi.smallest_subnormal, -fi.tiny]
    gy, gx = np.meshgrid(sp, sp)
    with np.errstate(all="ignore"):
        return (np.concatenate(ys + [gy.ravel()]).astype(dt),
                np.concatenate(xs + [gx.ravel()]).astype(dt))


def atan2_reference(y, x):
    with np.errstate(all="ignore"):
        if x.dtype == F32:
            return np.arctan2(y.astype(F64), x.astype(F64)).astype(F32)
        return np.arctan2(y.astype(np.longdouble), x.astype(np.longdouble)).astype(F64)


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
def test_atan2_ulp_error(dt):
    if dt == F64 and not _LD_OK:
        pytest.skip("np.longdouble is not extended precision here")
    y, x = atan2_inputs(dt)
    got, ref = apply_atan2(y, x), atan2_reference(y, x)
    d = ulp_distance(got, ref)
    i = int(np.argmax(d))
    assert d[i] <= ATAN2_ULP_BOUND[dt], (
        f"atan2[{dt.__name__}]: {d[i]:g} ulp at y={y[i]!r}, x={x[i]!r}: got {got[i]!r}, "
        f"reference {ref[i]!r}")


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
def test_atan2_special_values_are_numpys(dt):
    """C99's table (F.9.1.4) as np.arctan2 gives it: +-0 and +-pi by the signs of zeros,
    +-pi/4 and +-3pi/4 for two infinities, nan for a nan; the sign of a zero result too
    (a kernel's `nsz` could drop it; this one keeps it)."""
    sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5, -0.5], dtype=dt)
    gy, gx = (g.ravel() for g in np.meshgrid(sp, sp))
    want = np.arctan2(gy, gx)
    got = apply_atan2(gy, gx)
    for i in range(gy.size):
        assert (np.isnan(got[i]) and np.isnan(want[i])) or (
            ulp_distance(got[i:i + 1], want[i:i + 1])[0] <= 1 and
            np.signbit(got[i]) == np.signbit(want[i])), (
            f"atan2[{dt.__name__}]({gy[i]!r}, {gx[i]!r}) = {got[i]!r}, NumPy {want[i]!r}")


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
def test_atan2_loop_vectorizes(dt):
    """The scalar libm atan2 it replaces kept NumPy's arctan 20-40x ahead (1e6 float32:
    17 ms against 0.46)."""
    x = np.linspace(0.5, 2, 64).astype(dt)
    apply_atan2(x, x)
    k = _ATAN2_KERNELS[vm.ATAN2[0 if dt == F32 else 1], False]
    ir_text = k.inspect_llvm(k.signatures[0])
    assert _vector_types(ir_text, "float" if dt == F32 else "double") & VECTOR_WIDTHS[dt]
    assert not re.findall(r"call [^\n]*@atan", ir_text)
    if dt == F32:
        assert "double" not in ir_text, "float32 code promoted to double"


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
def test_sealed_atan2_in_a_reassociating_sum_equals_the_inlined_function(dt):
    """A fused reduction over atan2 (compiled with `reassoc`) calls its sealed copy: the same
    values bit for bit, and the loop still vectorizes."""
    y, x = atan2_inputs(dt, n=2000)
    np.testing.assert_array_equal(apply_atan2(y, x, sealed=True), apply_atan2(y, x))
    k = _ATAN2_KERNELS[vm.ATAN2[0 if dt == F32 else 1], True]
    ir_text = k.inspect_llvm(k.signatures[0])
    assert _vector_types(ir_text, "float" if dt == F32 else "double") & VECTOR_WIDTHS[dt]


# ---------------------------------------------------------------------------
# fmod / remainder (binary: vm.REMAINDER is np.remainder's; np.fmod reaches it through
# the front end on |x|, |y|)
# ---------------------------------------------------------------------------

def apply_binary(fname, x, y, sealed=False):
    """out[i] = fn(x[i], y[i]), compiled like a generated kernel (`sealed`: the sealed copy,
    in a loop compiled with `reassoc`)."""
    fn = getattr(vm, vm.SEALED[fname] if sealed else fname)
    fastmath = KERNEL_FASTMATH | ({"reassoc"} if sealed else set())

    @numba.njit(error_model="numpy", fastmath=fastmath)
    def kernel(x, y, out):
        for i in range(x.shape[0]):
            out[i] = fn(x[i], y[i])

    out = np.empty_like(x)
    kernel(x, y, out)
    return out


def fmod_inputs(dt, n=200_000, seed=4):
    """Quotients below 2^52 (the one-step case), across the whole exponent range of both
    operands (subnormals, quotients past 2^1000: the scaled steps), either sign, and every
    pair of special values."""
    rng = np.random.default_rng(seed)
    fi = np.finfo(dt)
    lo, hi = np.log2(float(fi.smallest_subnormal)), float(fi.maxexp) - 1
    sign = lambda: rng.choice([-1.0, 1.0], n)
    xs = [rng.uniform(-1e4, 1e4, n), np.exp2(rng.uniform(lo, hi, n)) * sign(),
          np.arange(-n // 2, n // 2) * 0.5]
    ys = [rng.uniform(-10, 10, n), np.exp2(rng.uniform(lo, hi, n)) * sign(),
          np.full(n, 1.5)]
    sp = [0.0, -0.0, 1.0, -2.5, 7.0, np.inf, -np.inf, np.nan, fi.max, -fi.max, fi.tiny,
          fi.smallest_subnormal, 3 * fi.smallest_subnormal]
    gx, gy = np.meshgrid(sp, sp)
    with np.errstate(all="ignore"):
        return (np.concatenate(xs + [gx.ravel()]).astype(dt),
                np.concatenate(ys + [gy.ravel()]).astype(dt))


@pytest.mark.parametrize("dt", [F32, F64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", ["fmod", "remainder"])
def test_fmod_and_remainder_are_numpys_bit_for_bit(name, dt):
    """Both are exact (no rounding at all), so equal to NumPy's, sign of zero included,
    and remainder's sealed copy (a reassociating reduction's) gives the same bits."""
    x, y = fmod_inputs(dt)
    fname = f"{name}_{'f32' if dt == F32 else 'f64'}"
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x, y)
    sealed = [apply_binary(fname, x, y, sealed=True)] if fname in vm.SEALED else []
    for got in [apply_binary(fname, x, y)] + sealed:
        same = (got == want) & (np.signbit(got) == np.signbit(want)) | \
            np.isnan(got) & np.isnan(want)
        i = int(np.argmin(same))
        assert same.all(), f"{fname}({x[i]!r}, {y[i]!r}) = {got[i]!r}, NumPy {want[i]!r}"
