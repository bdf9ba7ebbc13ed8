"""One lesson, two editions: make the student edition of a lesson from its instructor edition.

The instructor edition (``notebooks/NN_*.ipynb``) is the complete, executed lesson. The student edition is
generated from it, never kept by hand (``make workspace`` writes it into ``my_work/``; ``python3
scripts/workspace.py preview notebooks/NN_name.ipynb`` prints it). The conventions, as a lesson author uses them:

**Solution regions** (nbgrader's markers, each alone on its line, in a code cell, opened and closed in the
same cell; a line that only resembles a marker is an error, see ``MARKER_LIKE``)::

    def softmax_along(scores, axis=-1):
        \"\"\"Softmax of `scores` along `axis`.\"\"\"
        ### BEGIN SOLUTION
        shifted = scores - scores.max(axis=axis, keepdims=True)
        return np.exp(shifted) / np.exp(shifted).sum(axis=axis, keepdims=True)
        ### END SOLUTION

- a region whose markers are *indented* (a function or method body, a class body, any block) becomes one
  line ``...  # your code here`` at the markers' indentation; the signature and docstring, outside the
  region, stay. Every line of the region must be indented at least as far as its markers;
- a region at *top level* (markers at column 0) keeps each ``NAME = <expr>`` line that starts at column 0
  as ``NAME = ...`` (a prediction: ``prediction = 15`` becomes ``prediction = ...``); every other line goes.
  A top-level region with no such line is an error (indent the markers into the body instead).

**Hidden regions** ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS``: removed, markers and all (the
asserts of a reveal that would give a prediction away). A code cell left empty by that is dropped from
the student edition.

**Collapsed explanations**: a markdown cell tagged ``explanation`` (:data:`COLLAPSE_TAG`) that holds only a
heading (``### Why: open it once you have predicted``) is collapsed in the student edition: JupyterLab 4 reads
the cell metadata ``"jp-MarkdownHeadingCollapsed": true`` and hides the cells under the heading, down to the next
heading of the same or a higher level, until the student clicks "N cells hidden". The heading's own cell stays
visible (proved in tests/browser/test_editions_in_browser.py), so the explanation goes in the cells below it and
the heading must not state the answer; text under the heading in the tagged cell is an error.

**Always**: outputs, execution counts, execution timings and saved widget state are cleared; cell ids,
tags and all other metadata are kept. Regions may not nest; an END must close the region its BEGIN
opened, at the same indentation; marker text in a markdown or raw cell, or on a line with code, is an
error. Every error names the notebook, the cell (0-based index in the notebook's cells, its id and first
line), the line in the cell, and what to fix (:class:`EditionError`; all problems of a notebook at once).

Standard library only: ``make workspace`` runs it before ``.venv`` exists.
"""

from __future__ import annotations

import ast
import copy
import re
import unicodedata
from dataclasses import dataclass, field

__all__ = [
    "BODY_STUB",
    "COLLAPSE_TAG",
    "COLLAPSED_KEY",
    "CellEdition",
    "Edition",
    "EditionError",
    "Problem",
    "Region",
    "clear_outputs",
    "make_edition",
    "student_edition",
]

BODY_STUB = "...  # your code here"
COLLAPSE_TAG = "explanation"
COLLAPSED_KEY = "jp-MarkdownHeadingCollapsed"  # what JupyterLab 4's MarkdownCell reads (packages/cells)
SOLUTION, HIDDEN = "SOLUTION", "HIDDEN TESTS"

# A marker line: the marker alone, any indentation, nothing after it but spaces.
MARKER_LINE = re.compile(r"^(?P<indent>[ \t]*)### (?P<edge>BEGIN|END) (?P<kind>SOLUTION|HIDDEN TESTS)[ \t\r]*$")
# Marker text anywhere (nbgrader reads it case-sensitively, anywhere in a line) ...
MARKER_TEXT = re.compile(r"\b(?:BEGIN|END)\s+(?:SOLUTION|HIDDEN\s+TESTS)\b")
# ... and a line that looks meant as a marker: after NFKC normalisation, without invisible characters, with
# Cyrillic and Greek look-alike letters folded to Latin, in any case, with any number of # (none included),
# singular or plural, words joined by spaces, _ or -. Matched on :func:`_marker_form` of the line.
MARKER_LIKE = re.compile(
    r"(?:^\s*|#\s*)(?:begin|end)[\s_\-]*(?:solutions?|hidden[\s_\-]*tests?)(?![a-z])", re.IGNORECASE
)
# Letters of other scripts that look like the markers' Latin ones (Cyrillic, Greek; either case).
_LOOKALIKES = str.maketrans(
    "АВЕНІЈКМОРСТХУЅԁеіјорсхуѕһԛԝаΑΒΕΗΙΚΜΝΟΡΤΥΧΖαβεικνορτυχ",
    "ABEHIJKMOPCTXYSdeijopcxyshqwaABEHIKMNOPTYXZabeikvoptux",
)
ASSIGNMENT = re.compile(r"^(?P<name>[A-Za-z_]\w*)\s*=(?!=)")
HEADING = re.compile(r"^#{1,6}(?:\s|$)")


@dataclass(frozen=True)
class Problem:
    """One thing wrong in an instructor edition, located and with what to do about it."""

    notebook: str
    cell: int  # 0-based index in the notebook's cells
    cell_id: str | None
    first_line: str  # the cell's first line, to find it by eye
    line: int | None  # 1-based line in the cell, None for the whole cell
    problem: str
    fix: str

    def __str__(self) -> str:
        where = f"cell {self.cell} (id {self.cell_id or 'none'}, first line {self.first_line!r})"
        if self.line is not None:
            where += f", line {self.line}"
        return f"{self.notebook}: {where}: {self.problem}; {self.fix}"


class EditionError(ValueError):
    """The student edition cannot be made: one line per :class:`Problem`, each naming the cell and the fix."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))


@dataclass(frozen=True)
class Region:
    """A solution or hidden region of one code cell."""

    kind: str  # SOLUTION or HIDDEN
    cell: int
    cell_id: str | None
    begin: int  # 1-based lines of the markers in the cell
    end: int
    indent: str
    stub: str  # "body" (one `...  # your code here` line), "names" (`NAME = ...` lines) or "" (hidden: removed)
    names: tuple[str, ...] = ()


@dataclass
class CellEdition:
    """What the student edition does with one cell of the instructor edition."""

    index: int
    cell_id: str | None
    cell_type: str
    instructor_source: str  # without marker lines (what the site shows behind its toggle)
    student_source: str | None  # None when the cell is dropped (it held only a hidden region)
    regions: list[Region] = field(default_factory=list)
    collapsed: bool = False

    @property
    def has_solution(self) -> bool:
        return any(region.kind == SOLUTION for region in self.regions)


@dataclass
class Edition:
    """The student edition of one notebook and what was done to make it."""

    notebook: dict
    cells: list[CellEdition]

    @property
    def regions(self) -> list[Region]:
        return [region for cell in self.cells for region in cell.regions]

    def summary(self) -> str:
        """One line: how many regions of each kind, collapsed headings and dropped cells."""
        regions = self.regions
        bodies = sum(region.stub == "body" for region in regions)
        names = sum(region.stub == "names" for region in regions)
        hidden = sum(region.kind == HIDDEN for region in regions)
        collapsed = sum(cell.collapsed for cell in self.cells)
        dropped = sum(cell.student_source is None for cell in self.cells)
        text = f"{bodies + names} solution regions ({bodies} code, {names} prediction), {hidden} hidden"
        text += f", {collapsed} collapsed heading{'s' * (collapsed != 1)}"
        text += f"; {len(self.notebook['cells'])} cells" + (f" ({dropped} dropped: hidden only)" if dropped else "")
        return text


class _CellProblem(Exception):
    def __init__(self, line: int | None, problem: str, fix: str):
        super().__init__(problem)
        self.line, self.problem, self.fix = line, problem, fix


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _like(original, text: str):
    """`text` in the form the original source had: a list of lines (nbformat on disk) or one string."""
    return text.splitlines(keepends=True) if isinstance(original, list) else text


def _width(indent: str) -> int:
    return len(indent.expandtabs(4))


def clear_outputs(nb: dict) -> dict:
    """Return a copy of notebook ``nb`` with nothing computed left in it.

    Code cells lose their outputs and execution counts; every cell loses its ``execution`` timing
    metadata; the notebook loses its saved widget state. Sources, ids, tags and slide metadata are kept.
    """
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise TypeError(f"nb: expected a notebook dict with a 'cells' list but got {type(nb).__name__}")
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        cell.get("metadata", {}).pop("execution", None)
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    nb.get("metadata", {}).pop("widgets", None)
    return nb


def _marker_name(edge: str, kind: str) -> str:
    return f"'### {edge} {kind}'"


def _close(kind: str, indent: str, begin: int, end: int, body: list[tuple[int, str]]) -> tuple[list[str], Region]:
    """The lines that replace a closed region in the student edition, and the region's record."""
    code = [(n, line) for n, line in body if line.strip()]
    if kind == HIDDEN:
        return [], Region(HIDDEN, -1, None, begin, end, indent, "")
    if not code:
        raise _CellProblem(begin, "the solution region holds no code", "write the solution between its markers")
    if indent:  # inside a block: one stub line at the markers' indentation
        for n, line in code:
            if _width(line[: len(line) - len(line.lstrip(" \t"))]) < _width(indent):
                raise _CellProblem(
                    n,
                    f"this line is indented less than the region's {_marker_name('BEGIN', SOLUTION)} (line {begin})",
                    "indent the markers like the code they enclose (the first line of the body)",
                )
        return [indent + BODY_STUB], Region(SOLUTION, -1, None, begin, end, indent, "body")
    names = [match["name"] for _, line in code if (match := ASSIGNMENT.match(line))]
    if not names:
        raise _CellProblem(
            begin,
            "a top-level solution region keeps only its `NAME = <expr>` lines (as `NAME = ...`) and this one has none",
            "for a prediction write `prediction = <answer>` at column 0 inside the region; for code in a function "
            "or method, put the markers inside its body, indented like the body",
        )
    return [f"{name} = ..." for name in names], Region(SOLUTION, -1, None, begin, end, "", "names", tuple(names))


def _marker_form(line: str) -> str:
    """``line`` as compared with a marker: NFKC, no invisible (format) characters, look-alike letters folded."""
    line = unicodedata.normalize("NFKC", line)
    return "".join(c for c in line if unicodedata.category(c) != "Cf").translate(_LOOKALIKES)


def _code_cell(source: str) -> tuple[str, str, list[Region]]:
    """(student source, instructor source without markers, regions) of one code cell's source."""
    student: list[str] = []
    instructor: list[str] = []
    regions: list[Region] = []
    opened = None  # (kind, indent, line number, body lines)
    for n, line in enumerate(source.split("\n"), start=1):  # not splitlines(): "\f" or "\u2028" in code stay
        match = MARKER_LINE.match(line)
        if match is None:
            if MARKER_TEXT.search(line) or MARKER_LIKE.search(_marker_form(line)):
                raise _CellProblem(
                    n,
                    f"marker text in a line that is not a marker line ({line.strip()!r})",
                    "write each marker alone on its own line, exactly '### BEGIN SOLUTION', '### END SOLUTION', "
                    "'### BEGIN HIDDEN TESTS' or '### END HIDDEN TESTS', and move any code to the next line",
                )
            instructor.append(line)
            if opened:
                opened[3].append((n, line))
            else:
                student.append(line)
            continue
        indent, edge, kind = match["indent"], match["edge"], match["kind"]
        if edge == "BEGIN":
            if opened:
                raise _CellProblem(
                    n,
                    f"{_marker_name('BEGIN', kind)} inside the {opened[0].lower()} region opened on line {opened[2]}",
                    f"regions do not nest: close that region with {_marker_name('END', opened[0])} first",
                )
            opened = (kind, indent, n, [])
            continue
        if opened is None:
            raise _CellProblem(
                n,
                f"{_marker_name('END', kind)} without a {_marker_name('BEGIN', kind)} above it in this cell",
                f"add {_marker_name('BEGIN', kind)} where the region starts (a region opens and closes in one cell), "
                "or delete this line",
            )
        if opened[0] != kind:
            raise _CellProblem(
                n,
                f"{_marker_name('END', kind)} closes the region opened on line {opened[2]} "
                f"by {_marker_name('BEGIN', opened[0])}",
                f"close it with {_marker_name('END', opened[0])} (regions do not nest or overlap)",
            )
        if indent != opened[1]:
            raise _CellProblem(
                n,
                f"{_marker_name('END', kind)} is indented {_width(indent)} columns but its BEGIN (line {opened[2]}) "
                f"{_width(opened[1])}",
                "indent both markers like the code they enclose",
            )
        lines, region = _close(kind, indent, opened[2], n, opened[3])
        student += lines
        regions.append(region)
        opened = None
    if opened:
        raise _CellProblem(
            opened[2],
            f"the {opened[0].lower()} region opened here is never closed",
            f"add {_marker_name('END', opened[0])} after its last line, in this cell",
        )
    return "\n".join(student), "\n".join(instructor), regions


def _compiles(source: str) -> str | None:
    """None when `source` parses as Python, else the parser's message."""
    try:
        compile(source, "<cell>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return f"{getattr(exc, 'msg', exc)} (line {getattr(exc, 'lineno', '?')})"
    return None


def _edit_cell(index: int, cell: dict) -> CellEdition:
    source = _source(cell)
    cell_type = cell.get("cell_type", "")
    tags = cell.get("metadata", {}).get("tags", [])
    edition = CellEdition(index, cell.get("id"), cell_type, source, source)
    if cell_type != "code":
        for n, line in enumerate(source.splitlines(), start=1):
            if MARKER_TEXT.search(line) or (cell_type == "raw" and MARKER_LIKE.search(_marker_form(line))):
                raise _CellProblem(
                    n,
                    f"marker text in a {cell_type} cell ({line.strip()!r})",
                    "solution and hidden regions live in code cells only: move the region into the code cell it "
                    "belongs to, or reword the text",
                )
    if COLLAPSE_TAG in tags:
        lines = [line for line in source.split("\n") if line.strip()]
        if cell_type != "markdown" or not lines or not HEADING.match(lines[0]):
            raise _CellProblem(
                None,
                f"the tag '{COLLAPSE_TAG}' is on a {cell_type} cell whose first line is not a markdown heading",
                "put the tag on a markdown cell that holds only a heading ('### Why it is 10'): the student "
                "edition collapses the cells under it",
            )
        if len(lines) > 1:
            raise _CellProblem(
                2,
                f"the cell tagged '{COLLAPSE_TAG}' holds text under its heading, and JupyterLab shows a collapsed "
                "heading's own cell in full",
                "keep only the heading in this cell and move the explanation into the next cell (the heading "
                "itself stays visible: do not put the answer in it)",
            )
        edition.collapsed = True
    if cell_type != "code":
        return edition
    student, instructor, regions = _code_cell(source)
    edition.instructor_source = instructor
    edition.regions = [
        Region(r.kind, index, cell.get("id"), r.begin, r.end, r.indent, r.stub, r.names) for r in regions
    ]
    if regions and _compiles(source) is None and (error := _compiles(student)) is not None:
        raise _CellProblem(
            None,
            f"the student edition of this cell is not valid Python: {error}",
            "check the markers: a hidden region may not be the whole body of a block, and a top-level solution "
            "region leaves only its `NAME = ...` lines",
        )
    edition.student_source = None if regions and not student.strip() else student
    return edition


def make_edition(nb: dict, notebook: str = "notebook") -> Edition:
    """The student edition of instructor notebook ``nb`` (a dict as read from JSON), with what was done per cell.

    Parameters
    ----------
    nb : dict
        The instructor edition; not modified.
    notebook : str
        How errors name the notebook, e.g. ``"notebooks/02_masking.ipynb"``.

    Raises
    ------
    EditionError
        Listing every problem of the notebook (a marker misplaced, a region left open, ...), one per line.
    """
    if not isinstance(notebook, str):
        raise TypeError(f"notebook: expected the notebook's name as a str but got {type(notebook).__name__}")
    student = clear_outputs(nb)
    cells, problems = [], []
    for index, cell in enumerate(student["cells"]):
        try:
            cells.append(_edit_cell(index, cell))
        except _CellProblem as exc:
            first = _source(cell).strip().split("\n", 1)[0][:60]
            problems.append(Problem(notebook, index, cell.get("id"), first, exc.line, exc.problem, exc.fix))
    if problems:
        raise EditionError(problems)
    kept = []
    for cell, edition in zip(student["cells"], cells, strict=True):
        if edition.student_source is None:
            continue
        if edition.student_source != _source(cell):
            cell["source"] = _like(cell.get("source", ""), edition.student_source)
        if edition.collapsed:
            cell.setdefault("metadata", {})[COLLAPSED_KEY] = True
        kept.append(cell)
    student["cells"] = kept
    return Edition(student, cells)


def student_edition(nb: dict, notebook: str = "notebook") -> dict:
    """The student edition of ``nb`` as a notebook dict (see :func:`make_edition`)."""
    return make_edition(nb, notebook).notebook
