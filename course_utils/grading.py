"""The class report: run every student's notebooks, each in its own sandbox, and tabulate each exercise's status.

Usage (the Makefile sets ``OMP_NUM_THREADS=1`` and ``PYTHONHASHSEED=0``)::

    make grade SUBMISSIONS=path/to/submissions JOBS=4
    .venv/bin/python -m course_utils.grading path/to/submissions --jobs 4 --cell-timeout 60 --notebook-timeout 600

``path/<student>/NN_*.ipynb`` (any subset of the lessons per student) are graded; the report is
``path/grades.csv`` (``student, lesson, exercise, status, detail``) and ``path/grades.html``
(see :mod:`course_utils.grade_report`). Every other entry of ``path`` is listed in the report with the reason it
was not graded (an empty folder, a hidden name, a file that is not ``NN_*.ipynb``, a second notebook of one
lesson, a symbolic link or other non-regular file: refused, never followed).

How a notebook is graded, without ever importing student code into this process:

1. Its bytes are read (never through a symbolic link) and parsed as JSON. A file that is not a notebook gives
   every exercise of its lesson the status ``crashed`` with the reason.
2. The bytes are written into a fresh temporary folder, which is all the notebook sees: on Linux it runs in a
   bubblewrap sandbox (:mod:`course_utils.sandbox`: its own copy, the course package read-only, no network, no
   other student, memory and process limits, every process ended with it), where
   :mod:`course_utils.grade_runner` executes it with nbclient in its own ``python3`` kernel, with a time limit per
   cell and per notebook. A cell that raises does not stop the run.
3. Every ``checks.check(...)`` call appends one JSON line to the check log of the copy: its status is the
   exercise's status, when an executed cell that names the exercise wrote it. An exercise with no line gets
   ``missing`` when no code cell names its id, ``timed_out`` when the run was stopped before its cell, and
   ``crashed`` when its cell or an earlier one raised.
4. Problems of the notebook as a whole are appended to the detail of each of its rows and listed in the report;
   **tampering** (a check line no executed check cell wrote, a replaced ``checks.check``, a file written outside
   its copy) is flagged on the culprit's rows. A student can still fake their *own* results from inside their own
   kernel (nbgrader and otter-grader share this limit); nobody can change anyone else's.
5. Error messages are cut to the student's own: the exception and its message, the message dropped when it
   quotes the course's code or a lesson (a notebook that reads a file and raises its text).

Results are cached in ``path/.grade_cache/``, out of every sandbox's reach, by the notebook's content hash and
the grader's settings; each entry is signed (HMAC-SHA-256) with a key kept there that no kernel sees, and an entry
whose signature does not match is ignored and the notebook graded again. A run that stops can be started again: what
was graded comes from the cache. After the run the course tree (``course_utils/``, ``notebooks/``, ``data/``,
``scripts/``) is verified unchanged (and after every notebook when there is no sandbox).

Introduced for instructors in docs/instructor_guide.md (issues 15 and 22); not used by the lessons.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import hashlib
import hmac
import io
import json
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import tokenize
from dataclasses import asdict, dataclass, field
from pathlib import Path

from course_utils import sandbox

__all__ = [
    "STATUSES",
    "LOG_STATUSES",
    "Exercise",
    "Record",
    "NotebookResult",
    "GradeRun",
    "load_registry",
    "find_submissions",
    "grade_notebook",
    "grade",
    "write_csv",
    "csv_safe",
    "main",
]

GRADER_VERSION = "2"  # part of the cache key: bump it when grading logic changes
LOG_STATUSES = ("passed", "wrong", "crashed", "not_attempted", "timed_out")  # what checks.check writes
STATUSES = (*LOG_STATUSES, "missing")
CSV_COLUMNS = ("student", "lesson", "exercise", "status", "detail")
NOTEBOOK_NAME = re.compile(r"^(\d\d)_[^/]*\.ipynb$")
CACHE_DIR = ".grade_cache"
OWN_FILES = ("grades.csv", "grades.html", CACHE_DIR)  # what the grader writes into the submissions folder
KERNEL = "python3"
MAX_DETAIL = 300  # characters of an error message kept in a detail
MAX_NOTEBOOK_BYTES = 50 * 2**20
MAX_RESULT_BYTES = 20 * 2**20
COURSE_TREE = ("course_utils", "notebooks", "data", "scripts", "pyproject.toml", "requirements.txt", "Makefile")
COURSE = Path(__file__).resolve().parents[1]
FOREIGN = "(the message is left out: it quotes a file of the course)"
TAMPERING = "TAMPERING"


@dataclass(frozen=True)
class Exercise:
    """What the grader needs of a registry exercise: its id ("01.softmax_along") and title."""

    id: str
    title: str = ""


@dataclass
class Record:
    """One row of grades.csv (``misconception`` feeds the HTML report only)."""

    student: str
    lesson: str
    exercise: str
    status: str
    detail: str
    misconception: str | None = None


@dataclass
class NotebookResult:
    """What running one notebook found: exercise id -> (status, detail, misconception), notes and tampering."""

    exercises: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    tampering: list = field(default_factory=list)


@dataclass
class GradeRun:
    """The outcome of :func:`grade`: the rows, notebook problems, and how many notebooks ran or came from the cache.

    ``problems`` lists ``(student, file name, note)`` (student ``""``: an entry at the top of the submissions
    folder); ``tampering`` the same for flagged notebooks; ``sandbox`` says how the notebooks were isolated;
    ``course_changed`` names course files that changed during the run (empty: verified unchanged).
    """

    records: list
    problems: list  # (student, notebook file name, note)
    registry: dict  # lesson -> [Exercise]
    ran: int = 0
    cached: int = 0
    csv_path: Path | None = None
    html_path: Path | None = None
    sandbox: str = ""
    tampering: list = field(default_factory=list)
    course_changed: list = field(default_factory=list)
    forged: int = 0


# ------------------------------------------------------------------------------- the registry


def load_registry() -> dict:
    """Lesson -> ordered list of :class:`Exercise`, from ``course_utils.exercises.EXERCISES``."""
    try:
        from course_utils import exercises
    except ImportError as exc:
        raise RuntimeError(f"course_utils.exercises (the exercise registry) cannot be imported: {exc}") from exc
    registry: dict = {}
    for exercise in exercises.EXERCISES.values():
        registry.setdefault(exercise.lesson, []).append(Exercise(exercise.id, getattr(exercise, "title", "")))
    return registry


def _normalize_registry(registry) -> dict:
    """Accept lesson -> [Exercise | id | (id, title)] and return lesson -> [Exercise]."""
    if not isinstance(registry, dict):
        raise TypeError(f"registry must be a dict lesson -> list of exercises but is {type(registry).__name__}")
    out = {}
    for lesson, items in registry.items():
        if not (isinstance(lesson, str) and re.fullmatch(r"\d\d", lesson)):
            raise ValueError(f"registry keys must be two-digit lesson strings like '01' but one is {lesson!r}")
        exercises = []
        for item in items:
            if isinstance(item, Exercise):
                exercises.append(item)
            elif isinstance(item, str):
                exercises.append(Exercise(item))
            elif isinstance(item, tuple) and len(item) == 2:
                exercises.append(Exercise(*item))
            else:
                exercises.append(Exercise(item.id, getattr(item, "title", "")))
        out[lesson] = exercises
    return out


# ------------------------------------------------------------------------------- submissions


def _shown(name: str) -> str:
    """A file name as the report shows it: control characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def _kind(entry: os.DirEntry) -> str | None:
    """None for a regular file or folder; else what it is (never followed)."""
    if entry.is_symlink():
        return "a symbolic link"
    mode = entry.stat(follow_symlinks=False).st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return "not a regular file"


def find_submissions(root: Path) -> tuple[list, list]:
    """``[(student, lesson, path)]`` for ``root/<student>/NN_*.ipynb``, sorted, and every other entry with a reason.

    Every entry of ``root`` (but the grader's own ``grades.csv``, ``grades.html`` and ``.grade_cache``) and of
    each student folder is either graded or listed as ``(student, name, reason)``: a symbolic link or other
    non-regular file is refused (never followed), a hidden folder (``.name``), a file at the top, a folder inside a
    student's folder, a file that is not ``NN_*.ipynb`` and a second notebook of one lesson are not graded, and
    an empty student folder is listed.
    """
    root = Path(root)
    if root.is_symlink() or not root.is_dir():
        raise ValueError(f"SUBMISSIONS must be a folder of student folders but {root} is not a folder")
    found, problems = [], []
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        name = entry.name
        if name in OWN_FILES and not entry.is_symlink():
            continue
        kind = _kind(entry)
        if kind:
            problems.append(("", _shown(name), f"refused: {kind} (never followed); hand in the file itself"))
            continue
        if not entry.is_dir(follow_symlinks=False):
            problems.append(("", _shown(name), "not graded: a file outside any student folder"))
            continue
        if name.startswith("."):
            problems.append((_shown(name), "", "not graded: a hidden folder (its name starts with '.'); rename it"))
            continue
        if not name.isprintable():
            problems.append((_shown(name), "", "not graded: the folder's name holds control characters; rename it"))
            continue
        entries = sorted(os.scandir(entry.path), key=lambda e: e.name)
        if not entries:
            problems.append((name, "", "not graded: an empty folder"))
            continue
        seen = {}
        for item in entries:
            shown = _shown(item.name)
            kind = _kind(item)
            match = NOTEBOOK_NAME.match(item.name)
            if kind:
                problems.append((name, shown, f"refused: {kind} (never followed); hand in the file itself"))
            elif item.is_dir(follow_symlinks=False):
                problems.append((name, shown, "not graded: a folder inside the student's folder"))
            elif not item.name.endswith(".ipynb"):
                problems.append((name, shown, "not graded: not a notebook (.ipynb)"))
            elif not match or not item.name.isprintable():
                lesson = re.search(r"(?<!\d)(\d\d)_", item.name)
                hint = f" (rename it {item.name[lesson.start() :]} to grade it)" if lesson else ""
                problems.append((name, shown, f"not graded: the name does not start with a lesson number NN_{hint}"))
            elif match.group(1) in seen:
                problems.append((name, shown, f"not graded: {seen[match.group(1)]} is already lesson {match.group(1)}"))
            else:
                seen[match.group(1)] = item.name
                found.append((name, match.group(1), Path(item.path)))
    return found, problems


def _read_submission(path: Path) -> bytes:
    """The bytes of a regular file, opened without following a symbolic link (its folder's either)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    folder = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path.name, flags, dir_fd=folder)
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError("not a regular file")
        if info.st_size > MAX_NOTEBOOK_BYTES:
            raise OSError(f"larger than {MAX_NOTEBOOK_BYTES // 2**20} MB")
        return handle.read(MAX_NOTEBOOK_BYTES + 1)


# ------------------------------------------------------------------------------- text from the sandbox


def _one_line(text: str, limit: int = MAX_DETAIL) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _squash(text: str) -> str:
    return " ".join(text.split())


def _code_without_strings(source: str) -> str:
    """Python source with its string literals and comments blanked: the messages the engine prints are not quotes."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    blank = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.STRING, tokenize.COMMENT) or token.type == getattr(
                tokenize, "FSTRING_MIDDLE", -1
            ):
                (r0, c0), (r1, c1) = token.start, token.end
                blank.append((starts[r0 - 1] + c0, starts[r1 - 1] + c1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return source
    chars = list(source)
    for a, b in blank:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


class _Guard:
    """Finds text from the course's files (its code, its lessons) in what a notebook reports.

    A message that holds a stretch of at least ``WINDOW + STEP - 1`` characters of the course's code (without
    its string literals: the engine's own messages are those) or of a lesson's cells, and that the student's own
    notebook does not hold, is dropped. Whitespace does not count.
    """

    WINDOW, STEP = 32, 8

    def __init__(self, course: Path):
        parts = []
        for path in sorted((course / "course_utils").rglob("*.py")):
            try:
                parts.append(_squash(_code_without_strings(path.read_text(encoding="utf-8"))))
            except (OSError, UnicodeDecodeError):
                continue
        for path in sorted((course / "notebooks").glob("*.ipynb")):
            try:
                cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
            except (OSError, ValueError):
                continue
            for cell in cells:
                source = cell.get("source", "")
                parts.append(_squash("".join(source) if isinstance(source, list) else str(source)))
        self.corpus = "\n".join(parts)

    def clean(self, text: str, own: str) -> str:
        squashed = _squash(text)
        for start in range(0, max(0, len(squashed) - self.WINDOW) + 1, self.STEP):
            window = squashed[start : start + self.WINDOW]
            if len(window) == self.WINDOW and window in self.corpus and window not in own:
                return FOREIGN
        return text


# ------------------------------------------------------------------------------- one notebook


def _crashed_all(exercises, reason: str) -> NotebookResult:
    return NotebookResult({ex.id: ("crashed", reason, None) for ex in exercises}, [reason])


def _log_lines(data: bytes) -> tuple[list, int]:
    """[(byte offset, record)] of the check log's well-formed check lines, and how many lines were malformed."""
    lines, bad, offset = [], 0, 0
    for raw in data.split(b"\n"):
        start, offset = offset, offset + len(raw) + 1
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            bad += 1
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("exercise"), str):
            bad += 1
            continue
        if entry.get("event", "check") != "check":
            continue  # predictions and hints: not statuses
        if entry.get("status") not in LOG_STATUSES:
            bad += 1
            continue
        lines.append((start, entry))
    return lines, bad


def _names(source: str, exercise_id: str) -> bool:
    return f'"{exercise_id}"' in source or f"'{exercise_id}'" in source


def _probe_flags(probe, course: Path) -> list:
    """What the end-of-run inspection says was replaced (empty: the course's checker, as shipped)."""
    flags = []
    if not isinstance(probe, dict):
        return flags
    package = course / "course_utils"
    for module, path in (
        ("course_utils.checks", package / "checks.py"),
        ("course_utils.exercises.log", package / "exercises" / "log.py"),
    ):
        entry = probe.get(module)
        if not isinstance(entry, dict):
            continue
        if entry.get("file") != str(path):
            flags.append(f"{module} was imported from another file than the course's")
            continue
        functions = entry.get("functions") if isinstance(entry.get("functions"), dict) else {}
        for name, found in functions.items():
            if not (isinstance(found, list) and len(found) == 3):
                continue
            if found != [module, str(path), name]:
                where = "a notebook cell" if str(path) != found[1] else str(found[1])
                flags.append(f"{module}.{name} was replaced (its code comes from {_shown(where)})")
    return flags


def _job_command(box: Path, status: sandbox.Status, limits: sandbox.Limits, decoys: list, course: Path) -> list:
    if status.sandboxed:
        return sandbox.command(box.parent, course=course, decoys=decoys, limits=limits)
    return [sys.executable, "-m", "course_utils.grade_runner", str(box / "job.json")]


def _end_everything(proc: subprocess.Popen, token: str | None) -> None:
    """Kill the job's process group and (without a sandbox, on Linux) every process that carries its token."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # Windows: the runner only
            proc.kill()
    except OSError:
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    if token is None or not os.path.isdir("/proc"):
        return  # (without /proc: macOS, Windows; a process that left the group is not found)
    needle = f"COURSE_GRADE_JOB={token}".encode()
    for _ in range(5):
        left = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    if needle in handle.read().split(b"\0"):
                        left.append(int(pid))
            except OSError:
                continue
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if not left:
            return


def grade_notebook(
    path: Path,
    exercises: list,
    *,
    cell_timeout: float = 60,
    notebook_timeout: float = 600,
    data: bytes | None = None,
    limits: sandbox.Limits | None = None,
    sandbox_status: sandbox.Status | None = None,
    decoys: list | None = None,
    guard: _Guard | None = None,
    course: Path = COURSE,
) -> NotebookResult:
    """Run one notebook in its own sandbox (its own kernel, in a temporary copy) and return each exercise's status.

    Parameters
    ----------
    path : the student's notebook (never modified; read without following a symbolic link unless ``data``)
    exercises : list of :class:`Exercise`, the registry's exercises of this notebook's lesson
    cell_timeout, notebook_timeout : seconds a cell, and the whole notebook, may run
    data : the notebook's bytes, when already read
    limits, sandbox_status : the sandbox's limits and whether bubblewrap is used (default: :func:`sandbox.status`)
    decoys : folders the sandbox hides behind an empty tmpfs (the submissions folder; the course tree and $HOME are
        always added)

    Never raises for a problem of the notebook: every problem becomes a status and a note.
    """
    import nbformat

    path = Path(path)
    limits = limits or sandbox.Limits()
    sandbox_status = sandbox_status or sandbox.status()
    guard = guard or _Guard(course)
    try:
        data = _read_submission(path) if data is None else data
        text = data.decode("utf-8")
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # not UTF-8, not JSON, not a notebook: report it, never stop the run
        return _crashed_all(exercises, _one_line(f"the notebook could not be read ({type(exc).__name__}: {exc})"))
    notes, tampering = [], []
    kernelspec = nb.get("metadata", {}).get("kernelspec")
    if not kernelspec:
        notes.append(f"the notebook has no kernel metadata; ran it with the course's {KERNEL} kernel")
    elif kernelspec.get("name") != KERNEL:
        notes.append(_one_line(f"the notebook asks for kernel {kernelspec.get('name')!r}; ran it with {KERNEL}"))
    code_cells = [cell for cell in nb.get("cells", []) if cell.get("cell_type") == "code"]
    sources = [str(cell.get("source", "")) for cell in code_cells]
    own = _squash("\n".join(sources))
    where = {}  # exercise id -> the first code cell whose source names it in quotes (its check cell)
    for index, source in enumerate(sources):
        for ex in exercises:
            if ex.id not in where and _names(source, ex.id):
                where[ex.id] = index
    present = [ex.id for ex in exercises if ex.id in where]
    if sorted(present, key=lambda i: where[i]) != present:
        notes.append("exercise checks are out of the lesson's order: " + ", ".join(sorted(present, key=where.get)))

    name = path.name
    job_dir = Path(tempfile.mkdtemp(prefix="grade_"))
    try:
        box = job_dir / "box"
        for folder in ("submitted", "work", "home", "log"):  # the last three: tmpfs mount points in the sandbox
            (box / folder).mkdir(parents=True)
        (box / "submitted" / name).write_bytes(data)
        home = Path.home().resolve()
        all_decoys = [Path(d).resolve() for d in decoys or []] + [course.resolve(), home]
        bound = [str(Path(sys.base_prefix).resolve()), str(Path(sys.prefix).resolve())]
        bound += [str(course / "course_utils"), str(course / "data")]
        job = {
            "notebook": name,
            "cell_timeout": cell_timeout,
            "notebook_timeout": notebook_timeout,
            "limits": asdict(limits),
            "sandboxed": sandbox_status.sandboxed,
            "decoys": [str(d) for d in all_decoys] if sandbox_status.sandboxed else [],
            "bound": bound,
        }
        (box / "job.json").write_text(json.dumps(job), encoding="utf-8")
        command = _job_command(box, sandbox_status, limits, all_decoys, course)
        token = None if sandbox_status.sandboxed else secrets.token_hex(12)
        env = {k: v for k, v in os.environ.items() if not k.startswith("COURSE_")}
        if token:
            env["COURSE_GRADE_JOB"] = token
        stderr_path = job_dir / "stderr.txt"
        with stderr_path.open("wb") as stderr:
            proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                cwd=str(box),
                env=env,
                start_new_session=True,
            )
            output = _Drain(proc.stdout, MAX_RESULT_BYTES)
            try:
                proc.wait(timeout=notebook_timeout + 120)  # the runner keeps its own limits; this is the backstop
                backstop = False
            except subprocess.TimeoutExpired:
                backstop = True
            finally:
                _end_everything(proc, token)
                output.join(timeout=30)
        try:
            result = json.loads(output.data.decode("utf-8")) if not output.overflow else None
        except (ValueError, UnicodeDecodeError):
            result = None
        log_data = b""
        written = []
        if isinstance(result, dict):
            log_text = result.get("log")
            log_data = log_text.encode("latin-1", errors="replace") if isinstance(log_text, str) else b""
            found = result.get("written")
            written = [_shown(str(w)) for w in found[:50]] if isinstance(found, list) else []
        stderr_tail = stderr_path.read_bytes()[-300:].decode(errors="replace") if stderr_path.exists() else ""
    finally:
        shutil.rmtree(job_dir, ignore_errors=True)

    if not _valid_result(result, len(code_cells)):
        if backstop:
            reason = f"the notebook ran past its {notebook_timeout:g} s limit and was stopped"
            return NotebookResult({ex.id: ("timed_out", reason, None) for ex in exercises}, [*notes, reason])
        why = "its sandbox did not start" if "bwrap" in stderr_tail else "its kernel or the runner was stopped"
        reason = f"the notebook gave no result ({why}; the whole notebook counts as crashed)"
        return NotebookResult({ex.id: ("crashed", reason, None) for ex in exercises}, [*notes, reason], tampering)

    cells = result["cells"]
    stopped = result.get("stopped")
    if not (isinstance(stopped, list) and len(stopped) == 3 and isinstance(stopped[1], int)):
        stopped = None
    else:
        stopped = [
            str(stopped[0]) if stopped[0] in ("timed_out", "crashed") else "crashed",
            stopped[1],
            guard.clean(_one_line(str(stopped[2])), own),
        ]
    errors = {}  # code cell index -> error line
    for index, cell in enumerate(cells):
        error = cell.get("error")
        if isinstance(error, dict):
            message = guard.clean(_one_line(error.get("evalue", ""), 2000), own)
            line = error.get("line")
            at = f" (line {line})" if isinstance(line, int) else ""
            ename = guard.clean(_one_line(str(error.get("ename", "Error")), 60), own)
            errors[index] = _one_line(f"{ename}: {message}".rstrip(": ") + at)

    # the check log: a line counts when an executed cell that names its exercise wrote it
    lines, malformed = _log_lines(log_data)
    log, unbacked, sessions = {}, {}, set()
    for offset, entry in lines:
        owner = None
        for index, cell in enumerate(cells):
            span = cell.get("log")
            if cell.get("ran") and isinstance(span, list) and len(span) == 2 and span[0] <= offset < span[1]:
                owner = index
                break
        if owner is None or not _names(sources[owner], entry["exercise"]):
            unbacked[entry["exercise"]] = unbacked.get(entry["exercise"], 0) + 1
            continue
        sessions.add(str(entry.get("session")))
        log[entry["exercise"]] = entry
    for exercise_id, count in sorted(unbacked.items()):
        tampering.append(
            _one_line(f"{count} check line(s) for {exercise_id} that no executed check cell wrote (ignored)", 200)
        )
    if len(sessions) > 1:
        tampering.append(f"check lines from {len(sessions)} different kernels")
    tampering += _probe_flags(result.get("probe"), course)
    outside = [_shown(str(p)) for p in result.get("outside", []) if isinstance(p, str)]
    if outside:
        tampering.append(_one_line("wrote files outside its copy: " + ", ".join(outside[:5]), 400))

    if written:
        notes.append(
            _one_line(f"wrote {len(written)} file(s) in its folder (deleted with the copy): " + ", ".join(written[:5]))
        )
    if malformed:
        notes.append(f"ignored {malformed} malformed line(s) in the check log")
    if errors:
        first = min(errors)
        notes.append(f"code cell {first + 1} raised {errors[first]}")
    if stopped:
        notes.append(stopped[2])

    out = NotebookResult(notes=notes, tampering=tampering)
    for ex in exercises:
        if ex.id in log:
            entry = log[ex.id]
            misconception = entry.get("misconception")
            detail = guard.clean(_one_line(entry.get("detail") or ""), own)
            out.exercises[ex.id] = (
                entry["status"],
                detail,
                _one_line(misconception, 80) if isinstance(misconception, str) else None,
            )
            continue
        cell = where.get(ex.id)
        if cell is None:
            status, detail = "missing", f"no code cell calls the check of {ex.id}: the cell was deleted or renamed"
        elif stopped and cell >= stopped[1]:
            status = stopped[0]
            detail = f"not checked: {stopped[2]}"
        elif cell in errors:
            status, detail = "crashed", f"its check cell (code cell {cell + 1}) raised {errors[cell]}"
        elif any(i < cell for i in errors):
            first = min(i for i in errors if i < cell)
            status, detail = "crashed", f"the check recorded nothing; code cell {first + 1} raised {errors[first]}"
        else:
            status, detail = (
                "missing",
                f"code cell {cell + 1} names {ex.id} but recorded no check (call commented out?)",
            )
        out.exercises[ex.id] = (status, detail, None)
    return out


class _Drain(threading.Thread):
    """Read a pipe to its end, keeping at most ``limit`` bytes (``overflow`` when there were more)."""

    def __init__(self, pipe, limit: int):
        super().__init__(daemon=True)
        self.pipe, self.limit, self.chunks, self.size, self.overflow = pipe, limit, [], 0, False
        self.start()

    def run(self) -> None:
        with self.pipe:
            while chunk := self.pipe.read(65536):
                if self.size + len(chunk) > self.limit:
                    self.overflow = True
                    continue
                self.chunks.append(chunk)
                self.size += len(chunk)

    @property
    def data(self) -> bytes:
        return b"".join(self.chunks)


def _valid_result(result, n_cells: int) -> bool:
    if not isinstance(result, dict) or not isinstance(result.get("cells"), list):
        return False
    cells = result["cells"]
    return len(cells) == n_cells and all(isinstance(c, dict) for c in cells)


# ------------------------------------------------------------------------------- the class


def _engine_fingerprint() -> str:
    """SHA-256 of the exercise engine's and the grader's sources: a changed reference, message or grading step
    invalidates the cache, since the same notebook may now get another verdict."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    engine = ["checks.py", "_compare.py", "_answer_runner.py", "misconceptions.py", "grading.py", "grade_runner.py"]
    files = [*(package / name for name in engine), *sorted((package / "exercises").rglob("*.py"))]
    files.append(package / "sandbox.py")
    for path in files:
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _course_fingerprint(course: Path) -> dict:
    """relative path -> SHA-256 of every file of the course tree the grader runs from (no caches)."""
    found = {}
    for name in COURSE_TREE:
        top = course / name
        paths = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file()) if top.is_dir() else []
        for path in paths:
            if "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            try:
                found[str(path.relative_to(course))] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                found[str(path.relative_to(course))] = "unreadable"
    return found


def _listing(root: Path) -> dict:
    """relative path -> (size, mtime, inode) of every entry under the submissions folder but the grader's own."""
    found = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        if folder == str(root):
            dirs[:] = [d for d in dirs if d not in OWN_FILES]
            files = [f for f in files if f not in OWN_FILES]
        for name in files + dirs:
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            is_dir = stat.S_ISDIR(info.st_mode)  # a folder counts by its entries, not its own time
            found[_shown(os.path.relpath(path, root))] = (
                "folder" if is_dir else (info.st_size, info.st_mtime_ns, info.st_ino)
            )
    return found


def _changed(before: dict, after: dict) -> list:
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def _cache_key(data: bytes, lesson: str, exercises, cell_timeout, notebook_timeout, engine: str, setting: str) -> str:
    ids = ",".join(ex.id for ex in exercises)
    header = f"{GRADER_VERSION}|{engine}|{setting}|{lesson}|{ids}|{cell_timeout}|{notebook_timeout}|".encode()
    return hashlib.sha256(header + data).hexdigest()


class _Cache:
    """``.grade_cache/<key>.json`` entries, each signed with the key in ``.grade_cache/key`` (mode 0600)."""

    def __init__(self, folder: Path):
        self.folder = folder
        if folder.is_symlink():
            raise ValueError(f"{folder} is a symbolic link: remove it (the grader's cache is never followed)")
        folder.mkdir(mode=0o700, exist_ok=True)
        key_path = folder / "key"
        try:
            fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(32))
        except FileExistsError:
            pass
        fd = os.open(key_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            self.key = handle.read()
        if len(self.key) < 32:
            raise ValueError(f"{key_path} is damaged: delete the folder {folder} (every notebook is graded again)")
        self.forged = 0

    def _mac(self, name: str, payload: str) -> str:
        return hmac.new(self.key, f"{name}\0{payload}".encode(), hashlib.sha256).hexdigest()

    def get(self, name: str) -> NotebookResult | None:
        path = self.folder / f"{name}.json"
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as handle:
                stored = json.loads(handle.read(MAX_RESULT_BYTES).decode("utf-8"))
            payload, mac = stored["payload"], stored["mac"]
            if not (
                isinstance(payload, str) and isinstance(mac, str) and hmac.compare_digest(mac, self._mac(name, payload))
            ):
                self.forged += 1
                return None
            data = json.loads(payload)
            return NotebookResult(
                {k: tuple(v) for k, v in data["exercises"].items()}, list(data["notes"]), list(data["tampering"])
            )
        except (ValueError, KeyError, TypeError, OSError, UnicodeDecodeError):
            self.forged += 1
            return None

    def put(self, name: str, result: NotebookResult) -> None:
        payload = json.dumps(asdict(result), sort_keys=True)
        tmp = self.folder / f".{name}.{secrets.token_hex(4)}.tmp"
        tmp.write_text(json.dumps({"payload": payload, "mac": self._mac(name, payload)}), encoding="utf-8")
        os.replace(tmp, self.folder / f"{name}.json")


def _records(student: str, lesson: str, exercises, result: NotebookResult) -> list:
    rows = []
    flags = f"{TAMPERING}: {'; '.join(result.tampering)}. " if result.tampering else ""
    for ex in exercises:
        status, detail, misconception = result.exercises[ex.id]
        if misconception and misconception not in detail:
            detail = f"{misconception}: {detail}" if detail else misconception
        notes = [note for note in result.notes if note not in detail]  # not twice in one detail
        if notes:
            detail = f"{detail} [notebook: {'; '.join(notes)}]"
        rows.append(Record(student, lesson, ex.id, status, (flags + detail).strip(), misconception))
    return rows


def _positive(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{name} must be a positive number of seconds but is {value!r}")


def grade(
    root,
    *,
    registry=None,
    cell_timeout: float = 60,
    notebook_timeout: float = 600,
    use_cache: bool = True,
    progress: bool = True,
    jobs: int | None = None,
    limits: sandbox.Limits | None = None,
    use_sandbox: bool = True,
) -> GradeRun:
    """Grade every ``root/<student>/NN_*.ipynb``, ``jobs`` at once; write ``root/grades.csv`` and ``root/grades.html``.

    Parameters
    ----------
    root : folder of student folders
    registry : dict lesson -> list of exercises (ids, ``(id, title)`` or objects with ``.id``);
        default: :func:`load_registry` (``course_utils.exercises``)
    cell_timeout, notebook_timeout : seconds, per cell and per notebook
    use_cache : reuse the (signed) results of notebooks graded before with the same content and settings
    progress : show a progress bar over notebooks (tqdm, on stderr)
    jobs : notebooks graded at once, each in its own sandbox (default: the machine's cores)
    limits : the sandbox's memory, process and file limits (:class:`course_utils.sandbox.Limits`)
    use_sandbox : False grades without bubblewrap even where it is available (the report says so)

    Raises ``RuntimeError`` (after writing the report) when the course tree changed during the run.
    """
    from tqdm.auto import tqdm

    from course_utils import grade_report

    root = Path(root)
    _positive("cell_timeout", cell_timeout)
    _positive("notebook_timeout", notebook_timeout)
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive whole number but is {jobs!r}")
    limits = limits or sandbox.Limits()
    registry = _normalize_registry(load_registry() if registry is None else registry)
    submissions, problems = find_submissions(root)
    status = sandbox.status(use_sandbox)
    cache = _Cache(root / CACHE_DIR)
    run = GradeRun(records=[], problems=problems, registry=registry, sandbox=status.line)
    engine = _engine_fingerprint()
    setting = json.dumps([status.sandboxed, asdict(limits)])
    course = COURSE
    before = _course_fingerprint(course)
    guard = _Guard(course)
    decoys = [root.resolve()]

    results: dict = {}  # index in submissions -> NotebookResult
    pending = []  # (index, key, data)
    for index, (student, lesson, path) in enumerate(submissions):
        exercises = registry.get(lesson, [])
        if not exercises:
            problems.append((student, path.name, f"lesson {lesson} has no registered exercises; not run"))
            continue
        try:
            data = _read_submission(path)
        except OSError as exc:  # unreadable, replaced by a link, too large: report it, never stop the run
            reason = _one_line(
                f"refused: the notebook could not be read without following a link ({exc.strerror or exc})"
            )
            results[index] = _crashed_all(exercises, reason)
            continue
        key = _cache_key(data, lesson, exercises, cell_timeout, notebook_timeout, engine, setting)
        cached = cache.get(key) if use_cache else None
        if cached is not None and set(cached.exercises) == {ex.id for ex in exercises}:
            results[index] = cached
            run.cached += 1
        else:
            pending.append((index, key, data))

    stop = threading.Event()
    changed: list = []

    def work(index: int, data: bytes) -> NotebookResult:
        if stop.is_set():
            return None
        student, lesson, path = submissions[index]
        before = None if status.sandboxed else _listing(root)
        try:
            result = grade_notebook(
                path,
                registry[lesson],
                cell_timeout=cell_timeout,
                notebook_timeout=notebook_timeout,
                data=data,
                limits=limits,
                sandbox_status=status,
                decoys=decoys,
                guard=guard,
                course=course,
            )
        except Exception as exc:  # a failure of the grader itself on this notebook: report it, go on
            return _crashed_all(registry[lesson], _one_line(f"the grader failed on this notebook ({exc!r})"))
        if before is not None:  # no sandbox: what changed in the submissions folder while it ran
            after = _listing(root)
            touched = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
            if touched:
                others = " (or by a notebook graded at the same time: JOBS=1 tells which)" if jobs > 1 else ""
                result.tampering.append(
                    _one_line(
                        f"files in the submissions folder changed while it ran{others}: " + ", ".join(touched[:5]), 400
                    )
                )
        return result

    bar = tqdm(total=len(pending), desc="grading", unit="notebook", disable=not progress, file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(work, index, data): (index, key) for index, key, data in pending}
        for future in concurrent.futures.as_completed(futures):
            index, key = futures[future]
            result = future.result()
            bar.update(1)
            if result is None:
                continue
            run.ran += 1
            if not status.sandboxed and not changed:  # no sandbox: the course tree after every notebook
                changed = _changed(before, _course_fingerprint(course))
                if changed:
                    stop.set()
                    result.tampering.append("the course tree changed while it ran (the run was stopped)")
            results[index] = result
            if not changed:  # a run whose course tree changed caches nothing more
                cache.put(key, result)
    bar.close()

    for index, (student, lesson, path) in enumerate(submissions):
        result = results.get(index)
        if result is None:
            continue
        exercises = registry[lesson]
        run.records.extend(_records(student, lesson, exercises, result))
        problems.extend((student, path.name, note) for note in result.notes)
        run.tampering.extend((student, path.name, flag) for flag in result.tampering)
    run.forged = cache.forged
    run.course_changed = changed or _changed(before, _course_fingerprint(course))
    run.csv_path = write_csv(run.records, root / "grades.csv")
    run.html_path = root / "grades.html"
    _replace(run.html_path, grade_report.render_html(run))
    if run.course_changed:
        raise RuntimeError(
            "the course tree changed during grading (" + ", ".join(run.course_changed[:5]) + "): restore it "
            "(git checkout -- .) and grade again; the report of this run is not to be trusted"
        )
    return run


def csv_safe(value) -> str:
    """A CSV cell a spreadsheet will not read as a formula: ``=``, ``+``, ``-``, ``@``, tab or CR first get a ``'``."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def write_csv(records, path) -> Path:
    """Write ``student, lesson, exercise, status, detail`` rows (header first) and return the path.

    Cells that a spreadsheet would read as a formula are neutralised (:func:`csv_safe`).
    """
    path = Path(path)
    handle = io.StringIO(newline="")
    writer = csv.writer(handle)
    writer.writerow(CSV_COLUMNS)
    for r in records:
        writer.writerow([csv_safe(v) for v in (r.student, r.lesson, r.exercise, r.status, r.detail)])
    _replace(path, handle.getvalue())
    return path


def _replace(path: Path, text: str) -> None:
    """Write ``path`` as a new file put in place at once: a link planted at ``path`` is replaced, never followed."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    os.replace(tmp, path)


def _bytes(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", text, re.IGNORECASE)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size like 4G or 512M")
    return int(float(match.group(1)) * 1024 ** "BKMGT".index(match.group(2).upper() or "B"))


def main(argv=None) -> int:
    defaults = sandbox.Limits()
    parser = argparse.ArgumentParser(description="Grade a folder of student notebooks: grades.csv and grades.html.")
    parser.add_argument("submissions", type=Path, help="folder holding one folder per student with NN_*.ipynb")
    parser.add_argument("--jobs", type=int, default=None, help="notebooks graded at once (default: the cores)")
    parser.add_argument("--cell-timeout", type=float, default=60, help="seconds per cell (default 60)")
    parser.add_argument("--notebook-timeout", type=float, default=600, help="seconds per notebook (default 600)")
    parser.add_argument("--memory", type=_bytes, default=defaults.memory, help="address space per process (default 4G)")
    parser.add_argument(
        "--processes", type=int, default=defaults.processes, help="processes per notebook (default 256)"
    )
    parser.add_argument("--fresh", action="store_true", help="ignore the cache and re-run every notebook")
    parser.add_argument("--no-sandbox", action="store_true", help="grade without bubblewrap (the report says so)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        run = grade(
            args.submissions,
            cell_timeout=args.cell_timeout,
            notebook_timeout=args.notebook_timeout,
            use_cache=not args.fresh,
            progress=not args.no_progress,
            jobs=args.jobs,
            limits=sandbox.Limits(memory=args.memory, processes=args.processes),
            use_sandbox=not args.no_sandbox,
        )
    except (ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counts = {s: sum(r.status == s for r in run.records) for s in STATUSES}
    print(f"{len(run.records)} rows from {run.ran + run.cached} notebooks ({run.ran} run, {run.cached} from the cache)")
    print("  ".join(f"{s}: {n}" for s, n in counts.items()))
    print(f"sandbox: {run.sandbox}")
    if run.tampering:
        print(f"{TAMPERING} flagged on {len({(s, n) for s, n, _ in run.tampering})} notebook(s): see the report")
    if run.forged:
        print(f"{run.forged} cache entr(y/ies) failed their signature and were ignored (graded again)")
    skipped = [(s, n, note) for s, n, note in run.problems if note.startswith(("not graded", "refused"))]
    for student, name, note in skipped[:20]:
        print(f"  {'/'.join(x for x in (student, name) if x)}: {note}")
    if len(skipped) > 20:
        print(f"  … and {len(skipped) - 20} more")
    print(f"{len(run.problems)} entries not graded or with problems are listed in the report")
    print(f"wrote {run.csv_path} and {run.html_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
