"""Tracing plain NumPy functions into xlanb IR graphs (the front end's first stage).

    >>> traced = trace(lambda x: np.tanh(x @ x.T).sum(), (np.ones((4, 3), np.float32),))
    >>> traced.graph            # params: the array leaves of the args; outputs: result leaves

`trace` runs the function on `Tracer`s; `TraceContext` holds the parameters and the hooks
(`materialize`, `call_unsupported`) that auto-clustering overrides.
"""
from .tracer import (TraceContext, Traced, Tracer, current_context, flatten_args,
                     is_array_leaf, trace)
from . import methods as _methods  # noqa: F401  (attaches operators and methods to Tracer)
from .source import user_location
# Used by every trace (the random-state snapshot around the call, the datetime tracer's
# type tests): imported with the tracer, not inside a process's first trace.
from .lowering import random_draws as _random_draws  # noqa: F401
from .datetimes import array as _datetime_array  # noqa: F401

__all__ = ["TraceContext", "Traced", "Tracer", "current_context", "flatten_args",
           "is_array_leaf", "trace", "user_location"]
