"""Lesson 06's exercises: the plausible wrong answers a student writes are named or refused, right ones pass.

The audit (tests/checking/test_exercise_audit.py) already runs the declared variants and buggy versions; these tests
write the answers the way a student would (not copies of the module's functions), including the holes the
2026-11-24 read-through found: dividing by the running sum at every tile, a "KV cache" that re-projects the
prefix, and course helpers that compute the answer.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from course_utils import efficient
from course_utils.checking import engine, handed_back, registry
from course_utils.checking.predictions import judge_prediction


def _judge(eid, answer):
    with handed_back.as_in_a_fresh_kernel():
        return engine.judge(registry.get(eid), answer)


def _prediction(pid):
    from course_utils.lessons.lesson_06 import exercises as lesson_06

    return next(p for p in lesson_06.PREDICTIONS if p.id == pid)


# ---- the online update and one tile ------------------------------------------------------------------------------
def test_online_update_written_by_a_student_passes_and_the_inverted_rescale_is_named():
    def online_update(m, l, block):
        new_max = max(m, np.max(block))
        return float(new_max), float(l * np.exp(m - new_max) + np.sum(np.exp(block - new_max)))

    assert _judge("06.online_update", online_update).status == "passed"

    def inverted(m, l, block):
        new_max = max(m, np.max(block))
        with np.errstate(over="ignore", invalid="ignore"):
            return float(new_max), float(l * np.exp(new_max - m) + np.sum(np.exp(block - new_max)))

    assert _judge("06.online_update", inverted).misconception == "online_rescale_inverted"


def test_online_update_through_the_course_helper_is_refused():
    verdict = _judge("06.online_update", lambda m, l, block: efficient.online_update(m, l, block))
    assert verdict.status == "wrong" and verdict.helper is not None


def test_flash_step_dividing_by_the_running_sum_per_tile_is_named():
    def flash_step(m, l, acc, scores, v_tile):
        m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
        p = np.exp(scores - m_new)
        l_new = l * np.exp(m - m_new) + p.sum(axis=1, keepdims=True)
        acc_new = (acc * np.exp(m - m_new) + p @ v_tile) / l_new  # "normalise as I go"
        return m_new, l_new, acc_new

    verdict = _judge("06.flash_step", flash_step)
    assert verdict.status == "wrong" and verdict.misconception == "flash_divides_by_running_sum"
    assert "divided by the running sum" in verdict.detail


def test_flash_step_through_the_course_helper_is_refused():
    verdict = _judge("06.flash_step", lambda m, l, acc, s, v: efficient.flash_step(m, l, acc, s, v))
    assert verdict.status == "wrong" and verdict.helper is not None


# ---- the tiled pass ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "answer",
    [
        lambda q, k, v, block: efficient.tiled_attention(q, k, v, q_block=block, k_block=block),
        lambda q, k, v, block: efficient.naive_attention(q, k, v),
    ],
    ids=["efficient.tiled_attention", "efficient.naive_attention"],
)
def test_tiled_attention_through_a_course_helper_is_refused(answer):
    verdict = _judge("06.tiled_attention", answer)
    assert verdict.status == "wrong" and verdict.helper is not None


def test_tiled_attention_without_the_final_division_is_named():
    from course_utils.lessons.lesson_06.tiling import flash_step

    def tiled_attention(q, k, v, block):
        out = np.zeros((len(q), v.shape[1]))
        for i in range(0, len(q), block):
            rows = len(q[i : i + block])
            m, l, acc = np.full((rows, 1), -np.inf), np.zeros((rows, 1)), np.zeros((rows, v.shape[1]))
            for j in range(0, len(k), block):
                s = q[i : i + block] @ k[j : j + block].T / np.sqrt(q.shape[1])
                m, l, acc = flash_step(m, l, acc, s, v[j : j + block])
            out[i : i + block] = acc
        return out

    assert _judge("06.tiled_attention", tiled_attention).misconception == "tiled_no_final_division"


def test_causal_tiled_pass_with_whole_diagonal_tiles_is_named():
    from course_utils.lessons.lesson_06.tiling import flash_step

    def causal_tiled_attention(q, k, v, block):
        out = np.zeros((len(q), v.shape[1]))
        for i in range(0, len(q), block):
            rows = len(q[i : i + block])
            m, l, acc = np.full((rows, 1), -np.inf), np.zeros((rows, 1)), np.zeros((rows, v.shape[1]))
            for j in range(0, i + rows, block):  # future tiles skipped, nothing masked inside a tile
                s = q[i : i + block] @ k[j : j + block].T / np.sqrt(q.shape[1])
                m, l, acc = flash_step(m, l, acc, s, v[j : j + block])
            out[i : i + block] = acc / l
        return out

    assert _judge("06.causal_tiled_attention", causal_tiled_attention).misconception == (
        "tiled_causal_diagonal_unmasked"
    )


# ---- counts -----------------------------------------------------------------------------------------------------
def test_io_bytes_with_k_and_v_read_once_is_named_and_the_tiled_helper_is_refused():
    def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
        n, d = seq_len, d_head
        return (4 * n * d + 4 * n * n) * bytes_per_value, 4 * n * d * bytes_per_value

    assert _judge("06.io_bytes", io_bytes).misconception == "io_kv_read_once"

    def delegating(seq_len, d_head, sram_bytes, bytes_per_value):
        standard = (4 * seq_len * d_head + 4 * seq_len**2) * bytes_per_value
        return standard, efficient.hbm_bytes_tiled(seq_len, d_head, sram_bytes, bytes_per_value)

    verdict = _judge("06.io_bytes", delegating)
    assert verdict.status == "wrong" and "hbm_bytes_tiled" in verdict.detail


def test_decode_flops_without_the_core_is_named():
    def decode_flops(prefix_len, d_model, d_head, cached):
        positions = 1 if cached else prefix_len
        return 2 * d_model * d_head + 4 * positions * d_model * d_head

    assert _judge("06.decode_flops", decode_flops).misconception == "decode_flops_no_core"


# ---- the KV cache -----------------------------------------------------------------------------------------------
def test_a_cache_that_reprojects_the_whole_prefix_is_refused():
    """The step keeps the raw tokens on the side and projects all of them again: right outputs, no cache."""
    seen: list = []

    def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
        if len(k_cache) == 0:
            seen.clear()
        seen.append(x_t)
        prefix = np.stack(seen)  # (t + 1, d_model)
        keys, values = prefix @ w_k, prefix @ w_v  # every position again
        query = x_t @ w_q
        scores = keys @ query / math.sqrt(len(query))
        weights = np.exp(scores - scores.max())
        return weights @ values / weights.sum(), keys, values

    verdict = _judge("06.kv_cache_step", kv_cache_step)
    assert verdict.status != "passed"
    assert "projects only the new token" in verdict.detail


def test_kv_cache_bytes_counting_keys_only_is_named():
    def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
        return batch * layers * heads * d_head * seq_len * bytes_per_value

    assert _judge("06.kv_cache_bytes", kv_cache_bytes).misconception == "kv_cache_keys_only"


# ---- predictions ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pid", "value", "status"),
    [
        ("06.core_slope", 2, "right"),
        ("06.core_slope", 1, "wrong"),
        ("06.core_slope", 2.5, "wrong"),
        ("06.many_heads_time", "Slower", "right"),
        ("06.many_heads_time", "the same", "wrong"),
        ("06.naive_memory_doubling", 4, "right"),
        ("06.naive_memory_doubling", 2, "wrong"),
    ],
)
def test_predictions(pid, value, status):
    verdict = judge_prediction(_prediction(pid), value)
    assert verdict.status == status, verdict.message
    named = {
        ("06.core_slope", 1): "the projections' slope",
        ("06.many_heads_time", "the same"): "what the FLOP count says",
        ("06.naive_memory_doubling", 2): "the (n, d_value) output",
    }
    if (pid, value) in named:
        assert named[pid, value] in verdict.message  # the wrong idea is said in words, not only a distance


def test_causal_tiled_pass_that_hides_the_diagonal_is_named():
    from course_utils.lessons.lesson_06.tiling import flash_step

    def causal_tiled_attention(q, k, v, block):
        n = len(q)
        out = np.empty((n, v.shape[1]))
        with np.errstate(invalid="ignore"):
            for a in range(0, n, block):
                b = min(a + block, n)
                m, l, acc = np.full((b - a, 1), -np.inf), np.zeros((b - a, 1)), np.zeros((b - a, v.shape[1]))
                for c in range(0, b, block):
                    d = min(c + block, n)
                    s = q[a:b] @ k[c:d].T / math.sqrt(q.shape[1])
                    hidden = np.arange(c, d)[None, :] >= np.arange(a, b)[:, None]  # >= where > was meant
                    m, l, acc = flash_step(m, l, acc, np.where(hidden, -np.inf, s), v[c:d])
                out[a:b] = acc / l
        return out

    assert _judge("06.causal_tiled_attention", causal_tiled_attention).misconception == "causal_no_diagonal"


def test_io_bytes_without_room_for_the_score_tile_is_named():
    """Tiles of M / 4d rows (the score tile left out, review N-4) are a named mistake, not 'K and V read once'."""

    def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
        n, d = seq_len, d_head
        rows = sram_bytes // (4 * d * bytes_per_value)
        return (4 * n * d + 4 * n * n) * bytes_per_value, 2 * n * d * (1 + math.ceil(n / rows)) * bytes_per_value

    assert _judge("06.io_bytes", io_bytes).misconception == "io_no_score_tile"
