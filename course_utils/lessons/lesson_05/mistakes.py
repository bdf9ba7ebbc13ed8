"""Lesson 05's entries in the catalogue of known mistakes (:mod:`course_utils.checking.misconceptions`).

One entry per misconception whose section to re-read is in lesson 05; every lesson's checks may name it. Data
only: importing it registers nothing and imports neither torch nor an exercise module.
"""

from __future__ import annotations

from course_utils.checking.model import Misconception

__all__ = ["MISTAKES"]


MISTAKES = (
    Misconception(
        "entropy_zero_terms",
        "0 · ln 0 taken literally: it is NaN in floating point; drop the zero weights (their limit is 0)",
        "05 · Entropy: how spread out is a head?",
        "What is 0 * np.log(0) in NumPy? What is the limit of w · ln w as w goes to 0?",
    ),
    Misconception(
        "next_token_diagonal",
        "the wrong diagonal: key i - 1 is the previous token, key i + 1 the next one",
        "05 · Which head does what? Role scores",
        "For query i, which key index is the previous token?",
    ),
    Misconception(
        "entropy_in_bits",
        "the logarithm in base 2 (bits): the lesson's entropy is in nats, with the natural logarithm, so that its "
        "maximum is ln(k_len)",
        "05 · Entropy: how spread out is a head?",
        "Which logarithm gives a uniform row over 4 keys the entropy ln 4 ≈ 1.386?",
    ),
    Misconception(
        "entropy_no_minus",
        "the minus sign is missing: every ln w of a weight below 1 is negative, so -sum(w · ln w) is positive",
        "05 · Entropy: how spread out is a head?",
        "Can an entropy be negative? What sign does ln 0.5 have?",
    ),
    Misconception(
        "switch_off_in_place",
        "the concatenation you were handed was changed in place: zero the heads in a copy (concat.clone()) and "
        "leave the input as it was",
        "05 · Concatenation and the output projection",
        "After your function returns, is the tensor you were given still the same as before the call?",
    ),
    Misconception(
        "heads_interleaved",
        "every num_heads-th feature switched off: head h's features are one contiguous block, h·d_head to (h+1)·d_head",
        "05 · Concatenation and the output projection",
        "In the concatenation figure, where do head 1's features sit: side by side, or spread out?",
    ),
    Misconception(
        "switch_off_kept_listed",
        "the listed heads were kept and the others switched off: the list names the heads to switch off",
        "05 · Concatenation and the output projection",
        "Which features should be 0 afterwards: those of the listed heads, or of the others?",
    ),
    Misconception(
        "first_score_counts_query_0",
        "the first-token score counts query 0, whose first token is itself: average over the queries i >= 1, so "
        "that 'first' is not confused with 'self'",
        "05 · Which head does what? Role scores",
        "For query 0, is key 0 the first token or the query itself?",
    ),
    Misconception(
        "positions_missing",
        "no position embedding: the same token at two positions gets the same input, so attention cannot tell "
        "'the token before me' from any other",
        "05 · Where is each token? Learned position embeddings",
        "Two tokens with the same id at positions 0 and 2: do they get different inputs in your version?",
    ),
    Misconception(
        "positions_averaged",
        "the position table was averaged (or summed) into one vector: position p adds its own row p",
        "05 · Where is each token? Learned position embeddings",
        "Does every position get the same added vector in your version?",
    ),
    Misconception(
        "matching_includes_self",
        "the query's own position counted as a match: the question asks for the other token with the same shape",
        "05 · Which head does what, after training?",
        "Does a token's shape match its own? Which entry of each row must your mask leave out?",
    ),
    Misconception(
        "ablation_sign_flipped",
        "the sign is flipped: the table holds the accuracy lost, full minus switched-off, positive when the head "
        "did a job",
        "05 · Switching heads off: is the role real?",
        "Should a head the model needs give a positive or a negative entry?",
    ),
    Misconception(
        "ablation_accuracy_not_drop",
        "the table holds the accuracy left with the head off; it asks for the accuracy lost (full minus switched-off)",
        "05 · Switching heads off: is the role real?",
        "What should the entry be for a head the model does not use at all?",
    ),
    Misconception(
        "ablation_all_but_one",
        "every head but h was switched off: row h switches off head h alone",
        "05 · Switching heads off: is the role real?",
        "Which heads are off while you measure row h?",
    ),
)
