"""all-reduce in compiled programs: the combiner packs one collective per dtype and kind,
and the driver runs it through the thread's communicator (checked first)."""
from __future__ import annotations

import numpy as np

import xlanb_runtime as runtime
from xlanb_runtime.collectives import using
from xlanb_runtime.ir import Graph, Op, interpret
from xlanb_runtime.ir import builder as B
from xlanb_runtime.passes.all_reduce_combiner import combine_all_reduces


class RecordingCommunicator:
    """A 3-replica stand-in whose peers hold the same values: sum = 3x, mean = x."""
    rank, size = 0, 3

    def __init__(self):
        self.calls, self.checked = [], []

    def check_program(self, fingerprint, description):
        self.checked.append(description)

    def all_reduce(self, buffer, kind):
        self.calls.append((buffer.shape, kind))
        if kind == "sum":
            buffer *= self.size


def gradient_like_graph():
    """Three independent float32 all-reduces (like an MLP's gradients) and one float64."""
    params = [B.parameter(i, shape, np.float32) for i, shape in
              enumerate([(4, 3), (3,), (3, 2)])]
    reduced = [B.all_reduce(B.binary(Op.MUL, p, p), "sum") for p in params]
    other = B.all_reduce(B.convert(params[1], np.float64), "sum")
    return Graph(params, reduced + [other])


def test_combiner_packs_independent_all_reduces_per_dtype():
    graph = gradient_like_graph()
    combined = combine_all_reduces(graph)
    ops = [n for n in combined.nodes if n.op is Op.ALL_REDUCE]
    assert sorted(n.size for n in ops) == [3, 12 + 3 + 6]
    args = [np.random.default_rng(0).standard_normal(p.shape).astype(np.float32)
            for p in graph.params]
    for a, b in zip(interpret(graph, args), interpret(combined, args)):
        np.testing.assert_array_equal(a, b)


def test_dependent_all_reduces_stay_apart_and_threshold_splits():
    x = B.parameter(0, (4,), np.float32)
    first = B.all_reduce(x, "sum")
    second = B.all_reduce(B.binary(Op.MUL, first, first), "sum")
    graph = Graph([x], [first, second])
    assert len([n for n in combine_all_reduces(graph).nodes if n.op is Op.ALL_REDUCE]) == 2
    small = combine_all_reduces(gradient_like_graph(), threshold=40)
    assert len([n for n in small.nodes if n.op is Op.ALL_REDUCE]) == 3


def test_compiled_program_issues_one_call_per_dtype_through_the_communicator():
    graph = gradient_like_graph()
    executable = runtime.compile(graph)
    args = [np.full(p.shape, 2, np.float32) for p in graph.params]
    np.testing.assert_array_equal(executable.run(args)[0], np.full((4, 3), 4, np.float32))
    comm = RecordingCommunicator()
    with using(comm):
        outs = executable.run(args)
        executable.run(args)
    np.testing.assert_array_equal(outs[0], np.full((4, 3), 12, np.float32))
    np.testing.assert_array_equal(outs[3], np.full((3,), 6.0))
    assert len(comm.calls) == 4                       # 2 dtypes x 2 steps
    assert len(comm.checked) == 1 and "f32[4,3]" in comm.checked[0]


def test_threshold_flag_and_unknown_flags(monkeypatch):
    import pytest
    from xlanb_runtime.flags import FlagError, parse
    assert parse("--xla_allreduce_combine_threshold_bytes=40")\
        .xla_allreduce_combine_threshold_bytes == 40
    with pytest.raises(FlagError, match="known flags: --xla_allreduce_combine"):
        parse("--xla_bogus=1")
    monkeypatch.setenv("XLANB_FLAGS", "--xla_allreduce_combine_threshold_bytes=40")
    executable = runtime.compile(gradient_like_graph())
    assert sum(n.op is Op.ALL_REDUCE for n in executable.optimized.nodes) == 3
