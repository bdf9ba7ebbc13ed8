"""course_utils.hub_client: silent off a hub; on a hub it sends every record, never raises and never blocks.

The service end is a stand-in HTTP server on loopback; the real service and a real JupyterHub are tested by
``make test-hub`` (hub/tests/).
"""

from __future__ import annotations

import importlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

HUB_ENV = ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_USER", "COURSE_REPORT_URL")


@pytest.fixture
def client(monkeypatch):
    for name in HUB_ENV:
        monkeypatch.delenv(name, raising=False)
    from course_utils import hub_client

    return importlib.reload(hub_client)  # fresh queue, worker and counters


class _StandIn:
    def __init__(self, status=200, delay=0.0):
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                time.sleep(delay)
                outer.requests.append((self.path, self.headers.get("Authorization"), json.loads(body)))
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/services/class-report/"

    def records(self):
        return [r for _, _, body in self.requests for r in body["records"]]


@pytest.fixture
def service():
    stand_in = _StandIn()
    yield stand_in
    stand_in.server.shutdown()


def _on_hub(monkeypatch, url):
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "secret-token")
    monkeypatch.setenv("JUPYTERHUB_USER", "alice")
    monkeypatch.setenv("COURSE_REPORT_URL", url)


def _workers():
    return [t for t in threading.enumerate() if t.name == "course-report"]


def test_off_the_hub_nothing_is_sent_and_no_thread_starts(client, service, monkeypatch):
    before = len(_workers())
    client.send({"v": 2, "event": "check", "exercise": "01.softmax_along", "status": "passed"})
    monkeypatch.setenv("COURSE_REPORT_URL", service.url)  # the URL alone (no hub token): still a laptop
    client.send({"v": 2, "event": "check", "exercise": "01.softmax_along", "status": "passed"})
    assert not client.enabled()
    assert client.flush(0.2)
    assert service.requests == [] and len(_workers()) == before
    assert client.stats() == {"queued": 0, "sent": 0, "dropped": 0, "failed": 0}


def test_on_the_hub_records_reach_the_service_with_the_token(client, service, monkeypatch):
    _on_hub(monkeypatch, service.url)
    sent = [{"v": 2, "event": "check", "exercise": f"01.ex{i}", "status": "wrong", "detail": "é"} for i in range(7)]
    for record in sent:
        client.send(record)
    assert client.flush(5.0)
    assert service.records() == sent
    assert {(path, auth) for path, auth, _ in service.requests} == {
        ("/services/class-report/api/records", "token secret-token")
    }
    assert client.stats()["sent"] == 7


def test_send_never_raises(client, service, monkeypatch):
    _on_hub(monkeypatch, service.url)
    client.send({"detail": object()})  # not JSON: sent as its str()
    client.send(["not", "a", "dict"])  # dropped
    client.send({"detail": "x" * (client.MAX_RECORD_CHARS + 1)})  # too long: dropped
    client.send(None)
    assert client.flush(5.0)
    assert len(service.records()) == 1 and client.stats()["dropped"] == 3
    monkeypatch.setenv("COURSE_REPORT_URL", "ftp://nowhere/")  # not http(s): off
    client.send({"exercise": "01.a"})
    assert not client.enabled()


def test_a_hanging_service_never_blocks_a_check(client, monkeypatch):
    slow = _StandIn(delay=3.0)
    try:
        _on_hub(monkeypatch, slow.url)
        started = time.perf_counter()
        for i in range(client.QUEUE_SIZE + 200):
            client.send({"exercise": f"01.ex{i}", "status": "passed"})
        elapsed = time.perf_counter() - started
        assert elapsed < 1.0, f"{client.QUEUE_SIZE + 200} sends took {elapsed:.2f} s"
        assert client.stats()["dropped"] >= 150  # the bounded queue drops what does not fit
        started = time.perf_counter()
        assert client.flush(0.3) is False  # still sending: flush gives up after its timeout
        assert time.perf_counter() - started < 1.0
    finally:
        slow.server.shutdown()


def test_an_unreachable_service_costs_nothing(client, monkeypatch):
    _on_hub(monkeypatch, "http://127.0.0.1:9/services/class-report/")  # port 9: nothing listens
    started = time.perf_counter()
    client.send({"exercise": "01.a", "status": "passed"})
    assert time.perf_counter() - started < 0.5


def test_a_refusing_service_is_not_retried(client, monkeypatch):
    refusing = _StandIn(status=403)
    try:
        _on_hub(monkeypatch, refusing.url)
        client.send({"exercise": "01.a", "status": "passed"})
        assert client.flush(5.0)
        assert len(refusing.requests) == 1 and client.stats()["failed"] == 1
    finally:
        refusing.server.shutdown()
