"""Every op of the enum has what an op needs: a printed name that parses back, a verifier
rule (via the builder) and an interpreter entry; gaps fail here."""
import inspect

import pytest

from xlanb_runtime.autodiff import VJP, ZERO_GRADIENT
from xlanb_runtime.ir import Op
from xlanb_runtime.ir.interpret import EVAL
from xlanb_runtime.ir.ops import BY_NAME, CONTROL_FLOW
from xlanb_runtime.ir.verify import _rederive

LEAVES_WITHOUT_EVAL = {Op.PARAMETER}        # bound to arguments, never evaluated


@pytest.mark.parametrize("op", list(Op), ids=lambda op: op.value)
def test_op_is_complete(op):
    assert BY_NAME[op.value] is op, "printed names must be unique and parse back"
    assert op in EVAL or op in LEAVES_WITHOUT_EVAL, f"{op.value} has no interpreter entry"
    # rng-bits has no gradient; loops, dynamic slices and float16 rounding are made by the
    # compiler after autodiff ran
    assert op in VJP or op in ZERO_GRADIENT or op.name in (
        "RNG_BITS", "DYNAMIC_SLICE", "DYNAMIC_PAD", "ROUND_HALF") or op in CONTROL_FLOW, \
        f"{op.value} has neither a VJP rule nor a zero-gradient entry"


def test_verifier_knows_every_op():
    text = inspect.getsource(_rederive)
    missing = [op.value for op in Op
               if f"Op.{op.name}" not in text and not _covered_by_group(op)]
    assert not missing, f"verify has no rule for: {missing}"


def _covered_by_group(op) -> bool:
    from xlanb_runtime.ir.ops import BINARY, COMPARE, UNARY
    return op in UNARY or op in BINARY or op in COMPARE
