"""`xlanb.jit`: trace once per signature, compile, cache; plus the JAX-style stages.

    f = xlanb.jit(model_fn)
    f(x, y, z)                          # trace -> optimize -> fuse -> Numba -> run
    c = f.lower(x, y, z).compile()      # Lowered -> Compiled, each with .as_text()
    c.kernels, c.cost_analysis(), c.memory_analysis(), c.report

One executable per (argument structure, shapes, dtypes, static args, target, options).
Kernels are keyed by their source, which does not contain sizes, so a new shape re-traces
and re-plans but reuses compiled machine code.  `disable_jit()` runs the same traced graph
op by op in the reference interpreter: the "without XLA" baseline.
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import inspect
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

import xlanb_runtime
from xlanb_runtime import background, flags, numpy_tier, trace_events
from xlanb_runtime.ir import Op, interpret, print_graph
from xlanb_runtime.report import CompileReport

from . import mono_call
from .errors import AliasingError
from .pytree import make_unflattener
from .tracing import free_variables, trace
from .tracing.boundary import (as_scalars, call_params, check_writeable, distinct_outputs,
                               find_aliases, finish_call, laid_out, output_relayouts)
from .tracing.lowering.stride_tricks import flag_facts
from .internal_errors import named_internal_errors
from .tracing.tracer import current_context, flatten_args, has_tracer, trace_learning_statics

RECOMPILE_WARNING_THRESHOLD = 8
_MISS = mono_call.MISS          # read per call: one global lookup, not two

_jit_disabled: contextvars.ContextVar[bool] = contextvars.ContextVar("jit_disabled",
                                                                     default=False)


@contextlib.contextmanager
def disable_jit():
    """Inside, jitted functions run op by op through the reference interpreter."""
    token = _jit_disabled.set(True)
    try:
        yield
    finally:
        _jit_disabled.reset(token)


class RecompilationWarning(UserWarning):
    """A jitted function keeps compiling for new shapes."""


@dataclass(frozen=True)
class CacheInfo:
    hits: int
    misses: int
    currsize: int


def _leaf_signature(leaf, static: bool = False) -> Any:
    """An array leaf's shape, dtype and layout; a Python scalar's type only (it is traced,
    weakly typed) unless it had to be static; any other leaf's value."""
    if isinstance(leaf, np.ndarray):
        if type(leaf) is not np.ndarray:     # a subclass is traced again (and refused)
            return (leaf.shape, leaf.dtype, leaf.strides, type(leaf))
        return (leaf.shape, leaf.dtype, leaf.strides)
    if isinstance(leaf, np.generic):
        return ((), leaf.dtype)
    if not static and type(leaf) in _WEAK_SCALARS:
        return ("weak", type(leaf))
    return ("static", type(leaf), _static_key(leaf))


_WEAK_SCALARS = (int, float, complex)   # a Python bool is static: tracing it as np.bool_
                                        # would change Python's `True + True == 2`


class Lowered:
    """A traced, not yet optimized program (`as_text()` is the IR before optimization)."""

    def __init__(self, jitted: "JitFunction", traced, options, report: CompileReport):
        self._jitted, self.traced, self.options, self.report = jitted, traced, options, report

    @property
    def graph(self):
        return self.traced.graph

    def as_text(self) -> str:
        return print_graph(self.traced.graph)

    def compiled_before(self) -> bool:
        """Whether this program's kernels are in the disk cache (a compile only loads)."""
        return background.compiled_before(background.program_key(
            self.traced.graph, self._jitted.target, self.options, flags.from_environment()))

    def compile(self) -> "Compiled":
        with named_internal_errors(self._jitted.fn, compiling=True):
            executable = xlanb_runtime.compile(self.traced.graph, self._jitted.target,
                                               self.options, self.report)
        compiled = Compiled(executable, self.traced, self._jitted._sources)
        settings = flags.from_environment()
        if self._jitted.target == "cpu" and settings.xla_tiered:   # a later process loads
            background.remember(background.program_key(
                self.traced.graph, "cpu", self.options, settings))
        return compiled

    def compile_tiered(self) -> "Compiled":
        """A program that answers at once on the NumPy tier (its optimized graph op by op)
        and switches to its compiled executable once a worker process has compiled it."""
        settings = flags.from_environment()
        with named_internal_errors(self._jitted.fn, compiling=True):
            executable = numpy_tier.plan_program(self.traced.graph, self.options, self.report)
        compiled = Compiled(executable, self.traced, self._jitted._sources)
        graph, target, options = self.traced.graph, self._jitted.target, self.options
        report = self.report

        def switch(reply: dict) -> None:          # on the worker's reader thread
            background.add_worker_phases(report, reply)
            with flags.active(settings):
                done = xlanb_runtime.compiler._compile(graph, target, options, report)
            compiled.switch_to(done)

        compiled.background = background.compile_in_background(graph, target, options,
                                                               settings, switch)
        return compiled


class Compiled:
    """A compiled program: call it, read it (`as_text`), and see what it costs."""

    def __init__(self, executable, traced, sources=()):
        self.traced = traced
        self.sources = sources or ()     # free variables: one more argument of each call
        self.background: background.Job | None = None    # a tiered program's compile
        self._switch_lock = threading.Lock()
        self._set_executable(executable)
        self._pure = traced.is_pure and not traced.scalar_params
        # one array out, returned as it is (or as the scalar NumPy returns): with Python
        # numbers among the params too (the call guard converts them itself)
        self._single_output = traced.is_pure and traced.out_tree.num_leaves == 1 and \
            traced.out_tree.kind == "leaf" and not traced.const_outputs
        self._single = self._pure and self._single_output
        # how the single output returns: "" (as it is), "[()]" (np.float64 & co.) or
        # ".item()" (a Python number), the suffix the call guards write too
        self._single_suffix = {"numpy": "[()]", "python": ".item()"}.get(
            traced.scalar_outputs.get(0), "")
        self._unflatten = make_unflattener(traced.out_tree)

    def _set_executable(self, executable) -> None:
        self._executable = executable
        # Over the compile budget nothing was compiled and the program would run op by op
        # in the interpreter: the user's own function does that with NumPy, faster (its
        # slice writes stay in place).  Not for collectives, which only programs perform.
        self.runs_eagerly = bool(getattr(executable, "over_budget", "")) and not any(
            n.op is Op.ALL_REDUCE for n in executable.graph.nodes)
        if getattr(executable, "tier", "compiled") == "numpy":
            self._driver = self._numpy_tier_call
        else:
            self._driver = executable.driver
        # outputs it may return in another memory layout than NumPy's (boundary.py)
        self._relayout = output_relayouts(self.traced, executable)

    # -- tiers -------------------------------------------------------------------------
    @property
    def tier(self) -> str:
        """What runs the next call: "numpy" (op by op, kernels still compiling or their
        compile failed) or "compiled"."""
        return getattr(self._executable, "tier", "compiled")

    @property
    def numpy_tier_calls(self) -> int:
        """Calls answered on the NumPy tier (0 for a program compiled before its first)."""
        return self._numpy_calls

    _numpy_calls = 0
    _warned = False

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a tiered program's background compile: True once it is over (switched
        to compiled, or failed and staying on the NumPy tier), False after `timeout` s."""
        return self.background is None or self.background.wait(timeout)

    def switch_to(self, executable) -> None:
        """Run later calls on `executable` (the compiled tier), recording the switch."""
        with self._switch_lock:
            report = executable.timeline
            now = time.perf_counter()
            report.add("switch-over", "tier", now, 0.0, numpy_tier_calls=self._numpy_calls)
            if flags.current_tracing():
                trace_events.add("switch-over", "tier", now, 0.0, module=report.name,
                                 numpy_tier_calls=self._numpy_calls)
            self._set_executable(executable)

    def _numpy_tier_call(self, *arrays):
        """A call on the NumPy tier.  If it raises (a NumPy error the compiled program
        raises too, or a fault of this tier), the compiled executable answers instead:
        waiting for it costs time, never a different result."""
        executable = self._executable
        start = time.perf_counter()
        try:
            outs = executable.driver(*arrays)
        except Exception:
            if self.background is None or not self.background.wait() or \
                    self.tier == "numpy":
                raise
            return self._driver(*arrays)
        finally:
            if self.background is not None:
                self.background.start()        # after the first answer (no-op later)
        self._numpy_calls += 1
        job = self.background
        if job is not None and job.done and not job.ok and not self._warned:
            self._warned = True                  # failed: say so once, in the caller
            background.warn_failed(executable.report.name, self.background)
        # the timeline shows the first answers, not a phase per call of a long wait
        if self._numpy_calls <= 3 or flags.current_tracing():
            executable.report.add("numpy-tier call", "tier", start,
                                  time.perf_counter() - start, call=self._numpy_calls)
        if flags.current_tracing():
            trace_events.add("numpy-tier call", "run", start, time.perf_counter() - start,
                             tier="numpy", module=executable.report.name)
        return outs

    @property
    def executable(self):
        """The compiled executable (waits for a tiered program's background compile)."""
        self.wait()
        return self._executable

    def __call__(self, *args, **kwargs):
        if self.sources:
            args = args + (free_variables.fetch(self.sources),)
        leaves, _, _ = flatten_args(args, kwargs, ())
        if not self._pure:
            self._check_aliases(leaves)
        return self.call_flat(leaves)

    def _check_aliases(self, leaves: Sequence[Any]) -> None:
        """A program that writes its arguments was compiled for one pattern of memory
        shared among them (jit's cache key has it; a direct call of a Compiled does not):
        it may write one in place while reading another (runtime buffers.py)."""
        aliases = find_aliases(leaves)
        if (aliases.key if aliases is not None else None) != self.traced.alias_key:
            raise AliasingError(
                "the arguments share memory differently from those this program was "
                "lowered with, and it writes its arguments; call the jitted function "
                "(it compiles for each pattern), or lower with arguments like these")

    def call_flat(self, leaves: Sequence[Any]):
        """Run on the caller's flattened arguments (`flatten_args` order)."""
        if self._pure:
            arrays = [leaves[i] for i in self.traced.param_leaves] \
                if not self.traced.transposed_params else call_params(self.traced, leaves)
            if self._single and not self._relayout:
                out = self._driver(*arrays)[0]
                return out[()] if self._single_suffix == "[()]" else \
                    out.item() if self._single_suffix else out
            return self.finish_pure(self._driver(*arrays))
        params = call_params(self.traced, leaves)
        check_writeable(self.traced, params)     # before: the driver may write in place
        return self.finish_writes(params, leaves, self._driver(*params))

    def finish_writes(self, params, leaves, outs) -> object:
        """An impure program's result from its driver's outputs: what it changed written
        back into the caller's arrays (`params`, taken from `leaves`), then the caller's
        own objects where NumPy returns them (the call guard's too, mono_call.py)."""
        outs = finish_call(self.traced, params, leaves, list(outs))
        if self._relayout:
            laid_out(outs, self._relayout)
        return self._unflatten(outs[:self.traced.out_tree.num_leaves])

    def finish_pure(self, outs) -> object:
        """A pure program's result from its driver's outputs: no array returned twice,
        constants and scalars as NumPy returns them, in the output pytree (the call
        guard's too, mono_call.py)."""
        outs = distinct_outputs(list(outs), self.traced.out_tree.num_leaves)
        if self._relayout:
            laid_out(outs, self._relayout)
        for index, value in self.traced.const_outputs.items():
            outs[index] = value
        return self._unflatten(as_scalars(self.traced.scalar_outputs, outs))

    def as_text(self) -> str:
        return self.executable.as_text()

    @property
    def kernels(self):
        return self.executable.kernels

    @property
    def report(self) -> CompileReport:
        """The compile report: trace, passes, kernels; for a tiered program also its NumPy
        tier, the background compile and the switch-over (waits for the compile)."""
        return self.executable.report

    def cost_analysis(self) -> dict:
        return self.executable.cost_analysis()

    def memory_analysis(self) -> dict:
        return self.executable.memory_analysis()


class JitFunction:
    """The callable `xlanb.jit` returns."""

    def __init__(self, fn: Callable, static_argnums=(), must_compile: bool = True,
                 target: str = "cpu", fusion: bool = True, tiered: bool | None = None):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.tiered = tiered
        self.static_argnums = (static_argnums,) if isinstance(static_argnums, int) \
            else tuple(static_argnums)
        self.must_compile = must_compile
        self.target = target
        self.options = xlanb_runtime.CompileOptions(fusion=fusion)
        self._cache: dict = {}
        self._fast_cache: dict = {}       # cheap structural key -> the same Compiled
        self._mono: Callable | None = None   # the first such key's guard (mono_call.py)
        self._compile_lock = threading.Lock()
        self._interpreted: dict = {}
        self._static_leaves: dict = {}    # in_tree -> leaves that had to be static scalars
        self._flag_leaves: dict = {}      # in_tree -> array leaves whose x.flags it read
        self._hits = self._misses = 0
        self._simple = not self.static_argnums
        self._warned = False
        self.last_compiled: Compiled | None = None
        self._sources: tuple | None = None    # globals/closure values read: see free_variables
        self._autocluster = None
        if not must_compile:
            from .autocluster import AutoClusterer
            self._autocluster = AutoClusterer(self)

    # -- calling -----------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        # called like last time: one guard, first (it matches plain ndarrays only, never
        # a tracer; an autoclustered function has none)
        mono = self._mono
        if mono is not None and not kwargs and not _jit_disabled.get():
            out = mono(args)
            if out is not _MISS:
                self._hits += 1
                return out
        if _jit_disabled.get():
            return self.run_interpreted(args, kwargs)
        if current_context() is not None and has_tracer((args, kwargs)):
            return self.fn(*args, **kwargs)    # called while tracing: inline, as jax.jit
        if self._autocluster is not None:
            return self._autocluster(args, kwargs)
        user_args, args = args, self._with_free_variables(args)
        fast = _fast_signature(args, kwargs) if self._simple else None
        if fast is not None:
            compiled = self._fast_cache.get(fast[0])
            if compiled is not None and find_aliases(fast[1]) is None:
                self._hits += 1
                if mono is not None and not kwargs and mono_call.is_stale(mono, compiled):
                    self._set_guard(compiled, args)      # a tier switched
                if compiled.runs_eagerly:
                    return self.fn(*user_args, **kwargs)
                return compiled.call_flat(fast[1])
        leaves, key = self.signature(args, kwargs)
        compiled = self._cache.get(key)
        if compiled is None:
            with self._compile_lock:      # replica threads share one program, compiled once
                compiled = self._cache.get(key)
                if compiled is None:
                    self._misses += 1
                    compiled = self._compile_new(self._lower(args, kwargs))
                    self.learn_flag_reads(compiled.traced)
                    leaves, key = self.signature(args, kwargs)   # with learned statics
                    self._cache[key] = compiled
                    self.last_compiled = compiled
                    self._check_recompiles(args, kwargs)
                else:
                    self._hits += 1
        else:
            self._hits += 1
        if fast is not None and find_aliases(leaves) is None and \
                _fast_key_fits(compiled, leaves):
            self._fast_cache[fast[0]] = compiled
            if self._mono is None and not kwargs and not self._sources:
                self._set_guard(compiled, args)
        if compiled.runs_eagerly:
            return self.fn(*user_args, **kwargs)
        return compiled.call_flat(leaves)

    def _set_guard(self, compiled: Compiled | None, args: tuple = ()) -> None:
        """The monomorphic guard for calls like `args` (mono_call.py), or none; the guard
        is also this function's `__call__`, on a class of its own (one frame per call)."""
        guard = None if compiled is None else mono_call.make_guard(
            compiled, args, JitFunction.__call__, _jit_disabled)
        self._mono = guard
        entry = guard.entry if guard is not None else None
        if entry is not None and type(self) is JitFunction:
            self.__class__ = type(JitFunction.__name__, (JitFunction,),
                                  {"__module__": __name__,
                                   "__qualname__": JitFunction.__qualname__})
        if type(self) is not JitFunction:
            type(self).__call__ = entry if entry is not None else JitFunction.__call__

    def _with_free_variables(self, args: tuple) -> tuple:
        """`args` and, when the function reads arrays or numbers from globals or closures,
        their current values as one more argument (free_variables)."""
        if self._sources is None:
            self._sources = free_variables.scan(self.fn)
        return args + (free_variables.fetch(self._sources),) if self._sources else args

    def _function_to_trace(self) -> Callable:
        if self._sources:
            return free_variables.with_free_variables(self.fn, self._sources)
        return self.fn

    def _compile_new(self, lowered: Lowered) -> Compiled:
        """Tiered (answer on the NumPy tier, compile in the background) or blocking.  A
        program compiled before (in any process) loads here: its kernels and driver come
        from the disk cache in a fraction of a step (program_cache.py)."""
        if self._is_tiered(lowered) and not lowered.compiled_before():
            return lowered.compile_tiered()
        return lowered.compile()

    def _is_tiered(self, lowered: Lowered) -> bool:
        """Tiered unless turned off (`tiered=False`, `--xla_tiered=false`), compiled for
        CUDA, checking NaNs per kernel or holding a collective (replicas must run the same
        program: they all compile it).  Dumping or tracing (`--xla_dump_to`,
        `--xla_trace_to`) compiles first too, unless `tiered=True`: the files then show
        the compiled program when the call returns."""
        settings = flags.from_environment()
        if self.tiered is False or self.tiered is None and (
                not settings.xla_tiered or settings.xla_dump_to or settings.xla_trace_to):
            return False
        return not (self.target != "cpu" or settings.xla_debug_nans or
                    _has_collective(lowered.graph))

    def wait_compiled(self, timeout: float | None = None) -> bool:
        """Wait for every background compile this function started: True when all are
        over (switched to compiled code, or failed and staying on the NumPy tier)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for compiled in list(self._cache.values()):
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not compiled.wait(left):
                return False
        return True

    def signature(self, args, kwargs) -> tuple[list, tuple]:
        """(flattened leaves, the cache key: structure, shapes, dtypes, layouts, static
        values, and which arguments share memory)."""
        leaves, in_tree, static = flatten_args(args, kwargs, self.static_argnums)
        statics = self._static_leaves.setdefault(in_tree, set())
        key = self._key(leaves, in_tree, static, statics, find_aliases(leaves))
        flagged = self._flag_leaves.get(in_tree)
        if flagged:                # x.flags read: the flags its shape and strides do not fix
            key += (tuple(flag_facts(leaves[i]) for i in sorted(flagged)),)
        return leaves, key

    def _key(self, leaves, in_tree, static, statics, aliases):
        return (in_tree, tuple(_static_key(s) for s in static),
                tuple(_leaf_signature(leaf, i in statics) for i, leaf in enumerate(leaves)),
                aliases.key if aliases is not None else None)

    def learn_flag_reads(self, traced) -> None:
        """The program read x.flags of these leaves: later keys hold their flags too."""
        if traced.flag_leaves:
            self._flag_leaves.setdefault(traced.in_tree, set()).update(traced.flag_leaves)

    def _trace(self, args, kwargs):
        """Trace with Python scalars as weak traced values, static where they must be."""
        leaves, in_tree, _ = flatten_args(args, kwargs, self.static_argnums)
        statics = self._static_leaves.setdefault(in_tree, set())
        with named_internal_errors(self.fn):
            return trace_learning_statics(
                lambda static_leaves: trace(self._function_to_trace(), args, kwargs,
                                            self.static_argnums,
                                            static_leaves=static_leaves,
                                            scalars_traced=True), statics)

    def _lower(self, args, kwargs) -> Lowered:
        report = CompileReport(getattr(self.fn, "__name__", "main"), self.target)
        with report.phase("trace", "trace"):
            traced = self._trace(args, kwargs)
        options = self.options
        if traced.writebacks:       # the program may write them in place (buffers.py)
            options = dataclasses.replace(options, write_into=traced.writebacks)
        return Lowered(self, traced, options, report)

    def run_interpreted(self, args, kwargs):
        """Trace (once per signature) and run op by op in the reference interpreter."""
        args = self._with_free_variables(args)
        leaves, key = self.signature(args, kwargs)
        traced = self._interpreted.get(key)
        if traced is None:
            traced = self._trace(args, kwargs)
            self._interpreted[self.signature(args, kwargs)[1]] = traced
        params = call_params(traced, leaves)
        values = finish_call(traced, params, leaves, interpret(traced.graph, params))
        return traced.unflatten_outputs(values)

    # -- stages and introspection ------------------------------------------------------
    def lower(self, *args, **kwargs) -> Lowered:
        return self._lower(self._with_free_variables(args), kwargs)

    def cache_info(self) -> CacheInfo:
        return CacheInfo(self._hits, self._misses, len(self._cache))

    def clear_cache(self) -> None:
        self._cache.clear()
        self._fast_cache.clear()
        self._set_guard(None)
        self._hits = self._misses = 0

    @property
    def report(self):
        if self._autocluster is not None:
            return self._autocluster.report
        return self.last_compiled.report if self.last_compiled else None

    def _check_recompiles(self, args, kwargs) -> None:
        if self._warned or len(self._cache) <= RECOMPILE_WARNING_THRESHOLD:
            return
        self._warned = True
        culprit = self._changing_argument(args, kwargs)
        warnings.warn(
            f"`{getattr(self.fn, '__qualname__', self.fn)}` has been compiled "
            f"{len(self._cache)} times; {culprit} keeps changing, and every new "
            "signature is a new trace and plan. Pad arrays to a few fixed sizes "
            "(bucketing); a Python number used as a size, slice bound or loop count is "
            "static and compiles once per value: keep it to a few values.",
            RecompilationWarning, stacklevel=3)

    def _changing_argument(self, args, kwargs) -> str:
        """The argument whose leaves took the most distinct signatures across the cache."""
        seen: dict[int, set] = {}
        for key in self._cache:
            for index, signature in enumerate(key[2]):
                seen.setdefault(index, set()).add(signature)
        if not seen:
            return "an argument"
        leaf = max(seen, key=lambda i: len(seen[i]))
        name = _leaf_owner_name(self.fn, args, kwargs, self.static_argnums, leaf)
        values = sorted((_describe_signature(s) for s in seen[leaf]))[:4]
        return f"{name} ({', '.join(values)}, ...)"


def _has_collective(graph) -> bool:
    """An all-reduce anywhere in the program, loop bodies included."""
    for node in graph.nodes:
        if node.op is Op.ALL_REDUCE:
            return True
        if node.op is Op.LOOP and _has_collective(node.arg.body):
            return True
    return False


def _leaf_owner_name(fn, args, kwargs, static_argnums, leaf: int) -> str:
    """`argument 1 (`n`)`: the argument that flattened leaf number `leaf` comes from."""
    names = _parameter_names(fn)
    static = set(static_argnums)
    count = 0
    for position, arg in enumerate(args):
        if position in static:
            continue
        count += len(flatten_args((arg,))[0])
        if leaf < count:
            name = names[position] if position < len(names) else f"#{position}"
            return f"argument {position} (`{name}`)"
    return "a keyword argument"


def _describe_signature(signature) -> str:
    if signature and signature[0] == "static":
        return f"value {signature[2][1]!r}" if isinstance(signature[2], tuple) else "value"
    if signature and signature[0] == "weak":
        return f"Python {signature[1].__name__}"
    return f"shape {signature[0]}"


def _fast_signature(args, kwargs, scalars: bool = True):
    """(hashable key, leaves) for arguments made only of ndarrays, NumPy scalars (by dtype)
    and Python numbers (by type: they are traced) in dicts, lists and tuples, or None: the
    per-call path then avoids building a PyTreeDef.  The leaves come in `flatten_args`
    order (positional args, then kwargs; dict keys sorted).  `scalars=False`: ndarrays only."""
    leaves: list = []
    try:
        key = (_signature(args, leaves, scalars),
               _signature(kwargs, leaves, scalars) if kwargs else None)
    except _NotSimple:
        return None
    return key, leaves


def _fast_key_fits(compiled: Compiled, leaves: list) -> bool:
    """Whether a fast key (Python numbers by type) may stand for `compiled`: it traced
    every Python-number leaf (none had to be static, keyed by its value)."""
    numbers = sum(1 for leaf in leaves if type(leaf) in _WEAK_SCALARS)
    return numbers == len(compiled.traced.scalar_params) and not compiled.traced.flag_leaves


class _NotSimple(Exception):
    pass


def _signature(tree, leaves: list, scalars: bool):
    kind = type(tree)
    if kind is np.ndarray:
        leaves.append(tree)
        return tree.shape, tree.dtype, tree.strides
    if scalars and kind in _WEAK_SCALARS:
        leaves.append(tree)
        return kind
    if scalars and isinstance(tree, np.generic):     # a NumPy scalar: a parameter
        leaves.append(tree)
        return kind, tree.dtype
    if kind is dict:
        try:
            keys = sorted(tree)
        except TypeError:
            raise _NotSimple from None
        return kind, tuple(keys), tuple(_signature(tree[k], leaves, scalars) for k in keys)
    if kind is tuple or kind is list:
        return kind, tuple(_signature(item, leaves, scalars) for item in tree)
    raise _NotSimple


def _parameter_names(fn) -> list[str]:
    try:
        return [p.name for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        return []


def _static_key(value):
    try:
        hash(value)
        return (type(value), value)
    except TypeError:
        return (type(value), id(value))


def jit(fn: Callable | None = None, *, static_argnums=(), must_compile: bool = True,
        target: str = "cpu", fusion: bool = True, tiered: bool | None = None):
    """Compile `fn` (plain NumPy code) with xlanb, like `jax.jit` / `tf.function(jit_compile)`.

    must_compile=False turns on auto-clustering: supported regions are compiled, the rest
    runs with NumPy, and `f.report` lists each cluster and each break with its reason.
    `fusion=False` compiles every op as its own kernel (to see what fusion buys).
    Tiered execution (default: the `xla_tiered` flag, on): a first call that finds no
    compiled program in the disk cache answers at once, running the optimized program op
    by op with NumPy, while a worker process compiles it; later calls switch to the
    compiled code when it is ready (`f.wait_compiled()` waits for that).  `tiered=False`,
    or `XLANB_FLAGS=--xla_tiered=false`, compiles before the first call returns.
    """
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 must_compile=must_compile, target=target, fusion=fusion,
                                 tiered=tiered)
    return JitFunction(fn, static_argnums, must_compile, target, fusion, tiered)
