"""course_utils.reversal.rnn: the additive score, AdditiveAttention, the GRU models' contract pieces."""

from __future__ import annotations

import pytest
import torch
from _models import small  # tests/reversal/_models.py
from hypothesis import given, settings
from hypothesis import strategies as st

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


# ---- gru_step: nn.GRUCell's equations as a function -------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 4), d_in=st.integers(1, 6), d_hidden=st.integers(1, 6), bias=st.booleans())
def test_gru_step_equals_grucell(batch, d_in, d_hidden, bias):
    torch.manual_seed(batch * 100 + d_in * 10 + d_hidden)
    cell = torch.nn.GRUCell(d_in, d_hidden, bias=bias)
    x, h = torch.randn(batch, d_in), torch.randn(batch, d_hidden)
    got = rnn.gru_step(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    torch.testing.assert_close(got, cell(x, h), rtol=1e-6, atol=1e-6)
    zero = torch.zeros_like(h)
    torch.testing.assert_close(
        rnn.gru_step(x, zero, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), cell(x, zero)
    )


def test_gru_step_update_gate_keeps_the_state():
    d = 3
    weight_ih, weight_hh = torch.zeros(3 * d, 2), torch.zeros(3 * d, d)
    bias = torch.zeros(3 * d)
    bias[d : 2 * d] = 50.0  # z = sigmoid(50) = 1: h' = h
    h = torch.tensor([[0.3, -0.2, 0.9]])
    torch.testing.assert_close(rnn.gru_step(torch.ones(1, 2), h, weight_ih, weight_hh, bias, None), h)
    bias[d : 2 * d] = -50.0  # z = 0: h' = n = tanh(0) = 0
    torch.testing.assert_close(rnn.gru_step(torch.ones(1, 2), h, weight_ih, weight_hh, bias, None), torch.zeros(1, 3))


def test_gru_step_refuses_bad_shapes():
    cell = torch.nn.GRUCell(3, 4)
    x, h = torch.randn(2, 3), torch.randn(2, 4)
    with pytest.raises(ValueError, match=r"weight_ih must be \(3 \* d_hidden, d_in\) = \(12, 3\)"):
        rnn.gru_step(x, h, cell.weight_ih.T, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    with pytest.raises(ValueError, match=r"x must be \(batch, d_in\) and h \(batch, d_hidden\)"):
        rnn.gru_step(x[0], h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    with pytest.raises(ValueError, match=r"bias_hh must be \(3 \* d_hidden,\) = \(12,\)"):
        rnn.gru_step(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh[:4])


# ---- attention_decoder_step: the body of AttentionGRUSeq2Seq.decode_step --------------------------------------


@torch.no_grad()
def test_attention_decoder_step_is_the_forward_pass_step_bit_for_bit(batch):
    from course_utils.reversal import checkpoints

    model = checkpoints.load_pretrained("gru_attention")
    state = model.init_state(batch.src, batch.src_lengths)
    forward_state = dict(state)
    for t in range(batch.decoder_input.shape[1]):
        tokens = batch.decoder_input[:, t]
        logits, state, weights = rnn.attention_decoder_step(model, state, tokens)
        forward_state, forward_weights = model._step(forward_state, model.embed(tokens))  # what forward runs
        expected = model.out_proj(torch.cat([forward_state["s"], forward_state["context"]], dim=-1))
        assert torch.equal(logits, expected) and torch.equal(weights, forward_weights)
        assert torch.equal(state["s"], forward_state["s"]) and torch.equal(state["context"], forward_state["context"])
    assert model.decode_step(state, tokens)[0].shape == (3, model.config.vocab)


@torch.no_grad()
def test_attention_decoder_step_works_on_a_lesson_style_model(batch):
    course = small("gru_attention")

    class Lesson(torch.nn.Module):  # what 07's MyAttentionGRU exposes: the parts, no private helpers
        def __init__(self):
            super().__init__()
            self.embed, self.cell, self.attention, self.out_proj = (
                course.embed,
                course.cell,
                course.attention,
                course.out_proj,
            )

    state = course.init_state(batch.src, batch.src_lengths)
    tokens = torch.full((3,), 1)
    ours = rnn.attention_decoder_step(Lesson(), state, tokens)
    theirs = course.decode_step(state, tokens)
    for a, b in zip(ours[:1] + ours[2:], theirs[:1] + theirs[2:], strict=True):
        assert torch.equal(a, b)
    assert state["s"] is not ours[1]["s"]  # a new state dict; the old one is unchanged


def test_attention_decoder_step_refuses_bad_input(batch):
    model = small("gru_attention")
    state = model.init_state(batch.src, batch.src_lengths)
    with pytest.raises(TypeError, match="model must have embed, cell, attention and out_proj"):
        rnn.attention_decoder_step(small("gru"), state, torch.ones(3, dtype=torch.long))
    with pytest.raises(TypeError, match="state must be the dict model.init_state"):
        rnn.attention_decoder_step(model, {"s": 1}, torch.ones(3, dtype=torch.long))
    with pytest.raises(ValueError, match=r"tokens must be \(batch,\) = \(3,\)"):
        rnn.attention_decoder_step(model, state, torch.ones(2, dtype=torch.long))
