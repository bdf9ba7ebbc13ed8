"""course_utils.submit (issue 29): a lesson's notebook submitted, on a laptop into a folder, on a hub to the service.

The service end here is a stand-in HTTP server on loopback; the real service is tested in hub/tests/
(test_submissions.py, and make test-hub).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from course_utils.marks import folder

HUB_ENV = ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_USER", "COURSE_REPORT_URL", "JPY_SESSION_NAME", "COURSE_SUBMIT_DIR")
NB = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


@pytest.fixture
def submit(monkeypatch, tmp_path):
    for name in HUB_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COURSE_STUDENT", "alice")
    monkeypatch.chdir(tmp_path)
    from course_utils import hub_client, submit

    importlib.reload(hub_client)
    module = importlib.reload(submit)
    monkeypatch.setattr(module, "COURSE_ROOT", tmp_path / "no_course")  # no course.toml, no my_work of the repo
    return module


def _lesson_file(tmp_path, name="01_attention.ipynb", data=NB):
    (tmp_path / "my_work").mkdir(exist_ok=True)
    path = tmp_path / "my_work" / name
    path.write_bytes(data)
    return path


def test_on_a_laptop_a_submission_goes_into_the_collected_folder_and_every_one_is_kept(
    submit, tmp_path, monkeypatch, capsys
):
    _lesson_file(tmp_path)
    monkeypatch.setenv("COURSE_SUBMIT_DIR", str(tmp_path / "collected"))
    first = submit.lesson("01")
    printed = capsys.readouterr().out
    assert first["student"] == "alice" and first["lesson"] == "01" and first["notebook"] == "01_attention.ipynb"
    assert first["sha256"] == hashlib.sha256(NB).hexdigest() and first["sha256"] in printed
    assert "Received lesson 01 from alice" in printed and "(UTC)" in printed and "as saved at" in printed
    _lesson_file(tmp_path, data=NB + b"\n")
    second = submit.lesson("01", quiet=True)
    kept = [receipt.sha256 for receipt, _ in folder.receipts(tmp_path / "collected")]
    assert kept == [first["sha256"], second["sha256"]]
    assert folder.choose([r for r, _ in folder.receipts(tmp_path / "collected")], None)[0].sha256 == second["sha256"]


def test_without_a_hub_or_a_folder_the_student_is_told_what_to_do(submit, tmp_path):
    _lesson_file(tmp_path)
    with pytest.raises(submit.SubmitError, match="COURSE_SUBMIT_DIR"):
        submit.lesson("01")


def test_the_course_files_folder_is_used_off_a_hub(submit, tmp_path, monkeypatch):
    _lesson_file(tmp_path)
    root = tmp_path / "no_course"
    root.mkdir()
    (root / "course.toml").write_text(f'[submit]\nfolder = "{tmp_path / "shared"}"\n')
    assert submit.lesson("01", quiet=True)["student"] == "alice"
    assert len(folder.receipts(tmp_path / "shared")) == 1


def test_the_notebook_is_found_from_the_session_then_the_lessons_file(submit, tmp_path, monkeypatch):
    own = _lesson_file(tmp_path, "01_copy.ipynb")
    other = tmp_path / "elsewhere" / "01_renamed.ipynb"
    other.parent.mkdir()
    other.write_bytes(NB)
    assert submit.find_notebook("01") == own
    monkeypatch.setenv("JPY_SESSION_NAME", str(other))
    assert submit.find_notebook("01") == other
    decoy = other.parent / "01_decoy.ipynb"  # two of lesson 01 in the kernel's folder: only the session tells
    decoy.write_bytes(NB)
    monkeypatch.chdir(other.parent)
    monkeypatch.setenv("JPY_SESSION_NAME", "elsewhere/01_renamed.ipynb")  # relative to the server's root
    assert submit.find_notebook("01") == other
    monkeypatch.chdir(tmp_path)
    decoy.unlink()
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "elsewhere" / "02_other.ipynb"))  # another lesson's
    assert submit.find_notebook("01") == own
    _lesson_file(tmp_path, "01_second.ipynb")
    with pytest.raises(ValueError, match="2 notebooks of lesson 01"):
        submit.find_notebook("01")
    with pytest.raises(ValueError, match="no notebook 03_"):
        submit.find_notebook("03")


@pytest.mark.parametrize(
    ("value", "error", "words"),
    [(1, TypeError, "^lesson: expected a two-digit"), ("1", ValueError, "^lesson: expected")],
)
def test_a_bad_lesson_is_refused_naming_it(submit, value, error, words):
    with pytest.raises(error, match=words):
        submit.lesson(value)


def test_a_notebook_over_the_limit_is_refused_with_what_to_do(submit, tmp_path, monkeypatch):
    _lesson_file(tmp_path, data=b"x" * (folder.MAX_NOTEBOOK_BYTES + 1))
    monkeypatch.setenv("COURSE_SUBMIT_DIR", str(tmp_path / "collected"))
    with pytest.raises(submit.SubmitError, match="over the 8,388,608-byte limit: clear the largest outputs"):
        submit.lesson("01")


class _Service:
    """A stand-in class-report service: answers POST api/submissions with a receipt, or refuses with ``status``."""

    def __init__(self, status=200):
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                url = urlparse(self.path)
                outer.requests.append((url.path, parse_qs(url.query), self.headers.get("Authorization"), body))
                self.send_response(status)
                self.end_headers()
                if status == 200:
                    query = parse_qs(url.query)
                    receipt = {"student": "alice", "lesson": query["lesson"][0], "notebook": query["notebook"][0]}
                    receipt |= {"received": "2026-12-01T10:00:00+00:00", "sha256": hashlib.sha256(body).hexdigest()}
                    self.wfile.write(json.dumps({**receipt, "bytes": len(body), "id": 1}).encode())
                else:
                    self.wfile.write(
                        json.dumps({"error": "at most 8388608 bytes per submission", "status": status}).encode()
                    )

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/services/class-report/"


@pytest.fixture
def hub(monkeypatch):
    services = []

    def start(status=200):
        service = _Service(status)
        services.append(service)
        monkeypatch.setenv("COURSE_REPORT_URL", service.url)
        monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "secret-token")
        monkeypatch.setenv("JUPYTERHUB_USER", "alice")
        return service

    yield start
    for service in services:
        service.server.shutdown()


def test_on_a_hub_the_notebook_goes_to_the_service_with_the_hub_token(submit, tmp_path, hub, capsys):
    service = hub()
    _lesson_file(tmp_path)
    receipt = submit.lesson("01")
    path, query, auth, body = service.requests[0]
    assert path == "/services/class-report/api/submissions" and query == {
        "lesson": ["01"],
        "notebook": ["01_attention.ipynb"],
    }
    assert auth == "token secret-token" and body == NB
    assert receipt["sha256"] == hashlib.sha256(NB).hexdigest() and "by the class report" in capsys.readouterr().out
    assert not (tmp_path / "collected").exists()


def test_on_a_hub_a_refusal_is_shown_with_the_services_reason(submit, tmp_path, hub):
    hub(status=413)
    _lesson_file(tmp_path)
    with pytest.raises(
        submit.SubmitError, match=r"refused the submission \(413\): at most 8388608 bytes per submission"
    ):
        submit.lesson("01")


def test_the_button_submits_and_shows_the_receipt(submit, tmp_path, monkeypatch):
    _lesson_file(tmp_path)
    monkeypatch.setenv("COURSE_SUBMIT_DIR", str(tmp_path / "collected"))
    box = submit.button("01")
    press, out = box.children
    assert press.description == "Submit lesson 01"
    press.click()
    assert len(folder.receipts(tmp_path / "collected")) == 1
