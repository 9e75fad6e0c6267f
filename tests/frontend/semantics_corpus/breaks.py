"""Programs with Python control flow on array values and data-dependent shapes between
in-place updates: `jit` refuses them with a named error (and writes nothing), auto-
clustering runs the parts around each break compiled and must leave every argument, view
and alias as NumPy does."""
import numpy as np

from xlanb.errors import (ConcretizationError, DataDependentShapeError,
                          UnsupportedNumPyFunctionError)

from . import program


@program(lambda r: (r.random(6), r.random(6)), jit_error=ConcretizationError)
def write_branch_then_unique(x, y):
    x *= 2
    if x.sum() > 1:
        y += x
    u = np.unique(np.round(x))
    x[:len(u)] = u
    return u


@program(lambda r: (r.random((3, 3)) - 0.3,), jit_error=ConcretizationError)
def views_written_across_branches(M):
    row = M[0]
    col = M[:, 1]
    if M.sum() > 0:
        row *= 2
    col += 1
    if M.max() > 100:
        M[:] = 0
    return row, col


@program(lambda r: (lambda v: (v[1:], v[:-1]))(r.random(7)), jit_error=ConcretizationError)
def aliased_views_with_a_branch(a, b):
    a[1:] += b[:-1]
    if a.mean() > 0.5:
        b *= -1
    return a


@program(lambda r: (r.random(6),), jit_error=ConcretizationError)
def count_then_write_through_views(z):
    v = z[::2]
    n = int(np.count_nonzero(z > 0.5))
    v[:n] = 7.0
    w = z.reshape(2, -1)
    w[1] += n
    return z


@program(lambda r: (r.random(5),), jit_error=ConcretizationError)
def elementwise_if_else_loop(x):
    out = np.zeros(5)
    for i in range(5):
        if x[i] > 0.5:
            out[i] = x[i]
        else:
            out[i] = -x[i]
    return out


@program(lambda r: (r.random((3, 3)),), jit_error=ConcretizationError)
def transpose_view_conditional_scaling(x):
    t = x.T
    for k in range(3):
        if t[0, k] > 0.5:
            t[:, k] *= 2
    return t


@program(lambda r: (r.random(6) * 2, r.integers(0, 6, 4)),
         jit_error=UnsupportedNumPyFunctionError)
def repeated_index_update_then_mask(x, idx):
    x[idx] += 1
    y = x[x > 1]
    x[x > 1] = 0
    return y.sum(), x


@program(lambda r: (r.random((4, 3)) + 0.5,), jit_error=DataDependentShapeError)
def nonzero_rows_and_fancy_copy(A):
    B = A
    B += 1
    keep = np.nonzero(A[:, 0] > 1.5)[0]
    A[keep, 1] = -1
    C = A[keep]
    C[:] = 9
    return C


@program(lambda r: (r.random(8),), jit_error=ConcretizationError)
def while_loop_on_a_running_sum(x):
    s = 0.0
    i = 0
    while s < 2.0 and i < len(x):
        s += x[i]
        i += 1
    x[:i] = s
    return i, s


@program(lambda r: (r.random(6) * 4, 1e-8), jit_error=ConcretizationError)
def bisection_sqrt_with_convergence(a, tol):
    lo, hi = np.zeros_like(a), np.maximum(a, 1.0)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        too_big = mid * mid > a
        hi = np.where(too_big, mid, hi)
        lo = np.where(too_big, lo, mid)
        if np.max(hi - lo) < tol:
            break
    return 0.5 * (lo + hi)


@program(lambda r: (r.random((5, 2)) * 2 - 0.5, r.normal(size=(5, 2))),
         jit_error=DataDependentShapeError)
def escaped_particles_removed(pos, vel):
    out = np.any((pos < 0) | (pos > 1), axis=1)
    escaped = np.flatnonzero(out)
    pos[escaped] = 0.5
    vel[escaped] = 0.0
    return escaped.size
