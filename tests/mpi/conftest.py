"""The `run_mpi` fixture: run_mpi(body, n=2, timeout=60) -> MpiRun (see mpi_helpers)."""
from __future__ import annotations

import pytest

from mpi_helpers import run_script


@pytest.fixture
def run_mpi(tmp_path):
    counter = iter(range(1000))

    def run(body: str, n: int = 2, timeout: float = 60):
        return run_script(tmp_path, body, n, timeout, name=f"script_{next(counter)}")

    return run
