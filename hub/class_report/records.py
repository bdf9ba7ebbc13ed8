"""What the service accepts from a kernel: check-log records (CONTRACT.md, schema v2; v1 lines are checks).

:func:`normalize` returns a record with only the known fields, each of the right type and at most its length, or
raises ``ValueError`` naming the field. The student's name is never taken from a record: the service takes it
from the hub token that sent it.
"""

from __future__ import annotations

import re

__all__ = ["EVENTS", "EXERCISE_ID", "normalize"]

EVENTS = {
    "check": ("passed", "wrong", "crashed", "not_attempted", "timed_out"),
    "predict": ("right", "wrong", "not_answered"),
    "hint": ("shown",),
}
EXERCISE_ID = re.compile(r"\d\d\.[A-Za-z_][A-Za-z0-9_]{0,79}")
_TEXT_LIMITS = {"detail": 500, "misconception": 100, "time": 40, "session": 64, "prediction": 200, "known_wrong": 100}


def _text(record: dict, name: str) -> str | None:
    value = record.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a string or null but got {type(value).__name__}")
    return value[: _TEXT_LIMITS[name]]


def _count(record: dict, name: str) -> int | None:
    value = record.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1_000_000:
        raise ValueError(f"{name}: expected an integer from 0 to 1000000 but got {value!r:.40}")
    return value


def normalize(record) -> dict:
    """The record as stored: known fields only, checked, long texts cut. Raises ValueError when it is not one."""
    if not isinstance(record, dict):
        raise ValueError(f"record: expected a JSON object but got {type(record).__name__}")
    event = record.get("event", "check")  # v1 lines have no event: they are checks
    if event not in EVENTS:
        raise ValueError(f"event: expected one of {', '.join(EVENTS)} but got {event!r:.40}")
    exercise = record.get("exercise")
    if not isinstance(exercise, str) or not EXERCISE_ID.fullmatch(exercise):
        raise ValueError(f"exercise: expected an id like '01.softmax_along' but got {exercise!r:.100}")
    lesson = record.get("lesson", exercise[:2])
    if lesson != exercise[:2]:
        raise ValueError(f"lesson: expected {exercise[:2]!r} (the exercise's lesson) but got {lesson!r:.40}")
    status = record.get("status")
    if status not in EVENTS[event]:
        raise ValueError(f"status: a {event} is one of {', '.join(EVENTS[event])} but got {status!r:.40}")
    out = {"v": 2, "event": event, "exercise": exercise, "lesson": lesson, "status": status}
    out["attempt"] = _count(record, "attempt")
    out["level"] = _count(record, "level")
    for name in _TEXT_LIMITS:
        out[name] = _text(record, name)
    return {key: value for key, value in out.items() if value is not None or key == "misconception"}
