"""Attention in plain NumPy: the formulas of lessons 01–03, one function each.

Introduced in ``notebooks/01_attention_numpy.ipynb`` (softmax, scaled dot-product attention) and
``notebooks/03_multi_head_numpy.ipynb`` (heads). Needs only NumPy.

Vocabulary: ``batch``, ``heads``, ``q_len``, ``k_len``, ``d_model``, ``d_head``, ``d_value``.
*Attention scores* are ``Q K^T / sqrt(d_head)``; *attention weights* are their softmax over keys.
A *mask* is boolean and True means "may attend".
"""

from __future__ import annotations

import math

import numpy as np

from course_utils import _validation as validate
from course_utils._validation import check_heads, check_mha_mask_ndim, check_qkv

__all__ = [
    "softmax",
    "scaled_dot_product_attention",
    "split_heads",
    "merge_heads",
    "multi_head_attention",
]


def softmax(x, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    Subtracting the row maximum first leaves the result unchanged (softmax is shift invariant)
    but keeps every ``exp`` at most 1, so logits of 1e4 do not overflow. Entries equal to
    ``-inf`` get weight 0; a row that is entirely ``-inf`` gets all-zero weights (not NaN).

    Introduced in notebooks/01_attention_numpy.ipynb.

    Examples
    --------
    >>> softmax(np.array([1e4, 1e4])).tolist()
    [0.5, 0.5]
    """
    (x,) = validate.numpy_floats(x=x)  # float32 stays float32; integers become float64
    axis = validate.as_int("axis", axis, minimum=-max(x.ndim, 1))
    if x.ndim == 0 or axis >= x.ndim:
        raise ValueError(
            f"axis {axis} is out of range for x of shape {x.shape}: softmax needs an axis to normalize over"
        )
    if x.shape[axis] == 0:
        return x.copy()  # nothing to normalize: an empty row has no weights
    row_max = np.max(x, axis=axis, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)  # all -inf row: shift by 0
    exps = np.exp(x - row_max)
    total = np.sum(exps, axis=axis, keepdims=True)
    return np.divide(exps, total, out=np.zeros_like(exps), where=total > 0)


def scaled_dot_product_attention(q, k, v, mask=None):
    """Scaled dot-product attention, ``softmax(q k^T / sqrt(d_head)) v``.

    Parameters
    ----------
    q : array (..., q_len, d_head)
    k : array (..., k_len, d_head)
    v : array (..., k_len, d_value)
    mask : bool array broadcastable to (..., q_len, k_len), optional
        True means "may attend". A query whose keys are all masked gets all-zero weights and a
        zero output (never NaN).

    Returns
    -------
    output : array (..., q_len, d_value)
    weights : array (..., q_len, k_len), rows sum to 1 (or 0 for fully masked rows)

    Introduced in notebooks/01_attention_numpy.ipynb.

    Examples
    --------
    >>> q = k = v = np.eye(2)
    >>> out, w = scaled_dot_product_attention(q, k, v)
    >>> w.shape, bool(np.allclose(w.sum(-1), 1))
    ((2, 2), True)
    """
    q, k, v = validate.numpy_floats(q=q, k=k, v=v)
    check_qkv(q.shape, k.shape, v.shape)
    scores_shape = (*validate.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q.shape[-2], k.shape[-2])
    mask = validate.numpy_bool_mask(mask, scores_shape, "(..., q_len, k_len)")
    return _attend(q, k, v, mask)


def _attend(q, k, v, mask):
    """The formula itself, on checked inputs (``multi_head_attention`` calls it after its own checks)."""
    d_head = q.shape[-1]
    # (..., q_len, d_head) @ (..., d_head, k_len) -> (..., q_len, k_len); math.sqrt keeps float32 float32
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_head)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    # (..., q_len, k_len) @ (..., k_len, d_value) -> (..., q_len, d_value)
    output = weights @ v
    return output, weights


def split_heads(x, num_heads: int) -> np.ndarray:
    """Split the feature axis into heads: ``(batch, seq_len, d_model) -> (batch, heads, seq_len, d_head)``.

    Head ``h`` gets features ``h * d_head : (h + 1) * d_head``. Uses the array's own ``seq_len``,
    so keys and values of another length split correctly (cross-attention).

    Introduced in notebooks/03_multi_head_numpy.ipynb.
    """
    (x,) = validate.numpy_floats(x=x)
    if x.ndim != 3:
        raise ValueError(f"x must be (batch, seq_len, d_model) but has shape {tuple(x.shape)}")
    batch, seq_len, d_model = x.shape
    d_head = check_heads(d_model, num_heads)
    num_heads = d_model // d_head
    # (batch, seq_len, d_model) -> (batch, seq_len, heads, d_head) -> (batch, heads, seq_len, d_head)
    return x.reshape(batch, seq_len, num_heads, d_head).transpose(0, 2, 1, 3)


def merge_heads(x) -> np.ndarray:
    """Inverse of :func:`split_heads`: ``(batch, heads, seq_len, d_head) -> (batch, seq_len, d_model)``.

    Introduced in notebooks/03_multi_head_numpy.ipynb.
    """
    (x,) = validate.numpy_floats(x=x)
    if x.ndim != 4:
        raise ValueError(f"x must be (batch, heads, seq_len, d_head) but has shape {tuple(x.shape)}")
    batch, heads, seq_len, d_head = x.shape
    # (batch, heads, seq_len, d_head) -> (batch, seq_len, heads, d_head) -> (batch, seq_len, d_model)
    return x.transpose(0, 2, 1, 3).reshape(batch, seq_len, heads * d_head)


def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads: int, mask=None):
    """Multi-head attention with weight matrices applied as ``x @ W`` (no biases).

    Parameters
    ----------
    query : array (batch, q_len, d_model)
    key, value : arrays (batch, k_len, d_model); ``k_len`` may differ from ``q_len``
    W_q, W_k, W_v, W_o : arrays (d_model, d_model)
    num_heads : int, must divide d_model
    mask : bool array, (q_len, k_len) or (batch | 1, heads | 1, q_len, k_len), True = may attend

    Returns
    -------
    output : array (batch, q_len, d_model)
    weights : array (batch, heads, q_len, k_len)

    Introduced in notebooks/03_multi_head_numpy.ipynb.
    """
    query, key, value, W_q, W_k, W_v, W_o = validate.numpy_floats(
        query=query, key=key, value=value, W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_o
    )
    for name, x in (("query", query), ("key", key), ("value", value)):
        if x.ndim != 3:
            raise ValueError(f"{name} must be (batch, seq_len, d_model) but has shape {tuple(x.shape)}")
    d_model = query.shape[-1]
    for name, x in (("key", key), ("value", value)):
        if x.shape[-1] != d_model:
            raise ValueError(
                f"{name} has d_model {x.shape[-1]} but query has d_model {d_model} "
                f"(query {tuple(query.shape)}, {name} {tuple(x.shape)})"
            )
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must share (batch, k_len)")
    if query.shape[0] != key.shape[0]:  # as attention.MultiHeadAttention: no silent broadcasting of batches
        raise ValueError(f"query batch {query.shape[0]} differs from key batch {key.shape[0]}")
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v), ("W_o", W_o)):
        if np.shape(W) != (d_model, d_model):
            raise ValueError(f"{name} must be (d_model, d_model) = ({d_model}, {d_model}) but has shape {np.shape(W)}")
    d_head = check_heads(d_model, num_heads)
    num_heads = d_model // d_head
    if mask is not None:
        check_mha_mask_ndim(np.shape(mask))
        scores_shape = (query.shape[0], num_heads, query.shape[1], key.shape[1])
        mask = validate.numpy_bool_mask(mask, scores_shape, "(batch, heads, q_len, k_len)")
    # (batch, len, d_model) @ (d_model, d_model) -> (batch, len, d_model), then split:
    Q = split_heads(query @ W_q, num_heads)  # (batch, heads, q_len, d_head)
    K = split_heads(key @ W_k, num_heads)  # (batch, heads, k_len, d_head)
    V = split_heads(value @ W_v, num_heads)  # (batch, heads, k_len, d_head)
    heads_out, weights = _attend(Q, K, V, mask)  # (batch, heads, q_len, d_head)
    concat = merge_heads(heads_out)  # (batch, q_len, d_model)
    # (batch, q_len, d_model) @ (d_model, d_model) -> (batch, q_len, d_model)
    return concat @ W_o, weights
