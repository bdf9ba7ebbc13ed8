"""The cache key covers every file of course_utils/ and data/ (issue 27): a changed masks.py grades lesson 02 again.

The old key hashed a hand-kept list of file names (two of which no longer existed) and missed ``masks.py``, so after
a change to the helpers the references call, ``make grade`` reused every cached verdict of lesson 02.
"""

from __future__ import annotations

import shutil

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from course_utils import grading
from course_utils.grading import cache, records

LOGGER = """import json, os


def log(exercise, status):
    with open(os.environ["COURSE_CHECK_LOG"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"exercise": exercise, "status": status, "session": "s"}) + "\\n")
"""


def course_copy(tmp_path):
    copy = tmp_path / "course"
    for tree in cache.KEYED_TREES:
        shutil.copytree(records.COURSE / tree, copy / tree, ignore=shutil.ignore_patterns("__pycache__", "checkpoints"))
    return copy


def test_every_file_of_the_package_and_its_data_is_in_the_key(tmp_path):
    copy = course_copy(tmp_path)
    first = cache.engine_fingerprint(copy)
    assert cache.engine_fingerprint(copy) == first
    for path in (copy / "course_utils" / "masks.py", copy / "course_utils" / "reversal" / "data.py"):
        if not path.exists():
            continue
        original = path.read_bytes()
        path.write_bytes(original + b"\n# changed\n")
        assert cache.engine_fingerprint(copy) != first, path
        path.write_bytes(original)
    (copy / "data" / "reversal_val.txt").write_text("changed")
    assert cache.engine_fingerprint(copy) != first
    (copy / "data" / "reversal_val.txt").write_bytes((records.COURSE / "data" / "reversal_val.txt").read_bytes())
    (copy / "course_utils" / "new_helper.py").write_text("X = 1\n")  # a new module: no list to forget it in
    assert cache.engine_fingerprint(copy) != first
    (copy / "course_utils" / "new_helper.py").unlink()
    (copy / "course_utils" / "__pycache__").mkdir(exist_ok=True)
    (copy / "course_utils" / "__pycache__" / "masks.cpython-313.pyc").write_bytes(b"byte code")
    assert cache.engine_fingerprint(copy) == first  # byte-code caches do not count


def test_a_changed_masks_py_grades_lesson_02_again(tmp_path, monkeypatch):
    copy = course_copy(tmp_path)
    monkeypatch.setattr(cache, "engine_fingerprint", lambda: _fingerprint(copy))
    root = tmp_path / "class"
    (root / "ann").mkdir(parents=True)
    nb = new_notebook(cells=[new_code_cell(LOGGER), new_code_cell("log('02.band', 'passed')")])
    nbformat.write(nb, root / "ann" / "02_masking.ipynb")
    registry = {"02": ["02.band"]}
    first = grading.grade(root, registry=registry, progress=False, jobs=1, cell_timeout=20)
    again = grading.grade(root, registry=registry, progress=False, jobs=1, cell_timeout=20)
    assert (first.ran, again.ran, again.cached) == (1, 0, 1)
    masks = copy / "course_utils" / "masks.py"
    masks.write_text(masks.read_text() + "\n# a changed helper\n")
    third = grading.grade(root, registry=registry, progress=False, jobs=1, cell_timeout=20)
    assert (third.ran, third.cached) == (1, 0)
    assert [r.status for r in third.records] == ["passed"]


_fingerprint = cache.engine_fingerprint
