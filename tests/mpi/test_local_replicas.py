"""LocalGroup / LocalCommunicator and MirroredStrategy: replicas on threads of this process."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import xlanb
from xlanb import distribute
from xlanb.distribute import (CollectiveAbortedError, CollectiveTimeoutError, PerReplica,
                              ReduceOp, ReplicaMismatchError)
from xlanb_runtime import collectives
from xlanb_runtime.collectives.errors import first_difference, split_parts
from xlanb_runtime.collectives.local import LocalGroup


def run_replicas(group: LocalGroup, fn):
    """fn(communicator) on every replica's thread; (results, errors) in rank order."""
    results, errors = [None] * group.size, [None] * group.size

    def body(i):
        try:
            results[i] = fn(group.communicators[i])
        except BaseException as exc:      # noqa: BLE001
            errors[i] = exc
            group.abort()

    threads = [threading.Thread(target=body, args=(i,)) for i in range(group.size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "a replica hung"
    return results, errors


# -- LocalCommunicator ------------------------------------------------------------------------

@pytest.mark.parametrize("kind, expected", [("sum", 6.0), ("mean", 2.0), ("max", 3.0),
                                            ("min", 1.0)])
def test_local_all_reduce(kind, expected):
    group = LocalGroup(3)

    def fn(comm):
        buffer = np.full((2, 2), comm.rank + 1.0, np.float32)
        comm.all_reduce(buffer, kind)
        return buffer

    results, errors = run_replicas(group, fn)
    assert errors == [None] * 3
    for r in results:
        np.testing.assert_array_equal(r, np.full((2, 2), expected, np.float32))
    assert [c.calls for c in group.communicators] == [1, 1, 1]


def test_local_all_reduce_is_identical_on_every_replica():
    """Reduced in rank order by every replica: the same bits everywhere, many calls."""
    group = LocalGroup(3)
    rng = np.random.default_rng(0)
    scales = np.float32(10.0) ** rng.integers(-3, 3, (3, 1000))      # mixed magnitudes
    data = [rng.standard_normal(1000).astype(np.float32) * scales[i] for i in range(3)]

    def fn(comm):
        out = []
        for _ in range(20):
            buffer = data[comm.rank].copy()
            comm.all_reduce(buffer, "sum")
            out.append(buffer)
        return out

    results, errors = run_replicas(group, fn)
    assert errors == [None] * 3
    expected = (data[0] + data[1]) + data[2]
    for replica in results:
        for buffer in replica:
            assert buffer.tobytes() == expected.tobytes()


def test_local_shape_mismatch_raises_on_every_replica():
    group = LocalGroup(2)
    results, errors = run_replicas(
        group, lambda comm: comm.all_reduce(np.ones(3 + comm.rank), "sum"))
    assert all(isinstance(e, ReplicaMismatchError) for e in errors), errors
    assert "float64[3] on rank 0 vs float64[4] on rank 1" in str(errors[0])


def test_local_check_program():
    group = LocalGroup(2)
    _, errors = run_replicas(group, lambda comm: comm.check_program("a", "f32[4]"))
    assert errors == [None, None]
    _, errors = run_replicas(
        group, lambda comm: comm.check_program(f"p{comm.rank}", f"f32[{4 + comm.rank}], i64[4]"))
    assert all(isinstance(e, ReplicaMismatchError) for e in errors)
    assert "f32[4] on rank 0 vs f32[5] on rank 1" in str(errors[1])


def test_stuck_replica_times_out_instead_of_hanging():
    group = LocalGroup(2, timeout=0.5)

    def fn(comm):
        if comm.rank == 0:
            comm.all_reduce(np.ones(2), "sum")     # replica 1 never comes

    _, errors = run_replicas(group, fn)
    assert isinstance(errors[0], CollectiveTimeoutError)
    assert "waited 0.5 s" in str(errors[0]) and "replicas [1]" in str(errors[0])


def test_abort_releases_waiting_replicas():
    group = LocalGroup(2)

    def fn(comm):
        if comm.rank == 1:
            raise ValueError("replica 1 failed")
        comm.all_reduce(np.ones(2), "sum")

    _, errors = run_replicas(group, fn)
    assert isinstance(errors[0], CollectiveAbortedError)
    assert isinstance(errors[1], ValueError)


def test_check_buffer_errors():
    comm = LocalGroup(1).communicators[0]
    with pytest.raises(TypeError, match="'mean' needs a float buffer"):
        comm.all_reduce(np.ones(2, np.int32), "mean")
    with pytest.raises(TypeError, match="dtype bool is not supported"):
        comm.all_reduce(np.ones(2, bool), "sum")
    with pytest.raises(ValueError, match="unknown reduce kind"):
        comm.all_reduce(np.ones(2), "prod")
    with pytest.raises(ValueError, match="C-contiguous"):
        comm.all_reduce(np.ones((4, 4))[:, 0], "sum")


def test_mismatch_message_names_the_first_differing_part():
    assert split_parts("f32[8, 4], (i64[8]; f32[])\nx") == ["f32[8, 4]", "(i64[8]; f32[])", "x"]
    assert first_difference("a, f32[8, 4], c", "a, f32[6, 4], c") == ("part 1", "f32[8, 4]",
                                                                      "f32[6, 4]")
    assert first_difference("step(f32[8, 4], i64[8])", "step(f32[8, 4], i64[6])") == (
        "argument 1", "i64[8]", "i64[6]")
    assert first_difference("step(f32[2])", "jump(f32[2])")[0] == "part 0"
    assert first_difference("a, b", "a, b") is None
    error = ReplicaMismatchError([("x", "f32[2]"), ("x", "f32[2]"), ("y", "f32[3]")])
    assert "ranks 0, 1: f32[2]" in str(error) and "rank 2: f32[3]" in str(error)


# -- MirroredStrategy -------------------------------------------------------------------------

def _sum_and_mean(x):
    context = distribute.get_replica_context()
    return (context.all_reduce(ReduceOp.SUM, x),
            context.all_reduce("mean", {"a": x, "b": 2 * x}))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
def test_mirrored_all_reduce_of_ones(compiled):
    """The jit case depends on the compiled all-reduce (the runtime's)."""
    strategy = distribute.MirroredStrategy(num_replicas=2)
    fn = xlanb.jit(_sum_and_mean) if compiled else _sum_and_mean
    x = np.ones((3, 4), np.float32)
    total, mean = strategy.run(fn, args=(x,))
    assert isinstance(total, PerReplica) and len(total.values) == 2
    for i in range(2):
        np.testing.assert_array_equal(total.values[i], np.full((3, 4), 2, np.float32))
        np.testing.assert_array_equal(mean["a"].values[i], x)
        np.testing.assert_array_equal(mean["b"].values[i], 2 * x)
    np.testing.assert_array_equal(x, np.ones((3, 4), np.float32))     # input untouched


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
def test_mirrored_per_replica_arguments(compiled):
    strategy = distribute.MirroredStrategy(num_replicas=2)
    fn = xlanb.jit(_sum_and_mean) if compiled else _sum_and_mean
    shards = strategy.shard(np.arange(8.0).reshape(4, 2))
    np.testing.assert_array_equal(shards.values[1], [[4.0, 5.0], [6.0, 7.0]])
    total, mean = strategy.run(fn, args=(shards,))
    for i in range(2):
        np.testing.assert_array_equal(total.values[i], [[4.0, 6.0], [8.0, 10.0]])
        np.testing.assert_array_equal(mean["a"].values[i], [[2.0, 3.0], [4.0, 5.0]])


def test_outside_a_strategy_one_replica():
    context = distribute.get_replica_context()
    assert (context.replica_id_in_sync_group, context.num_replicas_in_sync) == (0, 1)
    x = np.ones(3)
    out = context.all_reduce("sum", {"x": x, "n": 2})
    np.testing.assert_array_equal(out["x"], x)
    assert out["x"] is not x and int(out["n"]) == 2
    total, _ = xlanb.jit(_sum_and_mean)(x)      # compiled, no communicator: identity
    np.testing.assert_array_equal(total, x)


def test_mirrored_reduce_and_shard():
    strategy = distribute.MirroredStrategy(num_replicas=2)
    value = PerReplica([np.array([1.0, 2.0]), np.array([3.0, 6.0])])
    np.testing.assert_array_equal(strategy.reduce(ReduceOp.SUM, value), [4.0, 8.0])
    np.testing.assert_array_equal(strategy.reduce("mean", value), [2.0, 4.0])
    np.testing.assert_array_equal(strategy.reduce("max", value), [3.0, 6.0])
    assert strategy.reduce("mean", value, axis=0) == 3.0       # mean of the global batch
    assert strategy.reduce("sum", {"v": value}, axis=0)["v"] == 12.0
    x, y = strategy.shard((np.arange(4), np.arange(8).reshape(4, 2)))
    assert x.values[0].tolist() == [0, 1] and y.values[1].tolist() == [[4, 5], [6, 7]]
    assert strategy.experimental_local_results(x)[1].tolist() == [2, 3]
    with pytest.raises(ValueError, match="does not split evenly over 2 replicas"):
        strategy.shard(np.arange(5))
    with pytest.raises(ValueError, match="unknown reduce op"):
        strategy.reduce("prod", value)


def test_exception_in_a_replica_is_reraised_after_releasing_the_others():
    strategy = distribute.MirroredStrategy(num_replicas=2)

    def fn(x):
        if distribute.get_replica_context().replica_id_in_sync_group == 1:
            raise ValueError("bad batch on replica 1")
        return distribute.get_replica_context().all_reduce("sum", x)

    with pytest.raises(ValueError, match="bad batch on replica 1") as info:
        strategy.run(fn, args=(np.ones(2),))
    assert any("replica 1 of 2" in note for note in info.value.__notes__)
    total = strategy.run(lambda x: distribute.get_replica_context().all_reduce("sum", x),
                         args=(np.ones(2),))               # the strategy still works
    np.testing.assert_array_equal(total.values[0], [2.0, 2.0])


def test_replica_ids():
    strategy = distribute.MirroredStrategy(num_replicas=3)
    ids = strategy.run(lambda: distribute.get_replica_context().replica_id_in_sync_group)
    assert ids.values == (0, 1, 2)
    assert strategy.run(lambda: distribute.get_replica_context().num_replicas_in_sync
                        ).values == (3, 3, 3)


def test_mirrored_mismatched_shapes_raise_replica_mismatch():
    """Eager here; the compiled case (check_program before the first collective) is in
    test_mirrored_training.py."""
    strategy = distribute.MirroredStrategy(num_replicas=2)
    xs = PerReplica([np.ones(4), np.ones(3)])
    with pytest.raises(ReplicaMismatchError):
        strategy.run(lambda x: distribute.get_replica_context().all_reduce("sum", x),
                     args=(xs,))


def test_replicas_see_the_callers_context():
    strategy = distribute.MirroredStrategy(num_replicas=2)
    seen = strategy.run(lambda: collectives.current_communicator().rank)
    assert seen.values == (0, 1)
    assert collectives.current_communicator() is None
    double = xlanb.jit(lambda x: 2 * x)
    with xlanb.disable_jit():                   # contextvars carry over into the replicas
        out = strategy.run(double, args=(np.ones(2),))
    np.testing.assert_array_equal(out.values[1], [2.0, 2.0])
    assert double.cache_info().misses == 0      # interpreted, never compiled


def test_interpreted_all_reduce_uses_the_communicator():
    """Depends on the runtime: the interpreter's all-reduce (disable_jit) should reduce
    through the current communicator like the compiled one."""
    strategy = distribute.MirroredStrategy(num_replicas=2)
    with xlanb.disable_jit():
        total, _ = strategy.run(xlanb.jit(_sum_and_mean), args=(np.ones(2),))
    np.testing.assert_array_equal(total.values[1], [2.0, 2.0])


def test_replicas_in_different_collectives_raise_instead_of_mixing_data():
    group = LocalGroup(2)

    def fn(comm):
        if comm.rank == 0:
            comm.check_program("p", "f32[2]")
        else:
            comm.all_reduce(np.ones(2), "sum")

    _, errors = run_replicas(group, fn)
    assert all(isinstance(e, ReplicaMismatchError) for e in errors), errors
    assert "check_program on rank 0 vs all_reduce(sum) on rank 1" in str(errors[0])


def test_a_verified_program_is_not_compared_again():
    group = LocalGroup(2)

    def fn(comm):
        for _ in range(3):
            comm.check_program("p", "f32[2]")
        return comm.programs_checked

    results, errors = run_replicas(group, fn)
    assert errors == [None, None] and results == [1, 1]
