"""Numba's nopython pipeline without the passes generated serial kernels never need.

A cold compile spends nearly all its time in Numba and LLVM, in proportion to the
generated statements (benchmarks/bench_compile.py).  About a tenth of it is Numba's
untyped passes, and half of those look for constructs that a generated kernel never has:
`with` blocks, closures and comprehensions, literal_unroll and `literally`, raises,
branches on constants, whole-array expressions.  Serial kernels compile with the default
pipeline minus those passes (W5's 19 kernels: 5% less CPU time); the passes left (bytecode,
SSA, inlining of `inline="always"` vecmath, typing, lowering) are the ones a kernel needs.
Kernels with `numba.prange` keep Numba's own pipeline: its parallel passes build on them.

A kernel opts in with `@numba.njit(..., pipeline_class=KernelCompiler)`.
"""
from __future__ import annotations

from numba.core import typed_passes, untyped_passes
from numba.core.compiler import CompilerBase, DefaultPassBuilder

# Each: what it rewrites, which no generated kernel contains.
_UNNEEDED_NAMES = (
    (untyped_passes, "WithLifting"),                 # `with` blocks
    (untyped_passes, "InlineClosureLikes"),          # closures, comprehensions
    (untyped_passes, "MakeFunctionToJitFunction"),   # nested functions
    (untyped_passes, "RewriteSemanticConstants"),    # len(tuple), .ndim as constants
    (untyped_passes, "DeadBranchPrune"),             # `if` on a constant
    (untyped_passes, "GenericRewrites"),             # constant raises, getitem folding
    (untyped_passes, "RewriteDynamicRaises"),        # raise with run-time arguments
    (untyped_passes, "FindLiterallyCalls"),          # numba.literally
    (untyped_passes, "LiteralUnroll"),               # numba.literal_unroll
    (untyped_passes, "LiteralPropagationSubPipelinePass"),
    (typed_passes, "NopythonRewrites"),              # whole-array expressions
)
UNNEEDED = frozenset(getattr(module, name) for module, name in _UNNEEDED_NAMES
                     if hasattr(module, name))


class KernelCompiler(CompilerBase):
    """The nopython pipeline minus UNNEEDED (passes a Numba version lacks are skipped)."""

    def define_pipelines(self):
        pipeline = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pipeline.passes = [(p, why) for p, why in pipeline.passes if p not in UNNEEDED]
        return [pipeline]
