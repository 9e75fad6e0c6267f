"""Writes through views, aliased arguments and returned arguments: `row = M[0]; row *= 2`,
`.T`, reshape/ravel views, strided and reversed slices, `x[..., None]`, ufunc `out=`,
np.copyto, x.fill, the same array passed twice, overlapping views passed as two
arguments, functions returning an argument or a view of one, scalar Python arguments."""
import numpy as np

from . import program


@program(lambda r: (lambda x: (x, x))(r.random(6)))
def same_array_twice_add(a, b):
    a += b
    return a


@program(lambda r: (lambda x: (x, x))(r.random((3, 3))))
def same_array_twice_out(a, b):
    np.multiply(a, b, out=a)
    b -= 1
    return a.sum() + b.sum()


@program(lambda r: (lambda x: (x[1:], x[:-1]))(r.random(8)))
def overlapping_shifted_views(a, b):
    a[:] = b + 1
    return b.copy()


@program(lambda r: (lambda x: (x[1:], x[:-1]))(r.random(8)))
def overlapping_views_read_after_write(a, b):
    a *= 2
    return b.sum()


@program(lambda r: (lambda M: (M[:, 0], M[0, :]))(r.random((4, 4))))
def row_and_column_of_one_matrix(col, row):
    col += 10
    return row.copy()


@program(lambda r: (lambda M: (M, M[1]))(r.random((3, 4))))
def base_and_its_row(M, row):
    row[:] = 0
    return M.sum()


@program(lambda r: (lambda x: (x[::2], x[1::2]))(r.random(10)))
def interleaved_views_disjoint(even, odd):
    even += odd
    odd -= 1


@program(lambda r: (r.random(6), 3.0))
def returns_argument_after_scaling(x, s):
    x *= s
    return x


@program(lambda r: (r.random(6),))
def returns_view_of_argument(x):
    return x[1:]


@program(lambda r: (r.random((3, 4)),))
def returns_transpose_view(M):
    return M.T


@program(lambda r: (r.random((3, 4)),))
def returns_argument_and_row(M):
    M[0] += 1
    return M, M[0]


@program(lambda r: (r.random((3, 4)),))
def row_view_write(M):
    row = M[0]
    row *= 2
    return M


@program(lambda r: (r.random((3, 4)),))
def transpose_write(M):
    M.T[0] = -1.0
    Mt = M.T
    Mt[:, 1] += 5


@program(lambda r: (r.random(12),))
def reshape_view_write(x):
    y = x.reshape(3, 4)
    y[1] = 0.0
    x.reshape(2, -1)[:, 0] = 7.0


@program(lambda r: (r.random((3, 4)),))
def ravel_view_write(M):
    M.ravel()[::3] = -1.0


@program(lambda r: (r.random((3, 4)),))
def ravel_of_transpose_is_a_copy(M):
    r_ = M.T.ravel()
    r_[:] = 0.0
    return r_


@program(lambda r: (r.random(9),))
def strided_write_from_other_half(x):
    x[::2] = x[1::2].sum()
    x[1::2] = 0


@program(lambda r: (r.random(5),))
def newaxis_view_write(x):
    v = x[..., None]
    v *= 3
    x[None, 1:3] += 1


@program(lambda r: (r.random(6), np.zeros(6)))
def ufunc_out_into_argument(x, y):
    np.multiply(x, 2, out=y)
    np.add(x, y, out=x)
    np.sqrt(y, out=y)


@program(lambda r: (np.zeros(6), r.random(6)))
def copyto_with_where(dst, src):
    np.copyto(dst, src)
    np.copyto(dst, 0.0, where=src > 0.5)


@program(lambda r: (r.random(5),))
def fill_then_set(x):
    x.fill(3.0)
    x[0] = 1.0


@program(lambda r: (r.random((4, 5)),))
def chained_view_augmented(M):
    M[1:, ::2].T[0] += 1
    M[::-1, 1][:2] = 9.0


@program(lambda r: (r.random(7),))
def reversed_self_assign(x):
    x[:] = x[::-1]


@program(lambda r: (r.random((3, 3)), np.zeros((3, 3))))
def writes_other_returns_row_view(A, B):
    B[:] = A.T
    return A[0]


def _center(y):
    y -= y.mean()


@program(lambda r: (r.random(6),))
def helper_mutates_a_view(x):
    _center(x[1:])
    return x


@program(lambda r: (r.integers(0, 10, 6),))
def int_setitem_truncates_float(x):
    x[:] = x * 1.5
    x[0] = 2.9


@program(lambda r: (r.random(5).astype(np.float32), r.random(5)), n=4)
def float32_argument_plus_float64(x, y):
    x += y
    x[1:] = y[1:] * 2


@program(lambda r: (r.random(6) > 0.5, r.random(6) > 0.5))
def bool_argument_in_place_or(flags, other):
    flags |= other
    flags[0] = True


@program(lambda r: (np.zeros(4), r.random(4).astype(np.float32), r.random(4).astype(np.float32)),
         n=4)
def out_with_other_dtype(c, a, b):
    np.add(a, b, out=c)


@program(lambda r: (r.random(5),))
def negative_in_place(x):
    np.negative(x, out=x)
    return x


@program(lambda r: (r.random((1, 6)),))
def squeeze_view_write(x):
    x.squeeze()[...] = 0.5
    x[0].reshape(2, 3)[1] += 1


@program(lambda r: (r.random((2, 3, 4)),))
def swapaxes_view_write(x):
    x.swapaxes(0, 2)[0] = 1.0
    np.moveaxis(x, 2, 0)[1] *= 2


@program(lambda r: (r.random(6),))
def ellipsis_scalar_assign(x):
    x[...] = 4.0
    return x


@program(lambda r: (lambda A: (A[:, 1],))(r.random((4, 3))))
def non_contiguous_view_argument(col):
    col += 1
    col[:] *= 2


@program(lambda r: (lambda A: (A[::2, 1:], A))(r.random((4, 3))))
def view_and_base_write_base(view, base):
    base[0, 1] = -5.0
    return view.sum()


@program(lambda r: (r.random(4), 2, 0.5))
def python_int_and_float_scalars(x, k, a):
    for _ in range(k):
        x *= a
    return x.sum() + k


@program(lambda r: (r.random(5), True))
def python_bool_argument(x, flag):
    return np.where(flag, x, -x), x * flag


@program(lambda r: (r.random(5), 1 + 2j))
def python_complex_argument(x, c):
    return x * c, (x * c).real


@program(lambda r: (r.random((3, 4)),))
def np_copy_is_independent(M):
    C = np.copy(M)
    C[0] = 0
    D = M.copy()
    D += 1
    return C, D, M.sum()


@program(lambda r: (r.random((3, 4)),))
def asarray_of_argument_is_the_argument(M):
    A = np.asarray(M)
    A[0, 0] = 100.0
    return A


@program(lambda r: (r.random((4, 4)),))
def triu_in_place_through_view(A):
    A[np.tril_indices(4, -1)] = 0.0
    A[:] = np.triu(A)
    return A


@program(lambda r: (r.random(8),))
def swap_halves_with_tuple_assignment(x):
    x[:4], x[4:] = x[4:].copy(), x[:4].copy()


@program(lambda r: (r.random(8),))
def overlapping_inplace_add_shifted(x):
    x[1:] += x[:-1]
    x[:-1] -= x[1:]


@program(lambda r: (r.random(8),))
def ufunc_out_overlapping_views(x):
    np.add(x[1:], x[:-1], out=x[:-1])
    np.multiply(x[::-1], 2, out=x)


@program(lambda r: (r.normal(size=8),))
def masked_augmented_assignment(x):
    x[x > 0] += 1
    x[x < -0.5] *= 0.5


@program(lambda r: (r.normal(size=(3, 4)),))
def relu_in_place_out(x):
    np.maximum(x, 0, out=x)
    return x


@program(lambda r: (r.random((3, 4)), np.zeros(4), np.zeros(3)))
def reductions_with_out(A, col_sums, row_max):
    np.sum(A, axis=0, out=col_sums)
    np.max(A, axis=1, out=row_max)


@program(lambda r: (lambda x: (x[::-1],))(r.random(6)))
def reversed_view_argument_written(xr):
    xr[0] = -1.0
    xr[1:3] += 10


@program(lambda r: (np.asfortranarray(r.random((3, 4))),))
def fortran_order_argument(F):
    F[0] += 1
    flat = F.reshape(-1)                  # a copy for F order: writes do not reach F
    flat[:] = 0
    F.T[1] *= 2                           # .T of F order is C order: a view
    return flat


@program(lambda r: (np.array(3.0), np.array(2, dtype=np.int64)))
def zero_dim_arguments(x, k):
    x += 1
    x[()] *= 2
    k -= 1
    return x * k


@program(lambda r: (np.float32(1.5), r.random(3).astype(np.float32)), n=4)
def numpy_scalar_argument(s, x):
    return x * s, s * 2


@program(lambda r: (np.zeros(0), r.random(3)))
def empty_array_argument(e, x):
    e += 1
    for _ in range(0):
        x += 1
    return e.sum(), np.concatenate([e, x])


@program(lambda r: (r.integers(-100, 100, 6).astype(np.int8),))
def int8_in_place_wraps(x):
    x *= 3
    x += 100


@program(lambda r: (r.random(5),))
def list_value_assignment(x):
    x[1:3] = [1.0, 2.0]
    x[[0, 4]] = (7.0, 8.0)


@program(lambda r: (r.random(6) > 0.5,))
def bool_argument_logical_not_out(m):
    np.logical_not(m, out=m)
    m[:2] = False


@program(lambda r: (r.normal(size=7) * 3,))
def astype_truncation_and_rounding(x):
    return x.astype(int), np.round(x), np.rint(x + 0.5), np.floor(x).astype(np.int32)


@program(lambda r: (np.where(r.random(7) > 0.6, np.nan, r.random(7)),))
def nan_fill_in_place(x):
    bad = np.isnan(x)
    x[bad] = 0.0
    return bad.sum()


@program(lambda r: (r.random(5) - 0.5,))
def errstate_inside_function(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = 1.0 / (x * 0) + np.log(x)
    return y


@program(lambda r: (r.random((4, 3)),))
def row_iteration_writes_rows(A):
    for row in A:
        row *= 2
        row -= row.mean()


@program(lambda r: (r.random(6),))
def view_returned_after_base_mutated(x):
    v = x[2:]
    x += 1
    return v


@program(lambda r: (r.random(4),))
def same_argument_returned_twice(x):
    x[0] = 0
    return x, x


@program(lambda r: (r.random(6), r.random(6)))
def python_sum_and_zip(x, y):
    total = sum(a * b for a, b in zip(x, y))
    return total, sum([x, y])


@program(lambda r: (r.random(5),))
def made_array_returned_with_its_views(x):
    out = x * 2
    grid = np.zeros((2, 3))
    return out, out[1:], out, grid, grid[0], grid.T
