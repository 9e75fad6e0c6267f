"""End-to-end training with compiled steps (`xlanb.jit` + `xlanb.value_and_grad` + optim):
the MNIST tutorial's softmax regression recipe and an MLP on scikit-learn's digits, and a
tiny BERT-like encoder on a synthetic task; plus the models' shapes and the task itself."""
from __future__ import annotations

import numpy as np
import pytest

from xlanb import datasets, optim, random, training
from xlanb.models import bert, mlp, softmax_regression
from tolerance import assert_close, assert_tree_close


@pytest.fixture(scope="module")
def digits():
    return datasets.load_digits(test_fraction=0.2, seed=0)


def test_softmax_regression_on_digits_reaches_the_tutorial_accuracy(digits):
    # the XLA MNIST tutorial: one dense layer, SGD lr 0.5, 1000 steps of batch 100 -> 0.91
    (x_train, y_train), (x_test, y_test) = digits
    params = softmax_regression.init(0, num_features=64, num_classes=10)
    opt = optim.sgd(0.5)
    step = training.make_train_step(softmax_regression.loss, opt)
    params, _, losses = training.train(step, params, opt.init(params),
                                       datasets.batches(x_train, y_train, 100, seed=0), 1000)
    assert step.cache_info().misses == 1                       # one compile for 1000 steps
    assert_close(losses[0], np.log(10), dtype=np.float32, n=10)  # zero init: uniform softmax
    assert losses[-50:].mean() < 0.25
    assert softmax_regression.accuracy(params, x_test, y_test) >= 0.91


def test_mlp_on_digits(digits):
    (x_train, y_train), (x_test, y_test) = digits
    params = mlp.init(0, sizes=(64, 128, 10))
    opt = optim.sgd(0.1, momentum=0.9)
    step = training.make_train_step(mlp.loss, opt)
    params, _, losses = training.train(step, params, opt.init(params),
                                       datasets.batches(x_train, y_train, 100, seed=0), 1000)
    assert losses[-50:].mean() < 0.05
    assert mlp.accuracy(params, x_test, y_test) >= 0.95


def test_compiled_step_matches_the_eager_step(digits):
    (x_train, y_train), _ = digits
    params = mlp.init(1, sizes=(64, 16, 10))
    opt = optim.adam(1e-2)
    state = opt.init(params)
    xb, yb = x_train[:32], y_train[:32]
    compiled = training.make_train_step(mlp.loss, opt)(params, state, xb, yb)
    eager = training.make_train_step(mlp.loss, opt, jit=False)(params, state, xb, yb)
    # n: the forward dot's 64 features times the batch of 32 the gradients sum over.  A
    # gradient element whose batch terms cancel differs by 1e-3 relative between machines
    # (vector width, BLAS kernel); Adam's lr * g / (|g| + eps) passes that on to the params
    n = 64 * 32
    assert_close(compiled[2], eager[2], n=n)
    assert_tree_close(compiled[:2], eager[:2], n=n)


# -- BERT-like encoder --------------------------------------------------------------------

# One block keeps the cold compile (Numba, ~80 kernels) inside a test's budget; the model
# code is the same for any number of blocks.
CONFIG = bert.BertConfig.tiny(layers=1)


def test_bert_tiny_loss_decreases_with_adam():
    inputs, labels = bert.contains_token_task(0, 512, CONFIG)
    params = bert.init(0, CONFIG)
    opt = optim.adam(1e-3)

    def loss_fn(params, inputs, labels, key):
        return bert.loss(params, inputs, labels, CONFIG, key=key, train=True)

    step = training.make_train_step(loss_fn, opt)
    base = random.key(1)

    def data():
        for i in range(50):
            rows = slice(32 * (i % 16), 32 * (i % 16) + 32)
            yield {k: v[rows] for k, v in inputs.items()}, labels[rows], random.fold_in(base, i)

    params, _, losses = training.train(step, params, opt.init(params), data(), 50)
    assert np.all(np.isfinite(losses))
    assert losses[-5:].mean() < losses[:5].mean() - 0.05, losses


def test_bert_shapes_eval_mode_and_dropout():
    params = bert.init(3, CONFIG)
    inputs, labels = bert.contains_token_task(1, 4, CONFIG, seq_len=8)
    logits = bert.apply(params, inputs, CONFIG)
    assert logits.shape == (4, 2) and logits.dtype == np.float32
    np.testing.assert_array_equal(logits, bert.apply(params, inputs, CONFIG))    # no dropout
    key = random.key(0)
    trained = bert.apply(params, inputs, CONFIG, key=key, train=True)
    assert not np.allclose(trained, logits)
    np.testing.assert_array_equal(trained, bert.apply(params, inputs, CONFIG, key=key,
                                                      train=True))
    with pytest.raises(ValueError, match="key"):
        bert.apply(params, inputs, CONFIG, train=True)
    # padding is invisible: changing padded ids does not change the logits
    edited = dict(inputs, input_ids=np.where(inputs["attention_mask"] == 1,
                                             inputs["input_ids"], 5).astype(np.int32))
    np.testing.assert_allclose(bert.apply(params, edited, CONFIG), logits, atol=1e-5)
    assert 0.0 <= bert.accuracy(params, inputs, labels, CONFIG) <= 1.0


def test_bert_params_tree():
    config = bert.BertConfig.tiny()
    params = bert.init(0, config)
    assert len(params["layers"]) == config.layers == 2
    assert params["embeddings"]["word"].shape == (config.vocab_size, config.hidden)
    assert params["embeddings"]["position"].shape == (config.max_len, config.hidden)
    assert params["layers"][0]["intermediate"]["w"].shape == (config.hidden, config.ffn)
    assert params["classifier"]["w"].shape == (config.hidden, config.num_classes)
    assert abs(params["embeddings"]["word"].std() - config.initializer_range) < 0.003
    with pytest.raises(ValueError, match="divisible"):
        bert.BertConfig(hidden=30, heads=4)


def test_contains_token_task_labels_match_the_tokens():
    inputs, labels = bert.contains_token_task(0, 300, CONFIG, seq_len=12, target=7)
    ids, mask = inputs["input_ids"], inputs["attention_mask"]
    assert ids.shape == mask.shape == inputs["token_type_ids"].shape == (300, 12)
    assert ids.dtype == np.int32 and labels.dtype == np.int64
    np.testing.assert_array_equal(labels, (ids == 7).any(axis=1))
    assert np.all(ids[:, 0] == bert.CLS)
    assert np.all(ids[mask == 0] == bert.PAD) and np.all(ids[mask == 1] != bert.PAD)
    assert np.all(mask.sum(1) >= 6) and 0.4 < labels.mean() < 0.6
    assert np.all(inputs["token_type_ids"][mask == 0] == 0)
    again, _ = bert.contains_token_task(0, 300, CONFIG, seq_len=12, target=7)
    np.testing.assert_array_equal(again["input_ids"], ids)
