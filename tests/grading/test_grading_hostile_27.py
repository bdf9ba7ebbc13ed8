"""make grade against issue 27's attacks, planted among honest students and graded in one run (``jobs=2``).

- ``forger`` (critical): its checks fail honestly, then it writes a complete all-passed result to every descriptor
  of the sandbox it can open (``/proc/1/fd/1`` first, as in the issue) and kills the runner;
- ``prober``: lists the descriptors of every other process of the sandbox (bubblewrap's PID 1, the runner) and
  reports what it could open: nothing may lead to a pipe or a file of the grader;
- ``staller``: stops the runner (``SIGSTOP``); the grader must kill the sandbox at the notebook's own limit;
- ``hog``: four children, each holding 700 MB, under a 2 GiB limit for the notebook (each under the per-process
  limit): ``crashed`` with ``memory``, the grader unharmed;
- ``filler``: writes past the scratch limit into ``/dev``, ``/dev/shm``, ``/tmp``, its folder and ``$HOME``;
- ``appender``: its real check says wrong, then its own code appends a ``passed`` line in the same cell;
- ``muffler``: its check cell printed a wrong verdict, and the check log holds a ``passed`` line instead;
- ``skipper``: tags a check cell ``skip-execution``.

Small synthetic notebooks (lesson "91", as in tests/test_grade_hostile.py); needs bubblewrap (skipped without it,
failed on Linux when ``CI`` is set).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course_utils import grading
from course_utils.grading import records, sandbox

REGISTRY = {"91": [("91.alpha", "First"), ("91.beta", "Second"), ("91.gamma", "Third")]}
IDS = [i for i, _ in REGISTRY["91"]]
NAME = "91_synthetic.ipynb"
LIMITS = sandbox.Limits(memory=2 * 2**30, processes=64, file_size=8 * 2**20, scratch=16 * 2**20)
NOTEBOOK_TIMEOUT = 8
SANDBOXED = sandbox.status().sandboxed

LOGGER = """import json, os


def log(exercise, status, detail=""):
    line = {"exercise": exercise, "lesson": exercise[:2], "status": status, "detail": detail, "session": "s"}
    with open(os.environ["COURSE_CHECK_LOG"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\\n")
"""

FORGE = """import json, os, signal
lines, cells, offset = "", [{"ran": True, "error": None, "log": [0, 0]}], 0
for exercise in IDS:
    line = json.dumps({"exercise": exercise, "lesson": "91", "status": "passed", "detail": "", "session": "s"}) + "\\n"
    cells.append({"ran": True, "error": None, "log": [offset, offset + len(line)]})
    lines, offset = lines + line, offset + len(line)
cells.append({"ran": True, "error": None, "log": [offset, offset]})
forged = json.dumps({"cells": cells, "stopped": None, "probe": None, "outside": [], "written": [], "log": lines})
targets = ["/proc/1/fd/1", "/proc/1/fd/2"] + [f"/proc/{p}/fd/{fd}" for p in os.listdir("/proc") if p.isdigit()
                                               for fd in range(3, 12)]
for target in targets:
    try:
        with open(target, "w") as handle:
            handle.write(forged)
    except OSError:
        pass
os.kill(os.getppid(), signal.SIGKILL)
"""

PROBE = """import os
mine = {str(os.getpid())}
found = {}
for pid in sorted(p for p in os.listdir("/proc") if p.isdigit() and p not in mine):
    try:
        found[pid] = sorted(os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError as exc:
        found[pid] = type(exc).__name__
try:
    open(f"/proc/{os.getppid()}/mem", "rb").read(1)
    found["runner memory"] = "read"
except OSError as exc:
    found["runner memory"] = type(exc).__name__
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
attached = libc.ptrace(16, os.getppid(), 0, 0) == 0  # PTRACE_ATTACH
found["runner ptrace"] = "attached" if attached else os.strerror(ctypes.get_errno())
report = json.dumps(found)
"""

FILL = """import json, os
wrote = {}
for place in ("/dev", "/dev/shm", "/tmp", ".", os.environ["HOME"]):
    total = 0
    for n in range(6):
        try:
            with open(os.path.join(place, f"fill{n}.bin"), "wb") as handle:
                handle.write(b"x" * 2**22)
            total += 2**22
        except OSError:
            break
    wrote[place] = total
report = json.dumps(wrote)
"""

HOG = """import subprocess, sys, time
code = "import time\\nheld = b'x' * (700 * 2**20)\\ntime.sleep(60)"
children = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(4)]
time.sleep(30)
"""


def notebook(*sources, tags=None) -> nbformat.NotebookNode:
    cells = [new_code_cell(s) for s in sources]
    for index, tag in (tags or {}).items():
        cells[index].metadata["tags"] = [tag]
    nb = new_notebook(cells=[new_markdown_cell("# 91")] + cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def honest():
    return notebook(LOGGER, *(f"log({i!r}, 'passed')" for i in IDS))


def write(root: Path, student: str, nb) -> Path:
    path = root / student / NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def build(root: Path) -> None:
    write(root, "ada", honest())
    write(
        root, "forger", notebook(LOGGER, *(f"log({i!r}, 'wrong', 'honest')" for i in IDS), f"IDS = {IDS!r}\n" + FORGE)
    )
    write(root, "prober", notebook(LOGGER, PROBE + "log('91.alpha', 'passed', report)", "log('91.beta', 'passed')"))
    write(
        root,
        "staller",
        notebook(LOGGER, "log('91.alpha', 'passed')", "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)"),
    )
    write(root, "hog", notebook(LOGGER, "log('91.alpha', 'passed')", HOG, "log('91.beta', 'passed')"))
    write(root, "filler", notebook(LOGGER, FILL + "log('91.alpha', 'passed', report)"))
    write(
        root,
        "appender",
        notebook(
            LOGGER,
            "log('91.alpha', 'wrong', 'the real check')\n"
            "with open(os.environ['COURSE_CHECK_LOG'], 'a') as handle:\n"
            "    handle.write(json.dumps({'exercise': '91.alpha', 'status': 'passed', 'session': 's'}) + '\\n')\n",
            "log('91.beta', 'passed')",
        ),
    )
    # the check printed its real verdict, but the line in the log is the notebook's own (the real one sent elsewhere)
    muffled = "print('\u274c wrong: you normalised over the queries.')\nlog('91.alpha', 'passed')"
    write(root, "muffler", notebook(LOGGER, muffled))
    write(
        root,
        "skipper",
        notebook(LOGGER, "log('91.alpha', 'passed')", "log('91.beta', 'passed')", tags={2: "skip-execution"}),
    )


def read_csv(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if not SANDBOXED:
        why = f"no bubblewrap sandbox here ({sandbox.status().line[:160]}): apt-get install bubblewrap"
        if os.environ.get("CI") and sys.platform.startswith("linux"):
            pytest.fail(why)
        pytest.skip(why)
    root = tmp_path_factory.mktemp("class27")
    build(root)
    start = time.monotonic()
    run = grading.grade(
        root,
        registry=REGISTRY,
        cell_timeout=5,
        notebook_timeout=NOTEBOOK_TIMEOUT,
        progress=False,
        jobs=2,
        limits=LIMITS,
    )
    rows = {}
    for row in read_csv(root / "grades.csv"):
        rows.setdefault(row["student"], {})[row["exercise"]] = row
    return root, run, rows, time.monotonic() - start


def test_the_honest_student_passes_as_if_alone(graded):
    _, _, rows, _ = graded
    assert [(r["status"], r["detail"]) for r in rows["ada"].values()] == [("passed", "")] * 3


def test_a_forged_result_written_from_inside_is_never_taken(graded, tmp_path):
    root, run, rows, _ = graded
    assert not any(r["status"] == "passed" for r in rows["forger"].values()), rows["forger"]
    assert all("its runner was killed (signal 9)" in r["detail"] for r in rows["forger"].values())
    shutil.copytree(root / "forger", tmp_path / "forger")
    shutil.copytree(root / records.CACHE_DIR, tmp_path / records.CACHE_DIR)
    again = grading.grade(
        tmp_path, registry=REGISTRY, cell_timeout=5, notebook_timeout=NOTEBOOK_TIMEOUT, progress=False, limits=LIMITS
    )
    assert again.cached == 1 and not any(r.status == "passed" for r in again.records)  # nor from the cache


def test_no_process_of_the_sandbox_holds_a_descriptor_of_the_grader(graded):
    _, _, rows, _ = graded
    assert rows["prober"]["91.alpha"]["status"] == "passed"
    found, _ = json.JSONDecoder().raw_decode(rows["prober"]["91.alpha"]["detail"])
    assert found.pop("runner memory") == "PermissionError"
    assert found.pop("runner ptrace") == "Operation not permitted"
    assert found.pop("1") == ["/dev/null", "/dev/null", "/dev/null", "anon_inode:[eventfd]"]  # bubblewrap's PID 1
    assert found and set(found.values()) == {"PermissionError"}  # the runner: not dumpable, nothing to open


def test_a_stopped_runner_is_killed_at_the_notebooks_limit(graded):
    _, run, rows, seconds = graded
    staller = rows["staller"]
    assert [r["status"] for r in staller.values()] == ["timed_out"] * 3
    assert "stopped from outside" in staller["91.alpha"]["detail"]
    # one slot held by the staller at most NOTEBOOK_TIMEOUT + GRACE_S; the whole class (2 at once) well under
    # the old backstop of NOTEBOOK_TIMEOUT + 120 s
    assert seconds < NOTEBOOK_TIMEOUT + sandbox.GRACE_S + 60, seconds


def test_memory_is_limited_for_all_of_a_notebooks_processes(graded):
    _, run, rows, _ = graded
    hog = rows["hog"]
    assert [r["status"] for r in hog.values()] == ["crashed"] * 3, hog
    assert all(r["detail"].startswith("memory: its processes together held more than 2 GiB") for r in hog.values())
    assert "cgroups are not used" in run.sandbox  # the report says which limit applied


def test_every_writable_file_system_is_size_limited(graded):
    _, _, rows, _ = graded
    wrote, _ = json.JSONDecoder().raw_decode(rows["filler"]["91.alpha"]["detail"])  # then the notes
    assert wrote["/dev"] == 0  # read-only
    for place, total in wrote.items():
        assert total <= LIMITS.scratch, (place, total)


def test_a_passed_line_appended_by_student_code_is_tampering(graded):
    _, run, rows, _ = graded
    alpha = rows["appender"]["91.alpha"]
    assert alpha["status"] == "wrong" and alpha["detail"].startswith(records.TAMPERING), alpha
    assert "lines written by the notebook's own code" in alpha["detail"]
    assert {s for s, _, _ in run.tampering} == {"appender", "muffler"}


def test_a_check_line_that_contradicts_the_printed_verdict_is_tampering(graded):
    _, _, rows, _ = graded
    alpha = rows["muffler"]["91.alpha"]
    assert alpha["status"] == "wrong" and alpha["detail"].startswith(records.TAMPERING), alpha
    assert "printed a wrong verdict for 91.alpha but its check line says passed" in alpha["detail"]
    assert "you normalised over the queries" in alpha["detail"]


def test_a_check_cell_tagged_to_skip_is_reported_skipped(graded):
    _, _, rows, _ = graded
    skipper = rows["skipper"]
    assert skipper["91.beta"]["status"] == "skipped"
    assert "skipped by the notebook" in skipper["91.beta"]["detail"]
    assert skipper["91.alpha"]["status"] == "passed" and skipper["91.gamma"]["status"] == "missing"


def test_the_memory_watch_counts_what_a_sandbox_holds_in_its_tmpfs(tmp_path):
    if not SANDBOXED:
        pytest.skip("no bubblewrap sandbox here")
    from course_utils.grading import watch

    proc = subprocess.Popen(
        [
            *("bwrap", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib"),
            *("--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev"),
            *("--size", str(2**25), "--tmpfs", "/tmp", "--unshare-all", "--die-with-parent", "--"),
            *("/bin/sh", "-c", "head -c 12000000 /dev/zero > /tmp/fill && sleep 20"),
        ]
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            pids = watch.descendants(proc.pid)
            held = watch.tmpfs_bytes(pids[-1], [("/tmp", 2**25)]) if len(pids) > 1 else 0
            if held >= 12_000_000:
                break
            time.sleep(0.1)
        assert 12_000_000 <= held < 13_000_000, held
        assert watch.tmpfs_bytes(os.getpid(), [("/tmp", 2**25)]) == 0  # the host's /tmp (larger) never counts
    finally:
        proc.kill()
        proc.wait()
