"""How fast ``make grade`` is: JOBS=2 against JOBS=1, time per notebook, and a projection for a whole class.

1. **Speedup.** ``--submissions`` (default 20) students each hand in lesson 01 solved (tests/solved_lessons.py;
   every notebook different by one markdown cell, the cache off): graded with ``jobs=1``, then ``jobs=2``
   (each notebook in its own bubblewrap sandbox where there is one). Prints both wall times and the speedup, and,
   as a yardstick, how much faster two CPU-bound Python loops run side by side than in turn at that moment (2.0 on
   an idle 2-core machine; on a busy one less: the most JOBS=2 could gain then).
2. **Per lesson.** Each lesson 00-08 solved, graded once alone (``jobs=1``): seconds per notebook.
3. **Projection.** 300 students x the 9 lessons on a 16-core machine: the sum of (2)'s seconds x 300, divided by
   16 x the parallel efficiency measured in (1) (speedup / 2). An estimate: it assumes that machine's cores are
   as fast as this one's and that the efficiency measured on 2 cores holds on 16 (memory bandwidth, and the
   disk, may not).

Usage (on a quiet machine: a busy one measures the other processes)::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/grading.py                  # all three, about 6 min on 2 cores
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/grading.py --no-per-lesson  # the speedup only
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_markdown_cell

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import solved_lessons  # noqa: E402

from course_utils import grading  # noqa: E402
from course_utils.grading import sandbox  # noqa: E402

STUDENTS, LESSONS, CORES = 300, 9, 16


def _class(root: Path, lessons: list, students: int) -> None:
    for n in range(students):
        for path in lessons:
            nb = solved_lessons.solved(path)
            nb.cells.insert(0, new_markdown_cell(f"Handed in by student {n:03d}"))
            folder = root / f"student{n:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, folder / path.name)


BUSY = "x = 0\nfor i in range(12_000_000):\n    x += i\n"


def _machine_speedup() -> float:
    """How much faster two CPU-bound processes (a Python loop) run side by side than one after the other, now:
    the most JOBS=2 can gain on this machine at this moment (2.0 on an idle 2-core machine)."""

    def busy(n: int) -> float:
        start = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(n)]
        for proc in procs:
            proc.wait()
        return time.perf_counter() - start

    one = busy(1)
    return 2 * one / busy(2)


def _timed(root: Path, jobs: int) -> tuple[float, grading.GradeRun]:
    """Wall seconds, and the run."""
    start = time.perf_counter()
    run = grading.grade(root, cell_timeout=300, notebook_timeout=900, use_cache=False, progress=False, jobs=jobs)
    return time.perf_counter() - start, run


def _check(run: grading.GradeRun) -> None:
    bad = [(r.student, r.exercise, r.status) for r in run.records if r.status != "passed"]
    if bad:
        raise SystemExit(f"a solved lesson did not pass everywhere: {bad[:5]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=20, help="notebooks in the speedup run (default 20)")
    parser.add_argument("--no-per-lesson", action="store_true", help="skip the per-lesson times and the projection")
    args = parser.parse_args(argv)
    status = sandbox.status()
    print(f"sandbox: {'bubblewrap' if status.sandboxed else 'NONE (' + status.line[:60] + '…)'}")
    print(f"cores: {os.cpu_count()}; load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    lesson_01 = solved_lessons.lessons({"01"})
    times = {}
    with tempfile.TemporaryDirectory(prefix="grade_bench_") as tmp:
        root = Path(tmp) / "class"
        _class(root, lesson_01, args.submissions)
        for jobs in (1, 2):
            machine = _machine_speedup()
            seconds, run = _timed(root, jobs)
            _check(run)
            times[jobs] = seconds
            print(
                f"JOBS={jobs}: {args.submissions} notebooks (lesson 01 solved) in {seconds:6.1f} s "
                f"({seconds / args.submissions:.2f} s per notebook); just before, two busy loops ran "
                f"{machine:.2f}x faster side by side than in turn"
            )
    speedup = times[1] / times[2]
    print(f"speedup JOBS=2 / JOBS=1: {speedup:.2f}x (target >= 1.7x on 2 cores)")
    print(
        f"the machine itself, now: two busy loops side by side {_machine_speedup():.2f}x faster than in turn "
        "(2.00 on an idle 2-core machine: the most JOBS=2 can gain)"
    )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.no_per_lesson:
        return 0
    per_lesson = {}
    for path in solved_lessons.lessons():
        with tempfile.TemporaryDirectory(prefix="grade_bench_") as tmp:
            root = Path(tmp) / "class"
            _class(root, [path], 1)
            seconds, run = _timed(root, 1)
            _check(run)
            per_lesson[path.name[:2]] = seconds
            print(f"lesson {path.name[:2]}: {seconds:6.1f} s for one notebook")
    total = sum(per_lesson.values())
    efficiency = min(1.0, speedup / 2)
    projected = STUDENTS * total / (CORES * efficiency)
    print(f"one student's {len(per_lesson)} lessons: {total:.0f} s of one core")
    print(
        f"projected: {STUDENTS} students x {len(per_lesson)} lessons on {CORES} cores (JOBS={CORES}, efficiency "
        f"{efficiency:.2f} as measured on 2): {projected / 60:.0f} min ({projected / 3600:.1f} h)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
