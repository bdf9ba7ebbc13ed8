"""Lesson 03 · Multi-head attention in NumPy: the exercises and predictions of ``notebooks/03_multi_head_numpy.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
References go through ``numpy_attention`` where the lesson does, so the catalogue's patches (the split
without transpose, W_o skipped, the scale, the softmax's axis) apply to them. Needs only NumPy, except
``cross_attention_flops``, whose reference measures a PyTorch layer.
"""

from __future__ import annotations

import math

import numpy as np

from course_utils import numpy_attention
from course_utils.exercises._model import Case, Exercise, KnownWrong, Prediction

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "MY_SPLIT_HEADS",
    "COUNT_ATTENTION_PARAMETERS",
    "CROSS_ATTEND",
    "HEADS_BY_WEIGHT_SLICES",
    "CROSS_ATTENTION_FLOPS",
    "count_attention_parameters",
    "count_parameters_formula",
    "count_parameters_per_projection",
    "params_three_matrices",
    "params_ignore_bias_flag",
    "COUNT_FORBIDDEN",
]


def _softmax(x, axis=-1):
    exps = np.exp(x - x.max(axis=axis, keepdims=True))
    return exps / exps.sum(axis=axis, keepdims=True)


# ---- 03.my_split_heads(x, num_heads) -> (batch, heads, seq_len, d_head) --------------------------------------
def split_cases():
    rng = np.random.default_rng(1)
    return [
        Case((rng.normal(size=(2, 5, 8)), 2)),
        Case((rng.normal(size=(1, 7, 12)), 3), "another length, another head count"),
        Case((rng.normal(size=(3, 1, 6)), 6), "d_head = 1"),
    ]


def my_split_heads(x, num_heads):
    return numpy_attention.split_heads(x, num_heads)


def split_heads_reshape_transpose(x, num_heads):
    batch, seq_len, d_model = x.shape
    # (batch, seq_len, d_model) -> (batch, seq_len, heads, d_head) -> (batch, heads, seq_len, d_head)
    return x.reshape(batch, seq_len, num_heads, d_model // num_heads).transpose(0, 2, 1, 3)


def split_heads_stack(x, num_heads):
    d_head = x.shape[-1] // num_heads
    # head h takes features h * d_head .. (h + 1) * d_head - 1 of every position
    return np.stack([x[..., h * d_head : (h + 1) * d_head] for h in range(num_heads)], axis=1)


MY_SPLIT_HEADS = Exercise(
    id="03.my_split_heads",
    section="03 · Step 2 · split into heads",
    make_cases=split_cases,
    reference=my_split_heads,
    variants=(split_heads_reshape_transpose, split_heads_stack),
    hints=(
        "Which features of position s belong to head h? Write it as a slice of x[b, s], then ask which shape puts "
        "them at [b, h, s].",
        "Two moves: cut the feature axis into (heads, d_head), each position keeping its own features; then bring "
        "the heads axis in front of seq_len.",
        "The first move is a reshape to (batch, seq_len, num_heads, d_head). A single reshape straight to (batch, "
        "heads, seq_len, d_head) has the right shape and the wrong contents.",
    ),
)


# ---- 03.count_attention_parameters(d_model, num_heads, bias=True) -> int -------------------------------------
COUNT_FORBIDDEN = (
    "course_utils.attention:MultiHeadAttention.__init__",
    "torch.nn:MultiheadAttention.__init__",
)
"""Building the layer and counting its parameters skips the exercise (the reference does exactly that)."""


def count_attention_parameters(d_model, num_heads, bias=True):
    from course_utils import attention
    from course_utils.exercises.cases import torch_seeded

    with torch_seeded(0):
        module = attention.MultiHeadAttention(d_model, num_heads, bias=bias)
    return sum(p.numel() for p in module.parameters())


def count_parameters_formula(d_model, num_heads, bias=True):
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def count_parameters_per_projection(d_model, num_heads, bias=True):
    one = d_model * d_model  # one (d_model, d_model) weight
    if bias:
        one += d_model  # and its (d_model,) bias
    return sum(one for _ in ("W_q", "W_k", "W_v", "W_o"))


def params_three_matrices(d_model, num_heads, bias=True):
    return 3 * d_model * d_model


def params_ignore_bias_flag(d_model, num_heads, bias=True):
    return 4 * d_model * d_model + 4 * d_model


COUNT_ATTENTION_PARAMETERS = Exercise(
    id="03.count_attention_parameters",
    section="03 · Parameters: the same for any number of heads",
    make_cases=lambda: [
        Case((512, 8, True)),
        Case((512, 1, True), "one head"),
        Case((768, 12, True)),
        Case((64, 4, False), "no biases"),
        Case((1024, 16, True)),
    ],
    reference=count_attention_parameters,
    variants=(count_parameters_formula, count_parameters_per_projection),
    buggy={"params_three_matrices": params_three_matrices, "params_ignore_bias_flag": params_ignore_bias_flag},
    forbidden=COUNT_FORBIDDEN,
    hints=(
        "List the layer's projections. What does each one hold, with and without biases? Does the number of heads "
        "change any of them?",
        "Four projections (W_q, W_k, W_v, W_o), each a (d_model, d_model) matrix, plus a (d_model,) bias each when "
        "bias=True. The heads only decide how the projected features are grouped afterwards.",
        "For d_model = 512 with biases the answer is 1,050,624; write the formula in d_model and bias, and check it "
        "against that number.",
    ),
)


# ---- 03.cross_attend(decoder_states, encoder_states, encoder_lengths, W_q, W_k, W_v, W_o, num_heads) --------
def numpy_cross_cases():
    rng = np.random.default_rng(3)
    d_model = 8
    W = [rng.normal(0, 1 / np.sqrt(d_model), size=(d_model, d_model)) for _ in range(4)]
    return [
        Case((rng.normal(size=(2, 3, d_model)), rng.normal(size=(2, 6, d_model)), np.array([6, 4]), *W, 2)),
        Case((rng.normal(size=(3, 1, d_model)), rng.normal(size=(3, 5, d_model)), np.array([1, 5, 3]), *W, 4)),
        Case(
            (rng.normal(size=(2, 4, d_model)), rng.normal(size=(2, 7, d_model)), np.array([5, 2]), *W, 4),
            "no row fills the padded width",
        ),
        Case(
            (60 * rng.normal(size=(3, 2, d_model)), 60 * rng.normal(size=(3, 5, d_model)), np.array([5, 4, 2]), *W, 2),
            "scores in the thousands",
        ),
    ]


def _real_keys(encoder_lengths, k_len):
    return np.arange(k_len)[None, :] < np.asarray(encoder_lengths)[:, None]  # (batch, k_len)


def cross_attend(decoder_states, encoder_states, encoder_lengths, W_q, W_k, W_v, W_o, num_heads):
    mask = _real_keys(encoder_lengths, encoder_states.shape[1])[:, None, None, :]  # (batch, 1, 1, k_len)
    return numpy_attention.multi_head_attention(
        decoder_states, encoder_states, encoder_states, W_q, W_k, W_v, W_o, num_heads, mask=mask
    )


def cross_attend_loop_mask(decoder_states, encoder_states, encoder_lengths, W_q, W_k, W_v, W_o, num_heads):
    batch, k_len = encoder_states.shape[:2]
    mask = np.zeros((batch, 1, 1, k_len), dtype=bool)
    for b, length in enumerate(encoder_lengths):
        mask[b, 0, 0, :length] = True
    return numpy_attention.multi_head_attention(
        decoder_states, encoder_states, encoder_states, W_q, W_k, W_v, W_o, num_heads, mask=mask
    )


def cross_attend_by_hand(decoder_states, encoder_states, encoder_lengths, W_q, W_k, W_v, W_o, num_heads):
    batch, q_len, d_model = decoder_states.shape
    d_head = d_model // num_heads

    def split(x):  # (batch, len, d_model) -> (batch, heads, len, d_head)
        return x.reshape(batch, x.shape[1], num_heads, d_head).transpose(0, 2, 1, 3)

    Q, K, V = split(decoder_states @ W_q), split(encoder_states @ W_k), split(encoder_states @ W_v)
    scores = Q @ K.transpose(0, 1, 3, 2) / math.sqrt(d_head)  # (batch, heads, q_len, k_len)
    real = _real_keys(encoder_lengths, encoder_states.shape[1])[:, None, None, :]
    weights = _softmax(np.where(real, scores, -np.inf))
    heads_out = weights @ V  # (batch, heads, q_len, d_head)
    return heads_out.transpose(0, 2, 1, 3).reshape(batch, q_len, d_model) @ W_o, weights


def numpy_cross_attend_inverted(decoder_states, encoder_states, encoder_lengths, W_q, W_k, W_v, W_o, num_heads):
    is_pad = ~_real_keys(encoder_lengths, encoder_states.shape[1])  # (batch, k_len): True at padding
    return numpy_attention.multi_head_attention(
        decoder_states, encoder_states, encoder_states, W_q, W_k, W_v, W_o, num_heads, mask=is_pad[:, None, None, :]
    )


def numpy_cross_attend_2d(decoder_states, encoder_states, encoder_lengths, W_q, W_k, W_v, W_o, num_heads):
    padding = _real_keys(encoder_lengths, encoder_states.shape[1])  # (batch, k_len), passed as (q_len, k_len)
    return numpy_attention.multi_head_attention(
        decoder_states, encoder_states, encoder_states, W_q, W_k, W_v, W_o, num_heads, mask=padding
    )


def numpy_cross_attend_off_by_one(decoder_states, encoder_states, encoder_lengths, W_q, W_k, W_v, W_o, num_heads):
    k_len = encoder_states.shape[1]
    real = np.arange(k_len)[None, :] <= np.asarray(encoder_lengths)[:, None]  # one key too many
    return numpy_attention.multi_head_attention(
        decoder_states, encoder_states, encoder_states, W_q, W_k, W_v, W_o, num_heads, mask=real[:, None, None, :]
    )


CROSS_ATTEND = Exercise(
    id="03.cross_attend",
    section="03 · Cross-attention: `q_len ≠ k_len`",
    make_cases=numpy_cross_cases,
    reference=cross_attend,
    variants=(cross_attend_loop_mask, cross_attend_by_hand),
    buggy={
        "mask_inverted": numpy_cross_attend_inverted,
        "key_padding_as_2d": numpy_cross_attend_2d,
        "padding_off_by_one": numpy_cross_attend_off_by_one,
    },
    allowed=("course_utils.numpy_attention:multi_head_attention",),
    hints=(
        "Where do the queries come from, and where the keys and values? Which encoder positions may a decoder "
        "position read?",
        "Queries from decoder_states; keys and values both from encoder_states; a mask that is True at the real "
        "encoder positions and broadcasts against the (batch, heads, q_len, k_len) scores.",
        "Position j is real when j < length: compare a row of positions with a column of lengths to get (batch, "
        "k_len), then add the heads and queries axes: (batch, 1, 1, k_len).",
    ),
    output_names=("output", "weights"),
)


# ---- 03.heads_by_weight_slices(query, key, value, W_q, W_k, W_v, W_o, num_heads) -> output ------------------
def slices_cases():
    rng = np.random.default_rng(4)
    d_model = 8
    W = [rng.normal(0, 1 / np.sqrt(d_model), size=(d_model, d_model)) for _ in range(4)]
    x = rng.normal(size=(2, 5, d_model))
    return [
        Case((x, x, x, *W, 2), "self-attention"),
        Case((rng.normal(size=(1, 3, d_model)), *[rng.normal(size=(1, 6, d_model))] * 2, *W, 4), "cross-attention"),
        Case((x, x, x, *W, 1), "one head"),
        Case((60 * x[:1, :3], 60 * x[1:, :4], x[1:, :4], *W, 4), "scores in the thousands"),
    ]


def heads_by_weight_slices(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    return numpy_attention.multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads)[0]


def heads_by_slices_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_head = W_q.shape[0] // num_heads
    output = 0.0
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        # (batch, len, d_model) @ (d_model, d_head) -> (batch, len, d_head)
        q, k, v = query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols]
        weights = _softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(d_head))  # (batch, q_len, k_len)
        output = output + (weights @ v) @ W_o[cols]  # (batch, q_len, d_head) @ (d_head, d_model)
    return output


def heads_by_slices_einsum(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_model = W_q.shape[0]
    d_head = d_model // num_heads
    per_head = [W.reshape(d_model, num_heads, d_head) for W in (W_q, W_k, W_v)]  # (d_model, heads, d_head)
    q = np.einsum("bsm,mhd->bhsd", query, per_head[0])
    k = np.einsum("bsm,mhd->bhsd", key, per_head[1])
    v = np.einsum("bsm,mhd->bhsd", value, per_head[2])
    weights = _softmax(np.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d_head))
    heads_out = np.einsum("bhqk,bhkd->bhqd", weights, v)
    return np.einsum("bhqd,hdm->bqm", heads_out, W_o.reshape(num_heads, d_head, d_model))


HEADS_BY_WEIGHT_SLICES = Exercise(
    id="03.heads_by_weight_slices",
    section="03 · Step 4 · mix the heads with `W_o`",
    make_cases=slices_cases,
    reference=heads_by_weight_slices,
    variants=(heads_by_slices_loop, heads_by_slices_einsum),
    hints=(
        "Which columns of W_q, W_k and W_v does head h use, and which rows of W_o? Could you compute one head with "
        "those slices alone?",
        "Loop over the heads: attend with head h's slices of W_q, W_k, W_v (scaled by sqrt(d_head)), then send the "
        "head's output through its own rows of W_o, and add the heads' contributions up.",
        "cols = slice(h * d_head, (h + 1) * d_head): query @ W_q[:, cols] is head h's queries, and head h's "
        "contribution to the output is (its output) @ W_o[cols]. Start from output = 0.",
    ),
    atol=1e-10,
)


# ---- 03.cross_attention_flops(batch, q_len, k_len, d_model, num_heads) -> (projections, core) -------------
def cross_attention_flops(batch, q_len, k_len, d_model, num_heads):
    """Measured, not computed: run a real layer under torch's FLOP counter and read its matmuls."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from course_utils import attention
    from course_utils.exercises.cases import torch_seeded

    with torch_seeded(0):
        mha = attention.MultiHeadAttention(d_model, num_heads).eval()
        query, memory = torch.randn(batch, q_len, d_model), torch.randn(batch, k_len, d_model)
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


def flops_one_length(batch, q_len, k_len, d_model, num_heads):
    return 8 * batch * q_len * d_model**2, 4 * batch * q_len**2 * d_model


def flops_multiply_add_as_one(batch, q_len, k_len, d_model, num_heads):
    return 2 * batch * (q_len + k_len) * d_model**2, 2 * batch * q_len * k_len * d_model


def flops_no_out_proj(batch, q_len, k_len, d_model, num_heads):
    return 2 * batch * (q_len + 2 * k_len) * d_model**2, 4 * batch * q_len * k_len * d_model


CROSS_ATTENTION_FLOPS = Exercise(
    id="03.cross_attention_flops",
    section="03 · Cost: projections versus the attention core",
    make_cases=lambda: [(1, 3, 7, 16, 4), (2, 5, 2, 8, 2), (3, 1, 10, 32, 8), (1, 6, 9, 24, 3)],
    reference=cross_attention_flops,
    variants=(flops_formula, flops_per_matmul),
    buggy={
        "flops_one_length": flops_one_length,
        "flops_multiply_add_as_one": flops_multiply_add_as_one,
        "flops_no_out_proj": flops_no_out_proj,
    },
    hints=(
        "Write down the shape of every matrix product the layer runs: the four projections, the scores, and "
        "weights @ values. Which run on the q_len query positions and which on the k_len key positions?",
        "(m, k) @ (k, n) costs 2·m·k·n FLOPs (a multiply and an add per term), times batch. W_q and W_o run on "
        "the queries, W_k and W_v on the keys.",
        "The projections are four (len, d_model) @ (d_model, d_model) products; per head the scores are (q_len, "
        "d_head) @ (d_head, k_len), and the heads together add up to d_model.",
    ),
    output_names=("projections", "core"),
    atol=0,
    rtol=0,
)

EXERCISES = [MY_SPLIT_HEADS, COUNT_ATTENTION_PARAMETERS, CROSS_ATTEND, HEADS_BY_WEIGHT_SLICES, CROSS_ATTENTION_FLOPS]

PREDICTIONS = [
    Prediction(
        id="03.parameters_d512",
        question="How many parameters do the four projections (with biases) have for d_model = 512?",
        kind="number",
        answer=4 * 512 * 512 + 4 * 512,
        section="03 · Parameters: the same for any number of heads",
        known_wrong=(
            KnownWrong(4 * 512 * 512, "params_no_bias", "the four matrices without their biases (4·512²)"),
            KnownWrong(3 * 512 * 512, "params_three_matrices", "the tutorial's 3·512²: W_o and the biases are missing"),
            KnownWrong(3 * 512 * 512 + 3 * 512, "params_no_w_o", "three projections with biases: W_o is missing"),
            KnownWrong(
                8 * (4 * 512 * 512 + 4 * 512),
                "params_per_head",
                "the count times 8: the heads share the four matrices, they do not each have their own",
            ),
        ),
    ),
    Prediction(
        id="03.split_shape",
        question="Q is (2, 5, 8) with 2 heads: what is the shape of Q.reshape(batch, seq_len, num_heads, d_head)"
        ".transpose(0, 2, 1, 3)?",
        kind="shape",
        answer=(2, 2, 5, 4),
        section="03 · Step 2 · split into heads",
        known_wrong=(
            KnownWrong(
                (2, 5, 2, 4),
                "split_no_transpose",
                "the shape before the transpose: the reshape alone leaves seq_len in front of heads",
            ),
            KnownWrong((2, 2, 5, 8), "d_head_is_d_model", "a head of d_model features: each head gets d_model / heads"),
        ),
    ),
    Prediction(
        id="03.cross_weights_shape",
        question="batch 2, 2 heads, 3 queries, 6 keys: what is the shape of the attention weights?",
        kind="shape",
        answer=(2, 2, 3, 6),
        section="03 · Cross-attention: `q_len ≠ k_len`",
        known_wrong=(
            KnownWrong((2, 2, 6, 3), "weights_transposed", "transposed: one row per query (3), one column per key (6)"),
            KnownWrong((2, 3, 6), "weights_without_heads", "without the heads axis: each head has its own weights"),
            KnownWrong((2, 3, 8), "output_shape", "the output's shape; the weights have one entry per (query, key)"),
        ),
    ),
]
