"""What a check tries after the fixed cases pass: fresh sizes, the other mode, one backward step, the constraint.

An answer can be right on every fixed case and still wrong: right only at the cases' sizes (a loop that assumes
the length is a multiple of the tile), right in one mode only (dropout in the wrong place), right forward but
cutting the gradient (``.detach()``), or right while breaking the exercise's own stated constraint. The engine
calls :func:`run_all` once the fixed cases passed; each part returns None or the sentence that says what broke.

- :func:`fresh_sizes`: ``Exercise.fresh(**sizes)`` at sizes drawn from the exercise id (distinct, never 2 or 4).
- :func:`other_mode`: a case holding a module with dropout is run again with every module in the other mode
  (training <-> evaluation), the reference and the answer from the same seed.
- gradients (:mod:`course_utils.checking.gradients`) and stated constraints
  (:mod:`course_utils.checking.constraints`).

``run(fn, args, seed, fn_is_answer=True)`` is the engine's: it runs one case with the check's time limit and
protections and returns ``(status, value)``; ``problem(expected, got)`` is the engine's comparison.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import copy
import inspect
import random
import sys
import zlib

from course_utils.checking import aliasing, constraints, crash_site, distinct_inputs, extremes, gradients, options
from course_utils.checking.compare import safe_str, type_name
from course_utils.checking.equal_sizes import equal_feature_runs
from course_utils.checking.model import Case
from course_utils.checking.runner import course_defaults, seeded

__all__ = [
    "run_all",
    "run_all_keyed",
    "fresh_sizes",
    "draw_sizes",
    "fresh_cases",
    "other_mode",
    "FRESH_POOL",
    "WATCHED",
    "FRESH_SEED",
]

WATCHED = ("call_watch", "driven_touches", "options", "extremes", "distinct_inputs", "aliasing")
"""The modules of the checks after the cases, whose names an answer must not rebind (the engine watches them)."""
FRESH_POOL = (3, 5, 6, 7, 9, 10, 11, 12, 13)
"""The sizes fresh cases are drawn from: never 2 or 4 (the sizes a shortcut most often hard-codes), never 8."""
FRESH_SEED = 1_000
"""Fresh cases run with seed ``FRESH_SEED + index`` (the fixed cases with their index)."""


def draw_sizes(exercise) -> dict:
    """The fresh sizes of one exercise: one distinct size per parameter of ``exercise.fresh``, from its id."""
    names = [
        p.name
        for p in inspect.signature(exercise.fresh).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    rng = random.Random(zlib.crc32(exercise.id.encode("utf-8")))
    return dict(zip(names, rng.sample(FRESH_POOL, len(names)), strict=True))


_FRESH: dict = {}  # exercise id -> (sizes, cases)


def fresh_cases(exercise) -> tuple:
    """``(sizes, [args tuples])`` for an exercise with ``fresh``; cached (the same on every check)."""
    if exercise.id not in _FRESH:
        sizes = draw_sizes(exercise)
        with course_defaults(), seeded(FRESH_SEED):  # the notebook's generators are left as they were
            made = exercise.fresh(**sizes)
        cases = [tuple(c.args) if isinstance(c, Case) else (c if isinstance(c, tuple) else (c,)) for c in made]
        _FRESH[exercise.id] = (sizes, cases)
    return _FRESH[exercise.id]


def batch_of_one_cases(exercise) -> tuple:
    """``(sizes, [args tuples])``: the fresh cases again with ``batch=1`` (the other sizes as drawn); cached."""
    key = exercise.id + " batch=1"
    if key not in _FRESH:
        sizes = {**draw_sizes(exercise), "batch": 1}
        with course_defaults(), seeded(FRESH_SEED):
            made = exercise.fresh(**sizes)
        cases = [tuple(c.args) if isinstance(c, Case) else (c if isinstance(c, tuple) else (c,)) for c in made]
        _FRESH[key] = (sizes, cases)
    return _FRESH[key]


def _sizes_words(sizes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def _outcome_words(status, value) -> str:
    if status == "timed_out":
        return "ran past its time limit"
    if status == "refused":
        return safe_str(value, 300)
    if status == "tampered":
        return "changed the functions the check compares with"
    return f"crashed with {type_name(value)}: {safe_str(value, 160)}"


def fresh_sizes(exercise, answer, run, problem, explain=None) -> str | None:
    """None when the answer is right at the exercise's fresh sizes too, else the sentence with the sizes."""
    found = fresh_sizes_keyed(exercise, answer, run, problem, explain)
    return found[0] if found else None


def fresh_sizes_keyed(exercise, answer, run, problem, explain=None) -> tuple | None:
    """``(sentence, key)`` for a failure at fresh sizes, None when there is none.

    ``explain(args, expected, got, seed) -> (sentence, relation key) or None`` names a wrong fresh result by its
    relation to the right one (the key is then ``fresh:<relation>``); a crash is named by its cause
    (``fresh:crash:<kind>``); otherwise the key is ``fresh_sizes``: right on the fixed sizes only.
    """
    if exercise.fresh is None:
        return None
    drawn = [(*fresh_cases(exercise), "drawn so that no two axes share a size")]
    if "batch" in drawn[0][0]:
        drawn.append((*batch_of_one_cases(exercise), "a batch of one: a squeeze or a size-1 axis must not lose it"))
    drawn += equal_feature_runs(exercise, drawn[0][0], FRESH_SEED)  # square weights: an extra step shows
    runs = [(sizes, args, words, j) for sizes, cases, words in drawn for j, args in enumerate(cases)]
    for sizes, args, words, j in runs:
        status, expected = run(exercise.reference, args, FRESH_SEED + j, fn_is_answer=False)
        if status != "ok":
            continue  # the course's own answer does not take these sizes: nothing to compare
        status, got = run(answer, args, FRESH_SEED + j)
        where = f"at fresh sizes ({_sizes_words(sizes)}), {words}"
        ask = "It passed the fixed cases: does it rely on their sizes, or on something only they have?"
        if status != "ok":
            cause = crash_site.cause(got) if status == "raised" else None
            if cause is not None:
                return (
                    f"{where}, your answer {_outcome_words(status, got)}. What went wrong: {cause[1]}{'' if cause[1].endswith(('?', '.')) else '.'} {ask}",
                    (f"fresh:crash:{cause[0]}"),
                )
            return f"{where}, your answer {_outcome_words(status, got)}. {ask}", "fresh_sizes"
        if got is None:
            return f"{where}, your function returned None.", "returned_none"
        found = problem(expected, got)
        if found:
            named = None
            if explain is not None:
                try:
                    named = explain(args, expected, got, FRESH_SEED + j)
                except Exception:  # naming never breaks the verdict
                    named = None
            if named:
                return f"{where}, your answer is wrong: {found}. {named[0]} {ask}", f"fresh:{named[1]}"
            return f"{where}, your answer is wrong: {found}. {ask}", "fresh_sizes"
    return None


def _has_dropout(module) -> bool:
    torch = sys.modules.get("torch")
    for sub in module.modules():
        if isinstance(sub, torch.nn.modules.dropout._DropoutNd) and sub.p > 0:
            return True
        rate = getattr(sub, "dropout", None)
        if isinstance(rate, float) and rate > 0:
            return True
    return False


def other_mode(exercise, answer, cases, run, problem) -> str | None:
    """None when the answer is right with the case's modules in the other mode too (dropout cases only)."""
    for i, args in enumerate(cases):
        modules = list(aliasing.modules_in(args, limit=6))
        if not modules or not any(_has_dropout(m) for m in modules):
            continue
        flipped = copy.deepcopy(args)
        training = not modules[0].training
        for module in aliasing.modules_in(flipped, limit=6):
            module.train(training)
        status, expected = run(exercise.reference, flipped, i, fn_is_answer=False)
        if status != "ok":
            continue
        status, got = run(answer, flipped, i)
        mode = "training" if training else "evaluation"
        where = f"with case {i + 1}'s module switched to {mode} mode (the same seed for yours and the course's)"
        if status != "ok":
            return f"{where}, your answer {_outcome_words(status, got)}"
        found = problem(expected, got) if got is not None else "your function returned None"
        if found:
            why = (
                "is dropout applied in the wrong place?"
                if training
                else "is dropout still applied in evaluation mode? It must act only while training."
            )
            return f"{where}, your answer is wrong: {found}. In {mode} mode {why}"
    return None


def _safe(part):
    """``part`` whose own failure (not the answer's: ``run`` catches those) says nothing instead of raising."""

    def safe():
        try:
            return part()
        except Exception:  # a case these checks cannot transform (tensors without values): no verdict from it
            return None

    return safe


def _say(say_input):
    return say_input or (lambda path: "argument " + "".join(f"[{i}]" for i in path))


def run_all(exercise, answer, cases, run, problem, say_input=None) -> str | None:
    """The first thing that breaks after the fixed ``cases`` passed (fresh sizes, mode, gradient, constraint), or None.

    ``say_input(path)`` names an input of a case (argument index, index inside it) as the answer calls it.
    """
    return run_all_keyed(exercise, answer, cases, run, problem, say_input)[0]


def run_all_keyed(exercise, answer, cases, run, problem, say_input=None, explain=None) -> tuple:
    """``(sentence, key)`` of the first thing that breaks after the fixed cases passed, or ``(None, None)``.

    The key names the kind (``fresh:...``, ``mode``, ``gradient``, ``constraint``); ``explain`` is handed to
    :func:`fresh_sizes_keyed`.
    """
    found = fresh_sizes_keyed(exercise, answer, run, problem, explain)
    if found:
        return found
    for key, part in (
        ("mode", lambda: other_mode(exercise, answer, cases, run, problem)),
        ("extreme", _safe(lambda: extremes.extreme_problem(exercise, answer, cases, run, problem))),
        ("option", _safe(lambda: options.flipped_problem(exercise, answer, cases, run, problem, say_input))),
        ("distinct_inputs", _safe(lambda: distinct_inputs.distinct_problem(exercise, answer, cases, run, problem))),
        ("shared_memory", _safe(lambda: aliasing.shared_problem(exercise, answer, cases, run, _say(say_input)))),
        ("gradient", lambda: gradients.gradient_problem(exercise, answer, cases, run, say_input)),
        ("constraint", lambda: constraints.constraint_problem(exercise, answer, cases, run)),
    ):
        sentence = part()
        if sentence:
            return sentence, key
    return None, None
