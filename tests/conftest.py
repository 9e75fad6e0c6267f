"""Test-wide settings: hypothesis profiles and Numba threading.

Hypothesis runs derandomized by default, so a fresh clone runs the same examples as CI;
`python -m pytest --hypothesis-profile=dev` explores new ones.
"""
import os

os.environ.setdefault("NUMBA_THREADING_LAYER", "omp")

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci")
