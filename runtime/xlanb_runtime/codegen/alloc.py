"""Scratch arrays in generated kernels, allocated without Numba's `np.empty` implementation.

Numba compiles its own Python implementation of `np.empty` (an overload, and the
allocator trampolines it calls through `compile_internal`) the first time a process
uses it, once per shape type and dtype: about 0.4-0.5 s of a cold W4 compile, paid again
in every new process.  `empty(shape, dtype)` is an intrinsic: its call site becomes the
same LLVM IR that implementation ends in (shape checks, one NRT aligned allocation, the
array struct filled in), so no function is compiled for it.

    acc0 = empty((m1,), np.float64)      # as np.empty((m1,), np.float64): C order
    row0 = empty(m1, np.float32)         # an int shape: 1-D

The kernel header names this module's digest, so a change here recompiles cached kernels.
Numba's array module is imported only when a kernel compiles: a warm start loads cached
kernels without importing it (codegen/cached_load.py), and importing this module must not
undo that.
"""
from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic


def _ndim(shape) -> int | None:
    """Dimensions of an array built from `shape` (an int or a tuple of ints), else None."""
    if isinstance(shape, types.Integer):
        return 1
    if isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer)
                                                  for t in shape):
        return len(shape)
    return None


@intrinsic
def empty(typingctx, shape, dtype):
    """np.empty(shape, dtype) for a C-ordered array of a NumPy scalar class (np.float32)."""
    ndim = _ndim(shape)
    if ndim is None or not isinstance(dtype, types.NumberClass):
        return None                       # Numba then reports the call as untyped
    arrtype = types.Array(dtype.dtype, ndim, "C")

    def codegen(context, builder, sig, args):
        from numba.np.arrayobj import _parse_shape
        shapes = _parse_shape(context, builder, sig.args[0], args[0])  # >= 0, fits intp
        return _allocate(context, builder, arrtype, shapes)._getvalue()

    return arrtype(shape, dtype), codegen


def _allocate(context, builder, arrtype, shapes):
    """numba.np.arrayobj._empty_nd_impl for C order, calling NRT directly: the same
    overflow check, alignment and meminfo as np.empty."""
    from numba.np.arrayobj import get_itemsize, make_array, populate_array
    itemsize = context.get_constant(types.intp, get_itemsize(context, arrtype))
    length = context.get_constant(types.intp, 1)
    overflow = ir.Constant(ir.IntType(1), 0)
    for size in shapes:
        product = builder.smul_with_overflow(length, size)
        length = builder.extract_value(product, 0)
        overflow = builder.or_(overflow, builder.extract_value(product, 1))
    strides = [itemsize]
    for size in reversed(shapes[1:]):
        strides.append(builder.mul(strides[-1], size))
    strides = list(reversed(strides)) if shapes else []
    nbytes = builder.smul_with_overflow(length, itemsize)
    overflow = builder.or_(overflow, builder.extract_value(nbytes, 1))
    with builder.if_then(overflow, likely=False):
        context.call_conv.return_user_exc(
            builder, ValueError,
            ("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
             "possible size.",))
    align = context.get_preferred_array_alignment(arrtype.dtype)
    meminfo = context.nrt.meminfo_alloc_aligned(builder, builder.extract_value(nbytes, 0),
                                                align)
    data = context.nrt.meminfo_data(builder, meminfo)
    intp = context.get_value_type(types.intp)
    array = make_array(arrtype)(context, builder)
    populate_array(array,
                   data=builder.bitcast(data, context.get_data_type(arrtype.dtype).as_pointer()),
                   shape=cgutils.pack_array(builder, shapes, ty=intp),
                   strides=cgutils.pack_array(builder, strides, ty=intp),
                   itemsize=itemsize, meminfo=meminfo)
    return array
