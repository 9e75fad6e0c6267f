"""np.linalg solvers and factorizations as library calls (LAPACK through NumPy).

solve, inv, det, slogdet, cholesky, qr, eigh, eigvalsh, svd, svdvals, pinv, matrix_rank
and cond run NumPy's own function inside the compiled program, so the results (the signs
of eigenvectors, the order of singular values) are NumPy's; functions with several results
return NumPy's named tuples (`EighResult`, `SVDResult`, ...).  matrix_power and multi_dot
are matmul chains (fused `dot` kernels).  eig / eigvals (a dtype that depends on the
values: real when every eigenvalue is) are named errors under `jit` and run with NumPy
under `must_compile=False`.  lstsq compiles for a matrix of full rank (its residuals'
length depends on the rank: of lower rank it raises when the program runs).  The
np.linalg spellings of contractions (matmul, outer, tensordot, trace, diagonal,
matrix_transpose, vecdot, cross) use the rules of linalg.py, and `norm` here takes the
ords linalg.py's norm leaves (inf, 0, 1, p, matrix 1/inf/2/nuc: SVDs), with
vector_norm / matrix_norm on top.

Shapes are checked as NumPy checks them, with NumPy's LinAlgError; a singular matrix is
NumPy's LinAlgError when the program runs, as in eager NumPy.
"""
from __future__ import annotations

import operator

import numpy as np

from xlanb_runtime.ir import builder as B

from ..tracer import Tracer
from . import implements, unsupported, unsupported_option
from .library import (call, data_dependent, implements_library, node_of, numpy_check,
                      static_param)
from .promote import wrap

LinAlgError = np.linalg.LinAlgError
_eye = np.eye(2)
EighResult = type(np.linalg.eigh(_eye))
SVDResult = type(np.linalg.svd(_eye))
QRResult = type(np.linalg.qr(_eye))
SlogdetResult = type(np.linalg.slogdet(_eye))

data_dependent(np.linalg.eig, "the result's dtype depends on the values (real when every "
               "eigenvalue is real, complex otherwise)")
data_dependent(np.linalg.eigvals, "the result's dtype depends on the values (real when "
               "every eigenvalue is real, complex otherwise)")


def _matrix(a, square: bool = True):
    """`a`'s node, checked as NumPy's linalg checks it (at least 2-D; square)."""
    x = node_of(a)
    if x.ndim < 2:
        raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be at least "
                          "two-dimensional")
    if square and x.shape[-1] != x.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    _check_dtype(x)
    return x


def _check_dtype(x) -> None:
    """NumPy's TypeError for dtypes LAPACK has no routine for (float16, bool is fine)."""
    numpy_check(np.linalg.inv, np.ones((1, 1), x.dtype))


@implements_library(np.linalg.solve)
def solve(a, b):
    x, y = _matrix(a), node_of(b)
    _check_dtype(y)
    m = x.shape[-1]
    vector = y.ndim == 1
    if (y.shape[0] if vector else y.shape[-2] if y.ndim >= 2 else None) != m:
        raise ValueError(f"solve: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature (m,m),(m{'' if vector else ',n'})->"
                         f"(m{'' if vector else ',n'}) (size {y.shape[0] if y.ndim else 0} "
                         f"is different from {m})")
    return call("np.linalg.solve", [x, y])


@implements_library(np.linalg.inv)
def inv(a):
    return call("np.linalg.inv", [_matrix(a)])


@implements_library(np.linalg.det)
def det(a):
    return call("np.linalg.det", [_matrix(a)])


@implements_library(np.linalg.slogdet)
def slogdet(a):
    return SlogdetResult(*call("np.linalg.slogdet", [_matrix(a)]))


@implements_library(np.linalg.cholesky)
def cholesky(a, /, *, upper=False):
    return call("np.linalg.cholesky", [_matrix(a)], upper=bool(upper))


@implements_library(np.linalg.qr)
def qr(a, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        if mode == "raw":
            return unsupported(np.linalg.qr, (a,), {"mode": mode}, "np.linalg.qr(mode='raw')")
        raise ValueError(f"Unrecognized mode '{mode}'")
    results = call("np.linalg.qr", [_matrix(a, square=False)], mode=mode)
    return results if mode == "r" else QRResult(*results)


def _uplo(UPLO: str) -> str:
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return UPLO


@implements_library(np.linalg.eigh)
def eigh(a, UPLO="L"):
    return EighResult(*call("np.linalg.eigh", [_matrix(a)], UPLO=_uplo(UPLO)))


@implements_library(np.linalg.eigvalsh)
def eigvalsh(a, UPLO="L"):
    return call("np.linalg.eigvalsh", [_matrix(a)], UPLO=_uplo(UPLO))


@implements_library(np.linalg.svd)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    x = _matrix(a, square=bool(hermitian))
    results = call("np.linalg.svd", [x], full_matrices=bool(full_matrices),
                   compute_uv=bool(compute_uv), hermitian=bool(hermitian))
    return SVDResult(*results) if compute_uv else results


@implements_library(getattr(np.linalg, "svdvals", None))
def svdvals(x, /):
    return call("np.linalg.svdvals", [_matrix(x, square=False)])


@implements_library(np.linalg.lstsq)
def lstsq(a, b, rcond=None):
    """NumPy's (x, residuals, rank, s), for a matrix of full rank where it has more rows
    than columns (residuals per column of b): of lower rank, NumPy's residuals are
    empty, and the call raises at run time (`ir/library.py _lstsq`)."""
    x, y = node_of(a), node_of(b)
    for operand in (x, y):
        if operand.ndim != 2 and (operand is x or operand.ndim != 1):
            raise LinAlgError(f"{operand.ndim}-dimensional array given. Array must be "
                              "two-dimensional")
    if x.shape[0] != y.shape[0]:
        raise LinAlgError("Incompatible dimensions")
    _check_dtype(x)
    params = {} if rcond is None else {"rcond": float(static_param(rcond, "rcond"))}
    return tuple(call("np.linalg.lstsq", [x, y], where=B.current_location() or "?",
                      **params))


@implements_library(np.linalg.pinv)
def pinv(a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    if rtol is not np._NoValue or np.ndim(rcond) != 0 or hasattr(rcond, "node"):
        return unsupported(np.linalg.pinv, (a,), {"rcond": rcond, "hermitian": hermitian,
                                                  **({} if rtol is np._NoValue else
                                                     {"rtol": rtol})}, "np.linalg.pinv")
    params = {"hermitian": bool(hermitian)}
    if rcond is not None:
        params["rcond"] = float(static_param(rcond, "rcond"))
    return call("np.linalg.pinv", [_matrix(a, square=bool(hermitian))], **params)


@implements_library(np.linalg.matrix_rank)
def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    x = node_of(A)
    if x.ndim < 2 or rtol is not None or np.ndim(tol) != 0 or hasattr(tol, "node"):
        return unsupported(np.linalg.matrix_rank, (A,), {"tol": tol, "hermitian": hermitian,
                                                         "rtol": rtol},
                           "np.linalg.matrix_rank")
    params = {"hermitian": bool(hermitian)}
    if tol is not None:
        params["tol"] = float(static_param(tol, "tol"))
    return call("np.linalg.matrix_rank", [_matrix(x, square=False)], **params)


@implements_library(np.linalg.cond)
def cond(x, p=None):
    p = static_param(p, "p")
    square = p not in (None, 2, -2)
    return call("np.linalg.cond", [_matrix(x, square=square)], p=p)


# -- compositions of contractions ------------------------------------------------------------

@implements(np.linalg.matrix_power)
def matrix_power(a, n):
    """NumPy's binary decomposition of n (the same products in the same order); n < 0
    inverts first."""
    x = _matrix(a)
    n = operator.index(static_param(n, "n"))
    base = a if isinstance(a, Tracer) else wrap(x)
    if n == 0:
        return np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype), x.shape).copy()
    if n < 0:
        base, n = inv(base), -n
    if n == 1:
        return base                        # NumPy returns `a` itself
    if n == 2:
        return np.matmul(base, base)
    if n == 3:
        return np.matmul(np.matmul(base, base), base)
    z = result = None
    while n > 0:
        z = base if z is None else np.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else np.matmul(result, z)
    return result


@implements(np.linalg.multi_dot)
def multi_dot(arrays, *, out=None):
    if out is not None:
        raise unsupported_option("multi_dot", "out=", "assign the result instead")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    result = arrays[0]
    for nxt in arrays[1:]:                 # left to right (NumPy orders by cost: the same
        result = np.dot(result, nxt)       # product, rounded in another order)
    return result


# -- norms of every ord ---------------------------------------------------------------------

def norm(x, ord=None, axis=None, keepdims=False):
    """np.linalg.norm for the ords linalg.py does not fuse itself, NumPy's formulas: max,
    min, sums of |x| (fused reductions), |x|**p summed, and the singular values' max, min
    or sum for matrices (an SVD library call)."""
    x = x if isinstance(x, Tracer) else wrap(node_of(x))
    if x.dtype.kind not in "fc":
        x = x.astype(float)
    if axis is None:
        if x.ndim not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
        axis = tuple(range(x.ndim))
    elif not isinstance(axis, tuple):
        axis = (operator.index(axis),)
    axis = tuple(a + x.ndim if a < 0 else a for a in axis)
    if len(axis) == 1:
        ret = _vector_norm(x, ord, axis)
    elif len(axis) == 2:
        ret = _matrix_norm(x, ord, *axis)
    else:
        raise ValueError("Improper number of dimensions to norm.")
    if keepdims:
        shape = list(x.shape)
        for a in axis:
            shape[a] = 1
        ret = np.reshape(ret, shape)
    return ret


def _vector_norm(x, ord, axis):
    if ord == np.inf:
        return abs(x).max(axis=axis)
    if ord == -np.inf:
        return abs(x).min(axis=axis)
    if ord == 0:
        return (x != 0).astype(x.real.dtype).sum(axis=axis)
    if ord == 1:
        return np.add.reduce(abs(x), axis=axis)
    if ord is None or ord == 2:
        return np.sqrt(np.add.reduce((x.conj() * x).real, axis=axis))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    absx = abs(x) ** ord
    ret = np.add.reduce(absx, axis=axis)
    return ret ** np.reciprocal(np.asarray(ord, dtype=ret.dtype))


def _svd_norm(x, row_axis, col_axis, reduce):
    y = np.moveaxis(x, (row_axis, col_axis), (-2, -1))
    return reduce(svd(y, compute_uv=False), axis=-1)


def _matrix_norm(x, ord, row_axis, col_axis):
    if row_axis == col_axis:
        raise ValueError("Duplicate axes given.")
    if ord == 2:
        return _svd_norm(x, row_axis, col_axis, np.max)
    if ord == -2:
        return _svd_norm(x, row_axis, col_axis, np.min)
    if ord in (1, -1):
        if col_axis > row_axis:
            col_axis -= 1
        sums = np.add.reduce(abs(x), axis=row_axis)
        return sums.max(axis=col_axis) if ord == 1 else sums.min(axis=col_axis)
    if ord in (np.inf, -np.inf):
        if row_axis > col_axis:
            row_axis -= 1
        sums = np.add.reduce(abs(x), axis=col_axis)
        return sums.max(axis=row_axis) if ord == np.inf else sums.min(axis=row_axis)
    if ord in (None, "fro", "f"):
        return np.sqrt(np.add.reduce((x.conj() * x).real, axis=(row_axis, col_axis)))
    if ord == "nuc":
        return _svd_norm(x, row_axis, col_axis, np.sum)
    raise ValueError("Invalid norm order for matrices.")


def _vector_norm_api(x, /, *, axis=None, keepdims=False, ord=2):
    """np.linalg.vector_norm: NumPy flattens the axes it is given into one."""
    x = x if isinstance(x, Tracer) else wrap(node_of(x))
    shape = x.shape
    if axis is None:
        res = norm(np.ravel(x), ord=ord, axis=0)
        axes = tuple(range(x.ndim))
    elif isinstance(axis, tuple):
        axes = tuple(a + x.ndim if a < 0 else a for a in axis)
        rest = tuple(i for i in range(x.ndim) if i not in axes)
        moved = np.transpose(x, axes + rest).reshape(
            (int(np.prod([shape[i] for i in axes], dtype=np.int64)),)
            + tuple(shape[i] for i in rest))
        res = norm(moved, ord=ord, axis=0)
    else:
        axes = (axis + x.ndim if axis < 0 else axis,)
        res = norm(x, ord=ord, axis=axis)
    if keepdims:
        res = np.reshape(res, tuple(1 if i in axes else n for i, n in enumerate(shape)))
    return res


def _register_spellings() -> None:
    """np.linalg's array-API spellings of contractions already lowered in linalg.py."""
    linalg = np.linalg
    spellings = {
        "matmul": lambda x1, x2, /: np.matmul(x1, x2),
        "outer": lambda x1, x2, /: np.outer(x1, x2),
        "tensordot": lambda x1, x2, /, *, axes=2: np.tensordot(x1, x2, axes=axes),
        "trace": lambda x, /, *, offset=0, dtype=None:
            np.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype),
        "diagonal": lambda x, /, *, offset=0: np.diagonal(x, offset=offset, axis1=-2,
                                                          axis2=-1),
        "matrix_transpose": lambda x, /: np.swapaxes(x, -1, -2),
        "vector_norm": _vector_norm_api,
        "matrix_norm": lambda x, /, *, keepdims=False, ord="fro":
            np.linalg.norm(x, axis=(-2, -1), keepdims=keepdims, ord=ord),
        "vecdot": lambda x1, x2, /, *, axis=-1: np.vecdot(x1, x2, axis=axis)
            if axis != -1 else np.vecdot(x1, x2),
        "cross": lambda x1, x2, /, *, axis=-1: np.cross(x1, x2, axis=axis),
    }
    for name, rule in spellings.items():
        func = getattr(linalg, name, None)
        if func is not None:
            implements(func)(rule)
    if hasattr(np, "matrix_transpose"):
        implements(np.matrix_transpose)(spellings["matrix_transpose"])


_register_spellings()
