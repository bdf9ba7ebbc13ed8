"""Lesson 08's entries in the catalogue of known mistakes (:mod:`course_utils.checking.misconceptions`).

One entry per misconception whose section to re-read is in lesson 08; every lesson's checks may name it. Data
only: importing it registers nothing and imports neither torch nor an exercise module.
"""

from __future__ import annotations

from course_utils.checking.model import Misconception

__all__ = ["MISTAKES"]

_GREEDY = "08 · Greedy decoding, by hand"

MISTAKES = (
    Misconception(
        "positions_sin_cos_swapped",
        "sine and cosine swapped: sines go in the even columns, cosines in the odd ones",
        "08 · Positions: sinusoidal encodings",
        "Which function fills column 0 of the table: sine or cosine? What is its value at position 0?",
    ),
    Misconception(
        "positions_concatenated",
        "sines in the first half and cosines in the second: they interleave (even and odd columns)",
        "08 · Positions: sinusoidal encodings",
        "Do the sines sit in the first half of the columns, or in every other column?",
    ),
    Misconception(
        "greedy_argmax_not_fed_back",
        "the argmax is not fed back: each step's decoder input must be BOS followed by every token decoded so far",
        _GREEDY,
        "What does your decoder input hold at step 3? Does it contain the tokens you decoded at steps 1 and 2?",
    ),
    Misconception(
        "greedy_wrong_position",
        "the argmax of the wrong position: the next token is the argmax of the last position's logits, logits[:, -1]",
        _GREEDY,
        "Your logits are (batch, steps so far, vocab). Which position's logits predict the next token?",
    ),
    Misconception(
        "greedy_no_pad_after_eos",
        "rows that already emitted EOS keep decoding: after a row's EOS, write PAD in that row",
        _GREEDY,
        "What does a row write after its EOS, while the other rows are still decoding?",
    ),
    Misconception(
        "greedy_stops_at_first_eos",
        "decoding stops when the first row emits EOS: stop only once every row has emitted it (or at max_len)",
        _GREEDY,
        "When one row of the batch emits EOS, are the other rows finished too?",
    ),
    Misconception(
        "post_norm",
        "post-norm, LayerNorm(x + f(x)): this model is pre-norm, x + f(LayerNorm(x)), and the residual stream itself "
        "is never normalized inside a layer",
        "08 · LayerNorm and pre-norm",
        "Where does your LayerNorm sit: on the input of f, or on the sum x + f(...)?",
    ),
    Misconception(
        "residual_after_norm",
        "the residual adds to LayerNorm(x): it must add f(LayerNorm(x)) to x itself, so the stream keeps its size",
        "08 · LayerNorm and pre-norm",
        "In x = ? + f(h), is the first term x or its normalized h?",
    ),
    Misconception(
        "encoder_padding_not_masked",
        "the encoder's self-attention gets no mask: real tokens then read the padding",
        "08 · The encoder layer",
        "Which source positions may a real token read, and what tells your attention which ones they are?",
    ),
    Misconception(
        "memory_normalized_again",
        "the encoder's output goes through the decoder's LayerNorm: memory is already normalized (encoder_norm); "
        "only the decoder's own stream is normalized before the cross-attention",
        "08 · The decoder layer",
        "Which of the cross-attention's inputs comes from the decoder's residual stream, and which from the encoder?",
    ),
    Misconception(
        "decoder_self_attention_not_causal",
        "the decoder's self-attention has no causal mask: in training each step reads the later inputs, which are "
        "the answers",
        "08 · The decoder layer",
        "Which of its own inputs may decoder step 2 read?",
    ),
    Misconception(
        "decoder_returns_self_weights",
        "the layer returns the self-attention's weights: the weights it must return are the cross-attention's "
        "(decoder steps against source positions)",
        "08 · The decoder layer",
        "What shape do the weights you return have: (tgt_len, tgt_len) or (tgt_len, src_len) per head?",
    ),
    Misconception(
        "grad_not_clipped",
        "the gradient is not clipped before step() (clipping after step() comes too late): one batch with a huge "
        "gradient then moves the weights by a huge step",
        "08 · Gradient clipping",
        "What is the gradient's total norm when step() reads it, on the batch whose norm is far above 1?",
    ),
    Misconception(
        "loss_counts_padding",
        "the loss counts the padding: positions where the target is PAD must be ignored (ignore_index=PAD)",
        "08 · The training step",
        "How many target tokens of a short sequence in a padded batch does your loss average over?",
    ),
    Misconception(
        "layernorm_not_counted",
        "the LayerNorms are left out: each holds a weight and a bias of d_model entries (three per decoder layer, two "
        "per encoder layer, two at the top)",
        "08 · Exercise 1 · Count the parameters",
        "Does nn.LayerNorm(d_model) hold parameters? How many LayerNorms does the model have?",
    ),
    Misconception(
        "decoder_one_attention",
        "one attention block per decoder layer: it has two, causal self-attention and cross-attention",
        "08 · Exercise 1 · Count the parameters",
        "How many MultiHeadAttention modules does one decoder layer build?",
    ),
    Misconception(
        "accuracy_counts_padding",
        "the padding counts: only the real target tokens (target != PAD) are scored",
        "08 · Exercise 2 · Teacher-forced accuracy",
        "In a padded batch, how many target positions of a short row are PAD, and does a PAD position say anything "
        "about the model?",
    ),
    Misconception(
        "accuracy_against_decoder_input",
        "the predictions are compared with the decoder input: step t must predict the target, the input of step t + 1",
        "08 · Exercise 2 · Teacher-forced accuracy",
        "Step t reads decoder_input[t]. Which token must it predict?",
    ),
)
