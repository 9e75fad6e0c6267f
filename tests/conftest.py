"""Test-wide settings: hypothesis profiles, Numba threading, blocking compiles.

Hypothesis runs derandomized by default, so a fresh clone runs the same examples as CI;
`python -m pytest --hypothesis-profile=dev` explores new ones.
"""
import os

os.environ.setdefault("NUMBA_THREADING_LAYER", "omp")

# Tests compile in the foreground (`--xla_tiered=false`): most inspect or time compiled
# kernels right after a first call.  tests/frontend/test_tiered.py turns tiering on per
# function (`jit(f, tiered=True)`); subprocesses (MPI, notebooks) run with the default.
# No compile-time budget either: on a loaded machine a slow compile (complex powers) passed
# the 30 s budget, and the test then checked NumPy's own run instead of the kernels
# (tests/runtime/test_compile_budget.py sets the budget it tests).
from xlanb_runtime import flags  # noqa: E402

flags.update(xla_tiered=False, xla_max_compile_seconds=float("inf"))

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci")


# The suite runs in two processes, a file per process at a time (`-n 2 --dist loadfile`).
# Files start longest first, so the two processes finish together instead of one running
# the last long file alone (xdist's own order, by number of tests, starts the one-test
# hypothesis files last).  The order is what `--durations=0` of a full run measured.
LONGEST_FILES_FIRST = (                 # seconds at load 4: 358, 232, 174, 155, 80, 74, ...
    "frontend/test_semantics_corpus.py",
    "frontend/test_ufunc_keywords.py",
    "frontend/test_reduction_keywords.py",
    "notebook/test_tutorials.py",
    "frontend/test_complex.py",
    "cuda/test_cuda_target.py",
    "frontend/test_kernel_suite.py",
    "frontend/test_differential.py",
    "frontend/test_inplace_hypothesis.py",
    "runtime/test_kernel_cache.py",
    "benchmarks/test_corpus.py",
    "runtime/test_loop_reroll.py",
)


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items):
    def rank(item):
        path = item.nodeid.split("::")[0].removeprefix("tests/")
        return LONGEST_FILES_FIRST.index(path) if path in LONGEST_FILES_FIRST else \
            len(LONGEST_FILES_FIRST)
    items.sort(key=rank)        # stable: the rest keep their order
