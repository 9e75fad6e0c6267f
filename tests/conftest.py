"""Test-wide settings: hypothesis profiles, Numba threading, blocking compiles.

Hypothesis runs derandomized by default, so a fresh clone runs the same examples as CI;
`python -m pytest --hypothesis-profile=dev` explores new ones.
"""
import os

os.environ.setdefault("NUMBA_THREADING_LAYER", "omp")

# Tests compile in the foreground (`--xla_tiered=false`): most inspect or time compiled
# kernels right after a first call.  tests/frontend/test_tiered.py turns tiering on per
# function (`jit(f, tiered=True)`); subprocesses (MPI, notebooks) run with the default.
from xlanb_runtime import flags  # noqa: E402

flags.update(xla_tiered=False)

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci")
