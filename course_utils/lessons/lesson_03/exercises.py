"""Lesson 03 · Multi-head attention in NumPy: the exercises and predictions of ``notebooks/03_multi_head_numpy.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
The student writes the main path (split, merge, the whole layer, its per-head loop twin, the parameter count,
the FLOP count) and two transfer exercises (grouped-query attention, a whole block's crossover). References
go through ``numpy_attention`` where the lesson does, so the catalogue's patches (the single reshape, the
scale, the softmax's axis, W_o skipped) apply to them; a mistake no patch can say is a hand-written buggy
version. Needs only NumPy, except ``attention_flops``' reference, which measures a PyTorch layer.
"""

from __future__ import annotations

import math

import numpy as np

from course_utils import numpy_attention
from course_utils.checking.model import Case, Exercise, KnownWrong, Prediction
from course_utils.lessons.lesson_03.core import (
    COUNT_ATTENTION_PARAMETERS,
    MERGE_HEADS,
    MULTI_HEAD_ATTENTION,
    MULTI_HEAD_ATTENTION_LOOP,
    SECTION_BLOCK,
    SECTION_COST,
    SECTION_CROSS,
    SECTION_GQA,
    SECTION_PARAMS,
    SECTION_SPLIT,
    SPLIT_HEADS,
    attend_per_head,
    merge_from_heads,
    projection_weights,
    split_into_heads,
)

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "ATTENTION_FLOPS",
    "GROUPED_QUERY_ATTENTION",
    "BLOCK_CROSSOVER",
    "attention_flops",
    "grouped_query_attention",
    "block_crossover",
]
"""Building the layer and counting its parameters skips the exercise."""


# ---- 03.attention_flops(batch, q_len, k_len, d_model, num_heads) -> (projections, core) --------------------------
def attention_flops(batch, q_len, k_len, d_model, num_heads):
    """Measured, not computed: a real layer runs under PyTorch's FLOP counter, on the meta device (shapes only)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from course_utils import attention

    with torch.device("meta"):  # no numbers are computed: any size is instant
        mha = attention.MultiHeadAttention(d_model, num_heads).eval()
        query, memory = torch.empty(batch, q_len, d_model), torch.empty(batch, k_len, d_model)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        mha(query, memory, memory)  # the weights path: scores and weights @ values are explicit bmm calls
    counts = {str(op): flops for op, flops in counter.get_flop_counts()["Global"].items()}
    projections = counts.get("aten.addmm", 0) + counts.get("aten.mm", 0)  # the four nn.Linear layers
    return projections, counts.get("aten.bmm", 0)  # (scores) + (weights @ values)


def flops_formula(batch, q_len, k_len, d_model, num_heads):
    projections = 2 * batch * d_model * d_model * (q_len + k_len + k_len + q_len)  # W_q, W_k, W_v, W_o
    core = 2 * (2 * batch * q_len * k_len * d_model)  # scores, weights @ values (all heads together)
    return projections, core


def flops_per_matmul(batch, q_len, k_len, d_model, num_heads):
    def matmul(m, k, n):  # (m, k) @ (k, n): m * n dot products of length k, a multiply and an add each
        return 2 * m * k * n

    d_head = d_model // num_heads
    projections = batch * (2 * matmul(q_len, d_model, d_model) + 2 * matmul(k_len, d_model, d_model))
    core = batch * num_heads * (matmul(q_len, d_head, k_len) + matmul(q_len, k_len, d_head))
    return projections, core


def flops_head_loop(batch, q_len, k_len, d_model, num_heads):
    d_head = d_model // num_heads
    projections = core = 0
    for length in (q_len, k_len, k_len, q_len):  # W_q, W_k, W_v on their inputs, W_o on the merged queries
        projections += 2 * batch * length * d_model * d_model
    for _ in range(num_heads):
        core += 2 * batch * q_len * k_len * d_head  # scores
        core += 2 * batch * q_len * k_len * d_head  # weights @ values
    return projections, core


def flops_one_length(batch, q_len, k_len, d_model, num_heads):
    return 8 * batch * q_len * d_model**2, 4 * batch * q_len**2 * d_model


def flops_multiply_add_as_one(batch, q_len, k_len, d_model, num_heads):
    return 2 * batch * (q_len + k_len) * d_model**2, 2 * batch * q_len * k_len * d_model


def flops_no_out_proj(batch, q_len, k_len, d_model, num_heads):
    return 2 * batch * (q_len + 2 * k_len) * d_model**2, 4 * batch * q_len * k_len * d_model


def flops_heads_multiply(batch, q_len, k_len, d_model, num_heads):
    projections, core = flops_formula(batch, q_len, k_len, d_model, num_heads)
    return projections, num_heads * core  # every head counted d_model wide


ATTENTION_FLOPS = Exercise(
    id="03.attention_flops",
    fresh=lambda batch, q_len, k_len, heads, d_head: [(batch, q_len, k_len, heads * d_head, heads)],
    noun="FLOP count",
    section=SECTION_COST,
    make_cases=lambda: [
        Case((1, 3, 7, 16, 4)),
        Case((2, 5, 2, 8, 2), "more queries than keys"),
        Case((3, 1, 10, 32, 8), "one query"),
        Case((1, 6, 9, 24, 3)),
    ],
    reference=attention_flops,
    variants=(flops_formula, flops_per_matmul, flops_head_loop),
    buggy={
        "flops_one_length": flops_one_length,
        "flops_multiply_add_as_one": flops_multiply_add_as_one,
        "flops_no_out_proj": flops_no_out_proj,
        "flops_heads_multiply": flops_heads_multiply,
    },
    hints=(
        "What is the shape of every matrix product the layer runs (the four projections, the scores, weights @ "
        "values), and how many times does each run?",
        "(m, k) @ (k, n) costs 2·m·k·n, times batch. W_q and W_o run on the q_len query positions, W_k and W_v on "
        "the k_len key positions; per head, the scores and weights @ values each cost 2·q_len·k_len·d_head.",
        "The projections add up to 2·batch·d_model²·(q_len + k_len + k_len + q_len). What do the heads' core "
        "FLOPs add up to, once d_head is summed over the heads?",
    ),
    output_names=("projections", "core"),
    atol=0,
    rtol=0,
)


# ---- 03.grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads) -> output -------
def gqa_cases():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 5, 8))
    q12, kv12 = rng.normal(size=(2, 3, 12)), rng.normal(size=(2, 7, 12))
    x12 = rng.normal(size=(2, 4, 12))
    q10, kv10 = rng.normal(size=(1, 6, 10)), rng.normal(size=(1, 4, 10))
    return [
        Case((x, x, x, *projection_weights(8, 50, (8, 4, 4, 8)), 4, 2), "4 query heads, 2 kv heads"),
        Case(
            (q12, kv12, kv12, *projection_weights(12, 51, (12, 6, 6, 12)), 6, 3),
            "cross-attention, 6 query heads, 3 kv heads",
        ),
        Case((x12, x12, x12, *projection_weights(12, 52, (12, 3, 3, 12)), 4, 1), "multi-query: one key/value head"),
        Case((q10, kv10, kv10, *projection_weights(10, 53), 2, 2), "as many key/value heads as query heads"),
        Case(
            (60 * x12[:, :3], 60 * kv12[:, :5], kv12[:, :5], *projection_weights(12, 54, (12, 6, 6, 12)), 4, 2),
            "scores in the thousands",
        ),
    ]


def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    group = num_heads // num_kv_heads  # query heads per key/value head
    Q = numpy_attention.split_heads(query @ W_q, num_heads)  # (batch, heads, q_len, d_head)
    # (batch, kv_heads, k_len, d_head) -> (batch, heads, k_len, d_head), kv head g for query heads g·group ...
    K = np.repeat(numpy_attention.split_heads(key @ W_k, num_kv_heads), group, axis=1)
    V = np.repeat(numpy_attention.split_heads(value @ W_v, num_kv_heads), group, axis=1)
    heads_out, _ = numpy_attention.scaled_dot_product_attention(Q, K, V)
    return numpy_attention.merge_heads(heads_out) @ W_o


def gqa_head_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    d_head = W_q.shape[1] // num_heads
    group = num_heads // num_kv_heads
    heads = []
    for h in range(num_heads):
        g = h // group  # the key/value head of query head h
        q = query @ W_q[:, h * d_head : (h + 1) * d_head]
        k = key @ W_k[:, g * d_head : (g + 1) * d_head]
        v = value @ W_v[:, g * d_head : (g + 1) * d_head]
        heads.append(attend_per_head(q, k, v)[0])
    return np.concatenate(heads, axis=-1) @ W_o


def gqa_broadcast(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    batch, q_len, _ = query.shape
    group = num_heads // num_kv_heads
    Q = split_into_heads(query @ W_q, num_heads)  # (batch, heads, q_len, d_head)
    Q = Q.reshape(batch, num_kv_heads, group, q_len, -1)  # consecutive query heads grouped
    K = split_into_heads(key @ W_k, num_kv_heads)[:, :, None]  # (batch, kv_heads, 1, k_len, d_head)
    V = split_into_heads(value @ W_v, num_kv_heads)[:, :, None]
    out, _ = attend_per_head(Q, K, V)  # (batch, kv_heads, group, q_len, d_head)
    return merge_from_heads(out.reshape(batch, num_heads, q_len, -1)) @ W_o


def gqa_tiled(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    group = num_heads // num_kv_heads
    Q = split_into_heads(query @ W_q, num_heads)
    K = np.tile(split_into_heads(key @ W_k, num_kv_heads), (1, group, 1, 1))  # kv heads 0, 1, 0, 1, ...: interleaved
    V = np.tile(split_into_heads(value @ W_v, num_kv_heads), (1, group, 1, 1))
    return merge_from_heads(attend_per_head(Q, K, V)[0]) @ W_o


def gqa_keys_split_with_query_length(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    batch, q_len, _ = query.shape
    group = num_heads // num_kv_heads

    def split(x, heads):  # every input split with the query's length
        return x.reshape(batch, q_len, heads, -1).transpose(0, 2, 1, 3)

    K = np.repeat(split(key @ W_k, num_kv_heads), group, axis=1)
    V = np.repeat(split(value @ W_v, num_kv_heads), group, axis=1)
    return merge_from_heads(attend_per_head(split(query @ W_q, num_heads), K, V)[0]) @ W_o


def gqa_no_output_projection(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    group = num_heads // num_kv_heads
    K = np.repeat(split_into_heads(key @ W_k, num_kv_heads), group, axis=1)
    V = np.repeat(split_into_heads(value @ W_v, num_kv_heads), group, axis=1)
    return merge_from_heads(attend_per_head(split_into_heads(query @ W_q, num_heads), K, V)[0])  # never mixed by W_o


GROUPED_QUERY_ATTENTION = Exercise(
    id="03.grouped_query_attention",
    fresh=lambda batch, seq_len, kv_heads, group, d_head: [
        (
            *(3 * [np.random.default_rng(1).normal(size=(batch, seq_len, kv_heads * group * d_head))]),
            *projection_weights(
                kv_heads * group * d_head,
                3,
                (kv_heads * group * d_head, kv_heads * d_head, kv_heads * d_head, kv_heads * group * d_head),
            ),
            kv_heads * group,
            kv_heads,
        )
    ],
    noun="grouped-query attention",
    section=SECTION_GQA,
    make_cases=gqa_cases,
    reference=grouped_query_attention,
    variants=(gqa_head_loop, gqa_broadcast),
    buggy={
        "gqa_tiled_heads": gqa_tiled,
        "keys_split_with_query_length": gqa_keys_split_with_query_length,
        "no_output_projection": gqa_no_output_projection,
    },
    hints=(
        "With 4 query heads and 2 key/value heads, which key/value head does query head 1 use? Query head 2?",
        "Split the queries into num_heads heads and the keys and values into num_kv_heads heads (each at its own "
        "length); then give every query head its group's key/value head, consecutive query heads together.",
        "np.repeat(K_heads, group, axis=1) turns (batch, kv_heads, k_len, d_head) into (batch, heads, k_len, d_head) "
        "with kv head 0 first, group times; np.tile would interleave them.",
    ),
    atol=1e-10,
    rtol=1e-8,
)


# ---- 03.block_crossover(d_model, mlp_ratio=4, causal=False) -> int -----------------------------------------------
def block_crossover(d_model, mlp_ratio=4, causal=False):
    # linear: projections 8·n·d² + MLP 2·(2·n·d·r·d) = (8 + 4r)·n·d²; core 4·n²·d (causal: half of it)
    per_token = (2 + mlp_ratio) * d_model  # 4·n²·d >= (8 + 4r)·n·d²  <=>  n >= (2 + r)·d
    return math.ceil(per_token * (2 if causal else 1))


def crossover_search(d_model, mlp_ratio=4, causal=False):
    def core(n):
        return 4 * n * n * d_model / (2 if causal else 1)

    def linear(n):
        return 8 * n * d_model**2 + 2 * (2 * n * d_model * mlp_ratio * d_model)

    n = 1
    while core(n) < linear(n):
        n += 1
    return n


def crossover_bisect(d_model, mlp_ratio=4, causal=False):
    lo, hi = 1, 1
    factor = 2 if causal else 4

    def core_catches_up(n):  # the core's FLOPs, halved when causal, against the block's linear FLOPs
        return factor * n * n * d_model >= (8 + 4 * mlp_ratio) * n * d_model**2

    while not core_catches_up(hi):
        hi *= 2
    while lo < hi:
        mid = (lo + hi) // 2
        if core_catches_up(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def crossover_sublayer(d_model, mlp_ratio=4, causal=False):
    return math.ceil(2 * d_model * (2 if causal else 1))  # the attention sublayer's crossover, MLP left out


def crossover_causal_halves_both(d_model, mlp_ratio=4, causal=False):
    return math.ceil((2 + mlp_ratio) * d_model)  # both sides halved: the causal saving cancels


BLOCK_CROSSOVER = Exercise(
    id="03.block_crossover",
    noun="block crossover",
    section=SECTION_BLOCK,
    make_cases=lambda: [
        Case((640, 4, False)),  # no d_model the lesson prints a crossover for (768, 12288)
        Case((640, 4, True), "causal"),
        Case((448, 2, False), "an MLP of width 2·d_model"),
        Case((1000, 3.5, True), "width 3.5·d_model, causal"),
        Case((112, 6, True), "width 6·d_model, causal"),
        Case((99, 0.5, False), "(2 + r)·d_model = 247.5 is not a whole number of tokens"),
    ],
    reference=block_crossover,
    variants=(crossover_search, crossover_bisect),
    buggy={"crossover_without_mlp": crossover_sublayer, "causal_halves_linear_work": crossover_causal_halves_both},
    hints=(
        "Which FLOPs of a block grow like n² and which like n? Which of the linear ones belong to the MLP?",
        "Per token, the core costs 4·n·d_model and the block's linear work (8 + 4·r)·d_model²; a causal kernel "
        "skips half of the core only.",
        "Solve 4·n·d = (8 + 4·r)·d² for n (twice that with causal=True), then round up to a whole token.",
    ),
    atol=0,
    rtol=0,
)

EXERCISES = [
    SPLIT_HEADS,
    MERGE_HEADS,
    MULTI_HEAD_ATTENTION,
    MULTI_HEAD_ATTENTION_LOOP,
    COUNT_ATTENTION_PARAMETERS,
    ATTENTION_FLOPS,
    GROUPED_QUERY_ATTENTION,
    BLOCK_CROSSOVER,
]

PREDICTIONS = [
    Prediction(
        id="03.split_shape",
        question="Q is (2, 5, 8) and we want 2 heads: what shape must the split array have for attention to run "
        "in every head at once?",
        kind="shape",
        answer=(2, 2, 5, 4),
        section=SECTION_SPLIT,
        known_wrong=(
            KnownWrong(
                (2, 5, 2, 4),
                "split_no_transpose",
                "the features cut into heads with the heads still behind the positions: attention would then treat "
                "the 2 heads as the positions",
            ),
            KnownWrong(
                (2, 2, 5, 8),
                "d_head_is_d_model",
                "every head with all 8 features: think about how many features one head gets",
            ),
            KnownWrong((2, 5, 8), "nothing_split", "Q as it is: the heads need an axis of their own"),
        ),
    ),
    Prediction(
        id="03.head1_features",
        question="Which of Q's 8 features end up in head 1: '0..3', '4..7', 'even ones' or 'odd ones'?",
        kind="choice",
        answer="4..7",
        choices=("0..3", "4..7", "even ones", "odd ones"),
        section=SECTION_SPLIT,
        known_wrong=(
            KnownWrong(
                "0..3",
                "head_zero_features",
                "head 0's features: think about which run of features comes next",
            ),
            KnownWrong(
                "odd ones",
                "features_interleaved",
                "an interleaved split: think about what a reshape to (2, 4) keeps together",
            ),
            KnownWrong("even ones", "features_interleaved_even", "an interleaved split, and head 0's half of it"),
        ),
    ),
    Prediction(
        id="03.single_reshape_content",
        question='What does Q.reshape(2, 2, 5, 4)[0, 0, 1] hold: "position 1\'s features 0..3", "position 0\'s '
        'features 4..7" or "position 2\'s features 0..3"?',
        kind="choice",
        answer="position 0's features 4..7",
        choices=("position 1's features 0..3", "position 0's features 4..7", "position 2's features 0..3"),
        section="03 · A reshape that looks right",
        known_wrong=(
            KnownWrong(
                "position 1's features 0..3",
                "split_single_reshape",
                "what the shape promises; but reshape fills the new axes in memory order, so [0, 0, 1] takes the "
                "4 numbers that follow position 0's first 4",
            ),
        ),
    ),
    Prediction(
        id="03.parameters_d512",
        question="How many parameters do the four projections W_q, W_k, W_v, W_o hold, with one bias vector each, "
        "for d_model = 512?",
        kind="number",
        answer=4 * 512 * 512 + 4 * 512,
        section=SECTION_PARAMS,
        rethink="every matrix and every bias of the four projections",
        known_wrong=(
            KnownWrong(
                3 * 512 * 512,
                "params_three_matrices",
                "the count a widely copied tutorial gives: think about every weight matrix and every bias the module holds",
            ),
            KnownWrong(
                4 * 512 * 512, "params_no_biases", "the four matrices alone: think about what else each nn.Linear holds"
            ),
            KnownWrong(
                3 * 512 * 512 + 3 * 512,
                "params_no_w_o",
                "three projections with biases: think about every projection the module holds",
            ),
            KnownWrong(
                8 * (4 * 512 * 512 + 4 * 512),
                "params_heads_multiply",
                "a count per head, times the heads: think about whether the heads have matrices of their own",
            ),
            KnownWrong(
                512 * 512,
                "params_one_matrix",
                "one (512, 512) matrix: think about every projection and bias the module holds",
            ),
        ),
    ),
    Prediction(
        id="03.parameters_heads",
        question="With 8 heads instead of 1, the four projections hold: 'the same', '8 times more' or '8 times "
        "fewer' parameters?",
        kind="choice",
        answer="the same",
        choices=("the same", "8 times more", "8 times fewer"),
        section=SECTION_PARAMS,
        known_wrong=(
            KnownWrong(
                "8 times more",
                "params_heads_multiply",
                "each head with its own full matrices: think about where a head's weights come from",
            ),
            KnownWrong(
                "8 times fewer",
                "params_heads_divide",
                "one head's slice: think about what the slices add up to",
            ),
        ),
    ),
    Prediction(
        id="03.crossover_n",
        question="Self-attention on one sequence of n tokens with d_model = 512 and 8 heads: at which n do the "
        "core's FLOPs first equal the projections'?",
        kind="number",
        answer=1024,
        section="03 · Where is the crossover?",
        rethink="the projections' FLOPs and the core's FLOPs as functions of n, set equal",
        magnitude=True,
        known_wrong=(
            KnownWrong(
                512,
                "crossover_at_d_model",
                "n = d_model: write both costs as FLOPs and set them equal",
            ),
            KnownWrong(
                2048,
                "core_scores_only",
                "the crossover with the scores alone: think about what the core computes after the scores",
            ),
            KnownWrong(
                128,
                "crossover_per_head",
                "one head's width: think about how wide the heads are together",
            ),
        ),
    ),
    Prediction(
        id="03.cross_output_shape",
        question="batch 2, d_model 8, 2 heads, 3 queries and 6 keys: what is the shape of the output?",
        kind="shape",
        answer=(2, 3, 8),
        section=SECTION_CROSS,
        known_wrong=(
            KnownWrong((2, 6, 8), "output_key_length", "the keys' length: think about whose rows the output has"),
            KnownWrong((2, 2, 3, 4), "output_still_split", "the heads before the merge: the output is merged back"),
        ),
    ),
    Prediction(
        id="03.cross_weights_shape",
        question="batch 2, d_model 8, 2 heads, 3 queries and 6 keys: what is the shape of the attention weights?",
        kind="shape",
        answer=(2, 2, 3, 6),
        section=SECTION_CROSS,
        known_wrong=(
            KnownWrong(
                (2, 2, 6, 3), "weights_transposed", "transposed: think about which of queries and keys a row belongs to"
            ),
            KnownWrong((2, 3, 6), "weights_without_heads", "without the heads axis: each head has its own weights"),
            KnownWrong((2, 3, 8), "output_shape", "the output's shape: think about what one weight connects"),
        ),
    ),
]
