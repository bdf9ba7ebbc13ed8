"""Does a wrong prediction's message give the answer away? The check the course's messages are held to.

:func:`leaks` reads a message as a student would: once the student's own value is taken out, it must not hold
the right answer in any form the checker accepts (16, 16.0, "16", 1.6e1, √256, 4², 1/16 for a ratio), the
ratio of the two values, or their distance; for a shape, a set or a choice, not the answer itself.
:func:`wrong_values` are many wrong answers to try (the known wrong ones among them).
``tests/checking/test_prediction_messages.py`` walks every prediction with them; ``benchmarks/blind_battery.py``
applies :func:`leaks` to a blind battery's predictions.

Introduced in notebooks/00_start_here.ipynb (``checks.predict``).
"""

from __future__ import annotations

import itertools
import math
import re

from course_utils.checking.compare import safe_repr
from course_utils.checking.predictions import as_int_set, as_number, as_shape, normalised, number_words, set_words

__all__ = ["leaks", "wrong_values", "numbers_in"]

_SUPERSCRIPTS = {"²": 2, "³": 3}
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sqrt>√)?(?P<num>-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?)"
    r"(?:\s*/\s*(?P<den>\d+(?:\.\d+)?))?(?:(?P<sup>[²³])|\^(?P<pow>\d+))?"
)


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text``: 16, 1,024, 1.6e1, 1/16, √256, 4², 2^4."""
    found = []
    for m in _NUMBER.finditer(text):
        raw = m.group("num").replace(",", "")
        try:
            x = float(raw)
        except ValueError:
            continue
        if m.group("den"):
            x = x / float(m.group("den")) if float(m.group("den")) else x
        if m.group("sup"):
            x = x ** _SUPERSCRIPTS[m.group("sup")]
        elif m.group("pow"):
            x = x ** int(m.group("pow"))
        if m.group("sqrt"):
            x = math.sqrt(abs(x))
        found.append(x)
    return found


def _near(x: float, target: float) -> bool:
    return math.isclose(x, target, rel_tol=1e-3, abs_tol=1e-12)


def _without_echo(message: str, value) -> str:
    """The message with the student's own value (echoed after the icon) taken out."""
    for shown in _echoes(value):
        if shown and shown in message:
            return message.replace(shown, " ", 1)
    return message


def _echoes(value) -> list[str]:
    shown = []
    shape = as_shape(value)
    if shape is not None:
        shown.append(str(shape))
    number, _ = as_number(value) if not isinstance(value, (str, tuple, list, set, frozenset)) else (None, None)
    if number is not None:
        shown.append(number_words(number))
    if isinstance(value, (set, frozenset, list, tuple)) and as_int_set(value) is not None:
        shown.append(set_words(as_int_set(value)))
    shown.append(safe_repr(value))
    return shown


def leaks(prediction, value, message: str) -> list[str]:
    """What in ``message`` gives the answer of ``prediction`` away (empty when nothing does)."""
    text = re.sub(r"«[^»]*»", "«»", _without_echo(message, value))  # a section's name is no answer
    answer = prediction.value()
    found = []
    if prediction.kind in ("number", "index"):
        a = float(answer)
        targets = {"the answer": a}
        if a:
            targets["1 / the answer"] = 1 / a
        try:
            w = float(value)
        except (TypeError, ValueError, OverflowError):
            w = None
        if w is not None and math.isfinite(w) and w != a:
            targets["the distance"] = abs(w - a)
            if a and w:
                targets["the ratio"] = abs(w / a)
                targets["the inverse ratio"] = abs(a / w)
        for x in numbers_in(text):
            for what, target in targets.items():
                if _near(abs(x), abs(target)) and not (what != "the answer" and _near(abs(target), 1.0)):
                    found.append(f"{what} ({x:g})")
    elif prediction.kind == "shape":
        shape = tuple(answer)
        for form in (str(shape), ", ".join(map(str, shape)), "×".join(map(str, shape))):
            if len(shape) > 1 and form in text:
                found.append(f"the shape {form}")
    elif prediction.kind == "set":
        if set_words(as_int_set(answer)) in text:
            found.append("the set")
    elif prediction.kind == "choice" and isinstance(answer, str):
        said = normalised(answer)
        lowered = " ".join(text.lower().split())
        quoted = any(q + said + q in lowered for q in ("'", '"', "«"))
        if quoted or (len(said) > 4 and re.search(rf"(?<!\w){re.escape(said)}(?!\w)", lowered)):
            found.append(f"the choice {answer!r}")
    return found


def wrong_values(prediction) -> list:
    """Many wrong answers to ``prediction``: its known wrong ones, and the mistakes near and far."""
    answer = prediction.value()
    values = [k.value for k in prediction.known_wrong]
    if prediction.kind == "number":
        a = float(answer)
        values += [a * f for f in (2, 0.5, 10, 0.1, 3, -1, 1000)] + [a + 1, a - 1, 0, 1, 2, 10**400]
    elif prediction.kind == "index":
        values += list(range(-1, 12))
    elif prediction.kind == "shape":
        shape = tuple(answer)
        values += [p for p in itertools.permutations(shape) if p != shape][:6]
        values += [shape[:-1], (*shape, 2), tuple(s + 1 for s in shape), tuple(max(1, s - 1) for s in shape)]
    elif prediction.kind == "choice":
        values += list(prediction.choices)
    elif prediction.kind == "set":
        given = sorted(as_int_set(answer))
        values += [set(given[:-1]), {*given, max(given, default=0) + 1}, {max(given, default=0) + 7}, set()]
    return values
