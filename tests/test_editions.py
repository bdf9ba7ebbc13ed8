"""The edition maker (scripts/editions.py, behind `make workspace`): instructor edition in, student edition out.

On a fixture lesson with every kind of region (tests/edition_fixtures.py): each stub form (function body,
nested block, method body, class body, top-level prediction), hidden regions gone, hidden-only cells dropped,
ids and tags kept, outputs cleared, explanations collapsed; every misuse of the markers is one problem naming
the notebook, the cell (index and id), the line and the fix; the review's judge passes on the fixture's
edition; the untouched edition runs top to bottom in a kernel; and the authors' commands (`preview`,
`check`) on the fixture and on the real lessons.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import edition_fixtures as fx
import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
JUDGE = Path(os.environ.get("COURSE_EDITION_JUDGE", "/work/shared/hooks/student_edition.py"))


def _load(name: str):
    # Loaded by path: scripts/ is not a package.
    spec = importlib.util.spec_from_file_location(f"course_scripts_{name}", REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


editions = _load("editions")
run_editions = _load("run_editions")
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


@pytest.fixture(scope="module")
def lesson() -> dict:
    return json.loads(nbformat.writes(fx.fixture_lesson()))  # as read from disk: sources are strings or lists


@pytest.fixture(scope="module")
def edition(lesson):
    return editions.make_edition(lesson, "notebooks/01_fixture.ipynb")


def _cell(nb: dict, cell_id: str) -> dict:
    return next(cell for cell in nb["cells"] if cell.get("id") == cell_id)


def _src(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


# ---- stub forms ---------------------------------------------------------------------------------------


def test_a_function_body_becomes_one_stub_line_under_its_signature_and_docstring(edition):
    assert _src(_cell(edition.notebook, fx.IDS["softmax"])) == (
        "def softmax_rows(x):\n"
        '    """Softmax along the last axis: every row sums to 1, even for large scores."""\n'
        "    ...  # your code here\n"
        "\n\n"
        'softmax_rows = checks.check("01.softmax_rows", softmax_rows)'
    )


def test_a_region_in_a_nested_block_keeps_the_code_around_it(edition):
    source = _src(_cell(edition.notebook, fx.IDS["sum_rows"]))
    assert "    for row in rows:\n        ...  # your code here\n    return total\n" in source
    assert "total = total +" not in source


def test_a_method_body_and_a_class_body_are_stubbed_at_their_markers_indentation(edition):
    scaler = _src(_cell(edition.notebook, fx.IDS["scaler"]))
    assert '    def __call__(self, x):\n        """`x` times the factor."""\n        ...  # your code here\n' in scaler
    assert "    def __init__(self, factor):\n        self.factor = factor\n" in scaler  # outside the region: kept
    counter = _src(_cell(edition.notebook, fx.IDS["counter"]))
    assert counter.startswith(
        'class Counter:\n    """Counts the items added to it; `add` returns the count so far."""\n'
    )
    assert "\n    ...  # your code here\n" in counter and "def add" not in counter


def test_a_top_level_region_keeps_each_name_as_a_prediction_stub(edition):
    assert _src(_cell(edition.notebook, fx.IDS["prediction"])) == (
        'prediction = ...\nchecks.predict("01.causal_count", prediction)'
    )
    nb = {"cells": [{"cell_type": "code", "id": "p", "metadata": {}, "outputs": [], "execution_count": 1,
                     "source": "### BEGIN SOLUTION\nheads = 4\nscores = q @ k.T  # (q_len, k_len)\n"
                               "print(scores)\nd_head = (\n    64\n)\n### END SOLUTION\nshow(heads)"}]}  # fmt: skip
    student = editions.student_edition(nb)
    assert student["cells"][0]["source"] == "heads = ...\nscores = ...\nd_head = ...\nshow(heads)"


def test_every_stubbed_cell_is_valid_python(edition):
    for cell in edition.notebook["cells"]:
        if cell["cell_type"] == "code":
            compile(_src(cell), cell["id"], "exec")


def test_hidden_regions_are_removed_and_a_hidden_only_cell_is_dropped(edition, lesson):
    reveal = _src(_cell(edition.notebook, fx.IDS["reveal"]))
    assert reveal == "mask = np.tril(np.ones((4, 4), dtype=bool))\nprint(mask.astype(int))"
    ids = [cell["id"] for cell in edition.notebook["cells"]]
    assert fx.IDS["hidden_only"] not in ids
    assert ids == [cell["id"] for cell in lesson["cells"] if cell["id"] != fx.IDS["hidden_only"]], "order or ids"
    text = json.dumps(edition.notebook)
    assert not [marker for marker in MARKERS if marker in text]
    assert "assert" not in text and "4 + 3 + 2 + 1 entries" not in text


def test_nothing_computed_is_left_and_metadata_is_kept(edition, lesson):
    nb = edition.notebook
    nbformat.validate(nbformat.from_dict(nb))
    assert "widgets" not in nb["metadata"] and nb["metadata"]["kernelspec"]["name"] == "python3"
    for cell in nb["cells"]:
        assert "execution" not in cell["metadata"]
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
    assert _cell(nb, fx.IDS["setup"])["metadata"]["tags"] == ["keep-me"]
    assert _cell(nb, "fx-title")["metadata"]["slideshow"] == {"slide_type": "slide"}
    assert lesson["cells"][1]["outputs"], "the instructor edition was modified"


def test_a_tagged_explanation_heading_is_collapsed_in_the_student_edition_only(edition, lesson):
    why = _cell(edition.notebook, fx.IDS["why"])
    assert why["metadata"][editions.COLLAPSED_KEY] is True
    assert why["metadata"]["tags"] == [editions.COLLAPSE_TAG]
    collapsed = [cell["id"] for cell in edition.notebook["cells"] if editions.COLLAPSED_KEY in cell["metadata"]]
    assert collapsed == [fx.IDS["why"]]
    assert editions.COLLAPSED_KEY not in _cell(lesson, fx.IDS["why"])["metadata"]


def test_the_edition_reports_its_regions(edition):
    kinds = [(region.kind, region.stub, region.cell_id) for region in edition.regions]
    assert kinds == [
        ("SOLUTION", "body", fx.IDS["scale"]),
        ("SOLUTION", "body", fx.IDS["softmax"]),
        ("SOLUTION", "body", fx.IDS["sum_rows"]),
        ("SOLUTION", "body", fx.IDS["scaler"]),
        ("SOLUTION", "body", fx.IDS["counter"]),
        ("SOLUTION", "names", fx.IDS["prediction"]),
        ("HIDDEN TESTS", "", fx.IDS["reveal"]),
        ("HIDDEN TESTS", "", fx.IDS["hidden_only"]),
    ]
    assert edition.summary() == (
        "6 solution regions (5 code, 1 prediction), 2 hidden, 1 collapsed heading; 17 cells (1 dropped: hidden only)"
    )


def test_a_lesson_without_regions_is_its_cleared_copy(lesson):
    plain = copy.deepcopy(lesson)
    plain["cells"] = [cell for cell in plain["cells"] if "###" not in _src(cell)]
    for cell in plain["cells"]:
        cell["metadata"].pop("tags", None)
    assert editions.student_edition(plain) == editions.clear_outputs(plain)
    assert plain["cells"][1]["outputs"], "the input was modified"


# ---- errors: each names the notebook, the cell (index and id), the line and what to do ---------------


def _one_cell(source: str, cell_type: str = "code", tags=None) -> dict:
    cell = {"cell_type": cell_type, "id": "bad-cell", "metadata": {"tags": tags} if tags else {}, "source": source}
    if cell_type == "code":
        cell.update(outputs=[], execution_count=None)
    intro = {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": "# Lesson"}
    return {"cells": [intro, cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


BAD = {
    "region left open": (
        "def f(x):\n    ### BEGIN SOLUTION\n    return x\n",
        2,
        "never closed; add '### END SOLUTION'",
    ),
    "END without BEGIN": ("x = 1\n### END SOLUTION\n", 2, "without a '### BEGIN SOLUTION' above it"),
    "solution inside solution": (
        "def f():\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n",
        3,
        "inside the solution region opened on line 2; regions do not nest",
    ),
    "hidden inside solution": (
        "def f():\n    ### BEGIN SOLUTION\n    ### BEGIN HIDDEN TESTS\n",
        3,
        "'### BEGIN HIDDEN TESTS' inside the solution region opened on line 2",
    ),
    "solution inside hidden": (
        "### BEGIN HIDDEN TESTS\nassert x\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n### END HIDDEN TESTS\n",
        3,
        "inside the hidden tests region opened on line 1",
    ),
    "END of the wrong kind": (
        "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END HIDDEN TESTS\n",
        4,
        "closes the region opened on line 2 by '### BEGIN SOLUTION'; close it with '### END SOLUTION'",
    ),
    "marker after code": (
        "x = 1  ### BEGIN SOLUTION\n",
        1,
        "marker text in a line that is not a marker line ('x = 1  ### BEGIN SOLUTION'); write each marker alone",
    ),
    "code after a marker": ("### END SOLUTION x = 1\n", 1, "not a marker line"),
    "marker in a string": ("print('### BEGIN SOLUTION')\n", 1, "not a marker line"),
    "marker in lower case": ("def f():\n    # begin solution\n    return 1\n", 2, "not a marker line"),
    "marker with two #": ("def f():\n    ## BEGIN SOLUTION\n    return 1\n", 2, "exactly '### BEGIN SOLUTION'"),
    "top-level region without NAME =": (
        "### BEGIN SOLUTION\ndef f():\n    return 1\n### END SOLUTION\n",
        1,
        "has none; for a prediction write `prediction = <answer>`",
    ),
    "body markers at column 0": (
        "def f():\n### BEGIN SOLUTION\n    return 1\n### END SOLUTION\n",
        2,
        "put the markers inside its body",
    ),
    "a line indented less than its markers": (
        "def f():\n    if True:\n        ### BEGIN SOLUTION\n        y = 1\n    return y\n        ### END SOLUTION\n",
        5,
        "indented less than the region's '### BEGIN SOLUTION' (line 3)",
    ),
    "END indented unlike BEGIN": (
        "def f():\n    ### BEGIN SOLUTION\n    return 1\n  ### END SOLUTION\n",
        4,
        "indented 2 columns but its BEGIN (line 2) 4",
    ),
    "empty solution region": ("def f():\n    ### BEGIN SOLUTION\n    ### END SOLUTION\n", 2, "holds no code"),
    "hidden region that is a whole body": (
        "def f():\n    ### BEGIN HIDDEN TESTS\n    return 1\n    ### END HIDDEN TESTS\n",
        None,
        "the student edition of this cell is not valid Python",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_marker_mistake_names_the_notebook_cell_line_and_fix(case):
    source, line, words = BAD[case]
    with pytest.raises(editions.EditionError) as caught:
        editions.make_edition(_one_cell(source), "notebooks/03_demo.ipynb")
    (problem,) = caught.value.problems
    assert (problem.notebook, problem.cell, problem.cell_id, problem.line) == (
        "notebooks/03_demo.ipynb",
        1,
        "bad-cell",
        line,
    )
    message = str(caught.value)
    assert "\n" not in message
    where = "notebooks/03_demo.ipynb: cell 1 (id bad-cell, first line "
    assert message.startswith(where) and (line is None or f", line {line}: " in message), message
    assert words in message, message
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("cell_type", ["markdown", "raw"])
def test_a_marker_in_a_markdown_or_raw_cell_is_an_error(cell_type):
    with pytest.raises(
        editions.EditionError, match=rf"cell 1 \(id bad-cell.*line 2: marker text in a {cell_type} cell"
    ):
        editions.make_edition(_one_cell("Write it here:\n### BEGIN SOLUTION\n", cell_type), "nb.ipynb")


@pytest.mark.parametrize(
    ("cell_type", "source"),
    [("markdown", "The answer is 10.\n\n### Why"), ("code", "# Why\nx = 1"), ("markdown", "")],
)
def test_the_explanation_tag_needs_a_markdown_heading_on_the_first_line(cell_type, source):
    nb = _one_cell(source, cell_type, tags=[editions.COLLAPSE_TAG])
    with pytest.raises(editions.EditionError, match=r"cell 1 \(id bad-cell.*the tag 'explanation' is on a"):
        editions.make_edition(nb, "nb.ipynb")


def test_the_explanation_heading_holds_no_text_since_jupyterlab_shows_its_cell():
    nb = _one_cell("### Why it is 10\n\nBecause 4 + 3 + 2 + 1.", "markdown", tags=[editions.COLLAPSE_TAG])
    with pytest.raises(editions.EditionError, match=r"line 2: the cell tagged 'explanation' holds text under its"):
        editions.make_edition(nb, "nb.ipynb")


def test_every_problem_of_a_notebook_is_listed_at_once(lesson):
    nb = copy.deepcopy(lesson)
    nb["cells"][4]["source"] = "def f():\n    ### BEGIN SOLUTION\n    return 1\n"
    nb["cells"][9]["source"] = "Predict ### END SOLUTION"
    with pytest.raises(editions.EditionError) as caught:
        editions.make_edition(nb, "notebooks/01_fixture.ipynb")
    assert [(p.cell, p.cell_id) for p in caught.value.problems] == [(4, fx.IDS["scale"]), (9, fx.IDS["predict_prompt"])]
    assert len(str(caught.value).splitlines()) == 2


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="nb: expected a notebook dict"):
        editions.make_edition([], "x")
    with pytest.raises(TypeError, match="notebook: expected the notebook's name"):
        editions.make_edition({"cells": []}, 3)


# ---- the review's judge, and a kernel ------------------------------------------------------------------


def _write_pair(tmp_path: Path) -> tuple[Path, Path]:
    notebooks, work = tmp_path / "notebooks", tmp_path / "my_work"
    notebooks.mkdir()
    work.mkdir()
    nbformat.write(fx.fixture_lesson(), notebooks / "01_fixture.ipynb")
    lesson = json.loads((notebooks / "01_fixture.ipynb").read_text())
    (work / "01_fixture.ipynb").write_text(json.dumps(editions.student_edition(lesson), indent=1))
    return notebooks, work


@pytest.mark.skipif(not JUDGE.is_file(), reason=f"the review's judge is not on this machine ({JUDGE})")
def test_the_reviews_judge_passes_the_fixtures_student_edition(tmp_path):
    notebooks, work = _write_pair(tmp_path)
    done = subprocess.run(
        [sys.executable, str(JUDGE), str(notebooks), str(work)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "01_fixture.ipynb: 6 regions, 1 predictions: ok" in done.stdout


def test_the_untouched_student_edition_runs_top_to_bottom_in_a_kernel(tmp_path):
    _, work = _write_pair(tmp_path)
    ok, said = run_editions.run_edition(work / "01_fixture.ipynb", timeout_s=60)  # what `make test-editions` runs
    assert (ok, said) == (True, "ok")
    nb = nbformat.read(work / "01_fixture.ipynb", as_version=4)
    said = {cell.id: "".join(o.get("text", "") for o in cell.outputs) for cell in nb.cells if cell.cell_type == "code"}
    for key in fx.SOLUTIONS:  # every stub is "not attempted" and the lesson goes on with the course's version
        assert "not attempted" in said[fx.IDS[key]], said
    assert "not answered" in said[fx.IDS["prediction"]]
    assert said[fx.IDS["use"]].startswith("[[0.186 0.307 0.506]]"), said[fx.IDS["use"]]


def test_an_edition_that_stops_is_caught_naming_the_cell(tmp_path):
    """A lesson that forgets `fn = checks.check(id, fn)` goes on with the student's stub, and a later cell fails."""
    notebooks, work = _write_pair(tmp_path)
    nb = json.loads((notebooks / "01_fixture.ipynb").read_text())
    index = next(i for i, cell in enumerate(nb["cells"]) if cell["id"] == fx.IDS["softmax"])
    nb["cells"][index]["source"] = _src(nb["cells"][index]).replace("softmax_rows = checks.check", "checks.check")
    (work / "01_fixture.ipynb").write_text(json.dumps(editions.student_edition(nb)))
    ok, said = run_editions.run_edition(work / "01_fixture.ipynb", timeout_s=60)
    assert not ok
    assert said.startswith(f"cell 16 (id {fx.IDS['use']}) raised AttributeError:"), said


# ---- the authors' commands ------------------------------------------------------------------------------


def _cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    command = [sys.executable, str(REPO / "scripts" / "workspace.py"), *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_preview_prints_the_student_edition_of_one_notebook(tmp_path):
    notebooks, _ = _write_pair(tmp_path)
    done = _cli("--notebooks", str(notebooks), "preview", str(notebooks / "01_fixture.ipynb"), "--changed")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.splitlines()[0].endswith("student edition: " + editions.make_edition(
        json.loads((notebooks / "01_fixture.ipynb").read_text())).summary())  # fmt: skip
    assert f"--- cell 5 | code | id {fx.IDS['softmax']} | solution region, lines 3-7\n" in out
    assert "    ...  # your code here\n" in out and "prediction = ...\n" in out
    assert f"id {fx.IDS['hidden_only']} | dropped (hidden only)" in out
    assert f"id {fx.IDS['why']} | collapsed heading" in out
    assert "fx-setup" not in out, "--changed printed an unchanged cell"
    assert not [marker for marker in MARKERS if marker in out]
    target = tmp_path / "preview.ipynb"
    written = _cli("--notebooks", str(notebooks), "preview", str(notebooks / "01_fixture.ipynb"), "-o", str(target))
    assert written.returncode == 0, written.stderr
    assert json.loads(target.read_text()) == editions.student_edition(
        json.loads((notebooks / "01_fixture.ipynb").read_text()), "x"
    )
    refused = _cli("--notebooks", str(notebooks), "preview", str(notebooks / "01_fixture.ipynb"), "-o",
                   str(notebooks / "01_fixture.ipynb"))  # fmt: skip
    assert refused.returncode == 2 and refused.stderr.startswith("error: -o:"), refused.stderr
    assert "### BEGIN SOLUTION" in (notebooks / "01_fixture.ipynb").read_text(), "the lesson was overwritten"


def test_check_names_the_cell_of_a_broken_lesson_and_fails(tmp_path):
    notebooks, _ = _write_pair(tmp_path)
    nb = json.loads((notebooks / "01_fixture.ipynb").read_text())
    nb["cells"][5]["source"] = "def f():\n    ### BEGIN SOLUTION\n    return 1\n"
    (notebooks / "02_broken.ipynb").write_text(json.dumps(nb))
    done = _cli("--notebooks", str(notebooks), "check")
    assert done.returncode == 1
    assert "01_fixture.ipynb: 6 solution regions" in done.stdout
    assert "1 of 2 lessons make a student edition" in done.stdout
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and "02_broken.ipynb: cell 5 (id fx-softmax" in line and ", line 2: " in line


def test_every_real_lesson_makes_a_student_edition():
    done = _cli("check")
    assert done.returncode == 0, done.stderr
    lessons = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert f"{len(lessons)} of {len(lessons)} lessons make a student edition" in done.stdout


@pytest.mark.parametrize("source", ["x = '\u2028'\ny = 1\n", "a = 1\r\nb = '\f'\n\n", "", "\n", "x = 1"])
def test_a_cell_without_regions_is_kept_byte_for_byte(source):
    nb = _one_cell(source)
    assert editions.student_edition(nb)["cells"][1]["source"] == source
