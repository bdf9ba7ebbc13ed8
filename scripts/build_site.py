"""Build the course website into ``site/`` (``make site``): static HTML, offline, nothing re-executed.

Steps:
1. stage a Sphinx source tree in ``build/site_src/``: the pages of ``site_src/`` (configuration, home
   page), the committed executed lessons (``notebooks/NN_*.ipynb``, the instructor edition: each lesson
   is its own solution) and ``docs/instructor_guide.md``;
2. write each figure's alt text from ``docs/figure_alt_text.json`` into the staged copies (the same
   step as ``scripts/apply_alt_text.py``; a no-op once the notebooks carry it), so every ``<img>``
   of the site has its ``alt``;
3. fold the solutions (:func:`fold_solutions`): each code cell with a solution region is shown as the
   student sees it (the stub cell of the student edition, ``scripts/editions.py``), followed by the
   complete cell with its source folded behind a "Show solution" toggle (myst-nb's ``hide-input`` tag
   with a per-cell prompt: a ``<details>`` element, no script) and its stored outputs below; marker
   lines are left out;
4. copy MathJax 3 (from the pinned ``django-static-mathjax`` package) into ``_static/mathjax``;
5. run ``sphinx-build`` (myst-nb with ``nb_execution_mode = "off"``: the stored outputs are shown);
6. make each lesson's download (``_sources/notebooks/NN_*.ipynb``, the theme's download button) the
   student edition: the notebook a student works in, not the solved one.

Usage::

    .venv/bin/python scripts/build_site.py               # -> site/index.html
    .venv/bin/python scripts/build_site.py --out /tmp/x  # elsewhere

Prints the build time. Sphinx warnings are printed; ``--strict`` turns them into errors.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from apply_alt_text import apply_alt_text, load_alt_text  # noqa: E402
from editions import make_edition, student_edition  # noqa: E402

__all__ = [
    "REPO",
    "SHOW_SOLUTION",
    "build_site",
    "fold_solutions",
    "mathjax_dir",
    "stage_sources",
    "write_downloads",
]

REPO = Path(__file__).resolve().parents[1]
# The parts of MathJax's es5 distribution the site loads: the combined TeX+MathML/CommonHTML bundle,
# the components it may load on demand (TeX extensions, fonts, the menu, accessibility, speech).
MATHJAX_PARTS = ["tex-mml-chtml.js", "input", "output", "ui", "a11y", "adaptors", "sre"]


def mathjax_dir() -> Path:
    """The MathJax 3 ``es5`` folder shipped by the ``django-static-mathjax`` package."""
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("MathJax 3 is missing: install the pinned django-static-mathjax (make env)")
    folder = Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax" / "es5"
    if not (folder / "tex-mml-chtml.js").is_file():
        raise FileNotFoundError(f"no tex-mml-chtml.js in {folder}: reinstall django-static-mathjax")
    return folder


SHOW_SOLUTION = {"code_prompt_show": "Show solution", "code_prompt_hide": "Hide solution"}
STUB_TAG = "student-stub"  # the stub cell shown above a folded solution (myst-nb adds the class tag_student-stub)


def fold_solutions(nb: nbformat.NotebookNode, name: str) -> int:
    """Show each solution region of ``nb`` as the student's stub, the full cell folded below it; return how many.

    A code cell with a solution region becomes two cells: its student-edition source (a new cell, id
    ``<id>-stub``, no outputs), then the complete cell without its marker lines, tagged ``hide-input``
    with the prompts "Show solution" / "Hide solution", outputs kept. Cells with only hidden regions
    lose their marker lines. ``name`` names the notebook in errors (scripts/editions.py's EditionError).
    """
    edition = make_edition(nb, name)
    cells, folded = [], 0
    for cell, made in zip(nb.cells, edition.cells, strict=True):
        if made.regions:
            cell.source = made.instructor_source
        if made.has_solution:
            stub = nbformat.v4.new_code_cell(
                made.student_source, id=f"{(cell.get('id') or f'cell{made.index}')[:58]}-stub"
            )
            stub.metadata["tags"] = [STUB_TAG]
            cells.append(stub)
            tags = cell.metadata.setdefault("tags", [])
            if "hide-input" not in tags:
                tags.append("hide-input")
            cell.metadata["mystnb"] = {**cell.metadata.get("mystnb", {}), **SHOW_SOLUTION}
            folded += 1
        cells.append(cell)
    nb.cells = cells
    return folded


def stage_sources(stage: Path, repo: Path = REPO) -> list[str]:
    """Fill `stage` with the site's Sphinx sources; return the figures that have no alt text."""
    if stage.exists():
        shutil.rmtree(stage)
    shutil.copytree(repo / "site_src", stage)
    texts = load_alt_text(repo / "docs" / "figure_alt_text.json")
    missing = []
    (stage / "notebooks").mkdir()
    for path in sorted((repo / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        _, absent, _ = apply_alt_text(nb, texts.get(path.name, {}))
        missing += [f"notebooks/{path.name} cell {cell_id}" for cell_id in absent]
        fold_solutions(nb, f"notebooks/{path.name}")
        nbformat.write(nb, stage / "notebooks" / path.name)
    (stage / "docs").mkdir()
    shutil.copy2(repo / "docs" / "instructor_guide.md", stage / "docs" / "instructor_guide.md")
    source = mathjax_dir()
    target = stage / "_static" / "mathjax"
    target.mkdir(parents=True)
    for part in MATHJAX_PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part)
        else:
            shutil.copy2(source / part, target / part)
    return missing


def write_downloads(out: Path, repo: Path = REPO) -> int:
    """Make each lesson's download in the built site its student edition; return how many were written."""
    written = 0
    for path in sorted((repo / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        target = out / "_sources" / "notebooks" / path.name
        if target.is_file():
            nb = student_edition(json.loads(path.read_text(encoding="utf-8")), f"notebooks/{path.name}")
            target.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
            written += 1
    return written


def build_site(out: Path, stage: Path, strict: bool = False, repo: Path = REPO) -> int:
    """Stage the sources of ``repo`` and run sphinx-build into `out`; return sphinx-build's exit status."""
    missing = stage_sources(stage, repo)
    for figure in missing:
        print(f"warning: figure without alt text: {figure} (add it to docs/figure_alt_text.json)")
    # Sphinx writes into build/site_html (myst-nb puts its image files beside the output folder, in
    # build/jupyter_execute), then the finished site is moved to `out`.
    html = stage.parent / "site_html"
    for folder in (html, out):
        if folder.exists():
            shutil.rmtree(folder)
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", "-d", str(stage.parent / "site_doctrees")]
    if strict:
        command += ["-W", "--keep-going"]
    status = subprocess.call([*command, str(stage), str(html)])
    if status == 0:
        write_downloads(html, repo)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(html, out)
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "site", help="output folder (default: site/)")
    parser.add_argument("--stage", type=Path, default=REPO / "build" / "site_src", help="staging folder")
    parser.add_argument("--strict", action="store_true", help="fail on any Sphinx warning")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    status = build_site(args.out.resolve(), args.stage.resolve(), strict=args.strict)
    seconds = time.perf_counter() - started
    if status == 0:
        pages = len(list(args.out.rglob("*.html")))
        shown = args.out.resolve().relative_to(REPO) if args.out.resolve().is_relative_to(REPO) else args.out
        print(f"site built: {shown}/index.html, {pages} HTML pages, in {seconds:.1f} s")
    else:
        print(f"sphinx-build failed with status {status} after {seconds:.1f} s", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
