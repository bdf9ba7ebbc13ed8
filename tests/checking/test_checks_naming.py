"""Round 2 of issue 26 §2 and §4: crashes explained, broken promises named, more relations and mutations.

Each test fails without the mechanism it names: crash causes (``crash_site.cause``), the key a contract,
in-place, refused or None verdict carries, a driven function's own return value, fresh-size failures named by
relation, whole-number / reshaped / tuple-order relations, class and sibling/term mutants, unknown catalogue ids.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from course_utils.checking import crash_site, engine, extra_checks, mutations, registry, relation_finders, relations
from course_utils.checking.relation_finders import findings

torch = pytest.importorskip("torch")


def _judge(exercise_id, answer):
    return engine.judge(registry.get(exercise_id), answer)


def _keys(exercise_id, args, expected, got):
    return [f.key for f in findings(registry.get(exercise_id), args, expected, got)]


def _raised(fn):
    try:
        fn()
    except Exception as exc:  # the exception itself is what the test looks at
        return exc
    raise AssertionError("did not raise")


# ---- crashes: what went wrong, in words ----------------------------------------------------------------------------


def test_common_crashes_are_explained_by_their_kind_with_the_sizes_quoted():
    found = crash_site.cause(_raised(lambda: np.ones((3, 2)) @ np.ones((4, 2))))
    assert found[0] == "matmul_shapes" and "last axis has 2" in found[1] and "second-to-last has 4" in found[1]
    found = crash_site.cause(_raised(lambda: torch.ones(3, 4) @ torch.ones(5, 2)))
    assert found[0] == "matmul_shapes" and "3x4 times 5x2" in found[1]
    assert crash_site.cause(_raised(lambda: np.ones((3, 2)) + np.ones((4, 2))))[0] == "broadcast_shapes"
    assert crash_site.cause(_raised(lambda: torch.ones(3) + torch.ones(4)))[0] == "broadcast_shapes"
    found = crash_site.cause(_raised(lambda: torch.ones(3, 4).t().view(12)))
    assert found[0] == "view_not_contiguous" and "reshape" in found[1]
    assert crash_site.cause(_raised(lambda: np.ones(3).reshape(2, 2)))[0] == "reshape_size"
    assert crash_site.cause(_raised(lambda: np.ones((2, 3)).transpose(0, 2, 1)))[0] == "axis_order"
    assert crash_site.cause(_raised(lambda: np.ones((2, 3))[np.ones(4, dtype=bool)]))[0] == "mask_as_index"
    assert crash_site.cause(_raised(lambda: torch.ones(3).double() @ torch.ones(3)))[0] == "dtype_mismatch"
    assert crash_site.cause(_raised(lambda: np.ones(3)[5]))[0] == "index_past_end"
    assert crash_site.cause(_raised(lambda: ~None))[0] == "none_used"
    assert crash_site.cause(_raised(lambda: undefined_name_here))[0] == "undefined_name"  # noqa: F821
    assert crash_site.cause(ValueError("something nobody wrote a rule for")) is None


def test_a_crash_with_a_known_cause_is_named_and_says_what_went_wrong():
    def dot_scores(q, k):
        return q @ k  # k not transposed: the inner sizes disagree

    verdict = _judge("00.dot_scores", dot_scores)
    assert verdict.status == "crashed" and verdict.relation == "crash:matmul_shapes", verdict
    assert "What went wrong: a matrix product whose inner sizes do not agree" in verdict.detail
    assert "your line" in verdict.detail  # where, too


def test_an_autograd_crash_outside_the_students_frames_is_placed_in_the_backward_pass():
    def masked_softmax(scores, mask):
        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        weights[weights != weights] = 0.0  # in place on softmax's output: the backward pass fails
        return weights

    verdict = _judge("02.masked_softmax", masked_softmax)
    assert verdict.status == "crashed" and verdict.relation == "crash:in_place_autograd", verdict
    assert "in the backward pass" in verdict.detail


# ---- broken promises carry their own name ------------------------------------------------------------------------


def test_a_broken_return_promise_is_the_name_of_a_wrong_answer():
    def dot_scores(q, k):
        return (q @ k.T).tolist()

    verdict = _judge("00.dot_scores", dot_scores)
    assert verdict.status == "wrong" and verdict.relation == "contract", verdict


def test_an_input_changed_in_place_and_a_missing_return_are_named():
    def softmax_along(x, axis=-1):
        x -= x.max(axis=axis, keepdims=True)
        e = np.exp(x)
        return e / e.sum(axis=axis, keepdims=True)

    assert _judge("01.softmax_along", softmax_along).relation == "in_place"

    def attention_scores(Q, K):
        Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])

    assert _judge("01.attention_scores", attention_scores).relation == "returned_none"


def test_a_driven_function_returning_a_tensor_where_the_course_returns_a_number_is_refused():
    def train_step(model, optimizer, batch):
        query, keys, values, target, _ = batch
        output, _ = model(query, keys, values)
        loss = ((output - target) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss  # the tensor: the driver would turn it into a float, the lesson's cells do not

    verdict = _judge("04.train_step", train_step)
    assert verdict.status == "wrong" and verdict.relation == "contract", verdict
    assert "what each call of your function returns" in verdict.detail


# ---- fresh sizes: named by relation ------------------------------------------------------------------------------


def test_a_fresh_size_failure_is_named_by_its_relation_to_the_right_output():
    exercise = registry.get("01.score_scale")
    calls = []

    def run(fn, args, seed, fn_is_answer=True):
        return ("ok", fn(*args))

    def explain(args, expected, got, seed):
        calls.append(args)
        return "your result is the right one times 2.", "factor:2"

    def score_scale(d_head, variance):
        right = exercise.reference(d_head, variance)
        return right if d_head in (64, 16, 100, 1) else 2 * right

    found = extra_checks.fresh_sizes_keyed(
        exercise, score_scale, run, lambda e, g: None if e == g else "differs", explain
    )
    assert found is not None and found[1] == "fresh:factor:2" and "times 2" in found[0] and calls
    found = extra_checks.fresh_sizes_keyed(exercise, score_scale, run, lambda e, g: None if e == g else "differs")
    assert found[1] == "fresh_sizes"  # no explainer: still the fresh-size kind, never silent


# ---- relations: whole numbers, another shape, outputs in another order ------------------------------------------


def test_whole_numbers_are_related_by_sizes_constants_terms_and_one_off():
    args = (2, 4, 5, 7, 3)  # weights_bytes(batch, heads, q_len, k_len, bytes_per_value)
    right = 2 * 4 * 5 * 7 * 3
    assert "factor:1/bytes_per_value" in _keys("06.weights_bytes", args, right, right // 3)
    assert "factor:8" in _keys("06.weights_bytes", args, right, right * 8)
    assert "offset:-1" in _keys("06.weights_bytes", args, right, right - 1)
    assert "term:-q_len · k_len" in _keys("06.weights_bytes", args, right, right - 35)
    assert _keys("06.weights_bytes", args, right, right + 13) == []  # no size, no constant: nothing


def test_a_result_of_another_shape_is_related_by_the_axis_it_lost_or_gained_or_resized():
    x = np.random.default_rng(1).standard_normal((3, 4, 5))
    keys = _keys("01.softmax_along", (x,), x, x.mean(axis=-2))
    assert "reduced:averaged:-2" in keys
    assert "extra_axis:-1" in _keys("01.softmax_along", (x,), x, x[..., None])
    q, k = np.ones((3, 2)), np.ones((4, 2))
    keys = _keys("00.dot_scores", (q, k), np.zeros((3, 4)), np.zeros((3, 3)))
    assert "axis_size:-1:q.shape[-2]->k.shape[-2]" in keys


def test_the_right_outputs_in_another_order_or_one_alone():
    rng = np.random.default_rng(2)
    out, w = rng.standard_normal((3, 2)), rng.random((3, 3))
    args = (np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)))
    assert _keys("01.attend", args, (out, w), (w, out)) == ["outputs_order:(1, 0)"]
    assert _keys("01.attend", args, (out, w), out) == ["only_output:0"]


def test_an_unknown_catalogue_id_is_dropped_not_raised():
    class Ex:
        atol, rtol, output_names = 1e-8, 1e-5, ()

        @staticmethod
        def reference(x):
            return x

    x = np.arange(6.0).reshape(2, 3) + 1
    triple = relations.Triple("case 1", (x,), x, 2 * x, (), 0)

    def extra(triple):
        return [relation_finders.Finding("made_up", "made up", "no_such_misconception")]

    found = relations.explain(Ex, [triple], extra=extra)
    assert found.named and found.misconception is None


# ---- mutations: terms left out, siblings swapped, a class's methods ----------------------------------------------


def test_a_term_left_out_and_a_sibling_swapped_are_mutants():
    def reference(x, y):
        return x + np.tanh(y)

    kinds = {m.key.rsplit(":", 2)[0] for m in mutations.mutants(reference)}
    assert {"mutant:term:dropped", "mutant:sibling:input"} <= kinds


def test_a_modules_forward_is_varied_and_names_a_missing_residual():
    base = registry.get("08.encoder_layer").reference  # a class: its inherited forward is varied
    found = mutations.mutants(base)
    assert {"mutant:term:dropped", "mutant:sibling:layer"} <= {m.key.rsplit(":", 2)[0] for m in found}
    dropped = [m for m in found if m.key.startswith("mutant:term:dropped")]
    verdict = _judge("08.encoder_layer", dropped[-1].answer)  # a residual (or another term) left out
    assert verdict.status == "wrong" and verdict.relation == "mutant:term:dropped", verdict


def test_differences_products_joins_loops_roots_and_indices_are_varied():
    def reference(q, k, n):
        out = np.concatenate([q, k], axis=-1) * np.exp(q - k) / np.sqrt(q.shape[-1])
        for i in range(n):
            out[i] = out[i] + 1.0
        return out

    kinds = {m.key.rsplit(":", 2)[0] for m in mutations.mutants(reference)}
    expected = {"mutant:sub:swapped", "mutant:muldiv", "mutant:join:order", "mutant:range:-1", "mutant:range:+1"}
    assert expected | {"mutant:scale:other_size", "mutant:index:off_by_one"} <= kinds


def test_a_scale_by_another_size_is_named_in_a_check():
    def attention_scores(Q, K):
        return Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2])  # k_len, not d_head

    verdict = _judge("01.attention_scores", attention_scores)
    assert verdict.status == "wrong" and verdict.relation is not None, verdict
