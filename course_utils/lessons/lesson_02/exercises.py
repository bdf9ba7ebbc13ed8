"""Lesson 02 · Masking: the exercises and predictions of ``notebooks/02_masking.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
The mask references build their masks through ``course_utils.masks`` and ``torch.tril``, so the catalogue's
mask patches (``triu`` for ``tril``, the diagonal, the inverted convention, padding off by one, a 3-D or 2-D
padding mask) derive the buggy answers; the softmax references go through ``torch.softmax``, so the softmax
patches (wrong axis, no maximum shift) reach them. Hand-written buggy versions cover the rest.

Also here, by public name, for the bug zoo (``course_utils.bugs``): ``masked_softmax_fill_1e9``,
``masked_softmax_fill_inf`` (lesson 02's Bug 2 and Bug 3) and ``attention_with_fill`` (its NaN-gradient demo).
"""

from __future__ import annotations

import math

import torch

from course_utils import masks
from course_utils.checking.model import Case, Exercise, KnownWrong, Prediction
from course_utils.lessons.lesson_02.core import (
    DECODER_MASK,
    MASKED_ATTENTION,
    MASKED_SOFTMAX,
    PADDING_MASK,
    masked_attention,
    position_grid,
)

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "LEAKS",
    "CACHED_CAUSAL_MASK",
]


# ---- 02.leaks(attend, seq_len) -> bool ------------------------------------------------------------------------
_D_MODEL = 8


def _projections():
    gen = torch.Generator().manual_seed(5)
    return tuple(
        torch.randn(_D_MODEL, _D_MODEL, generator=gen, dtype=torch.float64) / math.sqrt(_D_MODEL) for _ in range(3)
    )


def _self_attention(x, allowed):
    """One head of self-attention on x (batch, seq_len, 8) with fixed projections and a (q_len, k_len) mask."""
    w_q, w_k, w_v = _projections()
    return masked_attention(x @ w_q, x @ w_k, x @ w_v, allowed)[0]


def _ones(n):
    return torch.ones(n, n, dtype=torch.bool)


def causal(x):
    return _self_attention(x, _ones(x.shape[1]).tril())


def sees_the_next_token(x):
    return _self_attention(x, _ones(x.shape[1]).tril(1))


def no_mask(x):
    return _self_attention(x, _ones(x.shape[1]))


def over_masked(x):
    return _self_attention(x, _ones(x.shape[1]).tril(-1))  # not even itself: query 0 sees nothing, no leak


def window_of_3(x):
    return _self_attention(x, _ones(x.shape[1]).tril() & _ones(x.shape[1]).triu(-2))


def output_0_reads_token_1(x):
    allowed = _ones(x.shape[1]).tril()
    allowed[0, 1] = True  # one leak, far from the end of the sequence
    return _self_attention(x, allowed)


def leaks_1e_13(x):
    """The future's scores lowered by 30 instead of masked: a weight of about 1e-13 on every later token."""
    w_q, w_k, w_v = _projections()
    scores = (x @ w_q) @ (x @ w_k).transpose(-2, -1) / math.sqrt(_D_MODEL)  # (batch, seq_len, seq_len)
    future = ~_ones(x.shape[1]).tril()
    return torch.softmax(scores - 30.0 * future, dim=-1) @ (x @ w_v)


def leaks_cases():
    return [
        Case((causal, 6)),
        Case((sees_the_next_token, 5)),
        Case((no_mask, 4)),
        Case((leaks_1e_13, 6), "weights of about 1e-13 on the future"),
        Case((over_masked, 5), "over-masked, but no leak"),
        Case((window_of_3, 7), "a sliding window: no leak"),
        Case((output_0_reads_token_1, 6), "only output 0 reads a later token (token 1)"),
    ]


def _sequence_and_changed(seq_len, t, gen):
    x = torch.randn(1, seq_len, _D_MODEL, generator=gen, dtype=torch.float64)  # (batch, seq_len, d_model)
    changed = x.clone()
    changed[:, t + 1 :] = torch.randn(1, seq_len - t - 1, _D_MODEL, generator=gen, dtype=torch.float64)
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


def leaks_zeroed_future(attend, seq_len):
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(1, seq_len, 8, generator=gen, dtype=torch.float64)
    out = attend(x)
    for t in reversed(range(seq_len - 1)):
        cut = x.clone()
        cut[:, t + 1 :] = 0.0  # the future replaced by zeros
        if not torch.equal(attend(cut)[:, : t + 1], out[:, : t + 1]):
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


def leaks_last_token_only(attend, seq_len):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(1, seq_len, 8, generator=gen, dtype=torch.float64)
    changed = x.clone()
    changed[:, -1] = torch.randn(8, generator=gen, dtype=torch.float64)  # only the last token
    return not torch.equal(attend(x)[:, :-1], attend(changed)[:, :-1])


LEAKS = Exercise(
    id="02.leaks",
    fresh=lambda seq_len: [
        (attend, seq_len) for attend in (causal, sees_the_next_token, output_0_reads_token_1, window_of_3)
    ],
    section="02 · The no-leak test",
    make_cases=leaks_cases,
    reference=leaks,
    variants=(leaks_one_token_at_a_time, leaks_zeroed_future),
    buggy={
        "leak_test_tolerance": leaks_with_tolerance,
        "leak_test_changed_positions": leaks_compares_changed_positions,
        "leak_test_last_token_only": leaks_last_token_only,
    },
    hints=(
        "When you change the tokens after position t, which outputs must stay exactly the same, and which may move?",
        "For each split t: copy a random input, replace tokens t + 1 … with new random values, run attend on both, "
        "and compare positions 0 … t exactly (a masked key's weight is exactly 0).",
        "For one split point t: copy x with x.clone() and overwrite only the positions after t (which slice is "
        "that?); then which outputs must be exactly equal, and which comparison says 'exactly'? Repeat for every t.",
    ),
)


# ---- 02.cached_causal_mask(q_len, k_len, window=None) -> (q_len, k_len) bool ---------------------------------
def _query_positions(q_len, k_len):
    """Each query's position in the k_len-token sequence (q_len, 1), and the key positions (1, k_len)."""
    i, j = position_grid(q_len, k_len)
    return i + (k_len - q_len), j  # the queries are the last q_len positions


def cached_causal_mask(q_len, k_len, window=None):
    allowed = masks.make_causal_mask(q_len, k_len)  # torch.tril(..., diagonal=k_len - q_len): bottom-right
    if window is None:
        return allowed
    position, j = _query_positions(q_len, k_len)
    return allowed & (j > position - window)  # at most `window` keys, itself included


def cached_causal_tril(q_len, k_len, window=None):
    ones = torch.ones(q_len, k_len, dtype=torch.bool)
    allowed = ones.tril(diagonal=k_len - q_len)
    return allowed if window is None else allowed & ~ones.tril(diagonal=k_len - q_len - window)


def cached_causal_positions(q_len, k_len, window=None):
    position, j = _query_positions(q_len, k_len)  # query i sits at position k_len - q_len + i
    allowed = j <= position
    return allowed if window is None else allowed & (position - j < window)


def cached_causal_slice(q_len, k_len, window=None):
    full = _ones(k_len).tril()  # the causal mask of the whole sequence
    if window is not None:
        full = full & _ones(k_len).triu(-(window - 1))  # at most window - 1 keys back
    return full[k_len - q_len :]  # its last q_len rows


def cached_causal_loop(q_len, k_len, window=None):
    mask = torch.zeros(q_len, k_len, dtype=torch.bool)
    for i in range(q_len):
        position = k_len - q_len + i
        first = 0 if window is None else max(0, position - window + 1)
        mask[i, first : position + 1] = True
    return mask


def cached_causal_not_future(q_len, k_len, window=None):
    ones = torch.ones(q_len, k_len, dtype=torch.bool)
    allowed = ~ones.triu(diagonal=k_len - q_len + 1)  # everything but the strict future
    return allowed if window is None else allowed & ones.triu(diagonal=k_len - q_len - window + 1)


def cached_causal_floats(q_len, k_len, window=None):
    return cached_causal_positions(q_len, k_len, window).float()  # 1.0 / 0.0 floats, not True/False


def cached_causal_top_left(q_len, k_len, window=None):
    i, j = position_grid(q_len, k_len)  # what is_causal=True does: query i at position i
    return (j <= i) if window is None else (j <= i) & (i - j < window)


def window_off_by_one(q_len, k_len, window=None):
    position, j = _query_positions(q_len, k_len)
    return (j <= position) if window is None else (j <= position) & (j >= position - window)  # window + 1 keys


def window_not_causal(q_len, k_len, window=None):
    position, j = _query_positions(q_len, k_len)
    return (j <= position) if window is None else (position - j).abs() < window  # both ways


CACHED_CAUSAL_MASK = Exercise(
    id="02.cached_causal_mask",
    fresh=lambda q_len, k_len, window: [
        (min(q_len, k_len), max(q_len, k_len)),
        # a window shorter than the queries: it cuts keys of every row but the first, cached keys or not
        (min(q_len, k_len), max(q_len, k_len), min(window, min(q_len, k_len) - 1)),
    ],
    section="02 · Causal masks",
    make_cases=lambda: [
        Case((3, 7)),
        Case((1, 1), "one token: it reads itself"),
        Case((1, 5), "one decoding step: the new token reads every key"),
        Case((4, 4), "no cache: plain causal"),
        Case((2, 6)),
        Case((5, 5, 2), "no cache, a window of 2"),
        Case((6, 6, 3)),
        Case((4, 4, 1), "a window of 1: only itself"),
        Case((3, 3, 5), "a window longer than the sequence: plain causal"),
        Case((3, 8, 4), "cached keys and a window of 4"),
        Case((1, 6, 3), "one decoding step, a window of 3"),
        Case((5, 9, 3), "cached keys and a window shorter than the queries"),
    ],
    reference=cached_causal_mask,
    variants=(
        cached_causal_tril,
        cached_causal_positions,
        cached_causal_slice,
        cached_causal_loop,
        cached_causal_not_future,
    ),
    buggy={
        "mask_not_bool": cached_causal_floats,
        "causal_top_left": cached_causal_top_left,
        "window_off_by_one": window_off_by_one,
        "window_not_causal": window_not_causal,
    },
    misconceptions=("causal_triu", "causal_no_diagonal", "mask_inverted"),
    hints=(
        "With 3 queries that are the last 3 of 7 tokens, at which position of the sequence does query 0 sit, and "
        "which keys may it read? With a window of 3, which of those?",
        "First find each query's position in the sequence (the queries are the last q_len positions), then two "
        "conditions on the key position j: not after it, and fewer than `window` steps back.",
        "With a column of query positions and a row of key positions j, the first condition is j <= position. "
        "Write the second the same way, and apply it only when window is not None.",
    ),
)


EXERCISES = [
    PADDING_MASK,
    CACHED_CAUSAL_MASK,
    MASKED_SOFTMAX,
    MASKED_ATTENTION,
    DECODER_MASK,
    LEAKS,
]

_BUG_1B = "02 · Bug 1b: a (batch, k_len) padding mask given as the 2-D mask"

PREDICTIONS = [
    Prediction(
        id="02.causal_keys_query2",
        question="In the causal mask for 5 tokens, which keys may query 2 (the third token) attend to?",
        kind="set",
        answer={0, 1, 2},
        section="02 · Causal masks",
        known_wrong={
            (0, 1): ("causal_no_diagonal", "the keys before it: think about the diagonal of the causal mask"),
            (2, 3, 4): ("causal_triu", "itself and the keys after it: that is the future, the upper triangle"),
            (3, 4): ("mask_inverted", "the keys it must not see: True means may attend"),
            (0, 1, 2, 3, 4): (None, "every key: then the query would read the two tokens after it"),
        },
    ),
    Prediction(
        id="02.causal_true_count",
        question="How many entries of the (5, 5) causal mask are True?",
        kind="number",
        answer=15,
        section="02 · Causal masks",
        rethink="how many keys each query may see, itself included",
        known_wrong=(
            KnownWrong(
                10,
                "causal_no_diagonal",
                "the count without the diagonal: think about whether a token may attend to itself",
            ),
            KnownWrong(25, "no_mask", "every entry: that is no mask at all; the keys after each query are hidden"),
            KnownWrong(5, "diagonal_only", "the diagonal alone: a query also sees every key before it"),
        ),
    ),
    Prediction(
        id="02.fill_1e9_weights",
        question='Fill -1e9, an empty sequence: are its first query\'s weights "uniform", "zeros", "nan" or "error"?',
        kind="choice",
        answer="uniform",
        choices=("uniform", "zeros", "nan", "error"),
        section="02 · Bug 2: -1e9 and the fully masked row",
        known_wrong=(
            KnownWrong(
                "zeros",
                "fill_minus_1e9",
                "what a query with nothing to read should get; think about what a softmax does with a row whose scores are all the same finite number",
            ),
            KnownWrong(
                "nan", "fill_minus_inf", "what -inf gives; -1e9 is an ordinary number, so nothing divides 0 by 0"
            ),
        ),
    ),
    Prediction(
        id="02.fill_inf_weights",
        question='Fill -inf, the same empty sequence: "uniform", "zeros", "nan" or "error"?',
        kind="choice",
        answer="nan",
        choices=("uniform", "zeros", "nan", "error"),
        section="02 · Bug 3: -inf and the fully masked row",
        known_wrong=(
            KnownWrong(
                "zeros",
                "fill_minus_inf",
                "what you would get if the empty row were simply dropped; think about the sum a softmax divides by when every exp is 0",
            ),
            KnownWrong(
                "uniform",
                "fill_minus_1e9",
                "what -1e9 gave; think about what subtracting the row's maximum does when that maximum is -inf",
            ),
        ),
    ),
    Prediction(
        id="02.nan_grad_entries",
        question="The loss looks only at sequence 0; with the -inf fill, how many of the 64 entries of W.grad are NaN?",
        kind="number",
        answer=64,
        section="02 · The gradients of a loss that ignores the empty sequence",
        rethink="which entries of W.grad the empty sequence's NaN weights reach in the backward pass",
        known_wrong={
            0: (
                "fill_minus_inf",
                "what the loss suggests; think about what NaN weights times a zero gradient give in the backward pass",
            ),
            32: (None, "half of them, but every entry of W.grad sums over the positions of both sequences"),
        },
    ),
    Prediction(
        id="02.padding_as_2d",
        question="batch = q_len = k_len = 3: a (batch, k_len) padding mask passed as the 2-D mask gives an error, "
        "a silently wrong output, or the right output?",
        kind="choice",
        answer="silently wrong",
        choices=("error", "silently wrong", "right"),
        section=_BUG_1B,
        known_wrong=(
            KnownWrong(
                "error",
                None,
                "what happens when batch ≠ q_len; here (3, 3) is also a valid "
                "(q_len, k_len), so broadcasting cannot tell",
            ),
            KnownWrong(
                "right",
                "key_padding_as_2d",
                "what the shapes suggest, but broadcasting reads row b as the mask of query b, for every sequence",
            ),
        ),
    ),
    Prediction(
        id="02.padding_as_2d_one_query",
        question='One decoding step, q_len = 1, batch = 2: "error", "right shape, wrong values" or '
        '"wrong shape, no error"?',
        kind="choice",
        answer="wrong shape, no error",
        choices=("error", "right shape, wrong values", "wrong shape, no error"),
        section=_BUG_1B,
        known_wrong=(
            KnownWrong(
                "error",
                None,
                "what you would hope for, but an axis of size 1 broadcasts "
                "against anything: the one query stretches to batch queries",
            ),
            KnownWrong(
                "right shape, wrong values",
                "key_padding_as_2d",
                "half of it: the values are wrong, and the "
                "query axis, of size 1, stretches to the mask's batch rows, so the output gains queries too",
            ),
        ),
    ),
    Prediction(
        id="02.is_causal_keys",
        question="3 queries, 7 keys, is_causal=True: how many keys does query 0 see?",
        kind="number",
        answer=1,
        section="02 · Practical masking APIs",
        rethink="how is_causal=True lines its triangle up when there are more keys than queries",
        known_wrong=(
            KnownWrong(
                5,
                "causal_top_left",
                "the bottom-right alignment that cached decoding needs; is_causal=True aligns the triangle top-left",
            ),
            KnownWrong(7, None, "every key: think about which keys is_causal=True hides from query 0"),
        ),
    ),
    Prediction(
        id="02.leak_count_masked",
        question="Tokens 4 and 5 of 6 replaced, causal mask: how many of the 6 outputs change?",
        kind="number",
        answer=2,
        section="02 · The no-leak test",
        rethink="which positions read the tokens that changed, under a causal mask",
        known_wrong=(
            KnownWrong(
                0,
                "leak_test_changed_positions",
                "what 'nothing leaks' suggests; think about which positions read the tokens that changed, themselves included",
            ),
            KnownWrong(
                6,
                None,
                "what happens without a mask; think about which positions the causal mask lets read the changed tokens",
            ),
        ),
    ),
    Prediction(
        id="02.leak_count_open",
        question="The same change, no mask: how many of the 6 outputs change?",
        kind="number",
        answer=6,
        section="02 · The no-leak test",
        rethink="which positions read the tokens that changed when nothing is masked",
        known_wrong=(
            KnownWrong(
                2,
                None,
                "what the causal mask gives; think about which positions read the changed tokens when nothing is masked",
            ),
        ),
    ),
    Prediction(
        id="02.residual_empty_row",
        question='out = x + attention(x), a query with no allowed key, your masked softmax: "the token unchanged", '
        '"zeros", "nan" or "the token plus the mean of the values"?',
        kind="choice",
        answer="the token unchanged",
        choices=("the token unchanged", "zeros", "nan", "the token plus the mean of the values"),
        section="02 · Exercises",
        known_wrong=(
            KnownWrong("zeros", None, "what the attention adds; the residual adds the token back"),
            KnownWrong("nan", "fill_minus_inf", "what -inf and a plain softmax give; yours gives a row of zeros"),
            KnownWrong(
                "the token plus the mean of the values",
                "fill_minus_1e9",
                "what a uniform row adds (the -1e9 fill); your row of zeros adds nothing",
            ),
        ),
    ),
    Prediction(
        id="02.residual_empty_row_1e9",
        question='The same query with the -1e9 fill: "the token unchanged", "zeros", "nan" or "the token plus the '
        'mean of the values"?',
        kind="choice",
        answer="the token plus the mean of the values",
        choices=("the token unchanged", "zeros", "nan", "the token plus the mean of the values"),
        section="02 · Exercises",
        known_wrong=(
            KnownWrong(
                "the token unchanged",
                "fill_minus_1e9",
                "what zero weights give; -1e9 is finite, so a row whose every score is -1e9 is uniform over every key",
            ),
            KnownWrong("nan", "fill_minus_inf", "what -inf gives; -1e9 is an ordinary number, nothing is 0 / 0"),
            KnownWrong("zeros", None, "the residual adds the token back, whatever the attention adds"),
        ),
    ),
    Prediction(
        id="02.float_mask_from_bool",
        question="A 0/1 float mask (1.0 = real key) given to F.scaled_dot_product_attention: do the padding keys get "
        '"weight 0", "a positive weight" or "an error"?',
        kind="choice",
        answer="a positive weight",
        choices=("weight 0", "a positive weight", "an error"),
        section="02 · Exercises",
        known_wrong=(
            KnownWrong(
                "weight 0",
                None,
                "what a boolean mask does; a float mask is added to the scores, and adding 0 forbids nothing",
            ),
            KnownWrong("an error", None, "a float attn_mask is valid: it is added to the scores, with no error"),
        ),
    ),
    Prediction(
        id="02.ignore_mask_as_allowed",
        question='A True = ignore mask given where True = may attend is expected: does a query read "the 3 real '
        'tokens", "the 2 padding keys" or "all 5"?',
        kind="choice",
        answer="the 2 padding keys",
        choices=("the 3 real tokens", "the 2 padding keys", "all 5"),
        section="02 · Exercises",
        known_wrong=(
            KnownWrong(
                "the 3 real tokens",
                "mask_inverted",
                "what the mask means to nn.MultiheadAttention; F.scaled_dot_product_attention reads True as may "
                "attend, so it reads exactly the keys you meant to hide",
            ),
            KnownWrong("all 5", None, "a boolean mask is never ignored: False keys get weight 0"),
        ),
    ),
]
