"""A crash is named when its message says the cause in words (``crash_site.CAUSES``): round 4 adds NumPy's
``np.dot`` alignment error, einsum subscripts that do not describe the arrays, and arithmetic on a bool mask."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_utils.checking import crash_site, engine, registry


def _raised(make):
    try:
        make()
    except Exception as exc:  # the crash the answer would make
        return exc
    raise AssertionError("no crash")


@pytest.mark.parametrize(
    ("make", "key", "words"),
    [
        (lambda: np.dot(np.ones((3, 2)), np.ones((4, 2))), "matmul_shapes", "(3,2) times (4,2): 2 and 4"),
        (lambda: np.einsum("...qd,...kd->qk", np.ones((2, 3, 6)), np.ones((2, 5, 6))), "einsum_subscripts", "output"),
        (lambda: np.einsum("qd,kd->qk", np.ones((2, 3, 6)), np.ones((2, 5, 6))), "einsum_subscripts", "operand"),
        (lambda: np.einsum("qd,kd->qk", np.ones((3, 6)), np.ones((5, 4))), "einsum_subscripts", "same size"),
        (lambda: torch.einsum("qd,kd->qk", torch.ones(2, 3, 6), torch.ones(2, 5, 6)), "einsum_subscripts", "2 axes"),
        (lambda: torch.einsum("qd,kd->qk", torch.ones(3, 6), torch.ones(5, 4)), "einsum_subscripts", "same size"),
        (lambda: 1 - torch.ones(3, dtype=torch.bool), "bool_arithmetic", "bool mask"),
    ],
)
def test_the_crash_is_said_in_words(make, key, words):
    found = crash_site.cause(_raised(make))
    assert found is not None and found[0] == key and words in found[1], found


def test_a_product_without_the_transpose_is_a_named_crash():
    def dot_scores(q, k):
        return np.dot(q, k)  # (q_len, d) . (k_len, d): the keys not transposed

    verdict = engine.judge(registry.get("00.dot_scores"), dot_scores)
    assert verdict.status == "crashed" and verdict.relation == "crash:matmul_shapes", verdict
    assert "What went wrong: a matrix product whose inner sizes do not agree" in verdict.detail
