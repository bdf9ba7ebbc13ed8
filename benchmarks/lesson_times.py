"""How long a student waits: the course's import overhead and each lesson's untouched Run All (issue 28, part 4).

Two measurements, one thread (``OMP_NUM_THREADS=1``), the machine's load average printed with them:

1. **Import overhead**: for each lesson, its setup cell's imports run in a fresh interpreter, once with only the
   lines that do not name ``course_utils`` (the lesson's own ``import torch``, matplotlib, ...) and once whole; the
   difference is what the course's imports add (the smallest of ``--repeat`` alternating runs of each). The same
   for every course module the lessons import together, over ``import torch`` alone, and the time
   ``python -X importtime`` gives the course's own modules (steadier on a loaded machine than a difference).
2. **Run All**: each lesson's student edition, as ``make workspace`` writes it, executed untouched in a fresh
   kernel (nbclient), timed from the kernel's start to the last cell.

Usage::

    .venv/bin/python benchmarks/lesson_times.py notebooks/0[0-4]_*.ipynb          # both
    .venv/bin/python benchmarks/lesson_times.py --imports-only notebooks/0[0-4]_*.ipynb
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COURSE_IMPORT = re.compile(r"^\s*(from\s+course_utils[\w.]*\s+import|import\s+course_utils)")
IMPORT = re.compile(r"^\s*(import\s|from\s\S+\s+import\s)")
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg"}


def setup_imports(lesson: Path) -> tuple[list[str], list[str]]:
    """(the lesson's own import lines, the course's import lines) of the first code cell that imports anything."""
    nb = json.loads(lesson.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "code" and IMPORT.search(source):
            lines = [line for line in source.splitlines() if IMPORT.match(line)]
            return [x for x in lines if not COURSE_IMPORT.match(x)], [x for x in lines if COURSE_IMPORT.match(x)]
    raise ValueError(f"lesson: {lesson} has no code cell with an import")


def _seconds(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=ENV, cwd=REPO)
    return time.perf_counter() - start


def overhead(baseline: list[str], course: list[str], repeat: int) -> tuple[float, float]:
    """(the baseline's seconds, what the course's lines add), each the smallest of `repeat` alternating runs."""
    base, full = [], []
    for _ in range(repeat):
        base.append(_seconds("\n".join(baseline)))
        full.append(_seconds("\n".join(baseline + course)))
    return min(base), min(full) - min(base)


def course_import_time(course: list[str]) -> float:
    """Seconds ``python -X importtime`` attributes to the course's modules (cumulative, torch imported first)."""
    code = "\n".join(["import torch", *course])
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], check=True, env=ENV, cwd=REPO, capture_output=True, text=True
    )
    top = re.compile(r"^import time:\s+\d+ \|\s+(\d+) \| course_utils(?:\.[a-z_0-9]+|\.experiments\.\w+)?$")
    return sum(int(m.group(1)) for line in result.stderr.splitlines() if (m := top.match(line))) / 1e6


def run_all(lessons: list[Path], timeout_s: int) -> dict[str, float]:
    """Seconds each untouched student edition takes to Run All in a fresh kernel."""
    import nbformat
    from nbclient import NotebookClient

    sys.path.insert(0, str(REPO / "scripts"))
    import workspace

    times = {}
    with tempfile.TemporaryDirectory(prefix="lesson_times_") as tmp:
        notebooks, work = Path(tmp) / "notebooks", Path(tmp) / workspace.WORKSPACE
        notebooks.mkdir()
        for lesson in lessons:
            shutil.copy2(lesson, notebooks / lesson.name)
        workspace.sync(notebooks, work)
        for lesson in lessons:
            nb = nbformat.read(work / lesson.name, as_version=4)
            client = NotebookClient(
                nb, timeout=timeout_s, kernel_name="python3", resources={"metadata": {"path": str(work)}}
            )
            start = time.perf_counter()
            client.execute(env=ENV)
            times[lesson.name] = time.perf_counter() - start
            print(f"{lesson.name}: untouched Run All {times[lesson.name]:.1f} s", flush=True)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", type=Path, help="instructor editions (default: notebooks/NN_*.ipynb)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each import measurement (default 3)")
    parser.add_argument("--imports-only", action="store_true", help="skip the Run All measurement")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    args = parser.parse_args(argv)
    lessons = args.lessons or sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    print(f"one thread; load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    every_course_line: list[str] = []
    for lesson in lessons:
        baseline, course = setup_imports(lesson)
        every_course_line += [line for line in course if line not in every_course_line]
        base, added = overhead(baseline, course, args.repeat)
        print(f"{lesson.name}: its own imports {base:.2f} s; the course's add {added:+.2f} s", flush=True)
    base, added = overhead(["import torch"], every_course_line, args.repeat)
    print(f"import torch {base:.2f} s; every course import of these lessons adds {added:+.2f} s", flush=True)
    timed = min(course_import_time(every_course_line) for _ in range(args.repeat))
    print(f"python -X importtime: the course's modules take {timed:.2f} s after import torch", flush=True)
    if not args.imports_only:
        times = run_all(lessons, args.timeout)
        print(
            f"untouched Run All: {sum(times.values()):.0f} s for {len(times)} lessons, the longest "
            f"{max(times.values()):.1f} s"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
