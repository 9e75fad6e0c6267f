"""xlanb.datasets: scikit-learn's digits, MNIST IDX files (written here, small), batches."""
from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from xlanb import datasets


# -- digits -------------------------------------------------------------------------------

def test_load_digits_shapes_dtypes_and_range():
    (x_train, y_train), (x_test, y_test) = datasets.load_digits()
    assert x_train.shape == (1438, 64) and x_test.shape == (359, 64)       # 1797 * 0.2
    assert x_train.dtype == x_test.dtype == np.float32
    assert y_train.dtype == y_test.dtype == np.int64
    assert 0.0 == x_train.min() and x_train.max() == 1.0
    assert set(np.unique(y_train)) == set(range(10)) == set(np.unique(y_test))


def test_load_digits_split_is_deterministic_per_seed_and_disjoint():
    (a, ya), (at, _) = datasets.load_digits(seed=0)
    (b, yb), _ = datasets.load_digits(seed=0)
    (c, _), _ = datasets.load_digits(seed=1)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ya, yb)
    assert not np.array_equal(a, c)
    assert len(a) + len(at) == 1797
    (_, _), (half, _) = datasets.load_digits(test_fraction=0.5)
    assert len(half) == 898                                   # round(1797 * 0.5)


def test_load_digits_rejects_bad_fraction():
    with pytest.raises(ValueError, match="test_fraction"):
        datasets.load_digits(test_fraction=1.0)


# -- MNIST IDX ----------------------------------------------------------------------------

def idx_bytes(array: np.ndarray) -> bytes:
    """The IDX format by hand: 0, 0, type code, ndim, big-endian dims, data."""
    code = {np.uint8: 0x08, np.int32: 0x0C}[array.dtype.type]
    header = struct.pack(">BBBB", 0, 0, code, array.ndim)
    header += struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write_mnist(directory, n_train=5, n_test=3, compress=False, skip=()):
    rng = np.random.default_rng(0)
    arrays = {"train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28), np.uint8),
              "train-labels-idx1-ubyte": rng.integers(0, 10, n_train).astype(np.uint8),
              "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28), np.uint8),
              "t10k-labels-idx1-ubyte": rng.integers(0, 10, n_test).astype(np.uint8)}
    for name, array in arrays.items():
        if name in skip:
            continue
        if compress:
            with gzip.open(directory / (name + ".gz"), "wb") as f:
                f.write(idx_bytes(array))
        else:
            (directory / name).write_bytes(idx_bytes(array))
    return arrays


@pytest.mark.parametrize("compress", [False, True], ids=["raw", "gzip"])
def test_load_mnist_reads_idx_files(tmp_path, compress):
    arrays = write_mnist(tmp_path, compress=compress)
    (x_train, y_train), (x_test, y_test) = datasets.load_mnist(tmp_path)
    assert x_train.shape == (5, 784) and x_test.shape == (3, 784)
    assert x_train.dtype == np.float32 and y_train.dtype == np.int64
    np.testing.assert_allclose(x_train, arrays["train-images-idx3-ubyte"].reshape(5, -1) / 255)
    np.testing.assert_array_equal(y_test, arrays["t10k-labels-idx1-ubyte"])
    assert x_train.max() <= 1.0 and x_train.min() >= 0.0


def test_load_mnist_names_the_missing_files(tmp_path):
    write_mnist(tmp_path, skip=("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"))
    with pytest.raises(FileNotFoundError) as info:
        datasets.load_mnist(tmp_path)
    message = str(info.value)
    missing = message.split("missing ")[1].split(" (")[0]
    assert missing == "t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte"
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        datasets.load_mnist(tmp_path / "nowhere")


def test_read_idx_other_dtypes_and_corrupt_files(tmp_path):
    values = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    (tmp_path / "ints").write_bytes(idx_bytes(values))
    out = datasets.read_idx(tmp_path / "ints")
    np.testing.assert_array_equal(out, values)
    assert out.dtype == np.int32 and out.dtype.isnative
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(ValueError, match="not an IDX file"):
        datasets.read_idx(tmp_path / "bad")
    (tmp_path / "short").write_bytes(idx_bytes(values)[:-4])
    with pytest.raises(ValueError, match="header says shape"):
        datasets.read_idx(tmp_path / "short")


# -- batches ------------------------------------------------------------------------------

def test_batches_cover_each_epoch_once_with_fixed_shapes():
    x = np.arange(10, dtype=np.float32)[:, None] * np.ones((1, 3), np.float32)
    y = np.arange(10)
    out = list(datasets.batches(x, y, 3, seed=0, epochs=2))
    assert len(out) == 6                                      # 3 per epoch, remainder dropped
    assert all(xb.shape == (3, 3) and yb.shape == (3,) for xb, yb in out)
    for xb, yb in out:
        np.testing.assert_array_equal(xb[:, 0], yb)           # rows stay paired
    first, second = np.concatenate([yb for _, yb in out[:3]]), \
        np.concatenate([yb for _, yb in out[3:]])
    assert len(set(first)) == 9 and len(set(second)) == 9      # no repeats in an epoch
    assert not np.array_equal(first, second)                   # reshuffled
    again = list(datasets.batches(x, y, 3, seed=0, epochs=2))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(out, again))


def test_batches_forever_and_argument_checks():
    x, y = np.zeros((4, 2)), np.arange(4)
    stream = datasets.batches(x, y, 4, seed=1)
    assert len([next(stream) for _ in range(10)]) == 10
    with pytest.raises(ValueError, match="batch_size"):
        next(datasets.batches(x, y, 5))
    with pytest.raises(ValueError, match="rows"):
        next(datasets.batches(x, y[:3], 2))
