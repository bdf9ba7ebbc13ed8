"""`ruff check` and `ruff format --check` pass on the code, the tests and the notebooks.

Runs the course environment's ruff (next to the running Python) with the configuration in
pyproject.toml, over the same paths as `make lint`; a failure shows ruff's own report.
"""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PATHS = ["course_utils", "tests", "benchmarks", "scripts", "notebooks", "site_src"]
RUFF = Path(sys.executable).with_name("ruff")


def _ruff(*args: str) -> subprocess.CompletedProcess:
    if not RUFF.exists():
        pytest.fail(f"ruff is not installed in the course environment ({RUFF}); run `make env`")
    paths = [p for p in PATHS if (REPO / p).exists()]
    return subprocess.run(
        [str(RUFF), *args, "--no-cache", *paths], cwd=REPO, capture_output=True, text=True, timeout=120
    )


def test_ruff_check():
    result = _ruff("check")
    assert result.returncode == 0, f"ruff check failed (fix: make format, then review):\n{result.stdout}{result.stderr}"


def test_ruff_format():
    result = _ruff("format", "--check")
    assert result.returncode == 0, f"ruff format --check failed (fix: make format):\n{result.stdout}{result.stderr}"
