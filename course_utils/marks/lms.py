"""The marks as CSV files: the course's own, and the gradebook imports of Canvas and Moodle.

One column per marked lesson plus the total, in every file. The layouts followed (docs/marks.md cites the pages):

- **Canvas** (Grades > Import; the layout of Canvas's own gradebook export, which its import reads back): the
  columns ``Student`` ("Last, First"), ``ID`` (Canvas's user id), ``SIS User ID``, ``SIS Login ID``, ``Section``,
  then one column per assignment; the second row is ``Points Possible`` (the first five cells empty but the first).
  Canvas matches a row by ``ID``, ``SIS User ID`` or the student's name; a column whose header is not an existing
  assignment becomes a new assignment.
- **Moodle** (Grades > Import > CSV file): a header row, then one row per student; the import page maps one
  identifying column (``Username`` -> username, ``Email address`` -> useremail, ``ID number`` -> useridnumber) and
  each grade column to a grade item (or a new one). The columns follow Moodle's own export: ``First name``,
  ``Last name``, ``Username``, ``ID number``, ``Email address``, then the grade items.

Every text cell that a spreadsheet would read as a formula (``= + - @``, a tab or carriage return at the start,
after Unicode normalisation and without invisible characters or leading spaces) is prefixed with ``'``.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from pathlib import Path

from course_utils.marks.compute import Marks

__all__ = [
    "CANVAS_ID_COLUMNS",
    "MOODLE_ID_COLUMNS",
    "canvas_csv",
    "lesson_column",
    "marks_csv",
    "moodle_csv",
    "safe_cell",
    "write",
]

CANVAS_ID_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_ID_COLUMNS = ("First name", "Last name", "Username", "ID number", "Email address")
_INVISIBLE = re.compile(r"[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


def safe_cell(value):
    """``value`` unchanged unless it is text a spreadsheet would run as a formula; then prefixed with ``'``."""
    if not isinstance(value, str):
        return value
    shown = _INVISIBLE.sub("", unicodedata.normalize("NFKC", value)).lstrip(" \u00a0\u3000")
    if shown[:1] in ("=", "+", "-", "@", "\t", "\r", "|"):
        return "'" + value
    return value


def lesson_column(marks: Marks, lesson: str) -> str:
    """The header of a lesson's column: '<course name> <lesson>' (an assignment's name in the LMS)."""
    return f"{marks.course.name} {lesson}"


def _total_column(marks: Marks) -> str:
    return f"{marks.course.name} total"


def _table(header, rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([safe_cell(cell) for cell in row])
    return out.getvalue()


def _number(value: float):
    return int(value) if float(value).is_integer() else round(value, 2)


def _people(marks: Marks, roster) -> dict:
    return {student.username: student for student in (roster or [])}


def canvas_csv(marks: Marks, roster=None) -> str:
    """Canvas's gradebook import CSV (see the module's docstring); ``roster`` fills the identifying columns."""
    people = _people(marks, roster)
    header = [*CANVAS_ID_COLUMNS, *(lesson_column(marks, lesson) for lesson in marks.lessons), _total_column(marks)]
    possible = ["Points Possible", "", "", "", ""]
    possible += [_number(marks.possible[lesson]) for lesson in marks.lessons] + [_number(marks.possible_total)]
    rows = [possible]
    for student in marks.students:
        person = people.get(student.student)
        ids = (
            [
                person.sortable_name,
                person.canvas_id,
                person.sis_id,
                person.sis_login_id or person.username,
                person.section,
            ]
            if person
            else [student.student, "", "", student.student, ""]
        )
        rows.append(
            ids + [_number(student.lessons[lesson].points) for lesson in marks.lessons] + [_number(student.total)]
        )
    return _table(header, rows)


def moodle_csv(marks: Marks, roster=None) -> str:
    """Moodle's grade import CSV (see the module's docstring)."""
    people = _people(marks, roster)
    header = [*MOODLE_ID_COLUMNS, *(lesson_column(marks, lesson) for lesson in marks.lessons), _total_column(marks)]
    rows = []
    for student in marks.students:
        person = people.get(student.student)
        first, last = person.split_name() if person else ("", "")
        ids = [first, last, student.student, person.sis_id if person else "", person.email if person else ""]
        rows.append(
            ids + [_number(student.lessons[lesson].points) for lesson in marks.lessons] + [_number(student.total)]
        )
    return _table(header, rows)


def marks_csv(marks: Marks) -> str:
    """The course's own marks file: per student, per lesson points, late days and status, then the total."""
    header = ["student"]
    for lesson in marks.lessons:
        header += [f"{lesson} points", f"{lesson} of", f"{lesson} late days", f"{lesson} status"]
        header += [f"{lesson} solutions shown"]
    header += ["total", "of", "late days"]
    rows = []
    for student in marks.students:
        row = [student.student]
        for lesson in marks.lessons:
            mark = student.lessons[lesson]
            row += [_number(mark.points), _number(mark.possible), mark.late_days, mark.status]
            row += [" ".join(mark.solutions)]
        rows.append(row + [_number(student.total), _number(marks.possible_total), student.late_days])
    return _table(header, rows)


def write(marks: Marks, out, roster=None) -> dict:
    """Write ``marks.csv``, ``canvas.csv`` and ``moodle.csv`` into the folder ``out``; return name -> path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "marks.csv": marks_csv(marks),
        "canvas.csv": canvas_csv(marks, roster),
        "moodle.csv": moodle_csv(marks, roster),
    }
    paths = {}
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
        paths[name] = out / name
    return paths
