"""Complex numbers (complex64 / complex128) against NumPy: compiled (`jit`), auto-clustered
(`must_compile=False`, which must compile them too: no break) and interpreted
(`disable_jit`).

Tolerances come from the dtype (tests/tolerance.py): ||got - numpy|| <= k eps sqrt(n)
||numpy||, n the longest chain of roundings (a sum's length, a dot's contraction).  Complex
multiply and divide round several times per element, and NumPy's complex functions (C99
csqrt, cexp, ...) and Numba's (CPython's cmath) each sit within a few ulp: k = 16 covers
both for elementwise code, power (exp(y log x)) gets k = 64.  Selections, comparisons and
the parts of an exact value are compared exactly.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import xlanb
from xlanb.errors import ComplexGradientError, UnsupportedNumPyFunctionError
from tolerance import assert_close, eps_of

DTYPES = [np.complex64, np.complex128]
MODES = ["jit", "auto", "interp"]
N = 24                        # elementwise operands; matrices are (N//4, N//3) and so on


def cplx(dtype, shape, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    re, im = scale * rng.standard_normal((2,) + tuple(np.atleast_1d(shape)))
    return (re + 1j * im).astype(dtype)


def real_of(dtype):
    return np.finfo(dtype).dtype


def run(fn, args, mode):
    """fn(*args) the way `mode` runs it; auto-clustering must not break for complex."""
    if mode == "interp":
        with xlanb.disable_jit():
            return xlanb.jit(fn)(*args)
    jitted = xlanb.jit(fn, must_compile=(mode == "jit"))
    result = jitted(*args)
    if mode == "auto":
        assert not jitted.report.breaks, f"fell back to NumPy: {jitted.report.breaks}"
    return result


def check(fn, args, mode, n=1, k=16.0, exact=False):
    """Every output of `fn` against NumPy: dtype, shape, value."""
    with np.errstate(all="ignore"):                  # NaN compares: NumPy warns, we don't
        expected = fn(*args)
    got = run(fn, args, mode)
    if not isinstance(expected, tuple):
        expected, got = (expected,), (got,)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype, f"output {i}: dtype {g.dtype}, NumPy {e.dtype}"
        assert g.shape == e.shape, f"output {i}: shape {g.shape}, NumPy {e.shape}"
        if exact:
            np.testing.assert_array_equal(g, e, err_msg=f"output {i}")
        else:
            assert_close(g, e, n=n, k=k, err_msg=f"output {i}")


pytestmark = pytest.mark.parametrize("mode", MODES)
each_dtype = pytest.mark.parametrize("dtype", DTYPES)


# -- arithmetic and promotion ----------------------------------------------------------------

@each_dtype
def test_arithmetic(dtype, mode):
    x, y = cplx(dtype, N, 0), cplx(dtype, N, 1)
    check(lambda x, y: (x + y, x - y, x * y, x / y, -x, +x), (x, y), mode)


@each_dtype
def test_powers(dtype, mode):
    x, y = cplx(dtype, N, 0), cplx(dtype, N, 1, scale=0.5)
    check(lambda x: (x ** 2, x ** 3, x * x * x, x ** -1, np.square(x)), (x,), mode)
    check(lambda x, y: (x ** 2.5, x ** y, x ** 0.5, np.power(x, 1.5 + 0.5j)), (x, y), mode,
          k=64.0)


@each_dtype
@pytest.mark.parametrize("other", [np.float32, np.float64, np.int32, np.int64])
def test_mixed_real_complex_promotion(dtype, mode, other):
    """NumPy's promotion: float32 * complex64 -> complex64, float64 or int64 -> complex128."""
    x = cplx(dtype, N, 0)
    r = (np.arange(N) - N // 2).astype(other)
    check(lambda x, r: (x * r, r - x, r / x, x + r), (x, r), mode)


@each_dtype
def test_python_scalars_are_weak(dtype, mode):
    x = cplx(dtype, N, 0)
    check(lambda x: (x * 2, x + 1.5, x * (2 - 0.5j), 1j * x, x / 3), (x,), mode)


@each_dtype
def test_real_array_with_complex_scalar(dtype, mode):
    r = np.linspace(-2, 2, N).astype(real_of(dtype))
    check(lambda r: (r + 1j, r * (0.5 - 2j), r ** 2 + 0j), (r,), mode)


# -- comparisons -----------------------------------------------------------------------------

def tie_data(dtype):
    """Pairs with equal real parts, equal values, and NaNs in either part."""
    nan = np.nan
    x = np.array([1 + 2j, 1 + 2j, 1 + 3j, 2 + 0j, 1 + 1j, complex(nan, 0), complex(1, nan),
                  complex(1, nan), 3 - 1j, -1 + 5j, 0j, -0.0 + 0j], dtype)
    y = np.array([1 + 2j, 1 + 3j, 1 + 2j, 1 + 9j, 2 - 9j, 1 + 0j, 0 + 0j, 2 + 0j,
                  complex(nan, 1), -1 + 5j, -0.0 + 0j, 0j], dtype)
    return x, y


@each_dtype
def test_equality(dtype, mode):
    x, y = tie_data(dtype)
    check(lambda x, y: (x == y, x != y, x == x, np.equal(x, 1 + 2j)), (x, y), mode,
          exact=True)


@each_dtype
def test_order_is_numpy_lexicographic(dtype, mode):
    x, y = tie_data(dtype)
    check(lambda x, y: (x < y, x <= y, x > y, x >= y), (x, y), mode, exact=True)


@each_dtype
def test_maximum_minimum_fmax_fmin(dtype, mode):
    x, y = tie_data(dtype)
    check(lambda x, y: (np.maximum(x, y), np.minimum(x, y), np.fmax(x, y), np.fmin(x, y)),
          (x, y), mode, exact=True)


@each_dtype
def test_nan_inf_predicates(dtype, mode):
    inf, nan = np.inf, np.nan
    x = np.array([1 + 1j, complex(inf, 0), complex(0, -inf), complex(inf, nan),
                  complex(nan, inf), complex(nan, 0), complex(0, nan), 0j], dtype)
    check(lambda x: (np.isnan(x), np.isinf(x), np.isfinite(x), np.logical_not(x)), (x,),
          mode, exact=True)


# -- parts -----------------------------------------------------------------------------------

@each_dtype
def test_abs_is_real(dtype, mode):
    x = cplx(dtype, N, 0)
    check(lambda x: (np.abs(x), abs(x), np.absolute(x)), (x,), mode)


def test_abs_of_complex128_vectorizes_as_numpys_loop(mode):
    """|z| of complex128 is NumPy's vector loop (larger * sqrt(1 + ratio**2)) written with
    selects, not Numba's hypot call per element (12x slower: mandelbrot's |Z| < 2 every
    step); within an ulp of NumPy's hypot, overflow-free, inf where a part is inf."""
    z = cplx(np.complex128, N, 4) * np.logspace(-300, 300, N)
    check(lambda z: np.abs(z) < 2.0 * np.abs(z[::-1]), (z,), mode, exact=True)
    check(lambda z: np.abs(z), (z,), mode, k=1.0)
    if mode == "jit":
        compiled = xlanb.jit(lambda z: np.abs(z) + 1.0).lower(z).compile()
        [kernel] = [k for k in compiled.kernels if k.kind != "library"]
        assert "cabs64(" in kernel.source and "abs(v" not in kernel.source


@each_dtype
def test_conjugate(dtype, mode):
    x = cplx(dtype, N, 0)
    check(lambda x: (np.conj(x), np.conjugate(x), x * np.conj(x), x.conj(), x.conjugate(),
                     x.conj().T.real), (x,), mode)


@each_dtype
def test_real_imag_functions(dtype, mode):
    x = cplx(dtype, (4, 6), 0)
    check(lambda x: (np.real(x), np.imag(x), np.real(x) * np.imag(x), np.real(x * 1j)),
          (x,), mode)


def _attributes_lowered() -> bool:
    """Whether `Tracer.real` / `.imag` use `lowering.complex_numbers.real` / `imag`."""
    try:
        with xlanb.disable_jit():
            xlanb.jit(lambda z: z.imag)(np.ones(1, np.complex128))
        return True
    except UnsupportedNumPyFunctionError:
        return False


attributes = pytest.mark.skipif(
    not _attributes_lowered(), reason="x.real / x.imag on a Tracer do not call "
    "xlanb.tracing.lowering.complex_numbers.real / imag yet (xlanb/tracing/tracer.py)")


@attributes
@each_dtype
def test_real_imag_attributes(dtype, mode):
    x = cplx(dtype, (4, 6), 0)
    r = np.linspace(-1, 1, 6).astype(real_of(dtype))
    check(lambda x, r: (x.real, x.imag, x.real * x.imag + r.real, r.imag, x.T.real,
                        (x * 1j).imag), (x, r), mode)


@each_dtype
def test_np_real_and_np_imag_are_views_as_in_numpy(dtype, mode):
    """np.real(z) is z.real: a write through it reaches the argument."""
    def fn(z):
        np.real(z)[1:] = 0
        np.imag(z)[0] *= 2
        return np.real(z).sum() + np.imag(z)
    mine, theirs = cplx(dtype, 5, 0), cplx(dtype, 5, 0)
    got = run(fn, (mine,), mode)
    assert_close(got, fn(theirs))
    np.testing.assert_array_equal(mine, theirs)              # the argument after the call


@each_dtype
def test_real_imag_of_real_arrays(dtype, mode):
    r = np.linspace(-1, 1, N).astype(real_of(dtype))
    check(lambda r: (np.real(r), np.imag(r), np.real(r) + 1), (r,), mode, exact=True)


@each_dtype
def test_angle(dtype, mode):
    x = cplx(dtype, N, 0)
    r = np.linspace(-2, 2, N).astype(real_of(dtype))
    check(lambda x, r: (np.angle(x), np.angle(x, deg=True), np.angle(r)), (x, r), mode)


@each_dtype
def test_iscomplexobj_and_friends(dtype, mode):
    x = cplx(dtype, N, 0)
    x[::3] = x[::3].real

    def fn(x):
        scale = 2.0 if np.iscomplexobj(x) and not np.isrealobj(x) else 3.0
        same = np.iscomplexobj(np.real(x))
        return x * scale, np.iscomplex(x), np.isreal(x), np.real(x) * (1.0 if same else 4.0)
    check(fn, (x,), mode, exact=True)


# -- transcendental --------------------------------------------------------------------------

@each_dtype
def test_exp_log_sqrt(dtype, mode):
    x = cplx(dtype, N, 0)
    check(lambda x: (np.exp(x), np.log(x), np.sqrt(x), np.log10(x), np.exp2(x)), (x,), mode)


@each_dtype
def test_trigonometric(dtype, mode):
    x = cplx(dtype, N, 0)
    check(lambda x: (np.sin(x), np.cos(x), np.tan(x), np.tanh(x)), (x,), mode)


@each_dtype
def test_tan_with_large_imaginary_part(dtype, mode):
    """tan = -i tanh(iz) stays finite where sin/cos overflow."""
    x = np.array([0.5 + 200j, -1 - 800j, 2 + 30j], dtype)
    check(lambda x: np.tan(x), (x,), mode)


@each_dtype
def test_reciprocal(dtype, mode):
    x = cplx(dtype, N, 0)
    check(lambda x: (np.reciprocal(x), 1 / x), (x,), mode)


# -- special values: NaN and infinities where NumPy puts them ---------------------------------

SPECIAL_PARTS = [0.0, -0.0, 1.5, -2.0, 800.0, np.inf, -np.inf, np.nan]
SPECIAL = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "tanh": np.tanh, "log10": np.log10, "exp2": np.exp2,
    "reciprocal": np.reciprocal, "abs": np.abs, "angle": np.angle,
    "power-int": lambda z: (z ** 3, z ** -2, z ** 2),
}
SPECIAL_PAIRS = {
    "multiply": lambda z, w: z * w, "divide": lambda z, w: z / w, "power": lambda z, w: z ** w,
}
# z**w = exp(w log z): its phase w log z (up to 800 log 800 = 5.3e3 radians on this grid) is
# rounded in the dtype, a relative error of |w log z| eps in NumPy's result and in ours.
SPECIAL_K = {"power": 2e4}


def special_values(dtype, pairs: bool):
    z = np.array([complex(a, b) for a in SPECIAL_PARTS for b in SPECIAL_PARTS], dtype)
    if not pairs:
        return (z,)
    return np.repeat(z, z.size), np.tile(z, z.size)          # every (z, w) pair


@each_dtype
@pytest.mark.parametrize("name", list(SPECIAL) + list(SPECIAL_PAIRS))
def test_special_values(dtype, mode, name):
    """Every part of every result as NumPy's: the same NaN and inf places and values
    (finite parts within rounding; the sign of a zero is not compared)."""
    fn = SPECIAL.get(name) or SPECIAL_PAIRS[name]
    args = special_values(dtype, name in SPECIAL_PAIRS)
    with np.errstate(all="ignore"):
        expected = fn(*args)
    got = run(fn, args, mode)
    expected, got = (expected, got) if isinstance(expected, tuple) else ((expected,), (got,))
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        assert_parts_match(g, e, SPECIAL_K.get(name, 16) * eps_of(dtype=g.dtype))


def assert_parts_match(got, want, tol):
    """Each part non-finite where NumPy's is, with its value; finite parts within `tol`
    relative to |want| element by element (independent elements, nothing cancels; a
    norm over the array would overflow on results near the dtype's largest value)."""
    magnitude = np.abs(want).astype(np.float64)
    for part in (np.real, np.imag):
        g, w = part(got), part(want)
        bad_g, bad_w = ~np.isfinite(g), ~np.isfinite(w)
        np.testing.assert_array_equal(bad_g, bad_w, err_msg=f"{part.__name__}: non-finite at")
        np.testing.assert_array_equal(g[bad_g], w[bad_w], err_msg=f"{part.__name__} values")
        ok = ~bad_w & (magnitude > 0)
        err = np.abs(g[ok].astype(np.float64) - w[ok]) / magnitude[ok]
        assert err.max(initial=0) <= tol, f"{part.__name__}: relative error {err.max():.3g}"
        np.testing.assert_array_equal(g[~bad_w & (magnitude == 0)], 0)


# -- reductions ------------------------------------------------------------------------------

@each_dtype
def test_sum_prod_mean(dtype, mode):
    x = cplx(dtype, (6, 40), 0)
    check(lambda x: (x.sum(), np.sum(x, axis=0), np.sum(x, axis=1, keepdims=True),
                     np.mean(x), x.mean(axis=1)), (x,), mode, n=x.size)
    small = cplx(dtype, (3, 5), 1, scale=0.8)
    check(lambda x: (np.prod(x), np.prod(x, axis=1), np.multiply.reduce(x)), (small,), mode,
          n=small.size, k=32.0)


@each_dtype
def test_var_std_are_real(dtype, mode):
    x = cplx(dtype, (6, 40), 0)
    check(lambda x: (np.var(x), x.std(axis=1), np.var(x, axis=0, ddof=1)), (x,), mode,
          n=x.size)


@each_dtype
def test_norm(dtype, mode):
    x = cplx(dtype, (6, 40), 0)
    check(lambda x: (np.linalg.norm(x), np.linalg.norm(x, axis=1)), (x,), mode, n=x.size)


@each_dtype
def test_reductions_of_a_fused_chain(dtype, mode):
    """A row kernel: centred rows, their magnitudes summed."""
    x = cplx(dtype, (8, 64), 0)
    check(lambda x: np.abs(x - x.mean(axis=1, keepdims=True)).sum(axis=1), (x,), mode,
          n=64)


# -- contractions ----------------------------------------------------------------------------

@each_dtype
def test_matmul_and_dot(dtype, mode):
    a, b = cplx(dtype, (6, 8), 0), cplx(dtype, (8, 5), 1)
    v = cplx(dtype, 8, 2)
    check(lambda a, b, v: (a @ b, np.dot(a, b), np.matmul(a, v), a @ b * 2 + 1j, v @ v),
          (a, b, v), mode, n=8)


@each_dtype
def test_batched_matmul_and_einsum(dtype, mode):
    a, b = cplx(dtype, (3, 6, 8), 0), cplx(dtype, (3, 8, 5), 1)
    check(lambda a, b: (a @ b, np.einsum("bij,bjk->bik", a, b), np.einsum("bij->", a),
                        np.einsum("bij,bij->b", a, np.conj(a))), (a, b), mode, n=8 * 6)


@each_dtype
def test_vdot_conjugates_the_first_operand(dtype, mode):
    a, b = cplx(dtype, (4, 6), 0), cplx(dtype, (4, 6), 1)
    check(lambda a, b: (np.vdot(a, b), np.vdot(b, a), np.vdot(a, a)), (a, b), mode,
          n=a.size)


@each_dtype
def test_real_matrix_times_complex(dtype, mode):
    a = np.linspace(-1, 1, 48).reshape(6, 8).astype(real_of(dtype))
    b = cplx(dtype, (8, 5), 1)
    check(lambda a, b: (a @ b, np.dot(b.T, a.T)), (a, b), mode, n=8)


# -- casts -----------------------------------------------------------------------------------

@each_dtype
def test_astype_to_complex(dtype, mode):
    r = np.linspace(-2, 2, N).astype(np.float32)
    check(lambda r: (np.astype(r, dtype), r.astype(dtype), r.astype(complex)), (r,), mode,
          exact=True)


@each_dtype
def test_complex_to_complex_casts(dtype, mode):
    x = cplx(dtype, N, 0)
    other = np.complex128 if dtype == np.complex64 else np.complex64
    check(lambda x: np.astype(x, other), (x,), mode, exact=True)


@each_dtype
@pytest.mark.parametrize("target", [np.float32, np.float64, np.int64, np.bool_])
def test_cast_to_real_takes_the_real_part_and_warns(dtype, mode, target):
    x = cplx(dtype, N, 0, scale=4.0)
    x[0] = 0j
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        expected = x.astype(target)
    if target is np.bool_:                   # NumPy: nonzero, no warning
        with warnings.catch_warnings():
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            got = run(lambda x: np.astype(x, target), (x,), mode)
    else:
        with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
            got = run(lambda x: np.astype(x, target), (x,), mode)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


# np.round rounds each part as a float; np.clip is NumPy's lexicographic maximum, then
# minimum (a NaN in either part wins): both fuse.
ROUND_CLIP = {
    "round": lambda x: np.round(x, 1),
    "round 0": lambda x: np.round(x),
    "clip": lambda x: np.clip(x, 0, 1 + 1j),
    "clip upper": lambda x: x.clip(None, 0.5 - 0.5j),
}

# NumPy orders complex values lexicographically (real part, then imaginary; NaNs first):
# NumPy's own function runs as a library call.
ORDERED = {
    "max": lambda x: x.max(),
    "min": lambda x: np.min(x, axis=0, keepdims=True),
    "argmax": lambda x: np.argmax(x),
    "argmin": lambda x: np.argmin(x, axis=1),
    "maximum.reduce": lambda x: np.maximum.reduce(x),
    "where": lambda x: np.max(x, axis=0, where=x.real > 0, initial=-5 + 0j),
}


@each_dtype
@pytest.mark.parametrize("name", list(ORDERED))
def test_ordered_reductions_are_numpys(dtype, mode, name):
    x = cplx(dtype, (5, 3), 0)
    x[1] = x[0].real + 1j * x[2].imag            # ties in the real part
    x[3, 1] = complex(np.nan, 0.0)
    fn = ORDERED[name]
    expected, got = fn(x), run(fn, (x,), mode)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(got, expected)


@each_dtype
@pytest.mark.parametrize("name", list(ROUND_CLIP))
def test_round_and_clip_are_numpys(dtype, mode, name):
    fn = ROUND_CLIP[name]
    x = cplx(dtype, (5, 3), 0)
    x[3, 1] = complex(np.nan, 0.0)
    x[1, 2] = complex(0.5, np.nan)
    with np.errstate(invalid="ignore"):
        expected = fn(x)
    got = run(fn, (x,), mode)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    assert_close(got, expected)


# -- gradients -------------------------------------------------------------------------------

def loss_through_complex(x, w):
    z = np.exp(1j * x * w) * (x + 2j) / (1.5 - 1j * x)
    return (np.abs(z ** 2).sum() + np.real(z * np.conj(z + 1)).sum()
            + np.imag(np.sqrt(z)).sum() + np.angle(z).sum() + np.abs(np.vdot(z, z + x)))


def test_gradient_through_complex_steps(mode):
    """Real inputs, a real loss: the gradient is the real one (central differences, in
    float64 and so through complex128 steps)."""
    x, w, h = np.linspace(0.3, 1.2, 5), 0.7, 1e-6
    grad = xlanb.grad(loss_through_complex, argnums=(0, 1))
    if mode == "interp":
        with xlanb.disable_jit():
            gx, gw = grad(x, w)
    else:
        gx, gw = xlanb.jit(grad, must_compile=(mode == "jit"))(x, w)
    eye = np.eye(x.size)
    numeric = np.array([(loss_through_complex(x + h * e, w)
                         - loss_through_complex(x - h * e, w)) / (2 * h) for e in eye])
    numeric_w = (loss_through_complex(x, w + h) - loss_through_complex(x, w - h)) / (2 * h)
    assert_close(gx, numeric, tol=1e-7)      # central differences: h^2 and eps/h ~ 1e-10
    assert_close(gw, numeric_w, tol=1e-7)


@each_dtype
def test_grad_of_complex_input_or_loss_is_a_named_error(dtype, mode):
    z = cplx(dtype, 4, 0)
    x = np.linspace(0, 1, 4)
    wrap = (lambda g: g) if mode == "interp" else \
        (lambda g: xlanb.jit(g, must_compile=(mode == "jit")))
    with pytest.raises(ComplexGradientError, match="real and imaginary parts"):
        wrap(xlanb.grad(lambda z: np.abs(z).sum()))(z)
    with pytest.raises(ComplexGradientError, match=f"returns complex128"):
        wrap(xlanb.grad(lambda x: (x * 1j).sum()))(x)
