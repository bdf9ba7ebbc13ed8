"""What the service accepts from a kernel: check-log records (CONTRACT.md, schema v2; v1 lines are checks).

:func:`normalize` returns a record with only the known fields, each of the right type and at most its length, or
raises ``ValueError`` naming the field. The student's name is never taken from a record: the service takes it
from the hub token that sent it.

With a :class:`Registry` (the course's, :func:`course_registry`), only registered ids are accepted: a check's
exercise must be one of the course's exercises, a prediction's one of its predictions, a hint's either; a
``misconception`` must be in the catalogue, a ``known_wrong`` one the prediction names (or the catalogue's). So one
student cannot add columns to the report or free text to the class summary; the refusals are counted
(``class_report.app``) and shown on the instructor's page.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["EVENTS", "EXERCISE_ID", "Registry", "course_registry", "normalize"]

EVENTS = {
    "check": ("passed", "wrong", "crashed", "not_attempted", "timed_out"),
    "predict": ("right", "wrong", "not_answered"),
    "hint": ("shown",),
    "solution": ("shown",),  # "show me a solution" (checks.solution): the marks flag it before the check passed
}
EXERCISE_ID = re.compile(r"\d\d\.[A-Za-z_][A-Za-z0-9_]{0,79}")
_TEXT_LIMITS = {
    "detail": 500,
    "misconception": 100,
    "relation": 200,
    "time": 40,
    "session": 64,
    "prediction": 200,
    "known_wrong": 100,
}
_FLAGS = ("first_try", "correct", "held")  # a prediction's: the answer that counts, right or not, held until the reveal


@dataclass(frozen=True)
class Registry:
    """The ids a record may name: exercises and predictions by lesson, each prediction's known wrong ideas,
    and the misconception catalogue."""

    exercises: dict = field(default_factory=dict)  # lesson -> [exercise id], in the lesson's order
    predictions: dict = field(default_factory=dict)  # lesson -> [prediction id]
    known_wrong: dict = field(default_factory=dict)  # prediction id -> frozenset of ids
    misconceptions: frozenset = frozenset()

    @functools.cached_property
    def exercise_ids(self) -> frozenset:
        return frozenset(e for ids in self.exercises.values() for e in ids)

    @functools.cached_property
    def prediction_ids(self) -> frozenset:
        return frozenset(p for ids in self.predictions.values() for p in ids)

    def check(self, record: dict) -> None:
        """Raise ValueError naming the field whose id is not registered."""
        event, item = record["event"], record["exercise"]
        known = {
            "check": self.exercise_ids,
            "predict": self.prediction_ids,
            "hint": self.exercise_ids | self.prediction_ids,
            "solution": self.exercise_ids,
        }[event]
        if item not in known:
            raise ValueError(
                f"exercise: {item!r:.100} is not a registered {'prediction' if event == 'predict' else 'exercise'}"
            )
        misconception = record.get("misconception")
        if misconception is not None and misconception not in self.misconceptions:
            raise ValueError(f"misconception: {misconception!r:.100} is not in the misconception catalogue")
        wrong = record.get("known_wrong")
        if wrong is not None and wrong not in self.known_wrong.get(item, frozenset()) | self.misconceptions:
            raise ValueError(f"known_wrong: {wrong!r:.100} is not a known wrong idea of {item}")


REGISTRY_FILE = Path(__file__).with_name("registry.json")
"""The course's ids as data, for a service that runs without the course's packages (a hub image without numpy):
written by :func:`write_registry`; ``hub/tests/test_class_report_parts.py`` fails when it differs from the course."""


def registry_data() -> dict:
    """The course's registered ids, from ``course_utils.checking.registry`` (needs the course's packages), as JSON data."""
    from course_utils.checking import misconceptions, registry

    data: dict = {"exercises": {}, "predictions": {}, "known_wrong": {}, "misconceptions": []}
    for lesson in registry.lessons():
        data["exercises"][lesson] = [e.id for e in registry.for_lesson(lesson)]
        data["predictions"][lesson] = [p.id for p in registry.predictions_for_lesson(lesson)]
        for prediction in registry.predictions_for_lesson(lesson):
            data["known_wrong"][prediction.id] = sorted({k.id for k in prediction.known_wrong if k.id})
    data["misconceptions"] = sorted(misconceptions.MISCONCEPTIONS)
    return data


def write_registry(path: Path = REGISTRY_FILE) -> Path:
    """Write :func:`registry_data` to ``path`` (run with the course's .venv after changing an exercise's id)."""
    path.write_text(json.dumps(registry_data(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def _registry(data: dict) -> Registry:
    return Registry(
        {lesson: list(ids) for lesson, ids in data["exercises"].items()},
        {lesson: list(ids) for lesson, ids in data["predictions"].items()},
        {prediction: frozenset(ids) for prediction, ids in data["known_wrong"].items()},
        frozenset(data["misconceptions"]),
    )


@functools.cache
def course_registry() -> Registry | None:
    """The course's registry: from ``course_utils.checking.registry`` where it imports, else from ``registry.json`` (a hub
    image without the course's packages); None only where neither is there."""
    try:
        return _registry(registry_data())
    except ImportError:
        pass
    try:
        return _registry(json.loads(REGISTRY_FILE.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _text(record: dict, name: str) -> str | None:
    value = record.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a string or null but got {type(value).__name__}")
    return value[: _TEXT_LIMITS[name]]


def _flag(record: dict, name: str) -> bool | None:
    value = record.get(name)
    if value is None or isinstance(value, bool):
        return value
    raise ValueError(f"{name}: expected true, false or null but got {value!r:.40}")


def _count(record: dict, name: str) -> int | None:
    value = record.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1_000_000:
        raise ValueError(f"{name}: expected an integer from 0 to 1000000 but got {value!r:.40}")
    return value


def normalize(record, registry: Registry | None = None) -> dict:
    """The record as stored: known fields only, checked, long texts cut. Raises ValueError when it is not one
    (with a ``registry``: also when it names an id the registry does not have)."""
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
    for name in _FLAGS:
        out[name] = _flag(record, name)
    out = {key: value for key, value in out.items() if value is not None or key == "misconception"}
    if registry is not None:
        registry.check(out)
    return out
