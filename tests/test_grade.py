"""The class report (course_utils.grading, `make grade`): every status, every broken notebook, the cache, the page.

Fast part (make test): a folder of short synthetic notebooks whose cells write contract lines to
COURSE_CHECK_LOG themselves, graded against a small fake registry (lesson "91"). One student per
situation: all passed; wrong / not attempted / crashed from the log; an infinite loop; a deleted
check cell, no kernel metadata and a written file; invalid JSON; a first cell that raises; checks
out of order; a kernel that dies; a check cell tagged skip-execution. Every row of grades.csv is checked. Then: a second run comes
from the cache, a changed notebook is re-run, and grades.html is read by a parser and opened in
headless Chromium (skipped without /usr/bin/chromium).

Real lessons (need the exercise engine, course_utils.checking.registry and checks.check): lesson 01
solved (tests/solved_lessons.py: all passed) and as shipped (its student edition: all not_attempted).
Marked slow: every lesson solved and shipped, and lesson 01 broken in every way (a misconception, a
None return, a crash, an endless loop, a deleted check, no kernel metadata, a first cell that raises,
not JSON).
"""

from __future__ import annotations

import csv
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
import solved_lessons
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course_utils import grading
from course_utils.grading import cache, cli

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
REGISTRY = {"91": [("91.alpha", "First"), ("91.beta", "Second"), ("91.gamma", "Third")]}
IDS = [i for i, _ in REGISTRY["91"]]
CELL_TIMEOUT = 5  # seconds: every synthetic cell takes well under one; the endless loop is stopped at 5

LOGGER = """import json, os


def log(exercise, status, misconception=None, detail=""):
    line = {"exercise": exercise, "lesson": exercise[:2], "status": status, "misconception": misconception, "detail": detail}
    with open(os.environ["COURSE_CHECK_LOG"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\\n")
"""


def check(exercise, status="passed", misconception=None, detail=""):
    """The source of a synthetic check cell that logs one contract line."""
    return f"log({exercise!r}, {status!r}, {misconception!r}, {detail!r})"


def notebook(*sources, kernel=True) -> nbformat.NotebookNode:
    nb = new_notebook(cells=[new_markdown_cell("# 91 · Synthetic")] + [new_code_cell(s) for s in sources])
    if kernel:
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def write(root: Path, student: str, nb, name: str = "91_synthetic.ipynb") -> Path:
    path = root / student / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(nb, str):
        path.write_text(nb, encoding="utf-8")
    else:
        nbformat.write(nb, path)
    return path


# student -> {exercise: (status, a fragment the detail must contain)}
EXPECTED = {
    "ada": {i: ("passed", "") for i in IDS},
    "bob": {
        "91.alpha": ("wrong", "softmax_over_queries: you normalised over the queries"),
        "91.beta": ("not_attempted", "not attempted yet"),
        "91.gamma": ("crashed", "case 1 of 2 crashed with IndexError"),
    },
    "cyd": {
        "91.alpha": ("passed", ""),
        "91.beta": ("timed_out", f"code cell 3 ran past the {CELL_TIMEOUT} s cell limit"),
        "91.gamma": ("timed_out", "not checked"),
    },
    "dee": {
        "91.alpha": ("passed", "no kernel metadata"),
        "91.beta": ("passed", "wrote 1 file(s) in its folder"),
        "91.gamma": ("missing", "no code cell calls the check of 91.gamma"),
    },
    "eve": {i: ("crashed", "could not be read") for i in IDS},
    "fay": {i: ("crashed", "NameError: name 'log' is not defined") for i in IDS},
    "gus": {i: ("passed", "out of the lesson's order") for i in IDS},
    "hal": {
        "91.alpha": ("passed", "the kernel died in code cell 3"),
        "91.beta": ("crashed", "the kernel died in code cell 3"),
        "91.gamma": ("crashed", "not checked"),
    },
    "ida": {
        "91.alpha": ("passed", ""),
        "91.beta": ("skipped", "skipped by the notebook: its check cell (code cell 3) is tagged skip-execution"),
        "91.gamma": ("passed", ""),
    },
}


def build_synthetic(root: Path) -> Path:
    write(root, "ada", notebook(LOGGER, *(check(i) for i in IDS)))
    write(
        root,
        "bob",
        notebook(
            LOGGER,
            check("91.alpha", "wrong", "softmax_over_queries", "you normalised over the queries (axis 0)"),
            check("91.beta", "not_attempted", None, "not attempted yet"),
            check("91.gamma", "crashed", None, "case 1 of 2 crashed with IndexError: index 3 is out of bounds"),
        ),
    )
    write(
        root,
        "cyd",
        notebook(LOGGER, check("91.alpha"), "while True:\n    pass\n" + check("91.beta"), check("91.gamma")),
    )
    write(
        root,
        "dee",
        notebook(LOGGER, check("91.alpha"), "open('scratch.txt', 'w').write('x')\n" + check("91.beta"), kernel=False),
    )
    write(root, "eve", '{"cells": [ this is not JSON')
    write(root, "fay", notebook("raise RuntimeError('boom in the first cell')\n" + LOGGER, *(check(i) for i in IDS)))
    write(root, "gus", notebook(LOGGER, check("91.gamma"), check("91.alpha"), check("91.beta")))
    write(
        root,
        "hal",
        notebook(LOGGER, check("91.alpha"), "import os\nos._exit(1)\n" + check("91.beta"), check("91.gamma")),
    )
    ida = notebook(LOGGER, *(check(i) for i in IDS))
    ida.cells[3].metadata["tags"] = ["skip-execution"]  # the check cell of 91.beta (code cell 3)
    write(root, "ida", ida)
    (root / "ada" / "notes.txt").write_text("not a notebook: ignored")
    return root


def read_csv(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    root = build_synthetic(tmp_path_factory.mktemp("submissions"))
    run = grading.grade(root, registry=REGISTRY, cell_timeout=CELL_TIMEOUT, notebook_timeout=120, progress=False)
    return root, run


# ------------------------------------------------------------------------------- grades.csv


def test_every_row_of_grades_csv(synthetic):
    root, run = synthetic
    rows = read_csv(root / "grades.csv")
    assert list(rows[0]) == ["student", "lesson", "exercise", "status", "detail"]
    got = [(r["student"], r["lesson"], r["exercise"]) for r in rows]
    assert got == [(s, "91", i) for s in sorted(EXPECTED) for i in IDS]  # one row per student and exercise, in order
    for row in rows:
        status, fragment = EXPECTED[row["student"]][row["exercise"]]
        assert row["status"] == status, row
        assert fragment in row["detail"], (row, fragment)
    assert run.ran == len(EXPECTED) and run.cached == 0


def test_every_status_occurs(synthetic):
    root, _ = synthetic
    assert {r["status"] for r in read_csv(root / "grades.csv")} == set(grading.STATUSES)


def test_no_kernel_is_left_running(synthetic):
    psutil = pytest.importorskip("psutil")
    kernels = [p for p in psutil.Process().children(recursive=True) if "ipykernel" in " ".join(p.cmdline())]
    assert not kernels  # the endless loop's and the dead kernel's included


def test_passed_rows_of_a_clean_notebook_have_no_detail(synthetic):
    root, _ = synthetic
    assert [r["detail"] for r in read_csv(root / "grades.csv") if r["student"] == "ada"] == ["", "", ""]


def test_files_written_by_a_notebook_stay_out_of_the_submissions(synthetic):
    root, run = synthetic
    assert not (root / "dee" / "scratch.txt").exists()
    assert sorted(p.name for p in (root / "dee").iterdir()) == ["91_synthetic.ipynb"]
    assert any(s == "dee" and "wrote 1 file(s)" in note for s, _, note in run.problems)


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(ValueError, match="SUBMISSIONS must be a folder"):
        grading.grade(tmp_path / "nowhere", registry=REGISTRY, progress=False)
    with pytest.raises(ValueError, match="cell_timeout must be a positive number"):
        grading.grade(tmp_path, registry=REGISTRY, cell_timeout=0, progress=False)
    with pytest.raises(ValueError, match="two-digit lesson strings"):
        grading.grade(tmp_path, registry={"1": ["1.a"]}, progress=False)


def test_unknown_lesson_and_duplicate_notebook_are_reported_not_run(tmp_path):
    write(tmp_path, "ivy", notebook(LOGGER, check("91.alpha")), name="91_a.ipynb")
    write(tmp_path, "ivy", notebook("raise SystemExit"), name="91_b.ipynb")
    write(tmp_path, "ivy", notebook("1"), name="93_other.ipynb")
    run = grading.grade(tmp_path, registry=REGISTRY, cell_timeout=CELL_TIMEOUT, progress=False)
    assert run.ran == 1
    assert [(r.exercise, r.status) for r in run.records] == [
        ("91.alpha", "passed"),
        ("91.beta", "missing"),
        ("91.gamma", "missing"),
    ]
    notes = [note for _, _, note in run.problems]
    assert "not graded: 91_a.ipynb is already lesson 91" in notes
    assert "lesson 93 has no registered exercises; not run" in notes


def test_notebook_time_limit(tmp_path):
    write(tmp_path, "jon", notebook(LOGGER, check("91.alpha"), "import time\ntime.sleep(30)", check("91.beta")))
    run = grading.grade(tmp_path, registry=REGISTRY, cell_timeout=60, notebook_timeout=6, progress=False)
    statuses = {r.exercise: r.status for r in run.records}
    assert statuses == {"91.alpha": "passed", "91.beta": "timed_out", "91.gamma": "missing"}
    assert "ran past the 6 s notebook limit" in run.records[1].detail


# ------------------------------------------------------------------------------- the cache


def test_second_run_comes_from_the_cache_and_a_changed_notebook_reruns(synthetic, tmp_path, monkeypatch):
    root, _ = synthetic
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    before = (copy / "grades.csv").read_text()
    again = grading.grade(copy, registry=REGISTRY, cell_timeout=CELL_TIMEOUT, notebook_timeout=120, progress=False)
    assert (again.ran, again.cached) == (0, len(EXPECTED))
    assert (copy / "grades.csv").read_text() == before
    write(
        copy,
        "ada",
        notebook(LOGGER, check("91.alpha"), check("91.beta", "wrong", None, "off by one"), check("91.gamma")),
    )
    third = grading.grade(copy, registry=REGISTRY, cell_timeout=CELL_TIMEOUT, notebook_timeout=120, progress=False)
    assert (third.ran, third.cached) == (1, len(EXPECTED) - 1)
    ada = {r["exercise"]: r["status"] for r in read_csv(copy / "grades.csv") if r["student"] == "ada"}
    assert ada == {"91.alpha": "passed", "91.beta": "wrong", "91.gamma": "passed"}
    monkeypatch.setattr(cache, "engine_fingerprint", lambda: "a changed engine")
    fourth = grading.grade(copy, registry=REGISTRY, cell_timeout=CELL_TIMEOUT, notebook_timeout=120, progress=False)
    assert (fourth.ran, fourth.cached) == (len(EXPECTED), 0)  # a changed engine re-runs everything


def test_cli_writes_both_reports(tmp_path, monkeypatch, capsys):
    write(tmp_path, "kim", notebook(LOGGER, *(check(i) for i in IDS)))
    monkeypatch.setattr(cli, "load_registry", lambda: REGISTRY)
    assert grading.main([str(tmp_path), "--no-progress", "--cell-timeout", "20"]) == 0
    out = capsys.readouterr().out
    assert "3 rows from 1 notebooks (1 run, 0 from the cache)" in out
    assert "passed: 3" in out
    assert (tmp_path / "grades.csv").exists() and (tmp_path / "grades.html").exists()
    assert grading.main([str(tmp_path / "absent"), "--no-progress"]) == 2


# ------------------------------------------------------------------------------- grades.html


class _Cells(HTMLParser):
    """Collect (student, exercise) -> data-status of the grade table, and the footer's data attributes."""

    def __init__(self):
        super().__init__()
        self.student, self.status, self.footer = None, {}, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr":
            self.student = a.get("data-student")
        if tag == "td" and self.student and "data-status" in a:
            self.status[(self.student, a["data-exercise"])] = a["data-status"]
        if tag == "td" and ("data-passed" in a or "data-misconception" in a):
            self.footer.append(a)


def test_html_matches_the_csv(synthetic):
    root, _ = synthetic
    parser = _Cells()
    parser.feed((root / "grades.html").read_text(encoding="utf-8"))
    rows = read_csv(root / "grades.csv")
    assert parser.status == {(r["student"], r["exercise"]): r["status"] for r in rows}
    passed = {a["data-exercise"]: int(a["data-passed"]) for a in parser.footer if "data-passed" in a}
    assert passed == {i: sum(r["status"] == "passed" and r["exercise"] == i for r in rows) for i in IDS}
    misconceptions = {a["data-exercise"]: a["data-misconception"] for a in parser.footer if "data-misconception" in a}
    assert misconceptions == {"91.alpha": "softmax_over_queries"}


def test_html_escapes_student_text(tmp_path):
    write(tmp_path, "<em>mal", notebook(LOGGER, check("91.alpha", "wrong", None, "<script>alert(1)</script>")))
    grading.grade(tmp_path, registry=REGISTRY, cell_timeout=CELL_TIMEOUT, progress=False)
    page = (tmp_path / "grades.html").read_text(encoding="utf-8")
    assert "<script>" not in page and "<em>mal" not in page and "&lt;em&gt;mal" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_html_opens_in_headless_chromium(synthetic, tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium to open grades.html in a browser")
    sync_api = pytest.importorskip("playwright.sync_api")
    root, run = synthetic
    rows = read_csv(root / "grades.csv")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            errors = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto((root / "grades.html").as_uri())
            assert page.title() == "Class report"
            cells = page.eval_on_selector_all(
                "#grades tbody td[data-status]",
                "cells => cells.map(c => [c.parentElement.dataset.student, c.dataset.exercise, c.dataset.status,"
                " c.innerText.trim(), getComputedStyle(c).backgroundColor])",
            )
            assert {(s, e): st for s, e, st, _, _ in cells} == {
                (r["student"], r["exercise"]): r["status"] for r in rows
            }
            for _, _, status, text, colour in cells:  # readable without colour: the words are in the cell
                assert text.endswith(grading_words(status)), (status, text)
                assert colour != "rgba(0, 0, 0, 0)"
            assert page.locator("#problems tbody tr").count() == len(run.problems)
            page.screenshot(path=str(tmp_path / "grades.png"), full_page=True)
            assert not errors
        finally:
            browser.close()


def grading_words(status: str) -> str:
    from course_utils.grading.report import STATUS_STYLE

    return STATUS_STYLE[status][1]


# ------------------------------------------------------------------------------- real lessons


def _engine():
    """Skip unless the exercise engine (registry + checks.check writing COURSE_CHECK_LOG) is installed."""
    exercises = pytest.importorskip("course_utils.checking.registry")
    from course_utils import checks

    if not hasattr(checks, "check"):
        pytest.skip("course_utils.checks.check (the exercise engine) is not there yet")
    return exercises


def _real_submissions(root: Path, lessons) -> Path:
    """root/solved/: the lessons solved; root/shipped/: their student editions (tests/solved_lessons.py)."""
    (root / "solved").mkdir()
    (root / "shipped").mkdir()
    for path in solved_lessons.lessons(lessons):
        nbformat.write(solved_lessons.solved(path), root / "solved" / path.name)
        nbformat.write(solved_lessons.shipped(path), root / "shipped" / path.name)
    return root


def _check_real(root: Path, lessons, exercises) -> None:
    assert sorted(p.name[:2] for p in (root / "shipped").glob("*.ipynb")) == sorted(lessons)
    assert sorted(p.name[:2] for p in (root / "solved").glob("*.ipynb")) == sorted(lessons)
    run = grading.grade(root, cell_timeout=300, notebook_timeout=900, progress=False)
    rows = read_csv(root / "grades.csv")
    for student, status in (("solved", "passed"), ("shipped", "not_attempted")):
        mine = [r for r in rows if r["student"] == student]
        submitted = sorted({p.name[:2] for p in (root / student).glob("*.ipynb")})
        expected_ids = [e.id for lesson in submitted for e in exercises.for_lesson(lesson)]
        assert expected_ids and [r["exercise"] for r in mine] == expected_ids
        wrong = [(r["exercise"], r["status"], r["detail"]) for r in mine if r["status"] != status]
        assert not wrong, f"{student}: {wrong}"
    assert run.ran == len(list(root.glob("*/*.ipynb")))


def test_real_lesson_01_solved_and_shipped(tmp_path):
    exercises = _engine()
    _check_real(_real_submissions(tmp_path, {"01"}), {"01"}, exercises)


def _rebind_before_check(nb, exercise_id: str, source: str) -> None:
    """Put ``source`` just before the ``checks.check`` call of ``exercise_id``, in the same cell."""
    call = f'checks.check("{exercise_id}"'
    cell = next(c for c in nb.cells if c.cell_type == "code" and call in c.source)
    lines = cell.source.split("\n")
    at = next(k for k, line in enumerate(lines) if call in line)  # the whole line: `fn = checks.check(...)`
    cell.source = "\n".join([*lines[:at], source, "", "", *lines[at:]])


def _as_student(path: Path):
    """A solved lesson as a student would hand it in: checks without strict=True."""
    nb = solved_lessons.solved(path)
    for cell in nb.cells:
        cell.source = cell.source.replace(", strict=True)", ")")
    return nb


@pytest.mark.slow
def test_real_lesson_broken_in_every_way(tmp_path):
    """Lesson 01 solved, then broken: a misconception, a None return, a crash, an endless loop, a deleted check."""
    exercises = _engine()
    lesson_01 = list(exercises.for_lesson("01"))
    first = exercises.get("01.softmax_along")  # the bug zoo's softmax_along_wrong_axis answers this one
    second, third = [e for e in lesson_01 if e is not first][:2]  # the others pass unchanged
    solution = REPO / "notebooks" / "01_attention_numpy.ipynb"

    nb = solved_lessons.solved(solution)
    _rebind_before_check(
        nb,
        first.id,
        f"from course_utils import misconceptions\n\n{first.function} = misconceptions.softmax_along_wrong_axis",
    )
    _rebind_before_check(nb, second.id, f"def {second.function}(*args, **kwargs):\n    return None")
    _rebind_before_check(nb, third.id, f"def {third.function}(*args, **kwargs):\n    while True:\n        pass")
    write(tmp_path, "ann", nb, name="01_attention_numpy.ipynb")

    nb = _as_student(solution)
    _rebind_before_check(nb, second.id, f"def {second.function}(*args, **kwargs):\n    return 1 / 0")
    nb.cells = [c for c in nb.cells if f'"{first.id}"' not in c.source or c.cell_type != "code"]  # check deleted
    nb.cells.insert(1, new_code_cell("raise RuntimeError('a first cell that raises')"))
    del nb.metadata["kernelspec"]
    write(tmp_path, "ben", nb, name="01_attention_numpy.ipynb")
    write(tmp_path, "cat", "not a notebook at all", name="01_attention_numpy.ipynb")

    grading.grade(tmp_path, cell_timeout=120, notebook_timeout=600, progress=False)
    rows = {(r["student"], r["exercise"]): r for r in read_csv(tmp_path / "grades.csv")}
    assert len(rows) == 3 * len(lesson_01)  # three students, every exercise of lesson 01
    expected = {
        ("ann", first.id): ("wrong", "softmax_wrong_axis"),
        ("ann", second.id): ("wrong", "None"),
        ("ann", third.id): ("timed_out", ""),
        ("ben", first.id): ("missing", "the cell was deleted or renamed"),
        ("ben", second.id): ("crashed", "ZeroDivisionError"),
        ("ben", third.id): ("passed", "no kernel metadata"),
        ("cat", first.id): ("crashed", "could not be read"),
        ("cat", second.id): ("crashed", "could not be read"),
        ("cat", third.id): ("crashed", "could not be read"),
    }
    for key, (status, fragment) in expected.items():
        assert rows[key]["status"] == status, rows[key]
        assert fragment in rows[key]["detail"], rows[key]
    assert "code cell 1 raised RuntimeError: a first cell that raises" in rows[("ben", third.id)]["detail"]


@pytest.mark.slow
def test_real_lessons_all_solved_and_shipped(tmp_path):
    exercises = _engine()
    lessons = {f"{n:02d}" for n in range(9)}
    _check_real(_real_submissions(tmp_path, lessons), lessons, exercises)
