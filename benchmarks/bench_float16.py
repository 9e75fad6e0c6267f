"""float16 programs compiled (passes/half.py: float32 arithmetic, rounded to float16 after
each op as NumPy's float16 loops do), beside NumPy.

    python benchmarks/bench_float16.py [--threads N] [--repeats R]

NumPy converts each operand to float32 and the result back for every float16 ufunc, one
pass over memory per op; the compiled program converts the arguments once (NumPy's
astype), runs one fused loop with a bit-level rounding per op, and converts the results
once.  Printed: medians of interleaved runs, the NumPy/jit ratio (> 1: jit faster) and
the load average.  Single-thread mode by default (../shared/PLATFORM.md).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import workloads_main  # noqa: E402


def workloads(np):
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, 1_000_000).astype(np.float16)
    y = rng.uniform(0.5, 2, 1_000_000).astype(np.float16)
    return {
        "x * y + 1 (1e6 f16)": (lambda a, b: a * b + 1, (x, y)),
        "tanh(x) * 2 + 1": (lambda a, b: np.tanh(a) * 2 + 1, (x, y)),
        "sum(x * x)": (lambda a, b: np.sum(a * a), (x, y)),
        "relu(x * y - 0.5).mean()": (lambda a, b: np.maximum(a * b - 0.5, 0).mean(), (x, y)),
    }


def main() -> None:
    workloads_main("float16", workloads, repeats=11)


if __name__ == "__main__":
    main()
