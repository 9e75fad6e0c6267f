"""The NumPy support table (`python -m xlanb support`): the committed Markdown copy is what
the generator makes now, and the statuses it reports are what `jit` does.

Each status is checked by running a call of that name: "fused" and "library call" compile
under `jit` (a library call's program has a library-call kernel) and match NumPy;
"unsupported" raises UnsupportedNumPyFunctionError with advice; "data-dependent shape" raises
DataDependentShapeError saying what to use instead, "fallback only" a named error under
`jit`; the last three run under `must_compile=False`.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlanb
from xlanb import support
from xlanb.errors import (ConcretizationError, DataDependentShapeError,
                          UnsupportedNumPyFunctionError)

DOC = Path(__file__).resolve().parents[2] / "docs" / "numpy_support.md"
X = np.linspace(0.25, 2.0, 6)


@pytest.fixture(scope="module")
def table() -> dict[str, support.Entry]:
    return {e.name: e for e in support.support_table()}


def test_markdown_copy_is_current():
    committed = DOC.read_text()
    version = re.search(r"NumPy (\d+\.\d+)\)", committed).group(1)
    if version != ".".join(np.__version__.split(".")[:2]):
        pytest.skip(f"docs/numpy_support.md was generated with NumPy {version}")
    assert support.format_markdown(support.support_table()) == committed, (
        "docs/numpy_support.md is out of date: run "
        "`python -m xlanb support --markdown > docs/numpy_support.md`")


def test_cli_prints_the_counts():
    result = subprocess.run([sys.executable, "-m", "xlanb", "support", "--numba",
                             "--status", "fused"], capture_output=True, text=True, check=True)
    assert result.stdout.startswith("Numba's documented NumPy support:")
    assert "np.add " in result.stdout and "np.unique " not in result.stdout


def test_numba_list_is_cited_and_clean():
    text = support.NUMBA_LIST.read_text()
    assert "numpysupported.rst" in text and "numba/numba commit" in text
    names = support.numba_names()
    assert len(names) == len(set(names)) > 350
    assert all(re.fullmatch(r"(np|ndarray)\.[\w.]+", n) for n in names)


def test_counts_add_up(table):
    entries = list(table.values())
    for numba_only in (True, False):
        counts = support.counts(entries, numba_only)
        assert sum(counts[s] for s in support.STATUSES) == counts["total"]
    assert {e.status for e in entries} <= set(support.STATUSES) | {support.ABSENT}
    assert table["np.asfarray"].status == support.ABSENT           # removed in NumPy 2.0


# name -> a call of it on X; its status under jit must be the table's
EXAMPLES = {
    "np.hypot": lambda x: np.hypot(x, 2 * x),
    "np.diff": lambda x: np.diff(x, 2),
    "np.hamming": lambda x: x * np.hamming(6),
    "ndarray.sum": lambda x: x.sum(),
    "np.linalg.norm": lambda x: np.linalg.norm(x),
    "np.unique": lambda x: np.unique(np.floor(x)),
    "ndarray.item": lambda x: x[0].item() + x,
    "ndarray.__contains__": lambda x: x * (2.0 in x),
    "np.asarray_chkfinite": lambda x: np.asarray_chkfinite(x) + 1,
    "np.polyder": lambda x: np.polyder(x, 2),
    "np.polymul": lambda x: np.polymul(x, x),
    "np.sort": lambda x: np.sort(x[::-1]),
    "np.cumsum": lambda x: np.cumsum(x),
    "np.linalg.solve": lambda x: np.linalg.solve(np.diag(x) + 1.0, x),
    "np.ptp": lambda x: np.ptp(x),
    "np.cbrt": lambda x: np.cbrt(x),
    "np.apply_along_axis": lambda x: np.apply_along_axis(np.sum, 0, x),
    "np.float32": lambda x: np.float32(x) * 2,
    "np.int64": lambda x: np.int64(x[1]) + x,
    "np.random.normal": lambda x: (np.random.seed(0), x + np.random.normal(size=6))[1],
    "np.bincount": lambda x: np.bincount(np.abs(x).astype(np.int64) % 4, minlength=4),
    "np.lib.stride_tricks.as_strided": lambda x: np.lib.stride_tricks.as_strided(
        x, (4, 3), (8, 8)),
    "ndarray.flags": lambda x: x * x.flags.c_contiguous + x[::2].flags.owndata,
    "np.polynomial.polynomial.Polynomial": lambda x: np.polynomial.Polynomial(x[:3])(x),
}


def observed_status(fn) -> str:
    """What jit does with `fn(X)`: compiled (fused or library call), or which error."""
    expected = fn(X)
    try:
        compiled = xlanb.jit(fn).lower(X).compile()
    except UnsupportedNumPyFunctionError as error:
        assert error.hint, f"no advice in {error}"
        status = support.UNSUPPORTED
    except DataDependentShapeError as error:
        assert "must_compile=False" in str(error), f"no advice in {error}"
        status = support.DATA_DEPENDENT
    except ConcretizationError:
        status = support.FALLBACK
    else:
        np.testing.assert_allclose(compiled(X), expected, rtol=1e-12)
        library = any("library-call" in k.ops for k in compiled.kernels)
        return support.LIBRARY if library else support.FUSED
    np.testing.assert_allclose(xlanb.jit(fn, must_compile=False)(X), expected, rtol=1e-12)
    return status


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_status_is_what_jit_does(table, name):
    assert observed_status(EXAMPLES[name]) == table[name].status


def test_one_of_each_status_is_checked(table):
    """The examples cover every status the table reports (an example whose name moved to
    another status is still checked above, against its new status)."""
    seen = {table[name].status for name in EXAMPLES}
    assert {s for s in support.STATUSES if any(e.status == s for e in table.values())} <= seen


def test_every_ufunc_method_compiles(table):
    """No ufunc method the table lists is unsupported (reduceat was the last: NumPy's
    call, its indices checked first), and np.multiply.at, which the table does not probe,
    is a named error with advice."""
    methods = [e.name for e in table.values() if e.kind == "ufunc method"
               and e.status == support.UNSUPPORTED]
    assert not methods, methods
    assert table["np.ufunc.reduceat"].status == support.LIBRARY

    def scaled_at(x):
        np.multiply.at(x, [0, 2], 2.0)
        return x
    with pytest.raises(UnsupportedNumPyFunctionError) as info:
        xlanb.jit(scaled_at)(X.copy())
    assert "must_compile=False" in str(info.value)


def test_data_dependent_functions_are_counted_apart(table):
    """Each function test_data_dependent checks (a named error under jit, NumPy under
    must_compile=False) is "data-dependent shape" in the table, with that advice."""
    from test_data_dependent import CALLS
    for name in CALLS:
        assert table[name].status == support.DATA_DEPENDENT, name
        assert "must_compile=False" in table[name].note
    counts = support.counts(list(table.values()), numba_only=True)
    assert counts[support.DATA_DEPENDENT] >= len(CALLS) - 1     # ndarray.nonzero: its own
