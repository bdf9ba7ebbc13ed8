"""Submit a lesson: a frozen, timestamped copy of the student's notebook, for the instructor's marks.

In the lesson's last cell::

    from course_utils import submit
    submit.lesson("01")          # or: submit.button("01"), a button that does the same

- **On a JupyterHub** with the class report (``COURSE_REPORT_URL`` and the hub's token set, as for the live
  records): the notebook is posted to the class-report service, which takes the student's name from the hub token
  (never from the notebook), refuses a notebook over its size limit with a message saying so, keeps every
  submission, and answers with a receipt.
- **On a laptop**: the copy goes into the folder the instructor collects: ``$COURSE_SUBMIT_DIR``, else the course
  file's ``[submit] folder`` (``course.toml`` at the course's root), under the student's name (``$COURSE_STUDENT``,
  else the login name).

Every submission is kept; the one that counts is the newest before the lesson's due date (else the newest), so
submitting again before the deadline replaces it as the current one. The receipt shows the time (UTC), the lesson,
the file, its size and its sha256 digest.

**Save first.** What is submitted is the notebook file as last saved (Ctrl+S / Cmd+S, or JupyterLab's autosave,
every 2 minutes by default), not what the open tab shows: the receipt says when the file was saved.

The notebook: ``notebook=`` if given; else the kernel's own notebook (``$JPY_SESSION_NAME``, which
jupyter-server sets, or IPython's ``__session__``) when it is this lesson's; else ``NN_*.ipynb`` in the current
folder or in ``my_work/`` (exactly one). Introduced in the lessons' last cell; for instructors in docs/marks.md.
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
import re
from pathlib import Path

from course_utils import hub_client
from course_utils.marks import course as course_file
from course_utils.marks import folder

__all__ = ["SUBMIT_DIR_ENV", "SubmitError", "button", "find_notebook", "lesson"]

SUBMIT_DIR_ENV = "COURSE_SUBMIT_DIR"
STUDENT_ENV = "COURSE_STUDENT"
COURSE_ROOT = Path(__file__).resolve().parents[1]
SubmitError = hub_client.SubmitError


def _check_lesson(lesson) -> str:
    if not isinstance(lesson, str):
        raise TypeError(f"lesson: expected a two-digit string like '01', got {type(lesson).__name__}")
    if not re.fullmatch(r"\d\d", lesson):
        raise ValueError(f"lesson: expected a two-digit string like '01', got {lesson!r:.40}")
    return lesson


def _session_path() -> Path | None:
    name = os.environ.get("JPY_SESSION_NAME", "")
    if not name:
        try:
            from IPython import get_ipython

            shell = get_ipython()
            name = (shell.user_ns.get("__session__", "") if shell is not None else "") or ""
        except ImportError:
            name = ""
    if not isinstance(name, str) or not name.endswith(".ipynb"):
        return None
    path = Path(name)
    if path.is_absolute():
        return path
    # a path relative to the server's root (jupyter-server without a name): the kernel starts in the notebook's folder
    return next((p for p in (Path.cwd() / path, Path.cwd() / path.name) if p.is_file()), None)


def find_notebook(lesson: str, notebook=None) -> Path:
    """The notebook to submit for ``lesson`` (see the module's docstring for the order); ValueError if none."""
    _check_lesson(lesson)
    if notebook is not None:
        if not isinstance(notebook, str | Path):
            raise TypeError(f"notebook: expected a path (str or Path), got {type(notebook).__name__}")
        path = Path(notebook)
        if not path.is_file() or path.suffix != ".ipynb":
            raise ValueError(f"notebook: expected an existing .ipynb file, got {str(path)!r}")
        return path
    session = _session_path()
    if session is not None and session.is_file() and session.name.startswith(f"{lesson}_"):
        return session
    for place in (Path.cwd(), Path.cwd() / "my_work", COURSE_ROOT / "my_work"):
        found = sorted(place.glob(f"{lesson}_*.ipynb"))
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            names = ", ".join(p.name for p in found)
            raise ValueError(
                f"lesson: {len(found)} notebooks of lesson {lesson} in {place} ({names}): pass notebook='...'"
            )
    raise ValueError(
        f"lesson: no notebook {lesson}_*.ipynb found here or in my_work/: pass notebook='path/to/it.ipynb'"
    )


def _submit_folder() -> Path:
    folder_name = os.environ.get(SUBMIT_DIR_ENV, "")
    if not folder_name and (COURSE_ROOT / "course.toml").is_file():
        folder_name = course_file.load(COURSE_ROOT / "course.toml").submit_folder or ""
    if not folder_name:
        raise SubmitError(
            f"nowhere to submit: not on the course's JupyterHub, and neither ${SUBMIT_DIR_ENV} nor course.toml's"
            " [submit] folder names the folder your instructor collects; ask them which folder, then set it"
        )
    return Path(folder_name).expanduser()


def _say(receipt: dict, path: Path, saved: dt.datetime, where: str) -> None:
    age = (dt.datetime.now(dt.UTC) - saved).total_seconds() / 60
    print(
        f"Received lesson {receipt['lesson']} from {receipt['student']} {where}: {receipt['notebook']},"
        f" {receipt['bytes']:,} bytes, at {receipt['received']} (UTC)\n"
        f"sha256 {receipt['sha256']}\n"
        f"(the file as saved at {saved:%H:%M:%S} UTC, {age:.0f} min ago: save, then submit again, to include later work)"
    )


def lesson(lesson: str, *, notebook=None, quiet: bool = False) -> dict:
    """Submit ``lesson``'s notebook (see the module's docstring) and return the receipt as a dict."""
    return _submit(lesson, notebook, quiet)


def _submit(lesson: str, notebook, quiet: bool) -> dict:
    _check_lesson(lesson)
    if not isinstance(quiet, bool):
        raise TypeError(f"quiet: expected True or False, got {type(quiet).__name__}")
    path = find_notebook(lesson, notebook)
    data = path.read_bytes()
    saved = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC)
    if hub_client.enabled():
        receipt = hub_client.submit(lesson, path.name, data)
        where = "by the class report"
    else:
        if len(data) > folder.MAX_NOTEBOOK_BYTES:
            raise SubmitError(
                f"{path.name} is {len(data):,} bytes, over the {folder.MAX_NOTEBOOK_BYTES:,}-byte limit:"
                " clear the largest outputs (Edit > Clear Outputs of a cell), save, and submit again"
            )
        student = os.environ.get(STUDENT_ENV) or getpass.getuser()
        target = _submit_folder()
        receipt = folder.save(target, student, lesson, path.name, data).as_dict()
        where = f"in {target}"
    if not quiet:
        _say(receipt, path, saved, where)
    return receipt


def button(lesson: str, *, notebook=None):
    """A "Submit lesson NN" button (ipywidgets) that calls :func:`lesson` and shows the receipt under it."""
    _check_lesson(lesson)
    import ipywidgets as widgets

    press = widgets.Button(description=f"Submit lesson {lesson}", icon="paper-plane", button_style="primary")
    out = widgets.Output()

    def on_click(_):
        out.clear_output()
        with out:
            try:
                _submit(lesson, notebook, False)
            except (SubmitError, ValueError, OSError) as exc:
                print(f"Not submitted: {exc}")

    press.on_click(on_click)
    return widgets.VBox([press, out])
