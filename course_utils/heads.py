"""Inside the heads: measure what each attention head does, and switch heads off.

Introduced in ``notebooks/05_inside_the_heads.ipynb``.

Measurements take attention weights shaped ``(heads, q_len, k_len)`` or
``(batch, heads, q_len, k_len)`` (NumPy arrays or torch tensors) and return NumPy arrays:

- :func:`attention_entropy` / :func:`head_entropy`: how spread out each row is, in nats, between
  0 (all weight on one key) and :func:`max_entropy` ``= ln(k_len)`` (uniform).
- :func:`head_similarity`: cosine similarity between the heads' weight patterns.
- :func:`head_role_scores`: how much weight each head puts on the previous token, the first
  token, the query itself, and keys that match the query's symbol.

:func:`switch_off_heads` zeroes heads' blocks of the concatenation that feeds the output projection, and
:func:`ablate_heads` does it inside a ``MultiHeadAttention`` for the length of a ``with`` block, to test what
each head is for. The toy task whose heads specialize is :mod:`course_utils.role_task`.
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch

from course_utils import _validation as validate
from course_utils.attention import MultiHeadAttention

__all__ = [
    "attention_entropy",
    "head_entropy",
    "max_entropy",
    "head_similarity",
    "head_role_scores",
    "ROLES",
    "switch_off_heads",
    "ablate_heads",
]

ROLES = ("previous", "first", "self", "matching")


def _to_numpy(x, name: str = "weights") -> np.ndarray:
    """Weights from a tensor, array or list as float64, refusing non-numbers and NaN."""
    if isinstance(x, torch.Tensor):
        if x.dtype.is_complex or x.dtype == torch.bool:
            raise TypeError(f"{name} must hold real numbers but has dtype {x.dtype}")
        x = x.detach().cpu().double().numpy()
    (w,) = validate.numpy_floats(**{name: x})
    w = w.astype(np.float64)
    if np.isnan(w).any():
        raise ValueError(
            f"{name} holds NaN: attention weights are finite and non-negative (a NaN row means a bug upstream)"
        )
    return w


def _as_weights(weights, name: str = "weights") -> np.ndarray:
    """Weights as a float array (batch, heads, q_len, k_len)."""
    w = _to_numpy(weights)
    if w.ndim == 3:
        w = w[None]  # (heads, q_len, k_len) -> (1, heads, q_len, k_len)
    if w.ndim != 4:
        raise ValueError(
            f"{name} must be (heads, q_len, k_len) or (batch, heads, q_len, k_len) but has shape {tuple(w.shape)}"
        )
    return w


def attention_entropy(weights) -> np.ndarray:
    """Entropy of each row of attention weights, ``-sum_j w_j ln w_j`` in nats (``0 ln 0 = 0``).

    Parameters
    ----------
    weights : array or Tensor (..., q_len, k_len), rows summing to 1

    Returns
    -------
    array (..., q_len): 0 for a one-hot row, ``ln(k_len)`` for a uniform row.

    Introduced in notebooks/05_inside_the_heads.ipynb.

    Examples
    --------
    >>> float(np.round(attention_entropy(np.full((1, 4), 0.25))[0], 4)) == round(float(np.log(4)), 4)
    True
    """
    w = _to_numpy(weights)
    if w.ndim < 1:
        raise ValueError(f"weights must have a k_len axis but has shape {tuple(w.shape)}")
    if np.any(w < 0):
        raise ValueError("weights must be non-negative (post-softmax attention weights, not scores)")
    logs = np.log(w, out=np.zeros_like(w), where=w > 0)
    return -(w * logs).sum(axis=-1)


def max_entropy(k_len: int) -> float:
    """``ln(k_len)``: the entropy of uniform attention over ``k_len`` keys, the largest possible.

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    return float(np.log(validate.positive_int("k_len", k_len)))


def head_entropy(weights) -> np.ndarray:
    """Mean row entropy of each head, averaged over batch and queries.

    Parameters
    ----------
    weights : array or Tensor (heads, q_len, k_len) or (batch, heads, q_len, k_len)

    Returns
    -------
    array (heads,), each between 0 and ``max_entropy(k_len)``.

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    w = _as_weights(weights)
    return attention_entropy(w).mean(axis=(0, 2))  # (batch, heads, q_len) -> (heads,)


def head_similarity(weights) -> np.ndarray:
    """Cosine similarity between heads' attention patterns, flattened over batch, queries and keys.

    1 means the same pattern (up to scale); since all weights are >= 0 it is never negative, and
    nearly uniform heads score close to 1 (they *are* alike). Heads that look at different keys
    score close to 0.

    Parameters
    ----------
    weights : array or Tensor (heads, q_len, k_len) or (batch, heads, q_len, k_len)

    Returns
    -------
    array (heads, heads), symmetric, ones on the diagonal.

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    w = _as_weights(weights)
    heads = w.shape[1]
    # (batch, heads, q_len, k_len) -> (heads, batch, q_len, k_len) -> (heads, batch * q_len * k_len)
    flat = np.moveaxis(w, 1, 0).reshape(heads, -1)
    norms = np.linalg.norm(flat, axis=1, keepdims=True)  # (heads, 1)
    unit = np.divide(flat, norms, out=np.zeros_like(flat), where=norms > 0)
    # (heads, n) @ (n, heads) -> (heads, heads)
    return unit @ unit.T


def head_role_scores(weights, match_ids=None) -> dict:
    """How much weight each head gives to four patterns, averaged over batch and queries.

    - ``previous``: weight on key ``i - 1`` (queries ``i >= 1``).
    - ``first``: weight on key 0 (queries ``i >= 1``, so it is not confused with ``self``).
    - ``self``: weight on key ``i``.
    - ``matching`` (only when ``match_ids`` is given): total weight on the *other* keys ``j != i``
      with ``match_ids[j] == match_ids[i]``, over queries that have at least one such key.

    Each score lies in [0, 1]; uniform attention over ``k_len`` keys scores about ``1 / k_len``.
    Self-attention only (``q_len == k_len``, position ``i`` of the query is position ``i`` of the keys).

    Parameters
    ----------
    weights : array or Tensor (heads, seq_len, seq_len) or (batch, heads, seq_len, seq_len)
    match_ids : int array or Tensor (seq_len,) or (batch, seq_len), optional
        What "matching" compares, e.g. the token ids (or, in the toy task, the shapes).

    Returns
    -------
    dict role -> array (heads,)

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    w = _as_weights(weights)
    batch, heads, q_len, k_len = w.shape
    if q_len != k_len or q_len < 2:
        raise ValueError(f"role scores need self-attention weights with q_len == k_len >= 2 but got {tuple(w.shape)}")
    i = np.arange(q_len)
    scores = {
        "previous": w[:, :, i[1:], i[1:] - 1].mean(axis=(0, 2)),  # (batch, heads, seq_len - 1) -> (heads,)
        "first": w[:, :, 1:, 0].mean(axis=(0, 2)),
        "self": w[:, :, i, i].mean(axis=(0, 2)),
    }
    if match_ids is not None:
        ids = np.asarray(match_ids.detach().cpu() if isinstance(match_ids, torch.Tensor) else match_ids)
        if not np.issubdtype(ids.dtype, np.integer):
            raise TypeError(f"match_ids must hold integer ids (e.g. the token ids) but has dtype {ids.dtype}")
        if ids.ndim == 1:
            ids = ids[None]
        if ids.ndim != 2 or ids.shape[1] != q_len or ids.shape[0] not in (1, batch):
            raise ValueError(
                f"match_ids must be (seq_len,) or (batch, seq_len) = ({batch}, {q_len}) but has shape {ids.shape}"
            )
        same = (ids[:, :, None] == ids[:, None, :]) & ~np.eye(q_len, dtype=bool)  # (batch, q_len, k_len)
        has_match = np.broadcast_to(same.any(axis=-1), (batch, q_len))  # (batch, q_len)
        on_match = (w * same[:, None]).sum(axis=-1)  # (batch, heads, q_len)
        if not has_match.any():
            raise ValueError("match_ids has no query with a matching key, so 'matching' is undefined")
        scores["matching"] = on_match.transpose(1, 0, 2)[:, has_match].mean(axis=1)  # (heads,)
    return scores


def _head_list(heads, num_heads: int) -> list[int]:
    """A head index or an iterable of them, each an int in ``range(num_heads)``."""
    if isinstance(heads, (int, np.integer)) and not isinstance(heads, (bool, np.bool_)):
        heads = [heads]
    elif isinstance(heads, torch.Tensor):
        heads = heads.tolist() if heads.dim() else [heads.item()]
    elif not hasattr(heads, "__iter__") or isinstance(heads, str):
        raise TypeError(f"heads must be a head index or a list of them but is {validate.describe(heads)}")
    heads = list(heads)
    for h in heads:
        if isinstance(h, (bool, np.bool_)) or not isinstance(h, (int, np.integer)) or not 0 <= h < num_heads:
            raise ValueError(f"head {h!r} is not in range(num_heads={num_heads})")
    return [int(h) for h in heads]


def switch_off_heads(concat, heads_off, num_heads: int):
    """Switch heads off in the concatenation of their outputs, on a copy.

    Parameters
    ----------
    concat : Tensor (batch, q_len, d_model) (any leading axes): the heads' outputs side by side, head h filling
        features ``h * d_head : (h + 1) * d_head`` with ``d_head = d_model // num_heads`` (what ``out_proj`` reads).
    heads_off : a head index or a list of them (may be empty).
    num_heads : int, dividing d_model.

    Returns
    -------
    Tensor like ``concat``: equal to it except that every listed head's features are 0; ``concat`` is unchanged.
    This is what :func:`ablate_heads` does to the input of ``out_proj``.

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    validate.torch_floats(concat=concat)
    num_heads = validate.positive_int("num_heads", num_heads)
    if concat.dim() < 1 or concat.shape[-1] % num_heads:
        raise ValueError(
            f"concat's last axis (d_model) must split into num_heads={num_heads} equal blocks but concat has shape "
            f"{tuple(concat.shape)}"
        )
    d_head = concat.shape[-1] // num_heads
    out = concat.clone()
    for h in _head_list(heads_off, num_heads):
        out[..., h * d_head : (h + 1) * d_head] = 0.0
    return out


@contextlib.contextmanager
def ablate_heads(attention: MultiHeadAttention, heads, switch_off=None):
    """Switch heads off inside the ``with`` block: their slice of the concatenation is set to 0.

    The output projection sees ``concat (batch, q_len, d_model)`` whose features ``h * d_head : (h + 1) * d_head``
    come from head ``h``; a forward pre-hook on ``out_proj`` replaces it by ``switch_off(concat, heads,
    num_heads)``. The hook is removed on exit.

    Parameters
    ----------
    attention : course_utils.attention.MultiHeadAttention
    heads : a head index or a list of them
    switch_off : a function with :func:`switch_off_heads`' signature (default :func:`switch_off_heads`); lesson 05
        passes the one the student wrote.

    Introduced in notebooks/05_inside_the_heads.ipynb.

    Examples
    --------
    >>> mha = MultiHeadAttention(8, 2)
    >>> with ablate_heads(mha, [0]):
    ...     out, _ = mha(torch.ones(1, 3, 8), torch.ones(1, 3, 8), torch.ones(1, 3, 8))
    """
    if not isinstance(attention, MultiHeadAttention):
        raise TypeError(f"attention must be a MultiHeadAttention but is {type(attention).__name__}")
    heads = _head_list(heads, attention.num_heads)
    if switch_off is None:
        switch_off = switch_off_heads
    validate.is_callable("switch_off", switch_off)
    num_heads = attention.num_heads

    def zero_heads(module, inputs):
        (concat,) = inputs
        return (switch_off(concat, heads, num_heads),)

    handle = attention.out_proj.register_forward_pre_hook(zero_heads)
    try:
        yield attention
    finally:
        handle.remove()
