"""Run a blind battery against a published student edition: its ``course_utils`` only, never the repository's.

Usage::

    python scripts/publish_student_edition.py build --out /tmp/edition
    OMP_NUM_THREADS=1 PYTHONHASHSEED=0 .venv/bin/python benchmarks/published_battery.py /tmp/edition \\
        benchmarks/blind/battery_3 --lesson 00 --lesson 03 --json /tmp/published.json --markdown /tmp/published.md

The interpreter's import path is cut down to the edition's ``notebooks`` folder and the installed packages (the
repository, its scripts and its editable install are taken out) before anything of the course is imported, and
the run stops if ``course_utils`` still comes from anywhere else. The battery runner is
``benchmarks/blind_battery.py``, read as a file; its counts compare with a run on the repository (issue 29: the
same battery on both gives the same counts).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def isolate(edition: Path) -> Path:
    """Make ``edition/notebooks`` the only place ``course_utils`` can be imported from; return that folder."""
    notebooks = (Path(edition) / "notebooks").resolve()
    if not (notebooks / "course_utils" / "__init__.py").is_file():
        raise ValueError(f"edition: expected a published tree with notebooks/course_utils but {edition} has none")
    if "course_utils" in sys.modules:
        raise RuntimeError("isolate: course_utils was imported before the import path was cut down")
    kept = []
    for entry in sys.path:
        path = Path(entry or os.getcwd()).resolve()
        if entry and ("site-packages" in path.parts or not path.is_relative_to(ROOT)):
            kept.append(entry)  # the interpreter's library and the installed packages, never the repository
    sys.path[:] = [str(notebooks), *kept]
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__module__", "") + repr(f)]
    import course_utils

    where = Path(course_utils.__file__).resolve()
    if notebooks not in where.parents:
        raise RuntimeError(f"isolate: course_utils comes from {where}, not from the edition {notebooks}")
    return notebooks


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    edition, rest = Path(argv[0]), argv[1:]
    isolate(edition)
    os.chdir(edition)
    spec = importlib.util.spec_from_file_location("blind_battery_runner", ROOT / "benchmarks" / "blind_battery.py")
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    return runner.main(rest)


if __name__ == "__main__":
    raise SystemExit(main())
