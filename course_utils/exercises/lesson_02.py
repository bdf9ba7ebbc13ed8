"""Lesson 02 · Masking: the exercises and predictions of ``notebooks/02_masking.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
References build their masks with ``course_utils.masks`` where the lesson does, so the catalogue's mask
patches (inverted convention, ``triu`` for ``tril``, the diagonal, padding off by one, 3-D and 2-D padding)
apply to them.
"""

from __future__ import annotations

import torch
from torch import nn

from course_utils import attention, masks
from course_utils.exercises._model import Case, Exercise, KnownWrong, Prediction
from course_utils.exercises.cases import large_scores, torch_seeded

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "MY_CAUSAL_MASK",
    "MY_PADDING_MASK",
    "DECODER_MASK",
    "MASKED_SOFTMAX",
    "SLIDING_WINDOW_MASK",
    "LEAKS",
    "CROSS_ATTEND_PADDED",
    "NN_DECODER_SELF_ATTEND",
]


# ---- 02.my_causal_mask(seq_len) -> (q_len, k_len) bool --------------------------------------------------------
def my_causal_mask(seq_len):
    return masks.make_causal_mask(seq_len)  # (q_len, k_len), True = may attend


def causal_mask_tril(seq_len):
    return torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))


def causal_mask_positions(seq_len):
    i = torch.arange(seq_len)[:, None]  # (q_len, 1)
    j = torch.arange(seq_len)[None, :]  # (1, k_len)
    return j <= i  # (q_len, k_len)


def causal_mask_loop(seq_len):
    mask = torch.zeros(seq_len, seq_len, dtype=torch.bool)
    for i in range(seq_len):
        mask[i, : i + 1] = True
    return mask


MY_CAUSAL_MASK = Exercise(
    id="02.my_causal_mask",
    section="02 · Causal masks",
    make_cases=lambda: [(1,), (4,), (7,)],
    reference=my_causal_mask,
    variants=(causal_mask_tril, causal_mask_positions, causal_mask_loop),
    hints=(
        "Query i may attend to key j when? Write the condition on i and j, then ask which part of a square table "
        "it covers.",
        "It is the lower triangle, the diagonal included (a token may look at itself), as a boolean tensor: "
        "True = may attend.",
        "torch.tril keeps the lower triangle of a matrix; or compare a column of positions (q_len, 1) with a row of "
        "positions (1, k_len) and let broadcasting build the table.",
    ),
)


# ---- 02.my_padding_mask(lengths, max_len) -> (batch, max_len) bool --------------------------------------------
def padding_cases():
    return [
        Case((torch.tensor([3, 1]), 4)),
        Case((torch.tensor([0, 2, 5]), 5), "an empty sequence"),
        Case((torch.tensor([2]), 6)),
        Case((torch.tensor([5, 1, 3]), 6), "no row fills the padded width"),
    ]


def my_padding_mask(lengths, max_len):
    return masks.make_padding_mask(lengths, max_len)


def padding_mask_compare(lengths, max_len):
    return torch.arange(max_len)[None, :] < lengths[:, None]  # (1, max_len) < (batch, 1) -> (batch, max_len)


def padding_mask_loop(lengths, max_len):
    mask = torch.zeros(len(lengths), max_len, dtype=torch.bool)
    for b, length in enumerate(lengths.tolist()):
        mask[b, :length] = True
    return mask


MY_PADDING_MASK = Exercise(
    id="02.my_padding_mask",
    section="02 · Padding masks from lengths",
    make_cases=padding_cases,
    reference=my_padding_mask,
    variants=(padding_mask_compare, padding_mask_loop),
    hints=(
        "Position j of sequence b is a real token when? One comparison per (sequence, position).",
        "Compare the positions 0 .. max_len - 1 with each sequence's length: j < lengths[b] means real.",
        "A row of positions (1, max_len) against a column of lengths (batch, 1) broadcasts to (batch, max_len); "
        "torch.arange(max_len) gives the positions.",
    ),
)


# ---- 02.decoder_mask(lengths, seq_len) -> (batch, 1, q_len, k_len) bool ---------------------------------------
def decoder_mask_cases():
    return [
        Case((torch.tensor([4, 2]), 4)),
        Case((torch.tensor([3]), 5), "one sequence"),
        Case((torch.tensor([1, 5, 3]), 5)),
        Case((torch.tensor([5, 1, 3]), 6), "no row fills the padded width"),
    ]


def decoder_mask(lengths, seq_len):
    causal_part = masks.make_causal_mask(seq_len)  # (q_len, k_len)
    key_part = masks.padding_to_attention_mask(masks.make_padding_mask(lengths, seq_len))  # (batch, 1, 1, k_len)
    return causal_part & key_part  # (batch, 1, q_len, k_len)


def decoder_mask_positions(lengths, seq_len):
    i = torch.arange(seq_len)[:, None]  # (q_len, 1)
    j = torch.arange(seq_len)[None, :]  # (1, k_len)
    real = j < lengths[:, None]  # (batch, k_len)
    return (j <= i)[None, None] & real[:, None, None, :]  # (1, 1, q_len, k_len) & (batch, 1, 1, k_len)


def decoder_mask_combined(lengths, seq_len):
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    padding = masks.make_padding_mask(lengths, seq_len)  # (batch, k_len)
    return masks.combine_masks(causal, padding.view(len(lengths), 1, 1, seq_len))


def decoder_mask_inverted(lengths, seq_len):
    ignore_future = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1)  # True = ignore
    ignore_padding = torch.arange(seq_len)[None, :] >= lengths[:, None]  # True = ignore
    return ignore_future | ignore_padding[:, None, None, :]


DECODER_MASK = Exercise(
    id="02.decoder_mask",
    section="02 · Shapes: lining masks up with multi-head scores",
    make_cases=decoder_mask_cases,
    reference=decoder_mask,
    variants=(decoder_mask_positions, decoder_mask_combined),
    buggy={"mask_inverted": decoder_mask_inverted},
    allowed=("course_utils.masks:combine_masks",),
    hints=(
        "Two conditions decide whether query i may read key j of sequence b. Which ones, and what shape does each "
        "have on its own?",
        "Key padding (which keys are real) is (batch, k_len); causal (no key from the future) is (q_len, k_len). "
        "Give each the axes it lacks so both broadcast to (batch, 1, q_len, k_len), then combine them with &.",
        "The padding part needs two new axes in the middle, (batch, 1, 1, k_len); the causal part broadcasts as it "
        "is. A (batch, q_len, k_len) result is the lesson's bug: against 4-D scores its batch lines up with heads.",
    ),
)


# ---- 02.masked_softmax(scores, mask) -> weights, zeros on rows with no allowed key --------------------------
def masked_softmax_cases():
    gen = torch.Generator().manual_seed(4)
    padding = masks.padding_to_attention_mask(masks.make_padding_mask(torch.tensor([3, 0]), 4))  # (2, 1, 1, 4)
    left_padded = torch.tensor([False, False, True, True])  # (k_len,): two pads, then two tokens
    causal_left = (left_padded & masks.make_causal_mask(4))[None, None]  # (1, 1, 4, 4): rows 0 and 1 empty
    big = torch.from_numpy(large_scores((3, 2, 4, 5), 5))  # (batch, heads, q_len, k_len), in the thousands
    big_mask = masks.padding_to_attention_mask(masks.make_padding_mask(torch.tensor([5, 2, 0]), 5))
    return [
        Case((torch.randn(2, 1, 3, 4, generator=gen, dtype=torch.float64), padding), "an empty sequence"),
        Case((torch.randn(1, 2, 4, 4, generator=gen, dtype=torch.float64), causal_left), "left padding, causal"),
        Case((big, big_mask), "scores in the thousands"),
    ]


def masked_softmax(scores, mask):
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, torch.zeros_like(weights))  # empty rows: zeros


def masked_softmax_nan_to_zero(scores, mask):
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)  # an empty row is NaN everywhere: make it zeros


def masked_softmax_by_hand(scores, mask):
    mask = mask.expand_as(scores)
    top = scores.masked_fill(~mask, float("-inf")).amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))  # empty rows: shift by 0
    exps = torch.exp(scores.masked_fill(~mask, float("-inf")) - top)  # masked keys: exp(-inf) = 0
    total = exps.sum(dim=-1, keepdim=True)
    return exps / total.clamp_min(torch.finfo(scores.dtype).tiny)  # 0 / tiny = 0 on empty rows


def masked_softmax_fill_1e9(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1)


def masked_softmax_fill_inf(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def masked_softmax_inverted(scores, mask):
    weights = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)


MASKED_SOFTMAX = Exercise(
    id="02.masked_softmax",
    section="02 · What our helpers do: zeros",
    make_cases=masked_softmax_cases,
    reference=masked_softmax,
    variants=(masked_softmax_nan_to_zero, masked_softmax_by_hand),
    buggy={
        "fill_minus_1e9": masked_softmax_fill_1e9,
        "fill_minus_inf": masked_softmax_fill_inf,
        "mask_inverted": masked_softmax_inverted,
    },
    hints=(
        "What value must a forbidden score take so that its weight is exactly 0? And what should a row with no "
        "allowed key give: NaN, uniform weights, or zeros?",
        "Fill the forbidden scores with -inf before the softmax; the rows that have at least one allowed key are "
        "then right, and only the empty rows need care.",
        "mask.any(dim=-1, keepdim=True) says which rows have an allowed key; torch.where can keep the softmax there "
        "and put zeros elsewhere.",
    ),
)


# ---- 02.sliding_window_mask(seq_len, window) -> (q_len, k_len) bool -----------------------------------------
def sliding_window_mask(seq_len, window):
    i = torch.arange(seq_len)[:, None]  # (q_len, 1)
    j = torch.arange(seq_len)[None, :]  # (1, k_len)
    return (j <= i) & (j > i - window)  # (q_len, k_len): itself and the window - 1 keys before it


def window_mask_triangles(seq_len, window):
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool)
    return ones.tril() & ~ones.tril(-window)  # the past, minus what is window or more keys back


def window_mask_loop(seq_len, window):
    mask = torch.zeros(seq_len, seq_len, dtype=torch.bool)
    for i in range(seq_len):
        mask[i, max(0, i - window + 1) : i + 1] = True
    return mask


def window_mask_off_by_one(seq_len, window):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    return (j <= i) & (j >= i - window)


def window_mask_not_causal(seq_len, window):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    return (i - j).abs() < window


def window_mask_forward(seq_len, window):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    return (j >= i) & (j < i + window)  # the upper triangle: the next keys instead of the previous ones


SLIDING_WINDOW_MASK = Exercise(
    id="02.sliding_window_mask",
    section="02 · Causal masks",
    make_cases=lambda: [
        Case((5, 2)),
        Case((6, 3)),
        Case((4, 1), "a window of 1: only itself"),
        Case((3, 5), "a window longer than the sequence: plain causal"),
    ],
    reference=sliding_window_mask,
    variants=(window_mask_triangles, window_mask_loop),
    buggy={
        "window_off_by_one": window_mask_off_by_one,
        "window_not_causal": window_mask_not_causal,
        "causal_triu": window_mask_forward,
    },
    hints=(
        "Two conditions on query i and key j: which keys are too late, and which are too far back? How many keys "
        "does query 5 see with window 2, itself included?",
        "Not in the future (j <= i) and fewer than window positions back (i - j < window); combine the two with &.",
        "A column of query positions (q_len, 1) and a row of key positions (1, k_len) broadcast to (q_len, k_len); "
        "check row i: it should hold min(i + 1, window) True entries.",
    ),
)


# ---- 02.leaks(attend, seq_len) -> bool ------------------------------------------------------------------------
def _leak_layers():
    """Attention layers (batch, seq_len, 8) -> (batch, seq_len, 8): some causal, some leaking the future."""
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


def leaks_cases():
    causal, sees_next_token, unmasked, leaks_a_little, misses_itself = _leak_layers()
    return [
        Case((causal, 6)),
        Case((sees_next_token, 5)),
        Case((unmasked, 4)),
        Case((leaks_a_little, 6), "a leak of about 1e-13"),
        Case((misses_itself, 5), "over-masked, but no leak"),
    ]


def _sequence_and_changed(seq_len, t, gen):
    x = torch.randn(1, seq_len, 8, generator=gen, dtype=torch.float64)  # (batch, seq_len, d_model)
    changed = x.clone()
    changed[:, t + 1 :] = torch.randn(1, seq_len - t - 1, 8, generator=gen, dtype=torch.float64)
    return x, changed


def leaks(attend, seq_len):
    gen = torch.Generator().manual_seed(0)
    for t in range(seq_len - 1):  # change every token after t; positions 0..t must not move at all
        x, changed = _sequence_and_changed(seq_len, t, gen)
        if not torch.equal(attend(x)[:, : t + 1], attend(changed)[:, : t + 1]):
            return True
    return False


def leaks_one_token_at_a_time(attend, seq_len):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(1, seq_len, 8, generator=gen, dtype=torch.float64)
    before = attend(x)
    for t in range(1, seq_len):  # change token t alone; outputs 0 .. t - 1 must stay exactly the same
        changed = x.clone()
        changed[:, t] = torch.randn(8, generator=gen, dtype=torch.float64)
        if (attend(changed)[:, :t] != before[:, :t]).any():
            return True
    return False


def leaks_max_difference(attend, seq_len):
    gen = torch.Generator().manual_seed(2)
    for t in reversed(range(seq_len - 1)):
        x = torch.randn(1, seq_len, 8, generator=gen, dtype=torch.float64)
        future = x.clone()
        future[:, t + 1 :] += 1.0  # move every later token
        moved = (attend(future)[:, : t + 1] - attend(x)[:, : t + 1]).abs().max()
        if moved.item() != 0.0:
            return True
    return False


def leaks_with_tolerance(attend, seq_len):
    gen = torch.Generator().manual_seed(0)
    for t in range(seq_len - 1):
        x, changed = _sequence_and_changed(seq_len, t, gen)
        if not torch.allclose(attend(x)[:, : t + 1], attend(changed)[:, : t + 1]):
            return True
    return False


def leaks_compares_changed_positions(attend, seq_len):
    gen = torch.Generator().manual_seed(0)
    for t in range(seq_len - 1):
        x, changed = _sequence_and_changed(seq_len, t, gen)
        if not torch.equal(attend(x), attend(changed)):  # the changed positions move too
            return True
    return False


LEAKS = Exercise(
    id="02.leaks",
    section="02 · The no-leak experiment",
    make_cases=leaks_cases,
    reference=leaks,
    variants=(leaks_one_token_at_a_time, leaks_max_difference),
    buggy={
        "leak_test_tolerance": leaks_with_tolerance,
        "leak_test_changed_positions": leaks_compares_changed_positions,
    },
    hints=(
        "How would you catch a layer peeking at the future? Change some future tokens and look at what moves. "
        "Which outputs are allowed to move?",
        "Run attend on a random (1, seq_len, 8) float64 sequence and on a copy whose tokens after t are new; "
        "outputs 0 .. t must be identical. Try every t.",
        "Identical means exactly equal (torch.equal): a masked key's weight is exactly 0. A tolerance "
        "(torch.allclose) would let a small leak through.",
    ),
)


# ---- 02.cross_attend_padded(mha, decoder_states, encoder_states, encoder_lengths) -> output ----------------
def cross_padded_cases():
    with torch_seeded(6):
        mha = attention.MultiHeadAttention(d_model=8, num_heads=2).double().eval()
        return [
            Case(
                (
                    mha,
                    torch.randn(2, 3, 8, dtype=torch.float64),
                    torch.randn(2, 5, 8, dtype=torch.float64),
                    torch.tensor([5, 2]),
                ),
            ),
            Case(
                (
                    mha,
                    torch.randn(3, 3, 8, dtype=torch.float64),
                    torch.randn(3, 4, 8, dtype=torch.float64),
                    torch.tensor([1, 4, 3]),
                ),
                "batch == q_len: the shapes alone cannot tell (batch, k_len) from (q_len, k_len)",
            ),
            Case(
                (
                    mha,
                    torch.randn(3, 2, 8, dtype=torch.float64),
                    torch.randn(3, 6, 8, dtype=torch.float64),
                    torch.tensor([5, 1, 3]),
                ),
                "no row fills the padded width",
            ),
        ]


def cross_attend_padded(mha, decoder_states, encoder_states, encoder_lengths):
    padding = masks.make_padding_mask(encoder_lengths, encoder_states.shape[1])  # (batch, k_len)
    return mha(decoder_states, encoder_states, encoder_states, key_padding_mask=padding)[0]


def cross_padded_4d(mha, decoder_states, encoder_states, encoder_lengths):
    k_len = encoder_states.shape[1]
    real = torch.arange(k_len)[None, :] < encoder_lengths[:, None]  # (batch, k_len)
    return mha(decoder_states, encoder_states, encoder_states, mask=real[:, None, None, :])[0]


def cross_padded_loop(mha, decoder_states, encoder_states, encoder_lengths):
    padding = torch.zeros(encoder_states.shape[:2], dtype=torch.bool)
    for b, length in enumerate(encoder_lengths.tolist()):
        padding[b, :length] = True
    output, _ = mha(decoder_states, encoder_states, encoder_states, key_padding_mask=padding)
    return output


def _real_keys(encoder_states, encoder_lengths):
    return torch.arange(encoder_states.shape[1])[None, :] < encoder_lengths[:, None]  # (batch, k_len)


def cross_padded_as_2d(mha, decoder_states, encoder_states, encoder_lengths):
    padding = _real_keys(encoder_states, encoder_lengths)
    return mha(decoder_states, encoder_states, encoder_states, mask=padding)[0]  # read as (q_len, k_len)


def cross_padded_causal(mha, decoder_states, encoder_states, encoder_lengths):
    padding = _real_keys(encoder_states, encoder_lengths)
    causal = masks.make_causal_mask(decoder_states.shape[1], encoder_states.shape[1])  # (q_len, k_len)
    return mha(decoder_states, encoder_states, encoder_states, mask=causal, key_padding_mask=padding)[0]


CROSS_ATTEND_PADDED = Exercise(
    id="02.cross_attend_padded",
    section="02 · Bug 1b: a (batch, k_len) padding mask read as (q_len, k_len)",
    make_cases=cross_padded_cases,
    reference=cross_attend_padded,
    variants=(cross_padded_4d, cross_padded_loop),
    buggy={"key_padding_as_2d": cross_padded_as_2d, "causal_in_cross_attention": cross_padded_causal},
    allowed=("course_utils.attention:MultiHeadAttention.forward",),
    hints=(
        "Queries come from the decoder, keys and values from the encoder. Which encoder positions may a decoder "
        "position read, and which argument of mha is made for that?",
        "Only the encoder's padding is hidden: build a (batch, k_len) mask of the real encoder tokens from the "
        "lengths, and give it to the module as key padding.",
        "A 2-D mask= is read as (q_len, k_len); the padding mask is (batch, k_len). Pass it as key_padding_mask=, "
        "or as mask= with shape (batch, 1, 1, k_len).",
    ),
)


# ---- 02.nn_decoder_self_attend(torch_mha, x, lengths) -> output -------------------------------------------
def nn_decoder_cases():
    with torch_seeded(7):
        torch_mha = nn.MultiheadAttention(8, 2, batch_first=True, dtype=torch.float64).eval()
        return [
            Case((torch_mha, torch.randn(2, 5, 8, dtype=torch.float64), torch.tensor([5, 3]))),
            Case((torch_mha, torch.randn(3, 4, 8, dtype=torch.float64), torch.tensor([1, 4, 2]))),
            Case((torch_mha, torch.randn(2, 6, 8, dtype=torch.float64), torch.tensor([4, 2])), "no full-length row"),
        ]


def nn_decoder_self_attend(torch_mha, x, lengths):
    padding = masks.make_padding_mask(lengths, x.shape[1])  # (batch, k_len), True = real token
    causal = masks.make_causal_mask(x.shape[1])  # (q_len, k_len), True = may attend
    # nn.MultiheadAttention: True = ignore this key / not allowed
    return torch_mha(x, x, x, key_padding_mask=~padding, attn_mask=~causal)[0]


def nn_decoder_ignore_masks(torch_mha, x, lengths):
    seq_len = x.shape[1]
    ignore_key = torch.arange(seq_len)[None, :] >= lengths[:, None]  # (batch, k_len): True at padding
    not_allowed = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1)  # (q_len, k_len): True in the future
    output, _ = torch_mha(x, x, x, key_padding_mask=ignore_key, attn_mask=not_allowed)
    return output


def nn_decoder_converted(torch_mha, x, lengths):
    padding = masks.make_padding_mask(lengths, x.shape[1])
    causal = torch.tril(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool))
    return torch_mha(x, x, x, key_padding_mask=masks.to_key_padding_mask(padding), attn_mask=causal.logical_not())[0]


def _our_decoder_masks(x, lengths):
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


NN_DECODER_SELF_ATTEND = Exercise(
    id="02.nn_decoder_self_attend",
    section='02 · Two conventions: "may attend" and "ignore"',
    make_cases=nn_decoder_cases,
    reference=nn_decoder_self_attend,
    variants=(nn_decoder_ignore_masks, nn_decoder_converted),
    buggy={"nn_mha_convention": nn_decoder_masks_not_flipped, "causal_not_flipped": nn_decoder_causal_not_flipped},
    hints=(
        "A decoder's self-attention needs two masks: which ones? And what does True mean for each argument of "
        "nn.MultiheadAttention?",
        "Build both masks in our convention first (padding from the lengths, causal from the triangle). "
        "nn.MultiheadAttention reads key_padding_mask and a boolean attn_mask as True = ignore / not allowed.",
        "So both must be flipped before they go in (~mask, or masks.to_key_padding_mask for the padding). The call "
        "returns (output, weights): keep the output.",
    ),
)

EXERCISES = [
    MY_CAUSAL_MASK,
    MY_PADDING_MASK,
    DECODER_MASK,
    MASKED_SOFTMAX,
    SLIDING_WINDOW_MASK,
    LEAKS,
    CROSS_ATTEND_PADDED,
    NN_DECODER_SELF_ATTEND,
]

PREDICTIONS = [
    Prediction(
        id="02.causal_true_count",
        question="How many entries of the (5, 5) causal mask are True?",
        kind="number",
        answer=15,
        section="02 · Causal masks",
        known_wrong=(
            KnownWrong(10, "causal_no_diagonal", "the count without the diagonal, but a token may attend to itself"),
            KnownWrong(25, "every_entry", "every entry: the mask hides the keys after each query"),
            KnownWrong(5, "diagonal_only", "the diagonal alone: a query also sees every key before it"),
        ),
    ),
    Prediction(
        id="02.padding_as_2d",
        question="batch = q_len = 3: a (batch, k_len) padding mask passed as the 2-D mask gives an error, a silently "
        "wrong output, or the right output?",
        kind="choice",
        answer="silently wrong",
        choices=("error", "silently wrong", "right"),
        section="02 · Bug 1b: a (batch, k_len) padding mask read as (q_len, k_len)",
        known_wrong=(
            KnownWrong("error", "expects_error", "what happens when batch ≠ q_len; here the two shapes agree"),
            KnownWrong(
                "right",
                "shape_means_right",
                "what the shapes suggest, but broadcasting reads row b as the mask of query b, for every sequence",
            ),
        ),
    ),
]
