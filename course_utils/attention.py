"""Attention in PyTorch: the function and the module every later lesson uses.

Introduced in ``notebooks/04_multi_head_pytorch.ipynb``. Checked against
``torch.nn.functional.scaled_dot_product_attention`` and ``torch.nn.MultiheadAttention`` in
``tests/test_attention_oracle.py``.

A *mask* is boolean and True means "may attend" (as in ``F.scaled_dot_product_attention``).
Padding goes to ``MultiHeadAttention``'s own ``key_mask`` ``(batch, k_len)``, True = real key
(lesson 02 shows why a padding mask must not travel as a 2-D ``mask``). The name differs from
``nn.MultiheadAttention``'s ``key_padding_mask`` on purpose: that one means the opposite (True = ignore).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from course_utils import _validation as validate
from course_utils._validation import check_heads, check_mha_mask_ndim, check_qkv

__all__ = ["masked_softmax", "scaled_dot_product_attention", "MultiHeadAttention"]


def masked_softmax(scores, mask=None):
    """The softmax of ``scores`` over the keys (the last axis), 0 where ``mask`` is False; a row with no key is all 0.

    Lesson 02's safe masked softmax, the course's version: ``-inf`` where the mask is False would make a fully
    masked row ``exp(-inf) / 0 = NaN``; here such a row gets finite scores first and its weights are then zeroed,
    so its weights, and their gradient, are 0.

    Parameters
    ----------
    scores : float Tensor (..., q_len, k_len)
    mask : bool Tensor broadcastable to ``scores``, optional. True = may attend.

    Returns
    -------
    weights : Tensor (..., q_len, k_len), the shape of ``scores``

    Introduced in notebooks/02_masking.ipynb (written there by the student); the module of
    notebooks/04_multi_head_pytorch.ipynb calls it.

    Examples
    --------
    >>> masked_softmax(torch.zeros(2, 3), torch.tensor([[True, True, False], [False, False, False]]))
    tensor([[0.5000, 0.5000, 0.0000],
            [0.0000, 0.0000, 0.0000]])
    """
    validate.torch_floats(scores=scores)
    if scores.dim() < 1:
        raise ValueError("scores must have a key axis, shape (..., q_len, k_len), but is a 0-d tensor")
    mask = validate.torch_bool_mask(mask, tuple(scores.shape), "(..., q_len, k_len)", device=scores.device)
    return _masked_softmax(scores, mask)


def _masked_softmax(scores, mask):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)  # (..., q_len, 1): False for fully masked rows
    # A row of all -inf would softmax to NaN: give it finite scores, then zero its weights.
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1) * has_key


def scaled_dot_product_attention(query, key, value, mask=None, dropout_p: float = 0.0):
    """``softmax(query key^T / sqrt(d_head)) value``, returning the attention weights too.

    Parameters
    ----------
    query : Tensor (..., q_len, d_head)
    key : Tensor (..., k_len, d_head)
    value : Tensor (..., k_len, d_value)
    mask : bool Tensor broadcastable to (..., q_len, k_len), optional. True = may attend.
        A query whose keys are all masked gets all-zero weights and a zero output, never NaN,
        and its gradient is zero too (PyTorch's own SDPA gives the same zeros).
    dropout_p : float
        Dropout on the attention weights (applied whenever > 0, as in ``F.scaled_dot_product_attention``;
        modules pass 0 in eval mode). Kept weights are scaled by ``1 / (1 - dropout_p)``, so rows
        no longer sum to 1 in training.

    Returns
    -------
    output : Tensor (..., q_len, d_value)
    weights : Tensor (..., q_len, k_len)

    Introduced in notebooks/04_multi_head_pytorch.ipynb.
    """
    validate.torch_floats(query=query, key=key, value=value)
    check_qkv(tuple(query.shape), tuple(key.shape), tuple(value.shape))
    dropout_p = validate.probability("dropout_p", dropout_p)
    scores_shape = (*validate.broadcast_shapes(query.shape[:-2], key.shape[:-2]), query.shape[-2], key.shape[-2])
    mask = validate.torch_bool_mask(mask, scores_shape, "(..., q_len, k_len)", device=query.device)
    return _attend(query, key, value, mask, dropout_p)


def _attend(query, key, value, mask, dropout_p: float):
    """The formula itself, on checked inputs: the public function and the module both call it once."""
    d_head = query.shape[-1]
    # (..., q_len, d_head) @ (..., d_head, k_len) -> (..., q_len, k_len)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_head)
    weights = _masked_softmax(scores, mask)  # (..., q_len, k_len); a row with no key is all 0
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p, training=True)
    # (..., q_len, k_len) @ (..., k_len, d_value) -> (..., q_len, d_value)
    return weights @ value, weights


def _refuse_padding_as_2d_mask(mask_shape: tuple, batch: int, q_len: int, k_len: int) -> None:
    """A 2-D ``mask`` means ``(q_len, k_len)``; one shaped ``(batch, k_len)`` instead is a padding mask in the wrong place.

    Broadcasting would read its rows as queries, not sequences. The check catches it whenever the
    shapes differ; when ``batch == q_len`` they are equal and only ``key_mask`` is safe.
    """
    if len(mask_shape) == 2 and mask_shape == (batch, k_len) and mask_shape != (q_len, k_len):
        raise ValueError(
            f"mask of shape {mask_shape} looks like a (batch, k_len) key padding mask, but a 2-D mask is read as "
            f"(q_len={q_len}, k_len={k_len}), one row per query, the same for every sequence. Pass padding as "
            "key_mask=padding_mask (batch, k_len), True = real key (or as mask=padding_mask[:, None, None, :], "
            "shape (batch, 1, 1, k_len)); not as key_padding_mask=, nn.MultiheadAttention's name, where True "
            "means ignore"
        )


KEY_PADDING_MASK_MESSAGE = (
    "MultiHeadAttention takes key_mask= (batch, k_len), True = real key; key_padding_mask is "
    "nn.MultiheadAttention's name, where True means ignore: convert with ~ or pass key_mask="
)
"""The ``TypeError`` that passing ``key_padding_mask=`` to the course's module raises: the name means the opposite
in ``nn.MultiheadAttention``, so the course's module does not accept it."""


class MultiHeadAttention(nn.Module):
    """Multi-head attention with separate query, key, value and output projections.

    Parameters
    ----------
    d_model : int
        Feature size of the inputs and the output (positive).
    num_heads : int
        Number of heads; must divide ``d_model``; each head has ``d_head = d_model // num_heads``.
    dropout : float in [0, 1)
        Dropout on the attention weights, only in training mode (``.eval()`` turns it off).
    bias : bool
        Whether the four projections have biases.

    ``forward(query, key, value, mask=None, need_weights=True, key_mask=None)`` takes query
    ``(batch, q_len, d_model)`` and key/value ``(batch, k_len, d_model)`` (``k_len`` may differ:
    cross-attention) and returns ``(output, weights)`` with output ``(batch, q_len, d_model)`` and
    weights ``(batch, heads, q_len, k_len)``. With ``need_weights=False`` it runs PyTorch's fused
    kernel (``F.scaled_dot_product_attention``), never builds the weights, and returns ``(output, None)``.

    Two masks, both boolean with **True = may attend / real token**:

    - ``key_mask`` ``(batch, k_len)``: which keys of each sequence are real. This is *the*
      way to pass padding (``masks.make_padding_mask(lengths, k_len)`` builds it). It is the
      opposite of ``nn.MultiheadAttention(key_padding_mask=...)``, where True means ignore, hence
      another name: passing ``key_padding_mask=`` raises a ``TypeError`` that says so.
    - ``mask``: 2-D ``(q_len, k_len)`` (the same for every sequence and head, e.g. causal) or 4-D
      ``(batch, heads, q_len, k_len)`` with 1 for any axis it shares. A 3-D mask is refused (its
      batch axis would line up with the heads), and so is a 2-D mask of shape ``(batch, k_len)``
      that is not ``(q_len, k_len)``: it would be read as one row per *query*. When
      ``batch == q_len`` the two layouts have the same shape and no check can tell them apart,
      which is why padding has its own argument.

    A key is attended only if both masks allow it.

    Introduced in notebooks/04_multi_head_pytorch.ipynb.

    Examples
    --------
    >>> mha = MultiHeadAttention(d_model=16, num_heads=4)
    >>> out, w = mha(torch.zeros(2, 5, 16), torch.zeros(2, 7, 16), torch.zeros(2, 7, 16))
    >>> tuple(out.shape), tuple(w.shape)
    ((2, 5, 16), (2, 4, 5, 7))
    >>> real = torch.tensor([[True, True, True, False, False, False, False], [True] * 7])  # (batch, k_len)
    >>> out, w = mha(torch.zeros(2, 5, 16), torch.zeros(2, 7, 16), torch.zeros(2, 7, 16), key_mask=real)
    >>> float(w[0, :, :, 3:].sum())
    0.0
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        d_head = check_heads(d_model, num_heads)  # positive ints, num_heads divides d_model
        self.d_model, self.num_heads = int(d_model), int(num_heads)
        self.d_head = d_head  # = d_model // num_heads
        self.dropout = validate.probability("dropout", dropout)
        bias = validate.boolean("bias", bias)
        self.query_proj = nn.Linear(d_model, d_model, bias=bias)
        self.key_proj = nn.Linear(d_model, d_model, bias=bias)
        self.value_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq_len, _ = x.shape  # each tensor's own length: keys may be longer than queries
        # (batch, seq_len, d_model) -> (batch, seq_len, heads, d_head) -> (batch, heads, seq_len, d_head)
        return x.view(batch, seq_len, self.num_heads, self.d_head).transpose(1, 2)

    def _check_inputs(self, query, key, value, mask, key_mask):
        weight = self.query_proj.weight
        validate.torch_floats(dtype=weight.dtype, device=weight.device, query=query, key=key, value=value)
        for name, x in (("query", query), ("key", key), ("value", value)):
            if x.dim() != 3 or x.shape[-1] != self.d_model:
                raise ValueError(
                    f"{name} must be (batch, seq_len, d_model={self.d_model}) but has shape {tuple(x.shape)}"
                )
        if key.shape[:2] != value.shape[:2]:
            raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must share (batch, k_len)")
        if query.shape[0] != key.shape[0]:
            raise ValueError(f"query batch {query.shape[0]} differs from key batch {key.shape[0]}")
        batch, q_len, k_len = query.shape[0], query.shape[1], key.shape[1]
        if mask is not None:
            if isinstance(mask, torch.Tensor):
                check_mha_mask_ndim(tuple(mask.shape))
                _refuse_padding_as_2d_mask(tuple(mask.shape), batch, q_len, k_len)
            scores_shape = (batch, self.num_heads, q_len, k_len)
            validate.torch_bool_mask(mask, scores_shape, "(batch, heads, q_len, k_len)", device=query.device)
        if key_mask is not None:
            validate.torch_tensor("key_mask", key_mask, "masks.make_padding_mask(lengths, k_len) (True = real key)")
            if key_mask.dtype != torch.bool:
                raise TypeError(
                    f"key_mask must be boolean (True = real key) but has dtype {key_mask.dtype}; "
                    "build it with masks.make_padding_mask(lengths, k_len)"
                )
            if tuple(key_mask.shape) != (batch, k_len):
                raise ValueError(
                    f"key_mask must be (batch, k_len) = ({batch}, {k_len}) but has shape "
                    f"{tuple(key_mask.shape)}: one row per sequence, one entry per key (True = real key)"
                )
            if key_mask.device != query.device:
                raise ValueError(
                    f"key_mask is on {key_mask.device} but query is on {query.device}; "
                    "move it with key_mask.to(query.device)"
                )

    def forward(self, query, key, value, mask=None, need_weights: bool = True, key_mask=None, key_padding_mask=None):
        if key_padding_mask is not None:  # PyTorch's name, with the opposite meaning: refused with a message
            raise TypeError(KEY_PADDING_MASK_MESSAGE)
        self._check_inputs(query, key, value, mask, key_mask)
        need_weights = validate.boolean("need_weights", need_weights)
        if key_mask is not None:
            # (batch, k_len) -> (batch, 1, 1, k_len): the same row for every head and every query
            padding = key_mask[:, None, None, :]
            mask = padding if mask is None else mask & padding
        batch, q_len, _ = query.shape
        queries = self._split(self.query_proj(query))  # (batch, heads, q_len, d_head)
        keys = self._split(self.key_proj(key))  # (batch, heads, k_len, d_head)
        values = self._split(self.value_proj(value))  # (batch, heads, k_len, d_head)
        # checked again here: self.dropout may have been changed after construction
        dropout_p = validate.probability("dropout", self.dropout) if self.training else 0.0
        if need_weights:
            heads_out, weights = _attend(queries, keys, values, mask, dropout_p)
        elif keys.shape[-2] == 0:  # no key at all: zeros, as on the weights path (and as a fully masked row)
            heads_out, weights = queries.new_zeros((*queries.shape[:-1], values.shape[-1])), None
        else:
            # Fused kernel: never materializes (batch, heads, q_len, k_len) on its fast paths.
            heads_out = F.scaled_dot_product_attention(queries, keys, values, attn_mask=mask, dropout_p=dropout_p)
            if mask is not None:  # fully masked rows: zeros, as on the weights path
                heads_out = heads_out.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
            weights = None
        # (batch, heads, q_len, d_head) -> (batch, q_len, heads, d_head) -> (batch, q_len, d_model)
        concat = heads_out.transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(concat), weights

    @classmethod
    def from_torch(cls, module: nn.MultiheadAttention) -> MultiHeadAttention:
        """Build a ``MultiHeadAttention`` with the weights of a ``torch.nn.MultiheadAttention``.

        The torch module must use ``batch_first=True`` and equal query/key/value sizes. Its packed
        ``in_proj_weight`` ``(3 * d_model, d_model)`` holds the query, key and value projections
        stacked in that order. Dropout is copied; put both modules in ``.eval()`` to compare.

        Introduced in notebooks/04_multi_head_pytorch.ipynb.
        """
        if not isinstance(module, nn.MultiheadAttention):
            raise TypeError(f"module must be a torch.nn.MultiheadAttention but is {type(module).__name__}")
        if not module.batch_first:
            raise ValueError("module must be built with batch_first=True (inputs (batch, seq_len, d_model))")
        if not module._qkv_same_embed_dim:
            raise ValueError("module has kdim/vdim different from embed_dim; only equal sizes are supported")
        if module.bias_k is not None or module.add_zero_attn:
            raise ValueError("add_bias_kv and add_zero_attn are not supported")
        d_model = module.embed_dim
        ours = cls(d_model, module.num_heads, dropout=module.dropout, bias=module.in_proj_bias is not None)
        ours = ours.to(device=module.in_proj_weight.device, dtype=module.in_proj_weight.dtype)
        with torch.no_grad():
            projections = (ours.query_proj, ours.key_proj, ours.value_proj)
            for i, proj in enumerate(projections):
                proj.weight.copy_(module.in_proj_weight[i * d_model : (i + 1) * d_model])
                if proj.bias is not None:
                    proj.bias.copy_(module.in_proj_bias[i * d_model : (i + 1) * d_model])
            ours.out_proj.weight.copy_(module.out_proj.weight)
            if ours.out_proj.bias is not None:
                ours.out_proj.bias.copy_(module.out_proj.bias)
        return ours
