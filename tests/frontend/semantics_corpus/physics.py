"""Physics with masks: particles bouncing off walls, integrators updating state in place,
pair potentials with a cutoff (np.subtract.outer, broadcasting), masked energies, spins."""
import numpy as np

from xlanb.errors import DataDependentShapeError

from . import program


@program(lambda r: (r.random(10), r.normal(size=10), 0.1, 12))
def bounce_walls_1d(x, v, dt, steps):
    for _ in range(steps):
        x += v * dt
        v[x > 1] *= -1
        v[x < 0] *= -1
        np.clip(x, 0, 1, out=x)


@program(lambda r: (r.random((8, 2)), r.normal(size=(8, 2)), 0.2, 5))
def bounce_walls_where(pos, vel, dt, steps):
    for _ in range(steps):
        pos += vel * dt
        out = (pos < 0) | (pos > 1)
        vel = np.where(out, -vel, vel)
        pos = np.where(pos < 0, -pos, pos)
        pos = np.where(pos > 1, 2 - pos, pos)
    return pos, vel


@program(lambda r: (r.random((6, 2)) * 2 - 0.5, r.normal(size=(6, 2))))
def reflect_masked_inplace(pos, vel):
    low = pos < 0
    pos[low] = -pos[low]
    vel[low] = -vel[low]
    high = pos > 1
    pos[high] = 2 - pos[high]
    vel[high] *= -1


@program(lambda r: (r.normal(size=(7, 3)), r.random(7) + 0.5, r.random(7) > 0.4))
def kinetic_energy_masked_product(v, m, active):
    return 0.5 * np.sum(m[:, None] * v ** 2 * active[:, None])


@program(lambda r: (r.normal(size=(7, 3)), r.random(7) + 0.5, r.random(7) > 0.4),
         jit_error=DataDependentShapeError)
def kinetic_energy_boolean_index(v, m, active):
    return 0.5 * np.sum(m[active] * np.sum(v[active] ** 2, axis=1))


@program(lambda r: (r.random((6, 3)) * 3, 1.5))
def lennard_jones_cutoff(pos, rc):
    dx = np.subtract.outer(pos[:, 0], pos[:, 0])
    dy = np.subtract.outer(pos[:, 1], pos[:, 1])
    dz = np.subtract.outer(pos[:, 2], pos[:, 2])
    r2 = dx ** 2 + dy ** 2 + dz ** 2
    r2[np.arange(len(pos)), np.arange(len(pos))] = np.inf
    inv6 = np.where(r2 < rc ** 2, 1.0 / r2 ** 3, 0.0)
    return 2.0 * np.sum(inv6 ** 2 - inv6)


@program(lambda r: (r.random((5, 2)) * 2, r.choice([-1.0, 1.0], 5), 1.2))
def coulomb_forces_cutoff(pos, q, rc):
    d = pos[:, None, :] - pos[None, :, :]
    r = np.sqrt((d ** 2).sum(-1))
    np.fill_diagonal(r, np.inf)
    inside = r < rc
    f = np.where(inside, np.multiply.outer(q, q) / r ** 3, 0.0)
    return (f[..., None] * d).sum(axis=1), inside.sum() // 2


@program(lambda r: (r.random(6), np.zeros(6), 2.0, 0.05, 10))
def velocity_verlet_harmonic(x, v, k, dt, steps):
    a = -k * x
    for _ in range(steps):
        x += v * dt + 0.5 * a * dt ** 2
        a_new = -k * x
        v += 0.5 * (a + a_new) * dt
        a = a_new
    return 0.5 * np.sum(v ** 2) + 0.5 * k * np.sum(x ** 2)


@program(lambda r: (r.random((4, 2)) * 4, np.zeros((4, 2)), r.random(4) + 1, 0.01, 4))
def nbody_leapfrog(pos, vel, mass, dt, steps):
    for _ in range(steps):
        d = pos[None, :, :] - pos[:, None, :]
        r3 = (np.sum(d ** 2, axis=-1) + 0.01) ** 1.5
        acc = np.sum(mass[None, :, None] * d / r3[..., None], axis=1)
        vel += acc * dt
        pos += vel * dt


@program(lambda r: (np.cumsum(r.random(7)), 3.0, 1.0))
def spring_chain_forces(x, k, rest):
    f = np.zeros_like(x)
    stretch = np.diff(x) - rest
    f[:-1] += k * stretch
    f[1:] -= k * stretch
    return f, 0.5 * k * np.sum(stretch ** 2)


@program(lambda r: (r.choice(np.array([-1, 1]), (6, 6)), 1.0))
def ising_energy_roll(s, J):
    return -J * np.sum(s * (np.roll(s, 1, 0) + np.roll(s, 1, 1))), s.sum()


@program(lambda r: (r.choice(np.array([-1, 1]), (6, 6)), r.random((6, 6)), 0.6))
def ising_checkerboard_sweep(s, u, beta):
    ii, jj = np.indices(s.shape)
    for color in (0, 1):
        nb = np.roll(s, 1, 0) + np.roll(s, -1, 0) + np.roll(s, 1, 1) + np.roll(s, -1, 1)
        dE = 2 * s * nb
        flip = ((ii + jj) % 2 == color) & ((dE <= 0) | (u < np.exp(-beta * dE)))
        s[flip] *= -1
    return s


@program(lambda r: (r.random((6, 2)) * 3, 1.0))
def pair_count_within_radius(pos, rc):
    d2 = np.add.outer(pos[:, 0], -pos[:, 0]) ** 2 + np.add.outer(pos[:, 1], -pos[:, 1]) ** 2
    close = np.triu(d2 < rc ** 2, 1)
    return np.count_nonzero(close), close.sum(axis=1)


@program(lambda r: (r.normal(size=(6, 3)) * 4, 2.5))
def periodic_wrap_inplace(x, L):
    x -= L * np.floor(x / L)
    return x


@program(lambda r: (r.normal(size=(6, 3)) * 4, 2.5))
def periodic_wrap_mod(x, L):
    x %= L


@program(lambda r: (r.random((5, 3)) * 3, 3.0))
def minimum_image_distances(pos, L):
    d = pos[:, None, :] - pos[None, :, :]
    d -= L * np.round(d / L)
    return np.sqrt((d ** 2).sum(axis=-1))


@program(lambda r: (np.array([1.0, 0.0]), 0.1, 5))
def rk4_oscillator_state(y, dt, steps):
    def rhs(s):
        return np.array([s[1], -s[0]])
    for _ in range(steps):
        k1 = rhs(y)
        k2 = rhs(y + 0.5 * dt * k1)
        k3 = rhs(y + 0.5 * dt * k2)
        k4 = rhs(y + dt * k3)
        y[:] = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


@program(lambda r: (np.zeros((5, 2)), r.random((5, 2)) * 3 + np.array([0, 2.0]), 0.1, 6))
def projectile_ground_stop(pos, vel, dt, steps):
    g = np.array([0.0, -9.81])
    for _ in range(steps):
        vel += g * dt
        pos += vel * dt
        ground = pos[:, 1] < 0
        pos[ground, 1] = 0.0
        vel[ground] = 0.0


@program(lambda r: (r.normal(size=(8, 3)), 1.5))
def berendsen_rescale(v, T0):
    T = np.mean(np.sum(v ** 2, axis=1)) / 3
    v *= np.sqrt(T0 / T)
    return T


@program(lambda r: (r.random((6, 6)), 0.25, 3))
def heat_source_clipped(T, q, steps):
    src = np.zeros_like(T)
    src[2:4, 2:4] = q
    for _ in range(steps):
        T[1:-1, 1:-1] += 0.1 * (T[2:, 1:-1] + T[:-2, 1:-1] + T[1:-1, 2:] + T[1:-1, :-2]
                                - 4 * T[1:-1, 1:-1]) + src[1:-1, 1:-1]
        np.clip(T, 0.0, 1.0, out=T)


@program(lambda r: (r.random((5, 3)), r.normal(size=(5, 3)), r.random(5) + 0.5))
def center_of_mass_frame(pos, vel, m):
    M = m.sum()
    com = (m[:, None] * pos).sum(axis=0) / M
    vcm = (m[:, None] * vel).sum(axis=0) / M
    pos -= com
    vel -= vcm
    return com, vcm


@program(lambda r: (r.random((5, 2)) * 4, 1.0, 1.0))
def soft_sphere_overlap_energy(pos, sigma, eps):
    d = np.sqrt(np.subtract.outer(pos[:, 0], pos[:, 0]) ** 2
                + np.subtract.outer(pos[:, 1], pos[:, 1]) ** 2)
    overlap = np.maximum(0.0, sigma - d)
    overlap[np.diag_indices_from(overlap)] = 0.0
    return 0.5 * eps * np.sum(overlap ** 2)


@program(lambda r: (np.linspace(0, 1, 9), r.random(9), 0.2, 4))
def drift_diffusion_upwind_mask(x, n, vdrift, steps):
    dx = x[1] - x[0]
    for _ in range(steps):
        flux = np.where(vdrift > 0, vdrift * n[:-1], vdrift * n[1:])
        n[1:-1] -= 0.1 * (flux[1:] - flux[:-1]) / dx
        n[n < 0] = 0.0
    return n.sum() * dx
