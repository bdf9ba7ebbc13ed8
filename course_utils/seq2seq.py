"""Lesson-facing names; the code lives in course_utils.reversal.

Kept while lessons 07 and 08 still write ``seq2seq.<name>``; each name is the very object of its
``course_utils.reversal`` module (``rnn``, ``transformer``, ``decoding``, ``checkpoints``), except
:func:`greedy_decode`, which still accepts the old keyword ``max_len`` for ``max_steps``.
"""

from __future__ import annotations

from course_utils.reversal import decoding as _decoding
from course_utils.reversal.checkpoints import (
    PRETRAINED,
    build_model,
    count_parameters,
    load_pretrained,
    save_checkpoint,
)
from course_utils.reversal.decoding import check_source
from course_utils.reversal.rnn import (
    AdditiveAttention,
    AttentionGRUSeq2Seq,
    GRUConfig,
    GRUSeq2Seq,
    additive_scores,
    concat_linear_scores,
)
from course_utils.reversal.transformer import (
    TransformerConfig,
    TransformerSeq2Seq,
    make_decoder_masks,
    sinusoidal_positions,
)

__all__ = [
    "GRUConfig",
    "TransformerConfig",
    "GRUSeq2Seq",
    "AttentionGRUSeq2Seq",
    "TransformerSeq2Seq",
    "AdditiveAttention",
    "additive_scores",
    "concat_linear_scores",
    "sinusoidal_positions",
    "make_decoder_masks",
    "build_model",
    "count_parameters",
    "greedy_decode",
    "check_source",
    "PRETRAINED",
    "load_pretrained",
    "save_checkpoint",
]


def greedy_decode(model, src, src_lengths, max_steps=None, return_attention: bool = False, *, max_len=None):
    """:func:`course_utils.reversal.decoding.greedy_decode`; ``max_len`` is the old name of ``max_steps``."""
    if max_len is not None:
        if max_steps is not None:
            raise TypeError("give max_steps or its old name max_len, not both")
        return _decoding.greedy_decode(model, src, src_lengths, max_steps=max_len, return_attention=return_attention)
    return _decoding.greedy_decode(model, src, src_lengths, max_steps=max_steps, return_attention=return_attention)
