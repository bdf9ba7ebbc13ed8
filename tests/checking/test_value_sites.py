"""Which values go where, and one mistake made everywhere (``value_sites.py``, ``repeated_sites.py``, through
``more_sites.py``).

Each answer below was generic before these sites existed: role scores averaged over the heads in all three
measures, weights read with their indices swapped in every lookup.
Each named test fails without ``more_sites`` registered in ``mutations``.
"""

from __future__ import annotations

import ast

import numpy as np

from course_utils.checking import engine, more_sites, registry, repeated_sites, value_sites


def _judge(exercise_id, answer):
    return engine.judge(registry.get(exercise_id), answer)


def _keys(module_sites, source):
    return [key for key, *_ in module_sites(ast.parse(source))]


def test_each_kind_of_value_site_is_found_where_its_step_is():
    source = """
def f(w, tokens, model):
    positions = np.arange(tokens.shape[1])
    x = model.embed(positions) + w[:, :, 1:, 0]
    return x.mean(axis=(0, 2))
"""
    keys = _keys(value_sites.value_sites, source)
    for kind in ("index:swapped", "axis:tuple", "positions:from_one", "positions:reversed", "argument:other"):
        assert kind in keys, kind
    assert "sum:product" in keys


def test_repeated_sites_need_the_step_at_two_places_at_least():
    once = "def f(w, b):\n    return w[:, 0, 1].mean(axis=(0, 2)) * b\n"
    assert _keys(repeated_sites.repeated_sites, once) == []
    twice = "def f(w, x, b):\n    return (w[:, 0, 1] * b).mean(axis=(0, 2)), (w[:, 1, 2] * b).mean(axis=(0, 2))\n"
    assert set(_keys(repeated_sites.repeated_sites, twice)) == {
        "factor:dropped_everywhere",
        "axis:tuple_everywhere",
        "index:swapped_everywhere",
    }


def test_a_variation_everywhere_replaces_every_place_and_only_those():
    tree = ast.parse("def f(a, b, c):\n    return a * c, b * c, a * b\n")
    sites = [s for s in repeated_sites.repeated_sites(tree) if s[0] == "factor:dropped_everywhere"]
    sources = {ast.unparse(new) for *_, (_, new) in sites}
    assert "def f(a, b, c):\n    return (a, b, a * b)" in sources


def test_more_sites_lists_every_added_kind():
    source = "def f(m, x, n, block):\n    for i in range(0, n, block):\n        m = m * x\n    return 2 * m\n"
    keys = _keys(more_sites.more_sites, source)
    assert "factor:dropped" in keys and "count:multiplier_minus_one" in keys and "range:tile_short" in keys


def _role_scores(axes=(0, 2), swap=False):
    def role_scores(weights):
        w = np.asarray(weights, dtype=float)
        i = np.arange(1, w.shape[-1])
        j = np.arange(w.shape[-1])
        if swap:
            return (
                w[:, :, i - 1, i].mean(axis=axes),
                w[:, :, 0, 1:].mean(axis=axes),
                w[:, :, j, j].mean(axis=axes),
            )
        return w[:, :, i, i - 1].mean(axis=axes), w[:, :, 1:, 0].mean(axis=axes), w[:, :, j, j].mean(axis=axes)

    return role_scores


def test_every_role_score_averaged_over_the_heads_is_named():
    verdict = _judge("05.role_scores", _role_scores(axes=(1, 2)))
    assert verdict.status == "wrong" and verdict.relation == "mutant:axis:tuple_everywhere", verdict.detail


def test_every_lookup_with_its_indices_swapped_is_named():
    verdict = _judge("05.role_scores", _role_scores(swap=True))
    assert verdict.relation in ("mutant:index:swapped_everywhere", "mutant:index:swapped"), verdict.detail


def test_the_right_role_scores_still_pass():
    assert _judge("05.role_scores", _role_scores()).status == "passed"


def _causal(offset=True, fill=-np.inf):
    def causal_tiled_attention(q, k, v, block):
        out = np.zeros((len(q), v.shape[1]))
        for qs in range(0, len(q), block):
            rows = q[qs : qs + block]
            m, l, acc = np.full((len(rows), 1), -np.inf), np.zeros((len(rows), 1)), np.zeros((len(rows), v.shape[1]))
            for ks in range(0, qs + len(rows), block):
                s = rows @ k[ks : ks + block].T / np.sqrt(q.shape[1])
                seen = np.arange(ks, ks + s.shape[1])[None, :] <= np.arange(qs, qs + len(rows))[:, None]
                if not offset:
                    seen = np.arange(s.shape[1])[None, :] <= np.arange(len(rows))[:, None]
                s = np.where(seen, s, fill)
                top = np.maximum(m, s.max(axis=1, keepdims=True))
                e, shrink = np.exp(s - top), np.exp(m - top)
                m, l, acc = top, l * shrink + e.sum(axis=1, keepdims=True), acc * shrink + e @ v[ks : ks + block]
            out[qs : qs + block] = acc / l
        return out

    return causal_tiled_attention


def test_a_mask_counted_inside_each_tile_is_the_triangle_offset_left_out():
    verdict = _judge("06.causal_tiled_attention", _causal(offset=False))
    assert verdict.relation == "mutant:diagonal:offset_dropped", verdict.detail


def test_future_scores_set_to_zero_are_a_zero_fill():
    verdict = _judge("06.causal_tiled_attention", _causal(fill=0.0))
    assert verdict.relation == "mutant:fill:zero", verdict.detail


def test_the_right_causal_pass_still_passes():
    assert _judge("06.causal_tiled_attention", _causal()).status == "passed"
