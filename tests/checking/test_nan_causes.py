"""A NaN on every failing case is named by what made it (``course_utils/checking/nan_causes.py``): the answer is
run once more with every operation watched, and one cause must explain each failing case."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_utils.checking import engine, nan_causes, registry


def _judge(exercise_id, answer):
    return engine.judge(registry.get(exercise_id), answer)


def test_numpy_errors_say_the_cause():
    assert nan_causes.numpy_cause("overflow encountered in exp") == "exp_overflow"
    assert nan_causes.numpy_cause("invalid value encountered in divide") == "normalised_all_zero"
    assert nan_causes.numpy_cause("invalid value encountered in subtract") == "masked_row_shifted"
    assert nan_causes.numpy_cause("overflow encountered in multiply") is None  # no exp: no cause named


def _min_shift(x, axis=-1):
    e = np.exp(x - x.min(axis=axis, keepdims=True))  # the smallest score at 0: the others overflow
    return e / e.sum(axis=axis, keepdims=True)


def _log_mask(scores, mask):
    return torch.softmax(scores + torch.log(mask.float()), dim=-1)  # a row with no key: softmax of -inf only


def _renormalised(scores, mask):
    weights = torch.softmax(scores, dim=-1) * mask
    return weights / weights.sum(dim=-1, keepdim=True)  # a row with no key: 0 / 0


@pytest.mark.parametrize(
    ("exercise_id", "answer", "cause"),
    [
        ("01.softmax_along", _min_shift, "exp_overflow"),
        ("02.masked_softmax", _log_mask, "softmax_all_masked"),
        ("02.masked_softmax", _renormalised, "normalised_all_zero"),
    ],
)
def test_a_nan_on_every_failing_case_is_named_by_its_cause(exercise_id, answer, cause):
    verdict = _judge(exercise_id, answer)
    assert verdict.status == "wrong" and verdict.relation == f"nan:{cause}", verdict
    assert "What made it: " + nan_causes.CAUSES[cause] in verdict.detail


def test_a_nan_on_some_failing_cases_only_is_not_named():
    def axis_zero_max(x, axis=-1):
        e = np.exp(x - x.max(axis=0, keepdims=True))  # right for axis 0; NaN or wrong values elsewhere
        return e / e.sum(axis=axis, keepdims=True)

    verdict = _judge("01.softmax_along", axis_zero_max)
    assert verdict.status == "wrong" and not (verdict.relation or "").startswith("nan:")


def test_a_nan_replaced_in_the_forward_pass_is_said_to_reach_the_gradient():
    def masked_softmax(scores, mask):
        bias = torch.zeros(mask.shape).masked_fill(~mask, float("-inf"))  # an additive mask
        weights = torch.softmax(scores + bias, dim=-1)
        return torch.nan_to_num(weights)  # zeros forward; the NaN of an empty row flows back through the sum

    verdict = _judge("02.masked_softmax", masked_softmax)
    assert verdict.relation == "nan:softmax_all_masked", verdict
    assert "Your forward result has no NaN" in verdict.detail
    assert "Your forward result" not in _judge("02.masked_softmax", _log_mask).detail  # its weights have NaN


def test_memory_not_yet_written_is_no_nan_made():
    with nan_causes.watch_torch() as found:
        buffer = torch.full((2,), float("nan"))  # what torch.empty may hold before a module initialises it
        buffer.copy_(torch.ones(2))
        exp = torch.exp(torch.tensor([1000.0, 1.0]))
        _ = exp / exp.sum()  # inf / inf
    assert found == ["exp_overflow"]
