"""The pass manager: one place that names, times, verifies, dumps and relabels passes.

A pass is a pure `Graph -> Graph` function registered under a stable kebab-case name
(`simplify`, `cse`, `dce`, `layout`, later `fusion`, `buffer-assignment`); that one string is
used by `XLANB_FLAGS`, dumps, the compile timeline and error messages.

    graph, records = run_pipeline(graph)                 # OPTIMIZE_PIPELINE
    records[0]  ->  PassRecord(name='simplify', seconds=0.0004, nodes_before=12,
                               nodes_after=9, changed=True)

The manager, not the pass, decides `changed`: it compares `Graph.fingerprint()` before and
after, so a pass cannot lie about it.  The verifier runs on the input and after every pass
that changed the graph, and any failure is re-raised as a `PassError` naming the pass
("verify failed after 'layout': ...", "pass 'cse' failed: ...").
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from ..ir import Graph, verify

PassFn = Callable[[Graph], Graph]

PASSES: dict[str, PassFn] = {}

# Order and reason, one stage a line.  The names are stable: flags and dumps refer to them.
OPTIMIZE_PIPELINE = (
    "simplify",   # constant folding and algebra: exposes duplicates and dead constants
    "cse",        # merge what simplify made identical (constants, repeated subexpressions)
    "dce",        # drop what is no longer reachable
    "layout",     # fold transposes into dots, reductions and broadcasts
    "simplify",   # layout leaves transpose chains and splats behind
    "cse",        # and the nodes it rebuilt may duplicate earlier ones
    "histogram-merge",      # histograms of one array with the same bins: one binning pass
    "all-reduce-combiner",  # one collective per dtype and kind, not one per gradient
)

_PASS_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


class PassError(RuntimeError):
    """A pass raised, returned something that is not a Graph, or broke the verifier.

    An internal compiler error, never the user's mistake: the message names the pass
    (`pass_name`) so a report or bug can point at it.
    """

    def __init__(self, message: str, pass_name: str | None = None):
        super().__init__(message)
        self.pass_name = pass_name


@dataclass
class PassRecord:
    """One line of the compile timeline."""
    name: str
    seconds: float
    nodes_before: int
    nodes_after: int
    changed: bool


def register_pass(name: str) -> Callable[[PassFn], PassFn]:
    """Decorator: `@register_pass("cse")` puts the function in `PASSES` under `name`."""
    if not _PASS_NAME.match(name):
        raise ValueError(f"pass name {name!r} is not kebab-case (e.g. 'all-reduce-combiner')")

    def decorate(fn: PassFn) -> PassFn:
        old = PASSES.get(name)
        if old is not None and (old.__module__, old.__qualname__) != (fn.__module__,
                                                                      fn.__qualname__):
            raise ValueError(f"pass name {name!r} is already registered to "
                             f"{PASSES[name].__module__}.{PASSES[name].__qualname__}")
        PASSES[name] = fn
        return fn
    return decorate


def run_pipeline(graph: Graph, names: Sequence[str] = OPTIMIZE_PIPELINE, *,
                 disabled: Iterable[str] = (), dump: Callable[[str, Graph], Any] | None = None,
                 verify_each: bool = True) -> tuple[Graph, list[PassRecord]]:
    """Run the registered passes `names` in order; returns the graph and one record each.

    `disabled` names are skipped (names of steps run outside this list, e.g. 'fusion', are
    allowed there and ignored).  `dump(name, graph)` is called after each pass that ran.
    """
    names = (names,) if isinstance(names, str) else tuple(names)
    unknown = [n for n in names if n not in PASSES]
    if unknown:
        raise ValueError(f"unknown pass {unknown[0]!r}; registered: {', '.join(sorted(PASSES))}")
    disabled = frozenset(disabled)
    if verify_each:
        _verify(graph, "verify failed on the pipeline's input", None)
    records: list[PassRecord] = []
    fingerprint = graph.fingerprint()
    for name in names:
        if name in disabled:
            continue
        nodes_before = len(graph)
        start = time.perf_counter()
        result = _call(name, PASSES[name], graph)
        seconds = time.perf_counter() - start
        if not isinstance(result, Graph):
            raise PassError(f"pass '{name}' returned {type(result).__name__}, not a Graph", name)
        new_fingerprint = result.fingerprint()     # also catches a pass that edits in place
        changed = new_fingerprint != fingerprint
        if changed and verify_each:
            _verify(result, f"verify failed after '{name}'", name)
        records.append(PassRecord(name, seconds, nodes_before, len(result), changed))
        if dump is not None:
            dump(name, result)
        graph, fingerprint = result, new_fingerprint
    return graph, records


def timed(name: str, fn: Callable[[Graph], Any], graph: Graph, records: list[PassRecord], *,
          verify_each: bool = True) -> Any:
    """Run a step that is not a plain Graph -> Graph pass (fusion, buffer assignment) with
    the same bookkeeping: time it, append a PassRecord, relabel failures with `name`.

    If the result is a Graph, or carries one as `.graph`, node counts and `changed` come from
    it (and a changed graph is verified); otherwise the step is an analysis: the record
    repeats the input's node count with changed=False.
    """
    nodes_before = len(graph)
    start = time.perf_counter()
    result = _call(name, fn, graph)
    seconds = time.perf_counter() - start
    out = result if isinstance(result, Graph) else getattr(result, "graph", None)
    if isinstance(out, Graph):
        changed = out is not graph and out.fingerprint() != graph.fingerprint()
        if changed and verify_each:
            _verify(out, f"verify failed after '{name}'", name)
        records.append(PassRecord(name, seconds, nodes_before, len(out), changed))
    else:
        records.append(PassRecord(name, seconds, nodes_before, nodes_before, False))
    return result


def _call(name: str, fn: Callable[[Graph], Any], graph: Graph) -> Any:
    try:
        return fn(graph)
    except PassError:
        raise                       # already names the pass that failed (a nested pipeline)
    except Exception as exc:
        raise PassError(f"pass '{name}' failed: {type(exc).__name__}: {exc}", name) from exc


def _verify(graph: Graph, what: str, name: str | None) -> None:
    try:
        verify(graph)
    except Exception as exc:        # VerifyError, or a rule that could not even re-derive
        raise PassError(f"{what}: {exc}", name) from exc
