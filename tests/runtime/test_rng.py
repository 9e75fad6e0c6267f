"""`rng-bits`: its rule, text form, reference hash, folding, and compiled kernels that agree
with the interpreter bit for bit (the uint64 arithmetic `xlanb.random` builds on included)."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb_runtime as runtime
from xlanb_runtime.codegen.rng import splitmix64
from xlanb_runtime.ir import Op, VerifyError, interpret, parse_graph, print_graph, verify
from xlanb_runtime.ir import builder as B
from xlanb_runtime.ir.graph import Graph, Node
from xlanb_runtime.ir.interpret import rng_bits
from xlanb_runtime.passes import run_pipeline
from xlanb_runtime.passes.fusion import plan_fusion

KEY = np.array(0x0123456789ABCDEF, np.uint64)


def compiled_equals_interpreted(text: str, args, kernels: int | None = None):
    graph = parse_graph(text)
    executable = runtime.compile(graph)
    if kernels is not None:
        assert sum(k.kind != "library" for k in executable.kernels) == kernels, \
            executable.as_text()
    for got, expected in zip(executable.run(args), interpret(graph, args)):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
    return executable


# -- the hash ------------------------------------------------------------------------------

def test_rng_bits_is_splitmix64():
    # splitmix64 seeded with 0: the reference generator's first three outputs
    assert [int(b) for b in rng_bits(np.uint64(0), (3,))] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_element_is_a_function_of_key_and_flat_index_only():
    flat = rng_bits(KEY, (24,))
    np.testing.assert_array_equal(rng_bits(KEY, (2, 3, 4)), flat.reshape(2, 3, 4))
    np.testing.assert_array_equal(rng_bits(KEY, (5,)), flat[:5])
    assert rng_bits(KEY, ()).shape == () and rng_bits(KEY, ())[()] == flat[0]
    assert rng_bits(KEY, (0, 3)).shape == (0, 3)
    assert not np.array_equal(rng_bits(KEY + np.uint64(1), (8,)), flat[:8])


def test_numba_helper_matches_the_interpreter():
    expected = rng_bits(KEY, (6,))
    assert [splitmix64(KEY[()], i) for i in range(6)] == [int(e) for e in expected]


# -- rule, verifier, text ------------------------------------------------------------------

def test_builder_rule_needs_a_u64_scalar_key():
    key = B.parameter(0, (), np.uint64)
    node = B.rng_bits(key, (4, 5))
    assert node.op is Op.RNG_BITS and node.shape == (4, 5) and node.dtype == np.uint64
    for bad in (B.parameter(0, (2,), np.uint64), B.parameter(0, (), np.int64)):
        with pytest.raises(B.IRShapeError, match="u64"):
            B.rng_bits(bad, (4,))


def test_verifier_rejects_a_wrong_result_type():
    key = B.parameter(0, (), np.uint64)
    wrong = Node(Op.RNG_BITS, (key,), (4,), np.float32)
    with pytest.raises(VerifyError, match="rng-bits"):
        verify(Graph([key], [wrong]))


def test_print_parse_round_trip():
    key = B.parameter(0, (), np.uint64)
    graph = Graph([key], [B.rng_bits(key, (3, 4))])
    text = print_graph(graph)
    assert "rng-bits(%0) : u64[3,4]" in text
    again = parse_graph(text)
    verify(again)
    assert print_graph(again) == text
    np.testing.assert_array_equal(interpret(again, [KEY])[0], rng_bits(KEY, (3, 4)))


# -- passes --------------------------------------------------------------------------------

def test_small_constant_key_folds_exactly_and_large_does_not():
    small = Graph([], [B.rng_bits(B.constant(KEY), (8,))])
    folded, _ = run_pipeline(small)
    assert folded.outputs[0].op is Op.CONSTANT
    np.testing.assert_array_equal(folded.outputs[0].arg, rng_bits(KEY, (8,)))
    large = Graph([], [B.rng_bits(B.constant(KEY), (2048,))])
    kept, _ = run_pipeline(large)
    assert kept.outputs[0].op is Op.RNG_BITS


def test_cse_merges_equal_rng_bits():
    key = B.parameter(0, (), np.uint64)
    a, b = B.rng_bits(key, (16,)), B.rng_bits(key, (16,))
    graph, _ = run_pipeline(Graph([key], [B.binary(Op.XOR, a, b)]))
    assert sum(n.op is Op.RNG_BITS for n in graph.nodes) == 1


def test_rng_bits_is_loop_fusible():
    graph = parse_graph("""
module m
  %0 = parameter(), arg=0 : u64[]
  %1 = parameter(), arg=1 : f32[8,3]
  %2 = rng-bits(%0) : u64[8,3]
  %3 = convert(%2) : f32[8,3]
  %4 = add(%1, %3) : f32[8,3]
  return (%4)
""")
    assert plan_fusion(graph).kernel_count() == 1


# -- compiled vs interpreted ---------------------------------------------------------------

SHAPES = [(), (7,), (3, 5), (2, 3, 4), (1, 4, 1)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_compiled_bits_match_for_parameter_key(shape):
    dims = ",".join(map(str, shape))
    compiled_equals_interpreted(f"""
module m
  %0 = parameter(), arg=0 : u64[]
  %1 = rng-bits(%0) : u64[{dims}]
  return (%1)
""", [KEY], kernels=1)


def test_constant_and_computed_keys():
    executable = compiled_equals_interpreted("""
module m
  %0 = parameter(), arg=0 : u64[]
  %1 = constant(), arg=12345 : u64[]
  %2 = rng-bits(%1) : u64[40,40]
  %3 = xor(%0, %1) : u64[]
  %4 = rng-bits(%3) : u64[40,40]
  %5 = xor(%2, %4) : u64[40,40]
  return (%5)
""", [KEY], kernels=1)
    assert "splitmix64(" in executable.kernels[-1].source


def test_rng_bits_read_through_index_arithmetic():
    # transpose, slice, reverse and broadcast change the index a bits node is read at
    compiled_equals_interpreted("""
module m
  %0 = parameter(), arg=0 : u64[]
  %1 = rng-bits(%0) : u64[6,4]
  %2 = transpose(%1), arg=(1, 0) : u64[4,6]
  %3 = slice(%2), arg=((1, 4, 2), (0, 6, 1)) : u64[2,6]
  %4 = reverse(%3), arg=(1,) : u64[2,6]
  %5 = rng-bits(%0) : u64[1,6]
  %6 = broadcast(%5), arg=(0, 1) : u64[2,6]
  %7 = add(%4, %6) : u64[2,6]
  return (%7)
""", [KEY], kernels=1)


def test_uint64_arithmetic_of_the_random_api_compiles_exactly():
    compiled_equals_interpreted("""
module m
  %0 = parameter(), arg=0 : u64[]
  %1 = rng-bits(%0) : u64[33]
  %2 = constant(), arg=1099511627776 : u64[]
  %3 = broadcast(%2), arg=() : u64[33]
  %4 = floor-divide(%1, %3) : u64[33]
  %5 = convert(%4) : f32[33]
  %6 = constant(), arg=2048 : u64[]
  %7 = broadcast(%6), arg=() : u64[33]
  %8 = floor-divide(%1, %7) : u64[33]
  %9 = convert(%8) : f64[33]
  %10 = constant(), arg=15183679220004016387 : u64[]
  %11 = add(%0, %10) : u64[]
  %12 = multiply(%11, %10) : u64[]
  %13 = broadcast(%12), arg=() : u64[33]
  %14 = multiply(%1, %13) : u64[33]
  %15 = compare-lt(%14, %1) : pred[33]
  %16 = remainder(%1, %7) : u64[33]
  return (%5, %9, %14, %15, %16)
""", [KEY])


def test_rng_bits_feed_a_reduction_in_one_kernel():
    executable = compiled_equals_interpreted("""
module m
  %0 = parameter(), arg=0 : u64[]
  %1 = rng-bits(%0) : u64[5,300]
  %2 = constant(), arg=1099511627776 : u64[]
  %3 = broadcast(%2), arg=() : u64[5,300]
  %4 = floor-divide(%1, %3) : u64[5,300]
  %5 = convert(%4) : f64[5,300]
  %6 = reduce(%5), arg=('sum', (1,)) : f64[5]
  return (%6)
""", [KEY], kernels=1)
    assert executable.kernels[0].kind == "reduce"


def test_kernel_source_has_no_sizes():
    text = """
module m
  %0 = parameter(), arg=0 : u64[]
  %1 = rng-bits(%0) : u64[3,5]
  return (%1)
"""
    small = runtime.compile(parse_graph(text))
    big = runtime.compile(parse_graph(text.replace("[3,5]", "[30,50]")))
    assert small.kernels[0].source == big.kernels[0].source


def test_random_shapes_compiled_match_interpreter():
    rng = np.random.default_rng(7)
    for _ in range(4):
        rank = int(rng.integers(1, 4))
        shape = tuple(int(d) for d in rng.integers(1, 6, rank))
        key = B.parameter(0, (), np.uint64)
        bits = B.rng_bits(key, shape)
        perm = tuple(int(p) for p in rng.permutation(rank))
        out = B.binary(Op.XOR, B.transpose(bits, perm),
                       B.rng_bits(key, tuple(shape[p] for p in perm)))
        graph = Graph([key], [out])
        key_value = np.array(rng.integers(0, 2 ** 63), np.uint64)
        got = runtime.compile(graph).run([key_value])[0]
        np.testing.assert_array_equal(got, interpret(graph, [key_value])[0])
