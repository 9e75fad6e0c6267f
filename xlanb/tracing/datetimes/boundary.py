"""Time arguments and results at the call boundary: in as int64 counts, out as their dtype.

A datetime64/timedelta64 argument with a unit, in the machine's byte order, becomes a
parameter of int64 counts: an int64 view of the caller's array (writes reach its memory),
or a scalar's value.  The function sees a `DatetimeTracer` over that parameter; a traced
time result leaves the program as its counts and is viewed back as its dtype
(`Traced.time_params`, `Traced.time_outputs`, `boundary.finish_call`).
"""
from __future__ import annotations

import numpy as np

from ...errors import UnsupportedDTypeError


def is_time_leaf(leaf) -> bool:
    """A datetime64/timedelta64 array or scalar with a unit, in the machine's byte order."""
    return isinstance(leaf, (np.ndarray, np.generic)) and leaf.dtype.kind in "Mm" and \
        leaf.dtype.isnative and np.datetime_data(leaf.dtype)[0] != "generic"


def as_counts(leaf):
    """A time leaf's int64 counts: a view of an array (writes reach it), a scalar's value."""
    if isinstance(leaf, np.ndarray):
        return leaf.view(np.int64)
    return np.asarray(leaf).view(np.int64)[()]


def refuse_overlapping(index: int) -> UnsupportedDTypeError:
    return UnsupportedDTypeError(
        "datetime64/timedelta64 arguments that overlap in memory are not traced",
        op_name=f"argument {index}", hint="pass a copy of one of them, or run the function "
        "with NumPy: `xlanb.jit(f, must_compile=False)`")


def split_outputs(out_leaves: list) -> tuple[list, dict]:
    """Traced time outputs as their int64 counts, and output index -> their dtype."""
    from .array import DatetimeTracer
    dtypes = {i: leaf.dtype for i, leaf in enumerate(out_leaves)
              if isinstance(leaf, DatetimeTracer)}
    return [leaf.ints if i in dtypes else leaf for i, leaf in enumerate(out_leaves)], dtypes


def as_time_outputs(time_outputs: dict, outs: list) -> None:
    """The program's int64 counts viewed as the time dtypes they stand for."""
    for index, dtype in time_outputs.items():
        value = outs[index]
        if value.dtype != dtype:
            outs[index] = value.view(dtype)
