"""Tests for course_utils.efficient: naive vs online softmax vs tiled (FlashAttention-style) attention."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils import efficient, masks, numpy_attention, timing
from course_utils.attention import MultiHeadAttention


def _random_case(seed, batch_shape, q_len, k_len, d_head, d_value):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(*batch_shape, q_len, d_head))
    k = rng.normal(size=(*batch_shape, k_len, d_head))
    v = rng.normal(size=(*batch_shape, k_len, d_value))
    return rng, q, k, v


def test_naive_matches_numpy_attention_with_mask():
    rng, q, k, v = _random_case(0, (2, 3), 7, 9, 4, 5)
    mask = rng.random((2, 1, 7, 9)) > 0.4
    expected, _ = numpy_attention.scaled_dot_product_attention(q, k, v, mask)
    np.testing.assert_allclose(efficient.naive_attention(q, k, v, mask), expected, rtol=0, atol=1e-12)


def test_causal_flag_matches_course_causal_mask():
    _, q, k, v = _random_case(1, (2,), 5, 8, 3, 3)
    causal = masks.make_causal_mask(5, 8).numpy()  # bottom-right aligned when k_len > q_len
    expected = efficient.naive_attention(q, k, v, mask=causal)
    np.testing.assert_allclose(efficient.naive_attention(q, k, v, causal=True), expected, rtol=0, atol=1e-15)
    tiled = efficient.tiled_attention(q, k, v, causal=True, q_block=2, k_block=3)
    np.testing.assert_allclose(tiled, expected, rtol=0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    batch_shape=st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple),
    q_len=st.integers(1, 17),
    extra_keys=st.integers(0, 9),
    d_head=st.integers(1, 6),
    d_value=st.integers(1, 6),
    q_block=st.integers(1, 20),
    k_block=st.integers(1, 20),
    mask_kind=st.sampled_from(["none", "random", "padding", "broadcast_row"]),
    causal=st.booleans(),
)
def test_tiled_equals_naive(seed, batch_shape, q_len, extra_keys, d_head, d_value, q_block, k_block, mask_kind, causal):
    k_len = q_len + extra_keys
    rng, q, k, v = _random_case(seed, batch_shape, q_len, k_len, d_head, d_value)
    if mask_kind == "random":
        mask = rng.random((*batch_shape, q_len, k_len)) > 0.5  # some rows end up fully masked
    elif mask_kind == "padding":
        mask = rng.random((*batch_shape, 1, k_len)) > 0.3
    elif mask_kind == "broadcast_row":
        mask = rng.random((q_len, 1)) > 0.2  # whole queries switched off
    else:
        mask = None
    expected = efficient.naive_attention(q, k, v, mask, causal=causal)
    got = efficient.tiled_attention(q, k, v, mask, causal=causal, q_block=q_block, k_block=k_block)
    assert got.shape == expected.shape == (*batch_shape, q_len, d_value)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_fully_masked_rows_are_zero_not_nan():
    _, q, k, v = _random_case(2, (), 4, 6, 3, 2)
    mask = np.ones((4, 6), dtype=bool)
    mask[1] = False
    for out in (efficient.naive_attention(q, k, v, mask), efficient.tiled_attention(q, k, v, mask, q_block=3)):
        assert np.all(np.isfinite(out))
        np.testing.assert_array_equal(out[1], 0.0)
        assert np.all(np.abs(out[[0, 2, 3]]).sum(-1) > 0)


def test_tiled_is_stable_for_huge_scores():
    q = np.full((3, 2), 300.0)
    k = np.array([[300.0, 300.0], [-300.0, 0.0], [299.0, 300.0]])
    v = np.eye(3)
    expected = efficient.naive_attention(q, k, v)
    got = efficient.tiled_attention(q, k, v, q_block=1, k_block=1)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_tiled_float32_keeps_dtype_and_matches():
    _, q, k, v = _random_case(3, (2,), 33, 40, 8, 8)
    q, k, v = (x.astype(np.float32) for x in (q, k, v))
    got = efficient.tiled_attention(q, k, v, q_block=16, k_block=16)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, efficient.naive_attention(q, k, v), rtol=1e-5, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    rows=st.integers(1, 4),
    k_len=st.integers(1, 30),
    block_size=st.integers(1, 35),
    scale=st.sampled_from([1.0, 30.0, 1e3]),
    masked_fraction=st.sampled_from([0.0, 0.5, 1.0]),
)
def test_online_softmax_equals_softmax(seed, rows, k_len, block_size, scale, masked_fraction):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, k_len)) * scale
    x[rng.random(x.shape) < masked_fraction] = -np.inf
    expected = numpy_attention.softmax(x)
    got = efficient.online_softmax(x, block_size=block_size)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    m, l = efficient.online_softmax_stats(x, block_size=block_size)
    np.testing.assert_array_equal(m[:, 0], x.max(axis=-1))
    finite = np.isfinite(m[:, 0])
    np.testing.assert_allclose(l[finite, 0], np.exp(x[finite] - m[finite]).sum(-1), rtol=1e-12)
    np.testing.assert_array_equal(l[~finite], 0.0)


def test_online_softmax_by_hand():
    # block [1, 2]: m = 2, l = e^-1 + 1; block [3]: m = 3, l = (e^-1 + 1) e^-1 + 1
    m, l = efficient.online_softmax_stats(np.array([1.0, 2.0, 3.0]), block_size=2)
    assert m.tolist() == [3.0]
    assert l[0] == pytest.approx(np.exp(-2) + np.exp(-1) + 1, rel=1e-15)


def test_tiled_uses_far_less_memory_than_naive():
    _, q, k, v = _random_case(4, (), 512, 512, 16, 16)
    naive_out, naive_peak = efficient.measure_peak_memory(efficient.naive_attention, q, k, v)
    tiled_out, tiled_peak = efficient.measure_peak_memory(efficient.tiled_attention, q, k, v, q_block=32, k_block=32)
    np.testing.assert_allclose(tiled_out, naive_out, rtol=0, atol=1e-12)
    assert naive_peak >= 512 * 512 * 8  # at least one float64 (q_len, k_len) matrix
    assert naive_peak > 10 * tiled_peak, (naive_peak, tiled_peak)


def test_measure_peak_memory_sees_numpy_and_restores_tracing():
    result, peak = efficient.measure_peak_memory(np.ones, (1000, 1000))
    assert result.shape == (1000, 1000)
    assert 8_000_000 <= peak < 9_000_000
    import tracemalloc

    assert not tracemalloc.is_tracing()


def test_flop_counts_and_crossover():
    flops = efficient.attention_flops(seq_len=10, d_model=4, batch=2)
    assert flops == {"projections": 2 * 8 * 10 * 16, "core": 2 * 4 * 100 * 4, "total": 2 * (1280 + 1600)}
    for d_model in (8, 64, 512):
        n = efficient.crossover_length(d_model)
        at = efficient.attention_flops(n, d_model)
        assert at["core"] == at["projections"]
        below, above = efficient.attention_flops(n // 2, d_model), efficient.attention_flops(2 * n, d_model)
        assert below["projections"] > below["core"] and above["core"] > above["projections"]


@pytest.mark.parametrize("num_heads", [1, 2, 8])
@pytest.mark.parametrize("bias", [True, False])
def test_param_count_matches_modules(num_heads, bias):
    d_model = 32
    expected = efficient.mha_param_count(d_model, num_heads, bias=bias)
    assert expected == 4 * d_model**2 + (4 * d_model if bias else 0)
    ours = MultiHeadAttention(d_model, num_heads, bias=bias)
    theirs = torch.nn.MultiheadAttention(d_model, num_heads, bias=bias, batch_first=True)
    assert sum(p.numel() for p in ours.parameters()) == expected
    assert sum(p.numel() for p in theirs.parameters()) == expected


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda q: efficient.tiled_attention(q, q, q, q_block=0), "q_block"),
        (lambda q: efficient.online_softmax(q, block_size=-1), "block_size"),
        (lambda q: efficient.naive_attention(q, q[:3], q[:3], causal=True), "k_len"),
        (lambda q: efficient.naive_attention(q, q, q[:, :2][:3]), "value"),
        (lambda q: efficient.tiled_attention(q, q, q, mask=np.ones((3, 4), dtype=bool)), "mask"),
        (lambda q: efficient.attention_flops(0, 8), "seq_len"),
        (lambda q: efficient.crossover_length(-1), "d_model"),
    ],
)
def test_bad_input_raises_value_error_naming_argument(call, message):
    q = np.zeros((4, 3))
    with pytest.raises(ValueError, match=message):
        call(q)


def test_non_int_block_is_type_error():
    q = np.zeros((4, 3))
    with pytest.raises(TypeError, match=r"k_block must be an int \(>= 1\) but is the float 2.5"):
        efficient.tiled_attention(q, q, q, k_block=2.5)


def test_float_mask_is_refused():
    q = np.zeros((2, 3))
    with pytest.raises(TypeError, match="boolean"):
        efficient.tiled_attention(q, q, q, mask=np.ones((2, 2)))


def test_module_needs_only_numpy():
    code = "import sys, course_utils.efficient; assert 'torch' not in sys.modules, 'efficient imported torch'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_loglog_slope_recovers_exponents():
    sizes = np.array([128, 256, 512, 1024])
    assert timing.loglog_slope(sizes, 3e-9 * sizes**2) == pytest.approx(2.0)
    assert timing.loglog_slope(sizes, 5.0 * sizes) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="positive"):
        timing.loglog_slope([1, 2], [0.0, 1.0])


@pytest.mark.parametrize("clock", ["wall", "cpu"])
def test_timers_measure_work(clock):
    def busy(n):
        return sum(i * i for i in range(n))

    short = timing.min_time(busy, 10_000, repeats=3, clock=clock)
    long = timing.median_time(busy, 400_000, repeats=3, clock=clock)
    assert 0 < short < long
    with pytest.raises(ValueError, match="clock"):
        timing.median_time(busy, 10, clock="gpu")
    with pytest.raises(ValueError, match="repeats"):
        timing.min_time(busy, 10, repeats=0)


@pytest.mark.slow
def test_benchmark_quick_run_prints_one_json_object():
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "attention.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--quick", "--json"], check=True, capture_output=True, text=True, timeout=600
    )
    results = json.loads(proc.stdout)
    for key in ("mha_vs_torch_ratio_1024", "fused_fraction_of_matmul_4096", "tiled_memory_ratio_4096"):
        assert key in results and results[key] is None  # headline sizes are not run with --quick
    assert all(row["max_abs_diff"] < 1e-5 for row in results["mha_vs_torch"])
    assert all(row["max_abs_diff"] < 1e-12 for row in results["numpy_tiled_vs_naive"])
    memory = results["peak_memory"]
    assert memory is None or memory["ours_bytes"] > 0


# ------------------------------------------------------------------ IO model (HBM <-> SRAM bytes)


def _simulated_tiled_io(n, d, rows):
    """Values loaded and stored by a query-outer tiled pass, counted tile by tile."""
    moved = 0
    for q_start in range(0, n, rows):
        q_rows = min(rows, n - q_start)
        moved += q_rows * d  # load the query tile
        for k_start in range(0, n, rows):
            moved += 2 * min(rows, n - k_start) * d  # load a key tile and a value tile
        moved += q_rows * d  # store the output tile
    return moved


def test_io_counts_by_hand():
    assert efficient.hbm_bytes_naive(seq_len=2, d_head=3, bytes_per_value=1) == 40
    assert efficient.tile_rows(d_head=2, sram_bytes=32, bytes_per_value=1) == 2  # 4·2·2 + 2² = 20; 3 rows: 33
    assert efficient.hbm_bytes_tiled(seq_len=8, d_head=2, sram_bytes=32, bytes_per_value=1) == 160
    assert efficient.tile_rows(d_head=64, sram_bytes=100_000, bytes_per_value=2) == 129  # not 195 = M / 4d


@pytest.mark.parametrize(("d", "sram", "per_value"), [(2, 32, 1), (3, 48, 1), (64, 100_000, 2), (16, 20_000, 4)])
def test_tile_rows_leave_room_for_the_score_tile(d, sram, per_value):
    """The four B x d tiles and the B x B score tile fit; one row more does not (review N-4)."""
    values = sram // per_value
    rows = efficient.tile_rows(d, sram, per_value)
    assert 4 * rows * d + rows**2 <= values < 4 * (rows + 1) * d + (rows + 1) ** 2
    assert efficient.hbm_bytes_naive(1024, 64) == 4 * (4 * 1024 * 64 + 4 * 1024**2)  # float32 by default


@pytest.mark.parametrize(("n", "d", "sram"), [(8, 2, 32), (100, 16, 1000), (1000, 64, 100_000), (7, 3, 10_000)])
def test_tiled_io_matches_a_tile_by_tile_count(n, d, sram):
    rows = efficient.tile_rows(d, sram, bytes_per_value=1)
    assert efficient.hbm_bytes_tiled(n, d, sram, bytes_per_value=1) == _simulated_tiled_io(n, d, rows)


def test_io_model_asymptotics():
    d = 64
    lengths = [1024, 2048, 4096, 8192]
    naive = [efficient.hbm_bytes_naive(n, d, 2) for n in lengths]
    tiled = [efficient.hbm_bytes_tiled(n, d, 100_000, 2) for n in lengths]
    assert all(t < a for t, a in zip(tiled, naive, strict=True))
    assert timing.loglog_slope(lengths, naive) == pytest.approx(2.0, abs=0.1)  # Θ(n d + n²), n >> d
    # Θ(n² d² / M) while M <= 16 d²: doubling the SRAM shrinks the n² part by 1.6-2x (the score tile takes a
    # growing share of the SRAM, so not quite 2x)
    n = 8192
    base = 2 * 2 * n * d  # loading Q and storing O, bytes
    quadratic = [efficient.hbm_bytes_tiled(n, d, m, 2) - base for m in (51_200, 102_400)]
    assert 1.6 < quadratic[0] / quadratic[1] < 2.0
    # one tile holds the whole sequence: every value is moved once, 4 n d in all
    assert efficient.hbm_bytes_tiled(100, 8, (4 * 8 * 100 + 100**2) * 4) == 4 * (4 * 100 * 8)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: efficient.tile_rows(64, 100, 2), ValueError, "sram_bytes must hold four tiles"),
        (lambda: efficient.hbm_bytes_naive(0, 64), ValueError, "seq_len"),
        (lambda: efficient.hbm_bytes_tiled(16, 2.5, 1000), TypeError, "d_head"),
        (lambda: efficient.hbm_bytes_tiled(16, 4, -1), ValueError, "sram_bytes"),
        (lambda: efficient.decode_flops(4, 8, 4, cached="yes"), TypeError, "cached"),
    ],
)
def test_io_and_decode_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ------------------------------------------------------------------ KV cache


@pytest.mark.parametrize(("seq_len", "d_model", "d_head", "d_value"), [(1, 4, 2, 2), (9, 8, 4, 3), (20, 16, 8, 8)])
def test_decoding_with_and_without_cache_is_causal_attention(seq_len, d_model, d_head, d_value):
    rng = np.random.default_rng(seq_len)
    x = rng.normal(size=(seq_len, d_model))
    w_q, w_k = rng.normal(size=(2, d_model, d_head))
    w_v = rng.normal(size=(d_model, d_value))
    expected = efficient.naive_attention(x @ w_q, x @ w_k, x @ w_v, causal=True)
    np.testing.assert_allclose(efficient.decode_with_cache(x, w_q, w_k, w_v), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(efficient.decode_without_cache(x, w_q, w_k, w_v), expected, rtol=0, atol=1e-12)


def test_kv_cache_step_grows_the_caches():
    rng = np.random.default_rng(0)
    w_q, w_k, w_v = rng.normal(size=(3, 6, 4))
    k_cache, v_cache = np.zeros((0, 4)), np.zeros((0, 4))
    for t in range(3):
        x_t = rng.normal(size=6)
        out, k_cache, v_cache = efficient.kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v)
        assert out.shape == (4,) and k_cache.shape == v_cache.shape == (t + 1, 4)
        np.testing.assert_allclose(k_cache[-1], x_t @ w_k)
    np.testing.assert_allclose(efficient.kv_cache_step(x_t, k_cache[:0], v_cache[:0], w_q, w_k, w_v)[0], x_t @ w_v)


@pytest.mark.parametrize(("seq_len", "d_model", "d_head"), [(1, 4, 2), (12, 16, 4), (33, 8, 8)])
def test_counted_decoding_flops_equal_the_formula(seq_len, d_model, d_head):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(seq_len, d_model))
    w_q, w_k, w_v = rng.normal(size=(3, d_model, d_head))
    out, with_cache = efficient.count_matmul_flops(efficient.decode_with_cache, x, w_q, w_k, w_v)
    _, without = efficient.count_matmul_flops(efficient.decode_without_cache, x, w_q, w_k, w_v)
    assert type(out) is np.ndarray
    lengths = range(1, seq_len + 1)
    assert with_cache == sum(efficient.decode_flops(p, d_model, d_head, cached=True) for p in lengths)
    assert without == sum(efficient.decode_flops(p, d_model, d_head, cached=False) for p in lengths)
    assert efficient.decode_flops(1, d_model, d_head, True) == efficient.decode_flops(1, d_model, d_head, False)
    if seq_len > 1:
        assert with_cache < without


def test_count_matmul_flops_counts_products_only():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    assert efficient.count_matmul_flops(lambda a, b: a @ b, a, b)[1] == 2 * 2 * 3 * 4
    assert efficient.count_matmul_flops(lambda a, b: np.exp(a).sum() + b.max(), a, b)[1] == 0
    batched = np.ones((5, 2, 3))
    assert efficient.count_matmul_flops(lambda a, b: np.matmul(a, b), batched, b)[1] == 5 * 2 * 2 * 3 * 4
    assert efficient.count_matmul_flops(lambda v, b: (v @ b) @ np.ones(4), np.ones(3), b)[1] == 2 * 3 * 4 + 2 * 4
    with pytest.raises(TypeError, match="fn must be a function"):
        efficient.count_matmul_flops(3)


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        (((5,), (5, 2), (5, 2), (5, 2)), r"x must be \(seq_len, d_model\)"),
        (((3, 5), (5, 2), (4, 2), (5, 2)), "w_k must be"),
        (((3, 5), (5, 2), (5, 3), (5, 2)), "w_q and w_k must have the same width"),
    ],
)
def test_decode_bad_shapes_name_the_argument(shapes, message):
    arrays = [np.zeros(s) for s in shapes]
    with pytest.raises(ValueError, match=message):
        efficient.decode_with_cache(*arrays)
    with pytest.raises(ValueError, match=message):
        efficient.decode_without_cache(*arrays)


def test_decode_step_must_be_callable():
    x, w = np.zeros((2, 3)), np.zeros((3, 2))
    with pytest.raises(TypeError, match="step must be a function"):
        efficient.decode_with_cache(x, w, w, w, step="kv")


# ---- online_update and flash_step: the steps the lesson's regions compute ------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    k_len=st.integers(1, 25),
    block_size=st.integers(1, 30),
    scale=st.sampled_from([1.0, 30.0, 1e3]),
    masked_fraction=st.sampled_from([0.0, 0.5, 1.0]),
)
def test_online_update_folds_a_row_into_its_max_and_sum(seed, k_len, block_size, scale, masked_fraction):
    rng = np.random.default_rng(seed)
    row = rng.normal(size=k_len) * scale
    row[rng.random(k_len) < masked_fraction] = -np.inf
    m, l = -np.inf, 0.0
    for start in range(0, k_len, block_size):  # the lesson's loop: floats in, floats out
        m, l = efficient.online_update(m, l, row[start : start + block_size])
        assert isinstance(m, float) and isinstance(l, float)
    assert m == row.max()
    expected = np.exp(row - m).sum() if np.isfinite(m) else 0.0
    assert l == pytest.approx(expected, rel=1e-12) and not np.isnan(l)
    stats_m, stats_l = efficient.online_softmax_stats(row[None], block_size=block_size)  # the array form
    assert stats_m[0, 0] == m and stats_l[0, 0] == pytest.approx(l, rel=1e-12, abs=0)


def test_online_update_by_hand_and_bad_input():
    m, l = efficient.online_update(-np.inf, 0.0, np.array([1.0, 2.0]))
    assert (m, l) == (2.0, pytest.approx(np.exp(-1) + 1))
    m, l = efficient.online_update(m, l, np.array([3.0]))  # a larger maximum rescales the old sum by e^-1
    assert (m, l) == (3.0, pytest.approx((np.exp(-1) + 1) * np.exp(-1) + 1))
    assert efficient.online_update(-np.inf, 0.0, np.array([-np.inf, -np.inf])) == (-np.inf, 0.0)
    assert efficient.online_update(5.0, 2.0, np.array([])) == (5.0, 2.0)
    arrays = efficient.online_update(np.full((2, 1), -np.inf), np.zeros((2, 1)), np.array([[1.0, 2.0], [0.0, 0.0]]))
    assert arrays[0].shape == arrays[1].shape == (2, 1)
    with pytest.raises(ValueError, match="block must be 1-D when m and l are numbers"):
        efficient.online_update(0.0, 1.0, np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"m and l must be \(\.\.\., 1\) arrays"):
        efficient.online_update(np.zeros((3, 1)), np.zeros((3, 1)), np.ones((2, 4)))
    with pytest.raises(TypeError, match="block must hold real numbers"):
        efficient.online_update(0.0, 1.0, np.array([True, False]))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    q_len=st.integers(1, 7),
    k_len=st.integers(1, 11),
    block=st.integers(1, 6),
    scale=st.sampled_from([1.0, 40.0]),
    masked=st.booleans(),
)
def test_flash_step_over_tiles_is_attention(seed, q_len, k_len, block, scale, masked):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(q_len, 4)) * scale
    k = rng.normal(size=(k_len, 4)) * scale
    v = rng.normal(size=(k_len, 3))
    scores = q @ k.T / 2.0  # / sqrt(d_head = 4)
    if masked:
        scores[:, : k_len // 2] = -np.inf  # the first keys masked: rows start with no finite score
    m, l, acc = np.full((q_len, 1), -np.inf), np.zeros((q_len, 1)), np.zeros((q_len, 3))
    for start in range(0, k_len, block):
        m, l, acc = efficient.flash_step(m, l, acc, scores[:, start : start + block], v[start : start + block])
    expected = numpy_attention.softmax(scores) @ v
    np.testing.assert_allclose(acc / l, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(m[:, 0], scores.max(axis=-1))


def test_flash_step_keeps_an_all_masked_tile_at_zero_and_checks_shapes():
    m, l, acc = efficient.flash_step(
        np.full((2, 1), -np.inf), np.zeros((2, 1)), np.zeros((2, 3)), np.full((2, 4), -np.inf), np.ones((4, 3))
    )
    assert np.isneginf(m).all() and (l == 0).all() and (acc == 0).all() and not np.isnan(acc).any()
    with pytest.raises(ValueError, match="must agree on k_block"):
        efficient.flash_step(np.zeros((2, 1)), np.zeros((2, 1)), np.zeros((2, 3)), np.zeros((2, 4)), np.ones((5, 3)))
    with pytest.raises(ValueError, match=r"m and l must be \(\.\.\., q_block=2, 1\)"):
        efficient.flash_step(np.zeros((2,)), np.zeros((2,)), np.zeros((2, 3)), np.zeros((2, 4)), np.ones((4, 3)))


def test_tiled_attention_runs_flash_step(monkeypatch):
    calls = []
    original = efficient.flash_step

    def spy(*args):
        calls.append(args[3].shape)
        return original(*args)

    monkeypatch.setattr(efficient, "flash_step", spy)
    q = np.random.default_rng(0).normal(size=(5, 4))
    out = efficient.tiled_attention(q, q, q, q_block=2, k_block=3)
    assert calls == [(2, 3), (2, 2), (2, 3), (2, 2), (1, 3), (1, 2)]  # 3 query blocks x 2 key tiles
    np.testing.assert_allclose(out, efficient.naive_attention(q, q, q), atol=1e-12)


# ---- count_matmul_flops: every NumPy contraction counts ------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "fn"),
    [
        ("@", lambda a, b: a @ b),
        ("np.dot", lambda a, b: np.dot(a, b)),
        ("x.dot", lambda a, b: a.dot(b)),
        ("np.einsum", lambda a, b: np.einsum("ij,jk->ik", a, b)),
        ("np.einsum implicit", lambda a, b: np.einsum("ij,jk", a, b)),
        ("np.einsum ...", lambda a, b: np.einsum("...j,jk->...k", a, b)),
        ("np.einsum sublists", lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [0, 2])),
        ("np.tensordot", lambda a, b: np.tensordot(a, b, axes=1)),
        ("np.tensordot pairs", lambda a, b: np.tensordot(a, b, axes=([1], [0]))),
        ("np.inner", lambda a, b: np.inner(a, b.T)),
    ],
)
def test_every_way_to_write_a_product_counts_the_same(name, fn):
    a, b = np.ones((2, 3)), np.ones((3, 4))
    result, flops = efficient.count_matmul_flops(fn, a, b)
    assert flops == 2 * 2 * 3 * 4, name
    np.testing.assert_array_equal(np.asarray(result), np.full((2, 4), 3.0))
    assert type(result) is np.ndarray  # the counting view never leaks out


def test_counting_follows_results_and_skips_what_is_not_a_product():
    a, b, c = np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))
    assert efficient.count_matmul_flops(lambda a, b: np.vdot(a, a), a, b)[1] == 2 * 6
    assert efficient.count_matmul_flops(lambda a, b: np.dot(np.dot(a, b), c), a, b)[1] == 48 + 2 * 2 * 4 * 5
    assert efficient.count_matmul_flops(lambda a, b: np.linalg.multi_dot([a, b, c]), a, b)[1] == 48 + 80
    assert efficient.count_matmul_flops(lambda a, b: np.dot(np.concatenate([a, a]), b), a, b)[1] == 2 * 4 * 3 * 4
    assert efficient.count_matmul_flops(lambda a, b: np.einsum("ij->j", a), a, b)[1] == 0  # a sum
    assert efficient.count_matmul_flops(lambda a, b: np.dot(a, 2.0), a, b)[1] == 0  # a scaling
    assert efficient.count_matmul_flops(lambda a, b: np.dot(b[:, 0], b[:, 1]), a, b)[1] == 2 * 3
    x = np.ones(4)
    assert efficient.count_matmul_flops(lambda x, w: np.einsum("td,d->t", w, x), x, c.T)[1] == 2 * 5 * 4


def test_a_kv_cache_step_that_reprojects_with_np_dot_is_counted():
    """A step that re-projects the prefix through np.dot costs what the uncached step costs: the driver sees it."""
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(6, 8)), rng.normal(size=(8, 4))

    def reprojecting(x, w):
        return [np.dot(x[: t + 1], w) for t in range(len(x))]  # every key again, every step

    _, flops = efficient.count_matmul_flops(reprojecting, x, w)
    assert flops == sum(2 * (t + 1) * 8 * 4 for t in range(6))
