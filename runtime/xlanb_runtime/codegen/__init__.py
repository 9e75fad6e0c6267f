"""Code generation: fused kernels -> Python source -> Numba."""
