"""The IR's text form (HLO-like), which `parser.py` reads back exactly.

    module model_fn
      %0 = parameter(), arg=0 : f32[1000]
      %3 = multiply(%1, %2) : f32[1000] loc="model.py:5"
      %4 = reduce(%3), arg=('sum', (0,)) : f32[]
      return (%4)

Constants print their values in full precision (NumPy repr), so a dumped module re-runs
bit for bit.  A loop prints its body below it, each line behind a `| `:

      %5 = loop(%1, %4), arg=(2000, 1) : u8[]
      | module jacobi.body
      |   %0 = parameter(), arg=0 : f64[100]
      |   ...
      |   return (%7)
      %6 = loop-result(%5), arg=0 : f64[100]
  `annotate(node) -> str | None` lets callers add a `# ...` line above a node
(compiled modules mark where each fusion group starts).
"""
from __future__ import annotations

from typing import Callable

import hashlib

import numpy as np

from .graph import Graph, Node, type_str
from .ops import Op


def format_value(value) -> str:
    """A Python literal for args: tuples, ints, strings, floats incl. nan/inf, and
    complex numbers as `complex(re, im)`."""
    if isinstance(value, np.ndarray):
        return format_value(value.tolist())
    if isinstance(value, (list, tuple)):
        inner = ", ".join(format_value(v) for v in value)
        if isinstance(value, tuple):
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        return f"[{inner}]"
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, (complex, np.complexfloating)):
        value = complex(value)          # exact parts, signed zeros and nan/inf included
        return f"complex({format_value(value.real)}, {format_value(value.imag)})"
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, (int, np.integer)):
        return repr(int(value))
    return repr(value)


def node_names(graph: Graph) -> dict[int, str]:
    return {id(n): f"%{i}" for i, n in enumerate(graph.nodes)}


# Constants larger than this print as a digest of their bytes in fingerprints: printing
# every element cost seconds per pass for npbench stockham_fft's 65,536-element mgrid.
DIGEST_ELEMENTS = 256


def format_digest(value: np.ndarray) -> str:
    """A large array as `array<dtype, shape, sha256 of its bytes>` (equal iff its values
    are, but for a hash collision)."""
    data = np.ascontiguousarray(value)
    digest = hashlib.sha256(data.view(np.uint8).reshape(-1)).hexdigest()[:24]
    return f"array<{data.dtype.str}, {data.shape}, {digest}>"


def print_node(node: Node, names: dict[int, str], digest_arrays: bool = False) -> str:
    operands = ", ".join(names[id(i)] for i in node.inputs)
    text = f"{names[id(node)]} = {node.op.value}({operands})"
    if node.op is Op.LOOP:
        spec = node.arg         # a dynamic loop's trip count is its last input
        text += f", arg={format_value((spec.trips, spec.carried) + ((1,) if spec.dynamic else ()))}"
    elif digest_arrays and isinstance(node.arg, np.ndarray) and \
            node.arg.size > DIGEST_ELEMENTS:
        text += f", arg={format_digest(node.arg)}"
    elif node.arg is not None:
        text += f", arg={format_value(node.arg)}"
    text += f" : {type_str(node.dtype, node.shape)}"
    if node.loc:
        text += f' loc="{node.loc}"'
    return text


def print_graph(graph: Graph, annotate: Callable[[Node], str | None] | None = None,
                show_locations: bool = True, digest_arrays: bool = False) -> str:
    """The graph as text; `digest_arrays`: large constants as digests (not parseable:
    for fingerprints)."""
    names = node_names(graph)
    lines = [f"module {graph.name}"]
    for node in graph.nodes:
        note = annotate(node) if annotate else None
        if note:
            lines.append(f"  # {note}")
        text = print_node(node, names, digest_arrays)
        if not show_locations and node.loc:
            text = text[: text.rindex(' loc="')]
        lines.append("  " + text)
        if node.op is Op.LOOP:
            body = print_graph(node.arg.body, annotate, show_locations, digest_arrays)
            lines.extend("  | " + line for line in body.splitlines())
    lines.append(f"  return ({', '.join(names[id(o)] for o in graph.outputs)})")
    return "\n".join(lines) + "\n"


def is_scalar_constant(node: Node) -> bool:
    return node.op is Op.CONSTANT and node.shape == ()
