"""A wrong prediction's message names the idea to rethink, never the value, a ratio or a distance to it (issue 26 §3).

Every prediction of every lesson is answered with many wrong values (its known wrong ones among them); a message
fails when, once the student's own value is taken out, it still holds the right answer in any form the checker
accepts (16, 16.0, "16", 1.6e1, √256, 4², 1/16 for a ratio), the ratio of the two, or their distance. And the
first answer counts: it is logged, a second try before the reveal gets no new verdict, the reveal recalls it.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from course_utils import checks
from course_utils.checking import registry, tries
from course_utils.checking.prediction_leaks import leaks, wrong_values
from course_utils.checking.predictions import judge_prediction


def _all_predictions():
    return list(registry.PREDICTIONS.values())


@pytest.mark.parametrize("prediction", _all_predictions(), ids=lambda p: p.id)
def test_no_wrong_message_gives_the_answer_away(prediction):
    offenders = []
    for value in wrong_values(prediction):
        verdict = judge_prediction(prediction, value)
        if verdict.status != "wrong":
            continue
        found = leaks(prediction, value, verdict.message)
        if found:
            offenders.append(f"{value!r}: {', '.join(found)} in {verdict.message!r}")
    assert not offenders, "\n".join(offenders)


def test_the_leak_finder_finds_values_ratios_and_distances():
    p = registry.Prediction("99.var", "Var?", "number", 16, rtol=0.1)
    assert leaks(p, 4, "❌ 4 is the standard deviation; the variance is its square, 16.")
    assert leaks(p, 4, "❌ 4 is the standard deviation; the variance is its square, √256.")
    assert leaks(p, 4, "❌ 4 is the standard deviation: 4² is the variance.")
    assert leaks(p, 4, "❌ 4 is too low: the answer is 1.6e1.")
    assert leaks(p, 4, "❌ 4 is off by 12.")
    assert leaks(p, 32, "❌ Far too high: about 2 times the answer.")
    assert leaks(p, 32, "❌ Not quite. Think again about what «01 · Why divide by √16» says.") == []
    assert leaks(p, 64, "❌ Far too high: about 4 times the answer.")
    assert leaks(p, 1, "❌ 1 is a ratio: 1/16 of it.")
    assert leaks(p, 4, "❌ 4 is the standard deviation, not the variance: how do variances add up?") == []
    shape = registry.Prediction("99.shape", "?", "shape", (2, 4, 5))
    assert leaks(shape, (2, 6, 5), "❌ Not quite: the answer is (2, 4, 5).")
    choice = registry.Prediction("99.c", "?", "choice", "nan", choices=("nan", "inf"))
    assert leaks(choice, "inf", "❌ 'inf' is exp(1000); inf / inf is 'nan'.")


# ---- which try counts -------------------------------------------------------------------------------------------


def test_the_first_answer_counts_and_a_second_before_the_reveal_gets_no_new_verdict(tmp_path, monkeypatch, capsys):
    path = tmp_path / "log.jsonl"
    monkeypatch.setenv("COURSE_CHECK_LOG", str(path))
    checks.predict("01.score_variance_d64", ...)  # untouched: not a try
    checks.predict("01.score_variance_d64", 8)
    checks.predict("01.score_variance_d64", 64)
    held = capsys.readouterr().out.splitlines()[-1]
    assert held.startswith("✋ Your first prediction, 8, is the one that counts") and "after the reveal" in held
    assert "64" not in held and "Right" not in held
    checks.reveal("01.score_variance_d64")
    assert capsys.readouterr().out.startswith("🔎 You predicted 8: compare it")
    checks.predict("01.score_variance_d64", 64)  # after the reveal: judged again
    assert capsys.readouterr().out.startswith("✅ Right")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["status"] for r in lines] == ["not_answered", "wrong", "right", "right"]
    assert "first_try" not in lines[0]
    assert lines[1]["first_try"] is True and lines[1]["correct"] is False
    assert lines[2]["first_try"] is False and lines[2]["held"] is True and lines[2]["detail"] == held
    assert lines[3]["first_try"] is False and lines[3]["correct"] is True and "held" not in lines[3]


def test_a_right_first_answer_is_recalled_at_the_reveal(capsys):
    checks.predict("00.scores_shape", (5, 7))
    checks.reveal("00.scores_shape")
    assert capsys.readouterr().out.splitlines()[-1] == "🔎 You predicted (5, 7), and that was right."
    checks.reveal("01.score_variance_d64")
    assert "did not write a prediction" in capsys.readouterr().out


def test_another_cell_run_between_two_tries_counts_as_the_reveal(monkeypatch, capsys):
    counts = iter([10, 11, 13])
    monkeypatch.setattr(tries, "_execution_count", lambda: next(counts))
    checks.predict("01.score_variance_d64", 8)  # cell 10
    checks.predict("01.score_variance_d64", 64)  # cell 11, run again at once: held
    assert capsys.readouterr().out.splitlines()[-1].startswith("✋")
    checks.predict("01.score_variance_d64", 64)  # cell 13: the reveal (cell 12) ran in between
    assert capsys.readouterr().out.startswith("✅ Right")


def test_a_wrong_number_is_too_high_or_low_only_when_its_magnitude_is_the_point():
    plain = registry.Prediction("99.n", "?", "number", 64, rtol=0.1, rethink="how variances of sums add up")
    loud = registry.Prediction("99.m", "?", "number", 64, rtol=0.1, magnitude=True, rethink="the growth")
    assert judge_prediction(plain, 6400).message == (
        "❌ Not quite. Think again about how variances of sums add up, then run the next cell and see."
    )
    assert judge_prediction(loud, 6400).message.startswith("❌ Too high. Think again about the growth")
    assert judge_prediction(loud, 6).message.startswith("❌ Too low.")
    assert Fraction(64) and "%" not in judge_prediction(plain, 32).message


def test_a_wrong_shape_is_answered_with_the_idea_it_reveals_and_no_size():
    from course_utils.checking.predictions import shape_idea

    assert "keeps an axis" in shape_idea((5, 7), (5, 7, 8))  # the summed axis kept
    assert "leaves out an axis" in shape_idea((2, 4, 6), (4, 6))  # the batch axis dropped
    assert "merges two axes" in shape_idea((2, 2, 5, 4), (4, 5, 4))  # batch and heads merged
    assert "splits one axis" in shape_idea((2, 5, 8), (2, 5, 2, 4))
    assert "another order" in shape_idea((2, 2, 5, 4), (2, 2, 4, 5))
    assert "one axis of another size" in shape_idea((2, 3, 8), (2, 3, 4))
    assert shape_idea((2, 3, 8), (9, 9)) is None
    p = registry.Prediction("99.shape", "?", "shape", (5, 7))
    verdict = judge_prediction(p, (5, 7, 8))
    assert verdict.status == "wrong" and "keeps an axis that this step sums over" in verdict.message
    assert not leaks(p, (5, 7, 8), verdict.message)
