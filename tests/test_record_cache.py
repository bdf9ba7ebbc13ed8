"""The recorded checks are made once per set of sources: a second publish copies them (scripts/record_checks.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
record_checks = pytest.importorskip("record_checks")


def _package(root: Path) -> Path:
    package = root / "notebooks" / "course_utils"
    for lesson in ("00", "01"):
        (package / "lessons" / f"lesson_{lesson}").mkdir(parents=True)
        (package / "lessons" / f"lesson_{lesson}" / "exercises.py").write_text("def reference(): ...\n")
    return package


def test_a_second_publish_of_the_same_sources_copies_the_recording(tmp_path, monkeypatch):
    made = []

    def record_into(out, package, lessons):
        made.append(tuple(lessons))
        out.mkdir(parents=True, exist_ok=True)
        (out / "lesson_00.json").write_text('{"recorded": true}')
        return {"00": [["00.a"], {}], "01": [[], {"01.b": "a driver in the exercises module"}]}

    monkeypatch.setattr(record_checks, "_record_into", record_into)
    monkeypatch.setattr(record_checks, "inputs_digest", lambda lessons=None: "same-sources")
    for name in ("one", "two"):
        package = _package(tmp_path / name)
        found = record_checks.publish(package, ("00", "01"), cache=tmp_path / "cache")
        assert found["01"][1] == {"01.b": "a driver in the exercises module"}
        assert json.loads((package.parent / "data" / "checks" / "lesson_00.json").read_text()) == {"recorded": True}
        assert 'recorded_exercises.lesson("00")' in (package / "lessons" / "lesson_00" / "exercises.py").read_text()
        assert (package / "lessons" / "lesson_01" / "exercises.py").read_text() == "def reference(): ...\n"
    assert made == [("00", "01")]  # recorded once
    record_checks.publish(_package(tmp_path / "three"), ("00", "01"), cache=None)
    assert len(made) == 2  # cache=None always records


def test_the_digest_follows_every_source_file_and_the_lessons(tmp_path):
    for folder in ("course_utils", "notebooks", "data", "scripts"):
        (tmp_path / folder).mkdir()
    (tmp_path / "course_utils" / "masks.py").write_text("A = 1\n")
    (tmp_path / "requirements.txt").write_text("numpy==2.3.4\n")
    first = record_checks.inputs_digest(("00",), repo=tmp_path)
    assert record_checks.inputs_digest(("00",), repo=tmp_path) == first
    assert record_checks.inputs_digest(("00", "01"), repo=tmp_path) != first
    (tmp_path / "course_utils" / "__pycache__").mkdir()
    (tmp_path / "course_utils" / "__pycache__" / "masks.cpython-311.pyc").write_bytes(b"\0")
    assert record_checks.inputs_digest(("00",), repo=tmp_path) == first  # compiled files are not sources
    (tmp_path / "course_utils" / "masks.py").write_text("A = 2\n")
    assert record_checks.inputs_digest(("00",), repo=tmp_path) != first
