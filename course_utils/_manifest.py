"""The checkpoint manifest: ``MANIFEST.json`` beside the checkpoints, listing each file's SHA-256,
size, model kind and config.

:func:`course_utils.reversal.checkpoints.save_checkpoint` records an entry; :func:`course_utils.reversal.checkpoints.load_pretrained`
checks the file against its entry *before* unpickling it. Pure standard library: reading the manifest
never runs code from the checkpoint.

Introduced in notebooks/07_seq2seq_rnn_attention.ipynb (``load_pretrained``).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

__all__ = ["MANIFEST_NAME", "sha256_hex", "checkpoint_path", "read_manifest", "record", "verify_bytes"]

MANIFEST_NAME = "MANIFEST.json"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*")
_COMMENT = (
    "SHA-256, size, model kind and config of every checkpoint in this folder. Written by "
    "course_utils.reversal.checkpoints.save_checkpoint (make checkpoints); load_pretrained checks a file against it "
    "before unpickling. data/README.md lists the same digests (tests/test_checkpoints.py compares them)."
)


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` as 64 hex digits."""
    return hashlib.sha256(data).hexdigest()


def checkpoint_path(folder: Path, name, available=()) -> Path:
    """``folder / f"{name}.pt"``, refusing names that are not plain names or that leave ``folder``."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a checkpoint name such as 'gru' (a str) but is {type(name).__name__} {name!r}")
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"name must be a plain checkpoint name (letters, digits, '_' and '-'), not a path, but is {name!r}; "
            f"available in {folder}: {sorted(available)}"
        )
    path = folder / f"{name}.pt"
    if path.exists() and path.resolve().parent != folder.resolve():
        raise ValueError(
            f"{path.name} in {folder} points outside the folder (to {path.resolve()}); refusing to load it"
        )
    return path


def read_manifest(folder: Path) -> dict:
    """``{name: entry}`` from ``folder / MANIFEST.json``; ``{}`` if there is none."""
    path = folder / MANIFEST_NAME
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data["checkpoints"]
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path} is not a valid checkpoint manifest ({type(err).__name__}: {err})") from None
    if not isinstance(entries, dict):
        raise ValueError(f"{path} is not a valid checkpoint manifest: 'checkpoints' must map names to entries")
    return entries


def record(folder: Path, name: str, entry: dict) -> None:
    """Add or replace ``name``'s entry in ``folder / MANIFEST.json`` (sorted, stable formatting)."""
    entries = read_manifest(folder)
    entries[name] = entry
    text = json.dumps({"comment": _COMMENT, "checkpoints": entries}, indent=2, sort_keys=True) + "\n"
    (folder / MANIFEST_NAME).write_text(text, encoding="utf-8")


def verify_bytes(path: Path, data: bytes, entry: dict) -> None:
    """Raise ``ValueError`` naming the file and both digests unless ``data`` has the entry's SHA-256."""
    digest = sha256_hex(data)
    if digest == entry.get("sha256"):
        return
    size = entry.get("bytes")
    if not data:
        why = "the file is empty (0 bytes)"
    elif isinstance(size, int) and len(data) < size:
        why = f"the file has {len(data)} bytes but the manifest lists {size}: it looks truncated"
    else:
        why = "the file's bytes differ from the ones recorded (corrupted or replaced)"
    raise ValueError(
        f"checksum mismatch for {path.name} in {path.parent}: expected SHA-256 {entry.get('sha256')} "
        f"(from {MANIFEST_NAME}) but the file has {digest}; {why}. It was not unpickled. Restore it "
        "(git checkout data/checkpoints) or rebuild it with `make checkpoints`"
    )
