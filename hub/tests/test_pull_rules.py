"""Pulling the student edition again: nbgitpuller's merge rules, run for real, next to the course's own rules.

The published edition (scripts/publish_student_edition.py) goes to a local bare repository; nbgitpuller's own
``GitPuller`` (the code behind the pull link) clones it into a student's home; the student works; the course
publishes a second version; the student pulls again. In parallel the course's ``make workspace`` rules
(scripts/workspace.py ``sync``) run on the same two versions. Both keep every edit a student made; they differ on a
lesson the student never touched (nbgitpuller updates it, ``make workspace`` keeps it and flags it outdated) and on
a course change to a lesson the student edited (nbgitpuller merges it in around the student's lines).
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
from publish_student_edition import build_tree, commit_tree  # noqa: E402

nbgitpuller = pytest.importorskip("nbgitpuller.pull", reason="the hub's packages: make test-hub installs them")

ANSWER = "    # the student's own answer\n    return x"


def _pull(url: str, home: Path) -> list[str]:
    return list(nbgitpuller.GitPuller(url, str(home / "attention-course"), branch="student").pull())


def _first_stub(nb) -> int:
    return next(
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and c.source.startswith("def ") and "\n    ...  # your code here" in c.source
    )


def _markdown(nb, after: int) -> int:
    return next(i for i, c in enumerate(nb.cells) if i > after + 3 and c.cell_type == "markdown")


def _sync(lessons: Path, workspace: Path) -> str:
    command = [sys.executable, str(REPO / "scripts" / "workspace.py"), "--notebooks", str(lessons)]
    return subprocess.run(
        [*command, "--workspace", str(workspace), "sync"], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A bare repository holding the edition, version 1; and the tree, to make version 2 from."""
    root = tmp_path_factory.mktemp("course")
    tree = root / "v1"
    build_tree(tree)
    bare = root / "attention-course"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    commit_tree(tree, bare, "student", "version 1")
    return root, tree, bare


def test_pulling_again_keeps_every_edit_and_brings_the_new_lessons(course, tmp_path):
    root, v1, bare = course
    home = tmp_path / "home"
    _pull(f"file://{bare}", home)  # the first click on the link
    lessons = home / "attention-course" / "notebooks"
    names = sorted(p.name for p in lessons.glob("[0-9][0-9]_*.ipynb"))
    first, second, third = names[1], names[2], names[3]  # 01, 02 and 03
    # the course's own rules, on the same versions, in a my_work/ folder
    my_work = tmp_path / "my_work"
    _sync(v1 / "notebooks", my_work)

    # The student works: answers lesson 01's first exercise and runs a cell (an output), deletes lesson 02,
    # writes a notebook of their own, and one named like a lesson the course will add.
    for folder in (lessons, my_work):
        nb = nbformat.read(folder / first, as_version=4)
        stub = _first_stub(nb)  # the same cell in both copies
        head = nb.cells[stub].source.split("\n    # YOUR CODE HERE")[0].split("\n    ...")[0]
        nb.cells[stub].source = head + "\n" + ANSWER
        nb.cells[stub].outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
        nb.cells[stub].execution_count = 1
        nbformat.write(nb, folder / first)
        (folder / second).unlink()
        shutil.copy2(folder / first, folder / "my_notes.ipynb")
        (folder / "09_extra.ipynb").write_text(json.dumps(nbformat.v4.new_notebook()), encoding="utf-8")
    edited = nbformat.read(lessons / first, as_version=4)
    stub = _first_stub(nbformat.read(v1 / "notebooks" / first, as_version=4))

    # The course publishes version 2: lesson 01's stub and a markdown cell far from it change, lesson 03 changes,
    # lesson 09 is new.
    v2 = root / "v2"
    if not v2.exists():
        shutil.copytree(v1, v2)
        nb = nbformat.read(v2 / "notebooks" / first, as_version=4)
        nb.cells[stub].source += "\n    # (a clearer stub, version 2)"
        nb.cells[_markdown(nb, stub)].source += "\n\nA sentence added in version 2."
        nbformat.write(nb, v2 / "notebooks" / first)
        nb3 = nbformat.read(v2 / "notebooks" / third, as_version=4)
        nb3.cells[0].source += "\n\nLesson 03, version 2."
        nbformat.write(nb3, v2 / "notebooks" / third)
        new = copy.deepcopy(nb3)
        new.cells = new.cells[:2]
        nbformat.write(new, v2 / "notebooks" / "09_extra.ipynb")
        commit_tree(v2, bare, "student", "version 2")

    log = "".join(_pull(f"file://{bare}", home))  # the second click
    _sync(v2 / "notebooks", my_work)

    # 1. a new lesson arrives (both rules); nbgitpuller moves the student's file of that name aside, ours keeps it
    assert "Lesson 03, version 2." in nbformat.read(lessons / "09_extra.ipynb", as_version=4).cells[0].source
    moved = list(lessons.glob("09_extra__*.ipynb"))
    assert len(moved) == 1 and nbformat.read(moved[0], as_version=4).cells == [], log
    assert nbformat.read(my_work / "09_extra.ipynb", as_version=4).cells == []  # ours: never overwritten
    # 2. the edited lesson keeps every edit and its outputs; nbgitpuller merges the course's other change in
    pulled = nbformat.read(lessons / first, as_version=4)
    nbformat.validate(pulled)
    assert pulled.cells[stub].source == edited.cells[stub].source  # the student's lines won the conflict
    assert pulled.cells[stub].outputs == edited.cells[stub].outputs
    assert "A sentence added in version 2." in pulled.cells[_markdown(pulled, stub)].source
    ours = nbformat.read(my_work / first, as_version=4)
    assert ours.cells == edited.cells  # ours: the copy is not touched at all (and is flagged outdated)
    # 3. a deleted lesson comes back (both)
    assert (lessons / second).exists() and (my_work / second).exists()
    # 4. an untouched lesson: nbgitpuller updates it; ours keeps the old copy and flags it outdated
    assert "Lesson 03, version 2." in nbformat.read(lessons / third, as_version=4).cells[0].source
    assert "Lesson 03, version 2." not in nbformat.read(my_work / third, as_version=4).cells[0].source
    # 5. the student's own notebook stays (both)
    assert (lessons / "my_notes.ipynb").exists() and (my_work / "my_notes.ipynb").exists()
