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

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "SPLIT_HEADS",
    "MERGE_HEADS",
    "MULTI_HEAD_ATTENTION",
    "MULTI_HEAD_ATTENTION_LOOP",
    "COUNT_ATTENTION_PARAMETERS",
    "ATTENTION_FLOPS",
    "GROUPED_QUERY_ATTENTION",
    "BLOCK_CROSSOVER",
    "split_heads",
    "merge_heads",
    "multi_head_attention",
    "multi_head_attention_loop",
    "count_layer_parameters",
    "attention_flops",
    "grouped_query_attention",
    "block_crossover",
    "COUNT_FORBIDDEN",
]

_S_SPLIT = "03 · Step 2 · split into heads"
_S_MERGE = "03 · Step 4 · merge the heads"
_S_LAYER = "03 · The whole layer in one function"
_S_LOOP = "03 · One head at a time: the heads as slices of the weights"
_S_PARAMS = "03 · Parameters: does the number of heads change them?"
_S_COUNT = "03 · Count them for any layer"
_S_COST = "03 · Cost: projections versus the attention core"
_S_CROSS = "03 · Cross-attention: `q_len ≠ k_len`"
_S_GQA = "03 · Exercise 1 · Grouped-query attention"
_S_BLOCK = "03 · Exercise 2 · Where a whole block's crossover lies"


def _softmax(x, axis=-1):
    """A stable softmax whose fully masked rows (all -inf) give zeros, for the variants and buggy versions."""
    top = np.max(x, axis=axis, keepdims=True)
    exps = np.exp(x - np.where(np.isfinite(top), top, 0.0))
    total = exps.sum(axis=axis, keepdims=True)
    return np.divide(exps, total, out=np.zeros_like(exps), where=total > 0)


def _weights(d_model, seed, widths=None):
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
    section=_S_SPLIT,
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
    section=_S_MERGE,
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
        Case((x6, x6, x6, *_weights(6, 30), 2), "self-attention, seq_len == d_model"),
        Case((x, x, x, *_weights(8, 31), 2), "self-attention"),
        Case((q12, kv12, kv12, *_weights(12, 32), 3), "cross-attention, 3 queries and 7 keys"),
        Case((60 * q10, 60 * kv10, kv10, *_weights(10, 33), 5), "fewer keys than queries, scores in the thousands"),
        Case((q_pad, kv_pad, kv_pad, *_weights(12, 34), 4, pad), "padded keys: lengths 7, 4 and 0"),
    ]


def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    return numpy_attention.multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=mask)


def _split(x, num_heads):
    batch, length, width = x.shape
    return x.reshape(batch, length, num_heads, width // num_heads).transpose(0, 2, 1, 3)


def _merge(x):
    batch, heads, length, d_head = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, length, heads * d_head)


def _attend(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])  # (..., q_len, k_len)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = _softmax(scores)
    return weights @ V, weights


def layer_by_hand(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q, K, V = _split(query @ W_q, num_heads), _split(key @ W_k, num_heads), _split(value @ W_v, num_heads)
    heads_out, weights = _attend(Q, K, V, mask)  # (batch, heads, q_len, d_head)
    return _merge(heads_out) @ W_o, weights


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
        out_h, w_h = _attend(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols], head_mask)
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
    Q, K, V = _split(query @ W_q, num_heads), _split(key @ W_k, num_heads), _split(value @ W_v, num_heads)
    heads_out, weights = numpy_attention.scaled_dot_product_attention(Q, K, V, mask)
    return heads_out.reshape(query.shape) @ W_o, weights  # (batch, heads, q_len, d_head) read as (batch, q_len, ...)


def layer_w_o_on_left(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q, K, V = _split(query @ W_q, num_heads), _split(key @ W_k, num_heads), _split(value @ W_v, num_heads)
    heads_out, weights = numpy_attention.scaled_dot_product_attention(Q, K, V, mask)
    return W_o @ _merge(heads_out), weights  # runs only when q_len == d_model


def layer_keys_split_with_query_length(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    batch, q_len, d_model = query.shape

    def split(x):  # every input split with the query's length
        return x.reshape(batch, q_len, num_heads, d_model // num_heads).transpose(0, 2, 1, 3)

    heads_out, weights = numpy_attention.scaled_dot_product_attention(
        split(query @ W_q), split(key @ W_k), split(value @ W_v), mask
    )
    return _merge(heads_out) @ W_o, weights


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
            *_weights(heads * d_head, 3),
            heads,
        )
    ],
    noun="multi-head attention layer",
    section=_S_LAYER,
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
    W8 = _weights(8, 41)
    q, kv = rng.normal(size=(1, 3, 8)), rng.normal(size=(1, 6, 8))
    q12, kv12 = rng.normal(size=(2, 3, 12)), rng.normal(size=(2, 5, 12))
    return [
        Case((x6, x6, x6, *_weights(6, 40), 2), "self-attention, seq_len == d_model"),
        Case((x, x, x, *W8, 2), "self-attention"),
        Case((q, kv, kv, *W8, 4), "cross-attention, 3 queries and 6 keys"),
        Case((x, x, x, *W8, 1), "one head"),
        Case((q12, kv12, kv12, *_weights(12, 42), 3), "cross-attention, 3 heads"),
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
        out_h, _ = _attend(query @ W_q[:, lo:hi], key @ W_k[:, lo:hi], value @ W_v[:, lo:hi])
        heads.append(out_h)
    return np.concatenate(heads, axis=-1) @ W_o


def loop_no_output_projection(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_head = W_q.shape[0] // num_heads
    heads = []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        out_h, _ = _attend(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols])
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
        out_h, _ = _attend(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols])
        heads.append(out_h)
    return W_o @ np.concatenate(heads, axis=-1)  # runs only when q_len == d_model


MULTI_HEAD_ATTENTION_LOOP = Exercise(
    id="03.multi_head_attention_loop",
    fresh=lambda batch, q_len, k_len, heads, d_head: [
        (
            np.random.default_rng(1).normal(size=(batch, q_len, heads * d_head)),
            *(2 * [np.random.default_rng(2).normal(size=(batch, k_len, heads * d_head))]),
            *_weights(heads * d_head, 3),
            heads,
        )
    ],
    constraint="one_head_slice",
    noun="per-head loop",
    section=_S_LOOP,
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
"""Building the layer and counting its parameters skips the exercise."""


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
    section=_S_COUNT,
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
    section=_S_COST,
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
        Case((x, x, x, *_weights(8, 50, (8, 4, 4, 8)), 4, 2), "4 query heads, 2 kv heads"),
        Case((q12, kv12, kv12, *_weights(12, 51, (12, 6, 6, 12)), 6, 3), "cross-attention, 6 query heads, 3 kv heads"),
        Case((x12, x12, x12, *_weights(12, 52, (12, 3, 3, 12)), 4, 1), "multi-query: one key/value head"),
        Case((q10, kv10, kv10, *_weights(10, 53), 2, 2), "as many key/value heads as query heads"),
        Case(
            (60 * x12[:, :3], 60 * kv12[:, :5], kv12[:, :5], *_weights(12, 54, (12, 6, 6, 12)), 4, 2),
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
        heads.append(_attend(q, k, v)[0])
    return np.concatenate(heads, axis=-1) @ W_o


def gqa_broadcast(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    batch, q_len, _ = query.shape
    group = num_heads // num_kv_heads
    Q = _split(query @ W_q, num_heads)  # (batch, heads, q_len, d_head)
    Q = Q.reshape(batch, num_kv_heads, group, q_len, -1)  # consecutive query heads grouped
    K = _split(key @ W_k, num_kv_heads)[:, :, None]  # (batch, kv_heads, 1, k_len, d_head)
    V = _split(value @ W_v, num_kv_heads)[:, :, None]
    out, _ = _attend(Q, K, V)  # (batch, kv_heads, group, q_len, d_head)
    return _merge(out.reshape(batch, num_heads, q_len, -1)) @ W_o


def gqa_tiled(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    group = num_heads // num_kv_heads
    Q = _split(query @ W_q, num_heads)
    K = np.tile(_split(key @ W_k, num_kv_heads), (1, group, 1, 1))  # kv heads 0, 1, 0, 1, ...: interleaved
    V = np.tile(_split(value @ W_v, num_kv_heads), (1, group, 1, 1))
    return _merge(_attend(Q, K, V)[0]) @ W_o


def gqa_keys_split_with_query_length(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    batch, q_len, _ = query.shape
    group = num_heads // num_kv_heads

    def split(x, heads):  # every input split with the query's length
        return x.reshape(batch, q_len, heads, -1).transpose(0, 2, 1, 3)

    K = np.repeat(split(key @ W_k, num_kv_heads), group, axis=1)
    V = np.repeat(split(value @ W_v, num_kv_heads), group, axis=1)
    return _merge(_attend(split(query @ W_q, num_heads), K, V)[0]) @ W_o


def gqa_no_output_projection(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    group = num_heads // num_kv_heads
    K = np.repeat(_split(key @ W_k, num_kv_heads), group, axis=1)
    V = np.repeat(_split(value @ W_v, num_kv_heads), group, axis=1)
    return _merge(_attend(_split(query @ W_q, num_heads), K, V)[0])  # never mixed by W_o


GROUPED_QUERY_ATTENTION = Exercise(
    id="03.grouped_query_attention",
    fresh=lambda batch, seq_len, kv_heads, group, d_head: [
        (
            *(3 * [np.random.default_rng(1).normal(size=(batch, seq_len, kv_heads * group * d_head))]),
            *_weights(
                kv_heads * group * d_head,
                3,
                (kv_heads * group * d_head, kv_heads * d_head, kv_heads * d_head, kv_heads * group * d_head),
            ),
            kv_heads * group,
            kv_heads,
        )
    ],
    noun="grouped-query attention",
    section=_S_GQA,
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
    section=_S_BLOCK,
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
        section=_S_SPLIT,
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
        section=_S_SPLIT,
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
        section=_S_PARAMS,
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
        section=_S_PARAMS,
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
        section=_S_CROSS,
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
        section=_S_CROSS,
        known_wrong=(
            KnownWrong(
                (2, 2, 6, 3), "weights_transposed", "transposed: think about which of queries and keys a row belongs to"
            ),
            KnownWrong((2, 3, 6), "weights_without_heads", "without the heads axis: each head has its own weights"),
            KnownWrong((2, 3, 8), "output_shape", "the output's shape: think about what one weight connects"),
        ),
    ),
]
