"""benchmarks/blind_battery.py on a tiny battery of our own (tests/fixtures/blind_battery), never on the blind one."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "blind_battery"


def _script():
    spec = importlib.util.spec_from_file_location("blind_battery_script", ROOT / "benchmarks" / "blind_battery.py")
    module = sys.modules.get(spec.name) or importlib.util.module_from_spec(spec)
    if spec.name not in sys.modules:
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def report():
    return _script().run(FIXTURE)


def test_every_case_gets_one_outcome_and_the_counts_add_up(report):
    by_id = {row["id"]: row for row in report["cases"]}
    assert by_id["00-001"]["outcome"] == "named" and by_id["00-001"]["misconception"] == "scores_transposed"
    assert by_id["00-002"]["outcome"] == "named" and by_id["00-002"]["relation"] == "factor:1/√(q.shape[-1])"
    # sorting each row keeps every right value, in other places: named by what it does (issue 26 §2)
    assert by_id["00-003"]["outcome"] == "named" and by_id["00-003"]["relation"] == "scrambled"
    assert "sorted along axis -1" in by_id["00-003"]["detail"]
    assert by_id["00-004"]["outcome"] == "accepted"
    # a crash whose message says what went wrong (here: a name not defined) is named; one that cannot run is not
    assert by_id["00-005"]["outcome"] == "named" and by_id["00-005"]["relation"] == "crash:undefined_name"
    assert "NameError" in by_id["00-005"]["detail"] and "`kk` is not defined" in by_id["00-005"]["detail"]
    assert by_id["00-006"]["outcome"] == "crashed" and "defines no dot_scores" in by_id["00-006"]["detail"]
    assert by_id["01-001"]["outcome"] == "named" and by_id["01-001"]["relation"] == "mutant:axis:max"
    assert report["counts"]["all"] == {
        "cases": 11,
        "named": 7,
        "generic": 1,
        "crashed": 1,
        "accepted": 2,
        "not_attempted": 0,
        "leaks": 0,
        **{
            k: v
            for k, v in report["counts"]["all"].items()
            if k not in ("cases", "named", "generic", "crashed", "accepted", "not_attempted", "leaks")
        },
    }
    assert report["counts"]["00"]["cases"] == 8 and report["counts"]["01"]["cases"] == 3


def test_predictions_are_first_tries_and_their_messages_are_checked_for_leaks(report):
    by_id = {row["id"]: row for row in report["cases"]}
    assert by_id["00-007"]["outcome"] == "named" and by_id["00-007"]["misconception"] == "scores_transposed"
    assert by_id["00-008"]["outcome"] == "accepted"
    assert by_id["01-002"]["outcome"] == "generic" and by_id["01-002"]["leaks"] == []
    assert by_id["01-003"]["outcome"] == "named" and "Think" not in by_id["01-003"]["detail"][:3]


def test_a_leaking_message_is_reported(monkeypatch):
    from course_utils.checking import predictions

    script = _script()
    monkeypatch.setattr(
        predictions, "rethink", lambda prediction: "the answer, which is 64"
    )  # a message that gives the value away
    found = script.run(FIXTURE, ["01"])
    leaked = {row["id"]: row["leaks"] for row in found["cases"] if row["kind"] == "prediction"}
    assert leaked["01-002"] and found["counts"]["all"]["leaks"] == 1


def test_the_markdown_puts_the_batterys_words_next_to_the_checkers(report, tmp_path):
    script = _script()
    table = script.render_markdown(report)
    # cases, named, named wrongly, named but unclear, generic, crashed, accepted, not attempted, leaks
    assert "| all | 11 | 7 | 0 | 2 | 1 | 1 | 2 | 0 | 0 |" in table
    assert (
        "| 00-001 | `00.dot_scores` | keys times queries: the scores transposed | named | the scores are transposed"
        in table
    )
    out = tmp_path / "r.json"
    assert script.main([str(FIXTURE), "--lesson", "00", "--json", str(out), "--markdown", str(tmp_path / "r.md")]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["counts"]["all"]["cases"] == 8


def test_a_missing_battery_is_an_error_naming_it(capsys):
    with pytest.raises(SystemExit):
        _script().main([str(FIXTURE / "nope")])
    assert "nope" in capsys.readouterr().err


def test_a_name_is_judged_against_the_batterys_own_words():
    script = _script()
    row = {"outcome": "named", "mistake": "forgot the division by sqrt(d_head)", "relation": "mutant:scale:dropped"}
    assert script.judgement(row) == "agrees"
    row = {"outcome": "named", "mistake": "forgot the division by sqrt(d_head)", "relation": "outputs_order:(1, 0)"}
    assert script.judgement(row) == "differs"  # both sides have topics, none shared: named wrongly
    assert script.judgement({"outcome": "named", "mistake": "", "relation": "crash:undefined_name"}) == "unclear"
    assert script.judgement({"outcome": "generic", "mistake": "anything"}) == ""
    counted = script.counts([{"lesson": "00", "outcome": "named", "judgement": "differs"}])
    assert counted["all"]["named_wrongly"] == 1
