"""Lesson 06's entries in the catalogue of known mistakes (:mod:`course_utils.checking.misconceptions`).

One entry per misconception whose section to re-read is in lesson 06; every lesson's checks may name it. Data
only: importing it registers nothing and imports neither torch nor an exercise module.
"""

from __future__ import annotations

from course_utils.checking.model import Misconception

__all__ = ["MISTAKES"]


MISTAKES = (
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
)
