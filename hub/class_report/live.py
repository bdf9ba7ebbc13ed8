"""What the live pages show, kept in memory: the newest record per student and item, first tries, who is stuck.

The store (SQLite or PostgreSQL) is the record of truth; reading all of it for every page view costs 0.4 s at 300
students x 64 exercises, so the service keeps this view, loads it once from the store at start, and updates it
after each accepted batch (:meth:`Live.note`). One service process owns it: with several service processes (docs/
hub.md, PostgreSQL), each shows what it received since it started plus what the store held then.

- ``newest[student][(event, item)]``: the newest record (with ``received``, the service's time);
- ``first_try[(student, prediction)]``: the status of the record the kernel marked ``first_try``; for a log
  without that field, the earliest record whose ``attempt`` is 1 (a new kernel counts from 1 again; records without
  an attempt are not counted);
- ``failing_since[(student, exercise)]``: when the student's current run of non-passing checks of an exercise
  began (cleared by a pass): "stuck" is a run older than ``stuck_minutes`` whose newest check is recent;
- ``refused[student]``: records refused for naming an unregistered id.
"""

from __future__ import annotations

import datetime as dt

__all__ = ["ACTIVE_MINUTES", "Live", "parse_received"]

ACTIVE_MINUTES = 30  # a run of wrong checks counts as "stuck now" only while its newest check is this recent


def parse_received(text: str) -> dt.datetime:
    """The store's ``received`` (``2026-11-29T10:00:00Z``) as an aware datetime."""
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


class Live:
    def __init__(self, stuck_minutes: float = 10.0):
        self.stuck_minutes = float(stuck_minutes)
        self.newest: dict = {}
        self.first_try: dict = {}
        self.failing_since: dict = {}
        self.refused: dict = {}

    def load(self, store) -> Live:
        """Fill the view from ``store``'s public reads (``latest``, ``counts``, ``events``)."""
        for student, records in store.latest().items():
            self.newest[student] = {(r["event"], r["exercise"]): r for r in records}
        for student in store.counts():
            self.replay(student, store.events(student, limit=100_000))
        return self

    def replay(self, student: str, records) -> None:
        """Take ``student``'s records (oldest first) into the first tries and the failing-since times."""
        for record in records:
            key = (student, record["exercise"])
            if record["event"] == "predict" and record.get("first_try") is not None:
                if record["first_try"]:  # the kernel says which answer counts (the log's first_try)
                    self.first_try.setdefault(key, record["status"])
            elif record["event"] == "predict" and record.get("attempt") == 1:
                self.first_try.setdefault(key, record["status"])  # a new kernel counts from 1 again: the earliest
            elif record["event"] == "check":
                if record["status"] == "passed":
                    self.failing_since.pop(key, None)
                else:
                    self.failing_since.setdefault(key, parse_received(record["received"]))

    def note(self, student: str, store, accepted: list[dict]) -> None:
        """After a batch from ``student`` was stored: their newest rows again, and the batch's records replayed."""
        self.newest[student] = {(r["event"], r["exercise"]): r for r in store.latest(student).get(student, [])}
        kept = self.newest[student]
        received = max((r["received"] for r in kept.values()), default=None)
        self.replay(student, [{**r, "received": received} for r in accepted if (r["event"], r["exercise"]) in kept])

    def count_refused(self, student: str, n: int) -> None:
        if n:
            self.refused[student] = self.refused.get(student, 0) + n

    def stuck(self, exercises, now: dt.datetime) -> list[tuple[str, str, float, dict]]:
        """(student, exercise, minutes failing, newest record) for each student stuck now on one of ``exercises``,
        the longest first."""
        wanted = set(exercises)
        started_before = now - dt.timedelta(minutes=self.stuck_minutes)
        active_after = now - dt.timedelta(minutes=ACTIVE_MINUTES)
        out = []
        for (student, exercise), since in self.failing_since.items():
            if since > started_before or exercise not in wanted:
                continue
            record = self.newest.get(student, {}).get(("check", exercise))
            if record is None or record["status"] == "passed" or parse_received(record["received"]) < active_after:
                continue
            out.append((student, exercise, (now - since).total_seconds() / 60, record))
        return sorted(out, key=lambda item: (-item[2], item[0]))
