"""Marks: what a class's work is worth, from the course file, the graded submissions and the roster.

Standard library only (the hub's service and ``make marks`` use it without NumPy or PyTorch). Modules, one job each:

- :mod:`course_utils.marks.course`: the course file (``course.toml``): points, due dates, late policy, extensions,
  read with ``tomllib`` and validated with errors that name the key;
- :mod:`course_utils.marks.roster`: the enrolled students (a CSV);
- :mod:`course_utils.marks.folder`: submissions as files: a frozen, timestamped copy per submission, the current
  one per lesson, and the folder ``make grade`` reads (``path/<student>/NN_*.ipynb``) with its manifest;
- :mod:`course_utils.marks.compute`: the marks per student and lesson (points, late days, penalty, total);
- :mod:`course_utils.marks.lms`: the marks as Canvas's and Moodle's gradebook import CSVs;
- ``python -m course_utils.marks``: the command behind ``make marks`` and ``make collect``.

Documented for instructors in docs/marks.md.
"""

__all__ = ["compute", "course", "folder", "lms", "roster"]
