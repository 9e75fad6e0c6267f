"""float16 in compiled code: `round_half_f32/_f64` (codegen/half.py) is NumPy's float16 rounding bit
for bit, and the `half-as-float32` pass leaves no float16 value inside a kernel (float16
arrays only at the boundary, converted by NumPy) while the program's types stay NumPy's."""
from __future__ import annotations

import numpy as np
import pytest

import xlanb_runtime as runtime
from xlanb_runtime.codegen.half import round_half_f32, round_half_f64
from xlanb_runtime.ir import interpret, parse_graph
from xlanb_runtime.passes.half import half_as_float32
from tolerance import assert_close

EDGES = [0.0, -0.0, 65504.0, 65519.99, 65520.0, 65536.0, 1e9, 2.0 ** -24, 2.0 ** -25,
         3 * 2.0 ** -26, 2.0 ** -14, 2.0 ** -14 - 2.0 ** -25, 1 + 2.0 ** -11,
         1 + 3 * 2.0 ** -11, np.inf, -np.inf, np.nan, -1.5e-5, 1 / 3]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_half_is_numpys_float16_rounding(dtype):
    rng = np.random.default_rng(0)
    with np.errstate(invalid="ignore"):                     # random bits hold NaNs
        values = _values(rng, dtype)
    round_half = round_half_f32 if dtype == np.float32 else round_half_f64
    got = np.array([round_half(v) for v in values], np.float32)
    with np.errstate(over="ignore"):
        expected = values.astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(got, expected)
    assert np.array_equal(np.signbit(got), np.signbit(expected))


def _values(rng, dtype):
    return np.concatenate([
        rng.standard_normal(20000) * 10.0 ** rng.integers(-9, 6, 20000),
        (rng.integers(-2048, 2048, 4000) + 0.5) * 2.0 ** rng.integers(-24, 6, 4000),  # ties
        np.frombuffer(rng.integers(0, 2 ** 32, 20000, dtype=np.uint32).tobytes(),
                      np.float32).astype(np.float64),                   # every exponent
        np.array(EDGES), -np.array(EDGES)]).astype(dtype)


PROGRAM = """
module m
  %0 = parameter(), arg=0 : f16[6,5]
  %1 = parameter(), arg=1 : f32[6,5]
  %2 = exponential(%0) : f16[6,5]
  %3 = convert(%1) : f16[6,5]
  %4 = multiply(%2, %3) : f16[6,5]
  %5 = reduce(%4), arg=('sum', (1,)) : f16[6]
  %6 = convert(%5) : f64[6]
  return (%4, %6)
"""


def test_no_float16_inside_kernels_and_types_kept():
    graph = parse_graph(PROGRAM)
    lowered = half_as_float32(graph)
    assert [o.dtype for o in lowered.outputs] == [o.dtype for o in graph.outputs]
    halves = [n for n in lowered.nodes if n.dtype == np.float16]
    assert all(n.op.value in ("parameter", "library-call") for n in halves), halves
    assert sum(n.op.value == "round-to-half" for n in lowered.nodes) == 4   # exp, convert,
    executable = runtime.compile(graph)                                     # mul, sum
    rng = np.random.default_rng(1)
    args = [rng.uniform(-2, 2, (6, 5)).astype(np.float16),
            rng.uniform(-2, 2, (6, 5)).astype(np.float32)]
    got = executable.run(args)
    expected = interpret(graph, args)
    assert [g.dtype for g in got] == [np.float16, np.float64]
    assert_close(got[0], expected[0], dtype=np.float16)
    assert_close(got[1], expected[1], n=5, dtype=np.float16)


def test_graph_without_float16_is_unchanged():
    graph = parse_graph(PROGRAM.replace("f16", "f32"))
    assert half_as_float32(graph) is graph


def test_float16_library_calls_take_the_arguments_themselves():
    """NumPy's float16 code (a sort, a float16 cumsum) reads the parameter or the library
    result itself: no float16 -> float32 -> float16 round trip between them."""
    graph = parse_graph("""
module m
  %0 = parameter(), arg=0 : f16[9]
  %1 = library-call(%0), arg=('np.sort', ()) : f16[9]
  %2 = library-call(%1), arg=('np.cumsum', ()) : f16[9]
  return (%2)
""")
    lowered = half_as_float32(graph)
    assert [n.op.value for n in lowered.nodes] == ["parameter", "library-call", "library-call"]
    args = [np.random.default_rng(2).uniform(-3, 3, 9).astype(np.float16)]
    np.testing.assert_array_equal(runtime.compile(graph).run(args)[0],
                                  np.cumsum(np.sort(args[0])))
