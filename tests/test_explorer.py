"""The attention explorer (course_utils.explorer): its numbers are the models' own weights.

Oracles: lesson 05's RoleModel returns its weights; greedy_decode returns the GRU's additive
attention and the Transformer's last cross-attention; everything else (encoder and decoder
self-attention, every layer) comes from capture_attention, checked against the masks and against a
recomputation with need_weights=True. The widget is driven through its controls (button clicks, the
text box) without a browser; tests/browser/test_explorer_in_browser.py clicks it in JupyterLab.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pytest
import torch

from course_utils import data, env, explorer, heads
from course_utils.reversal import checkpoints, decoding


@pytest.fixture(scope="module")
def transformer():
    return checkpoints.load_pretrained("transformer")


@pytest.fixture(scope="module")
def gru_attention():
    return checkpoints.load_pretrained("gru_attention")


@pytest.fixture(scope="module")
def role_model():
    model, _ = heads.train_role_model(steps=40, seed=0)
    return model


def greedy_weights(model, text: str) -> np.ndarray:
    batch = data.collate([data.encode(text)])
    _, weights = decoding.greedy_decode(model, batch.src, batch.src_lengths, return_attention=True)
    return weights[0].double().numpy()


class _Table(HTMLParser):
    """Weight cells of a rendered table: (layer, head, key) -> (weight, masked), entropies and mask row."""

    def __init__(self):
        super().__init__()
        self.weights, self.entropy, self.allowed, self.table = {}, {}, {}, {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.table = a
        if tag == "td" and "data-weight" in a:
            key = (int(a["data-layer"]), int(a["data-head"]), int(a["data-key"]))
            self.weights[key] = (float(a["data-weight"]), a["data-masked"] == "true")
        if tag == "td" and "data-allowed" in a:
            self.allowed[int(a["data-key"])] = a["data-allowed"] == "true"
        if tag == "td" and "data-entropy" in a:
            self.entropy[len(self.entropy)] = float(a["data-entropy"])


def parse(table_html: str) -> _Table:
    parser = _Table()
    parser.feed(table_html)
    return parser


# ------------------------------------------------------------------------------- snapshots


def test_transformer_cross_attention_is_greedy_decodes(transformer):
    snap = explorer.seq2seq_snapshot(transformer, "abcdefghij")
    assert snap.output_text == "jihgfedcba"
    assert list(snap.views) == ["encoder self-attention", "decoder self-attention (causal)", "cross-attention"]
    cross = snap.views["cross-attention"]
    expected = greedy_weights(transformer, "abcdefghij")  # (heads, steps, src_len)
    assert cross.weights.shape == (1, *expected.shape)
    np.testing.assert_allclose(cross.weights[-1], expected, atol=1e-5)
    assert cross.query_labels[:2] == ["<bos>", "j"] and cross.query_outputs[:2] == ["j", "i"]
    assert cross.key_labels == list("abcdefghij") and cross.mask.all()


def test_transformer_self_attention_masks_and_rows(transformer):
    snap = explorer.seq2seq_snapshot(transformer, "hij")
    enc, dec = snap.views["encoder self-attention"], snap.views["decoder self-attention (causal)"]
    assert enc.weights.shape == (1, 4, 3, 3) and enc.mask.all() and enc.query_outputs is None
    steps = dec.weights.shape[-1]
    np.testing.assert_array_equal(dec.mask, np.tril(np.ones((steps, steps), dtype=bool)))
    assert np.abs(dec.weights[..., ~dec.mask]).max() == 0  # nothing on future positions
    for view in (enc, dec):
        np.testing.assert_allclose(view.weights.sum(-1), 1.0, atol=1e-6)


def test_every_layer_is_captured_and_hooks_are_removed():
    env.set_seed(0)
    model = checkpoints.build_model("transformer", num_layers=2).eval()
    snap = explorer.seq2seq_snapshot(model, "abcd")
    assert {name: v.weights.shape[:2] for name, v in snap.views.items()} == {
        "encoder self-attention": (2, 4),
        "decoder self-attention (causal)": (2, 4),
        "cross-attention": (2, 4),
    }
    layer = model.encoder_layers[1]
    assert not layer.self_attn._forward_hooks
    x = torch.randn(1, 4, 32)
    with torch.no_grad(), explorer.capture_attention(layer) as records:
        out = layer.self_attn(x, x, x, need_weights=False)[0]
        direct_out, direct = layer.self_attn.forward(x, x, x, need_weights=True)  # forward(): no hooks
    ((name, weights, mask),) = records
    assert name == "self_attn" and mask is None
    np.testing.assert_allclose(weights, direct.double().numpy(), atol=1e-7)
    torch.testing.assert_close(out, direct_out, atol=1e-6, rtol=1e-5)  # the model's output is untouched


def test_gru_additive_attention_is_greedy_decodes(gru_attention):
    snap = explorer.seq2seq_snapshot(gru_attention, "abcdefg")
    (view,) = snap.views.values()
    assert view.name == "additive attention" and snap.output_text == "gfedcba"
    np.testing.assert_array_equal(view.weights[0, 0], greedy_weights(gru_attention, "abcdefg"))
    assert view.query_outputs[-1] == "<eos>"


def test_gru_without_attention_is_refused():
    with pytest.raises(ValueError, match="no attention weights"):
        explorer.seq2seq_snapshot(checkpoints.build_model("gru"), "abc")


def test_role_model_weights_are_the_models(role_model):
    task = heads.make_role_task(1, seed=5)
    text = " ".join(heads.token_labels(task, 0))
    assert explorer.parse_role_sequence(text, role_model.config) == task.tokens[0].tolist()
    snap = explorer.role_model_snapshot(role_model, text)
    _, weights = role_model(task.tokens)
    np.testing.assert_array_equal(snap.views["self-attention"].weights[0], weights[0].detach().double().numpy())
    assert snap.views["self-attention"].query_outputs[0].startswith("previous ")


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "1 to 12 tokens"), ("Ar Zq", "token 'Zq' is not a shape"), (" ".join(["Ar"] * 13), "holds 13")],
)
def test_bad_role_sequences_are_named(role_model, text, message):
    with pytest.raises(ValueError, match=message):
        explorer.parse_role_sequence(text, role_model.config)


def test_bad_seq2seq_inputs_are_named(transformer):
    with pytest.raises(ValueError, match="text may only use the symbols"):
        explorer.seq2seq_snapshot(transformer, "abz")
    with pytest.raises(ValueError, match="text is empty"):
        explorer.seq2seq_snapshot(transformer, "  ")
    with pytest.raises(TypeError, match="text must be a string"):
        explorer.seq2seq_snapshot(transformer, [3, 4])


# ------------------------------------------------------------------------------- the table


def test_table_holds_the_query_row_of_every_layer_and_head(transformer):
    view = explorer.seq2seq_snapshot(transformer, "abcde").views["decoder self-attention (causal)"]
    table = parse(explorer.render_weights_table(view, 2))
    assert table.table["data-query"] == "2" and table.table["data-view"] == view.name
    layers, n_heads, _, k_len = view.weights.shape
    assert set(table.weights) == {(a, h, j) for a in range(layers) for h in range(n_heads) for j in range(k_len)}
    for (layer, head, key), (weight, masked) in table.weights.items():
        assert weight == view.weights[layer, head, 2, key]
        assert masked == (key > 2)
    assert table.allowed == {j: j <= 2 for j in range(k_len)}
    expected_entropy = heads.attention_entropy(view.weights[:, :, 2]).ravel()  # (layers * heads,)
    np.testing.assert_allclose(list(table.entropy.values()), expected_entropy, atol=1e-12)


def test_table_rejects_a_query_out_of_range(transformer):
    view = explorer.seq2seq_snapshot(transformer, "abc").views["encoder self-attention"]
    with pytest.raises(ValueError, match=r"query must be an int in range\(q_len=3\) but is 3"):
        explorer.render_weights_table(view, 3)


def test_view_rejects_mismatched_labels():
    with pytest.raises(ValueError, match="2 query and 2 key labels for weights of shape"):
        explorer.AttentionView("v", ["a", "b"], ["a", "b"], np.ones((1, 1, 3, 3)) / 3, True)


# ------------------------------------------------------------------------------- the widget


def test_clicking_a_query_shows_its_weights(transformer):
    ex = explorer.explore_seq2seq(transformer, ["abcdefg", "hij"])
    ex.select_view("cross-attention")
    ex._queries.children[4].click()  # the button a student clicks
    table = parse(ex.table_html)
    assert table.table["data-query"] == "4" and table.table["data-view"] == "cross-attention"
    expected = greedy_weights(transformer, "abcdefg")[:, 4]  # (heads, src_len)
    got = np.array([[table.weights[(0, h, j)][0] for j in range(7)] for h in range(4)])
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert "info" in ex._queries.children[4].button_style
    assert ex._queries.children[4].tooltip == "query 4: d → outputs c"  # reads d, writes c; shown on hover


def test_changing_the_input_moves_the_attention(transformer):
    ex = explorer.explore_seq2seq(transformer, ["abcdefg", "hij"])
    ex.select_view("cross-attention")
    ex._picker.value = 1  # the example picker
    assert ex.snapshot.input_text == "hij" and ex._text.value == "hij"
    ex._text.value = "jabba"  # typing a new input (sent on Enter)
    assert ex.snapshot.output_text == "abbaj" and ex.view_name == "cross-attention"
    assert len(ex._queries.children) == 6  # 5 symbols + EOS
    ex.select_query(0)
    row = [w for (_, h, _), (w, _) in sorted(parse(ex.table_html).weights.items()) if h == 0]
    np.testing.assert_allclose(row, greedy_weights(transformer, "jabba")[0, 0], atol=1e-5)
    ex._text.value = "no!"  # a bad input is shown, the last good run stays
    assert "text may only use the symbols" in ex.error and ex.snapshot.input_text == "jabba"
    assert "text may only use the symbols" in ex._output.value


def test_role_model_explorer_and_static_fallback(role_model):
    ex = explorer.explore_role_model(role_model, num_examples=3)
    assert len(ex._picker.options) == 3 and list(ex.snapshot.views) == ["self-attention"]
    ex._queries.children[5].click()
    assert parse(ex.table_html).table["data-query"] == "5"
    bundle = ex._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "image/png", "application/vnd.jupyter.widget-view+json"}
    assert bundle["image/png"].startswith("iVBORw0KGgo")  # base64 of the PNG signature
    assert bundle["text/plain"].startswith("AttentionExplorer: RoleModel on ")
    assert not re.search(r"\d\.\d", bundle["text/plain"])  # no floats: stable under nbval
    assert bundle["text/plain"] == explorer.explore_role_model(role_model, num_examples=3).summary()


def test_explorer_bad_arguments_are_named(transformer):
    with pytest.raises(TypeError, match="compute must be a callable"):
        explorer.AttentionExplorer("not callable", ["abc"])
    with pytest.raises(ValueError, match="examples must be a non-empty list of strings"):
        explorer.explore_seq2seq(transformer, [])
    ex = explorer.explore_seq2seq(transformer, "abc")
    assert ex.view_name == "cross-attention"  # it opens on the last view
    ex.select_view("encoder self-attention")
    with pytest.raises(ValueError, match="view must be one of"):
        ex.select_view("nope")
    with pytest.raises(ValueError, match=r"index must be an int in range\(q_len=3\)"):
        ex.select_query(3)
