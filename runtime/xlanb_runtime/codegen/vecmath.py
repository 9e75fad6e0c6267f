"""Vectorizable scalar math for generated Numba loop kernels.

Why this module exists
----------------------
PyPI's llvmlite is not SVML-patched, so ``math.exp`` / ``np.tanh`` / ``math.erf``
inside an ``@njit`` loop become scalar libm calls, and a single such call stops
LLVM's loop vectorizer for the whole loop (see PLATFORM.md, "Vector math: no
SVML with PyPI's llvmlite").  This module owns replacements written only with
arithmetic, compares, selects and a few LLVM intrinsics (``llvm.rint``,
``llvm.fma``, bitcasts), so that after inlining into a ``for i in range(n)``
kernel LLVM vectorizes them (see "Vectorization" below).

Generated kernels import the per-dtype functions by name::

    from xlanb_runtime.codegen.vecmath import exp_f32, tanh_f32

and call them inside loops compiled with ``njit(error_model="numpy",
fastmath={"nsz", "afn"}, cache=True)`` (codegen/cpu.py).  ``VECMATH`` maps an
op name to its ``(float32 name, float64 name)``.  The functions are
``njit(inline="always")``: Numba inlines them into the caller's IR, so they get
the caller's fastmath flags and vectorize with it; called from Python or
non-inlining callers they still work (compiled with ``error_model="numpy"`` and
``fastmath={"nsz"}``).  No ``contract`` anywhere: every multiply-add that may fuse is an
explicit ``muladd`` (llvm.fmuladd: one fma where the CPU has it), so a function's values
do not depend on its caller's flags, and the caller's own arithmetic rounds as NumPy's.

Methods: Cody-Waite range reduction + minimax polynomials (coefficients fitted
for this module with a Remez exchange in mpmath at 50 digits, then rounded to
the dtype), exponents assembled/extracted with integer bit operations.  All
special values follow NumPy: exp(nan)=nan, exp(inf)=inf, exp(-inf)=0,
log(0)=-inf, log(x<0)=nan, log1p(-1)=-inf, tanh(+-inf)=+-1, sigmoid(+-inf)=1/0,
sin/cos/tan(+-inf)=nan, asin/acos(|x|>1)=nan, erf(+-inf)=+-1; subnormal inputs and
outputs are handled.
Differences from NumPy: the sign of a zero result is not always kept
(callers use ``nsz`` anyway), NaN payloads are not preserved.

* exp:     n = rint(x/ln2), r = x - n*ln2 (2-part split), e^r = 1 + r + r^2 P4(r)
           (P9 for f64), result scaled by 2^n as two exact power-of-two factors
           so that overflow to inf and gradual underflow are right.
* exp2:    n = rint(x), f = x - n (exact), e^(f ln2) with f ln2 as r + lo (the product's
           rounding error by fma, ln2's tail) through exp's polynomial and scaling.
* expm1:   same reduction, expm1(r) = r + r^2 P5(r) (P10), recombined as
           2*(2^(n-1)*expm1(r) + (2^(n-1) - 1/2)) (exact for small n).
* log:     x = 2^k m, m in [sqrt(2)/2, sqrt(2)), f = m-1; f32: log1p(f) =
           f - f^2/2 + f^3 P7(f); f64: s = f/(2+f), log1p(f) = f - (f^2/2 -
           s (f^2/2 + s^2 P6(s^2))).  k*ln2 added with a 2-part split.
* log1p:   same kernel on u = 1+x, plus the rounding error of 1+x: (x-(u-1))/u (f64:
           times a float32 reciprocal of u, 24 bits being plenty for that correction).
* tanh:    t = expm1(-2|x|), tanh|x| = -t/(t+2), sign restored.
* sigmoid: e = exp(-|x|); 1/(1+e) for x>=0, e/(1+e) for x<0 (no overflow and
           accurate in both tails; NumPy's 1/(1+exp(-x)) underflows to 0 early).
* sin/cos: n = rint(x*2/pi), r = x - n*pi/2 with pi/2 in 3 parts and llvm.fma
           (exact products), sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2),
           quadrant chosen with float compares (no int conversion).  Accurate for
           |x| <= TRIG_MAX_F32 / TRIG_MAX_F64; beyond that the result stays in
           [-1, 1] but is NOT accurate (no Payne-Hanek reduction).
* sinh/cosh: one exponential of |x| (expm1 for sinh), (m + m/(m+1))/2 and (e + 1/e)/2,
           past 88 / 709 of |x|/2 squared (no early overflow).
* tan:     sin r / cos r (or -cos r / sin r in an odd quadrant) from sin/cos's reduction.
* asin:    |x| <= 1/2: x + x z P(z), z = x^2; past it pi/2 - 2 asin(s), s = sqrt((1-|x|)/2),
           the same P on z = s^2 <= 1/4.  acos: pi/2 - asin x, 2 asin(s), pi - 2 asin(s).
* atan:    atan2's reduction and polynomial with one division: u = |x|, (|x|-1)/(|x|+1) or
           -1/|x| by the octant, plus 0, pi/4 or pi/2.
* asinh:   |x| <= 1/2: x + x z P(z), z = x^2; past it log1p(a + (sqrt(1 + a^2) - 1)),
           no division.  acosh: log1p(t + sqrt(t (t + 2))), t = x - 1.  Both: log(2a)
           where a^2 would overflow.  atanh: log1p(2a / (1 - a)) / 2.
* erf:     |x| < 1: x + x P(x^2); |x| >= 1: 1 - exp(-x^2) G(.), G ~ erfc(x) e^(x^2)
           fitted as a polynomial in (|x|-2.5) (f32) or in 1/(|x|+3) (f64).
* pow:     (binary, ``POW``) f32: 2^(y log2|x|) in float64 lanes, log2 as
           k + 2 atanh(f/(2+f)) log2(e), 2^r by a polynomial, one rounding to float32 at
           the end; f64: exp(y log|x|) with a double-double log (atanh series to s^23) and
           exp of hi + lo.  Then C99's table (F.9.4.4) as np.power has it: signs for
           negative x and odd integral y, nan for negative x and non-integral y, 1 for
           y == 0 or x == 1.  1 ulp measured for both (|y log x| up to overflow).
           Throughput, 1M elements, 1 thread: f32 ~1.3 ms, f64 ~3.3 ms, against NumPy's
           SVML 0.9 / 2.1 ms (the scalar libm pow these replace: ~17 ms for f64).
* atan2:   (binary, ``ATAN2``: np.arctan2)
           t = min/max of |x|, |y|, past tan(pi/8) u = (t-1)/(t+1), atan u = u + u^3
           Q(u^2), then k pi/4 +- atan u by the octant (pi/4 in two parts, one final
           rounding) and y's sign.  C99's special values (atan2(+-0, -0) = +-pi, both
           infinite +-pi/4 or +-3pi/4) as NumPy has them.  2 ulp measured for both.
           1M elements, 1 thread: f32 0.73 ms, f64 1.9 ms against NumPy's 0.70 / 2.2
           (the scalar libm atan2 these replace: 22 / 15 ms).

Accuracy (max error in ULPs against a correctly rounded reference: float64
NumPy rounded to float32 / np.longdouble or mpmath rounded to float64; the
reference rounding is included, so "1" means < 1.5 ulp).  float32: every 53rd
or 101st bit pattern of all 2^32 (4-8e7 inputs per function); float64: 4e6
random bit patterns + 2e6 uniform in the useful domain per function.  Caller
compiled with the kernel flags above on the dev machine (FMA); a caller
compiled without any fastmath flag gives the same maxima on the test grids.

    op        f32   f64
    exp        1     1      incl. subnormal results and overflow to inf
    exp2       1     1      (the same)
    expm1      1     2
    log        1     1      incl. subnormal inputs
    log1p      1     1
    tanh       2     2
    sigmoid    2     2
    sin        2     1      |x| <= TRIG_MAX_F32 = 2^20 / TRIG_MAX_F64 = 2^40
    cos        2     2      (beyond that: bounded by 1, not accurate)
    tan        3     3      (the same domain; sin r / cos r, one division)
    sinh       2     2
    cosh       2     2
    asin       2     2      (near |x| = 1/2, pi/2 - 2 asin(s) cancels a bit)
    acos       1     1
    atan       2     2
    asinh      3     2      (the series' end at 1/2)
    acosh      2     2      (incl. 1 + 2^-52: log1p of x - 1)
    atanh      2     2
    erf        1     1

tests/runtime/test_vecmath.py asserts these + 1 on dense grids and edge cases.
Vectorization: the loop vectorizer picks 256-bit vectors (``<8 x float>``,
``<4 x double>``) on the Emerald Rapids dev host (LLVM's prefer-vector-width=256
tuning for that CPU), 512-bit where the target prefers it.  No float64 <-> int64
conversion anywhere (``_pow2_f64``, ``_logsplit_f64`` use bit operations): x86 has vector
ones only with AVX-512DQ, and on AVX2 (Zen 3) LLVM splits them into a scalar conversion
per lane, which made every float64 function 2-3x slower (1 thread, in cache, ns/element
before -> after: exp_f64 sum 2.6-2.9 -> 2.0, tanh_f64 sum 2.8-5.1 -> 2.4-2.8).  Throughput
(1 core, 10^7 elements, streaming): every f32 function ~9-11 ms (erf 16 ms)
against ~8 ms for a plain `x*x` loop, i.e. close to memory bound.

Not supported: callers compiled with ``fastmath=True`` (its ``nnan``/``ninf``
fold the NaN/inf selects away and ``reassoc`` breaks the Cody-Waite and
compensated sums).

Reassociating callers (reductions): ``sealed_<name>`` is each function compiled
on its own, with this module's flags.  Numba does not inline it; LLVM does, after
linking, and LLVM keeps fast-math flags per instruction, so the function's code
never gets the caller's ``reassoc`` while the caller's accumulation does and
vectorizes.  Measured (1 thread, 10^5 elements, ``acc += sealed_f(x[i])`` under
``reassoc``): every function vectorizes (0.35-1.2 ns/element); the three LLVM would
leave as scalar calls by its cost model (``erf_f64``, ``pow_f32``, ``pow_f64``, ``atan2_f32``,
``atan2_f64``, ``asinh_f32``, ``asinh_f64``, ``acosh_f64``, ``atanh_f64``) are marked
``alwaysinline``.  Results are bit-identical to the inlined functions in a caller without
``reassoc`` and with the same other flags.

Caching note: a caller compiled with ``cache=True`` embeds these functions'
machine code; Numba's cache is keyed on the caller's file only, so after
editing this module the callers' caches must be invalidated (the code
generator should put a version string, e.g. ``VECMATH_VERSION``, into the
generated source).
"""

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = [
    "VECMATH", "VECMATH_VERSION", "REASSOC_SAFE", "TRIG_MAX_F32", "TRIG_MAX_F64",
    "f32_as_i32", "i32_as_f32", "f64_as_i64", "i64_as_f64", "rint", "fma", "muladd",
    "prefer_wide_vectors",
    "fmaximum", "fminimum",
    "exp_f32", "exp_f64", "exp2_f32", "exp2_f64", "expm1_f32", "expm1_f64", "log_f32", "log_f64",
    "log1p_f32", "log1p_f64", "tanh_f32", "tanh_f64", "sigmoid_f32",
    "sigmoid_f64", "sin_f32", "sin_f64", "cos_f32", "cos_f64", "tan_f32", "tan_f64",
    "asin_f32", "asin_f64", "acos_f32", "acos_f64", "sinh_f32", "sinh_f64", "cosh_f32",
    "cosh_f64", "atan_f32", "atan_f64", "asinh_f32", "asinh_f64", "acosh_f32", "acosh_f64",
    "atanh_f32", "atanh_f64",
    "erf_f32",
    "erf_f64", "POW", "pow_f32", "pow_f64", "ATAN2", "atan2_f32", "atan2_f64",
    "REMAINDER", "fmod_f32", "fmod_f64", "remainder_f32", "remainder_f64",
    "TRIG_LIBM", "libm_sin_f32", "libm_cos_f32", "libm_tan_f32", "libm_sin_f64",
    "libm_cos_f64", "libm_tan_f64",
]

# Bump when any function's numerics change (generated sources embed it so the
# Numba cache of their kernels is invalidated).
VECMATH_VERSION = "4"

# Functions whose accuracy holds when inlined into a caller compiled with `reassoc` (their
# range reductions use fma calls); fused reductions may only reassociate around these.
REASSOC_SAFE = frozenset({"exp_f32", "exp_f64", "fmaximum", "fminimum"})

VECMATH = {
    "exp": ("exp_f32", "exp_f64"),
    "exp2": ("exp2_f32", "exp2_f64"),
    "expm1": ("expm1_f32", "expm1_f64"),
    "log": ("log_f32", "log_f64"),
    "log1p": ("log1p_f32", "log1p_f64"),
    "tanh": ("tanh_f32", "tanh_f64"),
    "sigmoid": ("sigmoid_f32", "sigmoid_f64"),
    "sin": ("sin_f32", "sin_f64"),
    "cos": ("cos_f32", "cos_f64"),
    "tan": ("tan_f32", "tan_f64"),
    "sinh": ("sinh_f32", "sinh_f64"),
    "cosh": ("cosh_f32", "cosh_f64"),
    "asin": ("asin_f32", "asin_f64"),
    "acos": ("acos_f32", "acos_f64"),
    "atan": ("atan_f32", "atan_f64"),
    "asinh": ("asinh_f32", "asinh_f64"),
    "acosh": ("acosh_f32", "acosh_f64"),
    "atanh": ("atanh_f32", "atanh_f64"),
    "erf": ("erf_f32", "erf_f64"),
}
# The binary functions: float32 and float64 power (NumPy's np.power on floats) and atan2.
POW = ("pow_f32", "pow_f64")
ATAN2 = ("atan2_f32", "atan2_f64")
REMAINDER = ("remainder_f32", "remainder_f64")       # np.remainder, np.mod on floats

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_F32 = ir.FloatType()
_F64 = ir.DoubleType()
_SHIFTER_F64 = 1.5 * 2.0 ** 52         # x + this rounds x to an integer in the low bits
_TWO52_BITS = 0x4330000000000000        # 2.0**52

# ---------------------------------------------------------------------------
# Intrinsics: bitcasts, rint, fma, exponent assembly / extraction.
# ---------------------------------------------------------------------------


def _bitcast_intrinsic(src, dst, lldst):
    @intrinsic
    def _bc(typingctx, x):
        if x != src:
            return None

        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], lldst)

        return dst(src), codegen

    return _bc


f32_as_i32 = _bitcast_intrinsic(types.float32, types.int32, _I32)
i32_as_f32 = _bitcast_intrinsic(types.int32, types.float32, _F32)
f64_as_i64 = _bitcast_intrinsic(types.float64, types.int64, _I64)
i64_as_f64 = _bitcast_intrinsic(types.int64, types.float64, _F64)


@intrinsic
def rint(typingctx, x):
    """Round to nearest, ties to even (llvm.rint; vectorizes to vrndscale)."""
    if x not in (types.float32, types.float64):
        return None

    def codegen(context, builder, sig, args):
        lty = args[0].type
        fn = builder.module.declare_intrinsic(
            "llvm.rint", [lty], ir.FunctionType(lty, [lty]))
        return builder.call(fn, args)

    return x(x), codegen


def _nan_propagating(llvm_name: str, doc: str):
    @intrinsic
    def _extremum(typingctx, a, b):
        if a not in (types.float32, types.float64) or a != b:
            return None

        def codegen(context, builder, sig, args):
            lty = args[0].type
            fn = builder.module.declare_intrinsic(
                llvm_name, [lty], ir.FunctionType(lty, [lty, lty]))
            return builder.call(fn, args)

        return a(a, b), codegen

    _extremum.__doc__ = doc
    return _extremum


# A max/min reduction written as compares and selects that keep NaN does not vectorize
# (LLVM needs `nnan` for that); llvm.maximum/minimum reductions do (10x on softmax rows).
fmaximum = _nan_propagating("llvm.maximum", "max(a, b), NaN if either is (llvm.maximum).")
fminimum = _nan_propagating("llvm.minimum", "min(a, b), NaN if either is (llvm.minimum).")


def _multiply_add(llvm_name: str, doc: str):
    """An intrinsic a*b+c of three floats of one type, as LLVM's `llvm_name`."""
    @intrinsic
    def _multiply_add_intrinsic(typingctx, a, b, c):
        if a not in (types.float32, types.float64) or not (a == b == c):
            return None

        def codegen(context, builder, sig, args):
            lty = args[0].type
            fn = builder.module.declare_intrinsic(
                llvm_name, [lty], ir.FunctionType(lty, [lty, lty, lty]))
            return builder.call(fn, args)

        return a(a, a, a), codegen

    _multiply_add_intrinsic.__doc__ = doc
    return _multiply_add_intrinsic


# muladd: a polynomial's steps contract whatever the caller's fast-math flags, and kernels
# keep NumPy's rounding of each user multiply and add (no `contract`, codegen/cpu.py)
muladd = _multiply_add("llvm.fmuladd", "a*b+c, fused into one fma where the CPU has one, "
                       "else a multiply and an add (llvm.fmuladd).")
fma = _multiply_add("llvm.fma", "Fused a*b+c with one rounding (llvm.fma; a libm call on "
                    "CPUs without FMA).")


def _pow2_intrinsic(fty, ity, llf, lli, bias, mbits):
    @intrinsic
    def _pow2(typingctx, n):
        """2**n for an integral float n in the normal exponent range."""
        if n != fty:
            return None

        def codegen(context, builder, sig, args):
            i = builder.fptosi(args[0], lli)
            i = builder.add(i, ir.Constant(lli, bias))
            i = builder.shl(i, ir.Constant(lli, mbits))
            return builder.bitcast(i, llf)

        return fty(fty), codegen

    return _pow2


@intrinsic
def _pow2_f64(typingctx, n):
    """2**n for an integral float64 n in the normal exponent range, without a float -> int64
    conversion: AVX2 has none for vectors (vcvttpd2qq is AVX-512DQ), so LLVM would split
    every vector into scalar conversions (exp_f64 ran at 5 ns/element on Zen 3 that way).
    n + 1.5*2^52 holds 2^51 + n in its low mantissa bits; adding the bias and shifting the
    sum into the exponent field drops every bit above."""
    if n != types.float64:
        return None

    def codegen(context, builder, sig, args):
        t = builder.fadd(args[0], ir.Constant(_F64, _SHIFTER_F64))
        i = builder.add(builder.bitcast(t, _I64), ir.Constant(_I64, 1023))
        return builder.bitcast(builder.shl(i, ir.Constant(_I64, 52)), _F64)

    return types.float64(types.float64), codegen


@intrinsic
def prefer_wide_vectors(typingctx):
    """Marks the calling function `"prefer-vector-width"="512"`: LLVM's tuning for this host
    (and most AVX-512 CPUs) vectorizes 256 bits wide, and these functions are compute bound,
    so 512-bit vectors run them up to 1.6x faster (1 thread, 1M float32 exp(log(x) * c):
    1.26 -> 0.78 ms; a memory-bound copy: unchanged).  No effect where the CPU has no 512-bit
    vectors.  llvmlite validates attribute names against a fixed list without string
    attributes, hence the set.add."""
    def codegen(context, builder, sig, args):
        set.add(builder.function.attributes, '"prefer-vector-width"="512"')
        return context.get_dummy_value()

    return types.none(), codegen


_pow2_f32 = _pow2_intrinsic(types.float32, types.int32, _F32, _I32, 127, 23)


def _logsplit_intrinsic(fty, llf, lli, one_bits, sqrt_half_bits, mbits, bias):
    @intrinsic
    def _split(typingctx, x):
        """x (positive normal) -> (k, m) with x = 2**k * m, m in [sqrt(.5), sqrt(2))."""
        if x != fty:
            return None
        rty = types.UniTuple(fty, 2)

        def codegen(context, builder, sig, args):
            ix = builder.bitcast(args[0], lli)
            ix = builder.add(ix, ir.Constant(lli, one_bits - sqrt_half_bits))
            mi = builder.add(builder.and_(ix, ir.Constant(lli, (1 << mbits) - 1)),
                             ir.Constant(lli, sqrt_half_bits))
            m = builder.bitcast(mi, llf)
            return context.make_tuple(builder, rty, [_exponent_as_float(builder, ix), m])

        return rty(fty), codegen

    def _exponent_as_float(builder, ix):
        if lli is _I32:
            k = builder.sub(builder.ashr(ix, ir.Constant(lli, mbits)), ir.Constant(lli, bias))
            return builder.sitofp(k, llf)
        # float64: the biased exponent e (11 bits, more for garbage input) as the float
        # 2^52 + e by or-ing it into 2^52's mantissa, minus 2^52 + bias: exact, and no
        # int64 -> float conversion, which AVX2 lacks for vectors (see _pow2_f64)
        e = builder.lshr(ix, ir.Constant(lli, mbits))
        two52_e = builder.bitcast(builder.or_(e, ir.Constant(lli, _TWO52_BITS)), llf)
        return builder.fsub(two52_e, ir.Constant(llf, 2.0 ** 52 + bias))

    return _split


_logsplit_f32 = _logsplit_intrinsic(types.float32, _F32, _I32, 0x3F800000,
                                    0x3F3504F3, 23, 127)
_logsplit_f64 = _logsplit_intrinsic(types.float64, _F64, _I64, 0x3FF0000000000000,
                                    0x3FE6A09E667F3BCD, 52, 1023)

_vm = njit(inline="always", error_model="numpy", fastmath={"nsz"})

# ---------------------------------------------------------------------------
# Constants.  Every constant used by an _f32 function is an np.float32 so the
# float32 code stays float32 (a Python float or int literal would promote the
# expression to double).
# ---------------------------------------------------------------------------
_f4 = np.float32

_ZERO32, _HALF32, _ONE32, _TWO32 = _f4(0.0), _f4(0.5), _f4(1.0), _f4(2.0)
_ZERO64, _HALF64, _ONE64, _TWO64 = 0.0, 0.5, 1.0, 2.0
_INF32, _NAN32 = _f4(np.inf), _f4(np.nan)
_INF64, _NAN64 = np.inf, np.nan

_LOG2E32 = _f4(1.442695)
_LN2HI32 = _f4(0.693145751953125)       # ln2 to 16 bits: n*_LN2HI32 exact, |n| < 2^8
_LN2LO32 = _f4(1.4286068e-06)
_LOG2E64 = 1.4426950408889634
_LN2HI64 = 0.6931471805598903          # ln2 to 42 bits: n*_LN2HI64 exact, |n| < 2^11
_LN2LO64 = 5.497923018708371e-14

# exp / expm1 input clamps (NaN handled separately).  Below _EXP_LO the result rounds to 0:
# it is selected, and the polynomial runs on 0 instead, because an underflowing multiply
# costs a ~100-cycle microcode assist per element (a masked softmax is full of exp(-1e4)).
_EXP_HI32, _EXP_LO32 = _f4(89.0), _f4(-104.0)        # -> inf / -> 0
_EXP_HI64, _EXP_LO64 = 710.0, -746.0
_EXPM1_LO32, _EXPM1_LO64 = _f4(-30.0), -40.0        # -> -1
# exp2: at HI the result is inf (2^128, 2^1024); at LO and below it rounds to 0 (half the
# smallest subnormal, a tie to even)
_EXP2_HI32, _EXP2_LO32 = _f4(128.0), _f4(-150.0)
_EXP2_HI64, _EXP2_LO64 = 1024.0, -1075.0
_LN2_32 = _f4(0.6931472)                # ln2 rounded, and the rest of it
_LN2TAIL32 = _f4(-1.9046542e-09)
_LN2_64 = 0.6931471805599453
_LN2TAIL64 = 2.3190468138462996e-17

# Minimax coefficients (see module docstring).  P[0] is the constant term.
_EXP32 = (_f4(0.49999994), _f4(0.16666517), _f4(0.041668426), _f4(0.008369118),
          _f4(0.0013813768))
_EXPM1_32 = (_f4(0.5), _f4(0.16666667), _f4(0.041666232), _f4(0.008333285),
             _f4(0.0013949273), _f4(0.0001990834))
_LOG32 = (_f4(0.3333333), _f4(-0.2500082), _f4(0.20001227), _f4(-0.16623357),
          _f4(0.14201756), _f4(-0.13160186), _f4(0.12761596), _f4(-0.07634511))
_SIN32 = (_f4(-0.16666667), _f4(0.008333324), _f4(-0.00019837817), _f4(2.7054336e-06))
_COS32 = (_f4(0.041666638), _f4(-0.0013886766), _f4(2.435899e-05))
_ERFS32 = (_f4(0.12837917), _f4(-0.37612626), _f4(0.112835854), _f4(-0.026853813),
           _f4(0.0051883277), _f4(-0.00080101937), _f4(7.8538615e-05))
_ERFT32 = (_f4(0.21080631), _f4(-0.07434737), _f4(0.024939362), _f4(-0.008000936),
           _f4(0.0024613165), _f4(-0.00073613884), _f4(0.00021939268),
           _f4(-5.543665e-05), _f4(1.0817292e-05), _f4(-5.994476e-06),
           _f4(2.3432451e-06))
_EXP64 = (0.5000000000000011, 0.16666666666666674, 0.04166666666651529,
          0.008333333333321691, 0.001388888894985575, 0.00019841269888155758,
          2.480148503719538e-05, 2.7557240576638266e-06, 2.7633513614631e-07,
          2.5110709563186862e-08)
_EXPM1_64 = (0.5000000000000001, 0.1666666666666667, 0.04166666666665162,
             0.008333333333325822, 0.0013888888895828718, 0.00019841269875920837,
             2.4801574245924214e-05, 2.755725400308371e-06, 2.756804782045551e-07,
             2.5105798256502383e-08, 1.7687973834678811e-09)
_LOG64 = (0.666666666666671, 0.39999999999520086, 0.28571428729212284,
          0.22222199099430232, 0.18183571052711878, 0.1531317778723697,
          0.1481037837482862)
_SIN64 = (-0.1666666666666664, 0.008333333333323423, -0.0001984126982992522,
          2.7557313569766463e-06, -2.5050721122765115e-08, 1.5893909529695127e-10)
_COS64 = (0.04166666666666665, -0.001388888888888269, 2.4801587294490876e-05,
          -2.7557315687254107e-07, 2.087588932442653e-09, -1.136748068012024e-11)
_ERFS64 = (0.1283791670955126, -0.3761263890318375, 0.11283791670954857,
           -0.026866170645072896, 0.005223977624780864, -0.0008548326978742023,
           0.00012055331036892358, -1.492559350670273e-05, 1.6460972813852414e-06,
           -1.6350025187777835e-07, 1.465787960248948e-08, -1.1365665025819112e-09,
           5.945260164179264e-11)
_ERFT64 = (0.20798329133342885, 2.222800909838916, 10.305469638847699,
           37.961255608973104, 106.60599383745367, 205.3198128788318,
           174.43087246062396, -311.42180338094215, -1024.4938966429802,
           120.5161846853967, 4347.145488230866, 1456.3652337520718,
           -20418.315484506176, -6919.03905411836, 98871.7372625731)

# Unpack into scalar globals (Numba freezes module globals as constants).
(_E32_0, _E32_1, _E32_2, _E32_3, _E32_4) = _EXP32
(_M32_0, _M32_1, _M32_2, _M32_3, _M32_4, _M32_5) = _EXPM1_32
(_L32_0, _L32_1, _L32_2, _L32_3, _L32_4, _L32_5, _L32_6, _L32_7) = _LOG32
(_S32_0, _S32_1, _S32_2, _S32_3) = _SIN32
(_C32_0, _C32_1, _C32_2) = _COS32
(_ES32_0, _ES32_1, _ES32_2, _ES32_3, _ES32_4, _ES32_5, _ES32_6) = _ERFS32
(_ET32_0, _ET32_1, _ET32_2, _ET32_3, _ET32_4, _ET32_5, _ET32_6, _ET32_7,
 _ET32_8, _ET32_9, _ET32_10) = _ERFT32
(_E64_0, _E64_1, _E64_2, _E64_3, _E64_4, _E64_5, _E64_6, _E64_7, _E64_8,
 _E64_9) = _EXP64
(_M64_0, _M64_1, _M64_2, _M64_3, _M64_4, _M64_5, _M64_6, _M64_7, _M64_8,
 _M64_9, _M64_10) = _EXPM1_64
(_L64_0, _L64_1, _L64_2, _L64_3, _L64_4, _L64_5, _L64_6) = _LOG64
(_S64_0, _S64_1, _S64_2, _S64_3, _S64_4, _S64_5) = _SIN64
(_C64_0, _C64_1, _C64_2, _C64_3, _C64_4, _C64_5) = _COS64
(_ES64_0, _ES64_1, _ES64_2, _ES64_3, _ES64_4, _ES64_5, _ES64_6, _ES64_7,
 _ES64_8, _ES64_9, _ES64_10, _ES64_11, _ES64_12) = _ERFS64
(_ET64_0, _ET64_1, _ET64_2, _ET64_3, _ET64_4, _ET64_5, _ET64_6, _ET64_7,
 _ET64_8, _ET64_9, _ET64_10, _ET64_11, _ET64_12, _ET64_13, _ET64_14) = _ERFT64

# ---------------------------------------------------------------------------
# exp
# ---------------------------------------------------------------------------


@_vm
def exp_f32(x):
    xc = x if x < _EXP_HI32 else _EXP_HI32      # NaN -> clamp; fixed at the end
    xc = xc if x > _EXP_LO32 else _ZERO32
    n = rint(xc * _LOG2E32)
    # fma calls: a caller compiled with `reassoc` (a fused reduction) cannot merge the two
    # steps of the Cody-Waite reduction into one inexact subtraction
    r = fma(n, -_LN2HI32, xc)                   # exact
    r = fma(n, -_LN2LO32, r)
    y = _exp_reduced_f32(n, r, _ZERO32)
    y = y if x > _EXP_LO32 else _ZERO32
    return y if x == x else x


@_vm
def _exp_reduced_f32(n, r, lo):
    """2^n e^(r + lo) for an integral float n, |r| <= ln2/2 (plus a little) and lo a
    correction below r's last bit."""
    p = _E32_4
    p = muladd(p, r, _E32_3)
    p = muladd(p, r, _E32_2)
    p = muladd(p, r, _E32_1)
    p = muladd(p, r, _E32_0)
    p = _ONE32 + (r + muladd(r * r, p, lo))
    n1 = rint(n * _HALF32)                      # 2^n = 2^n1 * 2^(n-n1), both normal
    return p * _pow2_f32(n1) * _pow2_f32(n - n1)


@_vm
def exp_f64(x):
    xc = x if x < _EXP_HI64 else _EXP_HI64
    xc = xc if x > _EXP_LO64 else _ZERO64
    n = rint(xc * _LOG2E64)
    r = fma(n, -_LN2HI64, xc)
    r = fma(n, -_LN2LO64, r)
    y = _exp_reduced_f64(n, r, _ZERO64)
    y = y if x > _EXP_LO64 else _ZERO64
    return y if x == x else x


@_vm
def _exp_reduced_f64(n, r, lo):
    """2^n e^(r + lo) for an integral float n, |r| <= ln2/2 (plus a little) and lo a
    correction below r's last bit."""
    p = _E64_9
    p = muladd(p, r, _E64_8)
    p = muladd(p, r, _E64_7)
    p = muladd(p, r, _E64_6)
    p = muladd(p, r, _E64_5)
    p = muladd(p, r, _E64_4)
    p = muladd(p, r, _E64_3)
    p = muladd(p, r, _E64_2)
    p = muladd(p, r, _E64_1)
    p = muladd(p, r, _E64_0)
    p = _ONE64 + (r + muladd(r * r, p, lo))
    n1 = rint(n * _HALF64)
    return p * _pow2_f64(n1) * _pow2_f64(n - n1)


# ---------------------------------------------------------------------------
# exp2
# ---------------------------------------------------------------------------


@_vm
def exp2_f32(x):
    """n = rint(x), f = x - n (exact), 2^n e^(f ln2) with f ln2 as a product and its
    rounding error (fma), so that no bit of f is lost as in exp(x ln2)."""
    xc = x if x < _EXP2_HI32 else _EXP2_HI32
    xc = xc if x > _EXP2_LO32 else _ZERO32
    n = rint(xc)
    f = xc - n
    r = f * _LN2_32
    lo = fma(f, _LN2_32, -r) + f * _LN2TAIL32
    y = _exp_reduced_f32(n, r, lo)
    y = y if x > _EXP2_LO32 else _ZERO32
    return y if x == x else x


@_vm
def exp2_f64(x):
    """As exp2_f32."""
    xc = x if x < _EXP2_HI64 else _EXP2_HI64
    xc = xc if x > _EXP2_LO64 else _ZERO64
    n = rint(xc)
    f = xc - n
    r = f * _LN2_64
    lo = fma(f, _LN2_64, -r) + f * _LN2TAIL64
    y = _exp_reduced_f64(n, r, lo)
    y = y if x > _EXP2_LO64 else _ZERO64
    return y if x == x else x


# ---------------------------------------------------------------------------
# expm1
# ---------------------------------------------------------------------------


@_vm
def expm1_f32(x):
    xc = x if x < _EXP_HI32 else _EXP_HI32
    xc = xc if xc > _EXPM1_LO32 else _EXPM1_LO32
    n = rint(xc * _LOG2E32)
    r = muladd(-n, _LN2HI32, xc)
    r = muladd(-n, _LN2LO32, r)
    p = _M32_5
    p = muladd(p, r, _M32_4)
    p = muladd(p, r, _M32_3)
    p = muladd(p, r, _M32_2)
    p = muladd(p, r, _M32_1)
    p = muladd(p, r, _M32_0)
    pm1 = muladd(r * r, p, r)                         # expm1(r)
    h = _pow2_f32(n - _ONE32)                   # 2^(n-1); n-1 <= 127
    y = muladd(h, pm1, h - _HALF32) * _TWO32      # 2^n (1 + pm1) - 1
    return y if x == x else x


@_vm
def expm1_f64(x):
    xc = x if x < _EXP_HI64 else _EXP_HI64
    xc = xc if xc > _EXPM1_LO64 else _EXPM1_LO64
    n = rint(xc * _LOG2E64)
    r = fma(n, -_LN2HI64, xc)
    r = fma(n, -_LN2LO64, r)
    p = _M64_10
    p = muladd(p, r, _M64_9)
    p = muladd(p, r, _M64_8)
    p = muladd(p, r, _M64_7)
    p = muladd(p, r, _M64_6)
    p = muladd(p, r, _M64_5)
    p = muladd(p, r, _M64_4)
    p = muladd(p, r, _M64_3)
    p = muladd(p, r, _M64_2)
    p = muladd(p, r, _M64_1)
    p = muladd(p, r, _M64_0)
    pm1 = muladd(r * r, p, r)
    h = _pow2_f64(n - _ONE64)
    y = muladd(h, pm1, h - _HALF64) * _TWO64
    return y if x == x else x


# ---------------------------------------------------------------------------
# sinh / cosh
# ---------------------------------------------------------------------------
# Past NEAR, e^|x| alone overflows before the result does (and e^-|x| no longer counts):
# the exponential is of |x|/2 instead, and the result h * (h / 2).
_HYP_NEAR32, _HYP_NEAR64 = _f4(88.0), 709.0


@_vm
def cosh_f32(x):
    """(e + 1/e) / 2, e = e^|x|: one exponential and a division (e^|x| and e^-|x| apart
    ran at 0.3-0.45x NumPy's SIMD cosh)."""
    a = abs(x)
    small = a < _HYP_NEAR32
    e = exp_f32(a if small else a * _HALF32)
    return (e + _ONE32 / e) * _HALF32 if small else e * (e * _HALF32)


@_vm
def cosh_f64(x):
    a = abs(x)
    small = a < _HYP_NEAR64
    e = exp_f64(a if small else a * _HALF64)
    return (e + _ONE64 / e) * _HALF64 if small else e * (e * _HALF64)


@_vm
def sinh_f32(x):
    """(m + m / (m + 1)) / 2, m = expm1(|x|) (exact for small |x|), x's sign."""
    a = abs(x)
    small = a < _HYP_NEAR32
    m = expm1_f32(a if small else a * _HALF32)
    h = m + _ONE32
    r = (m + m / h) * _HALF32 if small else h * (h * _HALF32)
    return -r if x < _ZERO32 else r


@_vm
def sinh_f64(x):
    a = abs(x)
    small = a < _HYP_NEAR64
    m = expm1_f64(a if small else a * _HALF64)
    h = m + _ONE64
    r = (m + m / h) * _HALF64 if small else h * (h * _HALF64)
    return -r if x < _ZERO64 else r


# ---------------------------------------------------------------------------
# log / log1p
# ---------------------------------------------------------------------------

_FLT_MIN32 = _f4(1.1754944e-38)
_TWO23_32 = _f4(8388608.0)
_M23_32 = _f4(-23.0)
_NEG_ONE32 = _f4(-1.0)
_DBL_MIN64 = 2.2250738585072014e-308
_TWO54_64 = 18014398509481984.0
_M54_64 = -54.0


@_vm
def _log1p_kernel_f32(f):
    """log1p(f) - f = -f^2/2 + f^3 P(f) for f in [sqrt(.5)-1, sqrt(2)-1]."""
    p = _L32_7
    p = muladd(p, f, _L32_6)
    p = muladd(p, f, _L32_5)
    p = muladd(p, f, _L32_4)
    p = muladd(p, f, _L32_3)
    p = muladd(p, f, _L32_2)
    p = muladd(p, f, _L32_1)
    p = muladd(p, f, _L32_0)
    z = f * f
    return muladd(z * f, p, -_HALF32 * z)


@_vm
def log_f32(x):
    tiny = x < _FLT_MIN32                       # subnormal (or <= 0: fixed below)
    xs = x * _TWO23_32 if tiny else x
    kadj = _M23_32 if tiny else _ZERO32
    k, m = _logsplit_f32(xs)
    k = k + kadj
    f = m - _ONE32
    y = muladd(k, _LN2LO32, _log1p_kernel_f32(f))
    y = muladd(k, _LN2HI32, y + f)
    y = y if x > _ZERO32 else (-_INF32 if x == _ZERO32 else _NAN32)
    return x if x == _INF32 else y


@_vm
def log1p_f32(x):
    u = _ONE32 + x
    k, m = _logsplit_f32(u)
    c = (x - (u - _ONE32)) / u                  # rounding error of 1+x, relative
    f = m - _ONE32
    y = _log1p_kernel_f32(f) + muladd(k, _LN2LO32, c)
    y = muladd(k, _LN2HI32, y + f)
    y = y if x > _NEG_ONE32 else (-_INF32 if x == _NEG_ONE32 else _NAN32)
    return x if x == _INF32 else y


@_vm
def _log1p_kernel_f64(f):
    """-> (s (f^2/2 + R), f^2/2); log1p(f) = f - (f^2/2 - s (f^2/2 + R))."""
    s = f / (_TWO64 + f)
    z = s * s
    p = _L64_6
    p = muladd(p, z, _L64_5)
    p = muladd(p, z, _L64_4)
    p = muladd(p, z, _L64_3)
    p = muladd(p, z, _L64_2)
    p = muladd(p, z, _L64_1)
    p = muladd(p, z, _L64_0)
    hfsq = _HALF64 * f * f
    return s * muladd(z, p, hfsq), hfsq


@_vm
def log_f64(x):
    tiny = x < _DBL_MIN64
    xs = x * _TWO54_64 if tiny else x
    kadj = _M54_64 if tiny else _ZERO64
    k, m = _logsplit_f64(xs)
    k = k + kadj
    f = m - _ONE64
    t, hfsq = _log1p_kernel_f64(f)
    y = muladd(k, _LN2HI64, muladd(k, _LN2LO64, t) - hfsq + f)
    y = y if x > _ZERO64 else (-_INF64 if x == _ZERO64 else _NAN64)
    return x if x == _INF64 else y


_LOG1P_KMAX64 = 1000.0


@_vm
def log1p_f64(x):
    """The rounding error of 1+x over u by a float32 reciprocal of u's mantissa and 2^-k:
    that correction is below u's last bit, so 24 bits of 1/u are plenty, and the float64
    division it replaces cost as much as the rest (1e6 elements: 1.49 -> 1.1 ms)."""
    u = _ONE64 + x
    k, m = _logsplit_f64(u)
    inv_m = np.float64(_ONE32 / np.float32(m))
    c = (x - (u - _ONE64)) * (inv_m * _pow2_f64(-k if k < _LOG1P_KMAX64 else -_LOG1P_KMAX64))
    f = m - _ONE64
    t, hfsq = _log1p_kernel_f64(f)
    y = muladd(k, _LN2HI64, t + muladd(k, _LN2LO64, c) - hfsq + f)
    y = y if x > -_ONE64 else (-_INF64 if x == -_ONE64 else _NAN64)
    return x if x == _INF64 else y


# ---------------------------------------------------------------------------
# tanh / sigmoid
# ---------------------------------------------------------------------------

_MTWO32 = _f4(-2.0)


@_vm
def tanh_f32(x):
    t = expm1_f32(_MTWO32 * abs(x))             # in (-1, 0]
    y = -t / (t + _TWO32)
    return y if x >= _ZERO32 else -y


@_vm
def tanh_f64(x):
    t = expm1_f64(-2.0 * abs(x))
    y = -t / (t + _TWO64)
    return y if x >= _ZERO64 else -y


@_vm
def sigmoid_f32(x):
    e = exp_f32(-abs(x))
    return (_ONE32 if x >= _ZERO32 else e) / (_ONE32 + e)


@_vm
def sigmoid_f64(x):
    e = exp_f64(-abs(x))
    return (_ONE64 if x >= _ZERO64 else e) / (_ONE64 + e)


# ---------------------------------------------------------------------------
# sin / cos
# ---------------------------------------------------------------------------

_TWO_OVER_PI32 = _f4(0.63661975)
_PIO2_1_32, _PIO2_2_32, _PIO2_3_32 = _f4(1.5707964), _f4(-4.371139e-08), _f4(-1.7151245e-15)
_TWO_OVER_PI64 = 0.6366197723675814
_PIO2_1_64, _PIO2_2_64, _PIO2_3_64 = (1.5707963267948966, 6.123233995736766e-17,
                                      -1.4973849048591698e-33)
_QUARTER32, _FOUR32 = _f4(0.25), _f4(4.0)
_ONE_HALF32, _MONE_HALF32 = _f4(1.5), _f4(-1.5)
# |r| <= pi/4 + |x| 2^-24 (n from a rounded x*2/pi): the f32 polynomials are
# fitted on |r| <= 0.9, enough for |x| <= TRIG_MAX_F32.
_RMAX32 = _f4(0.9)
# Largest |x| for which the stated sin/cos accuracy holds (3-part pi/2).
TRIG_MAX_F32 = float(2 ** 20)
TRIG_MAX_F64 = float(2 ** 40)
_RMAX64 = 0.7875


@_vm
def _sincos_f32(x):
    """-> (sin r, cos r, q) with x = (4j + q) pi/2 + r, q in {-2..2} as a float."""
    n = rint(x * _TWO_OVER_PI32)
    r = fma(-n, _PIO2_1_32, x)
    r = fma(-n, _PIO2_2_32, r)
    r = fma(-n, _PIO2_3_32, r)
    # Outside the supported domain r may be garbage: keep the result in [-1, 1].
    r = r if abs(r) <= _RMAX32 else _ZERO32
    q = n - _FOUR32 * rint(n * _QUARTER32)
    z = r * r
    s = _S32_3
    s = muladd(s, z, _S32_2)
    s = muladd(s, z, _S32_1)
    s = muladd(s, z, _S32_0)
    s = muladd(r * z, s, r)
    c = _C32_2
    c = muladd(c, z, _C32_1)
    c = muladd(c, z, _C32_0)
    c = muladd(z * z, c, muladd(-_HALF32, z, _ONE32))
    return s, c, q


@_vm
def sin_f32(x):
    s, c, q = _sincos_f32(x)
    v = c if abs(q) == _ONE32 else s
    neg = (q < _ZERO32) | (q > _ONE_HALF32)
    v = -v if neg else v
    return v if abs(x) < _INF32 else x - x      # inf -> nan, nan -> nan


@_vm
def cos_f32(x):
    s, c, q = _sincos_f32(x)
    v = s if abs(q) == _ONE32 else c
    neg = (q > _HALF32) | (q < _MONE_HALF32)
    v = -v if neg else v
    return v if abs(x) < _INF32 else x - x


@_vm
def _sincos_f64(x):
    n = rint(x * _TWO_OVER_PI64)
    r = fma(-n, _PIO2_1_64, x)
    r = fma(-n, _PIO2_2_64, r)
    r = fma(-n, _PIO2_3_64, r)
    r = r if abs(r) <= _RMAX64 else _ZERO64
    q = n - 4.0 * rint(n * 0.25)
    z = r * r
    s = _S64_5
    s = muladd(s, z, _S64_4)
    s = muladd(s, z, _S64_3)
    s = muladd(s, z, _S64_2)
    s = muladd(s, z, _S64_1)
    s = muladd(s, z, _S64_0)
    s = muladd(r * z, s, r)
    c = _C64_5
    c = muladd(c, z, _C64_4)
    c = muladd(c, z, _C64_3)
    c = muladd(c, z, _C64_2)
    c = muladd(c, z, _C64_1)
    c = muladd(c, z, _C64_0)
    hz = _HALF64 * z
    w = _ONE64 - hz
    c = w + muladd(z * z, c, (_ONE64 - w) - hz)
    return s, c, q


@_vm
def sin_f64(x):
    s, c, q = _sincos_f64(x)
    v = c if abs(q) == _ONE64 else s
    neg = (q < _ZERO64) | (q > 1.5)
    v = -v if neg else v
    return v if abs(x) < _INF64 else x - x


@_vm
def cos_f64(x):
    s, c, q = _sincos_f64(x)
    v = s if abs(q) == _ONE64 else c
    neg = (q > _HALF64) | (q < -1.5)
    v = -v if neg else v
    return v if abs(x) < _INF64 else x - x


# libm's sin, cos and tan (argument reduction exact at any size), for the elements past
# TRIG_MAX of a kernel's fast pass (codegen/cpu.py `guard_fast_math`).
@_vm
def libm_sin_f32(x):
    return np.float32(math.sin(x))


@_vm
def libm_cos_f32(x):
    return np.float32(math.cos(x))


@_vm
def libm_tan_f32(x):
    return np.float32(math.tan(x))


@_vm
def libm_sin_f64(x):
    return math.sin(x)


@_vm
def libm_cos_f64(x):
    return math.cos(x)


@_vm
def libm_tan_f64(x):
    return math.tan(x)


TRIG_LIBM = {f"{f}_f{b}": f"libm_{f}_f{b}" for f in ("sin", "cos", "tan") for b in (32, 64)}


@_vm
def tan_f32(x):
    """One reduction and one division: sin r / cos r, or -cos r / sin r in an odd
    quadrant (sin x / cos x reduced twice and divided: 0.73x NumPy's float32 tan)."""
    s, c, q = _sincos_f32(x)
    odd = abs(q) == _ONE32
    v = (-c if odd else s) / (s if odd else c)
    return v if abs(x) < _INF32 else x - x


@_vm
def tan_f64(x):
    s, c, q = _sincos_f64(x)
    odd = abs(q) == _ONE64
    v = (-c if odd else s) / (s if odd else c)
    return v if abs(x) < _INF64 else x - x


# ---------------------------------------------------------------------------
# asin / acos
# ---------------------------------------------------------------------------
# asin(s) = s + s z P(z), z = s^2 <= 1/4: P fitted (Lawson-weighted least squares in
# mpmath) for the relative error of asin: 2^-27.6 (float32, degree 4), 2^-55.9 (degree 11).
_ASIN32 = (_f4(0.16666754), _f4(0.074952416), _f4(0.045477092), _f4(0.024147647),
           _f4(0.04221848))
_ASIN64 = (0.16666666666665383, 0.0750000000034305, 0.04464285682348376,
           0.030381959331025214, 0.022371753532031947, 0.01735977093839766,
           0.013884600387549467, 0.012173265672107985, 0.0065109150980416025,
           0.01957373256513617, -0.01629379699416476, 0.03195877451001554)
(_AS32_0, _AS32_1, _AS32_2, _AS32_3, _AS32_4) = _ASIN32
(_AS64_0, _AS64_1, _AS64_2, _AS64_3, _AS64_4, _AS64_5, _AS64_6, _AS64_7, _AS64_8,
 _AS64_9, _AS64_10, _AS64_11) = _ASIN64
# pi/2 and pi, each as the float and the rest
_PIO2_HI32, _PIO2_LO32 = _f4(1.5707964), _f4(-4.371139e-08)
_PI_HI32, _PI_LO32 = _f4(3.1415927), _f4(-8.742278e-08)
_PIO2_HI64, _PIO2_LO64 = 1.5707963267948966, 6.123233995736766e-17
_PI_HI64, _PI_LO64 = 3.141592653589793, 1.2246467991473532e-16


@_vm
def _asin_series_f32(s, z):
    """asin(s) for |s| <= 1/2, z = s^2."""
    p = _AS32_4
    p = muladd(p, z, _AS32_3)
    p = muladd(p, z, _AS32_2)
    p = muladd(p, z, _AS32_1)
    p = muladd(p, z, _AS32_0)
    return muladd(s * z, p, s)


@_vm
def _asin_series_f64(s, z):
    p = _AS64_11
    p = muladd(p, z, _AS64_10)
    p = muladd(p, z, _AS64_9)
    p = muladd(p, z, _AS64_8)
    p = muladd(p, z, _AS64_7)
    p = muladd(p, z, _AS64_6)
    p = muladd(p, z, _AS64_5)
    p = muladd(p, z, _AS64_4)
    p = muladd(p, z, _AS64_3)
    p = muladd(p, z, _AS64_2)
    p = muladd(p, z, _AS64_1)
    p = muladd(p, z, _AS64_0)
    return muladd(s * z, p, s)


@_vm
def asin_f32(x):
    """|x| <= 1/2: the series; past it asin|x| = pi/2 - 2 asin(s), s = sqrt((1 - |x|)/2)
    (1 - |x| exact), one square root and no division.  |x| > 1 and nan: the square root's
    nan."""
    a = abs(x)
    big = a > _HALF32
    z = (_ONE32 - a) * _HALF32 if big else x * x
    s = np.sqrt(z) if big else a
    t = _asin_series_f32(s, z)
    r = _PIO2_HI32 - (_TWO32 * t - _PIO2_LO32) if big else t
    return np.copysign(r, x)


@_vm
def asin_f64(x):
    a = abs(x)
    big = a > _HALF64
    z = (_ONE64 - a) * _HALF64 if big else x * x
    s = np.sqrt(z) if big else a
    t = _asin_series_f64(s, z)
    r = _PIO2_HI64 - (_TWO64 * t - _PIO2_LO64) if big else t
    return np.copysign(r, x)


@_vm
def acos_f32(x):
    """|x| <= 1/2: pi/2 - asin x; x > 1/2: 2 asin(s), s = sqrt((1 - x)/2) (small results
    keep their relative accuracy); x < -1/2: pi - 2 asin(s), s = sqrt((1 + x)/2)."""
    a = abs(x)
    big = a > _HALF32
    z = (_ONE32 - a) * _HALF32 if big else x * x
    s = np.sqrt(z) if big else x
    t = _asin_series_f32(s, z)
    near = _PIO2_HI32 - (t - _PIO2_LO32)
    return (_TWO32 * t if x > _ZERO32 else _PI_HI32 - (_TWO32 * t - _PI_LO32)) if big \
        else near


@_vm
def acos_f64(x):
    a = abs(x)
    big = a > _HALF64
    z = (_ONE64 - a) * _HALF64 if big else x * x
    s = np.sqrt(z) if big else x
    t = _asin_series_f64(s, z)
    near = _PIO2_HI64 - (t - _PIO2_LO64)
    return (_TWO64 * t if x > _ZERO64 else _PI_HI64 - (_TWO64 * t - _PI_LO64)) if big \
        else near


# ---------------------------------------------------------------------------
# erf
# ---------------------------------------------------------------------------

_ERF_CLAMP32, _ERF_MID32 = _f4(4.0), _f4(2.5)     # erf(x) rounds to 1 for |x| >= 3.92
_ERF_CLAMP64, _ERF_SHIFT64, _ERF_UMID64 = 6.0, 3.0, 0.18055555555555555


@_vm
def erf_f32(x):
    ax = abs(x)
    z = x * x
    p = _ES32_6
    p = muladd(p, z, _ES32_5)
    p = muladd(p, z, _ES32_4)
    p = muladd(p, z, _ES32_3)
    p = muladd(p, z, _ES32_2)
    p = muladd(p, z, _ES32_1)
    p = muladd(p, z, _ES32_0)
    small = muladd(x, p, x)
    a = ax if ax < _ERF_CLAMP32 else _ERF_CLAMP32
    v = a - _ERF_MID32
    g = _ET32_10
    g = muladd(g, v, _ET32_9)
    g = muladd(g, v, _ET32_8)
    g = muladd(g, v, _ET32_7)
    g = muladd(g, v, _ET32_6)
    g = muladd(g, v, _ET32_5)
    g = muladd(g, v, _ET32_4)
    g = muladd(g, v, _ET32_3)
    g = muladd(g, v, _ET32_2)
    g = muladd(g, v, _ET32_1)
    g = muladd(g, v, _ET32_0)
    big = muladd(-exp_f32(-(a * a)), g, _ONE32)        # 1 - erfc(|x|)
    big = big if x >= _ZERO32 else -big
    return big if ax >= _ONE32 else small       # NaN takes the small path


@_vm
def erf_f64(x):
    ax = abs(x)
    z = x * x
    p = _ES64_12
    p = muladd(p, z, _ES64_11)
    p = muladd(p, z, _ES64_10)
    p = muladd(p, z, _ES64_9)
    p = muladd(p, z, _ES64_8)
    p = muladd(p, z, _ES64_7)
    p = muladd(p, z, _ES64_6)
    p = muladd(p, z, _ES64_5)
    p = muladd(p, z, _ES64_4)
    p = muladd(p, z, _ES64_3)
    p = muladd(p, z, _ES64_2)
    p = muladd(p, z, _ES64_1)
    p = muladd(p, z, _ES64_0)
    small = muladd(x, p, x)
    a = ax if ax < _ERF_CLAMP64 else _ERF_CLAMP64
    v = _ONE64 / (a + _ERF_SHIFT64) - _ERF_UMID64
    g = _ET64_14
    g = muladd(g, v, _ET64_13)
    g = muladd(g, v, _ET64_12)
    g = muladd(g, v, _ET64_11)
    g = muladd(g, v, _ET64_10)
    g = muladd(g, v, _ET64_9)
    g = muladd(g, v, _ET64_8)
    g = muladd(g, v, _ET64_7)
    g = muladd(g, v, _ET64_6)
    g = muladd(g, v, _ET64_5)
    g = muladd(g, v, _ET64_4)
    g = muladd(g, v, _ET64_3)
    g = muladd(g, v, _ET64_2)
    g = muladd(g, v, _ET64_1)
    g = muladd(g, v, _ET64_0)
    big = muladd(-exp_f64(-(a * a)), g, _ONE64)
    big = big if x >= _ZERO64 else -big
    return big if ax >= _ONE64 else small


# ---------------------------------------------------------------------------
# pow: |x|**y = exp(y log|x|), then C99's (NumPy's) signs and edge cases
# ---------------------------------------------------------------------------

# 2 atanh(s) = 2s + 2s^3/3 + s^5 T(z), z = s^2, T = sum 2 z^j / (2j+5): Taylor terms up to
# s^23 (|s| <= 0.1716: truncation < 2^-66).
_ATANH_T64 = tuple(2.0 / (2 * j + 5) for j in range(10))
(_T64_0, _T64_1, _T64_2, _T64_3, _T64_4, _T64_5, _T64_6, _T64_7, _T64_8,
 _T64_9) = _ATANH_T64
_TWO_THIRDS_HI = 2.0 / 3.0
_TWO_THIRDS_LO = 3.700743415417188e-17          # 2/3 - _TWO_THIRDS_HI


@_vm
def _log_dd_f64(ax):
    """log(ax) as hi + lo, |error| < ~2^-66 + 2^-60 |log ax| ulp-relative, for finite
    ax > 0 (subnormals included): pow needs it, since y log x's absolute error becomes the
    result's relative error."""
    tiny = ax < _DBL_MIN64
    xs = ax * _TWO54_64 if tiny else ax
    kadj = _M54_64 if tiny else _ZERO64
    k, m = _logsplit_f64(xs)
    k = k + kadj
    f = m - _ONE64                              # exact
    d = _TWO64 + f
    dl = f - (d - _TWO64)                       # 2 + f = d + dl exactly
    # 1/d from a float32 division and two Newton steps, no float64 division (4 lanes per
    # instruction and slow: two of them cost more than the rest of the log)
    q = np.float64(_ONE32 / np.float32(d))
    q = q * muladd(-d, q, _TWO64)
    q = q * muladd(-d, q, _TWO64)
    s = f * q
    sl = (fma(-s, d, f) - s * dl) * q           # s + sl = f / (2 + f): the residual is exact
    z = s * s
    zl = fma(s, s, -z)
    c3 = z * s                                  # s^3 = c3 + c3l
    c3l = fma(z, s, -c3) + zl * s
    t = c3 * _TWO_THIRDS_HI                     # (2/3) s^3 = t + tl
    tl = fma(c3, _TWO_THIRDS_HI, -t) + (c3 * _TWO_THIRDS_LO + c3l * _TWO_THIRDS_HI)
    p = _T64_9
    p = muladd(p, z, _T64_8)
    p = muladd(p, z, _T64_7)
    p = muladd(p, z, _T64_6)
    p = muladd(p, z, _T64_5)
    p = muladd(p, z, _T64_4)
    p = muladd(p, z, _T64_3)
    p = muladd(p, z, _T64_2)
    p = muladd(p, z, _T64_1)
    p = muladd(p, z, _T64_0)
    tail = c3 * z * p + (_TWO64 + _TWO64 * z) * sl       # s^5 T(z) + d/ds(2s + 2s^3/3) sl
    a = k * _LN2HI64                            # exact
    b = _TWO64 * s
    h1 = a + b                                  # two-sum: a + b = h1 + e1
    bb = h1 - a
    e1 = (a - (h1 - bb)) + (b - bb)
    h2 = h1 + t                                 # two-sum: h1 + t = h2 + e2
    tt = h2 - h1
    e2 = (h1 - (h2 - tt)) + (t - tt)
    lo = muladd(k, _LN2LO64, e1 + e2 + tl + tail)
    hi = h2 + lo
    return hi, lo - (hi - h2)


def _pow_edges(zero, half, one, inf, nan, as_int):
    """NumPy's pow(x, y) from r = |x|**y (IEEE inf/0/nan at the edges): the sign for a
    negative x and odd integral y, nan for a finite negative x and non-integral y, and 1
    for y == 0, x == 1 or |x| == 1 with infinite y (C99 F.9.4.4).  Per dtype: the float32
    one stays in float32 (8 lanes per vector, not 4)."""
    @_vm
    def edges(x, y, r):
        ax = abs(x)
        y_int = rint(y) == y                    # +-inf count as even integers
        y_odd = y_int & (rint(y * half) != y * half)
        r = -r if (as_int(x) < 0) & y_odd else r
        r = nan if (x < zero) & (x > -inf) & (rint(y) != y) else r
        is_one = (y == zero) | (x == one) | ((ax == one) & (abs(y) == inf))
        return one if is_one else r
    return edges


_pow_edges_f32 = _pow_edges(_ZERO32, _HALF32, _ONE32, _INF32, _NAN32, f32_as_i32)
_pow_edges_f64 = _pow_edges(_ZERO64, _HALF64, _ONE64, _INF64, _NAN64, f64_as_i64)


@_vm
def pow_f64(x, y):
    ax = abs(x)
    hi, lo = _log_dd_f64(ax)
    finite = (ax > _ZERO64) & (ax < _INF64)     # else the bit-level split gives garbage
    hi = hi if finite else (-_INF64 if ax == _ZERO64 else ax)
    ph = y * hi                                 # y log|x| = ph + pl
    pl = fma(y, hi, -ph) + y * lo
    pl = pl if finite & (abs(ph) < _EXP_HI64 * _TWO64) else _ZERO64
    xc = ph if ph < _EXP_HI64 else _EXP_HI64
    xc = xc if ph > _EXP_LO64 else _ZERO64
    n = rint(xc * _LOG2E64)
    e = fma(n, -_LN2HI64, xc)
    e = fma(n, -_LN2LO64, e) + pl
    r = _exp_reduced_f64(n, e, _ZERO64)
    r = r if ph > _EXP_LO64 else _ZERO64
    r = _INF64 if ph >= _EXP_HI64 else r
    r = r if ph == ph else ph
    return _pow_edges_f64(x, y, r)


# float32 pow in float64 lanes.  log2|x| to ~2^-34 relative: ln m = 2 atanh(s) with Taylor
# terms to s^13 (truncation (z^6/15) < 2^-34.4 relative, z = s^2 <= 0.0295); 2^r on
# [-1/2, 1/2] as 1 + r Q(r), Q of degree 6 fitted (weighted least squares, relative error
# 2^-34.3).  So y log2|x| is within 2^-27 of exact for every |y log2|x|| < 150 (where the
# float32 result is neither 0 nor inf) and the result within 1 ulp.
_TWO_LOG2E64 = 2.0 * 1.4426950408889634
# 2 log2(e) atanh(s) / s = sum 2 log2(e) z^j / (2j + 1), j = 0..6
(_ATANH_0, _ATANH_1, _ATANH_2, _ATANH_3, _ATANH_4, _ATANH_5, _ATANH_6) = tuple(
    _TWO_LOG2E64 / (2 * j + 1) for j in range(7))
(_EXP2_1, _EXP2_2, _EXP2_3, _EXP2_4, _EXP2_5, _EXP2_6, _EXP2_7) = (
    0.6931471807046893, 0.2402265106658035, 0.055504103651880236, 0.009618038130150339,
    0.0013333935803719738, 0.00015466756775350362, 1.5195971934128572e-05)
_POW_W_MAX = 200.0      # |y log2|x|| beyond: 2^w is 0 or inf in float32, normal in float64


@_vm
def pow_f32(x, y):
    """In float64 lanes: no hi + lo pairs are needed (float32's 24 bits need y log2|x| to
    ~2^-27, which float64 gives plainly), float32 subnormals are normal doubles, and the
    final conversion rounds once to float32, to 0 or inf out of range.  1e6 elements, 1
    thread: 1.32 ms against 1.84 for the earlier all-float32 compensated version (an
    f64 division beats a float32 one and a Newton step here)."""
    ax = np.float64(abs(x))
    k, m = _logsplit_f64(ax)
    f = m - _ONE64                              # exact
    s = f / (_TWO64 + f)
    z = s * s
    p = _ATANH_6
    p = muladd(p, z, _ATANH_5)
    p = muladd(p, z, _ATANH_4)
    p = muladd(p, z, _ATANH_3)
    p = muladd(p, z, _ATANH_2)
    p = muladd(p, z, _ATANH_1)
    p = muladd(p, z, _ATANH_0)
    l2 = muladd(s, p, k)                              # log2|x|
    finite = (ax > _ZERO64) & (ax < _INF64)     # else the bit-level split gives garbage
    l2 = l2 if finite else (-_INF64 if ax == _ZERO64 else ax)
    w = np.float64(y) * l2
    wc = w if w < _POW_W_MAX else _POW_W_MAX
    wc = wc if w > -_POW_W_MAX else -_POW_W_MAX
    n = rint(wc)
    r = wc - n                                  # exact, |r| <= 1/2
    q = _EXP2_7
    q = muladd(q, r, _EXP2_6)
    q = muladd(q, r, _EXP2_5)
    q = muladd(q, r, _EXP2_4)
    q = muladd(q, r, _EXP2_3)
    q = muladd(q, r, _EXP2_2)
    q = muladd(q, r, _EXP2_1)
    v = np.float32(muladd(r, q, _ONE64) * _pow2_f64(n))
    v = v if w == w else _NAN32
    return _pow_edges_f32(x, y, v)


# ---------------------------------------------------------------------------
# atan2
# ---------------------------------------------------------------------------
# t = min(|x|, |y|) / max(|x|, |y|) in [0, 1]; past tan(pi/8), u = (t - 1) / (t + 1) and
# atan t = pi/4 + atan u, so |u| <= tan(pi/8).  atan u = u + u^3 Q(u^2), Q fitted for this
# module (least squares at Chebyshev nodes in mpmath at 50 digits, Lawson-reweighted
# towards minimax on u^2 |dQ|, the error's share of atan u): relative error 6.6e-10 for
# float32 (degree 4), 1.2e-18 for float64 (degree 10).
_ATAN32 = (_f4(-0.33333315502787375), _f4(0.19998489311181805), _f4(-0.14243846671266802),
           _f4(0.10595987826131816), _f4(-0.06083421518074355))
_ATAN64 = (-0.333333333333332, 0.19999999999954077, -0.14285714280248016,
           0.11111110786115225, -0.09090897835843807, 0.07692061627000189,
           -0.06663120275087428, 0.05848008163325048, -0.05039842273011651,
           0.038078242192759126, -0.017922196523442038)
(_AT32_0, _AT32_1, _AT32_2, _AT32_3, _AT32_4) = _ATAN32
(_AT64_0, _AT64_1, _AT64_2, _AT64_3, _AT64_4, _AT64_5, _AT64_6, _AT64_7, _AT64_8,
 _AT64_9, _AT64_10) = _ATAN64
_TAN_PI8_32, _TAN_PI8_64 = _f4(0.41421356), 0.41421356237309503
# pi/4 = hi + lo, hi to 20 (float32) / 48 (float64) bits: k * hi is exact for k <= 4
_PI4_HI32, _PI4_LO32 = _f4(0.7853984832763672), _f4(-3.1987892157303577e-07)
_PI4_HI64, _PI4_LO64 = 0.7853981633974492, -8.575622497214414e-16
_FOUR32, _FOUR64 = _f4(4.0), 4.0


def _atan2_quadrant(zero, one, two, four, pi4_hi, pi4_lo, as_int):
    """atan2(y, x) from p = atan u: the angle is k pi/4 +- p with k in 0..4 from the
    reduction (`past`: t > tan(pi/8)), the swap of |x| and |y| and x's sign bit (so
    atan2(+0, -0) = pi), then y's sign.  One rounding at the end: k * hi is exact."""
    @_vm
    def quadrant(y, x, p, past, swap):
        neg = as_int(x) < 0
        b = one if past else zero
        k = (two + b if swap else four - b) if neg else (two - b if swap else b)
        p = p if swap == neg else -p
        r = k * pi4_hi + muladd(k, pi4_lo, p)
        return -r if as_int(y) < 0 else r
    return quadrant


_atan2_quadrant_f32 = _atan2_quadrant(_ZERO32, _ONE32, _TWO32, _FOUR32, _PI4_HI32,
                                      _PI4_LO32, f32_as_i32)
_atan2_quadrant_f64 = _atan2_quadrant(_ZERO64, _ONE64, _TWO64, _FOUR64, _PI4_HI64,
                                      _PI4_LO64, f64_as_i64)


def _atan2_ratio(zero, one, inf, tan_pi8):
    """(u, past, swap): t = min/max of |x| and |y| reduced to |u| <= tan(pi/8).  Both zero:
    t = 0 (atan2(+-0, +-0) is 0 or pi); both infinite: t = 1 (+-pi/4, +-3pi/4); a NaN stays
    in t (a compare with it is false, so it is the one divided).  (One division, (mn - mx)
    / (mn + mx) past tan(pi/8), was no faster and needs scaling at both ends of the range.)"""
    @_vm
    def ratio(y, x):
        ax = abs(x)
        ay = abs(y)
        swap = ay > ax
        mn = ax if swap else ay
        mx = ay if swap else ax
        t = mn / mx
        t = one if (ax == inf) & (ay == inf) else t
        t = zero if (ax == zero) & (ay == zero) else t
        past = t > tan_pi8
        u = (t - one) / (t + one) if past else t
        return u, past, swap
    return ratio


_atan2_ratio_f32 = _atan2_ratio(_ZERO32, _ONE32, _INF32, _TAN_PI8_32)
_atan2_ratio_f64 = _atan2_ratio(_ZERO64, _ONE64, _INF64, _TAN_PI8_64)


@_vm
def atan2_f32(y, x):
    u, past, swap = _atan2_ratio_f32(y, x)
    z = u * u
    q = _AT32_4
    q = muladd(q, z, _AT32_3)
    q = muladd(q, z, _AT32_2)
    q = muladd(q, z, _AT32_1)
    q = muladd(q, z, _AT32_0)
    return _atan2_quadrant_f32(y, x, muladd(u * z, q, u), past, swap)


@_vm
def atan2_f64(y, x):
    u, past, swap = _atan2_ratio_f64(y, x)
    z = u * u
    q = _AT64_10
    q = muladd(q, z, _AT64_9)
    q = muladd(q, z, _AT64_8)
    q = muladd(q, z, _AT64_7)
    q = muladd(q, z, _AT64_6)
    q = muladd(q, z, _AT64_5)
    q = muladd(q, z, _AT64_4)
    q = muladd(q, z, _AT64_3)
    q = muladd(q, z, _AT64_2)
    q = muladd(q, z, _AT64_1)
    q = muladd(q, z, _AT64_0)
    return _atan2_quadrant_f64(y, x, muladd(u * z, q, u), past, swap)


# ---------------------------------------------------------------------------
# atan (one division: atan2's reduction for x = 1 folds its two into one)
# ---------------------------------------------------------------------------
# |x| <= tan(pi/8): u = |x|; up to tan(3pi/8): u = (|x| - 1) / (|x| + 1), atan = pi/4 + atan u;
# past it u = -1 / |x|, atan = pi/2 + atan u.  |u| <= tan(pi/8) and atan2's polynomial.
_TAN_3PI8_32, _TAN_3PI8_64 = _f4(2.4142137), 2.414213562373095


def _atan_reduce(zero, one, two, tan_pi8, tan_3pi8):
    """(u, k): |x|'s angle is k pi/4 + atan u."""
    @_vm
    def reduce(a):
        mid = a > tan_pi8
        far = a > tan_3pi8
        num = -one if far else (a - one if mid else a)
        den = a if far else (a + one if mid else one)
        return num / den, (two if far else (one if mid else zero))
    return reduce


_atan_reduce_f32 = _atan_reduce(_ZERO32, _ONE32, _TWO32, _TAN_PI8_32, _TAN_3PI8_32)
_atan_reduce_f64 = _atan_reduce(_ZERO64, _ONE64, _TWO64, _TAN_PI8_64, _TAN_3PI8_64)


@_vm
def atan_f32(x):
    u, k = _atan_reduce_f32(abs(x))
    z = u * u
    q = _AT32_4
    q = muladd(q, z, _AT32_3)
    q = muladd(q, z, _AT32_2)
    q = muladd(q, z, _AT32_1)
    q = muladd(q, z, _AT32_0)
    r = k * _PI4_HI32 + ((muladd(u * z, q, u)) + k * _PI4_LO32)
    return np.copysign(r, x)


@_vm
def atan_f64(x):
    u, k = _atan_reduce_f64(abs(x))
    z = u * u
    q = _AT64_10
    q = muladd(q, z, _AT64_9)
    q = muladd(q, z, _AT64_8)
    q = muladd(q, z, _AT64_7)
    q = muladd(q, z, _AT64_6)
    q = muladd(q, z, _AT64_5)
    q = muladd(q, z, _AT64_4)
    q = muladd(q, z, _AT64_3)
    q = muladd(q, z, _AT64_2)
    q = muladd(q, z, _AT64_1)
    q = muladd(q, z, _AT64_0)
    r = k * _PI4_HI64 + ((muladd(u * z, q, u)) + k * _PI4_LO64)
    return np.copysign(r, x)


# ---------------------------------------------------------------------------
# asinh / acosh / atanh
# ---------------------------------------------------------------------------
# asinh(a) = a + a z P(z), z = a^2 <= 1/4: P fitted like asin's (Lawson-weighted least
# squares in mpmath): 2^-29.6 (float32, degree 4), 2^-56.1 (float64, degree 10).  Past 1/2,
# log1p(a + (s - 1)), s = sqrt(1 + a^2): no division (log1p(a + a^2 / (1 + s)), the
# composition this replaces, ran at 0.62-0.74x NumPy's SIMD loop).  Past BIG, s = a to the
# last bit (a^2 would overflow further on); past HUGE, 2a - 1 could: log1p(a) + ln 2.
_ASINH32 = (_f4(-0.16666643864025707), _f4(0.07498663180785661), _f4(-0.04438585347552264),
            _f4(0.028175499003356638), _f4(-0.013248003283031898))
_ASINH64 = (-0.16666666666665708, 0.07499999999773838, -0.04464285695715214,
            0.030381936823010793, -0.022371976707802867, 0.017350004642477292,
            -0.013937242298111207, 0.011365498658406258, -0.00891072776507666,
            0.005797450063896036, -0.0021867254713717698)
(_ASH32_0, _ASH32_1, _ASH32_2, _ASH32_3, _ASH32_4) = _ASINH32
(_ASH64_0, _ASH64_1, _ASH64_2, _ASH64_3, _ASH64_4, _ASH64_5, _ASH64_6, _ASH64_7, _ASH64_8,
 _ASH64_9, _ASH64_10) = _ASINH64
_ASINH_BIG32, _ASINH_HUGE32 = _f4(2.0 ** 12), _f4(2.0 ** 25)
_ASINH_BIG64, _ASINH_HUGE64 = 2.0 ** 28, 2.0 ** 54


@_vm
def asinh_f32(x):
    a = abs(x)
    z = a * a
    p = _ASH32_4
    p = muladd(p, z, _ASH32_3)
    p = muladd(p, z, _ASH32_2)
    p = muladd(p, z, _ASH32_1)
    p = muladd(p, z, _ASH32_0)
    huge = a > _ASINH_HUGE32
    s = a if a > _ASINH_BIG32 else np.sqrt(_ONE32 + z)
    w = a if huge else a + (s - _ONE32)
    big = log1p_f32(w) + (_LN2_32 if huge else _ZERO32)
    return np.copysign(muladd(a * z, p, a) if a <= _HALF32 else big, x)


@_vm
def asinh_f64(x):
    a = abs(x)
    z = a * a
    p = _ASH64_10
    p = muladd(p, z, _ASH64_9)
    p = muladd(p, z, _ASH64_8)
    p = muladd(p, z, _ASH64_7)
    p = muladd(p, z, _ASH64_6)
    p = muladd(p, z, _ASH64_5)
    p = muladd(p, z, _ASH64_4)
    p = muladd(p, z, _ASH64_3)
    p = muladd(p, z, _ASH64_2)
    p = muladd(p, z, _ASH64_1)
    p = muladd(p, z, _ASH64_0)
    huge = a > _ASINH_HUGE64
    s = a if a > _ASINH_BIG64 else np.sqrt(_ONE64 + z)
    w = a if huge else a + (s - _ONE64)
    big = log1p_f64(w) + (_LN2_64 if huge else _ZERO64)
    return np.copysign(muladd(a * z, p, a) if a <= _HALF64 else big, x)


@_vm
def acosh_f32(x):
    """log1p(t + sqrt(t (t + 2))), t = x - 1 (exact up to x = 2): log(x + sqrt(x^2 - 1))
    loses a small result's digits to the rounding of the sum near x = 1 (568 float32 ulp,
    9e6 float64 ulp at x = 1 + 2^-50).  Past BIG and HUGE as asinh; below 1, NaN."""
    t = x - _ONE32
    huge = x > _ASINH_HUGE32
    s = x if x > _ASINH_BIG32 else np.sqrt(t * (t + _TWO32))
    w = x if huge else t + s
    r = log1p_f32(w) + (_LN2_32 if huge else _ZERO32)
    return r if x >= _ONE32 else _NAN32


@_vm
def acosh_f64(x):
    t = x - _ONE64
    huge = x > _ASINH_HUGE64
    s = x if x > _ASINH_BIG64 else np.sqrt(t * (t + _TWO64))
    w = x if huge else t + s
    r = log1p_f64(w) + (_LN2_64 if huge else _ZERO64)
    return r if x >= _ONE64 else _NAN64


@_vm
def atanh_f32(x):
    """log1p(2a / (1 - a)) / 2, a = |x|: 2a and (past 1/2) 1 - a exact, one division."""
    a = abs(x)
    return np.copysign(_HALF32 * log1p_f32((a + a) / (_ONE32 - a)), x)


@_vm
def atanh_f64(x):
    a = abs(x)
    return np.copysign(_HALF64 * log1p_f64((a + a) / (_ONE64 - a)), x)


# ---------------------------------------------------------------------------
# fmod / remainder
# ---------------------------------------------------------------------------
_TWO52_64 = 2.0 ** 52


@_vm
def _fmod_step_f64(ax, ay):
    """ax - t ay, t = floor(ax / ay), for ax / ay < 2^53: exact.  fl(ax / ay) is at most
    one above the true quotient's floor, and ax - t ay is then -ay < r < 0 (representable:
    ay's unit and below ay); fma rounds the exact value once, i.e. not at all."""
    t = np.floor(ax / ay)
    r = fma(-t, ay, ax)
    return r + ay if r < _ZERO64 else r


@_vm
def _fmod_abs_f64(ax, ay):
    """C's fmod for ax, ay >= 0, exact.  The common case (a quotient below 2^52) is one
    step; a larger one takes steps of 52 bits against ay scaled by a power of two."""
    if ax / ay < _TWO52_64 and ay < _INF64:
        return _fmod_step_f64(ax, ay)
    if not (ax < _INF64) or not (ay > _ZERO64):      # inf, nan, a zero divisor
        return _NAN64
    if ay == _INF64:
        return ax
    while ax >= ay:
        k = math.frexp(ax)[1] - math.frexp(ay)[1] - 52
        ax = _fmod_step_f64(ax, math.ldexp(ay, k) if k > 0 else ay)
    return ax


@_vm
def fmod_f64(x, y):
    return np.copysign(_fmod_abs_f64(abs(x), abs(y)), x)


@_vm
def fmod_f32(x, y):
    """In float64: every float32 quotient below 2^52 is one step, and the result is exact,
    so converting it back rounds nothing."""
    r = _fmod_abs_f64(np.float64(abs(x)), np.float64(abs(y)))
    return np.copysign(np.float32(r), x)


@_vm
def remainder_f64(x, y):
    """np.remainder: fmod moved into y's sign (a zero takes y's sign), as NumPy's
    npy_divmod."""
    m = fmod_f64(x, y)
    if m == _ZERO64:
        return np.copysign(_ZERO64, y)
    return m + y if (m < _ZERO64) != (y < _ZERO64) else m


@_vm
def remainder_f32(x, y):
    m = fmod_f32(x, y)
    if m == _ZERO32:
        return np.copysign(_ZERO32, y)
    return m + y if (m < _ZERO32) != (y < _ZERO32) else m


# ---------------------------------------------------------------------------
# Sealed copies for callers compiled with `reassoc` (see the module docstring).
# ---------------------------------------------------------------------------
_sealed = njit(error_model="numpy", fastmath={"nsz"}, cache=True)


@intrinsic
def _inline_when_linked(typingctx):
    """Marks the calling function `alwaysinline`: LLVM's cost model leaves the largest sealed
    copies as calls (a scalar call per element stops the caller's loop vectorizing:
    sum(x ** 1.7) over 1M float32 took 36 ms against NumPy's 1.6), while inlined they keep
    their own fast-math flags per instruction and vectorize."""
    def codegen(context, builder, sig, args):
        builder.function.attributes.add("alwaysinline")
        return context.get_dummy_value()

    return types.none(), codegen


# The copies LLVM does not inline on its own, as module-level functions (Numba caches no
# closures): each calls the inlined function under this module's flags.
@_sealed
def sealed_pow_f32(x, y):
    _inline_when_linked()
    return pow_f32(x, y)


@_sealed
def sealed_pow_f64(x, y):
    _inline_when_linked()
    return pow_f64(x, y)


@_sealed
def sealed_erf_f64(x):
    _inline_when_linked()
    return erf_f64(x)


@_sealed
def sealed_atan2_f32(y, x):
    _inline_when_linked()
    return atan2_f32(y, x)


@_sealed
def sealed_atan2_f64(y, x):
    _inline_when_linked()
    return atan2_f64(y, x)


@_sealed
def sealed_asinh_f32(x):
    _inline_when_linked()
    return asinh_f32(x)


@_sealed
def sealed_asinh_f64(x):
    _inline_when_linked()
    return asinh_f64(x)


@_sealed
def sealed_acosh_f64(x):
    _inline_when_linked()
    return acosh_f64(x)


@_sealed
def sealed_atanh_f64(x):
    _inline_when_linked()
    return atanh_f64(x)


def _seal_all() -> dict[str, str]:
    sealed = {}
    for pair in list(VECMATH.values()) + [POW, ATAN2, REMAINDER]:
        for name in pair:
            if f"sealed_{name}" not in globals():
                globals()[f"sealed_{name}"] = _sealed(globals()[name].py_func)
            sealed[name] = f"sealed_{name}"
    return sealed


SEALED = _seal_all()        # name -> its sealed copy's name
__all__ += list(SEALED.values()) + ["SEALED"]
