"""grades.csv never holds a formula, whatever Unicode hides it; look-alike student names are a warning at the top of
grades.html and in make grade's output (issue 27)."""

from __future__ import annotations

import csv
import unicodedata

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from course_utils import grading
from course_utils.grading import cli, export, records, report

FORMULAS = [
    "=1+2",
    " =1+2",  # a leading space: spreadsheets drop it
    "\u00a0=HYPERLINK(1)",
    "\uff1dcmd|' /C calc'!A0",  # full-width =
    "\uff0b1",  # full-width +
    "\uff0d1",  # full-width -
    "\uff20SUM(A1)",  # full-width @
    "\u200b=1+2",  # a zero-width space first
    "\ufeff+1",  # a byte-order mark first
    "\t=x",
    "\r=x",
]


def test_every_formula_looking_cell_is_neutralised():
    for value in FORMULAS:
        assert export.csv_safe(value).startswith("'"), ascii(value)
    for value in ("ada", "", "a=b", "1+2", "Zoë"):
        assert export.csv_safe(value) == value


def test_the_csv_holds_no_formula(tmp_path):
    rows = [records.Record(name, "91", "91.alpha", "passed", name) for name in FORMULAS]
    path = export.write_csv(rows, tmp_path / "grades.csv")
    with path.open(newline="", encoding="utf-8") as handle:
        cells = [cell for row in list(csv.reader(handle))[1:] for cell in row]
    for cell in cells:
        shown = unicodedata.normalize("NFKC", cell).lstrip(" \u00a0\u200b\ufeff")
        assert not shown.startswith(("=", "+", "-", "@", "\t", "\r")), ascii(cell)


LOOKALIKE_NAMES = {
    "ana": "\u0430na",  # a Cyrillic а
    "zoë": unicodedata.normalize("NFD", "zoë"),  # NFC and NFD
    "bob": "bob ",  # a trailing space
    "eve": "EVE",
    "kim": "k\u200bim",  # a zero-width space inside
}


def test_lookalike_names_are_grouped():
    names = [*LOOKALIKE_NAMES, *LOOKALIKE_NAMES.values(), "dan", "dana"]
    groups = export.lookalike_names(names)
    assert sorted(map(sorted, groups)) == sorted(sorted([a, b]) for a, b in LOOKALIKE_NAMES.items())
    assert export.lookalike_names(["dan", "dana", "Dan-1"]) == []


def test_lookalike_names_are_a_warning_at_the_top_of_the_report_and_in_the_cli(tmp_path, monkeypatch, capsys):
    nb = new_notebook(cells=[new_code_cell("1")])
    for name in ("ana", "\u0430na", "bob"):
        (tmp_path / name).mkdir()
        nbformat.write(nb, tmp_path / name / "91_x.ipynb")
    monkeypatch.setattr(cli, "load_registry", lambda: {"91": ["91.alpha"]})
    assert grading.main([str(tmp_path), "--no-progress", "--cell-timeout", "20"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("WARNING: these student names look alike") and "'\\u0430na'" in out
    page = (tmp_path / "grades.html").read_text(encoding="utf-8")
    assert 'id="lookalikes"' in page
    assert page.index('id="lookalikes"') < page.index('id="grades"')  # above the table
    assert "bob" not in page[page.index('id="lookalikes"') : page.index('id="grades"')]


def test_the_results_as_data():
    run = records.GradeRun(
        records=[
            records.Record("ann", "01", "01.a", "wrong", "off by one", "axis"),
            records.Record("ann", "01", "01.b", "passed", ""),
        ],
        problems=[],
        registry={},
        predictions={("ann", "01"): {"01.guess": {"status": "wrong", "attempt": 1}}},
    )
    results = grading.check_results(run)
    assert [(r.student, r.lesson, r.exercise, r.status, r.misconception) for r in results] == [
        ("ann", "01", "01.a", "wrong", "axis"),
        ("ann", "01", "01.b", "passed", None),
    ]
    assert results[0].predictions == {"01.guess": {"status": "wrong", "attempt": 1}} and not results[0].tampering
    assert "skipped" in grading.STATUSES and report.STATUS_STYLE["skipped"][1] == "skipped by the notebook"
