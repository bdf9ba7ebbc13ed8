"""Issue 26 section 1, round 3: wrong answers that passed every check before, and crashes left unexplained.

Each test writes one wrong answer the way a student's cell would and asserts the verdict names what breaks:
an argument a driver handed the answer changed in place, a decoder state cut from the graph between steps,
an option the cases passed only one way (``need_weights``), and common crash kinds explained in words.
Every one fails without the mechanism it tests.
"""

import numpy as np
import pytest
import torch

from course_utils import data
from course_utils.checking import (
    call_watch,
    cases,
    crash_site,
    engine,
    extremes,
    options,
)
from course_utils.lessons.lesson_01 import core as lesson_01_core
from course_utils.lessons.lesson_02 import core as lesson_02_core
from course_utils.lessons.lesson_04 import module as lesson_04_module
from course_utils.lessons.lesson_04 import parity as lesson_04_parity
from course_utils.lessons.lesson_06 import exercises as lesson_06
from course_utils.lessons.lesson_06 import tiling as lesson_06_tiling
from course_utils.lessons.lesson_07 import exercises as lesson_07
from course_utils.lessons.lesson_07 import parts as lesson_07_parts
from course_utils.lessons.lesson_08 import layers as lesson_08_layers


# ---- an argument the driver handed on, changed in place ------------------------------------------------------
def test_masked_fill_in_place_on_the_scores_a_driver_hands_on_is_named():
    def masked_softmax(scores, mask):
        scores.masked_fill_(~mask, float("-inf"))  # the driver's copy of the scores: the case never sees it
        return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)

    verdict = engine.judge(lesson_02_core.MASKED_SOFTMAX, masked_softmax)
    assert verdict.status == "wrong", verdict.detail
    assert "changed its argument `scores` in place" in verdict.detail
    assert verdict.relation == "in_place"


def test_running_arrays_updated_in_place_are_each_named():
    def flash_step(m, l, acc, scores, v_tile):
        m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
        p = np.exp(scores - m_new)
        rescale = np.exp(m - m_new)
        l *= rescale
        l += p.sum(axis=-1, keepdims=True)
        acc *= rescale
        acc += p @ v_tile
        return m_new, l, acc

    verdict = engine.judge(lesson_06_tiling.FLASH_STEP, flash_step)
    assert verdict.status == "wrong", verdict.detail
    assert "`l`" in verdict.detail and "`acc`" in verdict.detail and "in place" in verdict.detail


def test_the_course_answers_of_driven_exercises_change_nothing_they_were_not_meant_to():
    for exercise in (lesson_02_core.MASKED_SOFTMAX, lesson_06_tiling.FLASH_STEP):
        for variant in (exercise.reference, *exercise.variants):
            assert engine.judge(exercise, variant).status == "passed", variant.__name__


def test_call_watch_names_paths_inside_containers_and_views():
    base = torch.zeros(3, 4)
    cache = (np.zeros(3), {"s": base})
    snap = call_watch.snapshot((cache,))
    base[:, 1].add_(1.0)  # through a view: the base changes too
    assert call_watch.moved(snap) == {(0, 1, "s")}

    def step(cache):
        return cache

    assert call_watch.words((0, 1, "s"), step) == "cache[1]['s']"


# ---- the gradient through a decoder's state -------------------------------------------------------------------
def test_a_decoder_step_that_detaches_the_incoming_state_is_named_as_cutting_the_gradient():
    def my_decoder_step(model, state, tokens):
        s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"].detach())
        context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
        logits = model.out_proj(torch.cat([s, context], dim=-1))
        return logits, {**state, "s": s, "context": context}, weights

    verdict = engine.judge(lesson_07.MY_DECODER_STEP, my_decoder_step)
    assert verdict.status == "wrong", verdict.detail
    assert "cuts the gradient" in verdict.detail and "state" in verdict.detail and ".s" in verdict.detail


# ---- options exercised both ways --------------------------------------------------------------------------------
class _AlwaysWeights(lesson_08_layers.DecoderLayer):
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        x, weights = super().forward(x, memory, self_mask, cross_mask, need_weights=True)
        return x, weights  # need_weights ignored


_AlwaysWeights.__name__ = "DecoderLayer"


def test_a_layer_that_returns_weights_when_need_weights_is_false_is_refused():
    verdict = engine.judge(lesson_08_layers.DECODER_LAYER, _AlwaysWeights)
    assert verdict.status == "wrong", verdict.detail
    assert "need_weights=False" in verdict.detail and verdict.relation == "option"


def test_flipped_options_are_found_one_tuple_deep_and_flipped_on_a_copy():
    args = (1, True, (2.0, True, False))
    assert options.bool_paths(args) == [(1,), (2, 1)]  # only True is switched (off)
    assert options.flipped(args, (2, 1)) == (1, True, (2.0, False, False))
    assert args == (1, True, (2.0, True, False))


# ---- crashes explained in words ----------------------------------------------------------------------------------
def _raised(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the exception is what is tested
        return exc
    raise AssertionError("did not raise")


@pytest.mark.parametrize(
    ("make", "key", "words"),
    [
        (lambda: bool(torch.ones(3) > 0), "truth_of_array", "if mask is not None"),
        (lambda: __import__("math").exp(1000.0), "float_overflow", "Subtract"),
        (lambda: np.zeros((1, 2)).__setitem__(slice(None), np.ones((4, 2))), "assign_shape", "(4,2)"),
        (lambda: torch.softmax(torch.tensor([1, 2]), dim=0), "integer_tensor", "integer"),
        (lambda: (lambda a, b: a)(1, 2, 3), "argument_count", "signature"),
    ],
)
def test_common_crash_kinds_are_explained_in_words(make, key, words):
    found = crash_site.cause(_raised(make))
    assert found is not None and found[0] == key and words in found[1]


def padding_mask(lengths, max_len):  # the stub's side="right" left out
    return torch.arange(max_len)[None, :] < torch.as_tensor(lengths)[:, None]


def test_a_signature_without_the_stubs_optional_parameter_is_explained():
    verdict = engine.judge(lesson_02_core.PADDING_MASK, padding_mask)
    assert verdict.status == "crashed"
    assert "when the check called your `padding_mask`" in verdict.detail
    assert verdict.relation == "crash:argument_count"


# ---- a module handed in and left changed, or left sharing memory -------------------------------------------------
def test_a_dropout_rate_set_to_zero_and_left_there_is_named():
    def weights_for_analysis(mha, query, key, value):
        for module in mha.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0
        if isinstance(getattr(mha, "dropout", None), float):
            mha.dropout = 0.0
        with torch.no_grad():
            return mha(query, key, value)[1]

    verdict = engine.judge(lesson_04_module.WEIGHTS_FOR_ANALYSIS, weights_for_analysis)
    assert verdict.status == "wrong", verdict.detail
    assert "mha.dropout" in verdict.detail and "left it changed" in verdict.detail


def test_weights_assigned_through_data_share_memory_and_are_named():
    def load_from_torch(module, torch_mha):
        d = module.d_model
        w, b = torch_mha.in_proj_weight, torch_mha.in_proj_bias
        for i, lin in enumerate((module.query_proj, module.key_proj, module.value_proj)):
            lin.weight.data = w.data[i * d : (i + 1) * d]
            lin.bias.data = b.data[i * d : (i + 1) * d]
        module.out_proj.weight.data = torch_mha.out_proj.weight.data
        module.out_proj.bias.data = torch_mha.out_proj.bias.data
        return module

    verdict = engine.judge(lesson_04_parity.LOAD_FROM_TORCH, load_from_torch)
    assert verdict.status == "wrong", verdict.detail
    assert "shares its memory with the argument `torch_mha`" in verdict.detail


# ---- one tensor for two inputs, made two -------------------------------------------------------------------------
class _ValuesFromKeys(lesson_04_module.MyMultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        return super().forward(query, key, key, mask)  # right only while key is value


_ValuesFromKeys.__name__ = "MyMultiHeadAttention"


def test_values_computed_from_the_keys_are_found_with_key_and_value_made_distinct():
    verdict = engine.judge(lesson_04_module.MULTI_HEAD_MODULE, _ValuesFromKeys)
    assert verdict.status == "wrong", verdict.detail
    assert "`value` a different tensor from `key`" in verdict.detail


# ---- extreme magnitudes -------------------------------------------------------------------------------------------
def test_a_maximum_over_the_forbidden_keys_too_fails_once_scores_are_large():
    def masked_softmax(scores, mask):
        e = torch.exp(scores - scores.amax(dim=-1, keepdim=True)) * mask  # the max over forbidden keys too
        return e / e.sum(dim=-1, keepdim=True).clamp(min=1e-12)

    verdict = engine.judge(lesson_02_core.MASKED_SOFTMAX, masked_softmax)
    assert verdict.status == "wrong", verdict.detail
    assert "scaled by 1000" in verdict.detail or "raised by 10000" in verdict.detail


def test_a_loose_tolerance_is_found_on_small_inputs():
    def is_permutation_equivariant(fn, X, perm):
        return bool(np.allclose(fn(X[perm]), fn(X)[perm], atol=0.1))

    verdict = engine.judge(lesson_01_core.IS_PERMUTATION_EQUIVARIANT, is_permutation_equivariant)
    assert verdict.status == "wrong", verdict.detail
    assert "scaled by 1/1000" in verdict.detail and "tolerance" in verdict.detail


def test_extreme_transforms_leave_ints_bools_and_the_original_alone():
    scores, mask = np.array([[1.0, 2.0]]), np.array([[True, False]])
    args = (scores, mask, 3)
    raised = extremes.transformed(args, extremes.TRANSFORMS[-1][1])
    assert raised[0].tolist() == [[1.0, 10002.0]] and raised[1] is not mask and raised[2] == 3
    assert scores.tolist() == [[1.0, 2.0]]


# ---- contracts a driver or a declaration now states ----------------------------------------------------------------
def test_a_kv_cache_that_puts_the_new_row_in_front_is_refused():
    def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
        k_cache = np.vstack([x_t @ w_k, k_cache])
        v_cache = np.vstack([x_t @ w_v, v_cache])
        s = k_cache @ (x_t @ w_q) / np.sqrt(w_q.shape[1])
        w = np.exp(s - s.max())
        return (w / w.sum()) @ v_cache, k_cache, v_cache

    verdict = engine.judge(lesson_06.KV_CACHE_STEP, kv_cache_step)
    assert verdict.status == "wrong", verdict.detail
    assert "does not start with the k_cache you were given" in verdict.detail


def test_an_accuracy_that_leaves_the_eos_targets_out_fails_on_targets_that_end_in_eos():
    def token_accuracy(logits, target):
        real = target > data.EOS
        return float((logits.argmax(dim=-1) == target)[real].float().mean())

    verdict = engine.judge(lesson_07.TOKEN_ACCURACY, token_accuracy)
    assert verdict.status == "wrong", verdict.detail


def test_ended_targets_hold_one_eos_per_row_then_padding():
    logits, target = cases.ended_targets(3, 7, 12, data.PAD, data.EOS)
    assert logits.shape == (3, 7, 12) and target.shape == (3, 7)
    for row in target.tolist():
        n = row.index(data.EOS)
        assert row.count(data.EOS) == 1 and all(t >= 3 for t in row[:n]) and all(t == data.PAD for t in row[n + 1 :])


def test_a_tiled_pass_whose_running_max_starts_at_0_fails_when_every_score_is_far_below_0():
    def tiled_attention(q, k, v, block):
        out = np.zeros((q.shape[0], v.shape[1]))
        for i in range(0, q.shape[0], block):
            qi = q[i : i + block]
            m, l, acc = np.zeros((len(qi), 1)), np.zeros((len(qi), 1)), np.zeros((len(qi), v.shape[1]))
            for j in range(0, k.shape[0], block):
                scores = qi @ k[j : j + block].T / np.sqrt(q.shape[1])
                m, l, acc = lesson_06_tiling.flash_step(m, l, acc, scores, v[j : j + block])
            out[i : i + block] = acc / l
        return out

    verdict = engine.judge(lesson_06_tiling.TILED_ATTENTION, tiled_attention)
    assert verdict.status == "wrong", verdict.detail


def test_an_additive_attention_that_squeezes_away_a_batch_of_one_fails():
    class MyAdditiveAttention(lesson_07_parts.MyAdditiveAttention):
        def forward(self, s, keys, key_mask, projected_keys):
            context, weights = super().forward(s, keys, key_mask, projected_keys)
            return context.squeeze(), weights.squeeze()

    verdict = engine.judge(lesson_07_parts.MY_ADDITIVE_ATTENTION, MyAdditiveAttention)
    assert verdict.status == "wrong", verdict.detail
    assert "batch=1" in verdict.detail


def test_an_answer_that_switches_off_a_new_check_by_rebinding_it_does_not_pass():
    def is_permutation_equivariant(fn, X, perm):
        extremes.extreme_problem = lambda *args, **kwargs: None  # the check that would catch the loose tolerance
        return bool(np.allclose(fn(X[perm]), fn(X)[perm], atol=0.1))

    original = extremes.extreme_problem
    verdict = engine.judge(lesson_01_core.IS_PERMUTATION_EQUIVARIANT, is_permutation_equivariant)
    assert verdict.status != "passed", verdict.detail
    assert extremes.extreme_problem is original  # put back
