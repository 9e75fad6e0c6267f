"""Linear algebra with in-place updates: BLAS-1/2 updates, rotations, reflections,
iterative solvers and factorizations written as textbook loops."""
import numpy as np

from xlanb.errors import (ConcretizationError, DataDependentShapeError,
                          UnsupportedNumPyFunctionError)

from . import program


def _spd(r, n):
    a = r.random((n, n))
    return a @ a.T + n * np.eye(n)


def _dominant(r, n):
    a = r.random((n, n))
    return a + n * np.eye(n)


@program(lambda r: (2.5, r.random(9), r.random(9)))
def axpy(a, x, y):
    y += a * x


@program(lambda r: (r.random(7), 0.5))
def scal_returns_arg(x, alpha):
    x *= alpha
    return x


@program(lambda r: (r.random((5, 4)), 1, 3, 0.6, 0.8))
def givens_rows(A, i, k, c, s):
    Ai = A[i].copy()
    A[i] = c * Ai + s * A[k]
    A[k] = -s * Ai + c * A[k]


@program(lambda r: (r.random((5, 4)), 0.3))
def givens_fancy_rows(A, theta):
    c, s = np.cos(theta), np.sin(theta)
    G = np.array([[c, s], [-s, c]])
    A[[0, 2], :] = G @ A[[0, 2], :]
    return A


@program(lambda r: (r.random((6, 4)),))
def householder_step(A):
    x = A[:, 0]
    v = x.copy()
    v[0] += np.sign(x[0]) * np.linalg.norm(x)
    v /= np.linalg.norm(v)
    A -= 2.0 * np.outer(v, v @ A)
    return v


@program(lambda r: (_spd(r, 6), r.random(6), 10), k=64)
def power_iteration(A, x, iters):
    for _ in range(iters):
        y = A @ x
        x[:] = y / np.linalg.norm(y)
    return x @ A @ x


@program(lambda r: (_spd(r, 5), r.random(5)), k=64)
def power_iteration_div_inplace(A, v):
    lam = 0.0
    for _ in range(6):
        v[:] = A @ v
        lam = np.sqrt(v @ v)
        v /= lam
    return lam


@program(lambda r: (_dominant(r, 5), r.random(5), np.zeros(5), 3), k=64)
def gauss_seidel(A, b, x, sweeps):
    n = len(b)
    for _ in range(sweeps):
        for i in range(n):
            x[i] = (b[i] - A[i, :i] @ x[:i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]


@program(lambda r: (_dominant(r, 6), r.random(6), 10), k=64)
def jacobi_solver(A, b, iters):
    D = np.diag(A)
    R = A - np.diagflat(D)
    x = np.zeros_like(b)
    for _ in range(iters):
        x = (b - R @ x) / D
    return x


@program(lambda r: (np.triu(r.random((6, 6))) + 2 * np.eye(6), r.random(6)))
def back_substitution(U, b):
    n = b.shape[0]
    x = np.zeros_like(b)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - U[i, i + 1:] @ x[i + 1:]) / U[i, i]
    return x


@program(lambda r: (np.tril(r.random((6, 6))) + 2 * np.eye(6), r.random(6)))
def forward_substitution_inplace(L, b):
    for i in range(b.shape[0]):
        b[i] -= L[i, :i] @ b[:i]
        b[i] /= L[i, i]


@program(lambda r: (r.random((5, 6)), r.random(5), r.random(6), -0.7))
def rank1_update(A, u, v, alpha):
    A += alpha * np.outer(u, v)


@program(lambda r: (r.random((5, 4)), r.random(5), r.random(4)))
def ger_by_rows(A, x, y):
    for i in range(A.shape[0]):
        A[i, :] += x[i] * y


@program(lambda r: (r.random((5, 5)),))
def symmetrize_from_upper(A):
    A[:] = np.triu(A) + np.triu(A, 1).T


@program(lambda r: (r.random((5, 5)),))
def triangular_products(A):
    return np.tril(A) @ np.triu(A, 1), np.tril(A, -2).sum()


@program(lambda r: (r.random((6, 4)),), k=64)
def modified_gram_schmidt_inplace(Q):
    for j in range(Q.shape[1]):
        for i in range(j):
            Q[:, j] -= (Q[:, i] @ Q[:, j]) * Q[:, i]
        Q[:, j] /= np.linalg.norm(Q[:, j])


@program(lambda r: (_dominant(r, 5),))
def lu_outer_product(A):
    n = A.shape[0]
    for k in range(n - 1):
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])


@program(lambda r: (_spd(r, 5),))
def cholesky_right_looking(A):
    n = A.shape[0]
    for k in range(n):
        A[k, k] = np.sqrt(A[k, k])
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k + 1:, k])
    return np.tril(A)


@program(lambda r: (r.random((5, 4)), r.random(5), np.zeros(4)))
def gemv_transposed_into(A, x, y):
    y[:] = A.T @ x


@program(lambda r: (r.random((4, 4)) / 2, 5))
def matrix_power_loop(A, k):
    R = np.eye(A.shape[0])
    for _ in range(k):
        R = R @ A
    return R


@program(lambda r: (_spd(r, 6), r.random(6)), k=256, scale=1.0)   # r cancels from b's size
def conjugate_gradient(A, b):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs = r @ r
    for _ in range(4):
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x += alpha * p
        r -= alpha * Ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x, r


@program(lambda r: (r.random((5, 5)), 0, 3))
def swap_rows_fancy(A, i, j):
    A[[i, j]] = A[[j, i]]


@program(lambda r: (r.random((4, 6)),))
def outer_product_accumulate(B):
    C = np.zeros((B.shape[1], B.shape[1]))
    for k in range(B.shape[0]):
        C += np.outer(B[k], B[k])
    return C


@program(lambda r: (r.random((5, 3)) + 0.1,))
def normalize_columns_inplace(A):
    A /= np.linalg.norm(A, axis=0)
    return A


@program(lambda r: (r.random((4, 4)), r.random((4, 4))), scale=4.0)   # trace(C) ~ 0
def commutator_and_trace(A, B):
    C = A @ B - B @ A
    return C, np.trace(A @ B), np.trace(C)


@program(lambda r: (_spd(r, 4), r.random(4)), k=64)
def rayleigh_quotient_iteration_free(A, x):
    x /= np.linalg.norm(x)
    for _ in range(3):
        y = A @ x
        mu = x @ y
        r = y - mu * x
        x += 0.1 * r
        x /= np.sqrt(np.sum(x * x))
    return mu


@program(lambda r: (r.random((6, 6)),), jit_error=UnsupportedNumPyFunctionError)
def partial_pivot_row_swap(A):
    p = np.argmax(np.abs(A[:, 0]))
    A[[0, p]] = A[[p, 0]]
    return p


@program(lambda r: (r.random((5, 5)),))
def zero_below_diagonal_loop(A):
    for j in range(A.shape[1]):
        A[j + 1:, j] = 0.0
    return np.diag(A).copy()


@program(lambda r: (_spd(r, 4), r.random(4), 1e-10), jit_error=ConcretizationError)
def newton_iteration_with_break(A, b, tol):
    x = np.zeros_like(b)
    for _ in range(20):
        r = b - A @ x
        if np.linalg.norm(r) < tol:
            break
        x += np.diag(A) ** -1 * r
    return x


@program(lambda r: (r.random((4, 4)) - 0.5,), jit_error=DataDependentShapeError)
def zero_rows_with_negative_diagonal(A):
    bad = np.nonzero(np.diag(A) < 0)[0]
    A[bad] = 0.0
    return bad
