"""The student workspace: your own copies of the lessons (the student editions), never overwritten.

Usage (through the Makefile; ``make lab`` runs the first step before it opens JupyterLab)::

    make workspace                    # python3 scripts/workspace.py sync
    make reset-lesson LESSON=02       # python3 scripts/workspace.py reset 02
    python3 scripts/workspace.py preview notebooks/02_masking.ipynb [--changed] [-o /tmp/02_student.ipynb]
    python3 scripts/workspace.py check                 # every lesson: does its student edition build?

``sync`` writes the *student edition* of each ``notebooks/NN_*.ipynb`` into ``my_work/`` the first time
only (``scripts/editions.py``: solution regions stubbed, hidden regions removed, explanations collapsed,
outputs, execution counts, timings and widget state cleared, cell ids kept). A copy that exists is never
touched again, whatever happens to the lesson; a lesson added later is copied in on the next run. It
prints what it created, what it kept, which kept copies are *outdated* (the student edition changed since
the copy was made: a SHA-256 of the edition, recorded at copy time in ``my_work/.lesson_versions.json``;
a change inside a solution region alone changes nothing a student sees, so it does not count), and which
copies are *damaged* (not a readable notebook, e.g. cut short by a full disk: left as they are, with the
command that replaces them).

``reset`` moves your copy of one lesson to ``my_work/backups/NN_name.YYYYMMDD-HHMMSS.ipynb`` and writes
a fresh student edition. ``preview`` prints (or writes with ``-o``) the student edition of one notebook,
for lesson authors; ``check`` builds every lesson's student edition in memory and lists its regions.

Two commands on one workspace never interleave: each takes a lock (``my_work/.workspace.lock``), and
a second one waits for the first (up to a minute, saying so). Every failure is one line ``error: ...``
naming the file and what to do; exit status 2 (1 when a lesson itself is broken: the course's fault).

Standard library only (a notebook is JSON), so it runs with any Python 3.11, before ``.venv`` exists.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from editions import EditionError, clear_outputs, make_edition  # noqa: E402

__all__ = [
    "BACKUPS",
    "LOCK",
    "MANIFEST",
    "WORKSPACE",
    "Entry",
    "WorkspaceError",
    "clear_outputs",
    "edition_digest",
    "find_lesson",
    "format_report",
    "lessons",
    "main",
    "reset",
    "sync",
    "workspace_lock",
]

REPO = Path(__file__).resolve().parents[1]
WORKSPACE = "my_work"  # the folder name, relative to the repository root
MANIFEST = ".lesson_versions.json"  # inside the workspace; hidden in JupyterLab's file browser
LOCK = ".workspace.lock"  # inside the workspace; held while a command reads or writes it
BACKUPS = "backups"  # inside the workspace
LESSON_GLOB = "[0-9][0-9]_*.ipynb"
LOCK_WAIT_S = 60.0
STALE_TMP = re.compile(r"^\..+\.\d+\.tmp$")  # what _write_new and _save_manifest leave if killed mid-write


class WorkspaceError(Exception):
    """A failure the student can fix: printed as one line ``error: <file>: <what happened>: <what to do>``."""


@dataclass
class Entry:
    """What ``sync`` did with one lesson.

    Attributes
    ----------
    name : str
        The notebook's file name, e.g. ``"02_masking.ipynb"``.
    action : str
        ``"created"`` (written now), ``"kept"`` (the copy existed and was left alone), ``"damaged"``
        (the copy exists but is not a readable notebook; left alone) or ``"error"`` (the course's lesson
        could not be made into a student edition; ``note`` says why).
    outdated : bool or None
        For a kept copy: True if the student edition changed since the copy was made, False if not,
        None if unknown (no record of the version it was made from, or the lesson is gone).
    edited : bool or None
        For a kept copy with a record: whether its cells differ from the edition it was made from.
    note : str
        One line for the report when something is unusual (no record, lesson removed, damage).
    """

    name: str
    action: str
    outdated: bool | None = None
    edited: bool | None = None
    note: str = ""


def lessons(notebooks: Path) -> list[Path]:
    """The lessons in ``notebooks``: ``NN_*.ipynb``, sorted (READMEs and other files are not lessons)."""
    return sorted(Path(notebooks).glob(LESSON_GLOB))


def _shown(path) -> str:
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def _read(path: Path) -> dict:
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{_shown(path)}: expected a notebook (JSON) but could not read it: {exc}") from exc
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ValueError(
            f"{_shown(path)}: expected a notebook (a JSON object with a 'cells' list) but got {type(nb).__name__}"
        )
    return nb


def _damage(path: Path) -> str | None:
    """Why the copy at ``path`` is not a usable notebook (one line), or None when it is one."""
    if path.is_symlink() and not path.exists():
        return f"a link to {os.readlink(path)}, which does not exist"
    if path.is_dir():
        return "a folder, not a notebook file"
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    except UnicodeDecodeError:
        return "not text (not UTF-8): not a notebook"
    if not text.strip():
        return "empty (nothing was saved in it)"
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        cut = " (it ends early: cut short when it was saved)" if _ends_open(text) else ""
        return f"not valid JSON at line {exc.lineno}, column {exc.colno}{cut}"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return "JSON but not a notebook (no 'cells' list)"
    if not all(isinstance(cell, dict) and "cell_type" in cell and "source" in cell for cell in nb["cells"]):
        return "a notebook with malformed cells (a cell without a type or a source)"
    return None


def _ends_open(text: str) -> bool:
    """True when JSON `text` ends inside a string or with a bracket still open: the file was cut short."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
    return in_string or depth > 0


def _sha256(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def _edition(lesson: Path) -> dict:
    """The student edition of the lesson at ``lesson`` (raises ValueError / EditionError naming the file)."""
    return make_edition(_read(lesson), _shown(lesson)).notebook


def edition_digest(nb: dict) -> str:
    """SHA-256 of a student edition: changes when what the student gets changes, not with stored outputs."""
    return _sha256(nb)


def _cells_digest(nb: dict) -> str:
    """SHA-256 of the cells' types and sources only: what a student edits."""
    return _sha256([(cell.get("cell_type"), "".join(cell.get("source", ""))) for cell in nb["cells"]])


def _write_new(path: Path, nb: dict) -> None:
    """Write ``nb`` to ``path`` only if ``path`` does not exist; never leaves a half-written notebook."""
    text = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"  # nbformat's own layout
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        try:
            os.link(tmp, path)  # fails with FileExistsError rather than replace a student's copy
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links
            if os.path.lexists(path):
                raise FileExistsError(errno.EEXIST, "File exists", str(path)) from None
            os.replace(tmp, path)
    except OSError as exc:  # name the notebook, not the temporary file
        raise type(exc)(exc.errno, exc.strerror or str(exc), str(path)) from exc
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
    tmp.write_text(json.dumps({"format": 2, "lessons": records}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _record(edition: dict) -> dict:
    return {
        "edition_sha256": edition_digest(edition),
        "cells_sha256": _cells_digest(edition),
        "copied_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
    }


def _recorded_digest(record) -> str | None:
    """The edition digest a record holds. Format 1 (before student editions) recorded ``lesson_sha256``,
    the digest of the lesson with outputs cleared: the same value for a lesson without regions."""
    if not isinstance(record, dict):
        return None
    return record.get("edition_sha256", record.get("lesson_sha256"))


def _prepare(workspace: Path) -> None:
    """Create the workspace folder, or say in one line why it cannot be one."""
    if os.path.lexists(workspace) and not workspace.is_dir():
        shown = _shown(workspace)
        if workspace.is_symlink():
            raise WorkspaceError(
                f"{shown}: is a link to {os.readlink(workspace)}, which is not a folder: remove the link "
                f"(rm {shown}) or point it at a folder, then run the command again"
            )
        raise WorkspaceError(
            f"{shown}: is a file, not a folder: your copies of the lessons go into a folder of this name; "
            f"rename the file (mv {shown} {shown}.old), then run the command again"
        )
    workspace.mkdir(parents=True, exist_ok=True)


def _try_lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def workspace_lock(
    workspace: Path, wait_s: float = LOCK_WAIT_S, say: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Hold ``workspace/.workspace.lock`` while the block runs; wait up to ``wait_s`` for another holder.

    The lock is the operating system's (``flock``; ``msvcrt.locking`` on Windows), so it is released
    when its process ends, however it ends: a crashed run never leaves a stale lock. ``say`` is called
    once with a line when this command has to wait. Raises WorkspaceError when the wait runs out.
    """
    path = Path(workspace) / LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        started, told = time.monotonic(), False
        while not _try_lock(fd):
            try:
                holder = path.read_text(errors="replace").strip() or "unknown"
            except OSError:  # Windows refuses to read a locked byte
                holder = "unknown"
            waited = time.monotonic() - started
            if waited >= wait_s:
                raise WorkspaceError(
                    f"{_shown(path)}: another workspace command (process {holder}) is still working on "
                    f"{_shown(workspace)}/ after {waited:.0f} s: let it finish (or stop it), then run this "
                    "command again"
                )
            if not told and say is not None:
                say(f"waiting for another workspace command (process {holder}) to finish with {_shown(workspace)}/")
                told = True
            time.sleep(0.1)
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            for stale in Path(workspace).iterdir():  # left by a run that was killed mid-write
                if STALE_TMP.match(stale.name) and stale.is_file():
                    stale.unlink(missing_ok=True)
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def sync(
    notebooks: Path, workspace: Path, wait_s: float = LOCK_WAIT_S, say: Callable[[str], None] | None = None
) -> list[Entry]:
    """Write the student edition of every lesson that has no copy in ``workspace``; report on the others.

    Parameters
    ----------
    notebooks : Path
        The folder of lessons (``notebooks/``: instructor editions).
    workspace : Path
        The student's folder (``my_work/``), created if missing.
    wait_s, say
        How long to wait for another command's lock, and where to say so (see :func:`workspace_lock`).

    Returns
    -------
    list of Entry
        One per lesson, in order, then one per copy whose lesson no longer exists. A lesson whose
        student edition cannot be made is an ``"error"`` entry (the others are still written).
    """
    notebooks, workspace = Path(notebooks), Path(workspace)
    if not notebooks.is_dir():
        raise ValueError(f"notebooks: expected a folder of lessons but {notebooks} is not a directory")
    found = lessons(notebooks)
    if not found:
        raise ValueError(f"notebooks: expected lessons named NN_*.ipynb in {notebooks} but found none")
    _prepare(workspace)
    with workspace_lock(workspace, wait_s, say):
        records = _load_manifest(workspace)
        before = json.dumps(records, sort_keys=True)
        entries = [_sync_one(lesson, workspace / lesson.name, records) for lesson in found]
        names = {lesson.name for lesson in found}
        for copy_path in sorted(workspace.glob(LESSON_GLOB)):
            if copy_path.name not in names:
                note = f"there is no {notebooks.name}/{copy_path.name} any more"
                entries.append(Entry(copy_path.name, "kept", note=note))
        if json.dumps(records, sort_keys=True) != before:
            _save_manifest(workspace, records)
    return entries


def _sync_one(lesson: Path, target: Path, records: dict) -> Entry:
    try:
        edition = _edition(lesson)
    except ValueError as exc:  # EditionError too: the course's lesson is broken, not the student's copy
        return Entry(lesson.name, "error", note=str(exc))
    if not os.path.lexists(target):
        _write_new(target, edition)
        records[target.name] = _record(edition)
        return Entry(lesson.name, "created")
    damage = _damage(target)
    if damage is not None:
        return Entry(lesson.name, "damaged", note=damage)
    record = records.get(lesson.name)
    recorded = _recorded_digest(record)
    if recorded is None:
        return Entry(lesson.name, "kept", note="no record of the lesson version it was made from")
    outdated = edition_digest(edition) != recorded
    edited = _cells_digest(_read(target)) != record.get("cells_sha256")
    note = f"copied {record.get('copied_utc', '?')} UTC" if outdated else ""
    return Entry(lesson.name, "kept", outdated=outdated, edited=edited, note=note)


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


def reset(
    lesson: str,
    notebooks: Path,
    workspace: Path,
    wait_s: float = LOCK_WAIT_S,
    say: Callable[[str], None] | None = None,
) -> tuple[Path | None, Path]:
    """Back up the student's copy of one lesson (damaged or not), then write a fresh student edition.

    Returns
    -------
    (backup, copy) : (Path or None, Path)
        Where the old copy went (``workspace/backups/NN_name.YYYYMMDD-HHMMSS.ipynb``; None if there
        was no copy) and the new copy.
    """
    notebooks, workspace = Path(notebooks), Path(workspace)
    source = find_lesson(lesson, notebooks)
    edition = _edition(source)  # before anything moves: a broken lesson leaves the copy where it is
    target = workspace / source.name
    _prepare(workspace)
    with workspace_lock(workspace, wait_s, say):
        records = _load_manifest(workspace)
        backup = None
        if os.path.lexists(target):
            folder = workspace / BACKUPS
            if os.path.lexists(folder) and not folder.is_dir():
                raise WorkspaceError(
                    f"{_shown(folder)}: is a file, not a folder: backups go into a folder of this name; rename "
                    f"the file (mv {_shown(folder)} {_shown(folder)}.old), then run the command again"
                )
            folder.mkdir(exist_ok=True)
            stamp = time.strftime("%Y%m%d-%H%M%S")
            backup = folder / f"{source.stem}.{stamp}.ipynb"
            n = 1
            while os.path.lexists(backup):  # two resets in one second
                backup = folder / f"{source.stem}.{stamp}-{n}.ipynb"
                n += 1
            os.replace(target, backup)
        _write_new(target, edition)
        records[target.name] = _record(edition)
        _save_manifest(workspace, records)
    return backup, target


def format_report(entries: list[Entry], workspace: Path) -> str:
    """The lines ``make workspace`` prints: created, kept, outdated, damaged, and what to do about them."""
    where = _shown(Path(workspace))
    lines = [f"{where}/ holds your own copies of the lessons (their student editions): made once, never overwritten."]
    for entry in entries:
        line = f"  {entry.action:<8} {entry.name}"
        if entry.action == "damaged":
            line += f"   DAMAGED: {entry.note}"
        elif entry.action == "error":
            line += "   NOT COPIED: the course's lesson has a problem (below); tell your instructor"
        elif entry.outdated:
            line += "   OUTDATED: the lesson has changed since this copy was made"
            line += f" ({entry.note})" if entry.note else ""
            if entry.edited is False:
                line += "; you have not edited it"
        elif entry.note:
            line += f"   ({entry.note})"
        lines.append(line)
    counts = {action: sum(entry.action == action for entry in entries) for action in ("created", "kept")}
    outdated = [entry for entry in entries if entry.outdated]
    damaged = [entry for entry in entries if entry.action == "damaged"]
    summary = f"{counts['created']} created, {counts['kept']} kept, {len(outdated)} outdated"
    summary += f", {len(damaged)} damaged" if damaged else ""
    lines.append(summary + ".")
    if outdated:
        numbers = " ".join(entry.name[:2] for entry in outdated)
        lines.append(
            f"Outdated copies are left as they are. Read the new version in notebooks/, or replace your copy "
            f"(it is moved to {where}/{BACKUPS}/ first): make reset-lesson LESSON=NN, for NN in {numbers}"
        )
    for entry in damaged:
        checkpoint = Path(workspace) / ".ipynb_checkpoints" / f"{Path(entry.name).stem}-checkpoint.ipynb"
        saved = f" JupyterLab's last checkpoint of it: {_shown(checkpoint)}." if checkpoint.is_file() else ""
        lines.append(
            f"{where}/{entry.name} is damaged and was left as it is.{saved} To start that lesson afresh: "
            f"make reset-lesson LESSON={entry.name[:2]} (the damaged file is moved to {where}/{BACKUPS}/ first)"
        )
    return "\n".join(lines)


def _os_error_line(exc: OSError) -> str:
    """One line for an operating-system error: the file, what happened, what to do."""
    name = exc.filename or "?"
    what = exc.strerror or str(exc)
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        path = Path(name)
        fix_path = path if path.exists() else path.parent
        todo = f"make it writable (chmod u+w {_shown(fix_path)}), then run the command again"
    elif exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        todo = "free some disk space, then run the command again"
    else:
        todo = "check that path, then run the command again"
    return f"{_shown(name)}: {what}: {todo}"


def _preview(path: Path, notebooks: Path, out: Path | None, changed_only: bool) -> None:
    edition = make_edition(_read(path), _shown(path))
    print(f"{_shown(path)}, student edition: {edition.summary()}")
    if out is not None:
        if out.resolve() == path.resolve() or out.resolve().parent == notebooks.resolve():
            raise ValueError(f"-o: {_shown(out)} is in {_shown(notebooks)}/: write the preview elsewhere, e.g. /tmp")
        out.write_text(json.dumps(edition.notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        print(f"wrote {_shown(out)}")
        return
    for cell in edition.cells:
        what = []
        if cell.student_source is None:
            what.append("dropped (hidden only)")
        elif cell.regions:
            what += [f"{region.kind.lower()} region, lines {region.begin}-{region.end}" for region in cell.regions]
        if cell.collapsed:
            what.append("collapsed heading")
        if changed_only and not what:
            continue
        print(f"--- cell {cell.index} | {cell.cell_type} | id {cell.cell_id}" + "".join(f" | {w}" for w in what))
        if cell.student_source is not None:
            print(cell.student_source.rstrip("\n"))


def _check(paths: list[Path]) -> int:
    broken = 0
    for path in paths:
        try:
            edition = make_edition(_read(path), _shown(path))
        except EditionError as exc:
            broken += 1
            for problem in exc.problems:
                print(f"error: {problem}", file=sys.stderr)
            continue
        print(f"{_shown(path)}: {edition.summary()}")
    print(f"{len(paths) - broken} of {len(paths)} lessons make a student edition")
    return 1 if broken else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebooks", type=Path, default=REPO / "notebooks", help="the lessons (default: notebooks/)")
    parser.add_argument("--workspace", type=Path, default=REPO / WORKSPACE, help=f"your copies (default: {WORKSPACE}/)")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("sync", help="copy new lessons in, keep existing copies, report outdated ones (default)")
    reset_parser = commands.add_parser("reset", help="back up your copy of one lesson and make a fresh one")
    reset_parser.add_argument("lesson", help="the lesson number, e.g. 02")
    preview = commands.add_parser("preview", help="print the student edition of one notebook (for lesson authors)")
    preview.add_argument("notebook", type=Path, help="an instructor edition, e.g. notebooks/02_masking.ipynb")
    preview.add_argument("--changed", action="store_true", help="only the cells the student edition changes")
    preview.add_argument("-o", "--output", type=Path, help="write the student edition there instead of printing")
    check = commands.add_parser("check", help="make every lesson's student edition in memory; list its regions")
    check.add_argument("notebook", type=Path, nargs="*", help="default: every lesson in --notebooks")
    args = parser.parse_args(argv)

    def say(line: str) -> None:
        print(line, flush=True)

    try:
        if args.command == "reset":
            backup, target = reset(args.lesson, args.notebooks, args.workspace, wait_s=LOCK_WAIT_S, say=say)
            if backup is not None:
                print(f"backed up {_shown(target)} -> {_shown(backup)}")
            print(f"reset     {_shown(target)} from {_shown(args.notebooks / target.name)} (student edition)")
        elif args.command == "preview":
            _preview(args.notebook, args.notebooks, args.output, args.changed)
        elif args.command == "check":
            return _check(args.notebook or lessons(args.notebooks))
        else:
            entries = sync(args.notebooks, args.workspace, wait_s=LOCK_WAIT_S, say=say)
            print(format_report(entries, args.workspace))
            errors = [entry for entry in entries if entry.action == "error"]
            for entry in errors:
                for line in entry.note.splitlines():
                    print(f"error: {line}", file=sys.stderr)
            return 1 if errors else 0
    except EditionError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        return 1
    except (WorkspaceError, ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {_os_error_line(exc)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
