"""Test-wide settings: hypothesis profiles (derandomized on CI) and Numba threading."""
import os

os.environ.setdefault("NUMBA_THREADING_LAYER", "omp")

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
