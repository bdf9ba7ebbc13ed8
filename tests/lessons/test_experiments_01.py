"""Lesson 01's experiments (course_utils.lessons.lesson_01.experiments): deterministic, plug-in ready, and what its claims read.

The full claims over seeds 0-4 run in benchmarks/claims.py (``--only 01.``); here small sizes keep each test short.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from course_utils import numpy_attention
from course_utils.lessons.lesson_01 import experiments as experiments

SMALL = {"d_heads": (1, 16, 256), "n_queries": 300}


def test_row_distance_and_output_cos_at_their_ends():
    same = np.tile([[0.2, 0.3, 0.5]], (4, 1))
    disjoint = np.eye(3)
    assert experiments.row_distance(same) == 0.0 and experiments.row_distance(disjoint) == 1.0
    assert experiments.output_cos(np.array([[1.0, 2.0], [2.0, 4.0]])) == pytest.approx(1.0)
    assert experiments.output_cos(np.array([[1.0, 0.0], [0.0, 3.0]])) == pytest.approx(0.0)


def test_score_scaling_is_deterministic_for_a_seed_and_changes_with_it():
    a, b = experiments.score_scaling(0, **SMALL), experiments.score_scaling(0, **SMALL)
    assert a == b
    assert experiments.score_scaling(1, **SMALL).var_raw != a.var_raw


def test_score_scaling_measures_what_the_lesson_prints():
    s = experiments.score_scaling(0, **SMALL)
    assert s.d_heads == (1, 16, 256)
    for d, raw, scaled in zip(s.d_heads, s.var_raw, s.var_scaled, strict=True):
        assert raw / d == pytest.approx(scaled)  # dividing by sqrt(d) divides the variance by d
        assert abs(scaled - 1) < 0.25
    assert s.max_weight_unscaled[-1] > s.max_weight_scaled[-1]
    assert s.sensitivity_unscaled[-1] < s.sensitivity_scaled[-1]
    assert json.loads(json.dumps(s.measured)) == s.measured
    assert s.measured["max_weight_scaled"] == [round(v, 4) for v in s.max_weight_scaled]


def test_score_scaling_runs_on_a_plugged_in_softmax():
    def student_softmax(x, axis=-1):  # a correct softmax written another way
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    ours = experiments.score_scaling(0, **SMALL)
    theirs = experiments.score_scaling(0, **SMALL, softmax=student_softmax)
    assert np.allclose(ours.sensitivity_unscaled, theirs.sensitivity_unscaled)


def test_init_setups_shows_the_shared_mean_and_its_control():
    table = experiments.init_setups(0, n_draws=5)
    assert list(table) == list(experiments.INIT_SETUPS)
    assert all(list(row) == list(experiments.INIT_COLUMNS) for row in table.values())
    bad, control = table["X ~ U[0,1), W ~ U[0,1)"], table["X, W ~ U[0,1) - 1/2"]
    assert bad["row distance"] < 0.02 and control["row distance"] > 0.15
    assert json.loads(json.dumps(table)) == table


def test_init_setups_runs_on_a_plugged_in_attend():
    calls = []

    def attend(Q, K, V):
        calls.append(Q.shape)
        return numpy_attention.scaled_dot_product_attention(Q, K, V)

    assert experiments.init_setups(0, n_draws=2, attend=attend) == experiments.init_setups(0, n_draws=2)
    assert calls == [(8, 64)] * 2 * len(experiments.INIT_SETUPS)


def test_the_claims_hold_on_the_lessons_seed():
    memo = {}

    def run(fn, *args, **kwargs):
        key = (fn, args, tuple(sorted(kwargs.items())))
        if key not in memo:
            memo[key] = fn(*args, **kwargs)
        return memo[key]

    names = [claim.name for claim in experiments.CLAIMS]
    assert names == ["01.score_variance", "01.saturation", "01.uniform_rows_alike"]
    for claim in experiments.CLAIMS:
        assert claim.lesson == "01" and claim.source.startswith("01 · ")
        values = claim.measure(0, run)
        assert json.loads(json.dumps(values)) == values
        assert claim.holds(values), claim.name
