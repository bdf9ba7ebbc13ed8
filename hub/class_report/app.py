"""The class-report service's web application (tornado, authenticated by JupyterHub).

Addresses, under the service's prefix (``/services/class-report/``):

- ``POST api/records``: a student's kernel sends ``{"records": [...]}`` with ``Authorization: token <its hub
  token>`` (``course_utils.hub_client``). The student is whoever the hub says owns the token; no name in a record
  is ever used. Answers 200 ``{"accepted": n, "refused": [...]}`` once the accepted records are committed; 413 for a
  body over ``max_body`` bytes or more than ``max_records`` records; 429 (with ``Retry-After``) past the rate limit;
  403 without a hub token that may use this service.
- ``GET api/records?student=NAME``: that student's rows as JSON (their newest record per exercise, and their
  history). A student may ask for their own rows only; an instructor for anyone's.
- ``GET api/report``: the report's rows as JSON: every student's for an instructor, their own for a student.
- ``GET`` (the prefix itself): the class report page, after the hub's OAuth login: the whole class for an
  instructor (a hub admin, or a member of the instructors' group), a student's own row for a student.
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

from .limits import RateLimiter
from .records import normalize
from .report import render_class_report
from .store import Store

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


class _State:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.store = Store(settings.db_path, max_events=settings.max_events, max_exercises=settings.max_exercises)
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
        for index, record in enumerate(records):
            try:
                good.append(normalize(record))
            except ValueError as exc:
                refused.append({"index": index, "error": str(exc)})
        student = self.current_user["name"]
        accepted, over_quota = self.state.store.add(student, good)
        if over_quota:
            refused.append({"count": over_quota, "error": f"at most {settings.max_exercises} exercises per student"})
        if refused:
            log.info("%s: %d records refused: %s", student, len(records) - accepted, refused[:3])
        self.write_json({"accepted": accepted, "refused": refused})

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
    """The report page (the service's own address), after the hub's OAuth login."""

    api = False

    @web.authenticated
    def get(self):
        user = self.current_user
        instructor = self.is_instructor(user)
        rows = self.state.store.latest(None if instructor else user["name"])
        stamp = time.strftime("%H:%M:%S UTC", time.gmtime())
        note = (
            f"Live: {len(rows)} students so far, as of {stamp}."
            if instructor
            else f"Live: your own results only ({user['name']}), as of {stamp}."
        )
        self.set_header("Cache-Control", "no-store")
        self.finish(render_class_report(rows, live_note=note))


class HealthHandler(web.RequestHandler):
    def get(self):
        self.finish({"ok": True})


def make_app(settings: Settings, prefix: str, **tornado_settings) -> web.Application:
    """The application serving under ``prefix`` (``$JUPYTERHUB_SERVICE_PREFIX``, e.g. ``/services/class-report/``)."""
    state = _State(settings)
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
        ],
        **tornado_settings,
    )
    app.class_report_state = state
    return app
