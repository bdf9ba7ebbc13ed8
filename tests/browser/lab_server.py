"""Start and stop a JupyterLab server from the course environment, for tests.

The server is the one `make lab` opens (the `jupyter` script next to the running Python, that is
`.venv/bin/jupyter lab`), started on a free loopback port with a random token and its own config,
data, runtime, settings and workspace folders, so that nothing from the user's ~/.jupyter (an
extra kernel, a saved workspace, a theme) changes what the tests see. It is stopped by its process
id: terminate, then kill.

Used by tests/test_lab_server.py (no browser needed) and tests/browser/conftest.py.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["LabServer", "free_port", "lab_command"]

# Settings every test server gets: attach every cell to the DOM (so a test can read every prompt),
# and never fetch news or check for updates (the test machine is offline).
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def lab_command() -> list[str]:
    """The command `make lab` runs: the course environment's `jupyter lab`."""
    jupyter = Path(sys.executable).with_name("jupyter")
    if jupyter.exists():
        return [str(jupyter), "lab"]
    return [sys.executable, "-m", "jupyterlab"]


class LabServer:
    """A JupyterLab server serving `root_dir`, with its state kept under `state_dir`.

    Use as a context manager::

        with LabServer(root_dir, state_dir) as lab:
            lab.api("api/status")
    """

    def __init__(self, root_dir: Path, state_dir: Path, *, startup_timeout: float = 90.0) -> None:
        self.root_dir = Path(root_dir)
        self.state_dir = Path(state_dir)
        self.startup_timeout = startup_timeout
        self.token = secrets.token_hex(16)
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        self.log_path = self.state_dir / "jupyterlab.log"

    # ---- lifecycle -------------------------------------------------------------------------------
    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        for var, sub in [
            ("JUPYTER_CONFIG_DIR", "config"),
            ("JUPYTER_DATA_DIR", "data"),
            ("JUPYTER_RUNTIME_DIR", "runtime"),
            ("JUPYTERLAB_SETTINGS_DIR", "settings"),
            ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
        ]:
            (self.state_dir / sub).mkdir(parents=True, exist_ok=True)
            env[var] = str(self.state_dir / sub)
        env.pop("JUPYTER_PATH", None)  # no extra kernels or extensions from outside the environment
        # The same deterministic settings as the Makefile; the kernel inherits them.
        env.update(
            {
                "JUPYTER_PLATFORM_DIRS": "1",
                "OMP_NUM_THREADS": "1",
                "MKL_NUM_THREADS": "1",
                "PYTHONHASHSEED": "0",
                "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            }
        )
        return env

    def _write_settings(self) -> None:
        for rel, values in LAB_SETTINGS.items():
            path = self.state_dir / "settings" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values, indent=2))

    def start(self) -> LabServer:
        """Start the server and wait until /api/status answers; raise RuntimeError if it does not."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.root_dir.mkdir(parents=True, exist_ok=True)
        env = self._environment()
        self._write_settings()
        last_error = ""
        for _attempt in range(3):  # another process may grab the free port before the server binds it
            self.port = free_port()
            args = [
                *lab_command(),
                "--no-browser",
                "--ip=127.0.0.1",
                f"--port={self.port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={self.root_dir}",
            ]
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                args.append("--allow-root")  # containers and CI run as root; Jupyter refuses without it
            log = self.log_path.open("a")
            self.process = subprocess.Popen(
                args, cwd=self.root_dir, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
            log.close()
            deadline = time.monotonic() + self.startup_timeout
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    last_error = f"exited with code {self.process.returncode}"
                    break
                try:
                    self.api("api/status", timeout=2)
                    return self
                except (OSError, urllib.error.URLError) as exc:
                    last_error = repr(exc)
                    time.sleep(0.25)
            else:
                self.stop()
                raise RuntimeError(
                    f"JupyterLab did not answer /api/status within {self.startup_timeout:.0f} s "
                    f"({last_error}).\n{self.log_tail()}"
                )
        raise RuntimeError(f"JupyterLab failed to start: {last_error}.\n{self.log_tail()}")

    def stop(self, timeout: float = 15.0) -> int | None:
        """Stop the server by its process id (terminate, then kill); return its exit code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)
        return self.process.returncode

    def __enter__(self) -> LabServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- talking to it ---------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def url(self, path: str, **query: str) -> str:
        """Browser URL for `path` that logs in with the token (JupyterLab then sets a cookie)."""
        params = "&".join([*(f"{k}={v}" if v else k for k, v in query.items()), f"token={self.token}"])
        return f"{self.base_url}{path.lstrip('/')}?{params}"

    def request(self, path: str, *, method: str = "GET", token: bool = True, timeout: float = 10.0):
        """Return (status, body bytes) of an HTTP request to the server; HTTP errors are returned, not raised."""
        headers = {"Authorization": f"token {self.token}"} if token else {}
        req = urllib.request.Request(self.base_url + path.lstrip("/"), method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def api(self, path: str, *, method: str = "GET", timeout: float = 10.0):
        """JSON from a REST endpoint (e.g. "api/status", "api/sessions"); raise on an HTTP error."""
        headers = {"Authorization": f"token {self.token}"}
        req = urllib.request.Request(self.base_url + path.lstrip("/"), method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def log_tail(self, lines: int = 25) -> str:
        if not self.log_path.exists():
            return "(no server log)"
        tail = self.log_path.read_text(errors="replace").splitlines()[-lines:]
        return "JupyterLab log (last lines):\n" + "\n".join(tail)
