"""The options a case passes, exercised the other way too: ``need_weights=False`` must not return weights.

A case that always passes ``need_weights=True`` (or ``average_attn_weights=True``, ``is_causal=False``)
cannot tell an answer that ignores the option from one that honours it. After the fixed cases pass,
:func:`flipped_problem` runs each case again with one of its True arguments switched to False (any
argument, or an item of a tuple of arguments: a module's ``forward`` inputs), the course's answer and the
student's from the same seed, and compares them. A flip the course's own answer refuses (raises on) is not tried.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import copy

from course_utils.checking.compare import safe_str, type_name

__all__ = ["bool_paths", "flipped", "flipped_problem", "MAX_FLIPS"]

MAX_FLIPS = 4
"""How many (case, option) flips one check tries at most."""


def bool_paths(args) -> list:
    """``[(index,), (index, inner index)]``: where a case holds True (top level, or one tuple deep).

    Only True is flipped: switching an option off (no weights, no causal mask, no averaging) asks for less and
    is right on every case, where switching one on may ask for what the case cannot give (a causal mask on a
    cross-attention case whose lengths differ).
    """
    found = []
    for i, value in enumerate(args):
        if value is True:
            found.append((i,))
        elif isinstance(value, tuple):
            found += [(i, j) for j, item in enumerate(value) if item is True]
    return found


def flipped(args, path):
    """A deep copy of ``args`` with the True/False at ``path`` flipped."""
    args = list(copy.deepcopy(args))
    if len(path) == 1:
        args[path[0]] = not args[path[0]]
    else:
        inner = list(args[path[0]])
        inner[path[1]] = not inner[path[1]]
        args[path[0]] = tuple(inner)
    return tuple(args)


def _value_at(args, path):
    return args[path[0]] if len(path) == 1 else args[path[0]][path[1]]


def flipped_problem(exercise, answer, cases, run, problem, say_input=None) -> str | None:
    """None when the answer agrees with the course's on every case with one True/False argument flipped."""
    say_input = say_input or (lambda path: "argument " + "".join(f"[{i}]" for i in path))
    tried, seen = 0, set()
    for i, args in enumerate(cases):
        if not isinstance(args, tuple):
            continue
        for path in bool_paths(args):
            if path in seen or tried >= MAX_FLIPS:
                continue  # each option once, on the first case that passes it
            seen.add(path)
            tried += 1
            other = flipped(args, path)
            status, expected = run(exercise.reference, other, i, fn_is_answer=False)
            if status != "ok" or expected is None:
                continue
            status, got = run(answer, other, i)
            name = say_input(path)
            where = f"with `{name}={_value_at(other, path)}` (case {i + 1} passes {_value_at(args, path)})"
            if status != "ok":
                if status == "raised":
                    return f"{where}, your answer raised {type_name(got)}: {safe_str(got, 160)}"
                if status == "refused":
                    return f"{where}: {safe_str(got, 200)}"
                return f"{where}, your answer did not finish ({status.replace('_', ' ')})"
            found = problem(expected, got) if got is not None else "your function returned None"
            if found:
                return (
                    f"{where}, your answer is wrong: {found}. Does it read `{name}` and do what it asks in both cases?"
                )
    return None
