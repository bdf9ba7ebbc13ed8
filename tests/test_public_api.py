"""Every public callable refuses bad input clearly: a table of bad arguments and the words each must raise.

``BAD_INPUT`` maps ``"module.name"`` to rows ``(call, exception type, message fragment)``. Each fragment
names the argument (and usually what was expected). :func:`test_every_public_callable_is_in_the_table`
walks ``__all__`` of every module in ``course_utils.__all__`` and fails if a public callable has no row,
so a new helper cannot skip validation unnoticed.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch

from course_utils import attention, data, efficient, env, heads, masks, retrieval, role_task, timing
from course_utils import numpy_attention as na
from course_utils.reversal import checkpoints, decoding, rnn, training, transformer, views

# Modules owned and validated elsewhere, each tested by its own test file. Listed by name so that the
# walk below stays honest: a module missing from here AND from BAD_INPUT fails the walk.
VALIDATED_BY_THEIR_OWN_TESTS = {
    "checks": "tests/test_checks.py (the exercise engine)",
    "diagrams": "tests/test_diagrams.py (schematic figures)",
    "plotting": "tests/test_core_units.py and the plotting tests",
    "reversal": "a package: its modules are walked below as reversal.<module>",
    "checking": "tests/checking/ and tests/test_checks.py (the checking engine)",
    "lessons": "tests/lessons/ and tests/test_claims_script.py (exercises, experiments, claims, the runner)",
    "explorer": "its own tests",
    "grading": "its own tests",
}

f32 = torch.ones(2, 3, 4)
f64 = torch.ones(2, 3, 4, dtype=torch.float64)
arr = np.ones((2, 3, 4))
W8 = np.eye(8)
x8 = np.ones((2, 3, 8))
bmask = torch.ones(3, 3, dtype=torch.bool)
lengths = torch.tensor([2, 3])
src = torch.tensor([[3, 4, 5], [6, 7, 0]])
src_lengths = torch.tensor([3, 2])


def _mha():
    return attention.MultiHeadAttention(8, 2)


def _gru():
    torch.manual_seed(0)
    return checkpoints.build_model("gru")


def _batch():
    return data.collate([data.encode("abc"), data.encode("de")])


def _task():
    return role_task.make_role_task(2, seq_len=4)


BAD_INPUT = {
    # ------------------------------------------------------------------------- numpy_attention
    "numpy_attention.softmax": [
        (lambda: na.softmax(np.array(["a", "b"])), TypeError, "x must hold real numbers"),
        (lambda: na.softmax(np.ones(3), axis=1.0), TypeError, "axis must be an int"),
        (lambda: na.softmax(np.ones(3), axis=1), ValueError, "axis 1 is out of range"),
        (lambda: na.softmax(torch.ones(3)), TypeError, "x must be a NumPy array"),
    ],
    "numpy_attention.scaled_dot_product_attention": [
        (lambda: na.scaled_dot_product_attention(f32, f32, f32), TypeError, "q must be a NumPy array"),
        (
            lambda: na.scaled_dot_product_attention(arr, arr.astype(np.float32), arr),
            TypeError,
            "share one floating dtype",
        ),
        (lambda: na.scaled_dot_product_attention(np.ones((3, 0)), np.ones((3, 0)), arr), ValueError, "d_head 0"),
        (
            lambda: na.scaled_dot_product_attention(arr, arr, arr, mask=np.ones((3, 3))),
            TypeError,
            "mask must be boolean",
        ),
        (lambda: na.scaled_dot_product_attention(arr, arr, arr, mask=bmask), TypeError, "mask must be a NumPy boolean"),
        (lambda: na.scaled_dot_product_attention(np.ones(4), arr, arr), ValueError, "query must have at least 2 dims"),
    ],
    "numpy_attention.split_heads": [
        (lambda: na.split_heads(x8, 3), ValueError, "d_model 8 is not divisible by num_heads 3"),
        (lambda: na.split_heads(x8, True), TypeError, "num_heads must be an int"),
        (lambda: na.split_heads(x8, 0), ValueError, "num_heads must be a positive int"),
        (lambda: na.split_heads(np.ones((3, 8)), 2), ValueError, r"x must be \(batch, seq_len, d_model\)"),
    ],
    "numpy_attention.merge_heads": [
        (lambda: na.merge_heads(x8), ValueError, r"x must be \(batch, heads, seq_len, d_head\)"),
        (lambda: na.merge_heads(torch.ones(1, 2, 3, 4)), TypeError, "x must be a NumPy array"),
    ],
    "numpy_attention.multi_head_attention": [
        (lambda: na.multi_head_attention(x8[:1], x8, x8, W8, W8, W8, W8, 2), ValueError, "query batch 1 differs"),
        (lambda: na.multi_head_attention(x8, x8, x8, W8, W8, W8, np.ones((8, 4)), 2), ValueError, "W_o must be"),
        (lambda: na.multi_head_attention(x8, x8, x8, W8, W8, W8, W8, 2.0), TypeError, "num_heads must be an int"),
        (
            lambda: na.multi_head_attention(x8, x8, x8, W8, W8, W8, W8, 2, mask=np.ones((2, 3, 3), bool)),
            ValueError,
            r"mask\[:, None\]",
        ),
        (
            lambda: na.multi_head_attention(x8, x8, x8, W8, W8, W8, W8, 2, mask=np.ones((3, 4), bool)),
            ValueError,
            "mask of shape",
        ),
    ],
    # ----------------------------------------------------------------------------------- masks
    "masks.make_causal_mask": [
        (lambda: masks.make_causal_mask(0), ValueError, "q_len must be a positive int"),
        (lambda: masks.make_causal_mask(3.0), TypeError, "q_len must be an int"),
        (lambda: masks.make_causal_mask(3, 2), ValueError, "k_len 2 is shorter than q_len 3"),
        (lambda: masks.make_causal_mask(True), TypeError, "q_len must be an int"),
    ],
    "masks.make_padding_mask": [
        (lambda: masks.make_padding_mask(lengths, 3.5), TypeError, "max_len must be an int"),
        (lambda: masks.make_padding_mask(lengths, 1), ValueError, r"lengths must lie in \[0, max_len=1\]"),
        (lambda: masks.make_padding_mask(torch.tensor([1.0]), 3), TypeError, "lengths must be integers"),
        (lambda: masks.make_padding_mask(torch.ones(2, 2, dtype=torch.long), 3), ValueError, "lengths must be 1-D"),
        (lambda: masks.make_padding_mask(3, 3), TypeError, "lengths must be a 1-D integer"),
    ],
    "masks.padding_to_attention_mask": [
        (
            lambda: masks.padding_to_attention_mask(np.ones((2, 3), bool)),
            TypeError,
            "padding_mask must be a torch.Tensor",
        ),
        (lambda: masks.padding_to_attention_mask(torch.ones(2, 3)), TypeError, "padding_mask must be boolean"),
        (lambda: masks.padding_to_attention_mask(bmask[0]), ValueError, r"padding_mask must be \(batch, k_len\)"),
    ],
    "masks.combine_masks": [
        (lambda: masks.combine_masks(), ValueError, "at least one mask"),
        (lambda: masks.combine_masks(bmask, np.ones((3, 3), bool)), TypeError, "mask 1 must be a torch.Tensor"),
        (lambda: masks.combine_masks(bmask, torch.ones(3, 3)), TypeError, "mask 1 must be boolean"),
        (
            lambda: masks.combine_masks(bmask, torch.ones(4, 3, dtype=torch.bool)),
            ValueError,
            "do not broadcast together",
        ),
    ],
    "masks.to_key_padding_mask": [
        (lambda: masks.to_key_padding_mask(torch.ones(2, 3)), TypeError, "padding_mask must be boolean"),
        (lambda: masks.to_key_padding_mask([[True]]), TypeError, "padding_mask must be a torch.Tensor"),
    ],
    # ------------------------------------------------------------------------------- attention
    "attention.masked_softmax": [
        (lambda: attention.masked_softmax(arr), TypeError, "scores must be a torch.Tensor"),
        (lambda: attention.masked_softmax(f32.long()), TypeError, "scores must be a floating"),
        (lambda: attention.masked_softmax(torch.tensor(1.0)), ValueError, "scores must have a key axis"),
        (lambda: attention.masked_softmax(f32, torch.ones(3, 3)), TypeError, "boolean"),
        (lambda: attention.masked_softmax(f32, torch.ones(4, 4, dtype=torch.bool)), ValueError, "mask"),
    ],
    "attention.scaled_dot_product_attention": [
        (lambda: attention.scaled_dot_product_attention(arr, arr, arr), TypeError, "query must be a torch.Tensor"),
        (lambda: attention.scaled_dot_product_attention(f32, f64, f32), TypeError, "key has dtype torch.float64"),
        (lambda: attention.scaled_dot_product_attention(f32.long(), f32, f32), TypeError, "query must be a floating"),
        (
            lambda: attention.scaled_dot_product_attention(f32, f32, f32, dropout_p=1.0),
            ValueError,
            "dropout_p must be in",
        ),
        (lambda: attention.scaled_dot_product_attention(f32, f32, f32, dropout_p=True), TypeError, "dropout_p must be"),
        (lambda: attention.scaled_dot_product_attention(f32, f32, f32, mask=torch.ones(3, 3)), TypeError, "boolean"),
        (lambda: attention.scaled_dot_product_attention(f32, f32, f32, mask=np.ones((3, 3), bool)), TypeError, "mask"),
    ],
    "attention.MultiHeadAttention": [
        (lambda: attention.MultiHeadAttention(8, 2, dropout=1.0), ValueError, r"dropout must be in \[0, 1\)"),
        (lambda: attention.MultiHeadAttention(8, 2, dropout=1.5), ValueError, "dropout must be in"),
        (lambda: attention.MultiHeadAttention(0, 1), ValueError, "d_model must be a positive int"),
        (lambda: attention.MultiHeadAttention(8, True), TypeError, "num_heads must be an int"),
        (lambda: attention.MultiHeadAttention(10, 3), ValueError, "d_model 10 is not divisible by num_heads 3"),
        (lambda: attention.MultiHeadAttention(8, 2, bias="yes"), TypeError, "bias must be True or False"),
        (lambda: _mha()(x8, x8, x8), TypeError, "query must be a torch.Tensor"),
        (lambda: _mha()(*(torch.ones(2, 3, 8, dtype=torch.float64),) * 3), TypeError, "module's parameters are"),
        (lambda: _mha()(torch.ones(1, 3, 8), torch.ones(2, 3, 8), torch.ones(2, 3, 8)), ValueError, "query batch 1"),
        (lambda: _mha()(*(torch.ones(2, 3, 8),) * 3, mask=torch.ones(2, 3, 3, dtype=torch.bool)), ValueError, "3-D"),
        (
            lambda: _mha()(torch.ones(2, 3, 8), torch.ones(2, 5, 8), torch.ones(2, 5, 8), mask=torch.ones(2, 5) > 0),
            ValueError,
            r"looks like a \(batch, k_len\) key padding mask.*key_mask=",
        ),
        (
            lambda: _mha()(*(torch.ones(2, 3, 8),) * 3, key_mask=torch.ones(2, 3)),
            TypeError,
            "key_mask must be boolean",
        ),
        (
            lambda: _mha()(*(torch.ones(2, 3, 8),) * 3, key_mask=bmask),
            ValueError,
            r"key_mask must be \(batch, k_len\) = \(2, 3\)",
        ),
        (
            lambda: _mha()(*(torch.ones(2, 3, 8),) * 3, key_mask=[[True] * 3] * 2),
            TypeError,
            "key_mask must be a torch.Tensor",
        ),
        (lambda: attention.MultiHeadAttention.from_torch(_mha()), TypeError, "module must be a torch.nn.Multihead"),
    ],
    # ------------------------------------------------------------------------------------- env
    "env.set_seed": [
        (lambda: env.set_seed(-1), ValueError, "seed must be a non-negative int"),
        (lambda: env.set_seed(1.5), TypeError, "seed must be an int"),
        (lambda: env.set_seed(True), TypeError, "seed must be an int"),
    ],
    "env.get_device": [
        (lambda: env.get_device("cdua"), ValueError, "prefer='cdua' is not a device name torch knows; available here"),
        (lambda: env.get_device(3), TypeError, "prefer must be a device name"),
    ],
    "env.available_devices": "takes no arguments",
    "env.print_versions": "takes no arguments",
    "env.versions": "takes no arguments",
    "env.torch_version_warning": [
        (lambda: env.torch_version_warning(2.13), TypeError, "version must be a version string"),
    ],
    "env.check_environment": [
        (lambda: env.check_environment(0.1), TypeError, "course_version must be a version string"),
    ],
    # ------------------------------------------------------------------------------- efficient
    "efficient.naive_attention": [
        (lambda: efficient.naive_attention(arr, arr[:, :2], arr[:, :2], causal=True), ValueError, "causal=True needs"),
        (lambda: efficient.naive_attention(arr, arr, arr, causal="yes"), TypeError, "causal must be True or False"),
        (lambda: efficient.naive_attention(f32, f32, f32), TypeError, "q must be a NumPy array"),
    ],
    "efficient.online_softmax": [
        (lambda: efficient.online_softmax(np.ones(3), block_size=0), ValueError, "block_size must be a positive int"),
        (lambda: efficient.online_softmax(np.float64(1.0)), ValueError, "x must have a last axis"),
    ],
    "efficient.online_softmax_stats": [
        (lambda: efficient.online_softmax_stats(np.ones(3), block_size=2.0), TypeError, "block_size must be an int"),
    ],
    "efficient.tiled_attention": [
        (lambda: efficient.tiled_attention(arr, arr, arr, q_block=0), ValueError, "q_block must be a positive int"),
        (lambda: efficient.tiled_attention(arr, arr, arr, k_block=2.5), TypeError, "k_block must be an int"),
        (lambda: efficient.tiled_attention(arr, arr, arr, mask=np.ones((4, 3), bool)), ValueError, "mask of shape"),
    ],
    "efficient.measure_peak_memory": [
        (lambda: efficient.measure_peak_memory(3), TypeError, "fn must be a function"),
    ],
    "efficient.attention_flops": [
        (lambda: efficient.attention_flops(0, 8), ValueError, "seq_len must be a positive int"),
        (lambda: efficient.attention_flops(8, 8.0), TypeError, "d_model must be an int"),
    ],
    "efficient.crossover_length": [(lambda: efficient.crossover_length(-1), ValueError, "d_model must be a positive")],
    "efficient.tile_rows": [
        (lambda: efficient.tile_rows(64, 100, 2), ValueError, "sram_bytes must hold four tiles"),
        (lambda: efficient.tile_rows(64.0, 1000), TypeError, "d_head must be an int"),
    ],
    "efficient.hbm_bytes_naive": [(lambda: efficient.hbm_bytes_naive(0, 64), ValueError, "seq_len must be a positive")],
    "efficient.hbm_bytes_tiled": [
        (lambda: efficient.hbm_bytes_tiled(16, 4, -1), ValueError, "sram_bytes must be a positive"),
        (lambda: efficient.hbm_bytes_tiled(16, 4, 1000, bytes_per_value=0), ValueError, "bytes_per_value must be"),
    ],
    "efficient.kv_cache_step": [
        (
            lambda: efficient.kv_cache_step(np.ones((2, 4)), np.ones((0, 2)), np.ones((0, 2)), *np.ones((3, 4, 2))),
            ValueError,
            r"x_t must be one token \(d_model,\)",
        ),
        (
            lambda: efficient.kv_cache_step(np.ones(4), np.ones((1, 3)), np.ones((1, 2)), *np.ones((3, 4, 2))),
            ValueError,
            "k_cache must be",
        ),
        (
            lambda: efficient.kv_cache_step(np.ones(4), np.ones((2, 2)), np.ones((1, 2)), *np.ones((3, 4, 2))),
            ValueError,
            "k_cache and v_cache must hold the same number of tokens",
        ),
    ],
    "efficient.decode_with_cache": [
        (lambda: efficient.decode_with_cache(np.ones(4), *np.ones((3, 4, 2))), ValueError, "x must be"),
        (lambda: efficient.decode_with_cache(np.ones((2, 4)), *np.ones((3, 4, 2)), step=1), TypeError, "step must be"),
    ],
    "efficient.decode_without_cache": [
        (lambda: efficient.decode_without_cache(np.ones((2, 4)), *np.ones((3, 3, 2))), ValueError, "w_q must be"),
    ],
    "efficient.decode_flops": [
        (lambda: efficient.decode_flops(0, 8, 4, True), ValueError, "prefix_len must be a positive"),
        (lambda: efficient.decode_flops(4, 8, 4, cached=1), TypeError, "cached must be True or False"),
    ],
    "efficient.online_update": [
        (lambda: efficient.online_update(0.0, 1.0, np.ones((2, 2))), ValueError, "block must be 1-D"),
        (lambda: efficient.online_update(0.0, 1.0, "abc"), TypeError, "block must"),
    ],
    "efficient.flash_step": [
        (lambda: efficient.flash_step(arr, arr, arr, arr, arr), ValueError, "must agree on k_block"),
        (lambda: efficient.flash_step(f32, f32, f32, f32, f32), TypeError, "m must be a NumPy array"),
    ],
    "efficient.count_matmul_flops": [(lambda: efficient.count_matmul_flops(3), TypeError, "fn must be a function")],
    "efficient.mha_param_count": [
        (lambda: efficient.mha_param_count(8, 3), ValueError, "not divisible by num_heads 3"),
        (lambda: efficient.mha_param_count(8, 2, bias=1), TypeError, "bias must be True or False"),
    ],
    # ---------------------------------------------------------------------------------- timing
    "timing.median_time": [
        (lambda: timing.median_time(sum, [1], repeats=0), ValueError, "repeats must be a positive int"),
        (lambda: timing.median_time(sum, [1], clock="gpu"), ValueError, "clock must be one of"),
        (lambda: timing.median_time("sum"), TypeError, "fn must be a function"),
    ],
    "timing.min_time": [
        (lambda: timing.min_time(sum, [1], warmup=-1), ValueError, "warmup must be a non-negative int"),
        (lambda: timing.min_time(sum, [1], repeats=2.0), TypeError, "repeats must be an int"),
    ],
    "timing.loglog_slope": [
        (lambda: timing.loglog_slope([1, 2], [1]), ValueError, "sizes and values must be 1-D"),
        (lambda: timing.loglog_slope([1, 0], [1, 2]), ValueError, "must be positive"),
        (lambda: timing.loglog_slope([2, 2], [1, 2]), ValueError, "at least two different"),
        (lambda: timing.loglog_slope([1, np.inf], [1, 2]), ValueError, "must be finite"),
    ],
    "timing.thread_info": "takes no arguments",
    # ----------------------------------------------------------------------------------- heads
    "heads.attention_entropy": [
        (lambda: heads.attention_entropy(np.array([-0.5, 1.5])), ValueError, "weights must be non-negative"),
        (lambda: heads.attention_entropy(np.array([np.nan, 1.0])), ValueError, "weights holds NaN"),
        (lambda: heads.attention_entropy(np.array(["a"])), TypeError, "weights must hold real numbers"),
    ],
    "heads.head_entropy": [(lambda: heads.head_entropy(np.ones((3, 3))), ValueError, "weights must be")],
    "heads.max_entropy": [
        (lambda: heads.max_entropy(0), ValueError, "k_len must be a positive int"),
        (lambda: heads.max_entropy(np.int64(4.0) + 0.5), TypeError, "k_len must be an int"),
    ],
    "heads.head_similarity": [(lambda: heads.head_similarity(np.ones(3)), ValueError, "weights must be")],
    "heads.head_role_scores": [
        (lambda: heads.head_role_scores(np.ones((1, 2, 3))), ValueError, "q_len == k_len"),
        (
            lambda: heads.head_role_scores(np.ones((1, 3, 3)), match_ids=np.ones(3)),
            TypeError,
            "match_ids must hold integer",
        ),
    ],
    "heads.switch_off_heads": [
        (lambda: heads.switch_off_heads(f32, [0], 3), ValueError, "must split into num_heads=3 equal blocks"),
        (lambda: heads.switch_off_heads(f32, [2], 2), ValueError, r"head 2 is not in range\(num_heads=2\)"),
        (lambda: heads.switch_off_heads(arr, [0], 2), TypeError, "concat must be a torch.Tensor"),
    ],
    "role_task.parse_role_sequence": [
        (lambda: role_task.parse_role_sequence("Ar Zq", role_task.RoleModelConfig()), ValueError, "token 'Zq'"),
        (lambda: role_task.parse_role_sequence(3, role_task.RoleModelConfig()), TypeError, "sequence must be a string"),
        (lambda: role_task.parse_role_sequence("Ar", None), TypeError, "config must be a RoleModelConfig"),
    ],
    "role_task.role_model_snapshot": [
        (lambda: role_task.role_model_snapshot(_mha(), "Ar"), TypeError, "model must be a RoleModel"),
    ],
    "role_task.explore_role_model": [
        (lambda: role_task.explore_role_model(_mha()), TypeError, "model must be a RoleModel"),
        (lambda: role_task.explore_role_model(role_task.RoleModel(), num_examples=0), ValueError, "num_examples"),
    ],
    "data.token_label": [
        (lambda: data.token_label(13), ValueError, "i holds token ids outside the vocabulary"),
        (lambda: data.token_label("a"), TypeError, "i must be one token id"),
    ],
    "data.step_labels": [
        (lambda: data.step_labels(src), ValueError, r"tokens must be one decoded row \(steps,\)"),
        (lambda: data.step_labels([3, 99]), ValueError, "tokens holds token ids outside the vocabulary"),
    ],
    "reversal.decoding.check_decoder_input": [
        (lambda: decoding.check_decoder_input(src, 3), ValueError, r"decoder_input must be \(batch=3, tgt_len\)"),
        (lambda: decoding.check_decoder_input(src.float(), 2), TypeError, "decoder_input must hold integers"),
        (lambda: decoding.check_decoder_input(src, -1), ValueError, "batch must be a non-negative int"),
    ],
    "reversal.decoding.as_config": [
        (lambda: decoding.as_config({"d_embed": 8}, rnn.GRUConfig), TypeError, "cfg must be a GRUConfig"),
        (lambda: decoding.as_config(None, "GRUConfig"), TypeError, "config_cls must be a config class"),
    ],
    "reversal.decoding.greedy_decode_one": [
        (lambda: decoding.greedy_decode_one(_gru(), src), ValueError, r"src must be one non-empty sequence"),
        (lambda: decoding.greedy_decode_one(_gru(), [3, 4]), TypeError, "src must be a torch.Tensor"),
        (lambda: decoding.greedy_decode_one(_mha(), src[0]), TypeError, "model must be a reversal model"),
    ],
    "reversal.decoding.RecomputePrefix": [
        (lambda: decoding.RecomputePrefix().init_state(src, torch.tensor([4, 1])), ValueError, "src_lengths must lie"),
        (lambda: decoding.RecomputePrefix().init_state(src.float(), src_lengths), TypeError, "src must hold integer"),
    ],
    "reversal.rnn.gru_step": [
        (
            lambda: rnn.gru_step(torch.ones(2, 3), torch.ones(2, 4), torch.ones(4, 3), torch.ones(12, 4), None, None),
            ValueError,
            r"weight_ih must be \(3 \* d_hidden, d_in\)",
        ),
        (lambda: rnn.gru_step(arr, f32, f32, f32, None, None), TypeError, "x must be a torch.Tensor"),
    ],
    "reversal.rnn.attention_decoder_step": [
        (lambda: rnn.attention_decoder_step(_gru(), {}, src[:, 0]), TypeError, "model must have embed, cell"),
    ],
    "reversal.views.seq2seq_snapshot": [
        (lambda: views.seq2seq_snapshot(_gru(), "abz"), ValueError, "text may only use the symbols"),
        (lambda: views.seq2seq_snapshot(_gru(), "abc"), ValueError, "no attention weights"),
        (lambda: views.seq2seq_snapshot(_gru(), 3), TypeError, "text must be a string"),
    ],
    "reversal.views.explore_seq2seq": [
        (lambda: views.explore_seq2seq(_mha(), ["abc"]), TypeError, "model must be a reversal model"),
    ],
    "role_task.RoleTask": [
        (
            lambda: role_task.RoleTask(np.ones((2, 3)), src, src, {}),
            TypeError,
            "RoleTask.tokens must be a torch.Tensor",
        ),
    ],
    "role_task.make_role_task": [
        (lambda: role_task.make_role_task(0), ValueError, "num_sequences must be a positive int"),
        (lambda: role_task.make_role_task(2, seq_len=5), ValueError, "seq_len must be even"),
        (lambda: role_task.make_role_task(2, seed=-1), ValueError, "seed must be a non-negative int"),
    ],
    "role_task.RoleModelConfig": [
        (lambda: role_task.RoleModelConfig(d_model=0), ValueError, "RoleModelConfig.d_model")
    ],
    "role_task.RoleModel": [
        (lambda: role_task.RoleModel({"d_model": 8}), TypeError, "config must be a RoleModelConfig"),
        (lambda: role_task.RoleModel()(torch.ones(2, 3)), TypeError, "tokens must hold integers"),
    ],
    "role_task.train_role_model": [
        (lambda: role_task.train_role_model(steps=0), ValueError, "steps must be a positive int"),
        (lambda: role_task.train_role_model(steps=1, lr=-1.0), ValueError, "lr must be > 0"),
    ],
    "role_task.role_accuracy": [
        (lambda: role_task.role_accuracy(_mha(), _task()), TypeError, "model must be a RoleModel")
    ],
    "heads.ablate_heads": [
        (lambda: heads.ablate_heads(_mha(), 5).__enter__(), ValueError, r"head 5 is not in range\(num_heads=2\)"),
        (lambda: heads.ablate_heads("mha", 0).__enter__(), TypeError, "attention must be a MultiHeadAttention"),
    ],
    "role_task.token_labels": [
        (lambda: role_task.token_labels(_task(), 5), ValueError, "index 5 is out of range"),
        (lambda: role_task.token_labels("task"), TypeError, "task must be a RoleTask"),
    ],
    # ------------------------------------------------------------------------------------ data
    "data.Batch": [(lambda: data.Batch(src, src_lengths, src, src[:1]), ValueError, "Batch needs src")],
    "data.data_dir": "takes no arguments",
    "data.encode": [
        (lambda: data.encode("abz"), ValueError, "text may only use the symbols"),
        (lambda: data.encode([3, 4]), TypeError, "text must be a str"),
    ],
    "data.decode": [
        (lambda: data.decode([3, 99]), ValueError, "ids holds token ids outside the vocabulary"),
        (lambda: data.decode([3], stop_at_eos=None), TypeError, "stop_at_eos must be True or False"),
        (lambda: data.decode([[3, 4]]), ValueError, "ids must be a 1-D sequence"),
    ],
    "data.check_token_ids": [
        (lambda: data.check_token_ids(torch.ones(2), "src"), ValueError, "src must hold integer token ids"),
        (lambda: data.check_token_ids([1], name=3), TypeError, "name must be the argument's name"),
    ],
    "data.generate_splits": [(lambda: data.generate_splits(seed=-1), ValueError, "seed must be a non-negative int")],
    "data.write_splits": [(lambda: data.write_splits(None), TypeError, "directory must be a folder path")],
    "data.load_split": [
        (lambda: data.load_split("dev"), ValueError, "split must be one of"),
        (lambda: data.load_split("val", directory=3), TypeError, "directory must be a folder path"),
    ],
    "data.load_splits": [(lambda: data.load_splits(directory=3.5), TypeError, "directory must be a folder path")],
    "data.make_decoder_io": [
        (lambda: data.make_decoder_io(src.float(), src_lengths), TypeError, "y must hold integers"),
        (lambda: data.make_decoder_io(src, torch.tensor([4, 1])), ValueError, r"lengths must lie in \[0, max_len=3\]"),
    ],
    "data.collate": [
        (lambda: data.collate([]), ValueError, "sources is empty"),
        (lambda: data.collate(["abc"]), TypeError, r"sources\[0\] must be a sequence of token ids"),
        (lambda: data.collate([[3.5, 4]]), TypeError, r"sources\[0\] must hold integer token ids"),
        (lambda: data.collate("abc"), TypeError, "sources must be a list"),
    ],
    "data.RandomBatchSampler": [
        (lambda: data.RandomBatchSampler(0, pool=[(3, 4)]), ValueError, "batch_size must be a positive int"),
        (lambda: data.RandomBatchSampler(2, 5, 4, pool=[(3, 4)]), ValueError, "need 1 <= min_len <= max_len"),
        (lambda: data.RandomBatchSampler(2, seed=0.5, pool=[(3, 4)]), TypeError, "seed must be an int"),
    ],
    # ------------------------------------------------------------------------------- reversal
    "reversal.rnn.GRUConfig": [(lambda: rnn.GRUConfig(d_hidden=0), ValueError, "GRUConfig.d_hidden")],
    "reversal.transformer.TransformerConfig": [
        (
            lambda: transformer.TransformerConfig(dropout=1.0),
            ValueError,
            r"TransformerConfig.dropout must be in \[0, 1\)",
        ),
        (lambda: transformer.TransformerConfig(d_model=30, num_heads=4), ValueError, "not divisible by num_heads 4"),
        (lambda: transformer.TransformerConfig(random_positions=-1), ValueError, "TransformerConfig.random_positions"),
    ],
    "reversal.rnn.GRUSeq2Seq": [
        (lambda: rnn.GRUSeq2Seq({"d_hidden": 8}), TypeError, "cfg must be a GRUConfig"),
        (lambda: _gru()(src, src_lengths, src.float()), TypeError, "decoder_input must hold integers"),
    ],
    "reversal.rnn.GRUEncoder": [(lambda: rnn.GRUEncoder({"d_embed": 8}), TypeError, "cfg must be a GRUConfig")],
    "reversal.transformer.FeedForward": [
        (lambda: transformer.FeedForward(8, 0), ValueError, "d_ff must be a positive")
    ],
    "reversal.transformer.EncoderLayer": [
        (lambda: transformer.EncoderLayer(rnn.GRUConfig(), 4, 64), TypeError, "d_model must be an int"),
        (lambda: transformer.EncoderLayer(32, 3, 64), ValueError, "not divisible by num_heads 3"),
    ],
    "reversal.transformer.DecoderLayer": [
        (lambda: transformer.DecoderLayer(32, 4, 0), ValueError, "d_ff must be a positive int"),
        (lambda: transformer.DecoderLayer(32, 4, 64, dropout=1.0), ValueError, "dropout must be in"),
    ],
    "reversal.decoding.Seq2Seq": [(lambda: decoding.Seq2Seq(), TypeError, "Protocols cannot be instantiated")],
    "reversal.rnn.AttentionGRUSeq2Seq": [
        (lambda: rnn.AttentionGRUSeq2Seq(transformer.TransformerConfig()), TypeError, "cfg must be a GRUConfig"),
    ],
    "reversal.transformer.TransformerSeq2Seq": [
        (lambda: transformer.TransformerSeq2Seq(rnn.GRUConfig()), TypeError, "cfg must be a TransformerConfig"),
    ],
    "reversal.rnn.AdditiveAttention": [
        (lambda: rnn.AdditiveAttention(4, 0, 4), ValueError, "d_key must be a positive int"),
        (
            lambda: rnn.AdditiveAttention(4, 6, 5)(torch.ones(2, 4), torch.ones(2, 3, 6), torch.ones(2, 3)),
            TypeError,
            "key_mask must be boolean",
        ),
    ],
    "reversal.rnn.additive_scores": [
        (lambda: rnn.additive_scores(torch.ones(2, 4), torch.ones(2, 3, 5), torch.ones(4)), ValueError, "d_attn"),
        (lambda: rnn.additive_scores(np.ones((2, 4)), torch.ones(2, 3, 4), torch.ones(4)), TypeError, "query_part"),
    ],
    "reversal.rnn.concat_linear_scores": [
        (
            lambda: rnn.concat_linear_scores(torch.ones(1, 2), torch.ones(1, 3, 2), torch.ones(1, 5), torch.ones(1)),
            ValueError,
            r"weight must be \(1, d_query \+ d_key\)",
        ),
    ],
    "reversal.transformer.sinusoidal_positions": [
        (lambda: transformer.sinusoidal_positions(4, 5), ValueError, "d_model must be even"),
        (lambda: transformer.sinusoidal_positions(4.0, 4), TypeError, "num_positions must be an int"),
    ],
    "reversal.transformer.make_decoder_masks": [
        (lambda: transformer.make_decoder_masks(src_lengths, 3, 0), ValueError, "tgt_len must be a positive int"),
        (lambda: transformer.make_decoder_masks([3, 2], 3, 2), TypeError, "src_lengths must be a torch.Tensor"),
    ],
    "reversal.checkpoints.build_model": [
        (lambda: checkpoints.build_model("lstm"), ValueError, "kind must be one of"),
        (lambda: checkpoints.build_model("gru", d_model=8), TypeError, "GRUConfig has no field 'd_model'"),
    ],
    "reversal.checkpoints.count_parameters": [
        (lambda: checkpoints.count_parameters("gru"), TypeError, "model must be a torch.nn.Module")
    ],
    "reversal.decoding.greedy_decode": [
        (
            lambda: decoding.greedy_decode(_gru(), src, src_lengths, max_steps=3.5),
            TypeError,
            "max_steps must be an int",
        ),
        (lambda: decoding.greedy_decode(_gru(), src, src_lengths, max_steps=0), ValueError, "max_steps must be a pos"),
        (lambda: decoding.greedy_decode(_mha(), src, src_lengths), TypeError, "model must be a reversal model"),
    ],
    "reversal.decoding.mirror_shares": [
        (lambda: decoding.mirror_shares(torch.ones(3, 4), src_lengths), ValueError, "weights must be"),
        (lambda: decoding.mirror_shares(f32, torch.tensor([1.0, 2.0])), TypeError, "src_lengths must hold integers"),
        (lambda: decoding.mirror_shares(f32, lengths, per_head=1), TypeError, "per_head must be True or False"),
    ],
    "reversal.decoding.check_source": [
        (lambda: decoding.check_source(src.numpy(), src_lengths), TypeError, "src must be a torch.Tensor"),
        (
            lambda: decoding.check_source(src, torch.tensor([4, 1])),
            ValueError,
            r"src_lengths must lie in \[1, src_len=3\]",
        ),
    ],
    "reversal.checkpoints.train_pretrained": [
        (lambda: checkpoints.train_pretrained("gpt"), ValueError, "name must be one of"),
        (lambda: checkpoints.train_pretrained("gru", seed=1.5), TypeError, "seed must be an int"),
    ],
    "reversal.checkpoints.Pretrained": [
        (lambda: checkpoints.Pretrained("gru", {}), TypeError, "missing 1 required positional argument: 'recipe'"),
    ],
    "reversal.checkpoints.load_pretrained": [
        (lambda: checkpoints.load_pretrained("../outside"), ValueError, "name must be a plain checkpoint name"),
        (lambda: checkpoints.load_pretrained(3), TypeError, "name must be a checkpoint name"),
        (lambda: checkpoints.load_pretrained("nope"), FileNotFoundError, "no checkpoint nope.pt"),
    ],
    "reversal.checkpoints.save_checkpoint": [
        (lambda: checkpoints.save_checkpoint(_mha(), "x.pt"), TypeError, "model must be one of"),
        (lambda: checkpoints.save_checkpoint(_gru(), "model.pth"), ValueError, "path must end in .pt"),
    ],
    # -------------------------------------------------------------------------------- training
    "reversal.training.TrainConfig": [
        (lambda: training.TrainConfig(steps=0), ValueError, "TrainConfig.steps must be a positive int"),
        (lambda: training.TrainConfig(lr=0.0), ValueError, "TrainConfig.lr must be > 0"),
        (lambda: training.TrainConfig(min_len=9, max_len=4), ValueError, "min_len <= max_len"),
        (lambda: training.TrainConfig(betas=0.9), TypeError, "TrainConfig.betas must be a pair"),
    ],
    "reversal.training.make_optimizer": [
        (lambda: training.make_optimizer(_mha(), training.TrainConfig()), TypeError, "model must be a reversal model"),
        (lambda: training.make_optimizer(_gru(), {"lr": 0.1}), TypeError, "config must be a TrainConfig"),
    ],
    "reversal.training.recipe": [
        (lambda: training.recipe("lstm"), ValueError, "kind must be one of"),
        (lambda: training.recipe("gru", step=3), TypeError, "TrainConfig has no field 'step'"),
    ],
    "reversal.training.TrainResult": [
        (lambda: training.TrainResult(steps=-1, seconds=0.0), ValueError, "TrainResult.steps")
    ],
    "reversal.training.EvalResult": [
        (
            lambda: training.EvalResult(1.0, 1.0, 1, {4: (1.0, 1.0, 1)}).bucket(9, 12),
            ValueError,
            "no evaluated sequence",
        ),
        (lambda: training.EvalResult(1.0, 1.0, 1, []), TypeError, "EvalResult.by_length must be a dict"),
    ],
    "reversal.training.sequence_loss": [
        (lambda: training.sequence_loss(torch.ones(2, 3, 5), torch.ones(2, 3)), TypeError, "target must hold integers"),
        (lambda: training.sequence_loss(torch.ones(2, 3, 5), src[:, :2]), ValueError, "disagree on"),
    ],
    "reversal.training.leaky_batch": [
        (lambda: training.leaky_batch([1]), TypeError, "batch must be a course_utils.data.Batch")
    ],
    "reversal.training.train_step": [
        (lambda: training.train_step(_gru(), object(), _batch()), TypeError, "optimizer must have step"),
        (
            lambda: training.train_step(_gru(), torch.optim.SGD(_mha().parameters(), lr=0.1), [1]),
            TypeError,
            "batch must be",
        ),
    ],
    "reversal.training.lr_factor": [
        (lambda: training.lr_factor(-1, training.TrainConfig()), ValueError, "step must be a non-negative int"),
        (lambda: training.lr_factor(0, {"lr": 1.0}), TypeError, "config must be a TrainConfig"),
    ],
    "reversal.training.train": [
        (lambda: training.train(_gru(), {"steps": 1}), TypeError, "config must be a TrainConfig"),
        (lambda: training.train("gru"), TypeError, "model must be a reversal model"),
        (lambda: training.train(_gru(), training.TrainConfig(steps=1), device="cdua"), ValueError, "cdua"),
        (lambda: training.train(_gru(), training.TrainConfig(steps=1), step=1), TypeError, "step must be a function"),
        (lambda: training.train(_gru(), training.TrainConfig(steps=1), decode=1), TypeError, "decode must be a func"),
    ],
    # ------------------------------------------------------------------------------------- retrieval (lesson 04)
    "retrieval.make_batch": [
        (lambda: retrieval.make_batch(0, 2), TypeError, "generator must be a torch.Generator"),
        (lambda: retrieval.make_batch(torch.Generator(), 0), ValueError, "batch must be a positive int"),
        (lambda: retrieval.make_batch(torch.Generator(), 2, n_keys=2.0), TypeError, "n_keys must be an int"),
        (lambda: retrieval.make_batch(torch.Generator(), 2, noise=-0.1), ValueError, "noise must be >= 0"),
    ],
    "retrieval.weight_on_match": [
        (lambda: retrieval.weight_on_match([[0.5]], torch.zeros(1)), TypeError, "weights must be a torch.Tensor"),
        (
            lambda: retrieval.weight_on_match(torch.ones(2, 1, 3, 8), torch.zeros(2)),
            ValueError,
            r"weights must be \(batch, heads, 1, k_len\)",
        ),
        (
            lambda: retrieval.weight_on_match(torch.ones(2, 1, 1, 8), torch.zeros(3)),
            ValueError,
            r"index must be \(batch,\) = \(2,\)",
        ),
    ],
    "retrieval.diagonal_dominance": [
        (lambda: retrieval.diagonal_dominance(np.eye(3)), TypeError, "m must be a torch.Tensor"),
        (lambda: retrieval.diagonal_dominance(torch.ones(3, 4)), ValueError, "m must be a square"),
    ],
    "retrieval.train_step": [
        (lambda: retrieval.train_step(None, None, (1, 2)), ValueError, r"batch must be \(query, keys, values, target"),
    ],
    "retrieval.train": [
        (lambda: retrieval.train(None, None, step=3), TypeError, "step must be a function"),
        (lambda: retrieval.train(None, None, steps=0), ValueError, "steps must be a positive int"),
        (lambda: retrieval.train(None, None, batch_size=1.5), TypeError, "batch_size must be an int"),
    ],
    "reversal.training.evaluate": [
        (lambda: training.evaluate(_gru(), [], batch_size=4), ValueError, "sequences is empty"),
        (lambda: training.evaluate(_gru(), _batch(), batch_size=0), ValueError, "batch_size must be a positive int"),
        (lambda: training.evaluate(_gru(), _batch(), decode="greedy"), TypeError, "decode must be a function"),
    ],
    "reversal.training.teacher_forced_accuracy": [
        (lambda: training.teacher_forced_accuracy(_gru(), _batch(), leak=1), TypeError, "leak must be True or False"),
    ],
}


def _public_callables():
    import course_utils.reversal

    reversal_modules = [f"reversal.{name}" for name in course_utils.reversal.__all__ if name != "plots"]
    for module_name in [*course_utils.__all__, *reversal_modules]:
        if module_name.startswith("__") or module_name in VALIDATED_BY_THEIR_OWN_TESTS:
            continue
        module = importlib.import_module(f"course_utils.{module_name}")
        for name in module.__all__:
            if callable(getattr(module, name)):
                yield f"{module_name}.{name}"


def test_every_public_callable_is_in_the_table():
    missing = [name for name in _public_callables() if name not in BAD_INPUT]
    assert not missing, f"public callables with no bad-input row in BAD_INPUT: {missing}"
    stale = sorted(set(BAD_INPUT) - set(_public_callables()))
    assert not stale, f"BAD_INPUT rows for names that are not public callables: {stale}"


def test_allow_list_names_real_modules_only_when_owned_elsewhere():
    mine = {name.rsplit(".", 1)[0] for name in BAD_INPUT}
    assert not mine & set(VALIDATED_BY_THEIR_OWN_TESTS)


@pytest.mark.parametrize(
    ("call", "error", "fragment"),
    [
        pytest.param(*row, id=f"{name}[{i}]")
        for name, rows in BAD_INPUT.items()
        if isinstance(rows, list)
        for i, row in enumerate(rows)
    ],
)
def test_bad_input_is_refused_with_a_clear_message(call, error, fragment):
    with pytest.raises(error, match=fragment) as info:
        call()
    assert type(info.value) in (TypeError, ValueError, FileNotFoundError), type(info.value)


@pytest.mark.parametrize("name", [n for n, rows in BAD_INPUT.items() if isinstance(rows, str)])
def test_argument_free_callables_really_take_no_arguments(name):
    import inspect

    module_name, attr = name.rsplit(".", 1)
    function = getattr(importlib.import_module(f"course_utils.{module_name}"), attr)
    assert not inspect.signature(function).parameters, f"{name} takes arguments: give it bad-input rows"
