"""Helpers: run small scripts under a real `mpiexec -n N` and collect what each rank wrote.

pytest itself never runs under mpiexec (one failing rank would hang the rest and the output
would interleave): `run_mpi(body, n)` writes `body` after a common header to a temporary
script, launches `mpiexec -n N <this python> script.py OUT` in its own process group with a
timeout (the whole group is killed if it runs over), and returns the exit code, the
combined output and OUT (the `run_mpi` fixture in conftest.py wraps `run_script`).  In the
script, `RANK` and `SIZE` are set, `save(name, value)` writes `OUT/name_RANK.npy`, and each
rank's stderr also goes to `OUT/stderr_RANK.txt` (`MpiRun.stderr(rank)`), so tests can check
what every rank printed.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]

HEADER = """\
import os, sys
os.environ.setdefault("NUMBA_THREADING_LAYER", "omp")
import numpy as np
from mpi4py import MPI
RANK, SIZE = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
OUT = sys.argv[1]
_err = os.open(os.path.join(OUT, f"stderr_{RANK}.txt"), os.O_WRONLY | os.O_CREAT, 0o644)
os.dup2(_err, 2)                     # this rank's stderr (Python's and MPI's) to its own file

def save(name, value):
    np.save(os.path.join(OUT, f"{name}_{RANK}.npy"), np.asarray(value))

"""


def find_mpiexec() -> str | None:
    """The mpiexec next to this interpreter (the mpich wheel's), else the one on PATH."""
    return (shutil.which("mpiexec", path=os.path.dirname(sys.executable))
            or shutil.which("mpiexec"))


def has_mpi() -> bool:
    return importlib.util.find_spec("mpi4py") is not None and find_mpiexec() is not None


requires_mpi = pytest.mark.skipif(not has_mpi(), reason="needs mpi4py and mpiexec")


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(REPO), str(REPO / "runtime")]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    # One thread per rank: ranks share two cores, and pools would only fight over them.
    for name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                 "MKL_NUM_THREADS"):
        env[name] = "1"
    env["NUMBA_THREADING_LAYER"] = "omp"
    return env


@dataclass
class MpiRun:
    returncode: int
    output: str               # mpiexec's stdout + stderr
    out: Path
    seconds: float
    n: int

    def stderr(self, rank: int) -> str:
        path = self.out / f"stderr_{rank}.txt"
        return path.read_text(errors="replace") if path.exists() else ""

    def load(self, name: str) -> list[np.ndarray]:
        """`name` as saved by each rank, in rank order."""
        return [np.load(self.out / f"{name}_{r}.npy") for r in range(self.n)]

    def describe(self) -> str:
        ranks = "\n".join(f"--- rank {r} stderr ---\n{self.stderr(r)}" for r in range(self.n))
        return (f"mpiexec -n {self.n} exited {self.returncode} after {self.seconds:.1f} s\n"
                f"--- output ---\n{self.output}\n{ranks}")

    def check(self) -> "MpiRun":
        assert self.returncode == 0, self.describe()
        return self


def launch(command: list[str], timeout: float) -> tuple[int, str, float]:
    """Run `command` in its own session; on timeout kill the whole group (mpiexec and every
    rank) and fail the test rather than leave processes behind."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=subprocess_env(), cwd=REPO, start_new_session=True,
                               text=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"{' '.join(command)} did not finish in {timeout} s (hung?)\n{output}")
    return process.returncode, output, time.perf_counter() - start


def mpiexec_command(n: int, *argv: str) -> list[str]:
    return [find_mpiexec(), "-n", str(n), sys.executable, *argv]


def run_script(directory: Path, body: str, n: int = 2, timeout: float = 60,
               name: str = "script") -> MpiRun:
    """Write HEADER + body to directory/name.py and run it on n ranks."""
    script = directory / f"{name}.py"
    out = directory / f"{name}_out"
    out.mkdir()
    script.write_text(HEADER + textwrap.dedent(body))
    code, output, seconds = launch(mpiexec_command(n, str(script), str(out)), timeout)
    return MpiRun(code, output, out, seconds, n)
