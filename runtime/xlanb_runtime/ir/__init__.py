"""The IR: ops, nodes and graphs, builder rules, text form, verifier, reference interpreter."""
from .graph import Graph, Node, rebuild, topological_order, type_str, with_inputs
from .ops import Op
from .printer import print_graph
from .parser import IRParseError, parse_graph
from .verify import VerifyError, verify
from .interpret import interpret
from . import builder

__all__ = ["Graph", "Node", "Op", "builder", "interpret", "IRParseError", "parse_graph",
           "print_graph", "rebuild", "topological_order", "type_str", "verify", "VerifyError",
           "with_inputs"]
