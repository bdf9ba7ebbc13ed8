"""Exercises and predictions of lessons 00–04: cases, references, misconceptions, hints.

Introduced in ``notebooks/00_start_here.ipynb``. Nothing here runs at import time; torch is
imported inside the functions.
"""

from __future__ import annotations

import numpy as np

from course_utils import misconceptions as bugs
from course_utils.exercises._model import Exercise, Prediction
from course_utils.exercises._seeding import torch_seeded

__all__ = ["EXERCISES", "PREDICTIONS"]

# the worked example of lesson 01: three tokens, d_head = 2
_Q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # (q_len=3, d_head=2)
_K = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]])  # (k_len=3, d_head=2)
_V = np.array([[10.0, 0.0], [0.0, 10.0], [5.0, 5.0]])  # (k_len=3, d_value=2)


# 00 ------------------------------------------------------------------------------------------
def _dot_cases():
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((3, 2)), rng.standard_normal((4, 2))), (np.eye(2), np.ones((5, 2)))]


def _dot_reference(q, k):
    return q @ k.T  # (q_len, d) @ (d, k_len) -> (q_len, k_len)


# 01 ------------------------------------------------------------------------------------------
def _softmax_cases():
    rng = np.random.default_rng(1)
    return [
        (np.array([1.0, 2.0, 3.0]), -1),
        (np.array([[1000.0, 1001.0], [-1000.0, -999.0]]), -1),  # two rows on very different scales
        (np.array([[1e4, 0.0], [0.0, 1e4], [5.0, 5.0]]), 0),  # down the columns
        (100 * rng.standard_normal((2, 3, 4)), 1),
    ]


def _softmax_reference(x, axis=-1):
    from course_utils import numpy_attention

    return numpy_attention.softmax(x, axis=axis)


def _by_hand_reference():
    from course_utils import numpy_attention

    out_new, w_new = numpy_attention.scaled_dot_product_attention(np.array([[2.0, -1.0]]), _K, _V)
    return w_new[0], out_new[0]


def _temperature_cases():
    rng = np.random.default_rng(2)
    return [
        (_Q, _K, _V, 1.0),
        (_Q, _K, _V, 0.1),
        (rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 6, 8)), rng.standard_normal((2, 6, 3)), 5.0),
    ]


def _temperature_reference(Q, K, V, temperature):
    from course_utils import numpy_attention

    return numpy_attention.scaled_dot_product_attention(Q / temperature, K, V)  # dividing Q by T divides the scores


def _self_attention_cases():
    rng = np.random.default_rng(4)
    return [
        # (X, W_q, W_k, W_v): d_model 3, d_head 2, d_value 3
        (rng.standard_normal((4, 3)), *(rng.standard_normal((3, n)) for n in (2, 2, 3))),
        # batch 2, seq_len 5, d_model = d_head = d_value = 4
        (rng.standard_normal((2, 5, 4)), *(rng.standard_normal((4, 4)) / 2 for _ in range(3))),
        # d_model 6, d_head 3, d_value 2
        (rng.standard_normal((3, 6)), *(rng.standard_normal((6, n)) / 2 for n in (3, 3, 2))),
    ]


def _self_attention_reference(X, W_q, W_k, W_v):
    from course_utils import numpy_attention

    # (..., seq_len, d_model) @ (d_model, d_head) -> (..., seq_len, d_head); W_v gives d_value
    return numpy_attention.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)


def _score_scale_cases():
    return [(64, 1.0), (16, 4.0), (100, 0.25), (1, 9.0)]


def _score_scale_reference(d_head, variance):
    return float(np.sqrt(d_head) * variance)  # std of q·k: sqrt(d_head * variance**2)


def _order_blind_attention(X):
    """Self-attention of X (seq_len, d_model) with fixed projections: permutation equivariant."""
    from course_utils import numpy_attention

    d_model = X.shape[-1]
    W_q, W_k, W_v = np.random.default_rng(5).standard_normal((3, d_model, d_model)) / np.sqrt(d_model)
    return numpy_attention.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)[0]


def _running_sum(X):
    """Each row is the sum of the rows up to it: depends on the order."""
    return np.cumsum(X, axis=0)


def _attention_with_positions(X):
    """Self-attention after adding a different vector to each position: depends on the order."""
    positions = 0.5 * np.arange(len(X))[:, None] * np.ones(X.shape[-1])  # (seq_len, d_model)
    return _order_blind_attention(X + positions)


def _centred(X):
    """Each row minus the mean row: permutation equivariant."""
    return X - X.mean(axis=0)


def _equivariance_cases():
    X = np.random.default_rng(6).standard_normal((5, 4))  # (seq_len, d_model)
    cycle = np.array([1, 2, 0, 4, 3])  # not its own inverse
    swap = np.array([1, 0, 2, 3, 4])  # its own inverse
    return [
        (_order_blind_attention, X, cycle),
        (_running_sum, X, cycle),
        (_attention_with_positions, X, cycle),
        (_centred, X, cycle),
        (_order_blind_attention, X, swap),
    ]


def _equivariance_reference(fn, X, perm):
    return bool(np.allclose(fn(X[perm]), fn(X)[perm]))


# 02 ------------------------------------------------------------------------------------------
def _causal_cases():
    return [(1,), (4,), (7,)]


def _causal_reference(seq_len):
    from course_utils import masks

    return masks.make_causal_mask(seq_len)


def _padding_cases():
    import torch

    return [(torch.tensor([3, 1]), 4), (torch.tensor([0, 2, 5]), 5), (torch.tensor([2]), 6)]


def _padding_reference(lengths, max_len):
    from course_utils import masks

    return masks.make_padding_mask(lengths, max_len)


def _decoder_mask_cases():
    import torch

    return [(torch.tensor([4, 2]), 4), (torch.tensor([3]), 5), (torch.tensor([1, 5, 3]), 5)]


def _decoder_mask_reference(lengths, seq_len):
    from course_utils import masks

    causal_part = masks.make_causal_mask(seq_len)  # (q_len, k_len)
    key_part = masks.padding_to_attention_mask(masks.make_padding_mask(lengths, seq_len))  # (batch, 1, 1, k_len)
    return masks.combine_masks(causal_part, key_part)  # (batch, 1, q_len, k_len)


def _masked_softmax_cases():
    import torch

    from course_utils import masks

    gen = torch.Generator().manual_seed(4)
    padding = masks.padding_to_attention_mask(masks.make_padding_mask(torch.tensor([3, 0]), 4))  # (2, 1, 1, 4)
    left_padded = torch.tensor([False, False, True, True])  # (k_len,): two pads, then two tokens
    causal_left = (left_padded & masks.make_causal_mask(4))[None, None]  # (1, 1, 4, 4): rows 0 and 1 empty
    return [
        (torch.randn(2, 1, 3, 4, generator=gen, dtype=torch.float64), padding),
        (torch.randn(1, 2, 4, 4, generator=gen, dtype=torch.float64), causal_left),
    ]


def _masked_softmax_reference(scores, mask):
    import torch

    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, torch.zeros_like(weights))  # empty rows: zeros


def _window_cases():
    return [(5, 2), (6, 3), (4, 1), (3, 5)]  # window 1: only itself; window >= seq_len: plain causal


def _window_reference(seq_len, window):
    import torch

    i = torch.arange(seq_len)[:, None]  # (q_len, 1)
    j = torch.arange(seq_len)[None, :]  # (1, k_len)
    return (j <= i) & (j > i - window)  # (q_len, k_len): itself and the window - 1 keys before it


def _leak_layers():
    """Attention layers (batch, seq_len, 8) -> (batch, seq_len, 8): some causal, some leaking the future."""
    import torch

    from course_utils import attention, masks

    with torch_seeded(5):
        mha = attention.MultiHeadAttention(d_model=8, num_heads=2).double().eval()

    def causal(x):
        return mha(x, x, x, mask=masks.make_causal_mask(x.shape[1]))[0].detach()

    def sees_next_token(x):  # tril(diagonal=1): query i also reads key i + 1
        return mha(x, x, x, mask=torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).tril(1))[0].detach()

    def unmasked(x):
        return mha(x, x, x)[0].detach()

    def leaks_a_little(x):  # the future's scores lowered by 30 instead of removed: weights of about 1e-13
        h = x @ mha.query_proj.weight.T  # (batch, seq_len, 8): one head, enough to show the leak
        scores = h @ h.transpose(-2, -1)  # (batch, seq_len, seq_len)
        future = ~masks.make_causal_mask(x.shape[1])
        return torch.softmax(scores - 30.0 * future, dim=-1) @ x  # (batch, seq_len, seq_len) @ (batch, seq_len, 8)

    def misses_itself(x):  # tril(diagonal=-1): over-masked (query 0 sees nothing), but no leak
        return mha(x, x, x, mask=torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).tril(-1))[0].detach()

    return causal, sees_next_token, unmasked, leaks_a_little, misses_itself


def _leaks_cases():
    causal, sees_next_token, unmasked, leaks_a_little, misses_itself = _leak_layers()
    return [(causal, 6), (sees_next_token, 5), (unmasked, 4), (leaks_a_little, 6), (misses_itself, 5)]


def _leaks_reference(attend, seq_len):
    import torch

    gen = torch.Generator().manual_seed(0)
    for t in range(seq_len - 1):  # change every token after t; positions 0..t must not move at all
        x = torch.randn(1, seq_len, 8, generator=gen, dtype=torch.float64)  # (batch, seq_len, d_model)
        changed = x.clone()
        changed[:, t + 1 :] = torch.randn(1, seq_len - t - 1, 8, generator=gen, dtype=torch.float64)
        if not torch.equal(attend(x)[:, : t + 1], attend(changed)[:, : t + 1]):
            return True
    return False


def _cross_padded_cases():
    import torch

    from course_utils import attention

    with torch_seeded(6):
        mha = attention.MultiHeadAttention(d_model=8, num_heads=2).double().eval()
        # batch == q_len in every case: the shapes alone cannot tell (batch, k_len) from (q_len, k_len)
        return [
            (
                mha,
                torch.randn(2, 2, 8, dtype=torch.float64),
                torch.randn(2, 5, 8, dtype=torch.float64),
                torch.tensor([5, 2]),
            ),
            (
                mha,
                torch.randn(3, 3, 8, dtype=torch.float64),
                torch.randn(3, 4, 8, dtype=torch.float64),
                torch.tensor([1, 4, 3]),
            ),
        ]


def _cross_padded_reference(mha, decoder_states, encoder_states, encoder_lengths):
    from course_utils import masks

    padding = masks.make_padding_mask(encoder_lengths, encoder_states.shape[1])  # (batch, k_len)
    return mha(decoder_states, encoder_states, encoder_states, key_padding_mask=padding)[0]


def _nn_decoder_cases():
    import torch
    from torch import nn

    with torch_seeded(7):
        torch_mha = nn.MultiheadAttention(8, 2, batch_first=True, dtype=torch.float64).eval()
        return [
            (torch_mha, torch.randn(2, 5, 8, dtype=torch.float64), torch.tensor([5, 3])),
            (torch_mha, torch.randn(3, 4, 8, dtype=torch.float64), torch.tensor([1, 4, 2])),
        ]


def _nn_decoder_reference(torch_mha, x, lengths):
    from course_utils import masks

    padding = masks.make_padding_mask(lengths, x.shape[1])  # (batch, k_len), True = real token
    causal = masks.make_causal_mask(x.shape[1])  # (q_len, k_len), True = may attend
    # nn.MultiheadAttention: True = ignore this key / not allowed
    return torch_mha(x, x, x, key_padding_mask=~padding, attn_mask=~causal)[0]


# 03 ------------------------------------------------------------------------------------------
def _split_cases():
    rng = np.random.default_rng(1)
    return [
        (rng.normal(size=(2, 5, 8)), 2),
        (rng.normal(size=(1, 7, 12)), 3),  # another length, another head count
        (rng.normal(size=(3, 1, 6)), 6),  # d_head = 1
    ]


def _split_reference(x, num_heads):
    from course_utils import numpy_attention

    return numpy_attention.split_heads(x, num_heads)


def _count_cases_03():
    return [(512, 8, True), (512, 1, True), (768, 12, True), (64, 4, False), (1024, 16, True)]


def _count_reference(d_model, num_heads, bias=True):
    from course_utils import attention

    with torch_seeded(0):
        module = attention.MultiHeadAttention(d_model, num_heads, bias=bias)
    return sum(p.numel() for p in module.parameters())


def _numpy_cross_cases():
    rng = np.random.default_rng(3)
    d_model = 8
    W = [rng.normal(0, 1 / np.sqrt(d_model), size=(d_model, d_model)) for _ in range(4)]
    return [
        (rng.normal(size=(2, 3, d_model)), rng.normal(size=(2, 6, d_model)), np.array([6, 4]), *W, 2),
        (rng.normal(size=(3, 1, d_model)), rng.normal(size=(3, 5, d_model)), np.array([1, 5, 3]), *W, 4),
    ]


def _numpy_cross_reference(decoder_states, encoder_states, encoder_lengths, W_q, W_k, W_v, W_o, num_heads):
    from course_utils import numpy_attention

    k_len = encoder_states.shape[1]
    mask = np.zeros((len(encoder_lengths), 1, 1, k_len), dtype=bool)  # (batch, 1, 1, k_len)
    for b, length in enumerate(encoder_lengths):
        mask[b, 0, 0, :length] = True
    return numpy_attention.multi_head_attention(
        decoder_states, encoder_states, encoder_states, W_q, W_k, W_v, W_o, num_heads, mask=mask
    )


def _slices_cases():
    rng = np.random.default_rng(4)
    d_model = 8
    W = [rng.normal(0, 1 / np.sqrt(d_model), size=(d_model, d_model)) for _ in range(4)]
    x = rng.normal(size=(2, 5, d_model))
    return [
        (x, x, x, *W, 2),  # self-attention
        (rng.normal(size=(1, 3, d_model)), *[rng.normal(size=(1, 6, d_model))] * 2, *W, 4),  # cross-attention
        (x, x, x, *W, 1),  # one head
    ]


def _slices_reference(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    from course_utils import numpy_attention

    return numpy_attention.multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads)[0]


def _flops_cases():
    # (batch, q_len, k_len, d_model, num_heads): lengths differ, as in cross-attention
    return [(1, 3, 7, 16, 4), (2, 5, 2, 8, 2), (3, 1, 10, 32, 8), (1, 6, 6, 24, 3)]


def _flops_reference(batch, q_len, k_len, d_model, num_heads):
    """Measured, not computed: run a real layer under torch's FLOP counter and read its matmuls."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from course_utils import attention

    with torch_seeded(0):
        mha = attention.MultiHeadAttention(d_model, num_heads).eval()
        query, memory = torch.randn(batch, q_len, d_model), torch.randn(batch, k_len, d_model)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        mha(query, memory, memory)  # the weights path: scores and weights @ values are explicit bmm calls
    counts = {str(op): flops for op, flops in counter.get_flop_counts()["Global"].items()}
    projections = counts.get("aten.addmm", 0) + counts.get("aten.mm", 0)  # the four nn.Linear layers
    return projections, counts.get("aten.bmm", 0)  # (scores) + (weights @ values)


# 04 ------------------------------------------------------------------------------------------
def _forward_cases():
    import torch

    from course_utils import attention

    with torch_seeded(1):
        mha = attention.MultiHeadAttention(d_model=16, num_heads=4, dropout=0.1).eval()  # eval: no dropout
        return [
            (mha, torch.randn(2, 5, 16), torch.randn(2, 5, 16), torch.randn(2, 5, 16)),  # self-attention shapes
            (mha, torch.randn(2, 3, 16), torch.randn(2, 7, 16), torch.randn(2, 7, 16)),  # keys longer than queries
            (mha, torch.randn(1, 6, 16), torch.randn(1, 2, 16), torch.randn(1, 2, 16)),  # keys shorter than queries
        ]


def _forward_reference(mha, query, key, value):
    return mha(query, key, value)[0]


def _torch_cross_cases():
    import torch

    from course_utils import attention

    with torch_seeded(2):
        mha = attention.MultiHeadAttention(d_model=16, num_heads=4).eval()
        return [
            (mha, torch.randn(2, 3, 16), torch.randn(2, 6, 16), torch.tensor([6, 4])),
            (mha, torch.randn(3, 4, 16), torch.randn(3, 5, 16), torch.tensor([1, 5, 3])),
        ]


def _torch_cross_reference(mha, decoder_states, encoder_states, encoder_lengths):
    import torch

    batch, k_len = encoder_states.shape[:2]
    mask = torch.zeros(batch, 1, 1, k_len, dtype=torch.bool)  # (batch, 1, 1, k_len)
    for b, length in enumerate(encoder_lengths.tolist()):
        mask[b, 0, 0, :length] = True
    return mha(decoder_states, encoder_states, encoder_states, mask=mask)


def _nn_mha_cases():
    import torch
    from torch import nn

    from course_utils import masks

    with torch_seeded(3):
        torch_mha = nn.MultiheadAttention(16, 4, batch_first=True).eval()
        return [
            (torch_mha, torch.randn(2, 3, 16), torch.randn(2, 6, 16), masks.make_padding_mask(torch.tensor([6, 2]), 6)),
            (torch_mha, torch.randn(1, 5, 16), torch.randn(1, 4, 16), masks.make_padding_mask(torch.tensor([3]), 4)),
        ]


def _nn_mha_reference(torch_mha, decoder_states, encoder_states, padding_mask):
    from course_utils import attention

    ours = attention.MultiHeadAttention.from_torch(torch_mha).eval()
    mask = padding_mask[:, None, None, :]  # (batch, k_len) -> (batch, 1, 1, k_len)
    return ours(decoder_states, encoder_states, encoder_states, mask=mask)[0]


def _fuse_cases():
    import torch

    from course_utils import attention

    with torch_seeded(4):
        cases = []
        for d_model, heads, shape in ((16, 4, (2, 5)), (8, 2, (1, 3))):
            mha = attention.MultiHeadAttention(d_model, heads).eval()
            cases.append((mha, torch.randn(*shape, d_model)))
        return cases


def _apply_fused(fuse_qkv, mha, x):
    """Build the student's fused layer, run it once, cut its output into queries, keys and values."""
    import torch

    fused = fuse_qkv(mha)
    with torch.no_grad():
        # (batch, seq_len, 3 * d_model) -> 3 x (batch, seq_len, d_model)
        return tuple(fused(x).chunk(3, dim=-1))


def _fuse_reference(mha, x):
    import torch

    with torch.no_grad():
        return mha.query_proj(x), mha.key_proj(x), mha.value_proj(x)


def _analysis_cases():
    import torch

    from course_utils import attention

    with torch_seeded(5):
        training = attention.MultiHeadAttention(16, 4, dropout=0.5)  # a new module is in training mode
        evaluating = attention.MultiHeadAttention(8, 2, dropout=0.3).eval()
        return [(training, torch.randn(2, 5, 16)), (evaluating, torch.randn(1, 4, 8))]


def _weights_and_mode(weights_for_analysis, mha, x):
    """The student's weights, and the mode the module is left in."""
    return weights_for_analysis(mha, x), mha.training


def _analysis_reference(mha, x):
    import torch

    was_training = mha.training
    mha.eval()
    with torch.no_grad():
        weights = mha(x, x, x)[1]  # (batch, heads, seq_len, seq_len)
    mha.train(was_training)
    return weights, mha.training


def _qk_cases():
    from course_utils import attention

    with torch_seeded(6):
        return [
            (attention.MultiHeadAttention(16, 1),),
            (attention.MultiHeadAttention(8, 2),),
            (attention.MultiHeadAttention(6, 3, bias=False),),
        ]


def _qk_reference(mha):
    import torch

    with torch.no_grad():
        # W_q = query_proj.weight.T, W_k = key_proj.weight.T: (d_model, d_model) @ (d_model, d_model)
        return mha.query_proj.weight.T @ mha.key_proj.weight


_COUNT_FORBIDDEN = (
    "course_utils.attention:MultiHeadAttention.__init__",
    "torch.nn:MultiheadAttention.__init__",
    "course_utils.efficient:mha_param_count",
)

EXERCISES = [
    Exercise(
        id="00.dot_scores",
        title="dot_scores",
        section="00 · Exercise 1 · dot-product scores",
        function="dot_scores",
        make_cases=_dot_cases,
        reference=_dot_reference,
        misconceptions={"scores_transposed": bugs.dot_scores_transposed},
        hints=(
            "Entry [i, j] compares query i with key j: one row per query, one column per key.",
            "Row i of q against row j of k is a matrix product of q with the transpose of k: "
            "(q_len, d) @ (d, k_len). In NumPy, q @ k.T.",
        ),
    ),
    Exercise(
        id="01.softmax_along",
        title="softmax_along",
        section="01 · From scores to weights: a stable softmax",
        function="softmax_along",
        make_cases=_softmax_cases,
        reference=_softmax_reference,
        misconceptions={
            "softmax_wrong_axis": bugs.softmax_along_wrong_axis,
            "softmax_no_max_shift": bugs.softmax_along_no_max_shift,
        },
        forbidden=("course_utils.numpy_attention:softmax",),
        hints=(
            "Softmax is shift invariant: subtract something from each slice before exp, so that no exp overflows.",
            "Subtract the maximum of each slice along `axis`, not of the whole array: x.max(axis=axis, keepdims=True) "
            "keeps the reduced axis with size 1 so that it broadcasts back against x.",
            "With the global maximum, the row [-1000, -999] becomes [-2001, -2000], both exps underflow to 0, and you "
            "divide 0 by 0. Sum the exponentials along the same axis, again with keepdims=True.",
        ),
    ),
    Exercise(
        id="01.by_hand_new_query",
        title="query [2, -1] by hand",
        section="01 · Check it by hand: 3 tokens, d_head = 2",
        function="by_hand_new_query",
        make_cases=lambda: [()],
        reference=_by_hand_reference,
        misconceptions={"no_scaling": bugs.by_hand_no_scaling, "scaled_by_d_head": bugs.by_hand_scaled_by_d_head},
        forbidden=(
            "course_utils.numpy_attention:scaled_dot_product_attention",
            "course_utils.numpy_attention:softmax",
        ),
        hints=(
            "Scores first: the dot products of [2, -1] with [2, 0], [0, 2] and [1, 1], each divided by sqrt(2).",
            "Weights: exp(s_j) / sum of exp(s_j'). A negative score is fine: its exp is just small. "
            "Output: sum over j of w_j * V_j, one number per column of V. The first key should win clearly.",
        ),
        output_names=("weights", "output"),
        reveal=False,
        atol=5e-3,
        rtol=0.0,
    ),
    Exercise(
        id="01.attention_with_temperature",
        title="attention_with_temperature",
        section="01 · Explore: d_head and temperature",
        function="attention_with_temperature",
        make_cases=_temperature_cases,
        reference=_temperature_reference,
        misconceptions={
            "no_scaling": bugs.temperature_no_scaling,
            "scaled_by_d_head": bugs.temperature_scaled_by_d_head,
            "temperature_multiplies": bugs.temperature_multiplies,
            "softmax_wrong_axis": bugs.temperature_softmax_wrong_axis,
        },
        hints=(
            "Start from the attend function built in the lesson and divide the scores by temperature before "
            "the softmax, on top of the division by sqrt(d_head).",
            "For batch axes, transpose only the last two axes of K: np.swapaxes(K, -1, -2), not K.T (which reverses "
            "all axes). Write the division as / (np.sqrt(d_head) * temperature), with the parentheses.",
        ),
        output_names=("output", "weights"),
    ),
    Exercise(
        id="01.self_attention",
        title="self_attention",
        section="01 · Why learned, separate W_q, W_k, W_v",
        function="self_attention",
        make_cases=_self_attention_cases,
        reference=_self_attention_reference,
        misconceptions={
            "projections_skipped": bugs.self_attention_projections_skipped,
            "projections_transposed": bugs.self_attention_projections_transposed,
            "scaled_by_sqrt_d_model": bugs.self_attention_scaled_by_sqrt_d_model,
        },
        hints=(
            "Three matrix products first: Q = X @ W_q, K = X @ W_k, V = X @ W_v, each (..., seq_len, d_model) @ "
            "(d_model, ...). Then attention on Q, K, V, exactly as in the lesson.",
            "The scale is the size of one query, d_head = W_q.shape[-1], not d_model = X.shape[-1]. For batch axes "
            "transpose only the last two axes of K: np.swapaxes(K, -1, -2).",
        ),
        output_names=("output", "weights"),
    ),
    Exercise(
        id="01.score_scale",
        title="score_scale",
        section="01 · Why divide by √d_head",
        function="score_scale",
        make_cases=_score_scale_cases,
        reference=_score_scale_reference,
        misconceptions={
            "scale_ignores_variance": bugs.score_scale_ignores_variance,
            "scale_uses_std": bugs.score_scale_uses_std,
            "scaled_by_d_head": bugs.score_scale_by_d_head,
        },
        hints=(
            "q · k is a sum of d_head products q_i k_i. Variances of independent terms add: find Var(q_i k_i) first.",
            "For independent zero-mean q_i and k_i, Var(q_i k_i) = Var(q_i) Var(k_i) = variance ** 2, so "
            "Var(q · k) = d_head * variance ** 2. Divide by its square root, the standard deviation.",
        ),
    ),
    Exercise(
        id="01.is_permutation_equivariant",
        title="is_permutation_equivariant",
        section="01 · Attention ignores order",
        function="is_permutation_equivariant",
        make_cases=_equivariance_cases,
        reference=_equivariance_reference,
        misconceptions={
            "equivariance_output_not_permuted": bugs.equivariance_output_not_permuted,
            "equivariance_inverse_perm": bugs.equivariance_inverse_perm,
        },
        hints=(
            "Run fn twice: once on the tokens in the given order, once on X[perm]. What must the second output be, "
            "if fn ignores order?",
            "Equivariant means fn(X[perm]) is fn(X) with its rows reordered by the same perm: compare "
            "fn(X[perm]) with fn(X)[perm]. Compare floats with np.allclose, not ==, and return a bool.",
        ),
    ),
    Exercise(
        id="02.my_causal_mask",
        title="my_causal_mask",
        section="02 · Causal masks",
        function="my_causal_mask",
        make_cases=_causal_cases,
        reference=_causal_reference,
        misconceptions={"mask_inverted": bugs.causal_mask_inverted, "causal_no_diagonal": bugs.causal_mask_no_diagonal},
        forbidden=("course_utils.masks:make_causal_mask",),
        hints=(
            "Query i may attend to key j when j <= i: the lower triangle, diagonal included.",
            "Either torch.tril of a boolean tensor of ones, or compare positions directly: "
            "torch.arange(seq_len)[None, :] <= torch.arange(seq_len)[:, None] gives (1, k_len) <= (q_len, 1) -> "
            "(q_len, k_len). Make sure the result has dtype torch.bool (not 0/1 floats).",
        ),
    ),
    Exercise(
        id="02.my_padding_mask",
        title="my_padding_mask",
        section="02 · Padding masks from lengths",
        function="my_padding_mask",
        make_cases=_padding_cases,
        reference=_padding_reference,
        misconceptions={
            "mask_inverted": bugs.padding_mask_inverted,
            "padding_off_by_one": bugs.padding_mask_off_by_one,
        },
        forbidden=("course_utils.masks:make_padding_mask",),
        hints=(
            "Position j of sequence b is real when j < lengths[b]: one comparison per (sequence, position).",
            "Compare a row of positions with a column of lengths and let broadcasting build the table: "
            "(1, max_len) < (batch, 1) -> (batch, max_len). In PyTorch: torch.arange(max_len)[None, :] < "
            "lengths[:, None].",
        ),
    ),
    Exercise(
        id="02.decoder_mask",
        title="decoder_mask",
        section="02 · Shapes: lining masks up with multi-head scores",
        function="decoder_mask",
        make_cases=_decoder_mask_cases,
        reference=_decoder_mask_reference,
        misconceptions={"mask_3d_heads": bugs.decoder_mask_3d, "mask_inverted": bugs.decoder_mask_inverted},
        hints=(
            "Two masks, combined with &: key padding (which keys are real) and causal (which keys are not in the "
            "future). Give each the axes it needs to broadcast to (batch, 1, q_len, k_len).",
            "Key padding is (batch, k_len); give it the two missing axes, (batch, 1, 1, k_len) "
            "(masks.padding_to_attention_mask). The causal mask is (q_len, k_len). Combine them with &: broadcasting "
            "gives (batch, 1, q_len, k_len). A (batch, q_len, k_len) result is the bug from the lesson: against 4-D "
            "scores its batch axis would line up with the heads.",
        ),
    ),
    Exercise(
        id="02.masked_softmax",
        title="masked_softmax",
        section="02 · What our helpers do: zeros",
        function="masked_softmax",
        make_cases=_masked_softmax_cases,
        reference=_masked_softmax_reference,
        misconceptions={
            "fill_minus_1e9": bugs.masked_softmax_fill_1e9,
            "fill_minus_inf": bugs.masked_softmax_fill_inf,
            "mask_inverted": bugs.masked_softmax_inverted,
        },
        hints=(
            "Fill the forbidden scores with -inf before the softmax; then decide what a row with no allowed key "
            "should be (zeros, not NaN and not uniform).",
            "weights = torch.softmax(scores.masked_fill(~mask, float('-inf')), dim=-1) gives NaN on empty rows. "
            "mask.any(dim=-1, keepdim=True) says which rows have at least one allowed key: keep the weights there "
            "and put zeros elsewhere with torch.where.",
        ),
    ),
    Exercise(
        id="02.sliding_window_mask",
        title="sliding_window_mask",
        section="02 · Causal masks",
        function="sliding_window_mask",
        make_cases=_window_cases,
        reference=_window_reference,
        misconceptions={
            "window_off_by_one": bugs.window_mask_off_by_one,
            "window_not_causal": bugs.window_mask_not_causal,
        },
        hints=(
            "Two conditions on query i and key j, combined with &: not in the future (j <= i) and not too far back "
            "(at most window keys per query, itself included). Check the count on a small case by hand.",
            "With i = torch.arange(seq_len)[:, None] (q_len, 1) and j = torch.arange(seq_len)[None, :] (1, k_len), "
            "(j <= i) & (j > i - window) broadcasts to (q_len, k_len). Row i then has min(i + 1, window) True entries.",
        ),
    ),
    Exercise(
        id="02.leaks",
        title="leaks",
        section="02 · The no-leak experiment",
        function="leaks",
        make_cases=_leaks_cases,
        reference=_leaks_reference,
        misconceptions={
            "leak_test_tolerance": bugs.leaks_with_tolerance,
            "leak_test_changed_positions": bugs.leaks_compares_changed_positions,
        },
        hints=(
            "Run attend on a random (1, seq_len, 8) float64 sequence, change the tokens after some position t, and "
            "run it again. Which outputs are allowed to move, and which must stay exactly the same? Try every t.",
            "For t in range(seq_len - 1): changed = x.clone(); changed[:, t + 1:] = new random values; the layer "
            "leaks if not torch.equal(attend(x)[:, :t + 1], attend(changed)[:, :t + 1]). torch.allclose would let a "
            "small leak through.",
        ),
    ),
    Exercise(
        id="02.cross_attend_padded",
        title="cross_attend_padded",
        section="02 · Bug 1b: a (batch, k_len) padding mask read as (q_len, k_len)",
        function="cross_attend_padded",
        make_cases=_cross_padded_cases,
        reference=_cross_padded_reference,
        misconceptions={
            "key_padding_as_2d": bugs.cross_padded_as_2d,
            "mask_inverted": bugs.cross_padded_inverted,
            "causal_in_cross_attention": bugs.cross_padded_causal,
        },
        hints=(
            "Queries come from the decoder, keys and values from the encoder. Which encoder positions may a decoder "
            "position read? Only the padding is hidden, and padding has its own argument.",
            "padding = masks.make_padding_mask(encoder_lengths, encoder_states.shape[1]) is (batch, k_len), True = "
            "real token; return mha(decoder_states, encoder_states, encoder_states, key_padding_mask=padding)[0]. "
            "Passing it as mask= would be read as (q_len, k_len), silently here since batch == q_len.",
        ),
    ),
    Exercise(
        id="02.nn_decoder_self_attend",
        title="nn_decoder_self_attend",
        section='02 · Two conventions: "may attend" and "ignore"',
        function="nn_decoder_self_attend",
        make_cases=_nn_decoder_cases,
        reference=_nn_decoder_reference,
        misconceptions={
            "mask_inverted": bugs.nn_decoder_masks_not_flipped,
            "causal_not_flipped": bugs.nn_decoder_causal_not_flipped,
        },
        hints=(
            "Build the two masks in our convention first (padding from lengths, causal from tril), then ask what "
            "True means for each argument of nn.MultiheadAttention.",
            "Both nn.MultiheadAttention arguments mean the opposite of ours: key_padding_mask=~padding (True = "
            "ignore this key) and attn_mask=~causal (True = not allowed). Return torch_mha(x, x, x, "
            "key_padding_mask=..., attn_mask=...)[0].",
        ),
    ),
    Exercise(
        id="03.my_split_heads",
        title="my_split_heads",
        section="03 · Step 2 · split into heads",
        function="my_split_heads",
        make_cases=_split_cases,
        reference=_split_reference,
        misconceptions={"split_single_reshape": bugs.split_heads_single_reshape},
        forbidden=("course_utils.numpy_attention:split_heads",),
        hints=(
            "Two steps: first cut the feature axis into (heads, d_head), then move the heads axis in front of seq_len.",
            "x.reshape(batch, seq_len, num_heads, d_head) cuts the feature axis into heads (each position keeps its "
            "own features), then .transpose(0, 2, 1, 3) swaps the seq_len and heads axes. A single "
            "reshape(batch, num_heads, seq_len, d_head) has the right shape and the wrong contents.",
        ),
    ),
    Exercise(
        id="03.count_attention_parameters",
        title="count_attention_parameters",
        section="03 · Parameters: the same for any number of heads",
        function="count_attention_parameters",
        make_cases=_count_cases_03,
        reference=_count_reference,
        misconceptions={
            "params_three_matrices": bugs.params_three_matrices,
            "params_ignore_bias_flag": bugs.params_ignore_bias_flag,
        },
        forbidden=_COUNT_FORBIDDEN,
        hints=(
            "List the projections: W_q, W_k, W_v and W_o. What does each hold, with and without biases?",
            "Four projections, each a (d_model, d_model) matrix and, with bias=True, a (d_model,) vector. The number "
            "of heads only decides how the projected features are grouped afterwards, so it should not appear in "
            "your formula. For d_model = 512 with biases you should get 1,050,624.",
        ),
    ),
    Exercise(
        id="03.cross_attend",
        title="cross_attend",
        section="03 · Cross-attention: `q_len ≠ k_len`",
        function="cross_attend",
        make_cases=_numpy_cross_cases,
        reference=_numpy_cross_reference,
        misconceptions={
            "mask_inverted": bugs.numpy_cross_attend_inverted,
            "key_padding_as_2d": bugs.numpy_cross_attend_2d,
        },
        hints=(
            "Queries from decoder_states; keys and values both from encoder_states; a (batch, 1, 1, k_len) mask, "
            "True for the real keys.",
            "Position j is real when j < length, so np.arange(k_len)[None, :] < encoder_lengths[:, None] gives "
            "(batch, k_len). Add the two axes with [:, None, None, :]. Then pass decoder_states as the query and "
            "encoder_states as both key and value.",
        ),
        output_names=("output", "weights"),
    ),
    Exercise(
        id="03.heads_by_weight_slices",
        title="heads_by_weight_slices",
        section="03 · Step 4 · mix the heads with `W_o`",
        function="heads_by_weight_slices",
        make_cases=_slices_cases,
        reference=_slices_reference,
        misconceptions={
            "no_output_projection": bugs.heads_by_slices_no_w_o,
            "scaled_by_sqrt_d_model": bugs.heads_by_slices_sqrt_d_model,
        },
        forbidden=(
            "course_utils.numpy_attention:multi_head_attention",
            "course_utils.numpy_attention:split_heads",
            "course_utils.numpy_attention:merge_heads",
        ),
        hints=(
            "Head h only ever uses columns h·d_head:(h+1)·d_head of W_q, W_k and W_v, and rows h·d_head:(h+1)·d_head "
            "of W_o. Loop over h, attend with those slices, and add up the heads' contributions.",
            "cols = slice(h * d_head, (h + 1) * d_head); q = query @ W_q[:, cols] (and the same for k, v); "
            "weights = softmax(q @ swapaxes(k, -1, -2) / sqrt(d_head)) over the last axis; output += "
            "(weights @ v) @ W_o[cols]. Start from output = 0.",
        ),
        atol=1e-10,
    ),
    Exercise(
        id="03.cross_attention_flops",
        title="cross_attention_flops",
        section="03 · Cost: projections versus the attention core",
        function="cross_attention_flops",
        make_cases=_flops_cases,
        reference=_flops_reference,
        misconceptions={
            "flops_one_length": bugs.flops_one_length,
            "flops_multiply_add_as_one": bugs.flops_multiply_add_as_one,
            "flops_no_out_proj": bugs.flops_no_out_proj,
        },
        forbidden=("course_utils.efficient:attention_flops",),
        hints=(
            "Write down the shape of every matmul: W_q and W_o run on the q_len query positions, W_k and W_v on the "
            "k_len key positions; the scores are (q_len, d_head) @ (d_head, k_len) per head.",
            "(m, k) @ (k, n) costs 2·m·k·n FLOPs, times batch. Projections: 2·batch·d_model²·(q_len + k_len + k_len "
            "+ q_len). Core: scores and weights @ values, each 2·batch·q_len·k_len·d_model once summed over heads.",
        ),
        output_names=("projections", "core"),
        atol=0,
        rtol=0,
    ),
    Exercise(
        id="04.my_forward",
        title="my_forward",
        section="04 · Build it step by step",
        function="my_forward",
        make_cases=_forward_cases,
        reference=_forward_reference,
        misconceptions={
            "keys_split_with_query_length": bugs.forward_keys_split_with_query_length,
            "no_scaling": bugs.forward_no_scaling,
            "scaled_by_sqrt_d_model": bugs.forward_scaled_by_sqrt_d_model,
            "softmax_wrong_axis": bugs.forward_softmax_wrong_axis,
            "dropout_in_eval": bugs.forward_dropout_in_eval,
        },
        forbidden=("course_utils.attention:MultiHeadAttention.forward",),
        hints=(
            "Four steps, as in the lesson: project (mha.query_proj, ...), split into heads, attend, merge and "
            "mha.out_proj. The checks use keys longer and shorter than the queries.",
            "Write a small split(x) that reads batch, length, _ = x.shape from its own argument and returns "
            "x.view(batch, length, mha.num_heads, mha.d_head).transpose(1, 2). Apply it to the three projections. "
            "After the attention, heads_out.transpose(1, 2).reshape(batch, q_len, mha.d_model): the output has the "
            "query's length.",
        ),
    ),
    Exercise(
        id="04.cross_attend",
        title="cross_attend",
        section="02 · Shapes: lining masks up with multi-head scores",
        function="cross_attend",
        make_cases=_torch_cross_cases,
        reference=_torch_cross_reference,
        misconceptions={
            "mask_inverted": bugs.torch_cross_attend_inverted,
            "key_padding_as_2d": bugs.torch_cross_attend_2d,
        },
        hints=(
            "Build a (batch, 1, 1, k_len) mask, True for the real keys, and pass it as mha(query, key, value, mask=...).",
            "masks.make_padding_mask(encoder_lengths, k_len) gives (batch, k_len), True for real keys; "
            "masks.padding_to_attention_mask(...) adds the heads and queries axes: (batch, 1, 1, k_len). Pass "
            "decoder_states as the query and encoder_states as both key and value.",
        ),
        output_names=("output", "weights"),
    ),
    Exercise(
        id="04.torch_cross_attend",
        title="torch_cross_attend",
        section='02 · Two conventions: "may attend" and "ignore"',
        function="torch_cross_attend",
        make_cases=_nn_mha_cases,
        reference=_nn_mha_reference,
        misconceptions={"mask_inverted": bugs.nn_mha_mask_not_flipped},
        hints=(
            "PyTorch's key_padding_mask means True = ignore this key; ours means True = real key.",
            "masks.to_key_padding_mask(padding_mask) (or simply ~padding_mask) flips our convention to PyTorch's. "
            "Then torch_mha(query, key, value, key_padding_mask=...) returns (output, averaged_weights); return the "
            "first.",
        ),
    ),
    Exercise(
        id="04.fuse_qkv",
        title="fuse_qkv",
        section="04 · One fused projection instead of three",
        function="fuse_qkv",
        make_cases=_fuse_cases,
        reference=_fuse_reference,
        misconceptions={
            "fused_weight_transposed": bugs.fuse_qkv_weight_transposed,
            "fused_no_bias": bugs.fuse_qkv_no_bias,
        },
        hints=(
            "One nn.Linear(d_model, 3 * d_model) whose output, cut in three along the last axis, gives the queries, "
            "the keys and the values. Its weight is (3 * d_model, d_model): which rows produce the queries?",
            "Inside torch.no_grad(): fused.weight.copy_(torch.cat([mha.query_proj.weight, mha.key_proj.weight, "
            "mha.value_proj.weight])) (each (d_model, d_model), already in nn.Linear's (out, in) layout, no "
            "transpose), and the same with the three biases. Return fused.",
        ),
        output_names=("queries", "keys", "values"),
        driver=_apply_fused,
    ),
    Exercise(
        id="04.weights_for_analysis",
        title="weights_for_analysis",
        section="04 · Dropout on the attention weights: training only",
        function="weights_for_analysis",
        make_cases=_analysis_cases,
        reference=_analysis_reference,
        misconceptions={
            "weights_in_training_mode": bugs.analysis_weights_in_training_mode,
            "mode_not_restored": bugs.analysis_mode_not_restored,
        },
        hints=(
            "Dropout acts only in training mode, and the module may be training. What must you switch before the "
            "call, and what must you switch back after it?",
            "was_training = mha.training; mha.eval(); with torch.no_grad(): weights = mha(x, x, x)[1]; then "
            "mha.train(was_training) and return the weights.",
        ),
        output_names=("weights", "mode afterwards (mha.training)"),
        driver=_weights_and_mode,
    ),
    Exercise(
        id="04.qk_matrix",
        title="qk_matrix",
        section="04 · Train it: retrieval by similarity",
        function="qk_matrix",
        make_cases=_qk_cases,
        reference=_qk_reference,
        misconceptions={"qk_linear_layout": bugs.qk_linear_layout, "qk_transposed": bugs.qk_transposed},
        hints=(
            "In NumPy notation the scores are x @ W_q @ W_k^T @ y^T. Write W_q and W_k in terms of the layers' "
            "weights first: nn.Linear computes x @ weight.T.",
            "W_q is mha.query_proj.weight.T and W_k is mha.key_proj.weight.T, so W_q W_k^T = "
            "mha.query_proj.weight.T @ mha.key_proj.weight. Splitting into heads only cuts this sum into pieces.",
        ),
    ),
]


PREDICTIONS = [
    Prediction(
        id="00.scores_shape",
        question="For q of shape (5, 8) and k of shape (7, 8), what is the shape of dot_scores(q, k)?",
        kind="shape",
        answer=(5, 7),
        section="00 · Exercise 2 · shapes first",
    ),
    Prediction(
        id="01.naive_softmax_overflow",
        question="What does naive_softmax return for [1000, 1001, 1002]?",
        kind="choice",
        answer="nan",
        choices=("weights", "nan", "inf", "zeros"),
        section="01 · From scores to weights: a stable softmax",
    ),
    Prediction(
        id="01.score_variance_d64",
        question="q and k have 64 independent entries of mean 0 and variance 1: what is Var(q · k)?",
        kind="number",
        answer=64,
        rtol=0.1,
        section="01 · Why divide by √d_head",
    ),
    Prediction(
        id="01.tutorial_head3_column",
        question="In the row 'cat [0.8, 0.1, 0.0, 0.0, 0.1, 0.0]' over 'The cat sat on the mat', which column "
        "index (0 to 5) holds the 0.8?",
        kind="number",
        answer=0,
        section="01 · Look at the weights",
    ),
    Prediction(
        id="02.causal_true_count",
        question="How many entries of the (5, 5) causal mask are True?",
        kind="number",
        answer=15,
        section="02 · Causal masks",
    ),
    Prediction(
        id="02.padding_as_2d",
        question="batch = q_len = 3: a (batch, k_len) padding mask passed as the 2-D mask gives an error, a silently "
        "wrong output, or the right output?",
        kind="choice",
        answer="silently wrong",
        choices=("error", "silently wrong", "right"),
        section="02 · Bug 1b: a (batch, k_len) padding mask read as (q_len, k_len)",
    ),
    Prediction(
        id="03.parameters_d512",
        question="How many parameters do the four projections (with biases) have for d_model = 512?",
        kind="number",
        answer=4 * 512 * 512 + 4 * 512,
        section="03 · Parameters: the same for any number of heads",
    ),
    Prediction(
        id="03.split_shape",
        question="Q is (2, 5, 8) with 2 heads: what is the shape of Q.reshape(batch, seq_len, num_heads, d_head)"
        ".transpose(0, 2, 1, 3)?",
        kind="shape",
        answer=(2, 2, 5, 4),
        section="03 · Step 2 · split into heads",
    ),
    Prediction(
        id="03.cross_weights_shape",
        question="batch 2, 2 heads, 3 queries, 6 keys: what is the shape of the attention weights?",
        kind="shape",
        answer=(2, 2, 3, 6),
        section="03 · Cross-attention: `q_len ≠ k_len`",
    ),
    Prediction(
        id="04.same_output",
        question="Same parameters, same input: do a 1-head and a 4-head module return the same output?",
        kind="choice",
        answer=False,
        choices=(True, False),
        section="04 · Single head versus multi-head, with the same parameters",
    ),
    Prediction(
        id="04.cross_weights_shape",
        question="Queries (2, 5, 16), keys and values (2, 7, 16), 4 heads: what is the shape of the weights?",
        kind="shape",
        answer=(2, 4, 5, 7),
        section="04 · Self-attention and cross-attention",
    ),
    Prediction(
        id="04.weight_on_match_before",
        question="Before training, about how much attention weight does the query put on its own key, out of 8 keys?",
        kind="number",
        answer=1 / 8,
        rtol=0.5,
        section="04 · Train it: retrieval by similarity",
    ),
]
