"""Mirrored training end to end: equal to one process on the global batch, one MPI call per
step, failures that end the job, and the tutorial's checkpoint/resume.

The oracle is one process running the same compiled step on the whole batch: averaging the
gradients of two equal halves is the gradient of the whole (to rounding, float64 here).
Everything that runs a compiled all-reduce depends on the runtime's all-reduce support.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

from xlanb import checkpoint
from xlanb.pytree import tree_leaves

from mpi_helpers import REPO, has_mpi, launch, mpiexec_command, requires_mpi, run_script

STEPS, PER_REPLICA = 20, 8

COMMON = """
import numpy as np
import xlanb
from xlanb import distribute, optim
from xlanb.models import mlp
from xlanb.pytree import tree_leaves

SIZES = (8, 16, 16, 4)                   # 3 dense layers: 6 parameter arrays
optimizer = optim.sgd(0.3)

@xlanb.jit
def train_step(params, x, y):
    loss, grads = xlanb.value_and_grad(mlp.loss)(params, x, y)
    grads = distribute.get_replica_context().all_reduce("mean", grads)
    params, _ = optimizer.update(params, grads, optim.SGDState(None))
    return params, loss

def global_batches(steps, batch):
    rng = np.random.default_rng(1)
    return (rng.standard_normal((steps, batch, SIZES[0])),
            rng.integers(0, SIZES[-1], (steps, batch)))

def initial_params():
    return mlp.init(0, SIZES, dtype=np.float64)
"""


def single_process_reference(steps: int, batch: int) -> list[np.ndarray]:
    namespace: dict = {}
    exec(COMMON, namespace)
    params = namespace["initial_params"]()
    xs, ys = namespace["global_batches"](steps, batch)
    for s in range(steps):
        params, _ = namespace["train_step"](params, xs[s], ys[s])
    return namespace["tree_leaves"](params)


@pytest.fixture(scope="module")
def reference():
    return single_process_reference(STEPS, 2 * PER_REPLICA)


@pytest.fixture(scope="module")
def mpi_training(tmp_path_factory):
    """20 steps on 2 ranks, per-replica batch 8 (run once for the tests below)."""
    if not has_mpi():
        pytest.skip("needs mpi4py and mpiexec")
    return run_script(tmp_path_factory.mktemp("training"), COMMON + f"""
strategy = distribute.MultiWorkerMirroredStrategy()
params = initial_params()
xs, ys = global_batches({STEPS}, {2 * PER_REPLICA})
calls = []
for s in range({STEPS}):
    before = strategy.communicator.calls
    params, loss = strategy.run(train_step, args=(params, *strategy.shard((xs[s], ys[s]))))
    calls.append(strategy.communicator.calls - before)
for i, leaf in enumerate(tree_leaves(params)):
    save(f"leaf{{i}}", leaf)
save("calls", calls)
save("checked", strategy.communicator.programs_checked)
""", n=2, timeout=60)


@requires_mpi
def test_mpi_training_equals_one_process_on_the_global_batch(mpi_training, reference):
    mpi_training.check()
    for i, expected in enumerate(reference):
        ranks = mpi_training.load(f"leaf{i}")
        assert ranks[0].tobytes() == ranks[1].tobytes(), f"replicas diverged in leaf {i}"
        np.testing.assert_allclose(ranks[0], expected, rtol=1e-5, atol=1e-5)


@requires_mpi
def test_mlp_step_issues_one_mpi_all_reduce(mpi_training):
    """6 gradient arrays, combined by the compiler into one MPI call per step."""
    mpi_training.check()
    for calls in mpi_training.load("calls"):
        assert calls.tolist() == [1] * STEPS
    assert [int(c) for c in mpi_training.load("checked")] == [1, 1]   # one program check


def test_mirrored_strategy_training_equals_one_process(reference):
    namespace: dict = {}
    exec(COMMON, namespace)
    distribute = namespace["distribute"]
    strategy = distribute.MirroredStrategy(num_replicas=2)
    params = namespace["initial_params"]()
    xs, ys = namespace["global_batches"](STEPS, 2 * PER_REPLICA)
    for s in range(STEPS):
        params, _ = strategy.run(namespace["train_step"],
                                 args=(params, *strategy.shard((xs[s], ys[s]))))
    replicas = strategy.experimental_local_results(params)
    for i, expected in enumerate(reference):
        leaves = [namespace["tree_leaves"](r)[i] for r in replicas]
        assert leaves[0].tobytes() == leaves[1].tobytes(), f"replicas diverged in leaf {i}"
        np.testing.assert_allclose(leaves[0], expected, rtol=1e-5, atol=1e-5)
    assert [c.calls for c in strategy.communicators] == [STEPS, STEPS]


@requires_mpi
def test_mismatched_shapes_raise_on_every_rank(run_mpi):
    """Depends on the runtime calling check_program before the program's first all-reduce."""
    run = run_mpi(COMMON + """
strategy = distribute.MultiWorkerMirroredStrategy()
rows = 8 if RANK == 0 else 6
x, y = np.ones((rows, SIZES[0])), np.zeros(rows, np.int64)
strategy.run(train_step, args=(initial_params(), x, y))
save("not_reached", True)
""", n=2, timeout=30)
    assert run.returncode != 0, run.describe()
    for rank in range(2):
        text = run.stderr(rank)
        assert "ReplicaMismatchError" in text, run.describe()
        assert "ReplicaMismatchError" in text and "rank 0" in text and "rank 1" in text
        assert "argument 6: f64[8,8] on rank 0 vs f64[6,8] on rank 1" in text, text
    assert not list(run.out.glob("not_reached_*"))


@requires_mpi
@pytest.mark.parametrize("where", ["inside", "outside"])
def test_a_rank_raising_mid_training_ends_the_job(run_mpi, where):
    """Rank 1 raises at step 3 (inside strategy.run, or in the training loop): rank 0, about
    to wait in the next all-reduce forever, is ended by MPI_Abort."""
    raise_inside = where == "inside"
    run = run_mpi(COMMON + f"""
strategy = distribute.MultiWorkerMirroredStrategy()
params = initial_params()
xs, ys = global_batches(10, 16)

def step(params, x, y, s):
    if {raise_inside} and RANK == 1 and s == 3:
        raise RuntimeError("rank 1 lost its data at step 3")
    return train_step(params, x, y)

for s in range(10):
    if not {raise_inside} and RANK == 1 and s == 3:
        raise RuntimeError("rank 1 lost its data at step 3")
    params, loss = strategy.run(step, args=(params, *strategy.shard((xs[s], ys[s])), s))
save("finished", True)
""", n=2, timeout=30)
    assert run.returncode != 0, run.describe()
    text = run.output + run.stderr(0) + run.stderr(1)
    assert "RuntimeError: rank 1 lost its data at step 3" in text, run.describe()
    assert "[xlanb rank 1/2]" in run.stderr(1)
    assert not list(run.out.glob("finished_*"))


def run_tutorial(n: int, *args: str, timeout: float = 60) -> tuple[int, str]:
    command = mpiexec_command(n, str(REPO / "tutorials" / "mirrored_training.py"), *args)
    code, output, _ = launch(command, timeout)
    return code, output


@requires_mpi
def test_tutorial_resume_equals_an_uninterrupted_run(tmp_path):
    common = ("--dtype", "float64", "--log-every", "2", "--batch", "32")
    full, part = tmp_path / "full.npz", tmp_path / "part.npz"
    code, output = run_tutorial(2, "--steps", "8", "--checkpoint", str(full), *common)
    assert code == 0, output
    assert "[rank 0/2] step 8 loss" in output and "[rank 1/2] step 8 loss" in output
    assert "test accuracy" in output and "replicas in sync: True" in output
    code, output = run_tutorial(2, "--steps", "4", "--checkpoint", str(part), *common)
    assert code == 0, output
    assert checkpoint.restore(part)["step"] == 4
    code, output = run_tutorial(2, "--steps", "8", "--checkpoint", str(part), "--resume",
                                *common)
    assert code == 0, output
    assert "resumed from" in output and "at step 4" in output
    uninterrupted, resumed = checkpoint.restore(full), checkpoint.restore(part)
    assert resumed["step"] == uninterrupted["step"] == 8
    for name in ("params", "opt_state"):              # momentum state included
        for x, y in zip(tree_leaves(uninterrupted[name]), tree_leaves(resumed[name])):
            np.testing.assert_array_equal(x, y)

    # Plain `python` is one replica on the whole global batch: the same training, to rounding.
    single = tmp_path / "single.npz"
    code, output, _ = launch([sys.executable, str(REPO / "tutorials" / "mirrored_training.py"),
                              "--steps", "8", "--checkpoint", str(single), *common], 60)
    assert code == 0, output
    assert "[rank 0/1] test accuracy" in output
    for x, y in zip(tree_leaves(checkpoint.restore(single)["params"]),
                    tree_leaves(uninterrupted["params"])):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)
