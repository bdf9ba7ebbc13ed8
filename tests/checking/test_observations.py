"""What a wrong output does, observed against the right one (issue 26 §2): each observation fails without its code.

The observations (``course_utils/checking/observations.py``) come after every relation and mutation; each is
named only when it holds on every failing case, and its words say what the answer does, never the right code.
"""

from __future__ import annotations

import numpy as np
import pytest

from course_utils.checking import observations as obs
from course_utils.checking import registry
from course_utils.checking.relation_finders import findings
from course_utils.checking.relations import Triple, explain

RNG = np.random.default_rng(7)


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _keys(found):
    return [key for key, _ in found]


def test_an_elementwise_function_of_the_right_values():
    w = _softmax(RNG.standard_normal((3, 5)))
    assert "elementwise:log" in _keys(obs.elementwise(w, np.log(w)))
    x = RNG.standard_normal((3, 5)) * 3
    assert "elementwise:square" in _keys(obs.elementwise(x, x**2))
    assert "elementwise:trunc" in _keys(obs.elementwise(x, np.trunc(x)))
    assert "elementwise:abs" in _keys(obs.elementwise(x, np.abs(x)))
    clipped = obs.elementwise(x * 100, np.clip(x * 100, -50, 50))
    assert clipped and clipped[0][0] == "elementwise:clip" and "at 50" in clipped[0][1]
    assert obs.elementwise(x, x * 1.5) == []  # a scale is no elementwise function named here
    assert obs.elementwise(x, x) == []  # the right values are no mistake


def test_softmax_log_softmax_and_a_shift_per_slice():
    x = RNG.standard_normal((4, 6))
    assert _keys(obs.along_axis(x, _softmax(x))) == ["softmax_of_right:-1"]
    assert _keys(obs.along_axis(x, np.log(_softmax(x, 0)))) == ["log_softmax_of_right:-2"]
    shifted = x + RNG.standard_normal((4, 1))
    assert _keys(obs.along_axis(x, shifted)) == ["shift_per_slice:-1"]
    assert obs.along_axis(x, x + 2.0) == []  # one constant: relations says "offset"


def test_cosine_similarity_is_named_by_the_lengths_of_two_arguments():
    q, k = RNG.standard_normal((3, 4)), RNG.standard_normal((5, 4))
    right = q @ k.T
    cosine = right / (np.linalg.norm(q, axis=-1)[:, None] * np.linalg.norm(k, axis=-1)[None, :])
    found = obs.rescaled_rows_and_columns(right, cosine, [("q", q), ("k", k)])
    assert _keys(found) == ["cosine"] and "`q`" in found[0][1] and "`k`" in found[0][1]
    other = right * RNG.uniform(1, 2, (3, 1)) * RNG.uniform(1, 2, (1, 5))
    assert _keys(obs.rescaled_rows_and_columns(right, other, [("q", q), ("k", k)])) == ["rescaled_rows_and_columns"]
    assert obs.rescaled_rows_and_columns(right, right * RNG.uniform(1, 2, (3, 1)), []) == []  # one axis: per_slice


def test_the_right_values_in_other_positions():
    k = RNG.standard_normal((5, 3))
    right = k.T  # (3, 5)
    found = obs.scrambled(right, k.reshape(3, 5))  # a reshape where a transpose belongs
    assert _keys(found) == ["scrambled"] and "reshaped" in found[0][1]  # one key, whatever the layout
    other_shape = obs.scrambled(right, right.reshape(-1))
    assert _keys(other_shape) == ["scrambled"] and "laid out as shape (15,)" in other_shape[0][1]
    rolled = np.roll(right.reshape(-1), 1).reshape(3, 5)
    assert _keys(obs.scrambled(right, rolled)) == ["scrambled"]
    assert obs.scrambled(right, right + 1) == []  # other values: nothing scrambled
    assert obs.scrambled(right, np.sort(right, axis=-1))[0][1] == "the right values sorted along axis -1"


def test_right_except_at_one_end_or_only_on_the_first_slice():
    x = RNG.standard_normal((2, 4, 5))
    last = x.copy()
    last[..., -1] = 0
    assert "region:last:-1" in _keys(obs.region(x, last))
    first = x.copy()
    first[:, 0, :] += 1
    assert "region:first:-2" in _keys(obs.region(x, first))
    y = RNG.standard_normal((3, 4, 5))
    only = y.copy()
    only[1:] *= 2
    assert "region:only_first:-3" in _keys(obs.region(y, only))
    assert obs.region(x, x + 1) == []  # everything differs: no region


def test_weights_that_do_not_sum_to_one():
    w = _softmax(RNG.standard_normal((3, 4)))
    found = obs.weight_sums(w, 2 * w)
    assert _keys(found) == ["weight_sums:not_normalised"] and "along the keys are not 1" in found[0][1]
    assert _keys(obs.weight_sums(w, w - 0.5)) == ["weight_sums:negative"]
    # one number per case or one per slice: the same key, so one name can explain every failing case
    assert _keys(obs.weight_sums(w, w * RNG.uniform(1, 2, (3, 1)))) == ["weight_sums:not_normalised"]
    assert obs.weight_sums(w, np.roll(w, 1, axis=-1)) == []  # still weights: nothing to say about the sums


def test_a_percentage_where_a_fraction_is_asked():
    assert _keys(obs.scalar_units(np.array(0.25), np.array(25.0))) == ["units:percent"]
    assert obs.scalar_units(np.array(0.25), np.array(0.5)) == []


def test_the_engine_names_an_observation_only_when_every_failing_case_shows_it():
    ex = registry.get("00.dot_scores")
    cases = [(RNG.standard_normal((3, 2)), RNG.standard_normal((4, 2))) for _ in range(2)]
    triples = []
    for i, (q, k) in enumerate(cases):
        right = q @ k.T
        got = right / (np.linalg.norm(q, axis=-1)[:, None] * np.linalg.norm(k, axis=-1)[None, :])
        triples.append(Triple(f"case {i + 1} of 2", (q, k), right, got))
    found = explain(ex, triples)
    assert found.named and found.key == "cosine" and "cosine similarity" in found.sentence
    q, k = cases[0]
    mixed = [triples[0], Triple("case 2 of 2", (q, k), q @ k.T, np.log(np.abs(q @ k.T)) + 7)]
    assert not explain(ex, mixed).named


def test_relations_come_before_observations():
    ex = registry.get("01.softmax_along")
    x = RNG.standard_normal((3, 4))
    right = _softmax(x)
    keys = [f.key for f in findings(ex, (x,), right, _softmax(x, 0))]
    assert keys[0] == "normalised_other_axis"  # the named relation first; the observation of the sums after it
    found = explain(ex, [Triple("case 1 of 1", (x,), right, _softmax(x, 0))])
    assert found.key == "normalised_other_axis"


@pytest.mark.parametrize("answer", [lambda x, axis=-1: np.log(_softmax(x, axis))])
def test_a_log_softmax_answer_is_named_by_the_check(answer):
    from course_utils.checking import engine

    verdict = engine.judge(registry.get("01.softmax_along"), answer)
    assert verdict.status == "wrong" and "logarithm of the right values" in verdict.detail


def test_right_except_entries_that_must_be_zero_or_must_not_be():
    w = _softmax(RNG.standard_normal((4, 5)))
    masked = np.tril(w)
    leaky = np.where(masked == 0, 0.125, masked)  # the hidden entries get a value, the others are right
    found = obs.zeros(masked, leaky)
    assert _keys(found) == ["zeros:nonzero"] and "10 of the 10 entries" in found[0][1]
    assert obs.zeros(masked / masked.sum(-1, keepdims=True), w) == []  # every row differs: no such observation
    x = RNG.standard_normal((3, 4)) + 5
    cut = x.copy()
    cut[:, -1] = 0
    assert _keys(obs.zeros(x, cut)) == ["zeros:extra"]
    assert obs.zeros(x, x + 1) == []  # no zero anywhere


def test_observations_hold_on_edge_cases_a_check_draws():
    q, k = RNG.standard_normal((1, 3)), RNG.standard_normal((6, 3))  # one query: a constant row factor
    right = q @ k.T
    cosine = right / (np.linalg.norm(q, axis=-1)[:, None] * np.linalg.norm(k, axis=-1)[None, :])
    assert _keys(obs.rescaled_rows_and_columns(right, cosine, [("q", q), ("k", k)])) == ["cosine"]
    x = np.array([[0.0, 1000.0, 2.0]])  # weights that underflow to exactly 0
    log_weights = x - x.max() - np.log(np.exp(x - x.max()).sum())
    assert "elementwise:log" in _keys(obs.elementwise(_softmax(x), log_weights))
    in_float32 = np.array(np.float32(100 * 3 / 11))  # a percentage computed in float32
    assert _keys(obs.scalar_units(np.array(3 / 11), in_float32)) == ["units:percent"]


def test_the_scores_where_the_weights_are_asked():
    scores = RNG.standard_normal((3, 5))
    found = obs.along_axis(_softmax(scores), scores)
    assert _keys(found) == ["before_softmax:-1"] and "before the softmax" in found[0][1]


def test_a_factor_that_is_the_log_of_a_size():
    ex = registry.get("05.row_entropy")
    row = np.full(8, 1 / 8)
    keys = [f.key for f in findings(ex, (row,), np.float64(np.log(8)), np.float64(1.0))]
    assert "factor:1/ln(row.shape[-1])" in keys  # an entropy divided by its largest value, ln k


def test_blocks_summed_or_averaged_where_they_belong_side_by_side_and_the_reverse():
    heads = RNG.standard_normal((3, 5, 2, 4))  # (batch, seq_len, heads, d_head)
    right = heads.reshape(3, 5, 8)  # merged side by side
    assert _keys(obs.folded(right, heads.sum(axis=2))) == ["folded:summed"]
    assert _keys(obs.folded(right, heads.mean(axis=2))) == ["folded:averaged"]
    tokens, positions = RNG.standard_normal((3, 8, 20)), RNG.standard_normal((3, 8, 20))
    found = obs.folded(tokens + positions, np.concatenate([tokens, positions], axis=-1))
    assert _keys(found) == ["folded:joined"] and "2 parts side by side along axis -1" in found[0][1]
    assert obs.folded(right, heads[:, :, 0]) == []  # one block kept: no sum, no mean


def test_one_number_repeated_the_mean_of_all_the_right_values():
    per_head = np.array([0.6, 0.3])
    assert _keys(obs.collapsed(per_head, np.full(2, 0.45))) == ["collapsed:mean"]
    assert obs.collapsed(per_head, np.full(2, 0.5)) == []  # a constant, but no mean or sum of the right values


def test_axes_of_size_one_dropped_or_added():
    mask = np.tril(np.ones((4, 4), dtype=bool))[None, None]  # (1, 1, tgt_len, tgt_len) is asked
    found = obs.observe(mask, mask[0, 0])
    assert _keys(found) == ["size_one_axes:dropped"] and "shape (4, 4) where (1, 1, 4, 4)" in found[0][1]
    x = RNG.standard_normal((3, 5))
    assert _keys(obs.size_one_axes(x, x[:, None, :])) == ["size_one_axes:added"]
    assert obs.size_one_axes(x, x.T[:, None, :]) == []  # other values in the places: not just axes of size 1


# ---- round 4: weights judged along the axis they are normalised over, a mask's forbidden keys, a cut gradient


def test_weight_sums_are_judged_along_the_axis_the_right_weights_are_normalised_over():
    x = RNG.standard_normal((3, 4))
    down = _softmax(x, 0)  # weights down the columns (softmax_along(x, axis=0))
    by_max = np.exp(x - x.max(0)) / np.exp(x - x.max(0)).max(0)  # divided by the largest exp, not the sum
    found = obs.weight_sums(down, by_max)
    assert _keys(found) == ["weight_sums:not_normalised"] and "along axis -2" in found[0][1]
    assert obs.normalised_axis(down) == 0 and obs.normalised_axis(_softmax(x)) == 1
    # one row of zeros (every key masked) still leaves the axis the weights are normalised over
    masked = np.vstack([_softmax(x)[:2], np.zeros((1, 4))])
    assert obs.normalised_axis(masked) == 1
    found = obs.weight_sums(_softmax(x), _softmax(x, 0))
    assert _keys(found) == ["weight_sums:other_axis", "weight_sums:not_normalised"] and "wrong axis" in found[0][1]
    # a case normalised over another axis and a case whose masked weights then sum to less: one name for both
    masked = _softmax(x, 0) * (RNG.uniform(size=(3, 4)) > 0.3)
    triples = [
        Triple("case 1 of 2", (x,), _softmax(x), _softmax(x, 0)),
        Triple("case 2 of 2", (x,), _softmax(x), masked),
    ]
    found = explain(registry.get("01.softmax_along"), triples)
    assert found.named and found.key == "weight_sums:not_normalised" and "are not 1" in found.sentence


def test_weights_that_are_a_straight_line_of_the_scores_are_normalised_without_the_exponential():
    x = RNG.standard_normal((3, 5)) * 4
    shifted = x - x.min(-1, keepdims=True) + 1e-9
    found = obs.normalised_without_exp(_softmax(x), shifted / shifted.sum(-1, keepdims=True), [("x", x)])
    assert _keys(found) == ["normalised_without_exp"] and "`x`" in found[0][1]
    assert obs.normalised_without_exp(_softmax(x), _softmax(2 * x), [("x", x)]) == []  # a temperature: no line
    two = RNG.standard_normal((3, 2))  # two keys: any two numbers lie on a line, so nothing is said
    assert obs.normalised_without_exp(_softmax(two), two / two.sum(-1, keepdims=True), [("x", two)]) == []


def test_weight_on_keys_the_mask_forbids():
    scores = RNG.standard_normal((2, 3, 5))
    mask = np.array([[True, True, True, False, False], [True] * 5])[:, None, :]  # (batch, 1, k_len)
    right = _softmax(np.where(mask, scores, -np.inf))
    filled_with_zero = _softmax(np.where(mask, scores, 0.0))  # the forbidden keys keep exp(0)
    found = obs.forbidden_weight(right, filled_with_zero, [("mask", mask)])
    assert _keys(found) == ["zeros:weight_on_masked_keys"] and "`mask` forbids" in found[0][1]
    assert obs.forbidden_weight(right, _softmax(np.where(mask, 2 * scores, -np.inf)), [("mask", mask)]) == []
    assert obs.forbidden_weight(right, filled_with_zero, []) == []  # no mask among the arguments: nothing said
    # the engine hands a boolean argument to the observations too
    ex = registry.get("02.masked_softmax")
    assert "weights:zeros:weight_on_masked_keys" in [
        f.key
        for f in findings(
            ex,
            (scores, mask, np.ones_like(scores)),
            (right, np.zeros_like(scores)),
            (filled_with_zero, np.zeros_like(scores)),
        )
    ]


def test_a_gradient_of_zeros_is_named_and_other_zeros_are_not():
    right = RNG.standard_normal((2, 3))
    assert _keys(obs.zero_gradient("query gradient", right, np.zeros((2, 3)))) == ["zeros:no_gradient"]
    assert obs.zero_gradient("weights", right, np.zeros((2, 3))) == []  # zeros that are no gradient relate to all
    assert obs.zero_gradient("gradient", right, right) == []


def test_the_check_names_these_observations_on_every_failing_case():
    import torch

    from course_utils.checking import engine

    def by_largest(x, axis=-1):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.max(axis=axis, keepdims=True)

    def straight_line(x, axis=-1):
        z = x - x.min(axis=axis, keepdims=True) + 1e-9
        return z / z.sum(axis=axis, keepdims=True)

    def filled_with_zero(scores, mask):
        return torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1)

    def without_gradient(scores, mask):
        with torch.no_grad():
            has_key = mask.any(dim=-1, keepdim=True)
            return torch.softmax(scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0), -1) * has_key

    for exercise_id, answer, key in [
        ("01.softmax_along", by_largest, "weight_sums:not_normalised"),
        ("01.softmax_along", straight_line, "normalised_without_exp"),
        ("02.masked_softmax", filled_with_zero, "weights:zeros:weight_on_masked_keys"),
        ("02.masked_softmax", without_gradient, "gradient:zeros:no_gradient"),
    ]:
        verdict = engine.judge(registry.get(exercise_id), answer)
        assert verdict.status == "wrong" and verdict.relation == key, (answer.__name__, verdict)


def test_every_batch_item_paired_with_every_other():
    q, k = RNG.standard_normal((2, 3, 4, 6)), RNG.standard_normal((2, 3, 5, 6))
    right = q @ np.swapaxes(k, -1, -2)  # (2, 3, 4, 5)
    by_dot = np.dot(q, np.swapaxes(k, -1, -2))  # (2, 3, 4, 2, 3, 5): every batch item met every other
    assert _keys(obs.paired_items(right, by_dot)) == ["extra_axis:items_paired"]
    one_batch = np.dot(q[0], np.swapaxes(k[0], -1, -2))  # (3, 4, 3, 5)
    assert _keys(obs.paired_items(right[0], one_batch)) == ["extra_axis:items_paired"]
    assert obs.paired_items(right, np.stack([right, right], axis=1)) == []  # the right values twice: no pairing


def test_an_axis_repeated_where_it_must_keep_size_one_and_a_size_read_off_the_data():
    mask = RNG.standard_normal((3, 1, 4, 4)) > 0
    found = obs.repeated_size_one(mask, np.broadcast_to(mask, (3, 8, 4, 4)))
    assert _keys(found) == ["shape:repeated_size_one_axis"] and "axis -3" in found[0][1]
    assert obs.repeated_size_one(mask, np.ones((3, 8, 4, 4), dtype=bool)) == []  # not the right values repeated
    lengths = np.array([3, 1])
    found = obs.size_from_values(np.ones((2, 4), dtype=bool), np.ones((2, 3), dtype=bool), [("lengths", lengths)])
    assert _keys(found) == ["shape:size_from_largest_value"] and "`lengths`" in found[0][1]
    assert obs.size_from_values(np.ones((2, 4)), np.ones((2, 5)), [("lengths", lengths)]) == []
    # the check names it: a padding mask as wide as the longest sequence, not as max_len
    import torch

    from course_utils.checking import engine

    def padding_mask(lengths, max_len, side="right"):
        lengths = torch.as_tensor(lengths)
        positions = torch.arange(int(lengths.max()))[None, :]
        if side == "left":
            return positions >= int(lengths.max()) - lengths[:, None]
        return positions < lengths[:, None]

    verdict = engine.judge(registry.get("02.padding_mask"), padding_mask)
    # named by the shape observation, or by the relation that finds the output cut at lengths.max() (round 4 merged
    # both mechanisms; either name says what the answer does)
    assert verdict.relation in ("shape:size_from_largest_value", "cropped:-1"), verdict


def test_a_mask_wrong_on_one_side_only():
    causal = np.tril(np.ones((4, 4), dtype=bool))
    assert _keys(obs.one_sided(causal, np.ones((4, 4), dtype=bool))) == ["masks:too_permissive"]
    assert _keys(obs.one_sided(causal, np.tril(causal, -1))) == ["masks:too_strict"]
    assert obs.one_sided(causal, causal.T) == []  # wrong on both sides: nothing said
    ex = registry.get("02.cached_causal_mask")
    keys = [f.key for f in findings(ex, (4, 4), causal, np.tril(causal, -1))]
    assert keys.index("masks:too_strict") > keys.index("diagonal:-1")  # a relation that says which step comes first
    from course_utils.checking.relation_basics import Finding

    holes = causal.copy()
    holes[2, 1] = False  # no step of a causal mask makes this: only what it does is left to say
    triples = [Triple("case 1 of 1", (4, 4), causal, holes)]
    assert explain(ex, triples).key == "masks:too_strict"
    mutant = explain(ex, triples, extra=lambda t: [Finding("mutant:mask:dropped", "the reference without its mask")])
    assert mutant.key == "mutant:mask:dropped"  # weak: named only when nothing more specific explains every case


def test_a_size_is_never_read_off_token_ids():
    src = np.array([[3, 7, 1], [2, 5, 4]])  # token ids: their largest (7) equals a size only by chance
    assert obs.size_from_values(np.ones((2, 6)), np.ones((2, 7)), [("src", src)]) == []
