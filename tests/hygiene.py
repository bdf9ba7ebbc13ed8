"""Notebook hygiene rules, one function per rule: each takes a notebook path and returns a list of problems.

Used by tests/test_notebook_hygiene.py (every lesson, one test per notebook and rule)
and by its self-test (a scratch copy that breaks one rule must be caught). The repository root is
taken to be the notebook's grandparent (repo/notebooks/NN_x.ipynb), so a scratch tree in a
temporary folder is checked exactly like the real one.

The rules (STYLE_GUIDE.md, issue 6):
- file names: lessons `NN_snake_case.ipynb`; none ends in `_solutions` (each lesson is its own solution:
  its solution regions, issue 19);
- title: the first cell is markdown `# NN · Title` with NN the file's number;
- anatomy: the `##` headings of a lesson, in order (see LESSON_HEADINGS; 00_start_here has no
  Recap, since nothing comes before it); lessons from 01 have at least two exercises;
- executed: code cells have execution counts 1, 2, ..., n in order, none empty;
- no error outputs, except in cells tagged `raises-exception`;
- outputs free of absolute paths, user names (home folders) and memory addresses;
- sources: no `sys.path` edits, no `pip`/`conda` calls;
- size: at most MAX_BYTES per notebook file;
- slides: every cell has `metadata.slideshow.slide_type`;
- kernel: `metadata.kernelspec.name` is "python3" (what the course environment's JupyterLab starts);
- listed: lessons appear in notebooks/README.md and in the Lesson map section of README.md;
- widgets: a cell that builds a widget (`interact(...)`, `widgets.X(...)`) is followed within
  WIDGET_FALLBACK_CELLS cells by a static figure (an image output), since widgets do not render
  in RISE, static viewers or print.
"""

from __future__ import annotations

import getpass
import json
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

__all__ = ["CHECKS", "MAX_BYTES", "check_notebook", "notebook_paths"]

MAX_BYTES = 1_500_000  # 1.5 MB: figures are PNG at the default dpi; a bigger file means an unintended dump
LESSON_HEADINGS = [
    "## Learning objectives",
    "## Recap",
    "## Setup",
    "## Exercises",
    "## Common pitfalls",
    "## Summary",
    "## Next",
]
# 00_start_here is the first lesson: nothing to recap. It keeps every other heading of the anatomy.
START_HERE_HEADINGS = [h for h in LESSON_HEADINGS if h != "## Recap"]
SLIDE_TYPES = {"slide", "subslide", "fragment", "-", "skip", "notes"}
WIDGET_FALLBACK_CELLS = 3
FIGURE_MIMES = ("image/png", "image/svg+xml", "image/jpeg")

LESSON_NAME = re.compile(r"^(\d\d)_[a-z0-9]+(?:_[a-z0-9]+)*\.ipynb$")
TITLE = re.compile(r"^# (\d\d) · \S")
EXERCISE_HEADING = re.compile(r"^### Exercise\b.*$", re.M)
ABSOLUTE_PATH = re.compile(
    r"(?<![\w.])(?:/home/|/root/|/Users/|/tmp/|/private/var/|/var/folders/|/work/|/opt/|/usr/)"
    r"|site-packages[/\\]|[A-Za-z]:\\\\?(?:Users|Windows)\\"
)
MEMORY_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{8,}\b| at 0x[0-9a-fA-F]{6,}")
SYS_PATH = re.compile(r"\bsys\.path\b")
PIP_CALL = re.compile(r"^\s*[!%]\s*(?:pip|conda|mamba)\b|\bpip3?\s+install\b|-m\s+pip\b", re.M)
WIDGET_CALL = re.compile(r"\binteract(?:ive|_manual)?\s*\(|\bwidgets\.\w+\s*\(")
GENERIC_USERS = {"root", "user", "admin", "runner", "jovyan", "ubuntu", "debian", "vscode", "codespace"}


def notebook_paths(repo: Path) -> list[Path]:
    """Every notebook under repo/notebooks (the lessons), sorted."""
    return sorted((repo / "notebooks").glob("*.ipynb"))


@lru_cache(maxsize=64)
def _load(path: Path, mtime_ns: int) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def load(path: Path) -> dict:
    """The notebook's JSON (cached per path and modification time)."""
    path = Path(path)
    return _load(path, path.stat().st_mtime_ns)


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _code_cells(nb: dict) -> list[dict]:
    return [cell for cell in nb["cells"] if cell["cell_type"] == "code"]


def _headings(nb: dict, level: str = "## ") -> list[str]:
    lines = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            lines += [line.rstrip() for line in _source(cell).splitlines() if line.startswith(level)]
    return lines


def _output_texts(output: dict) -> list[str]:
    """Every text a reader sees in one output: stream text, text/* data, an error's traceback."""
    texts = []
    if "text" in output:
        texts.append(_join(output["text"]))
    for mime, value in output.get("data", {}).items():
        if mime.startswith("text/") or mime.endswith("json"):
            texts.append(value if isinstance(value, str) else _join(value) if isinstance(value, list) else str(value))
    if output.get("output_type") == "error":
        texts += [output.get("ename", ""), output.get("evalue", ""), *output.get("traceback", [])]
    return texts


def _join(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _label(nb: dict, index: int) -> str:
    """'code cell k (cell i)': k counts code cells from 1, i counts all cells from 0."""
    cell = nb["cells"][index]
    if cell["cell_type"] != "code":
        return f"cell {index}"
    k = sum(c["cell_type"] == "code" for c in nb["cells"][: index + 1])
    return f"code cell {k} (cell {index})"


# ---- the rules ----------------------------------------------------------------------------------


def check_file_name(path: Path) -> list[str]:
    path = Path(path)
    if path.name.endswith("_solutions.ipynb"):
        return [f"{path.name}: a lesson is its own solution (solution regions); no separate _solutions notebook"]
    if not LESSON_NAME.match(path.name):
        return [f"{path.name}: a lesson is named NN_snake_case.ipynb (two digits, lower case, underscores)"]
    return []


def check_title(path: Path) -> list[str]:
    path = Path(path)
    nb = load(path)
    if not nb["cells"] or nb["cells"][0]["cell_type"] != "markdown":
        return [f"{path.name}: the first cell must be the markdown title '# {path.name[:2]} · Title'"]
    title = _source(nb["cells"][0]).strip().splitlines()[0] if _source(nb["cells"][0]).strip() else ""
    match = TITLE.match(title)
    if not match:
        return [f"{path.name}: title {title!r} is not '# NN · Title'"]
    if match.group(1) != path.name[:2]:
        return [f"{path.name}: title number {match.group(1)} does not match the file number {path.name[:2]}"]
    return []


def required_headings(path: Path) -> list[str]:
    path = Path(path)
    return START_HERE_HEADINGS if path.name.startswith("00_") else LESSON_HEADINGS


def check_headings(path: Path) -> list[str]:
    path = Path(path)
    nb = load(path)
    found = _headings(nb)
    problems = [f"{path.name}: missing heading {h!r}" for h in required_headings(path) if h not in found]
    present = [h for h in required_headings(path) if h in found]
    order = [h for h in found if h in present]
    order = list(dict.fromkeys(order))
    if not problems and order != present:
        problems.append(f"{path.name}: anatomy headings out of order: {order} (expected {present})")
    exercises = EXERCISE_HEADING.findall("\n".join(_headings(nb, "### ")))
    needed = 1 if path.name.startswith("00_") else 2
    if len(exercises) < needed:
        problems.append(f"{path.name}: {len(exercises)} '### Exercise' heading(s), at least {needed} expected")
    return problems


def check_execution_counts(path: Path) -> list[str]:
    path = Path(path)
    code = _code_cells(load(path))
    problems = [
        f"{path.name}: code cell {k} is empty (delete it; nbclient leaves it without a count)"
        for k, cell in enumerate(code, start=1)
        if not _source(cell).strip()
    ]
    counts = [cell.get("execution_count") for cell in code]
    if counts != list(range(1, len(code) + 1)):
        first_bad = next(k for k, c in enumerate(counts, start=1) if c != k)
        problems.append(
            f"{path.name}: execution counts are not 1..{len(code)} in order (first wrong at code cell {first_bad}: "
            f"{counts[first_bad - 1]}); re-run it with scripts/run_notebooks.py"
        )
    return problems


def check_error_outputs(path: Path) -> list[str]:
    path = Path(path)
    nb = load(path)
    problems = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code" or "raises-exception" in cell.get("metadata", {}).get("tags", []):
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                problems.append(
                    f"{path.name}: {_label(nb, index)} has an error output {output.get('ename')}: "
                    f"{str(output.get('evalue'))[:80]} (tag the cell raises-exception if it is meant to raise)"
                )
    return problems


def check_clean_outputs(path: Path) -> list[str]:
    path = Path(path)
    nb = load(path)
    user = getpass.getuser()
    user_pattern = re.compile(rf"\b{re.escape(user)}\b") if len(user) >= 3 and user not in GENERIC_USERS else None
    problems = []
    for index, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            for text in _output_texts(output):
                for pattern, what in [
                    (ABSOLUTE_PATH, "an absolute path"),
                    (MEMORY_ADDRESS, "a memory address"),
                    (user_pattern, f"the user name {user!r}"),
                ]:
                    match = pattern.search(text) if pattern else None
                    if match:
                        snippet = text[max(0, match.start() - 30) : match.end() + 30].replace("\n", " ")
                        problems.append(f"{path.name}: {_label(nb, index)} output shows {what}: ...{snippet}...")
    return problems


def check_sources(path: Path) -> list[str]:
    path = Path(path)
    nb = load(path)
    problems = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = _source(cell)
        if SYS_PATH.search(source):
            problems.append(f"{path.name}: {_label(nb, index)} edits sys.path (course_utils is installed with -e .)")
        if PIP_CALL.search(source):
            problems.append(f"{path.name}: {_label(nb, index)} calls pip/conda (the environment comes from make)")
    return problems


def check_size(path: Path) -> list[str]:
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_BYTES:
        return [f"{path.name}: {size / 1e6:.2f} MB, over the {MAX_BYTES / 1e6:.1f} MB bound"]
    return []


def check_slideshow(path: Path) -> list[str]:
    path = Path(path)
    nb = load(path)
    missing = [
        i
        for i, cell in enumerate(nb["cells"])
        if cell.get("metadata", {}).get("slideshow", {}).get("slide_type") not in SLIDE_TYPES
    ]
    if missing:
        return [f"{path.name}: cells without slideshow.slide_type metadata (RISE): {missing[:12]}"]
    first = nb["cells"][0].get("metadata", {}).get("slideshow", {}).get("slide_type") if nb["cells"] else None
    if first != "slide":
        return [f"{path.name}: the title cell's slide_type is {first!r}, expected 'slide'"]
    return []


def check_kernelspec(path: Path) -> list[str]:
    path = Path(path)
    name = load(path).get("metadata", {}).get("kernelspec", {}).get("name")
    if name != "python3":
        return [f"{path.name}: kernelspec name is {name!r}, expected 'python3'"]
    return []


def _lesson_map_lines(readme: Path) -> list[str]:
    lines, inside = [], False
    for line in readme.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            inside = line.strip().lower() == "## lesson map"
        elif inside:
            lines.append(line)
    return lines


def check_listed(path: Path) -> list[str]:
    path = Path(path)
    repo = path.parent.parent
    problems = []
    index = repo / "notebooks" / "README.md"
    if not index.exists():
        problems.append(f"{path.name}: notebooks/README.md is missing")
    elif path.name not in index.read_text(encoding="utf-8"):
        problems.append(f"{path.name}: not listed in notebooks/README.md")
    readme = repo / "README.md"
    if not readme.exists():
        problems.append(f"{path.name}: README.md is missing")
    elif not any(path.name in line for line in _lesson_map_lines(readme)):
        problems.append(f"{path.name}: not in the '## Lesson map' section of README.md")
    return problems


def check_widget_fallbacks(path: Path) -> list[str]:
    path = Path(path)
    nb = load(path)
    cells = nb["cells"]
    problems = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code" or not WIDGET_CALL.search(_source(cell)):
            continue
        window = cells[index : index + 1 + WIDGET_FALLBACK_CELLS]
        has_figure = any(
            mime in output.get("data", {}) for c in window for output in c.get("outputs", []) for mime in FIGURE_MIMES
        )
        if not has_figure:
            problems.append(
                f"{path.name}: widget in {_label(nb, index)} has no static figure in it or the "
                f"{WIDGET_FALLBACK_CELLS} cells after it (widgets do not render in RISE or static viewers)"
            )
    return problems


CHECKS: dict[str, Callable[[Path], list[str]]] = {
    "file_name": check_file_name,
    "title": check_title,
    "headings": check_headings,
    "execution_counts": check_execution_counts,
    "error_outputs": check_error_outputs,
    "clean_outputs": check_clean_outputs,
    "sources": check_sources,
    "size": check_size,
    "slideshow": check_slideshow,
    "kernelspec": check_kernelspec,
    "listed": check_listed,
    "widget_fallbacks": check_widget_fallbacks,
}


def check_notebook(path: Path) -> dict[str, list[str]]:
    """Run every rule on one notebook; return {rule: problems} for the rules that found any."""
    results = {name: check(Path(path)) for name, check in CHECKS.items()}
    return {name: problems for name, problems in results.items() if problems}
