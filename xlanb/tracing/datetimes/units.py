"""datetime64 / timedelta64 units: NumPy's casts between them, written on int64 values.

A datetime64[u] or timedelta64[u] array is held as its int64 counts of u since the epoch
(or of duration); NaT is the smallest int64.  Every function here takes and returns int64
arrays written with NumPy calls, so the same code runs on traced int64 arrays (it emits
IR) and on concrete ones (the tests compare it with NumPy's own `astype`).

NumPy's cast between units (`_strided_to_strided_datetime_cast`):

* linear units (W, D, h, m, s, ms, us, ns, ps, fs, as with their multipliers, and any
  timedelta unit, where a year is 365.2425 days and a month a twelfth of that) scale by
  NumPy's reduced fraction num/denom: `v * num // denom`, flooring toward minus infinity;
* a datetime64 cast between a calendar unit (Y, M) and a linear one goes through the
  calendar: floor to whole days, then the proleptic Gregorian year and month
  (`civil_from_days`, `days_from_civil`: H. Hinnant's algorithms);
* NaT stays NaT.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import UnsupportedDTypeError

NAT = np.iinfo(np.int64).min
INT64_MAX = np.iinfo(np.int64).max
CALENDAR = ("Y", "M")


def is_time(dtype) -> bool:
    """A datetime64 or timedelta64 dtype."""
    return isinstance(dtype, np.dtype) and dtype.kind in "Mm"


def unit(dtype: np.dtype) -> tuple[str, int]:
    """(base unit, multiplier) of a datetime dtype; the generic unit is refused."""
    base, count = np.datetime_data(dtype)
    if base == "generic":
        raise UnsupportedDTypeError(
            f"{dtype} has no unit (generic): NumPy converts its values by context",
            op_name="datetime64", hint="give the array a unit (`x.astype('m8[s]')`), or "
            "run the function with NumPy: `xlanb.jit(f, must_compile=False)`")
    return base, count


def cast(values, source: np.dtype, target: np.dtype):
    """int64 `values` of `source` as counts of `target` (both datetime64 or both
    timedelta64), as NumPy's `astype` computes them."""
    if source == target:
        return values
    if source.kind == "M" and (unit(source)[0] in CALENDAR) != (unit(target)[0] in CALENDAR):
        converted = _from_days(_to_days(values, source), target)
    else:
        converted = _scale(values, source, target)
    return np.where(values == NAT, NAT, converted)


_ORDER = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as")
_STEP = (1, 1, 7, 24, 60, 60, 1000, 1000, 1000, 1000, 1000, 1000, 1)   # unit -> next one
_U64 = 2**64


def _units_factor(big: int, little: int) -> int:
    """NumPy's `get_datetime_units_factor`: 0 once the product nears 2**64."""
    factor = 1
    for step in _STEP[big:little]:
        factor = factor * step % _U64
        if factor & 0xff00000000000000:
            return 0
    return factor


def conversion_factor(source: np.dtype, target: np.dtype) -> tuple[int, int]:
    """NumPy's `get_datetime_conversion_factor` (num, denom), in its uint64 arithmetic,
    wrapping where NumPy's wraps (a timedelta64[2M] -> [ns] factor does: NumPy's values
    are then what that wrapped factor gives, and so are these)."""
    (src, src_count), (dst, dst_count) = unit(source), unit(target)
    a, b = _ORDER.index(src), _ORDER.index(dst)
    swapped = a > b
    a, b = min(a, b), max(a, b)
    num, denom = 1, 1
    if a != b:
        if a <= 1 and b == 1:                                     # Y -> M
            num = 12
        elif a <= 1:                                              # Y or M -> linear
            num, denom = 146097, 400 * (12 if a == 1 else 1)
            if b == 2:
                denom *= 7
            else:
                num = num * _units_factor(3, b) % _U64
        else:
            num = _units_factor(a, b)
    if num == 0 or denom == 0:
        raise OverflowError("Integer overflow while computing the conversion factor "
                            f"between NumPy datetime units {_ORDER[a]} and {_ORDER[b]}")
    if swapped:
        num, denom = denom, num
    num, denom = num * src_count % _U64, denom * dst_count % _U64
    gcd = math.gcd(num, denom)
    return _as_int64(num // gcd), _as_int64(denom // gcd)


def _as_int64(value: int) -> int:
    return value - _U64 if value >= 2**63 else value


def _scale(values, source: np.dtype, target: np.dtype):
    """NumPy's linear cast, in its C integer arithmetic: `v * num` (wrapping), then
    `(v * num - (denom - 1)) / denom` for negative v and `v * num / denom` otherwise,
    truncated (a floor, except where `v * num` wrapped)."""
    num, denom = conversion_factor(source, target)
    scaled = values * np.int64(num) if num != 1 else values
    if denom == 1:
        return scaled
    shifted = np.where(values < 0, scaled - np.int64(denom - 1), scaled)
    floor = shifted // np.int64(denom)
    return floor + ((shifted < 0) & (floor * np.int64(denom) != shifted))   # C truncation


_DAYS = np.dtype("M8[D]")


def _to_days(values, source: np.dtype):
    """Days since 1970-01-01 of datetime64 counts, as NumPy's datetime struct gets them:
    the count times the multiplier in the base unit (wrapping), floored to days."""
    base, count = unit(source)
    if count != 1:
        values = values * np.int64(count)
    if base not in CALENDAR:
        return _scale(values, np.dtype(f"M8[{base}]"), _DAYS)
    months = values * np.int64(12) if base == "Y" else values
    return days_from_civil(months // 12 + 1970, months % 12 + 1)


def _from_days(days, target: np.dtype):
    """Counts of `target` from days, as NumPy's datetime struct gives them: the value in
    the base unit (wrapping), floor-divided by the multiplier."""
    base, count = unit(target)
    if base not in CALENDAR:
        value = _scale(days, _DAYS, np.dtype(f"M8[{base}]"))
    else:
        year, month = civil_from_days(days)
        value = year - 1970 if base == "Y" else (year - 1970) * 12 + month - 1
    return value // np.int64(count) if count != 1 else value


def days_from_civil(year, month):
    """Days since 1970-01-01 of the first day of (year, month), proleptic Gregorian."""
    year = year - (month <= 2)
    era = year // 400
    yoe = year - era * 400                                   # [0, 399]
    doy = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5   # day of the March year
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy            # [0, 146096]
    return era * 146097 + doe - 719468


def civil_from_days(days):
    """(year, month) of a count of days since 1970-01-01, proleptic Gregorian."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = mp + np.where(mp < 10, 3, -9)
    return yoe + era * 400 + (month <= 2), month
