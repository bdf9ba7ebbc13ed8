"""A replayed exercise and prediction: the words and settings as data, the code replaced by recorded look-ups.

:func:`exercise_data` and :func:`prediction_data` write what an exercise or a prediction says (never its code);
:func:`lesson` reads a lesson back as ``(EXERCISES, PREDICTIONS)`` whose references and buggy versions are
:class:`~course_utils.checking.recorded.Recorded` look-ups, whose cases and fresh cases are the recorded ones.
The published edition's ``course_utils/lessons/lesson_NN/exercises.py`` is :func:`lesson` and :func:`exports`.

Introduced in notebooks/00_start_here.ipynb (the published edition's checks read it).
"""

from __future__ import annotations

import contextlib
import inspect
import json
from pathlib import Path

from course_utils.checking import recorded, recorded_files
from course_utils.checking.model import Exercise, KnownWrong, Prediction
from course_utils.checking.recorded_values import Unrecordable, decode, encode, resolve

__all__ = ["Recording", "exercise_data", "prediction_data", "lesson", "exports"]


class _Data:
    """``make_cases()`` or ``fresh(**sizes)`` replayed: the recorded cases, decoded afresh on each call."""

    def __init__(self, exercise_id, table, arrays, field, signature=None):
        self.exercise_id, self.table, self.arrays, self.field = exercise_id, table, arrays, field
        self.__name__ = field
        if signature is not None:
            self.__signature__ = signature

    def __call__(self, **sizes):
        if self.field == "make_cases":
            return decode(self.table["cases"], self.arrays)
        found = self.table["fresh"].get(json.dumps(sizes, sort_keys=True))
        if found is None:
            raise recorded.NotRecorded(f"{self.exercise_id}: no fresh cases were recorded at sizes {sizes}")
        return decode(found, self.arrays)


class Recording:
    """``make_cases`` or ``fresh`` of an exercise being recorded: calls through and stores what it returned."""

    def __init__(self, fn, table, book, field):
        self.fn, self.table, self.book, self.field = fn, table, book, field
        self.__name__ = getattr(fn, "__name__", field)
        self.__signature__ = inspect.signature(fn)

    def __call__(self, **sizes):
        made = self.fn(**sizes)
        arrays: list = []
        data = recorded.store(self.book, encode(list(made), arrays), arrays)
        if self.field == "make_cases":
            self.table["cases"] = data
        else:
            self.table.setdefault("fresh", {})[json.dumps(sizes, sort_keys=True)] = data
        return made


def _signature_data(fn) -> list:
    out = []
    for p in inspect.signature(fn).parameters.values():
        item = [p.name, int(p.kind)]
        if p.default is not p.empty:
            with contextlib.suppress(Unrecordable):
                item.append(encode(p.default, []))  # defaults are plain values (an axis, a window)
        out.append(item)
    return out


def _signature(data) -> inspect.Signature:
    params = []
    for item in data:
        kind = inspect._ParameterKind(item[1])
        default = decode(item[2], []) if len(item) > 2 else inspect.Parameter.empty
        params.append(inspect.Parameter(item[0], kind, default=default))
    return inspect.Signature(params)


_PLAIN = (
    "section",
    "title",
    "function",
    "reveal",
    "atol",
    "rtol",
    "time_limit",
    "noun",
    "constraint",
)
_TUPLES = ("hints", "output_names", "allowed", "forbidden", "misconceptions")


def exercise_data(exercise) -> dict:
    """The words and settings of ``exercise`` (everything but code) as JSON-able data; raises
    :class:`~course_utils.checking.recorded_values.Unrecordable` for what the data cannot hold."""
    if inspect.isclass(exercise.reference):
        raise Unrecordable(f"{exercise.id}: a class exercise is not recorded yet")
    driver = None
    if exercise.driver is not None:
        module = exercise.driver.__module__
        if module.endswith(".exercises"):
            raise Unrecordable(f"{exercise.id}: its driver lives in the exercises module that the data replaces")
        driver = f"{module}:{exercise.driver.__qualname__}"
    meta = {name: getattr(exercise, name) for name in _PLAIN}
    meta.update({name: list(getattr(exercise, name)) for name in _TUPLES})
    meta["returns"] = encode(exercise.returns, [])
    return {
        "meta": meta,
        "driver": driver,
        "signature": _signature_data(exercise.reference),
        "fresh_signature": _signature_data(exercise.fresh) if exercise.fresh is not None else None,
        "buggy": sorted(exercise.buggy),
        "calls": {},
    }


def _exercise(exercise_id, table, arrays) -> Exercise:
    meta = dict(table["meta"])
    for name in _TUPLES:
        meta[name] = tuple(meta[name])
    meta["returns"] = decode(meta["returns"], [])
    signature = _signature(table["signature"])
    fresh = None
    if table.get("fresh_signature") is not None:
        fresh = _Data(exercise_id, table, arrays, "fresh", _signature(table["fresh_signature"]))
    return Exercise(
        id=exercise_id,
        make_cases=_Data(exercise_id, table, arrays, "make_cases"),
        reference=recorded.Recorded(exercise_id, "reference", meta["function"], signature),
        buggy={
            mid: recorded.Recorded(exercise_id, f"buggy:{mid}", meta["function"], signature) for mid in table["buggy"]
        },
        driver=resolve(table["driver"]) if table["driver"] else None,
        fresh=fresh,
        **meta,
    )


def prediction_data(prediction) -> dict:
    arrays: list = []
    data = {
        "id": prediction.id,
        "question": prediction.question,
        "kind": prediction.kind,
        "answer": encode(prediction.value(), arrays),
        "choices": encode(tuple(prediction.choices), arrays),
        "rtol": prediction.rtol,
        "atol": prediction.atol,
        "section": prediction.section,
        "known_wrong": [[encode(k.value, arrays), k.id, k.why] for k in prediction.known_wrong],
        "rethink": prediction.rethink,
        "magnitude": prediction.magnitude,
    }
    if arrays:
        raise Unrecordable(f"{prediction.id}: a prediction's answer is a number, a shape or a choice, not an array")
    return data


def _prediction(data) -> Prediction:
    fields = dict(data)
    fields["answer"] = decode(fields["answer"], [])
    fields["choices"] = decode(fields["choices"], [])
    fields["known_wrong"] = tuple(KnownWrong(decode(v, []), mid, why) for v, mid, why in fields["known_wrong"])
    return Prediction(**fields)


def exports(lesson_id: str, exercises: list) -> dict:
    """The public buggy versions of a replayed lesson's exercises module, by name (for ``course_utils.bugs``)."""
    document, _ = recorded_files.load(recorded_files.data_folder(), lesson_id)
    by_id = {e.id: e for e in exercises}
    return {name: by_id[eid].buggy[mid] for name, (eid, mid) in document.get("exports", {}).items() if eid in by_id}


def lesson(lesson_id: str, folder: Path | None = None) -> tuple[list, list]:
    """``(EXERCISES, PREDICTIONS)`` of a lesson, replayed from its recorded data (the published edition's
    ``course_utils/lessons/lesson_NN/exercises.py`` is this call, and :func:`exports`)."""
    folder = folder or recorded_files.data_folder()
    document, arrays = recorded_files.load(folder, lesson_id)
    if (Path(folder) / f"lesson_{lesson_id}_handed.json").is_file():
        calls, handed_arrays = recorded_files.load(folder, f"{lesson_id}_handed")
        for exercise_id, table in calls["exercises"].items():
            recorded.register_handed(exercise_id, table["calls"], handed_arrays)
    exercises = []
    for exercise_id, table in document["exercises"].items():
        recorded.register(exercise_id, table, arrays)
        exercises.append(_exercise(exercise_id, table, arrays))
    order = document.get("order", [e.id for e in exercises])
    exercises.sort(key=lambda e: order.index(e.id) if e.id in order else len(order))
    return exercises, [_prediction(p) for p in document["predictions"]]
