"""`xlanb.random`: JAX-style random numbers from explicit keys, generated inside kernels.

    key = xlanb.random.key(0)
    k1, k2 = xlanb.random.split(key)
    w = xlanb.random.normal(k1, (784, 128))

    @xlanb.jit
    def dropout(key, x):
        keep = xlanb.random.bernoulli(key, 0.9, x.shape)
        return np.where(keep, x / 0.9, 0)      # one kernel: the mask never reaches memory

A key is a 0-d uint64 array.  Every function here is one IR op, `rng-bits(key)` (element i
is splitmix64(key, i), a counter-based hash), followed by ordinary NumPy arithmetic.  The
same code runs both ways: on concrete keys the bits come from the reference interpreter's
`rng_bits` and NumPy does the arithmetic; under `xlanb.jit` (a traced key, or any key while
tracing) the arithmetic is traced, and the bits are computed per element inside the fused
kernel.  So compiled values equal eager ones bit for bit, except `normal`, whose log and
cos come from `vecmath` in kernels (within 2 ulp of NumPy's).

Keys never repeat a stream: `split` hashes `key ^ SPLIT_TAG`, `fold_in` hashes
`key + (data + 1) * FOLD_MUL`, the samplers hash `key` itself.  As in JAX, use a key once;
split it to get more.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from xlanb_runtime.ir import builder as B
from xlanb_runtime.ir.interpret import rng_bits

from .tracing.lowering import translate_errors
from .tracing.lowering.promote import to_node, wrap
from .tracing.source import entry
from .tracing.tracer import Tracer, current_context

__all__ = ["bernoulli", "bits", "fold_in", "key", "normal", "split", "uniform"]

SPLIT_TAG = np.uint64(0x243F6A8885A308D3)      # pi's fraction bits: split's own stream
FOLD_MUL = np.uint64(0xD1B54A32D192ED03)       # odd, so (data + 1) * FOLD_MUL is injective
_MANTISSA = {np.dtype(np.float32): 24, np.dtype(np.float64): 53}

Array = Any          # an np.ndarray, or a Tracer under xlanb.jit


def key(seed: int | Array) -> Array:
    """A key (a 0-d uint64 array) from an integer seed, mixed once through the hash.

    `key(0)` and `key(1)` give unrelated streams.  The seed may be traced.
    """
    with entry("xlanb.random.key"):
        return _bits(_to_uint64(seed, "key", "seed"), (), "key")


def split(key: Array, num: int = 2) -> Array:
    """`num` new keys, as a uint64 array of shape (num,): `k1, k2 = split(key)`.

    Index or unpack the result to get 0-d keys (`keys[0]` works traced too).
    """
    with entry("xlanb.random.split"):
        return _bits(_checked_key(key, "split") ^ SPLIT_TAG, (operator.index(num),), "split")


def fold_in(key: Array, data: int | Array) -> Array:
    """A new key from `key` and an integer `data` (a step or layer index; may be traced)."""
    with entry("xlanb.random.fold_in"), np.errstate(over="ignore"):
        data = _to_uint64(data, "fold_in", "data")
        mixed = _checked_key(key, "fold_in") + (data + np.uint64(1)) * FOLD_MUL
        return _bits(mixed, (), "fold_in")


def bits(key: Array, shape: int | Sequence[int] = ()) -> Array:
    """Raw random uint64 values of `shape` (the `rng-bits` op itself)."""
    with entry("xlanb.random.bits"):
        return _bits(key, shape, "bits")


def uniform(key: Array, shape: int | Sequence[int] = (), dtype=np.float32,
            minval: float | Array = 0.0, maxval: float | Array = 1.0) -> Array:
    """Uniform floats in [minval, maxval) of `shape` and `dtype` (float32 or float64).

    The top 24 (float32) or 53 (float64) bits of each hash become a multiple of 2**-24 or
    2**-53 in [0, 1), exactly; then `minval + u * (maxval - minval)`, which may round up
    to maxval for wide ranges.
    """
    dtype = np.dtype(dtype)
    if dtype not in _MANTISSA:
        raise TypeError(f"xlanb.random.uniform: dtype must be float32 or float64, got {dtype}")
    mantissa = _MANTISSA[dtype]
    with entry("xlanb.random.uniform"):
        raw = _bits(key, shape, "uniform")
        top = raw // np.uint64(1 << (64 - mantissa))          # the top `mantissa` bits
        u = top.astype(dtype) * dtype.type(2.0 ** -mantissa)   # exact: [0, 1)
        if _is_python_number(minval, 0) and _is_python_number(maxval, 1):
            return _array(u)
        low, high = _as_dtype(minval, dtype), _as_dtype(maxval, dtype)
        return _array(low + u * (high - low))


def normal(key: Array, shape: int | Sequence[int] = (), dtype=np.float32) -> Array:
    """Standard normal floats of `shape` and `dtype`, by Box-Muller from two uniforms:
    sqrt(-2 log(1 - u1)) cos(2 pi u2) (1 - u1 is in (0, 1], so the log is finite)."""
    dtype = np.dtype(dtype)
    if dtype not in _MANTISSA:
        raise TypeError(f"xlanb.random.normal: dtype must be float32 or float64, got {dtype}")
    with entry("xlanb.random.normal"):
        keys = split(key)
        u1 = uniform(keys[0], shape, dtype)
        u2 = uniform(keys[1], shape, dtype)
        radius = np.sqrt(dtype.type(-2.0) * np.log(1 - u1))
        return _array(radius * np.cos(dtype.type(2 * np.pi) * u2))


def bernoulli(key: Array, p: float | Array = 0.5,
              shape: int | Sequence[int] | None = None) -> Array:
    """Booleans that are True with probability `p` (to 2**-53); shape defaults to p's.

    Compares a float64 uniform with `p`, so p = 0 is never True and p = 1 always.
    """
    with entry("xlanb.random.bernoulli"):
        if shape is None:
            shape = p.shape if isinstance(p, Tracer) else np.shape(p)
        return _array(uniform(key, shape, np.float64) < p)


# -- helpers -------------------------------------------------------------------------------

def _bits(key: Array, shape, what: str) -> Array:
    """rng-bits of a checked key: a traced node while tracing, else the interpreter's bits."""
    shape = _shape(shape, what)
    key = _checked_key(key, what)
    if isinstance(key, Tracer) or current_context() is not None:
        with translate_errors():
            return wrap(B.rng_bits(to_node(key), shape))
    return rng_bits(key, shape)


def _checked_key(key: Array, what: str) -> Array:
    """`key` itself (a NumPy scalar becomes a 0-d array) if it is a uint64 scalar key."""
    if isinstance(key, np.generic):
        key = np.asarray(key)
    if not isinstance(key, (np.ndarray, Tracer)):
        raise TypeError(f"xlanb.random.{what}: the key must be a uint64 array made by "
                        f"xlanb.random.key(seed), got a {type(key).__name__}")
    if key.dtype != np.uint64 or key.shape != ():
        hint = ""
        if key.dtype == np.uint64 and len(key.shape) == 1:
            hint = "; split() returns an array of keys: unpack it (`k1, k2 = split(key)`)"
        raise TypeError(f"xlanb.random.{what}: the key must be a 0-d uint64 array made by "
                        f"xlanb.random.key(seed), got {key.dtype} of shape {key.shape}{hint}")
    return key


def _to_uint64(value: int | Array, what: str, name: str) -> Array:
    """An integer seed or datum as uint64 (negative values wrap, like NumPy's astype)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return np.asarray(int(value) % 2 ** 64, dtype=np.uint64)
    if isinstance(value, (Tracer, np.ndarray)) and value.dtype.kind in "iu" \
            and value.shape == ():
        return value.astype(np.uint64)
    kind = (f"{value.dtype} of shape {value.shape}" if isinstance(value, (Tracer, np.ndarray))
            else type(value).__name__)
    raise TypeError(f"xlanb.random.{what}: `{name}` must be an integer scalar, got {kind}")


def _shape(shape, what: str) -> tuple[int, ...]:
    dims = (operator.index(shape),) if np.ndim(shape) == 0 else tuple(
        operator.index(d) for d in shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"xlanb.random.{what}: negative dimensions are not allowed "
                         f"(shape {dims})")
    return dims


def _is_python_number(value: Any, number: float) -> bool:
    return type(value) in (int, float) and value == number


def _as_dtype(value: float | Array, dtype: np.dtype) -> Array:
    if isinstance(value, Tracer):
        return value.astype(dtype)
    return np.asarray(value).astype(dtype)


def _array(value: Array) -> Array:
    """Eager results are arrays (NumPy returns scalars from 0-d arithmetic)."""
    return value if isinstance(value, Tracer) else np.asarray(value)
