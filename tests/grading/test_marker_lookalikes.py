"""A line that resembles a solution or hidden-test marker, and is not exactly one, stops the student edition
(issue 27): a Cyrillic О in SOLUTION, a zero-width space, SOLUTIONS, HIDDEN TEST, any case, any number of #.
Each of these shipped the solution in the student edition before (the line was kept as a comment)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("course_scripts_editions_27", REPO / "scripts" / "editions.py")
editions = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = editions  # dataclasses look their module up while it loads
_spec.loader.exec_module(editions)

SECRET = "return scores.argmax()  # the answer"
LOOKALIKES = {
    "cyrillic O": "### BEGIN S\u041eLUTION",
    "greek capital iota": "### BEGIN SOLUT\u0399ON",
    "zero-width space": "### BEGIN\u200b SOLUTION",
    "zero-width joiner inside": "### BEG\u200dIN SOLUTION",
    "plural": "### BEGIN SOLUTIONS",
    "lower case": "### begin solution",
    "one hash": "# BEGIN SOLUTION",
    "no hash": "BEGIN  SOLUTION",
    "full-width letters": "### \uff22\uff25\uff27\uff29\uff2e SOLUTION",
    "underscore": "### BEGIN_SOLUTION",
    "soft hyphen": "### BEGIN SOLU\u00adTION",
}


def one_cell(begin: str, end: str = "### END SOLUTION") -> dict:
    source = f"def best(scores):\n    {begin}\n    {SECRET}\n    {end}\n"
    cell = {"cell_type": "code", "id": "c1", "metadata": {}, "source": source, "outputs": [], "execution_count": 1}
    return {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.mark.parametrize("name", list(LOOKALIKES))
def test_a_marker_lookalike_is_an_error_naming_cell_and_line(name):
    with pytest.raises(editions.EditionError) as caught:
        editions.make_edition(one_cell(LOOKALIKES[name]), "notebooks/05_demo.ipynb")
    (problem,) = caught.value.problems
    assert (problem.cell, problem.line) == (0, 2), name
    assert "notebooks/05_demo.ipynb: cell 0 (id c1" in str(caught.value)


@pytest.mark.parametrize(
    "end", ["### END SOLUTION\u200b", "### END H\u0399DDEN TESTS", "### END HIDDEN TEST", "## end solution"]
)
def test_a_lookalike_end_marker_is_an_error(end):
    with pytest.raises(editions.EditionError):
        editions.make_edition(one_cell("### BEGIN SOLUTION", end), "notebooks/05_demo.ipynb")


def test_exact_markers_and_ordinary_comments_still_pass():
    edition = editions.student_edition(one_cell("### BEGIN SOLUTION"), "notebooks/05_demo.ipynb")
    assert SECRET not in edition["cells"][0]["source"]
    for text in ("# the beginning of the solution space", "# we end here; solutions follow", "x = 'begin'"):
        nb = one_cell("### BEGIN SOLUTION")
        nb["cells"][0]["source"] = text + "\n" + nb["cells"][0]["source"]
        editions.make_edition(nb, "notebooks/05_demo.ipynb")
