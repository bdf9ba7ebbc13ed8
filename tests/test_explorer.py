"""The generic attention explorer (course_utils.explorer): views, capture, the table, the widget.

Snapshots come from the lessons' adapters (course_utils.reversal.views, course_utils.role_task), tested in their
own files; here the explorer itself: capture_attention against a recomputation with need_weights=True, the table's
cells against the view's weights and masks, row_entropy against heads.attention_entropy, and the widget driven
through its controls (button clicks, the text box) without a browser; tests/browser/test_explorer_in_browser.py
clicks it in JupyterLab.
"""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pytest
import torch

from course_utils import data, env, explorer, heads
from course_utils.reversal import checkpoints, decoding, views


@pytest.fixture(scope="module")
def transformer():
    return checkpoints.load_pretrained("transformer")


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


# ------------------------------------------------------------------------------- capture, masks, entropy


def test_capture_attention_recomputes_fused_calls_and_removes_its_hooks():
    env.set_seed(0)
    model = checkpoints.build_model("transformer", num_layers=2).eval()
    layer = model.encoder_layers[1]
    x = torch.randn(1, 4, 32)
    with torch.no_grad(), explorer.capture_attention(layer) as records:
        out = layer.self_attn(x, x, x, need_weights=False)[0]
        direct_out, direct = layer.self_attn.forward(x, x, x, need_weights=True)  # forward(): no hooks
    ((name, weights, mask),) = records
    assert name == "self_attn" and mask is None
    np.testing.assert_allclose(weights, direct.double().numpy(), atol=1e-7)
    torch.testing.assert_close(out, direct_out, atol=1e-6, rtol=1e-5)  # the model's output is untouched
    assert not layer.self_attn._forward_hooks


def test_mask_2d_takes_batch_0_head_0():
    assert explorer.mask_2d(None, 2, 3).all() and explorer.mask_2d(None, 2, 3).shape == (2, 3)
    padding = torch.tensor([[True, True, False], [True, False, False]])[:, None, None, :]  # (batch, 1, 1, k_len)
    np.testing.assert_array_equal(explorer.mask_2d(padding, 2, 3), [[True, True, False]] * 2)
    causal = torch.tril(torch.ones(3, 3, dtype=torch.bool))
    np.testing.assert_array_equal(explorer.mask_2d(causal, 3, 3), causal.numpy())


def test_row_entropy_is_heads_attention_entropy_through_the_module_attribute(monkeypatch):
    rows = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.2, 0.3, 0.5]])
    np.testing.assert_array_equal(explorer.row_entropy(rows), heads.attention_entropy(rows))
    monkeypatch.setattr(heads, "attention_entropy", lambda w: np.full(np.shape(w)[:-1], -7.0))
    np.testing.assert_array_equal(explorer.row_entropy(rows), [-7.0, -7.0, -7.0])  # looked up at each call


def test_view_checks_its_optional_labels():
    w = np.ones((1, 1, 2, 3)) / 3
    explorer.AttentionView("v", ["a", "b"], ["x", "y", "z"], w, True, ["a", "b"], ["<bos>", "a"])
    with pytest.raises(ValueError, match="1 query_reads for 2 queries"):
        explorer.AttentionView("v", ["a", "b"], ["x", "y", "z"], w, True, None, ["<bos>"])
    with pytest.raises(ValueError, match="3 query_outputs for 2 queries"):
        explorer.AttentionView("v", ["a", "b"], ["x", "y", "z"], w, True, ["a", "b", "c"])


# ------------------------------------------------------------------------------- the table


def test_table_holds_the_query_row_of_every_layer_and_head(transformer):
    view = views.seq2seq_snapshot(transformer, "abcde").views["decoder self-attention (causal)"]
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
    view = views.seq2seq_snapshot(transformer, "abc").views["encoder self-attention"]
    with pytest.raises(ValueError, match=r"query must be an int in range\(q_len=3\) but is 3"):
        explorer.render_weights_table(view, 3)


def test_view_rejects_mismatched_labels():
    with pytest.raises(ValueError, match="2 query and 2 key labels for weights of shape"):
        explorer.AttentionView("v", ["a", "b"], ["a", "b"], np.ones((1, 1, 3, 3)) / 3, True)


# ------------------------------------------------------------------------------- the widget


def test_clicking_a_query_shows_its_weights(transformer):
    ex = views.explore_seq2seq(transformer, ["abcdefg", "hij"])
    ex.select_view("cross-attention")
    ex._queries.children[4].click()  # the button a student clicks
    table = parse(ex.table_html)
    assert table.table["data-query"] == "4" and table.table["data-view"] == "cross-attention"
    expected = greedy_weights(transformer, "abcdefg")[:, 4]  # (heads, src_len)
    got = np.array([[table.weights[(0, h, j)][0] for j in range(7)] for h in range(4)])
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert "info" in ex._queries.children[4].button_style
    assert ex._queries.children[4].description == "4: writes c"  # a decoder step is named by what it writes
    assert ex._queries.children[4].tooltip == "reads d"  # shown on hover


def test_changing_the_input_moves_the_attention(transformer):
    ex = views.explore_seq2seq(transformer, ["abcdefg", "hij"])
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


def test_explorer_bad_arguments_are_named(transformer):
    with pytest.raises(TypeError, match="compute must be a callable"):
        explorer.AttentionExplorer("not callable", ["abc"])
    with pytest.raises(ValueError, match="examples must be a non-empty list of strings"):
        views.explore_seq2seq(transformer, [])
    ex = views.explore_seq2seq(transformer, "abc")
    assert ex.view_name == "cross-attention"  # it opens on the last view
    ex.select_view("encoder self-attention")
    with pytest.raises(ValueError, match="view must be one of"):
        ex.select_view("nope")
    with pytest.raises(ValueError, match=r"index must be an int in range\(q_len=3\)"):
        ex.select_query(3)
