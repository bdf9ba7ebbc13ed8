"""Structure check of battery 4: every case compiles and defines the stub's name; ids are unique.

Run: .venv/bin/python benchmarks/blind/battery_4/check_battery.py
It does not run the course's checker and says nothing about it.
"""

import ast
import importlib.util
import pathlib
import sys

HERE = pathlib.Path(__file__).parent
KEYS_EXERCISE = {"id", "exercise", "mistake", "kind", "source"}
KEYS_PREDICTION = {"id", "prediction", "mistake", "kind", "value"}
# The stub's name where it is not the part of the exercise id after the dot (read from the student editions).
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
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def main():
    problems, seen, counts = [], set(), {}
    for path in sorted(HERE.glob("lesson_*.py")):
        lesson = path.stem[-2:]
        for case in load(path):
            cid = case.get("id")
            if cid in seen:
                problems.append(f"{cid}: duplicate id")
            seen.add(cid)
            if not str(cid).startswith(lesson + "-"):
                problems.append(f"{cid}: id does not start with {lesson}-")
            if "exercise" in case:
                if set(case) != KEYS_EXERCISE:
                    problems.append(f"{cid}: keys {sorted(case)}")
                    continue
                if not case["exercise"].startswith(lesson + "."):
                    problems.append(f"{cid}: exercise {case['exercise']} is not lesson {lesson}'s")
                try:
                    names = defined_names(case["source"])
                    compile(case["source"], cid, "exec")
                except SyntaxError as error:
                    problems.append(f"{cid}: does not compile: {error}")
                    continue
                stub = STUB_NAMES.get(case["exercise"], case["exercise"].split(".", 1)[1])
                if stub not in names:
                    problems.append(f"{cid}: does not define {stub} (defines {sorted(names)})")
            else:
                if set(case) != KEYS_PREDICTION:
                    problems.append(f"{cid}: keys {sorted(case)}")
                if not case.get("prediction", "").startswith(lesson + "."):
                    problems.append(f"{cid}: prediction of another lesson")
            counts[lesson] = counts.get(lesson, 0) + 1
    for lesson, n in sorted(counts.items()):
        print(f"lesson {lesson}: {n} cases")
    print(f"total: {sum(counts.values())}")
    for problem in problems:
        print("PROBLEM", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
