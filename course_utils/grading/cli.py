"""``make grade``: grade every student's notebooks, ``JOBS`` at once, and write ``grades.csv`` and ``grades.html``.

:func:`grade` finds the submissions (:mod:`~course_utils.grading.submissions`), takes what the signed cache holds
(:mod:`~course_utils.grading.cache`), grades the rest each in its own sandbox (:mod:`~course_utils.grading.job`),
writes the report (:mod:`~course_utils.grading.export`, :mod:`~course_utils.grading.report`) and verifies the
course tree unchanged. :func:`main` is ``python -m course_utils.grading``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import sys
import threading
from dataclasses import asdict
from pathlib import Path

from course_utils.grading import cache as grade_cache
from course_utils.grading import export, job, report, sandbox
from course_utils.grading.guard import Guard
from course_utils.grading.records import (
    CACHE_DIR,
    COURSE,
    STATUSES,
    TAMPERING,
    GradeRun,
    NotebookResult,
    Record,
    load_registry,
    normalize_registry,
    one_line,
)
from course_utils.grading.submissions import find_submissions, read_submission

__all__ = ["grade", "main"]


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
        default: :func:`~course_utils.grading.records.load_registry` (``course_utils.checking.registry``)
    cell_timeout, notebook_timeout : seconds, per cell and per notebook
    use_cache : reuse the (signed) results of notebooks graded before with the same content and settings
    progress : show a progress bar over notebooks (tqdm, on stderr)
    jobs : notebooks graded at once, each in its own sandbox (default: the machine's cores)
    limits : the sandbox's memory, process and file limits (:class:`course_utils.grading.sandbox.Limits`)
    use_sandbox : False grades without bubblewrap even where it is available (the report says so)

    Raises ``RuntimeError`` (after writing the report) when the course tree changed during the run.
    """
    from tqdm.auto import tqdm

    root = Path(root)
    _positive("cell_timeout", cell_timeout)
    _positive("notebook_timeout", notebook_timeout)
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive whole number but is {jobs!r}")
    limits = limits or sandbox.Limits()
    registry = normalize_registry(load_registry() if registry is None else registry)
    submissions, problems = find_submissions(root)
    status = sandbox.status(use_sandbox)
    cache = grade_cache.Cache(root / CACHE_DIR)
    run = GradeRun(records=[], problems=problems, registry=registry, sandbox=status.line)
    engine = grade_cache.engine_fingerprint()
    setting = json.dumps([status.sandboxed, asdict(limits)])
    course = COURSE
    before = grade_cache.course_fingerprint(course)
    guard = Guard(course)
    decoys = [root.resolve()]

    results: dict = {}  # index in submissions -> NotebookResult
    pending = []  # (index, key, data)
    for index, (student, lesson, path) in enumerate(submissions):
        exercises = registry.get(lesson, [])
        if not exercises:
            problems.append((student, path.name, f"lesson {lesson} has no registered exercises; not run"))
            continue
        try:
            data = read_submission(path)
        except OSError as exc:  # unreadable, replaced by a link, too large: report it, never stop the run
            reason = one_line(
                f"refused: the notebook could not be read without following a link ({exc.strerror or exc})"
            )
            results[index] = job.crashed_all(exercises, reason)
            continue
        key = grade_cache.cache_key(data, lesson, exercises, cell_timeout, notebook_timeout, engine, setting)
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
        before = None if status.sandboxed else grade_cache.listing(root)
        try:
            result = job.grade_notebook(
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
            return job.crashed_all(registry[lesson], one_line(f"the grader failed on this notebook ({exc!r})"))
        if before is not None:  # no sandbox: what changed in the submissions folder while it ran
            after = grade_cache.listing(root)
            touched = grade_cache.changed(before, after)
            if touched:
                others = " (or by a notebook graded at the same time: JOBS=1 tells which)" if jobs > 1 else ""
                result.tampering.append(
                    one_line(
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
                changed = grade_cache.changed(before, grade_cache.course_fingerprint(course))
                if changed:
                    stop.set()
                    result.tampering.append("the course tree changed while it ran (the run was stopped)")
            results[index] = result
            if not changed and result.final:  # a run whose course tree changed caches nothing more
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
        if result.predictions:
            run.predictions[(student, lesson)] = dict(result.predictions)
    run.forged = cache.forged
    run.lookalikes = export.lookalike_names(
        {student for student, _, _ in submissions} | {s for s, _, _ in problems if s}
    )
    run.course_changed = changed or grade_cache.changed(before, grade_cache.course_fingerprint(course))
    run.csv_path = export.write_csv(run.records, root / "grades.csv")
    run.html_path = root / "grades.html"
    export.replace_file(run.html_path, report.render_html(run))
    if run.course_changed:
        raise RuntimeError(
            "the course tree changed during grading (" + ", ".join(run.course_changed[:5]) + "): restore it "
            "(git checkout -- .) and grade again; the report of this run is not to be trusted"
        )
    return run


def _bytes(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", text, re.IGNORECASE)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size like 4G or 512M")
    return int(float(match.group(1)) * 1024 ** "BKMGT".index(match.group(2).upper() or "B"))


def main(argv=None) -> int:
    """``python -m course_utils.grading SUBMISSIONS [options]``: grade, print a summary, return the exit code."""
    defaults = sandbox.Limits()
    parser = argparse.ArgumentParser(description="Grade a folder of student notebooks: grades.csv and grades.html.")
    parser.add_argument("submissions", type=Path, help="folder holding one folder per student with NN_*.ipynb")
    parser.add_argument("--jobs", type=int, default=None, help="notebooks graded at once (default: the cores)")
    parser.add_argument("--cell-timeout", type=float, default=60, help="seconds per cell (default 60)")
    parser.add_argument("--notebook-timeout", type=float, default=600, help="seconds per notebook (default 600)")
    parser.add_argument(
        "--memory", type=_bytes, default=defaults.memory, help="memory of all of a notebook's processes (default 4G)"
    )
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
    for group in run.lookalikes:
        print("WARNING: these student names look alike (one student twice?): " + ", ".join(map(ascii, group)))
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
