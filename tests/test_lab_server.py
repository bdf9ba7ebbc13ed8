"""The `make lab` path, exercised: JupyterLab starts from the course environment and answers.

Starts the course environment's `jupyter lab` (the helper in tests/browser/lab_server.py, shared
with the browser tests) on a free loopback port with a token, checks /api/status, the token, the
default kernel and the extensions the /lab page serves (RISE slides, widgets), then stops it by its
process id and checks the port is free again. One server start (~5-10 s), so one test function.
No browser needed.
"""

import importlib.util
import json
import re
import socket
import sys
from pathlib import Path

import nbformat


def _load_lab_server():
    # Loaded by path, so this does not depend on how pytest puts tests/ on sys.path.
    path = Path(__file__).with_name("browser") / "lab_server.py"
    spec = importlib.util.spec_from_file_location("course_tests_lab_server", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


lab_server = _load_lab_server()


def test_lab_command_is_the_course_environment():
    command = lab_server.lab_command()
    in_env = Path(command[0]).parent == Path(sys.executable).parent
    assert in_env or command[:3] == [sys.executable, "-m", "jupyterlab"], command


def _served_extensions(html: str) -> set[str]:
    match = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', html, re.S)
    assert match, "the /lab page has no jupyter-config-data"
    return {ext["name"] for ext in json.loads(match.group(1)).get("federated_extensions", [])}


def test_jupyterlab_starts_answers_and_stops(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), root / "hello.ipynb")
    server = lab_server.LabServer(root, tmp_path / "state", startup_timeout=60)
    server.start()
    try:
        status = server.api("api/status")
        assert {"started", "last_activity", "kernels", "connections"} <= set(status), status

        code, _ = server.request("api/status", token=False)
        assert code == 403, f"/api/status without the token answered {code}, expected 403"

        specs = server.api("api/kernelspecs")
        assert specs["default"] == "python3" and "python3" in specs["kernelspecs"], specs

        code, body = server.request("lab")
        assert code == 200, f"/lab answered {code}"
        served = _served_extensions(body.decode())
        assert {"jupyterlab-rise", "@jupyter-widgets/jupyterlab-manager"} <= served, sorted(served)

        code, body = server.request("rise/hello.ipynb")  # the RISE presenter for one notebook
        assert code == 200 and b"jupyter-config-data" in body, f"/rise/hello.ipynb answered {code}"
    finally:
        pid, port = server.process.pid, server.port
        server.stop()
    assert server.process.poll() is not None, f"JupyterLab (pid {pid}) still running after stop()"
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0, f"port {port} still open after stopping pid {pid}"
