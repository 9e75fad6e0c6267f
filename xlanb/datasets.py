"""Small real datasets for tests and tutorials, plus a batch iterator. Nothing is downloaded.

    (x_train, y_train), (x_test, y_test) = datasets.load_digits()      # scikit-learn's copy
    (x_train, y_train), (x_test, y_test) = datasets.load_mnist("~/data/mnist")
    for xb, yb in datasets.batches(x_train, y_train, 100, seed=0, epochs=1): ...

Images come back as float32 in [0, 1], one flattened row per example; labels as int64.
"""
from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Iterator

import numpy as np

Split = tuple[np.ndarray, np.ndarray]

# IDX element type codes (http://yann.lecun.com/exdb/mnist/), stored big-endian
_IDX_DTYPES = {0x08: np.dtype(np.uint8), 0x09: np.dtype(np.int8), 0x0B: np.dtype(">i2"),
               0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}

MNIST_FILES = {"train_images": "train-images-idx3-ubyte",
               "train_labels": "train-labels-idx1-ubyte",
               "test_images": "t10k-images-idx3-ubyte",
               "test_labels": "t10k-labels-idx1-ubyte"}


def load_digits(test_fraction: float = 0.2, seed: int = 0) -> tuple[Split, Split]:
    """scikit-learn's 8x8 handwritten digits (1797 images, 10 classes), shuffled and split.

    x: (n, 64) float32 pixels scaled from 0..16 to [0, 1]; y: (n,) int64.  The shuffle is
    a permutation from `np.random.default_rng(seed)`, so a seed always gives the same split.
    The data ships inside scikit-learn (no download); scikit-learn must be installed.
    """
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    try:
        from sklearn.datasets import load_digits as sklearn_load_digits
    except ImportError as exc:
        raise ImportError("xlanb.datasets.load_digits reads the copy bundled with "
                          "scikit-learn: `pip install scikit-learn`") from exc
    digits = sklearn_load_digits()
    x = (np.asarray(digits.data, np.float32) / np.float32(16.0)).reshape(len(digits.data), -1)
    y = np.asarray(digits.target, np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_test = int(round(len(x) * test_fraction))
    return (x[n_test:], y[n_test:]), (x[:n_test], y[:n_test])


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """One IDX file (optionally gzipped) as an array in native byte order."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_DTYPES:
        raise ValueError(f"{path} is not an IDX file (bad magic number {data[:4].hex()})")
    dtype, ndim = _IDX_DTYPES[data[2]], data[3]
    header = 4 + 4 * ndim
    shape = tuple(int(d) for d in np.frombuffer(data, ">u4", count=ndim, offset=4))
    expected = header + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(data) != expected:
        raise ValueError(f"{path}: header says shape {shape} ({expected} bytes), "
                         f"but the file has {len(data)} bytes")
    array = np.frombuffer(data, dtype, offset=header).reshape(shape)
    return array.astype(dtype.newbyteorder("="))


def _find(directory: Path, name: str) -> Path | None:
    # the official names, .gz-compressed or not, and the dotted variant some mirrors use
    dotted = name.replace("-idx", ".idx")
    for candidate in (name, name + ".gz", dotted, dotted + ".gz"):
        if (directory / candidate).is_file():
            return directory / candidate
    return None


def load_mnist(path: str | os.PathLike) -> tuple[Split, Split]:
    """MNIST from the four standard IDX files in directory `path` (gzipped or not).

    x: (n, 784) float32 in [0, 1]; y: (n,) int64.  Nothing is downloaded: get the files
    (train-images-idx3-ubyte.gz, ...) from your usual mirror first.
    """
    directory = Path(path).expanduser()
    found = {key: _find(directory, name) for key, name in MNIST_FILES.items()}
    missing = [MNIST_FILES[key] for key, p in found.items() if p is None]
    if missing:
        raise FileNotFoundError(
            f"MNIST files not found in {directory}: missing {', '.join(missing)} (each may "
            f"also be .gz-compressed). load_mnist does not download; put the four files "
            f"{', '.join(MNIST_FILES.values())} there.")

    def images(key: str) -> np.ndarray:
        raw = read_idx(found[key])
        return (raw.reshape(len(raw), -1).astype(np.float32) / np.float32(255.0))

    def labels(key: str) -> np.ndarray:
        return read_idx(found[key]).astype(np.int64)

    train = (images("train_images"), labels("train_labels"))
    test = (images("test_images"), labels("test_labels"))
    for name, (x, y) in (("train", train), ("test", test)):
        if len(x) != len(y):
            raise ValueError(f"MNIST {name} split: {len(x)} images but {len(y)} labels")
    return train, test


def batches(x: np.ndarray, y: np.ndarray, batch_size: int, seed: int = 0,
            epochs: int | None = None) -> Iterator[Split]:
    """(x_batch, y_batch) pairs, reshuffled every epoch; forever when `epochs` is None.

    Every batch has exactly `batch_size` rows (the remainder of an epoch is dropped), so a
    jitted step sees one shape and compiles once.
    """
    n = len(x)
    if len(y) != n:
        raise ValueError(f"x has {n} rows but y has {len(y)}")
    if not 0 < batch_size <= n:
        raise ValueError(f"batch_size must be in [1, {n}], got {batch_size}")
    rng = np.random.default_rng(seed)
    epoch = 0
    while epochs is None or epoch < epochs:
        order = rng.permutation(n)
        for start in range(0, n - batch_size + 1, batch_size):
            index = order[start:start + batch_size]
            yield x[index], y[index]
        epoch += 1
