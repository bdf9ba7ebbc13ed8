"""The check log: one JSON record per check, prediction, hint and solution shown, sent to every sink.

A record (schema ``v: 2``)::

    {"v": 2, "event": "check", "exercise": "01.softmax_along", "lesson": "01", "attempt": 1,
     "status": "passed", "misconception": null, "detail": "...", "time": "2026-11-24T12:00:00Z",
     "session": "3f2a..."}

``event`` is ``"check"``, ``"predict"``, ``"hint"`` or ``"solution"``; a check that named a mistake by its relation to the right
output adds ``relation`` (:mod:`course_utils.checking.relations`); a prediction adds ``prediction`` (its repr, at most
200 characters) and ``known_wrong``, and, once answered, ``first_try`` (true for the answer that counts: the
first) and ``correct`` (``held: true`` when a later try before the reveal was judged for the log only); a hint adds ``level`` (and ``"explicit": true`` when a cell asked for
that level: the lesson showing a hint, not the student spending one); a ``"solution"`` record (status ``"shown"``,
``detail`` says where the code came from) is the student asking ``checks.solution("NN.name")`` for an exercise's
whole solution::

    {"v": 2, "event": "solution", "exercise": "02.padding_mask", "lesson": "02", "attempt": 1, "status": "shown",
     "detail": "solution shown, from the instructor edition, notebooks/02_masking.ipynb", "time": "...",
     "session": "3f2a..."}

``attempt`` counts this event for this
exercise within the log file (or within this kernel when no file is set). ``session`` is one random id per
kernel. ``detail`` is one line of at most 500 characters.

The sinks: the file named by ``COURSE_CHECK_LOG`` (one line appended per record) when it is set, and
``course_utils.hub_client.send(record)`` when that module imports (on a JupyterHub). Neither can make a
check raise: a sink that fails is reported in one line, once.

Introduced in notebooks/00_start_here.ipynb.
"""

from __future__ import annotations

import datetime
import importlib
import json
import os
import secrets

from course_utils.checking.compare import shorten

__all__ = ["SCHEMA_VERSION", "SESSION", "MAX_DETAIL", "build", "write", "attempts_so_far"]

SCHEMA_VERSION = 2
SESSION = secrets.token_hex(8)
"""One random id per kernel process."""
MAX_DETAIL = 500

_kernel_counts: dict = {}  # (event, exercise) -> count, when there is no log file
_file_counts: dict = {}  # path -> (size when counted, {(event, exercise): count})
_hub = {"module": None, "tried": False}
_reported: set = set()


def _count_file(path: str) -> dict:
    counts: dict = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and isinstance(record.get("exercise"), str):
                    key = (record.get("event", "check"), record["exercise"])  # v1 lines are checks
                    counts[key] = counts.get(key, 0) + 1
    except OSError:
        pass
    return counts


def attempts_so_far(event: str, exercise: str) -> int:
    """How many records of this event and exercise the log already holds (this kernel's, without a file)."""
    path = os.environ.get("COURSE_CHECK_LOG")
    if not path:
        return _kernel_counts.get((event, exercise), 0)
    try:
        size = os.path.getsize(path)
    except OSError:
        size = -1
    known = _file_counts.get(path)
    if known is None or known[0] != size:  # first use, or another process wrote to it
        known = (size, _count_file(path))
        _file_counts[path] = known
    return known[1].get((event, exercise), 0)


def build(event: str, exercise: str, status: str, **fields) -> dict:
    """One record, with ``attempt`` counted and ``detail`` cut to one line of at most 500 characters."""
    record = {
        "v": SCHEMA_VERSION,
        "event": event,
        "exercise": exercise,
        "lesson": exercise.split(".", 1)[0],
        "attempt": attempts_so_far(event, exercise) + 1,
        "status": status,
    }
    record.update(fields)
    if "detail" in record:
        record["detail"] = shorten(record["detail"], MAX_DETAIL)
    record["time"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    record["session"] = SESSION
    return record


def _say_once(key: str, message: str) -> None:
    if key not in _reported:
        _reported.add(key)
        print(message)


def _hub_client():
    if not _hub["tried"]:
        _hub["tried"] = True
        try:
            _hub["module"] = importlib.import_module("course_utils.hub_client")
        except Exception:  # not installed here, or broken: the file sink still works
            _hub["module"] = None
    return _hub["module"]


def write(record: dict) -> None:
    """Send ``record`` to every sink. Never raises."""
    key = (record["event"], record["exercise"])
    path = os.environ.get("COURSE_CHECK_LOG")
    if path:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(line)  # one write of the whole line
                f.flush()
            size, counts = _file_counts.get(path, (-1, {}))
            counts[key] = counts.get(key, 0) + 1
            try:
                _file_counts[path] = (os.path.getsize(path), counts)
            except OSError:
                _file_counts.pop(path, None)
        except OSError as exc:
            _say_once(f"file {path}", f"(could not append to COURSE_CHECK_LOG={path!r}: {exc})")
    else:
        _kernel_counts[key] = _kernel_counts.get(key, 0) + 1
    hub = _hub_client()
    send = getattr(hub, "send", None) if hub is not None else None
    if send is not None:
        try:
            send(dict(record))
        except Exception as exc:  # the hub client must not raise; if it does, say so once
            _say_once("hub", f"(could not send the check to the hub: {type(exc).__name__})")
