"""Lessons built from several regions: what earlier checks handed back, which code a model runs, class exercises.

- A function or class that a check of another exercise handed back (the student's or the course's) is a black
  box for the delegation guard, by value and by the forbidden list; the same exercise's own reference is not.
- ``checks.report`` says, from the last verdict of each region in this kernel, whose code runs.
- A class exercise driven by ``cases.run_module``: a module whose parameters do not fit the course's weights is
  *wrong*, and the message names the keys; an author's own driver that calls ``load_state_dict`` likewise.
- ``checks.buggy`` gives the buggy answer a check names a mistake by; pen-and-paper lists compare like arrays.

Small exercises are built here (ids ``98.*``): the engine judges any :class:`Exercise`, registered or not.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_utils import checks, numpy_attention
from course_utils.checking import cases, engine, handed_back, runner
from course_utils.checking.model import Case, Exercise


@pytest.fixture(autouse=True)
def fresh_kernel():
    handed_back.forget_checks()
    yield
    handed_back.forget_checks()


def _rows():
    return [
        Case((np.arange(6.0).reshape(2, 3),)),
        Case((np.linspace(-2, 2, 20).reshape(4, 5),), "negative scores"),
        Case((cases.large_scores((3, 4), 0),), "scores in the thousands"),
    ]


def normalise(x):  # exercise A's reference: goes through a public course helper
    return numpy_attention.softmax(x, axis=-1)


def doubled(x):  # exercise B's reference: its result is that helper's result
    return numpy_attention.softmax(2 * x, axis=-1)


A = Exercise(id="98.normalise", section="98 · x", make_cases=_rows, reference=normalise)
B = Exercise(id="98.doubled", section="98 · x", make_cases=_rows, reference=doubled)
B_FORBIDS = Exercise(
    id="98.doubled_forbidding",
    section="98 · x",
    make_cases=_rows,
    reference=doubled,
    forbidden=("course_utils.numpy_attention:softmax",),
)


def builds_on_a(x):
    return normalise(2 * x)


# ---------------------------------------------------------------------------------------------
# what an earlier check handed back is never delegation
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("exercise", [B, B_FORBIDS], ids=["by value", "forbidden"])
def test_an_answer_calling_what_an_earlier_check_handed_back_is_not_refused(exercise):
    assert engine.judge(exercise, builds_on_a).status == "wrong"  # before: the helper inside is seen
    handed_back.remember_check(A.id, "wrong", normalise)  # A's check handed the course's version back
    assert engine.judge(exercise, builds_on_a).status == "passed"


def test_the_students_own_earlier_function_is_a_black_box_too():
    def my_normalise(x):  # the student's A, which passed, calls a helper the exercise allowed
        return numpy_attention.softmax(x, axis=-1)

    def my_doubled(x):
        return my_normalise(2 * x)

    assert engine.judge(B, my_doubled).helper == "numpy_attention.softmax"
    handed_back.remember_check(A.id, "passed", my_normalise)
    assert engine.judge(B, my_doubled).status == "passed"


def test_calling_the_helper_directly_is_still_refused_and_an_exercise_cannot_launder_its_own_reference():
    handed_back.remember_check(A.id, "wrong", normalise)

    def direct(x):
        return numpy_attention.softmax(2 * x, axis=-1)

    assert engine.judge(B, direct).helper == "numpy_attention.softmax"
    assert engine.judge(B_FORBIDS, direct).helper == "numpy_attention.softmax"
    # A's own check: calling the course's version it handed back is not the student's code
    assert engine.judge(A, lambda x: normalise(x)).helper == "numpy_attention.softmax"


def test_checks_check_records_what_it_hands_back(capsys):
    def dot_scores(q, k):
        """The stub."""
        ...

    returned = checks.check("00.dot_scores", dot_scores)
    capsys.readouterr()
    assert handed_back.last_status("00.dot_scores") == "not_attempted"
    codes = handed_back.handed_back_codes(B)
    assert id(returned.__code__) in codes


def test_a_handed_back_class_is_opaque_in_every_method():
    class Base(torch.nn.Module):
        def helper(self, x):
            return x

    class Layer(Base):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            return self.helper(x)

        @staticmethod
        def build():
            return Layer()

    codes = runner.own_codes(Layer)
    assert {Layer.__init__.__code__, Layer.forward.__code__, Base.helper.__code__, Layer.build.__code__} <= codes
    assert torch.nn.Module.__call__.__code__ not in codes


# ---------------------------------------------------------------------------------------------
# checks.report
# ---------------------------------------------------------------------------------------------


def _check_quietly(capsys, exercise_id, fn):
    returned = checks.check(exercise_id, fn)
    capsys.readouterr()
    return returned


def test_report_names_whose_code_each_region_runs(capsys):
    def dot_scores(q, k):
        return q @ k.T

    def softmax_along(x, axis=-1):
        """The stub."""
        ...

    _check_quietly(capsys, "00.dot_scores", dot_scores)
    _check_quietly(capsys, "01.softmax_along", softmax_along)
    _check_quietly(capsys, "02.padding_mask", lambda lengths, max_len: lengths)
    result = checks.report("00.dot_scores", "01.softmax_along", "02.padding_mask", "01.self_attention")
    line = capsys.readouterr().out
    assert result == {
        "00.dot_scores": True,
        "01.softmax_along": False,
        "02.padding_mask": False,
        "01.self_attention": False,
    }
    assert line == (
        "This model runs your dot scores, and the course's softmax along (yours is not written yet: "
        'checks.check("01.softmax_along", ...)), the course\'s padding mask (yours has not passed yet: '
        'checks.check("02.padding_mask", ...)) and the course\'s self attention (its check has not run in '
        'this kernel: run the cell with checks.check("01.self_attention", ...)).\n'
    )


def test_report_when_every_region_or_none_is_the_students(capsys):
    def dot_scores(q, k):
        return q @ k.T

    _check_quietly(capsys, "00.dot_scores", dot_scores)
    assert checks.report("00.dot_scores", subject="Your scores table") == {"00.dot_scores": True}
    assert capsys.readouterr().out == "Your scores table runs your dot scores: all of it is your code.\n"
    _check_quietly(capsys, "00.dot_scores", lambda q, k: k @ q.T)  # the last verdict counts
    assert checks.report("00.dot_scores") == {"00.dot_scores": False}
    assert capsys.readouterr().out.startswith("This model runs the course's dot scores (yours has not passed yet")


def test_report_refuses_bad_arguments():
    with pytest.raises(TypeError, match="at least one exercise id"):
        checks.report()
    with pytest.raises(ValueError, match="did you mean '00.dot_scores'"):
        checks.report("00.dot_score")
    with pytest.raises(TypeError, match="subject must be"):
        checks.report("00.dot_scores", subject="")


def test_a_noun_defaults_from_the_function_and_can_be_given():
    assert handed_back.last_status("00.dot_scores") is None
    assert Exercise(id="98.my_padding_mask", section="s", make_cases=list, reference=len).noun == "padding mask"
    given = Exercise(id="98.decoder_step", section="s", make_cases=list, reference=len, noun="decoder step (GRU)")
    assert given.noun == "decoder step (GRU)"
    with pytest.raises(TypeError, match="buggy="):
        Exercise(id="98.x", section="s", make_cases=list, reference=len, misconceptions={"mask_inverted": len})


# ---------------------------------------------------------------------------------------------
# class exercises: the course's weights in the student's module
# ---------------------------------------------------------------------------------------------


class Scaled(torch.nn.Module):
    """The course's class: Scaled(d_in, d_out), forward(x) = 2 * proj(x)."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.proj = torch.nn.Linear(d_in, d_out)

    def forward(self, x):
        return 2 * self.proj(x)


def _module_cases():
    with cases.torch_seeded(0):
        course = Scaled(3, 5)
        x = torch.randn(2, 4, 3, dtype=torch.float32)
    return [Case((course, (3, 5), (x,)), "batch 2, length 4")]


SCALED = Exercise(id="98.scaled", section="98 · x", make_cases=_module_cases, reference=Scaled, driver=cases.run_module)


def test_a_right_class_with_its_own_internals_passes():
    class MyScaled(torch.nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.proj = torch.nn.Linear(d_in, d_out)

        def forward(self, x):
            return self.proj(x) + self.proj(x)

    assert engine.judge(SCALED, MyScaled).status == "passed"


def test_parameters_named_otherwise_are_wrong_and_the_keys_are_named():
    class Renamed(torch.nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.linear = torch.nn.Linear(d_in, d_out)

        def forward(self, x):
            return 2 * self.linear(x)

    verdict = engine.judge(SCALED, Renamed)
    assert verdict.status == "wrong"
    assert (
        "your Renamed's parameters are not named like the course's, so the course's weights cannot be loaded into "
        "it: it has no `proj.weight`, `proj.bias`; it has `linear.weight`, `linear.bias`, which the course's module "
        "has not. Name the layers as the stub's docstring does." in verdict.detail
    )
    assert verdict.detail.startswith(
        "scaled: on case 1 of 1 (course_module Scaled(training), init_args (3, 5), inputs (1 item): batch 2, length 4)"
    )


def test_parameters_of_another_shape_are_wrong_and_the_shapes_are_named():
    class Swapped(torch.nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.proj = torch.nn.Linear(d_out, d_in)

        def forward(self, x):
            return 2 * self.proj(x)

    verdict = engine.judge(SCALED, Swapped)
    assert verdict.status == "wrong" and "crashed" not in verdict.detail
    assert "`proj.weight` is (3, 5) in yours and (5, 3) in the course's" in verdict.detail
    assert "`proj.bias` is (3,) in yours and (5,) in the course's" in verdict.detail


def test_an_authors_own_driver_that_loads_strictly_gets_the_same_words():
    def load_and_run(cls, course, x):
        module = cls(3, 5)
        module.load_state_dict(course.state_dict())  # strict by default
        return module(x)

    exercise = Exercise(
        id="98.scaled_own_driver",
        section="98 · x",
        make_cases=lambda: [Case((c[0], c[2][0])) for c in _module_cases()],
        reference=Scaled,
        driver=load_and_run,
    )

    class Extra(Scaled):
        def __init__(self, d_in, d_out):
            super().__init__(d_in, d_out)
            self.gain = torch.nn.Parameter(torch.ones(1))

    verdict = engine.judge(exercise, Extra)
    assert verdict.status == "wrong"
    assert "it has `gain`, which the course's module has not" in verdict.detail


def test_the_stub_class_is_not_attempted_and_not_a_module_is_wrong():
    class Stub(torch.nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            ...

        def forward(self, x): ...

    assert engine.judge(SCALED, Stub).status == "not_attempted"

    class Plain:
        def __init__(self, d_in, d_out):
            self.d = d_in

        def forward(self, x):
            return x

    verdict = engine.judge(SCALED, Plain)
    assert verdict.status == "wrong" and "is not a torch.nn.Module" in verdict.detail


def test_state_dict_problem_ignores_other_errors():
    assert cases.state_dict_problem(RuntimeError("shape '[2, 3]' is invalid")) is None
    assert cases.state_dict_problem(ValueError()) is None


# ---------------------------------------------------------------------------------------------
# checks.buggy, and answers given as plain lists
# ---------------------------------------------------------------------------------------------


def test_buggy_gives_the_answer_the_check_names(capsys):
    transposed = checks.buggy("00.dot_scores", "scores_transposed")
    checks.demonstrate("00.dot_scores", transposed)
    assert "It looks like a known mistake: the scores are transposed" in capsys.readouterr().out
    no_shift = checks.buggy("01.softmax_along", "softmax_no_max_shift")
    with np.errstate(all="ignore"):
        assert np.isnan(no_shift(np.array([1000.0, 1001.0]), -1)).all()
    with pytest.raises(ValueError, match="does not fit 00.dot_scores; the ones that fit: .*scores_transposed"):
        checks.buggy("00.dot_scores", "mask_inverted")
    with pytest.raises(TypeError, match="misconception_id must be a string"):
        checks.buggy("00.dot_scores", 3)


def test_a_pen_and_paper_answer_in_lists_passes_and_is_judged_by_value(capsys):
    def by_hand_new_query():
        return [0.882, 0.013, 0.106], [9.345, 0.655]

    def off(  # the first weight misread
    ):
        return [0.782, 0.013, 0.106], [9.345, 0.655]

    assert checks.check("01.by_hand_new_query", by_hand_new_query) is by_hand_new_query
    assert capsys.readouterr().out.startswith("✅")
    checks.check("01.by_hand_new_query", off)
    out = capsys.readouterr().out
    assert "weights: 1 of 3 entries differ; first at index (0,): off by 0.09965 (too low)" in out
    assert "0.882" not in out  # reveal=False: how far off, never the value


def test_the_audit_fails_a_declared_misconception_that_does_not_fit():
    from course_utils.checking import audit

    declared = Exercise(
        id="98.normalise_declared",
        section="98 · x",
        make_cases=_rows,
        reference=normalise,
        variants=(normalise, lambda x: numpy_attention.softmax(x, -1)),
        misconceptions=("softmax_no_max_shift", "mask_inverted"),
    )
    row = audit.audit_exercise(declared)
    named = {m[0]: m[1] for m in row.misconceptions}
    assert named["softmax_no_max_shift"] is True  # derived from the catalogue's patch
    assert named["mask_inverted"] is False and not row.clean


def test_the_first_hint_after_a_state_dict_mismatch_points_at_names_and_sizes():
    from course_utils.checking import hints

    detail = engine.judge(SCALED, _renamed_class()).detail
    assert "Your module's parameters must be named and shaped as the stub's docstring says" in hints.reaction(
        "wrong", None, detail
    )


def _renamed_class():
    class Renamed(torch.nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.linear = torch.nn.Linear(d_in, d_out)

        def forward(self, x):
            return 2 * self.linear(x)

    return Renamed


def test_a_class_with_a_given_method_outside_the_regions_is_not_attempted_until_a_region_is_written():
    class Course(torch.nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.proj = torch.nn.Linear(d_in, d_out)

        def forward(self, x):
            return self.double(self.proj(x))

        def double(self, y):  # outside the regions: the student edition keeps it whole
            return 2 * y

    class Stub(torch.nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            ...

        def forward(self, x): ...

        def double(self, y):  # outside the regions: the student edition keeps it whole
            return 2 * y

    class Started(Stub):
        def __init__(self, d_in, d_out):
            super().__init__(d_in, d_out)
            self.proj = torch.nn.Linear(d_in, d_out)

        def forward(self, x): ...

        def double(self, y):
            return 2 * y

    class Changed(Stub):
        def __init__(self, d_in, d_out): ...

        def forward(self, x): ...

        def double(self, y):
            return 3 * y

    exercise = Exercise(
        id="98.given_method", section="s", make_cases=_module_cases, reference=Course, driver=cases.run_module
    )
    assert runner.is_stub(Stub, Course) and not runner.is_stub(Stub)
    assert engine.judge(exercise, Stub).status == "not_attempted"
    assert not runner.is_stub(Started, Course)
    assert not runner.is_stub(Changed, Course)
