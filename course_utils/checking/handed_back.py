"""What the checks of this kernel handed back: each exercise's last status and the functions it returned.

Moved out of :mod:`course_utils.checking.engine` whole (issue 26 section 5); ``_cells_by_file`` is now
``handed_back_cells``, nothing else changed.
"""

from __future__ import annotations

import contextlib

from course_utils.checking.runner import (
    own_codes,
)

__all__ = [
    "remember_check",
    "last_status",
    "handed_back_codes",
    "forget_checks",
    "as_in_a_fresh_kernel",
]
_LAST_STATUS: dict = {}  # exercise id -> status of its last check in this kernel
_HANDED_BACK: dict = {}  # exercise id -> {id(callable): (callable, ids of its code objects)} that check returned


# ---------------------------------------------------------------------------------------------
# what earlier checks in this kernel said and handed back
# ---------------------------------------------------------------------------------------------


def remember_check(exercise_id: str, status: str, returned) -> None:
    """Record a check's verdict and the callable it handed back (the student's or the course's)."""
    _LAST_STATUS[exercise_id] = status
    kept = _HANDED_BACK.setdefault(exercise_id, {})
    if id(returned) not in kept:
        kept[id(returned)] = (returned, frozenset(id(code) for code in own_codes(returned)))


def last_status(exercise_id: str) -> str | None:
    """The status of the last check of this exercise in this kernel, or None if it was not checked."""
    return _LAST_STATUS.get(exercise_id)


def handed_back_codes(exercise) -> frozenset:
    """Ids of the code objects of every callable that a check of *another* exercise handed back in this kernel.

    The answer may call them freely (06's tiled pass calls the checked ``flash_step``); the exercise's own
    reference is never among them.
    """
    own = own_codes(exercise.reference)
    codes: set = set()
    for exercise_id, kept in _HANDED_BACK.items():
        if exercise_id == exercise.id:
            continue
        for returned, ids in kept.values():
            if returned is not exercise.reference:
                codes |= ids
    return frozenset(codes - {id(code) for code in own})


def forget_checks() -> None:
    """Forget every verdict and handed-back callable (a fresh kernel)."""
    _LAST_STATUS.clear()
    _HANDED_BACK.clear()


@contextlib.contextmanager
def as_in_a_fresh_kernel():
    """Judge as if no check had run in this process (the audit), then restore what earlier checks recorded."""
    saved = dict(_LAST_STATUS), dict(_HANDED_BACK)
    forget_checks()
    try:
        yield
    finally:
        forget_checks()
        _LAST_STATUS.update(saved[0])
        _HANDED_BACK.update(saved[1])


def handed_back_cells() -> dict:
    """The file of each function an earlier check handed back (a notebook cell) -> that exercise's title."""
    found = {}
    for exercise_id, kept in _HANDED_BACK.items():
        for returned, _ids in kept.values():
            for code in own_codes(returned):
                found.setdefault(code.co_filename, exercise_id)
    return found
