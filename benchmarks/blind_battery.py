"""Run a blind battery of wrong answers through the checker and say what it made of each (issue 26 §4).

A battery is a folder of ``lesson_NN.py`` files, each defining ``CASES``: a list of dicts, written by someone
who never read the checker::

    {"id": "01-007", "exercise": "01.softmax_along", "mistake": "<what the student did, in words>",
     "source": "<python source defining the exercise's function or class, with its own imports>"}
    {"id": "01-031", "prediction": "01.score_variance_d64", "mistake": "...", "value": 8}

Each exercise case runs its source in a fresh namespace (like a notebook cell: ``numpy as np``, ``math``,
``torch`` when installed and the course's modules are already there) and hands the function named like the
exercise's to ``checks.check``, quietly, exactly as a lesson does; the verdict is read back from the check
log. It is **accepted** (the check passed), **named** (a catalogue mistake or a relation to the right
output), **generic** (wrong, and nothing named), **crashed** (the check said crashed or timed out, or the
source did not run) or **not attempted**. Each prediction case goes through ``checks.predict`` as a first try;
its message is checked for giving the answer away (``course_utils.checking.prediction_leaks``).

Whether a name is *right* takes a person: the Markdown table puts the battery's own words for the mistake next
to what the checker named.

Usage::

    OMP_NUM_THREADS=1 PYTHONHASHSEED=0 .venv/bin/python benchmarks/blind_battery.py
    .venv/bin/python benchmarks/blind_battery.py benchmarks/blind/battery_1 --json out.json --markdown out.md
    .venv/bin/python benchmarks/blind_battery.py --lesson 02          # one lesson (repeatable)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import math
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BATTERY = ROOT / "benchmarks" / "blind" / "battery_1"
OUTCOMES = ("named", "generic", "crashed", "accepted", "not_attempted")
_PRELUDE_MODULES = (
    "checks",
    "masks",
    "numpy_attention",
    "attention",
    "heads",
    "efficient",
    "validate",
)


def load_battery(folder: Path, lessons=None) -> list[dict]:
    """Every case of the battery in ``folder`` (its ``lesson_NN.py`` files in order), each with its lesson."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"battery folder {str(folder)!r} does not exist")
    cases = []
    for path in sorted(folder.glob("lesson_*.py")):
        lesson = path.stem.split("_", 1)[1]
        if lessons and lesson not in lessons:
            continue
        spec = importlib.util.spec_from_file_location(f"blind_battery_{folder.name}_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found = getattr(module, "CASES", None)
        if not isinstance(found, list):
            raise ValueError(f"{path} must define CASES, a list of dicts, but defines {type(found).__name__}")
        for case in found:
            if not isinstance(case, dict) or "id" not in case or not ("exercise" in case or "prediction" in case):
                raise ValueError(f"{path}: each case needs an 'id' and an 'exercise' or a 'prediction': {case!r:.200}")
            cases.append({**case, "lesson": lesson})
    return cases


def _namespace() -> dict:
    """What a notebook cell of a lesson can already use."""
    import numpy as np

    namespace = {"__name__": "__battery__", "np": np, "math": math}
    with contextlib.suppress(ImportError):
        import torch

        namespace["torch"] = torch
        namespace["nn"] = torch.nn
        namespace["F"] = torch.nn.functional
    for name in _PRELUDE_MODULES:
        with contextlib.suppress(Exception):
            namespace[name] = importlib.import_module(f"course_utils.{name}")
    return namespace


def _last_record(path: Path) -> dict | None:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return json.loads(lines[-1]) if lines else None


def run_exercise_case(case: dict, log: Path) -> dict:
    """The checker's verdict on one exercise case: outcome, misconception, relation, detail."""
    from course_utils import checks
    from course_utils.checking import handed_back, registry
    from course_utils.checking import misconceptions as catalogue

    exercise = registry.get(case["exercise"])
    namespace = _namespace()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(case.get("source", ""), f"<battery {case['id']}>", "exec"), namespace)
    except BaseException as exc:  # the source itself did not run: the student's cell would crash
        return {"outcome": "crashed", "detail": f"the source did not run: {type(exc).__name__}: {exc}"[:300]}
    answer = namespace.get(exercise.function)
    if answer is None:
        return {"outcome": "crashed", "detail": f"the source defines no {exercise.function}"}
    log.write_text("", encoding="utf-8")
    with handed_back.as_in_a_fresh_kernel(), contextlib.redirect_stdout(io.StringIO()):
        try:
            checks.check(exercise.id, answer)
        except BaseException as exc:  # the check itself must never raise; say so if it does
            return {"outcome": "crashed", "detail": f"checks.check raised {type(exc).__name__}: {exc}"[:300]}
    record = _last_record(log) or {}
    status = record.get("status")
    mid, relation = record.get("misconception"), record.get("relation")
    if status == "passed":
        outcome = "accepted"
    elif status in ("crashed", "timed_out"):
        # a crash is named only when its message says what went wrong (a cause, or a known mistake), not just where
        outcome = "named" if (mid or relation) else "crashed"
    elif status == "not_attempted":
        outcome = "not_attempted"
    elif mid or relation:
        outcome = "named"
    else:
        outcome = "generic"
    name = catalogue.get(mid).name if mid else (relation or "")
    return {
        "outcome": outcome,
        "status": status,
        "misconception": mid,
        "relation": relation,
        "name": name,
        "detail": record.get("detail", ""),
    }


def run_prediction_case(case: dict, log: Path) -> dict:
    """The verdict on one predicted value, as a first try, and whether its message gives the answer away."""
    from course_utils import checks
    from course_utils.checking import registry, tries
    from course_utils.checking.prediction_leaks import leaks

    prediction = registry.get_prediction(case["prediction"])
    tries.forget()  # every battery case is a first try
    log.write_text("", encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        checks.predict(prediction.id, case.get("value"))
    record = _last_record(log) or {}
    message = record.get("detail", "")
    gives_away = leaks(prediction, case.get("value"), message) if record.get("status") == "wrong" else []
    return {
        "outcome": {"right": "accepted", "wrong": "named" if record.get("known_wrong") else "generic"}.get(
            record.get("status"), "not_attempted"
        ),
        "status": record.get("status"),
        "misconception": record.get("known_wrong"),
        "name": record.get("known_wrong") or "",
        "detail": message,
        "leaks": gives_away,
    }


def run(folder=DEFAULT_BATTERY, lessons=None) -> dict:
    """Judge every case of the battery; the results as one JSON-ready dict."""
    cases = load_battery(folder, lessons)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.jsonl"
        saved = {name: os.environ.get(name) for name in ("COURSE_CHECK_LOG", "COURSE_CHECK_HARD_STOP")}
        os.environ["COURSE_CHECK_LOG"] = str(log)
        os.environ["COURSE_CHECK_HARD_STOP"] = "0"  # a stuck answer must not end this process
        try:
            for case in cases:
                kind = "exercise" if "exercise" in case else "prediction"
                try:
                    found = run_exercise_case(case, log) if kind == "exercise" else run_prediction_case(case, log)
                except Exception as exc:  # an unknown exercise id, a broken case: reported, never fatal
                    found = {"outcome": "crashed", "detail": f"the runner could not judge it: {exc}"[:300]}
                row = {
                    "id": case["id"],
                    "lesson": case["lesson"],
                    "kind": kind,
                    "target": case.get(kind),
                    "mistake": case.get("mistake", ""),
                    "battery_kind": case.get("kind", ""),
                    **found,
                }
                row["judgement"] = judgement(row) if kind == "exercise" else ""
                results.append(row)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return {"battery": str(folder), "counts": counts(results), "cases": results}


# The judgement "named rightly or wrongly" by topic: each family is a regex over the battery's own words for the
# mistake (its ``mistake`` and ``kind``) and one over what the checker named (relation key, catalogue id and name).
# A name *agrees* when both sides share a family, *differs* (named wrongly) when both have families and share none,
# and is *unclear* otherwise. It is a keyword judgement, not a person's: the table shows both texts to re-judge.
FAMILIES = {
    "scale": (r"sqrt|scal|divid|√|temperature|multiply", r"scal|temperature|√|root|factor|muldiv"),
    "axis": (
        r"axis|\bdim\b|dim[ =]|keepdim|over the (?:queries|keys|batch)|column|row",
        r"axis|normalised|reduced|dim",
    ),
    "order": (
        r"transpos|swap|order|revers|\.T\b|permut|layout|interleav|strided|mix",
        r"transpos|permuted|reordered|order|swap|layout|interleav|split|merge|reverse",
    ),
    "mask": (
        r"mask|polarity|padding|causal|tril|triu|diagonal|future|window|leak",
        r"mask|causal|padding|diagonal|triangle|tril|triu|window|leak|shift|fill|inverted",
    ),
    "off_by_one": (
        r"off by one|one (?:too|short|step|key|token|position|early|past|fewer|more)|from 1|[+-] ?1\b|last|first",
        r"off_by_one|offset|shift|slice|diagonal|compare|index_past_end|one|range",
    ),
    "contract": (
        r"instead of a|returns a|list|tensor|float32|float64|dtype|numpy|0-d|python float|bool|int\(|float\b",
        r"contract|dtype|not_bool|type",
    ),
    "in_place": (r"in place|in-place|\+=|-=|\*=|caller", r"in_place|in place"),
    "shape": (
        r"reshape|view|shape|split|merge|concat|squeeze|axis|width|length|\.T\b|batch",
        r"reshape|view|shape|split|merge|axis_size|extra_axis|squeez|reduced|only_output|broadcast|matmul|join|axis",
    ),
    "fill": (r"-inf|1e9|fill|nan|finfo|empty", r"fill|inf|nan"),
    "missing": (
        r"forg[eo]t|without|left out|missing|never|ignor|only|drops?\b|skips?",
        r"missing|no_|without|term:-|dropped|not_|left|only|ignor|forgot",
    ),
    "gradient": (r"grad|detach|backward|leaf", r"grad|backward|autograd"),
    "mode": (r"dropout|eval|train", r"dropout|mode|train|eval"),
    "softmax": (
        r"softmax|max shift|overflow|exp|normaliz|sum to 1|renormal",
        r"softmax|shift|overflow|per_slice|normal",
    ),
    "count": (
        r"bytes|flop|param|count|bias|layer|heads|MiB|bits|multiply-add|factor|crossover|tile|cache",
        r"factor|term|flops|params|bytes|count|heads|layers|bias|kv_cache|crossover|io_|cache",
    ),
    "projection": (r"W_[qkvo]|proj|weight|linear|embedding", r"proj|weight|linear|embedding|keys_with|copied"),
    "residual_norm": (r"residual|norm", r"residual|norm"),
    "decode": (r"EOS|BOS|PAD|greedy|decod|step|teacher|argmax", r"eos|bos|pad|greedy|decod|step|teacher|argmax|fed"),
    "crash": (r"crash|RuntimeError|fails|breaks|only (?:runs|right) when", r"crash"),
    "returns": (
        r"return|tuple|instead of the output|MiB|bits|2\*\*20",
        r"contract|returned_none|only_output|outputs_order",
    ),
    "constraint": (r"forbid|constraint|every tile|whole score|future tiles", r"constraint"),
    "sign": (r"sign|negat|minus|bonus|inverse|invert", r"negated|sign|minus|sub:swapped|muldiv"),
    "reduction": (r"mean|average|sum", r"factor|reduced|per_slice|sum|mean|averag"),
    "pad_value": (r"-100|\bPAD\b|pads?\b|padding", r"fill|pad"),
}


def _families(text: str, side: int) -> set:
    import re

    return {name for name, patterns in FAMILIES.items() if re.search(patterns[side], text or "", flags=re.IGNORECASE)}


def judgement(row: dict) -> str:
    """``agrees``, ``differs`` (named wrongly) or ``unclear`` for a named case; empty for the others."""
    if row.get("outcome") != "named":
        return ""
    battery = _families(f"{row.get('mistake', '')} {row.get('battery_kind', '')}", 0)
    checker = _families(" ".join(str(row.get(k) or "") for k in ("relation", "misconception", "name")), 1)
    if battery & checker:
        return "agrees"
    return "differs" if battery and checker else "unclear"


def counts(results) -> dict:
    """Per lesson and in all: how many cases had each outcome, and how many prediction messages leaked."""
    table: dict = {}
    for row in results:
        for key in (row["lesson"], "all"):
            entry = table.setdefault(
                key, {"cases": 0, **dict.fromkeys(OUTCOMES, 0), "leaks": 0, "named_wrongly": 0, "named_unclear": 0}
            )
            entry["cases"] += 1
            entry[row["outcome"]] += 1
            entry["named_wrongly"] += row.get("judgement") == "differs"
            entry["named_unclear"] += row.get("judgement") == "unclear"
            entry["leaks"] += bool(row.get("leaks"))
    return dict(sorted(table.items(), key=lambda item: (item[0] == "all", item[0])))


def _cell(text, limit=160) -> str:
    text = " ".join(str(text or "").split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_markdown(report: dict) -> str:
    """Counts per lesson, then one row per case: the battery's mistake next to what the checker said."""
    lines = [
        f"# Blind battery: {report['battery']}",
        "",
        "Generated by `benchmarks/blind_battery.py`. *named* means the checker named a catalogue mistake or a "
        "relation to the right output; whether the name is the battery's mistake takes a person: compare the two "
        "columns below (a wrong name counts as *named wrongly*). The *judgement* column is a keyword judgement "
        "(`FAMILIES` in the script): a name *agrees* when the battery's words and the checker's name share a topic, "
        "*differs* (named wrongly) when both have topics and share none, *unclear* otherwise. A crash counts as "
        "named only when its message says what went wrong (a cause or a known mistake).",
        "",
        "| lesson | cases | named | named wrongly | named, unclear | generic | crashed | accepted | not attempted "
        "| prediction messages that leak |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for lesson, c in report["counts"].items():
        lines.append(
            f"| {lesson} | {c['cases']} | {c['named']} | {c.get('named_wrongly', 0)} | {c.get('named_unclear', 0)} | "
            f"{c['generic']} | {c['crashed']} | {c['accepted']} | {c['not_attempted']} | {c['leaks']} |"
        )
    exercise_rows = [row for row in report["cases"] if row["kind"] == "exercise"]
    if exercise_rows:
        n = len(exercise_rows)
        tally = {key: sum(row["outcome"] == key for row in exercise_rows) for key in OUTCOMES}
        wrongly = sum(row.get("judgement") == "differs" for row in exercise_rows)
        lines += [
            "",
            f"Wrong answers only (predictions left out): {n} cases, named {tally['named']} "
            f"({tally['named'] / n:.1%}), of which named wrongly {wrongly} ({wrongly / n:.1%}); generic "
            f"{tally['generic']}, crashed {tally['crashed']}, accepted {tally['accepted']}.",
        ]
    lines += [
        "",
        "| id | target | the battery's mistake | outcome | the checker's name | judgement | its message |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report["cases"]:
        outcome = row["outcome"] + (" (leaks: " + ", ".join(row["leaks"]) + ")" if row.get("leaks") else "")
        lines.append(
            f"| {row['id']} | `{row['target']}` | {_cell(row['mistake'])} | {outcome} | {_cell(row.get('name'))} | "
            f"{row.get('judgement', '')} | {_cell(row.get('detail'), 240)} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("battery", nargs="?", default=str(DEFAULT_BATTERY), help="the battery folder")
    parser.add_argument("--json", help="write the results here (one JSON object)")
    parser.add_argument("--markdown", help="write the Markdown table here (default: print it)")
    parser.add_argument("--lesson", action="append", help="only this lesson (NN); repeatable")
    args = parser.parse_args(argv)
    try:
        report = run(Path(args.battery), args.lesson)
    except ValueError as exc:
        parser.error(str(exc))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    table = render_markdown(report)
    if args.markdown:
        Path(args.markdown).write_text(table, encoding="utf-8")
    else:
        sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
