"""`xlanb.config.update(...)`: set compiler flags from code (like `jax.config.update`).

    xlanb.config.update(xla_dump_to="/tmp/dump", xla_dump_kernels=True)

The names are those of XLANB_FLAGS without the leading dashes; values set here apply on top
of the environment variable to every later compile.
"""
from xlanb_runtime.flags import FlagError, Flags, from_environment, update

__all__ = ["FlagError", "Flags", "current", "update"]


def current() -> Flags:
    """The flags the next compile will use."""
    return from_environment()
