"""The checker audit: every exercise accepts its correct variants, names every fitting mistake, refuses every helper.

Runs ``course_utils.checking.audit`` once (it caches per process) and reads its rows: at least two distinct
correct variants per exercise, each accepted; every misconception that fits (declared, or derived from a
catalogue patch) named when its buggy answer is checked; every course helper that computes an answer refused.
``docs/checker_audit.md`` must be the audit's current Markdown output.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from course_utils.checking import audit, misconceptions, naming, preparing, registry

REPO = Path(__file__).resolve().parents[2]
ALL = list(registry.EXERCISES.values())


@pytest.fixture(scope="module")
def rows():
    return {row.exercise: row for row in audit.audit()}


@pytest.mark.parametrize("exercise", ALL, ids=lambda e: e.id)
def test_every_correct_variant_passes(exercise, rows):
    row = rows[exercise.id]
    assert len(row.variants) >= 2, f"{exercise.id}: declare at least two distinct correct variants"
    refused = [(name, detail) for name, ok, detail in row.variants if not ok]
    assert not refused, refused


@pytest.mark.parametrize("exercise", ALL, ids=lambda e: e.id)
def test_every_fitting_misconception_is_named(exercise, rows):
    unnamed = [(mid, detail) for mid, ok, detail, _, _ in rows[exercise.id].misconceptions if not ok]
    assert not unnamed, unnamed


@pytest.mark.parametrize("exercise", ALL, ids=lambda e: e.id)
def test_every_helper_that_computes_the_answer_is_refused(exercise, rows):
    passing = [(name, detail) for name, ok, detail in rows[exercise.id].helpers if not ok]
    assert not passing, passing


def test_every_catalogued_misconception_fits_some_exercise(rows):
    fitted = {mid for row in rows.values() for m in row.misconceptions for mid in (m[0], *m[4])}
    unused = [m.id for m in misconceptions.CATALOGUE if m.id not in fitted]
    assert not unused, f"catalogued but fitting no exercise: {unused}"


def test_patches_reach_beyond_the_exercises_that_declare_them(rows):
    """A patch names its mistake in every exercise whose computation it fits, not only where declared."""
    derived = {}
    for row in rows.values():
        for mid, _, _, source, _ in row.misconceptions:
            if source == "patch":
                derived.setdefault(mid, []).append(row.exercise)
    assert set(derived["causal_triu"]) >= {"02.cached_causal_mask", "02.decoder_mask", "08.my_decoder_masks"}
    assert set(derived["softmax_wrong_axis"]) >= {"01.softmax_along", "01.self_attention"}
    assert set(derived["no_scaling"]) >= {"01.self_attention"}
    assert set(derived["split_single_reshape"]) >= {"03.split_heads", "03.multi_head_attention"}
    assert set(derived["padding_off_by_one"]) >= {"04.torch_cross_attend"}
    assert set(derived["causal_triu"]) >= {"04.causal_self_attention", "04.alibi_bias"}


SOFTMAX_SCORES_BOUNDED = {"01.by_hand_new_query": "the worked example's three fixed scores"}


def test_softmax_cases_expose_an_unshifted_softmax(rows):
    """Where a softmax over the wrong axis fits, so does an unshifted one: the cases hold scores that overflow exp."""
    for row in rows.values():
        fitted = {mid for m in row.misconceptions for mid in (m[0], *m[4])}
        if "softmax_wrong_axis" in fitted and row.exercise not in SOFTMAX_SCORES_BOUNDED:
            assert "softmax_no_max_shift" in fitted, f"{row.exercise}: add a case with scores in the thousands"


def test_the_published_audit_is_current(rows):
    expected = audit.render_markdown(list(rows.values()))
    published = REPO / "docs" / "checker_audit.md"
    assert published.exists(), "run: python -m course_utils.checking.audit --markdown > docs/checker_audit.md"
    assert published.read_text(encoding="utf-8") == expected, (
        "docs/checker_audit.md is stale: python -m course_utils.checking.audit --markdown > docs/checker_audit.md"
    )


def test_the_command_line(capsys):
    assert audit.main(["--lesson", "00"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 exercises: 3 of 3 correct variants accepted") and "00.dot_scores" in out
    assert audit.main(["--lesson", "00", "--markdown"]) == 0
    assert "| `00.dot_scores` | 3 of 3 | 2 of 2: scores_transposed, elementwise_product |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        audit.main(["--lesson", "42"])


SQUARE_BY_NATURE = {
    "02.masked_softmax": "a causal mask over one sequence is (q_len, q_len)",
    "02.cross_attend_padded": "one case has batch == q_len on purpose: the silent bug of lesson 02",
    "03.multi_head_attention": "W_q, W_k, W_v, W_o are (d_model, d_model); one case has seq_len == d_model on purpose",
    "03.multi_head_attention_loop": "W_q, W_k, W_v, W_o are (d_model, d_model); one case has seq_len == d_model",
    "03.grouped_query_attention": "W_q and W_o are (d_model, d_model)",
    "04.multi_head_module": "a causal mask over one sequence is (q_len, q_len)",
    "04.torch_cross_attend": "one case has batch == q_len on purpose: a padding mask passed as attn_mask is silent",
    "05.role_scores": "self-attention weights are (batch, heads, seq_len, seq_len)",
    "05.matching_score": "self-attention weights are (batch, heads, seq_len, seq_len)",
}


def test_inputs_give_every_axis_its_own_size():
    """A swapped or transposed axis cannot pass because two sizes agree, except where the shape is square by nature."""
    from course_utils.checking import cases

    for exercise in ALL:
        prepared = preparing.prepare(exercise)
        for i, args in enumerate(prepared.cases):
            for arg in args:
                if hasattr(arg, "shape") and not callable(arg) and cases.coinciding_axes(arg):
                    assert exercise.id in SQUARE_BY_NATURE, (
                        f"{exercise.id} case {i + 1}: an input of shape {tuple(arg.shape)} has two axes of one size"
                    )


def test_padding_cases_include_a_batch_with_no_full_length_row():
    """An answer that assumes the longest row fills the padded width (pad_packed_sequence without total_length) fails."""
    for exercise in ALL:
        prepared = preparing.prepare(exercise)
        names = naming.describe_case(exercise, 0)
        if re.search(r"\blengths\b|_lengths\b|\bkey_mask\b", names):
            labels = " ".join(prepared.labels)
            assert "no row fills" in labels or "no full-length row" in labels, (
                f"{exercise.id}: add a case whose longest row is shorter than the padded width"
            )
