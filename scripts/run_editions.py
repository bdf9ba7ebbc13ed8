"""Prove that the student edition of every lesson runs top to bottom, untouched (``make test-editions``).

What a student gets from ``make workspace`` on a fresh clone: the student editions are written into a
temporary ``my_work/`` by the same code (``scripts/workspace.py``), then each is executed in a fresh kernel
with nbclient, in that folder (outside ``notebooks/``, as a student runs it). A lesson passes when no cell
raises (cells tagged ``raises-exception`` may) and every exercise check cell (one calling ``checks.check(``)
says "not attempted" once per call: an untouched stub is never *passed*, *wrong* or *crashed*, and the lesson
goes on with the course's version. Prints one line per lesson with its time, and a summary line; exit
status 0 only when every lesson passes.

Usage::

    make test-editions                                            # every lesson
    .venv/bin/python scripts/run_editions.py notebooks/02_masking.ipynb --keep /tmp/editions

``--keep DIR`` keeps the executed copies there (to read what a student would see).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workspace  # noqa: E402

__all__ = ["run_edition", "main"]

REPO = Path(__file__).resolve().parents[1]
CHECK_CALL = re.compile(r"\bchecks\.check\(")
NOT_ATTEMPTED = re.compile(r"not attempted", re.IGNORECASE)


def _text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
        parts.append(" ".join(output.get("traceback", [])))
    return "".join(part if isinstance(part, str) else "".join(part) for part in parts)


def run_edition(path: Path, timeout_s: int = 300) -> tuple[bool, str]:
    """Execute the student edition at ``path`` in place; return (passed, one line saying what happened)."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=timeout_s, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    try:
        client.execute()
    except CellExecutionError as exc:
        nbformat.write(nb, path)
        index = next(
            (
                i
                for i, cell in enumerate(nb.cells)
                if any(o.get("output_type") == "error" for o in cell.get("outputs", []))
            ),
            None,
        )
        where = f"cell {index} (id {nb.cells[index].get('id')})" if index is not None else "a cell"
        return False, f"{where} raised {exc.ename}: {str(exc.evalue).splitlines()[0][:200] if exc.evalue else ''}"
    nbformat.write(nb, path)
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        if any(o.get("output_type") == "error" for o in cell.outputs) and "raises-exception" not in tags:
            problems.append(f"cell {index} (id {cell.get('id')}) shows an error")
        calls = len(CHECK_CALL.findall(cell.source))
        if calls and len(NOT_ATTEMPTED.findall(_text(cell))) < calls:
            said = " ".join(_text(cell).split())[:160]
            problems.append(f"cell {index} (id {cell.get('id')}) does not say 'not attempted': {said!r}")
    if problems:
        return False, "; ".join(problems)
    return True, "ok"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", type=Path, help="instructor editions (default: notebooks/NN_*.ipynb)")
    parser.add_argument("--keep", type=Path, help="keep the executed student editions in this folder")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
    args = parser.parse_args(argv)
    lessons = args.lessons or workspace.lessons(REPO / "notebooks")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="student_editions_") as tmp:
        notebooks, work = Path(tmp) / "notebooks", Path(tmp) / workspace.WORKSPACE
        notebooks.mkdir()
        for lesson in lessons:  # only the lessons asked for; their data files come from course_utils
            shutil.copy2(lesson, notebooks / Path(lesson).name)
        entries = workspace.sync(notebooks, work)
        failed = 0
        for entry in entries:
            if entry.action != "created":
                print(
                    f"{entry.name}: FAILED: no student edition ({entry.note.splitlines()[0] if entry.note else entry.action})"
                )
                failed += 1
                continue
            t0 = time.perf_counter()
            ok, said = run_edition(work / entry.name, args.timeout)
            print(f"{entry.name}: {'ok' if ok else 'FAILED: ' + said} ({time.perf_counter() - t0:.1f} s)", flush=True)
            failed += not ok
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for path in work.glob("*.ipynb"):
                shutil.copy2(path, args.keep / path.name)
    total = time.perf_counter() - started
    print(f"student editions: {len(entries) - failed} of {len(entries)} run top to bottom untouched, in {total:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
