"""Lesson 03's entries in the catalogue of known mistakes (:mod:`course_utils.checking.misconceptions`).

One entry per misconception whose section to re-read is in lesson 03; every lesson's checks may name it. Data
only: importing it registers nothing and imports neither torch nor an exercise module.
"""

from __future__ import annotations

from course_utils.checking import patches
from course_utils.checking.model import Misconception

__all__ = ["MISTAKES"]

_FLOPS = "03 · Cost: projections versus the attention core"

MISTAKES = (
    Misconception(
        "split_single_reshape",
        "one reshape straight to (batch, heads, seq_len, d_head): right shape, features of different positions "
        "mixed (reshape to (batch, seq_len, heads, d_head), then swap seq_len and heads)",
        "03 · A reshape that looks right",
        "After your split, does head 0 at position 1 hold position 1's first d_head features? Compare with "
        "x[0, 1, :d_head].",
        patches.SPLIT_WITHOUT_TRANSPOSE,
    ),
    Misconception(
        "params_three_matrices",
        "3·d_model² parameters: the output projection W_o and the biases are missing",
        "03 · Parameters: does the number of heads change them?",
        "How many projections does a multi-head attention layer have, and does each have a bias?",
    ),
    Misconception(
        "params_ignore_bias_flag",
        "biases counted even with bias=False",
        "03 · Parameters: does the number of heads change them?",
        "What does bias=False remove from each projection?",
    ),
    Misconception(
        "flops_one_length",
        "one length for both sequences: the keys and values have k_len positions, the queries q_len",
        _FLOPS,
        "Which projections run on the q_len query positions, and which on the k_len key positions?",
    ),
    Misconception(
        "flops_multiply_add_as_one",
        "a multiply-add counted as 1 FLOP: (m, k) @ (k, n) costs 2·m·k·n",
        _FLOPS,
        "How many floating-point operations is one multiply-add?",
    ),
    Misconception(
        "flops_no_out_proj",
        "the output projection W_o is missing: it runs on every query position too",
        _FLOPS,
        "How many (d_model, d_model) projections does the layer run, and on which positions?",
    ),
    Misconception(
        "no_output_projection",
        "the heads are concatenated but never mixed by the output projection (W_o / out_proj)",
        "03 · Step 5 · mix the heads with `W_o`",
        "After the heads are put side by side, what does W_o (out_proj) do? Does your output pass through it?",
        patches.NO_OUTPUT_PROJECTION,
    ),
    Misconception(
        "split_no_transpose",
        "split without moving the heads in front of the positions: (batch, seq_len, heads, d_head) must become "
        "(batch, heads, seq_len, d_head), or attention treats the heads as the positions",
        "03 · Step 2 · split into heads",
        "Attention reads the second-to-last axis of its inputs as the positions. Which axis is that in your split?",
    ),
    Misconception(
        "merge_no_transpose",
        "merged without moving the heads back behind the positions: a reshape of (batch, heads, seq_len, d_head) "
        "to (batch, seq_len, d_model) mixes heads and positions",
        "03 · Step 4 · merge the heads",
        "Before the reshape joins heads and d_head into one feature axis, which two axes must be neighbours?",
    ),
    Misconception(
        "w_o_on_left",
        "W_o @ concat: with one token per row the output projection multiplies from the right, concat @ W_o",
        "03 · Step 5 · mix the heads with `W_o`",
        "Which axis of concat holds the features that W_o mixes, and which side of @ contracts it?",
    ),
    Misconception(
        "params_no_biases",
        "the biases are left out: each of the four projections has a bias vector as long as its output",
        "03 · Parameters: does the number of heads change them?",
        "Does a projection with bias=True hold only its weight matrix?",
    ),
    Misconception(
        "params_heads_multiply",
        "every head counted with its own full matrices: the heads use slices of the same four matrices",
        "03 · Parameters: does the number of heads change them?",
        "Where are head 1's query weights stored: in a matrix of their own, or in columns of W_q?",
    ),
    Misconception(
        "params_ignore_d_head",
        "the projections taken as (d_model, d_model) whatever d_head: with d_head given they are "
        "(d_model, heads·d_head), and W_o the other way round",
        "03 · Count them for any layer",
        "How wide are the projected queries when there are 128 heads of 128 features?",
    ),
    Misconception(
        "params_w_o_bias_width",
        "W_o's bias counted with heads·d_head entries: W_o outputs d_model features, so its bias has d_model",
        "03 · Count them for any layer",
        "How many numbers does W_o output per token, and so how long is its bias?",
    ),
    Misconception(
        "flops_heads_multiply",
        "the core counted once per head with d_model-wide products: each head's products are d_head wide, so the "
        "heads add up to d_model",
        _FLOPS,
        "How long is one head's dot product q · k: d_model or d_head?",
    ),
    Misconception(
        "gqa_tiled_heads",
        "the key/value heads interleaved (np.tile): query head h uses kv head h // (heads // kv_heads), so each kv "
        "head is repeated for consecutive query heads (np.repeat)",
        "03 · Exercise 1 · Grouped-query attention",
        "Which kv head does query head 1 use when 4 query heads share 2 kv heads?",
    ),
    Misconception(
        "crossover_without_mlp",
        "the MLP's linear work is left out: in a whole block the core must catch up with the projections and the MLP",
        "03 · A whole block",
        "Which matrix products of a block run once per token, whatever the length?",
    ),
    Misconception(
        "causal_halves_linear_work",
        "the causal saving applied to the linear work too: a causal kernel skips masked scores only, the "
        "projections and the MLP still run on every token",
        "03 · A whole block",
        "Which FLOPs does a causal mask remove?",
    ),
)
