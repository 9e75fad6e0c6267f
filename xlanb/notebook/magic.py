"""`%%xla` (compile a cell as one function) and `%xla_report` (show a function's report).

    %load_ext xlanb
    %%xla --compare
    w = x + y * z            # x, y, z: arrays in the namespace -> the function's inputs
    s = np.sum(w)            # w, s: assigned -> outputs, back in the namespace as arrays

Flow: cell -> `cell.make_cell_function` -> `xlanb.jit` (cached per cell text, options and
argument shapes) -> run -> outputs into the namespace -> optional comparison with the same
program op by op (`xlanb.disable_jit()`) and with plain NumPy -> profile -> one display
bundle (report JSON, static HTML, text, and the ipywidgets view inside a kernel).

Code the compiler cannot take (an unsupported NumPy function, a value-dependent shape,
Python control flow on an array) is compiled per cluster with `must_compile=False` and the
cell says which lines ran with NumPy; `--must-compile` makes that an error instead.  A cell
that fails raises what `xlanb.jit` raises for the same code (`ShapeMismatchError`, also a
`ValueError`, ...), so the cell fails as any cell does; the error shows as `Type: message`
plus the cell line, not a traceback (`--tb` shows the traceback).  Bad options raise
IPython's `UsageError`.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import linecache
import os
import statistics
import sys
import time
from typing import Any

import numpy as np
from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from .cell import CellFunction, CellSyntaxError, make_cell_function, quote_location
from .report import Report, plural

FALLBACK_ERRORS = ("UnsupportedNumPyFunctionError", "DataDependentShapeError",
                   "ConcretizationError")
# runtime errors that are about the user's setup or data, not bugs: shown short too
USER_RUNTIME_ERRORS = ("CudaUnavailableError", "FlagError", "NonFiniteError",
                       "NotDifferentiableError", "ReplicaMismatchError")
MAX_CACHED_CELLS = 64


class MagicError(Exception):
    """A problem with the magic's options or its input, shown as one line."""


@magics_class
class XlaMagics(Magics):
    def __init__(self, shell):
        super().__init__(shell)
        self._cache: dict = {}          # (cell text, options, arg signature) -> (cell, jit)
        self.last_report: Report | None = None
        self.last_outputs: dict[str, Any] = {}

    # -- %%xla --------------------------------------------------------------------------
    @magic_arguments()
    @argument("--target", default="cpu", choices=("cpu", "cuda"),
              help="device to compile for (default cpu)")
    @argument("--compare", action="store_true",
              help="also run op by op and with plain NumPy: check results, time all three")
    @argument("--no-fusion", action="store_true",
              help="compile every op as its own kernel (to see what fusion buys)")
    @argument("-n", "--repeat", type=int, default=5, help="timing repeats (median)")
    @argument("--dump", metavar="DIR", help="write IR, DOT and kernel dumps to DIR")
    @argument("--trace", metavar="FILE", help="write a Chrome trace of compile and run")
    @argument("--quiet", action="store_true", help="show no report")
    @argument("--must-compile", action="store_true",
              help="fail instead of running unsupported parts with NumPy")
    @argument("--tb", action="store_true", help="show full tracebacks of errors")
    @cell_magic
    def xla(self, line: str, cell: str):
        """Compile this cell's NumPy code as one xlanb function and show its report.

        Errors propagate with their own class (what `xlanb.jit` raises), shown short."""
        try:
            options = parse_argstring(self.xla, line)
        except UsageError as error:
            raise UsageError(f"%%xla: {error}") from None
        if options.repeat < 1:
            raise UsageError("%%xla: -n/--repeat needs a positive number")
        if options.target == "cuda" and \
                importlib.util.find_spec("xlanb_runtime.codegen.cuda") is None:
            raise UsageError("%%xla: --target cuda: this xlanb runtime has no CUDA code "
                             "generator yet; run the cell with --target cpu")
        filename, name = self._cell_filename(cell)
        try:
            return self._run_cell(cell, options, filename, name)
        except Exception as error:
            if not options.tb and self._is_user_error(error, filename):
                short = short_error(error, filename)
                # IPython and ipykernel show this instead of the traceback
                error._render_traceback_ = short.splitlines
            raise

    def _run_cell(self, source: str, options, filename: str, name: str) -> None:
        import xlanb
        ns = self.shell.user_ns
        notes: list[str] = []
        with compiler_flags(options.dump, options.trace, notes):
            cell = make_cell_function(source, ns, filename, name)
            values = [ns[n] for n in cell.inputs]
            fresh = bool(options.dump or options.trace)
            cell, jitted = self._jitted(cell, values, options, fresh)
            fallback_reason = None
            try:
                outputs = jitted(*values)
            except xlanb.CompileError as error:
                if type(error).__name__ not in FALLBACK_ERRORS or options.must_compile:
                    raise
                fallback_reason = error
                jitted = xlanb.jit(cell.fn, must_compile=False, target=options.target,
                                   fusion=not options.no_fusion)
                self._cache[self._key(cell, values, options)] = (cell, jitted)
                outputs = jitted(*values)
            self._store_outputs(cell, outputs)
            if jitted._autocluster is None and (options.compare or not options.quiet):
                # the outputs came from the NumPy tier if the cell was not compiled
                # before: the timings and report are the compiled program's, and its
                # timeline shows the NumPy tier, the background compile and the switch
                jitted.wait_compiled()
            compare = None
            if options.compare:
                compare = compare_runs(cell, jitted, values, outputs, options.repeat,
                                       interpreted=jitted._autocluster is None)
            if jitted._autocluster is None and not options.quiet:
                profile(jitted, values, options.repeat)
        for note in notes:
            print(f"%%xla: {note}")
        if jitted._autocluster is not None:
            print(fallback_message(jitted, fallback_reason))
        if compare is not None and not compare["allclose"]:
            print(f"%%xla: results DIFFER from {compare['reference']}: "
                  + ", ".join(f"{k} (max abs diff {v['max_abs_diff']})"
                              for k, v in compare["outputs"].items() if not v["allclose"]),
                  file=sys.stderr)
        params = [n for n, v in zip(cell.inputs, values)
                  if isinstance(v, (np.ndarray, np.generic))]
        report = Report(jitted, compare=compare,
                        param_names=params if jitted._autocluster is None else None,
                        cell={"filename": filename, "source": source, "inputs": cell.inputs,
                              "outputs": sorted(self.last_outputs),
                              "options": {"target": options.target,
                                          "fusion": not options.no_fusion,
                                          "repeat": options.repeat,
                                          "compare": options.compare}})
        self.last_report = report
        if not options.quiet:
            self.display(report)

    def _key(self, cell: CellFunction, values, options) -> tuple:
        signature = tuple((v.shape, v.dtype.str) if isinstance(v, (np.ndarray, np.generic))
                          else (type(v), v) for v in values)
        return (cell.source, tuple(cell.inputs), options.target, options.no_fusion, signature)

    def _jitted(self, cell: CellFunction, values, options, fresh: bool):
        """The cell's jitted function: reused when the same cell runs on the same shapes."""
        import xlanb
        key = self._key(cell, values, options)
        if not fresh and key in self._cache:
            return self._cache[key]
        jitted = xlanb.jit(cell.fn, target=options.target, fusion=not options.no_fusion)
        self._cache[key] = (cell, jitted)
        while len(self._cache) > MAX_CACHED_CELLS:           # drop the oldest
            self._cache.pop(next(iter(self._cache)))
        return cell, jitted

    def _store_outputs(self, cell: CellFunction, outputs: dict) -> None:
        """Outputs land in the namespace only after the whole cell succeeded."""
        values = dict(outputs)
        values.update(cell.others)
        self.shell.user_ns.update(values)
        self.last_outputs = values

    def _cell_number(self, source: str) -> int:
        """The running cell's number, its `In[N]`.  IPython 9 counts a cell up before it
        runs and IPython 8 after, so `execution_count` is N on one and N + 1 on the other;
        on both the input history ends with this cell (when it runs as a cell)."""
        history = getattr(getattr(self.shell, "history_manager", None), "input_hist_raw",
                          None)
        if history and len(history) > 1 and source.strip() and \
                source.strip() in history[-1]:
            return len(history) - 1
        return getattr(self.shell, "execution_count", 0) or 0

    def _cell_filename(self, source: str) -> tuple[str, str]:
        count = self._cell_number(source)
        filename, suffix = f"<xla-cell-{count}>", 0
        while filename in linecache.cache and \
                "".join(linecache.cache[filename][2]).rstrip() != source.rstrip():
            suffix += 1
            filename = f"<xla-cell-{count}.{suffix}>"
        name = f"xla_cell_{count}" + (f"_{suffix}" if suffix else "")
        return filename, name

    @staticmethod
    def _is_user_error(error: BaseException, filename: str) -> bool:
        import xlanb
        if isinstance(error, (xlanb.CompileError, CellSyntaxError, MagicError)):
            return True
        if any(cls.__name__ in USER_RUNTIME_ERRORS for cls in type(error).__mro__):
            return True
        return cell_frame_line(error, filename) is not None

    # -- %xla_report ----------------------------------------------------------------------
    @line_magic
    def xla_report(self, line: str):
        """`%xla_report f`: show the compile report of a jitted function (or a Compiled,
        a CompileReport); with no argument, the last `%%xla` cell's report."""
        expr = line.strip()
        if not expr:
            if self.last_report is None:
                print("%xla_report: no %%xla cell has run yet; pass a jitted function",
                      file=sys.stderr)
                return None
            self.display(self.last_report)
            return None
        try:
            source = self.shell.ev(expr)
            report = Report(source)
        except Exception as error:
            print(f"%xla_report: {type(error).__name__}: {error}", file=sys.stderr)
            return None
        self.display(report)
        return None

    # -- display ----------------------------------------------------------------------------
    def display(self, report: Report) -> None:
        """One output: report JSON + HTML + text (+ the widget view inside a kernel)."""
        from IPython.display import display
        bundle = report.mimebundle()
        if getattr(self.shell, "kernel", None) is not None:
            widget = report.widget()
            if widget is not None:
                view = widget._repr_mimebundle_()
                key = "application/vnd.jupyter.widget-view+json"
                if view and key in view:
                    bundle[key] = view[key]
        display(bundle, raw=True)


# -- pieces -----------------------------------------------------------------------------------
def compiler_flags(dump: str | None, trace: str | None, notes: list[str]):
    """--xla_dump_to / --xla_trace_to for this cell, on top of XLANB_FLAGS and earlier
    `xlanb.config.update` calls, where the runtime knows those flags (otherwise a note says
    the option was skipped)."""
    from xlanb_runtime import flags
    known = {f.name for f in dataclasses.fields(flags.Flags)}
    values = {}
    for option, flag, value in (("--dump", "xla_dump_to", dump),
                                ("--trace", "xla_trace_to", trace)):
        if value is None:
            continue
        if flag in known:
            values[flag] = os.path.abspath(value)
        else:
            notes.append(f"{option} skipped: this xlanb runtime has no --{flag} flag yet")
    return flags.overriding(**values)


def profile(jitted, values: list, repeat: int) -> dict:
    """Per-kernel, fused and op-by-op times of the compiled cell (into its report)."""
    from ..tracing.boundary import call_params
    from ..tracing.tracer import flatten_args
    compiled = jitted.last_compiled
    leaves, _, _ = flatten_args(tuple(values))
    return compiled.executable.profile(call_params(compiled.traced, leaves), repeats=repeat)


def _copies(values: list) -> list:
    """Fresh input arrays for an eager NumPy run (the cell may update arrays in place)."""
    return [v.copy() if isinstance(v, np.ndarray) else v for v in values]


def compare_runs(cell: CellFunction, jitted, values: list, outputs: dict, repeat: int,
                 interpreted: bool = True) -> dict:
    """Time the compiled cell, the same program op by op, and plain NumPy (interleaved,
    medians), and check the compiled outputs against the references."""
    import xlanb
    others = dict(cell.others)

    def op_by_op():
        with xlanb.disable_jit():
            return jitted(*values)

    runs = {"xlanb": lambda inputs: jitted(*values),
            "numpy": lambda inputs: cell.fn(*inputs)}
    if interpreted:
        runs["op_by_op"] = lambda inputs: op_by_op()
    times: dict[str, list[float]] = {k: [] for k in runs}
    results: dict[str, dict] = {}
    if interpreted:
        op_by_op()                              # its first call traces: not timed
    for _ in range(repeat):
        for kind, run in runs.items():
            inputs = _copies(values) if kind == "numpy" else values
            start = time.perf_counter()
            results[kind] = run(inputs)
            times[kind].append(time.perf_counter() - start)
    cell.others.clear()
    cell.others.update(others)
    references = [k for k in ("op_by_op", "numpy") if k in results]
    per_output = {}
    for name, value in outputs.items():
        diffs = [difference(value, results[r].get(name)) for r in references]
        per_output[name] = {"allclose": all(d[0] for d in diffs),
                            "max_abs_diff": max((d[1] for d in diffs), default=0.0)}
    median = {k: statistics.median(v) for k, v in times.items()}
    fused = median["xlanb"]
    return {
        "xlanb_seconds": fused,
        "op_by_op_seconds": median.get("op_by_op"),
        "numpy_seconds": median["numpy"],
        "speedup_vs_op_by_op": median["op_by_op"] / fused if "op_by_op" in median else None,
        "speedup_vs_numpy": median["numpy"] / fused,
        "allclose": all(o["allclose"] for o in per_output.values()),
        "max_abs_diff": max((o["max_abs_diff"] or 0.0 for o in per_output.values()),
                            default=0.0),
        "reference": " and ".join({"op_by_op": "op by op", "numpy": "NumPy"}[r]
                                  for r in references),
        "repeat": repeat,
        "outputs": per_output,
    }


def difference(value, reference) -> tuple[bool, float | None]:
    """(close enough?, max abs difference): float32 to 1e-3 relative to the output's
    largest magnitude (fused sums round differently), float64 to 1e-6; others exact."""
    if reference is None:
        return False, None
    a, b = np.asarray(value), np.asarray(reference)
    if a.shape != b.shape:
        return False, None
    if a.size == 0:
        return True, 0.0
    if np.issubdtype(a.dtype, np.inexact) or np.issubdtype(b.dtype, np.inexact):
        wide = np.promote_types(a.dtype, b.dtype)
        tol = 1e-6 if np.finfo(wide).bits >= 64 else 1e-3
        scale = float(np.nanmax(np.abs(b))) if np.isfinite(b).any() else 1.0
        close = bool(np.allclose(a, b, rtol=tol, atol=tol * max(scale, 1e-30),
                                 equal_nan=True))
        finite = np.isfinite(a) & np.isfinite(b)
        diff = float(np.max(np.abs(a[finite].astype(np.float64) - b[finite]),
                            initial=0.0))
        return close, diff
    equal = bool(np.array_equal(a, b))
    diff = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0))
    return equal, diff


def fallback_message(jitted, reason) -> str:
    report = jitted._autocluster.report
    lines = [f"%%xla: compiled {plural(len(report.clusters), 'cluster')}; "
             f"{plural(len(report.breaks), 'part')} ran with NumPy:"]
    for b in report.breaks:
        quote = quote_location(b.location or "")
        lines.append(f"  {b.location or '?'}: {b.what}: {b.reason}")
        if quote:
            lines.append("    " + quote.split("| ", 1)[-1])
    if reason is not None and not report.breaks:
        lines.append(f"  {reason}")
    return "\n".join(lines)


def cell_frame_line(error: BaseException, filename: str) -> int | None:
    """The line of the innermost traceback frame that is in the cell, or None."""
    line = None
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def short_error(error: BaseException, filename: str) -> str:
    """`Type: message` and the user's line, e.g.

        ShapeMismatchError: `operator +` at <xla-cell-4>:2: operands could not be ...
          <xla-cell-4>:2 | c = a + b
    """
    message = f"{type(error).__name__}: {error}"
    quote = quote_location(str(error))
    if quote is None:
        line = cell_frame_line(error, filename)
        if line is not None:
            quote = quote_location(f"{filename}:{line}")
    return message + (f"\n{quote}" if quote else "")
