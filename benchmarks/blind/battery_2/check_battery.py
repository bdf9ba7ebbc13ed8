"""Sanity check of battery 2: every source compiles and defines the exercise's name; ids are unique.

Run from the repository root: python benchmarks/blind/battery_2/check_battery.py
It does not import or run the course's checker.
"""

import collections
import importlib.util
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

CLASSES = {"04.multi_head_module": "MyMultiHeadAttention", "04.causal_self_attention": "CausalSelfAttention",
           "07.encoder": "MyEncoder", "07.additive_attention": "MyAdditiveAttention",
           "07.decoder_step": "my_decoder_step", "07.greedy_decode": "my_greedy_decode",
           "08.encoder_layer": "EncoderLayer", "08.decoder_layer": "DecoderLayer"}


def name_of(exercise):
    return CLASSES.get(exercise, exercise.split(".", 1)[1])


def main():
    ids, per_lesson, per_kind, problems = set(), collections.Counter(), collections.Counter(), []
    n_pred = 0
    for path in sorted(HERE.glob("lesson_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for case in mod.CASES:
            cid = case["id"]
            if cid in ids:
                problems.append(f"duplicate id {cid}")
            ids.add(cid)
            per_lesson[path.stem] += 1
            per_kind[case["kind"]] += 1
            if "prediction" in case:
                n_pred += 1
                continue
            name = name_of(case["exercise"])
            namespace = {"__name__": "battery_case"}
            try:
                exec(compile(case["source"], cid, "exec"), namespace)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{cid}: {type(exc).__name__}: {exc}")
                continue
            if name not in namespace:
                problems.append(f"{cid}: does not define {name}")
    print(dict(per_lesson), "total", sum(per_lesson.values()), "predictions", n_pred)
    print(dict(per_kind.most_common()))
    for p in problems:
        print("PROBLEM", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
