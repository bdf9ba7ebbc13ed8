"""What attention costs, and how to pay less: naive vs online-softmax vs tiled attention in NumPy.

Introduced in ``notebooks/06_what_attention_costs.ipynb``. Needs only NumPy (and the standard
library's ``tracemalloc`` for memory), like :mod:`course_utils.numpy_attention`.

- :func:`naive_attention` materializes the ``(q_len, k_len)`` attention scores and weights.
- :func:`online_softmax` computes a softmax in one streaming pass over blocks of the row, keeping
  only a running maximum ``m`` and a running sum ``l`` (Milakov & Gimelshein, 2018).
- :func:`tiled_attention` is a FlashAttention-style forward pass (Dao et al., 2022): it walks over
  query blocks and key blocks, keeps ``m``, ``l`` and a rescaled output accumulator per query, and
  never holds more than one ``(q_block, k_block)`` tile of scores. Same result as the naive
  version (to ~1e-12 in float64), memory ``O(q_len * d_value + q_block * k_block)`` instead of
  ``O(q_len * k_len)``.
- :func:`measure_peak_memory` reports the peak bytes NumPy allocated while a call ran.
- :func:`attention_flops` and :func:`crossover_length` count the multiply-adds of a multi-head
  self-attention layer: projections ``O(seq_len * d_model**2)``, core ``O(seq_len**2 * d_model)``.

Vocabulary: ``q_len``, ``k_len``, ``d_head``, ``d_value``; a *mask* is boolean and True means
"may attend"; a query with no allowed key gets a zero output (never NaN), as in
:func:`course_utils.numpy_attention.scaled_dot_product_attention`.
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np

from course_utils import _validation as validate
from course_utils._validation import check_heads, check_qkv

__all__ = [
    "naive_attention",
    "online_softmax",
    "online_softmax_stats",
    "tiled_attention",
    "measure_peak_memory",
    "attention_flops",
    "crossover_length",
    "mha_param_count",
]


def _causal_mask(q_len: int, k_len: int, q_start: int = 0, k_start: int = 0, q_stop=None, k_stop=None):
    """Causal block ``[q_start:q_stop, k_start:k_stop]`` of the bottom-right-aligned (q_len, k_len) mask."""
    q_stop = q_len if q_stop is None else q_stop
    k_stop = k_len if k_stop is None else k_stop
    rows = np.arange(q_start, q_stop)[:, None]  # (q_block, 1)
    cols = np.arange(k_start, k_stop)[None, :]  # (1, k_block)
    return cols <= rows + (k_len - q_len)  # (q_block, k_block), as course_utils.masks.make_causal_mask


def _prepare(q, k, v, mask, causal):
    """The checks of :func:`course_utils.numpy_attention.scaled_dot_product_attention`, plus ``causal``."""
    q, k, v = validate.numpy_floats(q=q, k=k, v=v)
    check_qkv(q.shape, k.shape, v.shape)
    causal = validate.boolean("causal", causal)
    q_len, k_len = q.shape[-2], k.shape[-2]
    if causal and k_len < q_len:
        raise ValueError(f"causal=True needs k_len >= q_len but k_len is {k_len} and q_len is {q_len}")
    scores_shape = (*validate.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q_len, k_len)
    mask = validate.numpy_bool_mask(mask, scores_shape, "(..., q_len, k_len)")
    return q, k, v, mask, causal


def naive_attention(q, k, v, mask=None, causal: bool = False) -> np.ndarray:
    """``softmax(q k^T / sqrt(d_head)) v`` computed the direct way: all scores at once.

    Parameters
    ----------
    q : array (..., q_len, d_head)
    k : array (..., k_len, d_head)
    v : array (..., k_len, d_value)
    mask : bool array broadcastable to (..., q_len, k_len), optional. True = may attend.
    causal : bool
        Also apply the causal mask of :func:`course_utils.masks.make_causal_mask` (query ``i`` sees
        keys ``0 .. i + k_len - q_len``).

    Returns
    -------
    output : array (..., q_len, d_value). Rows with no allowed key are zero.

    Memory: the ``(..., q_len, k_len)`` scores and weights are materialized (several copies).

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> x = np.eye(3)
    >>> naive_attention(x, x, x).shape
    (3, 3)
    """
    q, k, v, mask, causal = _prepare(q, k, v, mask, causal)
    q_len, k_len = q.shape[-2], k.shape[-2]
    # (..., q_len, d_head) @ (..., d_head, k_len) -> (..., q_len, k_len); math.sqrt keeps float32 float32
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    allowed = mask
    if causal:
        causal_mask = _causal_mask(q_len, k_len)  # (q_len, k_len)
        allowed = causal_mask if allowed is None else allowed & causal_mask
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    if k_len == 0:  # no key at all: every query gets a zero output, as a fully masked row does
        return np.zeros((*np.broadcast_shapes(scores.shape[:-2], v.shape[:-2]), q_len, v.shape[-1]), dtype=q.dtype)
    row_max = scores.max(axis=-1, keepdims=True)  # (..., q_len, 1)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)  # fully masked row: shift by 0
    exps = np.exp(scores - row_max)  # (..., q_len, k_len); exp(-inf) = 0
    total = exps.sum(axis=-1, keepdims=True)  # (..., q_len, 1)
    weights = np.divide(exps, total, out=np.zeros_like(exps), where=total > 0)
    # (..., q_len, k_len) @ (..., k_len, d_value) -> (..., q_len, d_value)
    return weights @ v


def online_softmax_stats(x, block_size: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """One streaming pass over the last axis of ``x``: the row maximum ``m`` and ``l = sum(exp(x - m))``.

    For each block of ``block_size`` entries::

        m_new = max(m, max(block))
        l     = l * exp(m - m_new) + sum(exp(block - m_new))
        m     = m_new

    The factor ``exp(m - m_new)`` rescales the sum collected so far to the new maximum, so the
    full row never needs to be in memory at once.

    Parameters
    ----------
    x : array (..., k_len), may contain ``-inf`` (masked entries)
    block_size : int

    Returns
    -------
    m : array (..., 1), the row maximum (``-inf`` for a row of all ``-inf`` or an empty row)
    l : array (..., 1), ``sum(exp(x - m))`` (0 for a row of all ``-inf`` or an empty row)

    Introduced in notebooks/06_what_attention_costs.ipynb.
    """
    (x,) = validate.numpy_floats(x=x)  # float32 stays float32
    if x.ndim < 1:
        raise ValueError(f"x must have a last axis to stream over but has shape {x.shape}")
    block_size = validate.positive_int("block_size", block_size)
    m = np.full((*x.shape[:-1], 1), -np.inf, dtype=x.dtype)
    l = np.zeros((*x.shape[:-1], 1), dtype=x.dtype)
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start : start + block_size]  # (..., block)
        m_new = np.maximum(m, block.max(axis=-1, keepdims=True))
        shift = np.where(np.isfinite(m_new), m_new, 0.0)  # all -inf so far: exp(-inf - 0) = 0
        l = l * np.exp(m - shift) + np.exp(block - shift).sum(axis=-1, keepdims=True)
        m = m_new
    return m, l


def online_softmax(x, block_size: int = 4) -> np.ndarray:
    """Softmax along the last axis from the streamed statistics of :func:`online_softmax_stats`.

    Equal to :func:`course_utils.numpy_attention.softmax` (to rounding); a row of all ``-inf``
    gives zeros.

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> np.round(online_softmax(np.array([1.0, 2.0, 3.0]), block_size=2), 4).tolist()
    [0.09, 0.2447, 0.6652]
    """
    (x,) = validate.numpy_floats(x=x)
    m, l = online_softmax_stats(x, block_size)
    shift = np.where(np.isfinite(m), m, 0.0)
    exps = np.exp(x - shift)
    return np.divide(exps, l, out=np.zeros_like(exps), where=l > 0)


def tiled_attention(q, k, v, mask=None, causal: bool = False, q_block: int = 64, k_block: int = 64) -> np.ndarray:
    """FlashAttention-style forward pass: tiles of queries and keys, never the full score matrix.

    For each block of queries it keeps, per query, the running maximum ``m``, the running sum
    ``l`` and an output accumulator ``acc`` ``(q_block, d_value)``; for each block of keys::

        s     = q_blk @ k_blk^T / sqrt(d_head)           # (..., q_block, k_block) tile of scores
        m_new = max(m, rowmax(s))
        p     = exp(s - m_new)
        scale = exp(m - m_new)                            # rescale what was summed so far
        l     = l * scale + rowsum(p)
        acc   = acc * scale + p @ v_blk
        m     = m_new

    and finally ``output = acc / l``. With ``causal=True`` key blocks entirely in the future of a
    query block are skipped (that is where the causal speed-up of FlashAttention comes from).

    Parameters
    ----------
    q : array (..., q_len, d_head)
    k : array (..., k_len, d_head)
    v : array (..., k_len, d_value)
    mask : bool array broadcastable to (..., q_len, k_len), optional. True = may attend.
        It is only read tile by tile (``np.broadcast_to`` does not copy), so a ``(batch, 1, 1, k_len)``
        padding mask costs nothing; a full ``(q_len, k_len)`` mask costs what you passed in.
    causal : bool
        Causal masking computed per tile, same convention as :func:`naive_attention`.
    q_block, k_block : int
        Tile sizes. Peak extra memory is about ``q_block * k_block`` scores per batch element.

    Returns
    -------
    output : array (..., q_len, d_value), equal to :func:`naive_attention` up to rounding.

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.normal(size=(3, 10, 4))
    >>> bool(np.allclose(tiled_attention(q, k, v, q_block=3, k_block=4), naive_attention(q, k, v)))
    True
    """
    q, k, v, mask, causal = _prepare(q, k, v, mask, causal)
    q_block = validate.positive_int("q_block", q_block)
    k_block = validate.positive_int("k_block", k_block)
    q_len, k_len, d_head = q.shape[-2], k.shape[-2], q.shape[-1]
    batch_shape = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    dtype = q.dtype  # one floating dtype, checked: float32 in, float32 out
    if mask is not None:
        mask = np.broadcast_to(mask, (*np.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q_len, k_len))  # a view
    scale_qk = 1.0 / math.sqrt(d_head)
    output = np.zeros((*batch_shape, q_len, v.shape[-1]), dtype=dtype)
    for q_start in range(0, q_len, q_block):
        q_stop = min(q_start + q_block, q_len)
        q_blk = q[..., q_start:q_stop, :] * scale_qk  # (..., q_block, d_head)
        rows = q_stop - q_start
        m = np.full((*batch_shape, rows, 1), -np.inf, dtype=dtype)  # running max
        l = np.zeros((*batch_shape, rows, 1), dtype=dtype)  # running sum of exp
        acc = np.zeros((*batch_shape, rows, v.shape[-1]), dtype=dtype)  # running sum of exp * value
        # causal: the last query of this block sees keys < q_stop + k_len - q_len
        k_end = min(k_len, q_stop + k_len - q_len) if causal else k_len
        for k_start in range(0, k_end, k_block):
            k_stop = min(k_start + k_block, k_len)
            # (..., q_block, d_head) @ (..., d_head, k_block) -> (..., q_block, k_block)
            s = q_blk @ np.swapaxes(k[..., k_start:k_stop, :], -1, -2)
            allowed = None
            if mask is not None:
                allowed = mask[..., q_start:q_stop, k_start:k_stop]  # (..., q_block, k_block)
            if causal:
                tile = _causal_mask(q_len, k_len, q_start, k_start, q_stop, k_stop)  # (q_block, k_block)
                allowed = tile if allowed is None else allowed & tile
            if allowed is not None:
                s = np.where(allowed, s, -np.inf)
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))  # (..., q_block, 1)
            shift = np.where(np.isfinite(m_new), m_new, 0.0)  # rows with no allowed key yet
            p = np.exp(s - shift)  # (..., q_block, k_block); masked entries are exp(-inf) = 0
            rescale = np.exp(m - shift)  # (..., q_block, 1); 0 on the first tile (m = -inf)
            l = l * rescale + p.sum(axis=-1, keepdims=True)
            # (..., q_block, k_block) @ (..., k_block, d_value) -> (..., q_block, d_value)
            acc = acc * rescale + p @ v[..., k_start:k_stop, :]
            m = m_new
        # queries with no allowed key kept l = 0 and acc = 0: their output stays zero
        np.divide(acc, l, out=acc, where=l > 0)
        output[..., q_start:q_stop, :] = acc
    return output


def measure_peak_memory(fn, *args, **kwargs):
    """Call ``fn(*args, **kwargs)`` and return ``(result, peak_bytes)`` of NumPy/Python allocations.

    Uses :mod:`tracemalloc`, which sees every NumPy array buffer and Python object allocated
    during the call (not memory allocated by PyTorch's C++ allocator, so use it for NumPy code).
    ``peak_bytes`` counts only what was allocated *during* the call above what existed before.

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> _, peak = measure_peak_memory(np.ones, 1_000_000)
    >>> peak >= 8_000_000
    True
    """
    validate.is_callable("fn", fn)
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        result = fn(*args, **kwargs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return result, max(peak - before, 0)


def attention_flops(seq_len: int, d_model: int, batch: int = 1) -> dict:
    """Floating-point operations of one multi-head self-attention layer (a multiply-add = 2 FLOPs).

    - ``projections``: query, key, value and output projections, four ``(seq_len, d_model) @
      (d_model, d_model)`` products: ``4 * 2 * seq_len * d_model**2`` per sequence.
    - ``core``: ``Q K^T`` and ``weights @ V`` over all heads: ``2 * 2 * seq_len**2 * d_model``
      per sequence. The number of heads cancels: ``heads * d_head = d_model``.
    - ``softmax`` (exp, sum, divide; about ``3 * heads * seq_len**2``) and biases are left out:
      they are lower order in FLOPs (but not in memory traffic).

    Returns
    -------
    dict with ``projections``, ``core`` and ``total`` (ints).

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> attention_flops(seq_len=1024, d_model=512)["core"] == attention_flops(1024, 512)["projections"]
    True
    """
    seq_len = validate.positive_int("seq_len", seq_len)
    d_model = validate.positive_int("d_model", d_model)
    batch = validate.positive_int("batch", batch)
    projections = batch * 8 * seq_len * d_model**2
    core = batch * 4 * seq_len**2 * d_model
    return {"projections": int(projections), "core": int(core), "total": int(projections + core)}


def crossover_length(d_model: int) -> int:
    """The ``seq_len`` where the attention core's FLOPs equal the projections' FLOPs: ``2 * d_model``.

    From ``8 * seq_len * d_model**2 == 4 * seq_len**2 * d_model``. Shorter sequences are dominated
    by the projections (linear in ``seq_len``), longer ones by the core (quadratic).

    Introduced in notebooks/06_what_attention_costs.ipynb.
    """
    return 2 * validate.positive_int("d_model", d_model)


def mha_param_count(d_model: int, num_heads: int = 1, bias: bool = True) -> int:
    """Parameters of a multi-head attention layer: ``4 * d_model**2`` weights (+ ``4 * d_model`` biases).

    Four ``(d_model, d_model)`` projections (query, key, value, output), whatever ``num_heads`` is:
    heads split the features, they do not add parameters.

    Introduced in notebooks/05_inside_the_heads.ipynb.

    Examples
    --------
    >>> mha_param_count(512, 8)
    1050624
    """
    check_heads(d_model, num_heads)
    d_model, bias = int(d_model), validate.boolean("bias", bias)
    return 4 * d_model * d_model + (4 * d_model if bias else 0)
