"""The model contract every reversal model keeps, and greedy decoding written once against it.

Introduced in ``notebooks/07_seq2seq_rnn_attention.ipynb``; used again in ``08_transformer_reversal``.

A model is anything with the three methods of :class:`Seq2Seq`; :func:`greedy_decode` and
``course_utils.reversal.training`` call only those, so they never import a concrete model.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch

from course_utils import _validation as validate
from course_utils.data import BOS, EOS, PAD, check_token_ids

__all__ = [
    "Seq2Seq",
    "check_source",
    "check_decoder_input",
    "as_config",
    "greedy_decode",
    "greedy_decode_one",
    "RecomputePrefix",
    "mirror_shares",
]


@runtime_checkable
class Seq2Seq(Protocol):
    """What a reversal model provides (``GRUSeq2Seq``, ``AttentionGRUSeq2Seq``, ``TransformerSeq2Seq``).

    - ``forward(src, src_lengths, decoder_input, return_attention=False)`` -> logits
      ``(batch, tgt_len, vocab)`` with teacher forcing, plus the cross-attention weights when asked;
    - ``init_state(src, src_lengths, max_steps=None)`` -> a decoding state for at most ``max_steps`` steps;
    - ``decode_step(state, tokens)`` with tokens ``(batch,)`` -> ``(logits (batch, vocab), state, weights or None)``.
    """

    def forward(self, src, src_lengths, decoder_input, return_attention: bool = False) -> Any: ...

    def init_state(self, src, src_lengths, max_steps: int | None = None) -> Any: ...

    def decode_step(self, state, tokens) -> tuple[torch.Tensor, Any, torch.Tensor | None]: ...


def check_source(src, src_lengths) -> None:
    """Validate a padded source batch; raise ``ValueError`` naming the argument and the shapes.

    src : LongTensor (batch, src_len) of token ids in ``[0, vocab)``; src_lengths : (batch,) in ``[1, src_len]``.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
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


def check_decoder_input(decoder_input, batch: int) -> None:
    """Validate a teacher-forcing input: LongTensor (batch, tgt_len) of token ids; ``ValueError`` names the shapes.

    What every model's ``forward`` checks before decoding (lesson 08's ``MyTransformer`` too).

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    batch = validate.nonnegative_int("batch", batch)
    validate.integer_tensor("decoder_input", decoder_input)
    if decoder_input.dim() != 2 or decoder_input.shape[0] != batch:
        raise ValueError(f"decoder_input must be (batch={batch}, tgt_len) but has shape {tuple(decoder_input.shape)}")
    check_token_ids(decoder_input, "decoder_input")


def as_config(cfg, config_cls):
    """``cfg`` if it is a ``config_cls``, the defaults ``config_cls()`` if it is None, else a ``TypeError``.

    How the models take their sizes: ``GRUEncoder(cfg)``, ``TransformerSeq2Seq(cfg)``.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    if not isinstance(config_cls, type):
        raise TypeError(f"config_cls must be a config class such as GRUConfig but is {validate.describe(config_cls)}")
    if cfg is None:
        return config_cls()
    if not isinstance(cfg, config_cls):
        raise TypeError(
            f"cfg must be a {config_cls.__name__} (or None for the defaults) but is {validate.describe(cfg)}; "
            f"build one with {config_cls.__name__}(**fields) or use build_model(kind, **fields)"
        )
    return cfg


def _check_model(model) -> None:
    for method in ("init_state", "decode_step"):
        if not callable(getattr(model, method, None)):
            raise TypeError(
                "model must be a reversal model (a Seq2Seq: forward, init_state and decode_step) but is "
                f"{validate.describe(model)}"
            )


@torch.no_grad()
def greedy_decode(model: Seq2Seq, src, src_lengths, max_steps: int | None = None, return_attention: bool = False):
    """Free-running greedy decoding, batched: feed BOS, then each step's argmax; stop at EOS.

    Parameters
    ----------
    model : a :class:`Seq2Seq` (any reversal model)
    src : LongTensor (batch, src_len), src_lengths : LongTensor (batch,)
    max_steps : int, optional. Most output tokens per sequence (default ``src_len + 2``).
    return_attention : bool. Also return the cross-attention weights of every step.

    Returns
    -------
    tokens : LongTensor (batch, steps) with ``steps <= max_steps``: each row ends with EOS (if the model
        emitted one) followed by PAD. Decoding stops once every row has emitted EOS.
    weights (only with ``return_attention``) : (batch, steps, src_len) for the GRU with attention,
        (batch, heads, steps, src_len) for the Transformer, ``None`` for the GRU without attention.

    Raises ``ValueError`` for an empty batch or a token id outside the vocabulary.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    _check_model(model)
    check_source(src, src_lengths)
    max_steps = src.shape[1] + 2 if max_steps is None else validate.positive_int("max_steps", max_steps)
    return_attention = validate.boolean("return_attention", return_attention)
    was_training = getattr(model, "training", None)  # an nn.Module: decode in eval mode, then restore
    if was_training is not None:
        model.eval()
    try:
        state = model.init_state(src, src_lengths, max_steps=max_steps)
        batch = src.shape[0]
        tokens = torch.full((batch,), BOS, dtype=torch.long, device=src.device)
        done = torch.zeros(batch, dtype=torch.bool, device=src.device)
        outputs, all_weights = [], []
        for _ in range(max_steps):
            logits, state, weights = model.decode_step(state, tokens)
            tokens = logits.argmax(dim=-1).masked_fill(done, PAD)  # (batch,): PAD after a row's EOS
            outputs.append(tokens)
            all_weights.append(weights)
            done = done | (tokens == EOS)
            if bool(done.all()):
                break
    finally:
        if was_training is not None:
            model.train(was_training)
    # steps x (batch,) -> (batch, steps)
    result = torch.stack(outputs, dim=1)
    if not return_attention:
        return result
    if all_weights[0] is None:
        return result, None
    # steps x (batch, [heads,] src_len) -> (batch, [heads,] steps, src_len)
    return result, torch.stack(all_weights, dim=-2)


def greedy_decode_one(model: Seq2Seq, src, max_steps: int | None = None):
    """Greedy decoding of one source row: :func:`greedy_decode` on a batch of one, trimmed after EOS.

    Parameters
    ----------
    model : a :class:`Seq2Seq`
    src : LongTensor (src_len,), one sequence of token ids (no padding)
    max_steps : int, optional. Most output tokens (default ``src_len + 2``).

    Returns
    -------
    tokens : LongTensor (steps,), every step's argmax, EOS included if it came within ``max_steps``
    weights : (steps, src_len) for the GRU with attention, (heads, steps, src_len) for a Transformer, or None

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    validate.torch_tensor("src", src)
    if src.dim() != 1 or src.shape[0] == 0:
        raise ValueError(f"src must be one non-empty sequence (src_len,) but has shape {tuple(src.shape)}")
    lengths = torch.tensor([src.shape[0]], device=src.device)
    tokens, weights = greedy_decode(model, src[None], lengths, max_steps=max_steps, return_attention=True)
    # a batch of one stops at its EOS, so no PAD follows it: the row is the answer
    return tokens[0], (None if weights is None else weights[0])


class RecomputePrefix:
    """The decoding contract for a model whose ``forward(src, src_lengths, decoder_input, return_attention)``
    reads a whole prefix: each step re-runs the model on the prefix so far (no cache).

    Gives ``init_state`` and ``decode_step`` (:class:`Seq2Seq`) from ``forward`` alone, so :func:`greedy_decode`
    and ``training.evaluate`` work on it. Lesson 08's ``MyTransformer`` inherits it::

        class MyTransformer(decoding.RecomputePrefix, nn.Module): ...

    ``decode_step`` returns the last step's cross-attention, ``weights[..., -1, :]``: (batch, heads, src_len) for
    weights (batch, heads, tgt_len, src_len); ``None`` when ``forward`` returns no weights.

    Introduced in notebooks/08_transformer_reversal.ipynb.
    """

    def init_state(self, src, src_lengths, max_steps: int | None = None):
        """The source and an empty prefix (batch, 0); ``max_steps`` is part of the contract and not needed here."""
        check_source(src, src_lengths)
        if max_steps is not None:
            validate.positive_int("max_steps", max_steps)
        empty = torch.zeros(src.shape[0], 0, dtype=torch.long, device=src.device)
        return {"src": src, "src_lengths": src_lengths, "tokens": empty}

    def decode_step(self, state, tokens):
        """Append ``tokens`` (batch,) to the prefix and run the model on it: (logits (batch, vocab), state, weights)."""
        prefix = torch.cat([state["tokens"], tokens[:, None]], dim=1)  # (batch, t) -> (batch, t + 1)
        logits, weights = self(state["src"], state["src_lengths"], prefix, return_attention=True)
        last = None if weights is None else weights[..., -1, :]  # this step's cross-attention
        return logits[:, -1], {**state, "tokens": prefix}, last


def mirror_shares(weights, src_lengths, per_head: bool = False) -> dict:
    """How often decoding looks at the mirrored source position: the alignment of sequence reversal.

    Share of the symbol-writing steps ``t < n`` (n = the source's length) whose attention argmax is the mirrored
    source position ``n - 1 - t`` (``"mirror"``), and whose argmax is ``n - 1 - t`` or its right neighbour ``n - t``
    (``"mirror_or_next"``). Steps after the symbols (EOS, padding) do not count.

    Parameters
    ----------
    weights : Tensor (batch, steps, src_len) or (batch, heads, steps, src_len), e.g. the weights of
        :func:`greedy_decode` with ``return_attention=True``. Heads are averaged before the argmax unless
        ``per_head``. The GRU of lesson 07 has one "head".
    src_lengths : LongTensor (batch,), the source lengths n.
    per_head : bool. Each value becomes a list, one share per head.

    Returns
    -------
    dict ``{"mirror": float, "mirror_or_next": float}`` (lists of floats with ``per_head``).

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb; used again in 08_transformer_reversal.
    """
    validate.torch_floats(weights=weights)
    validate.integer_tensor("src_lengths", src_lengths)
    per_head = validate.boolean("per_head", per_head)
    if weights.dim() not in (3, 4):
        raise ValueError(
            "weights must be (batch, steps, src_len) or (batch, heads, steps, src_len) but has shape "
            f"{tuple(weights.shape)}"
        )
    w = weights if weights.dim() == 4 else weights[:, None]  # (batch, heads, steps, src_len)
    if src_lengths.shape != (w.shape[0],):
        raise ValueError(f"src_lengths must be (batch,) = ({w.shape[0]},) but has shape {tuple(src_lengths.shape)}")
    lengths = src_lengths.to(w.device)
    steps = torch.arange(w.shape[2], device=w.device)
    writes = steps[None, :] < lengths[:, None]  # (batch, steps): the steps that write a symbol
    if not bool(writes.any()):
        raise ValueError("no step writes a symbol (every src_length is 0 or there are no steps): no share to take")
    mirror = (lengths[:, None] - 1 - steps[None, :]).clamp(min=0)  # (batch, steps): n - 1 - t

    def shares(top):  # top: (batch, steps) argmax positions
        on = top == mirror
        return on[writes].float().mean().item(), (on | (top == mirror + 1))[writes].float().mean().item()

    if not per_head:
        on, band = shares(w.mean(dim=1).argmax(dim=-1))  # heads averaged: (batch, steps, src_len) -> (batch, steps)
        return {"mirror": on, "mirror_or_next": band}
    per = [shares(w[:, h].argmax(dim=-1)) for h in range(w.shape[1])]  # heads x (on, band)
    return {"mirror": [on for on, _ in per], "mirror_or_next": [band for _, band in per]}
