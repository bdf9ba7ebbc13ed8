"""Lesson 07 · Sequence to sequence with RNNs and attention: the exercises of ``notebooks/07_seq2seq_rnn_attention.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
``07.my_attention_step(s, keys, key_mask, W_s, W_h, v) -> (context, weights)`` is one attention step of the
decoder in *Build it: the attention GRU, part by part*, written from raw matrices (row vectors: ``s @ W_s``).
"""

from __future__ import annotations

import torch

from course_utils import data
from course_utils.exercises._model import Case, Exercise
from course_utils.exercises.cases import torch_seeded
from course_utils.reversal import rnn

__all__ = ["EXERCISES", "PREDICTIONS", "MY_DECODER_IO", "MY_ADDITIVE_SCORES", "MY_ATTENTION_STEP"]

_BUILD = "07 · Build it: the attention GRU, part by part"


# ---- 07.my_decoder_io(y, lengths) -> (decoder_input, target) ------------------------------------------------
def decoder_io_cases():
    return [
        Case((torch.tensor([[5, 4, 3]]), torch.tensor([3]))),
        Case(
            (torch.tensor([[5, 4, 3, 0], [7, 6, 0, 0], [8, 0, 0, 0]]), torch.tensor([3, 2, 1])),
            "no row fills the padded width",
        ),
        Case((torch.tensor([[12, 11, 10, 9, 8, 7]]), torch.tensor([6]))),
        Case((torch.tensor([[9, 8, 7, 6, 5], [4, 3, 0, 0, 0]]), torch.tensor([5, 2]))),
    ]


def my_decoder_io(y, lengths):
    return data.make_decoder_io(y, lengths)


def decoder_io_scatter(y, lengths):
    batch = y.shape[0]
    bos = torch.full((batch, 1), data.BOS, dtype=y.dtype)
    pad = torch.full((batch, 1), data.PAD, dtype=y.dtype)
    decoder_input = torch.cat([bos, y], dim=1)  # (batch, max_len + 1): shifted right by one
    target = torch.cat([y, pad], dim=1).scatter(1, lengths[:, None], data.EOS)  # EOS right after the last token
    return decoder_input, target


def decoder_io_loop(y, lengths):
    batch, max_len = y.shape
    decoder_input = torch.full((batch, max_len + 1), data.PAD, dtype=y.dtype)
    target = torch.full((batch, max_len + 1), data.PAD, dtype=y.dtype)
    for b, n in enumerate(lengths.tolist()):
        decoder_input[b, 0] = data.BOS
        decoder_input[b, 1 : n + 1] = y[b, :n]
        target[b, :n] = y[b, :n]
        target[b, n] = data.EOS
    return decoder_input, target


def _y_with_eos(y, lengths):
    pad = torch.full((y.shape[0], 1), data.PAD, dtype=y.dtype)
    return torch.cat([y, pad], dim=1).scatter(1, lengths[:, None], data.EOS)  # (batch, max_len + 1)


def decoder_io_fed_target(y, lengths):
    target = _y_with_eos(y, lengths)
    return target.clone(), target


def decoder_io_eos_after_padding(y, lengths):
    batch = y.shape[0]
    bos = torch.full((batch, 1), data.BOS, dtype=y.dtype)
    eos = torch.full((batch, 1), data.EOS, dtype=y.dtype)
    return torch.cat([bos, y], dim=1), torch.cat([y, eos], dim=1)


MY_DECODER_IO = Exercise(
    id="07.my_decoder_io",
    section="07 · Teacher forcing, done right",
    make_cases=decoder_io_cases,
    reference=my_decoder_io,
    variants=(decoder_io_scatter, decoder_io_loop),
    buggy={"decoder_fed_target": decoder_io_fed_target, "eos_after_padding": decoder_io_eos_after_padding},
    hints=(
        "At step t the decoder must predict target[t]. Which token may it see at step t, so that it never reads "
        "the answer it is asked for?",
        "decoder_input is BOS followed by y (shifted right by one); target is y followed by EOS, with the EOS right "
        "after each sequence's last real token, not after its padding.",
        "Both are one column longer than y. A column of BOS concatenated in front gives the input; for the target, "
        "append a PAD column, then write EOS at column lengths[b] of row b (a loop, or scatter).",
    ),
    output_names=("decoder_input", "target"),
)


# ---- 07.my_additive_scores(s, h, W_s, W_h, v) -> (batch, k_len) --------------------------------------------
def additive_cases():
    gen = torch.Generator().manual_seed(1)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    return [
        Case((randn(1, 4), randn(1, 3, 6), randn(4, 2), randn(6, 2), randn(2))),
        Case((randn(3, 8), randn(3, 5, 7), randn(8, 4), randn(7, 4), randn(4))),
    ]


def my_additive_scores(s, h, W_s, W_h, v):
    return rnn.additive_scores(s @ W_s, h @ W_h, v)


def additive_broadcast(s, h, W_s, W_h, v):
    # (batch, 1, d_attn) + (batch, k_len, d_attn) -> (batch, k_len, d_attn) -> (batch, k_len)
    return torch.tanh((s @ W_s)[:, None, :] + h @ W_h) @ v


def additive_einsum(s, h, W_s, W_h, v):
    query = torch.einsum("bd,da->ba", s, W_s)
    keys = torch.einsum("bkd,da->bka", h, W_h)
    return torch.einsum("bka,a->bk", torch.tanh(query.unsqueeze(1) + keys), v)


def additive_scores_no_tanh(s, h, W_s, W_h, v):
    return ((s @ W_s)[:, None, :] + h @ W_h) @ v


MY_ADDITIVE_SCORES = Exercise(
    id="07.my_additive_scores",
    section="07 · Additive attention",
    make_cases=additive_cases,
    reference=my_additive_scores,
    variants=(additive_broadcast, additive_einsum),
    buggy={"additive_no_tanh": additive_scores_no_tanh},
    hints=(
        "The score of key j is v · tanh(s W_s + h_j W_h). Which part is the same for every key, and which changes "
        "with j? What shape does each part have?",
        "Project both sides (s @ W_s is (batch, d_attn), h @ W_h is (batch, k_len, d_attn)), add the query part to "
        "every key part, apply tanh, then take the dot product with v.",
        "Give the query part a length axis, (s @ W_s)[:, None, :], so it broadcasts over the keys; multiplying a "
        "(batch, k_len, d_attn) tensor by v of shape (d_attn,) gives (batch, k_len).",
    ),
    atol=1e-5,
)


# ---- 07.my_attention_step(s, keys, key_mask, W_s, W_h, v) -> (context, weights) ---------------------------
def step_cases():
    gen = torch.Generator().manual_seed(7)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    def padded(lengths, src_len):
        return torch.arange(src_len)[None, :] < torch.tensor(lengths)[:, None]  # (batch, src_len), True = real

    # s (batch, d_hidden), keys (batch, src_len, d_key), key_mask (batch, src_len), W_s, W_h, v
    return [
        Case((randn(2, 4), randn(2, 5, 6), padded([5, 3], 5), randn(4, 3), randn(6, 3), randn(3))),
        Case((randn(3, 8), randn(3, 7, 4), padded([2, 7, 4], 7), randn(8, 5), randn(4, 5), randn(5))),
        Case(
            (randn(4, 2), randn(4, 3, 5), padded([2, 1, 2, 1], 3), randn(2, 6), randn(5, 6), randn(6)),
            "no row fills the padded width",
        ),
        Case(
            (randn(2, 3), randn(2, 4, 5), padded([4, 2], 4), randn(3, 6), randn(5, 6), 400 * randn(6)),
            "scores in the thousands",
        ),
    ]


def my_attention_step(s, keys, key_mask, W_s, W_h, v):
    """The package's own code path: an ``AdditiveAttention`` holding these matrices (no key bias)."""
    with torch_seeded(0), torch.no_grad():
        attention = rnn.AdditiveAttention(W_s.shape[0], W_h.shape[0], W_s.shape[1])
        attention.query_proj.weight.copy_(W_s.T)  # nn.Linear stores (d_out, d_in): the transpose
        attention.key_proj.weight.copy_(W_h.T)
        attention.key_proj.bias.zero_()
        attention.score_proj.weight.copy_(v[None, :])  # (1, d_attn)
        context, weights = attention(s, keys, key_mask)
    return context, weights


def _scores(s, keys, W_s, W_h, v):
    # (batch, 1, d_attn) + (batch, src_len, d_attn) -> (batch, src_len, d_attn) -> (batch, src_len)
    return torch.tanh((s @ W_s)[:, None, :] + keys @ W_h) @ v


def _context(weights, values):
    # (batch, 1, src_len) @ (batch, src_len, d) -> (batch, 1, d) -> (batch, d)
    return (weights[:, None, :] @ values).squeeze(1)


def attention_step_explicit(s, keys, key_mask, W_s, W_h, v):
    scores = _scores(s, keys, W_s, W_h, v).masked_fill(~key_mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # over the source positions
    return _context(weights, keys), weights


def attention_step_einsum(s, keys, key_mask, W_s, W_h, v):
    energy = torch.tanh(torch.einsum("bd,da->ba", s, W_s)[:, None] + torch.einsum("bkd,da->bka", keys, W_h))
    scores = torch.where(key_mask, energy @ v, torch.tensor(float("-inf")))
    weights = scores.softmax(dim=1)
    return torch.einsum("bk,bkd->bd", weights, keys), weights


def attention_step_softmax_over_batch(s, keys, key_mask, W_s, W_h, v):
    scores = _scores(s, keys, W_s, W_h, v).masked_fill(~key_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)  # over the decoder's batch, not over the source positions
    return _context(weights, keys), weights


def attention_step_padding_not_masked(s, keys, key_mask, W_s, W_h, v):
    weights = torch.softmax(_scores(s, keys, W_s, W_h, v), dim=-1)  # PAD positions keep their weight
    return _context(weights, keys), weights


def attention_step_context_from_projected_keys(s, keys, key_mask, W_s, W_h, v):
    scores = _scores(s, keys, W_s, W_h, v).masked_fill(~key_mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return _context(weights, keys @ W_h), weights  # the weighted sum of W_h h_j instead of h_j


MY_ATTENTION_STEP = Exercise(
    id="07.my_attention_step",
    section=_BUILD,
    make_cases=step_cases,
    reference=my_attention_step,
    variants=(attention_step_explicit, attention_step_einsum),
    buggy={
        "attention_softmax_over_batch": attention_step_softmax_over_batch,
        "attention_padding_not_masked": attention_step_padding_not_masked,
        "attention_context_from_projected_keys": attention_step_context_from_projected_keys,
    },
    hints=(
        "Four moves: a score per source position, padding hidden, weights that sum to 1, a context. Which tensor "
        "holds the values that the context averages?",
        "Scores v · tanh(s W_s + h_j W_h) for every source position j; -inf where key_mask is False; a softmax over "
        "the source positions; the weighted sum of the keys themselves (they are also the values).",
        "The scores are (batch, src_len), so the softmax runs over dim=-1. For the context, (batch, 1, src_len) @ "
        "(batch, src_len, d_key) gives (batch, 1, d_key): squeeze the middle axis.",
    ),
    output_names=("context", "weights"),
    atol=1e-5,
)

EXERCISES = [MY_DECODER_IO, MY_ADDITIVE_SCORES, MY_ATTENTION_STEP]
PREDICTIONS: list = []
