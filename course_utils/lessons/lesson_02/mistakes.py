"""Lesson 02's entries in the catalogue of known mistakes (:mod:`course_utils.checking.misconceptions`).

One entry per misconception whose section to re-read is in lesson 02; every lesson's checks may name it. Data
only: importing it registers nothing and imports neither torch nor an exercise module.
"""

from __future__ import annotations

from course_utils.checking import patches
from course_utils.checking.model import Misconception

__all__ = ["MISTAKES"]

_CONVENTIONS = '02 · Two conventions: "may attend" and "ignore"'

MISTAKES = (
    Misconception(
        "mask_inverted",
        "the mask means the opposite: in this course and in F.scaled_dot_product_attention True means 'may attend' "
        "(only nn.MultiheadAttention's masks use True = ignore)",
        _CONVENTIONS,
        "In your mask, is True where a query may look, or where it must not? Which convention does this course use?",
        patches.MASK_INVERTED,
    ),
    Misconception(
        "nn_mha_convention",
        "nn.MultiheadAttention's key_padding_mask and attn_mask mean True = ignore, the opposite of this course's "
        "and F.scaled_dot_product_attention's True = may attend: flip our masks with ~ before passing them",
        _CONVENTIONS,
        "What does True mean in nn.MultiheadAttention's key_padding_mask? And in the mask you passed it?",
    ),
    Misconception(
        "causal_triu",
        "the upper triangle: tril keeps keys j <= i (the past and the token itself), triu keeps the future",
        "02 · Causal masks",
        "Print your mask for 3 tokens. Row 0 is the first query: which keys may it see?",
        patches.TRIU_FOR_TRIL,
    ),
    Misconception(
        "causal_no_diagonal",
        "the causal mask hides the diagonal: a token may attend to itself (j <= i)",
        "02 · Causal masks",
        "May a token attend to itself? Look at your mask's diagonal.",
        patches.TRIL_WITHOUT_DIAGONAL,
    ),
    Misconception(
        "padding_off_by_one",
        "off by one: position j is real when j < length, not j <= length",
        "02 · Padding masks from lengths",
        "A sequence of length 2 has real tokens at which positions, counting from 0?",
        patches.PADDING_OFF_BY_ONE,
    ),
    Misconception(
        "fill_minus_1e9",
        "a finite fill (-1e9, finfo.min): a fully masked row becomes uniform over the padding instead of zeros",
        "02 · Bug 2: -1e9 and the fully masked row",
        "What does your function return for a row in which every key is masked?",
    ),
    Misconception(
        "fill_minus_inf",
        "masked with -inf and a plain softmax: a fully masked row becomes NaN",
        "02 · Bug 3: -inf and the fully masked row",
        "What is the softmax of a row that is -inf everywhere? What should a row with no allowed key give?",
    ),
    Misconception(
        "mask_3d_heads",
        "a 3-D (batch, q_len, k_len) mask: against 4-D scores its batch axis lines up with the heads axis",
        "02 · Bug 1: a (batch, q_len, k_len) mask lines up with the heads",
        "Line your mask's shape up with the scores' (batch, heads, q_len, k_len) from the right: which axis of the "
        "scores does your mask's first axis land on?",
        patches.PADDING_MASK_3D,
    ),
    Misconception(
        "key_padding_as_2d",
        "a (batch, k_len) key-padding mask passed as if it were a (q_len, k_len) mask",
        "02 · Bug 1b: a (batch, k_len) padding mask given as the 2-D mask",
        "A 2-D mask is read as (q_len, k_len). Is your padding mask (q_len, k_len) or (batch, k_len)?",
        patches.PADDING_AS_2D_MASK,
    ),
    Misconception(
        "window_off_by_one",
        "the window is one key too wide: query i sees window keys, itself included (i - window < j <= i)",
        "02 · Causal masks",
        "Count the True entries of a late row of your mask for window 2: how many keys does the window allow, the "
        "query itself included?",
    ),
    Misconception(
        "window_not_causal",
        "the window looks both ways: a decoder's sliding window is still causal (j <= i)",
        "02 · Causal masks",
        "In a decoder, may a query see a key that comes after it, even a close one?",
    ),
    Misconception(
        "leak_test_tolerance",
        "the leak test uses a tolerance: a mask that leaks a little passes it; demand exact equality",
        "02 · The no-leak test",
        "Would your test notice a leak of size 1e-13? A masked key's weight is exactly 0, so the outputs that must "
        "not move are exactly equal.",
    ),
    Misconception(
        "leak_test_changed_positions",
        "the leak test also compares the positions whose own token changed: only the positions before the change "
        "must stay identical",
        "02 · The no-leak test",
        "When the tokens after t change, which outputs are allowed to move?",
    ),
    Misconception(
        "mask_not_bool",
        "a 0/1 number mask: masks are boolean (dtype=torch.bool), True = may attend; ~ and masked_fill need True/False",
        "02 · Causal masks",
        "What dtype does your mask have? What does ~ do to the integer 1?",
    ),
    Misconception(
        "padding_mask_transposed",
        "the axes are swapped: a padding mask has one row per sequence and one column per position, (batch, max_len)",
        "02 · Padding masks from lengths",
        "How many rows should a batch of 3 sequences give, and how many columns?",
    ),
    Misconception(
        "mask_after_softmax",
        "masked after the softmax: zeroing weights afterwards leaves rows that no longer sum to 1; mask the scores "
        "before the softmax",
        "02 · A masked softmax that gives zeros",
        "After you zero some weights, what do the others still sum to?",
    ),
    Misconception(
        "empty_row_nan_gradient",
        "the weights are right, but the gradient through a row with no allowed key is NaN: some step computes "
        "0 / 0 or inf · 0 there before it is masked away; keep every intermediate of an empty row finite",
        "02 · A masked softmax that gives zeros",
        "Which of your steps divides by the row's sum, and what is that sum on a row with no allowed key? What is "
        "the derivative of a / b there?",
    ),
    Misconception(
        "mask_ignored",
        "the mask is never applied: every key gets weight, the forbidden ones too",
        "02 · Masked attention",
        "Where in your function does `mask` change a score?",
    ),
    Misconception(
        "padding_on_queries",
        "the padding mask was put on the query axis (the rows): padding says which keys are real, so it goes on "
        "the last axis, (batch, 1, 1, k_len)",
        "02 · The decoder's mask",
        "Padding says which *keys* are real: which axis of the scores counts keys?",
    ),
    Misconception(
        "masks_combined_with_or",
        "combined with |: a key must be real AND not in the future, so combine the masks with &",
        "02 · The decoder's mask",
        "May a query read a padding key that is in its past?",
    ),
    Misconception(
        "leak_test_last_token_only",
        "only the last token was changed: a leak from token t + 1 to output t shows only if you change the tokens "
        "after every position t",
        "02 · The no-leak test",
        "If output 0 reads token 1 and nothing else leaks, does changing the last token move anything before it?",
    ),
    Misconception(
        "causal_top_left",
        "the triangle is aligned top-left (what is_causal=True does): with k_len cached keys the newest query "
        "must see every key, so align it bottom-right",
        "02 · Causal masks",
        "Query q_len - 1 is the newest token: how many of the k_len keys are in its past?",
    ),
    Misconception(
        "left_padding_as_right",
        "the padding is at the start: with left padding the real tokens are the last `length` positions",
        "02 · Padding masks from lengths",
        "For a sequence of length 2 padded to 5 on the left, which positions are real?",
    ),
)
