"""Submissions as files: every submission kept, the current one per lesson, and the folder ``make grade`` reads.

A submissions folder (a laptop's ``COURSE_SUBMIT_DIR``, a shared drive the instructor collects) holds::

    <root>/<student>/<NN>/<received>-<sha256[:12]>.ipynb      the frozen copy, never overwritten
    <root>/<student>/<NN>/<received>-<sha256[:12]>.json       its receipt (student, lesson, notebook, received, sha256, bytes)

:func:`save` adds one; :func:`receipts` lists them; :func:`choose` picks the one that counts (the newest on time,
else the newest); :func:`export` writes the folder ``make grade`` reads, ``<out>/submissions/<student>/NN_*.ipynb``,
with ``<out>/manifest.json`` (every chosen submission's time, digest and late days). The class-report service
keeps its submissions in its database instead and exports through the same :func:`export`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = [
    "MAX_NOTEBOOK_BYTES",
    "Receipt",
    "check_student",
    "choose",
    "export",
    "grading_name",
    "receipts",
    "save",
    "utc_now",
]

MAX_NOTEBOOK_BYTES = 8 * 2**20  # a submitted notebook, outputs included
_NOTEBOOK = re.compile(r"(\d\d)_[A-Za-z0-9_.-]{1,100}\.ipynb")
_STAMP = "%Y%m%dT%H%M%S%fZ"


@dataclass(frozen=True)
class Receipt:
    """What was received: who, which lesson, the notebook's file name, when (UTC, ISO), its sha256 and size."""

    student: str
    lesson: str
    notebook: str
    received: str
    sha256: str
    bytes: int

    @property
    def time(self) -> dt.datetime:
        return dt.datetime.fromisoformat(self.received)

    def as_dict(self) -> dict:
        return asdict(self)


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def check_student(student) -> str:
    """A student name usable as a folder name: printable, no '/', not hidden, at most 100 characters."""
    if not isinstance(student, str):
        raise TypeError(f"student: expected a hub user name (str), got {type(student).__name__}")
    if not (0 < len(student) <= 100) or not student.isprintable() or "/" in student or student.startswith("."):
        raise ValueError(
            f"student: expected a printable name without '/' that does not start with '.', got {student!r:.120}"
        )
    return student


def _check_lesson(lesson) -> str:
    if not isinstance(lesson, str) or not re.fullmatch(r"\d\d", lesson):
        raise ValueError(f"lesson: expected a two-digit lesson like '01', got {lesson!r:.40}")
    return lesson


def grading_name(lesson: str, notebook: str) -> str:
    """The file name ``make grade`` will see: the notebook's own when it is ``NN_*.ipynb`` of this lesson."""
    base = os.path.basename(notebook or "")
    match = _NOTEBOOK.fullmatch(base)
    return base if match and match.group(1) == lesson else f"{lesson}_submission.ipynb"


def _write_new(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file ``path`` (never replacing one), all at once."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.link(tmp, path)  # fails if path exists: a submission is never overwritten
    finally:
        os.unlink(tmp)


def save(root, student: str, lesson: str, notebook: str, data: bytes, *, when: dt.datetime | None = None) -> Receipt:
    """Keep one submission under ``root`` and return its receipt (the earlier ones stay)."""
    check_student(student)
    _check_lesson(lesson)
    if not isinstance(data, bytes):
        raise TypeError(f"data: expected the notebook's bytes, got {type(data).__name__}")
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise ValueError(f"data: expected a notebook of at most {MAX_NOTEBOOK_BYTES} bytes, got {len(data)}")
    when = (when or utc_now()).astimezone(dt.UTC)
    digest = hashlib.sha256(data).hexdigest()
    receipt = Receipt(student, lesson, os.path.basename(notebook), when.isoformat(), digest, len(data))
    folder = Path(root) / student / lesson
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{when.strftime(_STAMP)}-{digest[:12]}"
    _write_new(folder / f"{stem}.ipynb", data)
    _write_new(folder / f"{stem}.json", json.dumps(receipt.as_dict(), indent=1).encode())
    return receipt


def receipts(root) -> list[tuple[Receipt, Path]]:
    """Every submission under ``root`` (receipt, notebook path), oldest first; files that are not one are skipped."""
    found = []
    root = Path(root)
    for receipt_path in sorted(root.glob("*/[0-9][0-9]/*.json")):
        try:
            receipt = Receipt(**json.loads(receipt_path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            continue
        notebook = receipt_path.with_suffix(".ipynb")
        if notebook.is_file() and not notebook.is_symlink() and receipt.student == receipt_path.parts[-3]:
            found.append((receipt, notebook))
    return sorted(found, key=lambda item: (item[0].time, item[0].student, item[0].lesson))


def choose(submissions: Iterable[Receipt], due: dt.datetime | None) -> tuple[Receipt | None, str]:
    """The submission that counts, and why: the newest on time (at or before ``due``), else the newest."""
    ordered = sorted(submissions, key=lambda r: r.time)
    if not ordered:
        return None, "none"
    if due is None:
        return ordered[-1], "the newest (no due date)"
    on_time = [r for r in ordered if r.time <= due]
    if on_time:
        return on_time[-1], "the newest on time"
    return ordered[-1], "the newest (none on time)"


def export(
    submissions: Iterable[Receipt],
    read: Callable[[Receipt], bytes],
    out,
    *,
    due: Callable[[str, str], dt.datetime | None] = lambda student, lesson: None,
    late_days: Callable[[Receipt, dt.datetime | None], int] = lambda receipt, due: 0,
) -> Path:
    """Write ``<out>/submissions/<student>/NN_*.ipynb`` (the one that counts per student and lesson) and
    ``<out>/manifest.json``; return the manifest's path. ``read`` gives a submission's bytes; ``due(student,
    lesson)`` its due date (extensions included); ``late_days`` what the course's policy makes of the two."""
    out = Path(out)
    by_key: dict = {}
    for receipt in submissions:
        by_key.setdefault((check_student(receipt.student), _check_lesson(receipt.lesson)), []).append(receipt)
    entries = []
    for (student, lesson), group in sorted(by_key.items()):
        deadline = due(student, lesson)
        chosen, why = choose(group, deadline)
        data = read(chosen)
        if hashlib.sha256(data).hexdigest() != chosen.sha256:
            raise ValueError(f"{student}/{lesson}: the stored notebook's sha256 is not its receipt's: refused")
        target = out / "submissions" / student / grading_name(lesson, chosen.notebook)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        entries.append(
            {
                **chosen.as_dict(),
                "file": str(target.relative_to(out)),
                "due": deadline.isoformat() if deadline else None,
                "late_days": late_days(chosen, deadline),
                "chosen": why,
                "submissions": len(group),
            }
        )
    manifest = {"made": utc_now().isoformat(), "submissions": entries}
    path = out / "manifest.json"
    path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
