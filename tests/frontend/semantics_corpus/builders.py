"""Arrays built element by element or row by row inside the function: np.empty then a loop,
np.zeros then rows, np.array of traced scalars, np.stack of rows, grids from np.arange,
np.linspace and np.eye, Python lists turned into arrays."""
import numpy as np

from . import program


@program(lambda r: (r.random(7),))
def empty_filled_in_loop(x):
    out = np.empty(len(x))
    for i in range(len(x)):
        out[i] = x[i] ** 2 + i
    return out


@program(lambda r: (r.random((4, 3)),))
def zeros_then_rows(A):
    out = np.zeros((A.shape[0], A.shape[1] + 1))
    for i in range(A.shape[0]):
        out[i, :-1] = A[i] * i
        out[i, -1] = A[i].sum()
    return out


@program(lambda r: (r.normal(size=9),))
def array_of_traced_scalars(x):
    return np.array([x.sum(), x.mean(), x.max(), x.min(), x[0]])


@program(lambda r: (r.random(5),))
def stack_of_rows(x):
    return np.stack([x, x ** 2, x ** 3]), np.stack((x, -x), axis=1)


@program(lambda r: (r.random(4), r.random(3)))
def concatenate_and_hstack(a, b):
    return np.concatenate([a, b, [0.0]]), np.hstack((a[:2], b)), np.vstack([a[:3], b])


@program(lambda r: (11, 0.5))
def arange_grid_function(n, scale):
    h = 1.0 / (n - 1)
    x = np.arange(n) * h
    return scale * np.sin(np.pi * x) * np.exp(-x)


@program(lambda r: (r.random(), 9))
def linspace_signal(amp, n):
    t = np.linspace(0.0, 1.0, n)
    return amp * np.sin(2 * np.pi * 3 * t) + t


@program(lambda r: (4, 2.0, -1.0))
def eye_and_corner(n, alpha, beta):
    A = np.eye(n) * alpha
    A[0, -1] = beta
    A[-1, 0] = beta
    return A


@program(lambda r: (np.linspace(-1, 1, 5), np.linspace(0, 2, 4)))
def meshgrid_function(x, y):
    X, Y = np.meshgrid(x, y)
    return X ** 2 + Y, X.shape


@program(lambda r: (r.random(6), 3.5))
def full_then_fill(x, val):
    out = np.full(len(x), val)
    out[::2] = x[::2]
    other = np.empty_like(x)
    other.fill(x.mean())
    return out, other


@program(lambda r: (r.normal(size=8),))
def zeros_like_then_mask(x):
    out = np.zeros_like(x)
    out[x > 0] = x[x > 0]
    return out


@program(lambda r: (0.3,))
def rotation_matrix_from_scalar(theta):
    c, s = np.cos(theta), np.sin(theta)
    R = np.array([[c, -s], [s, c]])
    return R, R @ R.T


@program(lambda r: (r.random((2, 3)),))
def fill_3d_slices_in_loops(x):
    out = np.zeros((2, 4, 3))
    for i in range(2):
        for j in range(3):
            out[i, :, j] = x[i, j] * np.arange(4)
    return out


@program(lambda r: (r.random(5),))
def python_list_append_then_array(x):
    res = []
    for i in range(len(x)):
        res.append(x[i] * 2 + 1)
    return np.array(res)


@program(lambda r: (r.random(6) + 0.5,))
def ones_cumulative_product_loop(x):
    out = np.ones(len(x) + 1)
    for i in range(len(x)):
        out[i + 1] = out[i] * x[i]
    return out


@program(lambda r: (r.integers(0, 10, 6),))
def int32_result_array(v):
    out = np.zeros(len(v), dtype=np.int32)
    for i in range(len(v)):
        out[i] = v[i] * 3 - i
    return out


@program(lambda r: (6, r.random(6)))
def tridiagonal_build_index_arrays(n, d):
    A = np.zeros((n, n))
    i = np.arange(n)
    A[i, i] = 2.0 + d
    A[i[:-1], i[:-1] + 1] = -1.0
    A[i[1:], i[1:] - 1] = -1.0
    return A


@program(lambda r: (r.random(4), r.random(3)))
def diag_builders(v, w):
    return np.diag(v) + np.diag(np.append(w, 0.0)), np.diag(w, 1), np.diagflat(w, -1)


@program(lambda r: (r.random(5), 4))
def vandermonde_by_columns(x, deg):
    V = np.ones((len(x), deg))
    for j in range(1, deg):
        V[:, j] = V[:, j - 1] * x
    return V


@program(lambda r: (r.random(5),))
def astype_and_empty_like_float32(x):
    y = np.empty_like(x, dtype=np.float32)
    y[:] = x * 2
    z = x.astype(np.int64)
    return y, z, y.astype(np.float64) - x


@program(lambda r: (r.random(), 10))
def arange_float_step(scale, n):
    t = np.arange(0.0, 1.0, 0.1)
    return scale * t ** 2, np.arange(n, 0, -2), np.arange(3.0, dtype=np.float32)


@program(lambda r: (r.normal(size=3) + 1j * r.normal(size=3),))
def array_of_complex_traced(z):
    return np.array([z[0], z[1].conj(), 1.0]), np.array([z.real.sum(), z.imag.sum()])


@program(lambda r: (r.random((3, 4)),))
def row_results_list_then_vstack(A):
    rows = []
    for row in A:
        rows.append(row / row.sum())
    return np.vstack(rows), np.array(rows).sum(axis=0)


@program(lambda r: (r.random(4),))
def zeros_shape_from_argument(x):
    out = np.zeros(x.shape + (2,))
    out[..., 0] = x
    out[..., 1] = -x
    return out


@program(lambda r: (r.random((3, 3)),))
def identity_plus_scaled(A):
    n = A.shape[0]
    M = np.identity(n) + 0.5 * A
    M[np.diag_indices(n)] += 1.0
    return M


@program(lambda r: (r.random(5),))
def tile_and_repeat(x):
    return np.tile(x, 2), np.repeat(x, 2), np.tile(x[:2], (2, 2))


@program(lambda r: (r.random(6),))
def empty_then_two_halves(x):
    n = len(x) // 2
    out = np.empty((2, n))
    out[0] = x[:n]
    out[1] = x[n:][::-1]
    return out
