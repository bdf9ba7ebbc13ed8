"""A NaN result explained by where it first appears, and by the overflow before it (issue 26 §2, round 4).

A softmax written by hand without the max shift gives inf for a score in the thousands and then inf / inf = NaN:
the NaN's origin says so and the answer is named (``nan:overflow``). A NaN after a ``-inf`` fill (a fully
masked row) is no overflow and is not named as one. Each test fails without ``traces.has_overflow`` and the
words :func:`course_utils.checking.traces.nan_origin` adds.
"""

from __future__ import annotations

import torch
from torch import nn

from course_utils.checking import engine, registry, traces


def test_the_origin_of_a_nan_says_which_value_overflowed_first():
    def softmax_by_hand(scores):
        e = torch.exp(scores)
        weights = e / e.sum(dim=-1, keepdim=True)
        return weights

    scores = torch.tensor([[1000.0, 1.0], [0.0, 1.0]])
    origin = traces.nan_origin(lambda: softmax_by_hand(scores), {softmax_by_hand.__code__}, given=(scores,))
    assert origin.startswith("`weights`") and f"`e` {traces.OVERFLOW_WORDS}" in origin
    assert traces.overflow_key(f" The first NaN appears in {origin}.", True) == "nan:overflow"
    assert traces.overflow_key(f" The first NaN appears in {origin}.", False) is None  # other cases fail too


def test_a_nan_after_a_minus_inf_fill_is_no_overflow():
    def masked_by_hand(scores, mask):
        filled = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(filled, dim=-1)
        return weights

    scores, mask = torch.zeros(2, 3), torch.tensor([[True, False, True], [False, False, False]])
    origin = traces.nan_origin(lambda: masked_by_hand(scores, mask), {masked_by_hand.__code__}, given=(scores,))
    assert origin.startswith("`weights`") and traces.OVERFLOW_WORDS not in origin
    assert not traces.has_overflow(torch.tensor([float("-inf"), 1.0])) and traces.has_overflow(torch.tensor([1e39]))


class MyAdditiveAttention(nn.Module):
    def __init__(self, d_query, d_key, d_attn):
        super().__init__()
        self.query_proj = nn.Linear(d_query, d_attn, bias=False)  # W_s
        self.key_proj = nn.Linear(d_key, d_attn)  # W_h
        self.score_proj = nn.Linear(d_attn, 1, bias=False)  # v

    def forward(self, s, keys, key_mask, projected_keys):
        # (batch, 1, d_attn) + (batch, src_len, d_attn) -> (batch, src_len)
        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        e = torch.exp(scores) * key_mask  # no max shift: a score in the thousands overflows
        weights = e / e.sum(dim=-1, keepdim=True)
        return (weights[:, :, None] * keys).sum(dim=1), weights


def test_a_softmax_that_overflows_is_named_by_its_overflow():
    verdict = engine.judge(registry.get("07.additive_attention"), MyAdditiveAttention)
    assert verdict.status == "wrong" and verdict.relation in ("nan:overflow", "nan:exp_overflow"), verdict.detail
    assert traces.OVERFLOW_WORDS in verdict.detail
