"""The IR's op set: one enum, grouped by kind, plus named sets that passes test against.

An op is small and orthogonal, like HLO: NumPy functions lower to compositions of these.
Each member's value is its printed (HLO-like) name.  Adding an op means: a member here, a
shape rule in `builder.py`, an interpreter entry in `interpret.py`; `tests/runtime/test_ops.py`
walks the enum and fails on any gap.

Randomness is one op, `rng-bits`: element i (C-order flat index) of its u64 result is a
counter-based hash of (key, i), so random values are computed per element inside fused
kernels and are the same eagerly, interpreted and compiled (see `interpret.rng_bits`).
"""
from __future__ import annotations

import enum


class Op(enum.Enum):
    # Members are singletons, equal only to themselves: hashed by identity (in C) rather
    # than by Enum's Python-level hash of the name, which every `op in SET` and op-keyed
    # table lookup paid (0.6 us; tens of thousands in a first call's trace and passes).
    __hash__ = object.__hash__

    # -- leaves -----------------------------------------------------------------------------
    PARAMETER = "parameter"      # arg: index of the flat argument
    CONSTANT = "constant"        # arg: a NumPy array (scalar or small tensor)
    IOTA = "iota"                # arg: dimension along which values count up
    # -- elementwise unary ------------------------------------------------------------------
    NEG = "negate"
    ABS = "abs"
    SIGN = "sign"
    EXP = "exponential"
    EXP2 = "exponential-base-two"
    EXPM1 = "exponential-minus-one"
    LOG = "log"
    LOG1P = "log-plus-one"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    TANH = "tanh"
    SIN = "sine"
    COS = "cosine"
    TAN = "tangent"
    ASIN = "arcsine"
    ACOS = "arccosine"
    SINH = "hyperbolic-sine"
    COSH = "hyperbolic-cosine"
    ATAN = "arctangent"
    ASINH = "hyperbolic-arcsine"
    ACOSH = "hyperbolic-arccosine"
    ATANH = "hyperbolic-arctangent"
    ERF = "erf"
    FLOOR = "floor"
    CEIL = "ceil"
    ROUND = "round-nearest-even"
    NOT = "not"
    IS_FINITE = "is-finite"
    REAL = "real"                # complex -> its real part (complex64 -> float32)
    IMAG = "imag"                # complex -> its imaginary part
    CONJ = "conjugate"           # complex -> its complex conjugate
    ROUND_HALF = "round-to-half"  # f32/f64 -> f32: the nearest float16 value (NumPy's
                                  # float16 rounding; passes/half.py computes float16 so)
    # -- elementwise binary -----------------------------------------------------------------
    ADD = "add"
    SUB = "subtract"
    MUL = "multiply"
    DIV = "divide"               # true division for floats, C truncation never: see FLOOR_DIV
    FLOOR_DIV = "floor-divide"   # NumPy // semantics
    REM = "remainder"            # NumPy % semantics (sign of the divisor)
    POW = "power"
    MAX = "maximum"
    MIN = "minimum"
    AND = "and"
    OR = "or"
    XOR = "xor"
    SHIFT_LEFT = "shift-left"    # ints: NumPy's x << y (0 for counts outside [0, bits))
    SHIFT_RIGHT = "shift-right"  # ints: NumPy's x >> y (arithmetic for signed; counts
    #                              outside [0, bits): the sign, -1 or 0)
    ATAN2 = "atan2"
    COMPLEX = "complex"          # complex(re, im): two floats -> complex64/complex128
    # -- comparison (bool result) -----------------------------------------------------------
    EQ = "compare-eq"
    NE = "compare-ne"
    LT = "compare-lt"
    LE = "compare-le"
    GT = "compare-gt"
    GE = "compare-ge"
    # -- ternary ----------------------------------------------------------------------------
    SELECT = "select"            # select(pred, on_true, on_false)
    # -- type -------------------------------------------------------------------------------
    CONVERT = "convert"          # to the node's dtype, NumPy astype semantics
    BITCAST = "bitcast-convert"  # the same bytes as the node's dtype (same itemsize; ints
                                 # and float32/float64): NumPy's x.view(dtype)
    # -- data movement ----------------------------------------------------------------------
    BROADCAST = "broadcast"      # arg: dims of the output that the operand's dims map to
    RESHAPE = "reshape"
    TRANSPOSE = "transpose"      # arg: permutation
    SLICE = "slice"              # arg: ((start, stop, step), ...) per dim, all static
    DYNAMIC_SLICE = "dynamic-slice"  # (x, *starts: int[]) arg: sizes; starts clamped in range
    PAD = "pad"                  # pad(x, value) arg: ((low, high, interior), ...)
    DYNAMIC_PAD = "dynamic-pad"  # (x, value, *lows: int[]) arg: shape; lows clamped in range
    CONCATENATE = "concatenate"  # arg: axis
    REVERSE = "reverse"          # arg: axes
    # -- reductions -------------------------------------------------------------------------
    REDUCE = "reduce"            # arg: (kind, axes) kind in sum/max/min/prod/any/all
    ARGREDUCE = "arg-reduce"     # arg: (kind, axis) kind in argmax/argmin
    # -- scans ------------------------------------------------------------------------------
    SCAN = "scan"                # arg: (kind, axis) kind in sum/prod/max/min: element i is
                                 # x_0 op ... op x_i along axis, combined in order (NumPy's
                                 # accumulate in the operand's dtype)
    # -- contraction ------------------------------------------------------------------------
    DOT = "dot"                  # arg: (lhs_batch, rhs_batch, lhs_contract, rhs_contract)
    # -- indexing ---------------------------------------------------------------------------
    GATHER = "gather"            # gather(x, idx) arg: axis  (np.take; indices clamped)
    SCATTER_ADD = "scatter-add"  # scatter-add(x, idx, updates) arg: axis (indices clamped)
    SCATTER = "scatter"          # scatter(x, idx, updates) arg: axis; in index order, the last
    #                              write to a position wins (x[idx] = v; indices clamped)
    # -- collectives ------------------------------------------------------------------------
    ALL_REDUCE = "all-reduce"    # arg: reduce kind; identity on one replica
    # -- random -----------------------------------------------------------------------------
    RNG_BITS = "rng-bits"        # rng-bits(key: u64[]) : u64[shape], splitmix64(key, flat i)
    # -- library calls (ir/library.py) ----------------------------------------------------
    LIBRARY_CALL = "library-call"      # arg: (name, params): NumPy/LAPACK between kernels;
                                       # several results: u8[] (a token)
    LIBRARY_RESULT = "library-result"  # library-result(call) arg: k, the call's result k
    # -- control flow -----------------------------------------------------------------------
    LOOP = "loop"                # loop(*carried, *invariant) arg: LoopBody : u8[] (a token)
    LOOP_RESULT = "loop-result"  # loop-result(loop) arg: k, the body's output k at the end

    def __repr__(self) -> str:
        return f"Op.{self.name}"


UNARY = frozenset({Op.NEG, Op.ABS, Op.SIGN, Op.EXP, Op.EXP2, Op.EXPM1, Op.LOG, Op.LOG1P,
                   Op.SQRT, Op.RSQRT, Op.TANH, Op.SIN, Op.COS, Op.TAN, Op.ASIN, Op.ACOS,
                   Op.SINH, Op.COSH, Op.ATAN, Op.ASINH, Op.ACOSH, Op.ATANH,
                   Op.ERF, Op.FLOOR, Op.CEIL, Op.ROUND, Op.NOT, Op.IS_FINITE, Op.REAL, Op.IMAG,
                   Op.CONJ, Op.CONVERT, Op.ROUND_HALF})
BINARY = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.FLOOR_DIV, Op.REM, Op.POW, Op.MAX,
                    Op.MIN, Op.AND, Op.OR, Op.XOR, Op.SHIFT_LEFT, Op.SHIFT_RIGHT, Op.ATAN2,
                    Op.COMPLEX})
COMPARE = frozenset({Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE})
ELEMENTWISE = UNARY | BINARY | COMPARE | {Op.SELECT, Op.BITCAST}
COMMUTATIVE = frozenset({Op.ADD, Op.MUL, Op.MAX, Op.MIN, Op.AND, Op.OR, Op.XOR, Op.EQ, Op.NE})
LEAVES = frozenset({Op.PARAMETER, Op.CONSTANT, Op.IOTA})
CONTROL_FLOW = frozenset({Op.LOOP, Op.LOOP_RESULT})
LIBRARY = frozenset({Op.LIBRARY_CALL, Op.LIBRARY_RESULT})   # never fused, never folded
# Ops a loop kernel can compute per output element by index arithmetic alone.
INDEX_MAPPING = frozenset({Op.BROADCAST, Op.TRANSPOSE, Op.SLICE, Op.REVERSE})
# Elementwise ops whose cost justifies refusing to recompute them in several kernels.
EXPENSIVE = frozenset({Op.EXP, Op.EXP2, Op.EXPM1, Op.LOG, Op.LOG1P, Op.TANH, Op.SIN, Op.COS,
                       Op.TAN, Op.ASIN, Op.ACOS, Op.SINH, Op.COSH, Op.ATAN, Op.ASINH, Op.ACOSH,
                       Op.ATANH, Op.ERF,
                       Op.POW, Op.ATAN2, Op.DIV, Op.SQRT, Op.RSQRT})
# Complex operands: ops only complex values have, and ops that complex values lack (no
# order, no rounding, no bits; exp2, expm1, log1p, erf, tan, asin, acos, sinh, cosh, atan,
# asinh, acosh and atanh have no complex code here: complex_numbers lowers them or calls
# NumPy's loop): the builder refuses them, and the front end lowers or refuses the NumPy
# call before it gets there.
COMPLEX_ONLY = frozenset({Op.REAL, Op.IMAG, Op.CONJ})     # complex operands (COMPLEX: floats)
REAL_ONLY = frozenset({Op.SIGN, Op.EXP2, Op.EXPM1, Op.TAN, Op.ASIN, Op.ACOS, Op.SINH,
                       Op.COSH, Op.ATAN, Op.ASINH, Op.ACOSH, Op.ATANH, Op.LOG1P,
                       Op.ERF, Op.FLOOR, Op.CEIL, Op.ROUND, Op.ROUND_HALF, Op.NOT,
                       Op.FLOOR_DIV, Op.REM, Op.MAX, Op.MIN, Op.AND, Op.OR, Op.XOR,
                       Op.SHIFT_LEFT, Op.SHIFT_RIGHT,
                       Op.ATAN2, Op.LT, Op.LE, Op.GT, Op.GE})
REDUCE_KINDS = ("sum", "max", "min", "prod", "any", "all")
ARGREDUCE_KINDS = ("argmax", "argmin")
SCAN_KINDS = ("sum", "prod", "max", "min")
SCAN_COMBINE = {"sum": Op.ADD, "prod": Op.MUL, "max": Op.MAX, "min": Op.MIN}  # the binary op

BY_NAME = {op.value: op for op in Op}
