"""What an exercise, a prediction and a misconception are made of (data only, no checking logic).

Also the one table of statuses that the checks, the grader and the class report read (:data:`STATUSES`).

Introduced in ``notebooks/00_start_here.ipynb``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = [
    "Case",
    "Exercise",
    "KnownWrong",
    "Prediction",
    "Misconception",
    "Status",
    "STATUSES",
    "CHECK_STATUSES",
    "PREDICT_STATUSES",
    "AnswerRefused",
    "MAX_PREDICTION_RTOL",
    "PREDICTION_KINDS",
    "RETURNS_WORDS",
    "CONSTRAINT_WORDS",
]

_ID = re.compile(r"^\d\d\.[A-Za-z_]\w*$")


class Case(tuple):
    """One call of an exercise: its positional arguments (the tuple itself) and what makes it special.

    ``label`` is said in messages after the inputs ("keys longer than queries"); leave it empty when the
    inputs say it all. A ``Case`` unpacks like the tuple of its arguments (``fn(*case)``); ``make_cases``
    may return plain tuples instead.
    """

    def __new__(cls, args, label: str = ""):
        case = super().__new__(cls, tuple(args))
        case.label = str(label)
        return case

    def __getnewargs__(self):
        return (tuple(self), self.label)

    @property
    def args(self) -> tuple:
        return tuple(self)

    def __repr__(self) -> str:
        return f"Case({tuple(self)!r}, {self.label!r})"


class AnswerRefused(Exception):
    """Raised by a driver when the answer computes the right thing the wrong way.

    The message is shown to the student as it is (one sentence, naming what to change), e.g. a KV-cache
    step that projects the whole prefix again. The check's status is ``wrong``.
    """


@dataclass(frozen=True)
class Misconception:
    """One known mistake, catalogued once for the whole course.

    Attributes
    ----------
    id : str
        Stable snake_case id, logged in ``COURSE_CHECK_LOG`` lines and counted by the class report.
    name : str
        One line naming the mistake, as the student reads it after "it looks like a known mistake:".
    section : str
        The lesson section to re-read, ``"NN · heading"`` (a ``##`` or ``###`` heading of lesson NN).
    nudge : str
        What the first hint says after a check named this mistake: a question that points at it
        without giving the fix away.
    patch : object or None
        A :class:`course_utils.checking.patches.Patch`: how the course's primitives behave in the world
        of someone who holds this misconception (``torch.tril`` keeps the upper triangle, softmax runs
        over another axis, ...). The engine runs an exercise's reference under the patch; where the
        output changes, the misconception fits that exercise, whether or not the exercise declares it.

    Introduced in notebooks/00_start_here.ipynb.
    """

    id: str
    name: str
    section: str
    nudge: str = ""
    patch: object = None


CONSTRAINT_WORDS = ("one_tile_of_scores", "no_future_tile", "one_head_slice")
"""What ``Exercise.constraint`` may say."""

RETURNS_WORDS = ("inferred", "any", "number", "array_like")
"""What ``Exercise.returns`` (or one item of a tuple of them) may say."""


def _check_returns(exercise_id: str, returns) -> None:
    if returns is None:
        return
    for item in returns if isinstance(returns, tuple) else (returns,):
        if isinstance(item, tuple):
            _check_returns(exercise_id, item)
        elif not isinstance(item, str):
            raise TypeError(
                f"{exercise_id}: returns must be one of {', '.join(RETURNS_WORDS)} or a tuple of them but has "
                f"{type(item).__name__} {item!r}"
            )
        elif item not in RETURNS_WORDS:
            raise ValueError(f"{exercise_id}: returns must be one of {', '.join(RETURNS_WORDS)} but has {item!r}")


@dataclass(frozen=True)
class Exercise:
    """One exercise of a lesson: its cases, the course's answer, what counts as right and as a known mistake.

    Attributes
    ----------
    id : str
        ``"NN.name"``; the lesson module ``course_utils.lessons.lesson_NN.exercises`` defines it.
    section : str
        The lesson section to re-read (``"01 · Exercises"``).
    make_cases : callable
        ``make_cases() -> list``: each item a :class:`Case` or a tuple of positional arguments.
        Deterministic; distinct sizes on every axis of an input.
    reference : callable
        The course's answer, called exactly like the student's function (or the course's class for a
        class exercise). ``checks.check`` returns it when the answer did not pass.
    variants : tuple of callables
        At least two distinct correct answers written as a student might (a loop and a vectorized
        version; ``tril`` and an ``arange`` comparison). The audit shows that each one passes.
    buggy : dict
        Misconception id -> a hand-written buggy version with the student's signature, for mistakes
        no catalogue patch reproduces. Patched references add the catalogue's fitting mistakes.
    hints : tuple of str
        At least three levels: a question, the idea, a partial step. None pastes the answer.
    title : str
        How messages name the exercise; defaults to ``function``.
    function : str
        The name of the function or class in the lesson; defaults to the part of ``id`` after the dot.
    output_names : tuple of str
        Names of the items of a tuple result, used in messages instead of ``result[0]``.
    driver : callable or None
        ``driver(answer, *case_args) -> result`` when the answer is one step of a bigger computation
        (a decoding step, an update rule, a class to build and run); the expected result is
        ``driver(reference, *case_args)``. A driver may raise :class:`AnswerRefused`.
    reveal : bool
        False for answers found by hand: a wrong message says how far off an entry is, never the
        expected value.
    atol, rtol : float
        Tolerances of the comparison.
    allowed : tuple of str
        ``"module:qualname"`` of course helpers the exercise *means* the answer to call although they
        return the answer themselves (the attention module the answer hands its mask to). Any other
        course helper whose result is the answer is refused.
    forbidden : tuple of str
        ``"module:qualname"`` of helpers that make the exercise trivial without returning its answer
        (building the module whose parameters the exercise asks to count). Rarely needed.
    time_limit : float or None
        Seconds per call, when the default of ``checks.TIME_LIMIT_S`` is too short (a model run).
    misconceptions : tuple of str
        Catalogue ids this exercise is meant to name (the plan's list): the audit fails when one of them
        does not fit (neither a ``buggy`` version nor a catalogue patch that changes the reference's
        output), so a reference rewritten past a patch cannot lose a mistake silently. Hand-written buggy
        versions still go in ``buggy``; an id there counts as declared here too.
    noun : str
        How :func:`course_utils.checks.report` names the region in a sentence ("additive attention",
        "decoder step"); defaults to ``function`` with underscores as spaces and a leading ``my`` dropped.
    returns : str, tuple or None
        What the answer may return when several types are right (rare): None (the default) infers the
        promise from the reference's own result on each case (type, dtype, device, a tuple's items);
        ``"any"``, ``"number"`` (any real number or a one-element array), ``"array_like"`` (an array of any
        dtype, or lists of numbers), or a tuple of these for the items of a tuple result (``"inferred"``
        keeps the inferred promise for one item). See :mod:`course_utils.checking.contract`.
    fresh : callable or None
        ``fresh(**sizes) -> list of cases`` at sizes the check draws itself (one int per parameter, distinct,
        never 2 or 4, reproducible from the exercise id), so an answer right only on the fixed cases' sizes
        fails; a failing fresh case is reported by its sizes.
    constraint : str or None
        The way the lesson says the answer must compute, measured and enforced (a word of
        :data:`CONSTRAINT_WORDS`): ``"one_tile_of_scores"`` (a tiled pass ``(q, k, v, block)`` never forms more
        than one block × block tile of scores), ``"no_future_tile"`` (a causal tiled pass computes no more
        scores than the course's), ``"one_head_slice"`` (a per-head loop multiplies by one head's slice of the
        weights at a time). See :mod:`course_utils.checking.constraints`.

    Introduced in notebooks/00_start_here.ipynb.
    """

    id: str
    section: str
    make_cases: Callable[[], list]
    reference: Callable
    variants: tuple = ()
    buggy: dict = field(default_factory=dict)
    hints: tuple = ()
    title: str = ""
    function: str = ""
    output_names: tuple = ()
    driver: Callable | None = None
    reveal: bool = True
    atol: float = 1e-6
    rtol: float = 1e-5
    allowed: tuple = ()
    forbidden: tuple = ()
    time_limit: float | None = None
    misconceptions: tuple = ()
    noun: str = ""
    returns: object = None
    fresh: Callable | None = None
    constraint: str | None = None

    def __post_init__(self):
        if not isinstance(self.id, str) or not _ID.match(self.id):
            raise ValueError(f"id must look like '01.softmax_along' but is {self.id!r}")
        if not self.function:
            object.__setattr__(self, "function", self.id.split(".", 1)[1])
        if not self.title:
            object.__setattr__(self, "title", self.function)
        if isinstance(self.misconceptions, dict) or not all(isinstance(m, str) for m in self.misconceptions):
            raise TypeError(
                f"{self.id}: misconceptions must be a tuple of catalogue ids but is "
                f"{type(self.misconceptions).__name__}; hand-written buggy versions go in buggy={{id: fn}}"
            )
        object.__setattr__(self, "misconceptions", tuple(self.misconceptions))
        if not self.noun:
            words = self.function.split("_")
            if words[0] == "my" and len(words) > 1:
                words = words[1:]
            object.__setattr__(self, "noun", " ".join(words))
        _check_returns(self.id, self.returns)
        if self.constraint is not None and self.constraint not in CONSTRAINT_WORDS:
            raise ValueError(
                f"{self.id}: constraint must be one of {', '.join(CONSTRAINT_WORDS)} but is {self.constraint!r}"
            )
        if self.fresh is not None and not callable(self.fresh):
            raise TypeError(f"{self.id}: fresh must be a function sizes -> cases but is {type(self.fresh).__name__}")
        object.__setattr__(self, "variants", tuple(self.variants))
        object.__setattr__(self, "hints", tuple(self.hints))
        object.__setattr__(self, "buggy", dict(self.buggy))

    @property
    def lesson(self) -> str:
        """The two-digit lesson number, ``"01"``."""
        return self.id.split(".", 1)[0]


@dataclass(frozen=True)
class KnownWrong:
    """A wrong prediction that comes from a known idea, and that idea in words.

    ``value`` is compared as the prediction's kind compares (a shape, a number within the prediction's
    tolerance, a choice); ``why`` completes "That is ..." and names the idea, never the right value, a ratio or
    a distance to it (``"the standard deviation, not the variance: think about how the variances of independent
    terms add up"``).
    """

    value: object
    id: str | None
    why: str


def _known_wrong_item(prediction_id, value, said) -> KnownWrong:
    if not (isinstance(said, tuple) and len(said) == 2 and isinstance(said[1], str)):
        raise TypeError(
            f"{prediction_id}: known_wrong maps a value to (misconception_id_or_None, why) but {value!r} maps to "
            f"{said!r}"
        )
    return KnownWrong(value, said[0], said[1])


PREDICTION_KINDS = ("shape", "number", "index", "choice", "set")
"""What a :class:`Prediction`'s ``kind`` can be."""

MAX_PREDICTION_RTOL = 0.25
"""The loosest relative tolerance a number prediction may have: a factor-two error is never "right"."""


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
        ``"shape"`` (a tuple of ints), ``"number"`` (within ``rtol``/``atol``), ``"index"`` (an exact
        int that is a position or a label: never answered "off by 1"), ``"choice"`` (one of
        ``choices``: strings compared after strip, lower case and collapsed spaces; bools and ints by
        value, a bool never equal to an int) or ``"set"`` (an unordered collection of ints: a set, list
        or tuple is accepted, order and repeats ignored).
    answer : object or callable
        The right value, or a function returning it.
    choices : tuple
        For ``kind="choice"``: the accepted answers.
    rtol, atol : float
        For ``kind="number"``: ``|prediction - answer| <= atol + rtol * |answer|`` is right;
        ``rtol`` is at most :data:`MAX_PREDICTION_RTOL`.
    section : str
        Where the lesson explains it.
    known_wrong : tuple of :class:`KnownWrong`, or a dict
        Wrong answers that come from a known idea, named when predicted. A dict
        ``{value: (misconception_id_or_None, why)}`` is accepted and turned into :class:`KnownWrong` items
        (a ``set`` prediction's keys: a frozenset or a tuple). A ``why`` names the idea behind the wrong
        value and never the right one, a ratio or a distance to it.
    rethink : str
        The idea a wrong prediction that is not a known one should rethink, completing "Rethink ...": a
        question or a pointer, never the value ("what -1e9 becomes after exp"). Defaults to the section.
    magnitude : bool
        True for numbers whose order of magnitude is the lesson's point: only then does a wrong message
        say "too high" or "too low".

    Introduced in notebooks/00_start_here.ipynb.
    """

    id: str
    question: str
    kind: str
    answer: object
    choices: tuple = ()
    rtol: float = 0.0
    atol: float = 0.0
    section: str = ""
    known_wrong: tuple = ()
    rethink: str = ""
    magnitude: bool = False

    def __post_init__(self):
        if not isinstance(self.id, str) or not _ID.match(self.id):
            raise ValueError(f"id must look like '01.score_variance_d64' but is {self.id!r}")
        if self.kind not in PREDICTION_KINDS:
            raise ValueError(f"kind must be one of {', '.join(map(repr, PREDICTION_KINDS))} but is {self.kind!r}")
        if not 0 <= self.rtol <= MAX_PREDICTION_RTOL:
            raise ValueError(
                f"rtol must lie in [0, {MAX_PREDICTION_RTOL}] (a factor-two error is never right) but is {self.rtol}"
            )
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"{self.id}: a choice prediction needs its choices")
        known = self.known_wrong
        if isinstance(known, dict):
            known = tuple(_known_wrong_item(self.id, value, said) for value, said in known.items())
        object.__setattr__(self, "known_wrong", tuple(known))

    @property
    def lesson(self) -> str:
        """The two-digit lesson number."""
        return self.id.split(".", 1)[0]

    def value(self):
        """The right answer."""
        return self.answer() if callable(self.answer) else self.answer


@dataclass(frozen=True)
class Status:
    """How one status looks: in the notebook (``icon``), in the report (``symbol``, ``words``, ``colour``)."""

    id: str
    event: str | None  # "check", "predict", "hint"; None: the grader's own (no log line has it)
    icon: str
    symbol: str
    words: str
    colour: str


STATUSES: dict[str, Status] = {
    s.id: s
    for s in (
        Status("passed", "check", "✅", "✔", "passed", "#b7e4c7"),
        Status("wrong", "check", "❌", "✘", "wrong", "#f4a3a3"),
        Status("crashed", "check", "💥", "!", "crashed", "#e76f51"),
        Status("not_attempted", "check", "⏳", "…", "not attempted", "#e9ecef"),
        Status("timed_out", "check", "⌛", "◔", "timed out", "#cdb4db"),
        Status("missing", None, "❔", "?", "missing", "#ffe066"),
        Status("right", "predict", "✅", "✔", "right", "#b7e4c7"),
        Status("wrong_prediction", "predict", "❌", "✘", "wrong", "#f4a3a3"),
        Status("not_answered", "predict", "✍️", "…", "not answered", "#e9ecef"),
        Status("shown", "hint", "💡", "💡", "hint shown", "#fff3bf"),
    )
}
"""Every status of the course, one row each: checks, predictions, hints, and the grader's ``missing``.

A prediction's wrong answer is logged as ``"wrong"`` (the contract's word); its row here is
``wrong_prediction`` only because a key must be unique.
"""

CHECK_STATUSES = ("passed", "wrong", "crashed", "not_attempted", "timed_out")
"""What a ``check`` log line's ``status`` can be."""

PREDICT_STATUSES = ("right", "wrong", "not_answered")
"""What a ``predict`` log line's ``status`` can be."""
