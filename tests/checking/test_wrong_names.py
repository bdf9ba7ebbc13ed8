"""Names that were wrong, and answers that passed, on the blind batteries (issue 26, round 4).

Each test fails without its mechanism: the fresh case as evidence for a relation
(``course_utils/checking/fresh_evidence.py``), a generic relation on one failing case said, not named
(``relations.explain``), the fresh cases with every feature size equal (``equal_sizes.py``) and cases with tied
maxima (``cases.tied_rows``).
"""

from __future__ import annotations

import numpy as np

from course_utils.checking import cases, engine, equal_sizes, fresh_evidence, registry
from course_utils.checking.model import Case, Exercise
from course_utils.checking.relations import Triple, explain, is_generic


def _judge(exercise, answer):
    return engine.judge(exercise if isinstance(exercise, Exercise) else registry.get(exercise), answer)


def _doubled(x):
    return 2 * x  # (n,) -> (n,)


DOUBLE = Exercise(
    id="97.double",
    section="97 · Doubling",
    make_cases=lambda: [Case((np.arange(3.0) + 1,), "three entries")],
    reference=_doubled,
    fresh=lambda n: [(np.arange(float(n)) + 1,)],
)


# ---- the fresh case is evidence: a relation must explain it too ------------------------------------------------


def test_a_size_hard_coded_from_the_case_is_not_named_as_that_size():
    def answer(x):
        return 2 * x * 3  # the case's length written in: at other lengths it is no size at all

    verdict = _judge(DOUBLE, answer)
    assert verdict.status == "wrong"
    assert verdict.relation is None or "shape" not in verdict.relation  # was "factor:x.shape[-1]"


def test_a_factor_that_is_the_size_at_every_length_is_still_named():
    def answer(x):
        return 2 * x * x.shape[-1]

    verdict = _judge(DOUBLE, answer)
    assert verdict.relation == "factor:x.shape[-1]"
    assert "every failing case" in verdict.detail  # the fixed case and the fresh one


def test_fresh_triples_only_for_a_fresh_case_the_answer_gets_wrong():
    def wrong(a, b):
        return a != b if np.shape(a) == np.shape(b) and np.any(a != b) else np.shape(a) != np.shape(b)

    found = fresh_evidence.fresh_triples(DOUBLE, lambda x: 3 * x, lambda e, g: bool(np.any(wrong(e, g))))
    assert len(found) == 1 and found[0].label.startswith("the fresh case (n=")
    assert fresh_evidence.fresh_triples(DOUBLE, _doubled, lambda e, g: bool(np.any(wrong(e, g)))) == []

    def crashes(x):
        raise ValueError("no")

    assert fresh_evidence.fresh_triples(DOUBLE, crashes, lambda e, g: True) == []


def test_cached_causal_mask_window_without_the_cache_offset_is_not_the_mask_before_the_window():
    import torch

    def cached_causal_mask(q_len, k_len, window=None):  # the window measured from row i, not position k_len - q_len + i
        ones = torch.ones(q_len, k_len, dtype=torch.bool)
        mask = torch.tril(ones, diagonal=k_len - q_len)
        if window is not None:
            mask = mask & torch.triu(ones, diagonal=1 - window)
        return mask

    verdict = _judge("02.cached_causal_mask", cached_causal_mask)
    assert verdict.status == "wrong"
    assert verdict.relation != "step:allowed"  # its window does cut keys once the queries outnumber the window


# ---- a generic relation on one failing case is a coincidence until another case shows it -------------------------


def test_a_constant_factor_on_one_failing_case_is_said_not_named():
    ex = registry.get("00.dot_scores")
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((3, 5)), rng.standard_normal((4, 5))
    right = q @ k.T

    def triple(i):
        return Triple(f"case {i}", (q, k), right, right * 7.3)

    one = explain(ex, [triple(1)])
    assert not one.named and "looks like" in one.sentence and "coincidence" in one.sentence
    assert explain(ex, [triple(1), triple(2)]).named


def test_generic_keys_of_a_tuple_output_are_generic_too():
    assert is_generic("factor") and is_generic("output:factor") and is_generic("weights:per_slice")
    assert not is_generic("factor:1/batch") and not is_generic("projections:factor:1/batch")


# ---- answers that passed every case ---------------------------------------------------------------------------


def test_w_v_applied_again_when_it_is_square_fails_at_equal_feature_sizes():
    def answer(X, W_q, W_k, W_v):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        w = np.exp(scores - scores.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        out = w @ V
        return (out @ W_v if W_v.shape[0] == W_v.shape[1] else out), w

    verdict = _judge("01.self_attention", answer)
    assert verdict.status == "wrong"
    assert "with every feature size equal" in verdict.detail


def test_equal_feature_runs_need_two_feature_sizes():
    ex = registry.get("01.self_attention")
    drawn = {"seq_len": 7, "d_model": 10, "d_head": 3, "d_value": 5}
    ((sizes, made, words),) = equal_sizes.equal_feature_runs(ex, drawn, 1000)
    assert sizes == {"seq_len": 7, "d_model": 10, "d_head": 10, "d_value": 10}
    X, W_q, W_k, W_v = made[0]
    assert W_q.shape == W_k.shape == W_v.shape == (10, 10) and not np.allclose(W_q, W_k)
    assert equal_sizes.equal_feature_runs(DOUBLE, {"n": 3}, 1000) == []


def test_self_attention_fresh_weights_differ_from_one_another():
    from course_utils.checking.extra_checks import fresh_cases

    _, made = fresh_cases(registry.get("01.self_attention"))
    X, W_q, W_k, W_v = made[0]
    assert not np.allclose(W_q, W_k)  # W_k made with W_q would pass an identical pair


def test_tied_rows_repeat_each_maximum_later():
    rows = np.random.default_rng(0).dirichlet(np.ones(5), size=6)
    rows[0] = rows[0][np.argsort(rows[0])]  # one row whose maximum is last
    tied = cases.tied_rows(rows)
    assert np.allclose(tied.sum(-1), 1)
    first = tied.argmax(-1)
    last = tied.shape[-1] - 1 - tied[:, ::-1].argmax(-1)
    assert np.all(first < last)


def test_strongest_key_taking_the_last_of_tied_maxima_is_wrong():
    def strongest_key(weights, query_labels, key_labels):
        k = weights.shape[1]
        return [key_labels[k - 1 - int(np.argmax(row[::-1]))] for row in weights]

    verdict = _judge("01.strongest_key", strongest_key)
    assert verdict.status == "wrong" and "ties" in verdict.detail


# ---- generic -> named: an argument misread, outputs written by hand ---------------------------------------------


def test_w_o_transposed_is_named_by_the_argument():
    from course_utils.lessons.lesson_03.core import multi_head_attention

    def answer(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
        return multi_head_attention(query, key, value, W_q, W_k, W_v, W_o.T, num_heads, mask)

    verdict = _judge("03.multi_head_attention", answer)
    assert verdict.relation == "argument:transposed:W_o"
    assert "`W_o` transposed" in verdict.detail


def test_argument_variants_leave_symmetric_and_rectangular_matrices_alone():
    from course_utils.checking import argument_variants
    from course_utils.checking.relations import Triple

    def reference(x, W):
        return x @ W  # (n, d) @ (d, d) -> (n, d)

    ex = Exercise(id="97.project", section="97 · Projecting", make_cases=list, reference=reference)
    find = argument_variants.finder(ex, lambda fn, args, seed: fn(*args))
    x = np.arange(6.0).reshape(2, 3)
    W = np.arange(9.0).reshape(3, 3)
    assert [f.key for f in find(Triple("case", (x, W), x @ W, x @ W.T))] == ["argument:transposed:W"]
    sym = W + W.T  # transposed, it is the same matrix: nothing to tell apart
    assert find(Triple("case", (x, sym), x @ sym, 2 * x @ sym)) == []
    wide = np.arange(12.0).reshape(3, 4)  # not square: its transpose does not fit
    assert find(Triple("case", (x, wide), x @ wide, 2 * x @ wide)) == []


def test_outputs_written_as_lists_in_the_wrong_order_are_named():
    from course_utils.lessons.lesson_01.core import by_hand_new_query

    def answer():
        weights, output = by_hand_new_query()
        return [float(v) for v in output], [float(v) for v in weights]  # outputs first

    verdict = _judge("01.by_hand_new_query", answer)
    assert verdict.relation == "outputs_order:(1, 0)"


def test_weights_with_dropout_applied_are_named_dropout():
    from course_utils.checking.relation_finders import findings

    ex = registry.get("01.softmax_along")
    x = np.random.default_rng(3).standard_normal((4, 6))
    right = np.exp(x) / np.exp(x).sum(-1, keepdims=True)
    kept = np.random.default_rng(4).random(right.shape) > 0.3
    dropped = right * kept / 0.7  # what nn.Dropout(0.3) does in training mode
    keys = [f.key for f in findings(ex, (x,), right, dropped)]
    assert "dropout" in keys
    assert "dropout" not in [f.key for f in findings(ex, (x,), right, right * 1.5)]  # nothing zeroed: no dropout
    half = right.copy()
    half[:, :2] = 0  # zeroed, but the rest not scaled up
    assert "dropout" not in [f.key for f in findings(ex, (x,), right, half)]


def test_indices_where_labels_are_asked_are_named_positions():
    def strongest_key(weights, query_labels, key_labels):
        return [int(j) for j in np.argmax(weights, axis=-1)]  # the column, never turned into its label

    verdict = _judge("01.strongest_key", strongest_key)
    assert verdict.relation == "positions:key_labels"


def test_np_dot_on_a_batch_pairs_every_item_with_every_other():
    def attention_scores(Q, K):
        return np.dot(Q, np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])  # (*batch, q, *batch, k) when batched

    verdict = _judge("01.attention_scores", attention_scores)
    assert verdict.relation == "batch_pairs"
    assert "paired with every other" in verdict.detail


def test_a_mask_as_wide_as_the_longest_sequence_is_named_cut_short():
    import torch

    def padding_mask(lengths, max_len, side="right"):
        width = int(lengths.max())  # not max_len
        pos = torch.arange(width)[None, :]
        return pos >= width - lengths[:, None] if side == "left" else pos < lengths[:, None]

    verdict = _judge("02.padding_mask", padding_mask)
    assert verdict.relation == "cropped:-1"


def test_a_mask_expanded_to_several_heads_is_named_repeated():
    from course_utils.checking.relation_finders import findings

    ex = registry.get("02.decoder_mask")
    right = np.tril(np.ones((4, 4), dtype=bool))[None, None].repeat(3, axis=0)  # (3, 1, 4, 4)
    got = np.broadcast_to(right, (3, 8, 4, 4))
    keys = [f.key for f in findings(ex, (), right, got)]
    assert "repeated:-3" in keys
    assert not [k for k in (f.key for f in findings(ex, (), right, ~got)) if k.startswith("repeated")]


def test_two_arguments_of_one_shape_swapped_are_named():
    def self_attention(X, W_q, W_k, W_v):
        Q, K, V = X @ W_k, X @ W_q, X @ W_v  # the query and key projections swapped
        scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        w = np.exp(scores - scores.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        return w @ V, w

    verdict = _judge("01.self_attention", self_attention)
    assert verdict.relation == "argument:swapped:W_q,W_k"
