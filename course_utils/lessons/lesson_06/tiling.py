"""Lesson 06's exercises on one pass over tiles: the online softmax (``06.online_update``), the weights' bytes
(``06.weights_bytes``), a FlashAttention step and the tiled pass (``06.flash_step``, ``06.tiled_attention``) and the
bytes moved (``06.io_bytes``).

Moved out of ``exercises.py`` whole (issue 26 section 5): one block per exercise, as there; ``exercises.py`` lists
them in ``EXERCISES``.
"""

from __future__ import annotations

import math

import numpy as np

from course_utils.checking.model import Case, Exercise

__all__ = [
    "ONLINE_UPDATE",
    "WEIGHTS_BYTES",
    "FLASH_STEP",
    "TILED_ATTENTION",
    "IO_BYTES",
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
    make_cases=lambda: [(3, 6, 5, 7, 4), (1, 8, 16, 12, 4), (3, 5, 9, 4, 8)],  # no two sizes alike, none 2
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
        for n_q, n_k, d_v, block in ((6, 8, 3, 3), (5, 9, 3, 4), (7, 3, 2, 7))
    ]
    q_big = 300 * rng.normal(size=(5, 4))  # scores in the hundreds: exp overflows without the running max
    cases.append(Case((q_big, rng.normal(size=(6, 4)), rng.normal(size=(6, 3)), 3), "scores in the hundreds"))
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
    cases.append(Case((q_big, rng.normal(size=(7, 4)), rng.normal(size=(7, 3)), 3), "scores in the hundreds"))
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
