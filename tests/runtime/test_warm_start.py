"""A warm start's kernel loads: Numba's runtime (NRT) from the cache (codegen/cached_nrt.py),
each kernel's bitcode parsed only when linked (codegen/cached_load.py), its defined symbols
read from the object code (codegen/object_symbols.py).  Each warm load runs in a fresh
`python -c` process with its own XLANB_CACHE_DIR and prints one JSON line of counts."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest
from llvmlite import binding as ll

from xlanb_runtime.codegen.object_symbols import defined_symbols

KERNEL = textwrap.dedent("""\
    import numba
    import numpy as np


    @numba.njit(cache=True)
    def scaled_sum(x, out):
        tmp = np.empty(x.shape[0], np.float64)
        for i in range(x.shape[0]):
            tmp[i] = 2.0 * x[i] + 1.0
        out[0] = tmp.sum()
""")

# Loads (or compiles) the kernel and counts what this process compiled and parsed; then a
# function compiled here calls the loaded kernel (Numba links its module) and allocates.
RUN = textwrap.dedent(f'''
    import json
    import numba
    import numpy as np
    from llvmlite import binding as ll
    from numba.core import codegen
    from numba.core.runtime import rtsys
    from xlanb_runtime.codegen import cache

    counts = {{"finalize": 0, "parse_bitcode": 0}}

    def counting(name, owner, attribute):
        original = getattr(owner, attribute)
        def counted(*args, **kwargs):
            counts[name] += 1
            return original(*args, **kwargs)
        setattr(owner, attribute, counted)

    counting("finalize", codegen.JITCodeLibrary, "finalize")      # an LLVM compile
    counting("parse_bitcode", ll, "parse_bitcode")
    signature = (numba.float64[::1], numba.float64[::1])
    kernel = cache.compile_function({KERNEL!r}, "scaled_sum", signature)
    loaded = dict(counts, hits=kernel.stats.cache_hits[signature], nrt=rtsys._init)
    x = np.linspace(-1.0, 2.0, 7)
    out = np.zeros(1)
    kernel(x, out)

    @numba.njit
    def caller(x):
        out = np.zeros(1)
        kernel(x, out)
        return out[0] + np.ones(3).sum()

    print(json.dumps({{"loaded": loaded, "got": out[0], "linked": caller(x)}}))
''')


def run_warm(cache_dir: Path) -> dict:
    env = dict(os.environ, XLANB_CACHE_DIR=str(cache_dir))
    env.pop("NUMBA_CACHE_DIR", None)
    process = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True,
                             text=True, timeout=300)
    assert process.returncode == 0, process.stderr[-4000:]
    return json.loads(process.stdout.splitlines()[-1])


def nrt_files(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / "kernels").glob("*/nrt/*"))


def check_results(run: dict) -> None:
    want = (2.0 * np.linspace(-1.0, 2.0, 7) + 1.0).sum()
    np.testing.assert_allclose(run["got"], want, rtol=1e-15)
    np.testing.assert_allclose(run["linked"], want + 3.0, rtol=1e-15)


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory) -> Path:
    """A cache holding the kernel (a cold compile) and the NRT (the first warm load)."""
    root = tmp_path_factory.mktemp("warm")
    cold = run_warm(root)
    assert cold["loaded"]["hits"] == 0 and cold["loaded"]["finalize"] >= 1
    first = run_warm(root)
    assert first["loaded"]["hits"] == 1 and len(nrt_files(root)) == 1
    for run in (cold, first):
        check_results(run)
    return root


def test_a_warm_load_compiles_nothing_and_parses_only_the_runtimes_bitcode(warm_cache):
    """The NRT loads from its cache entry (no LLVM compile in the process: `finalize`
    never runs) and the kernel's bitcode stays unparsed (one parse: the NRT's, which every
    later compile links); a function compiled afterwards links the kernel and allocates."""
    run = run_warm(warm_cache)
    assert run["loaded"] == {"finalize": 0, "parse_bitcode": 1, "hits": 1, "nrt": True}
    check_results(run)


@pytest.mark.parametrize("damage", ["truncate", "flip", "other-format"])
def test_a_damaged_runtime_entry_is_compiled_again(warm_cache, tmp_path, damage):
    """A truncated, corrupt or foreign NRT entry is never loaded: the NRT compiles (one
    `finalize`), the entry is written again, and the next process loads it."""
    root = tmp_path / "cache"
    shutil.copytree(warm_cache, root)
    (path,) = nrt_files(root)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[:len(data) // 2])
    elif damage == "flip":
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1:])
    else:
        path.write_bytes(b"xlanb-nrt 0\n" + data.partition(b"\n")[2])
    run = run_warm(root)
    assert run["loaded"]["finalize"] == 1 and run["loaded"]["hits"] == 1
    check_results(run)
    assert path.read_bytes() != b"" and run_warm(root)["loaded"]["finalize"] == 0


def test_object_code_symbols_are_the_bitcodes_defined_names():
    """The names a Numba library's object code defines are those its module for linking
    defines (what Numba's `_load_defined_symbols` collects from the parsed bitcode)."""
    function = numba.njit(lambda x: np.empty(3).sum() + x)
    function(1.0)
    library = function.overloads[function.signatures[0]].library
    _, kind, (object_code, bitcode) = library.serialize_using_object_code()
    module = ll.parse_bitcode(bitcode)
    want = {g.name for group in (module.functions, module.global_variables) for g in group
            if not g.is_declaration}
    assert kind == "object" and want and defined_symbols(object_code) == want


@pytest.mark.parametrize("data", [b"", b"\x7fELF\x01\x01", b"MZ" + bytes(100),
                                  b"\x7fELF\x02\x01" + bytes(10)])
def test_object_code_other_than_elf64_is_not_read(data):
    assert defined_symbols(data) is None
