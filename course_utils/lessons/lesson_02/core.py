"""Lesson 02's first exercises: masks from lengths, a masked softmax, masked attention and the decoder's mask
(``02.padding_mask``, ``02.masked_softmax``, ``02.masked_attention``, ``02.decoder_mask``).

Moved out of ``exercises.py`` whole (issue 26 section 5): one block per exercise, as there; ``exercises.py`` lists
them in ``EXERCISES``. ``_positions`` is now ``position_grid``.
"""

from __future__ import annotations

import math

import torch

from course_utils import masks
from course_utils.checking.cases import large_scores
from course_utils.checking.model import Case, Exercise

__all__ = [
    "PADDING_MASK",
    "MASKED_SOFTMAX",
    "MASKED_ATTENTION",
    "DECODER_MASK",
    "masked_softmax_fill_1e9",
    "masked_softmax_fill_inf",
    "attention_with_fill",
]


def position_grid(q_len, k_len=None):
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
    i, j = position_grid(seq_len)
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
