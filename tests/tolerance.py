"""Float comparisons whose tolerance comes from the dtype and the computation, not the machine.

Compiled code and NumPy round differently, and how depends on the machine: the vector width
decides how a sum is split into partial sums, the BLAS kernel (Haswell, SkylakeX) how a
matmul is blocked, fusion keeps intermediates in registers, and xlanb accumulates float32
sums in float64.  Each difference is a few units in the last place per operation.  A
cancellation (a - b with a close to b, a sum of terms of both signs) turns it into a large
*relative* error on the few elements that cancel, while the array as a whole is as accurate
as before: a per-element `rtol` then fails on one machine and passes on another.  So, as
NumPy's linalg tests and JAX's `check_grads` do, we bound the error of the whole array:

    ||actual - desired||_2  <=  k * eps * sqrt(n) * ||desired||_2

- eps: the machine epsilon of the least precise float dtype involved (float32: 1.2e-7,
  float64: 2.2e-16, float16: 9.8e-4).
- n: the longest chain of roundings an element goes through: the reduction length of a sum
  or mean, the contracting size of a dot, their product when they chain (1 for elementwise
  code).  Independent rounding errors of n terms add up like a random walk: sqrt(n).
- k: the operations per element, each within a few ulp (default 8: a handful of ufuncs or
  vectorized exp/tanh, which are within 2-4 ulp of NumPy's).

A bug (a wrong index, a missing term, a swapped operand) changes some element by a relative
O(1), so the norm by at least ~1/sqrt(size): orders of magnitude above the bound for float32
and float64 arrays of the sizes the tests use.

`scale` replaces ||desired|| where the whole result cancels (a gradient at a minimum, the
mean of centred data): pass the norm of the terms that cancel.
"""
from __future__ import annotations

import math

import numpy as np

DEFAULT_K = 8.0


def eps_of(*arrays, dtype=None) -> float:
    """Machine epsilon of `dtype`, or of the least precise float dtype among `arrays`
    (float64 when none is a float: integer data computed in float64)."""
    if dtype is not None:
        return float(np.finfo(np.dtype(dtype)).eps)
    kinds = [np.asarray(a).dtype for a in arrays]
    floats = [d for d in kinds if d.kind in "fc"]
    if not floats:
        return float(np.finfo(np.float64).eps)
    return max(float(np.finfo(d).eps) for d in floats)


def tolerance(*arrays, n: int = 1, k: float = DEFAULT_K, dtype=None) -> float:
    """The relative norm error allowed: k * eps * sqrt(n)."""
    return k * eps_of(*arrays, dtype=dtype) * math.sqrt(max(n, 1))


def magnitude(fn, *args) -> float:
    """||fn(|args|)||: for a program of sums, products and dots (and monotone maps such as
    relu or max), the size of the terms its rounding errors are relative to.  Pass it as
    `scale` when the result cancels (`np.sum(x + y * z)` of zero-mean data)."""
    absolute = [np.abs(a) if isinstance(a, np.ndarray) else a for a in args]
    return float(np.linalg.norm(np.asarray(fn(*absolute), dtype=np.float64)))


def graph_scale(graph, args) -> float:
    """The largest norm among the float values a graph computes on `args` (run by the
    reference interpreter): rounding errors anywhere in it are relative to at most this.
    Pass it as `scale` for graphs whose results may cancel (sums of signed random data)."""
    from xlanb_runtime.ir import interpret
    norms = [float(np.linalg.norm(np.asarray(a, np.float64))) for a in args
             if np.asarray(a).dtype.kind == "f"]

    def record(node, value):
        if value.dtype.kind == "f":
            norms.append(float(np.linalg.norm(value.astype(np.float64))))
    interpret(graph, args, on_node=record)
    finite = [x for x in norms if math.isfinite(x)]
    return max(finite, default=0.0)


def relative_error(actual, desired, scale: float | None = None) -> float:
    """||actual - desired|| / (scale or ||desired||), over the finite elements."""
    a = np.asarray(actual)
    d = np.broadcast_to(np.asarray(desired), a.shape)
    wide = np.complex128 if (a.dtype.kind == "c" or d.dtype.kind == "c") else np.float64
    a, d = a.astype(wide), d.astype(wide)
    finite = np.isfinite(a) & np.isfinite(d)
    err = float(np.linalg.norm(a[finite] - d[finite]))
    ref = float(np.linalg.norm(d[finite])) if scale is None else float(scale)
    if ref == 0.0:
        return 0.0 if err == 0.0 else math.inf
    return err / ref


def assert_close(actual, desired, *, n: int = 1, k: float = DEFAULT_K, dtype=None,
                 scale: float | None = None, tol: float | None = None,
                 err_msg: str = "") -> None:
    """Assert ||actual - desired|| <= tol * (scale or ||desired||), tol = k * eps * sqrt(n).

    Shapes must agree (`desired` may broadcast, e.g. a scalar).  NaN and infinities must
    sit at the same places with the same values.  Integer and bool arrays must be equal.
    `tol` gives the relative bound directly, for errors that are not rounding (finite
    differences, a series truncation); say where it comes from at the call.
    """
    __tracebackhide__ = True                                 # pytest: show the caller
    a = np.asarray(actual)
    d = np.asarray(desired)
    prefix = f"{err_msg}: " if err_msg else ""
    if d.shape != a.shape:
        assert d.ndim < a.ndim or d.size == 1, \
            f"{prefix}shape {a.shape} != desired {d.shape}"
        try:
            d = np.broadcast_to(d, a.shape)
        except ValueError:
            raise AssertionError(f"{prefix}shape {a.shape} != desired {d.shape}") from None
    if a.dtype.kind not in "fc" and d.dtype.kind not in "fc":
        np.testing.assert_array_equal(a, d, err_msg=err_msg)
        return
    if a.size == 0:
        return
    a_bad, d_bad = ~np.isfinite(a), ~np.isfinite(d)
    if a_bad.any() or d_bad.any():
        assert np.array_equal(a_bad, d_bad), \
            f"{prefix}non-finite at {np.argwhere(a_bad != d_bad)[:5].tolist()} (first 5)"
        np.testing.assert_array_equal(a[a_bad], d[d_bad], err_msg=err_msg)
    bound = tolerance(a, d, n=n, k=k, dtype=dtype) if tol is None else tol
    err = relative_error(a, d, scale)
    if err <= bound:
        return
    with np.errstate(invalid="ignore"):
        diff = np.abs(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
                      - d.astype(np.complex128 if d.dtype.kind == "c" else np.float64))
    diff = np.where(np.isfinite(diff), diff, 0)                 # (0-d: a NumPy scalar)
    worst = np.unravel_index(int(np.argmax(diff)), a.shape) if a.ndim else ()
    raise AssertionError(
        f"{prefix}relative norm error {err:.3g} > {bound:.3g} "
        f"(k={k:g}, n={n}, eps={eps_of(a, d, dtype=dtype):.3g}{', tol given' if tol else ''}); "
        f"largest difference at {tuple(int(i) for i in worst)}: "
        f"{a[worst]!r} vs {d[worst]!r}; shape {a.shape}")


def assert_tree_close(actual, desired, **options) -> None:
    """`assert_close` on every leaf of two pytrees (dicts, lists, tuples of arrays)."""
    from xlanb.pytree import tree_flatten
    got, got_tree = tree_flatten(actual)
    want, want_tree = tree_flatten(desired)
    assert got_tree == want_tree, f"tree {got_tree} != {want_tree}"
    label = options.pop("err_msg", "") or "leaf"
    for i, (g, w) in enumerate(zip(got, want)):
        assert_close(g, w, err_msg=f"{label} {i}", **options)


def assert_like_numpy(actual, desired, **options) -> None:
    """NumPy's result: the same dtype and shape, and values within `assert_close` (tuples
    leaf by leaf, as NumPy returns them from `divmod`, `modf`, `frexp`)."""
    __tracebackhide__ = True
    if isinstance(desired, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(desired), (actual, desired)
        for a, d in zip(actual, desired):
            assert_like_numpy(a, d, **options)
        return
    a, d = np.asarray(actual), np.asarray(desired)
    assert a.dtype == d.dtype and a.shape == d.shape, (a.dtype, a.shape, d.dtype, d.shape)
    assert_close(a, d, **options)
