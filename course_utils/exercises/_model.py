"""What an exercise and a prediction prompt are made of (data only, no checking logic).

Introduced in ``notebooks/00_start_here.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Exercise", "Prediction"]


@dataclass(frozen=True)
class Exercise:
    """One exercise of a lesson.

    Attributes
    ----------
    id : str
        ``"NN.name"``, e.g. ``"01.softmax_along"``.
    title : str
        The function the student writes, as the messages name it.
    section : str
        The lesson section to re-read (``"01 · Exercises"``).
    function : str
        The name of the stub in the lesson (``"softmax_along"``).
    make_cases : callable
        ``make_cases() -> list[tuple]``: the positional arguments of each call. Deterministic.
    reference : callable
        The correct answer, called like the student's function.
    misconceptions : dict
        Misconception id -> buggy reference with the same signature.
    forbidden : tuple of str
        ``"module:attribute.path"`` of helpers an answer must not call (they would do the work).
    hints : tuple of str
        Plain-text hints, from a nudge to nearly the answer.
    output_names : tuple of str
        Names of the items of a tuple result, used in messages instead of ``result[0]``.
    driver : callable or None
        ``driver(student_fn, *case) -> result`` when the student's function is one step of a
        bigger computation (the check runs the whole computation), else None.
    reveal : bool
        False for answers found by hand: a wrong message says which entry is off and by how much,
        never the expected value.
    atol, rtol : float
        Tolerances of the comparison.

    Introduced in notebooks/00_start_here.ipynb.
    """

    id: str
    title: str
    section: str
    function: str
    make_cases: Callable[[], list]
    reference: Callable
    misconceptions: dict = field(default_factory=dict)
    forbidden: tuple = ()
    hints: tuple = ()
    output_names: tuple = ()
    driver: Callable | None = None
    reveal: bool = True
    atol: float = 1e-6
    rtol: float = 1e-5

    @property
    def lesson(self) -> str:
        """The two-digit lesson number, ``"01"``."""
        return self.id.split(".", 1)[0]


@dataclass(frozen=True)
class Prediction:
    """A "predict, then run" prompt: the student writes a value before the cell that reveals it.

    Attributes
    ----------
    id : str
        ``"NN.name"``.
    question : str
        The question, one line.
    kind : str
        ``"shape"`` (a tuple of ints), ``"number"`` or ``"choice"`` (one of ``choices``).
    answer : object or callable
        The right value, or a function returning it.
    choices : tuple
        For ``kind="choice"``: the accepted answers.
    rtol : float
        For ``kind="number"``: relative tolerance that still counts as right.
    section : str
        Where the lesson explains it.

    Introduced in notebooks/00_start_here.ipynb.
    """

    id: str
    question: str
    kind: str
    answer: object
    choices: tuple = ()
    rtol: float = 0.0
    section: str = ""

    @property
    def lesson(self) -> str:
        """The two-digit lesson number."""
        return self.id.split(".", 1)[0]

    def value(self):
        """The right answer."""
        return self.answer() if callable(self.answer) else self.answer
