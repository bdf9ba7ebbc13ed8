"""Feedback beyond the verdict: hints that teach before they tell, and predictions answered in words.

Hints: at least three levels (a question, the idea, a partial step), none pasting an answer; the first hint
after a check reacts to it (a named misconception gets the catalogue's nudge); a level asked for by a lesson
cell does not use up the student's hints. Predictions: every known wrong value is named with its idea, a factor
of two is never right, an index is never "off by 1", and any value is answered in words.
"""

from __future__ import annotations

import inspect
import io
import keyword
import math
import re
import tokenize

import numpy as np
import pytest

from course_utils import checks
from course_utils.checking import hints as hint_book
from course_utils.checking import misconceptions, registry
from course_utils.checking.predictions import judge_prediction

ALL = list(registry.EXERCISES.values())


@pytest.fixture(autouse=True)
def fresh_hints():
    hint_book.forget()
    yield
    hint_book.forget()


# ---------------------------------------------------------------------------------------------
# hints
# ---------------------------------------------------------------------------------------------


def _tokens(source: str) -> list[str]:
    """Code tokens with names and numbers blanked (a renamed copy is still a copy), as the edition judge reads them."""
    out = []
    keep = {"np", "torch", "F", "nn", "math", "True", "False", "None"}
    try:
        for t in tokenize.generate_tokens(io.StringIO(source).readline):
            if t.type in (
                tokenize.COMMENT,
                tokenize.NL,
                tokenize.NEWLINE,
                tokenize.INDENT,
                tokenize.DEDENT,
                tokenize.ENDMARKER,
                tokenize.STRING,
            ):
                continue
            if t.type == tokenize.NAME and not keyword.iskeyword(t.string) and t.string not in keep:
                out.append("N")
            elif t.type == tokenize.NUMBER:
                out.append("0")
            else:
                out.append(t.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def _body(fn) -> str:
    source = inspect.getsource(fn)
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines) if line.rstrip().endswith(":")) + 1
    return "\n".join(lines[start:])


def _longest_common_run(a: list, b: list) -> int:
    best = 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b, start=1):
            if x == y:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


@pytest.mark.parametrize("exercise", ALL, ids=lambda e: e.id)
def test_hints_have_three_levels_and_paste_no_answer(exercise):
    assert len(exercise.hints) >= 3, f"{exercise.id}: a question, the idea, a partial step"
    assert exercise.hints[0].rstrip().endswith("?") or "?" in exercise.hints[0], "the first level asks a question"
    answers = [exercise.reference, *exercise.variants]
    for level, text in enumerate(exercise.hints, start=1):
        code = " ".join(re.findall(r"[\w.\[\]():,@*/+\-<>=~ ]+", text))
        for answer in answers:
            body = _tokens(_body(answer))
            if len(body) < 12:
                continue
            run = _longest_common_run(_tokens(code), body)
            assert run < 0.6 * len(body), f"{exercise.id}: hint {level} pastes most of {answer.__name__}"


def test_hints_come_one_level_at_a_time(capsys):
    hints = registry.get("01.softmax_along").hints
    for level in range(1, len(hints) + 2):  # one call past the last keeps showing the last
        checks.hint("01.softmax_along")
        out = capsys.readouterr().out
        shown = min(level, len(hints))
        assert out.startswith(f"💡 Hint {shown} of {len(hints)} for softmax_along: {hints[shown - 1]}")
    assert "That was the last hint" in out
    with pytest.raises(ValueError, match="level must be from 1 to 3 but is 4"):
        checks.hint("01.softmax_along", level=4)
    with pytest.raises(TypeError, match="level must be an int"):
        checks.hint("01.softmax_along", level="2")


def test_a_lesson_cell_showing_a_level_does_not_use_up_the_students_hints(capsys):
    checks.hint("00.dot_scores", level=2)  # as lesson 00 does
    checks.hint("00.dot_scores", level=1)
    capsys.readouterr()
    checks.hint("00.dot_scores")  # the student's first hint is still level 1
    assert capsys.readouterr().out.startswith("💡 Hint 1 of 3 for dot_scores")


def test_the_first_hint_reacts_to_a_named_misconception(capsys):
    checks.check("00.dot_scores", lambda q, k: k @ q.T)
    capsys.readouterr()
    checks.hint("00.dot_scores")
    first = capsys.readouterr().out.splitlines()
    nudge = misconceptions.get("scores_transposed").nudge
    assert first[0] == f"💡 Your last check named a known mistake. {nudge}"
    assert first[1].startswith("💡 Hint 1 of 3")
    checks.hint("00.dot_scores")  # the reaction comes once per verdict
    second = capsys.readouterr().out.splitlines()
    assert len(second) == 1 and second[0].startswith("💡 Hint 2 of 3")


@pytest.mark.parametrize(
    ("answer", "reaction"),
    [
        (lambda q, k: 1 / 0, "crashed: read the line it names"),
        (lambda q, k: None, "returned None"),
        (lambda q, k: np.cos(q @ k.T), "work that case out by hand"),  # no relation to the right one
    ],
    ids=["crash", "none", "wrong"],
)
def test_the_first_hint_reacts_to_other_verdicts(answer, reaction, capsys):
    checks.check("00.dot_scores", answer)
    capsys.readouterr()
    checks.hint("00.dot_scores")
    assert reaction in capsys.readouterr().out.splitlines()[0]


def test_every_misconception_has_a_nudge_that_asks():
    for m in misconceptions.CATALOGUE:
        assert m.nudge and "?" in m.nudge, m.id
        assert m.name and m.section[:2].isdigit(), m.id


# ---------------------------------------------------------------------------------------------
# predictions
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pid", "value", "start"),
    [
        ("00.scores_shape", ..., "✍️ Write your prediction first"),
        ("00.scores_shape", (5, 7), "✅ Right: (5, 7)"),
        ("00.scores_shape", (7, 5), "❌ (7, 5) is the transpose"),
        ("00.scores_shape", (5, 7, 8), "❌ Not quite: your shape keeps an axis that this step sums over"),
        ("00.scores_shape", "5x7", "❓ A shape is a tuple of ints"),
        ("01.score_variance_d64", 8, "❌ 8 is the standard deviation, not the variance: think about how"),
        ("01.score_variance_d64", 62, "✅ Right: 64"),
        ("01.score_variance_d64", 32, "❌ Not quite. Think again about how the variances of independent products"),
        ("01.score_variance_d64", 10**400, "❌ Not quite. Think again"),
        ("01.score_variance_d64", -(10**400), "❌ Not quite. Think again"),
        ("01.score_variance_d64", float("nan"), "❓ This prediction is a number, and NaN is not one"),
        ("01.score_variance_d64", float("inf"), "❓ This prediction is a finite number"),
        ("01.score_variance_d64", np.arange(3), "❓ This prediction is one number"),
        ("01.score_variance_d64", "sixty-four", "❓ This prediction is a number"),
        ("03.parameters_d512", 1_048_576, "❌ 1,048,576 is the four matrices alone"),
        ("03.parameters_d512", 786_432, "❌ 786,432 is the count a widely copied tutorial gives: think"),
        ("03.parameters_d512", 1_050_624, "✅ Right: 1,050,624"),
        ("03.parameters_d512", 1_050_000, "❌ Not quite. Think again about every matrix and every bias"),
        ("03.split_shape", (2, 5, 2, 4), "❌ (2, 5, 2, 4) is the features cut into heads with the heads still behind"),
        ("03.split_shape", (2, 4, 5, 2), "❌ Not quite: your shape has the right axes in another order: which axis"),
        ("02.causal_true_count", 10, "❌ 10 is the count without the diagonal"),
        ("02.causal_true_count", 14, "❌ Not quite. Think again"),  # never a distance: not even "off by 1"
        ("01.tutorial_head3_column", 1, "❌ 1 is the query's own column"),
        ("01.tutorial_head3_column", 2, "❌ Not this one."),
        ("01.tutorial_head3_column", 0.0, "✅ Right: 0"),
        ("04.weight_on_match_before", 0.0625, "❌ Not quite. Think again"),
        ("04.weight_on_match_before", 0.25, "❌ Not quite. Think again"),
        ("04.weight_on_match_before", 0.13, "✅ Right: 0.125"),
        ("04.same_output", False, "✅ Right: False"),
        ("04.same_output", True, "❌ True is what you would get if heads only regrouped"),
        ("04.same_output", 0, "❓ Choose one of True, False"),
        ("01.naive_softmax_overflow", " NaN", "✅ Right: 'nan'"),
        ("01.naive_softmax_overflow", "inf", "❌ 'inf' is what np.exp(1000) gives"),
    ],
)
def test_predictions_are_answered_in_words(pid, value, start, capsys):
    assert checks.predict(pid, value) is None
    out = capsys.readouterr().out
    assert out.startswith(start), out
    assert "nan%" not in out and "inf%" not in out


def test_no_index_prediction_is_answered_with_a_distance():
    for prediction in registry.PREDICTIONS.values():
        if prediction.kind != "index":
            continue
        for value in range(-3, 10):
            message = judge_prediction(prediction, value).message
            assert "Off by" not in message and "%" not in message


def test_every_number_prediction_refuses_a_factor_of_two():
    for prediction in registry.PREDICTIONS.values():
        if prediction.kind != "number":
            continue
        answer = prediction.value()
        for wrong in (answer * 2, answer / 2):
            if answer:
                assert judge_prediction(prediction, wrong).status == "wrong", (prediction.id, wrong)


def test_known_wrong_values_are_wrong_and_distinct():
    for prediction in registry.PREDICTIONS.values():
        ids = [k.id for k in prediction.known_wrong if k.id is not None]  # None: a wrong idea with no catalogue id
        assert len(ids) == len(set(ids)), prediction.id
        for known in prediction.known_wrong:
            verdict = judge_prediction(prediction, known.value)
            assert verdict.status == "wrong" and verdict.known_wrong == known.id, (prediction.id, known.value)


def test_a_prediction_rtol_beyond_a_quarter_is_refused():
    with pytest.raises(ValueError, match="a factor-two error is never right"):
        registry.Prediction("99.loose", "?", "number", 1.0, rtol=0.5)
    assert math.isclose(registry.get_prediction("01.score_variance_d64").rtol, 0.1)


# ---------------------------------------------------------------------------------------------
# set and choice predictions, known wrongs as a dict, two predictions in one cell
# ---------------------------------------------------------------------------------------------

_KEYS = registry.Prediction(
    "99.keys_query2",
    "Which keys may query 2 attend to under a causal mask?",
    "set",
    {0, 1, 2},
    known_wrong={
        (0, 1): ("causal_no_diagonal", "the keys before it; a query also sees its own position"),
        frozenset({2, 3, 4}): ("causal_triu", "the keys from it onwards: the mask kept the upper triangle"),
    },
)


@pytest.mark.parametrize(
    ("value", "status", "start"),
    [
        ({0, 1, 2}, "right", "✅ Right: {0, 1, 2}."),
        ([2, 0, 1], "right", "✅ Right: {0, 1, 2}."),  # a list: order does not matter
        ((0, 1, 2, 2), "right", "✅ Right: {0, 1, 2}."),  # repeats do not matter
        (np.array([0, 1, 2]), "right", "✅ Right"),
        ([0, 1], "wrong", "❌ {0, 1} is the keys before it; a query also sees its own position."),
        ({4, 3, 2}, "wrong", "❌ {2, 3, 4} is the keys from it onwards"),
        ({0, 1, 2, 3}, "wrong", "❌ Not quite: some do not belong. Think again"),
        ({0}, "wrong", "❌ Not quite: some are missing. Think again"),
        (set(), "wrong", "❌ Not quite: some are missing. Think again"),
        ([0.5, 1], "not_answered", "❓ This prediction is a set of whole numbers"),
        ([True, 1], "not_answered", "❓ This prediction is a set of whole numbers"),
        ("0, 1, 2", "not_answered", "❓ This prediction is a set of whole numbers"),
        (..., "not_answered", "✍️ Write your prediction first"),
    ],
)
def test_a_set_prediction_ignores_order_and_names_known_sets(value, status, start):
    verdict = judge_prediction(_KEYS, value)
    assert verdict.status == status and verdict.message.startswith(start), verdict.message
    if verdict.message.startswith("❌ {0, 1}"):
        assert verdict.known_wrong == "causal_no_diagonal"


def test_a_choice_compares_strings_loosely_and_numbers_by_value_never_a_bool_for_an_int():
    words = registry.Prediction("99.words", "?", "choice", "nan, 0, 0", choices=("nan, 0, 0", "nan", "1, 0, 0"))
    assert judge_prediction(words, "  NaN,   0, 0 ").status == "right"
    assert judge_prediction(words, "nan,0,0").status == "not_answered"  # spaces collapse; they are not removed
    flag = registry.Prediction("99.flag", "?", "choice", True, choices=(True, False))
    assert judge_prediction(flag, np.bool_(True)).status == "right"
    assert judge_prediction(flag, 1).status == "not_answered"
    count = registry.Prediction("99.count", "?", "choice", 3, choices=(1, 2, 3), known_wrong={2: (None, "one short")})
    assert judge_prediction(count, np.int64(3)).status == "right"
    assert judge_prediction(count, 3.0).status == "right"
    assert judge_prediction(count, True).status == "not_answered"
    assert judge_prediction(count, 2).message.startswith("❌ 2 is one short")


def test_known_wrong_given_as_a_dict_becomes_known_wrong_items():
    assert _KEYS.known_wrong[0] == registry.KnownWrong((0, 1), "causal_no_diagonal", _KEYS.known_wrong[0].why)
    with pytest.raises(TypeError, match="known_wrong maps a value to"):
        registry.Prediction("99.bad", "?", "number", 1, known_wrong={2: "why"})
    with pytest.raises(ValueError, match="kind must be one of"):
        registry.Prediction("99.bad", "?", "sets", {1})


def test_two_predictions_in_one_cell_each_get_their_line(capsys):
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "editions.py"  # scripts/ is not a package
    spec = importlib.util.spec_from_file_location("course_scripts_editions", path)
    editions = sys.modules.get(spec.name) or importlib.util.module_from_spec(spec)
    if spec.name not in sys.modules:
        sys.modules[spec.name] = editions
        spec.loader.exec_module(editions)
    student_edition = editions.student_edition

    source = (
        "### BEGIN SOLUTION\n"
        "prediction = (5, 7)\n"
        "prediction_mixed = 64\n"
        "### END SOLUTION\n"
        'checks.predict("00.scores_shape", prediction)\n'
        'checks.predict("01.score_variance_d64", prediction_mixed)\n'
    )
    nb = {
        "cells": [
            {"cell_type": "code", "id": "c1", "metadata": {}, "source": source, "outputs": [], "execution_count": 1}
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    stub = "".join(student_edition(nb)["cells"][0]["source"])
    assert "prediction = ...\nprediction_mixed = ...\n" in stub
    for code in (stub, source.replace("### BEGIN SOLUTION\n", "").replace("### END SOLUTION\n", "")):
        exec(code, {"checks": checks})
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["✍️", "✍️", "✅", "✅"], lines
