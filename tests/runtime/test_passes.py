"""Pass tests: IR text in, structure out, and the reference interpreter as the oracle.

Every row of CASES is (pass, IR text, op counts expected after the pass, check): the test
runs the pass, checks the op counts, checks that the input graph was not mutated, and
compares `interpret(before)` with `interpret(after)` on random inputs: bit for bit when
check is EXACT, within float32 rounding when ROUNDED (rewrites that trade one rounding for
several, x**3 -> x*(x*x), or sum in another memory order, layout: tests/tolerance.py), not
at all when None.
"""
from __future__ import annotations

import collections

import numpy as np
import pytest

from xlanb_runtime.ir import Graph, Op, builder as B, interpret, parse_graph, print_graph
from xlanb_runtime.passes import (OPTIMIZE_PIPELINE, PASSES, PassError, PassRecord,
                                  register_pass, run_pipeline, timed)
from xlanb_runtime.passes.simplify import FOLD_LIMIT, is_lossless, splat_value
from tolerance import assert_close

EXACT, ROUNDED = "exact", "rounded"


def op_counts(graph: Graph) -> dict[str, int]:
    return dict(collections.Counter(n.op.value for n in graph.nodes))


def random_args(graph: Graph, rng: np.random.Generator) -> list[np.ndarray]:
    """Positive floats (pow/sqrt stay real), small signed ints, random bools."""
    args = []
    for p in graph.params:
        if p.dtype.kind == "f":
            args.append(rng.uniform(0.5, 2.0, p.shape).astype(p.dtype))
        elif p.dtype.kind in "iu":
            args.append(rng.integers(0 if p.dtype.kind == "u" else -5, 6, p.shape)
                        .astype(p.dtype))
        else:
            args.append(rng.random(p.shape) < 0.5)
    return args


def assert_same_numbers(before: Graph, after: Graph, check: str, args=None, seed=0):
    args = random_args(before, np.random.default_rng(seed)) if args is None else args
    # inputs are positive (no cancellation); a reduction or dot is at most a parameter long
    n = max((int(np.prod(p.shape)) for p in before.params), default=1)
    for want, got in zip(interpret(before, args), interpret(after, args)):
        assert got.dtype == want.dtype and got.shape == want.shape
        if check == EXACT:
            np.testing.assert_array_equal(got, want)
        else:
            assert_close(got, want, n=n)


def ir(body: str) -> str:
    return "module test\n" + body


X4 = "%x = parameter(), arg=0 : f32[4,8]\n"


def splat_f32(name: str, value: float, shape: str = "4,8") -> str:
    return (f"%{name}c = constant(), arg={value} : f32[]\n"
            f"%{name} = broadcast(%{name}c), arg=() : f32[{shape}]\n")


def power(exponent: float, dtype: str = "f32") -> str:
    return ir(f"%x = parameter(), arg=0 : {dtype}[4,8]\n"
              f"%nc = constant(), arg={exponent} : {dtype}[]\n"
              f"%n = broadcast(%nc), arg=() : {dtype}[4,8]\n"
              f"%y = power(%x, %n) : {dtype}[4,8]\nreturn (%y)")


def binary(op: str, lhs: str, rhs: str, prelude: str) -> str:
    return ir(X4 + prelude + f"%y = {op}({lhs}, {rhs}) : f32[4,8]\nreturn (%y)")


P = {"parameter": 1}
SPLAT = {"constant": 1, "broadcast": 1}

CASES = [
    # -- simplify: identities --------------------------------------------------------------
    # float x+0 is kept: -0.0 + 0.0 is +0.0 (1 / (x + 0) is +inf at x = -0.0)
    ("x+0 kept (float)", "simplify", binary("add", "%x", "%z", splat_f32("z", 0.0)),
     {**P, **SPLAT, "add": 1}, EXACT),
    ("0+x kept (float)", "simplify", binary("add", "%z", "%x", splat_f32("z", 0.0)),
     {**P, **SPLAT, "add": 1}, EXACT),
    ("x+0 (int)", "simplify",
     ir("%x = parameter(), arg=0 : s32[4,8]\n%zc = constant(), arg=0 : s32[]\n"
        "%z = broadcast(%zc), arg=() : s32[4,8]\n%y = add(%x, %z) : s32[4,8]\nreturn (%y)"),
     P, EXACT),
    ("x-0", "simplify", binary("subtract", "%x", "%z", splat_f32("z", 0.0)), P, EXACT),
    ("x*1", "simplify", binary("multiply", "%x", "%o", splat_f32("o", 1.0)), P, EXACT),
    ("1*x", "simplify", binary("multiply", "%o", "%x", splat_f32("o", 1.0)), P, EXACT),
    ("x/1", "simplify", binary("divide", "%x", "%o", splat_f32("o", 1.0)), P, EXACT),
    ("x*[1..1] (constant array)", "simplify",
     ir("%x = parameter(), arg=0 : f32[3]\n%o = constant(), arg=[1.0, 1.0, 1.0] : f32[3]\n"
        "%y = multiply(%o, %x) : f32[3]\nreturn (%y)"), P, EXACT),
    ("1-x kept", "simplify", binary("subtract", "%o", "%x", splat_f32("o", 1.0)),
     {**P, **SPLAT, "subtract": 1}, EXACT),
    ("x*2 kept", "simplify", binary("multiply", "%x", "%t", splat_f32("t", 2.0)),
     {**P, **SPLAT, "multiply": 1}, EXACT),
    ("-(-x)", "simplify", ir(X4 + "%a = negate(%x) : f32[4,8]\n%b = negate(%a) : f32[4,8]\n"
                             "return (%b)"), P, EXACT),
    ("~~x", "simplify", ir("%x = parameter(), arg=0 : pred[5]\n%a = not(%x) : pred[5]\n"
                           "%b = not(%a) : pred[5]\nreturn (%b)"), P, EXACT),
    ("max(x,x)", "simplify", binary("maximum", "%x", "%x", ""), P, EXACT),
    ("float x*0 kept (nan*0 is nan)", "simplify",
     binary("multiply", "%x", "%z", splat_f32("z", 0.0)), {**P, **SPLAT, "multiply": 1}, EXACT),
    ("float x-x kept (inf-inf is nan)", "simplify", binary("subtract", "%x", "%x", ""),
     {**P, "subtract": 1}, EXACT),
    ("int x*0 -> 0", "simplify",
     ir("%x = parameter(), arg=0 : s32[6]\n%zc = constant(), arg=0 : s32[]\n"
        "%z = broadcast(%zc), arg=() : s32[6]\n%y = multiply(%x, %z) : s32[6]\nreturn (%y)"),
     {**P, **SPLAT}, EXACT),
    ("int x-x -> 0", "simplify",
     ir("%x = parameter(), arg=0 : s32[6]\n%y = subtract(%x, %x) : s32[6]\nreturn (%y)"),
     {**P, **SPLAT}, EXACT),
    # -- simplify: powers ------------------------------------------------------------------
    ("x**1", "simplify", power(1.0), P, EXACT),
    ("x**0", "simplify", power(0.0), {**P, **SPLAT}, EXACT),
    ("x**2", "simplify", power(2.0), {**P, "multiply": 1}, EXACT),
    ("x**3", "simplify", power(3.0), {**P, "multiply": 2}, ROUNDED),
    ("x**4", "simplify", power(4.0), {**P, "multiply": 2}, ROUNDED),
    ("x**5", "simplify", power(5.0), {**P, "multiply": 3}, ROUNDED),
    ("x**8", "simplify", power(8.0), {**P, "multiply": 3}, ROUNDED),
    ("s32 x**3", "simplify", power(3, "s32"), {**P, "multiply": 2}, EXACT),
    ("x**-1", "simplify", power(-1.0), {**P, **SPLAT, "divide": 1}, EXACT),
    ("x**0.5", "simplify", power(0.5), {**P, "sqrt": 1}, ROUNDED),
    ("x**-0.5 kept (NumPy: (-0.0)**-0.5 = inf, (-inf)**-0.5 = 0; rsqrt: -inf, nan)",
     "simplify", power(-0.5), {**P, **SPLAT, "power": 1}, EXACT),
    ("x**9 kept", "simplify", power(9.0), {**P, **SPLAT, "power": 1}, EXACT),
    ("x**2.5 kept", "simplify", power(2.5), {**P, **SPLAT, "power": 1}, EXACT),
    ("x**y kept", "simplify", binary("power", "%x", "%x", ""), {**P, "power": 1}, EXACT),
    ("1/sqrt(x)", "simplify",
     binary("divide", "%o", "%s", splat_f32("o", 1.0) + "%s = sqrt(%x) : f32[4,8]\n"),
     {**P, "rsqrt": 1}, EXACT),
    ("x/8 kept (a power-of-two divisor would make kernel sources shape-dependent)",
     "simplify", binary("divide", "%x", "%e", splat_f32("e", 8.0)),
     {**P, **SPLAT, "divide": 1}, EXACT),
    # -- simplify: select, convert, data movement ------------------------------------------
    ("select(true)", "simplify",
     ir(X4 + "%pc = constant(), arg=True : pred[]\n%p = broadcast(%pc), arg=() : pred[4,8]\n"
        "%n = negate(%x) : f32[4,8]\n%y = select(%p, %x, %n) : f32[4,8]\nreturn (%y)"), P, EXACT),
    ("select(false)", "simplify",
     ir(X4 + "%pc = constant(), arg=False : pred[]\n%p = broadcast(%pc), arg=() : pred[4,8]\n"
        "%n = negate(%x) : f32[4,8]\n%y = select(%p, %x, %n) : f32[4,8]\nreturn (%y)"),
     {**P, "negate": 1}, EXACT),
    ("select(p, a, a)", "simplify",
     ir(X4 + "%p = compare-gt(%x, %x) : pred[4,8]\n%y = select(%p, %x, %x) : f32[4,8]\n"
        "return (%y)"), P, EXACT),
    ("convert to own type", "simplify",
     ir(X4 + "%y = convert(%x) : f32[4,8]\nreturn (%y)"), P, EXACT),
    ("convert f16->f32->f64", "simplify",
     ir("%x = parameter(), arg=0 : f16[6]\n%a = convert(%x) : f32[6]\n"
        "%b = convert(%a) : f64[6]\nreturn (%b)"), {**P, "convert": 1}, EXACT),
    ("convert s16->f32->s16", "simplify",
     ir("%x = parameter(), arg=0 : s16[6]\n%a = convert(%x) : f32[6]\n"
        "%b = convert(%a) : s16[6]\nreturn (%b)"), P, EXACT),
    ("convert s32->f32->f64 kept (lossy)", "simplify",
     ir("%x = parameter(), arg=0 : s32[6]\n%a = convert(%x) : f32[6]\n"
        "%b = convert(%a) : f64[6]\nreturn (%b)"), {**P, "convert": 2}, EXACT),
    ("convert f64->f32->f64 kept (lossy)", "simplify",
     ir("%x = parameter(), arg=0 : f64[6]\n%a = convert(%x) : f32[6]\n"
        "%b = convert(%a) : f64[6]\nreturn (%b)"), {**P, "convert": 2}, EXACT),
    ("broadcast(broadcast)", "simplify",
     ir("%x = parameter(), arg=0 : f32[8]\n%a = broadcast(%x), arg=(1,) : f32[4,8]\n"
        "%b = broadcast(%a), arg=(0, 2) : f32[4,3,8]\nreturn (%b)"), {**P, "broadcast": 1}, EXACT),
    ("reshape(reshape)", "simplify",
     ir(X4 + "%a = reshape(%x) : f32[32]\n%b = reshape(%a) : f32[8,4]\nreturn (%b)"),
     {**P, "reshape": 1}, EXACT),
    ("reshape(reshape) back", "simplify",
     ir(X4 + "%a = reshape(%x) : f32[32]\n%b = reshape(%a) : f32[4,8]\nreturn (%b)"), P, EXACT),
    ("transpose(transpose)", "simplify",
     ir("%x = parameter(), arg=0 : f32[2,3,4]\n%a = transpose(%x), arg=(1, 2, 0) : f32[3,4,2]\n"
        "%b = transpose(%a), arg=(1, 0, 2) : f32[4,3,2]\nreturn (%b)"),
     {**P, "transpose": 1}, EXACT),
    ("identity movement", "simplify",
     ir(X4 + "%a = reshape(%x) : f32[4,8]\n%b = slice(%a), arg=((0, 4, 1), (0, 8, 1)) : "
        "f32[4,8]\n%c = transpose(%b), arg=(0, 1) : f32[4,8]\n%d = reverse(%c), arg=() : "
        "f32[4,8]\nreturn (%d)"), P, EXACT),
    # -- simplify: constant folding --------------------------------------------------------
    ("fold small constants", "simplify",
     ir("%a = constant(), arg=[1.0, 2.0, 3.0] : f32[3]\n%b = constant(), arg=[4.0, 5.0, 6.0]"
        " : f32[3]\n%c = add(%a, %b) : f32[3]\n%d = exponential(%c) : f32[3]\nreturn (%d)"),
     {"constant": 1}, EXACT),
    ("fold splats stays a splat", "simplify",
     ir(splat_f32("a", 2.0, "64,64") + splat_f32("b", 3.0, "64,64")
        + "%c = multiply(%a, %b) : f32[64,64]\nreturn (%c)"), SPLAT, EXACT),
    ("fold movement of a splat", "simplify",
     ir(splat_f32("a", 2.0, "64,64") + "%b = transpose(%a), arg=(1, 0) : f32[64,64]\n"
        "%c = reshape(%b) : f32[4096]\nreturn (%c)"), SPLAT, EXACT),
    ("fold reduce of small splat", "simplify",
     ir(splat_f32("a", 0.5, "10") + "%b = reduce(%a), arg=('sum', (0,)) : f32[]\n"
        "return (%b)"), {"constant": 1}, EXACT),
    ("no fold above FOLD_LIMIT", "simplify",
     ir("%a = constant(), arg=[1.0, 2.0] : f32[2]\n"
        f"%b = broadcast(%a), arg=(1,) : f32[{FOLD_LIMIT},2]\nreturn (%b)"),
     {"constant": 1, "broadcast": 1}, EXACT),
    ("fold convert keeps dtype", "simplify",
     ir("%a = constant(), arg=[1, 2, 300] : s32[3]\n%b = convert(%a) : f16[3]\nreturn (%b)"),
     {"constant": 1}, EXACT),
    ("fold int negative power refused", "simplify",
     ir("%a = constant(), arg=[2, 3] : s32[2]\n%b = constant(), arg=[1, -1] : s32[2]\n"
        "%c = power(%a, %b) : s32[2]\nreturn (%c)"), {"constant": 2, "power": 1}, None),
    ("all-reduce never folds", "simplify",
     ir("%a = constant(), arg=[1.0, 2.0] : f32[2]\n%b = all-reduce(%a), arg='sum' : f32[2]\n"
        "return (%b)"), {"constant": 1, "all-reduce": 1}, EXACT),
    # -- cse -------------------------------------------------------------------------------
    ("cse repeated subtree", "cse",
     ir(X4 + "%a = exponential(%x) : f32[4,8]\n%b = exponential(%x) : f32[4,8]\n"
        "%c = negate(%a) : f32[4,8]\n%d = negate(%b) : f32[4,8]\n%e = add(%c, %d) : f32[4,8]"
        "\nreturn (%e)"), {**P, "exponential": 1, "negate": 1, "add": 1}, EXACT),
    ("cse equal constants", "cse",
     ir(X4 + splat_f32("a", 2.0) + splat_f32("b", 2.0)
        + "%c = multiply(%x, %a) : f32[4,8]\n%d = multiply(%x, %b) : f32[4,8]\n"
          "%e = subtract(%c, %d) : f32[4,8]\nreturn (%e)"),
     {**P, **SPLAT, "multiply": 1, "subtract": 1}, EXACT),
    ("cse keeps 0.0 and -0.0 apart", "cse",
     ir("%a = constant(), arg=0.0 : f32[]\n%b = constant(), arg=-0.0 : f32[]\n"
        "return (%a, %b)"), {"constant": 2}, EXACT),
    ("cse commutative add", "cse",
     ir(X4 + "%n = negate(%x) : f32[4,8]\n%a = add(%x, %n) : f32[4,8]\n"
        "%b = add(%n, %x) : f32[4,8]\nreturn (%a, %b)"), {**P, "negate": 1, "add": 1}, EXACT),
    ("cse maximum order kept (signed zeros)", "cse",
     ir(X4 + "%n = negate(%x) : f32[4,8]\n%a = maximum(%x, %n) : f32[4,8]\n"
        "%b = maximum(%n, %x) : f32[4,8]\nreturn (%a, %b)"), {**P, "negate": 1, "maximum": 2},
     EXACT),
    ("cse never merges parameters", "cse",
     ir(X4 + "%y = parameter(), arg=1 : f32[4,8]\n%a = add(%x, %y) : f32[4,8]\nreturn (%a)"),
     {"parameter": 2, "add": 1}, EXACT),
    # -- layout ----------------------------------------------------------------------------
    ("dot(a^T, b)", "layout",
     ir("%a = parameter(), arg=0 : f32[16,8]\n%b = parameter(), arg=1 : f32[16,4]\n"
        "%t = transpose(%a), arg=(1, 0) : f32[8,16]\n"
        "%d = dot(%t, %b), arg=((), (), (1,), (0,)) : f32[8,4]\nreturn (%d)"),
     {"parameter": 2, "dot": 1}, ROUNDED),
    ("dot(a, b^T)", "layout",
     ir("%a = parameter(), arg=0 : f32[8,16]\n%b = parameter(), arg=1 : f32[4,16]\n"
        "%t = transpose(%b), arg=(1, 0) : f32[16,4]\n"
        "%d = dot(%a, %t), arg=((), (), (1,), (0,)) : f32[8,4]\nreturn (%d)"),
     {"parameter": 2, "dot": 1}, ROUNDED),
    ("dot(a^T, b^T)", "layout",
     ir("%a = parameter(), arg=0 : f32[16,8]\n%b = parameter(), arg=1 : f32[4,16]\n"
        "%s = transpose(%a), arg=(1, 0) : f32[8,16]\n%t = transpose(%b), arg=(1, 0) : f32[16,4]"
        "\n%d = dot(%s, %t), arg=((), (), (1,), (0,)) : f32[8,4]\nreturn (%d)"),
     {"parameter": 2, "dot": 1}, ROUNDED),
    ("batched dot(a^T, b)", "layout",
     ir("%a = parameter(), arg=0 : f32[5,3,2]\n%b = parameter(), arg=1 : f32[2,5,4]\n"
        "%t = transpose(%a), arg=(2, 0, 1) : f32[2,5,3]\n"
        "%d = dot(%t, %b), arg=((0,), (0,), (1,), (1,)) : f32[2,3,4]\nreturn (%d)"),
     {"parameter": 2, "dot": 1}, ROUNDED),
    ("dot free dims would reorder: kept", "layout",
     ir("%a = parameter(), arg=0 : f32[5,4,3]\n%b = parameter(), arg=1 : f32[5,6]\n"
        "%t = transpose(%a), arg=(2, 1, 0) : f32[3,4,5]\n"
        "%d = dot(%t, %b), arg=((), (), (2,), (0,)) : f32[3,4,6]\nreturn (%d)"),
     {"parameter": 2, "transpose": 1, "dot": 1}, EXACT),
    ("reduce(x^T), order kept", "layout",
     ir("%x = parameter(), arg=0 : f32[2,3,4]\n%t = transpose(%x), arg=(1, 0, 2) : f32[3,2,4]\n"
        "%r = reduce(%t), arg=('sum', (0,)) : f32[2,4]\nreturn (%r)"),
     {**P, "reduce": 1}, ROUNDED),
    ("reduce(x^T), order changes", "layout",
     ir("%x = parameter(), arg=0 : f32[2,3,4]\n%t = transpose(%x), arg=(2, 1, 0) : f32[4,3,2]\n"
        "%r = reduce(%t), arg=('max', (1,)) : f32[4,2]\nreturn (%r)"),
     {**P, "reduce": 1, "transpose": 1}, EXACT),
    ("reduce(x^T), kept dims rotate", "layout",
     ir("%x = parameter(), arg=0 : f32[2,3,4,5]\n"
        "%t = transpose(%x), arg=(2, 3, 1, 0) : f32[4,5,3,2]\n"
        "%r = reduce(%t), arg=('sum', (3,)) : f32[4,5,3]\nreturn (%r)"),
     {**P, "reduce": 1, "transpose": 1}, ROUNDED),
    ("argmax(x^T)", "layout",
     ir("%x = parameter(), arg=0 : f32[3,5]\n%t = transpose(%x), arg=(1, 0) : f32[5,3]\n"
        "%r = arg-reduce(%t), arg=('argmax', 0) : s64[3]\nreturn (%r)"),
     {**P, "arg-reduce": 1}, EXACT),
    ("transpose(splat)", "layout",
     ir(splat_f32("a", 2.0, "3,5") + "%t = transpose(%a), arg=(1, 0) : f32[5,3]\n"
        "return (%t)"), SPLAT, EXACT),
    ("transpose(broadcast(vector))", "layout",
     ir("%x = parameter(), arg=0 : f32[5]\n%b = broadcast(%x), arg=(1,) : f32[3,5]\n"
        "%t = transpose(%b), arg=(1, 0) : f32[5,3]\nreturn (%t)"), {**P, "broadcast": 1}, EXACT),
    ("transpose(broadcast) reordering dims kept", "layout",
     ir("%x = parameter(), arg=0 : f32[3,5]\n%b = broadcast(%x), arg=(0, 2) : f32[3,2,5]\n"
        "%t = transpose(%b), arg=(2, 1, 0) : f32[5,2,3]\nreturn (%t)"),
     {**P, "broadcast": 1, "transpose": 1}, EXACT),
    ("dot read transposed swaps its operands", "layout",
     ir("%x = parameter(), arg=0 : f32[3,5]\n%w = parameter(), arg=1 : f32[5,4]\n"
        "%d = dot(%x, %w), arg=((), (), (1,), (0,)) : f32[3,4]\n"
        "%t = transpose(%d), arg=(1, 0) : f32[4,3]\nreturn (%t)"),
     {"parameter": 2, "dot": 1}, ROUNDED),
    ("op(x^T, broadcast) sinks the transpose into the dot (np.cov)", "layout",
     ir("%x = parameter(), arg=0 : f32[6,3]\n%m = parameter(), arg=1 : f32[3]\n"
        "%t = transpose(%x), arg=(1, 0) : f32[3,6]\n%b = broadcast(%m), arg=(0,) : f32[3,6]\n"
        "%c = subtract(%t, %b) : f32[3,6]\n"
        "%d = dot(%c, %c), arg=((), (), (1,), (1,)) : f32[3,3]\nreturn (%d)"),
     {"parameter": 2, "broadcast": 1, "subtract": 1, "dot": 1}, ROUNDED),
    ("op(x^T, broadcast of a stretched column) drops its size-1 dim", "layout",
     ir("%x = parameter(), arg=0 : f32[6,3]\n%m = parameter(), arg=1 : f32[3,1]\n"
        "%t = transpose(%x), arg=(1, 0) : f32[3,6]\n%b = broadcast(%m), arg=(0, 1) : f32[3,6]\n"
        "%c = multiply(%t, %b) : f32[3,6]\n"
        "%r = reduce(%c), arg=('sum', (1,)) : f32[3]\nreturn (%r)"),
     {"parameter": 2, "reshape": 1, "broadcast": 1, "multiply": 1, "reduce": 1}, ROUNDED),
    ("op(x^T, y) with y a full array: kept", "layout",
     ir("%x = parameter(), arg=0 : f32[2,3,4]\n%y = parameter(), arg=1 : f32[3,4,2]\n"
        "%s = transpose(%x), arg=(1, 2, 0) : f32[3,4,2]\n%c = add(%s, %y) : f32[3,4,2]\n"
        "return (%c)"),
     {"parameter": 2, "transpose": 1, "add": 1}, EXACT),
    ("transpose(transpose) inverse", "layout",
     ir("%x = parameter(), arg=0 : f32[3,5]\n%a = transpose(%x), arg=(1, 0) : f32[5,3]\n"
        "%b = transpose(%a), arg=(1, 0) : f32[3,5]\nreturn (%b)"), P, EXACT),
    ("op(x^T, broadcast of a transpose) folds both", "layout",
     ir("%x = parameter(), arg=0 : f32[6,5,4]\n%m = parameter(), arg=1 : f32[6,5]\n"
        "%t = transpose(%x), arg=(2, 1, 0) : f32[4,5,6]\n"
        "%u = transpose(%m), arg=(1, 0) : f32[5,6]\n"
        "%b = broadcast(%u), arg=(1, 2) : f32[4,5,6]\n%c = subtract(%t, %b) : f32[4,5,6]\n"
        "return (%c)"),
     {"parameter": 2, "broadcast": 1, "subtract": 1, "transpose": 1}, EXACT),
    ("reshape(x^T) adding a size-1 dim (keepdims)", "layout",
     ir("%x = parameter(), arg=0 : f32[6,4]\n%t = transpose(%x), arg=(1, 0) : f32[4,6]\n"
        "%r = reshape(%t) : f32[4,1,6]\nreturn (%r)"),
     {**P, "reshape": 1, "transpose": 1}, EXACT),
    ("reshape(x^T) dropping and adding size-1 dims", "layout",
     ir("%x = parameter(), arg=0 : f32[2,1,3,4]\n"
        "%t = transpose(%x), arg=(3, 1, 0, 2) : f32[4,1,2,3]\n"
        "%r = reshape(%t) : f32[4,2,1,3,1]\nreturn (%r)"),
     {**P, "reshape": 1, "transpose": 1}, EXACT),
    ("reshape(x^T) merging dims: kept", "layout",
     ir("%x = parameter(), arg=0 : f32[6,4]\n%t = transpose(%x), arg=(1, 0) : f32[4,6]\n"
        "%r = reshape(%t) : f32[24]\nreturn (%r)"),
     {**P, "reshape": 1, "transpose": 1}, EXACT),
    ("slice(x^T) -> slice(x)^T", "layout",
     ir("%x = parameter(), arg=0 : f32[6,5,4]\n%t = transpose(%x), arg=(1, 2, 0) : f32[5,4,6]\n"
        "%s = slice(%t), arg=((1, 5, 2), (0, 4, 1), (2, 6, 1)) : f32[2,4,4]\n"
        "%r = reduce(%s), arg=('sum', (2,)) : f32[2,4]\nreturn (%r)"),
     {**P, "slice": 1, "reduce": 1}, ROUNDED),
    ("reverse(x^T) -> reverse(x)^T", "layout",
     ir("%x = parameter(), arg=0 : f32[6,5]\n%t = transpose(%x), arg=(1, 0) : f32[5,6]\n"
        "%s = reverse(%t), arg=(0,) : f32[5,6]\n"
        "%r = reduce(%s), arg=('max', (1,)) : f32[5]\nreturn (%r)"),
     {**P, "reverse": 1, "reduce": 1}, EXACT),
    ("pad(x^T) -> pad(x)^T", "layout",
     ir("%x = parameter(), arg=0 : f32[6,5]\n%v = constant(), arg=0.0 : f32[]\n"
        "%t = transpose(%x), arg=(1, 0) : f32[5,6]\n"
        "%s = pad(%t, %v), arg=((1, 0, 0), (0, 2, 1)) : f32[6,13]\n"
        "%r = reduce(%s), arg=('max', (1,)) : f32[6]\nreturn (%r)"),
     {**P, "constant": 1, "pad": 1, "reduce": 1}, EXACT),
    ("cumsum(x^T) -> cumsum(x)^T", "layout",
     ir("%x = parameter(), arg=0 : f32[6,5,4]\n%t = transpose(%x), arg=(2, 0, 1) : f32[4,6,5]\n"
        "%s = scan(%t), arg=('max', 2) : f32[4,6,5]\n"
        "%r = reduce(%s), arg=('max', (0,)) : f32[6,5]\nreturn (%r)"),
     {**P, "scan": 1, "reduce": 1}, EXACT),
    ("concatenate(x^T, y^T) -> concatenate(x, y)^T", "layout",
     ir("%x = parameter(), arg=0 : f32[6,5]\n%y = parameter(), arg=1 : f32[6,3]\n"
        "%t = transpose(%x), arg=(1, 0) : f32[5,6]\n%u = transpose(%y), arg=(1, 0) : f32[3,6]\n"
        "%c = concatenate(%t, %u), arg=0 : f32[8,6]\n"
        "%r = reduce(%c), arg=('max', (1,)) : f32[8]\nreturn (%r)"),
     {"parameter": 2, "concatenate": 1, "reduce": 1}, EXACT),
    ("concatenate(x^T, y) with y untransposed: kept", "layout",
     ir("%x = parameter(), arg=0 : f32[6,5]\n%y = parameter(), arg=1 : f32[3,6]\n"
        "%t = transpose(%x), arg=(1, 0) : f32[5,6]\n"
        "%c = concatenate(%t, %y), arg=0 : f32[8,6]\nreturn (%c)"),
     {"parameter": 2, "concatenate": 1, "transpose": 1}, EXACT),
]


@pytest.mark.parametrize("name,pass_name,text,expected,check", CASES,
                         ids=[c[0] for c in CASES])
def test_rewrite(name, pass_name, text, expected, check):
    before = parse_graph(text)
    text_before = print_graph(before)
    after = PASSES[pass_name](before)
    assert op_counts(after) == expected, print_graph(after)
    assert print_graph(before) == text_before, "the pass mutated its input"
    if check is not None:
        assert_same_numbers(before, after, check)


@pytest.mark.parametrize("name,pass_name,text,expected,check", CASES,
                         ids=[c[0] for c in CASES])
def test_pipeline_is_a_fixpoint(name, pass_name, text, expected, check):
    once, _ = run_pipeline(parse_graph(text))
    twice, records = run_pipeline(once)
    assert not any(r.changed for r in records), [r.name for r in records if r.changed]
    if check is not None:
        assert_same_numbers(parse_graph(text), twice, ROUNDED)


# -- individual properties -------------------------------------------------------------------

def test_simplify_keeps_the_users_line():
    graph = parse_graph(power(4.0).replace(": f32[4,8]\nreturn", ': f32[4,8] loc="m.py:7"\n'
                                                                  "return"))
    after = PASSES["simplify"](graph)
    multiplies = [n for n in after.nodes if n.op is Op.MUL]
    assert len(multiplies) == 2 and all(n.loc == "m.py:7" for n in multiplies)


def test_float_identities_not_applied_to_nan_and_inf():
    graph = parse_graph(binary("multiply", "%x", "%z", splat_f32("z", 0.0)))
    args = [np.full((4, 8), np.inf, np.float32)]
    (got,) = interpret(run_pipeline(graph)[0], args)
    assert np.isnan(got).all()


def test_x_plus_zero_matches_by_value_in_the_nodes_dtype():
    text = ir("%x = parameter(), arg=0 : s32[3]\n%z = constant(), arg=[0, 0, 0] : s32[3]\n"
              "%y = add(%x, %z) : s32[3]\nreturn (%y)")
    assert op_counts(PASSES["simplify"](parse_graph(text))) == P
    half = ir("%x = parameter(), arg=0 : s32[3]\n%z = constant(), arg=[0, 1, 0] : s32[3]\n"
              "%y = add(%x, %z) : s32[3]\nreturn (%y)")
    assert op_counts(PASSES["simplify"](parse_graph(half)))["add"] == 1


def test_constant_folding_is_exact_in_the_nodes_dtype():
    text = ir("%a = constant(), arg=[1, 2, 300] : s32[3]\n%b = convert(%a) : f16[3]\n"
              "%c = constant(), arg=[0.1, 0.2, 0.3] : f16[3]\n%d = add(%b, %c) : f16[3]\n"
              "return (%d)")
    before = parse_graph(text)
    (folded,) = PASSES["simplify"](before).outputs
    assert folded.op is Op.CONSTANT and folded.arg.dtype == np.float16
    np.testing.assert_array_equal(folded.arg, interpret(before, [])[0])


def test_big_splat_is_never_materialized():
    text = ir(splat_f32("a", 2.0, "512,512") + splat_f32("b", 0.5, "512,512")
              + "%c = add(%a, %b) : f32[512,512]\n%d = exponential(%c) : f32[512,512]\n"
                "return (%d)")
    after, _ = run_pipeline(parse_graph(text))
    assert max(n.size for n in after.nodes if n.op is Op.CONSTANT) == 1
    assert splat_value(after.outputs[0]) == np.float32(np.exp(np.float32(2.5)))


@pytest.mark.parametrize("src,dst,lossless", [
    ("bool", "int8", True), ("int8", "float16", True), ("uint8", "float16", True),
    ("int16", "float16", False), ("int16", "float32", True), ("uint16", "float32", True),
    ("int32", "float32", False), ("int32", "float64", True), ("int64", "float64", False),
    ("int8", "uint16", False), ("uint8", "int16", True), ("float32", "float64", True),
    ("float64", "float32", False), ("float32", "int64", False), ("int8", "bool", False)])
def test_is_lossless(src, dst, lossless):
    assert is_lossless(np.dtype(src), np.dtype(dst)) is lossless


def test_dce_has_nothing_to_do_on_a_built_graph_and_prunes_a_stale_node_list():
    graph = parse_graph(ir(X4 + "%a = exponential(%x) : f32[4,8]\nreturn (%a)"))
    assert PASSES["dce"](graph) is graph
    stale = Graph(graph.params, graph.outputs, graph.name)
    _ = stale.nodes                                   # caches [x, exp]
    stale.outputs[0] = B.unary(Op.NEG, graph.params[0])
    stale._nodes = stale.nodes + [stale.outputs[0]]   # a hand-built list with a dead exp
    pruned = PASSES["dce"](stale)
    assert op_counts(pruned) == {"parameter": 1, "negate": 1}


# -- the pipeline ----------------------------------------------------------------------------

@pytest.fixture
def scratch_passes():
    """Register passes for one test and remove them afterwards."""
    added = []

    def add(name, fn):
        register_pass(name)(fn)
        added.append(name)
    yield add
    for name in added:
        PASSES.pop(name, None)


MODEL = ir(X4 + splat_f32("o", 1.0) + splat_f32("t", 3.0)
           + "%a = multiply(%x, %o) : f32[4,8]\n%b = power(%a, %t) : f32[4,8]\n"
             "%c = exponential(%x) : f32[4,8]\n%d = exponential(%x) : f32[4,8]\n"
             "%e = add(%c, %d) : f32[4,8]\n%f = add(%b, %e) : f32[4,8]\nreturn (%f)")


def test_pipeline_records_every_pass():
    graph = parse_graph(MODEL)
    dumped = []
    after, records = run_pipeline(graph, dump=lambda name, g: dumped.append((name, len(g))))
    assert [r.name for r in records] == list(OPTIMIZE_PIPELINE)
    assert all(isinstance(r, PassRecord) and r.seconds >= 0 for r in records)
    assert records[0].nodes_before == len(graph) and records[-1].nodes_after == len(after)
    for earlier, later in zip(records, records[1:]):
        assert later.nodes_before == earlier.nodes_after
    assert [r.changed for r in records[:3]] == [True, True, False]   # dce: nothing to do
    assert dumped == [(r.name, r.nodes_after) for r in records]
    assert op_counts(after) == {"parameter": 1, "multiply": 2, "exponential": 1, "add": 2}
    assert_same_numbers(graph, after, ROUNDED)


def test_pipeline_skips_disabled_passes():
    _, records = run_pipeline(parse_graph(MODEL), disabled=("cse", "fusion"))
    assert [r.name for r in records] == ["simplify", "dce", "layout", "simplify",
                                         "histogram-merge", "all-reduce-combiner"]


def test_pipeline_rejects_unknown_pass():
    with pytest.raises(ValueError, match="unknown pass 'nope'"):
        run_pipeline(parse_graph(MODEL), ("simplify", "nope"))


def test_broken_pass_is_named_by_the_verifier(scratch_passes):
    def break_types(graph):              # retypes the output without changing its rule
        out = graph.outputs[0]
        bad = type(out)(out.op, out.inputs, out.shape, np.float64, out.arg, out.loc)
        return Graph(graph.params, [bad], graph.name)
    scratch_passes("break-types", break_types)
    with pytest.raises(PassError, match="verify failed after 'break-types'") as info:
        run_pipeline(parse_graph(MODEL), ("simplify", "break-types", "cse"))
    assert info.value.pass_name == "break-types"
    after, _ = run_pipeline(parse_graph(MODEL), ("break-types",), verify_each=False)
    assert after.outputs[0].dtype == np.float64


def test_raising_pass_is_named(scratch_passes):
    def explode(graph):
        raise KeyError("boom")
    scratch_passes("explode", explode)
    with pytest.raises(PassError, match="pass 'explode' failed: KeyError"):
        run_pipeline(parse_graph(MODEL), ("explode",))


def test_pass_must_return_a_graph(scratch_passes):
    scratch_passes("no-graph", lambda graph: None)
    with pytest.raises(PassError, match="'no-graph' returned NoneType"):
        run_pipeline(parse_graph(MODEL), ("no-graph",))


def test_invalid_input_is_reported_before_any_pass():
    graph = parse_graph(MODEL)
    out = graph.outputs[0]
    graph.outputs[0] = type(out)(out.op, out.inputs, (3,), out.dtype, out.arg)
    with pytest.raises(PassError, match="verify failed on the pipeline's input"):
        run_pipeline(graph)


def test_register_pass_checks_names():
    with pytest.raises(ValueError, match="kebab-case"):
        register_pass("Fold_Things")
    with pytest.raises(ValueError, match="already registered"):
        register_pass("cse")(lambda graph: graph)


def test_timed_records_analysis_and_graph_steps():
    graph = parse_graph(MODEL)
    records: list[PassRecord] = []
    assert timed("buffer-assignment", lambda g: {"bytes": 0}, graph, records) == {"bytes": 0}
    result = timed("simplify-step", PASSES["simplify"], graph, records)
    assert [(r.name, r.changed) for r in records] == [("buffer-assignment", False),
                                                       ("simplify-step", True)]
    assert records[0].nodes_after == len(graph) and records[1].nodes_after == len(result)
    with pytest.raises(PassError, match="pass 'fusion' failed: ZeroDivisionError"):
        timed("fusion", lambda g: 1 / 0, graph, records)


# -- differential: random programs, optimized vs interpreted ---------------------------------

def random_program(rng: np.random.Generator) -> Graph:
    """Elementwise math, constant powers, splats, transposes, dots and reductions."""
    params = [B.parameter(i, (3, 4), np.float64) for i in range(2)]
    pool = list(params)

    def pick(shape=None, ndim=None):
        choices = [n for n in pool if (shape is None or n.shape == shape)
                   and (ndim is None or n.ndim == ndim)]
        return choices[rng.integers(len(choices))] if choices else None

    def splat(value, like):
        return B.broadcast(B.constant(np.float64(value)), like.shape, ())

    for _ in range(10):
        x = pick()
        kind = rng.integers(7)
        if kind == 0:
            node = B.binary([Op.ADD, Op.MUL, Op.SUB, Op.MAX][rng.integers(4)], x, pick(x.shape))
        elif kind == 1:
            c = [0.0, 1.0, 2.0, -1.0][rng.integers(4)]
            node = B.binary([Op.ADD, Op.MUL, Op.SUB, Op.DIV][rng.integers(4)], x, splat(c, x))
        elif kind == 2:
            e = [0, 1, 2, 3, 4, 5, -1, 0.5, -0.5, 2.5][rng.integers(10)]
            node = B.binary(Op.POW, B.unary(Op.ABS, x), splat(e, x))
        elif kind == 3:
            node = B.unary([Op.NEG, Op.TANH, Op.SQRT][rng.integers(3)], B.unary(Op.ABS, x))
        elif kind == 4:
            x = pick(ndim=2)
            t = B.transpose(x, (1, 0))
            node = B.transpose(t, (1, 0)) if rng.integers(2) else t
        elif kind == 5:
            x = pick(ndim=2)
            t = B.transpose(x, (1, 0))
            y = pick(shape=t.shape) or t
            node = B.dot(t, B.transpose(y, (1, 0)), (), (), (1,), (0,))
        else:
            x = pick(ndim=2)
            node = B.reduce(B.transpose(x, (1, 0)), ["sum", "max"][rng.integers(2)],
                            (int(rng.integers(2)),))
        pool.append(node)
    return Graph(params, pool[-3:], "random")


@pytest.mark.parametrize("seed", range(40))
def test_random_programs_keep_their_values(seed):
    rng = np.random.default_rng(seed)
    graph = random_program(rng)
    after, records = run_pipeline(graph)
    assert len(after) <= len(graph)
    args = [rng.normal(size=(3, 4)) for _ in graph.params]
    assert_same_numbers(graph, after, ROUNDED, args=args)


def test_fingerprints_hash_large_constants_instead_of_printing_them():
    """The pipeline fingerprints the graph around every pass: a 65,536-element constant
    printed element by element cost seconds each time (npbench stockham_fft)."""
    from xlanb_runtime.ir.printer import DIGEST_ELEMENTS

    def program(values):
        x = B.parameter(0, values.shape, values.dtype)
        return Graph([x], [B.binary(Op.ADD, x, B.constant(values))])
    values = np.arange(4 * DIGEST_ELEMENTS, dtype=np.float64)
    changed = values.copy()
    changed[-1] = -0.0
    assert "array<" in print_graph(program(values), digest_arrays=True)
    assert "array<" not in print_graph(program(values))          # the parseable text
    assert program(values).fingerprint() == program(values.copy()).fingerprint()
    assert program(values).fingerprint() != program(changed).fingerprint()


def test_a_scalar_on_a_dot_operand_moves_after_the_dot():
    """dot(x * s, y) -> dot(x, y) * s where the product is no bigger than x: the scale
    joins the dot's epilogue instead of a pass over x (npbench gemm's alpha * A @ B);
    a product bigger than x keeps it."""
    def program(x_shape, y_shape, scaled_left):
        x = B.parameter(0, x_shape, np.float64)
        y = B.parameter(1, y_shape, np.float64)
        scaled = B.binary(Op.MUL, x, B.broadcast(B.constant(np.float64(1.5)), x_shape, ()))
        lhs, rhs = (scaled, y) if scaled_left else (y, scaled)
        return Graph([x, y], [B.dot(lhs, rhs, lhs_contract=(1,), rhs_contract=(0,))])
    rng = np.random.default_rng(8)
    for x_shape, y_shape, left, moves in (((6, 8), (8, 5), True, True),
                                          ((8, 5), (6, 8), False, True),
                                          ((6, 2), (2, 9), True, False)):
        graph = program(x_shape, y_shape, left)
        after = PASSES["simplify"](graph)
        dot = next(n for n in after.nodes if n.op is Op.DOT)
        assert all(i.op is Op.PARAMETER for i in dot.inputs) == moves, print_graph(after)
        args = [rng.random(x_shape), rng.random(y_shape)]
        assert_close(interpret(after, args)[0], interpret(graph, args)[0], n=8, k=4)


@pytest.mark.parametrize("scale", [1e-20, np.inf, np.nan])
def test_a_scale_below_one_or_not_finite_stays_on_the_dot_operand(scale):
    """(x * 1e-20) @ y is finite where dot(x, y) * 1e-20 overflows (a scale below 1 is how
    code keeps a product in range), and (x * inf) @ y is nan where y's zeros meet x * inf,
    not inf: such scales stay before the dot, and the values stay NumPy's."""
    x = B.parameter(0, (3, 4), np.float32)
    y = B.parameter(1, (4, 3), np.float32)
    scaled = B.binary(Op.MUL, x, B.broadcast(B.constant(np.float32(scale)), (3, 4), ()))
    graph = Graph([x, y], [B.dot(scaled, y, lhs_contract=(1,), rhs_contract=(0,))])
    after = PASSES["simplify"](graph)
    args = [np.full((3, 4), 1e30, np.float32), np.eye(4, 3, dtype=np.float32) * 1e20]
    with np.errstate(all="ignore"):
        expected = (args[0] * np.float32(scale)) @ args[1]
        np.testing.assert_array_equal(interpret(after, args)[0], expected)
    dot = next(n for n in after.nodes if n.op is Op.DOT)
    assert dot.inputs[0].op is Op.MUL, print_graph(after)


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.bool_, np.complex64])
def test_a_dot_contracting_nothing_becomes_a_fusible_product(dtype):
    """Outer products (no contracting dims, or only size-1 ones) are a broadcast multiply
    (AND for booleans): no dot is left, and the values are the dot's."""
    rng = np.random.default_rng(9)
    x = B.parameter(0, (3, 4), np.dtype(dtype))
    y = B.parameter(1, (3, 1, 5), np.dtype(dtype))
    graphs = [Graph([x, y], [B.dot(x, B.reshape(y, (3, 5)), lhs_batch=(0,), rhs_batch=(0,))]),
              Graph([x, y], [B.dot(B.reshape(x, (3, 4, 1)), y, lhs_batch=(0,), rhs_batch=(0,),
                                   lhs_contract=(2,), rhs_contract=(1,))]),
              Graph([x, y], [B.dot(x, B.reshape(y, (15,)))])]
    args = [(rng.standard_normal((3, 4)) * 3).astype(dtype),
            (rng.standard_normal((3, 1, 5)) * 3).astype(dtype)]
    for graph in graphs:
        after = PASSES["simplify"](graph)
        assert all(n.op is not Op.DOT for n in after.nodes), print_graph(after)
        got, want = interpret(after, args)[0], interpret(graph, args)[0]
        assert got.dtype == want.dtype and got.shape == want.shape
        if got.dtype.kind == "c":       # a BLAS may round a complex product's parts once
            assert_close(got, want)
        else:
            np.testing.assert_array_equal(got, want)
