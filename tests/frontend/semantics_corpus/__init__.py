"""The semantics corpus: NumPy programs written as scientists write them, run against NumPy.

Each theme module (linalg, stencils, images, physics, integer_graph, complex_progs,
ml_layers, builders, views_aliasing, breaks, public_suites) defines programs with
`@program(make_args, ...)`:

    @program(lambda r: (r.random(8), r.random(8), 0.5))
    def axpy(x, y, a):
        y += a * x

`make_args(rng)` builds fresh inputs from a seeded generator, so each run gets its own
arrays, including views of one buffer for the aliasing programs (a deep copy would lose
the sharing).  `jit_error` names the xlanb error a program may raise under `xlanb.jit`
(a data-dependent shape, Python control flow on a traced value); under
`must_compile=False` every program must give NumPy's answer.  `n` and `k` are the
rounding-chain length and operation count that `tolerance.assert_close` allows.

The 35 kernels of `kernel_suite.py` (tested by test_kernel_suite.py) are part of the
corpus as well: `python -m semantics_corpus` (from tests/frontend) prints the sizes.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

THEMES = ("linalg", "stencils", "images", "physics", "integer_graph", "complex_progs",
          "ml_layers", "builders", "views_aliasing", "breaks", "public_suites")


@dataclass(frozen=True)
class Program:
    name: str
    fn: Callable
    make_args: Callable
    theme: str
    jit_error: type | None = None     # the named xlanb error `jit` may raise instead
    n: int = 64                       # longest rounding chain (assert_close's n)
    k: float = 32                     # operations per element (assert_close's k)
    scale: float | None = None        # results that cancel (a commutator's trace): the size
                                      # of the terms they sum, for assert_close's scale


_REGISTRY: list[Program] = []


def program(make_args: Callable, *, jit_error: type | None = None, n: int = 64,
            k: float = 32, scale: float | None = None):
    """Register the decorated function as a corpus program with inputs `make_args(rng)`."""
    def register(fn):
        theme = fn.__module__.rsplit(".", 1)[-1]
        _REGISTRY.append(Program(fn.__name__, fn, make_args, theme, jit_error, n, k, scale))
        return fn
    return register


def programs() -> list[Program]:
    """Every program of every theme, in definition order (names are unique)."""
    import os
    for theme in THEMES:
        if os.path.exists(os.path.join(os.path.dirname(__file__), theme + ".py")):
            importlib.import_module(f"{__name__}.{theme}")
    names = [p.name for p in _REGISTRY]
    duplicates = {n for n in names if names.count(n) > 1}
    assert not duplicates, f"duplicate program names: {sorted(duplicates)}"
    return list(_REGISTRY)


def expected_jit_errors() -> dict[str, type]:
    """{program name: the named xlanb error it may raise under `jit`}."""
    return {p.name: p.jit_error for p in programs() if p.jit_error is not None}


def sizes() -> dict[str, int]:
    """Programs per theme, the kernel suite's 35 and the total."""
    from kernel_suite import cases
    counts: dict[str, int] = {}
    for p in programs():
        counts[p.theme] = counts.get(p.theme, 0) + 1
    new = sum(counts.values())
    suite = len(cases())
    return {**counts, "new programs": new, "kernel_suite": suite, "corpus total": new + suite}
