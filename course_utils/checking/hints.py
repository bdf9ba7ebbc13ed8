"""Hints that teach before they tell: the level the student is at, and a first hint that reacts to the last check.

An exercise has at least three hint levels: a question, the idea, a partial step. :func:`next_hint` gives the
student the next level; the first hint after a new verdict opens with a reaction to it: the catalogue's
nudge for a named misconception, or a pointer for a crash, a time-out, a missing ``return``. A lesson
cell that shows a given level (:func:`hint_at`) does not use up the student's hints.

No hint level shows an exercise's whole solution (``tests/checking/test_hints_solutions.py``). The last level says
that a whole solution is the student's own choice, ``checks.solution("NN.name")``, which logs it;
:func:`solution_text` is what that call shows: the instructor edition's code for the exercise.

State is per kernel: what the last check said, and the highest level the student asked for.

Introduced in notebooks/00_start_here.ipynb (``checks.hint``).
"""

from __future__ import annotations

import inspect
import json
import re
import textwrap
from pathlib import Path

import course_utils
from course_utils.checking import misconceptions as catalogue

__all__ = ["remember_verdict", "next_hint", "hint_at", "reaction", "forget", "solution_text", "solution_region"]

NOTEBOOKS = Path(course_utils.__file__).resolve().parent.parent / "notebooks"
"""The instructor editions (``notebooks/NN_*.ipynb``) of a course checkout; absent in an installed package."""
_MARKER = re.compile(r"^\s*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")

_levels: dict = {}  # exercise id -> highest level the student asked for
_last: dict = {}  # exercise id -> (status, misconception, detail) of the last check
_reacted: dict = {}  # exercise id -> the verdict the first hint already reacted to


def forget() -> None:
    """Start over (a new kernel has no hints shown and no verdicts)."""
    _levels.clear()
    _last.clear()
    _reacted.clear()


def remember_verdict(exercise_id: str, status: str, misconception: str | None, detail: str) -> None:
    """What the last check of this exercise said; the next hint reacts to it once."""
    _last[exercise_id] = (status, misconception, detail)


def reaction(status: str, misconception: str | None, detail: str) -> str:
    """One or two sentences reacting to a verdict, or "" when there is nothing to react to."""
    if misconception:
        nudge = catalogue.get(misconception).nudge
        return f"Your last check named a known mistake. {nudge}" if nudge else ""
    if status == "crashed":
        return "Your last check crashed: read the line it names and the exception's words before changing anything."
    if status == "timed_out":
        return "Your last check ran out of time: look for a loop whose condition never changes."
    if status == "wrong" and "returned None" in detail:
        return "Your function returned None: its last step needs `return ...`."
    if status == "wrong" and ("cannot be loaded into it" in detail or "other shapes than the course's" in detail):
        return (
            "Your module's parameters must be named and shaped as the stub's docstring says, so that the course's "
            "weights load into it: compare your attribute names and layer sizes with it."
        )
    if status in ("wrong", "crashed") and "The first NaN appears in" in detail:
        return (
            "Your last check said where the first NaN appears: which operation on that line can make one "
            "(0 / 0, inf - inf, the log of 0)?"
        )
    if status == "wrong" and ("your result is" in detail or " looks like " in detail):
        return (
            "Your last check said how your result relates to the right one: which step of your code makes exactly "
            "that difference?"
        )
    if status == "wrong" and "course helper" in detail:
        return "Your last answer let a course helper do the whole job: the exercise asks for the steps themselves."
    if status == "wrong":
        return "Your last check names the first case and entry that differ: work that case out by hand first."
    return ""


def _text(exercise, level: int) -> str:
    total = len(exercise.hints)
    text = f"Hint {level} of {total} for {exercise.title}: {exercise.hints[level - 1]}"
    if level == total:
        text += (
            " (That was the last hint: the lesson goes on with the course's version until yours passes. To see a "
            f'whole solution instead, checks.solution("{exercise.id}") shows the course\'s; your check log records '
            "that you asked.)"
        )
    return text


def next_hint(exercise) -> tuple[int, str]:
    """The next level for the student, and its text (opened by a reaction to a new verdict)."""
    total = len(exercise.hints)
    level = min(_levels.get(exercise.id, 0) + 1, total)
    _levels[exercise.id] = level
    lines = []
    last = _last.get(exercise.id)
    if last is not None and _reacted.get(exercise.id) != last:
        _reacted[exercise.id] = last
        said = reaction(*last)
        if said:
            lines.append(f"💡 {said}")
    lines.append(f"💡 {_text(exercise, level)}")
    return level, "\n".join(lines)


def hint_at(exercise, level: int) -> str:
    """Level ``level``'s text, as a lesson cell shows it: no reaction, and the student's hints are not used up."""
    return f"💡 {_text(exercise, level)}"


def _check_cell(exercise, notebooks: Path) -> tuple[Path, list[str]] | None:
    """The instructor edition that checks ``exercise`` and its check cell's source lines, or None when not found."""
    call = f'checks.check("{exercise.id}"'
    for path in sorted(notebooks.glob(f"{exercise.lesson}_*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        for cell in cells:
            source = "".join(cell.get("source", ""))
            if cell.get("cell_type") == "code" and call in source and "### BEGIN SOLUTION" in source:
                return path, source.splitlines()
    return None


def solution_region(exercise, notebooks: Path = NOTEBOOKS) -> str | None:
    """The body of the exercise's solution region(s) in the instructor edition, dedented; None when not found."""
    found = _check_cell(exercise, notebooks)
    if found is None:
        return None
    body, inside = [], False
    for line in found[1]:
        if _MARKER.match(line):
            inside = line.strip() == "### BEGIN SOLUTION"
            continue
        if inside:
            body.append(line)
    return textwrap.dedent("\n".join(body)).strip("\n")


def solution_text(exercise, notebooks: Path = NOTEBOOKS) -> tuple[str, str]:
    """The course's solution to show, and where it comes from.

    From the instructor edition: the check's cell with its solution regions filled in, the markers and the
    ``checks.check`` line left out. Without the notebooks (an installed package): the source of the exercise's
    reference, the checker's own version, which may call course helpers the exercise asks you not to use.
    """
    found = _check_cell(exercise, notebooks)
    if found is not None:
        path, lines = found
        kept = [line for line in lines if not _MARKER.match(line)]
        for at, line in enumerate(kept):
            if "checks.check(" in line:
                kept = kept[:at]
                break
        code = "\n".join(kept).strip("\n")
        return code, f"the instructor edition, notebooks/{path.name}"
    try:
        code = textwrap.dedent(inspect.getsource(exercise.reference)).strip("\n")
    except (OSError, TypeError):
        code = f"(the source of {exercise.function} is not available here)"
    return code, "the checker's reference in course_utils"
