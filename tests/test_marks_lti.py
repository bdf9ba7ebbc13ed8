"""LTI 1.3 grade passback (issue 29): marks.csv into a platform's gradebook over AGS, against a fake LMS.

The fake platform below follows the IMS specifications the module cites: it verifies the client assertion's RS256
signature with the tool's public key and its claims, hands out a bearer token, pages its line items with a
``Link: rel="next"`` header, creates line items, lists NRPS members, and keeps every score posted with its media
type. The tests read its gradebook afterwards.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from course_utils.marks import compute, course, lms, lti, roster
from course_utils.marks.cli import main as marks_main

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
CLIENT_ID = "10000000000042"


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class FakeLms:
    """One course's gradebook on an LTI 1.3 platform, on 127.0.0.1."""

    def __init__(self, public_key, members=(), items=(), page=1):
        self.public_key, self.members, self.page = public_key, list(members), page
        self.items = [dict(item) for item in items]
        self.scores, self.requests, self.assertions = [], [], []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def gradebook(self) -> dict:
        """(user id, line item label) -> the last score posted."""
        labels = {item["id"]: item["label"] for item in self.items}
        return {(s["userId"], labels[s["item"]]): s for s in self.scores}

    def _verify(self, assertion: str) -> bool:
        header, claims, signature = assertion.split(".")
        try:
            self.public_key.verify(
                _unb64(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256()
            )
        except Exception:
            return False
        header, claims = json.loads(_unb64(header)), json.loads(_unb64(claims))
        self.assertions.append((header, claims))
        now = time.time()
        return (
            header["alg"] == "RS256"
            and claims["iss"] == claims["sub"] == CLIENT_ID
            and claims["aud"] == self.url + "/token"
            and claims["iat"] <= now + 5 < claims["exp"] + 5
            and claims["exp"] - claims["iat"] <= 3600
            and bool(claims["jti"])
        )

    def _handler(self):
        lms_ = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, code, body=None, content_type="application/json", link=None):
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                if link:
                    self.send_header("Link", link)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self):
                return self.rfile.read(int(self.headers.get("Content-Length", 0)))

            def _authorised(self):
                if self.headers.get("Authorization") != "Bearer token-1":
                    self._answer(401, {"error": "invalid_token"})
                    return False
                return True

            def do_POST(self):
                path = urllib.parse.urlsplit(self.path).path
                lms_.requests.append(("POST", path, self.headers.get("Content-Type")))
                if path == "/token":
                    form = urllib.parse.parse_qs(self._body().decode())
                    ok = (
                        form.get("grant_type") == ["client_credentials"]
                        and form.get("client_assertion_type")
                        == ["urn:ietf:params:oauth:client-assertion-type:jwt-bearer"]
                        and "https://purl.imsglobal.org/spec/lti-ags/scope/score" in form.get("scope", [""])[0]
                        and lms_._verify(form.get("client_assertion", [".."])[0])
                    )
                    if not ok:
                        return self._answer(400, {"error": "invalid_client"})
                    return self._answer(200, {"access_token": "token-1", "token_type": "Bearer", "expires_in": 3600})
                if not self._authorised():
                    return None
                if path == "/lineitems":
                    if self.headers.get("Content-Type") != lti.LINEITEM:
                        return self._answer(415, {"error": "media type"})
                    item = json.loads(self._body())
                    item["id"] = f"{lms_.url}/lineitems/{len(lms_.items) + 1}?course=7"
                    lms_.items.append(item)
                    return self._answer(201, item, lti.LINEITEM)
                if path.startswith("/lineitems/") and path.endswith("/scores"):
                    if self.headers.get("Content-Type") != lti.SCORE:
                        return self._answer(415, {"error": "media type"})
                    score = json.loads(self._body())
                    number = path.split("/")[2]
                    score["item"] = f"{lms_.url}/lineitems/{number}?course=7"
                    lms_.scores.append(score)
                    return self._answer(200)
                return self._answer(404, {"error": path})

            def do_PUT(self):
                if not self._authorised():
                    return None
                item = json.loads(self._body())
                for i, old in enumerate(lms_.items):
                    if old["id"] == item["id"]:
                        lms_.items[i] = item
                return self._answer(200, item, lti.LINEITEM)

            def do_GET(self):
                parts = urllib.parse.urlsplit(self.path)
                lms_.requests.append(("GET", parts.path, self.headers.get("Accept")))
                if not self._authorised():
                    return None
                start = int(urllib.parse.parse_qs(parts.query).get("start", ["0"])[0])
                if parts.path == "/lineitems":
                    listing, container = lms_.items, None
                elif parts.path == "/members":
                    listing, container = lms_.members, "members"
                else:
                    return self._answer(404, {"error": parts.path})
                chunk = listing[start : start + lms_.page]
                more = start + lms_.page < len(listing)
                link = f'<{lms_.url}{parts.path}?start={start + lms_.page}>; rel="next"' if more else None
                body = chunk if container is None else {"id": lms_.url + "/members", "members": chunk}
                kind = lti.LINEITEM_CONTAINER if container is None else lti.MEMBERSHIPS
                return self._answer(200, body, kind, link)

        return Handler


MARKS = """student,01 points,01 of,01 late days,01 status,01 solutions shown,02 points,02 of,02 late days,02 status,\
02 solutions shown,total,of,late days
alice,10,10,0,on time,,7,8,0,on time,,17,18,0
bob,0,10,0,not submitted,,8,8,0,on time,,8,18,0
carol,9,10,1,late,,0,8,3,refused (late),,9,18,3
'=cmd,1,10,0,on time,,0,8,0,not submitted,,1,18,0
"""


def _setup(tmp_path, fake, match="sub", **extra):
    key_file = tmp_path / "tool.pem"
    key_file.write_bytes(
        KEY.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    table = {
        "client_id": CLIENT_ID,
        "token_url": fake.url + "/token",
        "lineitems": fake.url + "/lineitems?course=7",
        "key": "tool.pem",
        "key_id": "tool-1",
        "match": match,
        **extra,
    }
    if match != "sub":
        table["memberships"] = fake.url + "/members"
    marked = course.parse({"course": {"name": "Attention"}, "lti": table}, source="course.toml")
    marks_file = tmp_path / "marks.csv"
    marks_file.write_text(MARKS, encoding="utf-8")
    return marked, marks_file


@pytest.fixture
def fake():
    platform = FakeLms(
        KEY.public_key(), items=[{"id": "", "label": "Attention 01", "resourceId": "lesson-01", "scoreMaximum": 10}]
    )
    platform.items[0]["id"] = platform.url + "/lineitems/1?course=7"
    yield platform
    platform.close()


def test_the_marks_file_lands_in_the_gradebook_one_line_item_per_lesson(tmp_path, fake):
    marked, marks_file = _setup(tmp_path, fake)
    lines = []
    scores = lti.push(marked, marks_file, base=tmp_path, say=lines.append)
    book = fake.gradebook()
    # lesson 01's line item existed (found by its resourceId, on the first page); 02's was created
    assert [item["label"] for item in fake.items] == ["Attention 01", "Attention 02"]
    assert fake.items[1]["scoreMaximum"] == 8 and fake.items[1]["resourceId"] == "lesson-02"
    assert {key: (s["scoreGiven"], s["scoreMaximum"]) for key, s in book.items()} == {
        ("alice", "Attention 01"): (10, 10),
        ("alice", "Attention 02"): (7, 8),
        ("bob", "Attention 01"): (0, 10),
        ("bob", "Attention 02"): (8, 8),
        ("carol", "Attention 01"): (9, 10),
        ("carol", "Attention 02"): (0, 8),
        ("=cmd", "Attention 01"): (1, 10),  # the name as the hub has it, not as the CSV neutralised it
        ("=cmd", "Attention 02"): (0, 8),
    }
    assert book[("bob", "Attention 01")]["activityProgress"] == "Initialized"
    assert book[("carol", "Attention 02")]["comment"] == "refused (late), 3 days late"
    assert book[("carol", "Attention 01")]["comment"] == "late, 1 day late"
    assert all(s["gradingProgress"] == "FullyGraded" and s["timestamp"].endswith("+00:00") for s in fake.scores)
    assert len(scores) == 8 and lines[-1] == "sent 8 scores to 2 line items (01, 02)"
    header, claims = fake.assertions[0]
    assert header["kid"] == "tool-1" and claims["aud"] == fake.url + "/token"
    # every AGS request carried its media type (the fake refuses others with 415)
    assert ("POST", "/lineitems/1/scores", lti.SCORE) in fake.requests
    assert ("GET", "/lineitems", lti.LINEITEM_CONTAINER) in fake.requests


def test_students_are_matched_by_email_through_nrps_and_the_unknown_are_not_sent(tmp_path, fake):
    fake.members = [
        {"user_id": "u-17", "email": "Alice@X.edu", "status": "Active", "roles": ["Learner"]},
        {"user_id": "u-18", "email": "bob@x.edu", "status": "Inactive", "roles": ["Learner"]},
        {"user_id": "u-19", "email": "carol@x.edu", "status": "Active", "roles": ["Learner"]},
    ]
    marked, marks_file = _setup(tmp_path, fake, match="email")
    people = roster.parse("username,email\nalice,alice@x.edu\nbob,bob@x.edu\ncarol,carol@x.edu\n")
    lines = []
    lti.push(marked, marks_file, roster=people, base=tmp_path, say=lines.append)
    assert sorted({user for user, _ in fake.gradebook()}) == ["u-17", "u-19"]
    assert lines[0] == "not in the LMS by email (2), not sent: =cmd, bob"
    assert ("GET", "/members", lti.MEMBERSHIPS) in fake.requests


def test_a_dry_run_sends_no_score(tmp_path, fake):
    marked, marks_file = _setup(tmp_path, fake)
    lines = []
    lti.push(marked, marks_file, base=tmp_path, dry_run=True, say=lines.append)
    assert fake.scores == [] and len(fake.items) == 1
    assert "would send alice (alice) 01: 10/10" in lines


def test_a_key_the_platform_does_not_know_is_refused_with_the_lms_answer(tmp_path, fake):
    fake.public_key = OTHER_KEY.public_key()
    marked, marks_file = _setup(tmp_path, fake)
    with pytest.raises(lti.LtiError, match=r"POST http://127\.0\.0\.1:\d+/token: the LMS answered 400.*invalid_client"):
        lti.push(marked, marks_file, base=tmp_path, say=lambda line: None)
    assert fake.scores == []


def test_a_changed_maximum_updates_the_line_item(tmp_path, fake):
    fake.items[0]["scoreMaximum"] = 12
    marked, marks_file = _setup(tmp_path, fake)
    lti.push(marked, marks_file, base=tmp_path, say=lambda line: None)
    assert fake.items[0]["scoreMaximum"] == 10


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("token_url", "http://lms.example.edu/token", r"lti\.token_url: expected an https:// URL"),
        ("lineitems", 7, r"lti\.lineitems: expected an https:// URL, got 7"),
        ("match", "name", r"lti\.match: expected one of sub, email, sis_id, got 'name'"),
        ("client_id", "", r"lti\.client_id: expected a non-empty string"),
        ("secret", "x", r"lti\.secret: unknown key"),
    ],
)
def test_a_bad_lti_table_names_the_key(tmp_path, fake, key, value, message):
    marked, _ = _setup(tmp_path, fake, **{key: value})
    with pytest.raises(course.CourseFileError, match=message):
        lti.settings(marked)


def test_email_matching_needs_the_memberships_url(tmp_path, fake):
    marked, _ = _setup(tmp_path, fake)
    table = {**marked.lti, "match": "email"}
    with pytest.raises(course.CourseFileError, match=r"lti\.memberships: expected the NRPS URL"):
        lti.settings(course.parse({"lti": table}))


def test_the_cli_reads_the_marks_file_make_marks_wrote(tmp_path, fake, capsys):
    marked, marks_file = _setup(tmp_path, fake)
    lines = ["[course]", 'name = "Attention"', "[lti]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in marked.lti.items()]
    (tmp_path / "course.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert marks_main(["lti", "--course", str(tmp_path / "course.toml"), "--marks", str(marks_file)]) == 0
    assert "sent 8 scores to 2 line items (01, 02)" in capsys.readouterr().out
    assert len(fake.gradebook()) == 8


def test_read_marks_takes_the_file_lms_writes(tmp_path):
    # the same columns lms.marks_csv writes (its header is the contract between the two)
    marked = course.parse(
        {
            "course": {"name": "Attention"},
            "lessons": {"01": {"due": "2026-12-07T23:59:00+01:00"}},
            "late": {"per_day": 0.25},
        }
    )
    due = marked.lessons["01"].due
    manifest = [{"student": "carol", "lesson": "01", "received": (due + dt.timedelta(hours=25)).isoformat()}]
    grades = [{"student": "carol", "lesson": "01", "exercise": "01.a", "status": "passed"}]
    people = roster.parse("username\ncarol\ndave\n")
    marks = compute.compute(marked, {"01": (["01.a", "01.b"], [])}, grades, manifest=manifest, roster=people)
    path = tmp_path / "marks.csv"
    path.write_text(lms.marks_csv(marks), encoding="utf-8")
    lessons, by_student = lti.read_marks(path)
    assert lessons == ["01"]
    assert by_student["carol"]["01"] == (0.5, 2.0, "late", 2)
    assert by_student["dave"]["01"] == (0.0, 2.0, "not submitted", 0)


def test_the_client_assertion_is_short_lived_and_fresh(tmp_path, fake):
    marked, _ = _setup(tmp_path, fake)
    chosen = lti.settings(marked, base=tmp_path)
    now = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    first, second = (lti.client_assertion(chosen, KEY, now=now) for _ in range(2))
    claims = [json.loads(_unb64(token.split(".")[1])) for token in (first, second)]
    assert claims[0]["exp"] - claims[0]["iat"] == 300 and claims[0]["jti"] != claims[1]["jti"]
