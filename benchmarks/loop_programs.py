"""Loop-heavy NumPy programs, written as their authors write them (issue 13's corpus).

Stencils in 1, 2 and 3 D with time loops, iterative solvers, per-row loops, element-wise
scalar loops and loops with a data-dependent `if`.  `PROGRAMS` maps a name to
(function, make_args(rng), static_argnums); sizes are realistic for a 2-core laptop.
None was chosen because xlanb is good at it.
"""
from __future__ import annotations

import numpy as np


# -- stencils with time loops -------------------------------------------------------------

def jacobi_1d(steps, A, B):
    for _ in range(1, steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def jacobi_2d(steps, A, B):
    for _ in range(1, steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1]
                               + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1]
                               + B[:-2, 1:-1])


def heat_3d(steps, A, B):
    for _ in range(1, steps):
        B[1:-1, 1:-1, 1:-1] = (
            0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
            + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
            + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2])
            + A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (
            0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1])
            + 0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1])
            + 0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2])
            + B[1:-1, 1:-1, 1:-1])


def fdtd_2d(steps, ex, ey, hz, fict):
    for t in range(steps):
        ey[0, :] = fict[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def wave_1d(steps, u):
    """Three time levels, rotated by rebinding names."""
    prev, cur = u.copy(), u.copy()
    c2 = 0.25
    for _ in range(steps):
        nxt = np.empty_like(cur)
        nxt[1:-1] = 2 * cur[1:-1] - prev[1:-1] + c2 * (cur[2:] - 2 * cur[1:-1] + cur[:-2])
        nxt[0] = nxt[-1] = 0.0
        prev, cur = cur, nxt
    return cur


def advection_roll(steps, q, velocity):
    for _ in range(steps):
        q = q - velocity * (q - np.roll(q, 1))
    return q


def game_of_life(steps, board):
    for _ in range(steps):
        neighbours = sum(np.roll(np.roll(board, i, 0), j, 1)
                         for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
        board = ((neighbours == 3) | ((board == 1) & (neighbours == 2))).astype(board.dtype)
    return board


def laplace_2d(steps, u):
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])
    return u


# -- iterative solvers --------------------------------------------------------------------

def conjugate_gradient(A, b, iterations):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs = r @ r
    for _ in range(iterations):
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x += alpha * p
        r -= alpha * Ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def power_iteration(A, v, iterations):
    for _ in range(iterations):
        v = A @ v
        v /= np.linalg.norm(v)
    return v, v @ A @ v


def jacobi_solver(A, b, iterations):
    d = np.diag(A)
    R = A - np.diag(d)
    x = np.zeros_like(b)
    for _ in range(iterations):
        x = (b - R @ x) / d
    return x


def gradient_descent_logreg(X, y, w, steps, lr):
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        w -= lr * X.T @ (p - y) / X.shape[0]
    return w


def kmeans(points, centers, iterations):
    for _ in range(iterations):
        d = ((points[:, None, :] - centers[None, :, :]) ** 2).sum(-1)
        nearest = d.argmin(axis=1)
        onehot = (nearest[:, None] == np.arange(centers.shape[0])).astype(points.dtype)
        counts = onehot.sum(0)
        centers = (onehot.T @ points) / np.maximum(counts, 1.0)[:, None]
    return centers


# -- per-row and element-wise scalar loops -------------------------------------------------

def row_softmax_loop(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        e = np.exp(x[i] - x[i].max())
        out[i] = e / e.sum()
    return out


def row_standardize_loop(x):
    for i in range(x.shape[0]):
        x[i] = (x[i] - x[i].mean()) / (x[i].std() + 1e-8)
    return x


def gauss_seidel_rows(A, b, x, sweeps):
    n = A.shape[0]
    for _ in range(sweeps):
        for i in range(n):
            x[i] = (b[i] - A[i, :i] @ x[:i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x


def trace_tanh(a):
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def recurrence(v):
    out = np.empty(v.shape[0], dtype=np.int64)
    acc = 0
    for i in range(v.shape[0]):
        acc = (acc * 31 + v[i]) % 1000003
        out[i] = acc
    return out


def floyd_warshall(path):
    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))
    return path


def nbody_euler(pos, vel, mass, steps, dt):
    for _ in range(steps):
        dx = np.subtract.outer(pos[:, 0], pos[:, 0])
        dy = np.subtract.outer(pos[:, 1], pos[:, 1])
        r3 = (dx * dx + dy * dy + 0.01) ** 1.5
        vel[:, 0] -= dt * (mass * dx / r3).sum(axis=1)
        vel[:, 1] -= dt * (mass * dy / r3).sum(axis=1)
        pos += dt * vel
    return pos


# -- loops with a data-dependent if --------------------------------------------------------

def damped_walk(acc, steps):
    for i in range(steps.shape[0]):
        if acc[0] > 2.0:
            acc *= 0.5
        acc += steps[i]
    return acc.sum()


def newton_sqrt(a, iterations):
    x = a.copy()
    for _ in range(iterations):
        x_new = 0.5 * (x + a / x)
        if np.abs(x_new - x).max() < 1e-12:
            return x_new
        x = x_new
    return x


def mandelbrot(X, Y, maxiter):
    C = X + Y[:, None] * 1j
    N = np.zeros(C.shape, dtype=np.int64)
    Z = np.zeros(C.shape, dtype=np.complex128)
    for n in range(maxiter):
        inside = np.less(abs(Z), 2.0)
        N[inside] = n
        Z[inside] = Z[inside] ** 2 + C[inside]
    return N


def _spd(rng, n):
    a = rng.random((n, n))
    return a @ a.T + n * np.eye(n)


PROGRAMS = {
    "jacobi_1d": (jacobi_1d, lambda r: (100, r.random(100_000), r.random(100_000)), (0,)),
    "jacobi_2d": (jacobi_2d, lambda r: (50, r.random((256, 256)), r.random((256, 256))),
                  (0,)),
    "heat_3d": (heat_3d, lambda r: (20, r.random((40, 40, 40)), r.random((40, 40, 40))),
                (0,)),
    "fdtd_2d": (fdtd_2d, lambda r: (50, r.random((200, 240)), r.random((200, 240)),
                                    r.random((200, 240)), r.random(50)), (0,)),
    "wave_1d": (wave_1d, lambda r: (100, np.sin(np.linspace(0, 3, 100_000))), (0,)),
    "advection_roll": (advection_roll, lambda r: (100, r.random(100_000), 0.3), (0,)),
    "game_of_life": (game_of_life, lambda r: (20, r.integers(0, 2, (128, 128))), (0,)),
    "laplace_2d": (laplace_2d, lambda r: (50, r.random((200, 200))), (0,)),
    "conjugate_gradient": (conjugate_gradient, lambda r: (_spd(r, 200), r.random(200), 20),
                           (2,)),
    "power_iteration": (power_iteration, lambda r: (_spd(r, 300), r.random(300), 30), (2,)),
    "jacobi_solver": (jacobi_solver, lambda r: (_spd(r, 200) + 200 * np.eye(200),
                                                r.random(200), 30), (2,)),
    "logreg_gd": (gradient_descent_logreg,
                  lambda r: (r.random((500, 10)), (r.random(500) > 0.5).astype(float),
                             np.zeros(10), 50, 0.5), (3,)),
    "kmeans": (kmeans, lambda r: (r.random((1000, 2)), r.random((5, 2)), 10), (2,)),
    "row_softmax_loop": (row_softmax_loop, lambda r: (r.random((256, 512)),), ()),
    "row_standardize_loop": (row_standardize_loop, lambda r: (r.random((128, 512)),), ()),
    "gauss_seidel_rows": (gauss_seidel_rows,
                          lambda r: (_spd(r, 48) + 48 * np.eye(48), r.random(48),
                                     np.zeros(48), 3), (3,)),
    "trace_tanh": (trace_tanh, lambda r: (r.random((1000, 1000)),), ()),
    "recurrence": (recurrence, lambda r: (r.integers(0, 100, 500),), ()),
    "floyd_warshall": (floyd_warshall, lambda r: (r.integers(0, 100, (64, 64)),), ()),
    "nbody_euler": (nbody_euler, lambda r: (r.random((64, 2)), np.zeros((64, 2)),
                                            r.random(64), 20, 1e-3), (3,)),
    "damped_walk": (damped_walk, lambda r: (r.random(256), r.random((50, 256))), ()),
    "newton_sqrt": (newton_sqrt, lambda r: (r.random(10_000) + 0.5, 50), (1,)),
    "mandelbrot": (mandelbrot, lambda r: (np.linspace(-2, 1, 200), np.linspace(-1, 1, 200),
                                          20), (2,)),
}
