"""Send each check-log record to the class's live report, on a JupyterHub only.

Every ``checks.check``, ``checks.predict`` and ``checks.hint`` record goes to :func:`send` (the check log's
second sink, beside the ``COURSE_CHECK_LOG`` file; CONTRACT.md). On a laptop it does nothing at all: no thread,
no socket, no file. It sends only when all three are set, which a JupyterHub does for a student's server:

- ``JUPYTERHUB_API_TOKEN`` and ``JUPYTERHUB_USER``: set by JupyterHub in every single-user server (and so in its
  kernels). The token is the student's identity: the service asks the hub whose token it is, so nobody can send a
  record in another student's name;
- ``COURSE_REPORT_URL``: the class-report service's address, set by the hub's configuration
  (``hub/jupyterhub_config.py``), e.g. ``http://127.0.0.1:8000/services/class-report/``.

:func:`send` never raises and never waits: it puts the record on a bounded queue (records beyond
:data:`QUEUE_SIZE` are dropped and counted) and a daemon thread posts batches to ``<url>api/records``. A service
that is down, slow or refusing costs the student nothing but the lost records; at exit the thread gets at most
:data:`EXIT_FLUSH_S` seconds to empty the queue.

:func:`submit` (``course_utils.submit.lesson``) posts a whole notebook to ``<url>api/submissions`` and waits for
the service's receipt: unlike the records, a submission is never dropped silently.

Standard library only. Introduced for instructors in docs/hub.md.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = [
    "BATCH",
    "EXIT_FLUSH_S",
    "MAX_RECORD_CHARS",
    "QUEUE_SIZE",
    "SubmitError",
    "URL_ENV",
    "enabled",
    "flush",
    "send",
    "stats",
    "submit",
]

URL_ENV = "COURSE_REPORT_URL"
QUEUE_SIZE = 1000  # records waiting to be sent; more are dropped
BATCH = 50  # records per request (the service accepts at most 100)
MAX_RECORD_CHARS = 4000  # a longer record (as JSON) is dropped: the service would refuse it
REQUEST_TIMEOUT_S = 5.0
RETRIES = 3  # per batch, for a service that is unreachable, overloaded (429) or failing (5xx)
EXIT_FLUSH_S = 1.0

_lock = threading.Lock()
_queue: queue.Queue | None = None
_worker: threading.Thread | None = None
_pid: int | None = None
_pending = 0  # records queued or in flight
_stats = {"queued": 0, "sent": 0, "dropped": 0, "failed": 0}


SUBMIT_TIMEOUT_S = 60.0


class SubmitError(RuntimeError):
    """The service did not take a submission; the message says why (and what to do)."""


def _service() -> tuple[str, str] | None:
    """(service URL ending in '/', token) on a JupyterHub with the report service configured, else None."""
    env = os.environ
    url, token, user = env.get(URL_ENV, ""), env.get("JUPYTERHUB_API_TOKEN", ""), env.get("JUPYTERHUB_USER", "")
    if not (url and token and user) or not url.startswith(("http://", "https://")):
        return None
    return url.rstrip("/") + "/", token


def _config() -> tuple[str, str] | None:
    """(records URL, token) when running on a JupyterHub with the report service configured, else None."""
    service = _service()
    return None if service is None else (service[0] + "api/records", service[1])


def enabled() -> bool:
    """True when :func:`send` would send: on a JupyterHub server with ``COURSE_REPORT_URL`` set."""
    return _config() is not None


def send(record) -> None:
    """Queue one check-log record (a dict) for the class report; a no-op off a JupyterHub. Never raises or blocks."""
    global _pending
    try:
        config = _config()
        if config is None:
            return
        line = json.dumps(record, ensure_ascii=False, default=str)
        if not line.startswith("{") or len(line) > MAX_RECORD_CHARS:
            _stats["dropped"] += 1
            return
        q = _ensure_worker(config)
        with _lock:
            _pending += 1
        try:
            q.put_nowait(line)
            _stats["queued"] += 1
        except queue.Full:
            with _lock:
                _pending -= 1
            _stats["dropped"] += 1
    except Exception:  # the report is a convenience: a student's check must never fail because of it
        pass


def flush(timeout: float = EXIT_FLUSH_S) -> bool:
    """Wait at most ``timeout`` seconds for the queued records to be sent (or given up); True if none is left."""
    deadline = time.monotonic() + max(0.0, float(timeout))
    while True:
        with _lock:
            if _pending <= 0:
                return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def stats() -> dict:
    """Counts since the kernel started: records queued, sent, dropped (queue full, too long) and failed."""
    return dict(_stats)


def _ensure_worker(config) -> queue.Queue:
    global _queue, _worker, _pid
    with _lock:
        if _worker is None or _pid != os.getpid() or not _worker.is_alive():  # first use, or a forked child
            _queue = queue.Queue(maxsize=QUEUE_SIZE)
            _pid = os.getpid()
            _worker = threading.Thread(target=_run, args=(_queue, config), name="course-report", daemon=True)
            _worker.start()
        return _queue


def _run(q: queue.Queue, config) -> None:
    global _pending
    url, token = config
    while True:
        batch = [q.get()]
        while len(batch) < BATCH:
            try:
                batch.append(q.get_nowait())
            except queue.Empty:
                break
        try:
            ok = _post(url, token, "[" + ",".join(batch) + "]")
            _stats["sent" if ok else "failed"] += len(batch)
        except Exception:
            _stats["failed"] += len(batch)
        finally:
            with _lock:
                _pending -= len(batch)


def _post(url: str, token: str, body: str) -> bool:
    data = ('{"records": ' + body + "}").encode("utf-8")
    for attempt in range(RETRIES):
        request = urllib.request.Request(
            url,
            data=data,
            method="POST",
            headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
                response.read()
                return True
        except urllib.error.HTTPError as exc:
            if exc.code != 429 and exc.code < 500:
                return False  # refused (bad token, too large, malformed): sending it again would not help
            wait = _retry_after(exc.headers.get("Retry-After"), attempt)
        except (OSError, ValueError):
            wait = 0.5 * 2**attempt
        time.sleep(wait)
    return False


def submit(lesson: str, notebook: str, data: bytes) -> dict:
    """Post one lesson's notebook to the class-report service and return its receipt (a dict: student, lesson,
    notebook, received, sha256, bytes, id). Raises :class:`SubmitError` off a hub or when the service refuses."""
    service = _service()
    if service is None:
        raise SubmitError(f"not on a JupyterHub with the class report ({URL_ENV} and the hub's token are not set)")
    url, token = service
    query = urllib.parse.urlencode({"lesson": lesson, "notebook": notebook})
    request = urllib.request.Request(
        f"{url}api/submissions?{query}",
        data=data,
        method="POST",
        headers={"Authorization": f"token {token}", "Content-Type": "application/x-ipynb+json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=SUBMIT_TIMEOUT_S) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            reason = json.loads(exc.read()).get("error") or exc.reason
        except (ValueError, AttributeError, OSError):
            reason = exc.reason
        raise SubmitError(f"the class report refused the submission ({exc.code}): {reason}") from None
    except (OSError, ValueError) as exc:
        raise SubmitError(f"the class report could not be reached ({exc}); nothing was submitted: try again") from None


def _retry_after(value, attempt: int) -> float:
    try:
        return min(10.0, max(0.1, float(value)))
    except (TypeError, ValueError):
        return 0.5 * 2**attempt


atexit.register(flush, EXIT_FLUSH_S)
