"""A BERT-like encoder classifier (Devlin et al. 2018), the model of the TF/XLA BERT example.

    ids, token types ─► word + position + token-type embeddings ─► layer norm, dropout
    ─► N x [ masked multi-head self-attention ─► dropout ─► layer norm(x + attention)
             dense ─► gelu ─► dense ─► dropout ─► layer norm(x + ffn) ]
    ─► first token ([CLS]) ─► dense ─► logits (softmax over `num_classes`)

    config = BertConfig.tiny()
    params = bert.init(0, config)
    inputs, labels = bert.contains_token_task(0, 256, config)
    loss = bert.loss(params, inputs, labels, config, key=step_key, train=True)

`inputs` is a dict: "input_ids" (batch, seq) ints, "attention_mask" (batch, seq) 1/0 for
real tokens / padding, and optionally "token_type_ids".  `config` is a frozen dataclass,
so it is a constant of the traced program (close over it or mark it static).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np

from .. import nn
from . import accuracy_of, as_key

PAD, CLS = 0, 1            # token ids reserved by `contains_token_task`


@dataclass(frozen=True)
class BertConfig:
    """Sizes of the model; defaults are BERT-base's widths with the example's 2 layers."""
    vocab_size: int = 30522
    hidden: int = 768
    heads: int = 12
    layers: int = 2
    ffn: int = 3072                  # the intermediate (dense-gelu) width
    max_len: int = 512               # position embeddings
    type_vocab: int = 2              # token-type (segment) embeddings
    num_classes: int = 2
    dropout: float = 0.1
    layer_norm_eps: float = 1e-12
    initializer_range: float = 0.02  # stddev of the normal initializer
    gelu_approximate: bool = True    # tanh GELU as in BERT; False: the erf form

    @classmethod
    def tiny(cls, **overrides) -> "BertConfig":
        """A model small enough to train in a test: 2 layers, hidden 32, 2 heads, 16 tokens."""
        return replace(cls(vocab_size=32, hidden=32, heads=2, layers=2, ffn=64, max_len=16,
                           type_vocab=2, num_classes=2, dropout=0.1), **overrides)

    def __post_init__(self):
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must be divisible by heads ({self.heads})")


def init(key_or_seed, config: BertConfig, dtype=np.float32) -> dict:
    """The params pytree: "embeddings", "layers" (a list, one dict per block), "classifier"."""
    from .. import random
    normal = functools.partial(nn.normal_init, stddev=config.initializer_range)
    H = config.hidden
    k_emb, k_cls, *k_layers = random.split(as_key(key_or_seed), 2 + config.layers)
    k_word, k_pos, k_type = random.split(k_emb, 3)
    params = {
        "embeddings": {
            "word": normal(k_word, (config.vocab_size, H), dtype=dtype),
            "position": normal(k_pos, (config.max_len, H), dtype=dtype),
            "token_type": normal(k_type, (config.type_vocab, H), dtype=dtype),
            "layer_norm": nn.layer_norm_init(H, dtype),
        },
        "layers": [],
        "classifier": nn.dense_init(k_cls, H, config.num_classes, normal, dtype),
    }
    for k_layer in k_layers:
        k_att, k_mid, k_out = random.split(k_layer, 3)
        params["layers"].append({
            "attention": nn.multi_head_attention_init(k_att, H, normal, dtype),
            "attention_norm": nn.layer_norm_init(H, dtype),
            "intermediate": nn.dense_init(k_mid, H, config.ffn, normal, dtype),
            "output": nn.dense_init(k_out, config.ffn, H, normal, dtype),
            "output_norm": nn.layer_norm_init(H, dtype),
        })
    return params


def _dropout_keys(key, config: BertConfig, train: bool) -> list:
    """One key per dropout site: the embeddings, then 3 per block (probs, attention, ffn)."""
    count = 1 + 3 * config.layers
    if not train or config.dropout == 0.0:
        return [None] * count
    if key is None:
        raise ValueError("bert.apply(train=True) with dropout needs `key`, e.g. "
                         "`xlanb.random.fold_in(base_key, step)`")
    from .. import random
    keys = random.split(key, count)
    return [keys[i] for i in range(count)]


def encode(params: dict, inputs: dict, config: BertConfig, key=None,
           train: bool = False):
    """The encoder's output (batch, seq, hidden)."""
    input_ids = inputs["input_ids"]
    mask = inputs.get("attention_mask")
    token_types = inputs.get("token_type_ids")
    seq = np.shape(input_ids)[1]
    if seq > config.max_len:
        raise ValueError(f"sequence length {seq} exceeds config.max_len={config.max_len}")
    keys = iter(_dropout_keys(key, config, train))
    rate, eps = config.dropout, config.layer_norm_eps

    emb = params["embeddings"]
    types = emb["token_type"][0] if token_types is None \
        else nn.embedding(emb["token_type"], token_types)
    x = nn.embedding(emb["word"], input_ids) + emb["position"][:seq] + types
    x = nn.dropout(next(keys), nn.layer_norm(emb["layer_norm"], x, eps), rate, train)
    for layer in params["layers"]:
        attended = nn.multi_head_attention(layer["attention"], x, mask, config.heads,
                                           key=next(keys), dropout_rate=rate, train=train)
        attended = nn.dropout(next(keys), attended, rate, train)
        x = nn.layer_norm(layer["attention_norm"], x + attended, eps)
        hidden = nn.gelu(nn.dense(layer["intermediate"], x), config.gelu_approximate)
        hidden = nn.dropout(next(keys), nn.dense(layer["output"], hidden), rate, train)
        x = nn.layer_norm(layer["output_norm"], x + hidden, eps)
    return x


def apply(params: dict, inputs: dict, config: BertConfig, key=None, train: bool = False):
    """Class logits (batch, num_classes) from the first ([CLS]) token's encoding."""
    return nn.dense(params["classifier"], encode(params, inputs, config, key, train)[:, 0, :])


def loss(params: dict, inputs: dict, labels, config: BertConfig, key=None,
         train: bool = False):
    """Mean cross-entropy of the class logits against integer labels (batch,)."""
    return nn.cross_entropy(apply(params, inputs, config, key, train), labels)


def predict(params: dict, inputs: dict, config: BertConfig):
    return np.argmax(apply(params, inputs, config), axis=-1)


def accuracy(params: dict, inputs: dict, labels, config: BertConfig) -> float:
    return accuracy_of(apply(params, inputs, config), labels)


def contains_token_task(seed: int, num_examples: int, config: BertConfig,
                        seq_len: int | None = None, target: int = 2) -> tuple[dict, np.ndarray]:
    """A synthetic, learnable task: does the (unpadded part of the) sequence contain `target`?

    Sequences start with CLS (1), then random tokens (not PAD, CLS or target), then padding (0)
    to `seq_len` (default config.max_len); lengths are uniform in [seq_len // 2, seq_len].
    Half the examples (label 1) get `target` at one random real position.  Token types mark
    the second half of each sequence's real tokens as segment 1.  Deterministic in `seed`.
    """
    seq_len = config.max_len if seq_len is None else seq_len
    if not 4 <= seq_len <= config.max_len:
        raise ValueError(f"seq_len must be in [4, {config.max_len}], got {seq_len}")
    if not (2 <= target < config.vocab_size and config.vocab_size >= 4):
        raise ValueError(f"contains_token_task needs 2 <= target < vocab_size and "
                         f"vocab_size >= 4, got target={target}, vocab_size={config.vocab_size}")
    rng = np.random.default_rng(seed)
    n = num_examples
    ids = rng.integers(2, config.vocab_size - 1, size=(n, seq_len))
    ids += ids >= target                               # any token but PAD, CLS and target
    lengths = rng.integers(seq_len // 2, seq_len + 1, size=n)
    labels = rng.integers(0, 2, size=n)
    where = rng.integers(1, lengths)                   # a real, non-CLS position per row
    rows = np.flatnonzero(labels)
    ids[rows, where[rows]] = target
    ids[:, 0] = CLS
    positions = np.arange(seq_len)
    mask = positions[None, :] < lengths[:, None]
    token_types = mask & (positions[None, :] >= (lengths // 2)[:, None])
    inputs = {"input_ids": np.where(mask, ids, PAD).astype(np.int32),
              "attention_mask": mask.astype(np.int32),
              "token_type_ids": token_types.astype(np.int32)}
    return inputs, labels.astype(np.int64)
