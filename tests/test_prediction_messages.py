"""A wrong prediction's message names the idea to rethink, never the value, a ratio or a distance to it (issue 26 §3).

Every prediction of every lesson is answered with many wrong values (its known wrong ones among them); a message
fails when, once the student's own value is taken out, it still holds the right answer in any form the checker
accepts (16, 16.0, "16", 1.6e1, √256, 4², 1/16 for a ratio), the ratio of the two, or their distance. And the
first answer counts: it is logged, a second try before the reveal gets no new verdict, the reveal recalls it.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from fractions import Fraction

import pytest

from course_utils import checks, exercises
from course_utils.exercises import tries
from course_utils.exercises.predictions import _as_int_set, _normalised, judge_prediction

_SUPERSCRIPTS = {"²": 2, "³": 3}
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sqrt>√)?(?P<num>-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?)"
    r"(?:\s*/\s*(?P<den>\d+(?:\.\d+)?))?(?:(?P<sup>[²³])|\^(?P<pow>\d+))?"
)


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text``: 16, 1,024, 1.6e1, 1/16, √256, 4², 2^4."""
    found = []
    for m in _NUMBER.finditer(text):
        raw = m.group("num").replace(",", "")
        try:
            x = float(raw)
        except ValueError:
            continue
        if m.group("den"):
            x = x / float(m.group("den")) if float(m.group("den")) else x
        if m.group("sup"):
            x = x ** _SUPERSCRIPTS[m.group("sup")]
        elif m.group("pow"):
            x = x ** int(m.group("pow"))
        if m.group("sqrt"):
            x = math.sqrt(abs(x))
        found.append(x)
    return found


def _near(x: float, target: float) -> bool:
    return math.isclose(x, target, rel_tol=1e-3, abs_tol=1e-12)


def _without_echo(message: str, value) -> str:
    """The message with the student's own value (echoed after the icon) taken out."""
    for shown in _echoes(value):
        if shown and shown in message:
            return message.replace(shown, " ", 1)
    return message


def _echoes(value) -> list[str]:
    from course_utils.exercises.compare import safe_repr
    from course_utils.exercises.predictions import _as_number, _as_shape, _number_words, _set_words

    shown = []
    shape = _as_shape(value)
    if shape is not None:
        shown.append(str(shape))
    number, _ = _as_number(value) if not isinstance(value, (str, tuple, list, set, frozenset)) else (None, None)
    if number is not None:
        shown.append(_number_words(number))
    if isinstance(value, (set, frozenset, list, tuple)) and _as_int_set(value) is not None:
        shown.append(_set_words(_as_int_set(value)))
    shown.append(safe_repr(value))
    return shown


def leaks(prediction, value, message: str) -> list[str]:
    """What in ``message`` gives the answer of ``prediction`` away (empty when nothing does)."""
    text = re.sub(r"«[^»]*»", "«»", _without_echo(message, value))  # a section's name is no answer
    answer = prediction.value()
    found = []
    if prediction.kind in ("number", "index"):
        a = float(answer)
        targets = {"the answer": a}
        if a:
            targets["1 / the answer"] = 1 / a
        try:
            w = float(value)
        except (TypeError, ValueError, OverflowError):
            w = None
        if w is not None and math.isfinite(w) and w != a:
            targets["the distance"] = abs(w - a)
            if a and w:
                targets["the ratio"] = abs(w / a)
                targets["the inverse ratio"] = abs(a / w)
        for x in numbers_in(text):
            for what, target in targets.items():
                if _near(abs(x), abs(target)) and not (what != "the answer" and _near(abs(target), 1.0)):
                    found.append(f"{what} ({x:g})")
    elif prediction.kind == "shape":
        shape = tuple(answer)
        for form in (str(shape), ", ".join(map(str, shape)), "×".join(map(str, shape))):
            if len(shape) > 1 and form in text:
                found.append(f"the shape {form}")
    elif prediction.kind == "set":
        from course_utils.exercises.predictions import _set_words

        if _set_words(_as_int_set(answer)) in text:
            found.append("the set")
    elif prediction.kind == "choice" and isinstance(answer, str):
        said = _normalised(answer)
        lowered = " ".join(text.lower().split())
        quoted = any(q + said + q in lowered for q in ("'", '"', "«"))
        if quoted or (len(said) > 4 and re.search(rf"(?<!\w){re.escape(said)}(?!\w)", lowered)):
            found.append(f"the choice {answer!r}")
    return found


def wrong_values(prediction) -> list:
    """Many wrong answers to ``prediction``: its known wrong ones, and the mistakes near and far."""
    answer = prediction.value()
    values = [k.value for k in prediction.known_wrong]
    if prediction.kind == "number":
        a = float(answer)
        values += [a * f for f in (2, 0.5, 10, 0.1, 3, -1, 1000)] + [a + 1, a - 1, 0, 1, 2, 10**400]
    elif prediction.kind == "index":
        values += list(range(-1, 12))
    elif prediction.kind == "shape":
        shape = tuple(answer)
        values += [p for p in itertools.permutations(shape) if p != shape][:6]
        values += [shape[:-1], (*shape, 2), tuple(s + 1 for s in shape), tuple(max(1, s - 1) for s in shape)]
    elif prediction.kind == "choice":
        values += list(prediction.choices)
    elif prediction.kind == "set":
        given = sorted(_as_int_set(answer))
        values += [set(given[:-1]), {*given, max(given, default=0) + 1}, {max(given, default=0) + 7}, set()]
    return values


def _all_predictions():
    return list(exercises.PREDICTIONS.values())


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
    p = exercises.Prediction("99.var", "Var?", "number", 16, rtol=0.1)
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
    shape = exercises.Prediction("99.shape", "?", "shape", (2, 4, 5))
    assert leaks(shape, (2, 6, 5), "❌ Not quite: the answer is (2, 4, 5).")
    choice = exercises.Prediction("99.c", "?", "choice", "nan", choices=("nan", "inf"))
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
    plain = exercises.Prediction("99.n", "?", "number", 64, rtol=0.1, rethink="how variances of sums add up")
    loud = exercises.Prediction("99.m", "?", "number", 64, rtol=0.1, magnitude=True, rethink="the growth")
    assert judge_prediction(plain, 6400).message == (
        "❌ Not quite. Think again about how variances of sums add up, then run the next cell and see."
    )
    assert judge_prediction(loud, 6400).message.startswith("❌ Too high. Think again about the growth")
    assert judge_prediction(loud, 6).message.startswith("❌ Too low.")
    assert Fraction(64) and "%" not in judge_prediction(plain, 32).message
