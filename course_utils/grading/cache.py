"""The grader's cache: signed results in ``SUBMISSIONS/.grade_cache/``, and what their key covers.

A notebook's result is reused only when the notebook's bytes, the lesson's exercise ids, the time limits, the
sandbox's settings and :func:`engine_fingerprint` are all unchanged. The fingerprint hashes **every file** under
the course's ``course_utils/`` and ``data/`` (walked, never a list of names kept by hand: the code the lessons'
references run, ``masks.py`` and ``reversal/`` included, and the data they read), so any change to the course
grades every notebook again. Each entry is signed (HMAC-SHA-256) with a key kept in the cache folder (mode 0600),
which no sandbox sees; an entry whose signature does not match is counted and ignored.

:func:`course_fingerprint` is the course tree the grader verifies unchanged after a run.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from dataclasses import asdict
from pathlib import Path

from course_utils.grading.records import (
    COURSE,
    COURSE_TREE,
    GRADER_VERSION,
    MAX_RESULT_BYTES,
    OWN_FILES,
    NotebookResult,
    shown,
)

__all__ = [
    "KEYED_TREES",
    "Cache",
    "cache_key",
    "changed",
    "course_fingerprint",
    "engine_fingerprint",
    "listing",
]

KEYED_TREES = ("course_utils", "data")  # every file under these goes into the cache key


def _files(top: Path) -> list[Path]:
    """Every regular file under ``top``, sorted, without Python's byte-code caches."""
    if top.is_file():
        return [top]
    if not top.is_dir():
        return []
    return sorted(
        p for p in top.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")
    )


def engine_fingerprint(course: Path = COURSE) -> str:
    """SHA-256 over every file of ``course/course_utils`` and ``course/data`` (relative path and bytes).

    A changed reference, helper, message, grading step or data file invalidates the cache: the same notebook
    may now get another verdict.
    """
    course = Path(course)
    digest = hashlib.sha256()
    for tree in KEYED_TREES:
        for path in _files(course / tree):
            digest.update(str(path.relative_to(course)).encode() + b"\0")
            try:
                digest.update(hashlib.sha256(path.read_bytes()).digest())
            except OSError:
                digest.update(b"unreadable")
    return digest.hexdigest()


def course_fingerprint(course: Path) -> dict:
    """relative path -> SHA-256 of every file of the course tree the grader runs from (no caches)."""
    found = {}
    for name in COURSE_TREE:
        for path in _files(course / name):
            try:
                found[str(path.relative_to(course))] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                found[str(path.relative_to(course))] = "unreadable"
    return found


def listing(root: Path) -> dict:
    """relative path -> (size, mtime, inode) of every entry under the submissions folder but the grader's own."""
    found = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        if folder == str(root):
            dirs[:] = [d for d in dirs if d not in OWN_FILES]
            files = [f for f in files if f not in OWN_FILES]
        for name in files + dirs:
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            is_dir = stat.S_ISDIR(info.st_mode)  # a folder counts by its entries, not its own time
            found[shown(os.path.relpath(path, root))] = (
                "folder" if is_dir else (info.st_size, info.st_mtime_ns, info.st_ino)
            )
    return found


def changed(before: dict, after: dict) -> list:
    """The keys whose values differ between two fingerprints or listings."""
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def cache_key(data: bytes, lesson: str, exercises, cell_timeout, notebook_timeout, engine: str, setting: str) -> str:
    """The cache key of one notebook graded with these settings."""
    ids = ",".join(ex.id for ex in exercises)
    header = f"{GRADER_VERSION}|{engine}|{setting}|{lesson}|{ids}|{cell_timeout}|{notebook_timeout}|".encode()
    return hashlib.sha256(header + data).hexdigest()


class Cache:
    """``.grade_cache/<key>.json`` entries, each signed with the key in ``.grade_cache/key`` (mode 0600)."""

    def __init__(self, folder: Path):
        self.folder = folder
        if folder.is_symlink():
            raise ValueError(f"{folder} is a symbolic link: remove it (the grader's cache is never followed)")
        folder.mkdir(mode=0o700, exist_ok=True)
        key_path = folder / "key"
        try:
            fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(32))
        except FileExistsError:
            pass
        fd = os.open(key_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            self.key = handle.read()
        if len(self.key) < 32:
            raise ValueError(f"{key_path} is damaged: delete the folder {folder} (every notebook is graded again)")
        self.forged = 0

    def _mac(self, name: str, payload: str) -> str:
        return hmac.new(self.key, f"{name}\0{payload}".encode(), hashlib.sha256).hexdigest()

    def get(self, name: str) -> NotebookResult | None:
        """The entry ``name`` when its signature holds; None (and counted in ``forged``) when it does not."""
        path = self.folder / f"{name}.json"
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as handle:
                stored = json.loads(handle.read(MAX_RESULT_BYTES).decode("utf-8"))
            payload, mac = stored["payload"], stored["mac"]
            if not (
                isinstance(payload, str) and isinstance(mac, str) and hmac.compare_digest(mac, self._mac(name, payload))
            ):
                self.forged += 1
                return None
            data = json.loads(payload)
            return NotebookResult(
                {k: tuple(v) for k, v in data["exercises"].items()},
                list(data["notes"]),
                list(data["tampering"]),
                dict(data.get("predictions") or {}),
            )
        except (ValueError, KeyError, TypeError, OSError, UnicodeDecodeError):
            self.forged += 1
            return None

    def put(self, name: str, result: NotebookResult) -> None:
        """Sign and store ``result`` (written beside, then put in place at once)."""
        payload = json.dumps(asdict(result), sort_keys=True)
        tmp = self.folder / f".{name}.{secrets.token_hex(4)}.tmp"
        tmp.write_text(json.dumps({"payload": payload, "mac": self._mac(name, payload)}), encoding="utf-8")
        os.replace(tmp, self.folder / f"{name}.json")
