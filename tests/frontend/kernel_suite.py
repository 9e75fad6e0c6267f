"""Kernels in the style of public NumPy benchmark suites (PolyBench-like linear algebra,
stencils with time loops, physics, image processing), written the way their authors write
NumPy: in-place updates of arguments, writes through slices, arrays built in loops.

`CASES` maps each kernel to a factory of small inputs (seeded).
"""
import numpy as np

def atax(A, x):
    return (A @ x) @ A

def bicg(A, p, r):
    return r @ A, A @ p

def gemm(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C

def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x

def gesummv(alpha, beta, A, B, x):
    return alpha * A @ x + beta * B @ x

def mvt(x1, x2, y_1, y_2, A):
    x1 += A @ y_1
    x2 += y_2 @ A

def k2mm(alpha, beta, A, B, C, D):
    D[:] = alpha * A @ B @ C + beta * D

def k3mm(A, B, C, D):
    return A @ B @ C @ D

def syrk(alpha, beta, C, A):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]

def syr2k(alpha, beta, C, A, B):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += (A[:i + 1, k] * alpha * B[i, k] + B[:i + 1, k] * alpha * A[i, k])

def trmm(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha

def symm(alpha, beta, C, A, B):
    temp2 = np.empty((C.shape[1], ), dtype=C.dtype)
    C *= beta
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            C[:i, j] += alpha * B[i, j] * A[i, :i]
            temp2[j] = B[:i, j] @ A[i, :i]
        C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2

def doitgen(NR, NQ, NP, A, C4):
    A[:] = np.reshape(np.reshape(A, (NR, NQ, 1, NP)) @ C4, (NR, NQ, NP))

def jacobi_1d(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])

def jacobi_2d(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])

def heat_3d(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1]) +
                               0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1]) +
                               0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, 0:-2]) + A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1]) +
                               0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1]) +
                               0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, 0:-2]) + B[1:-1, 1:-1, 1:-1])

def fdtd_2d(TMAX, ex, ey, hz, _fict_):
    for t in range(TMAX):
        ey[0, :] = _fict_[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])

def seidel_2d(TSTEPS, N, A):
    for t in range(0, TSTEPS - 1):
        for i in range(1, N - 1):
            A[i, 1:-1] += (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] + A[i, 2:] + A[i + 1, :-2] + A[i + 1, 1:-1] + A[i + 1, 2:])
            for j in range(1, N - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0

def floyd_warshall(path):
    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))

def cholesky(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])

def lu(A):
    N = A.shape[0]
    for i in range(N):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, N):
            A[i, j] -= A[i, :i] @ A[:i, j]

def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]

def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y

def covariance(M, float_n, data):
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov

def correlation(M, float_n, data):
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr

def gramschmidt(A):
    Q = np.zeros_like(A)
    R = np.zeros((A.shape[1], A.shape[1]), dtype=A.dtype)
    for k in range(A.shape[1]):
        nrm = np.dot(A[:, k], A[:, k])
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, A.shape[1]):
            R[k, j] = np.dot(Q[:, k], A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R

def softmax(x):
    tmp_max = np.max(x, axis=-1, keepdims=True)
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.sum(tmp_out, axis=-1, keepdims=True)
    return tmp_out / tmp_sum

def conv2d(input, weights):
    K = weights.shape[0]
    H_out = input.shape[1] - K + 1
    W_out = input.shape[2] - K + 1
    output = np.empty((input.shape[0], H_out, W_out, weights.shape[3]), dtype=np.float32)
    for i in range(H_out):
        for j in range(W_out):
            output[:, i, j, :] = np.sum(input[:, i:i + K, j:j + K, :, np.newaxis] * weights[np.newaxis, :, :, :], axis=(1, 2, 3))
    return output

def arc_distance(theta_1, phi_1, theta_2, phi_2):
    temp = np.sin((theta_2 - theta_1) / 2)**2 + np.cos(theta_1) * np.cos(theta_2) * np.sin((phi_2 - phi_1) / 2)**2
    distance_matrix = 2 * (np.arctan2(np.sqrt(temp), np.sqrt(1 - temp)))
    return distance_matrix

def go_fast(a):
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace

def mandelbrot_step(X, Y, maxiter):
    C = X + Y[:, None] * 1j
    N = np.zeros(C.shape, dtype=np.int64)
    Z = np.zeros(C.shape, dtype=np.complex128)
    for n in range(maxiter):
        I = np.less(abs(Z), 2.0)
        N[I] = n
        Z[I] = Z[I]**2 + C[I]
    N[N == maxiter - 1] = 0
    return Z, N

def nbody_energy(pos, vel, mass, G):
    KE = 0.5 * np.sum(np.sum(mass * vel**2))
    x = pos[:, 0:1]; y = pos[:, 1:2]; z = pos[:, 2:3]
    dx = x.T - x; dy = y.T - y; dz = z.T - z
    inv_r = np.sqrt(dx**2 + dy**2 + dz**2)
    inv_r[inv_r > 0] = 1.0 / inv_r[inv_r > 0]
    PE = G * np.sum(np.sum(np.triu(-(mass * mass.T) * inv_r, 1)))
    return KE, PE

def hdiff(in_field, out_field, coeff):
    I, J, K = out_field.shape[0], out_field.shape[1], out_field.shape[2]
    lap_field = 4.0 * in_field[1:I + 3, 1:J + 3, :] - (in_field[2:I + 4, 1:J + 3, :] + in_field[0:I + 2, 1:J + 3, :] + in_field[1:I + 3, 2:J + 4, :] + in_field[1:I + 3, 0:J + 2, :])
    res = lap_field[1:, 1:J + 1, :] - lap_field[:-1, 1:J + 1, :]
    flx_field = np.where((res * (in_field[2:I + 3, 2:J + 2, :] - in_field[1:I + 2, 2:J + 2, :])) > 0, 0, res)
    res = lap_field[1:I + 1, 1:, :] - lap_field[1:I + 1, :-1, :]
    fly_field = np.where((res * (in_field[2:I + 2, 2:J + 3, :] - in_field[2:I + 2, 1:J + 2, :])) > 0, 0, res)
    out_field[:, :, :] = in_field[2:I + 2, 2:J + 2, :] - coeff[:, :, :] * (flx_field[1:, :, :] - flx_field[:-1, :, :] + fly_field[:, 1:, :] - fly_field[:, :-1, :])

def spmv_like(A, x):
    y = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        y[i] = A[i] @ x
    return y

def crc_like(v):
    out = np.empty(v.shape[0], dtype=np.int64)
    acc = 0
    for i in range(v.shape[0]):
        acc = (acc * 31 + v[i]) % 1000003
        out[i] = acc
    return out


def _inputs(rng):
    def f64(*shape):
        return rng.random(shape)

    def spd(n):
        a = f64(n, n)
        return a @ a.T + n * np.eye(n)
    n = 8
    return {
        "atax": (f64(n, n + 2), f64(n + 2)), "bicg": (f64(n, n + 1), f64(n + 1), f64(n)),
        "gemm": (1.5, 1.2, f64(n, n + 1), f64(n, n + 2), f64(n + 2, n + 1)),
        "gemver": (1.5, 1.2, f64(n, n), *[f64(n) for _ in range(8)]),
        "gesummv": (1.5, 1.2, f64(n, n), f64(n, n), f64(n)),
        "mvt": (f64(n), f64(n), f64(n), f64(n), f64(n, n)),
        "k2mm": (1.5, 1.2, f64(n, n + 1), f64(n + 1, n + 2), f64(n + 2, n + 3), f64(n, n + 3)),
        "k3mm": (f64(n, n + 1), f64(n + 1, n + 2), f64(n + 2, n + 3), f64(n + 3, n)),
        "syrk": (1.5, 1.2, f64(6, 6), f64(6, 4)),
        "syr2k": (1.5, 1.2, f64(6, 6), f64(6, 4), f64(6, 4)),
        "trmm": (1.5, f64(5, 5), f64(5, 4)),
        "symm": (1.5, 1.2, f64(5, 4), f64(5, 5), f64(5, 4)),
        "doitgen": (3, 4, 5, f64(3, 4, 5), f64(5, 5)),
        "jacobi_1d": (4, f64(12), f64(12)), "jacobi_2d": (4, f64(8, 8), f64(8, 8)),
        "heat_3d": (3, f64(6, 6, 6), f64(6, 6, 6)),
        "fdtd_2d": (3, f64(6, 7), f64(6, 7), f64(6, 7), f64(3)),
        "seidel_2d": (3, 5, f64(5, 5)),
        "floyd_warshall": (rng.integers(0, 20, (7, 7)),),
        "cholesky": (spd(5),), "lu": (spd(5),),
        "trisolv": (np.tril(f64(6, 6)) + 3 * np.eye(6), f64(6), f64(6)),
        "durbin": (f64(8) * 0.1,),
        "covariance": (5, 7.0, f64(7, 5)), "correlation": (5, 7.0, f64(7, 5)),
        "gramschmidt": (f64(7, 5),),
        "softmax": (f64(3, 4, 5).astype(np.float32),),
        "conv2d": (f64(2, 6, 6, 3).astype(np.float32), f64(3, 3, 3, 4).astype(np.float32)),
        "arc_distance": (f64(10), f64(10), f64(10), f64(10)),
        "go_fast": (f64(20, 20),),
        "mandelbrot_step": (np.linspace(-2, 1, 6), np.linspace(-1, 1, 5), 6),
        "nbody_energy": (f64(5, 3), f64(5, 3), f64(5, 1), 1.0),
        "hdiff": (f64(8, 8, 3), np.zeros((4, 4, 3)), f64(4, 4, 3)),
        "spmv_like": (f64(6, 5), f64(5)),
        "crc_like": (rng.integers(0, 100, 20),),
    }


def cases():
    """(name, kernel, inputs) for every kernel, with fresh seeded inputs."""
    inputs = _inputs(np.random.default_rng(0))
    return [(name, globals()[name], args) for name, args in inputs.items()]
