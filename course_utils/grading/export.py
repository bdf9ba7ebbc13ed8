"""The class's results as data and as ``grades.csv``: formulas neutralised, look-alike names found.

:func:`check_results` is the public, documented way to read a run's graded results (one :class:`CheckResult` per
student and exercise, with the notebook's first-try predictions): what ``course_utils.marks`` builds on.
"""

from __future__ import annotations

import csv
import io
import os
import secrets
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from course_utils.grading.records import CSV_COLUMNS, TAMPERING

__all__ = ["CheckResult", "check_results", "csv_safe", "write_csv", "replace_file", "lookalike_names", "name_key"]

# Letters of other scripts that look like Latin ones (Cyrillic, Greek), folded before names are compared.
LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁһԛԝүӏАВЕКМНОРСТХУІЈЅԌαβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdhqwylABEKMHOPCTXYIJSGabeikvoptuxABEZHIKMNOPTYX",
)
FORMULA_FIRST = ("=", "+", "-", "@", "\t", "\r")


def _visible(text: str) -> str:
    """NFKC-normalised ``text`` without invisible characters (format: zero-width, joiners, marks of direction)."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def csv_safe(value) -> str:
    """A CSV cell a spreadsheet will not read as a formula: one that starts (after NFKC normalisation, without
    invisible characters and leading spaces) with ``=``, ``+``, ``-``, ``@``, a tab or CR gets a ``'`` first."""
    text = str(value)
    probe = _visible(text).lstrip(" \u00a0\u3000")
    return "'" + text if probe[:1] in FORMULA_FIRST or text[:1] in FORMULA_FIRST else text


def replace_file(path: Path, text: str) -> None:
    """Write ``path`` as a new file put in place at once: a link planted at ``path`` is replaced, never followed."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    os.replace(tmp, path)


def write_csv(records, path) -> Path:
    """Write ``student, lesson, exercise, status, detail`` rows (header first) and return the path.

    Cells that a spreadsheet would read as a formula are neutralised (:func:`csv_safe`).
    """
    path = Path(path)
    handle = io.StringIO(newline="")
    writer = csv.writer(handle)
    writer.writerow(CSV_COLUMNS)
    for r in records:
        writer.writerow([csv_safe(v) for v in (r.student, r.lesson, r.exercise, r.status, r.detail)])
    replace_file(path, handle.getvalue())
    return path


def name_key(name: str) -> str:
    """What a name looks like: NFKC, no invisible characters, look-alike letters folded, any case, no outer spaces."""
    return " ".join(_visible(name).translate(LOOKALIKES).casefold().split())


def lookalike_names(names) -> list[list[str]]:
    """Groups (sorted) of two or more different names that look alike (:func:`name_key`)."""
    groups: dict = {}
    for name in sorted(set(names)):
        groups.setdefault(name_key(name), []).append(name)
    return [group for _, group in sorted(groups.items()) if len(group) > 1]


@dataclass(frozen=True)
class CheckResult:
    """One student's result on one exercise, as data.

    ``status`` is one of :data:`course_utils.grading.STATUSES`; ``misconception`` the named mistake, when the check
    found one; ``tampering`` True when the grader flagged the notebook; ``predictions`` the notebook's first logged
    try of each prediction (prediction id -> ``{"status": ..., "attempt": ...}``), the same for every exercise of
    one notebook.
    """

    student: str
    lesson: str
    exercise: str
    status: str
    detail: str
    misconception: str | None = None
    tampering: bool = False
    predictions: dict = field(default_factory=dict)


def check_results(run) -> list[CheckResult]:
    """Every graded result of a :class:`~course_utils.grading.records.GradeRun`, in the report's order."""
    return [
        CheckResult(
            r.student,
            r.lesson,
            r.exercise,
            r.status,
            r.detail,
            r.misconception,
            r.detail.startswith(TAMPERING),
            dict(run.predictions.get((r.student, r.lesson), {})),
        )
        for r in run.records
    ]
