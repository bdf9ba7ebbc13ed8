"""The marks: points per student and lesson, late days and what the policy keeps, the total; who is missing.

Inputs, all data (nothing here runs a notebook):

- the course file (:mod:`course_utils.marks.course`);
- the lessons' exercises and predictions (:func:`course_registry`, from ``course_utils.checking.registry``);
- ``grades.csv`` of ``make grade`` (:func:`read_grades`): an exercise whose check ``passed`` earns its points;
- the students' prediction records (:func:`read_records`, ``records.jsonl`` of ``python -m course_utils.marks
  collect``): a prediction ``right`` at the first try earns its points. The first try is the record the kernel
  marked ``first_try: true`` (the answer that counts, held until the reveal); in records without that field, the
  record with ``attempt`` 1 (the lowest attempt); where they have no ``attempt`` either, the newest recorded status;
  the same records' ``solution`` events (``checks.solution``, "show me a solution"): an exercise whose solution was
  shown before its first passed check is flagged, and earns nothing where the course file says
  ``solution_shown = "no_points"`` (:func:`solutions_before_passing`);
- the manifest of the collected submissions (``manifest.json``): the submission time, so the late days; without a
  manifest (a folder graded as before), every graded notebook counts as on time;
- the roster (optional): who never started, who has not submitted, and names that are not on it.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from course_utils.marks import course as course_file

__all__ = [
    "LessonMark",
    "Marks",
    "StudentMarks",
    "compute",
    "first_tries",
    "course_registry",
    "read_grades",
    "read_manifest",
    "read_records",
    "solutions_before_passing",
]

MAX_FILE_BYTES = 200 * 2**20


@dataclass(frozen=True)
class LessonMark:
    """One student's mark for one lesson. ``status``: ``on time``, ``late``, ``refused (late)``, ``not submitted``."""

    lesson: str
    earned: float  # before the late policy
    possible: float
    late_days: int
    kept: float  # the fraction the late policy keeps
    points: float  # earned * kept, rounded to 2 decimals
    status: str
    submitted: str | None = None  # ISO time of the submission that counts
    solutions: tuple = ()  # exercise ids whose solution was shown before they passed (flagged; no points if so set)


@dataclass
class StudentMarks:
    student: str
    lessons: dict = field(default_factory=dict)  # "01" -> LessonMark

    @property
    def total(self) -> float:
        return round(sum(mark.points for mark in self.lessons.values()), 2)

    @property
    def late_days(self) -> int:
        return sum(mark.late_days for mark in self.lessons.values())


@dataclass
class Marks:
    """Every student's marks (roster order, then the others by name), and who is missing."""

    course: course_file.Course
    lessons: list  # the marked lessons, in order
    possible: dict  # lesson -> points possible
    students: list  # [StudentMarks]
    never_started: list = field(default_factory=list)  # on the roster; no record, no submission
    not_submitted: dict = field(default_factory=dict)  # lesson -> [students on the roster without a submission]
    not_on_roster: list = field(default_factory=list)  # names with records or submissions, not on the roster

    @property
    def possible_total(self) -> float:
        return round(sum(self.possible.values()), 2)


def course_registry(lessons) -> dict:
    """Lesson -> (exercise ids, prediction ids), from ``course_utils.checking.registry`` (imports the lesson modules)."""
    from course_utils.checking import registry

    return {
        lesson: (
            [exercise.id for exercise in registry.for_lesson(lesson)],
            [prediction.id for prediction in registry.predictions_for_lesson(lesson)],
        )
        for lesson in lessons
    }


def _read_text(path, what: str) -> str:
    if not isinstance(path, str | Path):
        raise TypeError(f"path: expected the {what}'s path (str or Path), got {type(path).__name__}")
    path = Path(path)
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"{path}: expected a {what} of at most {MAX_FILE_BYTES} bytes, got {path.stat().st_size}")
    return path.read_text(encoding="utf-8")


def read_grades(path) -> list[dict]:
    """The rows of ``make grade``'s ``grades.csv`` (student, lesson, exercise, status)."""
    rows = list(csv.DictReader(_read_text(path, "grades.csv").splitlines()))
    needed = {"student", "lesson", "exercise", "status"}
    if rows and not needed <= set(rows[0]):
        raise ValueError(f"{path}: expected the columns {sorted(needed)}, got {sorted(rows[0])}")
    return rows


def read_records(path) -> list[dict]:
    """Check-log records with a ``student`` field, one JSON object a line (lines that are not one are skipped)."""
    out = []
    for line in _read_text(path, "records file").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("student"), str):
            out.append(record)
    return out


def read_manifest(path) -> list[dict]:
    """The entries of a collected ``manifest.json`` (:func:`course_utils.marks.folder.export`)."""
    data = json.loads(_read_text(path, "manifest"))
    entries = data.get("submissions") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"{path}: expected a manifest with a 'submissions' list")
    return entries


def first_tries(records: list[dict]) -> dict:
    """(student, prediction id) -> the status that counts: the first try's, else the newest recorded."""
    grouped: dict = {}
    for index, record in enumerate(records):
        if record.get("event") == "predict" and isinstance(record.get("exercise"), str):
            grouped.setdefault((record["student"], record["exercise"]), []).append((index, record))
    out = {}
    for key, items in grouped.items():
        marked = [r for _, r in items if r.get("first_try") is True]
        if marked:
            out[key] = marked[0].get("status")  # the kernel's own word on which answer counts
            continue
        with_attempt = [(r["attempt"], i, r) for i, r in items if isinstance(r.get("attempt"), int)]
        if with_attempt:
            out[key] = min(with_attempt, key=lambda item: (item[0], item[1]))[2].get("status")
        else:
            out[key] = items[-1][1].get("status")
    return out


def solutions_before_passing(records: list[dict]) -> dict:
    """Student -> the exercise ids whose solution was shown (a ``solution`` record) before their first ``passed``
    check, in the records' order (the order the service received them; a laptop's check log is in time order)."""
    shown: dict = {}
    passed: set = set()
    for record in records:
        key = (record.get("student"), record.get("exercise"))
        if not isinstance(key[1], str):
            continue
        if record.get("event") == "check" and record.get("status") == "passed":
            passed.add(key)
        elif record.get("event") == "solution" and key not in passed:
            shown.setdefault(key[0], set()).add(key[1])
    return {student: frozenset(ids) for student, ids in shown.items()}


def compute(
    course: course_file.Course,
    registry: dict,
    grades: list[dict],
    *,
    records: list[dict] = (),
    manifest: list[dict] | None = None,
    roster: list | None = None,
) -> Marks:
    """The marks ``course`` implies for the graded ``grades``; see the module's docstring for each input.

    ``registry``: lesson -> (exercise ids, prediction ids) for the course file's lessons. An id in the course
    file's points that no lesson has is an error naming the key.
    """
    if not isinstance(course, course_file.Course):
        raise TypeError(f"course: expected a course_utils.marks.course.Course, got {type(course).__name__}")
    lessons = list(course.lessons)
    missing = [lesson for lesson in lessons if lesson not in registry]
    if missing:
        raise ValueError(f"registry: expected the exercises of lessons {lessons}, got none for {missing}")
    known = {item for lesson in lessons for ids in registry[lesson] for item in ids}
    for table, ids in (
        ("points.exercises", course.points_by_exercise),
        ("points.predictions", course.points_by_prediction),
    ):
        for item_id in ids:
            if item_id not in known and item_id[:2] in course.lessons:
                raise ValueError(
                    f"{course.source}: {table}.{item_id}: not an exercise or prediction of lesson {item_id[:2]}"
                )

    possible = {
        lesson: round(
            sum(course.points("check", e) for e in registry[lesson][0])
            + sum(course.points("predict", p) for p in registry[lesson][1]),
            2,
        )
        for lesson in lessons
    }
    passed: dict = {}
    graded = set()
    for row in grades:
        graded.add((row["student"], row["lesson"]))
        if row["status"] == "passed":
            passed.setdefault((row["student"], row["lesson"]), set()).add(row["exercise"])
    first = first_tries(list(records))
    solutions = solutions_before_passing(list(records))
    submitted: dict = {}
    if manifest is not None:
        for entry in manifest:
            submitted[(entry["student"], entry["lesson"])] = entry
    else:
        submitted = {key: {"received": None} for key in graded}

    names = {student for student, _ in graded} | {student for student, _ in submitted}
    names |= {record["student"] for record in records}
    enrolled = [student.username for student in roster] if roster is not None else []
    order = enrolled + sorted(names - set(enrolled))

    students = []
    for student in order:
        marks = StudentMarks(student)
        for lesson in lessons:
            entry = submitted.get((student, lesson))
            exercise_ids, prediction_ids = registry[lesson]
            if entry is None:
                marks.lessons[lesson] = LessonMark(lesson, 0.0, possible[lesson], 0, 0.0, 0.0, "not submitted")
                continue
            shown = tuple(e for e in exercise_ids if e in solutions.get(student, ()))
            counted = [e for e in exercise_ids if e in passed.get((student, lesson), ())]
            if course.solution_shown == "no_points":
                counted = [e for e in counted if e not in shown]
            earned = sum(course.points("check", e) for e in counted)
            earned += sum(course.points("predict", p) for p in prediction_ids if first.get((student, p)) == "right")
            when = entry.get("received")
            due = course.due(student, lesson)
            policy = course.late_policy(lesson)
            late = policy.late_days(dt.datetime.fromisoformat(when), due) if when else 0
            kept = policy.fraction_kept(late)
            status = "on time" if late == 0 else ("refused (late)" if policy.policy == "refuse" else "late")
            marks.lessons[lesson] = LessonMark(
                lesson, round(earned, 2), possible[lesson], late, kept, round(earned * kept, 2), status, when, shown
            )
        students.append(marks)

    result = Marks(course, lessons, possible, students)
    if roster is not None:
        active = names
        result.never_started = [s for s in enrolled if s not in active]
        result.not_submitted = {lesson: [s for s in enrolled if (s, lesson) not in submitted] for lesson in lessons}
        result.not_on_roster = sorted(names - set(enrolled))
    return result
