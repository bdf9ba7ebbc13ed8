"""Marks (issue 29, round 2): a lesson's own late policy, refusing late work, solutions shown, make grade SERVICE=."""

from __future__ import annotations

import datetime as dt
import subprocess
import tomllib

import pytest

from course_utils.marks import compute, course, lms

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
UTC = dt.UTC

COURSE = """
[points]
exercise = 2
[lessons.01]
due = "2026-12-07T23:00:00+00:00"
[lessons.02]
due = "2026-12-14T23:00:00+00:00"
policy = "refuse"
[late]
policy = "penalty"
per_day = 0.25
grace_minutes = 10
[extensions.bob]
"02" = 2
"""
REGISTRY = {"01": (["01.a", "01.b"], []), "02": (["02.a"], [])}


def _course(**changes) -> course.Course:
    data = tomllib.loads(COURSE)
    for dotted, value in changes.items():
        *path, last = dotted.split("__")
        table = data
        for key in path:
            table = table.setdefault(key, {})
        table[last] = value
    return course.parse(data)


# ------------------------------------------------------------------------------------ a lesson's own late policy


def test_a_lesson_may_have_its_own_late_policy():
    marked = _course()
    assert marked.late_policy("01").policy == "penalty" and marked.late_policy("02").policy == "refuse"
    assert marked.late_policy("02").per_day == 0.25  # the rest of [late] is kept
    assert marked.late_policy("07") is marked.late  # a lesson the file does not list


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("lessons__02__policy", "never", "course.toml: lessons.02.policy: expected one of penalty, refuse, accept"),
        ("points__solution_shown", "zero", "course.toml: points.solution_shown: expected one of flag, no_points"),
        ("points__solution_shown", 0, "course.toml: points.solution_shown: expected one of flag, no_points, got 0"),
    ],
)
def test_the_new_keys_are_validated_naming_the_key(key, value, message):
    with pytest.raises(course.CourseFileError) as caught:
        _course(**{key: value})
    assert str(caught.value).startswith(message)


def test_refused_late_counts_the_extension_and_the_grace():
    marked = _course()
    due = dt.datetime(2026, 12, 14, 23, 0, tzinfo=UTC)
    assert marked.refused_late("alice", "02", due + dt.timedelta(minutes=9)) is None  # in the grace
    assert marked.refused_late("alice", "02", due + dt.timedelta(minutes=11)) == due
    assert marked.refused_late("bob", "02", due + dt.timedelta(days=1)) is None  # bob's extension: 2 days
    assert marked.refused_late("bob", "02", due + dt.timedelta(days=2, minutes=11)) == due + dt.timedelta(days=2)
    assert marked.refused_late("alice", "01", due + dt.timedelta(days=30)) is None  # lesson 01: penalty, taken
    assert marked.refused_late("alice", "05", due + dt.timedelta(days=30)) is None  # no due date
    with pytest.raises(TypeError, match="^received: expected a datetime with a time zone"):
        marked.refused_late("alice", "02", dt.datetime(2026, 12, 30))


def test_marks_apply_each_lessons_own_policy():
    marked = _course()
    day = dt.timedelta(days=1)
    manifest = [
        {"student": "carol", "lesson": "01", "received": (marked.lessons["01"].due + day).isoformat()},
        {"student": "carol", "lesson": "02", "received": (marked.lessons["02"].due + day).isoformat()},
    ]
    grades = [
        {"student": "carol", "lesson": lesson, "exercise": f"{lesson}.a", "status": "passed"}
        for lesson in "01 02".split()
    ]
    carol = compute.compute(marked, REGISTRY, grades, manifest=manifest).students[0]
    assert (carol.lessons["01"].points, carol.lessons["01"].status) == (1.5, "late")  # 2 points, one day: -25 %
    assert (carol.lessons["02"].points, carol.lessons["02"].status) == (0, "refused (late)")


# ------------------------------------------------------------------------------------ solutions shown


def _solution_class(**changes):
    marked = _course(**changes)
    on_time = (marked.lessons["01"].due - dt.timedelta(hours=1)).isoformat()
    manifest = [{"student": name, "lesson": "01", "received": on_time} for name in ("alice", "bob", "carol")]
    grades = [
        {"student": name, "lesson": "01", "exercise": exercise, "status": "passed"}
        for name in ("alice", "bob", "carol")
        for exercise in ("01.a", "01.b")
    ]
    records = [
        # alice asks for 01.a's solution before it ever passed, then passes: flagged
        {"student": "alice", "event": "check", "exercise": "01.a", "status": "wrong"},
        {"student": "alice", "event": "solution", "exercise": "01.a", "status": "shown"},
        {"student": "alice", "event": "check", "exercise": "01.a", "status": "passed"},
        # bob passes 01.b first, then looks at its solution: not flagged
        {"student": "bob", "event": "check", "exercise": "01.b", "status": "passed"},
        {"student": "bob", "event": "solution", "exercise": "01.b", "status": "shown"},
        # carol looks at 01.b's solution and never sends a passing check (graded as passed): flagged
        {"student": "carol", "event": "solution", "exercise": "01.b", "status": "shown"},
        # dave (no submission) looks at 01.a's: flagged, but dave has nothing to lose
        {"student": "dave", "event": "solution", "exercise": "01.a", "status": "shown"},
    ]
    return compute.compute(marked, REGISTRY, grades, records=records, manifest=manifest)


def test_a_solution_shown_before_the_check_passed_is_flagged_by_default():
    marks = _solution_class()
    by = {s.student: s.lessons["01"] for s in marks.students}
    assert {name: mark.solutions for name, mark in by.items()} == {
        "alice": ("01.a",),
        "bob": (),
        "carol": ("01.b",),
        "dave": (),  # nothing submitted: nothing to mark
    }
    assert {name: mark.points for name, mark in by.items()} == {"alice": 4, "bob": 4, "carol": 4, "dave": 0}
    rows = [row.split(",") for row in lms.marks_csv(marks).splitlines()]
    assert rows[0][5] == "01 solutions shown"
    assert {row[0]: row[5] for row in rows[1:]} == {"alice": "01.a", "bob": "", "carol": "01.b", "dave": ""}


def test_no_points_takes_the_exercises_points_away():
    marks = _solution_class(points__solution_shown="no_points")
    points = {s.student: s.lessons["01"].points for s in marks.students}
    assert points == {"alice": 2, "bob": 4, "carol": 2, "dave": 0}


def test_solutions_before_passing_reads_the_records_in_order():
    records = [
        {"student": "a", "event": "solution", "exercise": "01.a", "status": "shown"},
        {"student": "a", "event": "check", "exercise": "01.a", "status": "passed"},
        {"student": "a", "event": "check", "exercise": "01.b", "status": "passed"},
        {"student": "a", "event": "solution", "exercise": "01.b", "status": "shown"},
        {"student": "b", "event": "check", "exercise": "01.a", "status": "passed"},  # another student's pass
        {"student": "a", "event": "solution", "exercise": None},  # not a record of an exercise: skipped
    ]
    assert compute.solutions_before_passing(records) == {"a": frozenset({"01.a"})}


# ------------------------------------------------------------------------------------ make grade SERVICE=


def test_make_grade_with_a_service_collects_then_grades_the_collection():
    service = "https://hub.example.edu/services/class-report/"
    done = subprocess.run(
        ["make", "-n", "grade", f"SERVICE={service}", "TOKEN=abc", "COURSE_FILE=c.toml", "COLLECTED=/tmp/coll"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = [line for line in done.stdout.splitlines() if "python -m course_utils." in line]
    assert len(lines) == 2, done.stdout
    assert "-m course_utils.marks collect" in lines[0]
    assert f'--service "{service}"' in lines[0] and '--token "abc"' in lines[0] and '--out "/tmp/coll"' in lines[0]
    assert '-m course_utils.grading "/tmp/coll/submissions"' in lines[1]
    folder = subprocess.run(["make", "-n", "grade", "SUBMISSIONS=subs"], cwd=REPO, capture_output=True, text=True)
    assert [line for line in folder.stdout.splitlines() if "python -m" in line] == [
        line for line in folder.stdout.splitlines() if '-m course_utils.grading "subs"' in line
    ]
