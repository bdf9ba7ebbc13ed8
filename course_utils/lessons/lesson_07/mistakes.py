"""Lesson 07's entries in the catalogue of known mistakes (:mod:`course_utils.checking.misconceptions`).

One entry per misconception whose section to re-read is in lesson 07; every lesson's checks may name it. Data
only: importing it registers nothing and imports neither torch nor an exercise module.
"""

from __future__ import annotations

from course_utils.checking.model import Misconception

__all__ = ["MISTAKES"]

_BUILD_07 = "07 · Build it: the attention GRU, part by part"

MISTAKES = (
    Misconception(
        "decoder_fed_target",
        "the decoder is fed the very token it must predict: shift the input right by one (BOS first)",
        "07 · Teacher forcing, done right",
        "At step t, which token must the decoder predict, and which token does your input give it at step t?",
    ),
    Misconception(
        "eos_after_padding",
        "EOS appended after the padding: it belongs right after each sequence's last real token",
        "07 · Teacher forcing, done right",
        "For a short sequence in a padded batch, where does your EOS land: after its last real token, or after the "
        "padding?",
    ),
    Misconception(
        "additive_no_tanh",
        "additive score without tanh: the query part then adds the same amount to every key and cancels in the softmax",
        "07 · A widely copied score: `Linear([s; h_j])`",
        "Without a non-linearity, v · (s W_s + h_j W_h) splits into two terms. Which of them depends on the key j?",
    ),
    Misconception(
        "attention_softmax_over_batch",
        "softmax over the batch (dim=0): each decoder state's weights must sum to 1 over the source positions (dim=-1)",
        _BUILD_07,
        "Your scores are (batch, src_len). Along which dim must one decoder state's weights sum to 1?",
    ),
    Misconception(
        "attention_padding_not_masked",
        "padding not masked: PAD positions get weight; fill their scores with -inf before the softmax",
        _BUILD_07,
        "How much weight do your padding positions get?",
    ),
    Misconception(
        "attention_context_from_projected_keys",
        "the context sums the projected keys W_h h_j: it is the weighted sum of the encoder outputs h_j themselves "
        "(they are the values)",
        _BUILD_07,
        "What are the values of this attention: the keys as given, or the keys after W_h?",
    ),
    Misconception(
        "pad_packed_without_total_length",
        "pad_packed_sequence without total_length: the outputs are as long as the batch's longest row, not as wide "
        "as src; pass total_length=src.shape[1]",
        "07 · 1 · The encoder",
        "How wide are your outputs when no row of the batch fills the padded width?",
    ),
    Misconception(
        "encoder_not_packed",
        "the GRU reads the padding: without packing, the backward direction starts at the last PAD, not at each "
        "row's last symbol",
        "07 · 1 · The encoder",
        "Where does your backward direction start reading a row that is shorter than the batch?",
    ),
    Misconception(
        "decoder_attends_with_old_state",
        "the attention's query is the old state: attend with the state the cell has just returned",
        "07 · 3 · One decoder step",
        "Which s do you hand to the attention: the one in the state you were given, or the cell's new one?",
    ),
    Misconception(
        "decoder_state_not_updated",
        "the state returned is the one you were given: the next step needs the new s and the new context",
        "07 · 3 · One decoder step",
        "What will the next step read as s and context: the values from before this step, or after it?",
    ),
    Misconception(
        "greedy_step_not_fed_back",
        "the argmax is not fed back: every step reads BOS; from step 1 on the decoder must read the token it "
        "wrote at the step before",
        "07 · 5 · Greedy decoding",
        "Which token does your decoder read at step 2?",
    ),
    Misconception(
        "greedy_step_first_position",
        "the argmax of the wrong position: re-running the whole prefix, the next token is predicted at its last "
        "position, logits[:, -1], not at the first",
        "07 · 5 · Greedy decoding",
        "Your logits are (batch, steps so far, vocab). Which position's logits predict the next token?",
    ),
    Misconception(
        "greedy_step_no_pad_after_eos",
        "rows that already wrote EOS keep decoding: after a row's EOS, write PAD in that row",
        "07 · 5 · Greedy decoding",
        "What does a row write after its EOS, while the other rows are still decoding?",
    ),
    Misconception(
        "accuracy_counts_padding",
        "PAD positions counted: accuracy, like the loss, counts only the real target positions (target != PAD)",
        "07 · Teacher-forced against free-running",
        "Which positions does the loss ignore? Does your accuracy ignore them too?",
    ),
)
