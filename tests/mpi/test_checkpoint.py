"""xlanb.checkpoint: round trips, rank 0 writes, and a failed or crashed save loses nothing."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from xlanb import checkpoint, optim
from xlanb_runtime import collectives
from xlanb_runtime.collectives.local import LocalGroup

from mpi_helpers import REPO, requires_mpi, subprocess_env


def sample_tree():
    params = {"layers": [{"w": np.arange(6, dtype=np.float32).reshape(2, 3),
                          "b": np.zeros(3, np.float64)}]}
    return {"step": 7, "params": params, "opt_state": optim.sgd(0.1, 0.9).init(params),
            "adam": optim.adam().init({"w": np.ones(2)}), "lr": 0.5, "name": "mlp",
            "flag": True, "none": None, 3: (np.int64(4), np.float32(2.5), [])}


def assert_same(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            assert_same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and np.shape(a) == np.shape(b)
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b


def test_round_trip(tmp_path):
    tree = sample_tree()
    path = tmp_path / "ckpt.npz"
    assert checkpoint.save(path, tree) == str(path)
    restored = checkpoint.restore(path)
    assert_same(tree, restored)
    assert type(restored["opt_state"]) is optim.SGDState       # namedtuples come back
    with np.load(path, allow_pickle=False) as data:            # a plain, pickle-free npz
        assert "__tree__" in data.files


def test_single_array_and_exact_path(tmp_path):
    path = tmp_path / "sub" / "weights"                        # no suffix added, dirs made
    checkpoint.save(path, np.ones(3))
    assert path.exists()
    np.testing.assert_array_equal(checkpoint.restore(path), np.ones(3))


def test_restore_missing_file_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint at"):
        checkpoint.restore(tmp_path / "missing.npz")


def test_restore_rejects_foreign_npz(tmp_path):
    np.savez(tmp_path / "other.npz", a=np.ones(2))
    with pytest.raises(ValueError, match="not an xlanb checkpoint"):
        checkpoint.restore(tmp_path / "other.npz")


def test_unsupported_leaf_raises_before_writing(tmp_path):
    path = tmp_path / "ckpt.npz"
    checkpoint.save(path, {"a": np.ones(2)})
    with pytest.raises(TypeError, match="cannot store a object"):
        checkpoint.save(path, {"a": object()})
    with pytest.raises(TypeError, match="dict keys must be str or int"):
        checkpoint.save(path, {(1, 2): np.ones(2)})
    np.testing.assert_array_equal(checkpoint.restore(path)["a"], np.ones(2))


def test_failed_save_leaves_the_old_checkpoint_intact(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.npz"
    checkpoint.save(path, {"step": 1, "w": np.ones(4)})

    def failing_savez(file, **arrays):
        file.write(b"PK\x03\x04 half a zip")              # some bytes, then the failure
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", failing_savez)
    with pytest.raises(OSError, match="disk full"):
        checkpoint.save(path, {"step": 2, "w": np.zeros(4)})
    monkeypatch.undo()
    restored = checkpoint.restore(path)
    assert restored["step"] == 1
    np.testing.assert_array_equal(restored["w"], np.ones(4))
    assert os.listdir(tmp_path) == ["ckpt.npz"]             # the temporary file is gone


def test_crash_mid_save_loses_nothing(tmp_path):
    """A process killed (SIGKILL) after writing the new file but before the rename: the old
    checkpoint is still the one at `path`."""
    path = tmp_path / "ckpt.npz"
    checkpoint.save(path, {"step": 1, "w": np.ones(1000)})
    script = f"""
import os, signal, numpy as np
from xlanb import checkpoint
os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)     # die right before it
checkpoint.save({str(path)!r}, {{"step": 2, "w": np.zeros(1000)}})
"""
    process = subprocess.run([sys.executable, "-c", script], env=subprocess_env(), cwd=REPO,
                             timeout=60, capture_output=True)
    assert process.returncode == -9, process.stderr.decode()
    restored = checkpoint.restore(path)
    assert restored["step"] == 1
    np.testing.assert_array_equal(restored["w"], np.ones(1000))


def test_only_replica_zero_writes(tmp_path):
    group = LocalGroup(2)
    for communicator in group.communicators:
        with collectives.using(communicator):
            assert checkpoint.writer_rank() == communicator.rank
            written = checkpoint.save(tmp_path / f"r{communicator.rank}.npz", np.ones(1))
            assert (written is not None) == (communicator.rank == 0)
    assert os.listdir(tmp_path) == ["r0.npz"]


@requires_mpi
def test_only_rank_zero_writes_under_mpi(run_mpi):
    run = run_mpi("""
        from xlanb import checkpoint
        written = checkpoint.save(os.path.join(OUT, f"ckpt_{RANK}.npz"), {"rank": RANK})
        save("written", written is not None)
    """, n=2, timeout=60).check()
    assert [bool(w) for w in run.load("written")] == [True, False]
    assert os.path.exists(run.out / "ckpt_0.npz")
    assert not os.path.exists(run.out / "ckpt_1.npz")
