"""The marks into the LMS's gradebook over LTI 1.3 Assignment and Grade Services (``make lti-push``).

``make marks`` writes ``marks.csv``; the instructor reads it; ``make lti-push`` sends exactly those marks to the
LMS (Canvas, Moodle, Blackboard, Brightspace, Sakai: any LTI 1.3 platform with AGS), one line item (gradebook
column) per lesson. The steps, as the IMS specifications give them:

1. **A token** (LTI Advantage security, the OAuth 2 client-credentials grant with a signed JWT): a JWT signed
   RS256 with the tool's private key (``iss`` = ``sub`` = the client id, ``aud`` = the token URL, a few minutes'
   ``exp``, a fresh ``jti``), posted to the platform's token URL with the scopes of AGS (line items, scores) and,
   when students are matched by email or SIS id, of Names and Role Provisioning Services (NRPS).
2. **The line items** (``GET`` the context's line items URL, every page by ``Link: <...>; rel="next"``): the one
   whose ``resourceId`` is ``lesson-NN`` is the lesson's column; a missing one is created (``POST``) with the
   label of the CSV exports (``<course name> NN``) and the lesson's points as ``scoreMaximum``.
3. **Who is who**: ``match = "sub"`` when the hub's user names are the LMS's user ids (an LTI login on the hub with
   ``username_key = "sub"``); ``"email"`` or ``"sis_id"``: the roster's (or the hub name's, for an email) value is
   looked up in the NRPS membership list (``email``, ``lis_person_sourcedid``) to find the user id.
4. **A score per student and lesson** (``POST <line item>/scores``): ``scoreGiven`` (the points after the late
   policy), ``scoreMaximum``, ``activityProgress`` (``Completed``, or ``Initialized`` when nothing was
   submitted), ``gradingProgress`` ``FullyGraded``, a ``comment`` with the status and late days, and a
   ``timestamp`` (a later score replaces an earlier one in the gradebook).

The course file's ``[lti]`` table (checked here; a bad value names the key)::

    [lti]
    client_id = "10000000000042"                      # the tool's client id, given by the LMS
    token_url = "https://lms.example.edu/login/oauth2/token"
    lineitems = "https://lms.example.edu/api/lti/courses/7/line_items"   # the course's AGS line items URL
    memberships = "https://lms.example.edu/api/lti/courses/7/names_and_roles"  # NRPS; for match email/sis_id
    key = "lti_private_key.pem"                       # the tool's private key (PEM); its public key is in the LMS
    key_id = "attention-course-1"                     # the kid the LMS knows that public key by
    match = "sub"                                     # "sub", "email" or "sis_id"

URLs must be ``https://`` (``http://`` only to this machine, for tests). Nothing is sent with ``--dry-run``: the
plan is printed. Introduced for instructors in docs/marks.md.
"""

from __future__ import annotations

import base64
import csv
import datetime as dt
import io
import json
import re
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path

from course_utils.marks import lms
from course_utils.marks.course import CourseFileError

__all__ = [
    "LINEITEM_CONTAINER",
    "LtiError",
    "MEMBERSHIPS",
    "Platform",
    "SCORE",
    "SCOPES",
    "Score",
    "Settings",
    "client_assertion",
    "plan",
    "push",
    "read_marks",
    "settings",
]

SCOPES = (
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
    "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
)
LINEITEM_CONTAINER = "application/vnd.ims.lis.v2.lineitemcontainer+json"
LINEITEM = "application/vnd.ims.lis.v2.lineitem+json"
SCORE = "application/vnd.ims.lis.v1.score+json"
MEMBERSHIPS = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
MATCHES = ("sub", "email", "sis_id")
TIMEOUT_S = 30.0
MAX_RESPONSE = 16 * 2**20
MAX_PAGES = 1000
_LOCAL = {"localhost", "127.0.0.1", "::1"}


class LtiError(ValueError):
    """The LMS refused a request, or answered what AGS does not allow; the message names the request."""


@dataclass(frozen=True)
class Settings:
    """The course file's validated ``[lti]`` table."""

    client_id: str
    token_url: str
    lineitems: str
    key: Path
    key_id: str
    match: str = "sub"
    memberships: str | None = None


def _url(value, source: str, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise CourseFileError(f"{source}: lti.{key}: expected an https:// URL, got {value!r}")
    parts = urllib.parse.urlsplit(value)
    local = parts.scheme == "http" and parts.hostname in _LOCAL
    if not (parts.scheme == "https" and parts.hostname) and not local:
        raise CourseFileError(
            f"{source}: lti.{key}: expected an https:// URL (http:// only to this machine), got {value!r}"
        )
    return value


def settings(course, *, base: Path | None = None) -> Settings:
    """The ``[lti]`` table of ``course`` (a :class:`course_utils.marks.course.Course`), checked key by key.

    ``key`` is read relative to ``base`` (the course file's folder) when it is not absolute.
    """
    table, source = course.lti, course.source
    if not table:
        raise CourseFileError(f"{source}: lti: expected an [lti] table (client_id, token_url, lineitems, key, key_id)")
    allowed = {"client_id", "token_url", "lineitems", "memberships", "key", "key_id", "match"}
    for name in table:
        if name not in allowed:
            raise CourseFileError(f"{source}: lti.{name}: unknown key (known: {', '.join(sorted(allowed))})")
    for name in ("client_id", "key", "key_id"):
        if not isinstance(table.get(name), str) or not table[name].strip():
            raise CourseFileError(f"{source}: lti.{name}: expected a non-empty string, got {table.get(name)!r}")
    match = table.get("match", "sub")
    if match not in MATCHES:
        raise CourseFileError(f"{source}: lti.match: expected one of {', '.join(MATCHES)}, got {match!r}")
    memberships = table.get("memberships")
    if memberships is not None:
        memberships = _url(memberships, source, "memberships")
    elif match != "sub":
        raise CourseFileError(
            f"{source}: lti.memberships: expected the NRPS URL (match = {match!r} needs it), got none"
        )
    key = Path(table["key"])
    if not key.is_absolute() and base is not None:
        key = base / key
    return Settings(
        client_id=table["client_id"].strip(),
        token_url=_url(table.get("token_url"), source, "token_url"),
        lineitems=_url(table.get("lineitems"), source, "lineitems"),
        key=key,
        key_id=table["key_id"].strip(),
        match=match,
        memberships=memberships,
    )


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def client_assertion(chosen: Settings, private_key, *, now: dt.datetime | None = None) -> str:
    """The signed JWT (RS256) that asks the platform for a token, valid for five minutes."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    issued = int((now or dt.datetime.now(dt.UTC)).timestamp())
    header = {"alg": "RS256", "typ": "JWT", "kid": chosen.key_id}
    claims = {
        "iss": chosen.client_id,
        "sub": chosen.client_id,
        "aud": chosen.token_url,
        "iat": issued,
        "exp": issued + 300,
        "jti": uuid.uuid4().hex,
    }
    signing_input = _b64(json.dumps(header).encode()) + "." + _b64(json.dumps(claims).encode())
    signature = private_key.sign(signing_input.encode("ascii"), padding.PKCS1v15(), hashes.SHA256())
    return signing_input + "." + _b64(signature)


def _load_key(path: Path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CourseFileError(f"lti.key: cannot read the private key {path}: {exc.strerror or exc}") from None
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise CourseFileError(f"lti.key: expected an unencrypted PEM private key in {path}: {exc}") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise CourseFileError(f"lti.key: expected an RSA key (RS256) in {path}, got {type(key).__name__}")
    return key


def _next_link(header: str | None) -> str | None:
    for part in (header or "").split(","):
        found = re.match(r"\s*<([^>]+)>\s*;(.*)", part)
        if found and re.search(r'rel\s*=\s*"?next"?', found.group(2)):
            return found.group(1)
    return None


class Platform:
    """The LMS, spoken to over AGS and NRPS with one token (:meth:`connect` first)."""

    def __init__(self, chosen: Settings, private_key):
        self.settings, self._key, self._token = chosen, private_key, None

    def _send(self, method: str, url: str, *, body=None, content_type=None, accept=None, form=None):
        headers = {"Accept": accept or "application/json"}
        data = None
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                raw = response.read(MAX_RESPONSE + 1)
                link = response.headers.get("Link")
        except urllib.error.HTTPError as exc:
            detail = exc.read(2000).decode("utf-8", "replace").strip()
            raise LtiError(f"{method} {url}: the LMS answered {exc.code} {exc.reason}: {detail}") from None
        except urllib.error.URLError as exc:
            raise LtiError(f"{method} {url}: cannot reach the LMS: {exc.reason}") from None
        if len(raw) > MAX_RESPONSE:
            raise LtiError(f"{method} {url}: the answer is over {MAX_RESPONSE} bytes")
        try:
            return (json.loads(raw) if raw.strip() else None), link
        except ValueError:
            raise LtiError(f"{method} {url}: expected JSON, got {raw[:80]!r}") from None

    def connect(self, scopes=SCOPES) -> None:
        """Get the access token (step 1)."""
        form = {
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": client_assertion(self.settings, self._key),
            "scope": " ".join(scopes),
        }
        self._token = None
        answer, _ = self._send("POST", self.settings.token_url, form=form)
        if not isinstance(answer, dict) or not isinstance(answer.get("access_token"), str):
            raise LtiError(f"POST {self.settings.token_url}: expected an access_token, got {answer!r:.200}")
        self._token = answer["access_token"]

    def _pages(self, url: str, accept: str, field: str | None):
        for _ in range(MAX_PAGES):
            answer, link = self._send("GET", url, accept=accept)
            items = answer.get(field) if field else answer
            if not isinstance(items, list):
                raise LtiError(f"GET {url}: expected a list{f' of {field}' if field else ''}, got {answer!r:.200}")
            yield from items
            url = _next_link(link)
            if not url:
                return
        raise LtiError(f"GET {url}: more than {MAX_PAGES} pages")

    def line_items(self) -> list:
        return list(self._pages(self.settings.lineitems, LINEITEM_CONTAINER, None))

    def line_item(self, resource_id: str, label: str, maximum: float, existing: list) -> str:
        """The URL of the line item for ``resource_id``: found in ``existing``, or created (step 2)."""
        for item in existing:
            if item.get("resourceId") == resource_id:
                if float(item.get("scoreMaximum", maximum)) != float(maximum):
                    updated = {**item, "scoreMaximum": maximum}
                    self._send("PUT", item["id"], body=updated, content_type=LINEITEM, accept=LINEITEM)
                return item["id"]
        body = {"scoreMaximum": maximum, "label": label, "resourceId": resource_id, "tag": "attention-course"}
        created, _ = self._send("POST", self.settings.lineitems, body=body, content_type=LINEITEM, accept=LINEITEM)
        if not isinstance(created, dict) or not isinstance(created.get("id"), str):
            raise LtiError(f"POST {self.settings.lineitems}: expected the new line item's id, got {created!r:.200}")
        return created["id"]

    def members(self) -> list:
        return list(self._pages(self.settings.memberships, MEMBERSHIPS, "members"))

    def post_score(self, line_item: str, score: Score, timestamp: str) -> None:
        parts = urllib.parse.urlsplit(line_item)
        url = urllib.parse.urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/scores"))
        body = {
            "userId": score.user_id,
            "scoreGiven": score.points,
            "scoreMaximum": score.possible,
            "comment": score.comment,
            "timestamp": timestamp,
            "activityProgress": "Initialized" if score.status == "not submitted" else "Completed",
            "gradingProgress": "FullyGraded",
        }
        self._send("POST", url, body=body, content_type=SCORE)


@dataclass(frozen=True)
class Score:
    """One student's mark for one lesson, as it will be sent; ``user_id`` None: not found in the LMS."""

    student: str
    lesson: str
    user_id: str | None
    points: float
    possible: float
    status: str
    late_days: int

    @property
    def comment(self) -> str:
        late = f", {self.late_days} day{'s' * (self.late_days != 1)} late" if self.late_days else ""
        return f"{self.status}{late}"


def _unescaped(cell: str) -> str:
    """A name as the CSV files held it before :func:`course_utils.marks.lms.safe_cell` neutralised it."""
    rest = cell[1:]
    return rest if cell.startswith("'") and lms.safe_cell(rest) == cell else cell


def read_marks(path) -> tuple[list, dict]:
    """``marks.csv`` (``make marks``'s): the lessons in order, and student -> lesson -> (points, of, status, late)."""
    text = Path(path).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    header = next(csv.reader(io.StringIO(text)), [])
    lessons = [name.split()[0] for name in header if name.endswith(" points")]
    if not rows or "student" not in header or not lessons:
        raise ValueError(f"{path}: expected make marks's marks.csv (student, NN points, NN of, ...), got {header[:4]}")
    out = {}
    for number, row in enumerate(rows, start=2):
        marks = {}
        for lesson in lessons:
            try:
                points, possible = float(row[f"{lesson} points"]), float(row[f"{lesson} of"])
                late = int(row[f"{lesson} late days"] or 0)
            except (TypeError, ValueError):
                raise ValueError(f"{path}: row {number}: expected numbers in the {lesson} columns") from None
            marks[lesson] = (points, possible, row[f"{lesson} status"], late)
        out[_unescaped(row["student"])] = marks
    return lessons, out


def _who(chosen: Settings, students, people, members) -> dict:
    """student (hub name) -> LMS user id, or None when the LMS has no such member (step 3)."""
    if chosen.match == "sub":
        return {student: student for student in students}
    field = "email" if chosen.match == "email" else "lis_person_sourcedid"
    by_value = {}
    for member in members:
        value = member.get(field)
        if isinstance(value, str) and member.get("status", "Active") == "Active":
            by_value[value.strip().lower()] = member.get("user_id")
    out = {}
    for student in students:
        person = people.get(student)
        value = (person.email if chosen.match == "email" else person.sis_id) if person else ""
        if not value and chosen.match == "email" and "@" in student:
            value = student
        out[student] = by_value.get(value.strip().lower()) if value else None
    return out


def plan(chosen: Settings, lessons, marks: dict, people: dict, members: list) -> list[Score]:
    """Every score to send, in the marks file's order (``user_id`` None where the LMS has no such student)."""
    who = _who(chosen, list(marks), people, members)
    return [
        Score(student, lesson, who[student], points, possible, status, late)
        for student, by_lesson in marks.items()
        for lesson, (points, possible, status, late) in by_lesson.items()
        if lesson in lessons
    ]


def push(course, marks_path, *, roster=None, base=None, dry_run=False, say=print) -> list[Score]:
    """Send ``marks_path``'s marks to the LMS (steps 1-4); return the scores planned. Unmatched students are
    listed and skipped; nothing is sent with ``dry_run`` (the LMS is still asked who is who, read-only)."""
    chosen = settings(course, base=base)
    lessons, marks = read_marks(marks_path)
    people = {person.username: person for person in (roster or [])}
    platform = Platform(chosen, _load_key(chosen.key))
    platform.connect()
    members = platform.members() if chosen.match != "sub" else []
    scores = plan(chosen, lessons, marks, people, members)
    missing = sorted({score.student for score in scores if score.user_id is None})
    if missing:
        say(f"not in the LMS by {chosen.match} ({len(missing)}), not sent: {', '.join(missing)}")
    if dry_run:
        for score in scores:
            if score.user_id is not None:
                say(f"would send {score.student} ({score.user_id}) {score.lesson}: {score.points:g}/{score.possible:g}")
        return scores
    existing = platform.line_items()
    possible = {score.lesson: score.possible for score in scores}
    items = {
        lesson: platform.line_item(f"lesson-{lesson}", f"{course.name} {lesson}", possible[lesson], existing)
        for lesson in lessons
        if lesson in possible
    }
    stamp = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
    sent = 0
    for score in scores:
        if score.user_id is not None:
            platform.post_score(items[score.lesson], score, stamp)
            sent += 1
    say(f"sent {sent} scores to {len(items)} line items ({', '.join(sorted(items))})")
    return scores
