"""Counts and costs, varied by the engine (``course_utils/checking/count_sites.py``).

Each count below was generic before the sites existed (a projection counted once too few, a term counted once
where it is needed twice, the number of tiles rounded down, the cached and uncached counts swapped): each test
fails without ``count_sites`` registered in ``mutations``.
"""

from __future__ import annotations

import ast
import math

from course_utils.checking import count_sites, engine, mutations, registry


def _judge(exercise_id, answer):
    return engine.judge(registry.get(exercise_id), answer)


def _kinds(source):
    return [key for key, *_ in count_sites.count_sites(ast.parse(source))]


def test_each_kind_of_site_is_found_where_its_step_is():
    source = """
def f(n, d, m, b, flag):
    rows = m // b
    if flag:
        return 3 * n * d
    return 4 * n * math.ceil(n / rows)
"""
    kinds = _kinds(source)
    for kind in (
        "count:multiplier_minus_one",
        "count:multiplier_plus_one",
        "count:multiplier_halved",
        "count:floor",
        "count:division_left_out",
        "count:cases_swapped",
    ):
        assert kind in kinds, kind


def test_sizes_and_floats_are_not_multipliers():
    assert not [k for k in _kinds("def f(x):\n    return 1000 * x + 0.5 * x + x * x\n") if "multiplier" in k]


def test_the_sites_are_mutations_of_every_exercise():
    tree = mutations._function_tree(registry.get("06.decode_flops").reference)
    assert "count:cases_swapped" in [key for key, *_ in mutations._all_sites(tree)]


def test_a_projection_left_out_of_a_count_is_a_term_counted_once_too_few():
    def decode_flops(prefix_len, d_model, d_head, cached):
        attend = 4 * prefix_len * d_head
        if cached:
            return 2 * (2 * d_model * d_head) + attend  # the key and the value, but no query
        return 2 * d_model * d_head + 4 * prefix_len * d_model * d_head + attend

    verdict = _judge("06.decode_flops", decode_flops)
    assert verdict.status == "wrong" and verdict.relation == "mutant:count:multiplier_minus_one", verdict.detail
    assert "one time too few" in verdict.detail


def test_the_two_counts_swapped_are_the_cases_of_a_condition_swapped():
    def decode_flops(prefix_len, d_model, d_head, cached):
        attend = 4 * prefix_len * d_head
        if not cached:
            return 6 * d_model * d_head + attend
        return 2 * d_model * d_head + 4 * prefix_len * d_model * d_head + attend

    verdict = _judge("06.decode_flops", decode_flops)
    assert verdict.relation == "mutant:count:cases_swapped", verdict.detail


def test_query_tiles_rounded_down_is_named():
    def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
        values = sram_bytes // bytes_per_value
        rows = math.isqrt(4 * d_head**2 + values) - 2 * d_head
        standard = 4 * seq_len * d_head + 4 * seq_len**2
        tiled = 2 * seq_len * d_head * (1 + seq_len // rows)
        return standard * bytes_per_value, tiled * bytes_per_value

    verdict = _judge("06.io_bytes", io_bytes)
    assert verdict.relation == "mutant:count:floor", verdict.detail


def _decode(query_per_position=False, shift=0):
    def decode_flops(prefix_len, d_model, d_head, cached):
        n = prefix_len + shift
        query = 2 * d_model * d_head
        attend = 4 * n * d_head
        if cached:
            return query + 4 * d_model * d_head + attend
        return query * (n if query_per_position else 1) + 4 * n * d_model * d_head + attend

    return decode_flops


def test_a_query_projected_for_every_position_is_a_term_counted_per_size():
    verdict = _judge("06.decode_flops", _decode(query_per_position=True))
    assert verdict.relation == "mutant:count:term_per_size", verdict.detail


def test_a_prefix_one_token_short_is_a_size_one_smaller_everywhere():
    verdict = _judge("06.decode_flops", _decode(shift=-1))
    assert verdict.relation == "mutant:count:size_minus_one", verdict.detail


def test_the_right_count_still_passes_and_arrays_get_no_count_sites():
    assert _judge("06.decode_flops", _decode()).status == "passed"
    array_code = "def f(q, n):\n    return 2 * q.shape[0] * n + 1 * n\n"
    assert not [k for k in _kinds(array_code) if k in ("count:term_per_size", "count:size_minus_one")]


def test_an_if_that_guards_an_option_gets_no_swapped_cases():
    source = "def f(q, mask, n):\n    if mask is not None:\n        q = q[mask]\n    return q * n + n\n"
    assert "count:cases_swapped" not in _kinds(source)


def test_only_sizes_the_function_counts_with_are_shifted():
    source = "def f(lengths, seq_len):\n    return helper(lengths, seq_len) & other(seq_len)\n"
    assert not [k for k in _kinds(source) if k.startswith("count:size_")]
    assert "count:size_minus_one" in _kinds("def f(n, d):\n    return [d for _ in range(n)]\n")
