"""Boolean attention masks (True = may attend), in PyTorch.

Introduced in ``notebooks/02_masking.ipynb``.

Shapes, in the course vocabulary:

- causal: ``(q_len, k_len)``; broadcasts against any ``(..., q_len, k_len)`` scores.
- key padding: ``(batch, k_len)`` from :func:`make_padding_mask`. Give it to
  ``attention.MultiHeadAttention(...)(q, k, v, key_mask=padding)``, or line it up with
  multi-head scores ``(batch, heads, q_len, k_len)`` as ``(batch, 1, 1, k_len)`` via
  :func:`padding_to_attention_mask`. Never pass it as a 2-D ``mask``: a 2-D mask is read as
  ``(q_len, k_len)``, silently so when ``batch == q_len`` (lesson 02, Bug 1b).

``torch.nn.MultiheadAttention``'s ``key_padding_mask`` means the opposite (True = ignore), which is
why the course's module calls its argument ``key_mask``; :func:`to_key_padding_mask` converts.
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils import _validation as validate

__all__ = [
    "make_causal_mask",
    "make_padding_mask",
    "padding_to_attention_mask",
    "combine_masks",
    "to_key_padding_mask",
]


def make_causal_mask(q_len: int, k_len: int | None = None, device=None) -> torch.Tensor:
    """Lower-triangular mask: query ``i`` may attend to keys ``0..i`` (aligned at the end when k_len > q_len).

    Parameters
    ----------
    q_len : int
    k_len : int, optional (defaults to ``q_len``)

    Returns
    -------
    Tensor of bool, (q_len, k_len)

    When ``k_len > q_len`` (queries are the last ``q_len`` positions of a longer sequence, as when
    decoding with cached keys) query ``i`` sees keys ``0 .. i + k_len - q_len``: a bottom-right
    alignment, as ``torch.nn.attention.bias.causal_lower_right``. Note that
    ``torch.nn.functional.scaled_dot_product_attention(is_causal=True)`` aligns top-left instead.

    Introduced in notebooks/02_masking.ipynb.

    Examples
    --------
    >>> make_causal_mask(3).int().tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    q_len = validate.positive_int("q_len", q_len)
    k_len = q_len if k_len is None else validate.positive_int("k_len", k_len)
    if k_len < q_len:
        raise ValueError(f"k_len {k_len} is shorter than q_len {q_len}: some queries would see no key")
    ones = torch.ones(q_len, k_len, dtype=torch.bool, device=device)
    return torch.tril(ones, diagonal=k_len - q_len)


def make_padding_mask(lengths, max_len: int | None = None) -> torch.Tensor:
    """True for real tokens, False for padding: ``(batch,) lengths -> (batch, max_len)``.

    Parameters
    ----------
    lengths : integer Tensor, array or list (batch,), each in ``[0, max_len]``
    max_len : int >= 0, optional (defaults to the longest length)

    Introduced in notebooks/02_masking.ipynb.

    Examples
    --------
    >>> make_padding_mask(torch.tensor([2, 3]), 4).int().tolist()
    [[1, 1, 0, 0], [1, 1, 1, 0]]
    """
    if not isinstance(lengths, (torch.Tensor, np.ndarray, list, tuple)):
        raise TypeError(f"lengths must be a 1-D integer tensor, array or list but is {validate.describe(lengths)}")
    if isinstance(lengths, (list, tuple)) and len(lengths) == 0:
        lengths = torch.zeros(0, dtype=torch.long)  # an empty batch (torch would read [] as float)
    try:
        lengths = torch.as_tensor(lengths)
    except (TypeError, ValueError, RuntimeError) as err:
        raise TypeError(f"lengths must be a 1-D list of ints but could not be read as one ({err})") from None
    if lengths.dim() != 1:
        raise ValueError(f"lengths must be 1-D (batch,) but has shape {tuple(lengths.shape)}")
    if lengths.dtype.is_floating_point or lengths.dtype.is_complex or lengths.dtype == torch.bool:
        raise TypeError(f"lengths must be integers but has dtype {lengths.dtype}; convert them with lengths.long()")
    longest = int(lengths.max()) if lengths.numel() else 0
    max_len = longest if max_len is None else validate.nonnegative_int("max_len", max_len)
    if lengths.numel() and (int(lengths.min()) < 0 or longest > max_len):
        raise ValueError(f"lengths must lie in [0, max_len={max_len}] but are {lengths.tolist()}")
    # (1, max_len) < (batch, 1) -> (batch, max_len)
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


def _check_padding_mask(padding_mask) -> None:
    validate.torch_tensor("padding_mask", padding_mask, "torch.as_tensor(padding_mask, dtype=torch.bool)")
    if padding_mask.dtype != torch.bool:
        raise TypeError(
            f"padding_mask must be boolean (True = real token) but has dtype {padding_mask.dtype}; "
            "build it with make_padding_mask(lengths, k_len)"
        )
    if padding_mask.dim() != 2:
        raise ValueError(f"padding_mask must be (batch, k_len) but has shape {tuple(padding_mask.shape)}")


def padding_to_attention_mask(padding_mask: torch.Tensor) -> torch.Tensor:
    """``(batch, k_len) -> (batch, 1, 1, k_len)``: one row for every head and every query.

    Introduced in notebooks/02_masking.ipynb.
    """
    _check_padding_mask(padding_mask)
    # (batch, k_len) -> (batch, 1, 1, k_len)
    return padding_mask[:, None, None, :]


def combine_masks(*masks: torch.Tensor) -> torch.Tensor:
    """Logical AND of masks that broadcast together: a key is attended only if every mask allows it.

    Introduced in notebooks/02_masking.ipynb.

    Examples
    --------
    >>> causal = make_causal_mask(3)                                  # (q_len, k_len)
    >>> pad = padding_to_attention_mask(make_padding_mask(torch.tensor([2]), 3))  # (1, 1, 1, 3)
    >>> combine_masks(causal, pad)[0, 0].int().tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 0]]
    """
    if not masks:
        raise ValueError("combine_masks needs at least one mask")
    for i, mask in enumerate(masks):
        validate.torch_tensor(f"mask {i}", mask, "torch.as_tensor(mask, dtype=torch.bool)")
        if mask.dtype != torch.bool:
            raise TypeError(f"mask {i} must be boolean (True = may attend) but has dtype {mask.dtype}")
    shape = validate.broadcast_shapes(*(tuple(m.shape) for m in masks))
    if shape is None:
        shapes = ", ".join(str(tuple(m.shape)) for m in masks)
        raise ValueError(f"masks of shapes {shapes} do not broadcast together")
    result = masks[0]
    for mask in masks[1:]:
        try:
            result = result & mask
        except RuntimeError:
            raise ValueError(
                f"masks of shapes {tuple(result.shape)} and {tuple(mask.shape)} do not broadcast together"
            ) from None
    return result


def to_key_padding_mask(padding_mask: torch.Tensor) -> torch.Tensor:
    """Convert our ``(batch, k_len)`` padding mask (True = real token) to ``nn.MultiheadAttention``'s
    ``key_padding_mask`` (True = ignore this key).

    Introduced in notebooks/02_masking.ipynb.
    """
    _check_padding_mask(padding_mask)
    return ~padding_mask
