"""Reads the text form written by `printer.py` back into a Graph (for run-module repros).

A malformed line raises `IRParseError` naming the line and column.  Values are read by
walking Python's own expression AST with a whitelist (numbers, strings, tuples, lists,
nan/inf, `complex(re, im)`): a dump file can never execute code.
"""
from __future__ import annotations

import ast
import re

import numpy as np

from .graph import DTYPES_BY_NAME, Graph, LoopBody, Node
from .ops import BY_NAME, Op


class IRParseError(ValueError):
    def __init__(self, message: str, line: int, column: int, text: str = ""):
        super().__init__(f"line {line}, column {column}: {message}"
                         + (f"\n  {text}\n  {' ' * (column - 1)}^" if text else ""))
        self.line, self.column = line, column


_NODE = re.compile(r'^(?P<name>%[\w.]+) = (?P<op>[a-z][\w-]*)\((?P<operands>[^)]*)\)'
                   r'(?:, arg=(?P<arg>.*?))? : (?P<dtype>[a-z]+\d*)\[(?P<shape>[\d,]*)\]'
                   r'(?: loc="(?P<loc>[^"]*)")?$')
_RETURN = re.compile(r"^return \((?P<outs>[^)]*)\)$")
_NAMED = {"nan": float("nan"), "inf": float("inf"), "True": True, "False": False,
          "None": None}


def literal(text: str):
    """Parse a printed arg; raises ValueError on anything but plain data."""
    def walk(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str,
                                                                      bool, type(None))):
            return node.value
        if isinstance(node, ast.Name) and node.id in _NAMED:
            return _NAMED[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = walk(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Tuple):
            return tuple(walk(e) for e in node.elts)
        if isinstance(node, ast.List):
            return [walk(e) for e in node.elts]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "complex" and len(node.args) == 2 and not node.keywords:
            return complex(*(float(walk(a)) for a in node.args))
        raise ValueError(f"unexpected {type(node).__name__} in a value")
    return walk(ast.parse(text.strip(), mode="eval").body)


def _arg_for(op: Op, raw, dtype: np.dtype, shape: tuple[int, ...]):
    if op is Op.CONSTANT:
        array = np.array(raw, dtype=dtype).reshape(shape)
        array.setflags(write=False)
        return array
    if op is Op.REDUCE:
        return (raw[0], tuple(raw[1]))
    return raw


def parse_graph(text: str, first_line: int = 1) -> Graph:
    names: dict[str, Node] = {}
    params: list[Node] = []
    outputs: list[Node] | None = None
    module_name = "main"
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        raw_line, lineno = lines[index], first_line + index
        index += 1
        line = raw_line.strip()
        column = len(raw_line) - len(raw_line.lstrip()) + 1
        if not line or line.startswith("#"):
            continue
        if line.startswith("module "):
            module_name = line.split(None, 1)[1].strip()
            continue
        ret = _RETURN.match(line)
        if ret:
            outputs = [_lookup(names, o.strip(), lineno, column, raw_line)
                       for o in ret["outs"].split(",") if o.strip()]
            continue
        match = _NODE.match(line)
        if not match:
            raise IRParseError("expected `%name = op(operands)[, arg=...] : type`", lineno,
                               column, raw_line)
        body_start = index
        while index < len(lines) and lines[index].lstrip().startswith("|"):
            index += 1
        body = [_unbar(b) for b in lines[body_start:index]]
        node = _parse_node(match, names, lineno, column, raw_line,
                           body and parse_graph("\n".join(body), first_line + body_start))
        names[match["name"]] = node
        if node.op is Op.PARAMETER:
            params.append(node)
    if outputs is None:
        raise IRParseError("missing `return (...)`", first_line + len(lines), 1)
    params.sort(key=lambda p: p.arg)
    return Graph(params, outputs, module_name)


def _unbar(line: str) -> str:
    """A loop body's line without its `| ` (one nesting level)."""
    text = line.lstrip()[1:]
    return text[1:] if text.startswith(" ") else text


def _lookup(names, name, lineno, column, raw_line) -> Node:
    if name not in names:
        raise IRParseError(f"unknown value {name}", lineno,
                           raw_line.find(name) + 1 if name in raw_line else column, raw_line)
    return names[name]


def _parse_node(match, names, lineno, column, raw_line, body: Graph | None = None) -> Node:
    op = BY_NAME.get(match["op"])
    if op is None:
        raise IRParseError(f"unknown op {match['op']!r}", lineno,
                           raw_line.find(match["op"]) + 1, raw_line)
    dtype = DTYPES_BY_NAME.get(match["dtype"])
    if dtype is None:
        raise IRParseError(f"unknown element type {match['dtype']!r}", lineno,
                           raw_line.rfind(match["dtype"]) + 1, raw_line)
    shape = tuple(int(d) for d in match["shape"].split(",") if d)
    inputs = [_lookup(names, o.strip(), lineno, column, raw_line)
              for o in match["operands"].split(",") if o.strip()]
    arg = None
    if match["arg"] is not None:
        try:
            arg = _arg_for(op, literal(match["arg"]), dtype, shape)
        except (ValueError, SyntaxError, TypeError) as exc:
            raise IRParseError(f"bad arg: {exc}", lineno,
                               raw_line.find("arg=") + 5, raw_line) from None
    if op is Op.LOOP:
        if not body or not (isinstance(arg, tuple) and len(arg) in (2, 3)):
            raise IRParseError("a loop needs arg=(trips, carried[, dynamic]) and its `| ` "
                               "body lines", lineno, column, raw_line)
        arg = LoopBody(int(arg[0]), int(arg[1]), body, len(arg) == 3 and bool(arg[2]))
    elif body:
        raise IRParseError(f"only a loop has body lines, not {op.value}", lineno + 1, column)
    return Node(op, inputs, shape, dtype, arg, match["loc"])
