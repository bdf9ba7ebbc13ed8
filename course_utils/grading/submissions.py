"""The submissions folder: which notebooks are graded, and why every other entry is not.

``root/<student>/NN_*.ipynb`` are graded; a symbolic link or other non-regular file is refused (never followed),
and every other entry is listed with the reason it was not graded. A notebook's bytes are read without following
a link, and never more than :data:`~course_utils.grading.records.MAX_NOTEBOOK_BYTES`.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from course_utils.grading.records import MAX_NOTEBOOK_BYTES, NOTEBOOK_NAME, OWN_FILES, shown

__all__ = ["find_submissions", "read_submission"]


def _kind(entry: os.DirEntry) -> str | None:
    """None for a regular file or folder; else what it is (never followed)."""
    if entry.is_symlink():
        return "a symbolic link"
    mode = entry.stat(follow_symlinks=False).st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return "not a regular file"


def find_submissions(root: Path) -> tuple[list, list]:
    """``[(student, lesson, path)]`` for ``root/<student>/NN_*.ipynb``, sorted, and every other entry with a reason.

    Every entry of ``root`` (but the grader's own ``grades.csv``, ``grades.html`` and ``.grade_cache``) and of
    each student folder is either graded or listed as ``(student, name, reason)``: a symbolic link or other
    non-regular file is refused (never followed), a hidden folder (``.name``), a file at the top, a folder inside a
    student's folder, a file that is not ``NN_*.ipynb`` and a second notebook of one lesson are not graded, and
    an empty student folder is listed.
    """
    root = Path(root)
    if root.is_symlink() or not root.is_dir():
        raise ValueError(f"SUBMISSIONS must be a folder of student folders but {root} is not a folder")
    found, problems = [], []
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        name = entry.name
        if name in OWN_FILES and not entry.is_symlink():
            continue
        kind = _kind(entry)
        if kind:
            problems.append(("", shown(name), f"refused: {kind} (never followed); hand in the file itself"))
            continue
        if not entry.is_dir(follow_symlinks=False):
            problems.append(("", shown(name), "not graded: a file outside any student folder"))
            continue
        if name.startswith("."):
            problems.append((shown(name), "", "not graded: a hidden folder (its name starts with '.'); rename it"))
            continue
        if not name.isprintable():
            problems.append((shown(name), "", "not graded: the folder's name holds control characters; rename it"))
            continue
        entries = sorted(os.scandir(entry.path), key=lambda e: e.name)
        if not entries:
            problems.append((name, "", "not graded: an empty folder"))
            continue
        seen = {}
        for item in entries:
            item_name = shown(item.name)
            kind = _kind(item)
            match = NOTEBOOK_NAME.match(item.name)
            if kind:
                problems.append((name, item_name, f"refused: {kind} (never followed); hand in the file itself"))
            elif item.is_dir(follow_symlinks=False):
                problems.append((name, item_name, "not graded: a folder inside the student's folder"))
            elif not item.name.endswith(".ipynb"):
                problems.append((name, item_name, "not graded: not a notebook (.ipynb)"))
            elif not match or not item.name.isprintable():
                lesson = re.search(r"(?<!\d)(\d\d)_", item.name)
                hint = f" (rename it {item.name[lesson.start() :]} to grade it)" if lesson else ""
                problems.append(
                    (name, item_name, f"not graded: the name does not start with a lesson number NN_{hint}")
                )
            elif match.group(1) in seen:
                problems.append(
                    (name, item_name, f"not graded: {seen[match.group(1)]} is already lesson {match.group(1)}")
                )
            else:
                seen[match.group(1)] = item.name
                found.append((name, match.group(1), Path(item.path)))
    return found, problems


def read_submission(path: Path) -> bytes:
    """The bytes of a regular file, opened without following a symbolic link (its folder's either)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    folder = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path.name, flags, dir_fd=folder)
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError("not a regular file")
        if info.st_size > MAX_NOTEBOOK_BYTES:
            raise OSError(f"larger than {MAX_NOTEBOOK_BYTES // 2**20} MB")
        return handle.read(MAX_NOTEBOOK_BYTES + 1)
