"""Gradients of scans against central differences: cumsum, np.add.accumulate, nancumsum
(a NaN's cotangent is 0), cumulative_sum with and without the initial 0, cumprod (zeros
included: one, two, at the ends) and maximum/minimum.accumulate (the position holding the
running extreme gets the cotangent; ties: the first holder), over axes and flattened; a
scan without a rule (np.subtract.accumulate, a library call) is a named error."""
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
    "cumprod axis=1": lambda x: np.sum(np.cumprod(x, axis=1) * W),
    "cumprod axis=0": lambda x: np.sum(np.cumprod(x, axis=0) * W),
    "cumprod flat": lambda x: np.sum(np.cumprod(x) * W.ravel()),
    "multiply.accumulate": lambda x: np.sum(np.multiply.accumulate(x, axis=1) ** 2),
    "cumulative_prod": lambda x: np.sum(np.cumulative_prod(x, axis=1) * W),
    "maximum.accumulate axis=1": lambda x: np.sum(np.maximum.accumulate(x, axis=1) * W),
    "maximum.accumulate axis=0": lambda x: np.sum(np.maximum.accumulate(x, axis=0) * W),
    "minimum.accumulate": lambda x: np.sum(np.minimum.accumulate(x, axis=1) ** 3),
    "fused producer and consumer": lambda x: np.sum(np.tanh(np.cumsum(x * x, axis=1)) * W),
}

# cumprod at inputs holding zeros: d/dx_j prod_{k<=i} x_k is the product of the others,
# which the division formula prod/x_j gets wrong (0/0) exactly there
ZEROS = {
    "one zero": [(1, 2)],
    "two zeros in a row": [(0, 1), (0, 3)],
    "zero first": [(2, 0)],
    "zero last": [(1, 3)],
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_scan_gradient_matches_central_differences(name):
    loss = LOSSES[name]
    got = xlanb.jit(xlanb.grad(loss))(X)
    np.testing.assert_allclose(got, central_differences(loss, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("where", sorted(ZEROS))
@pytest.mark.parametrize("axis", [0, 1, None])
def test_cumprod_gradient_with_zeros(where, axis):
    x = X.copy()
    for index in ZEROS[where]:
        x[index] = 0.0
    weights = W if axis is not None else W.ravel()

    def loss(v):
        return np.sum(np.cumprod(v, axis=axis) * weights)
    got = xlanb.jit(xlanb.grad(loss))(x)
    # the loss is a polynomial of degree <= 4 in each x_j: central differences are exact
    # up to rounding
    np.testing.assert_allclose(got, central_differences(loss, x), rtol=1e-6, atol=1e-8)
    assert np.all(np.isfinite(got))


def test_maximum_accumulate_ties_go_to_the_first_holder():
    x = np.array([1.0, 3.0, 2.0, 3.0, 5.0, 5.0])
    g = np.arange(1.0, 7.0)                       # the cotangent of each output
    got = xlanb.jit(xlanb.grad(lambda v: np.sum(np.maximum.accumulate(v) * g)))(x)
    # holders: 0 (output 0), 1 (outputs 1-3: the tie at 3 does not take over), 4 (4-5)
    np.testing.assert_array_equal(got, [1.0, 2 + 3 + 4, 0.0, 0.0, 5 + 6, 0.0])


def test_nancumsum_gives_nans_no_gradient():
    x = X.copy()
    x[1, 2] = np.nan
    got = xlanb.jit(xlanb.grad(lambda x: np.sum(np.nancumsum(x, axis=1) * W)))(x)
    assert got[1, 2] == 0.0
    expected = np.cumsum((W)[:, ::-1], axis=1)[:, ::-1]
    expected[1, 2] = 0.0
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_scan_without_a_rule_is_named():
    with pytest.raises(NotDifferentiableError, match="subtract"):
        xlanb.jit(xlanb.grad(lambda x: np.sum(np.subtract.accumulate(x))))(X[0])
