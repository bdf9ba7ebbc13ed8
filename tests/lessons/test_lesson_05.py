"""Lesson 05: its experiments run the student's plug-ins like the course's functions, and its checks close the holes.

The exercise engine's generic tests (tests/lessons/test_exercises.py, tests/checking/test_exercise_audit.py) cover every region; these
add what is particular to lesson 05: the experiments of ``course_utils.lessons.lesson_05.experiments`` give the same result
with a correct student function plugged in as with the course's default, and answers that hand the work to a course
helper (``heads.head_role_scores``, the experiments' own defaults) are refused.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_utils import checks, heads
from course_utils.lessons.lesson_05 import core
from course_utils.lessons.lesson_05 import exercises as exercises_05
from course_utils.lessons.lesson_05 import experiments as lesson_05


@pytest.fixture(scope="module")
def trained():
    run = lesson_05.train_roles(seed=0)
    return run, lesson_05.head_roles(run)


def test_untrained_layer_is_seeded_and_near_uniform():
    a, b = lesson_05.untrained_layer(0), lesson_05.untrained_layer(0)
    assert torch.equal(a.weights, b.weights) and a.weights.shape == (1, 4, 6, 6)
    assert not torch.equal(a.weights, lesson_05.untrained_layer(1).weights)
    assert a.measured["max_weight"] < 4 / 6 and a.measured["min_entropy_over_max"] > 0.9


def test_self_head_by_seed_runs_the_students_role_scores():
    course = lesson_05.self_head_by_seed(0)
    student = lesson_05.self_head_by_seed(0, role_scores=core.role_scores_loop)
    np.testing.assert_allclose(student["self_scores"], course["self_scores"], atol=1e-12)
    assert student["most_self"] == course["most_self"] and len(course["most_self"]) == lesson_05.INIT_SEEDS
    with pytest.raises(TypeError, match="role_scores"):
        lesson_05.self_head_by_seed(0, role_scores="previous")


def test_head_roles_and_ablation_with_the_students_functions(trained):
    run, roles = trained
    mine = lesson_05.head_roles(run, role_scores=core.role_scores_diagonal, matching=core.matching_loop)
    for role in ("previous", "first", "self", "matching"):
        np.testing.assert_allclose(mine["scores"][role], roles["scores"][role], atol=1e-6)
    assert mine["measured"] == roles["measured"]
    course = lesson_05.ablation(run, roles)
    student = lesson_05.ablation(
        run, roles, ablation_table=exercises_05.ablation_arrays, switch_off=core.switch_off_mask
    )
    np.testing.assert_allclose(student["table"], course["table"], atol=1e-12)
    assert student["measured"] == course["measured"]
    assert course["table"].shape == (run.model.config.num_heads, 3)


def test_the_lessons_run_holds_what_the_lesson_asserts(trained):
    run, roles = trained
    assert run.measured["loss_ratio"] < 0.05 and run.measured["min_accuracy"] > 0.95
    assert roles["measured"]["roles_held"] and len(roles["spare"]) == 1
    assert lesson_05.ablation(run, roles)["measured"]["ablation_held"]


def test_course_ablation_table_matches_the_exercise_reference(trained):
    run, _ = trained
    np.testing.assert_allclose(
        lesson_05.course_ablation_table(run.model, run.test_task),
        exercises_05.ablation_table(run.model, run.test_task),
    )


@pytest.mark.parametrize(
    ("eid", "answer", "words"),
    [
        ("05.role_scores", lambda w: lesson_05.course_role_scores(w), "course_role_scores"),
        (
            "05.role_scores",
            lambda w: tuple(heads.head_role_scores(w)[r] for r in ("previous", "first", "self")),
            "head_role_scores",
        ),
        ("05.matching_score", lambda w, s: heads.head_role_scores(w, match_ids=s)["matching"], "head_role_scores"),
        ("05.ablation_table", lambda m, t: lesson_05.course_ablation_table(m, t), "course_ablation_table"),
    ],
)
def test_answers_that_delegate_are_refused(eid, answer, words, capsys):
    returned = checks.check(eid, answer)
    out = capsys.readouterr().out
    assert out.startswith("❌") and words in out, out
    assert returned is not answer


def test_a_switch_off_that_changes_its_input_is_named(capsys):
    checks.check("05.switch_off", core.switch_off_in_place)
    out = capsys.readouterr().out
    assert out.startswith("❌") and "in place" in out, out
