"""Lesson 04's entries in the catalogue of known mistakes (:mod:`course_utils.checking.misconceptions`).

One entry per misconception whose section to re-read is in lesson 04; every lesson's checks may name it. Data
only: importing it registers nothing and imports neither torch nor an exercise module.
"""

from __future__ import annotations

from course_utils.checking import patches
from course_utils.checking.model import Misconception

__all__ = ["MISTAKES"]


MISTAKES = (
    Misconception(
        "causal_not_flipped",
        "only the padding was flipped: nn.MultiheadAttention's boolean attn_mask also means True = not allowed, so "
        "flip the causal mask as well",
        "04 · A decoder's masks",
        "You flipped one of the two masks for nn.MultiheadAttention. Does its attn_mask use the same convention as "
        "its key_padding_mask?",
    ),
    Misconception(
        "causal_in_cross_attention",
        "a causal mask in cross-attention: every query may read every real encoder position; only padding is hidden",
        "04 · Masks in PyTorch's convention",
        "In cross-attention, is encoder position j ever 'in the future' of decoder position i?",
    ),
    Misconception(
        "keys_split_with_query_length",
        "keys and values split with the query's length: each tensor must be split at its own length",
        "04 · A common bug: splitting the keys with the query's length",
        "When the keys are longer than the queries, which length do you split the keys with?",
    ),
    Misconception(
        "dropout_in_eval",
        "dropout left on in evaluation: F.dropout is active unless training=False (pass the module's mode)",
        "04 · Dropout on the attention weights: training only",
        "Is your dropout told whether the module is training?",
        patches.DROPOUT_IN_EVAL,
    ),
    Misconception(
        "linear_layout_transposed",
        "the weights were transposed: nn.Linear and in_proj_weight both store (out, in); copy the blocks as they are",
        "04 · Parity 3 · with torch.nn.MultiheadAttention",
        "nn.Linear stores its weight as (out_features, in_features). In which layout are the blocks of in_proj_weight "
        "stored?",
    ),
    Misconception(
        "biases_not_copied",
        "the biases were not copied: in_proj_bias holds the three (d_model,) biases, stacked like the weights",
        "04 · Parity 3 · with torch.nn.MultiheadAttention",
        "Your module's projections have biases. Which of torch_mha's parameters holds the values they need?",
    ),
    Misconception(
        "weights_in_training_mode",
        "weights read in training mode: dropout zeroes some and rescales the rest; call .eval() first",
        "04 · Dropout on the attention weights: training only",
        "Is the module training when you read its weights? What does dropout do to them then?",
    ),
    Misconception(
        "mode_not_restored",
        "the module is left in eval mode: put it back in the mode it had (module.train(was_training))",
        "04 · Dropout on the attention weights: training only",
        "In which mode was the module before your function ran, and in which mode does your function leave it?",
    ),
    Misconception(
        "qk_linear_layout",
        "nn.Linear's weight is (out, in): the matrix x is multiplied by is query_proj.weight.T, not query_proj.weight",
        "04 · From a matrix to nn.Linear",
        "nn.Linear computes x @ weight.T + bias. Which matrix multiplies x, then: weight or weight.T?",
    ),
    Misconception(
        "qk_transposed",
        "queries and keys swapped: rows of W_q W_k^T belong to query features, columns to key features",
        "04 · Reading a layer's query-key matrix",
        "In x @ M @ y.T, which side's features index the rows of M?",
    ),
    Misconception(
        "view_minus_one_batch",
        "view(-1, seq_len, ...) infers the batch from the query's length: keep the batch and infer the length, "
        "view(batch, -1, heads, d_head)",
        "04 · A common bug: splitting the keys with the query's length",
        "In your split of the keys, which size is inferred with -1, and from what?",
    ),
    Misconception(
        "view_after_transpose",
        ".view after .transpose: the memory is no longer in order; use .reshape (or .contiguous().view)",
        "04 · Build the module",
        "What did the prediction about .view after .transpose show?",
    ),
    Misconception(
        "packed_order",
        "the blocks of in_proj_weight are query, key, value, in that order",
        "04 · Parity 3 · with torch.nn.MultiheadAttention",
        "Which rows of in_proj_weight produce the queries?",
    ),
    Misconception(
        "out_proj_not_copied",
        "the output projection was not copied: torch_mha.out_proj is an ordinary nn.Linear; copy it too",
        "04 · Parity 3 · with torch.nn.MultiheadAttention",
        "Which of torch_mha's parameters did you not use?",
    ),
    Misconception(
        "softmax_backward_diagonal_only",
        "only the diagonal of the softmax's derivative: each weight also depends on every other score, so subtract "
        "w_l times (g · w) summed over the keys",
        "04 · Parity 4 · gradients: what gradcheck proves",
        "If score l goes up, what happens to weight j ≠ l?",
    ),
    Misconception(
        "softmax_backward_wrong_sum_axis",
        "the sum runs over the wrong axis: it runs over the keys, the softmax's own (last) axis",
        "04 · Parity 4 · gradients: what gradcheck proves",
        "Over which axis do the weights sum to 1?",
    ),
    Misconception(
        "zero_grad_missing",
        "no optimizer.zero_grad(): gradients add up across steps (and with whatever was already in .grad)",
        "04 · Your training step",
        "What is in .grad before your backward() adds to it?",
    ),
    Misconception(
        "zero_grad_after_backward",
        "zero_grad() between backward() and step(): the step sees no gradients and nothing moves",
        "04 · Your training step",
        "What does step() read, and what did you just erase?",
    ),
    Misconception(
        "step_before_backward",
        "step() before backward(): every step uses the gradients of the previous batch (or stale ones)",
        "04 · Your training step",
        "Which gradients exist when your step() runs?",
    ),
    Misconception(
        "zero_grad_at_end",
        "zero_grad() after step(): the first step used whatever was left in .grad; clear it before backward()",
        "04 · Your training step",
        "The docstring says .grad may already hold gradients: which of your steps uses them?",
    ),
    Misconception(
        "loss_summed",
        "the loss is summed, not averaged: its size (and the gradient) grows with the batch; the task asks for the "
        "mean squared error",
        "04 · Your training step",
        "Would your loss change if the batch doubled?",
    ),
    Misconception(
        "buffer_persistent",
        "the mask buffer is saved in the state_dict: a fixed mask is not a weight; register it with persistent=False",
        "04 · Exercise 1 · A causal layer with its mask as a buffer",
        "Which keys does your layer's state_dict() list?",
    ),
    Misconception(
        "mask_not_sliced",
        "the (max_len, max_len) mask was not cut to the sequence's length",
        "04 · Exercise 1 · A causal layer with its mask as a buffer",
        "What shape of mask do the scores of 5 tokens need?",
    ),
    Misconception(
        "alibi_slopes_from_zero",
        "the slopes start at head 0 with 2^0 = 1: head h, counting from 1, has slope 2^(-8h/heads)",
        "04 · Exercise 2 · A bias per head: ALiBi",
        "What is the first head's slope for 8 heads?",
    ),
    Misconception(
        "alibi_sign",
        "the bias grows with distance: a farther key must get a lower score, -slope · (i - j)",
        "04 · Exercise 2 · A bias per head: ALiBi",
        "Should a far key's score go up or down?",
    ),
    Misconception(
        "alibi_not_causal",
        "the future is not hidden: keys after the query must be -inf in a causal bias",
        "04 · Exercise 2 · A bias per head: ALiBi",
        "Which keys may query 0 see?",
    ),
)
