"""The exercise checker on right, wrong, crashing and unattempted answers, and the assertion helpers."""

import numpy as np
import pytest
import torch

from course_utils import checks


def reference(x):
    return x * 2


CASES = [(np.arange(3.0),), (np.ones((2, 2)),)]


def test_right_answer_passes(capsys):
    assert checks.check_exercise(lambda x: x + x, reference, CASES, name="double") is True
    assert capsys.readouterr().out.strip() == "✅ double: all 2 cases passed."


def test_wrong_answer_names_case_and_first_difference(capsys):
    assert checks.check_exercise(lambda x: x * 3, reference, CASES, name="double") is False
    out = capsys.readouterr().out
    assert "❌ double: case 1 of 2 is wrong" in out
    assert "first at index (1,): expected 2, got 3" in out


def test_wrong_only_in_second_case(capsys):
    student = lambda x: x * 2 if x.ndim == 1 else x  # noqa: E731
    assert not checks.check_exercise(student, reference, CASES, name="double")
    assert "case 2 of 2" in capsys.readouterr().out


def test_shape_mismatch_is_reported(capsys):
    assert not checks.check_exercise(lambda x: (x * 2).T[None], reference, CASES, name="double")
    assert "expected shape (3,) but got shape (1, 3)" in capsys.readouterr().out


def test_crash_is_reported_not_raised(capsys):
    def student(x):
        return x[10]

    assert not checks.check_exercise(student, reference, CASES, name="double")
    out = capsys.readouterr().out
    assert "💥 double: case 1 of 2 crashed with IndexError" in out
    assert "return x[10]" in out


@pytest.mark.parametrize("stub_result", ["raise", None, Ellipsis])
def test_unattempted(capsys, stub_result):
    def student(x):
        if stub_result == "raise":
            raise NotImplementedError
        return stub_result

    assert not checks.check_exercise(student, reference, CASES, name="double")
    assert "⏳ double: not attempted yet" in capsys.readouterr().out


def test_nan_is_reported(capsys):
    assert not checks.check_exercise(lambda x: x * np.nan, reference, CASES, name="double")
    assert "contains NaN" in capsys.readouterr().out


def test_wrong_type_is_reported(capsys):
    assert not checks.check_exercise(lambda x: "twice", reference, CASES, name="double")
    assert "expected ndarray of shape (3,) but got str" in capsys.readouterr().out


def test_tensor_expected_numpy_given(capsys):
    assert not checks.check_exercise(lambda t: (t * 2).numpy(), lambda t: t * 2, [(torch.ones(2),)], name="t")
    assert "expected a torch.Tensor" in capsys.readouterr().out


def test_tuple_results_and_bool_masks(capsys):
    ref = lambda n: (torch.tril(torch.ones(n, n, dtype=torch.bool)), n)  # noqa: E731
    good = lambda n: (torch.ones(n, n, dtype=torch.bool).tril(), n)  # noqa: E731
    bad = lambda n: (torch.ones(n, n).tril(), n)  # noqa: E731  float, not bool
    assert checks.check_exercise(good, ref, [(3,), (4,)], name="mask")
    assert not checks.check_exercise(bad, ref, [(3,)], name="mask")
    assert "expected dtype bool but got dtype float32" in capsys.readouterr().out


def test_student_cannot_mutate_the_reference_input():
    def student(x):
        x[:] = 0
        return x * 2

    assert not checks.check_exercise(student, reference, [(np.arange(3.0),)], name="mutate")


@pytest.mark.parametrize(
    "student",
    [lambda x: x * 3, lambda x: x[10], lambda x: None],
    ids=["wrong", "crash", "unattempted"],
)
def test_strict_raises(student):
    with pytest.raises(AssertionError):
        checks.check_exercise(student, reference, CASES, name="double", strict=True)


def test_strict_passes_silently_on_right_answer():
    assert checks.check_exercise(reference, reference, CASES, name="double", strict=True)


def test_empty_cases_is_an_error():
    with pytest.raises(ValueError, match="cases"):
        checks.check_exercise(reference, reference, [], name="double")


def test_assert_shape():
    x = np.zeros((2, 3))
    assert checks.assert_shape(x, (2, None), name="weights") is x
    with pytest.raises(AssertionError, match=r"weights has shape \(2, 3\) but expected \(2, 4\)"):
        checks.assert_shape(x, (2, 4), name="weights")
    with pytest.raises(AssertionError, match=r"expected \(\*, 3, 1\)"):
        checks.assert_shape(x, (None, 3, 1))


def test_assert_close():
    checks.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-9]))
    with pytest.raises(AssertionError, match=r"out: 1 of 2 entries differ; first at index \(1,\): expected 2, got 2.5"):
        checks.assert_close(np.array([1.0, 2.5]), np.array([1.0, 2.0]), name="out")
