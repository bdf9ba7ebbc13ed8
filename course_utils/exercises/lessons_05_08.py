"""Exercises and predictions of lessons 05–08: cases, references, misconceptions, hints.

Introduced in ``notebooks/00_start_here.ipynb``. Nothing here runs at import time; torch is
imported inside the functions.
"""

from __future__ import annotations

import math

import numpy as np

from course_utils import misconceptions as bugs
from course_utils.exercises._model import Exercise
from course_utils.exercises._seeding import torch_seeded
from course_utils.exercises.lessons_00_04 import _COUNT_FORBIDDEN, _count_reference

__all__ = ["EXERCISES", "PREDICTIONS"]


# 05 ------------------------------------------------------------------------------------------
def _entropy_cases():
    return [
        (np.array([0.0, 1.0, 0.0]),),  # one-hot: 0
        (np.full(8, 1 / 8),),  # uniform: ln 8
        (np.array([0.5, 0.5, 0.0, 0.0]),),  # two keys: ln 2
        (np.array([0.7, 0.2, 0.1]),),
    ]


def _entropy_reference(row):
    from course_utils import heads

    return float(heads.attention_entropy(row))


def _previous_cases():
    rng = np.random.default_rng(5)
    shift = np.eye(6, k=-1)  # query i -> key i - 1
    shift[0, 0] = 1.0  # query 0 has no previous token: let it look at itself
    random_weights = rng.dirichlet(np.ones(7), size=(3, 7))  # (heads, seq_len, seq_len), rows sum to 1
    return [(np.stack([shift, np.eye(6), np.full((6, 6), 1 / 6)]),), (random_weights,)]


def _previous_reference(weights):
    from course_utils import heads

    return heads.head_role_scores(weights)["previous"]


def _count_cases_05():
    return [(512, 8, True), (512, 1, True), (64, 4, False), (768, 12, True)]


# 06 ------------------------------------------------------------------------------------------
def fold_blocks(update, row, block_size):
    """Run an update function over the blocks of a row, from the empty state."""
    m, l = -math.inf, 0.0
    for start in range(0, len(row), block_size):
        m, l = update(m, l, row[start : start + block_size])
    return m, l


def _online_cases():
    rng = np.random.default_rng(3)
    return [
        (np.array([1.0, 2.0, 3.0]), 2),  # the example worked in the lesson
        (np.array([3.0, 2.0, 1.0, 0.0]), 1),  # the maximum comes first
        (rng.normal(size=10) * 20, 3),  # big values: without the running max, exp overflows
        (rng.normal(size=7), 7),  # one block = ordinary softmax statistics
    ]


def _online_reference(row, block_size):
    from course_utils import efficient

    m, l = efficient.online_softmax_stats(row, block_size)
    return float(m[0]), float(l[0])


def _bytes_cases():
    return [(2, 4, 5, 7, 4), (1, 8, 16, 16, 4), (3, 2, 9, 4, 8)]


def _bytes_reference(batch, heads, q_len, k_len, bytes_per_value):
    import torch

    from course_utils import attention

    dtype = {4: torch.float32, 8: torch.float64}[bytes_per_value]
    with torch_seeded(0):
        mha = attention.MultiHeadAttention(8 * heads, heads).to(dtype).eval()
    query, key = torch.zeros(batch, q_len, 8 * heads, dtype=dtype), torch.zeros(batch, k_len, 8 * heads, dtype=dtype)
    with torch.no_grad():
        _, weights = mha(query, key, key)  # (batch, heads, q_len, k_len)
    return weights.element_size() * weights.numel()


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


def _flash_cases():
    rng = np.random.default_rng(4)
    return [
        tuple(rng.normal(size=(n, d)) for n, d in ((n_q, 4), (n_k, 4), (n_k, 3))) + (b,)
        for n_q, n_k, b in ((6, 6, 2), (5, 9, 4), (7, 3, 7))
    ]


def _flash_reference(q, k, v, block):
    from course_utils import efficient

    return efficient.naive_attention(q, k, v)


def decode_with(step, x, w_q, w_k, w_v):
    """Causal self-attention over ``x`` built from a cached decoding ``step``, one token at a time."""
    k_cache, v_cache = np.zeros((0, w_k.shape[1])), np.zeros((0, w_v.shape[1]))  # empty caches (t = 0)
    outputs = []
    for x_t in x:
        out, k_cache, v_cache = step(x_t, k_cache, v_cache, w_q, w_k, w_v)
        outputs.append(out)
    return np.stack(outputs)  # (seq_len, d_value)


def _kv_cases():
    rng = np.random.default_rng(6)
    return [
        tuple(rng.normal(size=shape) for shape in ((n, d_model), (d_model, d_head), (d_model, d_head), (d_model, d_v)))
        for n, d_model, d_head, d_v in ((1, 4, 2, 2), (5, 6, 4, 3), (8, 8, 4, 4))
    ]


def _kv_reference(x, w_q, w_k, w_v):
    from course_utils import efficient

    return efficient.naive_attention(x @ w_q, x @ w_k, x @ w_v, causal=True)


# 07 ------------------------------------------------------------------------------------------
def _io_cases():
    import torch

    return [
        (torch.tensor([[5, 4, 3]]), torch.tensor([3])),
        (torch.tensor([[5, 4, 3], [7, 6, 0], [8, 0, 0]]), torch.tensor([3, 2, 1])),
        (torch.tensor([[12, 11, 10, 9, 8, 7]]), torch.tensor([6])),
    ]


def _io_reference(y, lengths):
    from course_utils import data

    return data.make_decoder_io(y, lengths)


def _score_cases():
    import torch

    gen = torch.Generator().manual_seed(1)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    return [
        (randn(1, 4), randn(1, 3, 6), randn(4, 2), randn(6, 2), randn(2)),
        (randn(3, 8), randn(3, 5, 8), randn(8, 4), randn(8, 4), randn(4)),
    ]


def _score_reference(s, h, W_s, W_h, v):
    from course_utils.reversal import rnn

    return rnn.additive_scores(s @ W_s, h @ W_h, v)


# 08 ------------------------------------------------------------------------------------------
def _mask_cases():
    import torch

    return [(torch.tensor([3, 5]), 5, 4), (torch.tensor([1]), 4, 1), (torch.tensor([2, 6, 4]), 6, 7)]


def _mask_reference(src_lengths, src_len, tgt_len):
    from course_utils.reversal import transformer

    return transformer.make_decoder_masks(src_lengths, src_len, tgt_len)


def _position_cases():
    return [(2, 4), (24, 32), (100, 8)]


def _position_reference(num_positions, d_model):
    from course_utils.reversal import transformer

    return transformer.sinusoidal_positions(num_positions, d_model)


EXERCISES = [
    Exercise(
        id="05.row_entropy",
        title="row_entropy",
        section="05 · Entropy: how spread out is a head?",
        function="row_entropy",
        make_cases=_entropy_cases,
        reference=_entropy_reference,
        misconceptions={"entropy_zero_terms": bugs.entropy_zero_terms},
        forbidden=("course_utils.heads:attention_entropy", "course_utils.heads:head_entropy"),
        hints=(
            "-sum(w * ln w) over the keys, in nats (np.log), with the convention 0 · ln 0 = 0.",
            "np.log(0) is -inf and 0 * -inf is NaN, so drop the zeros first: nonzero = row[row > 0], then "
            "-(nonzero * np.log(nonzero)).sum(). Return float(...).",
        ),
    ),
    Exercise(
        id="05.previous_token_score",
        title="previous_token_score",
        section="05 · Which head does what? Role scores",
        function="previous_token_score",
        make_cases=_previous_cases,
        reference=_previous_reference,
        misconceptions={"next_token_diagonal": bugs.previous_token_next_diagonal},
        forbidden=("course_utils.heads:head_role_scores",),
        hints=(
            "For each head, read the entries weights[h, i, i - 1] for i = 1 .. seq_len - 1 and average them.",
            "Index a whole diagonal at once: with i = np.arange(1, seq_len), weights[:, i, i - 1] has shape "
            "(heads, seq_len - 1). Average over the last axis.",
        ),
    ),
    Exercise(
        id="05.count_attention_parameters",
        title="count_attention_parameters",
        section="03 · Parameters: the same for any number of heads",
        function="count_attention_parameters",
        make_cases=_count_cases_05,
        reference=_count_reference,
        misconceptions={
            "params_three_matrices": bugs.params_three_matrices,
            "params_ignore_bias_flag": bugs.params_ignore_bias_flag,
        },
        forbidden=_COUNT_FORBIDDEN,
        hints=(
            "A formula in d_model and bias only: does num_heads change any matrix?",
            "query_proj, key_proj, value_proj and out_proj each hold a (d_model, d_model) weight and, with "
            "bias=True, a (d_model,) bias. The seed forgot out_proj and the biases.",
        ),
    ),
    Exercise(
        id="06.online_update",
        title="online_update",
        section="06 · Online softmax: one pass, running max and running sum",
        function="online_update",
        make_cases=_online_cases,
        reference=_online_reference,
        misconceptions={"online_no_rescale": bugs.online_update_no_rescale},
        forbidden=("course_utils.efficient:online_softmax_stats", "course_utils.efficient:online_softmax"),
        hints=(
            "The new maximum is max(m, block.max()). The old sum l was taken relative to m: what happens to each of "
            "its terms when the maximum becomes m_new?",
            "Relative to m_new each old term is smaller by the factor exp(m - m_new), so l_new = l * exp(m - m_new) + "
            "sum(exp(block - m_new)). On the first block m = -inf and exp(-inf) = 0: no special case needed.",
        ),
        output_names=("m", "l"),
        driver=fold_blocks,
    ),
    Exercise(
        id="06.weights_bytes",
        title="weights_bytes",
        section="06 · Peak memory: naive versus tiled",
        function="weights_bytes",
        make_cases=_bytes_cases,
        reference=_bytes_reference,
        misconceptions={"bytes_without_heads": bugs.weights_bytes_without_heads},
        forbidden=("course_utils.attention:MultiHeadAttention.forward",),
        hints=(
            "One value per (batch, head, query, key).",
            "Multiply the four sizes and the bytes per value. At batch 8, 8 heads and 4096 tokens that is "
            "8 · 8 · 4096² · 4 bytes, over 4 GB, for one layer's weights.",
        ),
    ),
    Exercise(
        id="06.flash_step",
        title="flash_step",
        section="06 · Tiled attention, FlashAttention-style",
        function="flash_step",
        make_cases=_flash_cases,
        reference=_flash_reference,
        misconceptions={"online_no_rescale": bugs.flash_step_no_rescale},
        forbidden=("course_utils.efficient:tiled_attention", "course_utils.efficient:naive_attention"),
        hints=(
            "The same three moves as the online softmax, with an accumulator riding along: new max, rescale factor, "
            "then update l and acc.",
            "m_new = np.maximum(m, scores.max(axis=-1, keepdims=True)), p = np.exp(scores - m_new), rescale = "
            "np.exp(m - m_new); then l * rescale + p.sum(-1, keepdims=True) and acc * rescale + p @ v_tile.",
        ),
        driver=tiled_with,
        atol=1e-10,
    ),
    Exercise(
        id="06.kv_cache_step",
        title="kv_cache_step",
        section="06 · Decoding one token at a time: the KV cache",
        function="kv_cache_step",
        make_cases=_kv_cases,
        reference=_kv_reference,
        misconceptions={"kv_cache_not_returned": bugs.kv_cache_not_returned},
        forbidden=(
            "course_utils.efficient:kv_cache_step",
            "course_utils.efficient:decode_with_cache",
            "course_utils.efficient:decode_without_cache",
            "course_utils.efficient:naive_attention",
        ),
        hints=(
            "Project only the new token: q = x_t @ w_q, and one new key and value. Append them to the caches, then "
            "attend from q over every cached key (the new one included).",
            "k_cache = np.concatenate([k_cache, (x_t @ w_k)[None, :]]) and the same for v; scores = k_cache @ q / "
            "np.sqrt(len(q)); softmax them (subtract the max first); output = weights @ v_cache. Return "
            "(output, k_cache, v_cache).",
        ),
        driver=decode_with,
        atol=1e-10,
    ),
    Exercise(
        id="07.my_decoder_io",
        title="my_decoder_io",
        section="07 · Teacher forcing, done right",
        function="my_decoder_io",
        make_cases=_io_cases,
        reference=_io_reference,
        misconceptions={
            "decoder_fed_target": bugs.decoder_io_fed_target,
            "eos_after_padding": bugs.decoder_io_eos_after_padding,
        },
        forbidden=("course_utils.data:make_decoder_io", "course_utils.data:collate"),
        hints=(
            "decoder_input = BOS + y (shifted right by one); target = y + EOS, with EOS right after each sequence's "
            "last real token.",
            "torch.cat([bos_column, y], dim=1) with bos_column = torch.full((batch, 1), data.BOS) gives the input. "
            "For the target, append a PAD column to y, then write data.EOS at column lengths[b] of each row: a loop, "
            "or target.scatter(1, lengths[:, None], data.EOS).",
        ),
        output_names=("decoder_input", "target"),
    ),
    Exercise(
        id="07.my_additive_scores",
        title="my_additive_scores",
        section="07 · Additive attention",
        function="my_additive_scores",
        make_cases=_score_cases,
        reference=_score_reference,
        misconceptions={"additive_no_tanh": bugs.additive_scores_no_tanh},
        forbidden=("course_utils.reversal.rnn:additive_scores",),
        hints=(
            "Project both sides, add the query part to every key part, tanh, then a dot product with v.",
            "s @ W_s is (batch, d_attn) and h @ W_h is (batch, k_len, d_attn). Add a length axis to the first, "
            "(s @ W_s)[:, None, :], so it broadcasts over the keys; then torch.tanh(...) @ v gives (batch, k_len).",
        ),
        atol=1e-5,
    ),
    Exercise(
        id="08.my_decoder_masks",
        title="my_decoder_masks",
        section="08 · The decoder's masks",
        function="my_decoder_masks",
        make_cases=_mask_cases,
        reference=_mask_reference,
        misconceptions={
            "mask_inverted": bugs.decoder_masks_inverted,
            "key_padding_as_2d": bugs.decoder_masks_key_padding_2d,
            "mask_3d_heads": bugs.decoder_masks_3d,
        },
        forbidden=("course_utils.reversal.transformer:make_decoder_masks",),
        hints=(
            "Two masks: a causal one for the decoder's self-attention, a padding one for its cross-attention; both "
            "4-D so that they broadcast against (batch, heads, q_len, k_len) scores.",
            "masks.make_causal_mask(tgt_len)[None, None] is (1, 1, tgt_len, tgt_len). "
            "masks.padding_to_attention_mask(masks.make_padding_mask(src_lengths, src_len)) is (batch, 1, 1, src_len).",
        ),
        output_names=("self_mask", "cross_mask"),
    ),
    Exercise(
        id="08.my_positions",
        title="my_positions",
        section="08 · Positions: sinusoidal encodings",
        function="my_positions",
        make_cases=_position_cases,
        reference=_position_reference,
        misconceptions={
            "positions_sin_cos_swapped": bugs.positions_sin_cos_swapped,
            "positions_concatenated": bugs.positions_concatenated,
        },
        forbidden=("course_utils.reversal.transformer:sinusoidal_positions",),
        hints=(
            "One table of angles p / 10000^(2i / d_model), shape (num_positions, d_model / 2); sines go in the even "
            "columns, cosines in the odd ones.",
            "positions = torch.arange(num_positions)[:, None]; frequencies 10000 ** (-torch.arange(0, d_model, 2) / "
            "d_model); their product broadcasts to (num_positions, d_model / 2). Fill pe[:, 0::2] with its sine and "
            "pe[:, 1::2] with its cosine.",
        ),
        atol=1e-5,
    ),
]

PREDICTIONS: list = []
