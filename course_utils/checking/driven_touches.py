"""An argument a driver handed the answer, changed in place by it: found by comparing with the course's answer.

The engine's own copy of a case shows what the answer changed in the case; an exercise with a driver
(``Exercise.driver``) builds further arrays itself (a copy of the scores to differentiate, the running
``m``, ``l`` and ``acc`` of a tiled pass) and hands those on. :class:`course_utils.checking.runner.Probe`
records what each call changed (:mod:`course_utils.checking.call_watch`); :func:`problem` runs the course's
answer through the same driver on the same case once, and names what only the answer changes.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import numpy as np

from course_utils.checking import call_watch
from course_utils.checking.runner import Probe, course_defaults, seeded

__all__ = ["problem", "reference_probe", "forget"]

_REFERENCE: dict = {}  # exercise id -> {case index: the course's answer's Probe on that case, or None}


def forget() -> None:
    """Drop what is known of the course's answers (their cases may have been rebuilt)."""
    _REFERENCE.clear()


def reference_probe(exercise, case_args, i, call):
    """The course's answer run through the driver on case ``i`` (a :class:`Probe`), or None when it fails."""
    found = _REFERENCE.setdefault(exercise.id, {})
    if i not in found:
        probe = Probe(exercise.reference)
        try:
            with course_defaults(), seeded(i), np.errstate(all="ignore"):
                call(exercise, probe, case_args, as_given=True)
            found[i] = probe
        except Exception:
            found[i] = None
    return found[i]


def problem(exercise, case_args, i, probe, answer, call) -> tuple:
    """``(sentence, "in_place")`` when the answer changed an argument its driver handed it (and the course's
    answer does not), else ``(None, None)``. ``call`` is the engine's ``call(exercise, fn, args, as_given=)``."""
    if exercise.driver is None or not call_watch.call_paths(probe):
        return None, None
    sentence = call_watch.problem(probe, reference_probe(exercise, case_args, i, call), answer)
    return (sentence, "in_place") if sentence else (None, None)
