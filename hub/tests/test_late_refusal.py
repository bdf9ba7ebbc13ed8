"""Late work refused at arrival (issue 29): a lesson whose course-file policy is ``refuse`` takes no submission
after the student's due date (extension and grace counted); ``penalty`` and ``accept`` keep taking it.

The service's own parts and application, without a hub (the stand-in login of test_submissions.py); ``make
test-hub`` refuses a late lesson from a student's kernel on a real hub.
"""

from __future__ import annotations

import datetime as dt
import json
import os

import pytest
from class_report.deadlines import Deadlines
from class_report.store import Store
from class_report.submissions import SubmissionRefused, Submissions
from test_submissions import NB, call, serve

from course_utils.marks.course import CourseFileError

DUE = dt.datetime(2026, 12, 7, 23, 0, tzinfo=dt.UTC)
COURSE = """
[lessons.01]
due = "2026-12-07T23:00:00+00:00"
[lessons.02]
due = "2026-12-07T23:00:00+00:00"
policy = "refuse"
[lessons.03]
due = "2026-12-07T23:00:00+00:00"
policy = "accept"
[late]
policy = "penalty"
grace_minutes = 5
[extensions.bob]
"02" = 1
"""


def _submissions(tmp_path, text: str = COURSE) -> Submissions:
    (tmp_path / "course.toml").write_text(text)
    return Submissions(Store(str(tmp_path / "r.sqlite")), deadlines=Deadlines(str(tmp_path / "course.toml")))


def test_a_refuse_lesson_takes_nothing_after_the_due_date_and_counts_the_refusals(tmp_path):
    kept = _submissions(tmp_path)
    late = DUE + dt.timedelta(hours=2)
    assert kept.add("alice", "02", "02_masking.ipynb", NB, now=DUE + dt.timedelta(minutes=4))["lesson"] == "02"
    for _ in range(2):
        with pytest.raises(SubmissionRefused) as refused:
            kept.add("carol", "02", "02_masking.ipynb", NB, now=late)
    assert refused.value.status == 403
    message = str(refused.value)
    assert message.startswith("lesson 02 is closed: its due date was 2026-12-07 23:00 UTC")
    assert "received at 2026-12-08 01:00 UTC" in message and "Nothing was submitted" in message
    # bob's extension (one day) counts; the penalty and accept lessons take late work
    assert kept.add("bob", "02", "02_masking.ipynb", NB, now=late)["student"] == "bob"
    assert kept.add("carol", "01", "01_attention.ipynb", NB, now=late)["lesson"] == "01"
    assert kept.add("carol", "03", "03_heads.ipynb", NB, now=late)["lesson"] == "03"
    with pytest.raises(SubmissionRefused, match="^lesson 02 is closed: your extended due date was 2026-12-08 23:00"):
        kept.add("bob", "02", "02_masking.ipynb", NB, now=DUE + dt.timedelta(days=1, minutes=6))
    assert kept.refusals() == {"02": {"bob": 1, "carol": 2}}
    assert sorted((r["student"], r["lesson"]) for r in kept.receipts()) == [
        ("alice", "02"),
        ("bob", "02"),
        ("carol", "01"),
        ("carol", "03"),
    ]


def test_an_extension_granted_later_reopens_the_lesson_and_a_broken_file_keeps_the_last_good_one(tmp_path):
    kept = _submissions(tmp_path)
    late = DUE + dt.timedelta(hours=2)
    with pytest.raises(SubmissionRefused):
        kept.add("carol", "02", "02_masking.ipynb", NB, now=late)
    path = tmp_path / "course.toml"
    path.write_text(COURSE + '[extensions.carol]\n"02" = "2026-12-09T00:00:00+00:00"\n')
    os.utime(path, ns=(1, 10**18))  # a new modification time, whatever the file system's resolution
    assert kept.add("carol", "02", "02_masking.ipynb", NB, now=late)["student"] == "carol"
    path.write_text("[lessons.02\n")  # not TOML: logged, the last valid file stays in force
    os.utime(path, ns=(1, 2 * 10**18))
    assert kept.add("carol", "02", "02_masking.ipynb", NB, now=late)["student"] == "carol"
    with pytest.raises(SubmissionRefused):
        kept.add("dave", "02", "02_masking.ipynb", NB, now=late)


def test_a_bad_course_file_stops_the_service_at_start_naming_the_key(tmp_path):
    (tmp_path / "course.toml").write_text('[lessons.02]\ndue = "2026-12-07"\npolicy = "never"\n')
    with pytest.raises(CourseFileError, match="^course.toml: lessons.02.policy: expected one of penalty"):
        Deadlines(str(tmp_path / "course.toml"))
    with pytest.raises(TypeError, match="^path: expected the course file's path"):
        Deadlines("")


def test_the_service_answers_403_with_the_reason_and_the_instructors_index_counts_it(tmp_path, monkeypatch):
    past = (dt.datetime.now(dt.UTC) - dt.timedelta(days=1)).isoformat(timespec="seconds")
    (tmp_path / "course.toml").write_text(
        f'[lessons.01]\ndue = "{past}"\npolicy = "refuse"\n[lessons.02]\ndue = "{past}"\n'
    )
    gen = serve(tmp_path, monkeypatch, course_file=str(tmp_path / "course.toml"))
    url, _ = next(gen)
    try:
        status, body, _ = call(url + "api/submissions?lesson=01&notebook=01_x.ipynb", "carol", NB, "POST")
        assert status == 403, body
        assert json.loads(body)["error"].startswith("lesson 01 is closed: its due date was")
        status, body, _ = call(url + "api/submissions?lesson=02&notebook=02_x.ipynb", "carol", NB, "POST")
        assert status == 200 and json.loads(body)["lesson"] == "02"  # penalty: taken, the marks apply it
        status, page, _ = call(url, "teacher")
        assert status == 200
        page = page.decode()
        assert "<th>refused (late)</th>" in page and "1 (1 tries): carol" in page
    finally:
        next(gen, None)
