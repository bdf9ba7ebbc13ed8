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

from course_utils.checking.cases import decode_counting_projections
from course_utils.checking.model import Case, Exercise, KnownWrong, Prediction
from course_utils.lessons.lesson_06.tiling import (
    FLASH_STEP,
    IO_BYTES,
    ONLINE_UPDATE,
    TILED_ATTENTION,
    WEIGHTS_BYTES,
    flash_step,
)

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "KV_CACHE_STEP",
    "DECODE_FLOPS",
    "CAUSAL_TILED_ATTENTION",
    "KV_CACHE_BYTES",
]


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
        Case((1, 5, 3, True), "the first token, with the cache"),
        Case((1, 5, 3, False), "the first token, without the cache"),
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
            (9, 2, 5, "tiles of 5 over 9 tokens"),
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
    # no two sizes alike and none 2 (the key-plus-value factor), so no mistake fits by a coincidence
    make_cases=lambda: [(1, 3, 5, 7, 6, 4), (3, 12, 16, 64, 1024, 4), (6, 5, 3, 7, 11, 1)],
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
