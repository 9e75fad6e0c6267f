"""The monomorphic call path: a jitted function called again with arrays like last time.

Most programs are called in a loop with the same kinds of arrays.  The general path
(`JitFunction.__call__`) builds a signature key of the pytree, hashes it, looks it up, checks
aliasing and unpacks the leaves, about 7 us per call on this project's machines (and up to
~17 us right after a kernel that streamed a large matrix through the caches, since each
step's code and data are then cold).  For a call made only of ndarrays, `make_guard` writes
one function that checks exactly that signature (type, shape, strides, dtype), that no two
arguments share a base, and runs the program: one guard, as JavaScript engines' inline
caches and TorchDynamo's guards do.  Anything else (another signature, a pytree, a Python
number) returns MISS and takes the general path, which stays the reference.  Several
outputs (a tuple, a dict) are finished as the general path does (`Compiled.finish_pure`);
a program that writes its arguments back or returns one of them writes back and returns
through `Compiled.finish_writes`, after an owner check that is find_aliases' own and a
check that the written arguments are writeable (its kernels may write them in place,
runtime buffers.py: then the guard copies nothing; a momentum step on 64 elements lost
two allocations and two copies).

Where the executable offers its driver's parts (`Executable.inline`), the guard holds the
kernel calls itself: one Python frame per call, and no C-contiguity test of an argument whose
guarded strides are C-contiguous.  Cold (after 32 MB streamed), a 2000x2000 GEMV through a
guard that called the driver cost ~25 us over NumPy's `A @ x`; inlined, ~3 us.  The guard
also checks that the program still runs the executable it was written for (a tiered
program switches to compiled code): when not, it misses, and the caller writes a new guard
(`is_stale`).

The guard calls its kernels' compiled entry points, not their Numba dispatchers
(`_entry_points`): its checks (type, dtype, shape, strides, alignment: `_owner_check` for
a program that writes back, one flag per array for a pure one) already pin the one
overload the dispatcher would pick, at ~0.3-0.4 us a kernel call (axpby of 100 elements:
2.2 -> 1.9 us, NumPy 1.5).

`guard.entry` is the same guard as the jitted function's `__call__` (api.py installs it on
a class of the function's own): one frame less per call, ~3 us cold on that GEMV.
"""
from __future__ import annotations

import re

from typing import Callable

import numpy as np

MISS = object()                 # the guard did not match: take the general path
UNSET = object()                # an entry's argument the call did not pass
MAX_ARGS = 16


def make_guard(compiled, args: tuple, general: Callable | None = None,
               disabled=None) -> Callable | None:
    """`guard(args) -> result | MISS` for calls of `compiled` with arrays like `args`, or
    None where the general path must run every call (not all ndarrays, arguments that go
    in converted, an over-budget program that runs eagerly).  With `general` (the
    jitted function's own `__call__`) and `disabled` (a ContextVar: jit turned off),
    `guard.entry(self, p0, ..., /, *rest, **kwargs)` is the same guard as a `__call__`,
    calling `general` where the guard misses."""
    traced = compiled.traced
    pure = traced.is_pure
    if not (pure or _arrays_in(traced)) or compiled.runs_eagerly or \
            not 0 < len(args) <= MAX_ARGS:
        return None
    numbers = _number_leaves(traced, args)
    if numbers is None:
        return None
    executable = compiled._executable
    inline = getattr(executable, "inline", None) \
        if getattr(executable, "tier", "compiled") == "compiled" else None
    if not pure and any(not args[i].flags.c_contiguous for i in traced.param_leaves):
        inline = None       # the prologue's C-ordered copy would take the caller's name:
        # writes back must reach the caller's array, so the driver copies on its own
    # a Fortran-ordered (or moved-axes) argument a<i> goes in as its transpose p<j>
    # into C order (call_params): `a<i>.T`, or `a<i>.transpose(A<i>)`
    transposed = {i: f"p{j}" for j, i in enumerate(traced.param_leaves)
                  if j in traced.transposed_params}
    into_c = {i: traced.transposed_params[j] for j, i in enumerate(traced.param_leaves)
              if j in traced.transposed_params}
    names = _argument_names(len(args), compiled.traced.param_leaves,
                            {**numbers, **transposed})
    env = {"MISS": MISS, "ND": np.ndarray, "C": compiled, "E": executable,
           "GENERAL": general, "DISABLED": disabled, "_asarray": np.asarray,
           "FINISH": compiled.finish_pure if pure else compiled.finish_writes}
    # MISSED: what a miss does, `return MISS` in the guard, the general path in the entry
    checks = [f"    if len(args) != {len(args)} or C._executable is not E:", "        MISSED",
              f"    {', '.join(names)}{',' if len(args) == 1 else ''} = args"]
    checks += _signature_checks(names, args, env)
    # scalars are values: nothing to alias or write back
    arrays = [name for name, a in zip(names, args) if type(a) is np.ndarray]
    # read-only written arguments take the general path, which raises before writing
    # any: the program may write an argument in place as it runs (buffers.py)
    written = {names[traced.param_leaves[p]] for p, _ in traced.writebacks}
    views = _returns_only_views(traced)     # reads nothing, writes nothing: no aliasing
    checks += [] if views else _alias_check(arrays) if pure else _owner_check(arrays, written)
    params = [numbers.get(i, transposed.get(i, names[i])) for i in traced.param_leaves]
    # a Python number goes in as call_params makes it: NumPy's 0-d array of it
    checks += [f"    {numbers[i]} = _asarray({names[i]})" for i in sorted(numbers)]
    for i in sorted(transposed):
        env[f"A{i}"] = into_c[i]
        fortran = into_c[i] == tuple(range(len(into_c[i]) - 1, -1, -1))
        checks.append(f"    {transposed[i]} = {names[i]}" +
                      (".T" if fortran else f".transpose(A{i})"))
    single = compiled._single and not numbers or pure and compiled._single_output
    if compiled._relayout and inline is None:   # the driver's outputs go to FINISH,
        single = False                          # which lays them out in NumPy's order
    if pure and inline is not None and not views:   # then its kernels' entry points
        checks += [line for name in arrays
                   for line in (f"    if not {name}.flags.aligned:", "        MISSED")]
    # FINISH's arguments before the outputs: the params and leaves finish_writes takes
    before = "" if pure else f"({', '.join(params)},), ({', '.join(names)},), "
    if views:
        body = _returned(traced.out_tree, _returned_leaves(traced, (), params, names, env))
    elif inline is None:
        call = f"C._driver({', '.join(params)})"
        body = [f"    return {call}[0]{compiled._single_suffix}" if single else
                f"    return FINISH({before}{call})"]
    else:
        env = dict(inline.env, **env)
        env.update(_entry_points(inline.env))   # every argument's alignment checked
        body = _inlined_driver(inline, [np.asarray(args[i]).transpose(into_c[i])
                                        if i in transposed else np.asarray(args[i])
                                        for i in traced.param_leaves],
                               compiled._single_suffix if single else None, compiled,
                               before, params, names, env)
    body, checks = _numbers_passed_as_they_are(body, checks, numbers, names)
    lines = ["def guard(args):"] + [line.replace("MISSED", "return MISS") for line in checks]
    lines += body
    if general is not None:         # a call: guarded, counted, or the general path
        lines += _entry(names, checks[3:], env) + ["    self._hits += 1"] + body
    exec(compile("\n".join(lines) + "\n", "<xlanb call guard>", "exec"), env)
    guard = env["guard"]
    guard.compiled, guard.executable = compiled, executable
    guard.entry = env.get("entry")
    return guard


def _entry(names: list[str], signature: list[str], env: dict) -> list[str]:
    """`entry(self, p0=UNSET, ..., /, *rest, **kwargs)`: the arguments arrive as the
    names the checks read, not packed into a tuple and unpacked again (~0.1-0.3 us a
    call).  Positional-only, so a keyword named like one of them stays a keyword; a call
    with fewer arguments leaves the last one UNSET, more fill `rest`: both miss."""
    env["UNSET"] = UNSET
    listed = ", ".join(names)
    miss = f"return GENERAL(self, {listed})"
    return [f"def entry(self, {', '.join(f'{n}=UNSET' for n in names)}, /, *rest, **kwargs):",
            f"    if rest or kwargs or {names[-1]} is UNSET or DISABLED.get() or "
            "C._executable is not E:",
            f"        return GENERAL(self, *[a for a in ({listed},) if a is not UNSET], "
            "*rest, **kwargs)"] + [line.replace("MISSED", miss) for line in signature]


def is_stale(guard: Callable, compiled) -> bool:
    """Whether `guard` was written for `compiled` and its executable has since changed."""
    return guard.compiled is compiled and guard.executable is not compiled._executable


def _number_leaves(traced, args: tuple) -> dict[int, str] | None:
    """{argument index: the parameter name its 0-d array takes} for the Python numbers
    among `args`, each a traced parameter (`Traced.scalar_params`); None where an argument
    is neither an ndarray, a NumPy scalar parameter (it goes in as it is, as in
    call_params) nor such a number (a static number, a pytree)."""
    params = {i: j for j, i in enumerate(traced.param_leaves)}
    numbers = {}
    for i, a in enumerate(args):
        if type(a) is np.ndarray or isinstance(a, np.generic) and i in params and \
                params[i] not in traced.scalar_params:
            continue
        if type(a) not in _NUMBERS or params.get(i) not in traced.scalar_params:
            return None
        numbers[i] = f"p{params[i]}"
    return numbers


# Python numbers traced as weak-typed 0-d parameters (a bool is static: api._WEAK_SCALARS)
_NUMBERS = (int, float, complex)
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _numbers_passed_as_they_are(body: list[str], checks: list[str], numbers: dict[int, str],
                                names: list[str]) -> tuple[list[str], list[str]]:
    """A kernel takes a Python number's value (`p0[()]`, a `scalar` argument: cpu.py
    `pass_scalar_params`) as the number itself: its 0-d array (np.asarray: float64,
    int64 within the checked bounds, complex128, which Numba types the number as) is
    made only where something else reads it."""
    for i, param in numbers.items():
        body = [line.replace(f"{param}[()]", names[i]) for line in body]
        if not any(re.search(rf"\b{param}\b", line) for line in body):
            checks = [line for line in checks if line != f"    {param} = _asarray({names[i]})"]
    return body, checks


def _argument_names(count: int, param_leaves, numbers: dict[int, str]) -> list[str]:
    """Argument i is named p<j> when it is the program's parameter j (the name the driver's
    body reads it by), else a<i> (a Python number too: its 0-d array takes the p<j>)."""
    names = [f"a{i}" for i in range(count)]
    for j, i in enumerate(param_leaves):
        if i not in numbers:
            names[i] = f"p{j}"
    return names


def _signature_checks(names: list[str], args: tuple, env: dict) -> list[str]:
    lines = []
    for i, (name, a) in enumerate(zip(names, args)):
        if isinstance(a, np.generic):       # a NumPy scalar: its type and dtype
            env[f"N{i}"], env[f"D{i}"] = type(a), a.dtype
            lines += [f"    if type({name}) is not N{i} or {name}.dtype is not D{i}:",
                      "        MISSED"]
            continue
        if type(a) is not np.ndarray:       # a Python number: its type (ints: NumPy's int64)
            env[f"N{i}"] = type(a)
            bounds = f" or not {_INT64[0]} <= {name} <= {_INT64[1]}" if type(a) is int else ""
            lines += [f"    if type({name}) is not N{i}{bounds}:", "        MISSED"]
            continue
        env[f"S{i}"], env[f"T{i}"], env[f"D{i}"] = a.shape, a.strides, a.dtype
        lines += [f"    if type({name}) is not ND or {name}.shape != S{i} or "
                  f"{name}.strides != T{i} or {name}.dtype is not D{i}:",
                  "        MISSED"]
    return lines


def _alias_check(names: list[str]) -> list[str]:
    """find_aliases: arrays sharing a base take the general path."""
    n = len(names)
    if n <= 1:
        return []
    lines = [f"    o{i} = {name} if {name}.base is None else {name}.base"
             for i, name in enumerate(names)]
    if n <= 4:                  # a few identity tests cost less than a set of ids
        pairs = " or ".join(f"o{i} is o{j}" for i in range(n) for j in range(i + 1, n))
        return lines + [f"    if {pairs}:", "        MISSED"]
    owners = ", ".join(f"id(o{i})" for i in range(n))
    return lines + [f"    if len({{{owners}}}) != {n}:", "        MISSED"]


def _arrays_in(traced) -> bool:
    """Whether the program takes the caller's arrays themselves (no flattened alias
    groups, scalars or datetimes converted on the way in: call_params is a selection)."""
    return not (traced.flat_params or traced.scalar_params or traced.time_params)


# bits of `ndarray.flags.num`, read together from one flags object (~0.1 us each)
OWNDATA, ALIGNED, WRITEABLE = 0x0004, 0x0100, 0x0400
OWNED_WRITEABLE = OWNDATA | WRITEABLE


def _owner_check(names: list[str], written=frozenset()) -> list[str]:
    """find_aliases, exactly, for a program that writes its arguments back: each argument
    owns its memory or views an ndarray that does, no two share an owner; else the
    general path (views of a buffer NumPy does not own may overlap unseen).  The
    `written` ones must be writeable too, and every one aligned (the guard calls its
    kernels' entry points compiled for aligned arrays, `_entry_points`): an argument
    owning its memory is checked for all with one `flags` object."""
    lines = []
    for i, name in enumerate(names):
        own = OWNDATA | ALIGNED | (WRITEABLE if name in written else 0)
        view = WRITEABLE | ALIGNED if name in written else ALIGNED
        lines += [f"    o{i} = {name}.base",
                  f"    if o{i} is None:",
                  f"        if {name}.flags.num & {own} != {own}:",
                  "            MISSED",
                  f"        o{i} = {name}",
                  f"    elif type(o{i}) is not ND or not o{i}.flags.owndata or "
                  f"{name}.flags.num & {view} != {view}:",
                  "        MISSED"]
    return lines + _alias_check(names)[len(names):]


def _entry_points(env: dict) -> dict:
    """{name: the compiled entry point} for each kernel of `env` whose Numba dispatcher
    holds one overload, taking its arrays C-contiguous and aligned.  The dispatcher's own
    type resolution (~0.3-0.4 us a kernel call at 64 elements) would pick that overload
    again: a write-back guard has checked each argument's type, dtype, shape, strides and
    alignment (`_owner_check`), and the driver's own buffers are C-contiguous arrays
    of the dtypes the kernel was compiled for."""
    from numba import types
    from numba.core.dispatcher import Dispatcher
    points = {}
    for name, value in env.items():
        if not isinstance(value, Dispatcher) or len(value.overloads) != 1:
            continue
        ((signature, compiled),) = value.overloads.items()
        if all(not isinstance(t, types.Array) or t.layout == "C" and t.aligned
               for t in signature):
            points[name] = compiled.entry_point
    return points


def _several_outputs(outs: tuple[str, ...], compiled, before: str = "",
                     params: list[str] = (), names: list[str] = (),
                     env: dict | None = None) -> list[str]:
    """The return of several outputs: a tuple of distinct arrays as it is (finish_pure
    costs ~2-3 us on a 64-element optimizer step); else, or where two are one object
    (distinct_outputs copies one), `FINISH`."""
    traced = compiled.traced
    tree = traced.out_tree
    listed = f"({', '.join(outs)},)"
    if before:                                    # written back: finish_writes
        return _written_back(outs, compiled, before, listed, params, names, env)
    if not _leaves_only(tree) or len(outs) != len(tree.children) or \
            traced.const_outputs or traced.scalar_outputs or \
            not all(out.isidentifier() for out in outs) or len(set(outs)) < len(outs):
        return [f"    return FINISH({listed})"]
    return [f"    return {listed} if {_distinct(outs)} else FINISH({listed})"
            if len(outs) > 1 else f"    return {listed}"]


def _leaves_only(tree) -> bool:
    """An output pytree the guard returns itself: None, one leaf, a tuple of a few."""
    return tree.kind in ("none", "leaf") or tree.kind == "tuple" and \
        len(tree.children) <= 4 and all(c.kind == "leaf" for c in tree.children)


def _distinct(outs) -> str:
    return " and ".join(f"{a} is not {b}" for i, a in enumerate(outs) for b in outs[i + 1:])


def _returned(tree, leaves: list[str]) -> list[str]:
    """The return statement of `leaves` in the shape of `tree` (`_leaves_only`)."""
    if tree.kind == "none":
        return ["    return None"]
    if tree.kind == "leaf":
        return [f"    return {leaves[0]}"]
    return [f"    return ({', '.join(leaves)},)"]


def _returns_only_views(traced) -> bool:
    """A program whose every output is the caller's argument or a view of one, that writes
    nothing back and checks nothing (`return x[1:-1], x.T`): its driver computes nothing a
    caller sees, the guard returns the views itself (~0.5 us against the general path's
    ~5)."""
    count = traced.out_tree.num_leaves
    return count > 0 and _leaves_only(traced.out_tree) and not traced.writebacks and \
        not traced.effects and not _converted_outputs(traced) and \
        set(traced.arg_outputs) == set(range(count)) and \
        all(s.output is None for s in traced.arg_outputs.values())


def _converted_outputs(traced) -> bool:
    return bool(traced.const_outputs or traced.scalar_outputs or traced.time_outputs or
                traced.bytes_outputs)


def _returned_leaves(traced, outs, params, names, env: dict) -> list[str]:
    """The returned leaves as expressions: the driver's outputs, and where NumPy returns
    the caller's memory (`Traced.arg_outputs`) the caller's own array or the view of it
    (its steps' `expression`s, their values in `env`), as finish_call does."""
    leaves = list(outs[:traced.out_tree.num_leaves]) or \
        [""] * traced.out_tree.num_leaves
    for index, source in traced.arg_outputs.items():
        if source.leaf is not None:
            leaves[index] = names[source.leaf]
            continue
        view = leaves[source.output] if source.output is not None else \
            params[source.param]
        for k, step in enumerate(source.steps):
            view, env[f"V{index}_{k}"] = step.expression(view, f"V{index}_{k}")
        leaves[index] = view
    return leaves


def _written_back(outs: tuple[str, ...], compiled, before: str, listed: str,
                  params: list[str], names: list[str], env: dict) -> list[str]:
    """The end of a program that writes arguments back or returns the caller's memory: its
    writeback copies inline (finish_writes costs ~3.9 us on a 64-element momentum step,
    its two copies ~1 us), none for an argument the program wrote in place (its output
    is the parameter itself, buffers.py); the guard checked that they are writeable.
    Returned arguments and views of them as finish_call makes them (`_returned_leaves`).
    Anything more (scalars, constants, nested pytrees) is FINISH's."""
    traced = compiled.traced
    tree = traced.out_tree
    if not _leaves_only(tree) or _converted_outputs(traced) or \
            not all(out.isidentifier() for out in outs):
        return [f"    return FINISH({before}{listed})"]
    # two returned outputs the driver gave as one buffer: FINISH copies one (distinct_outputs)
    computed = [outs[i] for i in range(tree.num_leaves) if i not in traced.arg_outputs]
    if len(set(computed)) < len(computed):
        return [f"    return FINISH({before}{listed})"]
    lines = [f"    if not ({_distinct(computed)}):",
             f"        return FINISH({before}{listed})"] if len(computed) > 1 else []
    sources = [outs[o] for _, o in traced.writebacks]
    targets = [params[p] for p, _ in traced.writebacks]
    lines += [f"    np.copyto({t}, {src}, casting='unsafe')"
              for t, src in zip(targets, sources) if t != src]
    return lines + _returned(tree, _returned_leaves(traced, outs, params, names, env))


def _inlined_driver(inline, params: list, suffix: str | None, compiled,
                    before: str = "", param_names: list[str] = (), names: list[str] = (),
                    env: dict | None = None) -> list[str]:
    """The driver's lines inside the guard: a parameter's C-contiguity test only where the
    guarded strides are not C-contiguous (shape and strides decide the flag).  `suffix`
    turns a single 0-d output into the scalar NumPy returns (`[()]`, `.item()`); None:
    several outputs, finished as the general path does (Compiled.finish_pure)."""
    lines = [f"    {line}" for line, p in zip(inline.prologue, params)
             if not p.flags.c_contiguous]
    lines.append(inline.body.rstrip("\n"))
    outs = list(inline.outs)
    lines += _laid_out_lines(outs, compiled._relayout, env)
    if suffix is None:      # effect tokens (random draws, checks) trail: nobody reads them
        outs = tuple(outs[:len(outs) - compiled.traced.effects])
        lines += _several_outputs(outs, compiled, before, param_names, names, env)
    else:
        lines.append(f"    return {outs[0]}{suffix}")
    return [line for line in lines if line]


def _laid_out_lines(outs: list[str], relayouts: dict, env: dict | None) -> list[str]:
    """Lines giving each output of `relayouts` NumPy's memory order (boundary.laid_out),
    one flag tested where it is C or F order; `outs` then names the results."""
    lines = []
    for i, order in relayouts.items():
        name = f"r{i}"
        flag = "c_contiguous" if order == tuple(range(len(order))) else \
            "f_contiguous" if order == tuple(reversed(range(len(order)))) else None
        lines.append(f"    {name} = {outs[i]}")
        if flag is not None:
            lines += [f"    if not {name}.flags.{flag}:",
                      f"        {name} = LAID_OUT([{name}], {{0: {order!r}}})[0]"]
        else:
            lines.append(f"    {name} = LAID_OUT([{name}], {{0: {order!r}}})[0]")
        outs[i] = name
    if lines and env is not None:
        from .tracing.boundary import laid_out
        env["LAID_OUT"] = laid_out
    return lines
