"""The bug zoo (course_utils.bugs): every public name loads and is callable, derived ones are the check's own bug.

Also the deprecated ``course_utils.misconceptions`` keeps its two names and resolves every zoo name, so
``from course_utils import misconceptions as bugs`` (as the phase-2 plans write it) keeps working.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from course_utils import bugs, checks
from course_utils.checking import naming, registry


@pytest.mark.parametrize("name", bugs.__all__)
def test_every_bug_loads_by_its_public_name(name):
    function = getattr(bugs, name)
    assert callable(function)
    where, what = bugs.ZOO[name]
    if not where.startswith("lesson_"):
        fits = naming.fitting_misconceptions(registry.get(where))
        assert what in {f.id for f in fits} | {m for f in fits for m in f.same_as}  # the check names this bug


def test_a_derived_bug_is_named_by_its_check(capsys):
    checks.demonstrate("01.softmax_along", bugs.softmax_along_wrong_axis)
    assert "softmax over the wrong axis" in capsys.readouterr().out
    with np.errstate(all="ignore"):
        assert np.isnan(bugs.softmax_along_no_max_shift(np.array([[1000.0, 1001.0]]), -1)).all()


def test_an_unknown_name_says_what_the_zoo_has():
    with pytest.raises(AttributeError, match="the bug zoo has: attention_with_fill, dot_scores_transposed"):
        bugs.no_such_bug  # noqa: B018


def test_the_deprecated_module_keeps_its_names_and_resolves_the_zoo():
    from course_utils import misconceptions
    from course_utils.misconceptions import forward_softmax_wrong_axis, softmax_along_wrong_axis

    assert softmax_along_wrong_axis is bugs.softmax_along_wrong_axis
    assert forward_softmax_wrong_axis is bugs.forward_softmax_wrong_axis
    assert misconceptions.masked_softmax_fill_inf is bugs.masked_softmax_fill_inf


def test_importing_the_zoo_imports_neither_torch_nor_a_lesson_module():
    code = "import sys, course_utils.bugs; print('torch' in sys.modules, any('lesson_' in m for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
