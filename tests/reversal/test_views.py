"""course_utils.reversal.views: the explorer on any reversal model, its numbers the models' own weights.

Oracles: greedy_decode returns the GRU's additive attention and the Transformer's last cross-attention; everything
else (encoder and decoder self-attention, every layer) comes from explorer.capture_attention, checked against the
masks. Labels come from data.step_labels: a decoder row is the token its step writes. Lesson-style models built here
(no course class, only the attribute names the lessons' state dicts share) get the same views.
"""

from __future__ import annotations

import numpy as np
import pytest
from torch import nn

from course_utils import data, env, explorer
from course_utils.reversal import checkpoints, decoding, views


@pytest.fixture(scope="module")
def transformer():
    return checkpoints.load_pretrained("transformer")


@pytest.fixture(scope="module")
def gru_attention():
    return checkpoints.load_pretrained("gru_attention")


def greedy(model, text: str):
    batch = data.collate([data.encode(text)])
    out, weights = decoding.greedy_decode(model, batch.src, batch.src_lengths, return_attention=True)
    return out[0], weights[0].double().numpy()


# ---- the course's models -----------------------------------------------------------------------------------------


def test_transformer_cross_attention_is_greedy_decodes(transformer):
    snap = views.seq2seq_snapshot(transformer, "abcdefghij")
    assert snap.output_text == "jihgfedcba"
    assert list(snap.views) == ["encoder self-attention", "decoder self-attention (causal)", "cross-attention"]
    cross = snap.views["cross-attention"]
    out, expected = greedy(transformer, "abcdefghij")  # (heads, steps, src_len)
    assert cross.weights.shape == (1, *expected.shape)
    np.testing.assert_allclose(cross.weights[-1], expected, atol=1e-5)
    read, written = data.step_labels(out)
    assert cross.query_labels == written and cross.query_outputs == written and cross.query_reads == read
    assert cross.query_labels[:2] == ["j", "i"] and cross.query_reads[:2] == ["<bos>", "j"]
    assert cross.key_labels == list("abcdefghij") and cross.mask.all()


def test_transformer_self_attention_masks_rows_and_labels(transformer):
    snap = views.seq2seq_snapshot(transformer, "hij")
    enc, dec = snap.views["encoder self-attention"], snap.views["decoder self-attention (causal)"]
    assert enc.weights.shape == (1, 4, 3, 3) and enc.mask.all() and enc.query_outputs is None
    assert enc.query_labels == enc.key_labels == ["h", "i", "j"] and enc.query_reads is None
    steps = dec.weights.shape[-1]
    np.testing.assert_array_equal(dec.mask, np.tril(np.ones((steps, steps), dtype=bool)))
    assert np.abs(dec.weights[..., ~dec.mask]).max() == 0  # nothing on future positions
    assert dec.query_labels == ["j", "i", "h", "<eos>"]  # rows: what each step writes
    assert dec.key_labels == ["<bos>", "j", "i", "h"]  # keys: what each step reads
    for view in (enc, dec):
        np.testing.assert_allclose(view.weights.sum(-1), 1.0, atol=1e-6)


def test_every_layer_is_captured():
    env.set_seed(0)
    model = checkpoints.build_model("transformer", num_layers=2).eval()
    snap = views.seq2seq_snapshot(model, "abcd")
    assert {name: v.weights.shape[:2] for name, v in snap.views.items()} == {
        "encoder self-attention": (2, 4),
        "decoder self-attention (causal)": (2, 4),
        "cross-attention": (2, 4),
    }
    assert not model.encoder_layers[1].self_attn._forward_hooks  # the hooks are removed
    assert not model.training  # the model's mode is restored (it was eval)


def test_gru_additive_attention_is_greedy_decodes(gru_attention):
    snap = views.seq2seq_snapshot(gru_attention, "abcdefg")
    (view,) = snap.views.values()
    assert view.name == "additive attention" and snap.output_text == "gfedcba"
    out, expected = greedy(gru_attention, "abcdefg")
    np.testing.assert_array_equal(view.weights[0, 0], expected)
    assert view.query_labels == list("gfedcba") + ["<eos>"] == view.query_outputs
    assert view.query_reads == ["<bos>", *"gfedcba"]


def test_gru_without_attention_is_refused():
    with pytest.raises(ValueError, match="no attention weights"):
        views.seq2seq_snapshot(checkpoints.build_model("gru"), "abc")


def test_bad_inputs_are_named(transformer):
    with pytest.raises(ValueError, match="text may only use the symbols"):
        views.seq2seq_snapshot(transformer, "abz")
    with pytest.raises(ValueError, match="text is empty"):
        views.seq2seq_snapshot(transformer, "  ")
    with pytest.raises(TypeError, match="text must be a string"):
        views.seq2seq_snapshot(transformer, [3, 4])
    with pytest.raises(TypeError, match="model must be a reversal model"):
        views.explore_seq2seq(nn.Linear(2, 2), ["abc"])
    with pytest.raises(ValueError, match="examples must be a non-empty list of strings"):
        views.explore_seq2seq(transformer, [])


# ---- lesson-style models: duck typing, no course class ----------------------------------------------------------


class MyAttentionGRU(nn.Module):
    """Lesson 07's shape of model: the course's parts under the course's names, its own decode_step."""

    def __init__(self, course):
        super().__init__()
        self.encoder, self.embed, self.init_proj = course.encoder, course.embed, course.init_proj
        self.attention, self.cell, self.out_proj = course.attention, course.cell, course.out_proj
        self.course = [course]  # not a submodule

    def init_state(self, src, src_lengths, max_steps=None):
        return self.course[0].init_state(src, src_lengths, max_steps)

    def decode_step(self, state, tokens):
        from course_utils.reversal import rnn

        return rnn.attention_decoder_step(self, state, tokens)

    def forward(self, src, src_lengths, decoder_input, return_attention=False):
        return self.course[0](src, src_lengths, decoder_input, return_attention)


class MyTransformer(decoding.RecomputePrefix, nn.Module):
    """Lesson 08's shape of model: encoder_layers / decoder_layers, decoding through RecomputePrefix."""

    def __init__(self, course):
        super().__init__()
        self.encoder_layers, self.decoder_layers = course.encoder_layers, course.decoder_layers
        self.course = [course]

    def forward(self, src, src_lengths, decoder_input, return_attention=False):
        return self.course[0](src, src_lengths, decoder_input, return_attention)


def test_a_lesson_style_gru_gets_the_course_view(gru_attention):
    mine = views.seq2seq_snapshot(MyAttentionGRU(gru_attention), "jabba")
    course = views.seq2seq_snapshot(gru_attention, "jabba")
    assert mine.model_name == "MyAttentionGRU" and mine.output_text == course.output_text == "abbaj"
    (a,), (b,) = mine.views.values(), course.views.values()
    np.testing.assert_array_equal(a.weights, b.weights)
    assert (a.query_labels, a.key_labels, a.query_reads) == (b.query_labels, b.key_labels, b.query_reads)


def test_a_lesson_style_transformer_gets_the_three_views(transformer):
    mine = views.seq2seq_snapshot(MyTransformer(transformer), "abcdefg")
    course = views.seq2seq_snapshot(transformer, "abcdefg")
    assert list(mine.views) == list(course.views) and mine.output_text == course.output_text
    for name in course.views:
        np.testing.assert_allclose(mine.views[name].weights, course.views[name].weights, atol=1e-6)
        assert mine.views[name].query_labels == course.views[name].query_labels
        assert mine.views[name].key_labels == course.views[name].key_labels
    explored = views.explore_seq2seq(MyTransformer(transformer), ["abc"])
    assert explored.summary().startswith("AttentionExplorer: MyTransformer on 'abc' -> 'cba'")


# ---- the widget on a reversal model ------------------------------------------------------------------------------


def test_query_buttons_say_what_each_step_writes_and_reads(transformer):
    ex = views.explore_seq2seq(transformer, ["abcdefg", "hij"])
    ex.select_view("cross-attention")
    ex._queries.children[4].click()  # the button a student clicks
    assert ex._queries.children[4].description == "4: writes c"
    assert ex._queries.children[4].tooltip == "reads d"  # shown on hover
    assert "writes <b>c</b>, reads <b>d</b>" in ex.table_html
    _, expected = greedy(transformer, "abcdefg")
    np.testing.assert_allclose(ex.view.weights[0, :, 4], expected[:, 4], atol=1e-5)  # every head's row 4


def test_the_explorer_opens_on_the_last_view_and_names_bad_choices(transformer):
    ex = views.explore_seq2seq(transformer, "abc")
    assert ex.view_name == "cross-attention"
    ex.select_view("encoder self-attention")
    assert ex._queries.children[0].description == "0: a"  # encoder queries are source symbols
    with pytest.raises(ValueError, match="view must be one of"):
        ex.select_view("nope")
    with pytest.raises(ValueError, match=r"index must be an int in range\(q_len=3\)"):
        ex.select_query(3)
    assert isinstance(ex, explorer.AttentionExplorer)
