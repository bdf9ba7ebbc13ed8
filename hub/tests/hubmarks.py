"""The class's marks on the real hub (test_hub.py's marks step): the course file, the roster, the files to read.

The course file the hub's service reads (``CLASS_REPORT_COURSE_FILE``) starts with lesson 01 open (due in 2099) and
lesson 02 closed (due yesterday, policy ``refuse``); once the on-time students have submitted, the step moves
lesson 01's due date to just after their submissions and gives carol a day's extension, as an instructor edits the
file, and the service re-reads it.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path

__all__ = ["ROSTER", "course_text", "read_csv", "write_course"]

ROSTER = (
    "username,name,email,sis_id,canvas_id,section\n"
    'alice,"Liddell, Alice",alice@x.edu,1001,11,A\n'
    "bob,Bob Stone,bob@x.edu,1002,12,A\n"
    "carol,Carol Kay,carol@x.edu,1003,13,B\n"
    "dave,Dave Ng,dave@x.edu,1004,14,B\n"
    "erin,Erin Lo,erin@x.edu,1005,15,B\n"
)


def course_text(*, due_01: dt.datetime, first: str | None = None, carol_days: int = 0) -> str:
    """The course file: lesson 01 (penalty, 10 % a started day) worth ``first``'s 10 points and nothing else;
    lesson 02 refused after yesterday; carol's extension of lesson 01 by ``carol_days`` days."""
    closed = (dt.datetime.now(dt.UTC) - dt.timedelta(days=1)).isoformat(timespec="seconds")
    points = f'[points.exercises]\n"{first}" = 10\n' if first else ""
    extension = f'[extensions.carol]\n"01" = {carol_days}\n' if carol_days else ""
    return (
        '[course]\nname = "Attention"\n'
        "[points]\nexercise = 0\nprediction = 0\n"
        f"{points}"
        f'[lessons.01]\ndue = "{due_01.isoformat(timespec="microseconds")}"\n'
        f'[lessons.02]\ndue = "{closed}"\npolicy = "refuse"\n'
        '[late]\npolicy = "penalty"\nper_day = 0.1\ncap = 0.5\n'
        f"{extension}"
    )


def write_course(path: Path, text: str) -> None:
    """Replace the course file in one step (the service never reads half a file)."""
    temporary = path.with_suffix(".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def read_csv(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(Path(path).read_text(encoding="utf-8"))))
