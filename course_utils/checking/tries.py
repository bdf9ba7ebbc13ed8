"""Which prediction counts: the first answered one, held until the reveal.

A prediction's first answer (anything but the untouched ``...`` or an unreadable value) is judged and kept.
Another answer before the reveal gets no new verdict: "you can change your mind after the reveal". The
reveal is :func:`reveal` (``checks.reveal("NN.name")`` in the cell that shows the answer), or, in a
notebook, any other cell run between the two tries (IPython's execution count moved on by more than one).
After the reveal every answer is judged again and logged with ``first_try: false``.

State is per kernel; :func:`forget` starts over (a fresh kernel, and every test).

Introduced in notebooks/00_start_here.ipynb (``checks.predict``).
"""

from __future__ import annotations

from dataclasses import dataclass

from course_utils.checking.compare import safe_repr

__all__ = ["FirstTry", "Attempt", "attempt", "reveal", "first_try", "forget", "held_message"]


@dataclass(frozen=True)
class FirstTry:
    """The answer that counts: what was written, whether it was right, and the verdict's message."""

    shown: str
    correct: bool
    message: str
    cell: int | None  # IPython's execution count when it was answered, None outside a kernel


@dataclass(frozen=True)
class Attempt:
    """What this try is: ``first_try`` (it is the one that counts), ``held`` (no new verdict before the reveal)."""

    first_try: bool
    held: bool
    first: FirstTry | None


_first: dict = {}  # prediction id -> FirstTry
_revealed: set = set()  # prediction ids whose reveal ran


def forget() -> None:
    """Start over: no prediction answered, none revealed."""
    _first.clear()
    _revealed.clear()


def _execution_count() -> int | None:
    try:
        from IPython import get_ipython
    except Exception:
        return None
    shell = get_ipython()
    count = getattr(shell, "execution_count", None)
    return count if isinstance(count, int) else None


def first_try(prediction_id: str) -> FirstTry | None:
    """The try that counts for this prediction in this kernel, or None when it is not answered yet."""
    return _first.get(prediction_id)


def attempt(prediction_id: str, value, verdict) -> Attempt:
    """Record one try of ``prediction_id`` judged ``verdict``; say whether it counts or is held."""
    if verdict.status == "not_answered":
        return Attempt(False, False, _first.get(prediction_id))
    first = _first.get(prediction_id)
    if first is None:
        first = FirstTry(safe_repr(value, 200), verdict.status == "right", verdict.message, _execution_count())
        _first[prediction_id] = first
        return Attempt(True, False, first)
    now = _execution_count()
    if first.cell is not None and now is not None and now - first.cell > 1:
        _revealed.add(prediction_id)  # another cell ran in between: the reveal, most likely
    return Attempt(False, prediction_id not in _revealed, first)


def held_message(first: FirstTry) -> str:
    """What a second try before the reveal reads: no new verdict."""
    return (
        f"✋ Your first prediction, {first.shown}, is the one that counts. You can change your mind after the "
        "reveal: run the next cell and see."
    )


def reveal(prediction_id: str) -> str:
    """Mark the prediction revealed; the line that reminds the student of their first try."""
    _revealed.add(prediction_id)
    first = _first.get(prediction_id)
    if first is None:
        return "🔎 You did not write a prediction for this one before the reveal."
    if first.correct:
        return f"🔎 You predicted {first.shown}, and that was right."
    return f"🔎 You predicted {first.shown}: compare it with what this cell shows, and with the explanation."
