"""CUDA-target cases, run by `test_cuda_target.py` in subprocesses (the simulator flag must be
set before Numba is imported, and the rest of the suite runs the CPU target in-process).

    NUMBA_ENABLE_CUDASIM=1 python tests/cuda/cuda_cases.py simulator   # JSON per case
    python tests/cuda/cuda_cases.py ptx DIR     # PTX of every kernel (NVVM, no GPU needed)
    python tests/cuda/cuda_cases.py no-gpu      # the error without a GPU or the simulator

Every simulator case compiles with `target="cuda"` and compares with NumPy or the reference
interpreter; sizes are tiny (the simulator runs each thread as a Python thread).
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fusion_cases():
    """The CPU fusion tests' IR programs (name, text, generated kernel count), counted
    without row fusion (the CUDA target does not chain stages)."""
    module = _load(TESTS / "runtime" / "test_fusion.py", "_xlanb_fusion_cases")
    return [(name, text, module.WITHOUT_ROW_FUSION.get(name, kernels))
            for name, text, kernels in module.CASES]


def differential():
    return _load(TESTS / "frontend" / "test_differential.py", "_xlanb_differential")


def sample_program(rng, diff):
    """One random program in `test_differential.programs`' format, drawn with NumPy's
    generator (deterministic, no hypothesis engine, no shrinking under the simulator)."""
    dtype = diff.DTYPES[rng.integers(len(diff.DTYPES))]
    is_float = np.dtype(dtype).kind == "f"
    rank = int(rng.integers(0, 4))
    shape = tuple(int(d) for d in rng.integers(1, 6, rank))
    input_shapes = [shape]
    for _ in range(int(rng.integers(0, 3))):
        drop = int(rng.integers(0, len(shape) + 1))
        input_shapes.append(tuple(1 if rng.random() < 0.5 else d for d in shape[drop:]))
    steps = []
    for _ in range(int(rng.integers(1, 7))):
        kind = ["unary", "binary", "binary", "reduce", "shape", "dot"][rng.integers(6)]
        if kind == "unary":
            names = [n for n in diff.UNARY if is_float or n not in diff.FLOAT_ONLY]
            steps.append(("unary", names[rng.integers(len(names))]))
        elif kind == "binary":
            names = [n for n in diff.BINARY if is_float or n != "div"]
            steps.append(("binary", names[rng.integers(len(names))], int(rng.integers(11))))
        elif kind == "reduce":
            names = ["sum", "max", "min"] + (["mean"] if is_float else [])
            axis = None if rng.random() < 0.3 else int(rng.integers(-3, 3))
            steps.append(("reduce", names[rng.integers(len(names))], axis,
                          bool(rng.random() < 0.5)))
        elif kind == "shape":
            steps.append(("shape", ["transpose", "flatten", "slice", "tail"][rng.integers(4)]))
        else:
            steps.append(("dot", int(rng.integers(1, 5))))
    return dtype, input_shapes, steps, int(rng.integers(2**31 - 1))


DIFFERENTIAL_PROGRAMS = 30

FLOAT_UNARY = ["negate", "abs", "sign", "exponential", "exponential-base-two",
               "exponential-minus-one", "log",
               "log-plus-one", "sqrt", "rsqrt", "tanh", "sine", "cosine", "tangent",
               "arcsine", "arccosine", "hyperbolic-sine", "hyperbolic-cosine", "arctangent",
               "hyperbolic-arcsine", "hyperbolic-arccosine", "hyperbolic-arctangent", "erf",
               "floor", "ceil", "round-nearest-even"]
FLOAT_BINARY = ["add", "subtract", "multiply", "divide", "floor-divide", "remainder", "power",
                "maximum", "minimum", "atan2"]
INT_UNARY = ["negate", "abs", "sign", "not", "floor"]
INT_BINARY = ["add", "subtract", "multiply", "floor-divide", "remainder", "maximum",
              "minimum", "and", "or", "xor"]
COMPARE = ["compare-eq", "compare-ne", "compare-lt", "compare-le", "compare-gt",
           "compare-ge"]


def op_table() -> list[tuple[str, str]]:
    """(name, IR text): every elementwise op on each dtype it takes, one multi-output
    kernel per dtype (NaN-producing inputs included: log and sqrt of negatives)."""
    programs = []
    for t, unary, binary in [("f32", FLOAT_UNARY, FLOAT_BINARY),
                             ("f64", FLOAT_UNARY, FLOAT_BINARY),
                             ("s32", INT_UNARY, INT_BINARY), ("s64", INT_UNARY, INT_BINARY),
                             ("u8", ["not"], ["add", "multiply", "maximum", "and"]),
                             ("pred", ["not"], ["and", "or", "xor"])]:
        lines = [f"  %0 = parameter(), arg=0 : {t}[7]", f"  %1 = parameter(), arg=1 : {t}[7]"]
        outs = []
        for op in unary:
            lines.append(f"  %{len(lines)} = {op}(%0) : {t}[7]")
            outs.append(len(lines) - 1)
        for op in binary:
            lines.append(f"  %{len(lines)} = {op}(%0, %1) : {t}[7]")
            outs.append(len(lines) - 1)
        for op in COMPARE:
            lines.append(f"  %{len(lines)} = {op}(%0, %1) : pred[7]")
            outs.append(len(lines) - 1)
        lines.append(f"  %{len(lines)} = select(%{outs[-1]}, %0, %1) : {t}[7]")
        outs.append(len(lines) - 1)
        if t != "pred":
            lines.append(f"  %{len(lines)} = is-finite(%0) : pred[7]")
            outs.append(len(lines) - 1)
            other = "s32" if t.startswith("f") else "f32"
            lines.append(f"  %{len(lines)} = convert(%0) : {other}[7]")
            outs.append(len(lines) - 1)
        text = "\n".join(["module ops"] + lines + [
            f"  return ({', '.join(f'%{i}' for i in outs)})", ""])
        programs.append((f"op_table_{t}", text))
    return programs


# -- simulator cases ---------------------------------------------------------------------
def seed_examples():
    rng = np.random.default_rng(0)
    x, y, z = (rng.standard_normal(200).astype(np.float32) for _ in range(3))
    a = rng.standard_normal((6, 5)).astype(np.float32)
    w = rng.standard_normal((5, 7)).astype(np.float32)
    b = rng.standard_normal(7).astype(np.float32)
    return {
        "seed_sum_fma": (lambda x, y, z: np.sum(x + y * z), (x, y, z)),
        "seed_dense_relu": (lambda x, w, b: np.maximum(x @ w + b, 0), (a, w, b)),
        "seed_relu_square": (lambda x: np.maximum(x, 0) ** 2 + 3, (x,)),
        "seed_mean_relu_square": (lambda x: np.mean(np.maximum(x, 0) ** 2), (x,)),
    }


def softmax(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def check_jit(fn, args, rtol=2e-5, atol=1e-5):
    import xlanb
    compiled = xlanb.jit(fn, target="cuda")
    with np.errstate(all="ignore"):
        expected = fn(*args)
    got = compiled(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    return compiled.last_compiled


def check_graph(text, kernels=None):
    import xlanb_runtime as runtime
    from xlanb_runtime.ir import interpret, parse_graph
    graph = parse_graph(text)
    fusion = _load(TESTS / "runtime" / "test_fusion.py", "_xlanb_fusion_cases")
    args = fusion.random_args(graph, np.random.default_rng(1))
    executable = runtime.compile(graph, "cuda")
    if kernels is not None:
        count = sum(k.kind != "library" for k in executable.kernels)
        assert count == kernels, (count, kernels, executable.as_text())
    for _ in range(2):                        # the second call reuses the device buffers
        got = executable.run(args)
        for g, e in zip(got, interpret(graph, args)):
            assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, g.shape, e.dtype)
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    return executable


def simulator_cases() -> dict:
    """name -> zero-argument check (raises on failure, may return details)."""
    import xlanb
    cases = {}
    for name, (fn, args) in seed_examples().items():
        cases[name] = lambda fn=fn, args=args: check_jit(fn, args) and None
    for name, text, kernels in fusion_cases():
        cases[f"ir_{name}"] = lambda text=text, kernels=kernels: check_graph(text, kernels) \
            and None
    for name, text in op_table():
        cases[name] = lambda text=text: check_graph(text, 1) and None
    diff = differential()
    rng = np.random.default_rng(7)
    for i in range(DIFFERENTIAL_PROGRAMS):
        program = sample_program(rng, diff)

        def run(program=program):
            fn, args = diff.build(program)
            compiled = xlanb.jit(fn, target="cuda")
            with np.errstate(all="ignore"):
                expected = fn(*args)
                got = compiled(*args)
            for g, e in zip(got, expected):
                diff.assert_matches(g, e, fn)
            return [k.kind for k in compiled.last_compiled.kernels]
        cases[f"random_program_{i:02d}"] = run
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((8, 10)).astype(np.float32)
    cases["softmax_rows"] = lambda: check_jit(softmax, (rows,)) and None
    cases["split_full_sum"] = lambda: _split_reduction(
        lambda v: np.sum(np.exp(v)), rng.standard_normal(_split_length()).astype(np.float32))
    cases["split_row_mean_max"] = lambda: _split_reduction(
        lambda v: (np.mean(v, axis=1), np.max(v, axis=1)),
        rng.standard_normal((3, _split_length())))
    cases["scatter_add_gather_grad"] = scatter_add_gather_grad
    cases["setitem_scatter"] = setitem_scatter
    cases["rng_bits"] = rng_bits
    cases["mlp_train_step"] = mlp_train_step
    cases["copies_equal_inputs_plus_outputs"] = copies_equal_inputs_plus_outputs
    cases["packed_launches"] = packed_launches
    cases["library_kernels_on_host"] = library_kernels_on_host
    cases["scans"] = scans
    cases["one_row_scans"] = one_row_scans
    cases["dump_kernels_ptx_or_why_not"] = dump_kernels_ptx_or_why_not
    return cases


def _split_length() -> int:
    """A reduced length the launch policy splits over blocks: 8 block-strides of four
    elements per thread (1,000 under the simulator, 8,192 on a GPU)."""
    from xlanb_runtime.codegen.cuda import is_simulator, launch_policy
    return 1000 if is_simulator() else 8 * 4 * launch_policy().reduce_threads


def _split_reduction(fn, x):
    compiled = check_jit(fn, (x,), rtol=1e-5, atol=1e-5)
    finishes = [k for k in compiled.kernels if "_finish(" in k.source]
    assert finishes, "expected a two-pass (split) reduction"
    return f"{len(finishes)} split reductions"


def gather_loss(t, idx):
    return np.sum(np.take(t, idx, axis=0) ** 2)


def setitem_rows(x, labels):
    g = x.copy()
    g[np.arange(5), labels] -= 1
    return g


def mlp_loss(p, x, y):
    logits = np.tanh(x @ p["w"] + p["b"])
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.take_along_axis(logp, y[:, None], axis=1))


def mlp_step(p, x, y):
    import xlanb
    value, grads = xlanb.value_and_grad(mlp_loss)(p, x, y)
    return {k: p[k] - 0.1 * grads[k] for k in p}, value


def concat_argmax(a):
    joined = np.concatenate([np.exp(a), a * 2], axis=1)
    return np.argmax(joined, axis=1), np.sum(joined * 3)


def programs() -> dict:
    """name -> (fn, args) of the jit programs beyond the seed examples (also lowered to
    PTX)."""
    import xlanb
    rng = np.random.default_rng(5)
    return {
        "scatter_add_gather_grad": (xlanb.grad(gather_loss), (
            rng.standard_normal((6, 3)), np.array([0, 2, 2, 5, 0, 2]))),
        "setitem_scatter": (setitem_rows, (rng.standard_normal((5, 4)).astype(np.float32),
                                           np.array([1, 0, 3, 3, 2]))),
        "mlp_train_step": (mlp_step, ({"w": rng.standard_normal((5, 4)) * 0.3,
                                       "b": np.zeros(4)}, rng.standard_normal((6, 5)),
                                      rng.integers(0, 4, 6))),
        "scans": (scan_program, (np.ones((5, 7)), np.ones((5, 7), np.int32))),
        "library_kernels_on_host": (concat_argmax, (
            rng.standard_normal((3, 4)).astype(np.float32),)),
    }


def scatter_add_gather_grad():
    """The gradient of a gather is a scatter-add; repeated rows exercise the atomics."""
    import xlanb
    fn, (table, rows) = programs()["scatter_add_gather_grad"]
    compiled = xlanb.jit(fn, target="cuda")
    got = compiled(table, rows)
    expected = np.zeros_like(table)
    np.add.at(expected, rows, 2 * table[rows])
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    kinds = [k.kind for k in compiled.last_compiled.kernels]
    assert "scatter" in kinds, kinds
    return kinds


def setitem_scatter():
    check_jit(*programs()["setitem_scatter"])


def rng_bits():
    check_graph("""
module m
  %0 = parameter(), arg=0 : u64[]
  %1 = rng-bits(%0) : u64[4,3]
  return (%1)
""", 1)


def mlp_train_step():
    import xlanb
    fn, args = programs()["mlp_train_step"]
    got_p, got_loss = xlanb.jit(fn, target="cuda")(*args)
    want_p, want_loss = fn(*args)        # outside jit: the reference interpreter
    np.testing.assert_allclose(got_loss, want_loss, rtol=1e-10)
    for k in want_p:
        np.testing.assert_allclose(got_p[k], want_p[k], rtol=1e-10, atol=1e-12)


def packed_launches():
    """Calls after the first launch with parameters packed on the first (cuda_launch.py):
    new inputs each call, every result NumPy's; under the simulator Numba's launch runs."""
    import xlanb
    from xlanb_runtime.codegen.cuda import is_simulator
    from xlanb_runtime.cuda_launch import PackedLaunch

    def layer_norm(x, gamma):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * gamma
    compiled = xlanb.jit(layer_norm, target="cuda")
    rng = np.random.default_rng(11)
    for _ in range(3):
        x = rng.standard_normal((33, 70)).astype(np.float32)
        gamma = rng.standard_normal(70).astype(np.float32)
        np.testing.assert_allclose(compiled(x, gamma), layer_norm(x, gamma), rtol=1e-4,
                                   atol=1e-5)
    executable = compiled.last_compiled.executable
    launchers = [v for v in executable.driver.__globals__.values()
                 if isinstance(v, PackedLaunch)]
    assert launchers, executable.driver_source
    packed = sum(launcher.packed is not None for launcher in launchers)
    assert packed == (0 if is_simulator() else len(launchers)), (packed, len(launchers))
    return f"{packed} of {len(launchers)} launches packed"


def copies_equal_inputs_plus_outputs():
    rng = np.random.default_rng(9)
    a, b, c = (rng.standard_normal((4, 6)).astype(np.float32) for _ in range(3))

    def f(a, b, c):
        t = np.tanh(a * b + c)
        return t, np.sum(t, axis=0), np.max(t @ c.T)
    compiled = check_jit(f, (a, b, c))
    executable = compiled.executable
    memory = compiled.report.memory
    assert memory["host_to_device_copies"] == 3, memory
    assert memory["device_to_host_copies"] == 3, memory
    assert memory["host_to_device_bytes"] == a.nbytes * 3, memory
    assert memory["device_to_host_bytes"] == a.nbytes + 6 * 4 + 4, memory
    assert memory["library_copies"] == 0, memory
    before = dict(executable.transfers)
    executable.run([a, b, c])
    assert executable.transfers["host_to_device_copies"] - \
        before["host_to_device_copies"] == 3
    assert executable.transfers["device_to_host_copies"] - \
        before["device_to_host_copies"] == 3
    return memory


def scan_program(x, n):
    """cumsum of a product along rows, a cumprod down columns with a consumer, a running
    max of ints and a flattened cumsum: each one scan kernel with what it fuses."""
    return (np.cumsum(x * x, axis=1) / 2, np.cumprod(x, axis=0) + 1.0,
            np.maximum.accumulate(n, axis=1), np.cumsum(x[::-1]))


def scans():
    rng = np.random.default_rng(4)
    x = rng.uniform(0.5, 1.5, (5, 7))
    n = rng.integers(-9, 9, (5, 7)).astype(np.int32)
    compiled = check_jit(scan_program, (x, n), rtol=1e-12, atol=0)
    kinds = [k.kind for k in compiled.kernels]
    assert kinds.count("scan") == 4 and "library" not in kinds, kinds
    return kinds


def one_row_scans():
    """A 1-D scan is one block of threads (chunk totals, then a rescan), not one thread:
    longer and shorter than the block, with producers and consumers fused."""
    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 1.5, 1500)
    n = rng.integers(-9, 9, 1500).astype(np.int32)

    def program(x, n):
        return (np.cumsum(x * x) / 2, np.cumprod(x[:60] ** 0.25), np.maximum.accumulate(n),
                np.cumsum(n[::-3]), np.minimum.accumulate(x[:7]))
    compiled = check_jit(program, (x, n), rtol=1e-12, atol=0)
    blocked = [k for k in compiled.kernels if k.kind == "scan" and "SCANB" in k.source]
    assert len(blocked) == 5, [k.source for k in compiled.kernels]
    return len(blocked)


def library_kernels_on_host():
    """concatenate / arg-reduce run on the host; their copies are counted apart."""
    compiled = check_jit(*programs()["library_kernels_on_host"])
    memory = compiled.report.memory
    assert memory["host_kernels"], memory
    assert memory["library_copies"] >= 1, memory
    return {k: memory[k] for k in ("host_kernels", "library_copies",
                                   "host_to_device_copies", "device_to_host_copies")}


def dump_kernels_ptx_or_why_not():
    """Under the simulator the dump says why it has no PTX; on a GPU it holds the PTX."""
    import tempfile
    import xlanb
    from xlanb_runtime import flags
    from xlanb_runtime.codegen.cuda import is_simulator
    directory = tempfile.mkdtemp()
    x = np.arange(10, dtype=np.float32)
    with flags.overriding(xla_dump_to=directory, xla_dump_kernels=True):
        xlanb.jit(lambda x: np.sum(x * 2), target="cuda")(x)
    names = sorted(os.listdir(directory))
    assert any(n.endswith(".reduce_fusion_0.py") for n in names), names
    if not is_simulator():
        ptx = [n for n in names if n.endswith(".reduce_fusion_0.ptx")]
        assert ptx, names
        assert ".target sm_" in (Path(directory) / ptx[0]).read_text()
        return names
    notes = [n for n in names if n.endswith(".ptx.txt")]
    assert notes, names
    assert "NUMBA_ENABLE_CUDASIM" in (Path(directory) / notes[0]).read_text()
    return names


def run_simulator(selected=None) -> dict:
    sys.setswitchinterval(5e-5)         # simulated barriers hand the GIL around often
    warnings.simplefilter("ignore")     # NumPy scalar overflow/NaN warnings in threads
    results = {}
    for name, case in simulator_cases().items():
        if selected and name not in selected:
            continue
        start = time.perf_counter()
        try:
            detail = case()
            results[name] = {"ok": True, "detail": _jsonable(detail)}
        except BaseException:        # noqa: B036 - report every failure, keep going
            results[name] = {"ok": False, "error": traceback.format_exc()[-4000:]}
        results[name]["seconds"] = round(time.perf_counter() - start, 3)
    return results


# -- PTX (NVVM, no GPU) ------------------------------------------------------------------
def ptx_programs():
    """(name, graph) of the simulator's programs (traced only), plus a reduction big enough
    to be split over blocks with the GPU policy."""
    import xlanb
    from xlanb_runtime.ir import parse_graph
    graphs = [(name, xlanb.jit(fn).lower(*args).graph)
              for name, (fn, args) in seed_examples().items()]
    graphs += [(f"ir_{name}", parse_graph(text)) for name, text, _ in fusion_cases()]
    graphs += [(name, parse_graph(text)) for name, text in op_table()]
    graphs += [(name, xlanb.jit(fn).lower(*args).graph)
               for name, (fn, args) in programs().items()]
    diff = differential()
    rng = np.random.default_rng(7)
    for i in range(DIFFERENTIAL_PROGRAMS):
        fn, args = diff.build(sample_program(rng, diff))
        graphs.append((f"random_program_{i:02d}", xlanb.jit(fn).lower(*args).graph))
    rows = np.zeros((8, 10), np.float32)
    graphs.append(("softmax_rows", xlanb.jit(softmax).lower(rows).graph))
    big = np.zeros(1 << 16, np.float32)
    graphs.append(("split_sum", xlanb.jit(lambda v: np.sum(np.exp(v))).lower(big).graph))
    return graphs


def run_ptx(directory: str) -> dict:
    from xlanb_runtime.codegen import cuda as cuda_codegen
    from xlanb_runtime.cuda_executable import lower_to_ptx, write_ptx
    from xlanb_runtime.dump import ModuleDumper
    from xlanb_runtime.passes.fusion import plan_fusion
    results = {}
    for name, graph in ptx_programs():
        start = time.perf_counter()
        try:
            listings = lower_to_ptx(graph)
            paths = []
            for function, ptx in listings.items():
                assert ".target sm_90" in ptx, ptx[:400]
                path = Path(directory) / f"{name}.{function}.ptx"
                path.write_text(ptx)
                paths.append(str(path))
            results[name] = {"ok": True, "files": paths}
        except BaseException:        # noqa: B036
            results[name] = {"ok": False, "error": traceback.format_exc()[-4000:]}
        results[name]["seconds"] = round(time.perf_counter() - start, 3)
    # the dump writer on a machine with NVVM: .ptx files, not notes
    graph = dict(ptx_programs())["seed_dense_relu"]
    dumper = ModuleDumper(str(Path(directory) / "dump"), "dense")
    kernel = next(k for k in plan_fusion(graph).kernels if k.kind == "dot")
    write_ptx(dumper, cuda_codegen.generate(kernel, cuda_codegen.LaunchPolicy.for_gpu()))
    results["dump_writer"] = {"ok": True,
                              "files": sorted(str(p) for p in dumper.directory.iterdir())}
    return results


def run_no_gpu() -> dict:
    import xlanb
    from numba import cuda
    from xlanb_runtime.codegen.cuda import CudaUnavailableError
    if cuda.is_available():
        return {"skipped": "a CUDA GPU is available here"}
    try:
        xlanb.jit(lambda x: x + 1, target="cuda")(np.ones(3))
    except CudaUnavailableError as error:
        return {"raised": type(error).__name__, "message": str(error),
                "is_runtime_error": isinstance(error, RuntimeError)}
    return {"raised": None}


def _jsonable(value):
    try:
        json.dumps(value)
        return value
    except TypeError:
        return repr(value)


def main(argv: list[str]) -> None:
    mode = argv[0] if argv else "simulator"
    if mode == "simulator":
        result = run_simulator(set(argv[1:]) or None)
    elif mode == "ptx":
        result = run_ptx(argv[1])
    elif mode == "no-gpu":
        result = run_no_gpu()
    else:
        raise SystemExit(f"unknown mode {mode!r}: simulator | ptx DIR | no-gpu")
    print("XLANB-JSON " + json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
