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
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from course_utils.checking import patches
from course_utils.checking.recorded_values import Unrecordable, decode, digest, encode, exception_type

__all__ = [
    "NotRecorded",
    "Recorded",
    "Book",
    "recording",
    "routed",
    "prepared",
    "mutant_list",
    "steps",
    "replaying",
    "guarded",
    "probed",
    "handed",
    "record_handed",
    "take_handed",
    "register",
    "register_handed",
    "store",
]

_PATCHED_CODE = patches.patched(len, SimpleNamespace(name="probe")).__code__
_state = {"book": None, "last": None, "current": None}  # the Book being recorded; the key of the last course
# call routed; the exercise whose case runs now (a driver may call the course's answer itself)
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


def _logs(args) -> list:
    """The logs the arguments carry (``constraints.Logged`` arrays write each product they take part in)."""
    found = []
    for a in args:
        # constraints.Logged keeps its log as ``_log`` (read here by attribute, nothing imported)
        log = getattr(a, "_log", None) if isinstance(a, np.ndarray) and type(a) is not np.ndarray else None
        if isinstance(log, list) and all(log is not f for f in found):
            found.append(log)
    return found


def _record(table, book, key, args, copies, run):
    into = [] if copies is None else copies
    before = len(into)
    logs = _logs(args)
    sizes = [len(log) for log in logs]
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
        if logs:  # what the call wrote into its arguments' logs, written again when replayed
            entry["logs"] = [encode(log[n:], arrays) for log, n in zip(logs, sizes, strict=True)]
        entry = store(book, entry, arrays)
    old = table["calls"].get(key)
    if entry and old is not None and "ok" in old:  # the same call again (another check's path): keep the first,
        if "logs" in entry and "logs" not in old:  # with the logs a later call's arguments carried
            old["logs"] = entry["logs"]
    elif entry:
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


def store(book: Book, encoded, arrays: list):
    """``encoded`` (written against its own ``arrays``) as it goes into ``book``: a plain copy whose array indices
    point into ``book.arrays``, to which ``arrays`` are added."""
    data = json.loads(json.dumps(encoded))
    _shift(data, len(book.arrays))
    book.arrays.extend(arrays)
    return data


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
    for log, written in zip(_logs(args), entry.get("logs", ()), strict=False):
        log.extend(decode(written, arrays))
    if "raised" in entry:
        raise _exception(entry["raised"])
    return decode(entry["ok"], arrays)


def _exception(raised) -> BaseException:
    """The exception a recorded call raised: its type (RuntimeError if it cannot be rebuilt) and its words."""
    name, message = raised
    try:
        return exception_type(name)(message)
    except Exception:
        return RuntimeError(message)


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
    outer, _state["current"] = _state["current"], exercise
    try:
        return _routed(exercise, answer, args, copies, run, book, replay)
    finally:
        _state["current"] = outer


def _routed(exercise, answer, args, copies, run, book, replay):
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


def probed(fn, args, kwargs, run):
    """The hook in ``runner.Probe``: a call a driver makes of the course's answer itself (not through
    :func:`routed`), recorded as ``reference~direct`` with what it changed in its arguments in place."""
    book, exercise = _state["book"], _state["current"]
    if book is None or exercise is None or kwargs or fn is not exercise.reference:
        return run()
    table = book.table(exercise.id)
    try:
        key = _key("reference~direct", args)
        before = [digest(a) if hasattr(a, "shape") else None for a in args]
    except Unrecordable:
        return run()
    if table is None:
        return run()
    try:
        out = run()
    except Exception as exc:
        table["calls"][key] = {"raised": [f"{type(exc).__module__}:{type(exc).__qualname__}", str(exc)]}
        raise
    with contextlib.suppress(Unrecordable):
        arrays: list = []
        entry = {"ok": encode(out, arrays), "in_place": {}}
        for i, (was, now) in enumerate(zip(before, args, strict=True)):
            if was is not None and digest(now) != was:
                entry["in_place"][str(i)] = encode(now, arrays)
        entry = store(book, entry, arrays)
        table["calls"][key] = entry
    return out


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


def _import_touched(names) -> None:
    """Import the modules the reference went through when it was recorded: a catalogue patch acts only on a module
    already imported, and the replayed reference imports nothing."""
    for path, _ in names:
        if path.startswith("course_utils/") and not path.startswith("course_utils/checking/"):
            module = path[: -len(".py")].replace("/", ".").removesuffix(".__init__")
        elif path.startswith("site-packages/") and path.count("/") >= 2:
            module = path.split("/")[1]
        else:
            continue
        if module.endswith(".exercises") or module in sys.modules:
            continue
        with contextlib.suppress(Exception):
            importlib.import_module(module)


def prepared(exercise, found):
    """The hook at the end of ``preparing.prepare``: record which functions the reference went through, or put
    back, when replaying, what it went through when it was recorded. Returns ``found``."""
    book = _state["book"]
    if book is not None and book.table(exercise.id) is not None:
        table = book.table(exercise.id)
        # the engine's own frames (this recorder's included) are no step of the reference: left out, so the data
        # does not change when the engine does
        names = (_code_name(c) for c in found.codes if hasattr(c, "co_qualname"))
        table["codes"] = sorted(n for n in names if not n[0].startswith("course_utils/checking/"))
        table["names"] = sorted(n for n in found.names if isinstance(n, str))
    elif exercise.id in _REPLAY:
        table, _ = _REPLAY[exercise.id]
        _import_touched(table.get("codes", ()))
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
                    table.setdefault("steps", {})[key] = store(book, encode(found, arrays), arrays)
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

    def __call__(self, *args, **kwargs):
        words = (
            f"{self.__name__} here is the course's answer as recorded data (the published edition ships no "
            "solution code): it knows the check's own inputs only. Make your answer pass its check, then run the "
            "cells after it again"
        )
        table, arrays = _REPLAY[self.exercise_id]
        lesson_calls = _REPLAY_HANDED.get(self.exercise_id)
        if lesson_calls is not None:  # a call the untouched lesson makes of what its check handed back
            with contextlib.suppress(Unrecordable):
                entry = lesson_calls[0].get(_lesson_key(args, kwargs))
                if entry is not None:
                    return decode(entry["ok"], lesson_calls[1])
        try:
            key = _key(self.identity, args)
        except Unrecordable:
            key = None
        if key is None or kwargs:
            raise NotRecorded(words)
        direct = table["calls"].get(_key(f"{self.identity}~direct", args))
        if direct is not None:  # a driver's own call: what it changed in place is changed again
            for i, value in direct.get("in_place", {}).items():
                _put(args[int(i)], decode(value, arrays))
            if "raised" in direct:
                raise _exception(direct["raised"])
            return decode(direct["ok"], arrays)
        return _replayed(self.exercise_id, key, args, None, words)


_HANDED: dict = {"book": None}  # the lesson's own calls of what checks hand back, while a lesson is recorded
_REPLAY_HANDED: dict = {}  # exercise id -> (calls, arrays): those calls, replayed


def _lesson_key(args, kwargs) -> str:
    return f"reference~lesson|{digest((tuple(args), dict(sorted(kwargs.items()))))}"  # no RNG state: a lesson cell may be run again, out of order


def record_handed() -> None:
    """Record, from now on in this kernel, each call the lesson makes of the course's answer that a check hands
    back (the untouched edition's path): the published edition then answers those calls from data."""
    _HANDED["book"] = Book()


def handed(exercise, returned):
    """The hook in ``checks.check``: what it hands back, wrapped to record the lesson's calls of it while
    :func:`record_handed` is on; else ``returned`` itself."""
    book = _HANDED["book"]
    if book is None or returned is not exercise.reference or inspect.isclass(returned):
        return returned
    book.tables.setdefault(exercise.id, {"calls": {}})
    return _HandedRecorder(exercise.id, returned, book)


class _HandedRecorder:
    def __init__(self, exercise_id, fn, book):
        self.exercise_id, self.fn, self.book = exercise_id, fn, book
        self.__name__ = getattr(fn, "__name__", "answer")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__signature__ = inspect.signature(fn)

    def __call__(self, *args, **kwargs):
        out = self.fn(*args, **kwargs)
        with contextlib.suppress(Unrecordable):
            arrays: list = []
            encoded, key = {"ok": encode(out, arrays)}, _lesson_key(args, kwargs)
            self.book.tables[self.exercise_id]["calls"][key] = store(self.book, encoded, arrays)
        return out


def take_handed() -> Book:
    """The lesson calls :func:`record_handed` collected (an empty book if none); recording them stops."""
    book = _HANDED["book"] or Book()
    _HANDED["book"] = None
    return book


def register(exercise_id: str, table: dict, arrays) -> None:
    """Check ``exercise_id`` from now on from its recorded ``table`` (and the arrays it points at)."""
    _REPLAY[exercise_id] = (table, arrays)


def register_handed(exercise_id: str, calls: dict, arrays) -> None:
    """Answer the lesson's own calls of what the check of ``exercise_id`` hands back from ``calls``."""
    _REPLAY_HANDED[exercise_id] = (calls, arrays)
