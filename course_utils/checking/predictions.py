"""Judging a written prediction: right, wrong (and why, when the wrong value is a known idea), or unreadable.

:func:`judge_prediction` answers any value in words and never raises: a huge int (``10**400``), NaN, inf, a
string, an array. A number is right within the prediction's tolerance (never a factor of two); a known
wrong value is named with the idea behind it ("8 is the standard deviation, not the variance: how do the
variances of independent terms add up?"); any other wrong value is pointed at the idea to rethink
(:attr:`Prediction.rethink`). A wrong message never states the right value, a ratio or a distance to it;
"too high" / "too low" only for a prediction whose order of magnitude is the point (``magnitude=True``).
Which try counts (the first) is :mod:`course_utils.checking.tries`.

Introduced in notebooks/00_start_here.ipynb (``checks.predict``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from course_utils.checking.compare import describe, format_number, is_array, safe_repr

__all__ = [
    "PredictionVerdict",
    "judge_prediction",
    "rethink",
    "shape_idea",
    "as_shape",
    "as_number",
    "as_int_set",
    "number_words",
    "set_words",
    "normalised",
]


@dataclass
class PredictionVerdict:
    """``status`` is ``right``, ``wrong`` or ``not_answered``; ``known_wrong`` the id of a named wrong idea."""

    status: str
    message: str
    known_wrong: str | None = None


def as_shape(value):
    if is_array(value):
        return None
    if type(value).__name__ == "Size":  # torch.Size
        value = tuple(value)
    if isinstance(value, (tuple, list)) and all(
        isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)) for s in value
    ):
        return tuple(int(s) for s in value)
    return None


def as_number(value):
    """A Fraction for a real number (a one-element array counts), the words for a value that is not one."""
    if is_array(value):
        try:
            if int(np.prod(tuple(value.shape))) == 1:
                value = value.reshape(-1)[0].item() if hasattr(value, "item") else value
            else:
                return None, f"one number, and you wrote {describe(value)}"
        except Exception:
            return None, f"one number, and you wrote {describe(value)}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None, f"a number, and you wrote {describe(value)}"
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return None, "a number, and NaN is not one you can compare (write the value you expect)"
        if math.isinf(value):
            return None, "a finite number, and you wrote infinity"
    return Fraction(int(value)) if isinstance(value, (int, np.integer)) else Fraction(float(value)), None


def number_words(x: Fraction) -> str:
    if x.denominator == 1:
        digits = len(str(abs(x.numerator)))
        return f"{int(x):,}" if digits <= 16 else f"a {digits}-digit number"
    return format_number(float(x))


def rethink(prediction) -> str:
    """The idea a wrong prediction is pointed at: the prediction's own ``rethink``, else its section."""
    if prediction.rethink:
        return prediction.rethink
    if prediction.section:
        return f"what «{prediction.section}» says"
    return "the step that produces this value"


def _not_quite(prediction, opening: str = "Not quite.") -> str:
    """A wrong prediction that is no known idea: the idea to rethink, never the value, a ratio or a distance."""
    return f"❌ {opening} Think again about {rethink(prediction)}, then run the next cell and see."


def _close(prediction, value: Fraction, answer: Fraction) -> bool:
    return abs(value - answer) <= Fraction(prediction.atol) + Fraction(prediction.rtol) * abs(answer)


def _known(prediction, matches):
    for known in prediction.known_wrong:
        try:
            if matches(known.value):
                return known
        except Exception:
            continue
    return None


def _judge_shape(prediction, value):
    answer = tuple(prediction.value())
    shape = as_shape(value)
    if shape is None:
        return PredictionVerdict(
            "not_answered", f"❓ A shape is a tuple of ints, like (2, 3); you wrote {describe(value)}."
        )
    if shape == answer:
        return PredictionVerdict("right", f"✅ Right: {shape}.")
    known = _known(prediction, lambda v: tuple(v) == shape)
    if known is not None:
        return PredictionVerdict("wrong", f"❌ {shape} is {known.why}. Run the next cell and see.", known.id)
    idea = shape_idea(answer, shape)
    if idea is not None:
        opening = f"Not quite: your shape {idea}" + ("" if idea.endswith("?") else ".")
        return PredictionVerdict("wrong", _not_quite(prediction, opening))
    if len(shape) != len(answer):
        return PredictionVerdict("wrong", _not_quite(prediction, "Not quite: which axes does this step keep?"))
    if sorted(shape) == sorted(answer):
        return PredictionVerdict("wrong", _not_quite(prediction, "Not quite: which axis comes where?"))
    return PredictionVerdict("wrong", _not_quite(prediction))


def _drops_to(longer: tuple, shorter: tuple) -> bool:
    """``shorter`` is ``longer`` with some of its axes left out, the others in order."""
    it = iter(longer)
    return len(shorter) < len(longer) and all(any(size == s for s in it) for size in shorter)


def shape_idea(answer: tuple, shape: tuple) -> str | None:
    """The idea behind a wrong predicted shape, relative to the right one, in words that state no size (they
    complete "your shape ..."); None when no idea fits.

    >>> shape_idea((5, 7), (5, 7, 8))
    'keeps an axis that this step sums over or takes away'
    """
    answer, shape = tuple(answer), tuple(shape)
    if shape == answer:
        return None
    if sorted(shape) == sorted(answer):
        return "has the right axes in another order: which axis comes where?"
    if _drops_to(shape, answer):
        return "keeps an axis that this step sums over or takes away"
    if _drops_to(answer, shape):
        return "leaves out an axis that this step carries through (an axis in front, or one it adds)"
    for i in range(len(answer) - 1):
        merged = (*answer[:i], answer[i] * answer[i + 1], *answer[i + 2 :])
        if shape == merged:
            return "merges two axes into one where this step keeps them apart"
    for i in range(len(shape) - 1):
        if answer == (*shape[:i], shape[i] * shape[i + 1], *shape[i + 2 :]):
            return "splits one axis in two where this step keeps it whole"
    if len(shape) == len(answer) and sum(a != b for a, b in zip(answer, shape, strict=True)) == 1:
        return "has one axis of another size: which input, and which of its axes, does that axis come from?"
    return None


def _judge_number(prediction, value):
    answer_value = prediction.value()
    answer, _ = as_number(answer_value)
    number, problem = as_number(value)
    if number is None:
        return PredictionVerdict("not_answered", f"❓ This prediction is {problem}.")
    if _close(prediction, number, answer):
        return PredictionVerdict("right", f"✅ Right: {number_words(answer)}.")
    known = _known(prediction, lambda v: _close(prediction, number, as_number(v)[0]))
    if known is not None:
        return PredictionVerdict(
            "wrong", f"❌ {number_words(number)} is {known.why}. Run the next cell and see.", known.id
        )
    if prediction.magnitude and number != answer:
        return PredictionVerdict("wrong", _not_quite(prediction, "Too high." if number > answer else "Too low."))
    return PredictionVerdict("wrong", _not_quite(prediction))


def _judge_index(prediction, value):
    answer = int(prediction.value())
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        value = int(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return PredictionVerdict(
            "not_answered", f"❓ This prediction is a whole number (an index); you wrote {describe(value)}."
        )
    if int(value) == answer:
        return PredictionVerdict("right", f"✅ Right: {answer}.")
    known = _known(prediction, lambda v: int(v) == int(value))
    if known is not None:
        return PredictionVerdict("wrong", f"❌ {int(value)} is {known.why}. Run the next cell and see.", known.id)
    return PredictionVerdict("wrong", _not_quite(prediction, "Not this one."))


def normalised(value):
    """What a choice is compared by: a string stripped, lower-cased, its spaces collapsed; NumPy scalars as Python's."""
    if isinstance(value, str):
        return " ".join(value.split()).lower()
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def _same_choice(a, b) -> bool:
    """Equal by value within one kind: a bool never equals an int (True is not 1), an int equals an integral float."""
    a, b = normalised(a), normalised(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def _judge_choice(prediction, value):
    matches = [c for c in prediction.choices if _same_choice(c, value)]
    if not matches:
        shown = ", ".join(safe_repr(c) for c in prediction.choices)
        return PredictionVerdict("not_answered", f"❓ Choose one of {shown}; you wrote {describe(value)}.")
    if _same_choice(matches[0], prediction.value()):
        return PredictionVerdict("right", f"✅ Right: {safe_repr(prediction.value())}.")
    known = _known(prediction, lambda v: _same_choice(v, value))
    if known is not None:
        return PredictionVerdict(
            "wrong", f"❌ {safe_repr(matches[0])} is {known.why}. Run the next cell and see.", known.id
        )
    return PredictionVerdict("wrong", _not_quite(prediction, "Not this one."))


def as_int_set(value):
    """A frozenset of ints from a set, frozenset, list, tuple or 1-D integer array; None for anything else."""
    if is_array(value):
        if len(tuple(value.shape)) != 1:
            return None
        value = value.tolist()
    if not isinstance(value, (set, frozenset, list, tuple, range)):
        return None
    items = []
    for item in value:
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, np.integer)):
            return None
        items.append(int(item))
    return frozenset(items)


def set_words(values) -> str:
    return "{" + ", ".join(str(v) for v in sorted(values)) + "}" if values else "the empty set"


def _judge_set(prediction, value):
    answer = as_int_set(prediction.value())
    given = as_int_set(value)
    if given is None:
        return PredictionVerdict(
            "not_answered", f"❓ This prediction is a set of whole numbers, like {{0, 2}}; you wrote {describe(value)}."
        )
    if given == answer:
        return PredictionVerdict("right", f"✅ Right: {set_words(answer)}.")
    known = _known(prediction, lambda v: as_int_set(v) == given)
    if known is not None:
        return PredictionVerdict("wrong", f"❌ {set_words(given)} is {known.why}. Run the next cell and see.", known.id)
    opening = "Not quite: some are missing." if answer - given else "Not quite: some do not belong."
    if answer - given and given - answer:
        opening = "Not quite: some are missing and some do not belong."
    return PredictionVerdict("wrong", _not_quite(prediction, opening))


def judge_prediction(prediction, value) -> PredictionVerdict:
    """The verdict on ``value`` for ``prediction``. Never raises, whatever ``value`` is.

    Examples
    --------
    >>> from course_utils.checking.registry import Prediction
    >>> p = Prediction("01.var", "Var(q · k) for d_head = 64?", "number", 64)
    >>> judge_prediction(p, 10**400).message
    '❌ Not quite. Think again about the step that produces this value, then run the next cell and see.'
    >>> judge_prediction(p, float("nan")).status
    'not_answered'
    """
    if value is Ellipsis:
        return PredictionVerdict(
            "not_answered",
            f"✍️ Write your prediction first (replace the `...`), then run this cell: {prediction.question}",
        )
    judges = {
        "shape": _judge_shape,
        "number": _judge_number,
        "index": _judge_index,
        "choice": _judge_choice,
        "set": _judge_set,
    }
    try:
        return judges[prediction.kind](prediction, value)
    except Exception as exc:  # whatever the value, a sentence, never a traceback
        return PredictionVerdict(
            "not_answered", f"❓ This prediction could not be read ({type(exc).__name__}); you wrote {describe(value)}."
        )
