"""An exercise's cases and right outputs, computed once, and one call of an answer on a fresh copy of a case.

Moved out of :mod:`course_utils.checking.engine` whole (issue 26 section 5).
"""

from __future__ import annotations

import copy
import re
import sys
from dataclasses import dataclass, field

from course_utils.checking import (
    patches,
    recorded,
)
from course_utils.checking.model import Case
from course_utils.checking.runner import (
    course_defaults,
    seeded,
)

__all__ = [
    "Prepared",
    "prepare",
    "call",
    "crash_signature",
]


@dataclass
class Prepared:
    """An exercise's cases, the right outputs, and what its reference called (to skip patches that cannot act)."""

    cases: list
    labels: list
    expected: list
    codes: set = field(default_factory=set)
    names: set = field(default_factory=set)


_PREPARED: dict = {}


# ---------------------------------------------------------------------------------------------
# cases and the right answers
# ---------------------------------------------------------------------------------------------


def call(exercise, answer, args, *, as_given: bool = False, copies: list | None = None):
    """Run ``answer`` on one case (through the exercise's driver), on a fresh copy of the case.

    With ``as_given`` the modules of the copy are marked as handed in (patches do not act inside them);
    ``copies`` (a list) receives the copy, to see afterwards what the answer changed in place.
    """
    return recorded.routed(exercise, answer, args, copies, lambda into: _call(exercise, answer, args, as_given, into))


def _call(exercise, answer, args, as_given, copies):
    args = copy.deepcopy(args)  # an answer that modifies its input cannot spoil the next one
    if copies is not None:
        copies.append(args)
    with patches.given_suspended(args if as_given else ()):
        if exercise.driver is not None:
            return exercise.driver(answer, *args)
        return answer(*args)


def crash_signature(exc) -> tuple:
    """What makes two crashes the same mistake: the exception type and its words, numbers left out."""
    try:
        text = str(exc)
    except Exception:
        text = ""
    words = re.sub(r"[0-9]+", "", " ".join(text.split()))[:60]
    return type(exc), words


def _touch_recorder(codes: set, names: set):
    def profile(frame, event, arg):
        if patches.running_given():
            return
        if event == "call":
            codes.add(frame.f_code)
        elif event == "c_call":
            names.add(getattr(arg, "__name__", None))

    return profile


def prepare(exercise) -> Prepared:
    """The exercise's cases and right outputs, computed once under the course's own settings."""
    if exercise.id not in _PREPARED:
        cases, labels = [], []
        with course_defaults():
            for item in exercise.make_cases():
                if isinstance(item, Case):
                    cases.append(tuple(item.args))
                    labels.append(item.label)
                else:
                    cases.append(item if isinstance(item, tuple) else (item,))
                    labels.append("")
            codes: set = set()
            names: set = set()
            expected = []
            previous = sys.getprofile()
            sys.setprofile(_touch_recorder(codes, names))
            try:
                for i, args in enumerate(cases):
                    with seeded(i):
                        expected.append(call(exercise, exercise.reference, args, as_given=True))
            finally:
                sys.setprofile(previous)
        _PREPARED[exercise.id] = recorded.prepared(exercise, Prepared(cases, labels, expected, codes, names))
    return _PREPARED[exercise.id]
