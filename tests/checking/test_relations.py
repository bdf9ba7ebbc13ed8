"""Mistakes named by what the answer does (issue 26 §2): relations to the right output, mutations of the reference.

Every answer below is a mistake no catalogue entry was written for in that exercise; each test fails without
the relation engine (``course_utils/checking/relations.py``) or the mutations (``mutations.py``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from course_utils.checking import engine, mutations, preparing, registry, relation_basics
from course_utils.checking.relation_finders import findings
from course_utils.checking.relations import Triple, explain


def _judge(exercise_id, answer):
    return engine.judge(registry.get(exercise_id), answer)


def _keys(exercise_id, args, expected, got, **kw):
    return [f.key for f in findings(registry.get(exercise_id), args, expected, got, **kw)]


# ---- one case: what the output is, relative to the right one ----------------------------------------------------


def test_a_factor_is_named_by_the_size_it_comes_from():
    q, k = np.ones((3, 5)), np.ones((4, 5))
    right = np.arange(12.0).reshape(3, 4) + 1
    keys = _keys("00.dot_scores", (q, k), right, right / math.sqrt(5))
    assert "factor:1/√(q.shape[-1])" in keys and "factor:1/√(k.shape[-1])" in keys
    assert "factor:q.shape[-2]" in _keys("00.dot_scores", (q, k), right, right * 3)
    assert _keys("00.dot_scores", (q, k), right, right * 7) == ["factor"]  # 7 is no size in scope


def test_transposed_permuted_and_shifted_outputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    ex = registry.get("01.softmax_along")
    assert "transposed" in [f.key for f in findings(ex, (x,), x, x.swapaxes(-1, -2))]
    assert "permuted:(1, 0, 2)" in [f.key for f in findings(ex, (x,), x, x.transpose(1, 0, 2))]
    shifted = np.roll(x, 1, axis=-1)
    assert "shift:-1:1" in [f.key for f in findings(ex, (x,), x, shifted)]


def test_weights_with_the_scores_scaled_by_a_size_before_the_softmax():
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((3, 6)), rng.standard_normal((5, 6))
    scores = q @ k.T

    def softmax(s):
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    right = softmax(scores / math.sqrt(6))
    got = softmax(scores)  # the scale left out: the right scores times √6
    found = findings(registry.get("00.dot_scores"), (q, k), right, got)
    named = [f for f in found if f.key == "temperature:√(q.shape[-1])"]
    assert named and named[0].misconception == "no_scaling"
    other_axis = np.exp(scores) / np.exp(scores).sum(0, keepdims=True)
    found = findings(registry.get("00.dot_scores"), (q, k), right, other_axis)  # normalised down the columns
    assert [f.misconception for f in found if f.key == "normalised_other_axis"] == ["softmax_wrong_axis"]


def test_masks_inverted_shifted_and_filled():
    ex = registry.get("02.cached_causal_mask")
    right = np.tril(np.ones((5, 5), dtype=bool))
    assert "inverted" in [f.key for f in findings(ex, (5, 5), right, ~right)]
    assert "diagonal:-1" in [f.key for f in findings(ex, (5, 5), right, np.tril(right, -1))]
    assert "diagonal:+2" in [f.key for f in findings(ex, (5, 5), right, np.tril(np.ones((5, 5), dtype=bool), 2))]
    scores = np.where(right, 1.5, -np.inf)
    filled = np.where(right, 1.5, -1e9)
    assert "fill:-1e+09" in [f.key for f in findings(ex, (5, 5), scores, filled)]


def test_a_term_a_bias_and_an_earlier_step():
    ex = registry.get("00.dot_scores")
    rng = np.random.default_rng(2)
    x, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 4))
    right = x @ b + x
    assert "term:-q" in [f.key for f in findings(ex, (x, b), right, x @ b)]  # dot_scores' first argument is q
    assert "bias" in [f.key for f in findings(ex, (x, b), right, right + np.arange(4.0))]
    assert "step:scores" in [f.key for f in findings(ex, (x, b), right, x @ b, steps=(("scores", x @ b),))]


# ---- named only when one relation explains every failing case -----------------------------------------------------


def test_named_only_when_the_same_relation_explains_every_failing_case():
    ex = registry.get("00.dot_scores")
    q1, k1, q2, k2 = np.ones((3, 5)), np.ones((4, 5)), np.ones((6, 7)), np.ones((2, 7))
    r1, r2 = np.arange(1.0, 13).reshape(3, 4), np.arange(1.0, 13).reshape(6, 2)
    both = explain(ex, [Triple("case 1", (q1, k1), r1, r1 / math.sqrt(5)), Triple("case 2", (q2, k2), r2, r2 / 7**0.5)])
    assert both.named and both.key == "factor:1/√(q.shape[-1])"
    one = explain(ex, [Triple("case 1", (q1, k1), r1, r1 / math.sqrt(5)), Triple("case 2", (q2, k2), r2, r2 + 1)])
    assert not one.named and one.sentence.startswith("Case 1 looks like the right one times 1/√(q.shape[-1])")


def test_a_coincidence_on_one_case_names_nothing_in_a_check():
    def dot_scores(q, k):  # right on two cases; on the one with d_head 2 scaled by it
        out = q @ k.T
        return out * 2 if q.shape == (3, 2) else out + 1

    verdict = _judge("00.dot_scores", dot_scores)
    assert verdict.status == "wrong" and verdict.misconception is None and verdict.relation is None


def test_a_nan_answer_is_explained_by_where_the_nan_first_appears_never_by_a_nan_mistake():
    def softmax_along(x, axis=-1):
        e = np.exp(x)
        weights = e / np.inf * 0 * np.nan
        return weights

    verdict = _judge("01.softmax_along", softmax_along)
    assert verdict.misconception is None and verdict.relation is None
    assert "The first NaN appears in `weights`, after your line" in verdict.detail
    assert "weights = e / np.inf * 0 * np.nan" in verdict.detail


# ---- a step varied in the reference is recognised wherever that step is taken ------------------------------------


def test_scores_where_weights_are_asked_is_named_from_the_references_own_steps():
    torch = pytest.importorskip("torch")

    def masked_attention(query, key, value, mask=None):
        scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
        masked = scores if mask is None else scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(masked, dim=-1))
        return weights @ value, scores  # the scores where the weights are asked

    verdict = _judge("02.masked_attention", masked_attention)
    assert verdict.relation is not None and "earlier step" in verdict.detail, verdict.detail


def test_a_causal_mask_with_its_diagonal_moved_is_named_in_every_exercise_that_builds_one():
    torch = pytest.importorskip("torch")

    def cached_causal_mask(q_len, k_len, window=None):
        ones = torch.ones(q_len, k_len, dtype=torch.bool)
        if window is None:  # the plain causal branch: one diagonal too many
            return ones.tril(diagonal=k_len - q_len + 1)
        return ones.tril(diagonal=k_len - q_len) & ones.triu(diagonal=k_len - q_len - window + 1)

    verdict = _judge("02.cached_causal_mask", cached_causal_mask)
    # on a (q_len, k_len) mask one diagonal more is also every key one position later: either name fits every case
    assert verdict.relation in ("diagonal:+1", "shift:-1:1"), verdict.detail


def test_mutants_vary_each_step_of_the_reference():
    def reference(x, mask):
        scores = x / math.sqrt(x.shape[-1])
        scores = np.where(mask, scores, -1e9)
        return np.tril(scores, k=0).sum(axis=-1)

    kinds = {m.key.rsplit(":", 2)[0] for m in mutations.mutants(reference)}
    assert {"mutant:scale:dropped", "mutant:scale:no_root", "mutant:mask:where", "mutant:axis:sum"} <= kinds
    assert {"mutant:diagonal:tril:-1", "mutant:diagonal:tril:+1", "mutant:fill:big"} <= kinds


def test_a_step_of_a_course_helper_varied_is_named_in_words_not_in_code():
    def softmax_along(x, axis=-1):  # the max over the last axis whatever the axis asked: right on axis -1 only
        exps = np.exp(x - x.max(axis=-1, keepdims=True))
        return exps / exps.sum(axis=axis, keepdims=True)

    verdict = _judge("01.softmax_along", softmax_along)
    assert verdict.relation == "mutant:axis:max", verdict.detail
    assert "its max over the last axis" in verdict.detail and "keepdims" not in verdict.detail


# ---- case sizes never coincide -------------------------------------------------------------------------------------

# Cases whose whole-number arguments coincide (with each other, or with 2): a relation or a mistake can then
# fit by accident. The lessons' authors fix these in the Exercise blocks; a new one fails this test.
KNOWN_COINCIDENCES = {
    "02.cached_causal_mask: q_len=2",
    "02.cached_causal_mask: q_len=4, k_len=4",  # q_len == k_len is what the case is about: no cache
    "02.cached_causal_mask: q_len=3, k_len=3",
    "02.cached_causal_mask: q_len=5, k_len=5, window=2",
    "02.cached_causal_mask: q_len=6, k_len=6",
    "03.attention_flops: batch=2, k_len=2, num_heads=2",
    "03.block_crossover: mlp_ratio=2",
    "03.count_attention_parameters: num_heads=128, d_head=128",
    "03.grouped_query_attention: num_heads=2, num_kv_heads=2",
    "03.grouped_query_attention: num_kv_heads=2",
    "03.multi_head_attention: num_heads=2",
    "03.multi_head_attention_loop: num_heads=2",
    "03.split_heads: num_heads=2",
    "04.alibi_bias: num_heads=2",
    "05.switch_off: num_heads=2",
    "06.causal_tiled_attention: block=2",
    "06.decode_flops: d_head=2",
    "06.io_bytes: bytes_per_value=2",
    "06.io_bytes: d_head=2",
    "06.io_bytes: seq_len=2",
    "06.kv_cache_bytes: batch=2, layers=12, heads=12, bytes_per_value=2",
    "06.kv_cache_bytes: layers=2, d_head=4, bytes_per_value=4",
    "06.tiled_attention: block=2",
    "06.weights_bytes: batch=2, heads=4, bytes_per_value=4",
    "06.weights_bytes: heads=2",
    "08.my_positions: num_positions=2",
    "08.transformer_parameters: num_heads=2, num_layers=2",
    "08.transformer_parameters: vocab=20, num_heads=3, d_ff=20, num_layers=3",
}


def coincidences() -> set:
    """Every case (of an exercise called without a driver) whose whole-number arguments coincide or are 2."""
    found = set()
    for exercise in registry.EXERCISES.values():
        if exercise.driver is not None:
            continue  # a driver's case arguments are not the answer's: their names are unknown here
        for args in preparing.prepare(exercise).cases:
            bad = relation_basics.coinciding_sizes(args, exercise.reference)
            if bad:
                found.add(f"{exercise.id}: {', '.join(bad)}")  # by value, not case number: cases move
    return found


def test_no_new_case_has_sizes_that_coincide():
    new = coincidences() - KNOWN_COINCIDENCES
    assert not new, "cases whose sizes coincide (give every size its own value, never 2):\n" + "\n".join(sorted(new))


def test_coinciding_sizes_lists_equal_whole_numbers_and_twos():
    def count(batch, layers, heads, bytes_per_value):
        return 0

    assert relation_basics.coinciding_sizes((3, 2, 4, 4), count) == ["layers=2", "heads=4", "bytes_per_value=4"]
    assert relation_basics.coinciding_sizes((3, 5, 7, 6), count) == []


def test_the_first_hint_after_a_relation_points_at_the_step_not_at_the_first_entry(capsys):
    from course_utils import checks
    from course_utils.checking import hints

    hints.forget()

    def dot_scores(q, k):
        return q @ k.T / math.sqrt(q.shape[-1])

    checks.check("00.dot_scores", dot_scores)
    checks.hint("00.dot_scores")
    out = capsys.readouterr().out
    assert "Your last check said how your result relates to the right one" in out
    assert "work that case out by hand" not in out
    hints.forget()


def test_the_right_slices_in_another_order_and_a_mask_left_out():
    x = np.random.default_rng(4).standard_normal((3, 5))
    ex = registry.get("01.softmax_along")
    assert "reordered:-1" in [f.key for f in findings(ex, (x,), x, x[:, ::-1])]
    assert "reordered:-1" in [f.key for f in findings(ex, (x,), x, x[:, [1, 0, 2, 3, 4]])]

    def reference(scores, mask):
        return scores.masked_fill(~mask, float("-inf")).softmax(-1)

    dropped = [m for m in mutations.mutants(reference) if m.key.startswith("mutant:mask:dropped")]
    assert dropped and dropped[0].misconception == "mask_ignored"


def test_an_answer_of_zeros_is_related_to_nothing():
    verdict = _judge("00.dot_scores", lambda q, k: np.zeros((len(q), len(k))))
    assert verdict.relation is None and verdict.detail.endswith("got 0.")  # lesson 00's stored output


def test_one_number_is_never_named_just_a_constant_times_the_right_one():
    ex = registry.get("01.score_scale")
    args = (16, 1.0)
    assert "factor" not in _keys("01.score_scale", args, 4.0, 3.0)  # 0.75 times: true of any two numbers
    assert "factor:1/d_head" in [f.key for f in findings(ex, args, 4.0, 0.25)]  # a size in scope still says something


def test_a_nan_never_matches_a_mutant_that_makes_nans():
    def softmax_along(x, axis=-1):  # the minimum subtracted: large exponents overflow, NaN on large scores
        exps = np.exp(x - x.min(axis=axis, keepdims=True))
        return exps / exps.sum(axis=axis, keepdims=True)

    verdict = _judge("01.softmax_along", softmax_along)
    assert verdict.relation is None or not verdict.relation.startswith("mutant:"), verdict.detail
    assert verdict.misconception != "mask_inverted", verdict.detail


def test_transposed_output_is_said_in_words_without_the_scores_entry_of_the_catalogue():
    x = np.random.default_rng(5).standard_normal((2, 3, 4))
    found = [
        f for f in findings(registry.get("01.softmax_along"), (x,), x, x.swapaxes(-1, -2)) if f.key == "transposed"
    ]
    assert found and found[0].misconception is None


def test_a_mistake_is_named_when_it_explains_every_failing_case_but_those_whose_nan_is_located():
    torch = pytest.importorskip("torch")

    def masked_attention(query, key, value, mask=None):  # softmax down the queries, -inf fill: NaN on an empty row
        scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-2)
        return weights @ value, weights

    verdict = _judge("02.masked_attention", masked_attention)
    assert verdict.misconception == "softmax_wrong_axis", verdict.detail
    assert "your result has NaN instead" in verdict.detail
    assert "The first NaN appears in `weights`, after your line" in verdict.detail


def test_one_number_of_a_tuple_names_nothing_when_another_output_is_wrong_unexplained():
    ex = registry.get("02.masked_attention")
    rng = np.random.default_rng(5)
    output, weights = rng.standard_normal((3, 4)), rng.standard_normal((3, 5))
    assert findings(ex, (), (output, weights), (output, weights * 3))  # the weights' factor explains the case
    downstream = (output + rng.standard_normal((3, 4)), weights * 3)  # an array's relation still names
    assert findings(ex, (), (output, weights), downstream)
    first, second = np.int64(1), np.int64(2)
    assert findings(ex, (), (first, second), (first, second + 1))  # off by one, and nothing else wrong
    assert findings(ex, (), (first, second), (first + 2, second + 1)) == []  # one number's +1 is a coincidence


def test_a_one_bit_result_is_never_named_by_a_mutant():
    ex = registry.get("02.leaks")

    def every_mutant_matches(triple):
        return [relation_basics.Finding("mutant:index:off_by_one", "the right computation with an index off by one")]

    triples = [Triple("case 1 of 1", (), True, False)]
    assert not explain(ex, triples, extra=every_mutant_matches).named
    arrays = [Triple("case 1 of 1", (), np.arange(3.0), np.arange(3.0) + 1)]
    assert explain(ex, arrays, extra=every_mutant_matches).named  # an array result still can be


def test_a_few_small_whole_numbers_are_never_named_by_a_mutant():
    ex = registry.get("01.shared_next_token_matrix")

    def every_mutant_matches(triple):
        return [
            relation_basics.Finding("mutant:sibling:input", "one input used where another of the same kind belongs")
        ]

    few = [Triple("case 1 of 1", (), (np.int64(1), np.int64(2), np.int64(3)), (np.int64(3), np.int64(3), 3))]
    assert not explain(ex, few, extra=every_mutant_matches).named
    counts = [Triple("case 1 of 1", (), np.int64(22765), np.int64(22349))]  # one large count: still a fingerprint
    assert explain(ex, counts, extra=every_mutant_matches).named


def test_an_output_of_a_tuple_that_is_right_names_nothing():
    ex = registry.get("02.masked_attention")
    rng = np.random.default_rng(6)
    right_mask = rng.standard_normal((1, 1, 3, 3))  # axes of size 1: swapping them changes nothing
    weights = rng.standard_normal((2, 5))
    keys = [f.key for f in findings(ex, (), (right_mask, weights), (right_mask, weights + 1.0))]
    assert keys and not [k for k in keys if k.startswith("output:")]


def test_outputs_handed_back_in_another_order_while_their_gradients_differ():
    ex = registry.get("02.masked_attention")
    rng = np.random.default_rng(8)
    right = tuple(rng.standard_normal((2, 3)) for _ in range(5))  # output, weights, three gradients
    got = (right[1], right[0], right[2] + 1, right[3], right[4] * 2)  # swapped; a gradient differs as a result
    keys = [f.key for f in findings(ex, (), right, got)]
    assert keys[:1] == ["outputs_order:(1, 0, 2, 3, 4)"]


def test_a_reduction_swapped_for_its_twin_is_named_by_the_mutation_engine():
    def strongest_key(weights, query_labels, key_labels):
        return [key_labels[j] for j in np.argmin(weights, axis=1)]  # the weakest key

    verdict = _judge("01.strongest_key", strongest_key)
    assert verdict.status == "wrong" and verdict.relation == "mutant:twin:argmax"
    assert "smallest entry taken where the largest is asked" in verdict.detail


def test_a_transpose_left_out_is_a_mutant():
    from course_utils.checking import mutation_sites

    tree = __import__("ast").parse("def f(Q, K):\n    return Q @ K.T + Q @ np.swapaxes(K, -1, -2)\n")
    keys = [site[0] for site in mutation_sites.twin_sites(tree)]
    assert keys.count("transpose:dropped") == 2


def test_an_option_with_a_default_is_no_sibling_of_the_data():
    """A softmax over axis 0 instead of `axis` is the wrong axis, not "one input used for another (a copy-paste slip)":
    `axis=-1` is an option of softmax_along, so no mutant swaps it with `x`."""
    keys = [m.key for m in mutations.mutants(registry.get("01.softmax_along").reference)]
    assert not [k for k in keys if k.startswith("mutant:sibling:input")]

    def softmax_along(x, axis=-1):
        e = np.exp(x - x.max(axis=0, keepdims=True))
        return e / e.sum(axis=0, keepdims=True)

    verdict = _judge("01.softmax_along", softmax_along)
    assert verdict.status == "wrong"
    assert "copy-paste" not in verdict.detail and "over the wrong axis" in verdict.detail
