"""Lesson 07's models: additive (Bahdanau) attention and the two GRU encoder-decoders.

Introduced in ``notebooks/07_seq2seq_rnn_attention.ipynb``.

- :func:`additive_scores` and :class:`AdditiveAttention`: ``softmax_j(v · tanh(W_s s + W_h h_j))``;
  :func:`concat_linear_scores` is the seed notebook's score without the ``tanh`` (the pitfall).
- :class:`GRUEncoder`: a bidirectional GRU over the padded source.
- :class:`GRUSeq2Seq` (no attention: one context vector) and :class:`AttentionGRUSeq2Seq`.

Both models keep the contract of :class:`course_utils.reversal.decoding.Seq2Seq`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from course_utils import _validation as validate
from course_utils import masks
from course_utils.data import PAD, VOCAB_SIZE
from course_utils.reversal.decoding import as_config, check_decoder_input, check_source

__all__ = [
    "GRUConfig",
    "additive_scores",
    "concat_linear_scores",
    "AdditiveAttention",
    "gru_step",
    "GRUEncoder",
    "GRUSeq2Seq",
    "AttentionGRUSeq2Seq",
    "attention_decoder_step",
]


@dataclass
class GRUConfig:
    """Sizes of both GRU models (without and with attention)."""

    vocab: int = VOCAB_SIZE  # token ids 0 .. vocab - 1 (PAD, BOS, EOS, symbols)
    d_embed: int = 32  # token embedding size (encoder and decoder have their own tables)
    d_encoder: int = 32  # encoder GRU state size per direction: encoder outputs are 2 * d_encoder wide
    d_hidden: int = 64  # decoder GRU state size
    d_attn: int = 32  # additive attention: size of W_s s + W_h h_j before tanh (attention model only)

    def __post_init__(self):
        for name in ("vocab", "d_embed", "d_encoder", "d_hidden", "d_attn"):
            setattr(self, name, validate.positive_int(f"GRUConfig.{name}", getattr(self, name)))


def additive_scores(query_part: torch.Tensor, key_part: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Bahdanau scores ``e_j = v · tanh(W_s s + W_h h_j)`` from the two projected parts.

    Parameters
    ----------
    query_part : (batch, d_attn)         ``W_s s``, the projected decoder state
    key_part : (batch, k_len, d_attn)    ``W_h h_j`` for every encoder position j
    v : (d_attn,)

    Returns
    -------
    scores : (batch, k_len)

    The ``tanh`` is what makes the decoder state matter: without it, ``v · (W_s s) + v · (W_h h_j)``
    adds the same number to every j, and softmax ignores it (see :func:`concat_linear_scores`).

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    validate.torch_floats(query_part=query_part, key_part=key_part, v=v)
    if query_part.dim() != 2 or key_part.dim() != 3 or v.dim() != 1:
        raise ValueError(
            "query_part must be (batch, d_attn), key_part (batch, k_len, d_attn) and v (d_attn,) but they have shapes "
            f"{tuple(query_part.shape)}, {tuple(key_part.shape)}, {tuple(v.shape)}"
        )
    if key_part.shape[0] != query_part.shape[0] or not query_part.shape[1] == key_part.shape[2] == v.shape[0]:
        raise ValueError(
            f"query_part {tuple(query_part.shape)}, key_part {tuple(key_part.shape)} and v {tuple(v.shape)} must share "
            "batch (query_part and key_part) and d_attn (all three)"
        )
    return _additive_scores(query_part, key_part, v)


def _additive_scores(query_part, key_part, v):
    # (batch, 1, d_attn) + (batch, k_len, d_attn) -> (batch, k_len, d_attn)
    hidden = torch.tanh(query_part[:, None, :] + key_part)
    # (batch, k_len, d_attn) @ (d_attn,) -> (batch, k_len)
    return hidden @ v


def concat_linear_scores(s: torch.Tensor, h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The seed notebook's score ``Linear([s; h_j])``: linear in ``s``, so ``s`` cancels in the softmax.

    Parameters
    ----------
    s : (batch, d_query)          decoder state
    h : (batch, k_len, d_key)     encoder outputs
    weight : (1, d_query + d_key), bias : (1,)   an ``nn.Linear(d_query + d_key, 1)``'s parameters

    Returns
    -------
    scores : (batch, k_len) = ``weight[:, :d_query] · s + weight[:, d_query:] · h_j + bias``

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb (the pitfall it teaches).
    """
    validate.torch_floats(s=s, h=h, weight=weight, bias=bias)
    if s.dim() != 2 or h.dim() != 3 or h.shape[0] != s.shape[0]:
        raise ValueError(
            f"s must be (batch, d_query) and h (batch, k_len, d_key) but are {tuple(s.shape)}, {tuple(h.shape)}"
        )
    if tuple(weight.shape) != (1, s.shape[1] + h.shape[2]) or tuple(bias.shape) != (1,):
        raise ValueError(
            f"weight must be (1, d_query + d_key) = (1, {s.shape[1] + h.shape[2]}) and bias (1,) but are "
            f"{tuple(weight.shape)}, {tuple(bias.shape)}"
        )
    k_len = h.shape[1]
    s_expanded = s[:, None, :].expand(-1, k_len, -1)  # (batch, d_query) -> (batch, k_len, d_query)
    both = torch.cat([s_expanded, h], dim=-1)  # (batch, k_len, d_query + d_key)
    # (batch, k_len, d_query + d_key) @ (d_query + d_key, 1) -> (batch, k_len, 1) -> (batch, k_len)
    return (both @ weight.T + bias).squeeze(-1)


class AdditiveAttention(nn.Module):
    """Additive attention ``softmax_j(v · tanh(W_s s + W_h h_j))`` (Bahdanau et al., 2015).

    Layers are named after what they produce: ``query_proj`` (``W_s``), ``key_proj`` (``W_h``),
    ``score_proj`` (``v``). ``forward(s, keys, key_mask)`` with ``s (batch, d_query)``, keys
    ``(batch, k_len, d_key)`` and key_mask ``(batch, k_len)`` (True = may attend) returns the context
    ``(batch, d_key)`` and the attention weights ``(batch, k_len)``. A row whose keys are all masked gets
    all-zero weights and a zero context, never NaN (as :func:`course_utils.attention.scaled_dot_product_attention`).

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """

    def __init__(self, d_query: int, d_key: int, d_attn: int):
        super().__init__()
        d_query, d_key, d_attn = (
            validate.positive_int(n, x) for n, x in (("d_query", d_query), ("d_key", d_key), ("d_attn", d_attn))
        )
        self.query_proj = nn.Linear(d_query, d_attn, bias=False)
        self.key_proj = nn.Linear(d_key, d_attn)
        self.score_proj = nn.Linear(d_attn, 1, bias=False)

    def forward(self, s, keys, key_mask, projected_keys=None):
        weight = self.query_proj.weight
        validate.torch_floats(dtype=weight.dtype, device=weight.device, s=s, keys=keys)
        if s.dim() != 2 or keys.dim() != 3 or keys.shape[0] != s.shape[0]:
            raise ValueError(
                f"s must be (batch, d_query) and keys (batch, k_len, d_key) but are {tuple(s.shape)}, {tuple(keys.shape)}"
            )
        validate.torch_bool_mask(key_mask, tuple(keys.shape[:2]), "(batch, k_len)", device=keys.device, name="key_mask")
        if projected_keys is None:
            projected_keys = self.key_proj(keys)  # (batch, k_len, d_attn); precompute it once per sequence
        return self._attend(s, keys, key_mask, projected_keys)

    def _attend(self, s, keys, key_mask, projected_keys):
        """The computation on checked inputs: the decoder calls it at every step without re-checking."""
        scores = _additive_scores(self.query_proj(s), projected_keys, self.score_proj.weight[0])  # (batch, k_len)
        scores = scores.masked_fill(~key_mask, float("-inf"))
        has_key = key_mask.any(dim=-1, keepdim=True)  # (batch, 1): False for a row whose keys are all masked
        # A row of all -inf would softmax to NaN: give it finite scores, then zero its weights (zero context too)
        weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1) * has_key  # (batch, k_len)
        # (batch, 1, k_len) @ (batch, k_len, d_key) -> (batch, 1, d_key) -> (batch, d_key)
        context = (weights[:, None, :] @ keys).squeeze(1)
        return context, weights


def gru_step(x, h, weight_ih, weight_hh, bias_ih, bias_hh):
    """One GRU step, as ``nn.GRUCell`` computes it (PyTorch's equations)::

        r  = sigmoid(W_ir x + b_ir + W_hr h + b_hr)          reset gate
        z  = sigmoid(W_iz x + b_iz + W_hz h + b_hz)          update gate
        n  = tanh(W_in x + b_in + r * (W_hn h + b_hn))       candidate (the reset gate scales the state's part only)
        h' = (1 - z) * n + z * h

    Parameters
    ----------
    x : (batch, d_in)
    h : (batch, d_hidden)
    weight_ih : (3 * d_hidden, d_in), weight_hh : (3 * d_hidden, d_hidden): the reset, update and candidate rows
        stacked in that order (``GRUCell.weight_ih`` / ``weight_hh``).
    bias_ih, bias_hh : (3 * d_hidden,), or None for a cell without biases.

    Returns
    -------
    h_new : (batch, d_hidden)

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    validate.torch_floats(x=x, h=h, weight_ih=weight_ih, weight_hh=weight_hh)
    if x.dim() != 2 or h.dim() != 2 or x.shape[0] != h.shape[0]:
        raise ValueError(
            f"x must be (batch, d_in) and h (batch, d_hidden) but have shapes {tuple(x.shape)} and {tuple(h.shape)}"
        )
    d_in, d_hidden = x.shape[1], h.shape[1]
    for name, weight, width, what in (
        ("weight_ih", weight_ih, d_in, "d_in"),
        ("weight_hh", weight_hh, d_hidden, "d_hidden"),
    ):
        if tuple(weight.shape) != (3 * d_hidden, width):
            raise ValueError(
                f"{name} must be (3 * d_hidden, {what}) = ({3 * d_hidden}, {width}) but has shape {tuple(weight.shape)}"
            )
    for name, bias in (("bias_ih", bias_ih), ("bias_hh", bias_hh)):
        if bias is not None:
            validate.torch_floats(**{name: bias})
            if tuple(bias.shape) != (3 * d_hidden,):
                raise ValueError(
                    f"{name} must be (3 * d_hidden,) = ({3 * d_hidden},) or None but has shape {tuple(bias.shape)}"
                )
    gi = torch.nn.functional.linear(x, weight_ih, bias_ih)  # (batch, d_in) -> (batch, 3 * d_hidden)
    gh = torch.nn.functional.linear(h, weight_hh, bias_hh)  # (batch, d_hidden) -> (batch, 3 * d_hidden)
    i_r, i_z, i_n = gi.chunk(3, dim=-1)  # 3 x (batch, d_hidden)
    h_r, h_z, h_n = gh.chunk(3, dim=-1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h


class GRUEncoder(nn.Module):
    """Bidirectional GRU over the padded source (packed, so padding never enters the states).

    ``forward(src, src_lengths)`` -> outputs ``(batch, src_len, 2 * d_encoder)`` (zeros at padding) and the
    final states ``(2, batch, d_encoder)`` (forward direction, then backward).

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """

    def __init__(self, cfg: GRUConfig | None = None):
        super().__init__()
        cfg = as_config(cfg, GRUConfig)
        self.embed = nn.Embedding(cfg.vocab, cfg.d_embed, padding_idx=PAD)
        self.rnn = nn.GRU(cfg.d_embed, cfg.d_encoder, batch_first=True, bidirectional=True)

    def forward(self, src, src_lengths):
        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)  # final: (2, batch, d_encoder), forward then backward direction
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        return outputs, final  # outputs: (batch, src_len, 2 * d_encoder), zeros at padding


class GRUSeq2Seq(nn.Module):
    """GRU encoder-decoder *without* attention: the whole source must fit in one vector.

    The encoder's two final states, concatenated, are the context ``c`` (batch, 2 * d_encoder); the
    decoder starts from ``tanh(W c)`` and reads ``[embed(y_{t-1}); c]`` at every step (Cho et al., 2014).

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """

    def __init__(self, cfg: GRUConfig | None = None):
        super().__init__()
        self.config = cfg = as_config(cfg, GRUConfig)
        d_context = 2 * cfg.d_encoder
        self.encoder = GRUEncoder(cfg)
        self.embed = nn.Embedding(cfg.vocab, cfg.d_embed, padding_idx=PAD)
        self.init_proj = nn.Linear(d_context, cfg.d_hidden)
        self.rnn = nn.GRU(cfg.d_embed + d_context, cfg.d_hidden, batch_first=True)
        self.out_proj = nn.Linear(cfg.d_hidden + d_context, cfg.vocab)

    def _encode(self, src, src_lengths):
        _, final = self.encoder(src, src_lengths)
        context = torch.cat([final[0], final[1]], dim=-1)  # (batch, d_encoder) x 2 -> (batch, 2 * d_encoder)
        return context, torch.tanh(self.init_proj(context))[None]  # state: (1, batch, d_hidden)

    def _decode(self, tokens, context, state):
        steps = tokens.shape[1]
        context_steps = context[:, None, :].expand(-1, steps, -1)  # (batch, steps, 2 * d_encoder)
        inputs = torch.cat([self.embed(tokens), context_steps], dim=-1)  # (batch, steps, d_embed + 2 * d_encoder)
        outputs, state = self.rnn(inputs, state)  # (batch, steps, d_hidden)
        logits = self.out_proj(torch.cat([outputs, context_steps], dim=-1))  # (batch, steps, vocab)
        return logits, state

    def forward(self, src, src_lengths, decoder_input, return_attention: bool = False):
        check_source(src, src_lengths)
        check_decoder_input(decoder_input, src.shape[0])
        context, state = self._encode(src, src_lengths)
        logits, _ = self._decode(decoder_input, context, state)
        return (logits, None) if return_attention else logits

    def init_state(self, src, src_lengths, max_steps: int | None = None):
        """The decoding state; ``max_steps`` is part of the contract and not needed here (a GRU has no limit)."""
        context, state = self._encode(src, src_lengths)
        return {"context": context, "state": state}

    def decode_step(self, state, tokens):
        logits, new_state = self._decode(tokens[:, None], state["context"], state["state"])
        return logits[:, 0], {"context": state["context"], "state": new_state}, None


class AttentionGRUSeq2Seq(nn.Module):
    """Bidirectional GRU encoder + GRU decoder with additive (Bahdanau) attention.

    Encoder outputs ``h_j`` (batch, src_len, 2 * d_encoder) are the keys and the values. At step t the
    decoder first reads the previous output token and the previous context ("input feeding"), then
    attends with its new state ``s`` (batch, d_hidden) as the query::

        s       = GRUCell([embed(y_{t-1}); context_{t-1}], s)
        weights = softmax_j(v · tanh(W_s s + W_h h_j))       (padding masked out)
        context = sum_j weights_j h_j
        logits  = out_proj([s; context])

    The score is Bahdanau et al.'s (2015); the order of the steps (attend *after* reading ``y_{t-1}``,
    feed the context back) is Luong et al.'s (2015). Knowing the token it just wrote lets the query
    find the next source position sharply: the weights trace a clean anti-diagonal on reversal.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """

    def __init__(self, cfg: GRUConfig | None = None):
        super().__init__()
        self.config = cfg = as_config(cfg, GRUConfig)
        d_context = 2 * cfg.d_encoder
        self.encoder = GRUEncoder(cfg)
        self.embed = nn.Embedding(cfg.vocab, cfg.d_embed, padding_idx=PAD)
        self.init_proj = nn.Linear(cfg.d_encoder, cfg.d_hidden)  # from the backward encoder's final state
        self.attention = AdditiveAttention(cfg.d_hidden, d_context, cfg.d_attn)
        self.cell = nn.GRUCell(cfg.d_embed + d_context, cfg.d_hidden)
        self.out_proj = nn.Linear(cfg.d_hidden + d_context, cfg.vocab)

    def init_state(self, src, src_lengths, max_steps: int | None = None):
        """The decoding state; ``max_steps`` is part of the contract and not needed here (a GRU has no limit)."""
        outputs, final = self.encoder(src, src_lengths)
        return {
            "keys": outputs,  # (batch, src_len, 2 * d_encoder): keys and values
            "projected_keys": self.attention.key_proj(outputs),  # (batch, src_len, d_attn), computed once
            "key_mask": masks.make_padding_mask(src_lengths, src.shape[1]).to(src.device),  # (batch, src_len)
            "s": torch.tanh(self.init_proj(final[1])),  # (batch, d_hidden)
            "context": torch.zeros_like(outputs[:, 0]),  # (batch, 2 * d_encoder): no context before step 0
        }

    def _step(self, state, embedded):
        """One decoder step from the embedded previous token (batch, d_embed): new state, context, weights."""
        cell_input = torch.cat([embedded, state["context"]], dim=-1)  # (batch, d_embed + 2 * d_encoder)
        s = self.cell(cell_input, state["s"])  # (batch, d_hidden)
        # checked once per sequence (init_state, check_source), not at every step
        context, weights = self.attention._attend(s, state["keys"], state["key_mask"], state["projected_keys"])
        return {**state, "s": s, "context": context}, weights

    def decode_step(self, state, tokens):
        """One free-running step: :func:`attention_decoder_step` on this model."""
        return attention_decoder_step(self, state, tokens)

    def forward(self, src, src_lengths, decoder_input, return_attention: bool = False):
        check_source(src, src_lengths)
        check_decoder_input(decoder_input, src.shape[0])
        state = self.init_state(src, src_lengths)
        embedded = self.embed(decoder_input)  # (batch, tgt_len, d_embed), all steps at once
        outputs, all_weights = [], []
        for step_input in embedded.unbind(dim=1):  # tgt_len x (batch, d_embed); unbind keeps backward cheap
            state, weights = self._step(state, step_input)
            outputs.append(torch.cat([state["s"], state["context"]], dim=-1))  # (batch, d_hidden + 2 * d_encoder)
            all_weights.append(weights)
        # tgt_len x (batch, d_hidden + 2 * d_encoder) -> (batch, tgt_len, d_hidden + 2 * d_encoder) -> (..., vocab)
        logits = self.out_proj(torch.stack(outputs, dim=1))
        if return_attention:
            return logits, torch.stack(all_weights, dim=1)  # tgt_len x (batch, src_len) -> (batch, tgt_len, src_len)
        return logits


def attention_decoder_step(model, state, tokens):
    """One decoder step of the GRU with additive attention (:class:`AttentionGRUSeq2Seq`'s ``decode_step``).

    Reads the previous output token and the previous context, then attends with the new state::

        s       = cell([embed(tokens); context], s)             (batch, d_hidden)
        context, weights = attention(s, keys, key_mask, projected_keys)
        logits  = out_proj([s; context])                          (batch, vocab)

    Parameters
    ----------
    model : anything with ``embed``, ``cell`` (a ``GRUCell``), ``attention`` (``AdditiveAttention``'s call) and
        ``out_proj``: the course's model or the lesson's ``MyAttentionGRU``.
    state : dict from ``model.init_state``: ``s`` (batch, d_hidden), ``context`` (batch, 2 * d_encoder), ``keys``
        (batch, src_len, 2 * d_encoder), ``projected_keys`` (batch, src_len, d_attn), ``key_mask`` (batch, src_len).
    tokens : LongTensor (batch,), the previous output tokens (BOS at the first step).

    Returns
    -------
    (logits (batch, vocab), the new state (a new dict: ``s`` and ``context`` replaced), weights (batch, src_len))

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    for part in ("embed", "cell", "attention", "out_proj"):
        if not callable(getattr(model, part, None)):
            raise TypeError(
                f"model must have embed, cell, attention and out_proj (an AttentionGRUSeq2Seq) but "
                f"{validate.describe(model)} has no {part}"
            )
    if not isinstance(state, dict) or not {"s", "context", "keys", "projected_keys", "key_mask"} <= set(state):
        raise TypeError(
            "state must be the dict model.init_state(src, src_lengths) returns (s, context, keys, projected_keys, "
            f"key_mask) but is {validate.describe(state)}"
        )
    validate.integer_tensor("tokens", tokens)
    if tokens.dim() != 1 or tokens.shape[0] != state["s"].shape[0]:
        raise ValueError(f"tokens must be (batch,) = ({state['s'].shape[0]},) but has shape {tuple(tokens.shape)}")
    cell_input = torch.cat([model.embed(tokens), state["context"]], dim=-1)  # (batch, d_embed + 2 * d_encoder)
    s = model.cell(cell_input, state["s"])  # (batch, d_hidden)
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    # (batch, d_hidden) + (batch, 2 * d_encoder) -> (batch, d_hidden + 2 * d_encoder) -> (batch, vocab)
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
