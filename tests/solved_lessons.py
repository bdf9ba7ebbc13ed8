"""A lesson as a student hands it in: solved (every exercise right) or untouched (the student edition).

There is no solutions/ folder: each lesson is its own solution (issue 19). The instructor edition
(``notebooks/NN_*.ipynb``) holds the complete code in its solution regions, so the solved notebook is
the lesson itself. A checked function that has no solution region yet (a lesson not yet moved onto the
student editions) is solved with a copy of its exercise's first correct variant, defined in the check's
cell just before the ``checks.check`` call, as a student's own code would be. The untouched notebook
is the student edition that ``make workspace`` writes (``scripts/editions.py``).

Used by the grader's tests on real lessons (tests/test_grade.py).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
from editions import student_edition  # noqa: E402

__all__ = ["lessons", "shipped", "solved"]

CHECK_CALL = re.compile(r'checks\.check\(\s*"(?P<id>\d\d\.\w+)",\s*(?P<fn>\w+)\s*[,)]')
VARIANT = """import types as _types

from course_utils.checking import registry as _exercises

_variant = _exercises.get("{eid}").variants[0]
{fn} = _types.FunctionType(
    _variant.__code__, _variant.__globals__, "{fn}", _variant.__defaults__, _variant.__closure__
)
"""


def lessons(numbers=None) -> list[Path]:
    """The lessons ``notebooks/NN_*.ipynb``, sorted; only those whose NN is in ``numbers`` when given."""
    found = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    return [path for path in found if numbers is None or path.name[:2] in numbers]


def _has_solution_region(cells: list, fn: str) -> bool:
    for cell in cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == fn:
                if "### BEGIN SOLUTION" in ast.get_source_segment(cell.source, node):
                    return True
    return False


def solved(path: Path) -> nbformat.NotebookNode:
    """The lesson at ``path`` with every exercise answered right (see the module's docstring)."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for match in list(CHECK_CALL.finditer(cell.source)):
            if _has_solution_region(nb.cells, match["fn"]):
                continue
            call = match.group(0)
            answer = VARIANT.format(eid=match["id"], fn=match["fn"])
            cell.source = cell.source.replace(call, f"{answer}\n\n{call}", 1)
    return nb


def shipped(path: Path) -> nbformat.NotebookNode:
    """The student edition of the lesson at ``path``, untouched: what ``make workspace`` gives a student."""
    nb = student_edition(nbformat.read(path, as_version=4), f"notebooks/{path.name}")
    return nbformat.from_dict(nb)
