"""Held-out kernels, fourth batch (2026-11-29): NumPy's semantic corners as users meet them,
written before running any of them.  Overlapping in-place updates and writes through views,
integer wrap-around, floor division and modulo of negatives, NumPy 2's promotion of Python
numbers, NaN ordering in min/max/argmax/sort, signed zeros (`1 / (x + 0.0)`), the rounding a
double cast keeps, cancellation-prone statistics, and a few library calls the earlier
batches do not make.  Same form as heldout_kernels.py.

What they found on their first run (fixed the same day, so no longer held out): np.hypot
overflowing to inf for 1e200 parts (a wrong answer), and, single thread: variable int64
shifts 0.12x NumPy (x * 2**y and a division per element), `x[idx] = v; x[idx] += 1` 0.04x
(a copy of x and a copy back), `x[::2] += y[1::2]` 0.23x (NumPy pad calls and a select
over all of x).  Beside them, probes of the same corners found traced indices out of
bounds clamped silently, and integer powers with negative exponents giving 0: both now
raise NumPy's errors."""
from __future__ import annotations

import numpy as np

from heldout_kernels import R, f32, f64, nrm, uni  # noqa: F401  (one random stream)

N = 1_000_000


def shift_add_inplace(x):
    x[1:] += x[:-1]             # NumPy reads the original x[:-1] (overlap is buffered)


def symmetrize_inplace(a):
    a += a.T                    # overlapping transpose: NumPy computes from a copy
    return a.trace()


def strided_view_update(x, y):
    x[::2] += y[1::2]
    return x.sum()


def column_view_scale(x):
    v = x[:, 0]
    v *= 2.0
    return x.mean(axis=0)


def int8_wrap(a, b):
    return (a + b) * np.int8(3)


def uint8_diff(a, b):
    return a - b, np.abs(a.astype(np.int16) - b)


def floor_mod_int(a, b):
    return a // b, a % b, np.fmod(a, b)


def floor_mod_float(x, y):
    return x // y, x % y


def promote_python_numbers(i32, f32_):
    return i32 * 1.5, f32_ * 2.0 + 1, i32 + 7, f32_ * np.float64(0.5)


def nan_extremes(x):
    return x.min(axis=1), np.nanmax(x, axis=1), x.argmax(axis=1), np.fmax(x, 0.0).sum(axis=1)


def sort_with_nans(x):
    return np.sort(x, axis=1)[:, :4]


def signed_zero_add(x):
    return 1.0 / (x + 0.0)


def signed_zero_ops(x):
    return 1.0 / np.sqrt(x), np.copysign(1.0, x * 1.0), 1.0 / (x - x * 0.0)


def round_half_even(x):
    return np.round(x), np.rint(x * 0.5), np.round(x, 1)


def double_cast(x):
    return x.astype(np.float32).astype(np.float64) - x


def no_reassociation(x):
    return (x * 3.0) / 3.0 - x, (x + 1e16) - 1e16


def inf_arithmetic(x):
    return x * 0.0, x - x, np.exp(x * 800.0) * 0.0


def var_large_offset(x):
    return x.var(), x.std(axis=0), np.var(x, axis=1, ddof=1)


def hypot_huge(x, y):
    return np.hypot(x * 1e200, y * 1e200)


def small_value_functions(x):
    return np.expm1(x * 1e-10), np.log1p(x * 1e-12), np.sinh(x * 1e-9)


def overflow_to_inf_f32(x):
    return np.exp(x * 100), np.log(np.abs(x) * 0.0), np.sqrt(x)


def complex_ops(z, w):
    return z / w, np.abs(z * 1e200), np.angle(z), np.exp(z)


def int_power(a):
    return a ** 3, a ** 0, np.int64(2) ** (a & 31) % 1000


def shift_bits(a, s):
    return a << s, a >> s


def int_abs_min(a):
    return np.abs(a), -a


def mean_int8(a):
    return a.mean(), a.mean(axis=0), a.sum(dtype=np.int8)


def count_nonzero_axis(x):
    return np.count_nonzero(x > 0, axis=1), (x > 0).sum(), (x > 0).mean(axis=0)


def reduce_where_initial(x):
    return np.sum(x, axis=1, where=x > 0), np.max(x, axis=1, initial=0.5), \
        np.min(x, axis=0, where=x < 1, initial=10.0)


def matmul_broadcast(a, b):
    return a @ b


def int_matmul(a, b):
    return a @ b


def einsum_three(a, b, c):
    return np.einsum("ij,jk,kl->il", a, b, c)


def gram_tall(x):
    return x.T @ x


def reshape_strided_mean(x):
    return x[:, ::2].reshape(-1, 4).mean(1)


def clip_arrays(x, lo, hi):
    return np.clip(x, lo, hi)


def take_modes(x, idx):
    return np.take(x, idx, mode="wrap") + np.take(x, idx, mode="clip")


def fancy_negative(x):
    return x[[-1, -2, 0, 5]] * 2, x[-3:, [0, -1]]


def fancy_set_duplicates(x, idx, v):
    x[idx] = v                  # duplicate indices: the last write wins
    x[idx] += 1.0               # and one increment each, however often listed


def mask_assign(x, y):
    x[x > y] = y[x > y]
    return x.sum()


def trace_loop(x):
    for _ in range(5):
        x = x * 0.9 + 0.1
    return x


def digitize_bins(x, bins):
    return np.digitize(x, bins)


def gradient_1d(x):
    return np.gradient(x)


def diff_prepend(x):
    return np.diff(x, prepend=0.0)


def nan_to_num_limits(x):
    return np.nan_to_num(np.log(x), nan=0.0, posinf=1e30, neginf=-1e30)


def cumsum_f32(x):
    return np.cumsum(x)


def logical_xor_reduce(b):
    return np.logical_xor.reduce(b, axis=1)


def reduceat_segments(x, starts):
    return np.add.reduceat(x, starts)


def inv_solve(a, b):
    return np.linalg.solve(a, b), np.linalg.inv(a) @ b


def float16_tanh(x):
    return np.tanh(x) * np.float16(2)


def returned_view(x):
    return x[1:-1], x.T


def outputs_alias(x):
    y = x * 2.0
    return y, y


def _with_nans(a, share=0.01):
    a[R.random(a.shape) < share] = np.nan
    return a


def _with_zeros(n):
    x = nrm(n)
    x[::7] = 0.0
    x[::11] = -0.0
    return x


KERNELS = [
    ("x[1:] += x[:-1] overlap 1e6", shift_add_inplace, lambda: [nrm(N)]),
    ("a += a.T overlap 1000", symmetrize_inplace, lambda: [nrm(1000, 1000)]),
    ("x[::2] += y[1::2] 1e6", strided_view_update, lambda: [nrm(N), nrm(N)]),
    ("column view *= 2 10000x64", column_view_scale, lambda: [nrm(10000, 64)]),
    ("int8 wrap 1e6", int8_wrap,
     lambda: [R.integers(-128, 128, N, dtype=np.int8), R.integers(-128, 128, N, dtype=np.int8)]),
    ("uint8 diff wrap 1e6", uint8_diff,
     lambda: [R.integers(0, 256, N, dtype=np.uint8), R.integers(0, 256, N, dtype=np.uint8)]),
    ("// % fmod int64 negatives 1e6", floor_mod_int,
     lambda: [R.integers(-1000, 1000, N), np.where(R.random(N) < 0.5, -1, 1) *
              R.integers(1, 50, N)]),
    ("// % float negatives 1e6", floor_mod_float,
     lambda: [nrm(N) * 10, np.where(R.random(N) < 0.5, -1.0, 1.0) * uni(N, lo=0.5, hi=3)]),
    ("NEP 50 Python numbers 1e6", promote_python_numbers,
     lambda: [R.integers(-1000, 1000, N, dtype=np.int32), nrm(N, dt=f32)]),
    ("NaN min/nanmax/argmax rows 10000x64", nan_extremes,
     lambda: [_with_nans(nrm(10000, 64))]),
    ("sort with NaNs 1000x100", sort_with_nans, lambda: [_with_nans(nrm(1000, 100), 0.05)]),
    ("1/(x+0.0) signed zeros 1e6", signed_zero_add, lambda: [_with_zeros(N)]),
    ("signed zero sqrt/copysign 1e6", signed_zero_ops, lambda: [_with_zeros(N)]),
    ("round half even 1e6", round_half_even,
     lambda: [np.round(nrm(N) * 8) / 2 + np.where(R.random(N) < 0.5, 0.0, 0.05)]),
    ("f32 round trip 1e6", double_cast, lambda: [nrm(N)]),
    ("no reassociation 1e6", no_reassociation, lambda: [nrm(N)]),
    ("inf * 0, inf - inf 1e6", inf_arithmetic,
     lambda: [np.where(R.random(N) < 0.01, np.inf, nrm(N))]),
    ("var with offset 1e4 10000x64", var_large_offset, lambda: [nrm(10000, 64) + 1e4]),
    ("hypot huge 1e6", hypot_huge, lambda: [nrm(N), nrm(N)]),
    ("expm1/log1p tiny 1e6", small_value_functions, lambda: [nrm(N)]),
    ("exp overflow f32 1e6", overflow_to_inf_f32, lambda: [nrm(N, dt=f32)]),
    ("complex div/abs/angle/exp 1e6", complex_ops,
     lambda: [nrm(N) + 1j * nrm(N), (nrm(N) + 1j * nrm(N)) * 1e-3]),
    ("int powers 1e6", int_power, lambda: [R.integers(-50, 50, N)]),
    ("shifts int64 1e6", shift_bits,
     lambda: [R.integers(-10**6, 10**6, N), R.integers(0, 63, N)]),
    ("abs/neg int8 with -128 1e6", int_abs_min,
     lambda: [R.integers(-128, 128, N, dtype=np.int8)]),
    ("mean int8 1000x1000", mean_int8,
     lambda: [R.integers(-128, 128, (1000, 1000), dtype=np.int8)]),
    ("count_nonzero axis 10000x64", count_nonzero_axis, lambda: [nrm(10000, 64)]),
    ("sum where= / max initial= 10000x64", reduce_where_initial, lambda: [nrm(10000, 64)]),
    ("matmul broadcast 10x1x4x5 @ 3x5x6", matmul_broadcast,
     lambda: [nrm(10, 1, 4, 5), nrm(3, 5, 6)]),
    ("int64 matmul 200x200", int_matmul,
     lambda: [R.integers(-100, 100, (200, 200)), R.integers(-100, 100, (200, 200))]),
    ("einsum ij,jk,kl 200x300x50x100", einsum_three,
     lambda: [nrm(200, 300), nrm(300, 50), nrm(50, 100)]),
    ("x.T @ x 1e5x8", gram_tall, lambda: [nrm(100_000, 8)]),
    ("reshape strided mean 1000x512", reshape_strided_mean, lambda: [nrm(1000, 512)]),
    ("clip by arrays lo>hi 1e6", clip_arrays, lambda: [nrm(N), nrm(N), nrm(N)]),
    ("take wrap/clip 1e5 of 1000", take_modes,
     lambda: [nrm(1000), R.integers(-3000, 3000, 100_000)]),
    ("fancy negative indices 1000x8", fancy_negative, lambda: [nrm(1000, 8)]),
    ("x[idx] = v; += 1 duplicates", fancy_set_duplicates,
     lambda: [nrm(N), R.integers(0, 1000, 10_000), nrm(10_000)]),
    ("x[x>y] = y[x>y] 1e6", mask_assign, lambda: [nrm(N), nrm(N)]),
    ("traced loop 5 steps 1e6", trace_loop, lambda: [nrm(N)]),
    ("digitize 1e6 into 100", digitize_bins, lambda: [nrm(N), np.sort(nrm(100))]),
    ("gradient 1e6", gradient_1d, lambda: [nrm(N)]),
    ("diff prepend 1e6", diff_prepend, lambda: [nrm(N)]),
    ("nan_to_num(log) 1e6", nan_to_num_limits,
     lambda: [np.where(R.random(N) < 0.1, 0.0, nrm(N))]),
    ("cumsum f32 1e6", cumsum_f32, lambda: [uni(N, dt=f32)]),
    ("logical_xor.reduce rows 10000x64", logical_xor_reduce, lambda: [nrm(10000, 64) > 0]),
    ("add.reduceat 1e6 / 1000", reduceat_segments,
     lambda: [nrm(N), np.sort(R.choice(N, 1000, replace=False))]),
    ("solve / inv 200x200", inv_solve,
     lambda: [nrm(200, 200) + 20 * np.eye(200), nrm(200, 4)]),
    ("tanh float16 1e6", float16_tanh, lambda: [nrm(N, dt=np.float16)]),
    ("returned views 1000x1000", returned_view, lambda: [nrm(1000, 1000)]),
    ("same output twice 1e6", outputs_alias, lambda: [nrm(N)]),
]
