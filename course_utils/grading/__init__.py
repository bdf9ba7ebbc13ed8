"""The class report (``make grade``): run every student's notebooks, each in its own sandbox, and tabulate them.

Usage (the Makefile sets ``OMP_NUM_THREADS=1`` and ``PYTHONHASHSEED=0``)::

    make grade SUBMISSIONS=path/to/submissions JOBS=4
    .venv/bin/python -m course_utils.grading path/to/submissions --jobs 4 --cell-timeout 60 --notebook-timeout 600

``path/<student>/NN_*.ipynb`` (any subset of the lessons per student) are graded; the report is
``path/grades.csv`` (``student, lesson, exercise, status, detail``) and ``path/grades.html``. Every other entry
of ``path`` is listed in the report with the reason it was not graded.

The package, one step of the grading path per module:

- :mod:`~course_utils.grading.records`: the constants, the rows (:class:`Record`), one notebook's result, a run;
- :mod:`~course_utils.grading.submissions`: which entries of the submissions folder are graded, read safely;
- :mod:`~course_utils.grading.cache`: the signed cache and its key (every file of ``course_utils/`` and ``data/``);
- :mod:`~course_utils.grading.sandbox`: the bubblewrap command line and the limits;
- :mod:`~course_utils.grading.job`: one notebook's sandbox, started, watched (time, memory) and ended from
  outside, and its signed result read; :mod:`~course_utils.grading.watch`: the memory watch;
- :mod:`~course_utils.grading.runner`: the part inside the sandbox (nbclient runs the notebook, signs the result);
- :mod:`~course_utils.grading.verdicts`: from the runner's result to each exercise's status, tampering flagged;
- :mod:`~course_utils.grading.guard`: a message that quotes the course's files is left out of the report;
- :mod:`~course_utils.grading.export`: ``grades.csv``, look-alike names, and :func:`check_results` (the results
  as data, for ``course_utils.marks``); :mod:`~course_utils.grading.report`: ``grades.html``;
- :mod:`~course_utils.grading.cli`: :func:`grade` and ``python -m course_utils.grading``.

What holds against a hostile class, and what does not, is said in one place: the README's "Grading a class".
Introduced for instructors in docs/instructor_guide.md (issues 15, 22 and 27); not used by the lessons.
"""

from course_utils.grading.cli import grade, main
from course_utils.grading.export import CheckResult, check_results, csv_safe, lookalike_names, write_csv
from course_utils.grading.job import grade_notebook
from course_utils.grading.records import (
    LOG_STATUSES,
    STATUSES,
    Exercise,
    GradeRun,
    NotebookResult,
    Record,
    load_registry,
)
from course_utils.grading.submissions import find_submissions

__all__ = [
    "STATUSES",
    "LOG_STATUSES",
    "Exercise",
    "Record",
    "NotebookResult",
    "GradeRun",
    "CheckResult",
    "load_registry",
    "find_submissions",
    "grade_notebook",
    "grade",
    "check_results",
    "write_csv",
    "csv_safe",
    "lookalike_names",
    "main",
]
