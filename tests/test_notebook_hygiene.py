"""Notebook hygiene: every lesson, one test per notebook and rule (rules in tests/hygiene.py).

A failure reads like `test_hygiene[02_masking-execution_counts]` followed by the problems found.
The self-tests below build a scratch tree in a temporary folder: a minimal notebook that obeys every
rule (the checker must find nothing), then copies that each break one rule (the checker must find
exactly that rule), and a broken copy of a real lesson.
"""

import copy
import json
from pathlib import Path

import hygiene
import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = hygiene.notebook_paths(REPO)


def _id(path: Path) -> str:
    return path.stem


@pytest.mark.parametrize("rule", list(hygiene.CHECKS))
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_id)
def test_hygiene(path, rule):
    problems = hygiene.CHECKS[rule](path)
    assert not problems, "\n".join(problems)


def test_the_course_has_its_first_lesson():
    assert (REPO / "notebooks" / "00_start_here.ipynb") in NOTEBOOKS


def test_each_lesson_is_its_own_solution():
    """No solutions/ folder and no *_solutions notebook: nothing would check, run or publish one (issue 19)."""
    assert not (REPO / "solutions").exists(), "solutions/ is retired: put the solution in the lesson's solution regions"
    stray = sorted(p.relative_to(REPO).as_posix() for p in REPO.glob("*/*_solutions.ipynb"))
    assert not stray, f"separate solutions notebooks: {stray}"


# ---- the checker checks itself ------------------------------------------------------------------


def _cell(kind, source, slide="-", **extra):
    cell = {"cell_type": kind, "metadata": {"slideshow": {"slide_type": slide}}, "source": source}
    if kind == "code":
        cell.update({"execution_count": None, "outputs": []})
    cell.update(extra)
    return cell


def _executed(nb):
    count = 0
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            count += 1
            cell["execution_count"] = count
    return nb


PNG = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}}


def good_lesson() -> dict:
    """A minimal lesson that obeys every rule."""
    md = "markdown"
    cells = [
        _cell(md, "# 01 · Scratch lesson\n\nWhy it matters.", "slide"),
        _cell(md, "## Learning objectives\n\n- compute a thing", "slide"),
        _cell(md, "## Recap", "slide"),
        _cell(md, "## Setup", "slide"),
        _cell("code", "from course_utils import env\n\nenv.set_seed(0)"),
        _cell(
            "code", "print(round(0.12345, 3))", outputs=[{"output_type": "stream", "name": "stdout", "text": "0.123\n"}]
        ),
        _cell("code", "import ipywidgets as widgets\n\nslider = widgets.IntSlider(value=1)\nslider"),
        _cell("code", "plot_it(1)", outputs=[copy.deepcopy(PNG)]),
        _cell(md, "## Exercises", "slide"),
        _cell(md, "### Exercise 1 · one", "subslide"),
        _cell(md, "### Exercise 2 · two", "subslide"),
        _cell("code", "raise ValueError('shown on purpose')", metadata={"tags": ["raises-exception"]}),
        _cell(md, "## Common pitfalls", "slide"),
        _cell(md, "## Summary", "slide"),
        _cell(md, "## Next", "slide"),
    ]
    cells[-4]["metadata"]["slideshow"] = {"slide_type": "-"}
    cells[11]["outputs"] = [{"output_type": "error", "ename": "ValueError", "evalue": "shown", "traceback": []}]
    nb = {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return _executed(nb)


def write_tree(root: Path, lesson: dict, name="01_scratch_lesson") -> Path:
    (root / "notebooks").mkdir(parents=True, exist_ok=True)
    (root / "notebooks" / "README.md").write_text(f"- {name}.ipynb: the scratch lesson\n")
    (root / "README.md").write_text(f"# Course\n\n## Lesson map\n\n| 01 | [{name}.ipynb](notebooks/{name}.ipynb) |\n")
    path = root / "notebooks" / f"{name}.ipynb"
    path.write_text(json.dumps(lesson))
    return path


def test_checker_passes_a_clean_scratch_tree(tmp_path):
    lesson = write_tree(tmp_path, good_lesson())
    assert hygiene.check_notebook(lesson) == {}


def _set(index, key, value):
    def mutate(nb):
        nb["cells"][index][key] = value

    return mutate


def _output(index, text, kind="stream"):
    def mutate(nb):
        out = {"output_type": "stream", "name": "stdout", "text": text}
        if kind == "result":
            out = {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": {"text/plain": text}}
        nb["cells"][index]["outputs"] = [out]

    return mutate


def _drop_heading(heading):
    def mutate(nb):
        nb["cells"] = [c for c in nb["cells"] if c["source"] != heading]

    return mutate


def _swap(i, j):
    def mutate(nb):
        nb["cells"][i], nb["cells"][j] = nb["cells"][j], nb["cells"][i]

    return mutate


def _error_untagged(nb):
    nb["cells"][11]["metadata"]["tags"] = []


def _no_slide_metadata(nb):
    del nb["cells"][5]["metadata"]["slideshow"]


def _huge(nb):
    nb["cells"][7]["outputs"][0]["data"]["image/png"] = "A" * (hygiene.MAX_BYTES + 10)


def _no_fallback(nb):
    nb["cells"][7]["outputs"] = []


def _kernel(nb):
    nb["metadata"]["kernelspec"]["name"] = "other-env"


def _one_exercise(nb):
    nb["cells"] = [c for c in nb["cells"] if c["source"] != "### Exercise 2 · two"]


BREAKAGES = {
    "title_number": ("title", _set(0, "source", "# 02 · Scratch lesson")),
    "title_format": ("title", _set(0, "source", "# Scratch lesson")),
    "missing_recap": ("headings", _drop_heading("## Recap")),
    "missing_next": ("headings", _drop_heading("## Next")),
    "headings_out_of_order": ("headings", _swap(12, 13)),
    "one_exercise": ("headings", _one_exercise),
    "counts_not_sequential": ("execution_counts", _set(5, "execution_count", 7)),
    "not_executed": ("execution_counts", _set(4, "execution_count", None)),
    "empty_code_cell": ("execution_counts", _set(6, "source", "")),
    "untagged_error": ("error_outputs", _error_untagged),
    "absolute_path": ("clean_outputs", _output(5, "saved to /home/alice/course/x.pt\n")),
    "venv_path_in_warning": ("clean_outputs", _output(5, "lib/python3.11/site-packages/torch/nn.py:12: Warn\n")),
    "memory_address": ("clean_outputs", _output(5, "<Model object at 0x7f3a2b1c9d10>", kind="result")),
    "sys_path_edit": ("sources", _set(4, "source", "import sys\nsys.path.insert(0, '..')")),
    "pip_magic": ("sources", _set(4, "source", "%pip install torch")),
    "pip_shell": ("sources", _set(4, "source", "!pip install numpy")),
    "too_big": ("size", _huge),
    "no_slide_metadata": ("slideshow", _no_slide_metadata),
    "wrong_kernel": ("kernelspec", _kernel),
    "widget_without_figure": ("widget_fallbacks", _no_fallback),
}


@pytest.mark.parametrize("breakage", list(BREAKAGES))
def test_checker_catches_one_broken_rule(tmp_path, breakage):
    rule, mutate = BREAKAGES[breakage]
    nb = good_lesson()
    mutate(nb)
    path = write_tree(tmp_path, nb)
    found = hygiene.check_notebook(path)
    assert rule in found, f"{breakage}: rule {rule!r} found nothing; all results: {found}"
    assert set(found) == {rule}, f"{breakage}: only {rule!r} should complain, got {found}"


def test_checker_catches_bad_names_and_unlisted_notebooks(tmp_path):
    path = write_tree(tmp_path, good_lesson(), name="01_Scratch-Lesson")
    assert "file_name" in hygiene.check_notebook(path)
    path = write_tree(tmp_path / "b", good_lesson())
    (tmp_path / "b" / "notebooks" / "README.md").write_text("nothing listed\n")
    (tmp_path / "b" / "README.md").write_text(
        "## Lesson map\n\n## Other\n01_scratch_lesson.ipynb is mentioned elsewhere\n"
    )
    assert hygiene.check_listed(path) == [
        "01_scratch_lesson.ipynb: not listed in notebooks/README.md",
        "01_scratch_lesson.ipynb: not in the '## Lesson map' section of README.md",
    ]


def test_checker_refuses_a_separate_solutions_notebook(tmp_path):
    """A lesson is its own solution: a `NN_name_solutions.ipynb` beside it is caught, with the reason."""
    path = write_tree(tmp_path, good_lesson(), name="01_scratch_lesson_solutions")
    assert hygiene.check_file_name(path) == [
        "01_scratch_lesson_solutions.ipynb: a lesson is its own solution (solution regions); "
        "no separate _solutions notebook"
    ]


def test_start_here_needs_no_recap(tmp_path):
    nb = good_lesson()
    _drop_heading("## Recap")(nb)
    nb["cells"][0]["source"] = "# 00 · Start here"
    path = write_tree(tmp_path, nb, name="00_start_here")
    assert hygiene.check_notebook(path) == {}


@pytest.mark.skipif(not (REPO / "notebooks" / "00_start_here.ipynb").exists(), reason="no 00_start_here yet")
def test_checker_catches_a_broken_copy_of_a_real_lesson(tmp_path):
    real = json.loads((REPO / "notebooks" / "00_start_here.ipynb").read_text())
    broken = copy.deepcopy(real)
    code = [c for c in broken["cells"] if c["cell_type"] == "code"]
    code[0]["execution_count"], code[1]["execution_count"] = 2, 1  # run out of order
    code[-1]["outputs"].append({"output_type": "error", "ename": "NameError", "evalue": "x", "traceback": []})
    code[-1]["metadata"]["tags"] = []
    path = write_tree(tmp_path, broken, name="00_start_here")
    found = hygiene.check_notebook(path)
    assert {"execution_counts", "error_outputs"} <= set(found), found
