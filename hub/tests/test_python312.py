"""The course's pins install on Python 3.12 too (TLJH's user environment), from wheels only.

This machine has Python 3.11 only, so pip is asked as a 3.12 installer would be: ``--python-version 3.12
--only-binary=:all: --no-deps``, every pin of requirements.txt and hub/requirements.txt, this machine's platform.
``pip install --dry-run --report`` with those options picks the very wheel ``pip download`` would fetch, reading only
each wheel's metadata where the registry serves it, so it takes about a minute, not gigabytes (PyPI's Linux torch
wheel alone is ~900 MB). It needs the package registry, so ``make test-hub`` (offline) skips it and ``make
check-py312`` runs it (CI does, before the offline steps); offline, it is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import REPO

pytestmark = pytest.mark.skipif(
    os.environ.get("CHECK_PY312") != "1",
    reason="needs the package registry: `make check-py312` runs it (CHECK_PY312=1), as CI does",
)
FILES = [REPO / "requirements.txt", REPO / "hub" / "requirements.txt"]
OFFLINE = re.compile(
    r"NewConnectionError|Network is unreachable|Temporary failure in name resolution|Failed to establish|ProxyError"
)


def pins() -> dict[str, str]:
    """Normalized name -> version of every ``name==version`` line of FILES."""
    found = {}
    for path in FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;#]+)", line.strip())
            if match:
                found[re.sub(r"[-_.]+", "-", match[1]).lower()] = match[3]
    return found


def test_every_pin_has_a_python_312_wheel(tmp_path):
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps"]
    command += ["--only-binary=:all:", "--python-version", "3.12", "--target", str(tmp_path / "target")]
    command += ["--report", str(tmp_path / "report.json"), "--disable-pip-version-check", "--retries", "1"]
    for path in FILES:
        command += ["-r", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if done.returncode and OFFLINE.search(done.stdout + done.stderr):
        pytest.skip("the package registry is unreachable (offline): no Python 3.12 wheel could be looked for")
    assert done.returncode == 0, f"some pin has no Python 3.12 wheel:\n{done.stderr[-3000:]}"
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    chosen = {}
    for item in report["install"]:
        name = re.sub(r"[-_.]+", "-", item["metadata"]["name"]).lower()
        chosen[name] = (item["metadata"]["version"], item["download_info"]["url"].rsplit("/", 1)[-1])
    expected = pins()
    assert {name: version for name, (version, _) in chosen.items()} == expected
    for name, (_, wheel) in chosen.items():
        python, abi, _ = wheel.removesuffix(".whl").split("-")[-3:]  # a wheel's tags: python, ABI, platform
        assert wheel.endswith(".whl") and ("py3" in python or "cp312" in python or abi == "abi3"), f"{name}: {wheel}"
