"""The bug zoo: known misconceptions, each with buggy reference implementations.

Introduced in ``notebooks/00_start_here.ipynb``. An exercise in :mod:`course_utils.exercises`
declares the misconceptions it can show, each with one of the buggy functions below (written
with the exercise's own signature). When a student's answer matches a buggy function on every
case and not the correct reference, :func:`course_utils.checks.check` names the misconception and
the lesson section to re-read.

Importing this module is cheap: torch is imported inside the functions that need it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Misconception", "MISCONCEPTIONS", "get", "register"]


@dataclass(frozen=True)
class Misconception:
    """One known mistake.

    Attributes
    ----------
    id : str
        Stable snake_case id, logged in ``COURSE_CHECK_LOG`` lines.
    name : str
        One line naming the mistake, as the student reads it.
    section : str
        The lesson section to re-read, e.g. ``"01 · From scores to weights: a stable softmax"``.

    Introduced in notebooks/00_start_here.ipynb.
    """

    id: str
    name: str
    section: str


_ALL = [
    Misconception(
        "scores_transposed",
        "the scores are transposed: rows must be queries, columns keys",
        "00 · Exercise 1 · dot-product scores",
    ),
    Misconception(
        "softmax_wrong_axis",
        "softmax over the wrong axis: each query's weights must sum to 1 over the keys (the given axis)",
        "01 · From scores to weights: a stable softmax",
    ),
    Misconception(
        "softmax_no_max_shift",
        "exp without subtracting the maximum first: large scores overflow to inf and give NaN",
        "01 · From scores to weights: a stable softmax",
    ),
    Misconception("no_scaling", "the scores are not divided by sqrt(d_head)", "01 · Why divide by √d_head"),
    Misconception(
        "scaled_by_d_head", "the scores are divided by d_head instead of sqrt(d_head)", "01 · Why divide by √d_head"
    ),
    Misconception(
        "scaled_by_sqrt_d_model",
        "the scores are divided by sqrt(d_model) instead of sqrt(d_head) (the size of one head)",
        "01 · Why divide by √d_head",
    ),
    Misconception(
        "projections_skipped",
        "Q, K and V are X itself: the learned projections W_q, W_k, W_v are never applied",
        "01 · Why learned, separate W_q, W_k, W_v",
    ),
    Misconception(
        "projections_transposed",
        "the projections are applied as X @ W.T: with W_q of shape (d_model, d_head), Q = X @ W_q "
        "(nn.Linear stores the transpose, lesson 04)",
        "01 · Why learned, separate W_q, W_k, W_v",
    ),
    Misconception(
        "scale_ignores_variance",
        "the divisor ignores the entries' variance: Var(q · k) = d_head * variance**2, not d_head",
        "01 · Why divide by √d_head",
    ),
    Misconception(
        "scale_uses_std",
        "the divisor is sqrt(d_head * variance): each product q_i k_i has variance variance**2, not variance",
        "01 · Why divide by √d_head",
    ),
    Misconception(
        "equivariance_output_not_permuted",
        "fn(X[perm]) is compared with fn(X): the outputs must be permuted too, fn(X[perm]) == fn(X)[perm]",
        "01 · Attention ignores order",
    ),
    Misconception(
        "equivariance_inverse_perm",
        "the outputs are reordered with the inverse permutation: compare fn(X[perm]) with fn(X)[perm]",
        "01 · Attention ignores order",
    ),
    Misconception(
        "temperature_multiplies",
        "the temperature multiplies the scores instead of dividing them (operator precedence: a / b * T)",
        "01 · Explore: d_head and temperature",
    ),
    Misconception(
        "mask_inverted",
        "the mask convention is inverted: in this course True means 'may attend', not 'ignore'",
        '02 · Two conventions: "may attend" and "ignore"',
    ),
    Misconception(
        "causal_no_diagonal",
        "the causal mask hides the diagonal: a token may attend to itself (j <= i)",
        "02 · Causal masks",
    ),
    Misconception(
        "padding_off_by_one",
        "off by one: position j is real when j < length, not j <= length",
        "02 · Padding masks from lengths",
    ),
    Misconception(
        "fill_minus_1e9",
        "masked with -1e9: a fully masked row becomes uniform over the padding instead of zeros",
        "02 · Bug 2: `-1e9` and the fully masked row",
    ),
    Misconception(
        "fill_minus_inf",
        "masked with -inf and a plain softmax: a fully masked row becomes NaN",
        "02 · Bug 3: `-inf` gives NaN rows and NaN gradients",
    ),
    Misconception(
        "mask_3d_heads",
        "a 3-D (batch, q_len, k_len) mask: against 4-D scores its batch axis lines up with the heads axis",
        "02 · Bug 1: a (batch, q_len, k_len) mask lines up with the heads",
    ),
    Misconception(
        "key_padding_as_2d",
        "a (batch, k_len) key-padding mask passed as if it were a (q_len, k_len) mask",
        "02 · Bug 1b: a (batch, k_len) padding mask read as (q_len, k_len)",
    ),
    Misconception(
        "window_off_by_one",
        "the window is one key too wide: query i sees window keys, itself included (i - window < j <= i)",
        "02 · Causal masks",
    ),
    Misconception(
        "window_not_causal",
        "the window looks both ways: a decoder's sliding window is still causal (j <= i)",
        "02 · Causal masks",
    ),
    Misconception(
        "leak_test_tolerance",
        "the leak test uses a tolerance: a mask that leaks a little passes it; demand exact equality",
        "02 · The no-leak experiment",
    ),
    Misconception(
        "leak_test_changed_positions",
        "the leak test also compares the positions whose own token changed: only the positions before the "
        "change must stay identical",
        "02 · The no-leak experiment",
    ),
    Misconception(
        "causal_not_flipped",
        "only the padding flipped: nn.MultiheadAttention's boolean attn_mask means 'not allowed' too, so flip "
        "the causal mask as well",
        '02 · Two conventions: "may attend" and "ignore"',
    ),
    Misconception(
        "causal_in_cross_attention",
        "a causal mask in cross-attention: every query may read every real encoder position; only padding is hidden",
        "02 · Shapes: lining masks up with multi-head scores",
    ),
    Misconception(
        "split_single_reshape",
        "one reshape straight to (batch, heads, seq_len, d_head): right shape, features of different positions mixed",
        "03 · Step 2 · split into heads",
    ),
    Misconception(
        "params_three_matrices",
        "3·d_model² parameters: the output projection W_o and the biases are missing",
        "03 · Parameters: the same for any number of heads",
    ),
    Misconception(
        "params_ignore_bias_flag",
        "biases counted even with bias=False",
        "03 · Parameters: the same for any number of heads",
    ),
    Misconception(
        "keys_split_with_query_length",
        "keys and values split with the query's length: each tensor must be split at its own length",
        "04 · A common bug: splitting the keys with the query's length",
    ),
    Misconception(
        "dropout_in_eval",
        "dropout left on in evaluation: F.dropout is active unless training=False (use the module's mode)",
        "04 · Dropout on the attention weights: training only",
    ),
    Misconception(
        "flops_one_length",
        "one length for both sequences: the keys and values have k_len positions, the queries q_len",
        "03 · Cost: projections versus the attention core",
    ),
    Misconception(
        "flops_multiply_add_as_one",
        "a multiply-add counted as 1 FLOP: (m, k) @ (k, n) costs 2·m·k·n",
        "03 · Cost: projections versus the attention core",
    ),
    Misconception(
        "flops_no_out_proj",
        "the output projection W_o is missing: it runs on every query position too",
        "03 · Cost: projections versus the attention core",
    ),
    Misconception(
        "no_output_projection",
        "the heads are concatenated but never mixed by W_o: head h's term is head_h @ W_o[h·d_head:(h+1)·d_head]",
        "03 · Step 4 · mix the heads with `W_o`",
    ),
    Misconception(
        "fused_weight_transposed",
        "the transposed weights were stacked: nn.Linear keeps weight as (out, in), so stack the weights as they are",
        "04 · One fused projection instead of three",
    ),
    Misconception(
        "fused_no_bias",
        "the fused projection has no bias: stack the three biases into one (3·d_model,) bias",
        "04 · One fused projection instead of three",
    ),
    Misconception(
        "weights_in_training_mode",
        "weights read in training mode: dropout zeroes some and rescales the rest; call .eval() first",
        "04 · Dropout on the attention weights: training only",
    ),
    Misconception(
        "mode_not_restored",
        "the module is left in eval mode: put it back in the mode it had (module.train(was_training))",
        "04 · Dropout on the attention weights: training only",
    ),
    Misconception(
        "qk_linear_layout",
        "nn.Linear's weight is (out, in): the matrix x is multiplied by is query_proj.weight.T, not query_proj.weight",
        "04 · From a matrix to `nn.Linear`",
    ),
    Misconception(
        "qk_transposed",
        "queries and keys swapped: rows of W_q W_k^T belong to query features, columns to key features",
        "04 · Train it: retrieval by similarity",
    ),
    Misconception(
        "entropy_zero_terms",
        "0 · ln 0 taken literally: it is NaN in floating point; drop the zero weights (their limit is 0)",
        "05 · Entropy: how spread out is a head?",
    ),
    Misconception(
        "next_token_diagonal",
        "the wrong diagonal: key i - 1 is the previous token, key i + 1 the next one",
        "05 · Which head does what? Role scores",
    ),
    Misconception(
        "online_no_rescale",
        "the old sum is not rescaled to the new maximum: multiply it by exp(m - m_new)",
        "06 · Online softmax: one pass, running max and running sum",
    ),
    Misconception(
        "bytes_without_heads",
        "one weight matrix per batch element: every head has its own (q_len, k_len) weights",
        "06 · Peak memory: naive versus tiled",
    ),
    Misconception(
        "kv_cache_not_returned",
        "the grown caches are not returned: the next step must get the caches with the new key and value appended",
        "06 · Decoding one token at a time: the KV cache",
    ),
    Misconception(
        "decoder_fed_target",
        "the decoder is fed the very token it must predict: shift the input right by one (BOS first)",
        "07 · Teacher forcing, done right",
    ),
    Misconception(
        "eos_after_padding",
        "EOS appended after the padding: it belongs right after each sequence's last real token",
        "07 · Teacher forcing, done right",
    ),
    Misconception(
        "additive_no_tanh",
        "additive score without tanh: the query part then adds the same amount to every key and cancels in the softmax",
        "07 · The seed's score: `Linear([s; h_j])`",
    ),
    Misconception(
        "positions_sin_cos_swapped",
        "sine and cosine swapped: sines go in the even columns, cosines in the odd ones",
        "08 · Positions: sinusoidal encodings",
    ),
    Misconception(
        "positions_concatenated",
        "sines in the first half and cosines in the second: they interleave (even and odd columns)",
        "08 · Positions: sinusoidal encodings",
    ),
]

MISCONCEPTIONS: dict[str, Misconception] = {m.id: m for m in _ALL}


def register(items) -> None:
    """Make more misconceptions known by id (the exercise modules of lessons 07 and 08 declare their own).

    Registering the same misconception again is harmless; another one under a known id is a ``ValueError``.

    Introduced in notebooks/00_start_here.ipynb.
    """
    for item in items:
        if not isinstance(item, Misconception):
            raise TypeError(f"items must hold Misconception objects but one is {type(item).__name__}")
        known = MISCONCEPTIONS.setdefault(item.id, item)
        if known != item:
            raise ValueError(f"misconception id {item.id!r} is already defined, differently")


def get(misconception_id: str) -> Misconception:
    """Return the misconception with this id; ``KeyError`` names the known ids.

    Introduced in notebooks/00_start_here.ipynb.
    """
    if misconception_id not in MISCONCEPTIONS:
        raise KeyError(f"unknown misconception {misconception_id!r}; known: {sorted(MISCONCEPTIONS)}")
    return MISCONCEPTIONS[misconception_id]


# ---------------------------------------------------------------------------------------------
# Buggy references, grouped by the exercise signature they share. Each reproduces one mistake.
# ---------------------------------------------------------------------------------------------


def _softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    exps = np.exp(x - x.max(axis=axis, keepdims=True))
    return exps / exps.sum(axis=axis, keepdims=True)


def _other_axis(ndim, axis):
    """The axis a confused answer uses instead of ``axis``: the last one, or the one before it."""
    axis = axis % max(ndim, 1)
    return ndim - 2 if axis == ndim - 1 else ndim - 1


# 00 · dot_scores(q, k)
def dot_scores_transposed(q, k):
    return k @ q.T  # (k_len, q_len): keys as rows


# 01 · softmax_along(x, axis)
def softmax_along_wrong_axis(x, axis=-1):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2:
        return _softmax(x, axis)
    return _softmax(x, _other_axis(x.ndim, axis))


def softmax_along_no_max_shift(x, axis=-1):
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        exps = np.exp(x)
        return exps / exps.sum(axis=axis, keepdims=True)


# 01 · by_hand_new_query(): the worked example's keys and values with the query [2, -1]
_K = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
_V = np.array([[10.0, 0.0], [0.0, 10.0], [5.0, 5.0]])


def _by_hand(scale):
    scores = np.array([2.0, -1.0]) @ _K.T / scale
    weights = _softmax(scores)
    return weights, weights @ _V


def by_hand_no_scaling():
    return _by_hand(1.0)


def by_hand_scaled_by_d_head():
    return _by_hand(2.0)


# 01 · attention_with_temperature(Q, K, V, temperature) -> (output, weights)
def _temperature(Q, K, V, divide_by, axis=-1):
    scores = Q @ np.swapaxes(K, -1, -2) / divide_by  # (..., q_len, k_len)
    weights = _softmax(scores, axis)
    return weights @ V, weights


def temperature_no_scaling(Q, K, V, temperature):
    return _temperature(Q, K, V, temperature)


def temperature_scaled_by_d_head(Q, K, V, temperature):
    return _temperature(Q, K, V, Q.shape[-1] * temperature)


def temperature_multiplies(Q, K, V, temperature):
    return _temperature(Q, K, V, math.sqrt(Q.shape[-1]) / temperature)


def temperature_softmax_wrong_axis(Q, K, V, temperature):
    return _temperature(Q, K, V, math.sqrt(Q.shape[-1]) * temperature, axis=-2)


# 01 · self_attention(X, W_q, W_k, W_v) -> (output, weights)
def _self_attention(Q, K, V, divide_by):
    weights = _softmax(Q @ np.swapaxes(K, -1, -2) / divide_by)  # (..., seq_len, seq_len)
    return weights @ V, weights


def self_attention_projections_skipped(X, W_q, W_k, W_v):
    return _self_attention(X, X, X, math.sqrt(W_q.shape[-1]))


def self_attention_projections_transposed(X, W_q, W_k, W_v):
    # (..., seq_len, d_model) @ (d_head, d_model): crashes unless the weights are square
    return _self_attention(X @ W_q.T, X @ W_k.T, X @ W_v.T, math.sqrt(W_q.shape[-1]))


def self_attention_scaled_by_sqrt_d_model(X, W_q, W_k, W_v):
    return _self_attention(X @ W_q, X @ W_k, X @ W_v, math.sqrt(X.shape[-1]))


# 01 · score_scale(d_head, variance)
def score_scale_ignores_variance(d_head, variance):
    return math.sqrt(d_head)


def score_scale_uses_std(d_head, variance):
    return math.sqrt(d_head * variance)


def score_scale_by_d_head(d_head, variance):
    return d_head * variance


# 01 · is_permutation_equivariant(fn, X, perm)
def equivariance_output_not_permuted(fn, X, perm):
    return bool(np.allclose(fn(X[perm]), fn(X)))


def equivariance_inverse_perm(fn, X, perm):
    return bool(np.allclose(fn(X[perm]), fn(X)[np.argsort(perm)]))


# 02 · my_causal_mask(seq_len)
def causal_mask_inverted(seq_len):
    import torch

    return ~torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))


def causal_mask_no_diagonal(seq_len):
    import torch

    return torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=-1)


# 02 · my_padding_mask(lengths, max_len)
def padding_mask_inverted(lengths, max_len):
    import torch

    return torch.arange(max_len)[None, :] >= lengths[:, None]


def padding_mask_off_by_one(lengths, max_len):
    import torch

    return torch.arange(max_len)[None, :] <= lengths[:, None]


# 02 · decoder_mask(lengths, seq_len) -> (batch, 1, q_len, k_len)
def _decoder_parts(lengths, seq_len):
    import torch

    causal = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))  # (q_len, k_len)
    padding = torch.arange(seq_len)[None, :] < lengths[:, None]  # (batch, k_len)
    return causal, padding


def decoder_mask_3d(lengths, seq_len):
    causal, padding = _decoder_parts(lengths, seq_len)
    return padding[:, None, :] & causal  # (batch, q_len, k_len): lines up with the heads


def decoder_mask_inverted(lengths, seq_len):
    causal, padding = _decoder_parts(lengths, seq_len)
    return ~(padding[:, None, None, :] & causal)


# 02 · masked_softmax(scores, mask): the fills
def masked_softmax_fill_1e9(scores, mask):
    import torch

    return torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1)


def masked_softmax_fill_inf(scores, mask):
    import torch

    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def masked_softmax_inverted(scores, mask):
    import torch

    weights = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)


# 02 · sliding_window_mask(seq_len, window) -> (q_len, k_len)
def window_mask_off_by_one(seq_len, window):
    import torch

    i = torch.arange(seq_len)[:, None]  # (q_len, 1)
    j = torch.arange(seq_len)[None, :]  # (1, k_len)
    return (j <= i) & (j >= i - window)


def window_mask_not_causal(seq_len, window):
    import torch

    i = torch.arange(seq_len)[:, None]  # (q_len, 1)
    j = torch.arange(seq_len)[None, :]  # (1, k_len)
    return (i - j).abs() < window


# 02 · leaks(attend, seq_len) -> bool
def _leak_outputs(attend, seq_len, t):
    """Outputs for a random sequence and the same sequence with tokens t+1.. replaced."""
    import torch

    gen = torch.Generator().manual_seed(t)
    x = torch.randn(1, seq_len, 8, generator=gen, dtype=torch.float64)  # (batch, seq_len, d_model)
    changed = x.clone()
    changed[:, t + 1 :] = torch.randn(1, seq_len - t - 1, 8, generator=gen, dtype=torch.float64)
    return attend(x), attend(changed)


def leaks_with_tolerance(attend, seq_len):
    import torch

    for t in range(seq_len - 1):
        a, b = _leak_outputs(attend, seq_len, t)
        if not torch.allclose(a[:, : t + 1], b[:, : t + 1]):
            return True
    return False


def leaks_compares_changed_positions(attend, seq_len):
    import torch

    for t in range(seq_len - 1):
        a, b = _leak_outputs(attend, seq_len, t)
        if not torch.equal(a, b):  # the changed positions move too
            return True
    return False


# 02 · cross_attend_padded(mha, decoder_states, encoder_states, encoder_lengths) -> output
def _padded(encoder_states, encoder_lengths):
    import torch

    return torch.arange(encoder_states.shape[1])[None, :] < encoder_lengths[:, None]  # (batch, k_len)


def cross_padded_as_2d(mha, decoder_states, encoder_states, encoder_lengths):
    padding = _padded(encoder_states, encoder_lengths)
    return mha(decoder_states, encoder_states, encoder_states, mask=padding)[0]  # read as (q_len, k_len)


def cross_padded_inverted(mha, decoder_states, encoder_states, encoder_lengths):
    padding = _padded(encoder_states, encoder_lengths)
    return mha(decoder_states, encoder_states, encoder_states, key_padding_mask=~padding)[0]


def cross_padded_causal(mha, decoder_states, encoder_states, encoder_lengths):
    from course_utils import masks

    padding = _padded(encoder_states, encoder_lengths)
    causal = masks.make_causal_mask(decoder_states.shape[1], encoder_states.shape[1])  # (q_len, k_len)
    return mha(decoder_states, encoder_states, encoder_states, mask=causal, key_padding_mask=padding)[0]


# 02 · nn_decoder_self_attend(torch_mha, x, lengths) -> output
def _our_decoder_masks(x, lengths):
    import torch

    seq_len = x.shape[1]
    padding = torch.arange(seq_len)[None, :] < lengths[:, None]  # (batch, k_len), True = real token
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()  # (q_len, k_len), True = may attend
    return padding, causal


def nn_decoder_masks_not_flipped(torch_mha, x, lengths):
    padding, causal = _our_decoder_masks(x, lengths)
    return torch_mha(x, x, x, key_padding_mask=padding, attn_mask=causal)[0]


def nn_decoder_causal_not_flipped(torch_mha, x, lengths):
    padding, causal = _our_decoder_masks(x, lengths)
    return torch_mha(x, x, x, key_padding_mask=~padding, attn_mask=causal)[0]


# 03 · my_split_heads(x, num_heads)
def split_heads_single_reshape(x, num_heads):
    batch, seq_len, d_model = x.shape
    return x.reshape(batch, num_heads, seq_len, d_model // num_heads)


# 03 and 05 · count_attention_parameters(d_model, num_heads, bias)
def params_three_matrices(d_model, num_heads, bias=True):
    return 3 * d_model * d_model


def params_ignore_bias_flag(d_model, num_heads, bias=True):
    return 4 * d_model * d_model + 4 * d_model


# 03 · cross_attend(decoder_states, encoder_states, encoder_lengths, W_q, W_k, W_v, W_o, num_heads)
def numpy_cross_attend_inverted(decoder_states, encoder_states, encoder_lengths, W_q, W_k, W_v, W_o, num_heads):
    from course_utils import numpy_attention

    k_len = encoder_states.shape[1]
    is_pad = np.arange(k_len)[None, :] >= np.asarray(encoder_lengths)[:, None]  # (batch, k_len): True at padding
    return numpy_attention.multi_head_attention(
        decoder_states, encoder_states, encoder_states, W_q, W_k, W_v, W_o, num_heads, mask=is_pad[:, None, None, :]
    )


def numpy_cross_attend_2d(decoder_states, encoder_states, encoder_lengths, W_q, W_k, W_v, W_o, num_heads):
    from course_utils import numpy_attention

    k_len = encoder_states.shape[1]
    padding = np.arange(k_len)[None, :] < np.asarray(encoder_lengths)[:, None]  # (batch, k_len)
    return numpy_attention.multi_head_attention(
        decoder_states, encoder_states, encoder_states, W_q, W_k, W_v, W_o, num_heads, mask=padding
    )


# 04 · my_forward(mha, query, key, value) -> output
def _torch_forward(mha, query, key, value, *, split_len=None, scale=None, dim=-1, dropout=False):
    import torch
    import torch.nn.functional as F

    def split(x, length):
        batch = x.shape[0]
        # (batch, length, d_model) -> (batch, length, heads, d_head) -> (batch, heads, length, d_head)
        return x.reshape(batch, length, mha.num_heads, mha.d_head).transpose(1, 2)

    batch, q_len, _ = query.shape
    queries = split(mha.query_proj(query), q_len)
    keys = split(mha.key_proj(key), split_len or key.shape[1])
    values = split(mha.value_proj(value), split_len or value.shape[1])
    scale = math.sqrt(mha.d_head) if scale is None else scale
    # (batch, heads, q_len, d_head) @ (batch, heads, d_head, k_len) -> (batch, heads, q_len, k_len)
    weights = torch.softmax(queries @ keys.transpose(-2, -1) / scale, dim=dim)
    if dropout:
        weights = F.dropout(weights, p=mha.dropout)  # training=True by default: the bug
    heads_out = weights @ values  # (batch, heads, q_len, d_head)
    # (batch, heads, q_len, d_head) -> (batch, q_len, heads, d_head) -> (batch, q_len, d_model)
    return mha.out_proj(heads_out.transpose(1, 2).reshape(batch, q_len, mha.d_model))


def forward_keys_split_with_query_length(mha, query, key, value):
    return _torch_forward(mha, query, key, value, split_len=query.shape[1])


def forward_no_scaling(mha, query, key, value):
    return _torch_forward(mha, query, key, value, scale=1.0)


def forward_scaled_by_sqrt_d_model(mha, query, key, value):
    return _torch_forward(mha, query, key, value, scale=math.sqrt(mha.d_model))


def forward_softmax_wrong_axis(mha, query, key, value):
    return _torch_forward(mha, query, key, value, dim=-2)


def forward_dropout_in_eval(mha, query, key, value):
    return _torch_forward(mha, query, key, value, dropout=True)


# 04 · cross_attend(mha, decoder_states, encoder_states, encoder_lengths) -> (output, weights)
def torch_cross_attend_inverted(mha, decoder_states, encoder_states, encoder_lengths):
    import torch

    k_len = encoder_states.shape[1]
    is_pad = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]  # (batch, k_len): True at padding
    return mha(decoder_states, encoder_states, encoder_states, mask=is_pad[:, None, None, :])


def torch_cross_attend_2d(mha, decoder_states, encoder_states, encoder_lengths):
    import torch

    k_len = encoder_states.shape[1]
    padding = torch.arange(k_len)[None, :] < encoder_lengths[:, None]  # (batch, k_len)
    return mha(decoder_states, encoder_states, encoder_states, mask=padding)


# 04 · torch_cross_attend(torch_mha, decoder_states, encoder_states, padding_mask) -> output
def nn_mha_mask_not_flipped(torch_mha, decoder_states, encoder_states, padding_mask):
    return torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=padding_mask)[0]


# 03 · cross_attention_flops(batch, q_len, k_len, d_model, num_heads) -> (projections, core)
def flops_one_length(batch, q_len, k_len, d_model, num_heads):
    return 8 * batch * q_len * d_model**2, 4 * batch * q_len**2 * d_model


def flops_multiply_add_as_one(batch, q_len, k_len, d_model, num_heads):
    return 2 * batch * (q_len + k_len) * d_model**2, 2 * batch * q_len * k_len * d_model


def flops_no_out_proj(batch, q_len, k_len, d_model, num_heads):
    return 2 * batch * (q_len + 2 * k_len) * d_model**2, 4 * batch * q_len * k_len * d_model


# 03 · heads_by_weight_slices(query, key, value, W_q, W_k, W_v, W_o, num_heads) -> output
def _heads_by_slices(query, key, value, W_q, W_k, W_v, W_o, num_heads, *, scale=None, mix=True):
    d_model = W_q.shape[0]
    d_head = d_model // num_heads
    terms = []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        # (batch, len, d_model) @ (d_model, d_head) -> (batch, len, d_head)
        q, k, v = query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols]
        s = math.sqrt(d_head) if scale is None else scale
        weights = _softmax(q @ np.swapaxes(k, -1, -2) / s)  # (batch, q_len, k_len)
        terms.append(weights @ v)  # (batch, q_len, d_head)
    if not mix:
        return np.concatenate(terms, axis=-1)  # (batch, q_len, d_model), W_o forgotten
    # (batch, q_len, d_head) @ (d_head, d_model) -> (batch, q_len, d_model), summed over heads
    return sum(t @ W_o[h * d_head : (h + 1) * d_head] for h, t in enumerate(terms))


def heads_by_slices_no_w_o(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    return _heads_by_slices(query, key, value, W_q, W_k, W_v, W_o, num_heads, mix=False)


def heads_by_slices_sqrt_d_model(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    return _heads_by_slices(query, key, value, W_q, W_k, W_v, W_o, num_heads, scale=math.sqrt(W_q.shape[0]))


# 04 · fuse_qkv(mha) -> nn.Linear(d_model, 3 * d_model)
def _fused(mha, *, transpose=False, bias=True):
    import torch
    from torch import nn

    layers = (mha.query_proj, mha.key_proj, mha.value_proj)
    fused = nn.Linear(mha.d_model, 3 * mha.d_model, bias=bias)
    with torch.no_grad():
        # 3 x (d_model, d_model) -> (3 * d_model, d_model)
        fused.weight.copy_(torch.cat([layer.weight.T if transpose else layer.weight for layer in layers]))
        if bias:
            fused.bias.copy_(torch.cat([layer.bias for layer in layers]))  # -> (3 * d_model,)
    return fused


def fuse_qkv_weight_transposed(mha):
    return _fused(mha, transpose=True)


def fuse_qkv_no_bias(mha):
    return _fused(mha, bias=False)


# 04 · weights_for_analysis(mha, x) -> weights
def analysis_weights_in_training_mode(mha, x):
    return mha(x, x, x)[1]


def analysis_mode_not_restored(mha, x):
    mha.eval()
    return mha(x, x, x)[1]


# 04 · qk_matrix(mha) -> (d_model, d_model)
def qk_linear_layout(mha):
    return mha.query_proj.weight @ mha.key_proj.weight.T  # W_q^T W_k: the (out, in) layout taken as x @ W


def qk_transposed(mha):
    return mha.key_proj.weight.T @ mha.query_proj.weight  # W_k W_q^T: rows are key features


# 05 · row_entropy(row) -> float
def entropy_zero_terms(row):
    row = np.asarray(row, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(-(row * np.log(row)).sum())


# 05 · previous_token_score(weights) -> (heads,)
def previous_token_next_diagonal(weights):
    weights = np.asarray(weights)
    i = np.arange(weights.shape[-1] - 1)
    return weights[:, i, i + 1].mean(axis=-1)


# 06 · online_update(m, l, block) -> (m, l)
def online_update_no_rescale(m, l, block):
    m_new = max(m, float(np.max(block)))
    return m_new, l + float(np.exp(np.asarray(block) - m_new).sum())


# 06 · weights_bytes(batch, heads, q_len, k_len, bytes_per_value)
def weights_bytes_without_heads(batch, heads, q_len, k_len, bytes_per_value):
    return batch * q_len * k_len * bytes_per_value


# 06 · flash_step(m, l, acc, scores, v_tile) -> (m, l, acc)
def flash_step_no_rescale(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
    p = np.exp(scores - m_new)
    return m_new, l + p.sum(axis=-1, keepdims=True), acc + p @ v_tile


# 06 · kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v) -> (output, k_cache, v_cache)
def kv_cache_not_returned(x_t, k_cache, v_cache, w_q, w_k, w_v):
    q = x_t @ w_q
    keys = np.concatenate([k_cache, (x_t @ w_k)[None, :]])
    values = np.concatenate([v_cache, (x_t @ w_v)[None, :]])
    scores = keys @ q / math.sqrt(q.shape[-1])
    weights = _softmax(scores)
    return weights @ values, k_cache, v_cache  # the old caches: every step sees only itself


# 07 · my_decoder_io(y, lengths) -> (decoder_input, target)
def _y_with_eos(y, lengths):
    import torch

    from course_utils import data

    pad = torch.full((y.shape[0], 1), data.PAD, dtype=y.dtype)
    return torch.cat([y, pad], dim=1).scatter(1, lengths[:, None], data.EOS)  # (batch, max_len + 1)


def decoder_io_fed_target(y, lengths):
    target = _y_with_eos(y, lengths)
    return target.clone(), target


def decoder_io_eos_after_padding(y, lengths):
    import torch

    from course_utils import data

    batch = y.shape[0]
    bos = torch.full((batch, 1), data.BOS, dtype=y.dtype)
    eos = torch.full((batch, 1), data.EOS, dtype=y.dtype)
    return torch.cat([bos, y], dim=1), torch.cat([y, eos], dim=1)


# 07 · my_additive_scores(s, h, W_s, W_h, v) -> (batch, k_len)
def additive_scores_no_tanh(s, h, W_s, W_h, v):
    return ((s @ W_s)[:, None, :] + h @ W_h) @ v


# 08 · my_decoder_masks(src_lengths, src_len, tgt_len) -> (self_mask, cross_mask)
def _decoder_masks(src_lengths, src_len, tgt_len):
    import torch

    causal = torch.tril(torch.ones(tgt_len, tgt_len, dtype=torch.bool))[None, None]  # (1, 1, tgt_len, tgt_len)
    padding = torch.arange(src_len)[None, :] < src_lengths[:, None]  # (batch, src_len)
    return causal, padding


def decoder_masks_inverted(src_lengths, src_len, tgt_len):
    causal, padding = _decoder_masks(src_lengths, src_len, tgt_len)
    return ~causal, ~padding[:, None, None, :]


def decoder_masks_key_padding_2d(src_lengths, src_len, tgt_len):
    causal, padding = _decoder_masks(src_lengths, src_len, tgt_len)
    return causal, padding


def decoder_masks_3d(src_lengths, src_len, tgt_len):
    causal, padding = _decoder_masks(src_lengths, src_len, tgt_len)
    return causal, padding[:, None, :]  # (batch, 1, src_len): 3-D


# 08 · my_positions(num_positions, d_model)
def _angles(num_positions, d_model):
    import torch

    positions = torch.arange(num_positions, dtype=torch.float32)[:, None]  # (num_positions, 1)
    inv_freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)  # (d_model / 2,)
    return positions * inv_freq  # (num_positions, d_model / 2)


def positions_sin_cos_swapped(num_positions, d_model):
    import torch

    angles = _angles(num_positions, d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2], pe[:, 1::2] = torch.cos(angles), torch.sin(angles)
    return pe


def positions_concatenated(num_positions, d_model):
    import torch

    angles = _angles(num_positions, d_model)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)  # (num_positions, d_model)
