"""Shape and mask checks shared by the NumPy and PyTorch backends.

Pure Python on purpose: ``numpy_attention`` must need only NumPy, ``attention`` only torch, and
both must reject bad input with the same clear words. Every message names the argument and the
shapes, in the course vocabulary (batch, heads, q_len, k_len, d_head, d_value).
"""

from __future__ import annotations

__all__ = ["broadcast_shapes", "check_qkv", "check_mask_shape", "check_heads", "check_mha_mask_ndim"]


def _fmt(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def broadcast_shapes(a: tuple, b: tuple) -> tuple | None:
    """Broadcast two shapes the NumPy way; ``None`` if they do not broadcast."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y) if 1 in (x, y) else x)
    return tuple(reversed(out))


def check_qkv(q_shape: tuple, k_shape: tuple, v_shape: tuple) -> None:
    """Check query ``(..., q_len, d_head)``, key ``(..., k_len, d_head)``, value ``(..., k_len, d_value)``."""
    for name, shape in (("query", q_shape), ("key", k_shape), ("value", v_shape)):
        if len(shape) < 2:
            raise ValueError(f"{name} must have at least 2 dims (..., len, features) but has shape {_fmt(shape)}")
    if q_shape[-1] != k_shape[-1]:
        raise ValueError(
            f"key has d_head {k_shape[-1]} but query has d_head {q_shape[-1]} "
            f"(query {_fmt(q_shape)}, key {_fmt(k_shape)}): queries and keys are compared by a "
            "dot product, so they need the same feature size"
        )
    if k_shape[-2] != v_shape[-2]:
        raise ValueError(
            f"value has {v_shape[-2]} positions but key has k_len {k_shape[-2]} "
            f"(key {_fmt(k_shape)}, value {_fmt(v_shape)}): every key needs exactly one value"
        )
    for name, shape in (("key", k_shape), ("value", v_shape)):
        if broadcast_shapes(q_shape[:-2], shape[:-2]) is None:
            raise ValueError(
                f"{name} batch dims {_fmt(shape[:-2])} do not broadcast with query batch dims "
                f"{_fmt(q_shape[:-2])} (query {_fmt(q_shape)}, {name} {_fmt(shape)})"
            )


def check_mask_shape(mask_shape: tuple, scores_shape: tuple, layout: str) -> None:
    """Check that a mask broadcasts against the attention scores without growing them.

    ``layout`` names the scores' dims for the message, e.g. ``"(batch, heads, q_len, k_len)"``.
    """
    result = broadcast_shapes(tuple(mask_shape), tuple(scores_shape))
    if result is None or tuple(result) != tuple(scores_shape):
        raise ValueError(
            f"mask of shape {_fmt(mask_shape)} does not broadcast against attention scores of "
            f"shape {_fmt(scores_shape)} {layout}. A causal mask is (q_len, k_len); a key padding "
            "mask is (batch, 1, 1, k_len) for multi-head scores or (batch, 1, k_len) for one head"
        )


def check_heads(d_model: int, num_heads: int) -> int:
    """Return ``d_head = d_model // num_heads``; raise if it does not divide evenly."""
    if not isinstance(num_heads, int) or num_heads < 1:
        raise ValueError(f"num_heads must be a positive int but is {num_heads!r}")
    if d_model % num_heads != 0:
        raise ValueError(
            f"d_model {d_model} is not divisible by num_heads {num_heads}: each head gets "
            f"d_head = d_model // num_heads features, so choose num_heads among the divisors of {d_model}"
        )
    return d_model // num_heads


def check_mha_mask_ndim(mask_shape: tuple) -> None:
    """Multi-head masks are 2-D ``(q_len, k_len)`` or 4-D ``(batch, heads, q_len, k_len)`` (1s allowed).

    A 3-D ``(batch, q_len, k_len)`` mask would line ``batch`` up with the ``heads`` axis and
    silently mask the wrong rows whenever batch == heads, so it is refused.
    """
    if len(mask_shape) == 3:
        raise ValueError(
            f"mask of shape {_fmt(mask_shape)} is 3-D: against scores (batch, heads, q_len, k_len) "
            "its first axis would line up with heads, not batch. Add the heads axis: "
            "mask[:, None] -> (batch, 1, q_len, k_len)"
        )
    if len(mask_shape) not in (2, 4):
        raise ValueError(
            f"mask of shape {_fmt(mask_shape)} must be 2-D (q_len, k_len) or 4-D "
            "(batch, heads, q_len, k_len), with 1 for any axis it shares"
        )
