"""The class-report service's web application (tornado, authenticated by JupyterHub).

Addresses, under the service's prefix (``/services/class-report/``):

- ``POST api/records``: a student's kernel sends ``{"records": [...]}`` with ``Authorization: token <its hub
  token>`` (``course_utils.hub_client``). The student is whoever the hub says owns the token; no name in a record
  is ever used. Answers 200 ``{"accepted": n, "refused": [...]}`` once the accepted records are committed; 413 for a
  body over ``max_body`` bytes or more than ``max_records`` records; 429 (with ``Retry-After``) past the rate limit;
  403 without a hub token that may use this service. Only the course's registered exercise, prediction and
  misconception ids are accepted (``class_report.records``); the others are refused, listed in ``refused`` and
  counted on the instructor's page; a batch with none accepted and some refused answers 400.
- ``GET api/records?student=NAME``: that student's rows as JSON (their newest record per exercise, and their
  history). A student may ask for their own rows only; an instructor for anyone's.
- ``GET api/report``: the report's rows as JSON: every student's for an instructor, their own for a student.
- ``POST api/submissions?lesson=NN&notebook=NAME``: a student's kernel submits a lesson (``course_utils.submit``);
  the body is the notebook, at most ``max_submission`` bytes (413 beyond, with what to do); every submission is
  kept (at most ``max_submissions`` and ``max_student_bytes`` per student); the answer is the receipt (id,
  student, lesson, notebook, received, sha256, bytes). ``GET api/submissions``: the receipts (an instructor's:
  everyone's, or ``?student=``; a student's: their own); ``GET api/submissions/<id>``: one notebook (its owner or
  an instructor). With the setting ``course_file``, a lesson whose late policy is ``refuse`` refuses a submission
  after the student's due date (403, the reason in words, which the student's receipt cell shows); the refusals
  are counted on the instructor's index (``class_report.deadlines``). ``python -m course_utils.marks collect --service`` reads these.
- ``GET`` (the prefix itself), after the hub's OAuth login: for an instructor (a hub admin, or a member of the
  instructors' group) the lessons' index; for a student, their own row. ``GET lesson/NN`` (``?sort=name|passed|
  stuck``): one lesson's page for an instructor: who is stuck now, each exercise's passes and top three
  misconceptions, each prediction's first-try accuracy, the students' grid. ``GET lesson/NN.csv``: that lesson's
  newest records as CSV (an instructor's: everyone's; a student's: their own).
- ``GET api/health``: ``{"ok": true}``, no login (for probes).

Instructors are the hub's admins and the members of ``instructor_group``; everyone else who may use the service
(the hub's ``access:services!service=class-report`` scope) is a student.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from dataclasses import dataclass

from jupyterhub.services.auth import HubOAuth, HubOAuthCallbackHandler, HubOAuthenticated, UserNotAllowed
from jupyterhub.utils import url_path_join
from tornado import web

from .deadlines import Deadlines
from .limits import RateLimiter
from .live import Live
from .records import course_registry, normalize
from .report import lesson_csv, render_class_report, render_index, render_lesson
from .store import Store
from .submissions import Limits, SubmissionRefused, Submissions

__all__ = ["Settings", "make_app"]

log = logging.getLogger("class_report")


@dataclass
class Settings:
    """What an instructor may tune (``python -m class_report --help`` lists them with their defaults)."""

    db_path: str = "class_report.sqlite"
    instructor_group: str = "instructors"
    max_body: int = 64 * 1024  # bytes per request
    max_records: int = 100  # records per request
    rate: float = 2.0  # requests per second per student, on average
    burst: int = 30  # requests a student may send at once
    max_events: int = 3000  # history kept per student
    max_exercises: int = 300  # (event, exercise) rows per student
    max_submission: int = 8 * 2**20  # bytes per submitted notebook
    max_student_bytes: int = 64 * 2**20  # submitted bytes kept per student
    max_submissions: int = 200  # submissions kept per student
    stuck_minutes: float = 10.0  # "stuck now": the same exercise not passing for this long
    course_file: str = ""  # the course file (course.toml): a lesson with policy "refuse" takes no late submission


class _State:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.store = Store(settings.db_path, max_events=settings.max_events, max_exercises=settings.max_exercises)
        self.registry = course_registry()  # None: the course's registry cannot load here; every valid id is accepted
        if self.registry is None:
            log.warning("the course's exercise registry cannot be imported: records are not checked against it")
        self.live = Live(settings.stuck_minutes).load(self.store)
        limits = Limits(settings.max_submission, settings.max_student_bytes, settings.max_submissions)
        lessons = None if self.registry is None else list(self.registry.exercises)
        deadlines = Deadlines(settings.course_file) if settings.course_file else None
        self.submissions = Submissions(self.store, limits, lessons=lessons, deadlines=deadlines)
        self.per_student = RateLimiter(settings.rate, settings.burst)
        # before the hub is asked whose token it is: per token (or address), so bad tokens cannot flood the hub
        self.per_token = RateLimiter(settings.rate * 2, settings.burst * 2)


class _Handler(HubOAuthenticated, web.RequestHandler):
    api = True  # answer 403 rather than redirect to the login page

    def initialize(self, state: _State):
        self.state = state

    def get_login_url(self):
        if self.api:
            raise web.HTTPError(403, "a JupyterHub token for this service is required")
        return super().get_login_url()

    def check_xsrf_cookie(self):
        if self.request.headers.get("Authorization"):
            return None  # token requests carry no cookie to forge
        return super().check_xsrf_cookie()

    async def prepare(self):
        self._limit(self._token_key(), self.state.per_token)
        try:
            model = await self.hub_auth.get_user(self, sync=False)
            user = self.check_hub_user(model) if model else None
        except UserNotAllowed:
            user = None
        if user is not None and user.get("kind", "user") != "user":
            user = None  # services have no rows
        self._hub_auth_user_cache = user
        if user is not None:
            self._limit("u:" + user["name"], self.state.per_student)

    def _token_key(self) -> str:
        token = self.hub_auth.get_token(self, in_cookie=True)
        if token:
            return "t:" + hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:24]
        return "a:" + (self.request.remote_ip or "?")

    def _limit(self, key: str, limiter: RateLimiter) -> None:
        allowed, wait = limiter.allow(key)
        if not allowed:
            self.set_header("Retry-After", str(max(1, math.ceil(wait))))
            raise web.HTTPError(429, f"too many requests: try again in {wait:.1f} s")

    def is_instructor(self, user: dict) -> bool:
        return bool(user.get("admin")) or self.state.settings.instructor_group in (user.get("groups") or [])

    def write_json(self, value, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(value, ensure_ascii=False))

    def write_error(self, status_code, **kwargs):
        reason = self._reason
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, web.HTTPError) and exc.log_message:
            reason = exc.log_message
        if self.api:
            self.write_json({"error": reason, "status": status_code}, status_code)
        else:
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish(f"{status_code}: {reason}\n")


class RecordsHandler(_Handler):
    """``POST api/records`` (a student's kernel) and ``GET api/records?student=NAME``.

    The body is read in full before :meth:`prepare` (a refusal then leaves the connection usable); the server
    itself refuses bodies over twice ``max_body`` (``python -m class_report``).
    """

    async def prepare(self):
        if self.request.method == "POST" and len(self.request.body) > self.state.settings.max_body:
            raise web.HTTPError(413, f"at most {self.state.settings.max_body} bytes per request")
        await super().prepare()

    @web.authenticated
    def post(self):
        settings = self.state.settings
        try:
            body = json.loads(self.request.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise web.HTTPError(400, f"body: expected JSON {{'records': [...]}}: {exc}") from None
        records = body.get("records") if isinstance(body, dict) else None
        if not isinstance(records, list):
            raise web.HTTPError(400, "body: expected a JSON object with a 'records' list")
        if len(records) > settings.max_records:
            raise web.HTTPError(413, f"at most {settings.max_records} records per request, got {len(records)}")
        good, refused = [], []
        unregistered = 0
        registry = self.state.registry
        for index, record in enumerate(records):
            try:
                good.append(normalize(record))
            except ValueError as exc:
                refused.append({"index": index, "error": str(exc)})
                continue
            if registry is not None:
                try:
                    registry.check(good[-1])
                except ValueError as exc:
                    good.pop()
                    unregistered += 1
                    refused.append({"index": index, "error": str(exc)})
        student = self.current_user["name"]
        accepted, over_quota = self.state.store.add(student, good) if good else (0, 0)
        if accepted:
            self.state.live.note(student, self.state.store, good)
        self.state.live.count_refused(student, unregistered)
        if over_quota:
            refused.append({"count": over_quota, "error": f"at most {settings.max_exercises} exercises per student"})
        if refused:
            log.info("%s: %d records refused: %s", student, len(records) - accepted, refused[:3])
        self.write_json({"accepted": accepted, "refused": refused}, 400 if refused and not accepted else 200)

    @web.authenticated
    def get(self):
        user = self.current_user
        student = self.get_argument("student", user["name"])
        if student != user["name"] and not self.is_instructor(user):
            raise web.HTTPError(403, f"{user['name']} may read their own rows only")
        latest = self.state.store.latest(student).get(student, [])
        self.write_json({"student": student, "latest": latest, "events": self.state.store.events(student)})


class ReportDataHandler(_Handler):
    """``GET api/report``: the rows behind the page, as JSON."""

    @web.authenticated
    def get(self):
        user = self.current_user
        instructor = self.is_instructor(user)
        students = self.state.store.latest(None if instructor else user["name"])
        self.write_json({"instructor": instructor, "students": students})


class ReportPageHandler(_Handler):
    """The first page (the service's own address), after the hub's OAuth login: the lessons' index for an
    instructor, a student's own row for a student."""

    api = False

    @web.authenticated
    def get(self):
        user = self.current_user
        stamp = time.strftime("%H:%M:%S UTC", time.gmtime())
        self.set_header("Cache-Control", "no-store")
        if self.is_instructor(user) and self.state.registry is not None:
            note = f"Live: {len(self.state.live.newest)} students so far, as of {stamp}."
            submitted = self.state.submissions.students_per_lesson()
            refused = self.state.submissions.refusals()
            page = render_index(
                self.state.live,
                self.state.registry,
                base=self.state.prefix,
                submitted=submitted,
                refused_late=refused,
                note=note,
            )
            self.finish(page)
            return
        instructor = self.is_instructor(user)
        rows = self.state.store.latest(None if instructor else user["name"])
        note = (
            f"Live: {len(rows)} students so far, as of {stamp}."
            if instructor
            else f"Live: your own results only ({user['name']}), as of {stamp}."
        )
        self.finish(render_class_report(rows, live_note=note))


class LessonPageHandler(_Handler):
    """``lesson/NN`` (an instructor's page) and ``lesson/NN.csv`` (an instructor's: everyone's; a student's: own)."""

    api = False

    @web.authenticated
    def get(self, lesson: str, csv_suffix: str | None):
        user = self.current_user
        registry = self.state.registry
        if registry is None or lesson not in registry.exercises:
            raise web.HTTPError(404, f"lesson: no lesson {lesson} in the course")
        instructor = self.is_instructor(user)
        self.set_header("Cache-Control", "no-store")
        if csv_suffix:
            students = None if instructor else {user["name"]}
            self.set_header("Content-Type", "text/csv; charset=utf-8")
            self.set_header("Content-Disposition", f'attachment; filename="class_report_{lesson}.csv"')
            self.finish(lesson_csv(self.state.live, registry, lesson, students))
            return
        if not instructor:
            raise web.HTTPError(403, f"{user['name']}: the lesson pages are the instructors'; your own rows are at ./")
        stamp = time.strftime("%H:%M:%S UTC", time.gmtime())
        sort = self.get_argument("sort", "name")
        page = render_lesson(
            self.state.live, registry, lesson, sort=sort, base=self.state.prefix, note=f"Live, as of {stamp}."
        )
        self.finish(page)


class SubmissionsHandler(_Handler):
    """``POST api/submissions?lesson=NN&notebook=NAME`` (a student's kernel) and ``GET api/submissions``."""

    async def prepare(self):
        if self.request.method == "POST" and len(self.request.body) > self.state.settings.max_submission:
            size = len(self.request.body)
            raise web.HTTPError(
                413,
                f"at most {self.state.settings.max_submission} bytes per submission, got {size}:"
                " clear the largest outputs, save, and submit again",
            )
        await super().prepare()

    @web.authenticated
    def post(self):
        student = self.current_user["name"]
        try:
            receipt = self.state.submissions.add(
                student, self.get_argument("lesson", ""), self.get_argument("notebook", ""), self.request.body
            )
        except SubmissionRefused as exc:
            raise web.HTTPError(exc.status, str(exc)) from None
        log.info(
            "%s submitted lesson %s (%d bytes, sha256 %s)",
            student,
            receipt["lesson"],
            receipt["bytes"],
            receipt["sha256"][:12],
        )
        self.write_json(receipt)

    @web.authenticated
    def get(self):
        user = self.current_user
        student = self.get_argument("student", None)
        if not self.is_instructor(user):
            if student not in (None, user["name"]):
                raise web.HTTPError(403, f"{user['name']} may read their own submissions only")
            student = user["name"]
        self.write_json({"submissions": self.state.submissions.receipts(student)})


class SubmissionHandler(_Handler):
    """``GET api/submissions/<id>``: one submitted notebook, for its owner or an instructor."""

    @web.authenticated
    def get(self, submission_id: str):
        found = self.state.submissions.get(int(submission_id))
        user = self.current_user
        if found is None or (found[0]["student"] != user["name"] and not self.is_instructor(user)):
            raise web.HTTPError(404, f"no submission {submission_id} of yours")
        receipt, data = found
        self.set_header("Content-Type", "application/x-ipynb+json")
        self.set_header("X-Submission-Sha256", receipt["sha256"])
        self.set_header("Cache-Control", "no-store")
        self.finish(data)


class HealthHandler(web.RequestHandler):
    def get(self):
        self.finish({"ok": True})


def make_app(settings: Settings, prefix: str, **tornado_settings) -> web.Application:
    """The application serving under ``prefix`` (``$JUPYTERHUB_SERVICE_PREFIX``, e.g. ``/services/class-report/``)."""
    state = _State(settings)
    state.prefix = prefix
    HubOAuth.instance()  # one instance (and one token cache) for every handler, from JupyterHub's $JUPYTERHUB_*

    def at(path: str) -> str:
        return url_path_join(prefix, path)

    app = web.Application(
        [
            (prefix, ReportPageHandler, {"state": state}),
            (at("oauth_callback"), HubOAuthCallbackHandler),
            (at("api/records"), RecordsHandler, {"state": state}),
            (at("api/report"), ReportDataHandler, {"state": state}),
            (at("api/health"), HealthHandler),
            (at("api/submissions"), SubmissionsHandler, {"state": state}),
            (at(r"api/submissions/(\d{1,18})"), SubmissionHandler, {"state": state}),
            (at(r"lesson/(\d\d)(\.csv)?"), LessonPageHandler, {"state": state}),
        ],
        **tornado_settings,
    )
    app.class_report_state = state
    return app
