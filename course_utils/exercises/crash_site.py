"""Where a crash is: in the answer itself, or in another of the student's functions, named with its cell.

"your line 6" is right only when line 6 is in the function being checked. When the crash is inside another
function the student wrote (the softmax of Exercise 1, called by attention in Exercise 3), the message names
that function and the notebook cell that defined it: ``in `softmax`, defined in the cell of softmax_along (In
[12])``. A cell is found from the code object's file: IPython compiles each cell to its own file name and
remembers its execution count; the exercise is the one whose check handed back a function from that cell.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

from course_utils.exercises.compare import shorten
from course_utils.exercises.runner import ENGINE_DIR, PACKAGE_DIR, student_line

__all__ = ["crash_words", "cell_number"]

_CHECKS_FILE = PACKAGE_DIR + "/checks.py"


def cell_number(filename: str) -> int | None:
    """The ``In [N]`` of the notebook cell compiled to ``filename``, when running under IPython; else None."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None) if ipython is not None else None
    shell = get() if get is not None else None
    mapping = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if isinstance(mapping, dict):
        number = mapping.get(filename)
        return number if isinstance(number, int) else None
    return None


def _is_library(filename: str) -> bool:
    return (
        filename.startswith(PACKAGE_DIR)
        or "site-packages" in filename
        or filename.startswith((sys.prefix, sys.base_prefix))
        or filename.startswith("<frozen")
    )


def crash_words(exc, answer, codes, cells_by_file: dict | None = None) -> str:
    """`` (your line N: `code`)`` inside the answer, or `` (in `helper`, defined in the cell of X (In [12]), its
    line N: `code`)`` inside another of the student's functions; empty when no student frame is found.

    ``answer`` is the function :func:`~course_utils.exercises.runner.student_line` reads (a class's
    ``__init__``), ``codes`` the code objects of everything the answer defines (a class's every method);
    ``cells_by_file`` maps a code object's file to the title of the exercise whose check handed back a function
    defined there.
    """
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith(ENGINE_DIR) and f.filename != _CHECKS_FILE
    ]
    own_files = {c.co_filename for c in codes}
    mine = [f for f in frames if f.filename in own_files or not _is_library(f.filename)]
    if not mine:
        return ""
    frame = mine[-1]
    if not codes or any(frame.filename == c.co_filename and frame.name == c.co_name for c in codes):
        return student_line(exc, answer)
    place = ""
    title = (cells_by_file or {}).get(frame.filename)
    number = cell_number(frame.filename)
    if title:
        place = f", defined in the cell of {title}"
        if number is not None:
            place += f" (In [{number}])"
    elif number is not None:
        place = f", defined in the cell In [{number}]"
    elif frame.filename in own_files:
        place = ", defined in the same cell"
    text = f" (in `{frame.name}`{place}, its line {frame.lineno}"
    if frame.line:
        text += f": `{shorten(frame.line, 100)}`"
    last = frames[-1]
    if last is not frame:
        text += f", inside {Path(last.filename).stem}.{last.name}"
    return text + ")"
