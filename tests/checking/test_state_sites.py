"""Running state and loops over tiles, varied by the engine (``course_utils/checking/state_sites.py``).

Each answer below was generic before the sites existed (a factor left out, a stale or early value, a guarded
inverted rescale, a tile loop one tile short, the state restarted in the inner loop, the square root of the tile
size): each test fails without ``state_sites`` registered in ``mutations``.
"""

from __future__ import annotations

import ast
import math

import numpy as np

from course_utils.checking import engine, mutations, registry, state_sites


def _judge(exercise_id, answer):
    return engine.judge(registry.get(exercise_id), answer)


def _kinds(source):
    return [key for key, *_ in state_sites.state_sites(ast.parse(source))]


# ---- the sites themselves -----------------------------------------------------------------------------------------


def test_each_kind_of_site_is_found_where_its_step_is():
    source = """
def f(m, x, n, block, d):
    m_new = max(m, x)
    out = 0
    for i in range(0, n, block):
        s = 0
        for j in range(0, n, block):
            s = s + x * math.exp(m - m_new) / math.sqrt(d)
        out = out + s
    return m_new, out
"""
    kinds = _kinds(source)
    for kind in (
        "factor:dropped",
        "state:stale",
        "state:early",
        "sub:swapped",
        "scale:other_size",
        "range:tile_short",
        "range:whole_tiles",
        "loop:state_restarted",
        "loop:state_once",
    ):
        assert kind in kinds, kind


def test_constants_and_plain_ranges_give_no_site():
    assert _kinds("def f(x, n):\n    return [2 * x for i in range(n)]\n") == []


def test_the_sites_are_mutations_of_every_exercise():
    tree = mutations._function_tree(registry.get("06.flash_step").reference)
    keys = [key for key, *_ in mutations._all_sites(tree)]
    assert "factor:dropped" in keys and "state:stale" in keys


# ---- named in a check -----------------------------------------------------------------------------------------------


def test_an_accumulator_not_rescaled_is_a_factor_left_out():
    def flash_step(m, l, acc, scores, v_tile):
        top = np.maximum(m, scores.max(axis=1, keepdims=True))
        e = np.exp(scores - top)
        shrink = np.exp(m - top)
        return top, shrink * l + e.sum(axis=1, keepdims=True), acc + e @ v_tile

    verdict = _judge("06.flash_step", flash_step)
    assert verdict.status == "wrong" and verdict.relation == "mutant:factor:dropped", verdict.detail
    assert "factor of a product left out" in verdict.detail


def test_the_old_maximum_handed_back_is_a_stale_value():
    def flash_step(m, l, acc, scores, v_tile):
        top = np.maximum(m, scores.max(axis=1, keepdims=True))
        e = np.exp(scores - top)
        shrink = np.exp(m - top)
        return m, shrink * l + e.sum(axis=1, keepdims=True), shrink * acc + e @ v_tile

    verdict = _judge("06.flash_step", flash_step)
    assert verdict.relation == "mutant:state:stale", verdict.detail


def test_a_guarded_inverted_rescale_is_a_difference_the_other_way_round():
    def online_update(m, l, block):
        top = max(m, float(np.max(block)))
        grow = math.exp(top - m) if l > 0 else 0.0
        return top, l * grow + float(np.exp(np.asarray(block) - top).sum())

    verdict = _judge("06.online_update", online_update)
    assert verdict.relation == "mutant:sub:swapped", verdict.detail


def _tiled(stop_q, restart=False, scale="q.shape[1]"):
    def tiled_attention(q, k, v, block):
        out = np.zeros((len(q), v.shape[1]))
        for qs in range(0, stop_q(len(q), block), block):
            rows = q[qs : qs + block]
            m, l, acc = np.full((len(rows), 1), -np.inf), np.zeros((len(rows), 1)), np.zeros((len(rows), v.shape[1]))
            for ks in range(0, len(k), block):
                if restart:
                    m, l = np.full((len(rows), 1), -np.inf), np.zeros((len(rows), 1))
                    acc = np.zeros((len(rows), v.shape[1]))
                d = {"q.shape[1]": q.shape[1], "block": block}[scale]
                s = rows @ k[ks : ks + block].T / math.sqrt(d)
                top = np.maximum(m, s.max(axis=1, keepdims=True))
                e, shrink = np.exp(s - top), np.exp(m - top)
                m, l, acc = top, l * shrink + e.sum(axis=1, keepdims=True), acc * shrink + e @ v[ks : ks + block]
            out[qs : qs + block] = acc / l
        return out

    return tiled_attention


def test_a_query_loop_one_tile_short_is_named():
    verdict = _judge("06.tiled_attention", _tiled(lambda n, b: n - b))
    assert verdict.relation == "mutant:range:tile_short", verdict.detail


def test_the_state_restarted_for_every_key_tile_is_named():
    verdict = _judge("06.tiled_attention", _tiled(lambda n, b: n, restart=True))
    assert verdict.relation == "mutant:loop:state_restarted", verdict.detail


def test_the_square_root_of_the_tile_size_is_another_size():
    verdict = _judge("06.tiled_attention", _tiled(lambda n, b: n, scale="block"))
    assert verdict.relation == "mutant:scale:other_size", verdict.detail


def test_the_right_tiled_pass_still_passes():
    verdict = _judge("06.tiled_attention", _tiled(lambda n, b: n))
    assert verdict.status == "passed", verdict.detail
