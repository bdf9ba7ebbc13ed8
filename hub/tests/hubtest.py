"""A real JupyterHub for the integration test, and a student's browser, without a browser.

:class:`Hub` runs ``jupyterhub`` (hub/tests/jupyterhub_config.py) with configurable-http-proxy and the class-report
service, on loopback ports of its own. :class:`Student` does what a person's browser does: logs in, opens the pull
link (nbgitpuller's page, then the pull it starts), reads and saves notebooks through the server's contents API,
and runs a notebook's code cells one by one in a kernel of their own server, over the kernel's websocket, as
JupyterLab does.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import requests
import websocket

HUB_DIR = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Hub:
    """``jupyterhub`` in ``root``; ``start()`` and ``stop()`` may be called again (a restart keeps every file)."""

    def __init__(self, root: Path, env: dict):
        self.root = Path(root)
        self.ports = {name: free_port() for name in ("PORT", "HUB_PORT", "PROXY_API_PORT")}
        self.service_port = free_port()
        self.url = f"http://127.0.0.1:{self.ports['PORT']}"
        self.env = {
            **os.environ,
            **env,
            "HUBTEST_ROOT": str(self.root),
            **{f"HUBTEST_{k}": str(v) for k, v in self.ports.items()},
            "CLASS_REPORT_PORT": str(self.service_port),
            # the students' servers: the course's environment (the one running the tests), whichever hub runs
            "HUBTEST_SINGLEUSER_BIN": str(Path(sys.executable).parent),
        }
        self.env.pop("PYTHONPATH", None)
        # the hub's (and so the service's) Python: $HUBTEST_HUB_PYTHON (make test-hub: .venv-hub5, JupyterHub 5.x),
        # else the tests' own (JupyterHub 6.1.1)
        self.python = os.path.abspath(os.environ.get("HUBTEST_HUB_PYTHON") or sys.executable)
        # the class-report service's Python: $HUBTEST_SERVICE_PYTHON, else the hub's (as in Z2JH's hub pod); TLJH
        # runs it with the course's environment (docs/hub.md), so a 6.1.1 service under a 5.x hub
        self.service_python = os.path.abspath(os.environ.get("HUBTEST_SERVICE_PYTHON") or self.python)
        self.env["CLASS_REPORT_PYTHON"] = self.service_python
        self.proc: subprocess.Popen | None = None
        self.log_path = self.root / "jupyterhub.log"

    def start(self, timeout: float = 120) -> None:
        command = [self.python, "-m", "jupyterhub", "-f", str(HUB_DIR / "tests" / "jupyterhub_config.py")]
        log = open(self.log_path, "a")  # noqa: SIM115 (the hub writes to it until stop())
        log.write(f"\n===== start {datetime.now(UTC).isoformat()}\n")
        log.flush()
        self.proc = subprocess.Popen(command, cwd=self.root, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"jupyterhub exited:\n{self.log_tail()}"
            try:
                if requests.get(f"{self.url}/services/class-report/api/health", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise AssertionError(f"the hub and its service did not answer in {timeout} s:\n{self.log_tail()}")

    def stop(self, timeout: float = 60) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def version(self, python: str | None = None) -> str:
        """The version of the JupyterHub that runs the hub (or is installed for ``python``: the service's)."""
        command = [python or self.python, "-c", "import jupyterhub; print(jupyterhub.__version__)"]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()

    def servers(self) -> dict[str, str]:
        """User name -> the command line of their server's process (found by its environment: JUPYTERHUB_USER and
        this hub's API address; a kernel, which inherits both, is not a ``jupyterhub-singleuser``)."""
        api = f"http://127.0.0.1:{self.ports['HUB_PORT']}/"
        found = {}
        for proc in Path("/proc").iterdir():
            try:
                args = (proc / "cmdline").read_bytes().split(b"\0")
                environ = dict(
                    item.split("=", 1)
                    for item in (proc / "environ").read_text(errors="replace").split("\0")
                    if "=" in item
                )
            except (OSError, ValueError):
                continue
            if environ.get("JUPYTERHUB_API_URL", "").startswith(api) and any(
                a.endswith(b"jupyterhub-singleuser") for a in args
            ):
                found[environ.get("JUPYTERHUB_USER", "")] = " ".join(a.decode(errors="replace") for a in args)
        return found

    def service_pid(self) -> int:
        """The class-report service's process id (a child of the hub)."""
        out = subprocess.run(["ps", "-eo", "pid=,ppid=,args="], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            pid, ppid, args = line.split(None, 2)
            if int(ppid) == self.proc.pid and "class_report" in args:
                return int(pid)
        raise AssertionError(f"no class_report process under the hub (pid {self.proc.pid})")

    def log_tail(self, n: int = 60) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])


class Student:
    """One person at a browser: a cookie jar, a name, their server's address."""

    def __init__(self, hub: Hub, name: str):
        self.hub, self.name = hub, name
        self.http = requests.Session()
        self.server = f"{hub.url}/user/{name}/"

    # ----------------------------------------------------------------------------------- the hub

    def login(self) -> None:
        page = self.http.get(f"{self.hub.url}/hub/login", timeout=30)
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text).group(1)
        r = self.http.post(
            f"{self.hub.url}/hub/login?next=",
            data={"username": self.name, "password": "any", "_xsrf": xsrf},
            allow_redirects=False,
            timeout=30,
        )
        assert r.status_code == 302, f"login of {self.name}: {r.status_code} {r.text[:300]}"

    def get(self, url: str, **kwargs) -> requests.Response:
        return self.http.get(url, timeout=kwargs.pop("timeout", 60), **kwargs)

    def open_pull_link(self, link: str, timeout: float = 240) -> requests.Response:
        """Follow the link as a browser would: to the server (started if needed), nbgitpuller's page, its pull."""
        deadline = time.monotonic() + timeout
        while True:
            page = self.get(link)
            if page.status_code == 200 and "/git-pull" in page.url and page.url.startswith(self.server):
                break  # nbgitpuller's status page, served by the student's own server
            assert time.monotonic() < deadline, f"{self.name}: no pull page: {page.status_code} {page.url}"
            time.sleep(1)  # the hub's "your server is starting" page: a browser waits, then reloads
        query = parse_qs(urlparse(page.url).query)
        args = {key: query[key][0] for key in ("repo", "branch") if key in query}
        folder = args["repo"].rstrip("/").split("/")[-1]
        # what the page's script does: the pull itself, an event stream of progress, then the redirect to urlpath
        stream = self.get(self.server + "git-pull/api?" + urlencode({**args, "targetpath": folder}), timeout=300)
        events = [json.loads(line[5:]) for line in stream.text.splitlines() if line.startswith("data:")]
        assert events and events[-1].get("phase") == "finished", f"{self.name}: the pull failed: {events[-3:]}"
        target = self.get(self.server + query["urlpath"][0])
        assert target.status_code == 200, f"{self.name}: {target.url} answered {target.status_code}"
        return target

    def token(self, note: str, scopes: list[str]) -> str:
        """A new API token of this user's (what they could make on the hub's token page)."""
        self.get(f"{self.hub.url}/hub/token")  # sets the hub's _xsrf cookie
        r = self.http.post(
            f"{self.hub.url}/hub/api/users/{self.name}/tokens",
            json={"note": note, "scopes": scopes},
            headers={"X-XSRFToken": self._xsrf("/hub/"), "Referer": f"{self.hub.url}/hub/token"},
            timeout=30,
        )
        assert r.status_code == 201, f"token for {self.name}: {r.status_code} {r.text[:300]}"
        return r.json()["token"]

    def _xsrf(self, path: str) -> str:
        for cookie in self.http.cookies:
            if cookie.name == "_xsrf" and cookie.path.rstrip("/") == path.rstrip("/"):
                return cookie.value
        raise AssertionError(
            f"{self.name}: no _xsrf cookie for {path}: {[(c.name, c.path) for c in self.http.cookies]}"
        )

    # ----------------------------------------------------------------------------------- their server

    def _api(self, method: str, path: str, **kwargs) -> requests.Response:
        headers = {"X-XSRFToken": self._xsrf(f"/user/{self.name}/")}
        r = self.http.request(method, self.server + "api/" + path, headers=headers, timeout=120, **kwargs)
        assert r.ok, f"{self.name}: {method} {path}: {r.status_code} {r.text[:300]}"
        return r

    def read_notebook(self, path: str) -> dict:
        return self._api("GET", f"contents/{path}?content=1").json()["content"]

    def save_notebook(self, path: str, nb: dict) -> None:
        self._api("PUT", f"contents/{path}", json={"type": "notebook", "format": "json", "content": nb})

    def list_dir(self, path: str) -> list[str]:
        return [item["name"] for item in self._api("GET", f"contents/{path}?content=1").json()["content"]]

    def start_kernel(self, path: str) -> Kernel:
        session = self._api("POST", "sessions", json={"path": path, "type": "notebook", "kernel": {"name": "python3"}})
        return Kernel(self, session.json()["kernel"]["id"])


class Kernel:
    """A kernel of a student's server, driven over its websocket (Jupyter's messaging protocol, JSON frames)."""

    IDLE_S = 30.0  # the server drops a websocket that answered no ping for about 90 s: reconnect before that

    def __init__(self, student: Student, kernel_id: str):
        self.student = student
        self.session = uuid.uuid4().hex
        self.url = (
            student.server.replace("http://", "ws://") + f"api/kernels/{kernel_id}/channels?session_id={self.session}"
        )
        self.ws = None
        self._connect()

    def _connect(self) -> None:
        """A new websocket to the same kernel (its state is the kernel's, not the connection's)."""
        if self.ws is not None:
            self.ws.close()
        cookies = "; ".join(
            f"{c.name}={c.value}" for c in self.student.http.cookies if c.path.startswith(f"/user/{self.student.name}")
        )
        self.ws = websocket.create_connection(self.url, cookie=cookies, timeout=300)
        self.used = time.monotonic()

    def execute(self, code: str, timeout: float = 300) -> dict:
        """Run ``code``; return {"text": stdout and results, "errors": [ename: evalue, ...]}."""
        if time.monotonic() - self.used > self.IDLE_S:  # idle: pings went unanswered, the server may have closed it
            self._connect()
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "username": self.student.name, "session": self.session}
        header |= {"msg_type": "execute_request", "version": "5.3", "date": datetime.now(UTC).isoformat()}
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": False}
        content["stop_on_error"] = True
        message = {"header": header, "parent_header": {}, "metadata": {}, "content": content, "channel": "shell"}
        self.ws.send(json.dumps(message))
        text, errors, replied, idle = [], [], False, False
        deadline = time.monotonic() + timeout
        while not (replied and idle):
            assert time.monotonic() < deadline, f"{self.student.name}: a cell ran past {timeout} s: {code[:200]}"
            reply = json.loads(self.ws.recv())
            if reply.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, body = reply["msg_type"], reply["content"]
            if kind == "stream":
                text.append(body["text"])
            elif kind in ("execute_result", "display_data"):
                text.append(body.get("data", {}).get("text/plain", ""))
            elif kind == "error":
                errors.append(f"{body['ename']}: {body['evalue']}")
            elif kind == "execute_reply":
                replied = True
            elif kind == "status" and body.get("execution_state") == "idle":
                idle = True
        self.used = time.monotonic()
        return {"text": "".join(text), "errors": errors}

    def run_notebook(self, nb: dict) -> list[dict]:
        """Run every code cell in order (Run All); return each cell's result."""
        return [self.execute("".join(cell["source"])) for cell in nb["cells"] if cell["cell_type"] == "code"]

    def close(self) -> None:
        self.ws.close()
