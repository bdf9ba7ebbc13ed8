"""Lesson 04 · Multi-head attention in PyTorch: the exercises and predictions of ``notebooks/04_multi_head_pytorch.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
The module a case hands in runs unpatched; the references compute the student's part themselves (the
forward pass through ``attention.scaled_dot_product_attention``; the masks through ``course_utils.masks``),
so the catalogue's patches apply to that part.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from course_utils import attention, masks
from course_utils.exercises._model import Case, Exercise, KnownWrong, Prediction
from course_utils.exercises.cases import torch_seeded

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "MY_FORWARD",
    "CROSS_ATTEND",
    "TORCH_CROSS_ATTEND",
    "WEIGHTS_FOR_ANALYSIS",
    "FUSE_QKV",
    "QK_MATRIX",
    "apply_fused",
    "weights_and_mode",
]

_MHA_FORWARD = "course_utils.attention:MultiHeadAttention.forward"


# ---- 04.my_forward(mha, query, key, value) -> output ----------------------------------------------------------
def forward_cases():
    with torch_seeded(1):
        # d_head = 4, sqrt(d_model) = 3.46: every scale mistake gives its own numbers; eval: no dropout
        mha = attention.MultiHeadAttention(d_model=12, num_heads=3, dropout=0.1).eval()
        return [
            Case((mha, torch.randn(2, 5, 12), torch.randn(2, 5, 12), torch.randn(2, 5, 12)), "self-attention"),
            Case(
                (mha, torch.randn(2, 3, 12), torch.randn(2, 7, 12), torch.randn(2, 7, 12)), "keys longer than queries"
            ),
            Case(
                (mha, torch.randn(1, 6, 12), torch.randn(1, 2, 12), torch.randn(1, 2, 12)), "keys shorter than queries"
            ),
            Case(
                (mha, 60 * torch.randn(2, 4, 12), 60 * torch.randn(2, 3, 12), torch.randn(2, 3, 12)),
                "scores in the thousands",
            ),
        ]


def _split(mha, x):
    batch, length, _ = x.shape  # each tensor's own length
    # (batch, length, d_model) -> (batch, length, heads, d_head) -> (batch, heads, length, d_head)
    return x.view(batch, length, mha.num_heads, mha.d_head).transpose(1, 2)


def my_forward(mha, query, key, value):
    queries, keys, values = (
        _split(mha, proj(x))
        for proj, x in zip((mha.query_proj, mha.key_proj, mha.value_proj), (query, key, value), strict=True)
    )
    heads_out, _ = attention.scaled_dot_product_attention(queries, keys, values)  # (batch, heads, q_len, d_head)
    batch, q_len, _ = query.shape
    # (batch, heads, q_len, d_head) -> (batch, q_len, heads, d_head) -> (batch, q_len, d_model)
    return mha.out_proj(heads_out.transpose(1, 2).reshape(batch, q_len, mha.d_model))


def forward_step_by_step(mha, query, key, value):
    def split(x):
        batch, length, _ = x.shape
        return x.view(batch, length, mha.num_heads, mha.d_head).transpose(1, 2)

    q, k, v = split(mha.query_proj(query)), split(mha.key_proj(key)), split(mha.value_proj(value))
    scores = q @ k.transpose(-2, -1) / math.sqrt(mha.d_head)  # (batch, heads, q_len, k_len)
    weights = torch.softmax(scores, dim=-1)
    heads_out = weights @ v  # (batch, heads, q_len, d_head)
    concat = heads_out.transpose(1, 2).reshape(query.shape[0], query.shape[1], mha.d_model)
    return mha.out_proj(concat)


def forward_einsum(mha, query, key, value):
    h, d = mha.num_heads, mha.d_head
    q = mha.query_proj(query).unflatten(-1, (h, d))  # (batch, q_len, heads, d_head)
    k = mha.key_proj(key).unflatten(-1, (h, d))
    v = mha.value_proj(value).unflatten(-1, (h, d))
    weights = torch.einsum("bqhd,bkhd->bhqk", q, k).div(d**0.5).softmax(dim=-1)
    heads_out = torch.einsum("bhqk,bkhd->bqhd", weights, v)  # (batch, q_len, heads, d_head)
    return mha.out_proj(heads_out.flatten(-2))


def _forward(mha, query, key, value, *, split_len=None, scale=None, single_reshape=False, dropout=False, mix=True):
    def split(x, length):
        batch = x.shape[0]
        if single_reshape:  # (batch, length, d_model) -> (batch, heads, length, d_head) in one step
            return x.reshape(batch, mha.num_heads, length, mha.d_head)
        return x.reshape(batch, length, mha.num_heads, mha.d_head).transpose(1, 2)

    batch, q_len, _ = query.shape
    queries = split(mha.query_proj(query), q_len)
    keys = split(mha.key_proj(key), split_len or key.shape[1])
    values = split(mha.value_proj(value), split_len or value.shape[1])
    scale = math.sqrt(mha.d_head) if scale is None else scale
    weights = torch.softmax(queries @ keys.transpose(-2, -1) / scale, dim=-1)
    if dropout:
        weights = F.dropout(weights, p=mha.dropout)  # training=True by default: the bug
    concat = (weights @ values).transpose(1, 2).reshape(batch, q_len, mha.d_model)
    return mha.out_proj(concat) if mix else concat


def forward_keys_split_with_query_length(mha, query, key, value):
    return _forward(mha, query, key, value, split_len=query.shape[1])


def forward_scaled_by_sqrt_d_model(mha, query, key, value):
    return _forward(mha, query, key, value, scale=math.sqrt(mha.d_model))


def forward_split_single_reshape(mha, query, key, value):
    return _forward(mha, query, key, value, single_reshape=True)


def forward_dropout_in_eval(mha, query, key, value):
    return _forward(mha, query, key, value, dropout=True)


def forward_no_out_proj(mha, query, key, value):
    return _forward(mha, query, key, value, mix=False)


MY_FORWARD = Exercise(
    id="04.my_forward",
    section="04 · Build it step by step",
    make_cases=forward_cases,
    reference=my_forward,
    variants=(forward_step_by_step, forward_einsum),
    buggy={
        "keys_split_with_query_length": forward_keys_split_with_query_length,
        "scaled_by_sqrt_d_model": forward_scaled_by_sqrt_d_model,
        "split_single_reshape": forward_split_single_reshape,
        "dropout_in_eval": forward_dropout_in_eval,
        "no_output_projection": forward_no_out_proj,
    },
    hints=(
        "Four steps, as in the lesson: project, split into heads, attend, merge. Which of them depends on the "
        "length of the tensor it works on? The checks use keys longer and shorter than the queries.",
        "Project with mha.query_proj, mha.key_proj and mha.value_proj; split each tensor with its own length; "
        "attend per head, scaled by sqrt(d_head); merge back to (batch, q_len, d_model); then mha.out_proj.",
        "A small split(x) that reads batch, length, _ = x.shape from its own argument, views (batch, length, heads, "
        "d_head) and swaps the length and heads axes handles queries and keys alike.",
    ),
)


# ---- 04.cross_attend(mha, decoder_states, encoder_states, encoder_lengths) -> (output, weights) ------------
def torch_cross_cases():
    with torch_seeded(2):
        mha = attention.MultiHeadAttention(d_model=16, num_heads=4).eval()
        return [
            Case((mha, torch.randn(2, 3, 16), torch.randn(2, 6, 16), torch.tensor([6, 4]))),
            Case((mha, torch.randn(3, 4, 16), torch.randn(3, 5, 16), torch.tensor([1, 5, 3]))),
            Case((mha, torch.randn(2, 5, 16), torch.randn(2, 7, 16), torch.tensor([4, 2])), "no full-length row"),
        ]


def cross_attend(mha, decoder_states, encoder_states, encoder_lengths):
    padding = masks.make_padding_mask(encoder_lengths, encoder_states.shape[1])  # (batch, k_len)
    mask = masks.padding_to_attention_mask(padding)  # (batch, 1, 1, k_len)
    return mha(decoder_states, encoder_states, encoder_states, mask=mask)


def cross_attend_loop(mha, decoder_states, encoder_states, encoder_lengths):
    batch, k_len = encoder_states.shape[:2]
    mask = torch.zeros(batch, 1, 1, k_len, dtype=torch.bool)
    for b, length in enumerate(encoder_lengths.tolist()):
        mask[b, 0, 0, :length] = True
    return mha(decoder_states, encoder_states, encoder_states, mask=mask)


def cross_attend_key_padding(mha, decoder_states, encoder_states, encoder_lengths):
    real = torch.arange(encoder_states.shape[1])[None, :] < encoder_lengths[:, None]  # (batch, k_len)
    output, weights = mha(decoder_states, encoder_states, encoder_states, key_padding_mask=real)
    return output, weights


CROSS_ATTEND = Exercise(
    id="04.cross_attend",
    section="02 · Shapes: lining masks up with multi-head scores",
    make_cases=torch_cross_cases,
    reference=cross_attend,
    variants=(cross_attend_loop, cross_attend_key_padding),
    allowed=(_MHA_FORWARD,),
    hints=(
        "Which keys may the decoder read? What shape must a mask have to broadcast against (batch, heads, q_len, "
        "k_len) scores?",
        "A mask that is True at the real encoder positions, one row per sequence, with axes for the heads and the "
        "queries: (batch, 1, 1, k_len). Pass it to the module with the decoder states as the query.",
        "masks.make_padding_mask(encoder_lengths, k_len) gives (batch, k_len); masks.padding_to_attention_mask "
        "adds the two middle axes. The encoder states are both the key and the value.",
    ),
    output_names=("output", "weights"),
)


# ---- 04.torch_cross_attend(torch_mha, decoder_states, encoder_states, padding_mask) -> output -------------
def nn_mha_cases():
    with torch_seeded(3):
        torch_mha = nn.MultiheadAttention(16, 4, batch_first=True).eval()
        return [
            Case(
                (
                    torch_mha,
                    torch.randn(2, 3, 16),
                    torch.randn(2, 6, 16),
                    masks.make_padding_mask(torch.tensor([6, 2]), 6),
                )
            ),
            Case(
                (torch_mha, torch.randn(1, 5, 16), torch.randn(1, 4, 16), masks.make_padding_mask(torch.tensor([3]), 4))
            ),
            Case(
                (
                    torch_mha,
                    torch.randn(3, 2, 16),
                    torch.randn(3, 7, 16),
                    masks.make_padding_mask(torch.tensor([5, 1, 3]), 7),
                ),
                "no full-length row",
            ),
        ]


def torch_cross_attend(torch_mha, decoder_states, encoder_states, padding_mask):
    ignore = masks.to_key_padding_mask(padding_mask)  # True = ignore, as nn.MultiheadAttention wants it
    return torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=ignore)[0]


def torch_cross_attend_not(torch_mha, decoder_states, encoder_states, padding_mask):
    output, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=~padding_mask)
    return output


def torch_cross_attend_logical_not(torch_mha, decoder_states, encoder_states, padding_mask):
    return torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=torch.logical_not(padding_mask))[
        0
    ]


def nn_mha_mask_not_flipped(torch_mha, decoder_states, encoder_states, padding_mask):
    return torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=padding_mask)[0]


TORCH_CROSS_ATTEND = Exercise(
    id="04.torch_cross_attend",
    section='02 · Two conventions: "may attend" and "ignore"',
    make_cases=nn_mha_cases,
    reference=torch_cross_attend,
    variants=(torch_cross_attend_not, torch_cross_attend_logical_not),
    buggy={"nn_mha_convention": nn_mha_mask_not_flipped},
    hints=(
        "What does True mean in padding_mask? And in the key_padding_mask of nn.MultiheadAttention?",
        "Ours is True = real token; nn.MultiheadAttention's key_padding_mask is True = ignore this key. Convert "
        "before you pass it.",
        "The call returns (output, averaged weights); the exercise wants the output. The decoder states are the "
        "query, the encoder states both key and value.",
    ),
)


# ---- 04.weights_for_analysis(mha, x) -> weights, with the module's mode kept ------------------------------
def analysis_cases():
    with torch_seeded(5):
        training = attention.MultiHeadAttention(16, 4, dropout=0.5)  # a new module is in training mode
        evaluating = attention.MultiHeadAttention(8, 2, dropout=0.3).eval()
        return [
            Case((training, torch.randn(2, 5, 16)), "a module in training mode"),
            Case((evaluating, torch.randn(1, 4, 8)), "a module in eval mode"),
        ]


def weights_and_mode(weights_for_analysis, mha, x):
    """The answer's weights, and the mode the module is left in."""
    return weights_for_analysis(mha, x), mha.training


def weights_for_analysis(mha, x):
    was_training = mha.training
    mha.eval()
    with torch.no_grad():
        weights = mha(x, x, x)[1]  # (batch, heads, seq_len, seq_len)
    mha.train(was_training)
    return weights


def analysis_try_finally(mha, x):
    mode = mha.training
    try:
        mha.train(False)
        _, weights = mha(x, x, x)
        return weights.detach()
    finally:
        mha.train(mode)


def analysis_without_dropout(mha, x):
    saved = mha.dropout
    mha.dropout = 0.0  # no dropout, whatever the mode
    try:
        with torch.no_grad():
            return mha(x, x, x)[1]
    finally:
        mha.dropout = saved


def analysis_weights_in_training_mode(mha, x):
    return mha(x, x, x)[1]


def analysis_mode_not_restored(mha, x):
    mha.eval()
    return mha(x, x, x)[1]


WEIGHTS_FOR_ANALYSIS = Exercise(
    id="04.weights_for_analysis",
    section="04 · Dropout on the attention weights: training only",
    make_cases=analysis_cases,
    reference=weights_for_analysis,
    variants=(analysis_try_finally, analysis_without_dropout),
    buggy={
        "weights_in_training_mode": analysis_weights_in_training_mode,
        "mode_not_restored": analysis_mode_not_restored,
    },
    allowed=(_MHA_FORWARD,),
    hints=(
        "Dropout acts in training mode only, and the module may be training. What must change before the call, and "
        "what must be true of the module after your function returns?",
        "Remember the mode the module is in (mha.training), switch it to evaluation for the call, and put the "
        "remembered mode back before returning.",
        "mha.train(flag) sets the mode either way; the weights are the second item of mha(x, x, x). torch.no_grad() "
        "keeps them free of the autograd graph.",
    ),
    output_names=("weights", "mode afterwards (mha.training)"),
    driver=weights_and_mode,
)


# ---- 04.fuse_qkv(mha) -> nn.Linear(d_model, 3 * d_model) ----------------------------------------------------
def fuse_cases():
    with torch_seeded(4):
        cases = []
        for d_model, heads, shape in ((16, 4, (2, 5)), (8, 2, (1, 3))):
            mha = attention.MultiHeadAttention(d_model, heads).eval()
            cases.append(Case((mha, torch.randn(*shape, d_model))))
        return cases


def apply_fused(fuse_qkv, mha, x):
    """Build the answer's fused layer, run it once, cut its output into queries, keys and values."""
    fused = fuse_qkv(mha)
    with torch.no_grad():
        # (batch, seq_len, 3 * d_model) -> 3 x (batch, seq_len, d_model)
        return tuple(fused(x).chunk(3, dim=-1))


def fuse_qkv(mha):
    layers = (mha.query_proj, mha.key_proj, mha.value_proj)
    fused = nn.Linear(mha.d_model, 3 * mha.d_model)
    with torch.no_grad():
        # 3 x (d_model, d_model) -> (3 * d_model, d_model): nn.Linear's (out, in) layout, as they are
        fused.weight.copy_(torch.cat([layer.weight for layer in layers]))
        fused.bias.copy_(torch.cat([layer.bias for layer in layers]))  # 3 x (d_model,) -> (3 * d_model,)
    return fused


def fuse_qkv_slices(mha):
    d = mha.d_model
    fused = nn.Linear(d, 3 * d)
    with torch.no_grad():
        for i, layer in enumerate((mha.query_proj, mha.key_proj, mha.value_proj)):
            fused.weight[i * d : (i + 1) * d] = layer.weight  # rows i*d .. (i+1)*d - 1 produce part i
            fused.bias[i * d : (i + 1) * d] = layer.bias
    return fused


def fuse_qkv_parameters(mha):
    fused = nn.Linear(mha.d_model, 3 * mha.d_model)
    weight = torch.cat([mha.query_proj.weight, mha.key_proj.weight, mha.value_proj.weight], dim=0)
    bias = torch.cat([mha.query_proj.bias, mha.key_proj.bias, mha.value_proj.bias])
    fused.weight = nn.Parameter(weight.detach().clone())
    fused.bias = nn.Parameter(bias.detach().clone())
    return fused


def _fused(mha, *, transpose=False, bias=True):
    layers = (mha.query_proj, mha.key_proj, mha.value_proj)
    fused = nn.Linear(mha.d_model, 3 * mha.d_model, bias=bias)
    with torch.no_grad():
        fused.weight.copy_(torch.cat([layer.weight.T if transpose else layer.weight for layer in layers]))
        if bias:
            fused.bias.copy_(torch.cat([layer.bias for layer in layers]))
    return fused


def fuse_qkv_weight_transposed(mha):
    return _fused(mha, transpose=True)


def fuse_qkv_no_bias(mha):
    return _fused(mha, bias=False)


FUSE_QKV = Exercise(
    id="04.fuse_qkv",
    section="04 · One fused projection instead of three",
    make_cases=fuse_cases,
    reference=fuse_qkv,
    variants=(fuse_qkv_slices, fuse_qkv_parameters),
    buggy={"fused_weight_transposed": fuse_qkv_weight_transposed, "fused_no_bias": fuse_qkv_no_bias},
    hints=(
        "One nn.Linear(d_model, 3 * d_model) whose output, cut in three along the last axis, gives the queries, the "
        "keys and the values. Which of its weight's rows produce the queries?",
        "Its weight is (3 * d_model, d_model): stack the three layers' weights along the rows, in the order query, "
        "key, value, and stack their biases the same way.",
        "nn.Linear already keeps weight as (out, in), so stack the weights as they are, without transposing; copy "
        "into the new layer's parameters inside torch.no_grad().",
    ),
    output_names=("queries", "keys", "values"),
    driver=apply_fused,
)


# ---- 04.qk_matrix(mha) -> (d_model, d_model) --------------------------------------------------------------
def qk_cases():
    with torch_seeded(6):
        return [
            Case((attention.MultiHeadAttention(16, 1),), "one head"),
            Case((attention.MultiHeadAttention(8, 2),)),
            Case((attention.MultiHeadAttention(6, 3, bias=False),), "no biases"),
        ]


def qk_matrix(mha):
    with torch.no_grad():
        # W_q = query_proj.weight.T, W_k = key_proj.weight.T: (d_model, d_model) @ (d_model, d_model)
        return mha.query_proj.weight.T @ mha.key_proj.weight


def qk_matrix_transposed_product(mha):
    return (mha.key_proj.weight.T @ mha.query_proj.weight).T.detach()  # (W_k^T W_q)^T = W_q^T W_k


def qk_matrix_einsum(mha):
    return torch.einsum("oi,oj->ij", mha.query_proj.weight, mha.key_proj.weight).detach()


def qk_linear_layout(mha):
    return mha.query_proj.weight @ mha.key_proj.weight.T  # the (out, in) layout taken as x @ W


def qk_transposed(mha):
    return mha.key_proj.weight.T @ mha.query_proj.weight  # W_k W_q^T: rows are key features


QK_MATRIX = Exercise(
    id="04.qk_matrix",
    section="04 · Train it: retrieval by similarity",
    make_cases=qk_cases,
    reference=qk_matrix,
    variants=(qk_matrix_transposed_product, qk_matrix_einsum),
    buggy={"qk_linear_layout": qk_linear_layout, "qk_transposed": qk_transposed},
    hints=(
        "In NumPy notation the scores are x @ W_q @ W_k^T @ y^T. How do W_q and W_k relate to the layers' weights?",
        "nn.Linear computes x @ weight.T: so W_q is query_proj.weight.T, and W_k is key_proj.weight.T.",
        "Substitute both into W_q @ W_k^T and simplify the double transpose. Splitting into heads only cuts this "
        "sum into pieces; the matrix is the same.",
    ),
)

EXERCISES = [MY_FORWARD, CROSS_ATTEND, TORCH_CROSS_ATTEND, WEIGHTS_FOR_ANALYSIS, FUSE_QKV, QK_MATRIX]

PREDICTIONS = [
    Prediction(
        id="04.same_output",
        question="Same parameters, same input: do a 1-head and a 4-head module return the same output?",
        kind="choice",
        answer=False,
        choices=(True, False),
        section="04 · Single head versus multi-head, with the same parameters",
        known_wrong=(
            KnownWrong(
                True,
                "heads_only_reshape",
                "what you would get if heads only regrouped the same computation; "
                "but each head takes its own softmax over its own scores",
            ),
        ),
    ),
    Prediction(
        id="04.cross_weights_shape",
        question="Queries (2, 5, 16), keys and values (2, 7, 16), 4 heads: what is the shape of the weights?",
        kind="shape",
        answer=(2, 4, 5, 7),
        section="04 · Self-attention and cross-attention",
        known_wrong=(
            KnownWrong((2, 4, 7, 5), "weights_transposed", "transposed: one row per query (5), one column per key (7)"),
            KnownWrong(
                (2, 5, 7),
                "weights_averaged",
                "the head-averaged weights nn.MultiheadAttention returns by default; ours keep one matrix per head",
            ),
            KnownWrong((2, 5, 16), "output_shape", "the output's shape; the weights have one entry per (query, key)"),
        ),
    ),
    Prediction(
        id="04.weight_on_match_before",
        question="Before training, about how much attention weight does the query put on its own key, out of 8 keys?",
        kind="number",
        answer=1 / 8,
        rtol=0.25,
        section="04 · Train it: retrieval by similarity",
        known_wrong=(
            KnownWrong(
                1.0,
                "weight_after_training",
                "the weight once the layer has learned to find the key; before "
                "training nothing tells the query which key is its own",
            ),
            KnownWrong(0.0, "no_weight", "no weight at all, but a softmax gives every key some weight"),
        ),
    ),
]
