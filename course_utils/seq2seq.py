"""Encoder-decoder models for sequence reversal: a GRU without attention, a GRU with additive
(Bahdanau) attention, and a small Transformer built from :class:`course_utils.attention.MultiHeadAttention`.

Introduced in ``notebooks/07_seq2seq_rnn_attention.ipynb`` (GRUs) and
``notebooks/08_transformer_reversal.ipynb`` (Transformer).

Every model has the same interface, which :func:`greedy_decode` and ``course_utils.training`` use:

- ``forward(src, src_lengths, decoder_input, return_attention=False)`` -> logits ``(batch, tgt_len, vocab)``
  (teacher forcing: all steps at once), plus the cross-attention weights when asked;
- ``init_state(src, src_lengths)`` -> a decoding state, and
  ``decode_step(state, tokens)`` -> ``(logits (batch, vocab), state, weights or None)``: one step at a time.

Checkpoints: ``python -m course_utils.seq2seq --write-checkpoints data/checkpoints`` trains and writes them and
records each file's SHA-256, kind and config in ``data/checkpoints/MANIFEST.json``; :func:`load_pretrained`
checks a file against it before unpickling it (``torch.load(weights_only=True)``).
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from course_utils import _manifest, env, masks
from course_utils import _validation as validate
from course_utils._validation import check_heads
from course_utils.attention import MultiHeadAttention
from course_utils.data import BOS, EOS, PAD, VOCAB_SIZE, check_token_ids, data_dir

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


# ------------------------------------------------------------------------------------ configs


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


@dataclass
class TransformerConfig:
    """Sizes and switches of the Transformer encoder-decoder."""

    vocab: int = VOCAB_SIZE  # token ids 0 .. vocab - 1
    d_model: int = 32  # embedding and residual-stream size
    num_heads: int = 4  # heads per attention block; d_head = d_model // num_heads = 8
    d_ff: int = 64  # hidden size of each feed-forward block
    num_layers: int = 1  # encoder layers, and decoder layers
    norm_first: bool = True  # pre-norm (x + f(LN(x))); False: post-norm LN(x + f(x)) as in Vaswani et al.
    dropout: float = 0.0  # on attention weights; the task has unlimited fresh data, so none by default
    positional_encoding: bool = True  # False: the ablation of lesson 08 (a bag of tokens)
    scale_embeddings: bool = False  # True: multiply embeddings by sqrt(d_model), the trap of lesson 08
    max_len: int = 64  # positions 0 .. max_len - 1 exist (sequences up to max_len - 1 symbols)
    random_positions: int = 0  # > 0: randomized PE (Ruoss et al. 2023), positions drawn from [0, random_positions)

    def __post_init__(self):
        for name in ("vocab", "d_model", "num_heads", "d_ff", "num_layers", "max_len"):
            setattr(self, name, validate.positive_int(f"TransformerConfig.{name}", getattr(self, name)))
        self.random_positions = validate.nonnegative_int("TransformerConfig.random_positions", self.random_positions)
        self.dropout = validate.probability("TransformerConfig.dropout", self.dropout)
        for name in ("norm_first", "positional_encoding", "scale_embeddings"):
            setattr(self, name, validate.boolean(f"TransformerConfig.{name}", getattr(self, name)))
        check_heads(self.d_model, self.num_heads)
        if self.d_model % 2:
            raise ValueError(f"TransformerConfig.d_model must be even (sinusoidal positions) but is {self.d_model}")


# ----------------------------------------------------------------------------------- helpers


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module but is {validate.describe(model)}")
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def check_source(src, src_lengths) -> None:
    """Validate a padded source batch; raise ``ValueError`` naming the argument and the shapes.

    src : LongTensor (batch, src_len) of token ids in ``[0, vocab)``; src_lengths : (batch,) in ``[1, src_len]``.
    """
    validate.torch_tensor("src", src)
    validate.integer_tensor("src_lengths", src_lengths)
    if src.dim() != 2:
        raise ValueError(f"src must be (batch, src_len) but has shape {tuple(src.shape)}")
    if src.shape[0] == 0 or src.shape[1] == 0:
        raise ValueError(f"src is empty (shape {tuple(src.shape)}): decode needs at least one sequence")
    if src.dtype.is_floating_point or src.dtype == torch.bool:
        raise TypeError(f"src must hold integer token ids but has dtype {src.dtype}")
    check_token_ids(src, "src")
    if src_lengths.shape != (src.shape[0],):
        raise ValueError(f"src_lengths must be (batch,) = ({src.shape[0]},) but has shape {tuple(src_lengths.shape)}")
    if int(src_lengths.min()) < 1 or int(src_lengths.max()) > src.shape[1]:
        raise ValueError(f"src_lengths must lie in [1, src_len={src.shape[1]}] but are {src_lengths.tolist()}")


def _check_decoder_input(decoder_input, batch: int) -> None:
    validate.integer_tensor("decoder_input", decoder_input)
    if decoder_input.dim() != 2 or decoder_input.shape[0] != batch:
        raise ValueError(f"decoder_input must be (batch={batch}, tgt_len) but has shape {tuple(decoder_input.shape)}")
    check_token_ids(decoder_input, "decoder_input")


def _config(cfg, config_cls):
    if cfg is None:
        return config_cls()
    if not isinstance(cfg, config_cls):
        raise TypeError(
            f"cfg must be a {config_cls.__name__} (or None for the defaults) but is {validate.describe(cfg)}; "
            f"build one with {config_cls.__name__}(**fields) or use build_model(kind, **fields)"
        )
    return cfg


# ------------------------------------------------------------------------- additive attention


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
    ``(batch, d_key)`` and the attention weights ``(batch, k_len)``.

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
        weights = torch.softmax(scores, dim=-1)  # (batch, k_len)
        # (batch, 1, k_len) @ (batch, k_len, d_key) -> (batch, 1, d_key) -> (batch, d_key)
        context = (weights[:, None, :] @ keys).squeeze(1)
        return context, weights


# ------------------------------------------------------------------------------- GRU models


class _GRUEncoder(nn.Module):
    """Bidirectional GRU over the padded source (packed, so padding never enters the states)."""

    def __init__(self, cfg: GRUConfig):
        super().__init__()
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
        self.config = cfg = _config(cfg, GRUConfig)
        d_context = 2 * cfg.d_encoder
        self.encoder = _GRUEncoder(cfg)
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
        _check_decoder_input(decoder_input, src.shape[0])
        context, state = self._encode(src, src_lengths)
        logits, _ = self._decode(decoder_input, context, state)
        return (logits, None) if return_attention else logits

    def init_state(self, src, src_lengths):
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
        self.config = cfg = _config(cfg, GRUConfig)
        d_context = 2 * cfg.d_encoder
        self.encoder = _GRUEncoder(cfg)
        self.embed = nn.Embedding(cfg.vocab, cfg.d_embed, padding_idx=PAD)
        self.init_proj = nn.Linear(cfg.d_encoder, cfg.d_hidden)  # from the backward encoder's final state
        self.attention = AdditiveAttention(cfg.d_hidden, d_context, cfg.d_attn)
        self.cell = nn.GRUCell(cfg.d_embed + d_context, cfg.d_hidden)
        self.out_proj = nn.Linear(cfg.d_hidden + d_context, cfg.vocab)

    def init_state(self, src, src_lengths):
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
        state, weights = self._step(state, self.embed(tokens))
        # (batch, d_hidden) + (batch, 2 * d_encoder) -> (batch, d_hidden + 2 * d_encoder) -> (batch, vocab)
        logits = self.out_proj(torch.cat([state["s"], state["context"]], dim=-1))
        return logits, state, weights

    def forward(self, src, src_lengths, decoder_input, return_attention: bool = False):
        check_source(src, src_lengths)
        _check_decoder_input(decoder_input, src.shape[0])
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


# ------------------------------------------------------------------------------ Transformer


def sinusoidal_positions(num_positions: int, d_model: int) -> torch.Tensor:
    """Sinusoidal positional encodings (Vaswani et al., 2017): ``(num_positions, d_model)``.

    ``PE[p, 2i] = sin(p / 10000^(2i / d_model))``, ``PE[p, 2i + 1] = cos(p / 10000^(2i / d_model))``.

    Introduced in notebooks/08_transformer_reversal.ipynb.
    """
    num_positions = validate.nonnegative_int("num_positions", num_positions)
    d_model = validate.positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"d_model must be even for sinusoidal positions but is {d_model}")
    positions = torch.arange(num_positions, dtype=torch.float32)[:, None]  # (num_positions, 1)
    inv_freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)  # (d_model / 2,)
    angles = positions * inv_freq  # (num_positions, 1) * (d_model / 2,) -> (num_positions, d_model / 2)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def make_decoder_masks(src_lengths: torch.Tensor, src_len: int, tgt_len: int):
    """The decoder's two boolean masks (True = may attend).

    Returns
    -------
    self_mask : (1, 1, tgt_len, tgt_len)   causal: step t sees decoder inputs 0..t only
    cross_mask : (batch, 1, 1, src_len)    every step sees the real source tokens, never padding

    (Padding *inside* the decoder input needs no mask of its own: it comes after every real
    token, and the causal mask already hides later positions from real ones.)

    Introduced in notebooks/08_transformer_reversal.ipynb.
    """
    validate.integer_tensor("src_lengths", src_lengths)
    src_len, tgt_len = validate.positive_int("src_len", src_len), validate.positive_int("tgt_len", tgt_len)
    causal = masks.make_causal_mask(tgt_len, device=src_lengths.device)  # (tgt_len, tgt_len)
    self_mask = causal[None, None]  # (tgt_len, tgt_len) -> (1, 1, tgt_len, tgt_len)
    cross_mask = masks.padding_to_attention_mask(
        masks.make_padding_mask(src_lengths, src_len)
    )  # (batch, 1, 1, src_len)
    return self_mask, cross_mask


class _FeedForward(nn.Sequential):
    def __init__(self, d_model: int, d_ff: int):
        super().__init__(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


class _EncoderLayer(nn.Module):
    """Pre-norm: ``x + SelfAttention(LN(x))``, then ``x + FFN(LN(x))``."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.num_heads, dropout=cfg.dropout)
        self.ffn = _FeedForward(cfg.d_model, cfg.d_ff)

        self.norm_first = cfg.norm_first

    def forward(self, x, mask):
        if not self.norm_first:
            x = self.norm1(x + self.self_attn(x, x, x, mask=mask, need_weights=False)[0])
            return self.norm2(x + self.ffn(x))
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        return x + self.ffn(self.norm2(x))


class _DecoderLayer(nn.Module):
    """Pre-norm: causal self-attention, cross-attention to the encoder output, feed-forward."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(cfg.d_model) for _ in range(3))
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.num_heads, dropout=cfg.dropout)
        self.cross_attn = MultiHeadAttention(cfg.d_model, cfg.num_heads, dropout=cfg.dropout)
        self.ffn = _FeedForward(cfg.d_model, cfg.d_ff)

        self.norm_first = cfg.norm_first

    def forward(self, x, memory, self_mask, cross_mask, need_weights: bool):
        if not self.norm_first:
            x = self.norm1(x + self.self_attn(x, x, x, mask=self_mask, need_weights=False)[0])
            out, weights = self.cross_attn(x, memory, memory, mask=cross_mask, need_weights=need_weights)
            x = self.norm2(x + out)
            return self.norm3(x + self.ffn(x)), weights
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask, need_weights=False)[0]
        out, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask, need_weights=need_weights)
        x = x + out
        return x + self.ffn(self.norm3(x)), weights  # weights: (batch, heads, tgt_len, src_len) or None


class TransformerSeq2Seq(nn.Module):
    """A small Transformer encoder-decoder (pre-norm) built from ``MultiHeadAttention``.

    ``forward(..., return_attention=True)`` also returns the last decoder layer's cross-attention
    weights ``(batch, heads, tgt_len, src_len)``.

    Positions: sinusoidal encodings added to the token embeddings (``positional_encoding=False``
    drops them). With ``random_positions = R > 0`` (Ruoss et al., 2023) each sequence's positions are a
    sorted random subset of ``0 .. R - 1`` instead of ``0 .. n - 1``, so that positions beyond the
    training lengths are seen in training. The decoder's positions are drawn for ``src_len + 1`` steps
    (the output length in this task); in eval mode the draw uses a fixed seed, so evaluation is repeatable.

    Introduced in notebooks/08_transformer_reversal.ipynb.
    """

    def __init__(self, cfg: TransformerConfig | None = None):
        super().__init__()
        self.config = cfg = _config(cfg, TransformerConfig)
        self.src_embed = nn.Embedding(cfg.vocab, cfg.d_model)  # N(0, 1) init, like nn.Embedding's default
        self.tgt_embed = nn.Embedding(cfg.vocab, cfg.d_model)
        num_positions = max(cfg.max_len, cfg.random_positions)
        self.register_buffer("pe", sinusoidal_positions(num_positions, cfg.d_model), persistent=False)
        self.encoder_layers = nn.ModuleList(_EncoderLayer(cfg) for _ in range(cfg.num_layers))
        self.decoder_layers = nn.ModuleList(_DecoderLayer(cfg) for _ in range(cfg.num_layers))
        self.encoder_norm, self.decoder_norm = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.out_proj = nn.Linear(cfg.d_model, cfg.vocab)

    # positions ---------------------------------------------------------------------------
    def _random_positions(self, lengths, length: int, generator):
        """Per row, a sorted random subset of ``lengths[i]`` positions from ``[0, R)``: (batch, length)."""
        R = self.config.random_positions
        if length > R:
            raise ValueError(f"a sequence of {length} tokens needs more than random_positions={R} positions")
        noise = torch.rand(lengths.shape[0], R, generator=generator, device="cpu").to(lengths.device)
        picks = noise.argsort(dim=1)[:, :length]  # (batch, length): distinct positions in [0, R)
        real = masks.make_padding_mask(lengths, length)  # (batch, length)
        picks = picks.masked_fill(~real, R)  # padding sorts last ...
        return picks.sort(dim=1).values.clamp_max(R - 1)  # ... and is clamped to a valid (ignored) position

    def _positions(self, lengths, length: int, generator):
        if self.config.random_positions:
            return self.pe[self._random_positions(lengths, length, generator)]  # (batch, length, d_model)
        if length > self.config.max_len:
            raise ValueError(f"sequence of {length} tokens is longer than max_len={self.config.max_len}")
        return self.pe[:length][None]  # (1, length, d_model)

    def _generator(self):
        return None if self.training else torch.Generator().manual_seed(0)

    def _embed(self, table, tokens, positions):
        x = table(tokens)  # (batch, len, d_model)
        if self.config.scale_embeddings:
            x = x * math.sqrt(self.config.d_model)
        if self.config.positional_encoding:
            x = x + positions
        return x

    # encoder / decoder -------------------------------------------------------------------
    def encode(self, src, src_lengths, generator=None):
        src_len = src.shape[1]
        positions = self._positions(src_lengths, src_len, generator)
        x = self._embed(self.src_embed, src, positions)
        mask = masks.padding_to_attention_mask(masks.make_padding_mask(src_lengths, src_len))  # (batch, 1, 1, src_len)
        for layer in self.encoder_layers:
            x = layer(x, mask)
        return self.encoder_norm(x)  # (batch, src_len, d_model)

    def decode(self, tokens, memory, src_lengths, dec_positions, need_weights: bool = False):
        tgt_len = tokens.shape[1]
        self_mask, cross_mask = make_decoder_masks(src_lengths, memory.shape[1], tgt_len)
        x = self._embed(self.tgt_embed, tokens, dec_positions[:, :tgt_len])
        weights = None
        for layer in self.decoder_layers:
            x, weights = layer(x, memory, self_mask, cross_mask, need_weights)
        return self.out_proj(self.decoder_norm(x)), weights  # (batch, tgt_len, vocab)

    def _decoder_positions(self, src_lengths, tgt_len: int, generator):
        if self.config.random_positions:
            steps = max(tgt_len, int(src_lengths.max()) + 1)
            return self._positions(src_lengths + 1, steps, generator)  # (batch, steps, d_model)
        return self._positions(src_lengths, tgt_len, generator)

    def forward(self, src, src_lengths, decoder_input, return_attention: bool = False):
        check_source(src, src_lengths)
        _check_decoder_input(decoder_input, src.shape[0])
        generator = self._generator()
        memory = self.encode(src, src_lengths, generator)
        dec_positions = self._decoder_positions(src_lengths, decoder_input.shape[1], generator)
        logits, weights = self.decode(decoder_input, memory, src_lengths, dec_positions, return_attention)
        return (logits, weights) if return_attention else logits

    # step-by-step decoding (recomputes the prefix each step: simple, and cheap at these sizes)
    def init_state(self, src, src_lengths, max_steps: int | None = None):
        generator = self._generator()
        memory = self.encode(src, src_lengths, generator)
        steps = max_steps or self.config.max_len
        if not self.config.random_positions:
            steps = min(steps, self.config.max_len)
        dec_positions = self._decoder_positions(src_lengths, steps, generator)
        empty = torch.zeros(src.shape[0], 0, dtype=torch.long, device=src.device)
        return {"memory": memory, "src_lengths": src_lengths, "dec_positions": dec_positions, "tokens": empty}

    def decode_step(self, state, tokens):
        prefix = torch.cat([state["tokens"], tokens[:, None]], dim=1)  # (batch, t) + (batch, 1) -> (batch, t + 1)
        if prefix.shape[1] > state["dec_positions"].shape[1]:
            raise ValueError(f"decoding beyond {state['dec_positions'].shape[1]} steps; raise max_len")
        logits, weights = self.decode(prefix, state["memory"], state["src_lengths"], state["dec_positions"], True)
        return logits[:, -1], {**state, "tokens": prefix}, weights[:, :, -1]  # weights: (batch, heads, src_len)


# --------------------------------------------------------------------------------- decoding


@torch.no_grad()
def greedy_decode(model: nn.Module, src, src_lengths, max_len: int | None = None, return_attention: bool = False):
    """Free-running greedy decoding, batched: feed BOS, then each step's argmax; stop at EOS.

    Parameters
    ----------
    model : one of this module's models
    src : LongTensor (batch, src_len), src_lengths : LongTensor (batch,)
    max_len : int, optional. Most output tokens per sequence (default ``src_len + 2``).
    return_attention : bool. Also return the cross-attention weights of every step.

    Returns
    -------
    tokens : LongTensor (batch, steps) with ``steps <= max_len``: each row ends with EOS (if the model
        emitted one) followed by PAD. Decoding stops once every row has emitted EOS.
    weights (only with ``return_attention``) : (batch, steps, src_len) for the GRU with attention,
        (batch, heads, steps, src_len) for the Transformer, ``None`` for the GRU without attention.

    Raises ``ValueError`` for an empty batch or a token id outside the vocabulary.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    for method in ("init_state", "decode_step"):
        if not callable(getattr(model, method, None)):
            raise TypeError(
                f"model must be one of this module's models (with init_state and decode_step) but is {validate.describe(model)}"
            )
    check_source(src, src_lengths)
    max_len = src.shape[1] + 2 if max_len is None else validate.positive_int("max_len", max_len)
    return_attention = validate.boolean("return_attention", return_attention)
    was_training = model.training
    model.eval()
    try:
        if isinstance(model, TransformerSeq2Seq):
            state = model.init_state(src, src_lengths, max_steps=max_len)
        else:
            state = model.init_state(src, src_lengths)
        batch = src.shape[0]
        tokens = torch.full((batch,), BOS, dtype=torch.long, device=src.device)
        done = torch.zeros(batch, dtype=torch.bool, device=src.device)
        outputs, all_weights = [], []
        for _ in range(max_len):
            logits, state, weights = model.decode_step(state, tokens)
            tokens = logits.argmax(dim=-1).masked_fill(done, PAD)  # (batch,): PAD after a row's EOS
            outputs.append(tokens)
            all_weights.append(weights)
            done = done | (tokens == EOS)
            if bool(done.all()):
                break
    finally:
        model.train(was_training)
    result = torch.stack(outputs, dim=1)  # steps x (batch,) -> (batch, steps)
    if not return_attention:
        return result
    if all_weights[0] is None:
        return result, None
    return result, torch.stack(
        all_weights, dim=-2
    )  # steps x (batch, [heads,] src_len) -> (batch, [heads,] steps, src_len)


# ---------------------------------------------------------------------- building and loading


_MODELS = {"gru": (GRUSeq2Seq, GRUConfig), "gru_attention": (AttentionGRUSeq2Seq, GRUConfig)}
_MODELS["transformer"] = (TransformerSeq2Seq, TransformerConfig)


def build_model(kind: str, **config) -> nn.Module:
    """``build_model("gru" | "gru_attention" | "transformer", **config_fields)``."""
    validate.one_of("kind", kind, _MODELS)
    model_cls, config_cls = _MODELS[kind]
    fields = {f.name for f in dataclasses.fields(config_cls)}
    unknown = sorted(set(config) - fields)
    if unknown:
        raise TypeError(f"{config_cls.__name__} has no field {unknown[0]!r}; its fields are {sorted(fields)}")
    return model_cls(config_cls(**config))


# The shipped checkpoints in data/checkpoints/: name -> (kind, model config, training recipe overrides).
# "_short" models train on lengths 4-12 only (lesson 08's length-generalization experiment).
PRETRAINED = {
    "gru": ("gru", {}, {}),
    "gru_attention": ("gru_attention", {}, {}),
    "transformer": ("transformer", {}, {}),
    "gru_attention_short": ("gru_attention", {}, {"max_len": 12}),
    "transformer_short": ("transformer", {}, {"max_len": 12}),
    "transformer_short_rpe": ("transformer", {"random_positions": 64}, {"max_len": 12}),
}


def _kind_of(model) -> str:
    kinds = {cls: kind for kind, (cls, _) in _MODELS.items()}
    if type(model) not in kinds:
        raise TypeError(
            f"model must be one of {sorted(c.__name__ for c in kinds)} (built by build_model) but is {validate.describe(model)}"
        )
    return kinds[type(model)]


def save_checkpoint(model: nn.Module, path) -> str:
    """Save ``{"kind", "config", "state_dict"}`` (plain types and tensors only); return its SHA-256.

    The file's digest, size, kind and config are recorded in ``MANIFEST.json`` in the same folder,
    which :func:`load_pretrained` checks before unpickling. ``path`` must end in ``<name>.pt``.
    """
    kind = _kind_of(model)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path such as 'data/checkpoints/gru.pt' but is {validate.describe(path)}")
    path = Path(path)
    if path.suffix != ".pt":
        raise ValueError(f"path must end in .pt (load_pretrained looks for <name>.pt) but is {str(path)!r}")
    _manifest.checkpoint_path(path.parent, path.stem)  # a name load_pretrained accepts
    config = dataclasses.asdict(model.config)
    payload = {"kind": kind, "config": config, "state_dict": model.state_dict()}
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(payload, path)  # to the path itself: torch names the archive's folder after the file
    data = path.read_bytes()
    digest = _manifest.sha256_hex(data)
    entry = {"file": path.name, "sha256": digest, "bytes": len(data), "kind": kind, "config": config}
    _manifest.record(path.parent, path.stem, entry)
    return digest


def _expected(name: str, entry: dict) -> tuple[str, dict]:
    """The kind and full config a checkpoint called ``name`` must hold: ``PRETRAINED``'s, else the manifest's."""
    if name in PRETRAINED:
        kind, overrides, _ = PRETRAINED[name]
        return kind, dataclasses.asdict(_MODELS[kind][1](**overrides))
    return entry.get("kind"), entry.get("config")


def load_pretrained(name: str, directory=None, device=None) -> nn.Module:
    """Load a shipped checkpoint (``data/checkpoints/<name>.pt``) in eval mode, verified.

    In this order, each failure a ``ValueError`` (``FileNotFoundError`` for a missing file) naming the file:

    1. ``name`` is a plain name (``"../outside"`` is refused) of a file inside the folder;
    2. the file's SHA-256 equals the one in the folder's ``MANIFEST.json`` (both digests are named),
       checked *before* anything is unpickled;
    3. ``torch.load(weights_only=True)`` reads it (no code runs), and it holds ``{"kind", "config",
       "state_dict"}``, not a bare state dict;
    4. kind and config are those of ``name`` (``PRETRAINED``, or the manifest for your own checkpoints);
    5. the state dict fits that architecture exactly.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    if directory is not None and not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"directory must be a folder path or None but is {validate.describe(directory)}")
    folder = Path(directory) if directory is not None else data_dir() / "checkpoints"
    available = sorted(p.stem for p in folder.glob("*.pt")) if folder.is_dir() else []
    path = _manifest.checkpoint_path(folder, name, available)
    if not path.is_file():
        raise FileNotFoundError(
            f"no checkpoint {path.name} in {folder} (available: {available}); "
            "write them with `python -m course_utils.seq2seq --write-checkpoints data/checkpoints`"
        )
    entry = _manifest.read_manifest(folder).get(name)
    if entry is None:
        raise ValueError(
            f"{path.name} in {folder} is not listed in {_manifest.MANIFEST_NAME}, so its SHA-256 cannot be checked "
            "and it is not loaded; save checkpoints with seq2seq.save_checkpoint(model, path), which records them"
        )
    data = path.read_bytes()  # hash and unpickle the very same bytes
    _manifest.verify_bytes(path, data, entry)
    try:
        payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as err:  # any unpickling failure (EOFError, RuntimeError, UnpicklingError): name the file
        raise ValueError(f"{path.name} could not be read as a checkpoint ({type(err).__name__}: {err})") from None
    if not isinstance(payload, dict) or not {"kind", "config", "state_dict"} <= set(payload):
        bare = isinstance(payload, dict) and all(isinstance(v, torch.Tensor) for v in payload.values())
        what = "a bare state_dict (parameter name -> tensor)" if bare else f"a {type(payload).__name__}"
        raise ValueError(
            f"{path.name} holds {what}, not {{'kind', 'config', 'state_dict'}}: the model it belongs to is unknown. "
            "Save models with seq2seq.save_checkpoint(model, path)"
        )
    kind, config = payload["kind"], payload["config"]
    want_kind, want_config = _expected(name, entry)
    if kind != want_kind or kind != entry.get("kind"):
        raise ValueError(f"{path.name} holds a {kind!r} model but {name!r} is a {want_kind!r} checkpoint")
    if config != want_config or config != entry.get("config"):
        diff = sorted(k for k in set(config) | set(want_config or {}) if config.get(k) != (want_config or {}).get(k))
        raise ValueError(f"{path.name} holds a {kind!r} config that differs from {name!r}'s in {diff}")
    try:
        model = build_model(kind, **config)
        model.load_state_dict(payload["state_dict"])
    except (TypeError, ValueError, RuntimeError) as err:
        raise ValueError(f"{path.name}: its weights do not fit a {kind!r} model with its config ({err})") from None
    target = torch.device("cpu") if device is None else env.get_device(device)
    return model.to(target).eval()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Train the reversal models and write their checkpoints.")
    parser.add_argument("--write-checkpoints", type=Path, metavar="DIR", required=True)
    parser.add_argument("--only", nargs="*", choices=sorted(PRETRAINED), help="train only these")
    args = parser.parse_args(argv)
    from course_utils import training  # training imports this module, so import it here

    for name in args.only or PRETRAINED:
        kind, config, overrides = PRETRAINED[name]
        cfg = training.recipe(kind, **overrides)
        env.set_seed(cfg.seed)
        model = build_model(kind, **config)
        result = training.train(model, cfg, progress=False)
        digest = save_checkpoint(model, args.write_checkpoints / f"{name}.pt")
        print(f"{digest}  {name}.pt  ({result.steps} steps, validation exact {result.val_exact:.4g})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
