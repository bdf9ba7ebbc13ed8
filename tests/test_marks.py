"""Marks (issue 29): the course file, the late policy, the submissions folder, the marks, the roster, the LMS files."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import tomllib

import pytest

from course_utils.marks import compute, course, folder, lms, roster
from course_utils.marks.cli import main as marks_main

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
UTC = dt.UTC
CET = dt.timezone(dt.timedelta(hours=1))

COURSE = """
[course]
name = "Attention"
[points]
exercise = 2
prediction = 1
[points.exercises]
"01.b" = 4
[lessons.01]
due = "2026-12-07T23:59:00+01:00"
[late]
policy = "penalty"
per_day = 0.25
cap = 0.5
[extensions.bob]
"01" = 2
"""
REGISTRY = {"01": (["01.a", "01.b"], ["01.p", "01.q"])}  # possible: 2 + 4 + 1 + 1 = 8


def _course(text: str = COURSE, **changes) -> course.Course:
    data = tomllib.loads(text)
    for dotted, value in changes.items():
        *path, last = dotted.split("__")
        table = data
        for key in path:
            table = table.setdefault(key, {})
        table[last] = value
    return course.parse(data)


# ------------------------------------------------------------------------------------------------ the course file


def test_the_documented_example_course_file_is_valid():
    example = course.load(REPO / "course.example.toml")
    assert example.lessons["01"].due == dt.datetime(2026, 12, 7, 23, 59, tzinfo=CET)
    assert example.due("alice", "02") == dt.datetime(2026, 12, 16, 23, 59, tzinfo=CET)  # "02" = 2 days
    assert example.points("check", "02.cached_causal_mask") == 2 and example.points("check", "02.padding_mask") == 1


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "lessons__01__due",
            "2026-13-01",
            "course.toml: lessons.01.due: expected an ISO date with a time zone, got '2026-13-01'",
        ),
        (
            "lessons__01__due",
            "2026-12-07T23:59:00",
            "course.toml: lessons.01.due: expected an ISO date with a time zone",
        ),
        ("late__policy", "forgive", "course.toml: late.policy: expected one of penalty, refuse, accept, got 'forgive'"),
        ("late__per_day", 2, "course.toml: late.per_day: expected a number from 0 to 1, got 2"),
        ("points__exercise", -1, "course.toml: points.exercise: expected a number of at least 0, got -1"),
        ("points__exercise", True, "course.toml: points.exercise: expected a number"),
        ("points__exercises__../x", 1, "course.toml: points.exercises.../x: expected an id like '01.softmax_along'"),
        ("extensions__bob__02", 1, "course.toml: extensions.bob.02: expected a lesson with a due date in [lessons]"),
        ("extensions__bob__01", "tomorrow", "course.toml: extensions.bob.01: expected an ISO date with a time zone"),
        ("late__penalty", 1, "course.toml: late.penalty: unknown key"),
        ("deadline", 1, "course.toml: deadline: unknown key"),
    ],
)
def test_a_bad_course_file_names_the_key(key, value, message):
    with pytest.raises(course.CourseFileError) as caught:
        _course(**{key: value})
    assert str(caught.value).startswith(message)


def test_a_course_file_that_is_not_toml_or_missing_says_so(tmp_path):
    bad = tmp_path / "course.toml"
    bad.write_text("[lessons.01\n")
    with pytest.raises(course.CourseFileError, match="^course.toml: not valid TOML"):
        course.load(bad)
    with pytest.raises(course.CourseFileError, match="cannot read the course file"):
        course.load(tmp_path / "absent.toml")
    with pytest.raises(TypeError, match="^path: expected the course file's path"):
        course.load(7)


def test_late_days_count_started_days_after_the_grace():
    policy = course.LatePolicy("penalty", per_day=0.25, cap=0.5, grace_minutes=10)
    due = dt.datetime(2026, 12, 7, 23, 59, tzinfo=CET)
    assert policy.late_days(due + dt.timedelta(minutes=10), due) == 0
    assert policy.late_days(due + dt.timedelta(minutes=11), due) == 1
    assert policy.late_days(due + dt.timedelta(days=1, minutes=11), due) == 2
    assert policy.late_days(due - dt.timedelta(days=3), due) == 0
    assert policy.late_days(due + dt.timedelta(days=9), None) == 0
    assert [policy.fraction_kept(d) for d in (0, 1, 2, 5)] == [1.0, 0.75, 0.5, 0.5]  # capped at half
    assert course.LatePolicy("refuse").fraction_kept(1) == 0.0 and course.LatePolicy("accept").fraction_kept(9) == 1.0


# ------------------------------------------------------------------------------------------------ submissions folder

NB = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


def test_every_submission_is_kept_and_the_newest_on_time_counts(tmp_path):
    due = dt.datetime(2026, 12, 7, 23, 59, tzinfo=CET)
    first = folder.save(tmp_path, "alice", "01", "my_work/01_first.ipynb", NB, when=due - dt.timedelta(days=1))
    second = folder.save(tmp_path, "alice", "01", "01_first.ipynb", NB + b" ", when=due - dt.timedelta(hours=1))
    late = folder.save(tmp_path, "alice", "01", "01_first.ipynb", NB + b"  ", when=due + dt.timedelta(hours=1))
    kept = [receipt for receipt, _ in folder.receipts(tmp_path)]
    assert kept == [first, second, late]  # nothing replaced on disk
    assert first.notebook == "01_first.ipynb" and first.sha256 != second.sha256 and first.bytes == len(NB)
    assert folder.choose(kept, due) == (second, "the newest on time")  # the re-submission before the deadline
    assert folder.choose([late], due) == (late, "the newest (none on time)")
    assert folder.choose(kept, None)[0] == late


def test_a_submission_is_refused_over_the_size_limit_or_under_a_bad_name(tmp_path):
    with pytest.raises(ValueError, match="^data: expected a notebook of at most 8388608 bytes, got 8388609"):
        folder.save(tmp_path, "alice", "01", "01_x.ipynb", b"x" * (folder.MAX_NOTEBOOK_BYTES + 1))
    for name in ("../bob", ".hidden", "a/b", "", "tab\tname"):
        with pytest.raises(ValueError, match="^student: expected a printable name"):
            folder.save(tmp_path, name, "01", "01_x.ipynb", NB)
    with pytest.raises(ValueError, match="^lesson: expected a two-digit lesson"):
        folder.save(tmp_path, "alice", "1", "01_x.ipynb", NB)
    assert list(tmp_path.iterdir()) == []


def test_export_writes_the_folder_make_grade_reads_with_a_manifest(tmp_path):
    from course_utils import grading

    marked = _course()
    due = marked.due("carol", "01")
    store = tmp_path / "store"
    folder.save(store, "alice", "01", "01_attention.ipynb", NB, when=due - dt.timedelta(hours=2))
    folder.save(store, "carol", "01", "weird name.ipynb", NB + b"\n", when=due + dt.timedelta(days=1, hours=1))
    found = dict(folder.receipts(store))
    manifest = folder.export(
        found,
        lambda r: found[r].read_bytes(),
        tmp_path / "out",
        due=marked.due,
        late_days=lambda r, d: marked.late.late_days(r.time, d),
    )
    entries = {entry["student"]: entry for entry in json.loads(manifest.read_text())["submissions"]}
    assert entries["alice"]["file"] == "submissions/alice/01_attention.ipynb" and entries["alice"]["late_days"] == 0
    assert entries["carol"]["file"] == "submissions/carol/01_submission.ipynb" and entries["carol"]["late_days"] == 2
    submissions, problems = grading.find_submissions(tmp_path / "out" / "submissions")
    assert [(student, lesson) for student, lesson, _ in submissions] == [
        ("alice", "01"),
        ("carol", "01"),
    ] and problems == []


def test_export_refuses_a_notebook_whose_digest_is_not_its_receipts(tmp_path):
    receipt = folder.save(tmp_path / "s", "alice", "01", "01_a.ipynb", NB)
    with pytest.raises(ValueError, match="sha256 is not its receipt's"):
        folder.export([receipt], lambda r: NB + b"tampered", tmp_path / "out")


# ------------------------------------------------------------------------------------------------ marks


def _class(tmp_path):
    """alice on time; bob a day late but with a 2-day extension; carol 25 hours late; dave never started;
    'alice ' (a trailing space) sent records and is not on the roster."""
    marked = _course()
    due = marked.lessons["01"].due
    manifest = [
        {"student": "alice", "lesson": "01", "received": (due - dt.timedelta(hours=1)).isoformat()},
        {"student": "bob", "lesson": "01", "received": (due + dt.timedelta(days=1)).isoformat()},
        {"student": "carol", "lesson": "01", "received": (due + dt.timedelta(hours=25)).isoformat()},
    ]
    grades = [
        {"student": "alice", "lesson": "01", "exercise": "01.a", "status": "passed"},
        {"student": "alice", "lesson": "01", "exercise": "01.b", "status": "passed"},
        {"student": "bob", "lesson": "01", "exercise": "01.a", "status": "wrong"},
        {"student": "bob", "lesson": "01", "exercise": "01.b", "status": "passed"},
        {"student": "carol", "lesson": "01", "exercise": "01.a", "status": "passed"},
        {"student": "carol", "lesson": "01", "exercise": "01.b", "status": "crashed"},
    ]
    records = [
        {"student": "alice", "event": "predict", "exercise": "01.p", "status": "wrong", "attempt": 1},
        {"student": "alice", "event": "predict", "exercise": "01.p", "status": "right", "attempt": 2},  # not the first
        {"student": "alice", "event": "predict", "exercise": "01.q", "status": "right", "attempt": 1},
        {"student": "bob", "event": "predict", "exercise": "01.p", "status": "wrong"},  # no attempt field:
        {"student": "bob", "event": "predict", "exercise": "01.p", "status": "right"},  # the newest counts
        {"student": "carol", "event": "check", "exercise": "01.a", "status": "passed", "attempt": 1},
        {"student": "alice ", "event": "check", "exercise": "01.a", "status": "passed", "attempt": 1},
    ]
    people = roster.parse(
        'username,name,email,sis_id,canvas_id,section\nalice,"Liddell, Alice",alice@x.edu,1001,11,A\n'
        "bob,Bob Stone,bob@x.edu,1002,12,A\ncarol,Carol Kay,carol@x.edu,1003,13,B\ndave,Dave Ng,dave@x.edu,1004,14,B\n"
    )
    return compute.compute(marked, REGISTRY, grades, records=records, manifest=manifest, roster=people), people


def test_marks_follow_the_course_file(tmp_path):
    marks, _ = _class(tmp_path)
    by = {student.student: student.lessons["01"] for student in marks.students}
    assert marks.possible == {"01": 8.0}
    # alice: 2 + 4 (checks) + 1 (01.q right at the first try; 01.p was wrong at the first) = 7, on time
    assert (by["alice"].earned, by["alice"].points, by["alice"].late_days, by["alice"].status) == (7, 7, 0, "on time")
    # bob: 4 (01.b) + 1 (01.p: no attempt field, the newest status) = 5; late a day but extended by two
    assert (by["bob"].earned, by["bob"].points, by["bob"].late_days) == (5, 5, 0)
    # carol: 2 (01.a); 25 hours late = 2 started days: keeps 1 - 2 * 0.25 = 0.5
    assert (by["carol"].earned, by["carol"].late_days, by["carol"].kept, by["carol"].points) == (2, 2, 0.5, 1.0)
    assert by["carol"].status == "late"
    assert (by["dave"].points, by["dave"].status) == (0, "not submitted")
    assert [s.student for s in marks.students] == ["alice", "bob", "carol", "dave", "alice "]
    assert {s.student: s.total for s in marks.students} == {"alice": 7, "bob": 5, "carol": 1.0, "dave": 0, "alice ": 0}


def test_the_roster_shows_who_never_started_who_has_not_submitted_and_who_is_not_on_it(tmp_path):
    marks, _ = _class(tmp_path)
    assert marks.never_started == ["dave"]
    assert marks.not_submitted == {"01": ["dave"]}
    assert marks.not_on_roster == ["alice "]


def test_refuse_policy_gives_no_points_to_late_work(tmp_path):
    marked = _course(late__policy="refuse")
    due = marked.lessons["01"].due
    late = [{"student": "carol", "lesson": "01", "received": (due + dt.timedelta(minutes=1)).isoformat()}]
    grades = [{"student": "carol", "lesson": "01", "exercise": "01.a", "status": "passed"}]
    mark = compute.compute(marked, REGISTRY, grades, manifest=late).students[0].lessons["01"]
    assert (mark.earned, mark.points, mark.status) == (2, 0, "refused (late)")


def test_points_for_an_id_no_lesson_has_is_an_error_naming_the_key():
    marked = course.parse({**tomllib.loads(COURSE), "points": {"exercises": {"01.softmax_alnog": 1}}})
    with pytest.raises(ValueError, match=r"^course.toml: points.exercises.01.softmax_alnog: not an exercise"):
        compute.compute(marked, REGISTRY, [])


def test_the_real_registry_gives_the_lessons_exercises_and_predictions():
    registry = compute.course_registry(["01"])
    exercises, predictions = registry["01"]
    assert "01.softmax_along" in exercises and len(exercises) == len(set(exercises))
    assert predictions and all(p.startswith("01.") for p in predictions)


# ------------------------------------------------------------------------------------------------ roster


def test_a_roster_needs_a_username_column_and_unique_names():
    with pytest.raises(roster.RosterError, match=r"^roster.csv: header: expected a 'username' column"):
        roster.parse("name,email\nAlice,a@x\n")
    with pytest.raises(roster.RosterError, match=r"^roster.csv: row 3: username: 'a' is already on row 2"):
        roster.parse("username\na\na\n")
    with pytest.raises(roster.RosterError, match=r"^roster.csv: header: unknown column 'grade'"):
        roster.parse("username,grade\na,1\n")
    assert roster.parse('\ufeffusername,name\na,"Liddell, Alice"\n')[0].split_name() == ("Alice", "Liddell")


# ------------------------------------------------------------------------------------------------ LMS files


def _rows(text: str) -> list:
    return list(csv.reader(io.StringIO(text)))


def test_canvas_export_has_canvas_columns_points_possible_and_the_marks(tmp_path):
    marks, people = _class(tmp_path)
    rows = _rows(lms.canvas_csv(marks, people))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Attention 01", "Attention total"]
    assert rows[1] == ["Points Possible", "", "", "", "", "8", "8"]
    assert rows[2] == ["Liddell, Alice", "11", "1001", "alice", "A", "7", "7"]
    assert rows[4] == ["Kay, Carol", "13", "1003", "carol", "B", "1", "1"]
    assert rows[5][:2] == ["Ng, Dave", "14"] and rows[5][-2:] == ["0", "0"]
    assert len(rows) == 2 + 5  # every student, the one not on the roster too (by hub name)


def test_moodle_export_has_moodle_columns_and_the_marks(tmp_path):
    marks, people = _class(tmp_path)
    rows = _rows(lms.moodle_csv(marks, people))
    assert rows[0] == [
        "First name",
        "Last name",
        "Username",
        "ID number",
        "Email address",
        "Attention 01",
        "Attention total",
    ]
    assert rows[1] == ["Alice", "Liddell", "alice", "1001", "alice@x.edu", "7", "7"]
    assert rows[2] == ["Bob", "Stone", "bob", "1002", "bob@x.edu", "5", "5"]


@pytest.mark.parametrize("name", ["=1+1", " =1+1", "\uff1dHYPERLINK()", "\u200b=cmd", "@SUM(A1)", "+1", "-1"])
def test_a_formula_looking_name_is_neutralised_in_every_file(name):
    marked = _course()
    marks = compute.compute(
        marked, REGISTRY, [{"student": name, "lesson": "01", "exercise": "01.a", "status": "passed"}]
    )
    for text in (lms.canvas_csv(marks), lms.moodle_csv(marks), lms.marks_csv(marks)):
        cells = [cell for row in _rows(text) for cell in row]
        assert "'" + name in cells and name not in cells


# ------------------------------------------------------------------------------------------------ the command


def test_collect_then_marks_from_a_submissions_folder(tmp_path, capsys):
    (tmp_path / "course.toml").write_text(COURSE.replace("01.b", "01.softmax_along"))
    marked = course.load(tmp_path / "course.toml")
    due = marked.lessons["01"].due
    store = tmp_path / "store"
    folder.save(store, "alice", "01", "01_attention.ipynb", NB, when=due - dt.timedelta(days=1))
    folder.save(store, "alice", "01", "01_attention.ipynb", NB + b" ", when=due + dt.timedelta(days=3))
    out = tmp_path / "collected"
    assert (
        marks_main(["collect", "--course", str(tmp_path / "course.toml"), "--from", str(store), "--out", str(out)]) == 0
    )
    assert (out / "submissions" / "alice" / "01_attention.ipynb").read_bytes() == NB  # the on-time one
    (out / "submissions" / "grades.csv").write_text(
        "student,lesson,exercise,status,detail\nalice,01,01.softmax_along,passed,\nalice,01,01.attend,wrong,x\n"
    )
    (tmp_path / "roster.csv").write_text("username,name\nalice,Alice A\nzed,Zed Z\n")
    args = [
        "marks",
        "--course",
        str(tmp_path / "course.toml"),
        "--collected",
        str(out),
        "--roster",
        str(tmp_path / "roster.csv"),
    ]
    assert marks_main([*args, "--out", str(tmp_path / "marks")]) == 0
    printed = capsys.readouterr().out
    assert "never started (1): zed" in printed and "not submitted 01 (1): zed" in printed
    rows = _rows((tmp_path / "marks" / "marks.csv").read_text())
    assert rows[1][:5] == [
        "alice",
        "4",
        str(compute.compute(marked, compute.course_registry(["01"]), []).possible["01"]).removesuffix(".0"),
        "0",
        "on time",
    ]
    assert marks_main(["marks", "--course", str(tmp_path / "absent.toml"), "--collected", str(out), "--out", "x"]) == 2


def test_the_hubs_users_are_a_roster_without_admins_or_instructors_page_by_page():
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlparse

    users = [{"name": f"s{i:03d}", "admin": False, "groups": []} for i in range(250)]
    users += [
        {"name": "teacher", "admin": True, "groups": []},
        {"name": "ta", "admin": False, "groups": ["instructors"]},
    ]
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            query = parse_qs(urlparse(self.path).query)
            offset, limit = int(query["offset"][0]), int(query["limit"][0])
            seen.append((offset, self.headers["Authorization"]))
            following = {"offset": offset + limit} if offset + limit < len(users) else None
            body = {"items": users[offset : offset + limit], "_pagination": {"next": following}}
            self.send_response(200)
            self.end_headers()
            self.wfile.write(json.dumps(body).encode())

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        students = roster.from_hub(f"http://127.0.0.1:{server.server_address[1]}/hub/api", "admin-token")
    finally:
        server.shutdown()
    assert [s.username for s in students] == [f"s{i:03d}" for i in range(250)]
    assert seen == [(0, "token admin-token"), (200, "token admin-token")]
    with pytest.raises(ValueError, match="^api_url: expected the hub's API URL"):
        roster.from_hub("hub.example.edu", "t")


def test_the_prediction_that_counts_is_the_one_the_kernel_marked_first():
    records = [
        # a second kernel's first answer (attempt 1 again, right) arrived before the first kernel's held answer
        {"student": "ada", "event": "predict", "exercise": "01.p", "status": "right", "attempt": 1, "first_try": False},
        {"student": "ada", "event": "predict", "exercise": "01.p", "status": "wrong", "attempt": 1, "first_try": True},
    ]
    assert compute.first_tries(records) == {("ada", "01.p"): "wrong"}
