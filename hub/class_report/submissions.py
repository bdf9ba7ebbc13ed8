"""Submissions kept by the class-report service: every one, in the store's database, bounded per student.

A student's kernel posts a whole notebook (``course_utils.submit.lesson``); the service keeps it with the time it
received it (its own clock, UTC), its sha256 and its size, and answers with that receipt. Nothing is replaced:
the one that counts (the newest on time, else the newest) is chosen when the instructor collects
(``python -m course_utils.marks collect --service``), with the course file's due dates and extensions.

With the course file's deadlines (:class:`class_report.deadlines.Deadlines`), a submission of a lesson whose late
policy is ``refuse`` received after the student's due date is refused (403, the reason in words) and counted per
student and lesson in ``submission_refusals`` (the instructor's index shows the counts).

One table, ``submissions``, in the store's database: the connection ``Store.db`` where the store exposes one
(``execute`` with ``?`` placeholders, ``transaction()``, ``backend``), else a connection of this module's own to
the store's SQLite file. Portable SQL only (the id column's type is the one statement that differs). A notebook
is JSON text, so it is kept as TEXT.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import re
import sqlite3

__all__ = ["Limits", "SubmissionRefused", "Submissions"]

_ID = {"sqlite": "INTEGER PRIMARY KEY AUTOINCREMENT", "postgresql": "BIGSERIAL PRIMARY KEY"}
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS submissions ("
    " id {id}, student TEXT NOT NULL, lesson TEXT NOT NULL, notebook TEXT NOT NULL, received TEXT NOT NULL,"
    " sha256 TEXT NOT NULL, size BIGINT NOT NULL, data TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS submissions_by_student ON submissions (student, lesson, id)",
    "CREATE TABLE IF NOT EXISTS submission_refusals ("
    " student TEXT NOT NULL, lesson TEXT NOT NULL, attempts BIGINT NOT NULL, last TEXT NOT NULL,"
    " PRIMARY KEY (student, lesson))",
)
_COLUMNS = "id, student, lesson, notebook, received, sha256, size"
_NOTEBOOK = re.compile(r"[A-Za-z0-9_. -]{1,120}\.ipynb")


class SubmissionRefused(ValueError):
    """A submission the service does not keep; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Limits:
    """Bounds per submission and per student (the service's settings ``max_submission``, ``max_student_bytes``)."""

    def __init__(self, max_bytes: int = 8 * 2**20, max_student_bytes: int = 64 * 2**20, max_count: int = 200):
        self.max_bytes, self.max_student_bytes, self.max_count = int(max_bytes), int(max_student_bytes), int(max_count)


class _SQLite:
    """The store's SQLite file, with the ``execute``/``transaction``/``backend`` of the store's own connection."""

    backend = "sqlite"

    def __init__(self, path):
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA busy_timeout=5000")

    def execute(self, sql: str, params: tuple = ()):
        return self._db.execute(sql, params)

    @contextlib.contextmanager
    def transaction(self):
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()


def _receipt(row) -> dict:
    keys = ("id", "student", "lesson", "notebook", "received", "sha256", "bytes")
    return dict(zip(keys, row, strict=True))


class Submissions:
    """The submissions of one class, beside ``store``'s records."""

    def __init__(self, store, limits: Limits | None = None, *, lessons=None, deadlines=None):
        self.limits = limits or Limits()
        self.deadlines = deadlines  # None: no course file, every lesson is taken at any time
        self.lessons = None if lessons is None else frozenset(lessons)  # the lessons that may be submitted
        shared = getattr(store, "db", None)
        self._own = shared is None
        self.db = _SQLite(store.path) if shared is None else shared
        with self.db.transaction():
            for statement in _SCHEMA:
                self.db.execute(statement.format(id=_ID[self.db.backend]))

    def close(self) -> None:
        if self._own:
            self.db.close()

    def add(self, student: str, lesson: str, notebook: str, data: bytes, *, now: dt.datetime | None = None) -> dict:
        """Keep one submission and return its receipt; :class:`SubmissionRefused` says why one is not kept."""
        limits = self.limits
        if (
            not isinstance(lesson, str)
            or not re.fullmatch(r"\d\d", lesson)
            or (self.lessons is not None and lesson not in self.lessons)
        ):
            known = f" (one of {', '.join(sorted(self.lessons))})" if self.lessons else ""
            raise SubmissionRefused(400, f"lesson: expected a lesson of the course{known}, got {lesson!r:.40}")
        if len(data) > limits.max_bytes:
            raise SubmissionRefused(
                413,
                f"at most {limits.max_bytes} bytes per submission, got {len(data)}: clear the largest outputs, save, and submit again",
            )
        try:
            parsed = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise SubmissionRefused(400, "body: expected a notebook (.ipynb JSON in UTF-8)") from None
        if not isinstance(parsed, dict) or not isinstance(parsed.get("cells"), list):
            raise SubmissionRefused(400, "body: expected a notebook (a JSON object with a 'cells' list)")
        name = notebook if isinstance(notebook, str) and _NOTEBOOK.fullmatch(notebook) else f"{lesson}_submission.ipynb"
        when = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
        why = self.deadlines.refusal(student, lesson, when) if self.deadlines is not None else None
        if why is not None:
            self._count_refusal(student, lesson, when)
            raise SubmissionRefused(403, why)
        received = when.isoformat(timespec="microseconds")
        digest = hashlib.sha256(data).hexdigest()
        with self.db.transaction():
            if self.db.backend == "postgresql":  # one writer per student at a time, across service processes
                self.db.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (student,))
            count, used = self.db.execute(
                "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM submissions WHERE student = ?", (student,)
            ).fetchone()
            if count >= limits.max_count or used + len(data) > limits.max_student_bytes:
                raise SubmissionRefused(
                    413,
                    f"{student} has {count} submissions ({used} bytes) kept, the most a student may"
                    f" ({limits.max_count}, {limits.max_student_bytes} bytes): ask your instructor",
                )
            row_id = self.db.execute(
                "INSERT INTO submissions (student, lesson, notebook, received, sha256, size, data)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (student, lesson, name, received, digest, len(data), data.decode("utf-8")),
            ).fetchone()[0]
        return {
            "id": row_id,
            "student": student,
            "lesson": lesson,
            "notebook": name,
            "received": received,
            "sha256": digest,
            "bytes": len(data),
        }

    def _count_refusal(self, student: str, lesson: str, when: dt.datetime) -> None:
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO submission_refusals (student, lesson, attempts, last) VALUES (?, ?, 1, ?)"
                " ON CONFLICT (student, lesson) DO UPDATE SET attempts = submission_refusals.attempts + 1,"
                " last = excluded.last",
                (student, lesson, when.isoformat(timespec="seconds")),
            )

    def refusals(self) -> dict:
        """Lesson -> {student: late submissions refused}, from the course file's ``refuse`` policy."""
        out: dict = {}
        rows = self.db.execute("SELECT lesson, student, attempts FROM submission_refusals ORDER BY lesson, student")
        for lesson, student, attempts in rows.fetchall():
            out.setdefault(lesson, {})[student] = int(attempts)
        return out

    def receipts(self, student: str | None = None) -> list[dict]:
        """Every submission's receipt (one student's, or everyone's), oldest first."""
        query, args = f"SELECT {_COLUMNS} FROM submissions", ()
        if student is not None:
            query, args = query + " WHERE student = ?", (student,)
        return [_receipt(row) for row in self.db.execute(query + " ORDER BY id", args).fetchall()]

    def students_per_lesson(self) -> dict:
        """Lesson -> how many students have submitted it."""
        rows = self.db.execute("SELECT lesson, COUNT(DISTINCT student) FROM submissions GROUP BY lesson").fetchall()
        return {lesson: count for lesson, count in rows}

    def get(self, submission_id: int) -> tuple[dict, bytes] | None:
        """One submission's receipt and notebook bytes, or None."""
        row = self.db.execute(
            f"SELECT {_COLUMNS}, data FROM submissions WHERE id = ?", (int(submission_id),)
        ).fetchone()
        if row is None:
            return None
        return _receipt(row[:-1]), row[-1].encode("utf-8")
