"""The bug zoo: buggy versions of the lessons' functions, by stable public names, for cells that demonstrate a bug.

A lesson shows what a mistake does by *calling* its buggy version, never by typing the buggy code in a visible
cell (that code is most of the right answer, and the student edition would give the region away)::

    from course_utils import bugs

    checks.demonstrate("00.dot_scores", bugs.dot_scores_transposed)   # the message a check gives it
    bugs.masked_softmax_fill_inf(scores, mask)                          # NaN on the row with no key

The markdown next to the call shows the one line that differs, as inline code. Each name is defined once:

- in the lesson module (``course_utils/lessons/lesson_NN/exercises.py``) when an exercise uses it (a ``buggy=``
  version or a variant), and listed here as ``"name": ("lesson_NN.module", "attribute")``; or
- derived, as the check derives it: an exercise's reference run under a catalogue misconception's patch,
  listed here as ``"name": ("NN.exercise", "misconception_id")`` (what ``checks.buggy(exercise, id)`` gives).

A lesson-only demonstration that no exercise uses (a fill value as a parameter) is defined in its lesson
module too, as a public function, and listed here. Names load on first use (importing this module imports
neither torch nor a lesson module). ``tests/test_bugs.py`` calls every name, so a lesson module rewritten
past a name breaks a test, not a lesson.

=====================================  ===================================================================
name                                   the mistake
=====================================  ===================================================================
``dot_scores_transposed(q, k)``        ``k @ q.T``: keys as rows (00)
``softmax_along_no_max_shift(x, axis)``  exponentials of the raw scores, no maximum subtracted (01)
``softmax_along_wrong_axis(x, axis)``  normalises another axis than the one asked for (01)
``softmax_global_max(x, axis)``        ``x - x.max()``: the whole array's maximum, a slice far below it gives 0 / 0 (01)
``masked_softmax_fill_1e9(s, mask)``   ``masked_fill(~mask, -1e9)``: a row with no key gets uniform weights (02)
``masked_softmax_fill_inf(s, mask)``   ``masked_fill(~mask, -inf)``: a row with no key gets NaN (02)
``attention_with_fill(q, k, v, mask, fill)``  masked attention with a plain softmax after ``masked_fill(~mask, fill)`` (02)
``forward_keys_split_with_query_length(mha, query, key, value, mask=None)``  keys split with the query's length (04)
``forward_inferred_batch(mha, query, key, value, mask=None)``  ``view(-1, q_len, ...)``: the batch inferred (04)
``forward_softmax_wrong_axis(mha, query, key, value, mask=None)``  the softmax over the queries, not the keys (04)
``softmax_backward_diagonal_only(weights, grad_weights)``  ``w * g``: the softmax's derivative, diagonal only (04)
=====================================  ===================================================================

Introduced in notebooks/00_start_here.ipynb.
"""

from __future__ import annotations

import importlib

ZOO: dict[str, tuple[str, str]] = {
    "dot_scores_transposed": ("lesson_00.exercises", "dot_scores_transposed"),
    "softmax_along_no_max_shift": ("01.softmax_along", "softmax_no_max_shift"),
    "softmax_along_wrong_axis": ("01.softmax_along", "softmax_wrong_axis"),
    "softmax_global_max": ("lesson_01.core", "softmax_global_max"),
    "masked_softmax_fill_1e9": ("lesson_02.core", "masked_softmax_fill_1e9"),
    "masked_softmax_fill_inf": ("lesson_02.core", "masked_softmax_fill_inf"),
    "attention_with_fill": ("lesson_02.core", "attention_with_fill"),
    "forward_keys_split_with_query_length": ("lesson_04.module", "forward_keys_split_with_query_length"),
    "forward_inferred_batch": ("lesson_04.module", "forward_inferred_batch"),
    "forward_softmax_wrong_axis": ("lesson_04.module", "forward_softmax_wrong_axis"),
    "softmax_backward_diagonal_only": ("lesson_04.parity", "softmax_backward_diagonal_only"),
}
"""Public name -> ``("lesson_NN.module", attribute)`` or ``("NN.exercise", misconception_id)``."""

__all__ = sorted(ZOO)

_loaded: dict = {}


def _load(name: str):
    where, what = ZOO[name]
    if where.startswith("lesson_"):
        return getattr(importlib.import_module(f"course_utils.lessons.{where}"), what)
    from course_utils.checking import misconceptions, patches, registry

    reference = registry.get(where).reference
    function = patches.patched(reference, misconceptions.get(what).patch)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"{where}'s answer as someone who holds «{misconceptions.get(what).name}» writes it."
    return function


def __getattr__(name: str):
    if name not in ZOO:
        raise AttributeError(
            f"module 'course_utils.bugs' has no attribute {name!r}; the bug zoo has: {', '.join(__all__)}"
        )
    if name not in _loaded:
        _loaded[name] = _load(name)
    return _loaded[name]


def __dir__():
    return [*globals(), *__all__]
