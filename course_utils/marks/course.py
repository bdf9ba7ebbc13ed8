"""The course file: points per exercise and prediction, a due date per lesson, the late policy, extensions.

One TOML file (``course.toml`` at the repository's root; ``course.example.toml`` is the documented example),
read with the standard library's ``tomllib``. Every value is checked when the file is read; a bad one raises
:class:`CourseFileError` (a ``ValueError``) naming the file and the key, for example::

    course.toml: lessons.01.due: expected an ISO date with a time zone, got '2026-13-01'

The layout (every table optional but ``[lessons.NN]`` for a lesson that is marked)::

    [course]
    name = "Attention"
    [points]
    exercise = 1          # an exercise whose check passed
    prediction = 0.5      # a prediction right at the first try
    solution_shown = "flag"   # an exercise whose solution was shown before it passed: "flag" (listed) or "no_points"
    [points.exercises]    # per exercise, instead of the default
    "02.cached_causal_mask" = 2
    [points.predictions]
    "00.scores_shape" = 1
    [lessons.01]
    due = "2026-12-07T23:59:00+01:00"
    policy = "refuse"     # optional: this lesson's late policy, instead of [late]'s
    [late]
    policy = "penalty"    # "penalty", "refuse" or "accept"
    per_day = 0.1         # the fraction of the lesson's points lost per day late (a started day counts)
    cap = 0.5             # the most a lesson can lose, as a fraction
    grace_minutes = 0
    [extensions.alice]
    "01" = "2026-12-09T23:59:00+01:00"   # a new due date, or a number of days added to the lesson's
    [lti]                 # optional: the LMS's gradebook over LTI 1.3 (course_utils.marks.lti, docs/marks.md)
    "02" = 2
    [submit]
    folder = "/shared/attention/submissions"   # off a hub: where course_utils.submit.lesson() keeps submissions

Introduced for instructors in docs/marks.md.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Course", "CourseFileError", "LatePolicy", "Lesson", "load", "parse", "parse_time"]

LESSON = re.compile(r"\d\d")
ITEM_ID = re.compile(r"\d\d\.[A-Za-z_][A-Za-z0-9_]{0,79}")
POLICIES = ("penalty", "refuse", "accept")
SOLUTION_SHOWN = ("flag", "no_points")  # what a solution shown before the exercise passed costs
_TOP = {"course", "points", "lessons", "late", "extensions", "submit", "lti"}


class CourseFileError(ValueError):
    """A course file that cannot be used: the message names the file, the key, what was expected and what came."""


@dataclass(frozen=True)
class LatePolicy:
    """What a late submission costs: ``penalty`` (``per_day`` of the points per started day, at most ``cap``),
    ``refuse`` (no points) or ``accept`` (no cost). ``grace_minutes`` after the due date still count as on time."""

    policy: str = "penalty"
    per_day: float = 0.1
    cap: float = 1.0
    grace_minutes: float = 0.0

    def late_days(self, submitted: dt.datetime, due: dt.datetime | None) -> int:
        """Started days between ``due`` (plus the grace) and ``submitted``: 0 when on time or without a due date."""
        if due is None:
            return 0
        late = submitted - (due + dt.timedelta(minutes=self.grace_minutes))
        return max(0, math.ceil(late / dt.timedelta(days=1)))

    def fraction_kept(self, late_days: int) -> float:
        """The fraction of the points a submission ``late_days`` late keeps (1.0 when on time)."""
        if late_days <= 0 or self.policy == "accept":
            return 1.0
        if self.policy == "refuse":
            return 0.0
        return max(0.0, 1.0 - min(self.cap, self.per_day * late_days))


@dataclass(frozen=True)
class Lesson:
    """A marked lesson: its two-digit id, due date (None: no deadline) and late policy (None: ``[late]``'s)."""

    lesson: str
    due: dt.datetime | None = None
    policy: str | None = None


@dataclass(frozen=True)
class Course:
    """A validated course file (:func:`load`)."""

    name: str = "course"
    exercise_points: float = 1.0
    prediction_points: float = 0.0
    points_by_exercise: dict = field(default_factory=dict)  # exercise id -> points
    points_by_prediction: dict = field(default_factory=dict)  # prediction id -> points
    lessons: dict = field(default_factory=dict)  # "01" -> Lesson
    late: LatePolicy = field(default_factory=LatePolicy)
    extensions: dict = field(default_factory=dict)  # student -> {"01": due datetime}
    submit_folder: str | None = None  # off a hub: where course_utils.submit keeps submissions
    solution_shown: str = "flag"  # "flag": listed in the marks; "no_points": that exercise earns nothing
    lti: dict = field(default_factory=dict)  # [lti], checked where it is used (course_utils.marks.lti.settings)
    source: str = "course.toml"

    def points(self, kind: str, item_id: str) -> float:
        """The points of exercise (``kind="check"``) or prediction (``kind="predict"``) ``item_id``."""
        if kind == "check":
            return self.points_by_exercise.get(item_id, self.exercise_points)
        if kind == "predict":
            return self.points_by_prediction.get(item_id, self.prediction_points)
        raise ValueError(f"kind: expected 'check' or 'predict', got {kind!r}")

    def late_policy(self, lesson: str) -> LatePolicy:
        """The late policy of ``lesson``: ``[late]``'s, with the lesson's own ``policy`` where it has one."""
        entry = self.lessons.get(lesson)
        if entry is None or entry.policy is None or entry.policy == self.late.policy:
            return self.late
        return dataclasses.replace(self.late, policy=entry.policy)

    def refused_late(self, student: str, lesson: str, received: dt.datetime) -> dt.datetime | None:
        """The due date (``student``'s extension counted) that ``received`` is past when ``lesson``'s policy is
        ``refuse``: such a submission is not taken; None when it is (on time, in the grace, or another policy)."""
        if not isinstance(received, dt.datetime) or received.utcoffset() is None:
            raise TypeError(f"received: expected a datetime with a time zone, got {received!r:.60}")
        policy = self.late_policy(lesson)
        due = self.due(student, lesson)
        if policy.policy != "refuse" or due is None or policy.late_days(received, due) == 0:
            return None
        return due

    def due(self, student: str, lesson: str) -> dt.datetime | None:
        """The due date of ``lesson`` for ``student``: their extension's, else the lesson's (None: no deadline)."""
        extended = self.extensions.get(student, {}).get(lesson)
        if extended is not None:
            return extended
        entry = self.lessons.get(lesson)
        return entry.due if entry else None


def _fail(source: str, key: str, expected: str, got) -> CourseFileError:
    return CourseFileError(f"{source}: {key}: expected {expected}, got {repr(got):.120}")


def parse_time(value, *, source: str = "course.toml", key: str = "time") -> dt.datetime:
    """An aware datetime from an ISO 8601 string with a time zone (or TOML's offset date-time)."""
    if isinstance(value, dt.datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise _fail(source, key, "an ISO date with a time zone", value) from None
    else:
        raise _fail(source, key, "an ISO date with a time zone", value)
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise _fail(source, key, "an ISO date with a time zone (e.g. 2026-12-07T23:59:00+01:00)", value)
    return parsed


def _number(value, source: str, key: str, *, low: float = 0.0, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        bounds = f"from {low:g} to {high:g}" if high != math.inf else f"of at least {low:g}"
        raise _fail(source, key, f"a number {bounds}", value)
    return float(value)


def _table(value, source: str, key: str) -> dict:
    if not isinstance(value, dict):
        raise _fail(source, key, "a table", value)
    return value


def _unknown_keys(table: dict, allowed, source: str, where: str) -> None:
    for key in table:
        if key not in allowed:
            raise CourseFileError(f"{source}: {where}{key}: unknown key (known: {', '.join(sorted(allowed))})")


def _points_table(value, source: str, key: str) -> dict:
    out = {}
    for item_id, points in _table(value, source, key).items():
        if not ITEM_ID.fullmatch(item_id):
            raise _fail(source, f"{key}.{item_id}", "an id like '01.softmax_along'", item_id)
        out[item_id] = _number(points, source, f"{key}.{item_id}")
    return out


def parse(data: dict, *, source: str = "course.toml") -> Course:
    """A :class:`Course` from the parsed TOML ``data``; :class:`CourseFileError` names the first bad key."""
    if not isinstance(data, dict):
        raise TypeError(f"data: expected the parsed TOML as a dict, got {type(data).__name__}")
    _unknown_keys(data, _TOP, source, "")
    course = _table(data.get("course", {}), source, "course")
    _unknown_keys(course, {"name"}, source, "course.")
    name = course.get("name", "course")
    if not isinstance(name, str) or not name.strip():
        raise _fail(source, "course.name", "a non-empty string", name)

    points = _table(data.get("points", {}), source, "points")
    _unknown_keys(points, {"exercise", "prediction", "exercises", "predictions", "solution_shown"}, source, "points.")
    solution_shown = points.get("solution_shown", "flag")
    if solution_shown not in SOLUTION_SHOWN:
        raise _fail(source, "points.solution_shown", f"one of {', '.join(SOLUTION_SHOWN)}", solution_shown)
    exercise_points = _number(points.get("exercise", 1.0), source, "points.exercise")
    prediction_points = _number(points.get("prediction", 0.0), source, "points.prediction")
    by_exercise = _points_table(points.get("exercises", {}), source, "points.exercises")
    by_prediction = _points_table(points.get("predictions", {}), source, "points.predictions")

    lessons = {}
    for lesson, entry in _table(data.get("lessons", {}), source, "lessons").items():
        if not LESSON.fullmatch(lesson):
            raise _fail(
                source, f"lessons.{lesson}", 'a two-digit lesson like 01 (quoted: [lessons."01"] or 01)', lesson
            )
        entry = _table(entry, source, f"lessons.{lesson}")
        _unknown_keys(entry, {"due", "policy"}, source, f"lessons.{lesson}.")
        due, policy = entry.get("due"), entry.get("policy")
        if policy is not None and policy not in POLICIES:
            raise _fail(source, f"lessons.{lesson}.policy", f"one of {', '.join(POLICIES)}", policy)
        lessons[lesson] = Lesson(
            lesson, None if due is None else parse_time(due, source=source, key=f"lessons.{lesson}.due"), policy
        )

    late_table = _table(data.get("late", {}), source, "late")
    _unknown_keys(late_table, {"policy", "per_day", "cap", "grace_minutes"}, source, "late.")
    policy = late_table.get("policy", "penalty")
    if policy not in POLICIES:
        raise _fail(source, "late.policy", f"one of {', '.join(POLICIES)}", policy)
    late = LatePolicy(
        policy=policy,
        per_day=_number(late_table.get("per_day", 0.1), source, "late.per_day", high=1.0),
        cap=_number(late_table.get("cap", 1.0), source, "late.cap", high=1.0),
        grace_minutes=_number(late_table.get("grace_minutes", 0), source, "late.grace_minutes"),
    )

    extensions: dict = {}
    for student, granted in _table(data.get("extensions", {}), source, "extensions").items():
        granted = _table(granted, source, f"extensions.{student}")
        for lesson, value in granted.items():
            key = f"extensions.{student}.{lesson}"
            if lesson not in lessons or lessons[lesson].due is None:
                raise _fail(source, key, "a lesson with a due date in [lessons]", lesson)
            if isinstance(value, int | float) and not isinstance(value, bool):
                days = _number(value, source, key, high=365)
                extensions.setdefault(student, {})[lesson] = lessons[lesson].due + dt.timedelta(days=days)
            else:
                extensions.setdefault(student, {})[lesson] = parse_time(value, source=source, key=key)
    submit = _table(data.get("submit", {}), source, "submit")
    _unknown_keys(submit, {"folder"}, source, "submit.")
    submit_folder = submit.get("folder")
    if submit_folder is not None and (not isinstance(submit_folder, str) or not submit_folder.strip()):
        raise _fail(source, "submit.folder", "a folder path (a non-empty string)", submit_folder)
    return Course(
        name=name.strip(),
        exercise_points=exercise_points,
        prediction_points=prediction_points,
        points_by_exercise=by_exercise,
        points_by_prediction=by_prediction,
        lessons=dict(sorted(lessons.items())),
        late=late,
        extensions=extensions,
        submit_folder=submit_folder,
        solution_shown=solution_shown,
        lti=_table(data.get("lti", {}), source, "lti"),
        source=source,
    )


def load(path) -> Course:
    """Read and validate the course file at ``path`` (TOML)."""
    if not isinstance(path, str | Path):
        raise TypeError(f"path: expected the course file's path (str or Path), got {type(path).__name__}")
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CourseFileError(f"{path}: cannot read the course file: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CourseFileError(f"{path.name}: not valid TOML: {exc}") from None
    return parse(data, source=path.name)
