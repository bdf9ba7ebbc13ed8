"""Sanity check of the battery itself (not of the course): every source compiles, defines the stub's name, and
every case has the fields the README describes. Run: python benchmarks/blind/battery_1/check_battery.py"""

import ast
import importlib.util
import pathlib
import sys
from collections import Counter

HERE = pathlib.Path(__file__).parent

# exercise id -> the name the student edition's stub defines
NAMES = {
    "00.dot_scores": "dot_scores",
    "01.by_hand_new_query": "by_hand_new_query",
    "01.attention_scores": "attention_scores",
    "01.softmax_along": "softmax_along",
    "01.attend": "attend",
    "01.self_attention": "self_attention",
    "01.is_permutation_equivariant": "is_permutation_equivariant",
    "01.strongest_key": "strongest_key",
    "01.score_scale": "score_scale",
    "01.shared_next_token_matrix": "shared_next_token_matrix",
    "02.padding_mask": "padding_mask",
    "02.causal_mask": "causal_mask",
    "02.masked_softmax": "masked_softmax",
    "02.masked_attention": "masked_attention",
    "02.decoder_mask": "decoder_mask",
    "02.leaks": "leaks",
    "02.sliding_window_mask": "sliding_window_mask",
    "02.cached_causal_mask": "cached_causal_mask",
    "02.left_padding_mask": "left_padding_mask",
    "03.split_heads": "split_heads",
    "03.merge_heads": "merge_heads",
    "03.multi_head_attention": "multi_head_attention",
    "03.multi_head_attention_loop": "multi_head_attention_loop",
    "03.count_attention_parameters": "count_attention_parameters",
    "03.attention_flops": "attention_flops",
    "03.grouped_query_attention": "grouped_query_attention",
    "03.block_crossover": "block_crossover",
    "04.multi_head_module": "MyMultiHeadAttention",
    "04.weights_for_analysis": "weights_for_analysis",
    "04.load_from_torch": "load_from_torch",
    "04.torch_cross_attend": "torch_cross_attend",
    "04.softmax_backward": "softmax_backward",
    "04.qk_matrix": "qk_matrix",
    "04.train_step": "train_step",
    "04.causal_self_attention": "CausalSelfAttention",
    "04.alibi_bias": "alibi_bias",
    "05.row_entropy": "row_entropy",
    "05.switch_off": "switch_off",
    "05.role_scores": "role_scores",
    "05.model_input": "model_input",
    "05.matching_score": "matching_score",
    "05.ablation_table": "ablation_table",
    "06.online_update": "online_update",
    "06.flash_step": "flash_step",
    "06.tiled_attention": "tiled_attention",
    "06.weights_bytes": "weights_bytes",
    "06.io_bytes": "io_bytes",
    "06.kv_cache_step": "kv_cache_step",
    "06.decode_flops": "decode_flops",
    "06.causal_tiled_attention": "causal_tiled_attention",
    "06.kv_cache_bytes": "kv_cache_bytes",
    "07.my_decoder_io": "my_decoder_io",
    "07.encoder": "MyEncoder",
    "07.additive_attention": "MyAdditiveAttention",
    "07.decoder_step": "my_decoder_step",
    "07.greedy_decode": "my_greedy_decode",
    "07.my_additive_scores": "my_additive_scores",
    "07.token_accuracy": "token_accuracy",
    "08.my_positions": "my_positions",
    "08.my_decoder_masks": "my_decoder_masks",
    "08.encoder_layer": "EncoderLayer",
    "08.decoder_layer": "DecoderLayer",
    "08.my_train_step": "my_train_step",
    "08.my_greedy_decode": "my_greedy_decode",
    "08.transformer_parameters": "transformer_parameters",
    "08.teacher_forced_token_accuracy": "teacher_forced_token_accuracy",
}


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CASES


def defined_names(source):
    tree = ast.parse(source)
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def main():
    problems, ids = [], Counter()
    per_lesson, per_kind, wrong_predictions = Counter(), Counter(), 0
    for path in sorted(HERE.glob("lesson_*.py")):
        for case in load(path):
            ids[case["id"]] += 1
            per_lesson[path.stem] += 1
            per_kind[case["kind"]] += 1
            for field in ("id", "mistake", "kind"):
                if not case.get(field):
                    problems.append(f"{case.get('id')}: no {field}")
            if "prediction" in case:
                wrong_predictions += 1
                if "value" not in case:
                    problems.append(f"{case['id']}: a prediction without a value")
                continue
            name = NAMES.get(case["exercise"])
            if name is None:
                problems.append(f"{case['id']}: unknown exercise {case['exercise']}")
                continue
            try:
                compile(case["source"], case["id"], "exec")
                if name not in defined_names(case["source"]):
                    problems.append(f"{case['id']}: does not define {name}")
            except SyntaxError as error:
                problems.append(f"{case['id']}: {error}")
    problems += [f"{i}: id used {n} times" for i, n in ids.items() if n > 1]
    print("cases per lesson:", dict(per_lesson), "total", sum(per_lesson.values()))
    print("wrong predictions:", wrong_predictions)
    print("kinds:", dict(per_kind.most_common()))
    for problem in problems:
        print("PROBLEM", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
