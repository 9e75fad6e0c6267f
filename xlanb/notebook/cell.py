"""Turning a `%%xla` cell into one function: which names it reads and which it assigns.

    w = x + y * z            # reads x, y, z (arrays in the user's namespace): the inputs
    s = np.sum(w)            # assigns w, s: the outputs; `np` is a global, not an input

becomes, compiled from an AST whose body keeps the cell's own line numbers (so tracebacks,
IR locations and error messages quote `<xla-cell-7>:2`, and `linecache` holds the text):

    def xla_cell_7(x, y, z):
        w = x + y * z
        s = np.sum(w)
        return _collect(locals())        # {'w': w, 's': s}; non-array values set aside

Inputs are the names loaded before the cell assigns them, in order of first use, whose
values in the user's namespace are arrays or numbers; everything else the cell reads (`np`,
functions, lists) is looked up in the user's namespace as a global, as in any notebook
function.  Outputs are the names the cell assigns at its top level (not inside a `def`, a
lambda or a comprehension); names starting with `_` are the cell's own temporaries and are
not outputs, so the compiler may keep them in registers.
"""
from __future__ import annotations

import ast
import linecache
import numbers
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# Python 3.12 added FunctionDef.type_params (PEP 695)
_NO_TYPE_PARAMS = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}


class CellSyntaxError(ValueError):
    """The cell is not a sequence of statements that can become a function body."""


@dataclass
class CellNames:
    reads: list[str] = field(default_factory=list)     # loaded before assigned, in order
    assigns: list[str] = field(default_factory=list)   # top-level stores, in order


class _NameOrder(ast.NodeVisitor):
    """Walks statements in evaluation order (an assignment's value before its targets)."""

    def __init__(self) -> None:
        self.names = CellNames()
        self.bound: set[str] = set()
        self.depth = 0                   # > 0 inside a def/lambda/comprehension

    def load(self, name: str) -> None:
        if name not in self.bound and name not in self.names.reads:
            self.names.reads.append(name)

    def store(self, name: str) -> None:
        if self.depth:
            return
        self.bound.add(name)
        if name not in self.names.assigns:
            self.names.assigns.append(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            if self.depth == 0 or node.id not in self.bound:
                self.load(node.id)
        else:
            self.store(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self.load(node.target.id)                # x += 1 reads x first
        self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.visit(node.target)

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        for stmt in node.body + node.orelse:
            self.visit(stmt)

    def _scoped(self, node: ast.AST, bound_names: tuple[str, ...] = ()) -> None:
        saved = set(self.bound)
        self.bound |= set(bound_names)
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        self.bound = saved

    def visit_FunctionDef(self, node) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        args = node.args
        params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
        self._scoped(ast.Module(body=node.body, type_ignores=[]), tuple(params))
        self.store(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scoped(ast.Module(body=node.body, type_ignores=[]))
        self.store(node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        params = tuple(a.arg for a in node.args.args + node.args.kwonlyargs)
        self._scoped(node.body, params)

    def visit_comprehension_expr(self, node) -> None:
        targets = tuple(n.id for gen in node.generators for n in ast.walk(gen.target)
                        if isinstance(n, ast.Name))
        self._scoped(node, targets)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = \
        visit_comprehension_expr

    def visit_Import(self, node) -> None:
        for alias in node.names:
            self.store((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import


def parse_cell(source: str, filename: str = "<xla-cell>") -> ast.Module:
    try:
        module = ast.parse(source, filename=filename)
    except SyntaxError as error:
        raise CellSyntaxError(f"{filename}:{error.lineno}: {error.msg}") from None
    for node in ast.walk(module):
        if isinstance(node, (ast.Return, ast.Global, ast.Nonlocal)) and \
                not _inside_def(module, node):
            kind = type(node).__name__.lower()
            raise CellSyntaxError(f"{filename}:{node.lineno}: a `%%xla` cell becomes a "
                                  f"function body, so top-level `{kind}` is not allowed")
    return module


def _inside_def(module: ast.Module, target: ast.AST) -> bool:
    for node in ast.walk(module):
        if isinstance(node, _SCOPES) and node is not target:
            if any(child is target for child in ast.walk(node)):
                return True
    return False


def cell_names(module: ast.Module) -> CellNames:
    visitor = _NameOrder()
    for stmt in module.body:
        visitor.visit(stmt)
    return visitor.names


def is_input_value(value: Any) -> bool:
    """Values a cell takes as arguments: arrays and numbers (bool is a number here)."""
    return isinstance(value, (np.ndarray, np.generic)) or \
        (isinstance(value, numbers.Number) and not isinstance(value, type))


def is_output_value(value: Any) -> bool:
    """Values a compiled cell can return: traced arrays, arrays and Python numbers."""
    from ..tracing.tracer import Tracer
    return isinstance(value, (Tracer, np.ndarray, np.generic, bool, int, float, complex))


@dataclass
class CellFunction:
    """A cell as a Python function, plus what it reads and writes."""
    fn: Callable
    name: str
    filename: str
    source: str
    inputs: list[str]
    outputs: list[str]
    # values of outputs that are not arrays (a string, a function defined in the cell), as
    # the last trace saw them: they go back to the namespace as they are
    others: dict[str, Any] = field(default_factory=dict)


_IDENT = re.compile(r"[^0-9a-zA-Z_]")


def make_cell_function(source: str, user_ns: dict, filename: str,
                       name: str = "xla_cell") -> CellFunction:
    """Build the cell's function (globals: `user_ns`) and register its text in linecache."""
    module = parse_cell(source, filename)
    names = cell_names(module)
    inputs = [n for n in names.reads if n in user_ns and is_input_value(user_ns[n])]
    outputs = [n for n in names.assigns if not n.startswith("_")]
    name = _IDENT.sub("_", name)
    cell = CellFunction(None, name, filename, source, inputs, outputs)  # type: ignore[arg-type]

    def collect(local_values: dict) -> dict:
        arrays = {}
        cell.others.clear()
        for out in outputs:
            if out not in local_values:
                continue                                   # assigned on a branch not taken
            value = local_values[out]
            if is_output_value(value):
                arrays[out] = value
            else:
                cell.others[out] = value
        return arrays

    cell.fn = _compile_function(module, name, inputs, filename, user_ns, collect)
    register_source(filename, source)
    return cell


def _compile_function(module: ast.Module, name: str, inputs: list[str], filename: str,
                      user_ns: dict, collect: Callable) -> Callable:
    """`def make(_xla_collect): def name(*inputs): <body>; return _xla_collect(locals())`.

    The body's nodes keep their line numbers from the cell; the wrapper's get line 1."""
    last = module.body[-1].end_lineno if module.body else 1
    ret = ast.Return(ast.Call(ast.Name("_xla_collect", ast.Load()),
                              [ast.Call(ast.Name("locals", ast.Load()), [], [])], []))
    ast.copy_location(ret, ast.Pass(lineno=last, col_offset=0, end_lineno=last,
                                    end_col_offset=0))
    inner = ast.FunctionDef(
        name=name,
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in inputs],
                           vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                           defaults=[]),
        body=list(module.body) + [ret], decorator_list=[], returns=None, **_NO_TYPE_PARAMS)
    outer = ast.FunctionDef(
        name="_xla_make",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg="_xla_collect")], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[inner, ast.Return(ast.Name(name, ast.Load()))], decorator_list=[],
        returns=None, **_NO_TYPE_PARAMS)
    for node in (inner, outer):
        node.lineno, node.col_offset = 1, 0
    tree = ast.fix_missing_locations(ast.Module(body=[outer], type_ignores=[]))
    code = compile(tree, filename, "exec")
    scope: dict = {}
    exec(code, user_ns, scope)
    fn = scope["_xla_make"](collect)
    fn.__qualname__ = name
    return fn


def register_source(filename: str, source: str) -> None:
    """Make `linecache` (tracebacks, error quotes) know the cell's lines."""
    lines = [line if line.endswith("\n") else line + "\n" for line in source.splitlines()]
    linecache.cache[filename] = (len(source), None, lines, filename)


_LOCATION = re.compile(r"(<xla-cell-[^>]*>):(\d+)")


def quote_location(text: str) -> str | None:
    """`  3 | c = a + b` for the first `<xla-cell-N>:LINE` mentioned in `text`, or None."""
    match = _LOCATION.search(text or "")
    if not match:
        return None
    filename, lineno = match.group(1), int(match.group(2))
    line = linecache.getline(filename, lineno).rstrip()
    return f"  {filename}:{lineno} | {line.strip()}" if line else None
