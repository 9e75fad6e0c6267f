"""Dumps of compiled modules (`--xla_dump_to=DIR`), named as XLA names them.

    module_0001.model_fn.before_optimizations.txt    the traced IR (parse_graph reads it)
    module_0001.model_fn.after_optimizations.txt     optimized IR + fusion groups
    module_0001.model_fn.0003.layout.txt             IR after a pass (--xla_dump_hlo_pass_re)
    module_0001.model_fn.fusion.dot                  kernels as Graphviz clusters
    module_0001.model_fn.fusion_0.py / .ll / .s      a kernel's source, LLVM IR, assembly
    module_0001.model_fn.driver.py                   the generated driver

Numba only returns LLVM IR and assembly for functions compiled in this process (a cache load
gives a stub), so `--xla_dump_kernels` compiles each kernel's source once more, uncached.
Attach the directory to bug reports; `python -m xlanb run-module FILE` re-runs a module.
"""
from __future__ import annotations

import html
import itertools
import re
from pathlib import Path

from .ir import Graph, print_graph

_module_ids = itertools.count(1)


class ModuleDumper:
    """Writes the files of one compiled module."""

    def __init__(self, directory: str, name: str):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.prefix = f"module_{next(_module_ids):04d}.{_safe(name)}"
        self.pass_count = 0

    def path(self, suffix: str) -> Path:
        return self.directory / f"{self.prefix}.{suffix}"

    def write(self, suffix: str, text: str) -> Path:
        path = self.path(suffix)
        path.write_text(text)
        return path

    def after_pass(self, pattern: str):
        """A `dump(name, graph)` callback for the pass pipeline."""
        regex = re.compile(pattern)

        def dump(name: str, graph: Graph) -> None:
            self.pass_count += 1
            if regex.search(name):
                self.write(f"{self.pass_count:04d}.{name}.txt", print_graph(graph))
        return dump

    def kernels(self, generated: dict, signatures: dict) -> None:
        for name, gen in generated.items():
            if not gen.has_function:          # a bare contraction: NumPy's matmul, no code
                continue
            self.write(f"{_safe(name)}.py", gen.source)
            if name in signatures:
                llvm, asm = uncached_listings(gen, signatures[name])
                self.write(f"{_safe(name)}.ll", llvm)
                self.write(f"{_safe(name)}.s", asm)


def uncached_listings(gen, signature) -> tuple[str, str]:
    """(LLVM IR, assembly) of a kernel, compiled afresh in this process."""
    namespace: dict = {"__name__": f"xlanb_dump_{gen.function}"}
    source = gen.source.replace("cache=True", "cache=False")
    exec(compile(source, f"<dump {gen.name}>", "exec"), namespace)
    function = namespace[gen.function]
    function.compile(signature)
    return function.inspect_llvm(signature), function.inspect_asm(signature)


def fusion_dot(plan) -> str:
    """The optimized graph with one Graphviz cluster per kernel; edges through memory bold."""
    graph = plan.graph
    ids = {id(n): i for i, n in enumerate(graph.nodes)}
    lines = [f'digraph "{_safe(graph.name)}" {{', "  rankdir=TB;",
             '  node [shape=box, fontname="monospace", fontsize=10];']
    owner = {}
    for k, kernel in enumerate(plan.kernels):
        lines.append(f'  subgraph cluster_{k} {{ label="{_dot(kernel.name)} ({kernel.kind})";'
                     ' style=rounded;')
        for node in kernel.nodes:
            if id(node) not in owner:
                owner[id(node)] = k
                shape = "x".join(str(d) for d in node.shape) or "scalar"
                lines.append(f'    n{ids[id(node)]} [label="{_dot(node.op.value)}\\n'
                             f'{node.dtype.name}[{shape}]"];')
        lines.append("  }")
    for node in graph.nodes:
        if id(node) not in owner:
            lines.append(f'  n{ids[id(node)]} [label="{_dot(node.op.value)}", '
                         'shape=ellipse];')
        for inp in node.inputs:
            fused = owner.get(id(inp)) is not None and owner.get(id(inp)) == owner.get(id(node))
            style = "dashed" if fused else "bold"
            lines.append(f"  n{ids[id(inp)]} -> n{ids[id(node)]} [style={style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]", "_", name)


def _dot(text: str) -> str:
    return html.escape(text).replace('"', "'")
