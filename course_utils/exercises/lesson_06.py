"""Lesson 06 · What attention costs: the exercises of ``notebooks/06_what_attention_costs.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
Three exercises are one step of a bigger computation, run by a driver: the online softmax over a row's
blocks, tiled attention over query and key blocks, and decoding with a KV cache (whose driver counts the
positions each projection handles, so a "cache" that projects the whole prefix again is refused).
"""

from __future__ import annotations

import math

import numpy as np

from course_utils.exercises._model import Case, Exercise
from course_utils.exercises.cases import decode_counting_projections

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "ONLINE_UPDATE",
    "WEIGHTS_BYTES",
    "FLASH_STEP",
    "KV_CACHE_STEP",
    "fold_blocks",
    "tiled_with",
]


# ---- 06.online_update(m, l, block) -> (m, l), driven over a row's blocks --------------------------------------
def fold_blocks(update, row, block_size):
    """Run an update function over the blocks of a row, from the empty state."""
    m, l = -math.inf, 0.0
    for start in range(0, len(row), block_size):
        m, l = update(m, l, row[start : start + block_size])
    return m, l


def online_cases():
    rng = np.random.default_rng(3)
    return [
        Case((np.array([1.0, 2.0, 3.0]), 2), "the lesson's example"),
        Case((np.array([3.0, 2.0, 1.0, 0.0]), 1), "the maximum comes first"),
        Case((rng.normal(size=10) * 400, 3), "scores in the hundreds: without the running max, exp overflows"),
        Case((rng.normal(size=7), 7), "one block: ordinary softmax statistics"),
    ]


def online_update(m, l, block):
    m_new = max(m, float(np.max(block)))
    # the old sum was taken relative to m: relative to m_new each term shrinks by exp(m - m_new)
    return m_new, l * math.exp(m - m_new) + float(np.exp(np.asarray(block) - m_new).sum())


def online_update_numpy(m, l, block):
    m_new = np.maximum(m, block.max())
    l_new = l * np.exp(m - m_new) + np.exp(block - m_new).sum()
    return float(m_new), float(l_new)


def online_update_loop(m, l, block):
    for x in block:  # one score at a time is the same recurrence
        m_new = max(m, float(x))
        l = l * math.exp(m - m_new) + math.exp(float(x) - m_new)
        m = m_new
    return m, l


def online_update_no_rescale(m, l, block):
    m_new = max(m, float(np.max(block)))
    return m_new, l + float(np.exp(np.asarray(block) - m_new).sum())


ONLINE_UPDATE = Exercise(
    id="06.online_update",
    section="06 · Online softmax: one pass, running max and running sum",
    make_cases=online_cases,
    reference=online_update,
    variants=(online_update_numpy, online_update_loop),
    buggy={"online_no_rescale": online_update_no_rescale},
    hints=(
        "The running sum l was taken relative to the running maximum m. When a block brings a larger maximum, what "
        "happens to each old term exp(x - m)?",
        "Relative to the new maximum m_new each old term is smaller by the same factor, exp(m - m_new): rescale l "
        "by it, then add the block's own terms exp(x - m_new).",
        "m_new = max(m, block.max()). On the first block m = -inf, and exp(-inf) = 0, so no special case is needed.",
    ),
    output_names=("m", "l"),
    driver=fold_blocks,
)


# ---- 06.weights_bytes(batch, heads, q_len, k_len, bytes_per_value) -> int -----------------------------------
def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
    return batch * heads * q_len * k_len * bytes_per_value  # one value per (batch, head, query, key)


def weights_bytes_prod(batch, heads, q_len, k_len, bytes_per_value):
    return math.prod((batch, heads, q_len, k_len)) * bytes_per_value


def weights_bytes_per_matrix(batch, heads, q_len, k_len, bytes_per_value):
    one_matrix = q_len * k_len * bytes_per_value  # one (q_len, k_len) weight matrix
    return one_matrix * heads * batch


def weights_bytes_without_heads(batch, heads, q_len, k_len, bytes_per_value):
    return batch * q_len * k_len * bytes_per_value


WEIGHTS_BYTES = Exercise(
    id="06.weights_bytes",
    section="06 · Peak memory: naive versus tiled",
    make_cases=lambda: [(2, 4, 5, 7, 4), (1, 8, 16, 12, 4), (3, 2, 9, 4, 8)],
    reference=weights_bytes,
    variants=(weights_bytes_prod, weights_bytes_per_matrix),
    buggy={"bytes_without_heads": weights_bytes_without_heads},
    hints=(
        "What shape does the weights tensor of one layer have, in the course's axis names?",
        "One value per (batch, head, query, key): count the values, then multiply by the bytes each takes.",
        "At batch 8, 8 heads and 4096 tokens in float32 that is 8 · 8 · 4096² · 4 bytes, over 4 GB for one layer.",
    ),
)


# ---- 06.flash_step(m, l, acc, scores, v_tile) -> (m, l, acc), driven over query and key tiles ---------------
def tiled_with(step, q, k, v, block):
    """Tiled attention built from a one-tile update ``step``: query blocks outside, key blocks inside."""
    out = np.zeros((q.shape[0], v.shape[1]))
    for qs in range(0, q.shape[0], block):
        q_blk = q[qs : qs + block]
        m = np.full((len(q_blk), 1), -np.inf)
        l = np.zeros((len(q_blk), 1))
        acc = np.zeros((len(q_blk), v.shape[1]))
        for ks in range(0, k.shape[0], block):
            # (q_block, d_head) @ (d_head, k_block) -> (q_block, k_block)
            scores = q_blk @ k[ks : ks + block].T / math.sqrt(q.shape[1])
            m, l, acc = step(m, l, acc, scores, v[ks : ks + block])
        out[qs : qs + block] = acc / l
    return out


def flash_cases():
    rng = np.random.default_rng(4)
    cases = [
        Case(tuple(rng.normal(size=shape) for shape in ((n_q, 4), (n_k, 4), (n_k, d_v))) + (block,))
        for n_q, n_k, d_v, block in ((6, 8, 3, 2), (5, 9, 3, 4), (7, 3, 2, 7))
    ]
    q_big = 300 * rng.normal(size=(5, 4))  # scores in the hundreds: exp overflows without the running max
    cases.append(Case((q_big, rng.normal(size=(6, 4)), rng.normal(size=(6, 3)), 2), "scores in the hundreds"))
    return cases


def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))  # (q_block, 1)
    p = np.exp(scores - m_new)  # (q_block, k_block)
    rescale = np.exp(m - m_new)  # earlier tiles were taken relative to m
    return m_new, l * rescale + p.sum(axis=-1, keepdims=True), acc * rescale + p @ v_tile


def flash_step_rows(m, l, acc, scores, v_tile):
    m, l, acc = m.copy(), l.copy(), acc.copy()
    for r in range(len(scores)):  # one query row at a time
        m_new = max(m[r, 0], scores[r].max())
        p = np.exp(scores[r] - m_new)
        scale = np.exp(m[r, 0] - m_new)
        l[r, 0] = l[r, 0] * scale + p.sum()
        acc[r] = acc[r] * scale + p @ v_tile
        m[r, 0] = m_new
    return m, l, acc


def flash_step_einsum(m, l, acc, scores, v_tile):
    m_new = np.max(np.concatenate([m, scores], axis=-1), axis=-1, keepdims=True)
    p = np.exp(scores - m_new)
    rescale = np.exp(m - m_new)
    return m_new, rescale * l + np.sum(p, axis=-1, keepdims=True), rescale * acc + np.einsum("qk,kv->qv", p, v_tile)


def flash_step_no_rescale(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
    p = np.exp(scores - m_new)
    return m_new, l + p.sum(axis=-1, keepdims=True), acc + p @ v_tile


def flash_step_normalised_per_tile(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
    p = np.exp(scores - m_new)
    rescale = np.exp(m - m_new)
    weights = p / p.sum(axis=-1, keepdims=True)  # each tile normalised on its own
    return m_new, l * rescale + p.sum(axis=-1, keepdims=True), acc * rescale + weights @ v_tile


FLASH_STEP = Exercise(
    id="06.flash_step",
    section="06 · Tiled attention, FlashAttention-style",
    make_cases=flash_cases,
    reference=flash_step,
    variants=(flash_step_rows, flash_step_einsum),
    buggy={"online_no_rescale": flash_step_no_rescale, "online_normalised_per_block": flash_step_normalised_per_tile},
    hints=(
        "The same three moves as the online softmax, with an accumulator riding along. Which of m, l and acc were "
        "taken relative to the old maximum?",
        "New maximum per query row; the tile's terms p = exp(scores - m_new); a rescale factor exp(m - m_new) for "
        "everything accumulated so far; then update l and acc. The driver divides acc by l at the end.",
        "Keep the row axis: scores.max(axis=-1, keepdims=True) is (q_block, 1). acc grows by p @ v_tile after being "
        "rescaled; do not normalise p inside the step.",
    ),
    driver=tiled_with,
    atol=1e-10,
)


# ---- 06.kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v) -> (output, k_cache, v_cache) --------------------
def kv_cases():
    rng = np.random.default_rng(6)
    return [
        Case(
            tuple(
                rng.normal(size=shape) for shape in ((n, d_model), (d_model, d_head), (d_model, d_head), (d_model, d_v))
            )
        )
        for n, d_model, d_head, d_v in ((1, 4, 2, 3), (5, 6, 4, 3), (7, 8, 4, 5))
    ]


def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    q = x_t @ w_q  # (d_head,): only the new token is projected
    k_cache = np.concatenate([k_cache, (x_t @ w_k)[None, :]])  # (t, d_head) -> (t + 1, d_head)
    v_cache = np.concatenate([v_cache, (x_t @ w_v)[None, :]])  # (t, d_value) -> (t + 1, d_value)
    scores = k_cache @ q / math.sqrt(q.shape[-1])  # (t + 1,)
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    return weights @ v_cache, k_cache, v_cache


def kv_step_vstack(x_t, k_cache, v_cache, w_q, w_k, w_v):
    k_cache = np.vstack([k_cache, np.dot(x_t, w_k)])
    v_cache = np.vstack([v_cache, np.dot(x_t, w_v)])
    q = np.dot(x_t, w_q)
    scores = np.einsum("td,d->t", k_cache, q) / np.sqrt(len(q))
    weights = np.exp(scores - np.max(scores))
    return (weights / weights.sum()) @ v_cache, k_cache, v_cache


def kv_step_append(x_t, k_cache, v_cache, w_q, w_k, w_v):
    new_k, new_v, q = x_t @ w_k, x_t @ w_v, x_t @ w_q
    k_cache = np.append(k_cache, new_k[None], axis=0)
    v_cache = np.append(v_cache, new_v[None], axis=0)
    scores = (k_cache * q).sum(axis=-1) / math.sqrt(len(q))
    e = np.exp(scores - scores.max())
    return (e[:, None] * v_cache).sum(axis=0) / e.sum(), k_cache, v_cache


def kv_cache_not_returned(x_t, k_cache, v_cache, w_q, w_k, w_v):
    out, _, _ = kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v)
    return out, k_cache, v_cache  # the old caches: every step sees only itself


KV_CACHE_STEP = Exercise(
    id="06.kv_cache_step",
    section="06 · Decoding one token at a time: the KV cache",
    make_cases=kv_cases,
    reference=kv_cache_step,
    variants=(kv_step_vstack, kv_step_append),
    buggy={"kv_cache_not_returned": kv_cache_not_returned},
    hints=(
        "At step t the earlier keys and values are already in the caches. What is new at this step, and what must "
        "the next step receive?",
        "Project only the new token (a query, a key, a value); append the new key and value to the caches; attend "
        "from the query over every cached key, the new one included.",
        "np.concatenate([k_cache, new_key[None, :]]) grows the cache by a row. The scores are k_cache @ q, scaled by "
        "sqrt(d_head); return (output, k_cache, v_cache) with the grown caches.",
    ),
    driver=decode_counting_projections,
    atol=1e-10,
)

EXERCISES = [ONLINE_UPDATE, WEIGHTS_BYTES, FLASH_STEP, KV_CACHE_STEP]
PREDICTIONS: list = []
