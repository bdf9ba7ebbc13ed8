"""Recorded checks on disk: one JSON and one ``.npz`` per lesson, with their sha256 digests in ``SHA256SUMS``.

Written by ``scripts/record_checks.py`` (:func:`save`), read by the published edition (:func:`load`), which refuses
a file whose digest differs. The arrays are read with ``allow_pickle=False``: data, never code.

Introduced in notebooks/00_start_here.ipynb (the published edition's checks read it).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np

from course_utils.checking import recorded

__all__ = ["FORMAT", "data_folder", "save", "load", "save_handed"]

FORMAT = 1
"""The version of the data format; :func:`load` refuses another."""


def data_folder() -> Path:
    """Where the published edition keeps the recorded checks: ``data/checks`` beside the package."""
    return Path(__file__).resolve().parents[2] / "data" / "checks"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def save(
    folder: Path, lesson_id: str, book: recorded.Book, predictions: list, exports: dict | None = None
) -> list[Path]:
    """Write lesson ``lesson_id``'s recorded checks into ``folder``; return the files written.

    ``exports`` maps a public name of the lesson's exercises module that is a buggy version (the bug zoo's
    ``dot_scores_transposed``) to ``[exercise id, misconception id]``: the loader exports it as that recorded
    buggy version, which its check still names."""
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
        "exports": exports or {},
    }
    json_path = stem.with_suffix(".json")
    json_path.write_text(json.dumps(document, sort_keys=True, separators=(",", ":")), encoding="utf-8")
    npz_path = stem.with_suffix(".npz")
    _write_npz(npz_path, book.arrays)
    sums = folder / "SHA256SUMS"
    names = {json_path.name, npz_path.name}
    lines = [line for line in (sums.read_text().splitlines() if sums.exists() else []) if line.split()[-1] not in names]
    lines += [f"{_sha256(p)}  {p.name}" for p in (json_path, npz_path)]
    sums.write_text("\n".join(sorted(lines, key=lambda s: s.split()[-1])) + "\n", encoding="utf-8")
    return [json_path, npz_path, sums]


def _write_npz(path: Path, arrays: list) -> None:
    """``np.savez_compressed``, byte for byte the same on every run (no time stamps): a publish that changed
    nothing commits nothing. An array equal to an earlier one (same dtype, shape and bytes: the same fresh case
    seen by many mutants) is stored once; the member ``aliases`` then maps every index to the one stored."""
    canonical, first = [], {}
    for i, array in enumerate(arrays):
        array = np.asanyarray(array)
        key = (array.dtype.str, array.shape, hashlib.sha256(np.ascontiguousarray(array).tobytes()).digest())
        canonical.append(first.setdefault(key, i))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:

        def member(name: str, array) -> None:
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asanyarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, buffer.getvalue())

        for i, array in enumerate(arrays):
            if canonical[i] == i:
                member(f"a{i}", array)
        if canonical != list(range(len(arrays))):
            member("aliases", np.asarray(canonical, dtype=np.int64))


class _Arrays:
    """The arrays of a lesson's ``.npz``, by index, read lazily (``allow_pickle=False``: data, never code)."""

    def __init__(self, path: Path):
        self.file = np.load(path, allow_pickle=False)
        self.aliases = self.file["aliases"] if "aliases" in self.file.files else None

    def __getitem__(self, i):
        return self.file[f"a{int(self.aliases[i]) if self.aliases is not None else i}"]


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


def save_handed(folder: Path, lesson_id: str) -> list[Path]:
    """Write the lesson calls :func:`course_utils.checking.recorded.record_handed` collected, as
    ``lesson_NN_handed`` beside the lesson's data (the last cell of the recorded lesson calls it)."""
    return save(folder, f"{lesson_id}_handed", recorded.take_handed(), [])
