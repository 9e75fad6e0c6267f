"""Complex arithmetic: DFT by matrix, phase rotation in place, writes through z.real and
z.imag, np.abs/np.angle/np.conj, Mandelbrot and Julia steps, complex64, split-step
propagation."""
import numpy as np

from . import program


def _z(r, *shape, dtype=np.complex128):
    return (r.normal(size=shape) + 1j * r.normal(size=shape)).astype(dtype)


@program(lambda r: (r.random(8),))
def dft_by_matrix(x):
    n = x.shape[0]
    k = np.arange(n)
    W = np.exp(-2j * np.pi * np.outer(k, k) / n)
    return W @ x


@program(lambda r: (_z(r, 8),))
def dft_inverse_roundtrip(z):
    n = len(z)
    k = np.arange(n)
    W = np.exp(-2j * np.pi * k[:, None] * k[None, :] / n)
    Z = W @ z
    back = (W.conj() @ Z) / n
    return Z, back


@program(lambda r: (_z(r, 6), 0.7))
def phase_rotate_inplace(z, theta):
    z *= np.exp(1j * theta)


@program(lambda r: (_z(r, 6), r.random(6)))
def write_real_and_imag(z, x):
    z.real = x
    z.imag *= -1
    return z


@program(lambda r: (_z(r, 7),))
def abs_angle_conj(z):
    return np.abs(z), np.angle(z), np.conj(z), z.conjugate(), np.angle(z, deg=True)


@program(lambda r: (np.linspace(-2, 0.5, 7), np.linspace(-1, 1, 5), 10))
def mandelbrot_counts_where(xs, ys, maxiter):
    c = xs[None, :] + 1j * ys[:, None]
    z = np.zeros_like(c)
    count = np.zeros(c.shape, dtype=np.int64)
    for _ in range(maxiter):
        inside = np.abs(z) <= 2
        z = np.where(inside, z * z + c, z)
        count += inside
    return count


@program(lambda r: (_z(r, 4, 4) * 0.5, -0.8 + 0.156j, 8))
def julia_masked_inplace(z, c, steps):
    alive = np.ones(z.shape, dtype=bool)
    for _ in range(steps):
        z[alive] = z[alive] ** 2 + c
        alive &= np.abs(z) < 4
    return alive


@program(lambda r: (_z(r, 6, dtype=np.complex64), _z(r, 6, dtype=np.complex64)), n=8)
def complex64_arithmetic(a, b):
    return a * b + a / (b + 2), (a * np.conj(b)).real, np.abs(a) ** 2


@program(lambda r: (r.random(6) + 0.5, r.random(6) * 6))
def polar_to_complex(r_, phi):
    z = r_ * np.exp(1j * phi)
    return z, np.abs(z), np.angle(z)


@program(lambda r: (_z(r, 4, 3),))
def hermitian_gram(A):
    G = A.conj().T @ A
    return G, np.trace(G).real, np.allclose(G, G.conj().T)


@program(lambda r: (r.random(8),))
def power_spectrum(x):
    n = len(x)
    t = np.arange(n)
    W = np.exp(-2j * np.pi * np.outer(t, t) / n)
    X = W @ (x - x.mean())
    return np.abs(X) ** 2 / n


@program(lambda r: (r.random(5), r.random(5), 0.4))
def rotate_points_complex(x, y, angle):
    z = (x + 1j * y) * np.exp(1j * angle)
    x[:] = z.real
    y[:] = z.imag


@program(lambda r: (_z(r, 3, 4),))
def complex_reductions(z):
    return z.sum(), z.mean(axis=0), np.prod(z[0]), np.sum(np.abs(z) ** 2, axis=1)


@program(lambda r: (_z(r, 7),))
def normalize_to_unit_circle(z):
    z /= np.abs(z)
    return np.abs(z).max()


@program(lambda r: (r.random(5), r.random(5)))
def build_from_real_imag(a, b):
    z = np.empty(len(a), dtype=np.complex128)
    z.real = a
    z.imag = b
    w = np.zeros(len(a), dtype=complex)
    w.real[:] = b
    return z, w, z * w


@program(lambda r: (np.exp(-((np.arange(12) - 6.0) ** 2)) * (1 + 0j), 0.05, 4))
def schrodinger_split_step(psi, dt, steps):
    x = np.linspace(-3, 3, len(psi))
    V = 0.5 * x ** 2
    for _ in range(steps):
        psi *= np.exp(-1j * V * dt / 2)
        lap = np.zeros_like(psi)
        lap[1:-1] = psi[2:] - 2 * psi[1:-1] + psi[:-2]
        psi += 0.5j * dt * lap
        psi *= np.exp(-1j * V * dt / 2)
    return np.sum(np.abs(psi) ** 2)


@program(lambda r: (_z(r, 6),))
def real_imag_functions(z):
    return np.real(z), np.imag(z), np.real(z.real), np.iscomplexobj(z), np.abs(z) > 1


@program(lambda r: (_z(r, 5), _z(r, 5)))
def complex_exp_log_sqrt(a, b):
    return np.exp(a), np.log(b), np.sqrt(a), a ** 2, a ** 0.5


@program(lambda r: (_z(r, 4), r.random(4)))
def complex_plus_real_inplace(z, x):
    z += x
    z *= 2
    z -= 1j
    return z


@program(lambda r: (_z(r, 4, 4), _z(r, 4)))
def complex_matvec_and_outer(A, v):
    return A @ v, np.outer(v, v.conj()), np.vdot(v, v), np.dot(v, A)


@program(lambda r: (_z(r, 6),))
def conj_in_place_out(z):
    np.conjugate(z, out=z)
    np.multiply(z, 1j, out=z)


@program(lambda r: (np.linspace(-1.5, 0.5, 6), np.linspace(-1, 1, 4)), jit_error=None)
def burning_ship_steps(xs, ys):
    c = xs[None, :] + 1j * ys[:, None]
    z = np.zeros_like(c)
    for _ in range(6):
        z = (np.abs(z.real) + 1j * np.abs(z.imag)) ** 2 + c
        z = np.where(np.abs(z) > 10, 10 + 0j, z)
    return z
