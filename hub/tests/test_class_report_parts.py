"""The class-report service's parts without a hub: records, rate limits and the page (the store: test_store.py)."""

from __future__ import annotations

import pytest
from class_report.limits import RateLimiter
from class_report.records import normalize
from class_report.report import render_class_report
from conftest import report_cells

CHECK = {
    "v": 2,
    "event": "check",
    "exercise": "01.softmax_along",
    "lesson": "01",
    "attempt": 1,
    "status": "wrong",
    "misconception": "softmax_wrong_axis",
    "detail": "case 1 of 4 is wrong",
    "time": "2026-11-24T12:00:00Z",
    "session": "3f2a",
}


# ------------------------------------------------------------------------------------------------ records


def test_a_v2_check_keeps_its_fields_and_no_other():
    assert normalize({**CHECK, "student": "mallory", "extra": 1}) == CHECK  # a name in a record is never kept


def test_v1_lines_are_checks_and_predictions_and_hints_are_accepted():
    v1 = normalize({"exercise": "02.cached_causal_mask", "status": "passed", "misconception": None, "detail": "ok"})
    assert v1["event"] == "check" and v1["lesson"] == "02"
    predict = {"v": 2, "event": "predict", "exercise": "01.x", "status": "right", "prediction": "(2, 3)"}
    assert normalize(predict)["prediction"] == "(2, 3)"
    assert normalize({"v": 2, "event": "hint", "exercise": "01.x", "status": "shown", "level": 2})["level"] == 2


def test_a_solution_shown_is_accepted_for_a_registered_exercise_only():
    from class_report.records import Registry

    shown = {"v": 2, "event": "solution", "exercise": "01.x", "status": "shown"}
    assert normalize(shown) == {**shown, "lesson": "01", "misconception": None}
    with pytest.raises(ValueError, match="^status: a solution is one of shown"):
        normalize({**shown, "status": "hidden"})
    registry = Registry({"01": ["01.x"]}, {"01": ["01.p"]})
    registry.check(normalize(shown))
    with pytest.raises(ValueError, match="is not a registered exercise"):
        registry.check(normalize({**shown, "exercise": "01.p"}))


def test_a_prediction_keeps_its_first_try_and_a_check_its_relation():
    predict = {"v": 2, "event": "predict", "exercise": "01.x", "status": "wrong", "first_try": True, "correct": False}
    assert normalize(predict) == {**predict, "lesson": "01", "misconception": None}
    held = normalize({**predict, "status": "right", "first_try": False, "correct": True, "held": True})
    assert held["first_try"] is False and held["held"] is True
    assert normalize({**CHECK, "relation": "transposed"})["relation"] == "transposed"


def test_the_live_view_counts_the_answer_the_kernel_marked_first():
    from class_report.live import Live

    live = Live()
    second = {"event": "predict", "exercise": "01.x", "status": "right", "attempt": 1, "first_try": False}
    first = {"event": "predict", "exercise": "01.x", "status": "wrong", "attempt": 1, "first_try": True}
    live.replay("ada", [second, first])  # a second try of an earlier kernel arrived first
    assert live.first_try[("ada", "01.x")] == "wrong"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"event": "grade"}, "event"),
        ({"first_try": "yes"}, "first_try"),
        ({"exercise": "../../etc"}, "exercise"),
        ({"exercise": 7}, "exercise"),
        ({"lesson": "02"}, "lesson"),
        ({"status": "right"}, "status"),  # a check's status, not a prediction's
        ({"attempt": -1}, "attempt"),
        ({"attempt": True}, "attempt"),
        ({"detail": ["a"]}, "detail"),
    ],
)
def test_a_malformed_record_is_refused_naming_the_field(change, field):
    with pytest.raises(ValueError, match=f"^{field}:"):
        normalize({**CHECK, **change})


def test_long_texts_are_cut():
    record = normalize({**CHECK, "detail": "x" * 5000, "session": "a" * 500})
    assert len(record["detail"]) == 500 and len(record["session"]) == 64


# ------------------------------------------------------------------------------------------------ limits


def test_rate_limiter_allows_a_burst_then_the_rate():
    now = [0.0]
    limiter = RateLimiter(2.0, 5, clock=lambda: now[0])
    assert [limiter.allow("a")[0] for _ in range(7)] == [True] * 5 + [False] * 2
    assert limiter.allow("b")[0]  # keys are independent
    ok, wait = limiter.allow("a")
    assert not ok and wait == pytest.approx(0.5)
    now[0] += 0.5
    assert limiter.allow("a")[0] and not limiter.allow("a")[0]


def test_rate_limiter_memory_is_bounded():
    limiter = RateLimiter(1.0, 1, max_keys=100)
    for i in range(1000):
        limiter.allow(f"key{i}")
    assert len(limiter._buckets) == 100


# ------------------------------------------------------------------------------------------------ the page


def test_page_is_the_course_report_with_the_newest_check_per_exercise():
    rows = {
        "alice": [normalize(CHECK), normalize({**CHECK, "status": "passed"})],
        "bob": [
            normalize(CHECK),
            normalize({"v": 2, "event": "hint", "exercise": "01.softmax_along", "status": "shown"}),
        ],
        "<script>": [normalize({**CHECK, "detail": "<b>x</b>"})],
    }
    page = render_class_report(rows, live_note="Live: 3 students")
    assert '<tr data-student="alice">' in page and '<tr data-student="bob">' in page
    cells = {key: status for key, status in report_cells(page).items() if key[1] == "01.softmax_along"}
    # alice: her newest check; bob: his check (a hint is not a check); names are escaped
    assert cells == {
        ("alice", "01.softmax_along"): "passed",
        ("bob", "01.softmax_along"): "wrong",
        ("&lt;script&gt;", "01.softmax_along"): "wrong",
    }
    assert set(report_cells(page).values()) == {"passed", "wrong", "not_submitted"}  # the other exercises of 01
    assert "<script>" not in page and "&lt;script&gt;" in page  # names and details are escaped
    assert '<meta http-equiv="refresh"' in page and "Live: 3 students" in page


def test_page_shows_exercises_the_registry_does_not_know(monkeypatch):
    """A hub image without the course's numpy (no registry), or a lesson newer than the service's copy."""
    from class_report import report

    monkeypatch.setattr(report, "_course_registry", lambda: None)
    page = render_class_report(
        {"alice": [normalize({**CHECK, "exercise": "09.brand_new", "lesson": "09"}), normalize(CHECK)]}
    )
    assert report_cells(page) == {("alice", "09.brand_new"): "wrong", ("alice", "01.softmax_along"): "wrong"}


def test_the_shipped_registry_is_the_courses():
    """hub/class_report/registry.json is what a service without the course's packages refuses ids by."""
    import json

    from class_report import records

    shipped = json.loads(records.REGISTRY_FILE.read_text(encoding="utf-8"))
    assert shipped == json.loads(json.dumps(records.registry_data())), (
        "hub/class_report/registry.json is stale: cd hub && ../.venv/bin/python -c "
        "'from class_report import records; records.write_registry()'"
    )


def test_a_service_without_the_course_refuses_by_the_shipped_registry(tmp_path):
    import subprocess
    import sys

    from conftest import HUB_DIR

    code = (
        "import sys; sys.modules['course_utils'] = None\n"  # the course's packages cannot be imported
        "from class_report import records\n"
        "registry = records.course_registry()\n"
        "assert registry is not None and '01.softmax_along' in registry.exercise_ids\n"
        "try:\n"
        "    records.normalize({'exercise': '01.forged', 'status': 'passed'}, registry)\n"
        "except ValueError as e:\n"
        "    print('refused:', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=HUB_DIR, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "refused: exercise: '01.forged' is not a registered exercise" in out.stdout
