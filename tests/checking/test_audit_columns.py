"""The audit's hooks for the columns issue 26 §4 asks for (contract, gradient, fresh sizes) and the blind battery."""

from __future__ import annotations

import pytest

from course_utils.checking import audit, registry


def test_a_registered_column_is_run_shown_and_counted_in_clean(monkeypatch):
    monkeypatch.setattr(audit, "COLUMNS", {})
    monkeypatch.setattr(audit, "_CACHE", {})
    seen = []

    def contract(exercise):
        seen.append(exercise.id)
        return [("a list for an array", True, "refused"), ("float64 for float32", False, "passed")]

    audit.register_column("contract breaches refused", contract)
    row = audit.audit_exercise(registry.get("00.dot_scores"))
    assert seen == ["00.dot_scores"]
    assert row.columns["contract breaches refused"][1] == ("float64 for float32", False, "passed")
    assert not row.clean
    table = audit.render_markdown([row])
    assert "| exercise | correct variants accepted | known mistakes named | course helpers refused | contract" in table
    assert "1 of 2: a list for an array, **NOT CAUGHT: float64 for float32** |" in table
    assert "contract breaches refused: 1 of 2" in audit.render_text([row])


def test_without_columns_the_table_keeps_its_three_columns(monkeypatch):
    monkeypatch.setattr(audit, "COLUMNS", {})
    row = audit.AuditRow("00.dot_scores", variants=[("a", True, ""), ("b", True, "")])
    table = audit.render_markdown([row])
    assert (
        "| exercise | correct variants accepted | known mistakes named | course helpers refused |\n|---|---|---|---|"
        in table
    )
    assert row.clean


def test_a_column_that_raises_makes_its_row_unclean(monkeypatch):
    monkeypatch.setattr(audit, "COLUMNS", {})
    monkeypatch.setattr(audit, "_CACHE", {})
    audit.register_column("fresh-size failures caught", lambda exercise: 1 / 0)
    row = audit.audit_exercise(registry.get("00.dot_scores"))
    assert row.columns["fresh-size failures caught"][0][:2] == ("the column itself", False) and not row.clean
    with pytest.raises(TypeError, match="fn must be a callable"):
        audit.register_column("x", 3)


def test_a_blind_battery_summary_is_added_to_the_table():
    results = {
        "battery": "benchmarks/blind/battery_1",
        "counts": {"all": {"cases": 20, "named": 17, "generic": 2, "crashed": 1, "accepted": 0, "leaks": 0}},
    }
    row = audit.AuditRow("00.dot_scores", variants=[("a", True, ""), ("b", True, "")])
    text = audit.render_markdown([row], results)
    assert "Blind battery `benchmarks/blind/battery_1`: 20 wrong answers" in text and "named 17 (85%)" in text
