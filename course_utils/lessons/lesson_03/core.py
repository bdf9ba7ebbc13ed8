"""Lesson 03's first exercises: split and merge the heads, the whole layer, its per-head loop, the parameter count
(``03.split_heads``, ``03.merge_heads``, ``03.multi_head_attention``, ``03.multi_head_attention_loop``,
``03.count_attention_parameters``).

Moved out of ``exercises.py`` whole (issue 26 section 5): one block per exercise, as there; ``exercises.py`` lists
them in ``EXERCISES``. The section titles and helpers both modules use got public names (``_S_SPLIT`` is
``SECTION_SPLIT``, ..., ``_weights`` ``projection_weights``, ``_split`` ``split_into_heads``, ``_merge``
``merge_from_heads``, ``_attend`` ``attend_per_head``).
"""

from __future__ import annotations

import math

import numpy as np

from course_utils import numpy_attention
from course_utils.checking.model import Case, Exercise

__all__ = [
    "SPLIT_HEADS",
    "MERGE_HEADS",
    "MULTI_HEAD_ATTENTION",
    "MULTI_HEAD_ATTENTION_LOOP",
    "COUNT_ATTENTION_PARAMETERS",
    "split_heads",
    "merge_heads",
    "multi_head_attention",
    "multi_head_attention_loop",
    "count_layer_parameters",
    "COUNT_FORBIDDEN",
]

SECTION_SPLIT = "03 · Step 2 · split into heads"
SECTION_MERGE = "03 · Step 4 · merge the heads"
SECTION_LAYER = "03 · The whole layer in one function"
SECTION_LOOP = "03 · One head at a time: the heads as slices of the weights"
SECTION_PARAMS = "03 · Parameters: does the number of heads change them?"
SECTION_COUNT = "03 · Count them for any layer"
SECTION_COST = "03 · Cost: projections versus the attention core"
SECTION_CROSS = "03 · Cross-attention: `q_len ≠ k_len`"
SECTION_GQA = "03 · Exercise 1 · Grouped-query attention"
SECTION_BLOCK = "03 · Exercise 2 · Where a whole block's crossover lies"


def _softmax(x, axis=-1):
    """A stable softmax whose fully masked rows (all -inf) give zeros, for the variants and buggy versions."""
    top = np.max(x, axis=axis, keepdims=True)
    exps = np.exp(x - np.where(np.isfinite(top), top, 0.0))
    total = exps.sum(axis=axis, keepdims=True)
    return np.divide(exps, total, out=np.zeros_like(exps), where=total > 0)


def projection_weights(d_model, seed, widths=None):
    """Four projection matrices drawn with std 1 / sqrt(d_model), as the lesson draws them."""
    rng = np.random.default_rng(seed)
    widths = widths or (d_model,) * 4
    shapes = [(d_model, widths[0]), (d_model, widths[1]), (d_model, widths[2]), (widths[3], d_model)]
    return [rng.normal(0, 1 / np.sqrt(d_model), size=shape) for shape in shapes]


# ---- 03.split_heads(x, num_heads) -> (batch, heads, length, d_head) ----------------------------------------------
def split_cases():
    rng = np.random.default_rng(1)
    return [
        Case((rng.normal(size=(2, 5, 8)), 2)),
        Case((rng.normal(size=(1, 7, 12)), 3), "another length, another head count"),
        Case((rng.normal(size=(3, 1, 6)), 6), "one position, d_head = 1"),
        Case((rng.normal(size=(2, 6, 20)), 4)),
    ]


def split_heads(x, num_heads):
    return numpy_attention.split_heads(x, num_heads)  # (batch, heads, length, d_head)


def split_reshape_transpose(x, num_heads):
    batch, length, d_model = x.shape
    # (batch, length, d_model) -> (batch, length, heads, d_head) -> (batch, heads, length, d_head)
    return x.reshape(batch, length, num_heads, d_model // num_heads).transpose(0, 2, 1, 3)


def split_swapaxes(x, num_heads):
    batch, length, d_model = x.shape
    return np.swapaxes(x.reshape(batch, length, num_heads, -1), 1, 2)


def split_stack(x, num_heads):
    d_head = x.shape[-1] // num_heads
    # head h takes features h * d_head .. (h + 1) * d_head - 1 of every position
    return np.stack([x[..., h * d_head : (h + 1) * d_head] for h in range(num_heads)], axis=1)


def split_moveaxis(x, num_heads):
    batch, length, d_model = x.shape
    return np.moveaxis(x.reshape(batch, length, num_heads, d_model // num_heads), 2, 1)


def split_without_transpose(x, num_heads):
    batch, length, d_model = x.shape
    return x.reshape(batch, length, num_heads, d_model // num_heads)  # heads still behind the positions


SPLIT_HEADS = Exercise(
    id="03.split_heads",
    fresh=lambda batch, length, heads, d_head: [
        (np.random.default_rng(1).normal(size=(batch, length, heads * d_head)), heads)
    ],
    noun="split",
    section=SECTION_SPLIT,
    make_cases=split_cases,
    reference=split_heads,
    variants=(split_reshape_transpose, split_swapaxes, split_stack, split_moveaxis),
    buggy={"split_no_transpose": split_without_transpose},
    misconceptions=("split_single_reshape",),
    hints=(
        "Head h needs its own slice of every position's features. Which axis do you cut, and where must the new "
        "heads axis end up so that attention sees (positions, d_head) in its last two axes?",
        "Two moves: cut the feature axis into (heads, d_head), each position keeping its own features together; "
        "then bring the heads axis in front of the positions.",
        "x.reshape(batch, length, num_heads, d_head) has the heads on axis 2. Which transpose moves them to axis 1 "
        "and keeps the other axes in order? (A single reshape straight to the final shape mixes positions.)",
    ),
)


# ---- 03.merge_heads(x) -> (batch, length, heads * d_head) --------------------------------------------------------
def merge_cases():
    rng = np.random.default_rng(2)
    return [
        Case((rng.normal(size=(3, 2, 5, 4)),)),
        Case((rng.normal(size=(1, 3, 7, 4)),), "three heads"),
        Case((rng.normal(size=(3, 6, 1, 1)),), "one position, d_head = 1"),
        Case((rng.normal(size=(2, 4, 6, 5)),)),
    ]


def merge_heads(x):
    return numpy_attention.merge_heads(x)  # (batch, length, heads * d_head)


def merge_transpose_reshape(x):
    batch, heads, length, d_head = x.shape
    # (batch, heads, length, d_head) -> (batch, length, heads, d_head) -> (batch, length, heads * d_head)
    return x.transpose(0, 2, 1, 3).reshape(batch, length, heads * d_head)


def merge_concatenate(x):
    return np.concatenate([x[:, h] for h in range(x.shape[1])], axis=-1)  # heads side by side


def merge_swapaxes(x):
    batch, heads, length, d_head = x.shape
    return np.swapaxes(x, 1, 2).reshape(batch, length, -1)


def merge_without_transpose(x):
    batch, heads, length, d_head = x.shape
    return x.reshape(batch, length, heads * d_head)  # heads and positions mixed


MERGE_HEADS = Exercise(
    id="03.merge_heads",
    fresh=lambda batch, heads, length, d_head: [
        (np.random.default_rng(1).normal(size=(batch, heads, length, d_head)),)
    ],
    noun="merge",
    section=SECTION_MERGE,
    make_cases=merge_cases,
    reference=merge_heads,
    variants=(merge_transpose_reshape, merge_concatenate, merge_swapaxes),
    buggy={"merge_no_transpose": merge_without_transpose},
    hints=(
        "split_heads made two moves. Which one must you undo first?",
        "Bring the heads axis back behind the positions, next to d_head; then join (heads, d_head) into one "
        "feature axis, head 0's features first.",
        "After x.transpose(0, 2, 1, 3) the shape is (batch, length, heads, d_head). Which reshape joins the last two "
        "axes?",
    ),
)


# ---- 03.multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None) -> (output, weights) --
def layer_cases():
    rng = np.random.default_rng(3)
    x6 = rng.normal(size=(4, 6, 6))  # seq_len == d_model: W_o @ concat runs here, and is wrong
    x = rng.normal(size=(2, 5, 8))
    q12, kv12 = rng.normal(size=(2, 3, 12)), rng.normal(size=(2, 7, 12))
    q10, kv10 = rng.normal(size=(1, 6, 10)), rng.normal(size=(1, 2, 10))
    q_pad, kv_pad = rng.normal(size=(3, 2, 12)), rng.normal(size=(3, 7, 12))
    lengths = np.array([7, 4, 0])  # a padded sequence, and an empty one
    pad = (np.arange(7)[None, :] < lengths[:, None])[:, None, None, :]  # (batch, 1, 1, k_len)
    return [
        Case((x6, x6, x6, *projection_weights(6, 30), 2), "self-attention, seq_len == d_model"),
        Case((x, x, x, *projection_weights(8, 31), 2), "self-attention"),
        Case((q12, kv12, kv12, *projection_weights(12, 32), 3), "cross-attention, 3 queries and 7 keys"),
        Case(
            (60 * q10, 60 * kv10, kv10, *projection_weights(10, 33), 5),
            "fewer keys than queries, scores in the thousands",
        ),
        Case((q_pad, kv_pad, kv_pad, *projection_weights(12, 34), 4, pad), "padded keys: lengths 7, 4 and 0"),
    ]


def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    return numpy_attention.multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=mask)


def split_into_heads(x, num_heads):
    batch, length, width = x.shape
    return x.reshape(batch, length, num_heads, width // num_heads).transpose(0, 2, 1, 3)


def merge_from_heads(x):
    batch, heads, length, d_head = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, length, heads * d_head)


def attend_per_head(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])  # (..., q_len, k_len)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = _softmax(scores)
    return weights @ V, weights


def layer_by_hand(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q, K, V = (
        split_into_heads(query @ W_q, num_heads),
        split_into_heads(key @ W_k, num_heads),
        split_into_heads(value @ W_v, num_heads),
    )
    heads_out, weights = attend_per_head(Q, K, V, mask)  # (batch, heads, q_len, d_head)
    return merge_from_heads(heads_out) @ W_o, weights


def layer_einsum(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    d_model = W_q.shape[0]
    d_head = d_model // num_heads
    q, k, v = (
        np.einsum("bsm,mhd->bhsd", x, W.reshape(d_model, num_heads, d_head))
        for x, W in ((query, W_q), (key, W_k), (value, W_v))
    )
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d_head)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = _softmax(scores)
    heads_out = np.einsum("bhqk,bhkd->bhqd", weights, v)
    return np.einsum("bhqd,hdm->bqm", heads_out, W_o.reshape(num_heads, d_head, d_model)), weights


def layer_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    d_head = W_q.shape[0] // num_heads
    outputs, weights = [], []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        head_mask = None if mask is None else mask[:, h if mask.shape[1] > 1 else 0]  # (batch, q_len | 1, k_len)
        out_h, w_h = attend_per_head(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols], head_mask)
        outputs.append(out_h)
        weights.append(w_h)
    return np.concatenate(outputs, axis=-1) @ W_o, np.stack(weights, axis=1)


def layer_split_without_transpose(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    def split(x):  # (batch, length, heads, d_head): the heads stay behind the positions
        batch, length, width = x.shape
        return x.reshape(batch, length, num_heads, width // num_heads)

    heads_out, weights = numpy_attention.scaled_dot_product_attention(
        split(query @ W_q), split(key @ W_k), split(value @ W_v), mask
    )
    return heads_out.reshape(query.shape) @ W_o, weights


def layer_merge_without_transpose(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q, K, V = (
        split_into_heads(query @ W_q, num_heads),
        split_into_heads(key @ W_k, num_heads),
        split_into_heads(value @ W_v, num_heads),
    )
    heads_out, weights = numpy_attention.scaled_dot_product_attention(Q, K, V, mask)
    return heads_out.reshape(query.shape) @ W_o, weights  # (batch, heads, q_len, d_head) read as (batch, q_len, ...)


def layer_w_o_on_left(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q, K, V = (
        split_into_heads(query @ W_q, num_heads),
        split_into_heads(key @ W_k, num_heads),
        split_into_heads(value @ W_v, num_heads),
    )
    heads_out, weights = numpy_attention.scaled_dot_product_attention(Q, K, V, mask)
    return W_o @ merge_from_heads(heads_out), weights  # runs only when q_len == d_model


def layer_keys_split_with_query_length(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    batch, q_len, d_model = query.shape

    def split(x):  # every input split with the query's length
        return x.reshape(batch, q_len, num_heads, d_model // num_heads).transpose(0, 2, 1, 3)

    heads_out, weights = numpy_attention.scaled_dot_product_attention(
        split(query @ W_q), split(key @ W_k), split(value @ W_v), mask
    )
    return merge_from_heads(heads_out) @ W_o, weights


def layer_mask_inverted(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    return numpy_attention.multi_head_attention(
        query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None if mask is None else ~mask
    )


MULTI_HEAD_ATTENTION = Exercise(
    id="03.multi_head_attention",
    fresh=lambda batch, q_len, k_len, heads, d_head: [
        (
            np.random.default_rng(1).normal(size=(batch, q_len, heads * d_head)),
            *(2 * [np.random.default_rng(2).normal(size=(batch, k_len, heads * d_head))]),
            *projection_weights(heads * d_head, 3),
            heads,
        )
    ],
    noun="multi-head attention layer",
    section=SECTION_LAYER,
    make_cases=layer_cases,
    reference=multi_head_attention,
    variants=(layer_by_hand, layer_einsum, layer_loop),
    buggy={
        "split_no_transpose": layer_split_without_transpose,
        "merge_no_transpose": layer_merge_without_transpose,
        "w_o_on_left": layer_w_o_on_left,
        "keys_split_with_query_length": layer_keys_split_with_query_length,
        "mask_inverted": layer_mask_inverted,
    },
    misconceptions=("split_single_reshape", "no_output_projection", "scaled_by_sqrt_d_model", "no_scaling"),
    hints=(
        "Which of the five steps above depend on the length of their input? Whose length is it for the keys and "
        "the values?",
        "Project each input with its own matrix, split each at its own length, attend in every head at once "
        "(passing the mask on), merge, then multiply by W_o from the right. Return the weights too.",
        "split_heads(query @ W_q, num_heads) is (batch, heads, q_len, d_head); build the keys and values the same way "
        "from key and value. Lesson 01's numpy_attention.scaled_dot_product_attention takes the mask as its fourth "
        "argument.",
    ),
    output_names=("output", "weights"),
    atol=1e-10,
    rtol=1e-8,
)


# ---- 03.multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads) -> output ---------------------
def loop_cases():
    rng = np.random.default_rng(4)
    x6 = rng.normal(size=(4, 6, 6))  # seq_len == d_model: W_o @ concat runs here, and is wrong
    x = rng.normal(size=(2, 5, 8))
    W8 = projection_weights(8, 41)
    q, kv = rng.normal(size=(1, 3, 8)), rng.normal(size=(1, 6, 8))
    q12, kv12 = rng.normal(size=(2, 3, 12)), rng.normal(size=(2, 5, 12))
    return [
        Case((x6, x6, x6, *projection_weights(6, 40), 2), "self-attention, seq_len == d_model"),
        Case((x, x, x, *W8, 2), "self-attention"),
        Case((q, kv, kv, *W8, 4), "cross-attention, 3 queries and 6 keys"),
        Case((x, x, x, *W8, 1), "one head"),
        Case((q12, kv12, kv12, *projection_weights(12, 42), 3), "cross-attention, 3 heads"),
        Case((60 * x[:1, :3], 60 * kv12[1:, :4, :8], kv12[1:, :4, :8], *W8, 4), "scores in the thousands"),
    ]


def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_head = W_q.shape[0] // num_heads
    output = 0.0
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)  # head h's columns of W_q, W_k, W_v and rows of W_o
        head_out, _ = numpy_attention.scaled_dot_product_attention(
            query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols]
        )
        output = output + head_out @ W_o[cols]  # (batch, q_len, d_head) @ (d_head, d_model)
    return output


def loop_terms_summed(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_head = W_q.shape[0] // num_heads
    terms = []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        q, k, v = query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols]
        weights = _softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(d_head))  # (batch, q_len, k_len)
        terms.append(weights @ v @ W_o[cols])
    return sum(terms)


def loop_concatenated(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_head = W_q.shape[0] // num_heads
    heads = []
    for h in range(num_heads):
        lo, hi = h * d_head, (h + 1) * d_head
        out_h, _ = attend_per_head(query @ W_q[:, lo:hi], key @ W_k[:, lo:hi], value @ W_v[:, lo:hi])
        heads.append(out_h)
    return np.concatenate(heads, axis=-1) @ W_o


def loop_no_output_projection(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_head = W_q.shape[0] // num_heads
    heads = []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        out_h, _ = attend_per_head(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols])
        heads.append(out_h)
    return np.concatenate(heads, axis=-1)  # never mixed by W_o


def loop_scaled_by_sqrt_d_model(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_model = W_q.shape[0]
    d_head = d_model // num_heads
    output = 0.0
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        q, k, v = query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols]
        weights = _softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(d_model))
        output = output + weights @ v @ W_o[cols]
    return output


def loop_w_o_on_left(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_head = W_q.shape[0] // num_heads
    heads = []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        out_h, _ = attend_per_head(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols])
        heads.append(out_h)
    return W_o @ np.concatenate(heads, axis=-1)  # runs only when q_len == d_model


MULTI_HEAD_ATTENTION_LOOP = Exercise(
    id="03.multi_head_attention_loop",
    fresh=lambda batch, q_len, k_len, heads, d_head: [
        (
            np.random.default_rng(1).normal(size=(batch, q_len, heads * d_head)),
            *(2 * [np.random.default_rng(2).normal(size=(batch, k_len, heads * d_head))]),
            *projection_weights(heads * d_head, 3),
            heads,
        )
    ],
    constraint="one_head_slice",
    noun="per-head loop",
    section=SECTION_LOOP,
    make_cases=loop_cases,
    reference=multi_head_attention_loop,
    variants=(loop_terms_summed, loop_concatenated),
    buggy={
        "no_output_projection": loop_no_output_projection,
        "scaled_by_sqrt_d_model": loop_scaled_by_sqrt_d_model,
        "w_o_on_left": loop_w_o_on_left,
    },
    misconceptions=("no_scaling",),
    hints=(
        "Which columns of W_q, W_k and W_v does head h use? Which rows of W_o multiply head h's output?",
        "Loop over h: project the inputs with head h's column slices, attend (scaled by sqrt(d_head)), and add the "
        "head's term, its output times its rows of W_o. Start the sum at 0.",
        "Head h owns the columns h·d_head up to (h + 1)·d_head of W_q, W_k and W_v (a slice). In concat @ W_o, "
        "which rows of W_o meet head h's d_head output features? That product is head h's (batch, q_len, d_model) "
        "term.",
    ),
    atol=1e-10,
    rtol=1e-8,
)


# ---- 03.count_attention_parameters(d_model, num_heads, d_head=None, bias=True) -> int ---------------------------
COUNT_FORBIDDEN = (
    "course_utils.attention:MultiHeadAttention.__init__",
    "torch.nn:MultiheadAttention.__init__",
)


def count_cases():
    return [
        # no configuration the lesson prints a count for (d_model 512, BERT-base, GPT-3, T5-11B)
        Case((640, 8, None, True)),
        Case((640, 1, None, True), "one head"),
        Case((896, 14, None, True)),
        Case((80, 4, None, False), "no biases"),
        Case((1536, 96, 128, False), "96 heads of 128 features, no biases: heads · d_head ≠ d_model"),
        Case((3072, 16, 256, True), "16 heads of 256 features: heads · d_head = 4096 ≠ d_model"),
        Case((96, 3, 40, True), "3 heads of 40 features"),
    ]


def count_layer_parameters(d_model, num_heads, d_head=None, bias=True):
    d_head = d_model // num_heads if d_head is None else d_head
    width = num_heads * d_head  # the projected features, all heads together
    weights = 3 * d_model * width + width * d_model  # W_q, W_k, W_v: (d_model, width); W_o: (width, d_model)
    biases = 3 * width + d_model if bias else 0  # each bias as long as its projection's output
    return weights + biases


def count_by_shapes(d_model, num_heads, d_head=None, bias=True):
    width = num_heads * (d_head or d_model // num_heads)
    shapes = [(d_model, width)] * 3 + [(width, d_model)]  # W_q, W_k, W_v, W_o
    total = sum(rows * cols for rows, cols in shapes)
    if bias:
        total += sum(cols for _, cols in shapes)  # one bias per output feature
    return total


def count_per_head(d_model, num_heads, d_head=None, bias=True):
    if d_head is None:
        d_head = d_model // num_heads
    total = 0
    for _ in range(num_heads):  # each head's slices: 3 column blocks in, one row block of W_o out
        total += 3 * d_model * d_head + d_head * d_model
        if bias:
            total += 3 * d_head  # its share of the three input biases
    return total + (d_model if bias else 0)  # W_o's bias is shared by all heads


def count_three_matrices(d_model, num_heads, d_head=None, bias=True):
    width = num_heads * (d_head or d_model // num_heads)
    return 3 * d_model * width


def count_ignore_bias_flag(d_model, num_heads, d_head=None, bias=True):
    width = num_heads * (d_head or d_model // num_heads)
    return 4 * d_model * width + 3 * width + d_model


def count_no_biases(d_model, num_heads, d_head=None, bias=True):
    width = num_heads * (d_head or d_model // num_heads)
    return 4 * d_model * width


def count_heads_multiply(d_model, num_heads, d_head=None, bias=True):
    width = num_heads * (d_head or d_model // num_heads)
    one = 4 * d_model * width + (3 * width + d_model if bias else 0)
    return num_heads * one


def count_ignore_d_head(d_model, num_heads, d_head=None, bias=True):
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def count_w_o_bias_width(d_model, num_heads, d_head=None, bias=True):
    width = num_heads * (d_head or d_model // num_heads)
    return 4 * d_model * width + (4 * width if bias else 0)


COUNT_ATTENTION_PARAMETERS = Exercise(
    id="03.count_attention_parameters",
    fresh=lambda heads, d_head, other: [(heads * d_head, heads, None, True), (heads * d_head, heads, other, False)],
    noun="parameter count",
    section=SECTION_COUNT,
    make_cases=count_cases,
    reference=count_layer_parameters,
    variants=(count_by_shapes, count_per_head),
    buggy={
        "params_three_matrices": count_three_matrices,
        "params_ignore_bias_flag": count_ignore_bias_flag,
        "params_no_biases": count_no_biases,
        "params_heads_multiply": count_heads_multiply,
        "params_ignore_d_head": count_ignore_d_head,
        "params_w_o_bias_width": count_w_o_bias_width,
    },
    forbidden=COUNT_FORBIDDEN,  # efficient.mha_param_count has no d_head: it cannot pass the heads · d_head cases
    hints=(
        "List the four matrices with their shapes, and the four bias vectors with theirs. Where do num_heads and "
        "d_head enter?",
        "W_q, W_k and W_v map d_model features to num_heads · d_head; W_o maps num_heads · d_head back to d_model. "
        "Each bias is as long as its projection's output.",
        "Check yourself: d_model = 512, 8 heads of 64 with biases gives 1,050,624; 128 heads of 128 on d_model = "
        "1024 without biases gives 4 · 1024 · 16,384.",
    ),
    atol=0,
    rtol=0,
)
