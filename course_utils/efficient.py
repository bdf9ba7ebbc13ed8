"""What attention costs, and how to pay less: naive vs online-softmax vs tiled attention in NumPy.

Introduced in ``notebooks/06_what_attention_costs.ipynb``. Needs only NumPy (and the standard
library's ``tracemalloc`` for memory), like :mod:`course_utils.numpy_attention`.

- :func:`naive_attention` materializes the ``(q_len, k_len)`` attention scores and weights.
- :func:`online_softmax` computes a softmax in one streaming pass over blocks of the row, keeping
  only a running maximum ``m`` and a running sum ``l`` (Milakov & Gimelshein, 2018).
- :func:`tiled_attention` is a FlashAttention-style forward pass in the loop order of
  FlashAttention-2 (Dao, 2023): query blocks outside, key blocks inside, ``m``, ``l`` and an
  unnormalized output accumulator per query, divided by ``l`` once at the end. (FlashAttention-1,
  Dao et al. 2022, Algorithm 1, loops over key/value blocks outside and query blocks inside, and
  reads and writes ``O``, ``l``, ``m`` in slow memory on every inner step.) It never holds more than
  one ``(q_block, k_block)`` tile of scores. Same result as the naive version (to ~1e-12 in
  float64), memory ``O(q_len * d_value + q_block * k_block)`` instead of ``O(q_len * k_len)``.
- :func:`hbm_bytes_naive`, :func:`hbm_bytes_tiled` and :func:`tile_rows` are the IO model of the
  FlashAttention paper: bytes moved between slow memory (a GPU's HBM) and fast memory (its
  on-chip SRAM, ``sram_bytes``): ``Θ(n·d + n²)`` for the standard pass, ``Θ(n²·d²/M)`` for the tiled one.
- :func:`kv_cache_step`, :func:`decode_without_cache` and :func:`decode_flops`: one decoding step
  of causal self-attention that reuses the keys and values of earlier tokens, the same without
  the cache, and their FLOPs per token.
- :func:`measure_peak_memory` reports the peak bytes NumPy allocated while a call ran.
- :func:`attention_flops` and :func:`crossover_length` count the multiply-adds of a multi-head
  self-attention layer: projections ``O(seq_len * d_model**2)``, core ``O(seq_len**2 * d_model)``.

Vocabulary: ``q_len``, ``k_len``, ``d_head``, ``d_value``; a *mask* is boolean and True means
"may attend"; a query with no allowed key gets a zero output (never NaN), as in
:func:`course_utils.numpy_attention.scaled_dot_product_attention`.
"""

from __future__ import annotations

import math
import re
import tracemalloc

import numpy as np

from course_utils import _validation as validate
from course_utils._validation import check_heads, check_qkv

__all__ = [
    "naive_attention",
    "online_softmax",
    "online_update",
    "online_softmax_stats",
    "flash_step",
    "tiled_attention",
    "measure_peak_memory",
    "attention_flops",
    "crossover_length",
    "mha_param_count",
    "tile_rows",
    "hbm_bytes_naive",
    "hbm_bytes_tiled",
    "kv_cache_step",
    "decode_with_cache",
    "decode_without_cache",
    "decode_flops",
    "count_matmul_flops",
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


def online_update(m, l, block):
    """One step of the online softmax: fold ``block`` into the running maximum ``m`` and running sum ``l``.

    ::

        m_new = max(m, max(block))
        l_new = l * exp(m - m_new) + sum(exp(block - m_new))

    ``exp(m - m_new)`` rescales the sum collected so far (taken relative to ``m``) to the new maximum. While
    nothing finite has been seen (``m_new = -inf``: every entry so far masked), the shift is 0 and the result is
    ``(-inf, 0.0)``, never NaN.

    Parameters
    ----------
    m : float (``-inf`` before the first block), or an array (..., 1)
    l : float (``0.0`` before the first block), or an array (..., 1)
    block : 1-D array of the next entries (with float ``m``, ``l``), or an array (..., block_size)

    Returns
    -------
    (m_new, l_new): two floats for float ``m``, ``l`` and a 1-D block; else two arrays (..., 1).

    Introduced in notebooks/06_what_attention_costs.ipynb.
    """
    (block,) = validate.numpy_floats(block=block)
    scalar = np.ndim(m) == 0 and np.ndim(l) == 0
    if scalar and block.ndim != 1:
        raise ValueError(f"block must be 1-D when m and l are numbers but has shape {block.shape}")
    if not scalar and (np.shape(m) != np.shape(l) or np.shape(m)[-1:] != (1,) or np.shape(m)[:-1] != block.shape[:-1]):
        raise ValueError(
            f"m and l must be (..., 1) arrays matching block (..., block_size) but are {np.shape(m)}, {np.shape(l)} "
            f"and block {block.shape}"
        )
    m_arr, l_arr = (np.asarray(m, dtype=block.dtype), np.asarray(l, dtype=block.dtype))
    if scalar:
        m_arr, l_arr = m_arr[None], l_arr[None]  # () -> (1,), the shape block.max(keepdims=True) has
    top = block.max(axis=-1, keepdims=True) if block.shape[-1] else np.full_like(m_arr, -np.inf)
    m_new = np.maximum(m_arr, top)
    shift = np.where(np.isfinite(m_new), m_new, 0.0)  # all -inf so far: exp(-inf - 0) = 0
    l_new = l_arr * np.exp(m_arr - shift) + np.exp(block - shift).sum(axis=-1, keepdims=True)
    if scalar:
        return float(m_new[0]), float(l_new[0])
    return m_new, l_new


def online_softmax_stats(x, block_size: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """One streaming pass over the last axis of ``x``: the row maximum ``m`` and ``l = sum(exp(x - m))``.

    For each block of ``block_size`` entries::

        m_new = max(m, max(block))
        l     = l * exp(m - m_new) + sum(exp(block - m_new))
        m     = m_new

    The factor ``exp(m - m_new)`` rescales the sum collected so far to the new maximum, so the
    full row never needs to be in memory at once. Each block is one call of :func:`online_update`.

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
        m, l = online_update(m, l, x[..., start : start + block_size])  # block: (..., block_size)
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


def flash_step(m, l, acc, scores, v_tile):
    """One tile of a FlashAttention-style pass, for one block of queries::

        m_new   = max(m, rowmax(scores))
        p       = exp(scores - m_new)
        rescale = exp(m - m_new)                 # what was summed so far was taken relative to m
        l_new   = l * rescale + rowsum(p)
        acc_new = acc * rescale + p @ v_tile     # not divided by l: the caller divides once, at the end

    Masked entries (``-inf`` scores) get weight 0; a row with no finite score yet keeps ``m = -inf``, ``l = 0``,
    ``acc = 0`` (the shift is 0 there, never NaN).

    Parameters
    ----------
    m, l : (..., q_block, 1) running maximum and running sum (``-inf`` and 0 before the first tile)
    acc : (..., q_block, d_value) running sum of ``exp(score - m) * value``
    scores : (..., q_block, k_block) this tile of ``Q K^T / sqrt(d_head)``
    v_tile : (..., k_block, d_value) the values of this tile's keys

    Returns
    -------
    (m, l, acc), the new running state, shaped as given.

    Introduced in notebooks/06_what_attention_costs.ipynb.
    """
    m, l, acc, scores, v_tile = validate.numpy_floats(m=m, l=l, acc=acc, scores=scores, v_tile=v_tile)
    if scores.ndim < 2 or v_tile.ndim < 2 or acc.ndim < 2:
        raise ValueError(
            f"scores must be (..., q_block, k_block), v_tile (..., k_block, d_value) and acc (..., q_block, d_value) "
            f"but have shapes {scores.shape}, {v_tile.shape}, {acc.shape}"
        )
    q_block, k_block = scores.shape[-2:]
    if v_tile.shape[-2] != k_block or acc.shape[-2:] != (q_block, v_tile.shape[-1]):
        raise ValueError(
            f"scores {scores.shape}, v_tile {v_tile.shape} and acc {acc.shape} must agree on k_block ({k_block}), "
            f"q_block ({q_block}) and d_value"
        )
    if m.shape != l.shape or m.shape[-2:] != (q_block, 1):
        raise ValueError(f"m and l must be (..., q_block={q_block}, 1) but are {m.shape} and {l.shape}")
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))  # (..., q_block, 1)
    shift = np.where(np.isfinite(m_new), m_new, 0.0)  # rows with no allowed key yet
    p = np.exp(scores - shift)  # (..., q_block, k_block); masked entries are exp(-inf) = 0
    rescale = np.exp(m - shift)  # (..., q_block, 1); 0 on the first tile (m = -inf)
    l = l * rescale + p.sum(axis=-1, keepdims=True)
    # (..., q_block, k_block) @ (..., k_block, d_value) -> (..., q_block, d_value)
    acc = acc * rescale + p @ v_tile
    return m_new, l, acc


def tiled_attention(q, k, v, mask=None, causal: bool = False, q_block: int = 64, k_block: int = 64) -> np.ndarray:
    """FlashAttention-style forward pass: tiles of queries and keys, never the full score matrix.

    The loop order is FlashAttention-2's (Dao 2023): query blocks outside, key blocks inside, one
    division by ``l`` at the end. For each block of queries it keeps, per query, the running maximum ``m``, the running sum
    ``l`` and an output accumulator ``acc`` ``(q_block, d_value)``; for each block of keys (:func:`flash_step`)::

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
            m, l, acc = flash_step(m, l, acc, s, v[..., k_start:k_stop, :])  # one tile: rescale, then add
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


def tile_rows(d_head: int, sram_bytes: int, bytes_per_value: int = 4) -> int:
    """Rows per square tile that fit in fast memory: the largest ``B`` with ``4·B·d + B² <= M``.

    ``M = sram_bytes // bytes_per_value`` values must hold a query, a key, a value and an output tile
    (``B x d_head`` values each) and the ``B x B`` tile of scores between them. FlashAttention (Dao et
    al. 2022, Algorithm 1) makes the same room by another route: key blocks of ``ceil(M / 4d)`` rows and
    query blocks of ``min(ceil(M / 4d), d)``. For ``M`` up to ``16·d²`` values, ``B`` lies between
    ``M / 6.5d`` and ``M / 4d``.

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> tile_rows(d_head=64, sram_bytes=100_000, bytes_per_value=2)  # 4·129·64 + 129² = 49,665 <= 50,000
    129
    """
    d_head = validate.positive_int("d_head", d_head)
    sram_bytes = validate.positive_int("sram_bytes", sram_bytes)
    bytes_per_value = validate.positive_int("bytes_per_value", bytes_per_value)
    values = sram_bytes // bytes_per_value
    rows = math.isqrt(4 * d_head * d_head + values) - 2 * d_head  # B² + 4dB - M <= 0, solved for the largest B
    if rows < 1:
        raise ValueError(
            f"sram_bytes must hold four tiles of one row of d_head = {d_head} values and their one score "
            f"({(4 * d_head + 1) * bytes_per_value} bytes) but is {sram_bytes}"
        )
    return rows


def hbm_bytes_naive(seq_len: int, d_head: int, bytes_per_value: int = 4) -> int:
    """Bytes the standard attention pass moves between slow memory (HBM) and the chip, one head.

    The FlashAttention paper's Algorithm 0: read ``Q, K`` (``2·n·d``), write the scores ``S``
    (``n²``), read ``S`` and write ``P = softmax(S)`` (``2·n²``), read ``P`` and ``V``
    (``n² + n·d``), write ``O`` (``n·d``): ``(4·n·d + 4·n²)`` values, ``Θ(n·d + n²)``.

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> hbm_bytes_naive(seq_len=2, d_head=3, bytes_per_value=1)
    40
    """
    n = validate.positive_int("seq_len", seq_len)
    d = validate.positive_int("d_head", d_head)
    bytes_per_value = validate.positive_int("bytes_per_value", bytes_per_value)
    return bytes_per_value * (4 * n * d + 4 * n * n)


def hbm_bytes_tiled(seq_len: int, d_head: int, sram_bytes: int, bytes_per_value: int = 4) -> int:
    """Bytes a tiled pass (the loop order of :func:`tiled_attention`) moves between HBM and SRAM, one head.

    Tiles of ``B = tile_rows(d_head, sram_bytes, bytes_per_value)`` rows. Each of the
    ``ceil(n / B)`` query tiles is read once and its output written once (``2·n·d`` in all); for
    each query tile every key and value tile is read (``2·n·d`` per query tile). The scores never
    leave the chip (their ``B x B`` tile is counted in ``B``). Total ``2·n·d·(1 + ceil(n / B))`` values,
    which is ``Θ(n²·d²/M)`` for an SRAM of ``M <= 16·d²`` values (``B`` within a factor 1.7 of
    ``M / 4d``), the paper's Theorem 2. The per-row statistics a backward pass keeps (``n`` values) are
    left out.

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> hbm_bytes_tiled(seq_len=8, d_head=2, sram_bytes=32, bytes_per_value=1)  # tiles of 2 rows
    160
    """
    n = validate.positive_int("seq_len", seq_len)
    d = validate.positive_int("d_head", d_head)
    rows = tile_rows(d, sram_bytes, bytes_per_value)
    return bytes_per_value * 2 * n * d * (1 + math.ceil(n / rows))


def _check_caches(k_cache, v_cache, w_k, w_v):
    given = (k_cache, v_cache)
    checked = validate.numpy_floats(k_cache=k_cache, v_cache=v_cache)
    k_cache, v_cache = (
        g if isinstance(g, np.ndarray) and g.dtype == c.dtype else c for g, c in zip(given, checked, strict=True)
    )
    for name, cache, w, width in (("k_cache", k_cache, w_k, "d_head"), ("v_cache", v_cache, w_v, "d_value")):
        if cache.ndim != 2 or cache.shape[1] != w.shape[1]:
            raise ValueError(f"{name} must be (t, {width}={w.shape[1]}) but has shape {cache.shape}")
    if len(k_cache) != len(v_cache):
        raise ValueError(
            f"k_cache and v_cache must hold the same number of tokens but hold {len(k_cache)} and {len(v_cache)}"
        )
    return k_cache, v_cache


def _check_decode(x, w_q, w_k, w_v, one_token=False):
    given = (x, w_q, w_k, w_v)
    checked = validate.numpy_floats(x=x, w_q=w_q, w_k=w_k, w_v=w_v)
    # arrays of the right dtype are kept as they are (so count_matmul_flops can follow them)
    x, w_q, w_k, w_v = (
        g if isinstance(g, np.ndarray) and g.dtype == c.dtype else c for g, c in zip(given, checked, strict=True)
    )
    if one_token:
        if x.ndim != 1:
            raise ValueError(f"x_t must be one token (d_model,) but has shape {x.shape}")
        x = x[None, :]  # (1, d_model)
    elif x.ndim != 2:
        raise ValueError(f"x must be (seq_len, d_model) but has shape {x.shape}")
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        if w.ndim != 2 or w.shape[0] != x.shape[1]:
            raise ValueError(f"{name} must be (d_model={x.shape[1]}, width) but has shape {w.shape}")
    if w_q.shape[1] != w_k.shape[1]:
        raise ValueError(f"w_q and w_k must have the same width (d_head) but have shapes {w_q.shape} and {w_k.shape}")
    return x, w_q, w_k, w_v


def _attend_one(q, k, v):
    """One query ``(d_head,)`` against ``(t, d_head)`` keys and ``(t, d_value)`` values."""
    scores = k @ q / math.sqrt(q.shape[-1])  # (t, d_head) @ (d_head,) -> (t,)
    weights = np.exp(scores - scores.max())
    return (weights / weights.sum()) @ v  # (t,) @ (t, d_value) -> (d_value,)


def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    """One decoding step of causal self-attention with a key/value cache.

    Projects only the new token ``x_t`` ``(d_model,)``: its query, key and value. Appends the key and
    value to the caches ``(t, d_head)`` and ``(t, d_value)`` (empty, ``t = 0``, before the first
    token), and attends from the new query over all ``t + 1`` cached keys. Earlier tokens' keys and
    values are never recomputed: they do not change, because in causal attention a token never
    sees what comes after it.

    Returns
    -------
    (output, k_cache, v_cache) : ``(d_value,)``, ``(t + 1, d_head)``, ``(t + 1, d_value)``.

    Introduced in notebooks/06_what_attention_costs.ipynb.
    """
    x, w_q, w_k, w_v = _check_decode(x_t, w_q, w_k, w_v, one_token=True)
    k_cache, v_cache = _check_caches(k_cache, v_cache, w_k, w_v)
    x_t = x[0]
    q = x_t @ w_q  # (d_model,) @ (d_model, d_head) -> (d_head,)
    k_cache = np.concatenate([k_cache, (x_t @ w_k)[None, :]])  # (t, d_head) -> (t + 1, d_head)
    v_cache = np.concatenate([v_cache, (x_t @ w_v)[None, :]])  # (t, d_value) -> (t + 1, d_value)
    return _attend_one(q, k_cache, v_cache), k_cache, v_cache


def decode_with_cache(x, w_q, w_k, w_v, step=None) -> np.ndarray:
    """Causal self-attention over ``x`` ``(seq_len, d_model)``, one token at a time, with a cache.

    ``step`` is a function with the signature of :func:`kv_cache_step` (the default). Returns the
    ``(seq_len, d_value)`` outputs, equal to ``naive_attention(x @ w_q, x @ w_k, x @ w_v, causal=True)``.

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x, w = rng.normal(size=(5, 4)), rng.normal(size=(4, 4))
    >>> full = naive_attention(x @ w, x @ w, x @ w, causal=True)
    >>> bool(np.allclose(decode_with_cache(x, w, w, w), full))
    True
    """
    x, w_q, w_k, w_v = _check_decode(x, w_q, w_k, w_v)
    if step is None:
        step = kv_cache_step
    validate.is_callable("step", step)
    k_cache = np.zeros((0, w_k.shape[1]), dtype=x.dtype)  # (t = 0, d_head)
    v_cache = np.zeros((0, w_v.shape[1]), dtype=x.dtype)  # (t = 0, d_value)
    outputs = []
    for x_t in x:
        out, k_cache, v_cache = step(x_t, k_cache, v_cache, w_q, w_k, w_v)
        outputs.append(out)
    return np.stack(outputs) if outputs else np.zeros((0, w_v.shape[1]), dtype=x.dtype)


def decode_without_cache(x, w_q, w_k, w_v) -> np.ndarray:
    """The same outputs as :func:`decode_with_cache`, recomputing every key and value at every step.

    At step ``t`` it projects the whole prefix ``x[: t + 1]`` to keys and values again: what a
    decoder does when it re-runs the model on the growing prefix.

    Introduced in notebooks/06_what_attention_costs.ipynb.
    """
    x, w_q, w_k, w_v = _check_decode(x, w_q, w_k, w_v)
    outputs = []
    for t in range(len(x)):
        prefix = x[: t + 1]  # (t + 1, d_model)
        # (t + 1, d_model) @ (d_model, d_head) -> (t + 1, d_head), every step again
        outputs.append(_attend_one(x[t] @ w_q, prefix @ w_k, prefix @ w_v))
    return np.stack(outputs) if outputs else np.zeros((0, w_v.shape[1]), dtype=x.dtype)


def decode_flops(prefix_len: int, d_model: int, d_head: int, cached: bool) -> int:
    """Matrix-product FLOPs of one decoding step (a multiply-add = 2), prefix of ``prefix_len`` tokens.

    The prefix includes the new token; ``d_value = d_head``.

    - with the cache: the new token's query, key and value ``3 · 2·d_model·d_head``, plus the core
      (scores and weighted sum over ``prefix_len`` keys) ``2 · 2·prefix_len·d_head``;
    - without: the new query ``2·d_model·d_head``, keys and values of the whole prefix
      ``2 · 2·prefix_len·d_model·d_head``, plus the same core.

    Without the cache the step cost grows like ``prefix_len · d_model · d_head``; with it, only the
    core grows (``prefix_len · d_head``).

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> decode_flops(prefix_len=1, d_model=4, d_head=2, cached=True) == decode_flops(1, 4, 2, cached=False)
    True
    """
    length = validate.positive_int("prefix_len", prefix_len)
    d_model = validate.positive_int("d_model", d_model)
    d_head = validate.positive_int("d_head", d_head)
    cached = validate.boolean("cached", cached)
    core = 4 * length * d_head
    if cached:
        return 6 * d_model * d_head + core
    return 2 * d_model * d_head + 4 * length * d_model * d_head + core


def _plain(value):
    """``value`` with every counting view replaced by its plain array (through lists and tuples)."""
    if isinstance(value, _Counting):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


def _einsum_flops(args) -> int:
    """Naive FLOPs of ``np.einsum(subscripts, *operands)`` with two or more operands, as NumPy counts them.

    Over the full index space (every distinct index, broadcast ``...`` axes included): ``operands - 1``
    multiplications per point, plus one addition when an index is summed away. One operand (a sum, a trace,
    a transpose) is not a product: 0.
    """
    if not args or not isinstance(args[0], str):  # the (operand, sublist, ...) form: NumPy's own estimate
        text = np.einsum_path(*args, optimize=False)[1]
        return int(float(re.search(r"Naive FLOP count:\s*([0-9.e+]+)", text).group(1)))
    subscripts, operands = args[0].replace(" ", ""), [np.asarray(a) for a in args[1:]]
    if len(operands) < 2:
        return 0
    inputs, _, output = subscripts.partition("->")
    terms = inputs.split(",")
    sizes: dict = {}
    ellipsis_shape: tuple = ()
    for term, operand in zip(terms, operands, strict=False):
        letters = term.replace("...", "")
        broadcast = operand.ndim - len(letters)
        if "..." in term:
            head = term.index("...")
            ellipsis_shape = np.broadcast_shapes(ellipsis_shape, operand.shape[head : head + broadcast])
            dims = operand.shape[:head] + operand.shape[head + broadcast :]
        else:
            dims = operand.shape
        for letter, size in zip(letters, dims, strict=False):
            sizes[letter] = max(sizes.get(letter, 1), size)
    if "->" not in subscripts:  # implicit output: the indices that appear once
        output = "".join(sorted(c for c in sizes if inputs.count(c) == 1))
    summed = any(c not in output for c in sizes)
    points = math.prod(sizes.values()) * math.prod(ellipsis_shape)
    return points * (max(1, len(operands) - 1) + (1 if summed else 0))


def _contraction_flops(func, args, kwargs, result) -> int:
    """FLOPs of one counted NumPy contraction: 2 x (output size) x (contracted size); einsum as NumPy counts it."""
    if func is np.einsum:
        return _einsum_flops(args)
    a, b = np.asarray(args[0]), np.asarray(args[1])
    if func is np.vdot:
        return 2 * a.size
    if a.ndim == 0 or b.ndim == 0:  # a number times an array: element-wise, not a product
        return 0
    out = np.size(result)
    if func is np.tensordot:
        axes = kwargs.get("axes", args[2] if len(args) > 2 else 2)
        if isinstance(axes, (int, np.integer)):
            contracted = math.prod(a.shape[a.ndim - int(axes) :]) if axes else 1
        else:
            axes_a = axes[0] if isinstance(axes[0], (list, tuple)) else [axes[0]]
            contracted = math.prod(a.shape[i] for i in axes_a)
        return 2 * out * contracted
    return 2 * out * a.shape[-1]  # np.dot, np.inner: over a's last axis


class _Counting(np.ndarray):
    """An ndarray view that adds the FLOPs of every matrix product it takes part in to ``flops[0]``."""

    flops: list = [0]
    _CONTRACTIONS = (np.dot, np.einsum, np.tensordot, np.inner, np.vdot)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [np.asarray(a) if isinstance(a, _Counting) else a for a in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(a) if isinstance(a, _Counting) else a for a in kwargs["out"])
        if ufunc is np.matmul and method == "__call__":
            a, b = (np.asarray(x) for x in plain[:2])
            rows = a.shape[-2] if a.ndim > 1 else 1
            cols = b.shape[-1] if b.ndim > 1 else 1
            batch = math.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
            _Counting.flops[0] += 2 * batch * rows * a.shape[-1] * cols  # a multiply-add = 2
        result = getattr(ufunc, method)(*plain, **kwargs)
        return result.view(_Counting) if isinstance(result, np.ndarray) and result.ndim else result

    def __array_function__(self, func, types, args, kwargs):
        if not any(func is f for f in _Counting._CONTRACTIONS):
            return super().__array_function__(func, types, args, kwargs)  # NumPy's own, on these views
        args, kwargs = _plain(args), {k: _plain(v) for k, v in kwargs.items()}
        result = func(*args, **kwargs)
        _Counting.flops[0] += _contraction_flops(func, args, kwargs, result)
        return result.view(_Counting) if isinstance(result, np.ndarray) and result.ndim else result

    def dot(self, b, out=None):  # x.dot(w) is np.dot(x, w): counted the same
        return np.dot(self, b, out=out)


def count_matmul_flops(fn, *args, **kwargs):
    """Call ``fn(*args, **kwargs)`` and count the FLOPs of the matrix products it runs on its arrays.

    Every NumPy array argument is passed as a view that follows its results through ``@`` /
    ``np.matmul`` (and other ufuncs and NumPy functions); each product ``(m, k) @ (k, n)`` adds ``2·m·k·n`` (a
    multiply-add = 2; batched products count every batch). ``np.dot`` (and ``x.dot``), ``np.inner``,
    ``np.tensordot`` and ``np.vdot`` count ``2 x (output size) x (contracted size)``; ``np.einsum`` with two or
    more operands counts as NumPy's naive estimate (``(operands - 1)`` multiplications per point of the index
    space, plus one addition when an index is summed away: ``2·m·k·n`` for ``"mk,kn->mn"``). Arrays created
    inside ``fn`` from scratch (``np.zeros``), and element-wise operations, add nothing. Returns
    ``(result, flops)``.

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> a, b = np.ones((2, 3)), np.ones((3, 4))
    >>> count_matmul_flops(lambda a, b: a @ b, a, b)[1]
    48
    """
    validate.is_callable("fn", fn)
    wrap = [a.view(_Counting) if isinstance(a, np.ndarray) else a for a in args]
    before = _Counting.flops[0]
    result = fn(*wrap, **kwargs)
    flops = _Counting.flops[0] - before
    if isinstance(result, _Counting):
        result = np.asarray(result)
    elif isinstance(result, tuple):
        result = tuple(np.asarray(r) if isinstance(r, _Counting) else r for r in result)
    return result, int(flops)
