"""The attention explorer on a reversal model: what lessons 07 and 08 show of any model that keeps the contract.

Introduced in ``notebooks/07_seq2seq_rnn_attention.ipynb``; used again in ``08_transformer_reversal``.

- :func:`seq2seq_snapshot` reverses one typed sequence with a model and collects its attention as a
  :class:`course_utils.explorer.Snapshot`;
- :func:`explore_seq2seq` opens :class:`course_utils.explorer.AttentionExplorer` on it.

Duck-typed, so the lessons' own models work (07's ``MyAttentionGRU``, 08's ``MyTransformer``): a model whose
greedy weights are ``(batch, steps, src_len)`` gets one view, ``"additive attention"``; a model whose greedy
weights have a heads axis gets every ``MultiHeadAttention`` call of one teacher-forced pass on ``BOS + output``,
grouped into ``"encoder self-attention"``, ``"decoder self-attention (causal)"`` and ``"cross-attention"`` by the
module's name (``encoder_layers.N.self_attn``, ``decoder_layers.N.self_attn``, ``decoder_layers.N.cross_attn``).

Labels (:func:`course_utils.data.step_labels`): a decoder row (query) is labelled by the token its step
**writes**, and carries the token it **reads** (``query_reads``); the keys of decoder self-attention are the tokens
the steps read (``<bos>``, y0, ...); source positions are the typed symbols. This module imports the generic
explorer, ``data`` and ``decoding``, never a model module.
"""

from __future__ import annotations

import re

import numpy as np
import torch

from course_utils import data, explorer
from course_utils.reversal import decoding

__all__ = ["VIEW_NAMES", "seq2seq_snapshot", "explore_seq2seq"]

# module name with the layer index removed -> view name
VIEW_NAMES = {
    "encoder_layers.self_attn": "encoder self-attention",
    "decoder_layers.self_attn": "decoder self-attention (causal)",
    "decoder_layers.cross_attn": "cross-attention",
}


def _check_text(text) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be a string of the symbols {data.SYMBOLS!r} but is {type(text).__name__}")
    text = text.strip()
    if not text:
        raise ValueError(f"text is empty: type a sequence of the symbols {data.SYMBOLS!r}")
    return text


def seq2seq_snapshot(model, text: str) -> explorer.Snapshot:
    """Reverse ``text`` (symbols ``a`` to ``j``) with a reversal model and collect its attention.

    - greedy weights ``(batch, steps, src_len)`` (the GRU with additive attention): one view,
      ``"additive attention"``, as one layer with one head: ``(1, 1, steps, src_len)``;
    - greedy weights ``(batch, heads, steps, src_len)`` (a Transformer): greedy decoding gives the output, then one
      teacher-forced pass on ``BOS + output`` (the same computation, causal) records every
      ``MultiHeadAttention`` (:func:`course_utils.explorer.capture_attention`): encoder self-attention, decoder
      self-attention (causal mask) and cross-attention, each ``(layers, heads, q_len, k_len)``;
    - no weights (the GRU without attention): ``ValueError``.

    Decoder queries are labelled with the token each step writes; ``query_outputs`` holds the same tokens and
    ``query_reads`` the token each step reads (``<bos>``, then the previous output).

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb (used again in 08_transformer_reversal).
    """
    text = _check_text(text)
    batch = data.collate([data.encode(text)])
    out, weights = decoding.greedy_decode(model, batch.src, batch.src_lengths, return_attention=True)
    name = type(model).__name__
    if weights is None:
        raise ValueError(f"model {name} returns no attention weights (a GRU without attention): nothing to explore")
    read, written = data.step_labels(out[0])
    steps = len(written)  # a batch of one stops at its EOS: every decoded step
    src_labels = list(text)
    output_text = data.decode(out[0])
    if weights.dim() == 3:  # (batch, steps, src_len): one attention per step
        w = weights[0, :steps].double().cpu().numpy()[None, None]  # (steps, src_len) -> (1, 1, steps, src_len)
        view = explorer.AttentionView(
            "additive attention", written, src_labels, w, np.ones((steps, len(text))), written, read
        )
        return explorer.Snapshot(name, text, output_text, {view.name: view})
    decoder_input = torch.cat([torch.full((1, 1), data.BOS, device=out.device), out[:, : steps - 1]], dim=1)
    was_training = getattr(model, "training", None)
    if was_training is not None:
        model.eval()
    try:
        with torch.no_grad(), explorer.capture_attention(model) as records:
            model(batch.src, batch.src_lengths, decoder_input)
    finally:
        if was_training is not None:
            model.train(was_training)
    if not records:
        raise ValueError(
            f"model {name} calls no course_utils.attention.MultiHeadAttention in its forward pass: nothing to capture"
        )
    grouped: dict = {}
    for module_name, w, mask in records:
        kind = re.sub(r"\.\d+\.", ".", module_name)  # "decoder_layers.0.cross_attn" -> "decoder_layers.cross_attn"
        grouped.setdefault(kind, []).append((w[0], mask))  # w[0]: (heads, q_len, k_len)
    views = {}
    for kind, layers in grouped.items():
        view_name = VIEW_NAMES.get(kind, kind)
        stacked = np.stack([w for w, _ in layers])  # layers x (heads, q_len, k_len) -> (layers, heads, q_len, k_len)
        q_len, k_len = stacked.shape[-2:]
        mask = explorer.mask_2d(layers[0][1], q_len, k_len)
        if kind.startswith("encoder"):  # source positions attend to source positions
            views[view_name] = explorer.AttentionView(view_name, src_labels, src_labels, stacked, mask)
        else:  # decoder steps: self-attention reads the earlier steps' inputs, cross-attention the source
            keys = read if kind.endswith("self_attn") else src_labels
            views[view_name] = explorer.AttentionView(view_name, written, keys, stacked, mask, written, read)
    return explorer.Snapshot(name, text, output_text, views)


def explore_seq2seq(model, examples) -> explorer.AttentionExplorer:
    """The explorer on a lesson 07/08 reversal model; ``examples`` are strings of the symbols ``a`` to ``j``.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb (used again in 08_transformer_reversal).
    """
    if not callable(getattr(model, "decode_step", None)):
        raise TypeError(
            f"model must be a reversal model (forward, init_state and decode_step) but is {type(model).__name__}"
        )
    return explorer.AttentionExplorer(
        lambda text: seq2seq_snapshot(model, text), examples, f"Attention explorer: {type(model).__name__}"
    )
