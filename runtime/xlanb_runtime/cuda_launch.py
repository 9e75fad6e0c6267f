"""Kernel launches whose arguments are packed once: the CUDA driver's per-call host cost.

A generated CUDA driver launches each kernel with the same arguments on every call: this
thread's device buffers, literal sizes and bound constants.  Numba's launch path redoes the
work for each of them per call (the overload chosen from the arguments' types, each array
turned into its ten or so kernel parameters), ~35-50 us a launch on an H200 host, more than
the device work of a layer-norm kernel.  `PackedLaunch` goes through Numba's path once per
set of argument objects and keeps the kernel, the launch configuration and the parameters
it produced; a later call with the same objects (compared by identity) hands them straight
to cuda.core's `launch`.  Any other arguments take Numba's path and are packed anew.  The
packed arguments are kept alive with their parameters (a freed buffer's address could be
reused by another): at most one set of a thread's device buffers outlives that thread.

Numba's simulator, and any numba-cuda whose internals differ from what this reads, keep
Numba's own launch (`configured`): the packing is an optimization, never a requirement.
"""
from __future__ import annotations

import warnings

from .codegen import cuda as cuda_codegen


def configured(function, launch: cuda_codegen.Launch):
    """`function[blocks, threads]`, made once when the driver is built rather than on every
    call.  Numba warns there about grids under 128 blocks; a split reduction's finishing
    pass runs one block per output on purpose (it folds a few hundred partials)."""
    with warnings.catch_warnings():
        # the message begins with colour codes, hence the leading .*
        warnings.filterwarnings("ignore", r".*Grid size \d+ will likely")
        return function[launch.blocks, launch.threads]


class PackedLaunch:
    """A configured kernel that packs its launch parameters once per argument objects."""

    def __init__(self, function, launch: cuda_codegen.Launch):
        self.configured = configured(function, launch)
        self.packed: tuple | None = None      # (arguments, (launch, its arguments))
        self.enabled = not cuda_codegen.is_simulator()

    def __call__(self, *args) -> None:
        packed = self.packed                  # one read: another thread may repack
        if packed is not None and len(packed[0]) == len(args) and all(
                a is b for a, b in zip(args, packed[0])):
            launch, parameters = packed[1]
            launch(*parameters)
            return
        self.configured(*args)                # compiles on first use, then launches
        if self.enabled:
            self.pack(args)

    def pack(self, args: tuple) -> None:
        try:
            self.packed = (args, _launch_arguments(self.configured, args))
        except Exception:          # numba-cuda internals moved: Numba's launch stays correct
            self.enabled = False
            self.packed = None


def _launch_arguments(configured, args: tuple) -> tuple | None:
    """cuda.core's `launch` and what Numba's `_Kernel.launch` hands it for `args`."""
    from cuda.core import LaunchConfig, launch
    from numba.cuda._compat import CUDA_CORE_GE_1_0
    dispatcher = configured.dispatcher
    overloads = list(dispatcher.overloads.values())
    if len(overloads) == 1:
        kernel = overloads[0]
    else:
        kernel = dispatcher.overloads[tuple(dispatcher.typeof_pyval(a) for a in args)]
    if kernel.debug or kernel.cooperative:
        raise NotImplementedError("debug and cooperative kernels keep Numba's launch")
    params, writebacks = [], []
    for argument_type, value in zip(kernel.argument_types, args):
        kernel._prepare_args(argument_type, value, configured.stream, writebacks, params)
    if writebacks:                    # a host array copied per call: not a fixed launch
        raise NotImplementedError("host arrays are copied on each launch")
    cooperative = ({"is_cooperative": False} if CUDA_CORE_GE_1_0
                   else {"cooperative_launch": False})
    config = LaunchConfig(grid=configured.griddim, block=configured.blockdim,
                          shmem_size=configured.sharedmem, **cooperative)
    cufunc = kernel._codelibrary.get_cufunc()
    return launch, (configured.stream, config, cufunc.kernel, *params)
