"""What keeps a cold compile short, and that the kernels written for it give NumPy's results.

- No Numba implementation that compiles on first use in a process (np.empty, np.full,
  builtin min/max: codegen/alloc.py, cpu.clamp): clamped gathers, scatters, dynamic slices
  and pads with out-of-range places of every integer dtype, reductions from their initial
  values, scans through their scratch buffers.
- Blocked float32 sums write their summed expression once (no remainder loop repeating
  it): rows shorter than, equal to and longer than a block, and not a multiple of it."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xlanb_runtime
from xlanb_runtime.ir import Graph, builder as B, interpret

from tolerance import assert_close

FIRST_USE_CALLS = re.compile(r"(?<![\w.])(min|max)\(|np\.(empty|full|zeros|ones)\(")
INDEX_DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64]


def compile_checked(graph: Graph, args: list):
    """Run `graph` compiled and interpreted; the results agree and no kernel's body calls a
    first-use Numba implementation.  Returns the compiled results and the kernel sources."""
    compiled = xlanb_runtime.compile(graph)
    sources = [k.source for k in compiled.kernels]
    for source in sources:
        body = source.split("\ndef ", 1)[1]
        assert not FIRST_USE_CALLS.search(body), body
    got = compiled.run([np.copy(a) for a in args])
    for g, want in zip(got, interpret(graph, args)):
        assert_close(g, want, n=max(np.size(want), 1))
    return got, sources


def _places(dtype, high: int) -> np.ndarray:
    """Positions below, inside and above [0, high], as far as `dtype` reaches."""
    info = np.iinfo(dtype)
    values = [0, 1, high, high + 3, info.max, -1, -5, info.min]
    return np.array([v for v in values if info.min <= v <= info.max], dtype)


@pytest.mark.parametrize("dtype", INDEX_DTYPES, ids=lambda d: np.dtype(d).name)
def test_gather_and_scatter_clamp_indices_of_every_integer_dtype(dtype):
    data = np.arange(15.0).reshape(5, 3)
    idx = _places(dtype, 4)
    x, i = B.parameter(0, (5, 3), np.float64), B.parameter(1, idx.shape, dtype)
    u = B.parameter(2, (idx.size, 3), np.float64)
    graph = Graph([x, i, u], [B.gather(x, i, 0), B.scatter_add(x, i, u, 0)], "g")
    updates = np.arange(3.0 * idx.size).reshape(-1, 3)
    (taken, scattered), sources = compile_checked(graph, [data, idx, updates])
    clipped = np.clip(idx.astype(object), 0, 4).astype(np.int64)   # no wrap-around
    np.testing.assert_array_equal(taken, data[clipped])
    expected = data.copy()
    np.add.at(expected, clipped, updates)
    np.testing.assert_array_equal(scattered, expected)
    assert any("if" in s.split("\ndef ", 1)[1] for s in sources)   # the clamp is there


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.uint64],
                         ids=lambda d: np.dtype(d).name)
def test_dynamic_slice_and_pad_clamp_their_places(dtype):
    data = np.arange(20.0).reshape(5, 4)
    x = B.parameter(0, (5, 4), np.float64)
    s = B.parameter(1, (), dtype)
    one = B.constant(np.array(1, dtype))
    zero = B.constant(np.float64(0))
    sliced = B.dynamic_slice(x, [s, one], (2, 3))
    padded = B.dynamic_pad(x, zero, [s, one], (8, 6))
    graph = Graph([x, s], [sliced, padded], "d")
    for start in _places(dtype, 3):
        (got_slice, got_pad), _ = compile_checked(graph, [data, np.array(start, dtype)])
        row = int(min(max(int(start), 0), 3))
        np.testing.assert_array_equal(got_slice, data[row:row + 2, 1:4])
        expected = np.zeros((8, 6))
        expected[row:row + 5, 1:5] = data
        np.testing.assert_array_equal(got_pad, expected)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.uint64, np.float32],
                         ids=lambda d: np.dtype(d).name)
def test_reductions_start_from_their_initial_values(dtype):
    """Middle and leading axes reduced with later axes kept: accumulator arrays filled with
    each reduction's initial value (max's lowest, min's highest, prod's 1)."""
    rng = np.random.default_rng(3)
    if np.dtype(dtype).kind == "f":
        data = rng.standard_normal((3, 4, 5)).astype(dtype)
    else:
        info = np.iinfo(dtype)
        data = rng.integers(max(info.min, -3), min(info.max, 3), (3, 4, 5), endpoint=True,
                            dtype=dtype)
    x = B.parameter(0, data.shape, dtype)
    outputs = [B.reduce(x, kind, axes) for kind in ("max", "min", "sum", "prod")
               for axes in ((0,), (0, 2), (1,))]
    graph = Graph([x], outputs, "r")
    got, _ = compile_checked(graph, [data])
    expected = [getattr(np, kind)(data, axis=axes).astype(dtype)
                for kind in ("max", "min", "sum", "prod") for axes in ((0,), (0, 2), (1,))]
    for g, want in zip(got, expected):
        assert_close(g, want, n=data.size, dtype=dtype)


def test_bool_reductions_start_from_their_initial_values():
    data = np.random.default_rng(4).random((3, 4, 5)) < 0.5
    x = B.parameter(0, data.shape, np.bool_)
    graph = Graph([x], [B.reduce(x, "any", (0, 2)), B.reduce(x, "all", (0, 2))], "b")
    (anys, alls), _ = compile_checked(graph, [data])
    np.testing.assert_array_equal(anys, data.any(axis=(0, 2)))
    np.testing.assert_array_equal(alls, data.all(axis=(0, 2)))


@pytest.mark.parametrize("n", [5, 256, 600])
def test_scans_through_their_scratch_buffers(n):
    """Along a leading axis (a running row per suffix index) and along the last axis with
    an expensive producer (chunks of SCAN_CHUNK through a buffer, the last one short)."""
    data = np.random.default_rng(5).standard_normal((3, n))
    x = B.parameter(0, data.shape, np.float64)
    from xlanb_runtime.ir import Op
    rows = B.scan(B.unary(Op.EXP, x), "sum", 1)
    columns = B.scan(x, "prod", 0)
    graph = Graph([x], [rows, columns], "s")
    (got_rows, got_columns), sources = compile_checked(graph, [data])
    assert_close(got_rows, np.cumsum(np.exp(data), axis=1), n=n)
    assert_close(got_columns, np.cumprod(data, axis=0), n=3)
    assert any("empty(" in s for s in sources)


@pytest.mark.parametrize("n", [40, 256, 300, 1000])
def test_blocked_row_sums_write_their_terms_once(n):
    from xlanb_runtime.ir import Op
    data = np.random.default_rng(6).standard_normal((7, n)).astype(np.float32)
    x = B.parameter(0, data.shape, np.float32)
    term = B.binary(Op.MUL, x, x)
    graph = Graph([x], [B.reduce(term, "sum", (1,)), B.reduce(x, "sum", (0, 1))], "b")
    (rows, total), sources = compile_checked(graph, [data])
    assert_close(rows, (data.astype(np.float64) ** 2).sum(axis=1), n=n, dtype=np.float32)
    assert_close(total, data.astype(np.float64).sum(), n=data.size, dtype=np.float32,
                 scale=np.abs(data).sum())
    blocked = [s for s in sources if "span_" in s]
    assert blocked
    for source in blocked:
        body = source.split("\ndef ", 1)[1]
        loads = re.findall(r"= in0\[", body)
        assert len(loads) == body.count("for kk_ in range(span_)"), body


def test_scratch_arrays_are_c_ordered_aligned_and_checked():
    """alloc.empty: the array np.empty gives (shape, dtype, C strides, alignment) and its
    errors for a negative or too large shape."""
    numba = pytest.importorskip("numba")
    from xlanb_runtime.codegen.alloc import empty

    @numba.njit
    def make(n, m):
        return empty((n, 3, m), np.float32), empty(n, np.int64), empty((), np.bool_)

    a, b, c = make(4, 5)
    like = np.empty((4, 3, 5), np.float32)
    assert (a.shape, a.dtype, a.strides) == (like.shape, like.dtype, like.strides)
    assert (b.shape, b.dtype, c.shape, c.dtype) == ((4,), np.int64, (), np.bool_)
    assert a.flags.c_contiguous and a.flags.writeable and a.ctypes.data % 16 == 0
    with pytest.raises(ValueError, match="negative dimensions"):
        make(-1, 2)
    with pytest.raises(ValueError, match="array is too big"):
        make(2 ** 40, 2 ** 40)


def test_importing_alloc_leaves_numbas_array_module_unimported():
    """Kernels import alloc when they load; a warm start loads them without numba's array
    module (codegen/cached_load.py), so alloc imports it only while compiling."""
    code = textwrap.dedent("""\
        import sys
        import xlanb_runtime.codegen.alloc
        import xlanb_runtime.codegen.cpu
        print("numba.np.arrayobj" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
