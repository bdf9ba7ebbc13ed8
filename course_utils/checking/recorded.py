"""Recorded checks: the published student edition checks answers and names mistakes from data, not from code.

The engine calls the course's code on inputs it makes itself: the reference, the hand-written buggy versions,
the reference under a catalogue patch, the mutants it derives from the reference's source, the reference's
earlier steps, on the fixed cases and on the fresh cases it draws. ``scripts/record_checks.py`` runs every
exercise's check with recording on (on the reference, on its correct variants and on every buggy version, so
every path the engine takes is visited) and writes, per lesson, each such call as
(which callable, the RNG state, a digest of its inputs) -> its output, the cases, the fresh cases and the
exercise's words. In the published edition a lesson's ``exercises`` module is :func:`lesson`: its exercises'
reference and buggy versions are :class:`Recorded` look-ups into that data, so the student's kernel never holds
the code that computes an answer.

The hooks, one line each: :func:`routed` (``preparing.call``: every call of an answer on a case),
:func:`prepared` (``preparing.prepare``: which functions the reference went through), :func:`mutant_list`
(``mutations.finder``), :func:`steps` (``traces.earlier_steps``). With nothing recorded or replayed they only
call through.

An input never recorded (a later cell changed an input the check makes itself, or a path the recording did not
visit) raises :class:`NotRecorded`, whose words say so; where the engine tries a candidate mistake it is simply
not named.

Introduced in notebooks/00_start_here.ipynb (the published edition's checks read it).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib
import inspect
import io
import json
import zipfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from course_utils.checking import patches
from course_utils.checking.model import Exercise, KnownWrong, Prediction
from course_utils.checking.recorded_values import Unrecordable, decode, digest, encode, exception_type

__all__ = [
    "FORMAT",
    "NotRecorded",
    "Recorded",
    "Book",
    "recording",
    "routed",
    "prepared",
    "mutant_list",
    "steps",
    "data_folder",
    "save",
    "load",
    "lesson",
    "replaying",
    "guarded",
]

FORMAT = 1
"""The version of the data format; :func:`load` refuses another."""

_PATCHED_CODE = patches.patched(len, SimpleNamespace(name="probe")).__code__
_state = {"book": None, "last": None}  # the Book being recorded; the key of the last course call routed
_REPLAY: dict = {}  # exercise id -> (table, arrays) of a loaded lesson


class NotRecorded(LookupError):
    """The published edition has no recorded result for this call of the course's code."""


class Book:
    """What one recording run collects: per exercise a table (JSON-able), and the arrays the tables point at."""

    def __init__(self):
        self.tables: dict = {}
        self.arrays: list = []
        self.mutants: dict = {}  # id(mutant answer) -> (identity, the answer, kept alive)
        self.dropped: dict = {}  # exercise id -> why it cannot be recorded

    def table(self, exercise_id):
        return None if exercise_id in self.dropped else self.tables.get(exercise_id)


@contextlib.contextmanager
def recording(book: Book):
    """Record the course's calls into ``book`` for the block (one recording at a time)."""
    if _state["book"] is not None:
        raise RuntimeError("recording: a recording is already running in this process")
    _state["book"] = book
    try:
        yield book
    finally:
        _state["book"] = None


def replaying(exercise_id: str) -> bool:
    """True when ``exercise_id`` is checked from recorded data in this kernel."""
    return exercise_id in _REPLAY


# ---------------------------------------------------------------------------------------------
# which course callable a call runs, and its key
# ---------------------------------------------------------------------------------------------


def _identity(exercise, fn, book) -> str | None:
    """``"reference"``, ``"buggy:<id>"``, ``"patch:<name>"``, ``"mutant:<n>:<key>"``; None for anything else
    (the student's answer, a correct variant)."""
    if fn is exercise.reference:
        return "reference"
    for mid, buggy in exercise.buggy.items():
        if fn is buggy:
            return f"buggy:{mid}"
    if getattr(fn, "__code__", None) is _PATCHED_CODE:
        cells = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__), strict=True))
        if cells.get("reference") is exercise.reference:
            return f"patch:{cells['patch'].name}"
        return None
    if isinstance(fn, Recorded):
        return fn.identity
    if book is not None:
        found = book.mutants.get((exercise.id, id(fn)))
        if found is not None and found[1] is fn:
            return found[0]
    return None


def _rng() -> str:
    _, keys, pos, *_ = np.random.get_state()  # noqa: NPY002  (read only: the state the check seeded)
    return hashlib.sha256(keys.tobytes() + str(pos).encode()).hexdigest()[:12]


def _key(identity: str, args) -> str:
    return f"{identity}|{_rng()}|{digest(tuple(args))}"


def _changed(args, after, arrays) -> dict:
    """The top-level arrays and tensors of ``args`` that the call changed in place: index -> new value."""
    found = {}
    for i, (before, now) in enumerate(zip(args, after, strict=False)):
        if hasattr(now, "shape") and hasattr(now, "dtype"):
            with contextlib.suppress(Unrecordable):
                if digest(before) != digest(now):
                    found[str(i)] = encode(now, arrays)
    return found


def _record(table, book, key, args, copies, run):
    into = [] if copies is None else copies
    before = len(into)
    try:
        out = run(into)
    except Exception as exc:
        table["calls"][key] = {"raised": [f"{type(exc).__module__}:{type(exc).__qualname__}", str(exc)]}
        raise
    entry = {}
    with contextlib.suppress(Unrecordable):
        arrays: list = []
        entry = {"ok": encode(out, arrays)}
        if len(into) > before:
            entry["changed"] = _changed(args, into[before], arrays)
        entry = json.loads(json.dumps(entry))  # a plain copy, before the arrays are moved into the book
        _shift(entry, len(book.arrays))
        book.arrays.extend(arrays)
    if entry:
        table["calls"][key] = entry
    return out


def _shift(data, offset):
    """Renumber the array indices of ``data`` (written against a list of its own) by ``offset``, in place."""
    if isinstance(data, list):
        for item in data:
            _shift(item, offset)
    elif isinstance(data, dict):
        for tag in ("a", "s", "t"):
            if tag in data and isinstance(data[tag], int):
                data[tag] += offset
        for k, v in data.items():
            if k not in ("a", "s", "t"):
                _shift(v, offset)


def _replayed(exercise_id, key, args, copies, words):
    table, arrays = _REPLAY[exercise_id]
    entry = table["calls"].get(key)
    if entry is None:
        raise NotRecorded(words)
    if copies is not None:
        made = copy.deepcopy(tuple(args))
        for i, value in entry.get("changed", {}).items():
            _put(made[int(i)], decode(value, arrays))
        copies.append(made)
    if "raised" in entry:
        name, message = entry["raised"]
        kind = exception_type(name)
        try:
            exc = kind(message)
        except Exception:
            exc = RuntimeError(message)
        raise exc
    return decode(entry["ok"], arrays)


def _put(target, value):
    if isinstance(target, np.ndarray):
        np.copyto(target, value)
    elif hasattr(target, "copy_"):
        with __import__("torch").no_grad():
            target.copy_(value)


_MISSED = (
    "the published edition has no recorded result of the course's answer for this input (did a later cell change "
    "a value the check makes itself?). Run the lesson's cells from the top and check again"
)


def routed(exercise, answer, args, copies, run):
    """Run ``run(copies)`` (one call of ``answer`` on a copy of ``args``), recording or replaying it when
    ``answer`` is the course's code. The hook in ``preparing.call``."""
    book = _state["book"]
    replay = exercise.id in _REPLAY
    if book is None and not replay:
        return run(copies)
    identity = _identity(exercise, answer, book)
    if identity is None:
        return run(copies)
    try:
        key = _key(identity, args)
    except Unrecordable:
        if replay:
            raise NotRecorded(_MISSED) from None
        return run(copies)
    _state["last"] = key
    if replay:
        return _replayed(exercise.id, key, args, copies, f"{exercise.title}: {_MISSED}.")
    table = book.table(exercise.id)
    if table is None:
        return run(copies)
    return _record(table, book, key, args, copies, run)


def guarded(judge, verdict):
    """``judge()``, or, when the published edition's data lacks a call the check needed, ``verdict("crashed",
    words)`` whose words say so (the hook in ``checks.check``): never a traceback from the check itself."""
    try:
        return judge()
    except NotRecorded as exc:
        return verdict("crashed", f"the check could not finish: {exc}")


# ---------------------------------------------------------------------------------------------
# the other hooks
# ---------------------------------------------------------------------------------------------


def _code_name(code) -> list:
    path = Path(code.co_filename).as_posix()
    for anchor in ("/site-packages/", "/course_utils/"):
        if anchor in path:
            path = anchor.strip("/") + "/" + path.split(anchor, 1)[1]
            break
    else:
        path = Path(path).name
    return [path, code.co_qualname]


class _CodeNames(set):
    """The code objects the reference touched, matched by file and qualified name (replayed, no code runs)."""

    def __init__(self, names, codes=()):
        super().__init__(codes)
        self.names = {tuple(n) for n in names}

    def __contains__(self, code):
        return super().__contains__(code) or (hasattr(code, "co_qualname") and tuple(_code_name(code)) in self.names)


def prepared(exercise, found):
    """The hook at the end of ``preparing.prepare``: record which functions the reference went through, or put
    back, when replaying, what it went through when it was recorded. Returns ``found``."""
    book = _state["book"]
    if book is not None and book.table(exercise.id) is not None:
        table = book.table(exercise.id)
        table["codes"] = sorted(_code_name(c) for c in found.codes if hasattr(c, "co_qualname"))
        table["names"] = sorted(n for n in found.names if isinstance(n, str))
    elif exercise.id in _REPLAY:
        table, _ = _REPLAY[exercise.id]
        found.codes = _CodeNames(table.get("codes", ()), found.codes)
        found.names = set(found.names) | set(table.get("names", ()))
    return found


def mutant_list(exercise, compute, make):
    """The hook in ``mutations.finder``: the mutants of the reference, recorded by key and words (their
    answers become look-ups when replaying). ``make(key, words, misconception, answer)`` builds one."""
    book = _state["book"]
    if exercise.id in _REPLAY:
        table, _ = _REPLAY[exercise.id]
        return [
            make(key, words, mid, Recorded(exercise.id, f"mutant:{n}:{key}", exercise.function))
            for n, (key, words, mid) in enumerate(table.get("mutants", ()))
        ]
    found = compute()
    table = book.table(exercise.id) if book is not None else None
    if table is not None:
        table["mutants"] = [[m.key, m.words, m.misconception] for m in found]
        for n, m in enumerate(found):
            book.mutants[(exercise.id, id(m.answer))] = (f"mutant:{n}:{m.key}", m.answer)
    return found


def steps(run, compute):
    """The hook in ``traces.earlier_steps``: the reference's earlier steps on the call ``run`` makes, recorded
    under that call's key (replayed: ``run()`` finds the key, the steps come from the data)."""
    book = _state["book"]
    _state["last"] = None
    if book is None and not _REPLAY:
        return compute()
    if book is None:
        with contextlib.suppress(Exception):
            run()
        key = _state["last"]
        for table, arrays in _REPLAY.values():
            if key is not None and key in table.get("steps", {}):
                return decode(table["steps"][key], arrays)
        return compute()  # not a recorded exercise's reference: traced as usual
    found = compute()
    key = _state["last"]
    if key is not None:
        for table in book.tables.values():
            if key in table["calls"]:
                with contextlib.suppress(Unrecordable):
                    arrays: list = []
                    data = json.loads(json.dumps(encode(found, arrays)))
                    _shift(data, len(book.arrays))
                    book.arrays.extend(arrays)
                    table.setdefault("steps", {})[key] = data
                break
    return found


# ---------------------------------------------------------------------------------------------
# the recorded callables of a replayed exercise
# ---------------------------------------------------------------------------------------------


class Recorded:
    """A course callable replaced by look-ups into recorded data (the reference, a buggy version, a mutant).

    Called directly (``checks.check`` hands it back when an answer did not pass), it answers the inputs the
    check recorded and says so for any other.
    """

    def __init__(self, exercise_id: str, identity: str, name: str, signature=None):
        self.exercise_id = exercise_id
        self.identity = identity
        self.__name__ = self.__qualname__ = name
        if signature is not None:
            self.__signature__ = signature

    def __repr__(self):
        return f"<recorded {self.__name__} of {self.exercise_id}: the course's answer as data, no code>"

    def __call__(self, *args):
        try:
            key = _key(self.identity, args)
        except Unrecordable:
            key = None
        words = (
            f"{self.__name__} here is the course's answer as recorded data (the published edition ships no "
            "solution code): it knows the check's own inputs only. Make your answer pass its check, then run the "
            "cells after it again"
        )
        if key is None:
            raise NotRecorded(words)
        return _replayed(self.exercise_id, key, args, None, words)


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
            raise NotRecorded(f"{self.exercise_id}: no fresh cases were recorded at sizes {sizes}")
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
        data = json.loads(json.dumps(encode(list(made), arrays)))
        _shift(data, len(self.book.arrays))
        self.book.arrays.extend(arrays)
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


def _resolve(name: str):
    module, _, qualname = name.partition(":")
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


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
        reference=Recorded(exercise_id, "reference", meta["function"], signature),
        buggy={mid: Recorded(exercise_id, f"buggy:{mid}", meta["function"], signature) for mid in table["buggy"]},
        driver=_resolve(table["driver"]) if table["driver"] else None,
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


# ---------------------------------------------------------------------------------------------
# files: one JSON and one .npz per lesson, with their sha256 digests
# ---------------------------------------------------------------------------------------------


def data_folder() -> Path:
    """Where the published edition keeps the recorded checks: ``data/checks`` beside the package."""
    return Path(__file__).resolve().parents[2] / "data" / "checks"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def save(folder: Path, lesson_id: str, book: Book, predictions: list) -> list[Path]:
    """Write lesson ``lesson_id``'s recorded checks into ``folder``; return the files written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / f"lesson_{lesson_id}"
    tables = {k: v for k, v in book.tables.items() if k not in book.dropped}
    document = {
        "format": FORMAT,
        "lesson": lesson_id,
        "order": list(tables),
        "exercises": tables,
        "predictions": predictions,
    }
    json_path = stem.with_suffix(".json")
    json_path.write_text(json.dumps(document, sort_keys=True, separators=(",", ":")), encoding="utf-8")
    npz_path = stem.with_suffix(".npz")
    _write_npz(npz_path, book.arrays)
    sums = folder / "SHA256SUMS"
    lines = [line for line in (sums.read_text().splitlines() if sums.exists() else []) if stem.name not in line]
    lines += [f"{_sha256(p)}  {p.name}" for p in (json_path, npz_path)]
    sums.write_text("\n".join(sorted(lines, key=lambda s: s.split()[-1])) + "\n", encoding="utf-8")
    return [json_path, npz_path, sums]


def _write_npz(path: Path, arrays: list) -> None:
    """``np.savez_compressed``, byte for byte the same on every run (no time stamps): a publish that changed
    nothing commits nothing."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for i, array in enumerate(arrays):
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asanyarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"a{i}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, buffer.getvalue())


class _Arrays:
    """The arrays of a lesson's ``.npz``, by index, read lazily (``allow_pickle=False``: data, never code)."""

    def __init__(self, path: Path):
        self.file = np.load(path, allow_pickle=False)

    def __getitem__(self, i):
        return self.file[f"a{i}"]


def load(folder: Path, lesson_id: str) -> tuple[dict, _Arrays]:
    """The recorded document and arrays of lesson ``lesson_id``, after checking both files' sha256 digests."""
    folder = Path(folder)
    sums = folder / "SHA256SUMS"
    if not sums.is_file():
        raise FileNotFoundError(f"{folder}: no SHA256SUMS; the recorded checks are made by scripts/record_checks.py")
    expected = dict(reversed(line.split(None, 1)) for line in sums.read_text().splitlines() if line.strip())
    expected = {name.strip(): sha for name, sha in expected.items()}
    for name in (f"lesson_{lesson_id}.json", f"lesson_{lesson_id}.npz"):
        path = folder / name
        if name not in expected:
            raise ValueError(f"{sums}: expected a digest for {name} but it lists none")
        got = _sha256(path)
        if got != expected[name]:
            raise ValueError(f"{path}: expected sha256 {expected[name]} (SHA256SUMS) but the file has {got}")
    document = json.loads((folder / f"lesson_{lesson_id}.json").read_text(encoding="utf-8"))
    if document.get("format") != FORMAT:
        raise ValueError(f"{folder}: expected recorded checks of format {FORMAT} but got {document.get('format')!r}")
    return document, _Arrays(folder / f"lesson_{lesson_id}.npz")


def lesson(lesson_id: str, folder: Path | None = None) -> tuple[list, list]:
    """``(EXERCISES, PREDICTIONS)`` of a lesson, replayed from its recorded data (the published edition's
    ``course_utils/lessons/lesson_NN/exercises.py`` is this one call)."""
    document, arrays = load(folder or data_folder(), lesson_id)
    exercises = []
    for exercise_id, table in document["exercises"].items():
        _REPLAY[exercise_id] = (table, arrays)
        exercises.append(_exercise(exercise_id, table, arrays))
    order = document.get("order", [e.id for e in exercises])
    exercises.sort(key=lambda e: order.index(e.id) if e.id in order else len(order))
    return exercises, [_prediction(p) for p in document["predictions"]]
