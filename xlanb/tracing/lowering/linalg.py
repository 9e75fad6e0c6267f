"""Contractions: matmul / `@`, dot, vdot, inner, outer, tensordot, einsum, trace, norm.

Everything lowers to the IR's one `dot` (batch + contracting dims; output order is batch,
lhs free, rhs free), with `broadcast` for matmul's batch broadcasting, `reduce` for indices
summed in only one operand, and a final `transpose` to the requested order.  einsum with
any number of operands contracts left to right, keeping the indices still needed later.
"""
from __future__ import annotations

import string

import numpy as np

from xlanb_runtime.ir import Node, Op
from xlanb_runtime.ir import builder as B

from ...errors import ShapeMismatchError
from ..layout import with_order, with_reduced_order
from . import fail, implements, unsupported, unsupported_option
from .promote import broadcast_shapes, normalize_axes, result_type, to_node, wrap
from .reductions import abs_squared
from .shape_ops import _diagonal


def _operands(a, b) -> tuple[Node, Node]:
    dtype = result_type(a, b)
    return to_node(a, dtype), to_node(b, dtype)


def _mismatch(x: Node, y: Node, what: str):
    return fail(ShapeMismatchError, f"{what}: contracted dimensions differ in size: "
                f"{x.shape} and {y.shape}")


def matmul(a, b):
    """`a @ b` with NumPy's 1-D promotion and batch broadcasting, C-ordered as NumPy's
    (whatever the operands' layouts; the program may compute a transpose of it)."""
    return with_order(_matmul(a, b), "C")


def _matmul(a, b):
    x, y = _operands(a, b)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions (a 0-d "
                         "array; use `*` for scalars)")
    k_y = 0 if y.ndim == 1 else y.ndim - 2
    if x.shape[-1] != y.shape[k_y]:
        raise _mismatch(x, y, "matmul")
    if y.ndim <= 2 or x.ndim == 1:                 # y (and x for 1-D) has no batch dims
        return wrap(B.dot(x, y, (), (), (x.ndim - 1,), (k_y,)))
    if x.ndim == 2:                                # (m, batch..., n) -> (batch..., m, n)
        out = B.dot(x, y, (), (), (1,), (k_y,))
        nb = y.ndim - 2
        return wrap(B.transpose(out, list(range(1, nb + 1)) + [0, nb + 1]))
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2])
    nb = len(batch)
    x = B.broadcast(x, batch + x.shape[-2:])
    y = B.broadcast(y, batch + y.shape[-2:])
    dims = tuple(range(nb))
    return wrap(B.dot(x, y, dims, dims, (nb + 1,), (nb,)))


implements(np.matmul)(matmul)


@implements(np.dot)
def dot(a, b, out=None):
    if out is not None:
        raise unsupported_option("dot", "out=", "assign the result instead")
    x, y = _operands(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return np.multiply(a, b)
    k_y = 0 if y.ndim == 1 else y.ndim - 2
    if x.shape[-1] != y.shape[k_y]:
        raise _mismatch(x, y, "dot")
    return wrap(B.dot(x, y, (), (), (x.ndim - 1,), (k_y,)))


@implements(np.vdot)
def vdot(a, b):
    """Flattened dot product, conjugating the first operand when complex."""
    x, y = _operands(a, b)
    x, y = B.reshape(x, (x.size,)), B.reshape(y, (y.size,))
    if x.shape != y.shape:
        raise _mismatch(x, y, "vdot")
    if x.dtype.kind == "c":              # one fused pass: no conjugated copy for BLAS
        return wrap(B.reduce(B.binary(Op.MUL, B.unary(Op.CONJ, x), y), "sum", (0,)))
    return wrap(B.dot(x, y, (), (), (0,), (0,)))


@implements(np.inner)
def inner(a, b):
    x, y = _operands(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return np.multiply(a, b)
    if x.shape[-1] != y.shape[-1]:
        raise _mismatch(x, y, "inner")
    return wrap(B.dot(x, y, (), (), (x.ndim - 1,), (y.ndim - 1,)))


@implements(np.outer)
def outer(a, b, out=None):
    if out is not None:
        raise unsupported_option("outer", "out=", "assign the result instead")
    x, y = _operands(a, b)
    return wrap(B.dot(B.reshape(x, (x.size,)), B.reshape(y, (y.size,))))


@implements(np.tensordot)
def tensordot(a, b, axes=2):
    x, y = _operands(a, b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        ax, by = list(range(x.ndim - n, x.ndim)), list(range(n))
    else:
        ax, by = axes
        ax = list(ax) if isinstance(ax, (list, tuple)) else [ax]
        by = list(by) if isinstance(by, (list, tuple)) else [by]
    ax, by = normalize_axes(tuple(ax), x.ndim), normalize_axes(tuple(by), y.ndim)
    if len(ax) != len(by) or any(x.shape[i] != y.shape[j] for i, j in zip(ax, by)):
        raise fail(ShapeMismatchError, f"shape-mismatch for sum: {x.shape} axes {ax} and "
                   f"{y.shape} axes {by}")
    return wrap(B.dot(x, y, (), (), ax, by))


# -- einsum ------------------------------------------------------------------------------------

def _sum_out(x: Node, letters: str, keep: set[str]) -> tuple[Node, str]:
    drop = [i for i, c in enumerate(letters) if c not in keep]
    if not drop:
        return x, letters
    return B.reduce(x, "sum", drop), "".join(c for c in letters if c in keep)


def _take_diagonals(x: Node, letters: str) -> tuple[Node, str]:
    """A letter repeated within one operand ('ii') keeps only its diagonal."""
    while len(set(letters)) != len(letters):
        c = next(c for c in letters if letters.count(c) > 1)
        p = letters.index(c)
        q = letters.index(c, p + 1)
        if x.shape[p] != x.shape[q]:
            raise fail(ShapeMismatchError, f"einsum: dimensions for subscript {c!r} differ: "
                       f"{x.shape[p]} and {x.shape[q]}")
        rest = [d for d in range(x.ndim) if d not in (p, q)]
        x = _diagonal(B.transpose(x, rest + [p, q]), 0)     # a strided slice, n reads
        letters = "".join(letters[d] for d in rest) + c
    return x, letters


def _contract(x: Node, xl: str, y: Node, yl: str, keep: set[str]) -> tuple[Node, str]:
    x, xl = _sum_out(x, xl, keep | set(yl))
    y, yl = _sum_out(y, yl, keep | set(xl))
    shared = [c for c in xl if c in yl]
    for c in shared:
        if x.shape[xl.index(c)] != y.shape[yl.index(c)]:
            raise fail(ShapeMismatchError, f"einsum: operands disagree on the size of "
                       f"subscript {c!r}: {x.shape} ({xl}) and {y.shape} ({yl})")
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    out = B.dot(x, y, [xl.index(c) for c in batch], [yl.index(c) for c in batch],
                [xl.index(c) for c in contract], [yl.index(c) for c in contract])
    letters = "".join(batch) + "".join(c for c in xl if c not in shared) \
        + "".join(c for c in yl if c not in shared)
    return out, letters


def _parse(subscripts: str, ndims: list[int]) -> tuple[list[str], str]:
    subscripts = subscripts.replace(" ", "")
    inputs, _, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum: {len(terms)} subscript terms for {len(ndims)} operands")
    free = [c for c in string.ascii_letters if c not in subscripts]
    n_ell = max((nd - len(t.replace("...", "")) for t, nd in zip(terms, ndims)
                 if "..." in t), default=0)
    ellipsis = "".join(free[:n_ell])
    expanded = []
    for t, nd in zip(terms, ndims):
        if "..." in t:
            k = nd - len(t.replace("...", ""))
            t = t.replace("...", ellipsis[n_ell - k:] if k else "")
        if len(t) != nd:
            raise ValueError(f"einsum: subscript {t!r} does not match an operand of rank {nd}")
        expanded.append(t)
    if "->" in subscripts:
        output = output.replace("...", ellipsis)
    else:
        joined = "".join(expanded)
        output = ellipsis + "".join(sorted(c for c in set(joined) if joined.count(c) == 1
                                           and c not in ellipsis))
    return expanded, output


@implements(np.einsum)
def einsum(subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
           optimize=False):
    if out is not None:
        raise unsupported_option("einsum", "out=", "assign the result instead")
    if not isinstance(subscripts, str):
        return unsupported(np.einsum, (subscripts,) + operands, {}, "np.einsum (sublist form)")
    dtype = np.dtype(dtype) if dtype is not None else result_type(*operands)
    nodes = [to_node(o, dtype) for o in operands]
    terms, output = _parse(subscripts, [n.ndim for n in nodes])
    pairs = [_take_diagonals(n, t) for n, t in zip(nodes, terms)]
    x, xl = pairs[0]
    for i, (y, yl) in enumerate(pairs[1:], start=1):
        later = set(output).union(*(set(t) for _, t in pairs[i + 1:]))
        x, xl = _contract(x, xl, y, yl, later)
    x, xl = _sum_out(x, xl, set(output))
    missing = [c for c in output if c not in xl]
    if missing:
        raise ValueError(f"einsum: output subscript {missing[0]!r} does not appear in the "
                         "inputs")
    return wrap(B.transpose(x, [xl.index(c) for c in output]))


@implements(np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if out is not None:
        raise unsupported_option("trace", "out=", "assign the result instead")
    x = to_node(a)
    p, q = normalize_axes((axis1, axis2), x.ndim)
    if p == q:
        raise ValueError("axis1 and axis2 cannot be the same")
    acc = np.dtype(dtype) if dtype is not None else np.sum(np.zeros(2, x.dtype)).dtype
    rest = [d for d in range(x.ndim) if d not in (p, q)]
    diagonal = _diagonal(B.transpose(x, rest + [p, q]), int(offset))    # n reads, not n^2
    return wrap(B.reduce(B.convert(diagonal, acc), "sum", (diagonal.ndim - 1,)))


@implements(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):
    """The 2-norm of vectors and the Frobenius norm of matrices (other `ord`s: the hook)."""
    node = to_node(x)
    vector = (axis is None and node.ndim == 1) or (axis is not None and np.ndim(axis) == 0)
    if not (ord is None or (ord == 2 and vector) or (ord == "fro" and not vector)):
        from .decompositions import norm as norm_of_ord     # NumPy's formula per ord
        return norm_of_ord(x, ord, axis, keepdims)
    if node.dtype.kind not in "fc":               # complex: |z|^2 in the parts' dtype
        node = B.convert(node, np.float64)
    axes = normalize_axes(axis, node.ndim)
    result = B.unary(Op.SQRT, B.reduce(abs_squared(node), "sum", axes))
    if keepdims:
        result = B.reshape(result, [1 if d in axes else n for d, n in enumerate(node.shape)])
    return with_reduced_order(wrap(result), x, axes, bool(keepdims))   # NumPy's add.reduce
