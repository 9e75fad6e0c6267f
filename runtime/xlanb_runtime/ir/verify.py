"""The verifier: every node's shape and dtype must be what its op's rule says.

It re-derives each node through the builder (the single home of the rules) and compares.
The pass pipeline runs it after every pass that changed the graph, so a broken pass is
caught as "verify failed after 'fusion'" rather than as a wrong answer later.
"""
from __future__ import annotations

from .graph import Graph, Node
from . import builder as B
from .ops import BINARY, COMPARE, Op, UNARY


class VerifyError(AssertionError):
    pass


def _rederive(node: Node) -> Node:
    op, ins, arg = node.op, node.inputs, node.arg
    if op is Op.PARAMETER:
        return B.parameter(arg, node.shape, node.dtype)
    if op is Op.CONSTANT:
        return B.constant(arg)
    if op is Op.IOTA:
        return B.iota(node.shape, node.dtype, arg)
    if op is Op.CONVERT:
        return B.convert(ins[0], node.dtype) if ins[0].dtype != node.dtype else node
    if op in UNARY:
        return B.unary(op, *ins)
    if op in BINARY or op in COMPARE:
        return B.binary(op, *ins)
    rules = {
        Op.SELECT: lambda: B.select(*ins),
        Op.BITCAST: lambda: B.bitcast(ins[0], node.dtype),
        Op.BROADCAST: lambda: B.broadcast(ins[0], node.shape, arg),
        Op.RESHAPE: lambda: B.reshape(ins[0], node.shape),
        Op.TRANSPOSE: lambda: B.transpose(ins[0], arg),
        Op.SLICE: lambda: B.slice_(ins[0], arg),
        Op.DYNAMIC_SLICE: lambda: B.dynamic_slice(ins[0], ins[1:], arg),
        Op.PAD: lambda: B.pad(ins[0], ins[1], arg),
        Op.DYNAMIC_PAD: lambda: B.dynamic_pad(ins[0], ins[1], ins[2:], arg),
        Op.CONCATENATE: lambda: B.concatenate(ins, arg),
        Op.REVERSE: lambda: B.reverse(ins[0], arg),
        Op.REDUCE: lambda: B.reduce(ins[0], *arg),
        Op.ARGREDUCE: lambda: B.argreduce(ins[0], *arg),
        Op.SCAN: lambda: B.scan(ins[0], *arg),
        Op.DOT: lambda: B.dot(ins[0], ins[1], *arg),
        Op.GATHER: lambda: B.gather(ins[0], ins[1], arg),
        Op.SCATTER_ADD: lambda: B.scatter_add(ins[0], ins[1], ins[2], arg),
        Op.SCATTER: lambda: B.scatter(ins[0], ins[1], ins[2], arg),
        Op.ALL_REDUCE: lambda: B.all_reduce(ins[0], arg),
        Op.RNG_BITS: lambda: B.rng_bits(ins[0], node.shape),
        Op.LOOP: lambda: B.loop(ins, arg),
        Op.LOOP_RESULT: lambda: B.loop_result(ins[0], arg),
        Op.LIBRARY_CALL: lambda: B.library_call(arg[0], ins, arg[1]),
        Op.LIBRARY_RESULT: lambda: B.library_result(ins[0], arg),
    }
    return rules[op]()


def verify(graph: Graph) -> None:
    """Raise VerifyError naming the first node whose type breaks its op's rule."""
    seen_params = set()
    for param in graph.params:
        if param.op is not Op.PARAMETER:
            raise VerifyError(f"params entry is a {param.op.value}, not a parameter")
        seen_params.add(id(param))
    for index, node in enumerate(graph.nodes):
        if node.op is Op.PARAMETER and id(node) not in seen_params:
            raise VerifyError(f"%{index}: parameter({node.arg}) is not in the params list")
        try:
            expected = _rederive(node)
        except B.IRShapeError as exc:
            raise VerifyError(f"%{index} ({node.op.value}): {exc.detail}") from None
        except (TypeError, ValueError, KeyError, ArithmeticError) as exc:   # a library
            raise VerifyError(f"%{index} ({node.op.value}): {exc}") from None  # call's rule
        if node.op is Op.LOOP:
            verify(node.arg.body)
        if expected.shape != node.shape or expected.dtype != node.dtype:
            raise VerifyError(f"%{index} ({node.op.value}) has type {node.dtype}{list(node.shape)}"
                              f", its rule gives {expected.dtype}{list(expected.shape)}")
