"""Delegation: a right answer whose result a course helper already returned, or that called a forbidden helper.

Moved out of :mod:`course_utils.checking.engine` whole (issue 26 section 5); ``_delegated_to`` and
``_forbidden_codes`` are now ``delegated_to`` and ``forbidden_code_map``, nothing else changed.
"""

from __future__ import annotations

import inspect

import numpy as np

from course_utils.checking import (
    patches,
)
from course_utils.checking.compare import is_array
from course_utils.checking.naming import (
    output_problem,
)
from course_utils.checking.preparing import call, prepare
from course_utils.checking.runner import (
    HelperRecorder,
    Probe,
    course_defaults,
    seeded,
)

__all__ = [
    "helpers_that_compute",
]


# ---------------------------------------------------------------------------------------------
# delegation
# ---------------------------------------------------------------------------------------------


def _spec_name(module: str, qualname: str) -> str:
    # a lesson's experiments go by their lesson, as its notebook imports them: lesson_05.course_role_scores
    return f"{module.removesuffix('.experiments').rsplit('.', 1)[-1]}.{qualname}"


def _allowed(exercise, module: str, qualname: str) -> bool:
    return f"{module}:{qualname}" in exercise.allowed


def _candidates(value):
    yield value
    if isinstance(value, (tuple, list)) and len(value) <= 4:
        yield from value
    if isinstance(value, dict) and len(value) <= 8:  # a helper returning {"previous": ..., "self": ...}
        yield from value.values()


def _could_equal(expected, candidate) -> bool:
    if is_array(expected):
        return is_array(candidate) and tuple(candidate.shape) == tuple(expected.shape)
    if isinstance(expected, (tuple, list)):
        return isinstance(candidate, (tuple, list)) and len(candidate) == len(expected)
    if isinstance(expected, (bool, np.bool_)):
        return isinstance(candidate, (bool, np.bool_))
    if isinstance(expected, (int, float, np.number)):
        return isinstance(candidate, (int, float, np.number)) or (is_array(candidate) and candidate.numel() == 1)
    return candidate is expected


def delegated_to(exercise, recorder, probe, expected):
    """The course helper whose recorded result is the answer's (or the expected) result, or None."""
    for start, end, result in probe.calls:
        target = expected if exercise.driver is None else result
        for module, qualname, value in recorder.returns[start:end]:
            if _allowed(exercise, module, qualname):
                continue
            for candidate in _candidates(value):
                if candidate is target:
                    return _spec_name(module, qualname)
                if _could_equal(target, candidate) and output_problem(exercise, target, candidate) is None:
                    return _spec_name(module, qualname)
    return None


def helpers_that_compute(exercise) -> list[str]:
    """The public course helpers whose result, while the reference runs, already is the case's answer."""
    prepared = prepare(exercise)
    found: list = []
    with course_defaults():
        for i, args in enumerate(prepared.cases):
            recorder = HelperRecorder()
            probe = Probe(exercise.reference, recorder)
            with seeded(i), recorder:
                call(exercise, probe, args)
            name = delegated_to(exercise, recorder, probe, prepared.expected[i])
            if name and name not in found:
                found.append(name)
    return found


def forbidden_code_map(exercise) -> dict:
    codes = {}
    for spec in exercise.forbidden:
        module_name, _, path = spec.partition(":")
        found = patches.resolve(spec)
        if found is None:
            try:
                __import__(module_name)
            except Exception:
                continue
            found = patches.resolve(spec)
        if found is None:
            continue
        obj = getattr(found[2], "__func__", found[2])
        # a decorated helper (@torch.no_grad(), functools.wraps) is recorded by its own code, not the wrapper's,
        # which every function with that decorator shares
        obj = inspect.unwrap(obj) if callable(obj) else obj
        code = getattr(obj, "__code__", None)
        if code is not None:
            codes[code] = _spec_name(module_name, path.removesuffix(".__init__"))
    return codes
