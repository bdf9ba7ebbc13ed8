"""course_utils.reversal.rnn: the additive score, AdditiveAttention, the GRU models' contract pieces."""

from __future__ import annotations

import pytest
import torch
from _models import small  # tests/reversal/_models.py

from course_utils.reversal import rnn


@torch.no_grad()
def test_additive_score_depends_on_the_decoder_state():
    torch.manual_seed(0)
    attention = rnn.AdditiveAttention(d_query=8, d_key=6, d_attn=5)
    keys = torch.randn(1, 7, 6) * 3
    key_mask = torch.ones(1, 7, dtype=torch.bool)
    _, w1 = attention(torch.randn(1, 8) * 3, keys, key_mask)
    _, w2 = attention(torch.randn(1, 8) * 3, keys, key_mask)
    assert float((w1 - w2).abs().max()) > 0.05  # the tanh lets the state change *where* it looks


@torch.no_grad()
def test_seed_concat_score_ignores_the_decoder_state():
    torch.manual_seed(0)
    linear = torch.nn.Linear(8 + 6, 1)
    h = torch.randn(2, 7, 6)
    s1, s2 = torch.randn(2, 8), torch.randn(2, 8) * 5
    scores1 = rnn.concat_linear_scores(s1, h, linear.weight, linear.bias)
    scores2 = rnn.concat_linear_scores(s2, h, linear.weight, linear.bias)
    assert not torch.allclose(scores1, scores2)  # the scores move ...
    torch.testing.assert_close(torch.softmax(scores1, -1), torch.softmax(scores2, -1))  # ... the weights do not
    both = torch.cat([s1[:, None].expand(-1, 7, -1), h], dim=-1)  # the helper equals nn.Linear on [s; h_j]
    torch.testing.assert_close(scores1, linear(both).squeeze(-1))


def test_additive_scores_match_a_loop():
    torch.manual_seed(0)
    query_part, key_part, v = torch.randn(2, 4), torch.randn(2, 3, 4), torch.randn(4)
    expected = torch.tensor(
        [[float(v @ torch.tanh(query_part[b] + key_part[b, j])) for j in range(3)] for b in range(2)]
    )
    torch.testing.assert_close(rnn.additive_scores(query_part, key_part, v), expected)


def test_gru_models_accept_max_steps_and_ignore_it(batch):
    for kind in ("gru", "gru_attention"):
        model = small(kind)
        with torch.no_grad():
            a = model.init_state(batch.src, batch.src_lengths)
            b = model.init_state(batch.src, batch.src_lengths, max_steps=3)
        for key in a:
            torch.testing.assert_close(a[key], b[key])


# ------------------------------------------------------------------------------------------- bad input


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="GRUConfig.d_hidden"):
        rnn.GRUConfig(d_hidden=0)
    with pytest.raises(TypeError, match="cfg must be a GRUConfig"):
        rnn.GRUSeq2Seq({"d_hidden": 8})
    with pytest.raises(ValueError, match="d_attn"):
        rnn.additive_scores(torch.ones(2, 4), torch.ones(2, 3, 5), torch.ones(4))
    with pytest.raises(TypeError, match="query_part"):
        rnn.additive_scores([[1.0]], torch.ones(2, 3, 4), torch.ones(4))
    with pytest.raises(TypeError, match="key_mask must be boolean"):
        rnn.AdditiveAttention(4, 6, 5)(torch.ones(2, 4), torch.ones(2, 3, 6), torch.ones(2, 3))
