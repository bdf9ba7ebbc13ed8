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
from course_utils.exercises._model import Case, Exercise, KnownWrong, Prediction
from course_utils.exercises.cases import large_scores

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "PADDING_MASK",
    "MASKED_SOFTMAX",
    "MASKED_ATTENTION",
    "DECODER_MASK",
    "LEAKS",
    "CACHED_CAUSAL_MASK",
    "masked_softmax_fill_1e9",
    "masked_softmax_fill_inf",
    "attention_with_fill",
]


def _positions(q_len, k_len=None):
    """A column of query positions (q_len, 1) and a row of key positions (1, k_len)."""
    k_len = q_len if k_len is None else k_len
    return torch.arange(q_len)[:, None], torch.arange(k_len)[None, :]


# ---- 02.padding_mask(lengths, max_len, side="right") -> (batch, max_len) bool -----------------------------
def padding_cases():
    return [
        Case((torch.tensor([3, 1]), 4)),
        Case((torch.tensor([0, 2, 5]), 5), "an empty sequence and a full one"),
        Case((torch.tensor([2]), 6), "one sequence, max_len past its length"),
        Case((torch.tensor([4, 1, 3]), 7), "no row fills the padded width"),
        Case((torch.tensor([3, 1]), 4, "left"), "padded on the left"),
        Case((torch.tensor([0, 2, 5]), 5, "left"), "padded on the left: an empty sequence and a full one"),
        Case((torch.tensor([4, 1, 3]), 7, "left"), "padded on the left, no row fills the padded width"),
    ]


def _check_side(side):
    if side not in ("right", "left"):
        raise ValueError(f'side must be "right" or "left", got {side!r}')


def padding_mask(lengths, max_len, side="right"):
    _check_side(side)
    mask = masks.make_padding_mask(lengths, max_len)  # (batch, max_len), True at real tokens, at the start
    return mask if side == "right" else mask.flip(-1)  # left padding: the same rows, mirrored


def padding_mask_compare(lengths, max_len, side="right"):
    positions = torch.arange(max_len)[None, :]  # (1, max_len)
    if side == "right":
        return positions < lengths[:, None]  # (1, max_len) < (batch, 1) -> (batch, max_len)
    return positions >= (max_len - lengths)[:, None]  # the last `length` positions


def padding_mask_loop(lengths, max_len, side="right"):
    mask = torch.zeros(len(lengths), max_len, dtype=torch.bool)
    for b, length in enumerate(lengths.tolist()):
        if side == "right":
            mask[b, :length] = True
        else:
            mask[b, max_len - length :] = True
    return mask


def padding_mask_stacked(lengths, max_len, side="right"):
    rows = [torch.arange(max_len) < n for n in lengths]  # one row per sequence
    return torch.stack(rows if side == "right" else [row.flip(0) for row in rows])


def padding_mask_ints(lengths, max_len, side="right"):
    return padding_mask_compare(lengths, max_len, side).int()  # 0/1 numbers, not True/False


def padding_mask_transposed(lengths, max_len, side="right"):
    return padding_mask_compare(lengths, max_len, side).T  # (max_len, batch): one row per position


def left_padding_as_right(lengths, max_len, side="right"):
    return torch.arange(max_len)[None, :] < lengths[:, None]  # the real tokens at the start, whatever the side


PADDING_MASK = Exercise(
    id="02.padding_mask",
    fresh=lambda batch, max_len: [
        (torch.tensor([(3 * i + 1) % (max_len + 1) for i in range(batch)]), max_len, side) for side in ("right", "left")
    ],
    section="02 · Padding masks from lengths",
    make_cases=padding_cases,
    reference=padding_mask,
    variants=(padding_mask_compare, padding_mask_loop, padding_mask_stacked),
    buggy={
        "mask_not_bool": padding_mask_ints,
        "padding_mask_transposed": padding_mask_transposed,
        "left_padding_as_right": left_padding_as_right,
    },
    misconceptions=("mask_inverted", "padding_off_by_one"),
    hints=(
        "Write the row of a sequence of length 3 padded to 5 by hand, once padded on the right and once on the "
        "left. Which comparison between a position j and the length gives each?",
        "Compare a row of positions, shape (1, max_len), with a column of lengths, shape (batch, 1): broadcasting "
        "builds the whole (batch, max_len) table in one comparison. On the left, the first real position of "
        "sequence b is max_len - lengths[b].",
        "torch.arange(max_len) gives the positions; lengths[:, None] makes the lengths a column. Which of <, <= "
        "gives True exactly at the real tokens on the right, and which of >, >= on the left?",
    ),
)


# ---- 02.masked_softmax(scores, mask) -> (weights, gradient) through a driver ---------------------------------
def softmax_gradient(answer, scores, mask, output_grad):
    """The answer's weights, and the gradient of sum(weights * output_grad) with respect to the scores.

    A row with no allowed key must get weights 0 and a gradient 0, never NaN: NaN there reaches every
    weight a model shares with that row (lesson 02, "NaN reaches the gradients").
    """
    leaf = scores.clone().requires_grad_()
    weights = answer(leaf.clone(), mask)  # a copy that is not a leaf: an in-place masked_fill_ works on it
    if not isinstance(weights, torch.Tensor):
        return weights, None  # compared as it is: the message says what came back
    if weights.requires_grad and weights.shape == output_grad.shape:
        (weights * output_grad).sum().backward()
    gradient = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
    return weights.detach(), gradient


def masked_softmax_cases():
    gen = torch.Generator().manual_seed(4)

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    padding_50 = masks.make_padding_mask(torch.tensor([5, 0]), 5)[:, None, None, :]  # (2, 1, 1, 5): one empty
    left_padded = torch.tensor([False, False, True, True])  # (k_len,): two pads, then two tokens
    causal_left = (left_padded & masks.make_causal_mask(4))[None, None]  # (1, 1, 4, 4): rows 0 and 1 empty
    big = 10.0 * torch.from_numpy(large_scores((3, 1, 2, 6), 5))  # (batch, heads, q_len, k_len): |score| ~ 1e4
    padding_623 = masks.make_padding_mask(torch.tensor([6, 2, 3]), 6)[:, None, None, :]  # (3, 1, 1, 6)
    causal_56 = masks.make_causal_mask(5, 6)  # (q_len, k_len): a 2-D mask
    return [
        Case((randn(2, 3, 4, 5), padding_50, 10 * randn(2, 3, 4, 5)), "an empty sequence"),
        Case(
            (randn(1, 2, 4, 4), causal_left, 10 * randn(1, 2, 4, 4)),
            "left padding under a causal mask: rows 0-1 have no key",
        ),
        Case((big, padding_623, 10 * randn(3, 1, 2, 6)), "scores in the thousands"),
        Case((randn(2, 3, 5, 6), causal_56, 10 * randn(2, 3, 5, 6)), "a 2-D (q_len, k_len) mask"),
    ]


def masked_softmax(scores, mask):
    has_key = mask.any(dim=-1, keepdim=True)  # (..., q_len, 1): False for a query with nothing to attend to
    scores = scores.masked_fill(~mask, float("-inf"))  # forbidden keys: exp(-inf) = 0
    scores = scores.masked_fill(~has_key, 0.0)  # an empty row gets finite scores: no 0 / 0 forward or backward
    return torch.softmax(scores, dim=-1) * has_key  # ... and zero weights


def masked_softmax_where(scores, mask):
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)  # NaN on empty rows
    return torch.where(mask.any(dim=-1, keepdim=True), weights, 0.0)  # replaced whole, NaN never used


def masked_softmax_nan_to_zero(scores, mask):
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)  # an empty row is NaN everywhere: make it zeros


def masked_softmax_by_hand(scores, mask):
    allowed = mask.expand_as(scores)
    has_key = allowed.any(dim=-1, keepdim=True)  # (..., q_len, 1)
    top = scores.masked_fill(~allowed, float("-inf")).amax(dim=-1, keepdim=True)  # the largest allowed score
    top = torch.where(has_key, top, torch.zeros_like(top))  # an empty row: shift by 0, not by -inf
    exps = torch.exp((scores - top).masked_fill(~allowed, float("-inf")))  # forbidden keys: exactly 0
    total = torch.where(has_key, exps.sum(dim=-1, keepdim=True), torch.ones_like(top))  # empty rows: 0 / 1
    return exps / total


def masked_softmax_fill_1e9(scores, mask):
    """The widely copied ``masked_fill(mask == 0, -1e9)``: a row with no allowed key gets uniform weights."""
    return torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1)


def masked_softmax_fill_inf(scores, mask):
    """``masked_fill(~mask, -inf)`` and a plain softmax: a row with no allowed key gets NaN weights."""
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def masked_softmax_inverted(scores, mask):
    return masked_softmax(scores, ~mask)  # True read as "ignore"


def masked_softmax_after(scores, mask):
    return torch.softmax(scores, dim=-1) * mask  # masked after the softmax: rows no longer sum to 1


def masked_softmax_clamped(scores, mask):
    top = scores.masked_fill(~mask, float("-inf")).amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))  # empty rows: shift by 0
    exps = torch.exp(scores - top) * mask  # forbidden keys: times 0
    return exps / exps.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(scores.dtype).tiny)  # 0 / tiny = 0, but
    # backward: d/d exps = output_grad / tiny = inf, times the mask's 0 = NaN


MASKED_SOFTMAX = Exercise(
    id="02.masked_softmax",
    fresh=lambda batch, heads, q_len, k_len: [
        (
            torch.randn(batch, heads, q_len, k_len, dtype=torch.float64),
            masks.make_padding_mask(torch.tensor([(3 * i) % (k_len + 1) for i in range(batch)]), k_len)[:, None, None],
            torch.randn(batch, heads, q_len, k_len, dtype=torch.float64),
        )
    ],
    section="02 · A masked softmax that gives zeros",
    make_cases=masked_softmax_cases,
    reference=masked_softmax,
    driver=softmax_gradient,
    output_names=("weights", "gradient"),
    variants=(masked_softmax_where, masked_softmax_nan_to_zero, masked_softmax_by_hand),
    buggy={
        "fill_minus_1e9": masked_softmax_fill_1e9,
        "fill_minus_inf": masked_softmax_fill_inf,
        "mask_inverted": masked_softmax_inverted,
        "mask_after_softmax": masked_softmax_after,
        "empty_row_nan_gradient": masked_softmax_clamped,
    },
    misconceptions=("softmax_wrong_axis", "softmax_no_max_shift"),
    hints=(
        "What should a query with no allowed key receive, and what does a softmax make of a row whose every score "
        "is -inf?",
        "Find the rows with at least one allowed key (any over the keys, keeping the axis); compute the usual "
        "masked softmax, then make the other rows zero without letting a NaN through, forward or backward.",
        "has_key = mask.any(dim=-1, keepdim=True) broadcasts against the weights. Either replace whole rows with "
        "torch.where, or give the empty rows finite scores before the softmax and multiply by has_key afterwards.",
    ),
)


# ---- 02.masked_attention(query, key, value, mask=None) -> (output, weights) through a driver ----------------
def attention_gradients(answer, query, key, value, mask, output_grad):
    """The answer's (output, weights), and the gradients of sum(output * output_grad) for query, key and value.

    A query with no allowed key must send back zeros, never NaN (lesson 02, "NaN reaches the gradients").
    """
    leaves = [t.clone().requires_grad_() for t in (query, key, value)]
    result = answer(*(t.clone() for t in leaves), mask)
    if not (isinstance(result, (tuple, list)) and len(result) == 2 and isinstance(result[0], torch.Tensor)):
        return result, None, None, None, None
    output, weights = result
    if output.requires_grad and output.shape == output_grad.shape:
        (output * output_grad).sum().backward()
    grads = tuple(t.grad if t.grad is not None else torch.zeros_like(t) for t in leaves)
    detached = weights.detach() if isinstance(weights, torch.Tensor) else weights
    return (output.detach(), detached, *grads)


def masked_attention_cases():
    gen = torch.Generator().manual_seed(6)

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    padding_53 = masks.make_padding_mask(torch.tensor([5, 3]), 5)[:, None, None, :]  # (2, 1, 1, k_len=5)
    padding_40 = masks.make_padding_mask(torch.tensor([4, 0]), 4)[:, None, None, :]  # (2, 1, 1, k_len=4)
    cached = masks.make_causal_mask(4, 5)  # (q_len, k_len): the last 4 of 5 positions
    return [
        Case((randn(2, 3, 4, 6), randn(2, 3, 5, 6), randn(2, 3, 5, 7), padding_53, randn(2, 3, 4, 7)), "padding"),
        Case((randn(2, 4, 6), randn(2, 5, 6), randn(2, 5, 3), None, randn(2, 4, 3)), "no mask"),
        Case(
            (100 * randn(1, 2, 4, 6), 100 * randn(1, 2, 5, 6), randn(1, 2, 5, 3), cached, randn(1, 2, 4, 3)),
            "scores in the thousands, a 2-D causal mask",
        ),
        Case(
            (randn(2, 1, 3, 5), randn(2, 1, 4, 5), randn(2, 1, 4, 6), padding_40, randn(2, 1, 3, 6)),
            "an empty sequence",
        ),
    ]


def masked_attention(query, key, value, mask=None):
    # (..., q_len, d_head) @ (..., d_head, k_len) -> (..., q_len, k_len)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    weights = torch.softmax(scores, dim=-1) if mask is None else masked_softmax(scores, mask)
    return weights @ value, weights  # (..., q_len, k_len) @ (..., k_len, d_value) -> (..., q_len, d_value)


def masked_attention_einsum(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) * query.shape[-1] ** -0.5
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    weights = masked_softmax(scores, mask)
    return torch.einsum("...qk,...kv->...qv", weights, value), weights


def masked_attention_inline(query, key, value, mask=None):
    scores = query @ key.mT / query.shape[-1] ** 0.5
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # a row with no key: zeros
    return weights @ value, weights


def _attention_with(query, key, value, mask, scale, fill=None, softmax=None):
    scores = query @ key.transpose(-2, -1) * scale
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    elif softmax is not None:
        weights = softmax(scores, mask)
    else:
        weights = torch.softmax(scores.masked_fill(~mask, fill), dim=-1)
    return weights @ value, weights


def masked_attention_unscaled(query, key, value, mask=None):
    return _attention_with(query, key, value, mask, 1.0, softmax=masked_softmax)


def masked_attention_by_d_head(query, key, value, mask=None):
    return _attention_with(query, key, value, mask, 1 / query.shape[-1], softmax=masked_softmax)


def masked_attention_mask_ignored(query, key, value, mask=None):
    return _attention_with(query, key, value, None, 1 / math.sqrt(query.shape[-1]))


def masked_attention_inverted(query, key, value, mask=None):
    flipped = None if mask is None else ~mask
    return _attention_with(query, key, value, flipped, 1 / math.sqrt(query.shape[-1]), softmax=masked_softmax)


def masked_attention_fill_1e9(query, key, value, mask=None):
    return _attention_with(query, key, value, mask, 1 / math.sqrt(query.shape[-1]), fill=-1e9)


def masked_attention_fill_inf(query, key, value, mask=None):
    return _attention_with(query, key, value, mask, 1 / math.sqrt(query.shape[-1]), fill=float("-inf"))


def masked_attention_clamped(query, key, value, mask=None):
    return _attention_with(query, key, value, mask, 1 / math.sqrt(query.shape[-1]), softmax=masked_softmax_clamped)


def attention_with_fill(query, key, value, mask, fill):
    """Scaled dot-product attention whose forbidden scores become ``fill``, then a plain softmax.

    The widely copied way: ``fill=-1e9`` gives a query with no allowed key uniform weights over the keys
    it must not see; ``fill=float("-inf")`` gives it NaN weights, a NaN output and, through ``NaN · 0``,
    NaN gradients. Returns ``(output, weights)``. Lesson 02 calls it as ``bugs.attention_with_fill``.
    """
    return _attention_with(query, key, value, mask, 1 / math.sqrt(query.shape[-1]), fill=fill)


MASKED_ATTENTION = Exercise(
    id="02.masked_attention",
    fresh=lambda batch, q_len, k_len, d_head, d_value: [
        (
            torch.randn(batch, 1, q_len, d_head, dtype=torch.float64),
            torch.randn(batch, 1, k_len, d_head, dtype=torch.float64),
            torch.randn(batch, 1, k_len, d_value, dtype=torch.float64),
            masks.make_padding_mask(torch.tensor([(3 * i) % (k_len + 1) for i in range(batch)]), k_len)[:, None, None],
            torch.randn(batch, 1, q_len, d_value, dtype=torch.float64),
        )
    ],
    section="02 · Masked attention",
    make_cases=masked_attention_cases,
    reference=masked_attention,
    driver=attention_gradients,
    output_names=("output", "weights", "query gradient", "key gradient", "value gradient"),
    variants=(masked_attention_einsum, masked_attention_inline),
    buggy={
        "no_scaling": masked_attention_unscaled,
        "scaled_by_d_head": masked_attention_by_d_head,
        "mask_ignored": masked_attention_mask_ignored,
        "mask_inverted": masked_attention_inverted,
        "fill_minus_1e9": masked_attention_fill_1e9,
        "fill_minus_inf": masked_attention_fill_inf,
        "empty_row_nan_gradient": masked_attention_clamped,
    },
    misconceptions=("softmax_wrong_axis", "softmax_no_max_shift"),
    forbidden=(
        "course_utils.attention:scaled_dot_product_attention",
        "course_utils.numpy_attention:scaled_dot_product_attention",
    ),
    hints=(
        "Which three steps of lesson 01 does this repeat, and where does the mask come in?",
        "Scores as in lesson 01, now with torch (transpose only the last two axes of key), then your masked_softmax "
        "when a mask is given and a plain softmax over the keys otherwise, then the values.",
        "query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]) has shape (..., q_len, k_len); return the "
        "output and the weights, in that order.",
    ),
)


# ---- 02.decoder_mask(lengths, seq_len) -> (batch, 1, q_len, k_len) bool -------------------------------------
def decoder_mask_cases():
    return [
        Case((torch.tensor([4, 0, 2]), 4), "an empty sequence"),
        Case((torch.tensor([3]), 5), "one sequence, no row fills the padded width"),
        Case((torch.tensor([1, 5, 3]), 5)),
        Case((torch.tensor([2, 5, 4, 3]), 6), "batch 4 != seq_len 6"),
        Case((torch.tensor([3, 1, 2]), 3), "batch == seq_len: the shapes alone cannot tell sequences from queries"),
    ]


def decoder_mask(lengths, seq_len):
    keys_real = masks.make_padding_mask(lengths, seq_len)[:, None, None, :]  # (batch, k_len) -> (batch, 1, 1, k_len)
    return masks.combine_masks(keys_real, masks.make_causal_mask(seq_len))  # & (q_len, k_len)


def decoder_mask_indexing(lengths, seq_len):
    keys_real = torch.arange(seq_len)[None, :] < lengths[:, None]  # (batch, k_len)
    not_future = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()  # (q_len, k_len)
    return keys_real[:, None, None, :] & not_future  # (batch, 1, 1, k_len) & (q_len, k_len)


def decoder_mask_logical_and(lengths, seq_len):
    i, j = _positions(seq_len)
    keys_real = (j < lengths[:, None, None]).unsqueeze(1)  # (batch, 1, 1, k_len)
    return torch.logical_and(keys_real, j <= i)


def decoder_mask_loops(lengths, seq_len):
    mask = torch.zeros(len(lengths), 1, seq_len, seq_len, dtype=torch.bool)
    for b, length in enumerate(lengths.tolist()):
        for i in range(seq_len):
            for j in range(min(i + 1, length)):
                mask[b, 0, i, j] = True
    return mask


def decoder_mask_on_queries(lengths, seq_len):
    real = torch.arange(seq_len)[None, :] < lengths[:, None]  # (batch, seq_len)
    return real[:, None, :, None] & torch.ones(seq_len, seq_len, dtype=torch.bool).tril()  # padding on the rows


def decoder_mask_3d(lengths, seq_len):
    real = torch.arange(seq_len)[None, :] < lengths[:, None]
    return real[:, None, :] & torch.ones(seq_len, seq_len, dtype=torch.bool).tril()  # (batch, q_len, k_len)


def decoder_mask_padding_as_2d(lengths, seq_len):
    real = torch.arange(seq_len)[None, :] < lengths[:, None]  # (batch, k_len), read as (q_len, k_len)
    return real & torch.ones(seq_len, seq_len, dtype=torch.bool).tril()


def decoder_mask_with_or(lengths, seq_len):
    real = torch.arange(seq_len)[None, :] < lengths[:, None]
    return real[:, None, None, :] | torch.ones(seq_len, seq_len, dtype=torch.bool).tril()  # either condition


DECODER_MASK = Exercise(
    id="02.decoder_mask",
    fresh=lambda batch, seq_len: [(torch.tensor([(3 * i + 1) % (seq_len + 1) for i in range(batch)]), seq_len)],
    section="02 · The decoder's mask",
    make_cases=decoder_mask_cases,
    reference=decoder_mask,
    variants=(decoder_mask_indexing, decoder_mask_logical_and, decoder_mask_loops),
    buggy={
        "mask_3d_heads": decoder_mask_3d,
        "key_padding_as_2d": decoder_mask_padding_as_2d,
        "padding_on_queries": decoder_mask_on_queries,
        "masks_combined_with_or": decoder_mask_with_or,
    },
    forbidden=("course_utils.masks:padding_to_attention_mask",),
    misconceptions=("causal_triu", "causal_no_diagonal", "mask_inverted", "padding_off_by_one"),
    hints=(
        "Which two conditions must a key meet, and which axes does each depend on?",
        "Give each mask size 1 on the axes it does not depend on: padding depends on (sequence, key), causality "
        "on (query, key). Combine them with &, and broadcasting does the rest.",
        "padding_mask(lengths, seq_len) is (batch, k_len). Which axes must you add so that it lines up with "
        "(batch, heads, q_len, k_len), and what does it then broadcast to against a (q_len, k_len) mask?",
    ),
)


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
    i, j = _positions(q_len, k_len)
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
    i, j = _positions(q_len, k_len)  # what is_causal=True does: query i at position i
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
        (min(q_len, k_len), max(q_len, k_len), window),
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
