"""The catalogue of known mistakes: one entry per misconception, shared by every lesson.

Each entry says the mistake in one line (what the student reads after "it looks like a known mistake:"),
the section to re-read, the nudge that the first hint gives after a check named it, and, where the idea can
be expressed as a change of the course's primitives, a :class:`~course_utils.checking.patches.Patch`. With
a patch the engine derives the buggy answer of *every* exercise whose reference goes through the patched
functions; without one, an exercise declares a hand-written buggy version (``Exercise.buggy``).

This module is data: importing it registers nothing and imports neither torch nor a lesson module.

Introduced in notebooks/00_start_here.ipynb.
"""

from __future__ import annotations

from course_utils.checking import patches
from course_utils.checking.model import Misconception

__all__ = ["CATALOGUE", "MISCONCEPTIONS", "get"]

_CONVENTIONS = '02 · Two conventions: "may attend" and "ignore"'
_SCALE = "01 · Why divide by √d_head"
_SOFTMAX = "01 · From scores to weights: a stable softmax"
_ORDER = "01 · Does attention see the order?"
_SHARED = "01 · Why learned, separate W_q, W_k, W_v"
_FLOPS = "03 · Cost: projections versus the attention core"
_GREEDY = "08 · Greedy decoding, by hand"
_BUILD_07 = "07 · Build it: the attention GRU, part by part"

CATALOGUE = (
    # ---- scores, softmax, scale (lessons 00, 01) -------------------------------------------------------------
    Misconception(
        "scores_transposed",
        "the scores are transposed: rows must be queries, columns keys",
        "00 · Try it: dot-product scores",
        "Which axis of your result holds the queries? Entry [i, j] should compare query i with key j.",
    ),
    Misconception(
        "softmax_wrong_axis",
        "softmax over the wrong axis: each query's weights must sum to 1 over the keys (the scores' last axis, "
        "or the axis asked for)",
        _SOFTMAX,
        "Sum your weights along the axis of the keys: do you get ones? Which axis did your softmax normalise?",
        patches.SOFTMAX_OTHER_AXIS,
    ),
    Misconception(
        "softmax_no_max_shift",
        "exp without subtracting the maximum first: large scores overflow to inf and give NaN",
        _SOFTMAX,
        "Try your code on the scores [1000, 1001]: what is np.exp(1000)? Does softmax change if you subtract the "
        "same number from every score of a row?",
        patches.SOFTMAX_NO_MAX_SHIFT,
    ),
    Misconception(
        "no_scaling",
        "the scores are not divided by sqrt(d_head)",
        _SCALE,
        "Look at your scores before the softmax: are they divided by anything? How large do dot products of "
        "long vectors get?",
        patches.NO_SCALING,
    ),
    Misconception(
        "scaled_by_d_head",
        "the scores are divided by d_head instead of sqrt(d_head)",
        _SCALE,
        "The divisor is a standard deviation. Var(q · k) grows like d_head: how does its standard deviation grow?",
        patches.SCALED_BY_D_HEAD,
    ),
    Misconception(
        "scaled_by_sqrt_d_model",
        "the scores are divided by sqrt(d_model) instead of sqrt(d_head) (the size of one head's query)",
        _SCALE,
        "How many terms does one head's dot product q · k add up: d_model or d_head?",
        patches.SCALED_BY_SQRT_D_MODEL,
    ),
    Misconception(
        "projections_skipped",
        "Q, K and V are X itself: the learned projections W_q, W_k, W_v are never applied",
        "01 · Why learned, separate W_q, W_k, W_v",
        "Where do W_q, W_k and W_v enter your code?",
    ),
    Misconception(
        "projections_transposed",
        "the projections are applied as X @ W.T: with W_q of shape (d_model, d_head), Q = X @ W_q "
        "(nn.Linear stores the transpose, lesson 04)",
        "01 · Why learned, separate W_q, W_k, W_v",
        "W_q has shape (d_model, d_head) and X has shape (seq_len, d_model). Which product gives (seq_len, d_head)?",
    ),
    Misconception(
        "scale_ignores_variance",
        "the divisor ignores the entries' variance: Var(q · k) = d_head * variance**2, not d_head",
        _SCALE,
        "What happens to Var(q · k) if every entry of q and k has variance 4 instead of 1?",
    ),
    Misconception(
        "scale_uses_std",
        "the divisor is sqrt(d_head * variance): each product q_i k_i has variance variance**2, not variance",
        _SCALE,
        "For independent zero-mean q_i and k_i, Var(q_i k_i) = Var(q_i) · Var(k_i). With variance v each, is that "
        "v or v²?",
    ),
    Misconception(
        "equivariance_output_not_permuted",
        "fn(X[perm]) is compared with fn(X): the outputs must be permuted too, fn(X[perm]) == fn(X)[perm]",
        _ORDER,
        "If fn ignores order, fn(X[perm]) holds the same rows as fn(X), but in which order?",
    ),
    Misconception(
        "equivariance_inverse_perm",
        "the outputs are reordered with the inverse permutation: compare fn(X[perm]) with fn(X)[perm]",
        _ORDER,
        "Row r of X[perm] is row perm[r] of X. Which row of fn(X) must row r of fn(X[perm]) equal?",
    ),
    # ---- masks (lesson 02 and every lesson that masks) -------------------------------------------------------
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
        "causal_not_flipped",
        "only the padding was flipped: nn.MultiheadAttention's boolean attn_mask also means True = not allowed, so "
        "flip the causal mask as well",
        "04 · A decoder's masks",
        "You flipped one of the two masks for nn.MultiheadAttention. Does its attn_mask use the same convention as "
        "its key_padding_mask?",
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
        "02 · Sliding windows",
        "Count the True entries of a late row of your mask for window 2: how many keys does the window allow, the "
        "query itself included?",
    ),
    Misconception(
        "window_not_causal",
        "the window looks both ways: a decoder's sliding window is still causal (j <= i)",
        "02 · Sliding windows",
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
        "causal_in_cross_attention",
        "a causal mask in cross-attention: every query may read every real encoder position; only padding is hidden",
        "04 · Masks in PyTorch's convention",
        "In cross-attention, is encoder position j ever 'in the future' of decoder position i?",
    ),
    # ---- heads (lessons 03, 04) --------------------------------------------------------------------------------
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
    # ---- heads at work, costs (lessons 05, 06) ---------------------------------------------------------------
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
        "online_no_rescale",
        "the old sum is not rescaled to the new maximum: multiply it by exp(m - m_new)",
        "06 · Online softmax: one pass, running max and running sum",
        "Your running sum was taken relative to the old maximum. What happens to each of its terms when the maximum "
        "grows?",
    ),
    Misconception(
        "online_normalised_per_block",
        "each tile's weights normalised on their own: keep the running sum and divide once, after the last tile",
        "06 · Tiled attention, FlashAttention-style",
        "Do the weights of one tile sum to 1 by themselves, or only all tiles together?",
    ),
    Misconception(
        "bytes_without_heads",
        "one weight matrix per batch element: every head has its own (q_len, k_len) weights",
        "06 · Peak memory: naive versus tiled",
        "How many (q_len, k_len) weight matrices does one layer hold: one per sequence, or one per sequence and head?",
    ),
    Misconception(
        "kv_cache_not_returned",
        "the grown caches are not returned: the next step must get the caches with the new key and value appended",
        "06 · Decoding one token at a time: the KV cache",
        "What does the next decoding step receive as k_cache: the caches you were given, or the ones you grew?",
    ),
    # ---- sequence to sequence (lessons 07, 08) -----------------------------------------------------------------
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
    # ---- lesson 00: new entries go below this line (phase 2; one block per lesson keeps merges clean) ----
    Misconception(
        "elementwise_product",
        "an elementwise product, (q * k).sum(-1), compares query i with key i only: it crashes when q_len != k_len "
        "and returns only the diagonal when they are equal; every query must meet every key",
        "00 · Try it: dot-product scores",
        "How many numbers should one query produce: one, or one per key?",
    ),
    # ---- end of lesson 00's new entries ----
    # ---- lesson 01: new entries go below this line (phase 2; one block per lesson keeps merges clean) ----
    Misconception(
        "global_max_shift",
        "the maximum of the whole array was subtracted, not each slice's: a slice far below it underflows to 0 / 0",
        _SOFTMAX,
        "Which maximum keeps every slice's largest exponent at exactly 0: the whole array's, or the slice's own?",
    ),
    Misconception(
        "keepdims_missing",
        "the sum (or the maximum) lost its axis (no keepdims=True), so it broadcasts against the wrong axis of x",
        _SOFTMAX,
        "What shape does x.sum(axis=axis) have, and how does NumPy line it up with x?",
    ),
    Misconception(
        "transpose_all_axes",
        "K.T reverses every axis of a batched array: transpose only the last two, np.swapaxes(K, -1, -2)",
        "01 · Build it: the scores",
        "What shape does K.T have when K is (2, 5, 4)?",
    ),
    Misconception(
        "output_uses_scores",
        "the output blends V with the scores, not the weights: apply the softmax first, then weights @ V",
        "01 · Build it: attention in one function",
        "Do the rows you multiply V by sum to 1?",
    ),
    Misconception(
        "keys_with_query_projection",
        "the keys were projected with W_q: each token's key comes from its own matrix, K = X @ W_k",
        _SHARED,
        "Which matrix turns a token into its key?",
    ),
    Misconception(
        "equivariance_exact_equality",
        "== (or np.array_equal) on floats: the same sums in another order differ in the last bits; compare with "
        "np.allclose",
        _ORDER,
        "Would two sums of the same numbers, added in a different order, always agree to the last bit?",
    ),
    Misconception(
        "heatmap_read_by_column",
        "a column was read as a query: rows are queries, columns keys, so each query's strongest key is the "
        "largest entry of its row",
        "01 · Look at the weights",
        "Which axis of weights has one entry per query?",
    ),
    Misconception(
        "shared_matrix_equal_norms",
        "every token still prefers itself: with one shared matrix, token i prefers i + 1 only if i + 1's vector is "
        "longer and close enough in direction (Cauchy–Schwarz)",
        _SHARED,
        "With W_q = W_k and both rows of length 1, which is larger: z_i · z_i or z_i · z_(i+1)?",
    ),
    Misconception(
        "shared_matrix_overshoot",
        "the lengths grow too fast: a token's score for a key two steps ahead beats the next one, so it jumps past "
        "its neighbour",
        "01 · Exercise 2 · When can one shared matrix look ahead?",
        "Compare row 0's scores for keys 1 and 2: which wins, and why?",
    ),
    # ---- end of lesson 01's new entries ----
    # ---- lesson 02: new entries go below this line (phase 2; one block per lesson keeps merges clean) ----
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
        "02 · Practical masking APIs",
        "Query q_len - 1 is the newest token: how many of the k_len keys are in its past?",
    ),
    Misconception(
        "left_padding_as_right",
        "the padding is at the start: with left padding the real tokens are the last `length` positions",
        "02 · Padding masks from lengths",
        "For a sequence of length 2 padded to 5 on the left, which positions are real?",
    ),
    # ---- end of lesson 02's new entries ----
    # ---- lesson 03: new entries go below this line (phase 2; one block per lesson keeps merges clean) ----
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
    # ---- end of lesson 03's new entries ----
    # ---- lesson 04: new entries go below this line (phase 2; one block per lesson keeps merges clean) ----
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
    # ---- end of lesson 04's new entries ----
    # ---- lesson 05: new entries go below this line (phase 2; one block per lesson keeps merges clean) ----
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
    # ---- end of lesson 05's new entries ----
    # ---- lesson 06: new entries go below this line (phase 2; one block per lesson keeps merges clean) ----
    Misconception(
        "online_rescale_inverted",
        "the rescale factor upside down: the old sum shrinks by exp(m - m_new), it does not grow by exp(m_new - m)",
        "06 · Online softmax: one pass, running max and running sum",
        "The new maximum is at least the old one. Should the old terms exp(x - m) get larger or smaller when they are "
        "taken relative to it?",
    ),
    Misconception(
        "flash_divides_by_running_sum",
        "the accumulator divided by the running sum at every tile: keep acc unnormalised and divide by l once, after "
        "the last tile",
        "06 · Tiled attention, FlashAttention-style",
        "After your step, is acc still the sum of exp(score - m) * value over the tiles seen, or already divided "
        "by something? Who divides by l, and when?",
    ),
    Misconception(
        "tiled_no_final_division",
        "the output is left undivided: after a query block's last key tile its output is acc / l",
        "06 · Tiled attention, FlashAttention-style",
        "Do the weights your output uses sum to 1? What does acc hold after the last key tile?",
    ),
    Misconception(
        "io_kv_read_once",
        "K and V counted as read once: the tiled pass reads all of K and V again for every query tile",
        "06 · Why FlashAttention is fast: bytes moved, not FLOPs",
        "The SRAM holds one query tile at a time. Which keys and values does each query tile need to see?",
    ),
    Misconception(
        "io_no_score_tile",
        "tiles of M / 4d rows leave no room for the B × B scores: four B × d tiles and B² scores must fit in M values",
        "06 · Why FlashAttention is fast: bytes moved, not FLOPs",
        "Besides the query, key, value and output tiles, what else must sit on the chip while a tile is processed?",
    ),
    Misconception(
        "io_scores_one_trip",
        "the n × n matrix counted once: the standard pass writes S, reads it, writes P and reads P (four trips)",
        "06 · Why FlashAttention is fast: bytes moved, not FLOPs",
        "How many times does an n × n matrix cross between HBM and the chip in the standard pass: S out, then?",
    ),
    Misconception(
        "decode_flops_no_core",
        "the attention core is left out: the scores and the weighted sum cost 2 · 2·L·d_head at every step, with "
        "or without the cache",
        "06 · Decoding one token at a time: the KV cache",
        "After the projections, which two products does a decoding step still run, and how does their size grow "
        "with L?",
    ),
    Misconception(
        "decode_prefix_keys_only",
        "only the keys of the prefix counted: without a cache the values of all L positions are recomputed too",
        "06 · Decoding one token at a time: the KV cache",
        "Without a cache, which projections of the earlier tokens does a step compute again: keys, values, or both?",
    ),
    Misconception(
        "tiled_causal_diagonal_unmasked",
        "the tiles the diagonal cuts are used whole: inside them, keys after their query must still be masked",
        "06 · Exercise 1 · Causal tiled attention",
        "In a tile on the diagonal, may the first query of the block see the last key of the tile?",
    ),
    Misconception(
        "kv_cache_keys_only",
        "only the keys counted: the cache keeps a key and a value for every token, head and layer",
        "06 · Exercise 2 · The memory a KV cache takes",
        "What two things does a KV cache keep per token?",
    ),
    # ---- end of lesson 06's new entries ----
    # ---- lesson 07: new entries go below this line (phase 2; one block per lesson keeps merges clean) ----
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
    # ---- end of lesson 07's new entries ----
    # ---- lesson 08: new entries go below this line (phase 2; one block per lesson keeps merges clean) ----
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
    # ---- end of lesson 08's new entries ----
)

MISCONCEPTIONS: dict[str, Misconception] = {m.id: m for m in CATALOGUE}


def get(misconception_id: str) -> Misconception:
    """The misconception with this id; a ``KeyError`` names the close ones.

    Introduced in notebooks/00_start_here.ipynb.

    Examples
    --------
    >>> get("causal_triu").section
    '02 · Causal masks'
    """
    if misconception_id not in MISCONCEPTIONS:
        import difflib

        close = difflib.get_close_matches(str(misconception_id), list(MISCONCEPTIONS), n=3)
        raise KeyError(f"unknown misconception {misconception_id!r}; close ones: {close}")
    return MISCONCEPTIONS[misconception_id]
