"""CUDA-target benchmarks W1, W2, W3, W6: xlanb `target="cuda"` vs CuPy vs `jax.jit`, one GPU.

    python benchmarks/bench_cuda.py [--quick] [--repeats N]

Per workload, interleaved medians of: xlanb's device work with the arguments already on the
device (`CudaExecutable.device_seconds`, the figure comparable with CuPy and jax.jit on
device arrays), xlanb's whole call (host -> device copies, kernels, device -> host copies),
CuPy on device arrays (the NumPy code itself, through NEP-18) and jax.jit on device arrays.
W1 is also reported against the measured device copy bandwidth (target: >= 70%).  Without
a GPU (or under NUMBA_ENABLE_CUDASIM) it says so and exits 0.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]),
                str(Path(__file__).resolve().parents[1] / "runtime")]

import numpy as np  # noqa: E402


def gpu_or_reason() -> str | None:
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return "NUMBA_ENABLE_CUDASIM=1: the simulator's timings mean nothing"
    try:
        from numba import cuda
    except ImportError as error:
        return f"numba-cuda is not installed ({error})"
    if not cuda.is_available():
        return "numba.cuda.is_available() is False (no CUDA GPU or driver here)"
    return None


def timed(fn, sync, repeats: int) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def copy_bandwidth(nbytes: int, repeats: int) -> float:
    """Device-to-device copy GB/s (bytes read + bytes written)."""
    from numba import cuda
    a = cuda.device_array(nbytes // 4, np.float32)
    b = cuda.device_array(nbytes // 4, np.float32)
    seconds = timed(lambda: b.copy_to_device(a), cuda.synchronize, repeats)
    return 2 * nbytes / seconds / 1e9


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--repeats", type=int, default=20)
    options = parser.parse_args()
    reason = gpu_or_reason()
    if reason:
        print(f"bench_cuda: no GPU to benchmark on: {reason}. Nothing measured.")
        return 0
    from numba import cuda

    import xlanb
    from workloads import WORKLOADS
    try:
        import cupy
    except ImportError:
        cupy = None
    try:
        import jax
    except ImportError:
        jax = None

    device = cuda.get_current_device()
    print(f"device: {device.name.decode() if isinstance(device.name, bytes) else device.name}"
          f", {device.MULTIPROCESSOR_COUNT} SMs; CuPy: {cupy.__version__ if cupy else 'absent'}"
          f"; JAX: {jax.__version__ if jax else 'absent'}")
    bandwidth = copy_bandwidth(1 << 28, options.repeats)
    print(f"device copy bandwidth: {bandwidth:.0f} GB/s (read + write)")
    print(f"{'workload':8s} {'xlanb dev ms':>12s} {'xlanb call ms':>13s} {'cupy ms':>8s} "
          f"{'jax ms':>8s} {'xlanb GB/s':>10s}")
    for name in ("W1", "W2", "W3", "W6"):
        spec = WORKLOADS[name]
        args = spec.make_args(options.quick)
        compiled = xlanb.jit(spec.fn, target="cuda")
        np.testing.assert_allclose(compiled(*args), spec.fn(*args), rtol=spec.rtol,
                                   atol=spec.atol)
        executable = compiled.last_compiled.executable
        device_s = executable.device_seconds(args, options.repeats)
        call_s = timed(lambda: compiled(*args), cuda.synchronize, options.repeats)
        cupy_s = jax_s = float("nan")
        if cupy is not None:
            device_args = [cupy.asarray(a) for a in args]
            cupy_s = timed(lambda: spec.fn(*device_args),
                           cupy.cuda.Device().synchronize, options.repeats)
        if jax is not None and spec.jax_fn is not None:
            jitted = jax.jit(spec.jax_fn)
            device_args = [jax.device_put(a) for a in args]
            jax_s = timed(lambda: jitted(*device_args).block_until_ready(), lambda: None,
                          options.repeats)
        gbs = spec.bytes_moved(args) / device_s / 1e9
        print(f"{name:8s} {device_s * 1e3:12.3f} {call_s * 1e3:13.3f} {cupy_s * 1e3:8.3f} "
              f"{jax_s * 1e3:8.3f} {gbs:10.0f}")
        if name == "W1":
            print(f"W1 at {gbs / bandwidth * 100:.0f}% of the measured copy bandwidth "
                  "(target >= 70%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
