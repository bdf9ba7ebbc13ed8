"""The catalogue of known mistakes: one entry per misconception, shared by every lesson.

Each entry says the mistake in one line (what the student reads after "it looks like a known mistake:"),
the section to re-read, the nudge that the first hint gives after a check named it, and, where the idea can
be expressed as a change of the course's primitives, a :class:`~course_utils.checking.patches.Patch`. With
a patch the engine derives the buggy answer of *every* exercise whose reference goes through the patched
functions; without one, an exercise declares a hand-written buggy version (``Exercise.buggy``).

The entries live in the lessons' folders, one data module each (``course_utils/lessons/lesson_NN/mistakes.py``, the lesson
of the section to re-read); this module reads them in lesson order and imports neither torch nor an exercise module.

Introduced in notebooks/00_start_here.ipynb.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from course_utils.checking.model import Misconception

__all__ = ["CATALOGUE", "MISCONCEPTIONS", "get"]


def _lessons_mistakes() -> tuple:
    """Every lesson's ``MISTAKES`` (``course_utils/lessons/lesson_NN/mistakes.py``), in lesson order."""
    folder = Path(__file__).resolve().parents[1] / "lessons"  # course_utils/lessons/
    found = sorted(p.parent.name for p in folder.glob("lesson_[0-9][0-9]/mistakes.py"))
    return tuple(m for name in found for m in importlib.import_module(f"course_utils.lessons.{name}.mistakes").MISTAKES)


CATALOGUE = _lessons_mistakes()

MISCONCEPTIONS: dict[str, Misconception] = {m.id: m for m in CATALOGUE}


def get(misconception_id: str) -> Misconception:
    """The misconception with this id; a ``KeyError`` names the close ones.

    Introduced in notebooks/00_start_here.ipynb.

    Examples
    --------
    >>> get("causal_triu").section
    '02 · Causal masks'
    """
    if misconception_id not in MISCONCEPTIONS:
        import difflib

        close = difflib.get_close_matches(str(misconception_id), list(MISCONCEPTIONS), n=3)
        raise KeyError(f"unknown misconception {misconception_id!r}; close ones: {close}")
    return MISCONCEPTIONS[misconception_id]
