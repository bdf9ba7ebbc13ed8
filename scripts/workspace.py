"""The student workspace: your own copies of the lessons, with every output cleared, never overwritten.

Usage (through the Makefile; ``make lab`` runs the first step before it opens JupyterLab)::

    make workspace                    # python3 scripts/workspace.py sync
    make reset-lesson LESSON=02       # python3 scripts/workspace.py reset 02

``sync`` copies each ``notebooks/NN_*.ipynb`` into ``my_work/`` the first time only: code-cell outputs,
execution counts, execution timings and widget state are removed, so no stored output gives away a
"predict, then run" answer. A copy that exists is never touched again, whatever happens to the lesson;
a lesson added later is copied in on the next run. It prints what it created, what it kept, and which
kept copies are *outdated*: the lesson changed since the copy was made. That is decided by a SHA-256
of the cleared lesson (its cells and metadata, not its stored outputs), recorded at copy time in
``my_work/.lesson_versions.json``; file times are not used, since git does not keep them.

``reset`` moves your copy of one lesson to ``my_work/backups/NN_name.YYYYMMDD-HHMMSS.ipynb`` and makes a
fresh cleared copy. Solutions are not copied: they stay in ``solutions/``.

Standard library only (a notebook is JSON), so it runs with any Python 3.11, before ``.venv`` exists.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BACKUPS",
    "MANIFEST",
    "WORKSPACE",
    "Entry",
    "clear_outputs",
    "find_lesson",
    "format_report",
    "lesson_digest",
    "lessons",
    "main",
    "reset",
    "sync",
]

REPO = Path(__file__).resolve().parents[1]
WORKSPACE = "my_work"  # the folder name, relative to the repository root
MANIFEST = ".lesson_versions.json"  # inside the workspace; hidden in JupyterLab's file browser
BACKUPS = "backups"  # inside the workspace
LESSON_GLOB = "[0-9][0-9]_*.ipynb"


@dataclass
class Entry:
    """What ``sync`` did with one lesson.

    Attributes
    ----------
    name : str
        The notebook's file name, e.g. ``"02_masking.ipynb"``.
    action : str
        ``"created"`` (copied in now) or ``"kept"`` (the copy existed and was left alone).
    outdated : bool or None
        For a kept copy: True if the lesson changed since the copy was made, False if not, None if
        unknown (no record of the version it was made from, or the lesson is gone).
    edited : bool or None
        For a kept copy with a record: whether its cells differ from the lesson it was made from.
    note : str
        One line for the report when something is unusual (no record, lesson removed).
    """

    name: str
    action: str
    outdated: bool | None = None
    edited: bool | None = None
    note: str = ""


def lessons(notebooks: Path) -> list[Path]:
    """The lessons in ``notebooks``: ``NN_*.ipynb``, sorted (solutions and READMEs are not lessons)."""
    return sorted(Path(notebooks).glob(LESSON_GLOB))


def _read(path: Path) -> dict:
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: expected a notebook (JSON) but could not read it: {exc}") from exc
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ValueError(f"{path}: expected a notebook (a JSON object with a 'cells' list) but got {type(nb).__name__}")
    return nb


def clear_outputs(nb: dict) -> dict:
    """Return a copy of notebook ``nb`` as a student gets it: nothing computed is left in it.

    Code cells lose their outputs and execution counts; every cell loses its ``execution`` timing
    metadata; the notebook loses its saved widget state. Sources, tags and slide metadata are kept.
    """
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise TypeError(f"nb: expected a notebook dict with a 'cells' list but got {type(nb).__name__}")
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        cell.get("metadata", {}).pop("execution", None)
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    nb.get("metadata", {}).pop("widgets", None)
    return nb


def _sha256(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def lesson_digest(nb: dict) -> str:
    """SHA-256 of the cleared notebook: changes when a lesson's cells or metadata change, not its outputs."""
    return _sha256(clear_outputs(nb))


def _cells_digest(nb: dict) -> str:
    """SHA-256 of the cells' types and sources only: what a student edits."""
    return _sha256([(cell.get("cell_type"), "".join(cell.get("source", ""))) for cell in nb["cells"]])


def _write_new(path: Path, nb: dict) -> None:
    """Write ``nb`` to ``path`` only if ``path`` does not exist; never leaves a half-written notebook."""
    text = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"  # nbformat's own layout
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    try:
        os.link(tmp, path)  # fails with FileExistsError rather than replace a student's copy
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links
        if path.exists():
            raise FileExistsError(path) from None
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _load_manifest(workspace: Path) -> dict:
    path = workspace / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # missing or damaged: copies are still never overwritten, only "outdated" is unknown
    lessons_seen = data.get("lessons") if isinstance(data, dict) else None
    return lessons_seen if isinstance(lessons_seen, dict) else {}


def _save_manifest(workspace: Path, records: dict) -> None:
    path = workspace / MANIFEST
    tmp = path.with_name(f"{MANIFEST}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"format": 1, "lessons": records}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _copy_lesson(lesson: Path, target: Path, records: dict) -> None:
    nb = _read(lesson)
    cleared = clear_outputs(nb)
    _write_new(target, cleared)
    records[target.name] = {
        "lesson_sha256": _sha256(cleared),
        "cells_sha256": _cells_digest(cleared),
        "copied_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
    }


def sync(notebooks: Path, workspace: Path) -> list[Entry]:
    """Copy every lesson that has no copy in ``workspace`` yet; report on the copies that exist.

    Parameters
    ----------
    notebooks : Path
        The folder of lessons (``notebooks/``).
    workspace : Path
        The student's folder (``my_work/``), created if missing.

    Returns
    -------
    list of Entry
        One per lesson, in order, then one per copy whose lesson no longer exists.
    """
    notebooks, workspace = Path(notebooks), Path(workspace)
    if not notebooks.is_dir():
        raise ValueError(f"notebooks: expected a folder of lessons but {notebooks} is not a directory")
    found = lessons(notebooks)
    if not found:
        raise ValueError(f"notebooks: expected lessons named NN_*.ipynb in {notebooks} but found none")
    workspace.mkdir(parents=True, exist_ok=True)
    records = _load_manifest(workspace)
    entries = []
    for lesson in found:
        target = workspace / lesson.name
        if not target.exists():
            _copy_lesson(lesson, target, records)
            entries.append(Entry(lesson.name, "created"))
            continue
        record = records.get(lesson.name)
        if not isinstance(record, dict) or "lesson_sha256" not in record:
            note = "no record of the lesson version it was made from"
            entries.append(Entry(lesson.name, "kept", note=note))
            continue
        outdated = lesson_digest(_read(lesson)) != record["lesson_sha256"]
        try:
            edited = _cells_digest(_read(target)) != record.get("cells_sha256")
        except ValueError:
            edited = None
        note = f"copied {record.get('copied_utc', '?')} UTC" if outdated else ""
        entries.append(Entry(lesson.name, "kept", outdated=outdated, edited=edited, note=note))
    names = {lesson.name for lesson in found}
    for copy_path in sorted(workspace.glob(LESSON_GLOB)):
        if copy_path.name not in names:
            entries.append(
                Entry(copy_path.name, "kept", note=f"there is no {notebooks.name}/{copy_path.name} any more")
            )
    _save_manifest(workspace, records)
    return entries


def find_lesson(lesson: str, notebooks: Path) -> Path:
    """The lesson named by ``lesson``: ``"2"``, ``"02"``, ``"02_masking"`` or ``"notebooks/02_masking.ipynb"``.

    Raises ValueError listing the valid lessons when none (or more than one) matches.
    """
    if not isinstance(lesson, str):
        raise TypeError(f"lesson: expected a lesson number such as '02' but got {type(lesson).__name__}")
    found = lessons(notebooks)
    valid = ", ".join(f"{path.name[:2]} ({path.stem})" for path in found)
    key = Path(lesson.strip()).name.removesuffix(".ipynb")
    if not key:
        raise ValueError(
            f"LESSON: say which lesson to reset, e.g. `make reset-lesson LESSON=02`. Valid lessons: {valid}"
        )
    if re.fullmatch(r"\d{1,2}", key):
        matches = [path for path in found if path.name[:2] == key.zfill(2)]
    else:
        matches = [path for path in found if path.stem == key]
    if len(matches) != 1:
        raise ValueError(f"LESSON: expected one of the lessons {valid} but got {lesson!r}")
    return matches[0]


def reset(lesson: str, notebooks: Path, workspace: Path) -> tuple[Path | None, Path]:
    """Back up the student's copy of one lesson, then make a fresh cleared copy from ``notebooks``.

    Returns
    -------
    (backup, copy) : (Path or None, Path)
        Where the old copy went (``workspace/backups/NN_name.YYYYMMDD-HHMMSS.ipynb``; None if there
        was no copy) and the new copy.
    """
    notebooks, workspace = Path(notebooks), Path(workspace)
    source = find_lesson(lesson, notebooks)
    target = workspace / source.name
    workspace.mkdir(parents=True, exist_ok=True)
    records = _load_manifest(workspace)
    backup = None
    if target.exists():
        folder = workspace / BACKUPS
        folder.mkdir(exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = folder / f"{source.stem}.{stamp}.ipynb"
        n = 1
        while backup.exists():  # two resets in one second
            backup = folder / f"{source.stem}.{stamp}-{n}.ipynb"
            n += 1
        os.replace(target, backup)
    _copy_lesson(source, target, records)
    _save_manifest(workspace, records)
    return backup, target


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def format_report(entries: list[Entry], workspace: Path) -> str:
    """The lines ``make workspace`` prints: created, kept, outdated, and what to do about an outdated copy."""
    where = _shown(Path(workspace))
    lines = [f"{where}/ holds your own copies of the lessons: made once, outputs cleared, never overwritten."]
    for entry in entries:
        line = f"  {entry.action:<8} {entry.name}"
        if entry.outdated:
            line += "   OUTDATED: the lesson has changed since this copy was made"
            line += f" ({entry.note})" if entry.note else ""
            if entry.edited is False:
                line += "; you have not edited it"
        elif entry.note:
            line += f"   ({entry.note})"
        lines.append(line)
    created = sum(entry.action == "created" for entry in entries)
    outdated = [entry for entry in entries if entry.outdated]
    lines.append(f"{created} created, {len(entries) - created} kept, {len(outdated)} outdated.")
    if outdated:
        numbers = " ".join(entry.name[:2] for entry in outdated)
        lines.append(
            f"Outdated copies are left as they are. Read the new version in notebooks/, or replace your copy "
            f"(it is moved to {where}/{BACKUPS}/ first): make reset-lesson LESSON=NN, for NN in {numbers}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebooks", type=Path, default=REPO / "notebooks", help="the lessons (default: notebooks/)")
    parser.add_argument("--workspace", type=Path, default=REPO / WORKSPACE, help=f"your copies (default: {WORKSPACE}/)")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("sync", help="copy new lessons in, keep existing copies, report outdated ones (default)")
    reset_parser = commands.add_parser("reset", help="back up your copy of one lesson and make a fresh one")
    reset_parser.add_argument("lesson", help="the lesson number, e.g. 02")
    args = parser.parse_args(argv)
    try:
        if args.command == "reset":
            backup, target = reset(args.lesson, args.notebooks, args.workspace)
            if backup is not None:
                print(f"backed up {_shown(target)} -> {_shown(backup)}")
            print(f"reset     {_shown(target)} from {_shown(args.notebooks / target.name)} (outputs cleared)")
        else:
            print(format_report(sync(args.notebooks, args.workspace), args.workspace))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
