"""Hints stop at a step; the whole solution is the student's explicit choice, ``checks.solution``, and is logged.

Issue 28, section 3: no hint level pastes an exercise's whole body (compared here with the instructor edition's
solution region, the code a student would otherwise copy), the last level names ``checks.solution``, and that
call shows the course's code with one line saying it is logged and writes a ``"solution"`` record.
"""

from __future__ import annotations

import io
import json
import keyword
import re
import sys
import tokenize
from pathlib import Path

import pytest

from course_utils import checks
from course_utils.checking import hints as hint_book
from course_utils.checking import registry

REPO = Path(__file__).resolve().parents[2]
ALL = [e for lesson in registry.lessons() for e in registry.for_lesson(lesson)]
KEEP = {"np", "torch", "F", "nn", "math", "True", "False", "None"}
MOST = 0.75  # a hint level may show a step; one that holds three quarters of the region in one run pastes it


def _tokens(source: str) -> list[str]:
    """Code tokens, names and numbers blanked (a renamed copy is still a copy), ``return`` and comments dropped."""
    out = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(source).readline):
            if t.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                continue
            if t.type in (tokenize.ENDMARKER, tokenize.STRING) or t.string == "return":
                continue
            if t.type == tokenize.NAME and not keyword.iskeyword(t.string) and t.string not in KEEP:
                out.append("N")
            elif t.type == tokenize.NUMBER:
                out.append("0")
            else:
                out.append(t.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def _longest_common_run(a: list, b: list) -> int:
    best, previous = 0, [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b, start=1):
            if x == y:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def _code_lines(source: str) -> list[str]:
    """The region's code lines, comments and spaces dropped, a leading ``return`` dropped."""
    lines = []
    for line in source.splitlines():
        code = re.sub(r"^return\b", "", line.split("#", 1)[0].strip())
        code = re.sub(r"\s+", "", code)
        if code:
            lines.append(code)
    return lines


def pastes(hint: str, region: str) -> str | None:
    """Why ``hint`` gives ``region`` away (every code line in it, or most of its tokens in one run), or None."""
    lines = _code_lines(region)
    flat = re.sub(r"\s+", "", hint)
    if lines and all(line in flat for line in lines):
        return "every code line of the solution"
    body = _tokens(region)
    code = " ".join(re.findall(r"[\w.\[\]():,@*/+\-<>=~ ]+", hint))
    run = _longest_common_run(_tokens(code), body)
    if len(body) >= 4 and run >= MOST * len(body):
        return f"{run} of the solution's {len(body)} tokens in one run"
    return None


def test_the_measure_catches_a_hint_that_pastes_the_body():
    region = "positions = torch.arange(max_len)[None, :]  # (1, max_len)\nreturn positions < lengths[:, None]"
    assert pastes("Write positions = torch.arange(max_len)[None, :] and return positions < lengths[:, None].", region)
    assert pastes("Compare: p < n[:, None].", "return positions < lengths[:, None]")  # renamed: still a copy
    short = "return q @ k.T  # (q_len, d) @ (d, k_len) -> (q_len, k_len)"
    assert pastes("The answer is q @ k.T.", short)
    assert pastes("The keys have to become columns: k.T has shape (d, k_len). What goes on its left?", short) is None


def test_every_exercise_has_its_solution_region_in_the_instructor_edition():
    missing = [e.id for e in ALL if not hint_book.solution_region(e)]
    assert missing == []


@pytest.mark.parametrize("exercise", ALL, ids=lambda e: e.id)
def test_no_hint_level_shows_the_whole_solution(exercise):
    region = hint_book.solution_region(exercise)
    for level, text in enumerate(exercise.hints, start=1):
        why = pastes(text, region)
        assert why is None, f"{exercise.id}: hint {level} holds {why}"
    why = pastes(" ".join(exercise.hints), region)
    assert why is None, f"{exercise.id}: its hints together hold {why}"


def test_the_last_hint_names_checks_solution(capsys):
    exercise = registry.get("02.padding_mask")
    checks.hint("02.padding_mask", level=len(exercise.hints))
    out = capsys.readouterr().out
    assert 'checks.solution("02.padding_mask")' in out and "records that you asked" in out
    checks.hint("02.padding_mask", level=1)
    assert "checks.solution" not in capsys.readouterr().out  # only the last level says it


def test_solution_shows_the_instructor_editions_code_and_logs_it(tmp_path, monkeypatch, capsys):
    log_file = tmp_path / "checks.jsonl"
    monkeypatch.setenv("COURSE_CHECK_LOG", str(log_file))
    checks.solution("02.padding_mask")
    out = capsys.readouterr().out
    first, *code = out.splitlines()
    assert first.startswith("📖 The course's solution for padding_mask") and "This is logged" in first
    shown = "\n".join(code)
    assert shown.startswith("def padding_mask(lengths, max_len, side=")
    assert "positions < lengths[:, None]" in shown  # the region's body, filled in
    assert "### BEGIN SOLUTION" not in shown and "checks.check" not in shown  # no markers, no check line
    record = json.loads(log_file.read_text(encoding="utf-8").splitlines()[-1])
    assert record["event"] == "solution" and record["exercise"] == "02.padding_mask"
    assert record["status"] == "shown" and record["lesson"] == "02" and record["attempt"] == 1
    assert "notebooks/02_masking.ipynb" in record["detail"]
    checks.solution("02.padding_mask")
    record = json.loads(log_file.read_text(encoding="utf-8").splitlines()[-1])
    assert record["attempt"] == 2  # each request counts


def test_without_the_notebooks_solution_shows_the_checkers_reference(tmp_path):
    exercise = registry.get("02.padding_mask")
    code, source = hint_book.solution_text(exercise, notebooks=tmp_path)  # a folder with no lesson in it
    assert source == "the checker's reference in course_utils"
    assert code.startswith("def padding_mask(") and "make_padding_mask" in code


def test_solution_refuses_what_is_not_an_exercise_id():
    with pytest.raises(TypeError, match=r"exercise_id must be a string .* but is int"):
        checks.solution(2)
    with pytest.raises((KeyError, ValueError), match="02.no_such_exercise"):
        checks.solution("02.no_such_exercise")


def test_the_class_report_accepts_a_solution_record():
    sys.path.insert(0, str(REPO / "hub"))
    try:
        from class_report import records
    finally:
        sys.path.remove(str(REPO / "hub"))
    record = {"v": 2, "event": "solution", "exercise": "02.padding_mask", "status": "shown", "detail": "shown"}
    kept = records.normalize(record, records.course_registry())
    assert kept["event"] == "solution" and kept["exercise"] == "02.padding_mask"
    with pytest.raises(ValueError, match="not a registered exercise"):
        records.normalize({**record, "exercise": "02.causal_keys_query2"}, records.course_registry())
