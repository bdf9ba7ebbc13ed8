"""The class report: run every student's notebooks and tabulate each exercise's status.

Usage (the Makefile sets ``OMP_NUM_THREADS=1`` and ``PYTHONHASHSEED=0``)::

    make grade SUBMISSIONS=path/to/submissions
    .venv/bin/python -m course_utils.grading path/to/submissions --cell-timeout 60 --notebook-timeout 600

``path/<student>/NN_*.ipynb`` (any subset of the lessons per student) are graded; the report is
``path/grades.csv`` (``student, lesson, exercise, status, detail``) and ``path/grades.html``
(see :mod:`course_utils.grade_report`). Results are cached in ``path/.grade_cache/`` by the
notebook's content hash (and the exercise engine's sources), so a second run only executes notebooks
that changed.

How a notebook is graded, without ever importing student code into this process:

1. It is read as JSON. A file that is not a notebook gives every exercise of its lesson the
   status ``crashed`` with the reason.
2. It is copied into a fresh temporary folder and executed there by nbclient, in its own
   ``python3`` kernel (whatever kernel the file asks for), with ``COURSE_CHECK_LOG`` pointing at a
   temporary file, the working directory in the copy, ``OMP_NUM_THREADS=1``, a time limit per cell
   and one per notebook. A cell that raises does not stop the run (the next cells still run).
3. Every ``checks.check(...)`` call appends one JSON line to the log (the contract with
   ``course_utils.checks``): its status is the exercise's status. An exercise of the registry
   (``course_utils.exercises``) with no line gets ``missing`` when no code cell names its id (the
   check cell was deleted or renamed), ``timed_out`` when the run was stopped before its cell,
   and ``crashed`` when its cell or an earlier one raised.
4. Problems of the notebook as a whole (no kernel metadata, a cell that raised, checks out of
   order, files written) are appended to the detail of each of its rows and listed in the report.

Introduced for instructors in docs/instructor_guide.md (issue 15); not used by the lessons.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

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
    "main",
]

GRADER_VERSION = "1"  # part of the cache key: bump it when grading logic changes
LOG_STATUSES = ("passed", "wrong", "crashed", "not_attempted", "timed_out")  # what checks.check writes
STATUSES = (*LOG_STATUSES, "missing")
CSV_COLUMNS = ("student", "lesson", "exercise", "status", "detail")
NOTEBOOK_NAME = re.compile(r"^(\d\d)_[^/]*\.ipynb$")
CACHE_DIR = ".grade_cache"
KERNEL = "python3"
MAX_DETAIL = 300  # characters of an error message kept in a detail


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
    """What running one notebook found: exercise id -> (status, detail, misconception), and notes."""

    exercises: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


@dataclass
class GradeRun:
    """The outcome of :func:`grade`: the rows, notebook problems, and how many notebooks ran or came from the cache."""

    records: list
    problems: list  # (student, notebook file name, note)
    registry: dict  # lesson -> [Exercise]
    ran: int = 0
    cached: int = 0
    csv_path: Path | None = None
    html_path: Path | None = None


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


def find_submissions(root: Path) -> tuple[list, list]:
    """``[(student, lesson, path)]`` for ``root/<student>/NN_*.ipynb``, sorted, and notes on skipped files.

    Folders whose name starts with ``.`` or ``_`` are not students. A second notebook with the
    same lesson number in one folder is skipped (and reported).
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"SUBMISSIONS must be a folder of student folders but {root} is not a folder")
    found, problems = [], []
    for student_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        seen = {}
        for path in sorted(student_dir.glob("*.ipynb")):
            match = NOTEBOOK_NAME.match(path.name)
            if not match:
                continue
            lesson = match.group(1)
            if lesson in seen:
                problems.append((student_dir.name, path.name, f"skipped: {seen[lesson]} is already lesson {lesson}"))
                continue
            seen[lesson] = path.name
            found.append((student_dir.name, lesson, path))
    return found, problems


# ------------------------------------------------------------------------------- one notebook


def _one_line(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_DETAIL else text[: MAX_DETAIL - 1] + "…"


def _cell_error(cell) -> str | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return _one_line(f"{output.get('ename', 'Error')}: {output.get('evalue', '')}")
    return None


def _read_log(path: Path) -> tuple[dict, int]:
    """exercise id -> last well-formed log line, and the number of malformed lines."""
    lines, bad = {}, 0
    if not path.exists():
        return lines, 0
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError:
            bad += 1
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("exercise"), str):
            bad += 1
            continue
        if entry.get("status") not in LOG_STATUSES:
            bad += 1
            continue
        lines[entry["exercise"]] = entry
    return lines, bad


def _listing(folder: Path, skip=()) -> dict:
    """relative path -> (size, mtime_ns) of every file under ``folder`` except those under ``skip``."""
    result = {}
    for path in folder.rglob("*"):
        rel = path.relative_to(folder)
        if path.is_file() and not any(rel.parts[: len(Path(s).parts)] == Path(s).parts for s in skip):
            stat = path.stat()
            result[str(rel)] = (stat.st_size, stat.st_mtime_ns)
    return result


def _crashed_all(exercises, reason: str) -> NotebookResult:
    return NotebookResult({ex.id: ("crashed", reason, None) for ex in exercises}, [reason])


def grade_notebook(
    path: Path,
    exercises: list,
    *,
    cell_timeout: float = 60,
    notebook_timeout: float = 600,
    watch: Path | None = None,
) -> NotebookResult:
    """Run one notebook in its own kernel, in a temporary copy, and return each exercise's status.

    Parameters
    ----------
    path : the student's notebook (never modified)
    exercises : list of :class:`Exercise`, the registry's exercises of this notebook's lesson
    cell_timeout, notebook_timeout : seconds a cell, and the whole notebook, may run
    watch : a folder (the submissions folder) in which any file the notebook creates or changes is reported

    Never raises for a problem of the notebook: every problem becomes a status and a note.
    """
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # not UTF-8, not JSON, not a notebook: report it, never stop the run
        return _crashed_all(exercises, _one_line(f"the notebook could not be read ({type(exc).__name__}: {exc})"))
    notes = []
    kernelspec = nb.get("metadata", {}).get("kernelspec")
    if not kernelspec:
        notes.append(f"the notebook has no kernel metadata; ran it with the course's {KERNEL} kernel")
    elif kernelspec.get("name") != KERNEL:
        notes.append(f"the notebook asks for kernel {kernelspec.get('name')!r}; ran it with {KERNEL}")
    # (index in nb.cells, cell) of every code cell; "code cell N" in messages counts these from 1
    code_cells = [(i, cell) for i, cell in enumerate(nb.get("cells", [])) if cell.get("cell_type") == "code"]
    where = {}  # exercise id -> the first code cell whose source names it in quotes (its check cell)
    for index, (_, cell) in enumerate(code_cells):
        source = cell.get("source", "")
        for ex in exercises:
            if ex.id not in where and (f'"{ex.id}"' in source or f"'{ex.id}'" in source):
                where[ex.id] = index
    present = [ex.id for ex in exercises if ex.id in where]
    if sorted(present, key=lambda i: where[i]) != present:
        notes.append("exercise checks are out of the lesson's order: " + ", ".join(sorted(present, key=where.get)))

    stopped = None  # (kind, code cell index, message) when the run ended early
    errors = {}  # code cell index -> error line
    watched_before = _listing(watch, skip=(CACHE_DIR,)) if watch else {}
    with tempfile.TemporaryDirectory(prefix="grade_") as work:
        work = Path(work)
        copy_dir, log_path = work / "notebook", work / "check_log.jsonl"
        copy_dir.mkdir()
        copy_path = copy_dir / path.name
        shutil.copyfile(path, copy_path)
        before = _listing(copy_dir)
        env = {k: v for k, v in os.environ.items() if k != "COURSE_CHECK_LOG"}
        env.update(
            COURSE_CHECK_LOG=str(log_path),
            OMP_NUM_THREADS="1",
            MKL_NUM_THREADS="1",
            PYTHONHASHSEED="0",
            MPLBACKEND="Agg",
            COURSE_DEVICE="cpu",
        )
        for _, cell in code_cells:
            cell["outputs"], cell["execution_count"] = [], None
        # The course environment's own ipykernel (sys.executable), never a "python3" kernel spec that a
        # user or another install registered elsewhere: no kernel folders, only the native spec.
        km = AsyncKernelManager(kernel_name=KERNEL, kernel_spec_manager=KernelSpecManager(kernel_dirs=[]))
        client = NotebookClient(
            nb,
            km=km,
            timeout=cell_timeout,
            kernel_name=KERNEL,
            allow_errors=True,
            interrupt_on_timeout=False,
            record_timing=False,
            shutdown_kernel="immediate",
            resources={"metadata": {"path": str(copy_dir)}},
        )
        deadline = time.monotonic() + notebook_timeout
        index = 0
        try:
            # the kernel's own stderr (its start-up warnings) stays out of the report's console
            with client.setup_kernel(env=env, cwd=str(copy_dir), stderr=subprocess.DEVNULL, cleanup_kc=True):
                client.reset_execution_trackers()
                for index, (cell_index, cell) in enumerate(code_cells):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        stopped = ("timed_out", index, f"the notebook ran past its {notebook_timeout:g} s limit")
                        break
                    client.timeout = max(1, int(min(cell_timeout, remaining)))
                    try:
                        client.execute_cell(cell, cell_index)
                    except CellTimeoutError:
                        limit = "cell" if client.timeout >= cell_timeout else "notebook"
                        seconds = cell_timeout if limit == "cell" else notebook_timeout
                        stopped = (
                            "timed_out",
                            index,
                            f"code cell {index + 1} ran past the {seconds:g} s {limit} limit",
                        )
                        break
                    error = _cell_error(cell)
                    if error:
                        errors[index] = error
        except DeadKernelError as exc:
            stopped = ("crashed", index, _one_line(f"the kernel died in code cell {index + 1} ({exc})"))
        except Exception as exc:  # a notebook nbclient cannot run at all (bad cells, kernel start)
            stopped = ("crashed", index, _one_line(f"the notebook could not be run ({type(exc).__name__}: {exc})"))
        log, malformed = _read_log(log_path)
        written = sorted(set(_listing(copy_dir)) - set(before) - {path.name})
    if watch:
        after = _listing(watch, skip=(CACHE_DIR,))
        changed = sorted(k for k, v in after.items() if watched_before.get(k) != v)
        if changed:
            notes.append("changed files in the submissions folder: " + ", ".join(changed[:5]))
    if written:
        notes.append(f"wrote {len(written)} file(s) in its folder (deleted with the copy): " + ", ".join(written[:5]))
    if malformed:
        notes.append(f"ignored {malformed} malformed line(s) in the check log")
    if errors:
        first = min(errors)
        notes.append(f"code cell {first + 1} raised {errors[first]}")
    if stopped:
        notes.append(stopped[2])

    result = NotebookResult(notes=notes)
    for ex in exercises:
        if ex.id in log:
            entry = log[ex.id]
            misconception = entry.get("misconception")
            detail = _one_line(entry.get("detail") or "")
            result.exercises[ex.id] = (
                entry["status"],
                detail,
                misconception if isinstance(misconception, str) else None,
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
        result.exercises[ex.id] = (status, detail, None)
    return result


# ------------------------------------------------------------------------------- the class


def _engine_fingerprint() -> str:
    """SHA-256 of the exercise engine's sources (checks and its _compare and _answer_runner, misconceptions,
    exercises): a changed reference or message invalidates the cache, since the same notebook may now get
    another verdict."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    engine = ["checks.py", "_compare.py", "_answer_runner.py", "misconceptions.py"]
    files = [*(package / name for name in engine), *sorted((package / "exercises").rglob("*.py"))]
    for path in files:
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _cache_key(data: bytes, lesson: str, exercises, cell_timeout, notebook_timeout, engine: str) -> str:
    ids = ",".join(ex.id for ex in exercises)
    header = f"{GRADER_VERSION}|{engine}|{lesson}|{ids}|{cell_timeout}|{notebook_timeout}|".encode()
    return hashlib.sha256(header + data).hexdigest()


def _records(student: str, lesson: str, exercises, result: NotebookResult) -> list:
    rows = []
    for ex in exercises:
        status, detail, misconception = result.exercises[ex.id]
        if misconception and misconception not in detail:
            detail = f"{misconception}: {detail}" if detail else misconception
        notes = [note for note in result.notes if note not in detail]  # not twice in one detail
        if notes:
            detail = f"{detail} [notebook: {'; '.join(notes)}]"
        rows.append(Record(student, lesson, ex.id, status, detail.strip(), misconception))
    return rows


def grade(
    root,
    *,
    registry=None,
    cell_timeout: float = 60,
    notebook_timeout: float = 600,
    use_cache: bool = True,
    progress: bool = True,
) -> GradeRun:
    """Grade every ``root/<student>/NN_*.ipynb``; write ``root/grades.csv`` and ``root/grades.html``.

    Parameters
    ----------
    root : folder of student folders
    registry : dict lesson -> list of exercises (ids, ``(id, title)`` or objects with ``.id``);
        default: :func:`load_registry` (``course_utils.exercises``)
    cell_timeout, notebook_timeout : seconds, per cell and per notebook
    use_cache : reuse the results of notebooks graded before with the same content and settings
    progress : show a progress bar over notebooks (tqdm, on stderr)
    """
    from tqdm.auto import tqdm

    from course_utils import grade_report

    root = Path(root)
    for name, value in (("cell_timeout", cell_timeout), ("notebook_timeout", notebook_timeout)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValueError(f"{name} must be a positive number of seconds but is {value!r}")
    registry = _normalize_registry(load_registry() if registry is None else registry)
    submissions, problems = find_submissions(root)
    cache = root / CACHE_DIR
    cache.mkdir(exist_ok=True)
    run = GradeRun(records=[], problems=problems, registry=registry)
    engine = _engine_fingerprint()
    bar = tqdm(submissions, desc="grading", unit="notebook", disable=not progress, file=sys.stderr)
    for student, lesson, path in bar:
        bar.set_postfix_str(f"{student}/{path.name}", refresh=False)
        exercises = registry.get(lesson, [])
        if not exercises:
            problems.append((student, path.name, f"lesson {lesson} has no registered exercises; not run"))
            continue
        try:
            key = _cache_key(path.read_bytes(), lesson, exercises, cell_timeout, notebook_timeout, engine)
        except OSError as exc:  # unreadable file: report it, never stop the run
            result = _crashed_all(exercises, _one_line(f"the notebook could not be read ({exc})"))
            run.records.extend(_records(student, lesson, exercises, result))
            problems.extend((student, path.name, note) for note in result.notes)
            continue
        cached = cache / f"{key}.json"
        result = None
        if use_cache and cached.exists():
            try:
                stored = json.loads(cached.read_text(encoding="utf-8"))
                result = NotebookResult({k: tuple(v) for k, v in stored["exercises"].items()}, stored["notes"])
                run.cached += 1
            except (json.JSONDecodeError, KeyError, TypeError):
                result = None
        if result is None:
            try:
                result = grade_notebook(
                    path, exercises, cell_timeout=cell_timeout, notebook_timeout=notebook_timeout, watch=root
                )
            except Exception as exc:  # a failure of the grader itself on this notebook: report it, go on
                result = _crashed_all(exercises, _one_line(f"the grader failed on this notebook ({exc!r})"))
            run.ran += 1
            cached.write_text(json.dumps(asdict(result)), encoding="utf-8")
        run.records.extend(_records(student, lesson, exercises, result))
        problems.extend((student, path.name, note) for note in result.notes)
    bar.close()
    run.csv_path = write_csv(run.records, root / "grades.csv")
    run.html_path = root / "grades.html"
    run.html_path.write_text(grade_report.render_html(run), encoding="utf-8")
    return run


def write_csv(records, path) -> Path:
    """Write ``student, lesson, exercise, status, detail`` rows (header first) and return the path."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for r in records:
            writer.writerow([r.student, r.lesson, r.exercise, r.status, r.detail])
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Grade a folder of student notebooks: grades.csv and grades.html.")
    parser.add_argument("submissions", type=Path, help="folder holding one folder per student with NN_*.ipynb")
    parser.add_argument("--cell-timeout", type=float, default=60, help="seconds per cell (default 60)")
    parser.add_argument("--notebook-timeout", type=float, default=600, help="seconds per notebook (default 600)")
    parser.add_argument("--fresh", action="store_true", help="ignore the cache and re-run every notebook")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        run = grade(
            args.submissions,
            cell_timeout=args.cell_timeout,
            notebook_timeout=args.notebook_timeout,
            use_cache=not args.fresh,
            progress=not args.no_progress,
        )
    except (ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counts = {s: sum(r.status == s for r in run.records) for s in STATUSES}
    print(f"{len(run.records)} rows from {run.ran + run.cached} notebooks ({run.ran} run, {run.cached} from the cache)")
    print("  ".join(f"{s}: {n}" for s, n in counts.items()))
    print(f"wrote {run.csv_path} and {run.html_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
