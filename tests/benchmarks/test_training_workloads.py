"""The training workloads' gradients, checked at tiny sizes before anyone times them.

The hand-written backward passes (benchmarks/training_workloads.py) against central finite
differences in float64 and against JAX; then xlanb's step, compiled and op by op, against
the hand-written step.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import xlanb  # noqa: E402
from training_workloads import TRAINING_WORKLOADS, check_gradients  # noqa: E402

NAMES = sorted(TRAINING_WORKLOADS)


@pytest.mark.parametrize("name", NAMES)
def test_hand_written_gradients_match_finite_differences(name):
    check_gradients([name], against_jax=False)


@pytest.mark.parametrize("name", NAMES)
def test_hand_written_gradients_match_jax(name):
    pytest.importorskip("jax")
    check_gradients([name], against_jax=True)


def _assert_same_step(got, want, spec):
    (got_params, got_loss), (want_params, want_loss) = got, want
    np.testing.assert_allclose(got_loss, want_loss, rtol=spec.rtol)
    assert got_params.keys() == want_params.keys()
    for name, value in want_params.items():
        assert got_params[name].dtype == value.dtype, name
        np.testing.assert_allclose(got_params[name], value, rtol=spec.rtol, atol=spec.atol,
                                   err_msg=f"new {name!r}")


@pytest.mark.skipif(not hasattr(xlanb, "value_and_grad"), reason="no xlanb.value_and_grad")
@pytest.mark.parametrize("name", NAMES)
def test_xlanb_step_matches_hand_written(name):
    spec = TRAINING_WORKLOADS[name]
    args = spec.make_args("tiny")
    want = spec.numpy_step(*args)
    step = xlanb.jit(spec.step)
    _assert_same_step(step(*args), want, spec)
    with xlanb.disable_jit():
        _assert_same_step(step(*args), want, spec)
