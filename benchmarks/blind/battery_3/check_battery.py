"""Battery 3's own sanity check: every case is well formed, every source compiles and defines the stub's name.

Run: .venv/bin/python benchmarks/blind/battery_3/check_battery.py
It never runs a checker and never judges whether an answer is wrong; it only checks the battery's own form.
"""

import ast
import importlib.util
import pathlib
import sys
from collections import Counter

HERE = pathlib.Path(__file__).resolve().parent
CASE_KEYS = {"id", "exercise", "mistake", "kind", "source"}
PREDICTION_KEYS = {"id", "prediction", "mistake", "kind", "value"}
# exercises whose stub is not named after the exercise id
STUB_NAMES = {
    "04.multi_head_module": "MyMultiHeadAttention",
    "04.causal_self_attention": "CausalSelfAttention",
    "07.encoder": "MyEncoder",
    "07.additive_attention": "MyAdditiveAttention",
    "07.decoder_step": "my_decoder_step",
    "07.greedy_decode": "my_greedy_decode",
    "08.encoder_layer": "EncoderLayer",
    "08.decoder_layer": "DecoderLayer",
}


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CASES


def defined_names(source):
    tree = ast.parse(source)
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)}


def main():
    problems, seen = [], set()
    per_lesson, per_kind = Counter(), Counter()
    for path in sorted(HERE.glob("lesson_*.py")):
        for case in load(path):
            cid = case.get("id")
            if cid in seen:
                problems.append(f"{cid}: duplicate id")
            seen.add(cid)
            keys = set(case)
            if keys not in (CASE_KEYS, PREDICTION_KEYS):
                problems.append(f"{cid}: keys {sorted(keys)}")
                continue
            per_kind[case["kind"]] += 1
            if "prediction" in case:
                per_lesson[path.stem, "predictions"] += 1
                continue
            per_lesson[path.stem, "answers"] += 1
            try:
                names = defined_names(case["source"])
            except SyntaxError as err:
                problems.append(f"{cid}: does not compile ({err})")
                continue
            exercise = case["exercise"]
            name = STUB_NAMES.get(exercise, exercise.split(".", 1)[1])
            if name not in names:
                problems.append(f"{cid}: defines {sorted(names)}, not {name}")
            if not cid.startswith(exercise[:2] + "-"):
                problems.append(f"{cid}: id does not start with the lesson number of {exercise}")
    for (lesson, what), n in sorted(per_lesson.items()):
        print(f"{lesson} {what:<11} {n}")
    print("total", sum(per_lesson.values()), "| kinds:", len(per_kind))
    if "--kinds" in sys.argv:
        for kind, n in per_kind.most_common():
            print(f"  {n:3d} {kind}")
    for p in problems:
        print("PROBLEM", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
