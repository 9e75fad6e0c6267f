"""xlanb_runtime: turns an IR graph into fast code and runs it (the jaxlib of xlanb)."""

__version__ = "0.1.0"

from .memory import tune_allocator  # noqa: E402
from .thread_pools import passive_openmp_waits  # noqa: E402

tune_allocator()
passive_openmp_waits()

from .compiler import CompileOptions, compile  # noqa: E402
from .executable import CompiledKernel, Executable  # noqa: E402
from .report import CompileReport  # noqa: E402

__all__ = ["CompileOptions", "CompileReport", "CompiledKernel", "Executable", "compile"]
