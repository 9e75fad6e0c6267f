"""The on-disk kernel cache: corrupt entries, other versions' entries, concurrent and failed
compiles.  Numba also caches in-process, so every compile that must read the disk runs in a
fresh `python -c` process with its own XLANB_CACHE_DIR; it prints one JSON line back: per
kernel, the result and Numba's cache hits and misses (a miss: it compiled)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from tolerance import assert_close
from xlanb_runtime.codegen import cache

# -- running a program in a fresh process ----------------------------------------------------


def run_python(code: str, cache_dir: Path, expect_rc: int = 0) -> dict | None:
    process = subprocess.run([sys.executable, "-c", code], env=_environment(cache_dir),
                             capture_output=True, text=True, timeout=300)
    assert process.returncode == expect_rc, process.stderr[-4000:]
    return json.loads(process.stdout.splitlines()[-1]) if expect_rc == 0 else None


def start_python(code: str, cache_dir: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], env=_environment(cache_dir),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_all(processes: list[subprocess.Popen]) -> list[dict]:
    try:
        outputs = [p.communicate(timeout=300) for p in processes]
    finally:                                  # none left running when one fails
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait()
    for process, (_, stderr) in zip(processes, outputs):
        assert process.returncode == 0, stderr[-4000:]
    return [json.loads(stdout.splitlines()[-1]) for stdout, _ in outputs]


def _environment(cache_dir: Path) -> dict:
    env = dict(os.environ, XLANB_CACHE_DIR=str(cache_dir))
    env.pop("NUMBA_CACHE_DIR", None)          # Numba's files beside the modules
    return env


def snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` by relative path, with its SHA-256."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def entry_dir(root: Path, module: str) -> Path:
    """A kernel module's directory (in the one toolchain directory under `root`)."""
    (versions,) = (root / "kernels").iterdir()
    return versions / module


# -- programs: xlanb graphs through runtime.compile ------------------------------------------

NUMPY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
         "maximum": np.maximum, "minimum": np.minimum, "divide": np.divide}

GRAPHS = textwrap.dedent('''
    import json, os, shutil, sys, time
    import numpy as np
    import xlanb_runtime as runtime
    from xlanb_runtime import compiler
    from xlanb_runtime.codegen import cache
    from xlanb_runtime.ir import parse_graph

    TEXT = """
    module m
      %0 = parameter(), arg=0 : f64[16]
      %1 = parameter(), arg=1 : f64[16]
      %2 = {first}(%0, %1) : f64[16]
      %3 = {second}(%2, %0) : f64[16]
      return (%3)
    """
    x = np.linspace(-2.0, 3.0, 16)
    y = np.linspace(0.5, 4.0, 16)

    def compile_and_run(first, second):
        before = set(compiler._dispatchers)
        try:
            graph = parse_graph(TEXT.format(first=first, second=second))
            # the kernels' entries are under test: no program record (which keeps its
            # kernels' code itself, test_program_cache.py) stands in for them
            shutil.rmtree(cache.kernel_dir() / "programs", ignore_errors=True)
            (got,) = runtime.compile(graph).run([x, y])
        except Exception as error:        # this kernel's failure, not all the others'
            return {"error": repr(error)}
        new = [d for k, d in compiler._dispatchers.items() if k not in before]
        return {"got": got.tolist(), "modules": [d.__module__ for d in new],
                "hits": sum(sum(d.stats.cache_hits.values()) for d in new),
                "misses": sum(sum(d.stats.cache_misses.values()) for d in new)}
''')


def graphs_program(pairs, before_compile: str = "", after_compile: str = "") -> str:
    """Compile and run `second(first(x, y), x)` for each (first, second) op pair."""
    return GRAPHS + textwrap.dedent(before_compile) + textwrap.dedent(f"""
        results = {{f"{{a}},{{b}}": compile_and_run(a, b) for a, b in {list(pairs)!r}}}
    """) + textwrap.dedent(after_compile) + "print(json.dumps(results))\n"


def check_graph_result(result: dict, pair: tuple[str, str]) -> None:
    assert "error" not in result, result["error"]
    x, y = np.linspace(-2.0, 3.0, 16), np.linspace(0.5, 4.0, 16)
    first, second = (NUMPY[op] for op in pair)
    assert_close(np.array(result["got"]), second(first(x, y), x), n=2)


# -- programs: one hand-written kernel module through cache.compile_function -----------------

KERNEL = textwrap.dedent("""\
    import numba


    @numba.njit(cache=True)
    def scale_add(x, out):
        for i in range(x.shape[0]):
            out[i] = 2 * x[i] + 1
""")

KERNELS = textwrap.dedent(f'''
    import json, os, sys, time
    import numba
    import numpy as np
    from xlanb_runtime.codegen import cache

    SOURCE = {KERNEL!r}
    SIGNATURES = {{
        "f64": (numba.float64[::1], numba.float64[::1]),
        "f32": (numba.float32[::1], numba.float32[::1]),
        "str": (numba.types.unicode_type, numba.float64[::1]),     # fails to type
    }}

    def compile_and_run(kind):
        try:
            dispatcher = cache.compile_function(SOURCE, "scale_add", SIGNATURES[kind])
        except Exception as error:
            return {{"error": type(error).__name__}}
        x = np.arange(8, dtype=np.float64 if kind == "f64" else np.float32)
        out = np.empty_like(x)
        dispatcher(x, out)
        return {{"correct": out.tolist() == (2 * x + 1).tolist(),
                 "hits": dispatcher.stats.cache_hits[SIGNATURES[kind]],
                 "misses": dispatcher.stats.cache_misses[SIGNATURES[kind]]}}
''')


def kernels_program(kinds, before_compile: str = "") -> str:
    return KERNELS + textwrap.dedent(before_compile) + textwrap.dedent(f"""
        results = {{kind: compile_and_run(kind) for kind in {list(kinds)!r}}}
        print(json.dumps(results))
    """)


# Waits until `parties` processes have arrived (each creates a file), then goes on: the
# compiles that follow start within milliseconds of each other.
BARRIER = textwrap.dedent("""
    def barrier(directory, name, parties=2):
        os.makedirs(directory, exist_ok=True)
        open(os.path.join(directory, name), "w").close()
        deadline = time.time() + 120
        while len(os.listdir(directory)) < parties:
            assert time.time() < deadline, "the other process never arrived"
            time.sleep(0.001)
""")


# -- a truncated or corrupt entry is recompiled, never trusted ---------------------------------

def _numba_file(entry: dict, suffix: str) -> Path:
    (path,) = entry["pycache"].glob(f"{entry['module']}.*{suffix}")
    return path


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:len(path.read_bytes()) // 2])


def _flip_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 64] = bytes(b ^ 0xFF for b in data[middle:middle + 64])
    path.write_bytes(bytes(data))


def _leave_temp_files(entry: dict) -> None:
    """Leftovers of writers killed before their rename: never read, so never a reason to
    recompile."""
    data = _numba_file(entry, ".nbc")
    data.with_name(data.name + ".tmp.0123456789abcdef").write_bytes(b"\x80half a pickle")
    (entry["dir"] / f".tmp-{entry['module']}.py-x1y2z3").write_text("import os; os._exit(9)\n")
    (entry["dir"] / ".tmp-manifest.json-x1y2z3").write_text("{")


CORRUPTIONS = {   # case: (what it does to the entry, whether the next process may use it)
    "source-truncated": (lambda e: _truncate(e["source"]), False),
    "source-replaced": (lambda e: e["source"].write_text("import os\nos._exit(17)\n"), False),
    "index-truncated": (lambda e: _truncate(_numba_file(e, ".nbi")), False),
    "index-missing": (lambda e: _numba_file(e, ".nbi").unlink(), False),
    "data-truncated": (lambda e: _truncate(_numba_file(e, ".nbc")), False),
    "data-flipped": (lambda e: _flip_middle(_numba_file(e, ".nbc")), False),
    "data-missing": (lambda e: _numba_file(e, ".nbc").unlink(), False),
    "data-empty": (lambda e: _numba_file(e, ".nbc").write_bytes(b""), False),
    "manifest-garbage": (lambda e: e["manifest"].write_text('{"files": [1, '), False),
    "manifest-missing": (lambda e: e["manifest"].unlink(), False),
    "temp-files-left": (_leave_temp_files, True),
    "untouched": (lambda e: None, True),
}
PAIRS = [(a, b) for a in ("add", "subtract", "multiply", "maximum")
         for b in ("add", "multiply", "minimum")][:len(CORRUPTIONS)]
CASE_PAIR = dict(zip(CORRUPTIONS, PAIRS))


@pytest.fixture(scope="module")
def corruption_runs(tmp_path_factory):
    """One process fills the cache with a kernel per case, each entry is damaged its own
    way, then two more processes compile them all again."""
    root = tmp_path_factory.mktemp("xlanb-cache")
    program = graphs_program(PAIRS)
    filled = run_python(program, root)
    for case, (damage, _) in CORRUPTIONS.items():
        (module,) = filled[",".join(CASE_PAIR[case])]["modules"]
        directory = entry_dir(root, module)
        damage({"module": module, "dir": directory, "pycache": directory / "__pycache__",
                "source": directory / f"{module}.py", "manifest": directory / "manifest.json"})
    after_damage = run_python(program, root)
    again = run_python(program, root)
    return filled, after_damage, again


@pytest.mark.parametrize("case", list(CORRUPTIONS))
def test_a_corrupt_entry_is_recompiled_and_recorded_again(corruption_runs, case):
    filled, after_damage, again = corruption_runs
    pair = CASE_PAIR[case]
    key = ",".join(pair)
    for run in (filled, after_damage, again):
        check_graph_result(run[key], pair)
    assert (filled[key]["hits"], filled[key]["misses"]) == (0, 1)
    trusted = CORRUPTIONS[case][1]
    assert (after_damage[key]["hits"], after_damage[key]["misses"]) == \
        ((1, 0) if trusted else (0, 1))
    assert (again[key]["hits"], again[key]["misses"]) == (1, 0)     # a valid entry again


# -- a warm load skips Numba's compile set-up -------------------------------------------------

def test_a_cached_kernel_loads_without_numbas_compile_setup(tmp_path):
    """Numba refreshes its target context (importing every implementation registry, SciPy's
    linalg among them: 0.2-0.5 s) before it looks in its cache; a checked entry loads
    without that (codegen/cached_load.py), and the loaded kernel computes the same."""
    program = kernels_program(["f64", "f32"]).replace(
        "print(json.dumps(results))",
        "results['setup'] = 'numba.np.arraymath' in sys.modules\n"
        "print(json.dumps(results))")
    cold = run_python(program, tmp_path)
    assert cold["setup"] and cold["f64"] == {"correct": True, "hits": 0, "misses": 1}
    warm = run_python(program, tmp_path)
    for kind in ("f64", "f32"):
        assert warm[kind] == {"correct": True, "hits": 1, "misses": 0}
    assert not warm["setup"]

ALLOCATING = textwrap.dedent("""\
    import numba
    import numpy as np


    @numba.njit(cache=True)
    def scratch_sum(x, out):
        tmp = np.empty(x.shape[0], np.float64)
        for i in range(x.shape[0]):
            tmp[i] = x[i] * x[i]
        out[0] = tmp.sum()
""")

ALLOCATING_RUN = textwrap.dedent(f'''
    import json, sys
    import numba
    import numpy as np
    from xlanb_runtime.codegen import cache

    signature = (numba.float64[::1], numba.float64[::1])
    dispatcher = cache.compile_function({ALLOCATING!r}, "scratch_sum", signature)
    imported = "numba.np.arrayobj" in sys.modules
    x = np.linspace(-1.0, 2.0, 9)
    out = np.zeros(1)
    dispatcher(x, out)
    # a kernel compiled afterwards in this process allocates through the real module
    fresh = numba.njit(lambda n: np.zeros(n).sum() + np.empty(0).size)
    print(json.dumps({{"got": out[0], "imported": imported, "fresh": fresh(3),
                      "hits": dispatcher.stats.cache_hits[signature]}}))
''')


def test_a_cached_kernel_that_allocates_loads_without_importing_numbas_array_module(tmp_path):
    """A kernel calling np.empty carries Environments of numba.np.arrayobj; a warm load
    rebuilds them without importing that module (the largest part of a warm W5 start:
    codegen/cached_load.py) and the kernel computes the same, as does a kernel compiled
    later in the process."""
    x = np.linspace(-1.0, 2.0, 9)
    cold = run_python(ALLOCATING_RUN, tmp_path)
    warm = run_python(ALLOCATING_RUN, tmp_path)
    assert cold["imported"] and cold["hits"] == 0
    assert warm["hits"] == 1 and not warm["imported"]
    for run in (cold, warm):
        assert_close(np.array(run["got"]), np.array((x * x).sum()), n=9)
        assert run["fresh"] == 0.0


CODE_RUN = textwrap.dedent(f'''
    import builtins, json
    import numba
    import numpy as np
    from xlanb_runtime.codegen import cache

    compiled = []
    _compile = builtins.compile

    def counting(source, filename, *args, **kwargs):
        if "xlanb_kernel_" in str(filename):
            compiled.append(str(filename))
        return _compile(source, filename, *args, **kwargs)

    builtins.compile = counting
    signature = (numba.float64[::1], numba.float64[::1])
    dispatcher = cache.compile_function({KERNEL!r}, "scale_add", signature)
    x = np.arange(5.0)
    out = np.empty_like(x)
    dispatcher(x, out)
    print(json.dumps({{"got": out.tolist(), "compiled": len(compiled),
                      "hits": dispatcher.stats.cache_hits[signature]}}))
''')


def test_a_warm_kernel_module_imports_from_its_checked_bytecode(tmp_path):
    """The kernel module's bytecode is kept beside its source (Python writes no .pyc under
    PYTHONDONTWRITEBYTECODE): a warm start does not compile the source again, and a code
    file that fails its checksum is compiled again and rewritten, never run."""
    want = (2 * np.arange(5.0) + 1).tolist()
    first = run_python(CODE_RUN, tmp_path / "a")
    assert first == {"got": want, "compiled": 1, "hits": 0}
    assert run_python(CODE_RUN, tmp_path / "a") == {"got": want, "compiled": 0, "hits": 1}
    # a copied cache: the code names the copy's source, where Numba finds its own files
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    shutil.rmtree(tmp_path / "a")
    assert run_python(CODE_RUN, tmp_path / "b") == {"got": want, "compiled": 0, "hits": 1}
    (code,) = (tmp_path / "b" / "kernels").rglob("*.code")
    blob = bytearray(code.read_bytes())
    blob[-8] ^= 0x5A                          # same length, one byte of the code changed
    code.write_bytes(bytes(blob))
    assert run_python(CODE_RUN, tmp_path / "b") == {"got": want, "compiled": 1, "hits": 1}
    assert code.read_bytes() != bytes(blob)   # rewritten
    assert run_python(CODE_RUN, tmp_path / "b") == {"got": want, "compiled": 0, "hits": 1}


# -- another version's entry is never read ----------------------------------------------------

FAKE_VERSIONS = {
    # Numba records its version in the index and would ignore the file itself ...
    "numba": "import numba, llvmlite\nnumba.__version__ = llvmlite.__version__ = '0.0.1'\n",
    # ... but a new xlanb with the same Numba would read the old entry without the key
    "xlanb": "import xlanb_runtime\nxlanb_runtime.__version__ = '0.0.2'\n",
}


def test_entries_of_other_versions_are_not_read(tmp_path):
    for other, fake in FAKE_VERSIONS.items():
        written = run_python(kernels_program(["f64"], before_compile=fake), tmp_path)
        assert written["f64"] == {"correct": True, "hits": 0, "misses": 1}, other
    theirs = sorted((tmp_path / "kernels").iterdir())
    assert [("0.0.1" in p.name, "0.0.2" in p.name) for p in theirs] == \
        [(True, False), (False, True)]
    untouched = snapshot(tmp_path)

    ours = run_python(kernels_program(["f64"]), tmp_path)
    assert ours["f64"] == {"correct": True, "hits": 0, "misses": 1}
    assert {k: v for k, v in snapshot(tmp_path).items() if k in untouched} == untouched
    assert sorted(p.name for p in (tmp_path / "kernels").iterdir()) == \
        sorted([p.name for p in theirs] + [cache.version_tag()])


@pytest.mark.parametrize("module,attribute", [
    ("numba", "__version__"), ("llvmlite", "__version__"), ("numpy", "__version__"),
    ("xlanb_runtime", "__version__")])
def test_every_toolchain_version_names_the_kernel_directory(monkeypatch, module, attribute):
    before = cache.version_tag()
    monkeypatch.setattr(sys.modules[module], attribute, "9.9.9+other")
    assert cache.version_tag() != before
    assert "9.9.9_other" in cache.version_tag()             # a plain directory name


# -- two processes compiling at once leave one valid entry ------------------------------------

def test_two_processes_compiling_one_kernel_leave_one_valid_entry(tmp_path):
    pair = ("multiply", "add")
    both = [start_python(graphs_program([pair], before_compile=BARRIER + textwrap.dedent(f"""
        barrier({str(tmp_path / "barrier")!r}, "party-{i}")
        started = time.time()
    """), after_compile="results['span'] = [started, time.time()]\n"),
        tmp_path / "cache") for i in range(2)]
    runs = finish_all(both)
    key = ",".join(pair)
    starts, ends = zip(*(run["span"] for run in runs))
    assert max(starts) < min(ends)                             # the compiles overlapped
    for run in runs:
        check_graph_result(run[key], pair)
    # the second waited for the first one's lock, then loaded its entry
    assert sorted((run[key]["hits"], run[key]["misses"]) for run in runs) == [(0, 1), (1, 0)]

    (module,) = runs[0][key]["modules"]
    directory = entry_dir(tmp_path / "cache", module)
    # the loading process compiled Numba's runtime and cached it (codegen/cached_nrt.py)
    assert sorted(p.name for p in directory.parent.iterdir()) == \
        ["code", "nrt", "programs", module]
    assert len(list((directory.parent / "programs").iterdir())) == 1   # one program record
    assert len(list((directory.parent / "code").iterdir())) == 1       # its driver's bytecode
    assert len(list((directory.parent / "nrt").iterdir())) == 1
    assert sorted(p.name for p in directory.iterdir()) == \
        ["__pycache__", "lock", "manifest.json", f"{module}.code", f"{module}.py"]
    names = sorted(p.name for p in (directory / "__pycache__").iterdir())
    assert len(names) == 2 and names[0].endswith(".1.nbc") and names[1].endswith(".nbi")

    again = run_python(graphs_program([pair]), tmp_path / "cache")
    assert (again[key]["hits"], again[key]["misses"]) == (1, 0)
    check_graph_result(again[key], pair)


def test_two_processes_adding_signatures_to_one_kernel_keep_both(tmp_path):
    """Numba rewrites one index per function: unlocked, the second writer could drop the
    first one's signature or name its data file for its own."""
    both = [start_python(kernels_program([kind], before_compile=BARRIER + textwrap.dedent(f"""
        barrier({str(tmp_path / "barrier")!r}, "party-{kind}")
    """)), tmp_path / "cache") for kind in ("f64", "f32")]
    for kind, run in zip(("f64", "f32"), finish_all(both)):
        assert run[kind] == {"correct": True, "hits": 0, "misses": 1}
    again = run_python(kernels_program(["f64", "f32"]), tmp_path / "cache")
    assert again == {kind: {"correct": True, "hits": 1, "misses": 0} for kind in ("f64", "f32")}


# -- a failed compile leaves the cache as it was ----------------------------------------------

FAILURES = {
    # case: (code run before compiling "str" or "f32", the signature, exit status)
    "typing-error": ("", "str", 0),
    "save-raises": ("""
        from numba.core import caching
        def full_disk(self, name, data):
            raise OSError(28, "No space left on device")
        caching.IndexDataCacheFile._save_data = full_disk   # after the index was written
    """, "f32", 0),
    "killed-mid-save": ("""
        from numba.core import caching
        caching.IndexDataCacheFile._save_data = lambda self, name, data: os._exit(3)
    """, "f32", 3),
}


@pytest.fixture(scope="module")
def filled_kernel_cache(tmp_path_factory):
    root = tmp_path_factory.mktemp("xlanb-cache")
    assert run_python(kernels_program(["f64"]), root)["f64"] == \
        {"correct": True, "hits": 0, "misses": 1}
    # a warm load caches Numba's runtime too (codegen/cached_nrt.py): all files in place
    assert run_python(kernels_program(["f64"]), root)["f64"] == \
        {"correct": True, "hits": 1, "misses": 0}
    return root


@pytest.mark.parametrize("case", list(FAILURES))
def test_a_failed_compile_leaves_the_cache_intact(filled_kernel_cache, tmp_path, case):
    root = tmp_path / "cache"
    shutil.copytree(filled_kernel_cache, root)
    before = snapshot(root)
    setup, kind, status = FAILURES[case]
    # the failing compile of another signature, then (same process) the cached one
    run = run_python(kernels_program([kind, "f64"], before_compile=setup), root,
                     expect_rc=status)
    if status == 0:
        assert run[kind] == {"error": "TypingError" if kind == "str" else "OSError"}
        assert run["f64"] == {"correct": True, "hits": 1, "misses": 0}
        assert snapshot(root) == before                        # byte for byte, no temp files
    else:
        # killed outright: the index it had written names data that never came; the next
        # process sees files its manifest does not vouch for and compiles afresh
        assert snapshot(root) != before
        again = run_python(kernels_program(["f64", "f32"]), root)
        assert again == {k: {"correct": True, "hits": 0, "misses": 1} for k in ("f64", "f32")}
