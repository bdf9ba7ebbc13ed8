"""Lesson 06 · What attention costs: the exercises of ``notebooks/06_what_attention_costs.ipynb``.

Each exercise is one block, in the lesson's order: cases, reference, correct variants, hand-written buggy
versions, ``Exercise``; then the lesson's ``Prediction``s. Three exercises are one step of a bigger computation,
run by a driver: the online softmax over a row's blocks, one FlashAttention tile over query and key blocks, and
decoding with a KV cache (whose driver counts the positions each projection handles, so a "cache" that projects
the whole prefix again is refused). The tiled pass itself (06.tiled_attention) calls the ``flash_step`` that
``checks.check`` handed back, the student's or the course's.
"""

from __future__ import annotations

import math

import numpy as np

from course_utils.exercises._model import Case, Exercise, KnownWrong, Prediction
from course_utils.exercises.cases import decode_counting_projections

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "ONLINE_UPDATE",
    "WEIGHTS_BYTES",
    "FLASH_STEP",
    "TILED_ATTENTION",
    "IO_BYTES",
    "KV_CACHE_STEP",
    "DECODE_FLOPS",
    "CAUSAL_TILED_ATTENTION",
    "KV_CACHE_BYTES",
    "fold_blocks",
    "tiled_with",
    "flash_step_divides_by_running_sum",
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


def online_update_rescale_inverted(m, l, block):
    m_new = max(m, float(np.max(block)))
    with np.errstate(over="ignore", invalid="ignore"):  # exp(m_new - m) is inf on the first block: 0 * inf
        return m_new, float(l * np.exp(m_new - m) + np.exp(np.asarray(block) - m_new).sum())


ONLINE_UPDATE = Exercise(
    id="06.online_update",
    fresh=lambda length, block: [(np.random.default_rng(1).normal(size=length) * 300, block)],
    section="06 · Online softmax: one pass, running max and running sum",
    make_cases=online_cases,
    reference=online_update,
    variants=(online_update_numpy, online_update_loop),
    buggy={"online_no_rescale": online_update_no_rescale, "online_rescale_inverted": online_update_rescale_inverted},
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
    fresh=lambda batch, heads, q_len, k_len: [(batch, heads, q_len, k_len, 2)],
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


def flash_step_divides_by_running_sum(m, l, acc, scores, v_tile):
    """A known mistake (bug zoo): the accumulator divided by the running sum at every tile."""
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
    p = np.exp(scores - m_new)
    rescale = np.exp(m - m_new)
    l_new = l * rescale + p.sum(axis=-1, keepdims=True)
    return m_new, l_new, (acc * rescale + p @ v_tile) / l_new  # normalised now, and again by the driver


def flash_step_normalised_per_tile(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
    p = np.exp(scores - m_new)
    rescale = np.exp(m - m_new)
    weights = p / p.sum(axis=-1, keepdims=True)  # each tile normalised on its own
    return m_new, l * rescale + p.sum(axis=-1, keepdims=True), acc * rescale + weights @ v_tile


FLASH_STEP = Exercise(
    id="06.flash_step",
    fresh=lambda q_len, k_len, d_head, d_value, block: [
        (
            np.random.default_rng(1).normal(size=(q_len, d_head)),
            np.random.default_rng(2).normal(size=(k_len, d_head)),
            np.random.default_rng(3).normal(size=(k_len, d_value)),
            block,
        )
    ],
    section="06 · Tiled attention, FlashAttention-style",
    make_cases=flash_cases,
    reference=flash_step,
    variants=(flash_step_rows, flash_step_einsum),
    buggy={
        "online_no_rescale": flash_step_no_rescale,
        "online_normalised_per_block": flash_step_normalised_per_tile,
        "flash_divides_by_running_sum": flash_step_divides_by_running_sum,
    },
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
    noun="FlashAttention tile",
)


# ---- 06.tiled_attention(q, k, v, block) -> (q_len, d_value): the loops around the checked flash_step ----------
def tiled_cases():
    rng = np.random.default_rng(5)
    cases = [
        Case(tuple(rng.normal(size=shape) for shape in ((n_q, 4), (n_k, 4), (n_k, d_v))) + (block,), label)
        for n_q, n_k, d_v, block, label in (
            (7, 9, 3, 3, "the block divides neither length"),
            (8, 5, 2, 4, "fewer keys than queries"),
            (5, 6, 3, 10, "one block larger than both lengths"),
        )
    ]
    q_big = 300 * rng.normal(size=(6, 4))  # scores in the hundreds: exp overflows without the running max
    cases.append(Case((q_big, rng.normal(size=(7, 4)), rng.normal(size=(7, 3)), 2), "scores in the hundreds"))
    return cases


def tiled_attention(q, k, v, block):
    """The reference: query blocks outside, key blocks inside, through the course's flash_step."""
    return tiled_with(flash_step, q, k, v, block)


def tiled_attention_lists(q, k, v, block):
    rows = []
    for qs in range(0, len(q), block):  # one query block at a time, its state started afresh
        q_blk = q[qs : qs + block]
        state = (np.full((len(q_blk), 1), -np.inf), np.zeros((len(q_blk), 1)), np.zeros((len(q_blk), v.shape[1])))
        for ks in range(0, len(k), block):
            state = flash_step(
                *state, np.einsum("qd,kd->qk", q_blk, k[ks : ks + block]) / np.sqrt(q.shape[1]), v[ks : ks + block]
            )
        rows.append(state[2] / state[1])
    return np.concatenate(rows)


def tiled_attention_scaled_queries(q, k, v, block):
    q = q / math.sqrt(q.shape[-1])  # scale the queries once instead of every tile of scores
    out = np.empty((len(q), v.shape[-1]))
    for qs in range(0, len(q), block):
        n_rows = min(block, len(q) - qs)
        m, l, acc = np.full((n_rows, 1), -np.inf), np.zeros((n_rows, 1)), np.zeros((n_rows, v.shape[-1]))
        for ks in range(0, len(k), block):
            m, l, acc = flash_step(m, l, acc, q[qs : qs + n_rows] @ k[ks : ks + block].T, v[ks : ks + block])
        out[qs : qs + n_rows] = acc / l
    return out


def tiled_attention_no_final_division(q, k, v, block):
    out = np.zeros((len(q), v.shape[1]))
    for qs in range(0, len(q), block):
        q_blk = q[qs : qs + block]
        m, l, acc = np.full((len(q_blk), 1), -np.inf), np.zeros((len(q_blk), 1)), np.zeros((len(q_blk), v.shape[1]))
        for ks in range(0, len(k), block):
            m, l, acc = flash_step(m, l, acc, q_blk @ k[ks : ks + block].T / math.sqrt(q.shape[1]), v[ks : ks + block])
        out[qs : qs + block] = acc  # the running sum of exp(score - m) * value, never divided by l
    return out


def tiled_attention_unscaled(q, k, v, block):
    return tiled_with(flash_step, q * math.sqrt(q.shape[1]), k, v, block)  # tiled_with divides by sqrt(d_head)


TILED_ATTENTION = Exercise(
    id="06.tiled_attention",
    fresh=lambda q_len, k_len, d_head, d_value, block: [
        (
            np.random.default_rng(1).normal(size=(q_len, d_head)),
            np.random.default_rng(2).normal(size=(k_len, d_head)),
            np.random.default_rng(3).normal(size=(k_len, d_value)),
            block,
        ),
        (  # every score far below 0 (exp underflows unless the running max starts at -inf)
            -1000 * np.abs(np.random.default_rng(4).normal(size=(q_len, d_head))),
            np.abs(np.random.default_rng(5).normal(size=(k_len, d_head))) + 0.1,
            np.random.default_rng(3).normal(size=(k_len, d_value)),
            block,
        ),
    ],
    constraint="one_tile_of_scores",
    section="06 · Tiled attention, FlashAttention-style",
    make_cases=tiled_cases,
    reference=tiled_attention,
    variants=(tiled_attention_lists, tiled_attention_scaled_queries),
    buggy={"tiled_no_final_division": tiled_attention_no_final_division, "no_scaling": tiled_attention_unscaled},
    hints=(
        "Which state does one block of queries need before its first key block, and when is its output final?",
        "For each block of queries: start m at -inf, l at 0 and acc at 0 (one row per query of the block); for "
        "each block of keys, compute that tile's scaled scores and let flash_step fold it in; after the last key "
        "block the block's output is acc divided by l.",
        "q[qs : qs + block] is a query block (the last one may be shorter); its tile of scores against a key block is "
        "q_blk @ k_blk.T / math.sqrt(d_head), shape (rows, keys of the block).",
    ),
    atol=1e-10,
    noun="tiled attention pass",
)


# ---- 06.io_bytes(seq_len, d_head, sram_bytes, bytes_per_value) -> (standard, tiled) ------------------------------
def io_cases():
    return [
        Case((2, 3, 48, 1), "n = 2, d = 3, one byte per value"),
        Case((8, 2, 32, 1), "32 values of SRAM, d = 2: as many rows as fit with their scores"),
        Case((9, 2, 32, 1), "9 rows in tiles of 2: the last query tile is partial"),
        Case((8, 2, 64, 1), "64 values of SRAM, d = 2: M / 4d rows would leave no room for their scores"),
        Case((2048, 64, 100_000, 2), "n = 2048, d = 64, 100 KB of SRAM, float16"),
        Case((300, 16, 20_000, 4), "float32"),
    ]


def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    values = sram_bytes // bytes_per_value
    rows = math.isqrt(4 * d_head**2 + values) - 2 * d_head  # largest B with 4·B·d (Q, K, V, O) + B² (scores) <= M
    standard = 4 * seq_len * d_head + 4 * seq_len**2  # Q, K in; S out; S in, P out; P, V in; O out
    tiled = 2 * seq_len * d_head * (1 + math.ceil(seq_len / rows))  # Q in, O out; K and V once per query tile
    return standard * bytes_per_value, tiled * bytes_per_value


def io_bytes_itemized(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    standard = (2 * n * d) + (n * n) + (n * n + n * n) + (n * n + n * d) + (n * d)
    rows = 1
    while 4 * (rows + 1) * d + (rows + 1) ** 2 <= sram_bytes // bytes_per_value:
        rows += 1
    query_tiles = -(-n // rows)
    tiled = n * d + n * d + query_tiles * (n * d + n * d)
    return standard * bytes_per_value, tiled * bytes_per_value


def io_bytes_loop(seq_len, d_head, sram_bytes, bytes_per_value):
    m, d = sram_bytes / bytes_per_value, d_head
    rows = int(math.floor(math.sqrt(4 * d * d + m) - 2 * d))
    tiled = 0
    for start in range(0, seq_len, rows):  # each query tile: read it, read all of K and V, write its output
        tile = min(rows, seq_len - start)
        tiled += tile * d_head + 2 * seq_len * d_head + tile * d_head
    standard = 4 * seq_len * d_head + 4 * seq_len * seq_len
    return bytes_per_value * standard, bytes_per_value * tiled


def io_bytes_kv_read_once(seq_len, d_head, sram_bytes, bytes_per_value):
    standard, _ = io_bytes(seq_len, d_head, sram_bytes, bytes_per_value)
    return standard, 4 * seq_len * d_head * bytes_per_value  # Q, K, V in and O out, once each


def io_bytes_no_score_tile(seq_len, d_head, sram_bytes, bytes_per_value):
    standard, _ = io_bytes(seq_len, d_head, sram_bytes, bytes_per_value)
    rows = sram_bytes // (4 * d_head * bytes_per_value)  # Q, K, V and O tiles only: the B x B scores left out
    return standard, 2 * seq_len * d_head * (1 + math.ceil(seq_len / rows)) * bytes_per_value


def io_bytes_scores_one_trip(seq_len, d_head, sram_bytes, bytes_per_value):
    _, tiled = io_bytes(seq_len, d_head, sram_bytes, bytes_per_value)
    return (4 * seq_len * d_head + seq_len**2) * bytes_per_value, tiled  # the n x n matrix counted once


IO_BYTES = Exercise(
    id="06.io_bytes",
    section="06 · Why FlashAttention is fast: bytes moved, not FLOPs",
    make_cases=io_cases,
    reference=io_bytes,
    variants=(io_bytes_itemized, io_bytes_loop),
    buggy={
        "io_kv_read_once": io_bytes_kv_read_once,
        "io_scores_one_trip": io_bytes_scores_one_trip,
        "io_no_score_tile": io_bytes_no_score_tile,
    },
    output_names=("standard", "tiled"),
    # the tiled count is the exercise; hbm_bytes_naive takes no sram_bytes, so the audit cannot call it as an answer
    forbidden=("course_utils.efficient:hbm_bytes_tiled",),
    hints=(
        "List every matrix each pass reads from or writes to HBM, with its size in values. Which of them are n x n?",
        "Standard: Q and K in, S out, S in and P out, P and V in, O out. Tiled: each query tile in and its output "
        "out once, and for every query tile all of K and V in again. Multiply the values by bytes_per_value.",
        "A tile of B rows needs 4·B·d_head values for Q, K, V and O and B·B for its scores; take the largest whole B "
        "with 4·B·d + B² <= sram_bytes // bytes_per_value (solve the quadratic, or count up). There are "
        "ceil(seq_len / B) query tiles (math.ceil, or -(-a // b)). Return the two byte counts as a tuple.",
    ),
    noun="bytes-moved count",
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
    fresh=lambda seq_len, d_model, d_head, d_value: [
        (
            np.random.default_rng(1).normal(size=(seq_len, d_model)),
            np.random.default_rng(2).normal(size=(d_model, d_head)),
            np.random.default_rng(3).normal(size=(d_model, d_head)),
            np.random.default_rng(4).normal(size=(d_model, d_value)),
        )
    ],
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
    noun="KV-cache step",
)


# ---- 06.decode_flops(prefix_len, d_model, d_head, cached) -> int ------------------------------------------------
def decode_cases():
    return [
        Case((1, 4, 2, True), "the first token, with the cache"),
        Case((1, 4, 2, False), "the first token, without the cache"),
        Case((7, 10, 3, True)),
        Case((7, 10, 3, False)),
        Case((32, 64, 16, True), "the lesson's last token, with the cache"),
        Case((32, 64, 16, False), "the lesson's last token, without the cache"),
    ]


def decode_flops(prefix_len, d_model, d_head, cached):
    core = 2 * (2 * prefix_len * d_head)  # scores k_cache @ q and weights @ v_cache, L x d_head each
    if cached:
        return 3 * (2 * d_model * d_head) + core  # the new token's query, key and value
    return 2 * d_model * d_head + 2 * (2 * prefix_len * d_model * d_head) + core  # keys and values of the prefix


def decode_flops_terms(prefix_len, d_model, d_head, cached):
    projected = 1 if cached else prefix_len  # positions whose key and value are computed at this step
    query = 2 * d_model * d_head
    keys_values = 2 * 2 * projected * d_model * d_head
    scores_and_sum = 2 * prefix_len * d_head * 2
    return query + keys_values + scores_and_sum


def decode_flops_multiply_adds(prefix_len, d_model, d_head, cached):
    multiply_adds = d_model * d_head * (3 if cached else 1 + 2 * prefix_len) + 2 * prefix_len * d_head
    return 2 * multiply_adds


def decode_flops_no_core(prefix_len, d_model, d_head, cached):
    return decode_flops(prefix_len, d_model, d_head, cached) - 4 * prefix_len * d_head


def decode_flops_prefix_keys_only(prefix_len, d_model, d_head, cached):
    if cached:
        return decode_flops(prefix_len, d_model, d_head, cached)
    return 2 * d_model * d_head + 2 * prefix_len * d_model * d_head + 4 * prefix_len * d_head


DECODE_FLOPS = Exercise(
    id="06.decode_flops",
    section="06 · Decoding one token at a time: the KV cache",
    make_cases=decode_cases,
    reference=decode_flops,
    variants=(decode_flops_terms, decode_flops_multiply_adds),
    buggy={"decode_flops_no_core": decode_flops_no_core, "decode_prefix_keys_only": decode_flops_prefix_keys_only},
    hints=(
        "Which matrix products does one decoding step run, with and without the cache, and how big is each?",
        "A (1, a) @ (a, b) product costs 2·a·b FLOPs. With the cache: the new token's query, key and value, then the "
        "scores against L keys and the weighted sum of L values. Without: the query, the keys and values of all L "
        "positions, and the same scores and sum.",
        "With the cache: 3 · 2·d_model·d_head plus 2 · 2·L·d_head. Without: replace the new token's key and value "
        "by those of all L positions.",
    ),
    noun="FLOP count of a decoding step",
)


# ---- 06.causal_tiled_attention(q, k, v, block) -> (n, d_value): transfer, the tiled pass with a causal mask -----
def causal_tiled_cases():
    rng = np.random.default_rng(7)
    cases = [
        Case(tuple(rng.normal(size=(n, d)) for d in (4, 4, d_v)) + (block,), label)
        for n, d_v, block, label in (
            (7, 3, 3, "tiles of 3 over 7 tokens: the diagonal cuts through tiles"),
            (8, 2, 4, "two query blocks of 4"),
            (5, 3, 8, "one tile holds everything"),
            (9, 2, 2, "tiles of 2"),
        )
    ]
    q_big = 300 * rng.normal(size=(6, 4))  # scores in the hundreds
    cases.append(Case((q_big, rng.normal(size=(6, 4)), rng.normal(size=(6, 3)), 4), "scores in the hundreds"))
    return cases


def causal_tiled_attention(q, k, v, block):
    """The reference: query i sees keys j <= i; key tiles wholly in a query block's future are skipped."""
    out = np.zeros((len(q), v.shape[1]))
    for qs in range(0, len(q), block):
        q_blk = q[qs : qs + block]
        m, l, acc = np.full((len(q_blk), 1), -np.inf), np.zeros((len(q_blk), 1)), np.zeros((len(q_blk), v.shape[1]))
        for ks in range(0, qs + len(q_blk), block):  # the last query of the block sees keys < qs + rows
            scores = q_blk @ k[ks : ks + block].T / math.sqrt(q.shape[1])  # (rows, keys)
            allowed = np.tril(np.ones(scores.shape, dtype=bool), qs - ks)  # key ks + j <= query qs + i
            m, l, acc = flash_step(m, l, acc, np.where(allowed, scores, -np.inf), v[ks : ks + block])
        out[qs : qs + block] = acc / l
    return out


def causal_tiled_full_mask(q, k, v, block):
    n = len(q)
    future = np.arange(n)[None, :] > np.arange(n)[:, None]  # (n, n): True where the key comes after the query
    out = []
    for qs in range(0, n, block):
        rows = slice(qs, min(qs + block, n))
        state = (
            np.full((rows.stop - qs, 1), -np.inf),
            np.zeros((rows.stop - qs, 1)),
            np.zeros((rows.stop - qs, v.shape[1])),
        )
        for ks in range(0, rows.stop, block):
            cols = slice(ks, min(ks + block, n))
            tile = q[rows] @ k[cols].T / math.sqrt(q.shape[1])
            tile[future[rows, cols]] = -np.inf
            state = flash_step(*state, tile, v[cols])
        out.append(state[2] / state[1])
    return np.concatenate(out)


def causal_tiled_positions(q, k, v, block):
    out = np.zeros((len(q), v.shape[1]))
    for qs in range(0, len(q), block):
        q_pos = np.arange(qs, min(qs + block, len(q)))
        m, l, acc = np.full((len(q_pos), 1), -np.inf), np.zeros((len(q_pos), 1)), np.zeros((len(q_pos), v.shape[1]))
        for ks in range(0, q_pos[-1] + 1, block):
            k_pos = np.arange(ks, min(ks + block, len(k)))
            scores = np.einsum("qd,kd->qk", q[q_pos], k[k_pos]) / np.sqrt(q.shape[1])
            scores = np.where(k_pos[None, :] <= q_pos[:, None], scores, -np.inf)
            m, l, acc = flash_step(m, l, acc, scores, v[k_pos])
        out[q_pos] = acc / l
    return out


def causal_tiled_diagonal_unmasked(q, k, v, block):
    out = np.zeros((len(q), v.shape[1]))
    for qs in range(0, len(q), block):
        q_blk = q[qs : qs + block]
        m, l, acc = np.full((len(q_blk), 1), -np.inf), np.zeros((len(q_blk), 1)), np.zeros((len(q_blk), v.shape[1]))
        for ks in range(0, qs + len(q_blk), block):  # future tiles skipped, but the diagonal tiles kept whole
            m, l, acc = flash_step(m, l, acc, q_blk @ k[ks : ks + block].T / math.sqrt(q.shape[1]), v[ks : ks + block])
        out[qs : qs + block] = acc / l
    return out


def causal_tiled_no_diagonal(q, k, v, block):
    out = np.zeros((len(q), v.shape[1]))
    with np.errstate(invalid="ignore"):  # query 0 sees no key at all: exp(-inf - -inf) is NaN
        for qs in range(0, len(q), block):
            q_blk = q[qs : qs + block]
            m, l = np.full((len(q_blk), 1), -np.inf), np.zeros((len(q_blk), 1))
            acc = np.zeros((len(q_blk), v.shape[1]))
            for ks in range(0, qs + len(q_blk), block):
                scores = q_blk @ k[ks : ks + block].T / math.sqrt(q.shape[1])
                allowed = np.tril(np.ones(scores.shape, dtype=bool), qs - ks - 1)  # key < query: itself hidden
                m, l, acc = flash_step(m, l, acc, np.where(allowed, scores, -np.inf), v[ks : ks + block])
            out[qs : qs + block] = acc / l
    return out


CAUSAL_TILED_ATTENTION = Exercise(
    id="06.causal_tiled_attention",
    fresh=lambda seq_len, d_head, d_value, block: [
        (
            np.random.default_rng(1).normal(size=(seq_len, d_head)),
            np.random.default_rng(2).normal(size=(seq_len, d_head)),
            np.random.default_rng(3).normal(size=(seq_len, d_value)),
            block,
        )
    ],
    constraint="no_future_tile",
    section="06 · Exercise 1 · Causal tiled attention",
    make_cases=causal_tiled_cases,
    reference=causal_tiled_attention,
    variants=(causal_tiled_full_mask, causal_tiled_positions),
    buggy={
        "tiled_causal_diagonal_unmasked": causal_tiled_diagonal_unmasked,
        "causal_no_diagonal": causal_tiled_no_diagonal,
    },
    hints=(
        "Which key tiles can a query block skip entirely, and in which tiles do some of its queries see a key that "
        "others must not?",
        "Loop over key blocks only up to the last query of the block. In a tile that the diagonal cuts, set the "
        "scores of keys after their query to -inf before flash_step sees them (exp(-inf) = 0).",
        "Query qs + i may see key ks + j when ks + j <= qs + i; np.tril(np.ones(tile.shape, bool), qs - ks) or a "
        "comparison of two np.arange position vectors gives that mask for one tile.",
    ),
    atol=1e-10,
    noun="causal tiled pass",
)


# ---- 06.kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value) -> int: transfer ----------------
def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
    return 2 * batch * layers * heads * seq_len * d_head * bytes_per_value  # a key and a value per token, head, layer


def kv_cache_bytes_shapes(batch, layers, heads, d_head, seq_len, bytes_per_value):
    one_cache = math.prod((batch, heads, seq_len, d_head))  # (batch, heads, seq_len, d_head), keys or values
    return layers * (one_cache + one_cache) * bytes_per_value


def kv_cache_bytes_per_token(batch, layers, heads, d_head, seq_len, bytes_per_value):
    per_token = layers * heads * (d_head + d_head) * bytes_per_value  # one key and one value in every head and layer
    return per_token * seq_len * batch


def kv_cache_bytes_keys_only(batch, layers, heads, d_head, seq_len, bytes_per_value):
    return batch * layers * heads * seq_len * d_head * bytes_per_value


KV_CACHE_BYTES = Exercise(
    id="06.kv_cache_bytes",
    fresh=lambda batch, layers, heads, d_head, seq_len: [(batch, layers, heads, d_head, seq_len, 2)],
    section="06 · Exercise 2 · The memory a KV cache takes",
    make_cases=lambda: [(1, 2, 3, 4, 5, 4), (2, 12, 12, 64, 1024, 2), (3, 1, 5, 7, 11, 8)],
    reference=kv_cache_bytes,
    variants=(kv_cache_bytes_shapes, kv_cache_bytes_per_token),
    buggy={"kv_cache_keys_only": kv_cache_bytes_keys_only},
    hints=(
        "What does the cache keep for each token, in each head of each layer, and for each sequence of the batch?",
        "Per token, head and layer: one key and one value of d_head numbers each. Count the numbers, then multiply "
        "by the bytes each takes.",
        "GPT-2 small keeps 12 layers x 12 heads x 2 x 64 numbers per token; at float16 that is 36,864 bytes.",
    ),
    noun="KV-cache size",
)


EXERCISES = [
    ONLINE_UPDATE,
    FLASH_STEP,
    TILED_ATTENTION,
    WEIGHTS_BYTES,
    IO_BYTES,
    KV_CACHE_STEP,
    DECODE_FLOPS,
    CAUSAL_TILED_ATTENTION,
    KV_CACHE_BYTES,
]

PREDICTIONS = [
    Prediction(
        id="06.core_slope",
        question="On log-log axes, what slope p (time ≈ c · n^p) do you expect for the attention core at long n?",
        kind="number",
        answer=2,
        rtol=0.1,
        section="06 · Time against sequence length",
        rethink="how the number of score entries grows with n",
        known_wrong=(
            KnownWrong(
                1,
                None,
                "the projections' slope: each token is projected once, but the core compares every "
                "query with every key",
            ),
            KnownWrong(3, None, "a cube: think about how many score entries the core computes, and the work per entry"),
        ),
    ),
    Prediction(
        id="06.many_heads_time",
        question='Same FLOPs: do 64 heads of d_head 8 take "the same" time as 1 head of 512 on the naive path, or '
        'are they "slower" or "faster"?',
        kind="choice",
        answer="slower",
        choices=("the same", "slower", "faster"),
        section="06 · Many heads versus one wide head",
        known_wrong=(
            KnownWrong(
                "the same",
                None,
                "what the FLOP count says; but 64 heads build 64 times as many score "
                "entries, and each head's product is thin",
            ),
        ),
    ),
    Prediction(
        id="06.naive_memory_doubling",
        question="When n doubles, by what factor does the naive pass's peak memory grow (long n)?",
        kind="number",
        answer=4,
        rtol=0.15,
        section="06 · Peak memory: naive versus tiled",
        rethink="which array of the naive pass is the largest at long n, and how it grows",
        known_wrong=(
            KnownWrong(
                2,
                None,
                "the growth of the (n, d_value) output; the naive pass also holds the (n, n) scores and weights",
            ),
        ),
    ),
]
