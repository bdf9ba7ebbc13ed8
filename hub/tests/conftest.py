"""The hub's tests (``make test-hub``): the class-report service's parts, nbgitpuller's merge rules, a real hub.

They need the hub's packages (hub/requirements.txt) and configurable-http-proxy (hub/package.json), which
``make test-hub`` installs first; ``make test`` does not run them.
"""

from __future__ import annotations

import sys
from pathlib import Path

HUB_DIR = Path(__file__).resolve().parents[1]
REPO = HUB_DIR.parent
if str(HUB_DIR) not in sys.path:
    sys.path.insert(0, str(HUB_DIR))  # the service's package, class_report, as JupyterHub runs it (cwd hub/)


def report_cells(page: str) -> dict:
    """(student, exercise) -> status, for every cell of the report page's grid (a student's row, an exercise's column)."""
    import re

    cells = {}
    for student, row in re.findall(r'<tr data-student="([^"]*)">(.*?)</tr>', page, flags=re.S):
        for status, exercise in re.findall(
            r'<td class="cell [^"]*" data-status="([^"]+)" data-exercise="([^"]+)"', row
        ):
            cells[(student, exercise)] = status
    return cells


def pytest_terminal_summary(terminalreporter):
    """The integration test's steps and how long each took."""
    try:
        from test_hub import TIMINGS
    except ImportError:
        return
    if TIMINGS:
        terminalreporter.section("hub test: seconds per step")
        for step, seconds in TIMINGS.items():
            terminalreporter.write_line(f"{seconds:7.1f}  {step}")
