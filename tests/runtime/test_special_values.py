"""Compiled kernels give NumPy's IEEE results at special values, signed zeros included: the
fastmath flags (codegen/cpu.py BASE_FASTMATH) and the simplify rules must not change them.
With `arcp`, LLVM made float32 `1 / np.sqrt(x)` an rsqrt estimate: nan at x = 0 and x = inf
(NumPy: inf and 0), and 1/sqrt(4) = 0.49999997; `x**-0.5 -> rsqrt(x)` gave -inf and nan at
-0.0 and -inf, where NumPy's pow gives +inf and 0; `x + 0 -> x` gave 1/(x + 0) = -inf at
x = -0.0, where NumPy gives +inf."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from tolerance import assert_like_numpy

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, 4.0, 2.0, 1e-30, 3e30, -4.0, np.nan] * 4)

FUNCTIONS = {
    "1/sqrt(x)": lambda x, y: 1 / np.sqrt(x),
    "y/sqrt(x)": lambda x, y: y / np.sqrt(x),
    "x**-0.5": lambda x, y: x ** -0.5,
    "np.power(x, -0.5)": lambda x, y: np.power(x, -0.5),
    "x**0.5": lambda x, y: x ** 0.5,
    "y/sqrt(x*x+1)": lambda x, y: y / np.sqrt(x * x + 1),
    "1/(x+0)": lambda x, y: 1 / (x + 0.0),          # -0.0 + 0.0 is +0.0: +inf, not -inf
    "y/(0+x)": lambda x, y: y / (0.0 + x),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_division_by_a_square_root_and_half_powers_match_numpy(name, dtype):
    fn = FUNCTIONS[name]
    x = SPECIAL.astype(dtype)
    y = np.linspace(-3, 3, x.size).astype(dtype)
    with np.errstate(all="ignore"):
        expected = fn(x, y)
        got = xlanb.jit(fn)(x, y)
    assert got.dtype == expected.dtype
    special = ~np.isfinite(expected) | (expected == 0)
    np.testing.assert_array_equal(got[special], expected[special])
    if "**" in name or "power" in name:         # a vectorized pow: within a few ulps
        assert_like_numpy(got, expected)
    else:                                       # IEEE division and sqrt: the same bits
        np.testing.assert_array_equal(got, expected)
