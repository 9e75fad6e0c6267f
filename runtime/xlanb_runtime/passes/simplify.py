"""`simplify`: algebraic simplification and constant folding, as a table of rewrite rules.

Before / after (`1 / np.sqrt(x**2 * 1)`: a constant power, a unit scale, 1/sqrt):

    %0 = parameter(), arg=0 : f32[1024]           %0 = parameter(), arg=0 : f32[1024]
    %1 = constant(), arg=2.0 : f32[]               %1 = multiply(%0, %0) : f32[1024]
    %2 = broadcast(%1), arg=() : f32[1024]         %2 = rsqrt(%1) : f32[1024]
    %3 = power(%0, %2) : f32[1024]          ->     return (%2)
    %4 = constant(), arg=1.0 : f32[]
    %5 = broadcast(%4), arg=() : f32[1024]
    %6 = multiply(%3, %5) : f32[1024]
    %7 = sqrt(%6) : f32[1024]
    %8 = divide(%5, %7) : f32[1024]
    return (%8)

Precondition: none (any verified graph).  Cost: never adds memory traffic; power rewrites
trade one `pow` for at most four multiplies (NumPy's float32 pow is 8-13x slower than x*x*x).

Float rules keep IEEE semantics except where a comment says otherwise: there is no x*0 -> 0
or x-x -> 0 for floats (NaN and Inf make them wrong); those two are integer-only.

Constants: a *splat* is a constant whose elements are all equal, or a broadcast of one.
`broadcast(constant(c), shape)` is the canonical splat and is never folded into an array,
whatever its size.  Elementwise ops and data movement over splats fold to a splat; any
other op whose inputs are all constants folds through the reference interpreter, but only
when the result has at most FOLD_LIMIT elements (a folded constant is printed in dumps and
embedded in kernels).  Collectives never fold: on N replicas all-reduce is not the identity;
nor do loops (a loop over constants is still a loop: folding it would run it at compile time)
or library calls (a sort or a solve of constants would run at compile time).

The rewrite engine (patterns, rule tables, `rewrite`) lives here too; `layout` uses it.
"""
from __future__ import annotations

import inspect
import weakref
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from ..ir import Graph, Node, with_inputs, rebuild
from ..ir import builder as B
from ..ir.interpret import evaluate_node
from ..ir.ops import COMMUTATIVE, CONTROL_FLOW, ELEMENTWISE, LEAVES, LIBRARY, Op
from .pipeline import register_pass

FOLD_LIMIT = 1024          # elements: the largest array constant folding may create
POWER_LIMIT = 8            # x**n for integer 2 <= n <= POWER_LIMIT becomes multiplies

# -- patterns ------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class Pat:
    """Matches a node: by op (`ops`, None = any), inputs (`src`, None = any), or as a splat
    equal to `value` (`is_splat`; value None = any splat).  `name` binds the matched node;
    a name used twice must bind the same node.  Binary commutative ops match either order."""
    ops: frozenset | None = None
    src: tuple | None = None
    name: str | None = None
    is_splat: bool = False
    value: object = None

    def __repr__(self) -> str:
        if self.is_splat:
            return repr(self.value) if self.value is not None else (self.name or "c")
        if self.ops is None:
            return self.name or "_"
        head = "|".join(sorted(op.value for op in self.ops))
        return f"{head}({', '.join(map(repr, self.src))})" if self.src is not None else head


def pat(ops: Op | Iterable[Op], *src: Pat, name: str | None = None) -> Pat:
    ops = frozenset([ops]) if isinstance(ops, Op) else frozenset(ops)
    return Pat(ops, tuple(src), name)


def var(name: str | None = None) -> Pat:
    return Pat(name=name)


def const(value=None, name: str | None = None) -> Pat:
    return Pat(name=name, is_splat=True, value=value)


def match(p: Pat, node: Node, bound: dict[str, Node]) -> dict[str, Node] | None:
    """The bindings extended by matching `p` against `node`, or None."""
    if p.ops is not None and node.op not in p.ops:
        return None
    if p.is_splat and not _splat_equals(node, p.value):
        return None
    if p.name is not None:
        if p.name in bound and bound[p.name] is not node:
            return None
        bound = {**bound, p.name: node}
    if p.src is None:
        return bound
    if len(p.src) != len(node.inputs):
        return None
    orders = [node.inputs]
    if node.op in COMMUTATIVE and len(node.inputs) == 2:
        orders.append(node.inputs[::-1])
    for inputs in orders:
        result: dict[str, Node] | None = bound
        for sub, inp in zip(p.src, inputs):
            result = match(sub, inp, result)
            if result is None:
                break
        if result is not None:
            return result
    return None


# -- rule tables and the rewriter ----------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    pattern: Pat
    fn: Callable[..., Node | None]     # keyword args: the pattern's names, plus `node` (root)
    params: tuple[str, ...]


class Rules:
    """An ordered rule table; tables combine with `+`.  The first rule that returns a node
    (not None) wins, and the result is matched again until no rule applies."""

    def __init__(self, pairs: Sequence[tuple[Pat, Callable[..., Node | None]]]):
        self.pairs = list(pairs)
        self.rules = [Rule(p, fn, tuple(inspect.signature(fn).parameters)) for p, fn in pairs]
        self._by_op = {op: [r for r in self.rules if r.pattern.ops is None or op in r.pattern.ops]
                       for op in Op}

    def __add__(self, other: "Rules") -> "Rules":
        return Rules(self.pairs + other.pairs)

    def apply(self, node: Node, max_steps: int = 64) -> Node:
        for _ in range(max_steps):
            for rule in self._by_op[node.op]:
                bound = match(rule.pattern, node, {"node": node})
                if bound is None:
                    continue
                with B.location(node.loc):        # new nodes keep the user's line
                    out = rule.fn(**{k: bound[k] for k in rule.params})
                if out is None or out is node:
                    continue
                assert out.shape == node.shape and out.dtype == node.dtype, (
                    f"rule {rule.pattern!r} turned {node} into {out}")
                node = out
                break
            else:
                return node
        raise AssertionError(f"rules did not converge at {node} after {max_steps} steps")


def rewrite(graph: Graph, rules: Rules) -> Graph:
    """Apply `rules` bottom-up (each node sees its inputs already rewritten).

    Returns `graph` itself when no rule fired; never mutates a node."""
    def apply(node: Node, inputs) -> Node:
        new = with_inputs(node, inputs)
        return new if new.op is Op.PARAMETER else rules.apply(new)
    return rebuild(graph, apply)


# -- constants and splats ------------------------------------------------------------------

_splat_cache: "weakref.WeakKeyDictionary[Node, object]" = weakref.WeakKeyDictionary()
_NOT_SPLAT = object()


def splat_value(node: Node) -> np.generic | None:
    """The one value of a constant whose elements are bitwise all equal (seen through
    broadcasts), as a NumPy scalar of the node's dtype; None otherwise."""
    while node.op is Op.BROADCAST:
        node = node.inputs[0]
    if node.op is not Op.CONSTANT or node.size == 0:
        return None
    cached = _splat_cache.get(node)
    if cached is None:
        flat = np.ascontiguousarray(node.arg).reshape(-1)
        bits = flat.view(np.uint8).reshape(flat.size, -1)     # complex128: 16 bytes
        cached = flat[0] if bool((bits == bits[0]).all()) else _NOT_SPLAT
        _splat_cache[node] = cached
    return None if cached is _NOT_SPLAT else cached


def _splat_equals(node: Node, value) -> bool:
    found = splat_value(node)
    if found is None or value is None:
        return found is not None
    wanted = np.asarray(value).astype(node.dtype)
    if wanted != value:                  # e.g. 0.5 in an integer dtype: never matches
        return False
    return bool(found == wanted)


def splat(value, like: Node) -> Node:
    """The canonical splat: broadcast(constant(value)) with `like`'s shape and dtype."""
    return B.broadcast(B.constant(np.asarray(value).astype(like.dtype)), like.shape, ())


def is_float(node: Node) -> bool:
    return node.dtype.kind == "f"


def is_numeric(node: Node) -> bool:
    return node.dtype.kind in "iufc"


_MOVEMENT = frozenset({Op.BROADCAST, Op.RESHAPE, Op.TRANSPOSE, Op.SLICE, Op.REVERSE})
_SPLAT_PRESERVING = ELEMENTWISE | _MOVEMENT
_NEVER_FOLD = LEAVES | CONTROL_FLOW | LIBRARY | {Op.ALL_REDUCE}


def fold_constants(node: Node) -> Node | None:
    if node.op in _NEVER_FOLD:
        return None
    values = [splat_value(i) for i in node.inputs]
    if node.op in _SPLAT_PRESERVING and all(v is not None for v in values):
        if node.op is Op.BROADCAST and node.inputs[0].op is Op.CONSTANT \
                and node.inputs[0].ndim == 0:
            return None                                  # already the canonical splat
        if node.op in _MOVEMENT:
            return splat(values[0], node)
        scalar = Node(node.op, (), (), node.dtype, node.arg)
        try:
            return splat(evaluate_node(scalar, [np.asarray(v) for v in values]), node)
        except Exception:            # e.g. an integer to a negative power: fails at run time
            return None
    if node.size > FOLD_LIMIT or node.op is Op.PAD and all(v is not None for v in values):
        return None     # a pad of splats is a bounds test in a kernel (x[a:b] = v's mask)
    arrays = []
    for inp, value in zip(node.inputs, values):
        if inp.op is Op.CONSTANT:
            arrays.append(inp.arg)
        elif value is not None and inp.size <= FOLD_LIMIT:
            arrays.append(np.full(inp.shape, value, inp.dtype))
        else:
            return None
    try:
        return B.constant(evaluate_node(node, arrays), node.dtype)
    except Exception:
        return None


# -- rule helpers --------------------------------------------------------------------------

_MANTISSA_BITS = {2: 11, 4: 24, 8: 53}


def is_lossless(src: np.dtype, dst: np.dtype) -> bool:
    """Whether every value of `src` converts to `dst` exactly (so a round trip is exact)."""
    if src == dst or src.kind == "b":
        return True
    if dst.kind == "b":
        return False
    if src.kind in "iu" and dst.kind in "iu":
        return bool(np.can_cast(src, dst, "safe"))
    if src.kind in "iu" and dst.kind == "f":          # |x| <= 2**mantissa bits is exact
        return src.itemsize * 8 - (src.kind == "i") <= _MANTISSA_BITS[dst.itemsize]
    if src.kind == "f" and dst.kind == "f":
        return dst.itemsize >= src.itemsize
    return False


def power_by_multiplying(x: Node, n: Node) -> Node | None:
    """x**k for a constant integer 2 <= k <= POWER_LIMIT by square-and-multiply (like JAX's
    integer_pow): at most 2*log2(k) multiplies, each rounding once (pow rounds once)."""
    k = complex(splat_value(n))                  # a complex exponent counts if it is real
    if not is_numeric(x) or k.imag or not k.real.is_integer() or \
            not 2 <= k.real <= POWER_LIMIT:
        return None
    k, result, base = int(k.real), None, x
    while k:
        if k & 1:
            result = base if result is None else B.binary(Op.MUL, result, base)
        k >>= 1
        if k:
            base = B.binary(Op.MUL, base, base)
    return result


def compose_broadcasts(node: Node, inner: Node, x: Node) -> Node:
    return B.broadcast(x, node.shape, tuple(node.arg[d] for d in inner.arg))


def compose_transposes(node: Node, inner: Node, x: Node) -> Node:
    return B.transpose(x, tuple(inner.arg[q] for q in node.arg))


def fold_lossless_converts(node: Node, mid: Node, x: Node) -> Node | None:
    return B.convert(x, node.dtype) if is_lossless(x.dtype, mid.dtype) else None


def same_type(node: Node, x: Node) -> Node | None:
    return x if node.shape == x.shape and node.dtype == x.dtype else None


def drop_identity_transpose(node: Node, x: Node) -> Node | None:
    return x if tuple(node.arg) == tuple(range(x.ndim)) else None


def drop_trivial_reverse(node: Node, x: Node) -> Node | None:
    return x if all(x.shape[a] <= 1 for a in node.arg) else None


def compose_reverses(node: Node, x: Node) -> Node:
    """reverse(reverse(x, a), b): x reversed along the axes in one of a and b only."""
    return B.reverse(x, sorted(set(node.inputs[0].arg) ^ set(node.arg)))


def elementwise_of_reverses(node: Node) -> Node | None:
    """op(reverse(x), reverse(y), splat) as reverse(op(x, y, splat)), all reversed along
    the same axes: `x[::-1] = x` then an update through `x[::-1]` is a region update of
    x reversed, which codegen writes in place, not a select of reversed pads (whose
    operands fusion then writes out whole)."""
    axes = {o.arg for o in node.inputs if o.op is Op.REVERSE}
    if len(axes) != 1 or node.ndim == 0:
        return None
    (along,) = axes
    inputs = []
    for operand in node.inputs:
        if operand.op is Op.REVERSE:
            inputs.append(operand.inputs[0])
        elif splat_value(operand) is not None:
            inputs.append(operand)
        else:
            return None
    return B.reverse(Node(node.op, tuple(inputs), node.shape, node.dtype, node.arg,
                          node.loc), along)


def zero_unless_float(x: Node) -> Node | None:
    return None if x.dtype.kind in "fc" else splat(0, x)     # complex holds NaN/Inf too


def one_if_numeric(x: Node) -> Node | None:
    return splat(1, x) if is_numeric(x) else None


def reciprocal(x: Node) -> Node | None:
    return B.binary(Op.DIV, splat(1, x), x) if is_float(x) else None


def unless_float(x: Node) -> Node | None:
    return None if x.dtype.kind in "fc" else x


def sqrt(x: Node) -> Node | None:
    return B.unary(Op.SQRT, x) if x.dtype.kind in "fc" else None


def rsqrt(x: Node) -> Node | None:
    return B.unary(Op.RSQRT, x) if is_float(x) else None


def scale_after_dot(node: Node, x: Node, s: Node, y: Node) -> Node | None:
    """dot(x * s, y) -> dot(x, y) * s for a scalar s where the product is no bigger than
    x: the scale joins the dot's epilogue instead of a pass over x (npbench gemm's
    `alpha * A @ B`, as XLA's algebraic simplifier moves it).  Only for a finite s with
    |s| >= 1: a smaller scale is how code keeps a product from overflowing (`(x * 1e-20)
    @ y` is finite where dot(x, y) * 1e-20 is inf), and an inf or nan s turns x's zeros
    into nans before the sum, not after it."""
    value = splat_value(s)
    if node.dtype.kind not in "fc" or node.size > x.size or \
            not (np.isfinite(value) and abs(value) >= 1):
        return None
    inputs = [x, y] if node.inputs[0] is not y or node.inputs[1] is y else [y, x]
    product = with_inputs(node, inputs)
    return B.binary(Op.MUL, product, splat(value, product))


def outer_product(node: Node, x: Node, y: Node) -> Node | None:
    """A dot contracting nothing (np.outer, einsum 'i,j->ij', x[:, None] @ y[None, :]) is
    a product per output element: broadcasts and a multiply (AND for booleans, as NumPy's
    bool matmul of one term) that fuse with what reads them, not a BLAS call writing the
    whole product (np.outer(x > 0, y > 0).sum() of 2000: 7.4 ms, NumPy 2.3)."""
    lhs_batch, rhs_batch, lhs_contract, rhs_contract = node.arg
    if any(x.shape[d] != 1 for d in lhs_contract):
        return None
    x, lhs_batch = _without_dims(x, lhs_contract, lhs_batch)     # contracting one term
    y, rhs_batch = _without_dims(y, rhs_contract, rhs_batch)
    lhs_free = [d for d in range(x.ndim) if d not in lhs_batch]
    rhs_free = [d for d in range(y.ndim) if d not in rhs_batch]
    batch, left = len(lhs_batch), len(lhs_free)
    xs = B.broadcast(B.transpose(x, list(lhs_batch) + lhs_free), node.shape,
                     list(range(batch + left)))
    ys = B.broadcast(B.transpose(y, list(rhs_batch) + rhs_free), node.shape,
                     list(range(batch)) + list(range(batch + left, node.ndim)))
    return B.binary(Op.AND if node.dtype == np.bool_ else Op.MUL, xs, ys)


def _without_dims(x: Node, dims, batch) -> tuple[Node, list[int]]:
    """x with its size-1 `dims` reshaped away, and where its `batch` dims are then."""
    kept = [d for d in range(x.ndim) if d not in dims]
    return B.reshape(x, [x.shape[d] for d in kept]), [kept.index(d) for d in batch]


IDEMPOTENT = frozenset({Op.MAX, Op.MIN, Op.AND, Op.OR})

# -- the table -----------------------------------------------------------------------------

SIMPLIFY = Rules([
    # constant folding first: an op over constants becomes a constant (or a splat)
    (var(), fold_constants),                                   # op(c1, c2) -> c
    # identities; x+0 -> x not for floats: x = -0.0 gives -0.0 + 0.0 = +0.0 (1/(x+0) is +inf)
    (pat(Op.ADD, var("x"), const(0)), unless_float),           # x+0, 0+x -> x
    (pat(Op.SUB, var("x"), const(0)), lambda x: x),            # x-0 -> x
    (pat(Op.MUL, var("x"), const(1)), lambda x: x),            # x*1, 1*x -> x
    (pat(Op.DIV, var("x"), const(1)), lambda x: x),            # x/1 -> x
    (pat(Op.MUL, var("x"), const(0)), zero_unless_float),      # x*0 -> 0   (integers only)
    (pat(Op.SUB, var("x"), var("x")), zero_unless_float),      # x-x -> 0   (integers only)
    (pat(Op.NEG, pat(Op.NEG, var("x"))), lambda x: x),         # -(-x) -> x
    (pat(Op.NOT, pat(Op.NOT, var("x"))), lambda x: x),         # ~~x -> x
    (pat(IDEMPOTENT, var("x"), var("x")), lambda x: x),        # max(x,x), x&x, x|x -> x
    # powers: NumPy's pow is far slower than a multiply
    (pat(Op.POW, var("x"), const(1)), lambda x: x),            # x**1 -> x
    (pat(Op.POW, var("x"), const(0)), one_if_numeric),         # x**0 -> 1  (nan**0 is 1 too)
    (pat(Op.POW, var("x"), const(name="n")),                   # x**2 -> x*x, x**3 -> x*(x*x)
     power_by_multiplying),                                    #   x**4 -> (x*x)*(x*x) .. x**8
    (pat(Op.POW, var("x"), const(-1)), reciprocal),            # x**-1 -> 1/x
    (pat(Op.POW, var("x"), const(0.5)), sqrt),                 # x**0.5 -> sqrt(x)  (*)
    (pat(Op.DIV, const(1), pat(Op.SQRT, var("x"))), rsqrt),    # 1/sqrt(x) -> rsqrt(x)
    # select
    (pat(Op.SELECT, const(True), var("a"), var()), lambda a: a),   # select(true, a, b) -> a
    (pat(Op.SELECT, const(False), var(), var("b")), lambda b: b),  # select(false, a, b) -> b
    (pat(Op.SELECT, var(), var("a"), var("a")), lambda a: a),      # select(p, a, a) -> a
    (pat(Op.SELECT, var("p"), var("a"),                        # select(p, a, select(p, _, b))
         pat(Op.SELECT, var("p"), var(), var("b"))),           #   -> select(p, a, b): x[r] = v
     lambda p, a, b: B.select(p, a, b)),                       #   twice (x[r] += v writes back)
    # contractions
    (pat(Op.DOT, var("x"), var("y")), outer_product),         # dot contracting nothing ->
    #                                                            bcast(x) * bcast(y)
    (pat(Op.DOT, pat(Op.MUL, var("x"), const(name="s")), var("y")),   # dot(x*s, y) ->
     scale_after_dot),                                                 #   dot(x, y)*s
    (pat(Op.DOT, var("y"), pat(Op.MUL, var("x"), const(name="s"))),   # dot(y, x*s) ->
     scale_after_dot),                                                 #   dot(y, x)*s
    # conversions
    (pat(Op.CONVERT, var("x")), same_type),                    # convert(x: T) to T -> x
    (pat(Op.CONVERT, pat(Op.CONVERT, var("x"), name="mid")),   # convert(convert(x, M), T) ->
     fold_lossless_converts),                                  #   convert(x, T) if M holds x
    # data movement: compose chains
    (pat(Op.BROADCAST, pat(Op.BROADCAST, var("x"), name="inner")),   # bcast(bcast(x)) ->
     compose_broadcasts),                                            #   bcast(x)
    (pat(Op.RESHAPE, pat(Op.RESHAPE, var("x"))),               # reshape(reshape(x)) ->
     lambda node, x: B.reshape(x, node.shape)),                #   reshape(x)
    (pat(Op.TRANSPOSE, pat(Op.TRANSPOSE, var("x"), name="inner")),   # transpose(transpose(x,
     compose_transposes),                                            #   p), q) -> x^p[q]
    (pat(Op.REVERSE, pat(Op.REVERSE, var("x"))), compose_reverses),  # reverse(reverse(x))
    #                                                                  -> x
    (Pat(ELEMENTWISE), elementwise_of_reverses),               # op(rev(x), rev(y)) ->
    #                                                            rev(op(x, y))
    # data movement: drop identities (the builder never makes them; hand-written IR can)
    (pat(Op.RESHAPE, var("x")), same_type),                    # reshape(x) to x.shape -> x
    (pat(Op.BROADCAST, var("x")), same_type),                  # bcast(x) to x.shape -> x
    (pat(Op.SLICE, var("x")), same_type),                      # x[:] -> x
    (pat(Op.PAD, var("x"), var()), same_type),                 # pad(x, v, zeros) -> x
    (pat(Op.TRANSPOSE, var("x")), drop_identity_transpose),    # transpose(x, id) -> x
    (pat(Op.REVERSE, var("x")), drop_trivial_reverse),         # reverse of size-1 axes -> x
    (pat(Op.CONCATENATE, var("x")), lambda x: x),              # concatenate(x) -> x
])
# (*) x**0.5 -> sqrt(x) is what NumPy's own scalar-exponent power does (-0.0 and -inf give
#     -0.0 and nan either way).  x**-0.5 stays a power: NumPy's loop has no rsqrt case, and
#     rsqrt differs from pow at -0.0 and -inf (-inf and nan where NumPy gives +inf and 0).


@register_pass("simplify")
def simplify(graph: Graph) -> Graph:
    """Algebraic simplification and constant folding (the SIMPLIFY table)."""
    return rewrite(graph, SIMPLIFY)
