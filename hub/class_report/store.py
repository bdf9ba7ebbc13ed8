"""Where the records live: SQLite (one file in WAL mode, the default) or PostgreSQL (a URL), bounded per student.

A batch is accepted when its transaction has committed (SQLite: ``synchronous=FULL``, on disk and not only in the
WAL's page cache; PostgreSQL: ``synchronous_commit = on``, its default), and only then does the service answer 200,
so a record the service accepted survives a crash or a restart of the service, the hub, the database or the machine.

Two tables:

- ``events``: every record as received, in order; the newest :attr:`Store.max_events` per student are kept (an
  older one is dropped when a newer one arrives), so a student in a loop cannot fill the disk;
- ``latest``: one row per (student, event, exercise), the newest record of it: what the report shows. A student
  may have at most :attr:`Store.max_exercises` of them; records about more are refused.

So one student holds at most ``max_events + max_exercises`` rows of at most about 1.5 KB each (3,300 rows, under
5 MB, with the defaults). Which database, and how to move from one to the other: docs/hub.md. The connection
(``Store.db``) is :mod:`class_report.database`'s: ``execute`` with ``?`` placeholders on both.
"""

from __future__ import annotations

import json
import time

from .database import connect

__all__ = ["Store"]

# the one statement that differs: SQLite's AUTOINCREMENT (ids never reused) is PostgreSQL's BIGSERIAL
_ID = {"sqlite": "INTEGER PRIMARY KEY AUTOINCREMENT", "postgresql": "BIGSERIAL PRIMARY KEY"}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id {id},
    student TEXT NOT NULL,
    received TEXT NOT NULL,
    event TEXT NOT NULL,
    exercise TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_student ON events (student, id);
CREATE TABLE IF NOT EXISTS latest (
    student TEXT NOT NULL,
    event TEXT NOT NULL,
    exercise TEXT NOT NULL,
    event_id BIGINT NOT NULL,
    received TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (student, event, exercise)
)
"""


class Store:
    """The records of one class, in the SQLite file ``path`` (created if missing) or the PostgreSQL database whose
    ``postgresql://`` URL ``path`` is (its tables created if missing)."""

    def __init__(self, path, *, max_events: int = 3000, max_exercises: int = 300):
        self.max_events, self.max_exercises = int(max_events), int(max_exercises)
        self.db = connect(path)
        self.path = getattr(self.db, "path", None)  # the SQLite file; None for PostgreSQL
        with self.db.transaction():
            for statement in _SCHEMA.format(id=_ID[self.db.backend]).split(";"):
                if statement.strip():
                    self.db.execute(statement)

    def __repr__(self) -> str:
        return f"Store({self.db!r})"

    def close(self) -> None:
        self.db.close()

    def add(self, student: str, records: list[dict]) -> tuple[int, int]:
        """Store normalized ``records`` sent by ``student`` in one transaction; return (accepted, refused).

        A record is refused when it would give the student more than ``max_exercises`` (event, exercise) rows.
        """
        received = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        db = self.db
        accepted = refused = 0
        with db.transaction():
            if db.backend == "postgresql":  # one writer per student at a time, across service processes
                db.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (student,))
            known = {
                tuple(row) for row in db.execute("SELECT event, exercise FROM latest WHERE student = ?", (student,))
            }
            for record in records:
                key = (record["event"], record["exercise"])
                if key not in known and len(known) >= self.max_exercises:
                    refused += 1
                    continue
                known.add(key)
                text = json.dumps(record, ensure_ascii=False, sort_keys=True)
                event_id = db.execute(
                    "INSERT INTO events (student, received, event, exercise, record) VALUES (?, ?, ?, ?, ?)"
                    " RETURNING id",
                    (student, received, *key, text),
                ).fetchone()[0]
                db.execute(
                    "INSERT INTO latest (student, event, exercise, event_id, received, record) VALUES (?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (student, event, exercise) DO UPDATE SET"
                    " event_id = excluded.event_id, received = excluded.received, record = excluded.record",
                    (student, *key, event_id, received, text),
                )
                accepted += 1
            db.execute(
                "DELETE FROM events WHERE student = ? AND id <= ("
                " SELECT id FROM events WHERE student = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
                (student, student, self.max_events),
            )
        return accepted, refused

    def latest(self, student: str | None = None) -> dict[str, list[dict]]:
        """Student -> their newest record of each (event, exercise), oldest first; one student or all."""
        query = "SELECT student, received, record FROM latest"
        args: tuple = ()
        if student is not None:
            query, args = query + " WHERE student = ?", (student,)
        out: dict[str, list[dict]] = {}
        for name, received, text in self.db.execute(query + " ORDER BY event_id", args):
            out.setdefault(name, []).append({**json.loads(text), "received": received})
        return dict(sorted(out.items()))  # by name in Python: the two databases' collations differ

    def events(self, student: str, limit: int = 1000) -> list[dict]:
        """The newest ``limit`` records ``student`` sent (those still kept), oldest first."""
        rows = self.db.execute(
            "SELECT received, record FROM events WHERE student = ? ORDER BY id DESC LIMIT ?", (student, int(limit))
        ).fetchall()
        return [{**json.loads(text), "received": received} for received, text in reversed(rows)]

    def counts(self) -> dict[str, int]:
        """Student -> number of stored records (events table)."""
        return dict(self.db.execute("SELECT student, COUNT(*) FROM events GROUP BY student").fetchall())
