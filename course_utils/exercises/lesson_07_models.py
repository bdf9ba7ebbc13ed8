"""Exercises of lesson 07 in which the student writes a part of the model the lesson trains.

Introduced in ``notebooks/07_seq2seq_rnn_attention.ipynb``. Kept apart from
:mod:`course_utils.exercises.lessons_05_08` so that each lesson's model exercises live next to their
cases, references and misconceptions. Nothing here runs torch at import time.

``07.my_attention_step(s, keys, key_mask, W_s, W_h, v) -> (context, weights)`` is one attention step of
the decoder in *Build it: the attention GRU, part by part*, written from raw matrices (row vectors:
``s @ W_s``): additive scores, padding masked, softmax over the source positions, context.
"""

from __future__ import annotations

from course_utils import misconceptions as _misconceptions
from course_utils.exercises._model import Exercise
from course_utils.exercises._seeding import torch_seeded

__all__ = ["EXERCISES", "PREDICTIONS", "MISCONCEPTIONS"]

_SECTION = "07 · Build it: the attention GRU, part by part"


# --------------------------------------------------------------------------- cases and reference
def _step_cases():
    import torch

    gen = torch.Generator().manual_seed(7)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    def padded(lengths, src_len):
        return torch.arange(src_len)[None, :] < torch.tensor(lengths)[:, None]  # (batch, src_len), True = real

    # s (batch, d_hidden), keys (batch, src_len, d_key), key_mask (batch, src_len), W_s, W_h, v
    return [
        (randn(2, 4), randn(2, 5, 6), padded([5, 3], 5), randn(4, 3), randn(6, 3), randn(3)),
        (randn(3, 8), randn(3, 7, 4), padded([2, 7, 4], 7), randn(8, 5), randn(4, 5), randn(5)),
        (randn(4, 2), randn(4, 3, 2), padded([3, 1, 2, 3], 3), randn(2, 2), randn(2, 2), randn(2)),
    ]


def _step_reference(s, keys, key_mask, W_s, W_h, v):
    """The package's own code path: an ``AdditiveAttention`` holding these matrices (no key bias)."""
    import torch

    from course_utils.reversal import rnn

    with torch_seeded(0), torch.no_grad():
        attention = rnn.AdditiveAttention(W_s.shape[0], W_h.shape[0], W_s.shape[1])
        attention.query_proj.weight.copy_(W_s.T)  # nn.Linear stores (d_out, d_in): the transpose
        attention.key_proj.weight.copy_(W_h.T)
        attention.key_proj.bias.zero_()
        attention.score_proj.weight.copy_(v[None, :])  # (1, d_attn)
        context, weights = attention(s, keys, key_mask)
    return context, weights


# --------------------------------------------------------------------------- misconceptions
def _scores(s, keys, W_s, W_h, v):
    import torch

    # (batch, 1, d_attn) + (batch, src_len, d_attn) -> (batch, src_len, d_attn) -> (batch, src_len)
    return torch.tanh((s @ W_s)[:, None, :] + keys @ W_h) @ v


def _context(weights, values):
    # (batch, 1, src_len) @ (batch, src_len, d) -> (batch, 1, d) -> (batch, d)
    return (weights[:, None, :] @ values).squeeze(1)


def attention_step_softmax_over_batch(s, keys, key_mask, W_s, W_h, v):
    import torch

    scores = _scores(s, keys, W_s, W_h, v).masked_fill(~key_mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)  # over the decoder's batch, not over the source positions
    return _context(weights, keys), weights


def attention_step_padding_not_masked(s, keys, key_mask, W_s, W_h, v):
    import torch

    weights = torch.softmax(_scores(s, keys, W_s, W_h, v), dim=-1)  # PAD positions keep their weight
    return _context(weights, keys), weights


def attention_step_context_from_projected_keys(s, keys, key_mask, W_s, W_h, v):
    import torch

    scores = _scores(s, keys, W_s, W_h, v).masked_fill(~key_mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return _context(weights, keys @ W_h), weights  # the weighted sum of W_h h_j instead of h_j


MISCONCEPTIONS = [
    _misconceptions.Misconception(
        "attention_softmax_over_batch",
        "softmax over the batch (dim=0): each decoder state's weights must sum to 1 over the source positions (dim=-1)",
        _SECTION,
    ),
    _misconceptions.Misconception(
        "attention_padding_not_masked",
        "padding not masked: PAD positions get weight; fill their scores with -inf before the softmax",
        _SECTION,
    ),
    _misconceptions.Misconception(
        "attention_context_from_projected_keys",
        "the context sums the projected keys W_h h_j: it is the weighted sum of the encoder outputs h_j themselves "
        "(they are the values)",
        _SECTION,
    ),
]

_misconceptions.register(MISCONCEPTIONS)  # make them known to checks.check, which names them by id


# --------------------------------------------------------------------------- the exercises
EXERCISES: list = [
    Exercise(
        id="07.my_attention_step",
        title="my_attention_step",
        section=_SECTION,
        function="my_attention_step",
        make_cases=_step_cases,
        reference=_step_reference,
        misconceptions={
            "attention_softmax_over_batch": attention_step_softmax_over_batch,
            "attention_padding_not_masked": attention_step_padding_not_masked,
            "attention_context_from_projected_keys": attention_step_context_from_projected_keys,
        },
        forbidden=(
            "course_utils.reversal.rnn:additive_scores",
            "course_utils.reversal.rnn:AdditiveAttention.forward",
            "course_utils.reversal.rnn:AttentionGRUSeq2Seq.decode_step",
        ),
        hints=(
            "Four moves: the scores v · tanh(s W_s + h_j W_h) for every source position j; -inf where key_mask is "
            "False; a softmax over the source positions; the weighted sum of the keys (they are also the values).",
            "scores = torch.tanh((s @ W_s)[:, None, :] + keys @ W_h) @ v is (batch, src_len). Then "
            "scores.masked_fill(~key_mask, float('-inf')), torch.softmax(..., dim=-1), and "
            "(weights[:, None, :] @ keys).squeeze(1) for the (batch, d_key) context.",
        ),
        output_names=("context", "weights"),
        atol=1e-5,
    ),
]
PREDICTIONS: list = []
