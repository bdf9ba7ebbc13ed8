"""Lesson 08's model: a small pre-norm Transformer encoder-decoder built from ``MultiHeadAttention``.

Introduced in ``notebooks/08_transformer_reversal.ipynb``.

- :func:`sinusoidal_positions` and :func:`make_decoder_masks`: the two pieces around the layers;
- :class:`EncoderLayer` and :class:`DecoderLayer`: one residual path per sub-layer (pre-norm, as minGPT's
  ``Block``): ``x + f(LayerNorm(x))``;
- :class:`TransformerSeq2Seq`: embeddings + positions, the layers, greedy decoding by recomputing the prefix.

The model keeps the contract of :class:`course_utils.reversal.decoding.Seq2Seq`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from course_utils import _validation as validate
from course_utils import masks
from course_utils._validation import check_heads
from course_utils.attention import MultiHeadAttention
from course_utils.data import VOCAB_SIZE
from course_utils.reversal.decoding import as_config, check_decoder_input, check_source

__all__ = [
    "TransformerConfig",
    "sinusoidal_positions",
    "make_decoder_masks",
    "FeedForward",
    "EncoderLayer",
    "DecoderLayer",
    "TransformerSeq2Seq",
]


@dataclass
class TransformerConfig:
    """Sizes and switches of the Transformer encoder-decoder."""

    vocab: int = VOCAB_SIZE  # token ids 0 .. vocab - 1
    d_model: int = 32  # embedding and residual-stream size
    num_heads: int = 4  # heads per attention block; d_head = d_model // num_heads = 8
    d_ff: int = 64  # hidden size of each feed-forward block
    num_layers: int = 1  # encoder layers, and decoder layers
    dropout: float = 0.0  # on attention weights; the task has unlimited fresh data, so none by default
    positional_encoding: bool = True  # False: the ablation of lesson 08 (a bag of tokens)
    scale_embeddings: bool = False  # True: multiply embeddings by sqrt(d_model), the trap of lesson 08
    num_positions: int = 64  # positions 0 .. num_positions - 1 exist (sequences up to num_positions - 1 symbols)
    random_positions: int = 0  # > 0: randomized positions (Ruoss et al. 2023), drawn from [0, random_positions)

    def __post_init__(self):
        for name in ("vocab", "d_model", "num_heads", "d_ff", "num_layers", "num_positions"):
            setattr(self, name, validate.positive_int(f"TransformerConfig.{name}", getattr(self, name)))
        self.random_positions = validate.nonnegative_int("TransformerConfig.random_positions", self.random_positions)
        self.dropout = validate.probability("TransformerConfig.dropout", self.dropout)
        for name in ("positional_encoding", "scale_embeddings"):
            setattr(self, name, validate.boolean(f"TransformerConfig.{name}", getattr(self, name)))
        check_heads(self.d_model, self.num_heads)
        if self.d_model % 2:
            raise ValueError(f"TransformerConfig.d_model must be even (sinusoidal positions) but is {self.d_model}")


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
    # (batch, src_len) -> (batch, 1, 1, src_len)
    cross_mask = masks.padding_to_attention_mask(masks.make_padding_mask(src_lengths, src_len))
    return self_mask, cross_mask


class FeedForward(nn.Sequential):
    """``Linear(d_model, d_ff) -> ReLU -> Linear(d_ff, d_model)``, applied at every position."""

    def __init__(self, d_model: int, d_ff: int):
        d_model, d_ff = validate.positive_int("d_model", d_model), validate.positive_int("d_ff", d_ff)
        super().__init__(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


class EncoderLayer(nn.Module):
    """Pre-norm: ``x + SelfAttention(LN(x))``, then ``x + FFN(LN(x))``.

    ``EncoderLayer(d_model, num_heads, d_ff, dropout=0.0)`` (``dropout`` on the attention weights). ``forward(x,
    mask)`` with x ``(batch, src_len, d_model)`` and mask ``(batch, 1, 1, src_len)`` (True = may attend) returns the
    new x ``(batch, src_len, d_model)``. Parameters: ``norm1``, ``self_attn``, ``norm2``, ``ffn``.

    Introduced in notebooks/08_transformer_reversal.ipynb.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        check_heads(d_model, num_heads)
        d_ff, dropout = validate.positive_int("d_ff", d_ff), validate.probability("dropout", dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        return x + self.ffn(self.norm2(x))


class DecoderLayer(nn.Module):
    """Pre-norm: causal self-attention, cross-attention to the encoder output, feed-forward.

    ``DecoderLayer(d_model, num_heads, d_ff, dropout=0.0)``. ``forward(x, memory, self_mask, cross_mask,
    need_weights)`` with x ``(batch, tgt_len, d_model)`` and memory ``(batch, src_len, d_model)`` returns the new x
    and the cross-attention weights ``(batch, heads, tgt_len, src_len)`` (``None`` unless ``need_weights``).
    Parameters: ``norm1``, ``self_attn``, ``norm2``, ``cross_attn``, ``norm3``, ``ffn``.

    Introduced in notebooks/08_transformer_reversal.ipynb.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        check_heads(d_model, num_heads)
        d_ff, dropout = validate.positive_int("d_ff", d_ff), validate.probability("dropout", dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x, memory, self_mask, cross_mask, need_weights: bool = False):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask, need_weights=False)[0]
        out, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask, need_weights=need_weights)
        x = x + out
        return x + self.ffn(self.norm3(x)), weights


class TransformerSeq2Seq(nn.Module):
    """A small Transformer encoder-decoder (pre-norm) built from ``MultiHeadAttention``.

    ``forward(..., return_attention=True)`` also returns the last decoder layer's cross-attention
    weights ``(batch, heads, tgt_len, src_len)``.

    Positions: sinusoidal encodings added to the token embeddings (``positional_encoding=False``
    drops them). Source token i and decoder step t read the position ids ``ids[i]`` and ``ids[t]`` of
    one table per sequence: ``0, 1, 2, ...`` by default. With ``random_positions = R > 0`` (Ruoss et al.,
    2023) the table is one sorted random draw of ``n + 1`` distinct ids from ``0 .. R - 1`` per sequence of
    length n, so that ids beyond the training lengths are seen in training; source token t and decoder step t
    share ``ids[t]``. That sharing is the course's adaptation to an encoder-decoder: the paper's models are
    encoder-only, with one sorted draw over a single sequence holding the input and then the output. In eval mode
    the draw uses a fixed seed, so evaluation is repeatable.

    Introduced in notebooks/08_transformer_reversal.ipynb.
    """

    def __init__(self, cfg: TransformerConfig | None = None):
        super().__init__()
        self.config = cfg = as_config(cfg, TransformerConfig)
        self.src_embed = nn.Embedding(cfg.vocab, cfg.d_model)  # N(0, 1) init, like nn.Embedding's default
        self.tgt_embed = nn.Embedding(cfg.vocab, cfg.d_model)
        table_size = max(cfg.num_positions, cfg.random_positions)
        self.register_buffer("pe", sinusoidal_positions(table_size, cfg.d_model), persistent=False)
        sizes = (cfg.d_model, cfg.num_heads, cfg.d_ff, cfg.dropout)
        self.encoder_layers = nn.ModuleList(EncoderLayer(*sizes) for _ in range(cfg.num_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(*sizes) for _ in range(cfg.num_layers))
        self.encoder_norm, self.decoder_norm = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.out_proj = nn.Linear(cfg.d_model, cfg.vocab)

    # positions ---------------------------------------------------------------------------
    def position_ids(self, src_lengths, width: int) -> torch.Tensor:
        """The position ids of source tokens and decoder steps ``0 .. width - 1``: ``(batch or 1, width)``.

        Without random positions: ``0 .. width - 1``. With ``random_positions = R``: per sequence of length
        n, one sorted draw of ``n + 1`` distinct ids from ``[0, R)`` (the n source tokens; the n + 1 decoder
        steps, y and EOS), then ``R - 1`` for the columns after them (padding, never attended).
        """
        R = self.config.random_positions
        if not R:
            if width > self.config.num_positions:
                raise ValueError(f"sequence of {width} tokens is longer than num_positions={self.config.num_positions}")
            return torch.arange(width, device=src_lengths.device)[None]  # (1, width)
        drawn = src_lengths + 1  # (batch,): how many ids each sequence uses
        if int(drawn.max()) > R:
            raise ValueError(f"a sequence of {int(drawn.max())} steps needs more than random_positions={R} positions")
        generator = None if self.training else torch.Generator().manual_seed(0)
        noise = torch.rand(src_lengths.shape[0], R, generator=generator)  # (batch, R), on the CPU: repeatable
        cols = max(width, int(drawn.max()))  # every drawn id, even when fewer columns are asked for
        k = min(cols, R)
        picks = noise.argsort(dim=1)[:, :k].to(src_lengths.device)  # (batch, k): distinct ids in [0, R)
        real = masks.make_padding_mask(drawn, k)  # (batch, k): the first n + 1 columns
        picks = picks.masked_fill(~real, R)  # padding sorts last ...
        ids = picks.sort(dim=1).values.clamp_max(R - 1)  # ... and is clamped to a valid (ignored) id
        if cols > k:  # more decoder steps than ids: the extra steps lie beyond EOS, never read
            ids = torch.cat([ids, ids.new_full((ids.shape[0], cols - k), R - 1)], dim=1)  # (batch, cols)
        return ids[:, :width]  # (batch, cols) -> (batch, width)

    def _embed(self, table, tokens, ids):
        x = table(tokens)  # (batch, len, d_model)
        if self.config.scale_embeddings:
            x = x * math.sqrt(self.config.d_model)
        if self.config.positional_encoding:
            x = x + self.pe[ids[:, : tokens.shape[1]]]  # (batch or 1, len, d_model)
        return x

    # encoder / decoder -------------------------------------------------------------------
    def encode(self, src, src_lengths, ids=None):
        """Encoder output ``(batch, src_len, d_model)``; ``ids`` from :meth:`position_ids` (default: drawn here)."""
        src_len = src.shape[1]
        if ids is None:
            ids = self.position_ids(src_lengths, src_len)
        x = self._embed(self.src_embed, src, ids)
        # (batch, src_len) -> (batch, 1, 1, src_len)
        mask = masks.padding_to_attention_mask(masks.make_padding_mask(src_lengths, src_len))
        for layer in self.encoder_layers:
            x = layer(x, mask)
        return self.encoder_norm(x)  # (batch, src_len, d_model)

    def decode(self, tokens, memory, src_lengths, ids, need_weights: bool = False):
        """Logits ``(batch, tgt_len, vocab)`` and the last layer's cross-attention weights (or None)."""
        self_mask, cross_mask = make_decoder_masks(src_lengths, memory.shape[1], tokens.shape[1])
        x = self._embed(self.tgt_embed, tokens, ids)
        weights = None
        for layer in self.decoder_layers:
            x, weights = layer(x, memory, self_mask, cross_mask, need_weights)
        return self.out_proj(self.decoder_norm(x)), weights  # (batch, tgt_len, vocab)

    def forward(self, src, src_lengths, decoder_input, return_attention: bool = False):
        check_source(src, src_lengths)
        check_decoder_input(decoder_input, src.shape[0])
        ids = self.position_ids(src_lengths, max(src.shape[1], decoder_input.shape[1]))  # one draw for both
        memory = self.encode(src, src_lengths, ids)
        logits, weights = self.decode(decoder_input, memory, src_lengths, ids, return_attention)
        return (logits, weights) if return_attention else logits

    # step-by-step decoding (recomputes the prefix each step: simple, and cheap at these sizes)
    def init_state(self, src, src_lengths, max_steps: int | None = None):
        """The decoding state for at most ``max_steps`` steps (default ``src_len + 2``)."""
        steps = src.shape[1] + 2 if max_steps is None else validate.positive_int("max_steps", max_steps)
        if not self.config.random_positions:
            steps = min(steps, self.config.num_positions)
        ids = self.position_ids(src_lengths, max(src.shape[1], steps))
        memory = self.encode(src, src_lengths, ids)
        empty = torch.zeros(src.shape[0], 0, dtype=torch.long, device=src.device)
        return {"memory": memory, "src_lengths": src_lengths, "ids": ids[:, :steps], "tokens": empty}

    def decode_step(self, state, tokens):
        # (batch, t) + (batch, 1) -> (batch, t + 1)
        prefix = torch.cat([state["tokens"], tokens[:, None]], dim=1)
        if prefix.shape[1] > state["ids"].shape[1]:
            raise ValueError(f"decoding beyond {state['ids'].shape[1]} steps; raise max_steps")
        logits, weights = self.decode(prefix, state["memory"], state["src_lengths"], state["ids"], True)
        # weights: (batch, heads, t + 1, src_len) -> the last step's (batch, heads, src_len)
        return logits[:, -1], {**state, "tokens": prefix}, weights[:, :, -1]
