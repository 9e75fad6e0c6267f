"""Gradients of scans (library calls with VJP rules) against central differences: cumsum,
np.add.accumulate, nancumsum (a NaN's cotangent is 0) and cumulative_sum with and without
the initial 0, over axes and flattened; a scan without a rule is a named error."""
import numpy as np
import pytest

import xlanb
from xlanb_runtime.autodiff import NotDifferentiableError

RNG = np.random.default_rng(11)
X = RNG.standard_normal((3, 4))
W = RNG.uniform(0.5, 1.5, (3, 4))


def central_differences(loss, x, eps=1e-6):
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (loss(plus) - loss(minus)) / (2 * eps)
    return grad


LOSSES = {
    "cumsum axis=0": lambda x: np.sum(np.cumsum(x, axis=0) * W),
    "cumsum flat": lambda x: np.sum(np.cumsum(x) ** 2),
    "add.accumulate axis=1": lambda x: np.sum(np.add.accumulate(x, axis=1) * W),
    "add.accumulate axis=0": lambda x: np.sum(np.add.accumulate(x) ** 2),
    "cumulative_sum": lambda x: np.sum(np.cumulative_sum(x, axis=1) * W),
    "cumulative_sum initial": lambda x: np.sum(
        np.cumulative_sum(x, axis=0, include_initial=True)[1:] * W
        + np.cumulative_sum(x, axis=0, include_initial=True)[:1].sum()),
    "nancumsum": lambda x: np.sum(np.nancumsum(x, axis=1) * W),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_scan_gradient_matches_central_differences(name):
    loss = LOSSES[name]
    got = xlanb.jit(xlanb.grad(loss))(X)
    np.testing.assert_allclose(got, central_differences(loss, X), rtol=1e-6, atol=1e-8)


def test_nancumsum_gives_nans_no_gradient():
    x = X.copy()
    x[1, 2] = np.nan
    got = xlanb.jit(xlanb.grad(lambda x: np.sum(np.nancumsum(x, axis=1) * W)))(x)
    assert got[1, 2] == 0.0
    expected = np.cumsum((W)[:, ::-1], axis=1)[:, ::-1]
    expected[1, 2] = 0.0
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_scan_without_a_rule_is_named():
    with pytest.raises(NotDifferentiableError, match="maximum"):
        xlanb.jit(xlanb.grad(lambda x: np.sum(np.maximum.accumulate(x))))(X[0])
