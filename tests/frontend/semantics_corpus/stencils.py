"""Stencils with time loops in 1D, 2D and 3D: explicit heat and wave equations (with buffers
swapped by name), Laplace relaxation, the game of life on integer arrays, advection with
np.roll, sequential sweeps."""
import numpy as np

from . import program


@program(lambda r: (r.random(12), 0.25, 10))
def heat_1d_inplace(u, alpha, steps):
    for _ in range(steps):
        u[1:-1] += alpha * (u[2:] - 2 * u[1:-1] + u[:-2])


@program(lambda r: (r.random(10), 5))
def heat_1d_copy_buffer(u, steps):
    un = u.copy()
    for _ in range(steps):
        un[:] = u
        u[1:-1] = un[1:-1] + 0.2 * (un[2:] - 2 * un[1:-1] + un[:-2])
        u[0], u[-1] = 1.0, 0.0
    return un


@program(lambda r: (r.random((7, 8)), 0.1, 4))
def heat_2d_inplace(T, k, steps):
    for _ in range(steps):
        T[1:-1, 1:-1] = T[1:-1, 1:-1] + k * (T[2:, 1:-1] + T[:-2, 1:-1] + T[1:-1, 2:]
                                             + T[1:-1, :-2] - 4 * T[1:-1, 1:-1])
    return T.mean()


@program(lambda r: (np.zeros(12), np.sin(np.linspace(0, np.pi, 12)), 0.5, 10))
def wave_1d_three_buffers(u_prev, u, c2, steps):
    u_next = np.zeros_like(u)
    for _ in range(steps):
        u_next[1:-1] = 2 * u[1:-1] - u_prev[1:-1] + c2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_prev, u, u_next = u, u_next, u_prev
    return u


@program(lambda r: (r.random((6, 6)) * 0.1, r.random((6, 6)) * 0.1, 3))
def wave_2d_three_buffers(p_old, p, steps):
    p_new = np.empty_like(p)
    c = 0.2
    for _ in range(steps):
        p_new[1:-1, 1:-1] = (2 * p[1:-1, 1:-1] - p_old[1:-1, 1:-1] + c * (
            p[2:, 1:-1] + p[:-2, 1:-1] + p[1:-1, 2:] + p[1:-1, :-2] - 4 * p[1:-1, 1:-1]))
        p_new[0, :] = p_new[-1, :] = p_new[:, 0] = p_new[:, -1] = 0.0
        p_old[:] = p
        p[:] = p_new


def _laplace_grid(r):
    phi = np.zeros((8, 8))
    phi[0, :] = 1.0
    phi[:, -1] = r.random(8)
    return (phi, 10)


@program(_laplace_grid)
def laplace_jacobi(phi, iters):
    for _ in range(iters):
        phi[1:-1, 1:-1] = 0.25 * (phi[2:, 1:-1] + phi[:-2, 1:-1]
                                  + phi[1:-1, 2:] + phi[1:-1, :-2])
    return phi


@program(lambda r: (r.random((5, 5, 5)), 3))
def laplace_3d(u, iters):
    for _ in range(iters):
        u[1:-1, 1:-1, 1:-1] = (u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] + u[1:-1, :-2, 1:-1]
                               + u[1:-1, 2:, 1:-1] + u[1:-1, 1:-1, :-2]
                               + u[1:-1, 1:-1, 2:]) / 6.0


@program(lambda r: ((r.random((8, 8)) < 0.4).astype(np.int64), 9))
def game_of_life_roll(board, steps):
    for _ in range(steps):
        n = sum(np.roll(np.roll(board, i, 0), j, 1)
                for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
        board[:] = ((n == 3) | ((board == 1) & (n == 2))).astype(int)
    return board.sum()


@program(lambda r: ((r.random((8, 9)) < 0.35).astype(np.int64), 3))
def game_of_life_padded(Z, steps):
    for _ in range(steps):
        N = np.zeros(Z.shape, dtype=int)
        N[1:-1, 1:-1] += (Z[:-2, :-2] + Z[:-2, 1:-1] + Z[:-2, 2:] + Z[1:-1, :-2]
                          + Z[1:-1, 2:] + Z[2:, :-2] + Z[2:, 1:-1] + Z[2:, 2:])
        birth = (N[1:-1, 1:-1] == 3) & (Z[1:-1, 1:-1] == 0)
        survive = ((N[1:-1, 1:-1] == 2) | (N[1:-1, 1:-1] == 3)) & (Z[1:-1, 1:-1] == 1)
        Z[...] = 0
        Z[1:-1, 1:-1][birth | survive] = 1
    return Z


@program(lambda r: ((r.random((7, 7)) < 0.5), 3))
def game_of_life_bool(alive, steps):
    for _ in range(steps):
        a = alive.astype(np.int32)
        n = np.zeros_like(a)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                if dy or dx:
                    n += np.roll(a, (dy, dx), axis=(0, 1))
        alive &= (n == 2) | (n == 3)
        alive |= n == 3


@program(lambda r: (np.exp(-((np.arange(16) - 5.0) ** 2) / 4), 0.4, 6))
def upwind_advection_roll(u, c, steps):
    for _ in range(steps):
        u -= c * (u - np.roll(u, 1))
    return u.sum()


@program(lambda r: (r.random(14), 0.3, 10))
def upwind_advection_slices(u, c, steps):
    for _ in range(steps):
        un = u.copy()
        u[1:] = un[1:] - c * (un[1:] - un[:-1])
        u[0] = un[0] - c * (un[0] - un[-1])


@program(lambda r: (r.random(12), 0.5, 4))
def lax_wendroff(u, c, steps):
    for _ in range(steps):
        up, um = np.roll(u, -1), np.roll(u, 1)
        u[:] = u - 0.5 * c * (up - um) + 0.5 * c ** 2 * (up - 2 * u + um)


@program(lambda r: (np.sin(np.linspace(0, 2 * np.pi, 16)) + 1.5, 0.05, 0.02, 5))
def burgers_1d(u, dt, nu, steps):
    dx = 2 * np.pi / (len(u) - 1)
    for _ in range(steps):
        un = u.copy()
        u[1:-1] = (un[1:-1] - un[1:-1] * dt / dx * (un[1:-1] - un[:-2])
                   + nu * dt / dx ** 2 * (un[2:] - 2 * un[1:-1] + un[:-2]))
        u[0] = u[-2]
        u[-1] = u[1]
    return u


@program(lambda r: (r.random((5, 5, 5)), 0.1, 3))
def diffusion_3d_roll(c, D, steps):
    for _ in range(steps):
        lap = -6 * c
        for axis in range(3):
            lap += np.roll(c, 1, axis=axis) + np.roll(c, -1, axis=axis)
        c += D * lap
    return c.sum()


@program(lambda r: (r.random((7, 7)), 3))
def red_black_gauss_seidel(u, iters):
    for _ in range(iters):
        for start in (1, 2):
            for i in range(1, u.shape[0] - 1):
                j0 = 1 + (i + start) % 2
                u[i, j0:-1:2] = 0.25 * (u[i - 1, j0:-1:2] + u[i + 1, j0:-1:2]
                                        + u[i, j0 - 1:-2:2] + u[i, j0 + 1::2])


@program(lambda r: (r.random((5, 5)), 1.5, 2))
def sor_sweep_loops(u, omega, sweeps):
    n, m = u.shape
    for _ in range(sweeps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                gs = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
                u[i, j] += omega * (gs - u[i, j])


@program(lambda r: (r.random(10), 4))
def heat_dirichlet_boundary(u, steps):
    for _ in range(steps):
        u[0] = 1.0
        u[-1] = 0.0
        u[1:-1] = (u[:-2] + u[1:-1] + u[2:]) / 3
    return u.max(), u.min()


@program(lambda r: (r.random(9),))
def prefix_loop_inplace(x):
    for i in range(1, len(x)):
        x[i] += x[i - 1]


@program(lambda r: (r.random((6, 7)), 0.2, 3))
def heat_2d_periodic_roll(T, a, steps):
    for _ in range(steps):
        T += a * (np.roll(T, 1, axis=0) + np.roll(T, -1, axis=0)
                  + np.roll(T, 1, axis=1) + np.roll(T, -1, axis=1) - 4 * T)


@program(lambda r: (r.random((6, 6)).astype(np.float32), np.float32(0.2), 3), n=16)
def heat_2d_float32(T, k, steps):
    Tn = np.empty_like(T)
    for _ in range(steps):
        Tn[:] = T
        Tn[1:-1, 1:-1] += k * (T[2:, 1:-1] + T[:-2, 1:-1] + T[1:-1, 2:] + T[1:-1, :-2]
                               - 4 * T[1:-1, 1:-1])
        T, Tn = Tn, T
    return T


@program(lambda r: (r.random((8,)), r.random((8,)), 4))
def leapfrog_wave_halo(u, v, steps):
    for _ in range(steps):
        v[1:-1] += 0.3 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u += 0.5 * v
        u[0] = u[-2]
        u[-1] = u[1]
