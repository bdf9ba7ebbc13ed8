"""What the class report is made of: the constants, the rows, one notebook's result, a run, the registry.

Shared by every module of :mod:`course_utils.grading`; imports nothing of the course at module level.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "GRADER_VERSION",
    "LOG_STATUSES",
    "STATUSES",
    "CSV_COLUMNS",
    "NOTEBOOK_NAME",
    "CACHE_DIR",
    "OWN_FILES",
    "KERNEL",
    "MAX_DETAIL",
    "MAX_NOTEBOOK_BYTES",
    "MAX_RESULT_BYTES",
    "COURSE",
    "COURSE_TREE",
    "FOREIGN",
    "TAMPERING",
    "SKIPPED",
    "Exercise",
    "Record",
    "NotebookResult",
    "GradeRun",
    "load_registry",
    "normalize_registry",
    "one_line",
    "shown",
]

GRADER_VERSION = "3"  # part of the cache key: bump it when grading logic changes
LOG_STATUSES = ("passed", "wrong", "crashed", "not_attempted", "timed_out")  # what checks.check writes
SKIPPED = "skipped"  # a check cell the notebook itself tagged to be skipped (skip-execution)
STATUSES = (*LOG_STATUSES, "missing", SKIPPED)
CSV_COLUMNS = ("student", "lesson", "exercise", "status", "detail")
NOTEBOOK_NAME = re.compile(r"^(\d\d)_[^/]*\.ipynb$")
CACHE_DIR = ".grade_cache"
OWN_FILES = ("grades.csv", "grades.html", CACHE_DIR)  # what the grader writes into the submissions folder
KERNEL = "python3"
MAX_DETAIL = 300  # characters of an error message kept in a detail
MAX_NOTEBOOK_BYTES = 50 * 2**20
MAX_RESULT_BYTES = 8 * 2**20  # the runner's whole result; more is refused unread
COURSE_TREE = ("course_utils", "notebooks", "data", "scripts", "pyproject.toml", "requirements.txt", "Makefile")
COURSE = Path(__file__).resolve().parents[2]
FOREIGN = "(the message is left out: it quotes a file of the course)"
TAMPERING = "TAMPERING"


@dataclass(frozen=True)
class Exercise:
    """What the grader needs of a registry exercise: its id ("01.softmax_along") and title."""

    id: str
    title: str = ""


@dataclass
class Record:
    """One row of grades.csv (``misconception`` feeds the HTML report only)."""

    student: str
    lesson: str
    exercise: str
    status: str
    detail: str
    misconception: str | None = None


@dataclass
class NotebookResult:
    """What running one notebook found: exercise id -> (status, detail, misconception), notes and tampering.

    ``predictions``: prediction id -> the first logged try (``{"status": ..., "attempt": ...}``), when the
    notebook's predictions were logged. ``final``: False for a result that is not cached (the grader stopped the
    notebook for time or memory, or refused its result).
    """

    exercises: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    tampering: list = field(default_factory=list)
    predictions: dict = field(default_factory=dict)
    final: bool = True


@dataclass
class GradeRun:
    """The outcome of :func:`course_utils.grading.grade`: the rows, notebook problems, notebooks run or cached.

    ``problems`` lists ``(student, file name, note)`` (student ``""``: an entry at the top of the submissions
    folder); ``tampering`` the same for flagged notebooks; ``sandbox`` says how the notebooks were isolated;
    ``course_changed`` names course files that changed during the run (empty: verified unchanged);
    ``lookalikes`` groups of student names that look alike (:func:`course_utils.grading.export.lookalike_names`);
    ``predictions`` maps ``(student, lesson)`` to that notebook's first-try predictions.
    """

    records: list
    problems: list  # (student, notebook file name, note)
    registry: dict  # lesson -> [Exercise]
    ran: int = 0
    cached: int = 0
    csv_path: Path | None = None
    html_path: Path | None = None
    sandbox: str = ""
    tampering: list = field(default_factory=list)
    course_changed: list = field(default_factory=list)
    forged: int = 0
    lookalikes: list = field(default_factory=list)
    predictions: dict = field(default_factory=dict)


def load_registry() -> dict:
    """Lesson -> ordered list of :class:`Exercise`, from ``course_utils.checking.registry.EXERCISES``."""
    try:
        from course_utils.checking import registry as exercise_registry
    except ImportError as exc:
        raise RuntimeError(f"course_utils.checking.registry (the exercise registry) cannot be imported: {exc}") from exc
    registry: dict = {}
    for exercise in exercise_registry.EXERCISES.values():
        registry.setdefault(exercise.lesson, []).append(Exercise(exercise.id, getattr(exercise, "title", "")))
    return registry


def normalize_registry(registry) -> dict:
    """Accept lesson -> [Exercise | id | (id, title)] and return lesson -> [Exercise]."""
    if not isinstance(registry, dict):
        raise TypeError(f"registry must be a dict lesson -> list of exercises but is {type(registry).__name__}")
    out = {}
    for lesson, items in registry.items():
        if not (isinstance(lesson, str) and re.fullmatch(r"\d\d", lesson)):
            raise ValueError(f"registry keys must be two-digit lesson strings like '01' but one is {lesson!r}")
        exercises = []
        for item in items:
            if isinstance(item, Exercise):
                exercises.append(item)
            elif isinstance(item, str):
                exercises.append(Exercise(item))
            elif isinstance(item, tuple) and len(item) == 2:
                exercises.append(Exercise(*item))
            else:
                exercises.append(Exercise(item.id, getattr(item, "title", "")))
        out[lesson] = exercises
    return out


def one_line(text, limit: int = MAX_DETAIL) -> str:
    """``text`` on one line (whitespace runs squashed), cut to ``limit`` characters (linear in ``limit``)."""
    text = " ".join(str(text)[: 4 * limit + 64].split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown(name: str) -> str:
    """A file name as the report shows it: control characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)
