"""datetime64 / timedelta64 under `jit`: results and argument contents equal NumPy's, bit
for bit (they are integers), over units, NaT positions, 0-d, empty, broadcast and
non-contiguous inputs; what is not lowered is an UnsupportedDTypeError, and under
`must_compile=False` such a call runs with NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb
from xlanb.errors import UnsupportedDTypeError
from xlanb.tracing.datetimes import ufuncs
from xlanb.tracing.datetimes.array import lower_ufunc
from xlanb.tracing.datetimes.units import NAT, cast, conversion_factor

RNG = np.random.default_rng(7)
UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "3D", "10ms"]


def times(kind: str, unit: str, shape=(7,), nat_every: int = 3) -> np.ndarray:
    counts = RNG.integers(-10**5, 10**5, shape)
    flat = counts.reshape(-1)
    flat[::nat_every] = NAT
    return counts.view(f"{kind}8[{unit}]")


def same(got, expected) -> None:
    """Equal dtype, type (scalar or array) and bits (NaN and NaT positions included)."""
    assert type(got) is type(expected), (type(got), type(expected))
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    g, e = np.asarray(got), np.asarray(expected)
    assert g.shape == e.shape
    if g.dtype.kind in "Mm":
        g, e = g.view(np.int64), e.view(np.int64)
    np.testing.assert_array_equal(g, e)


def check(fn, *args):
    """fn under jit against NumPy: results and every argument's contents afterwards."""
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with np.errstate(all="ignore"):
        expected = fn(*theirs)
        got = xlanb.jit(fn, tiered=False)(*mine)
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            same(g, e)
    else:
        same(got, expected)
    for m, t in zip(mine, theirs):
        if isinstance(t, np.ndarray):
            same(m, t)


EVERY_UNIT = UNITS + ["ps", "fs", "as", "2M", "5Y", "7h", "250us"]


@pytest.mark.parametrize("source", EVERY_UNIT)
@pytest.mark.parametrize("kind", "Mm")
def test_unit_casts_equal_numpys_astype(kind, source):
    """units.cast on plain int64 arrays against NumPy's astype, every pair of units (NumPy's
    OverflowError for factors past 2**64, e.g. years to attoseconds, included)."""
    values = np.concatenate([RNG.integers(-10**6, 10**6, 300), [NAT, 0, -1, 1]])
    for target in EVERY_UNIT:
        s, t = np.dtype(f"{kind}8[{source}]"), np.dtype(f"{kind}8[{target}]")
        try:
            num, denom = conversion_factor(s, t)
        except OverflowError:
            with pytest.raises(OverflowError):
                values.view(s).astype(t)
            continue
        # results past int64 wrap (the known difference for calendar casts: docs)
        fits = (values == NAT) | (np.abs(values.astype(float)) * abs(num) / denom < 2.0**62)
        kept = values[fits]
        np.testing.assert_array_equal(cast(kept, s, t), kept.view(s).astype(t).view(np.int64),
                                      err_msg=f"{s} -> {t}")


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("kind", "Mm")
def test_isnat_and_comparisons(kind, unit):
    a, b = times(kind, unit), times(kind, unit, nat_every=2)
    b[1] = a[1]
    check(lambda x, y: (np.isnat(x), x < y, x <= y, x > y, x >= y, x == y, x != y,
                        np.isnan(x), np.isfinite(x), np.isinf(x)), a, b)


@pytest.mark.parametrize("units", [("D", "h"), ("M", "D"), ("Y", "M"), ("s", "ms"),
                                   ("W", "D"), ("3D", "h")])
def test_subtraction_and_mixed_units(units):
    a, b = times("M", units[0]), times("M", units[1])
    t = times("m", units[1])
    check(lambda x, y, d: (x - y, y - x, x == y, x < y, x + d, d + x, x - d), a, b, t)


def test_timedelta_arithmetic():
    a, b = times("m", "s"), times("m", "s", nat_every=4)
    b[2] = 0
    k = RNG.integers(-5, 5, 7)
    f = np.array([1.5, -2.7, np.nan, 0.0, 3.0, -0.5, 1e3])
    check(lambda x, y, n, r: (x + y, x - y, -x, +x, abs(x), np.sign(x), x * n, n * x,
                              x * r, x * 2, x / y, x // y, x % y, np.divmod(x, y), x / n,
                              x // n, x / r, x / 2.5), a, b, k, f)


def test_min_max_and_nat_rules():
    a = times("M", "s", shape=(4, 5), nat_every=7)
    b = times("M", "s", shape=(4, 5), nat_every=5)
    clean = times("M", "s", shape=(4, 5), nat_every=10**9)
    check(lambda x, y: (np.maximum(x, y), np.minimum(x, y), np.fmax(x, y), np.fmin(x, y)),
          a, b)
    for x in (a, clean):
        check(lambda v: (v.min(), v.max(), np.min(v, axis=0), np.max(v, axis=1),
                         v.argmin(), v.argmax(), np.argmax(v, axis=0),
                         np.argmin(v, axis=1), np.sort(v), np.sort(v, axis=0)), x)


def test_astype_view_and_pass_through():
    a = times("M", "s", shape=(3, 4))
    check(lambda x: (x.astype(np.int64), x.astype(np.float64), x.astype("M8[D]"),
                     x.astype("M8[M]"), x.view(np.int64), x.view("M8[ms]"), x[1:, ::2],
                     x.T, x.reshape(4, 3), x.ravel(), x[1, 2], x[1, ...], x.copy(),
                     np.where(np.isnat(x), np.datetime64("2000-01-01", "D"), x),
                     np.concatenate([x, x.astype("M8[h]")])), a)


def test_constants_in_the_function():
    a = times("M", "D")
    check(lambda x: (x < np.datetime64("1970-03-01"), x + np.timedelta64(1, "D"),
                     x - np.datetime64("2020-01-01T00:00"),
                     np.where(np.isnat(x), np.datetime64("NaT"), x)), a)


def test_zero_d_empty_broadcast_and_non_contiguous():
    scalar = np.datetime64("2020-03-01T10", "h")
    zero_d = np.array(np.datetime64("2020-03-01", "D"))
    empty = np.zeros((0, 3), "M8[D]")
    grid = times("M", "h", shape=(4, 6))[::2, ::-3]
    row = times("m", "h", shape=(2,))
    check(lambda s, z, e, g, r: (s - z, np.isnat(z), z + r, e - e[:1], np.isnat(e),
                                 g + r, g.T < g.T[0], s), scalar, zero_d, empty,
          grid, row)


def test_in_place_updates_of_arguments():
    def shift(x, d):
        x += np.timedelta64(1, "D")
        x[np.isnat(x)] = np.datetime64("2000-01-01")
        x[0] = np.datetime64("1999-12-31T23", "h")
        d[::2] *= 3
        d[1:2] = x[1:2] - x[:1]
        return x[1:]
    check(shift, times("M", "D", shape=(6,)), times("m", "h", shape=(6,)))

    def through_views(x):
        counts = x.view(np.int64)
        counts[0] = 86400 * 3                       # 1970-01-04 in seconds
        x.view("M8[ms]")[1] = np.datetime64("NaT")
        x.T[2] += np.timedelta64(1, "s")
        return counts
    check(through_views, times("M", "s", shape=(4,)))

    def sort_in_place(x):
        x.sort()
        v = x.reshape(2, 3)
        v[:, 0] = np.datetime64("NaT")
    check(sort_in_place, times("M", "s", shape=(6,)))


def test_returning_the_argument_gives_the_callers_object():
    x = times("M", "D")
    f = xlanb.jit(lambda a: a, tiered=False)
    assert f(x) is x
    view = xlanb.jit(lambda a: a[2:], tiered=False)(x)
    assert view.dtype == x.dtype and np.shares_memory(view, x)


@pytest.mark.parametrize("fn", [
    lambda x: np.median(x),               # NumPy has these for timedeltas, xlanb does not
    lambda x: np.cumsum(x),
    lambda x: np.sin(x.view(np.int64)) + x,
    lambda x: np.unique(x),
    lambda x: np.nanargmax(x),
    lambda x: np.argsort(x),              # default kind: ties order as NumPy's introsort
    lambda x: x.prod(),                   # NumPy's TypeError
])
def test_not_lowered_is_a_named_error_and_runs_with_numpy_when_allowed(fn):
    x = times("m", "s")
    try:
        with np.errstate(all="ignore"):
            expected = fn(x)
    except TypeError:
        expected = None
    with pytest.raises((UnsupportedDTypeError, TypeError)) as raised:
        xlanb.jit(fn, tiered=False)(x)
    if expected is None:
        return
    assert isinstance(raised.value, UnsupportedDTypeError)
    assert "must_compile=False" in str(raised.value)
    same(xlanb.jit(fn, must_compile=False)(x), expected)


def test_numpy_type_errors_stay_numpys():
    a, b = times("M", "D"), times("M", "D")
    with pytest.raises(TypeError):
        xlanb.jit(lambda x, y: x + y)(a, b)              # datetime + datetime
    years = times("m", "Y")[:1]
    with pytest.raises(TypeError):
        xlanb.jit(lambda x: x - years)(times("m", "D"))   # no common unit: NumPy's error


def test_int64_counts_viewed_as_times():
    counts = times("M", "s").view(np.int64)
    check(lambda c: (c.view("M8[s]") + np.timedelta64(1, "m"), np.isnat(c.view("m8[D]"))),
          counts)


def test_must_compile_false_compiles_datetime_programs():
    f = xlanb.jit(lambda x, y: (x - y, np.isnat(x)), must_compile=False)
    a, b = times("M", "s"), times("M", "D")
    for _ in range(3):
        got, expected = f(a, b), (a - b, np.isnat(a))
        for g, e in zip(got, expected):
            same(g, e)
    assert not f.report.breaks


def test_timedelta_sum_mean_and_stable_argsort():
    for x in (times("m", "s", shape=(4, 5), nat_every=7),
              times("m", "s", shape=(4, 5), nat_every=10**9),
              np.array([[-7, 0], [3, -2]], "m8[h]")):       # -3.5 h: NumPy truncates
        check(lambda v: (v.sum(), np.sum(v, axis=0), v.mean(), np.mean(v, axis=1),
                         np.mean(v, axis=-1, keepdims=True), np.argsort(v, kind="stable"),
                         np.argsort(v, axis=0, kind="stable")), x)


def test_arrays_made_in_the_function_and_asarray():
    def fill(x):
        out = np.empty(x.shape, "M8[s]")
        out[...] = x
        out[0] = np.datetime64("2001-01-01")
        made = np.array(["2020-01-01", "NaT", "1960-05-05"], "M8[D]")
        days = np.arange(np.datetime64("2020-01-01"), np.datetime64("2020-01-04"))
        return (out, np.asarray(x) - made[0], np.array(x, dtype="M8[h]"), made[1:],
                days - x, np.full(2, np.datetime64("2020-02-02T10", "h")))
    check(fill, times("M", "D", shape=(3,)))


def test_returned_time_constants():
    check(lambda x: (np.isnat(x), np.datetime64("2020-01-01"), np.timedelta64(3, "h")),
          times("M", "D"))


def test_operands_numpy_would_refuse_are_refused():
    x = times("M", "D")
    for fn in (lambda v: np.where(np.isnat(v), v, 0),          # no common dtype in NumPy
               lambda v: np.concatenate([v, np.arange(3)])):
        with pytest.raises(TypeError):
            fn(x)
        with pytest.raises(TypeError):
            xlanb.jit(fn, tiered=False)(x)


def test_lists_and_nested_jit():
    inner = xlanb.jit(lambda v: v - np.datetime64("2000-01-01"))
    x = times("M", "D", shape=(3,))
    check(lambda v: (v == [np.datetime64("2000-01-01")] * 3, inner(v)), x)


OPERAND_SPECS = ["M8[D]", "M8[h]", "M8[M]", "M8[Y]", "M8[3D]", "m8[s]", "m8[ms]", "m8[D]",
                 "m8[M]", "m8[Y]", "i8", "i4", "?", "f8", "f4", int, float]


def operand(spec):
    """12 values of `spec` with NaT, zeros, NaN and inf where the dtype has them."""
    if spec is int:
        return int(RNG.integers(-5, 5))
    if spec is float:
        return float(RNG.normal() * 3)
    dtype = np.dtype(spec)
    if dtype.kind in "Mm":
        counts = RNG.integers(-10**6, 10**6, 12)
        counts[::4], counts[1] = NAT, 0
        return counts.view(dtype)
    if dtype.kind == "f":
        values = RNG.normal(size=12) * 3
        values[2:6] = [0.0, np.nan, np.inf, -np.inf]
        return values.astype(dtype)
    values = RNG.integers(-4, 4, 12)
    values[2] = 0
    return values.astype(dtype)


@pytest.mark.parametrize("ufunc", list(ufuncs.RULES), ids=lambda u: u.__name__)
def test_every_loop_rule_equals_numpy_on_concrete_counts(ufunc):
    """Each rule (written in NumPy calls) run on concrete counts against NumPy's own time
    loop, for every operand dtype pair NumPy accepts; jit runs the same calls traced."""
    import itertools
    checked = 0
    for combo in itertools.product(OPERAND_SPECS, repeat=ufunc.nin):
        if not any(isinstance(c, str) and c[0] in "Mm" for c in combo):
            continue
        args = tuple(operand(c) for c in combo)
        with np.errstate(all="ignore"):
            try:
                expected = ufunc(*args)
            except TypeError:
                continue
            got = lower_ufunc(ufunc, "__call__", args, {})
        for g, e in zip(got if ufunc.nout > 1 else (got,),
                        expected if ufunc.nout > 1 else (expected,)):
            g, e = np.asarray(g), np.asarray(e)
            assert g.dtype == e.dtype, combo
            if e.dtype.kind in "Mm":
                g, e = g.view(np.int64), e.view(np.int64)
            np.testing.assert_array_equal(g, e, err_msg=str(combo))
        checked += 1
    assert checked


def test_must_compile_false_breaks_and_refusals():
    def shift_then_break(x):
        x += np.timedelta64(1, "D")
        if np.isnat(x).any():                       # a break: Python needs the value
            x = x + np.timedelta64(1, "D")
        return x - np.datetime64("2020-01-01")

    def shift_then_median(x):
        x += np.timedelta64(1, "D")                 # written once, by NumPy's own call
        return np.median(x - np.datetime64("2020-01-01"))
    for fn in (shift_then_break, shift_then_median):
        f = xlanb.jit(fn, must_compile=False)
        for _ in range(3):
            mine = times("M", "D")
            theirs = mine.copy()
            same(f(mine), fn(theirs))
            same(mine, theirs)
    assert "unsupported dtype" in str(f.report) and "runs with NumPy" in str(f.report)


def test_nan_reductions_diff_likes_and_copyto():
    for x in (times("m", "s", shape=(3, 4), nat_every=5),
              np.array([[1, NAT, 2], [NAT, NAT, NAT]]).view("m8[s]")):
        check(lambda v: (np.nanmin(v), np.nanmax(v), np.nanmin(v, axis=1),
                         np.nanmax(v, axis=0, keepdims=True)), x)
    dates = times("M", "D", shape=(3, 5), nat_every=4)
    check(lambda v: (np.diff(v), np.diff(v, n=2, axis=0), np.diff(v - v[0]),
                     np.zeros_like(v), np.ones_like(v), np.empty_like(v).shape,
                     np.full_like(v, np.datetime64("2000-01-01T12", "h")),
                     np.zeros_like(v, shape=(2,))), dates)

    def copy_into(dst, src):
        np.copyto(dst, src)
        np.copyto(dst[0], np.datetime64("1999-01-01"))
    check(copy_into, times("M", "s", shape=(3, 5)), dates)


def test_out_arguments_views_and_shape_setting():
    def fn(x, flags):
        np.isnat(x, out=flags)
        np.add(x, np.timedelta64(1, "h"), out=x)
        y = x.view(np.ndarray)[::-1]
        z = x.copy()
        z.shape = (2, 3)
        return y, z
    check(fn, times("M", "h", shape=(6,)), np.zeros(6, bool))


def test_writing_numbers_into_time_arrays():
    def fn(x, b, i, u, f):
        x[0:2] = b
        x[2:4] = i
        x[4:6] = u
        x[6:] = f
    check(fn, times("M", "D", shape=(10,)), np.array([True, False]),
          np.array([7, -3], np.int32), np.array([2**63 + 5, 1], np.uint64),
          np.array([-1.5, np.nan, 2.7, 1e3]))


GLOBAL_START = np.array(["2020-01-01", "2021-01-01"], "M8[D]")


def test_global_time_arrays_are_read_at_every_call():
    f = xlanb.jit(lambda x: x - GLOBAL_START, tiered=False)
    x = np.array(["2022-01-01", "NaT"], "M8[D]")
    same(f(x), x - GLOBAL_START)
    GLOBAL_START[0] = np.datetime64("2000-01-01")
    try:
        same(f(x), x - GLOBAL_START)
    finally:
        GLOBAL_START[0] = np.datetime64("2020-01-01")


def test_searchsorted():
    edges = np.sort(times("M", "D", shape=(9,), nat_every=4))       # NaT last
    probes = times("M", "h", shape=(6,), nat_every=3)
    shuffled = times("M", "D", shape=(9,), nat_every=4)            # unsorted: same search
    check(lambda e, p, u: (np.searchsorted(e, p), e.searchsorted(p, side="right"),
                           np.searchsorted(e, np.datetime64("1970-01-20")),
                           np.searchsorted(u, p)), edges, probes, shuffled)
