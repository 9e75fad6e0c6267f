"""Kernels written after public NumPy benchmark suites (PolyBench and npbench: ludcmp, adi,
deriche, nussinov, cavity and channel flow, azimuthal integration, crc16, vertical
advection, CSR spmv, MLP, LeNet, a ResNet block, scattering self-energies), in their
authors' style and at toy sizes: helpers that update arguments in place, np.ndarray and
np.empty buffers filled in loops, Python control flow on array values."""
import numpy as np

from xlanb.errors import ConcretizationError, DataDependentShapeError

from . import program


def _dominant(r, n):
    return r.random((n, n)) + n * np.eye(n)


@program(lambda r: (_dominant(r, 5), r.random(5)))
def ludcmp(A, b):
    x = np.zeros_like(b)
    y = np.zeros_like(b)
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]
    for i in range(A.shape[0]):
        y[i] = b[i] - A[i, :i] @ y[:i]
    for i in range(A.shape[0] - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x, y


@program(lambda r: (2, 6, r.random((6, 6))))
def adi(TSTEPS, N, u):
    v = np.empty(u.shape, dtype=u.dtype)
    p = np.empty(u.shape, dtype=u.dtype)
    q = np.empty(u.shape, dtype=u.dtype)
    DX = 1.0 / N
    DY = 1.0 / N
    DT = 1.0 / TSTEPS
    B1 = 2.0
    B2 = 1.0
    mul1 = B1 * DT / (DX * DX)
    mul2 = B2 * DT / (DY * DY)
    a = -mul1 / 2.0
    b = 1.0 + mul2
    c = a
    d = -mul2 / 2.0
    e = 1.0 + mul2
    f = d
    for t in range(1, TSTEPS + 1):
        v[0, 1:N - 1] = 1.0
        p[1:N - 1, 0] = 0.0
        q[1:N - 1, 0] = v[0, 1:N - 1]
        for j in range(1, N - 1):
            p[1:N - 1, j] = -c / (a * p[1:N - 1, j - 1] + b)
            q[1:N - 1, j] = (-d * u[j, 0:N - 2] + (1.0 + 2.0 * d) * u[j, 1:N - 1]
                             - f * u[j, 2:N] - a * q[1:N - 1, j - 1]) / (a * p[1:N - 1, j - 1] + b)
        v[N - 1, 1:N - 1] = 1.0
        for j in range(N - 2, 0, -1):
            v[j, 1:N - 1] = p[1:N - 1, j] * v[j + 1, 1:N - 1] + q[1:N - 1, j]
        u[1:N - 1, 0] = 1.0
        p[1:N - 1, 0] = 0.0
        q[1:N - 1, 0] = u[1:N - 1, 0]
        for j in range(1, N - 1):
            p[1:N - 1, j] = -f / (d * p[1:N - 1, j - 1] + e)
            q[1:N - 1, j] = (-a * v[0:N - 2, j] + (1.0 + 2.0 * a) * v[1:N - 1, j]
                             - c * v[2:N, j] - d * q[1:N - 1, j - 1]) / (d * p[1:N - 1, j - 1] + e)
        u[1:N - 1, N - 1] = 1.0
        for j in range(N - 2, 0, -1):
            u[1:N - 1, j] = p[1:N - 1, j] * u[1:N - 1, j + 1] + q[1:N - 1, j]


@program(lambda r: (0.25, r.random((5, 6))))
def deriche(alpha, imgIn):
    k = (1.0 - np.exp(-alpha)) * (1.0 - np.exp(-alpha)) / (
        1.0 + alpha * np.exp(-alpha) - np.exp(2.0 * alpha))
    a1 = a5 = k
    a2 = a6 = k * np.exp(-alpha) * (alpha - 1.0)
    a3 = a7 = k * np.exp(-alpha) * (alpha + 1.0)
    a4 = a8 = -k * np.exp(-2.0 * alpha)
    b1 = 2.0 ** (-alpha)
    b2 = -np.exp(-2.0 * alpha)
    c1 = 1
    y1 = np.empty_like(imgIn)
    y1[:, 0] = a1 * imgIn[:, 0]
    y1[:, 1] = a1 * imgIn[:, 1] + a2 * imgIn[:, 0] + b1 * y1[:, 0]
    for j in range(2, imgIn.shape[1]):
        y1[:, j] = (a1 * imgIn[:, j] + a2 * imgIn[:, j - 1] + b1 * y1[:, j - 1]
                    + b2 * y1[:, j - 2])
    y2 = np.empty_like(imgIn)
    y2[:, -1] = 0.0
    y2[:, -2] = a3 * imgIn[:, -1]
    for j in range(imgIn.shape[1] - 3, -1, -1):
        y2[:, j] = (a3 * imgIn[:, j + 1] + a4 * imgIn[:, j + 2] + b1 * y2[:, j + 1]
                    + b2 * y2[:, j + 2])
    imgOut = c1 * (y1 + y2)
    y1[0, :] = a5 * imgOut[0, :]
    y1[1, :] = a5 * imgOut[1, :] + a6 * imgOut[0, :] + b1 * y1[0, :]
    for i in range(2, imgIn.shape[0]):
        y1[i, :] = (a5 * imgOut[i, :] + a6 * imgOut[i - 1, :] + b1 * y1[i - 1, :]
                    + b2 * y1[i - 2, :])
    y2[-1, :] = 0.0
    y2[-2, :] = a7 * imgOut[-1, :]
    for i in range(imgIn.shape[0] - 3, -1, -1):
        y2[i, :] = (a7 * imgOut[i + 1, :] + a8 * imgOut[i + 2, :] + b1 * y2[i + 1, :]
                    + b2 * y2[i + 2, :])
    imgOut[:] = c1 * (y1 + y2)
    return imgOut


def _match(b1, b2):
    if b1 + b2 == 3:
        return 1
    else:
        return 0


@program(lambda r: (5, r.integers(0, 4, 5).astype(np.int32)), jit_error=ConcretizationError)
def nussinov(N, seq):
    table = np.zeros((N, N), np.int32)
    for i in range(N - 1, -1, -1):
        for j in range(i + 1, N):
            if j - 1 >= 0:
                table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < N:
                table[i, j] = max(table[i, j], table[i + 1, j])
            if j - 1 >= 0 and i + 1 < N:
                if i < j - 1:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1] + _match(seq[i], seq[j]))
                else:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1])
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])
    return table


def _build_up_b(b, rho, dt, u, v, dx, dy):
    b[1:-1, 1:-1] = (rho * (1 / dt * ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)
                                      + (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))
                            - ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)) ** 2
                            - 2 * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy)
                                   * (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx))
                            - ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)) ** 2))


def _pressure_poisson(nit, p, dx, dy, b):
    pn = np.empty_like(p)
    pn = p.copy()
    for q in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy ** 2
                          + (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx ** 2)
                         / (2 * (dx ** 2 + dy ** 2))
                         - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, 1:-1])
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[:, 0] = p[:, 1]
        p[-1, :] = 0


@program(lambda r: (6, 6, 2, 3, np.zeros((6, 6)), np.zeros((6, 6)), 0.001, 2 / 5, 2 / 5,
                    np.zeros((6, 6)), 1.0, 0.1))
def cavity_flow(nx, ny, nt, nit, u, v, dt, dx, dy, p, rho, nu):
    un = np.empty_like(u)
    vn = np.empty_like(v)
    b = np.zeros((ny, nx))
    for n in range(nt):
        un = u.copy()
        vn = v.copy()
        _build_up_b(b, rho, dt, u, v, dx, dy)
        _pressure_poisson(nit, p, dx, dy, b)
        u[1:-1, 1:-1] = (un[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx
                         * (un[1:-1, 1:-1] - un[1:-1, 0:-2])
                         - vn[1:-1, 1:-1] * dt / dy * (un[1:-1, 1:-1] - un[0:-2, 1:-1])
                         - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2])
                         + nu * (dt / dx ** 2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1]
                                                 + un[1:-1, 0:-2])
                                 + dt / dy ** 2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1]
                                                   + un[0:-2, 1:-1])))
        v[1:-1, 1:-1] = (vn[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx
                         * (vn[1:-1, 1:-1] - vn[1:-1, 0:-2])
                         - vn[1:-1, 1:-1] * dt / dy * (vn[1:-1, 1:-1] - vn[0:-2, 1:-1])
                         - dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1])
                         + nu * (dt / dx ** 2 * (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1]
                                                 + vn[1:-1, 0:-2])
                                 + dt / dy ** 2 * (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1]
                                                   + vn[0:-2, 1:-1])))
        u[0, :] = 0
        u[:, 0] = 0
        u[:, -1] = 0
        u[-1, :] = 1
        v[0, :] = 0
        v[-1, :] = 0
        v[:, 0] = 0
        v[:, -1] = 0


@program(lambda r: (5, 6, 3, r.random((5, 6)), r.random((5, 6)), 0.01, 0.4, 0.4,
                    np.zeros((5, 6)), 1.0, 0.1, 1.0), jit_error=ConcretizationError)
def channel_flow_until_converged(nit, nx, nsteps, u, v, dt, dx, dy, p, rho, nu, F):
    udiff = 1.0
    stepcount = 0
    while udiff > 1e-3 and stepcount < nsteps:
        un = u.copy()
        vn = v.copy()
        p[1:-1, 1:-1] = 0.25 * (p[1:-1, 2:] + p[1:-1, :-2] + p[2:, 1:-1] + p[:-2, 1:-1])
        p[:, -1] = p[:, 0]
        u[1:-1, 1:-1] = (un[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx
                         * (un[1:-1, 1:-1] - un[1:-1, 0:-2])
                         - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2])
                         + nu * dt / dx ** 2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1]
                                                + un[1:-1, 0:-2]) + F * dt)
        u[1:-1, -1] = u[1:-1, 1]
        u[0, :] = 0
        u[-1, :] = 0
        v[1:-1, 1:-1] = vn[1:-1, 1:-1] - vn[1:-1, 1:-1] * dt / dy * (
            vn[1:-1, 1:-1] - vn[0:-2, 1:-1])
        v[0, :] = 0
        v[-1, :] = 0
        udiff = (np.sum(u) - np.sum(un)) / np.sum(u)
        stepcount += 1
    return stepcount


@program(lambda r: (r.random(40), r.random(40) * 3, 4))
def azimint_naive(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask_r12 = np.logical_and((r1 <= radius), (radius < r2))
        values_r12 = data[mask_r12]
        res[i] = values_r12.mean()
    return res


@program(lambda r: (r.integers(0, 20, (4, 5)), r.integers(0, 20, (4, 5)), 4, 3, 9))
def compute_clip(array_1, array_2, a, b, c):
    return np.clip(array_1, 2, 10) * a + array_2 * b + c


@program(lambda r: (r.integers(0, 256, 3).astype(np.uint8),), jit_error=ConcretizationError)
def crc16(data, poly=0x8408):
    crc = 0xFFFF
    for b in data:
        cur_byte = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur_byte & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur_byte >>= 1
    crc = (~crc & 0xFFFF)
    crc = (crc << 8) | ((crc >> 8) & 0xFF)
    return crc & 0xFFFF


BET_M = 0.5
BET_P = 0.5


# np.ndarray(shape) is a constructor, not a creation function xlanb can trace: writing
# traced values into its arrays is a named error under jit (np.empty(shape) compiles)
@program(lambda r: (r.random((3, 2, 4)), r.random((3, 2, 4)), r.random((4, 2, 5)),
                    r.random((3, 2, 4)), r.random((3, 2, 4)), 0.5),
         jit_error=ConcretizationError)
def vadv(utens_stage, u_stage, wcon, u_pos, utens, dtr_stage):
    I, J, K = utens_stage.shape[0], utens_stage.shape[1], utens_stage.shape[2]
    ccol = np.ndarray((I, J, K), dtype=utens_stage.dtype)
    dcol = np.ndarray((I, J, K), dtype=utens_stage.dtype)
    data_col = np.ndarray((I, J), dtype=utens_stage.dtype)
    for k in range(1):
        gcv = 0.25 * (wcon[1:, :, k + 1] + wcon[:-1, :, k + 1])
        cs = gcv * BET_M
        ccol[:, :, k] = gcv * BET_P
        bcol = dtr_stage - ccol[:, :, k]
        correction_term = -cs * (u_stage[:, :, k + 1] - u_stage[:, :, k])
        dcol[:, :, k] = (dtr_stage * u_pos[:, :, k] + utens[:, :, k] + utens_stage[:, :, k]
                         + correction_term)
        divided = 1.0 / bcol
        ccol[:, :, k] = ccol[:, :, k] * divided
        dcol[:, :, k] = dcol[:, :, k] * divided
    for k in range(1, K - 1):
        gav = -0.25 * (wcon[1:, :, k] + wcon[:-1, :, k])
        gcv = 0.25 * (wcon[1:, :, k + 1] + wcon[:-1, :, k + 1])
        as_ = gav * BET_M
        cs = gcv * BET_M
        acol = gav * BET_P
        ccol[:, :, k] = gcv * BET_P
        bcol = dtr_stage - acol - ccol[:, :, k]
        correction_term = -as_ * (u_stage[:, :, k - 1] - u_stage[:, :, k]) - cs * (
            u_stage[:, :, k + 1] - u_stage[:, :, k])
        dcol[:, :, k] = (dtr_stage * u_pos[:, :, k] + utens[:, :, k] + utens_stage[:, :, k]
                         + correction_term)
        divided = 1.0 / (bcol - ccol[:, :, k - 1] * acol)
        ccol[:, :, k] = ccol[:, :, k] * divided
        dcol[:, :, k] = (dcol[:, :, k] - (dcol[:, :, k - 1]) * acol) * divided
    for k in range(K - 1, K):
        gav = -0.25 * (wcon[1:, :, k] + wcon[:-1, :, k])
        as_ = gav * BET_M
        acol = gav * BET_P
        bcol = dtr_stage - acol
        correction_term = -as_ * (u_stage[:, :, k - 1] - u_stage[:, :, k])
        dcol[:, :, k] = (dtr_stage * u_pos[:, :, k] + utens[:, :, k] + utens_stage[:, :, k]
                         + correction_term)
        divided = 1.0 / (bcol - ccol[:, :, k - 1] * acol)
        dcol[:, :, k] = (dcol[:, :, k] - (dcol[:, :, k - 1]) * acol) * divided
    for k in range(K - 1, K - 2, -1):
        datacol = dcol[:, :, k]
        data_col[:] = datacol
        utens_stage[:, :, k] = dtr_stage * (datacol - u_pos[:, :, k])
    for k in range(K - 2, -1, -1):
        datacol = dcol[:, :, k] - ccol[:, :, k] * data_col[:, :]
        data_col[:] = datacol
        utens_stage[:, :, k] = dtr_stage * (datacol - u_pos[:, :, k])


@program(lambda r: (r.random((3, 2, 4)), r.random((3, 2, 4)), r.random((4, 2, 5)),
                    r.random((3, 2, 4)), r.random((3, 2, 4)), 0.5))
def vadv_empty(utens_stage, u_stage, wcon, u_pos, utens, dtr_stage):
    I, J, K = utens_stage.shape[0], utens_stage.shape[1], utens_stage.shape[2]
    ccol = np.empty((I, J, K), dtype=utens_stage.dtype)
    dcol = np.empty((I, J, K), dtype=utens_stage.dtype)
    data_col = np.empty((I, J), dtype=utens_stage.dtype)
    for k in range(1):
        gcv = 0.25 * (wcon[1:, :, k + 1] + wcon[:-1, :, k + 1])
        cs = gcv * BET_M
        ccol[:, :, k] = gcv * BET_P
        bcol = dtr_stage - ccol[:, :, k]
        correction_term = -cs * (u_stage[:, :, k + 1] - u_stage[:, :, k])
        dcol[:, :, k] = (dtr_stage * u_pos[:, :, k] + utens[:, :, k] + utens_stage[:, :, k]
                         + correction_term)
        divided = 1.0 / bcol
        ccol[:, :, k] = ccol[:, :, k] * divided
        dcol[:, :, k] = dcol[:, :, k] * divided
    for k in range(1, K - 1):
        gav = -0.25 * (wcon[1:, :, k] + wcon[:-1, :, k])
        gcv = 0.25 * (wcon[1:, :, k + 1] + wcon[:-1, :, k + 1])
        as_ = gav * BET_M
        cs = gcv * BET_M
        acol = gav * BET_P
        ccol[:, :, k] = gcv * BET_P
        bcol = dtr_stage - acol - ccol[:, :, k]
        correction_term = -as_ * (u_stage[:, :, k - 1] - u_stage[:, :, k]) - cs * (
            u_stage[:, :, k + 1] - u_stage[:, :, k])
        dcol[:, :, k] = (dtr_stage * u_pos[:, :, k] + utens[:, :, k] + utens_stage[:, :, k]
                         + correction_term)
        divided = 1.0 / (bcol - ccol[:, :, k - 1] * acol)
        ccol[:, :, k] = ccol[:, :, k] * divided
        dcol[:, :, k] = (dcol[:, :, k] - (dcol[:, :, k - 1]) * acol) * divided
    for k in range(K - 1, K):
        gav = -0.25 * (wcon[1:, :, k] + wcon[:-1, :, k])
        as_ = gav * BET_M
        acol = gav * BET_P
        bcol = dtr_stage - acol
        correction_term = -as_ * (u_stage[:, :, k - 1] - u_stage[:, :, k])
        dcol[:, :, k] = (dtr_stage * u_pos[:, :, k] + utens[:, :, k] + utens_stage[:, :, k]
                         + correction_term)
        divided = 1.0 / (bcol - ccol[:, :, k - 1] * acol)
        dcol[:, :, k] = (dcol[:, :, k] - (dcol[:, :, k - 1]) * acol) * divided
    for k in range(K - 1, K - 2, -1):
        datacol = dcol[:, :, k]
        data_col[:] = datacol
        utens_stage[:, :, k] = dtr_stage * (datacol - u_pos[:, :, k])
    for k in range(K - 2, -1, -1):
        datacol = dcol[:, :, k] - ccol[:, :, k] * data_col[:, :]
        data_col[:] = datacol
        utens_stage[:, :, k] = dtr_stage * (datacol - u_pos[:, :, k])


def _csr(r, rows=4, cols=5):
    dense = np.where(r.random((rows, cols)) < 0.5, r.random((rows, cols)), 0.0)
    A_row = np.concatenate([[0], np.cumsum((dense != 0).sum(axis=1))]).astype(np.int64)
    A_col = np.nonzero(dense)[1].astype(np.int64)
    return A_row, A_col, dense[dense != 0], r.random(cols)


@program(_csr, jit_error=ConcretizationError)
def spmv_csr(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1, A_val.dtype)
    for i in range(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]
    return y


def _relu(x):
    return np.maximum(x, 0)


def _softmax(x):
    tmp_max = np.max(x, axis=-1, keepdims=True)
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.sum(tmp_out, axis=-1, keepdims=True)
    return tmp_out / tmp_sum


def _f32(r, *shape):
    return r.normal(size=shape).astype(np.float32)


@program(lambda r: (_f32(r, 3, 6), _f32(r, 6, 5), _f32(r, 5), _f32(r, 5, 4), _f32(r, 4),
                    _f32(r, 4, 3), _f32(r, 3)), n=8)
def mlp(input, w1, b1, w2, b2, w3, b3):
    x = _relu(input @ w1 + b1)
    x = _relu(x @ w2 + b2)
    x = _softmax(x @ w3 + b3)
    return x


def _conv2d(input, weights):
    K = weights.shape[0]
    N = input.shape[0]
    H_out = input.shape[1] - K + 1
    W_out = input.shape[2] - K + 1
    C_out = weights.shape[3]
    output = np.empty((N, H_out, W_out, C_out), dtype=np.float32)
    for i in range(H_out):
        for j in range(W_out):
            output[:, i, j, :] = np.sum(input[:, i:i + K, j:j + K, :, np.newaxis]
                                        * weights[np.newaxis, :, :, :], axis=(1, 2, 3))
    return output


def _maxpool2d(x):
    output = np.empty([x.shape[0], x.shape[1] // 2, x.shape[2] // 2, x.shape[3]],
                      dtype=x.dtype)
    for i in range(x.shape[1] // 2):
        for j in range(x.shape[2] // 2):
            output[:, i, j, :] = np.max(x[:, 2 * i:2 * i + 2, 2 * j:2 * j + 2, :], axis=(1, 2))
    return output


@program(lambda r: (_f32(r, 2, 6, 6, 1), _f32(r, 3, 3, 1, 2), _f32(r, 2), _f32(r, 8, 3),
                    _f32(r, 3), 2, 8), n=32)
def lenet_small(input, conv1, conv1bias, fc1w, fc1b, N, C_before_fc1):
    x = _relu(_conv2d(input, conv1) + conv1bias)
    x = _maxpool2d(x)
    x = np.reshape(x, (N, C_before_fc1))
    return _relu(x @ fc1w + fc1b)


def _batchnorm2d(x, eps=1e-5):
    mean = np.mean(x, axis=0, keepdims=True)
    std = np.std(x, axis=0, keepdims=True)
    return (x - mean) / np.sqrt(std + eps)


@program(lambda r: (_f32(r, 2, 4, 4, 2), _f32(r, 1, 1, 2, 2), _f32(r, 3, 3, 2, 2)), n=32, k=64)
def resnet_basicblock(input, conv1, conv2):
    padded = np.zeros((input.shape[0], input.shape[1] + 2, input.shape[2] + 2,
                       conv1.shape[3]), dtype=np.float32)
    padded[:, 1:-1, 1:-1, :] = _conv2d(input, conv1)
    x = _batchnorm2d(padded)
    x = _relu(x)
    x = _conv2d(x, conv2)
    x = _batchnorm2d(x)
    return _relu(x + input)


def _cplx(r, *shape):
    return r.random(shape) + 1j * r.random(shape)


@program(lambda r: (r.integers(0, 2, (2, 1)), _cplx(r, 2, 1, 2, 2), _cplx(r, 1, 2, 2, 2, 2),
                    _cplx(r, 1, 2, 2, 1, 2, 2), np.zeros((1, 2, 2, 2, 2), np.complex128)))
def scattering_self_energies(neigh_idx, dH, G, D, Sigma):
    for k in range(G.shape[0]):
        for E in range(G.shape[1]):
            for q in range(D.shape[0]):
                for w in range(D.shape[1]):
                    for i in range(D.shape[-2]):
                        for j in range(D.shape[-1]):
                            for a in range(neigh_idx.shape[0]):
                                for b in range(neigh_idx.shape[1]):
                                    if E - w >= 0:
                                        dHG = G[k, E - w, neigh_idx[a, b]] @ dH[a, b, i]
                                        dHD = dH[a, b, j] * D[q, w, a, b, i, j]
                                        Sigma[k, E, a] += dHG @ dHD


def _get_acc(pos, mass, G, softening):
    x = pos[:, 0:1]
    y = pos[:, 1:2]
    z = pos[:, 2:3]
    dx = x.T - x
    dy = y.T - y
    dz = z.T - z
    inv_r3 = (dx ** 2 + dy ** 2 + dz ** 2 + softening ** 2)
    inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0] ** (-1.5)
    ax = G * (dx * inv_r3) @ mass
    ay = G * (dy * inv_r3) @ mass
    az = G * (dz * inv_r3) @ mass
    return np.hstack((ax, ay, az))


def _get_energy(pos, vel, mass, G):
    KE = 0.5 * np.sum(np.sum(mass * vel ** 2))
    x = pos[:, 0:1]
    y = pos[:, 1:2]
    z = pos[:, 2:3]
    dx = x.T - x
    dy = y.T - y
    dz = z.T - z
    inv_r = np.sqrt(dx ** 2 + dy ** 2 + dz ** 2)
    inv_r[inv_r > 0] = 1.0 / inv_r[inv_r > 0]
    PE = G * np.sum(np.sum(np.triu(-(mass * mass.T) * inv_r, 1)))
    return KE, PE


@program(lambda r: (r.random((4, 1)) + 0.5, r.random((4, 3)), r.normal(size=(4, 3)), 4, 3,
                    0.01, 1.0, 0.1), jit_error=ConcretizationError)
def nbody(mass, pos, vel, N, Nt, dt, G, softening):
    vel -= np.mean(mass * vel, axis=0) / np.mean(mass)
    acc = _get_acc(pos, mass, G, softening)
    KE = np.ndarray(Nt + 1, dtype=np.float64)
    PE = np.ndarray(Nt + 1, dtype=np.float64)
    KE[0], PE[0] = _get_energy(pos, vel, mass, G)
    t = 0.0
    for i in range(Nt):
        vel += acc * dt / 2.0
        pos += vel * dt
        acc = _get_acc(pos, mass, G, softening)
        vel += acc * dt / 2.0
        t += dt
        KE[i + 1], PE[i + 1] = _get_energy(pos, vel, mass, G)
    return KE, PE


@program(lambda r: (8, 2, 3, r.random(8) + 1j * r.random(8), np.zeros(8, np.complex128)))
def stockham_fft(N, R, K, x, y):
    i_coord, j_coord = np.mgrid[0:R, 0:R]
    dft_mat = np.empty((R, R), dtype=np.complex128)
    dft_mat = np.exp(-2.0j * np.pi * i_coord * j_coord / R)
    y[:] = x[:]
    ii_coord, jj_coord = np.mgrid[0:R, 0:R ** K]
    for i in range(K):
        yv = np.reshape(y, (R ** i, R, R ** (K - i - 1)))
        tmp_perm = np.transpose(yv, axes=(1, 0, 2))
        D = np.empty((R, R ** i, R ** (K - i - 1)), dtype=np.complex128)
        tmp = np.exp(-2.0j * np.pi * ii_coord[:, :R ** i] * jj_coord[:, :R ** i] / R ** (i + 1))
        D[:] = np.repeat(np.reshape(tmp, (R, R ** i, 1)), R ** (K - i - 1), axis=2)
        tmp_twid = np.reshape(tmp_perm, (N, )) * np.reshape(D, (N, ))
        y[:] = np.reshape(dft_mat @ np.reshape(tmp_twid, (R, R ** (K - 1))), (N, ))


@program(lambda r: (-2.0, 0.5, -1.25, 1.25, 6, 5, 8), jit_error=DataDependentShapeError)
def mandelbrot_compressing(xmin, xmax, ymin, ymax, xn, yn, itermax, horizon=2.0):
    Xi, Yi = np.mgrid[0:xn, 0:yn]
    X = np.linspace(xmin, xmax, xn, dtype=np.float64)[Xi]
    Y = np.linspace(ymin, ymax, yn, dtype=np.float64)[Yi]
    C = X + Y * 1j
    N_ = np.zeros(C.shape, dtype=np.int64)
    Z_ = np.zeros(C.shape, dtype=np.complex128)
    Xi.shape = Yi.shape = C.shape = xn * yn
    Z = np.zeros(C.shape, np.complex128)
    for i in range(itermax):
        if not len(Z):
            break
        np.multiply(Z, Z, Z)
        np.add(Z, C, Z)
        I = np.abs(Z) > horizon
        N_[Xi[I], Yi[I]] = i + 1
        Z_[Xi[I], Yi[I]] = Z[I]
        np.logical_not(I, I)
        Z = Z[I]
        Xi, Yi = Xi[I], Yi[I]
        C = C[I]
    return Z_.T, N_.T
