"""MpiCommunicator and ReplicaContext.all_reduce under real `mpiexec -n 2` and `-n 3`.

Closed-form oracles (mpi4jax style): the all-reduce of ones is size * ones for SUM and ones
for MEAN; of rank-dependent values, the formula over ranks.
"""
from __future__ import annotations

import numpy as np
import pytest

from mpi_helpers import requires_mpi

pytestmark = requires_mpi

COMMUNICATOR = """
from xlanb_runtime.collectives.mpi import MpiCommunicator
comm = MpiCommunicator()
assert (comm.rank, comm.size) == (RANK, SIZE)
for dtype in (np.float32, np.float64, np.int32, np.int64):
    for kind in ("sum", "max", "min") + (("mean",) if dtype in (np.float32, np.float64) else ()):
        buffer = (np.arange(6).reshape(2, 3) + 10 * RANK).astype(dtype)
        comm.all_reduce(buffer, kind)
        save(f"{kind}_{np.dtype(dtype).name}", buffer)
ones = np.ones(5, np.float32)
comm.all_reduce(ones, "sum")
save("ones_sum", ones)
scalar = np.array(2.0 + RANK)
comm.all_reduce(scalar, "mean")          # 0-d buffers too
save("scalar_mean", scalar)
save("calls", comm.calls)
save("bytes", comm.bytes)
# the library's traffic is on its own communicator, not the user's
assert comm.comm is not MPI.COMM_WORLD
assert MPI.Comm.Compare(comm.comm, MPI.COMM_WORLD) == MPI.CONGRUENT
"""


@pytest.mark.parametrize("n", [2, 3])
def test_communicator_all_reduce(run_mpi, n):
    run = run_mpi(COMMUNICATOR, n=n).check()
    base = np.arange(6).reshape(2, 3)
    offsets = 10 * np.arange(n)
    for dtype in ("float32", "float64", "int32", "int64"):
        expected = {"sum": n * base + offsets.sum(), "max": base + offsets.max(),
                    "min": base + offsets.min()}
        if dtype.startswith("float"):
            expected["mean"] = base + offsets.mean()
        for kind, value in expected.items():
            for rank, got in enumerate(run.load(f"{kind}_{dtype}")):
                assert got.dtype == np.dtype(dtype), (kind, dtype)
                np.testing.assert_allclose(got, value, err_msg=f"{kind} {dtype} rank {rank}")
    for got in run.load("ones_sum"):
        np.testing.assert_array_equal(got, np.full(5, n, np.float32))
    for got in run.load("scalar_mean"):
        assert got.shape == () and got == 2.0 + (n - 1) / 2
    calls = 4 * 3 + 2 + 2                   # every (dtype, kind) above, ones, the scalar
    assert [int(c) for c in run.load("calls")] == [calls] * n
    assert len({int(b) for b in run.load("bytes")}) == 1


def test_communicator_check_program_mismatch_raises_on_every_rank(run_mpi):
    run = run_mpi("""
        from xlanb_runtime.collectives.mpi import MpiCommunicator
        from xlanb_runtime.collectives.errors import ReplicaMismatchError
        comm = MpiCommunicator()
        comm.check_program("same", "f32[8, 4], i64[8]")          # agreeing ranks pass
        rows = 8 if RANK == 0 else 6
        try:
            comm.check_program(f"fp{rows}", f"f32[{rows}, 4], i64[{rows}]")
        except ReplicaMismatchError as exc:
            save("message", str(exc))
        save("checked", comm.programs_checked)
    """, n=3, timeout=30).check()
    for message in run.load("message"):
        message = str(message)
        assert "rank 0" in message and "ranks 1, 2" in message
        assert "f32[8, 4] on rank 0 vs f32[6, 4] on ranks 1, 2" in message
    assert [int(c) for c in run.load("checked")] == [2, 2, 2]


EAGER_AND_JIT = """
import xlanb
from xlanb import distribute
strategy = distribute.MultiWorkerMirroredStrategy()
assert strategy.num_replicas_in_sync == SIZE and strategy.rank == RANK

def step(x):
    context = distribute.get_replica_context()
    assert context.replica_id_in_sync_group == RANK
    assert context.num_replicas_in_sync == SIZE
    return (context.all_reduce(distribute.ReduceOp.SUM, x),
            context.all_reduce("mean", {"a": x, "b": 2 * x}))

x = np.ones((3, 4), np.float32)
total, mean = strategy.run(step, args=(x,))
save("eager_sum", total); save("eager_mean_a", mean["a"]); save("eager_mean_b", mean["b"])
compiled = xlanb.jit(step)
total, mean = strategy.run(compiled, args=(x,))
save("jit_sum", total); save("jit_mean_a", mean["a"]); save("jit_mean_b", mean["b"])
save("input_unchanged", np.array_equal(x, np.ones((3, 4), np.float32)))
# outside strategy.run there is one replica: the identity
ones = np.ones(3)
save("outside", distribute.get_replica_context().all_reduce("sum", ones))
save("reduce_mean_axis", strategy.reduce("mean", np.arange(4.0) + RANK, axis=0))
save("reduce_sum", strategy.reduce("sum", np.arange(4.0) + RANK))
"""


@pytest.mark.parametrize("n", [2, 3])
def test_all_reduce_of_ones_eager_and_compiled(run_mpi, n):
    """Depends on the compiled all-reduce (the runtime's) for the jit_* results."""
    run = run_mpi(EAGER_AND_JIT, n=n).check()
    for mode in ("eager", "jit"):
        for total in run.load(f"{mode}_sum"):
            assert total.dtype == np.float32
            np.testing.assert_array_equal(total, np.full((3, 4), n, np.float32), err_msg=mode)
        for a, b in zip(run.load(f"{mode}_mean_a"), run.load(f"{mode}_mean_b")):
            np.testing.assert_array_equal(a, np.ones((3, 4), np.float32), err_msg=mode)
            np.testing.assert_array_equal(b, np.full((3, 4), 2, np.float32), err_msg=mode)
    assert all(run.load("input_unchanged"))
    for outside in run.load("outside"):
        np.testing.assert_array_equal(outside, np.ones(3))
    ranks = np.arange(n)
    for got in run.load("reduce_mean_axis"):
        assert got == pytest.approx(1.5 + ranks.mean())
    for got in run.load("reduce_sum"):
        np.testing.assert_allclose(got, n * np.arange(4.0) + ranks.sum())
