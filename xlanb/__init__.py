"""xlanb: XLA for plain NumPy.

    @xlanb.jit
    def model_fn(x, y, z):
        return np.sum(x + y * z)      # traced, fused into one kernel, compiled with Numba
"""
from .api import (CacheInfo, Compiled, JitFunction, Lowered, RecompilationWarning,
                  disable_jit, jit)
from .autodiff import grad, value_and_grad
from . import (checkpoint, config, datasets, distribute, models, nn, optim, random,
               training)
from .errors import (CompileError, ConcretizationError, DataDependentShapeError,
                     ShapeMismatchError, UnsupportedNumPyFunctionError)
from xlanb_runtime.executable import NonFiniteError
from .notebook import load_ipython_extension, unload_ipython_extension

__version__ = "0.1.0"

__all__ = ["CacheInfo", "Compiled", "CompileError", "ConcretizationError",
           "DataDependentShapeError", "JitFunction", "Lowered", "NonFiniteError",
           "load_ipython_extension", "unload_ipython_extension",
           "RecompilationWarning",
           "ShapeMismatchError", "UnsupportedNumPyFunctionError", "disable_jit", "grad", "jit",
           "checkpoint", "config", "datasets", "distribute", "models", "nn", "optim", "random", "training", "value_and_grad"]
