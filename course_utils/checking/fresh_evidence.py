"""The fresh cases as evidence for a name: a relation must explain them too, when the answer is wrong there.

When fixed cases fail, :func:`course_utils.checking.naming.named_by_relation` names a relation only if it
explains every failing case. With one failing fixed case a relation can fit by coincidence (the keys a
multiple of the values in that case, a size hard-coded from that case): the exercise's fresh case,
at sizes drawn so that no two axes agree (:func:`course_utils.checking.extra_checks.fresh_cases`), is then
one more failing case the relation must explain, or the name is not given (issue 26 §2: "named only when it
explains every failing case, fresh sizes included").

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

import numpy as np

from course_utils.checking import relations, traces
from course_utils.checking.extra_checks import FRESH_SEED, fresh_cases
from course_utils.checking.preparing import call
from course_utils.checking.runner import course_defaults, own_codes, seeded
from course_utils.checking.time_limits import TimedOut, time_limit

__all__ = ["fresh_triples", "FRESH_EVIDENCE_LIMIT_S"]

FRESH_EVIDENCE_LIMIT_S = 5.0
"""Seconds one run of the answer on a fresh case may take here (an answer that hangs there adds no evidence)."""


def _run(exercise, fn, args, seed, *, as_given: bool):
    with seeded(seed), np.errstate(all="ignore"):
        return call(exercise, fn, args, as_given=as_given)


def _sizes_words(sizes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def fresh_triples(exercise, answer, differs) -> list:
    """One :class:`~course_utils.checking.relations.Triple` per fresh case on which ``answer`` runs and is wrong.

    ``differs(expected, got) -> bool`` says whether the answer's output is wrong. A fresh case the course's
    answer cannot take, or on which the student's crashes, hangs or is right, adds nothing. Never raises.
    """
    if getattr(exercise, "fresh", None) is None:
        return []
    try:
        sizes, cases = fresh_cases(exercise)
    except Exception:  # a fresh builder that fails here is reported by the check after the cases, not here
        return []
    found = []
    for j, args in enumerate(cases):
        seed = FRESH_SEED + j
        try:
            with course_defaults():
                expected = _run(exercise, exercise.reference, args, seed, as_given=True)
                with time_limit(FRESH_EVIDENCE_LIMIT_S):
                    got = _run(exercise, answer, args, seed, as_given=False)
                if got is None or not differs(expected, got):
                    continue
                steps = traces.earlier_steps(
                    lambda args=args, seed=seed: _run(exercise, exercise.reference, args, seed, as_given=True),
                    own_codes(exercise.reference),
                )
        except (Exception, TimedOut):  # the answer crashed or hung at these sizes: no evidence either way
            continue
        label = f"the fresh case ({_sizes_words(sizes)})"
        found.append(relations.Triple(label, args, expected, got, steps, seed))
    return found
