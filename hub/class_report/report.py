"""The live report page: the class report of ``make grade``, from records grouped by student.

:func:`render_class_report` is the one place that knows how the course renders its class report. Today it builds
a ``course_utils.grading.GradeRun`` of each student's newest check per exercise and calls
``course_utils.grade_report.render_html``; when the grader exposes its public function that renders the report
from log records grouped by student (CONTRACT.md, "Grader <-> hub"), this function calls that instead, with the
same argument.
"""

from __future__ import annotations

import functools
from html import escape

__all__ = ["render_class_report"]

REFRESH_S = 30


@functools.cache
def _course_registry() -> dict | None:
    """Lesson -> exercises, from the course's registry; None where it cannot load (a hub image without numpy)."""
    from course_utils import grading

    try:
        return grading.load_registry()
    except Exception:
        return None


def _registry(seen: dict) -> dict:
    """The course's registry, with any exercise it does not know (a newer lesson) added in the order seen."""
    from course_utils import grading

    registry = {lesson: list(exercises) for lesson, exercises in (_course_registry() or {}).items()}
    for lesson, ids in seen.items():
        known = {exercise.id for exercise in registry.setdefault(lesson, [])}
        registry[lesson] += [grading.Exercise(exercise_id) for exercise_id in ids if exercise_id not in known]
    return registry


def render_class_report(records_by_student: dict[str, list[dict]], *, live_note: str = "") -> str:
    """The report page for ``{student: [record, ...]}`` (records oldest first; the newest check of an exercise counts).

    ``live_note`` is one line of text shown under the title (for example, when it was rendered); the page reloads
    itself every ``REFRESH_S`` seconds (a meta refresh: the page keeps no script).
    """
    from course_utils import grade_report, grading

    newest: dict = {}
    notebooks = set()
    seen: dict = {}
    for student, records in records_by_student.items():
        for record in records:
            if record.get("event", "check") != "check":
                continue  # the grader's renderer will show predictions and hints; today's page shows checks
            newest[(student, record["exercise"])] = record
            notebooks.add((student, record["lesson"]))
            seen.setdefault(record["lesson"], {})[record["exercise"]] = None
    rows = [
        grading.Record(student, r["lesson"], exercise, r["status"], r.get("detail") or "", r.get("misconception"))
        for (student, exercise), r in sorted(newest.items())
    ]
    run = grading.GradeRun(records=rows, problems=[], registry=_registry(seen), ran=len(notebooks))
    page = grade_report.render_html(run)
    head = f'<meta http-equiv="refresh" content="{REFRESH_S}">'
    page = page.replace("<head>", f"<head>{head}", 1)
    if live_note:
        page = page.replace("</h1>", f'</h1>\n<p class="live">{escape(live_note)}</p>', 1)
    return page
