"""make grade on a class with hostile submissions among honest students (issue 22).

Every hostile notebook is a few lines a curious student could write: writing into another student's folder,
the cache, the report and course_utils/checks.py; detached processes; reading another student's notebook, a
lesson (the solutions), the course's code and /etc/passwd and raising or logging the text; connecting to a server
on the grader's loopback; filling the disk; 6 GB at once; 200 processes; a check line no check cell wrote; a replaced checks.check.
Beside them: symbolic links (to a lesson, to /etc/passwd, a student folder, the report), a FIFO, odd names, a
forged cache entry. Planted among honest students, graded in
one run (``jobs=2``), they must leave: every honest student's rows and files unchanged, the course tree
unchanged, no process behind, no other file's text in the report, and each tampering flagged on the culprit's
own rows. Every entry of the submissions folder is graded or listed with a reason; a folder named ``=1+2`` is
not a spreadsheet formula in grades.csv.

Small synthetic notebooks (lesson "91", as in tests/test_grade.py) keep this in the unit stage (well under a
minute on two cores). Needs bubblewrap (``/usr/bin/bwrap``, installed by .ci/run): skipped without it (failed on
Linux when ``CI`` is set), except the tests that grade without the sandbox and check that the report says so.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import socket
import sys
from dataclasses import asdict
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course_utils import grading
from course_utils.grading import cache, records, sandbox

REPO = Path(__file__).resolve().parents[1]
REGISTRY = {"91": [("91.alpha", "First"), ("91.beta", "Second"), ("91.gamma", "Third")]}
IDS = [i for i, _ in REGISTRY["91"]]
NAME = "91_synthetic.ipynb"
SECRET = "ADA-PRIVATE-ANSWER-7d1f0c2e9b"  # in the honest student's notebook only
SLEEP = "611.25"  # a detached `sleep 611.25` must not outlive the run
LIMITS = sandbox.Limits(memory=3 * 2**30, processes=64, file_size=8 * 2**20, scratch=32 * 2**20)
SANDBOXED = sandbox.status().sandboxed

LOGGER = """import json, os


def log(exercise, status, detail=""):
    line = {"exercise": exercise, "lesson": exercise[:2], "status": status, "detail": detail, "session": "s"}
    with open(os.environ["COURSE_CHECK_LOG"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\\n")
"""


def honest(extra: str = "") -> nbformat.NotebookNode:
    cells = [LOGGER + extra, *(f"log({i!r}, 'passed')" for i in IDS)]
    nb = new_notebook(cells=[new_markdown_cell("# 91")] + [new_code_cell(s) for s in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def hostile(attack: str) -> nbformat.NotebookNode:
    nb = honest()
    nb.cells.insert(2, new_code_cell(attack))
    return nb


def write(root: Path, student: str, nb, name: str = NAME) -> Path:
    path = root / student / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def course_code_line() -> str:
    """A line of the course's own code (no string in it), at least 40 characters: a thief's target."""
    for line in (REPO / "course_utils" / "checks.py").read_text().splitlines():
        if len(line.strip()) >= 40 and '"' not in line and "'" not in line and not line.strip().startswith("#"):
            return line.strip()
    raise AssertionError("no such line")


def build(root: Path, port: int) -> dict:
    """The class: honest students, hostile ones, and odd entries. Returns what the test needs to know."""
    ada = write(root, "ada", honest(f"my_note = {SECRET!r}"))
    # the network: a server of the grader's machine on loopback (as a hub's proxy would be)
    write(
        root,
        "nat",
        hostile(
            f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3).send(b'x')\nexcept OSError:\n    pass\n"
        ),
    )
    write(root, "_alice", honest())
    write(root, "=1+2", honest())
    checks_py = REPO / "course_utils" / "checks.py"
    lesson = REPO / "notebooks" / "01_attention_numpy.ipynb"
    # writes into another student's folder, the cache, the report, the course tree
    write(
        root,
        "mallory",
        hostile(
            "import pathlib\n"
            f"root = pathlib.Path({str(root)!r})\n"
            "for target, text in [(root / 'ada' / "
            + repr(NAME)
            + ", '{}'), (root / '.grade_cache' / 'evil.json', '{}'),\n"
            "                     (root / 'grades.csv', 'x'), (pathlib.Path(" + repr(str(checks_py)) + "), 'X = 1')]:\n"
            "    try:\n"
            "        target.parent.mkdir(parents=True, exist_ok=True)\n"
            "        with open(target, 'a') as handle:\n"
            "            handle.write(text)\n"
            "    except OSError as exc:\n"
            "        print(exc)\n"
        ),
    )
    # detached processes that would outlive the kernel
    write(
        root,
        "sid",
        hostile(
            "import subprocess, os\n"
            f"subprocess.Popen(['sleep', {SLEEP!r}], start_new_session=True)\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            f"    os.execvp('sleep', ['sleep', {SLEEP!r}])\n"
        ),
    )
    # reads another student's notebook, a lesson (the solutions) and the course's code; raises them
    write(
        root,
        "rex",
        hostile(
            "import pathlib, course_utils.checks as c\n"
            "stolen = ''\n"
            f"for p in [{str(ada)!r}, {str(lesson)!r}, c.__file__, '/etc/passwd', '/root/.bash_history']:\n"
            "    try:\n"
            "        stolen += pathlib.Path(p).read_text()[:3000]\n"
            "    except OSError as exc:\n"
            "        stolen += str(exc)\n"
            "raise RuntimeError(stolen)\n"
        ),
    )
    rex = nbformat.read(root / "rex" / NAME, as_version=4)
    alpha = next(c for c in rex.cells if c.source == "log('91.alpha', 'passed')")
    alpha.source = "log('91.alpha', 'wrong', stolen[-400:])"  # the stolen text as its own check's detail
    nbformat.write(rex, root / "rex" / NAME)
    # a line no check cell wrote; a replaced checks.check
    write(root, "fred", hostile("ident = '91.' + 'gamma'\nlog(ident, 'passed')\n"))
    fred = nbformat.read(root / "fred" / NAME, as_version=4)
    fred.cells = [c for c in fred.cells if "'91.gamma'" not in c.source]  # its gamma check cell is gone
    nbformat.write(fred, root / "fred" / NAME)
    write(root, "rita", hostile("from course_utils import checks\nchecks.check = lambda exercise_id, fn, **k: fn\n"))
    # filling the disk: its own folder, /tmp, the job's folder
    dora = hostile(
        "import os\n"
        "total, job_written = 0, False\n"
        "for n in range(40):\n"
        "    try:\n"
        "        with open(f'fill{n}.bin', 'wb') as handle:\n"
        "            handle.write(b'x' * 2**23)\n"
        "        total += 2**23\n"
        "    except OSError:\n"
        "        break\n"
        "try:\n"
        "    open('/grade/fill.bin', 'wb').write(b'x')\n"
        "    job_written = True\n"
        "except OSError:\n"
        "    pass\n"
    )
    dora.cells[3].source = "log('91.alpha', 'passed', f'{total} {job_written}')"
    write(root, "dora", dora)
    # 6 GB at once; more processes than the limit
    write(root, "max", hostile("import numpy as np\nbig = np.ones(6 * 2**30, dtype=np.uint8)\n"))
    write(
        root,
        "pat",
        hostile("import subprocess\nprocs = [subprocess.Popen(['sleep', '30']) for _ in range(200)]\n"),
    )
    # symbolic links, a FIFO, odd names
    (root / "linky").mkdir()
    (root / "linky" / "01_attention_numpy.ipynb").symlink_to(lesson)
    (root / "linky" / NAME).symlink_to("/etc/passwd")
    (root / "linkdir").symlink_to(root / "ada")
    os.mkfifo(root / "linky" / "02_masking.ipynb")
    write(root, "..evil", honest())
    (root / "empty").mkdir()
    write(root, "carl", honest(), name=f"Copy of {NAME}")
    write(root, "dan", honest())
    write(root, "dan", honest(), name="91_again.ipynb")
    (root / "notes.txt").write_text("top-level file")
    (root / "grades.html").symlink_to(REPO / "README.md")  # the report, planted as a link (an unzipped archive)
    return {"ada": ada}


def tree_digest(root: Path) -> dict:
    """Every entry of the submissions folder but the grader's own: path -> content hash (links: their target)."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] in records.OWN_FILES:
            continue
        if path.is_symlink():
            found[str(rel)] = "link:" + os.readlink(path)
        elif path.is_file():
            found[str(rel)] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[str(rel)] = "folder" if path.is_dir() else "other"
    return found


def leftover_processes() -> list:
    psutil = pytest.importorskip("psutil")
    left = []
    for process in psutil.process_iter():
        try:
            cmdline = " ".join(process.cmdline())
        except psutil.Error:
            continue
        if SLEEP in cmdline or "course_utils.grading.runner" in cmdline:
            left.append(cmdline)
    return left


def read_csv(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if not SANDBOXED:
        why = f"no bubblewrap sandbox here ({sandbox.status().line[:160]}): apt-get install bubblewrap"
        if os.environ.get("CI") and sys.platform.startswith("linux"):
            pytest.fail(why + " (CI on Linux must run these sandboxed: .ci/run installs bubblewrap)")
        pytest.skip(why)
    root = tmp_path_factory.mktemp("class")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.setblocking(False)
    known = build(root, server.getsockname()[1])
    # a forged cache entry (as a kernel without a sandbox could write) for the honest student's notebook
    entries = cache.Cache(root / records.CACHE_DIR)
    ex = records.normalize_registry(REGISTRY)["91"]
    setting = json.dumps([True, asdict(LIMITS)])
    key = cache.cache_key(known["ada"].read_bytes(), "91", ex, 5, 60, cache.engine_fingerprint(), setting)
    forged = records.NotebookResult({i: ("wrong", "forged", None) for i in IDS}, [], [])
    (entries.folder / f"{key}.json").write_text(json.dumps({"payload": json.dumps(asdict(forged)), "mac": "0" * 64}))
    files_before, course_before = tree_digest(root), cache.course_fingerprint(REPO)
    run = grading.grade(
        root, registry=REGISTRY, cell_timeout=5, notebook_timeout=60, progress=False, jobs=2, limits=LIMITS
    )
    try:
        server.accept()
        connected = True
    except BlockingIOError:
        connected = False
    server.close()
    assert not connected, "a notebook reached a server on the grader's loopback"
    return root, run, files_before, course_before


def rows_of(root: Path, student: str) -> list[dict]:
    return [r for r in read_csv(root / "grades.csv") if r["student"] == student]


def test_honest_students_are_graded_as_if_alone(graded):
    root, run, _, _ = graded
    for student, shown in (("ada", "ada"), ("_alice", "_alice"), ("=1+2", "'=1+2"), ("dan", "dan")):
        rows = rows_of(root, shown)
        assert [(r["exercise"], r["status"], r["detail"]) for r in rows] == [(i, "passed", "") for i in IDS], student
    assert run.forged == 1  # the forged cache entry was refused; ada was graded again


def test_no_file_of_the_class_changed_and_the_course_tree_is_unchanged(graded):
    root, run, files_before, course_before = graded
    assert tree_digest(root) == files_before
    assert cache.course_fingerprint(REPO) == course_before
    assert run.course_changed == []
    assert not (root / records.CACHE_DIR / "evil.json").exists()
    assert not (root / "grades.html").is_symlink()  # the planted link was replaced, README.md not written


def test_no_process_is_left(graded):
    assert leftover_processes() == []


def test_no_other_files_text_reaches_the_report(graded):
    root, _, _, _ = graded
    report = (root / "grades.csv").read_text(encoding="utf-8") + (root / "grades.html").read_text(encoding="utf-8")
    assert SECRET not in report
    assert course_code_line() not in report
    lesson = (REPO / "notebooks" / "01_attention_numpy.ipynb").read_text()
    assert lesson[:60] not in report and '"cell_type": "markdown"' not in report
    host_passwd = Path("/etc/passwd").read_text().splitlines()[0]
    assert host_passwd not in report
    rex = rows_of(root, "rex")
    assert rex[0]["status"] == "wrong" and rex[0]["detail"].startswith(records.FOREIGN)  # its check's detail: cut
    assert all(f"RuntimeError: {records.FOREIGN}" in r["detail"] for r in rex)  # the raised message: cut


def test_tampering_is_flagged_on_the_culprits_rows_only(graded):
    root, run, _, _ = graded
    expected = {
        "mallory": "wrote files outside its copy",
        "fred": "check line(s) for 91.gamma that no executed check cell wrote",
        "rita": "course_utils.checks.check was replaced",
    }
    for student, fragment in expected.items():
        rows = rows_of(root, student)
        assert rows and all(r["detail"].startswith("TAMPERING") and fragment in r["detail"] for r in rows), rows
    assert {s for s, _, _ in run.tampering} == set(expected)
    assert [r["status"] for r in rows_of(root, "fred")] == ["passed", "passed", "missing"]  # the forged line ignored
    for flag in (f for s, _, f in run.tampering if s == "mallory"):
        assert "ada" in flag and ".grade_cache" in flag and "grades.csv" in flag


def test_limits_stop_a_notebook_and_nothing_else(graded):
    root, _, _, _ = graded
    big = rows_of(root, "max")
    assert all(r["status"] == "passed" and "MemoryError: Unable to allocate 6.00 GiB" in r["detail"] for r in big), big
    total, job_written = rows_of(root, "dora")[0]["detail"].split()[:2]
    assert 0 < int(total) <= LIMITS.scratch and job_written == "False"  # its tmpfs filled up; /grade is read-only
    many = rows_of(root, "pat")
    assert all(r["status"] == "crashed" and "more than 64 processes" in r["detail"] for r in many), many
    assert [r["status"] for r in rows_of(root, "sid")] == ["passed"] * 3
    assert [r["status"] for r in rows_of(root, "nat")] == ["passed"] * 3  # its connection failed, nothing else


def test_every_entry_is_graded_or_listed_with_a_reason(graded):
    root, run, _, _ = graded
    listed = {(s, n): note for s, n, note in run.problems}
    expected = {
        ("linky", "01_attention_numpy.ipynb"): "refused: a symbolic link",
        ("linky", NAME): "refused: a symbolic link",
        ("linky", "02_masking.ipynb"): "refused: not a regular file",
        ("", "linkdir"): "refused: a symbolic link",
        ("..evil", ""): "hidden folder",
        ("empty", ""): "an empty folder",
        ("carl", f"Copy of {NAME}"): f"rename it {NAME}",
        ("dan", NAME): "91_again.ipynb is already lesson 91",
        ("", "notes.txt"): "a file outside any student folder",
        ("", "grades.html"): "refused: a symbolic link",
    }
    for key, fragment in expected.items():
        assert fragment in listed.get(key, ""), (key, listed.get(key))
    graded_students = {r.student for r in run.records}
    entries = {p.name for p in root.iterdir()} - set(records.OWN_FILES)
    named = graded_students | {s for s, _ in listed if s} | {n for s, n in listed if not s}
    assert entries == named - set(records.OWN_FILES)
    page = (root / "grades.html").read_text(encoding="utf-8")
    assert 'data-sandboxed="true"' in page and "Copy of" in page and "..evil" in page
    assert not any(r.student == "linky" for r in run.records)


def test_a_second_run_is_resumed_from_the_cache(graded):
    root, run, _, _ = graded
    before = (root / "grades.csv").read_text(encoding="utf-8")
    again = grading.grade(
        root, registry=REGISTRY, cell_timeout=5, notebook_timeout=60, progress=False, jobs=2, limits=LIMITS
    )
    assert (again.ran, again.cached) == (0, run.ran)
    assert (root / "grades.csv").read_text(encoding="utf-8") == before


def test_csv_cells_are_never_formulas():
    for value in ("=1+2", "+cmd", "-2+3", "@SUM(A1)", "\t=x", "\r=x"):
        assert grading.csv_safe(value).startswith("'")
    assert grading.csv_safe("ada") == "ada" and grading.csv_safe("") == ""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds left processes through /proc")
def test_without_the_sandbox_the_report_says_so_and_processes_still_end(tmp_path):
    write(tmp_path, "ada", honest())
    write(
        tmp_path,
        "sid",
        hostile(f"import subprocess\nsubprocess.Popen(['sleep', {SLEEP!r}], start_new_session=True)\n"),
    )
    planted = tmp_path / "ada" / "planted.txt"
    write(tmp_path, "tom", hostile(f"open({str(planted)!r}, 'w').write('x')\n"))
    run = grading.grade(
        tmp_path, registry=REGISTRY, cell_timeout=5, notebook_timeout=60, progress=False, jobs=1, use_sandbox=False
    )
    planted.unlink()  # without a sandbox the write lands; it is flagged on the culprit's rows
    assert run.sandbox.startswith("NOT SANDBOXED") and "WITHOUT a sandbox" in run.sandbox
    page = (tmp_path / "grades.html").read_text(encoding="utf-8")
    assert 'data-sandboxed="false"' in page and "WITHOUT a sandbox" in page
    assert [r.status for r in run.records] == ["passed"] * 9
    assert {s for s, _, _ in run.tampering} == {"tom"}
    assert "files in the submissions folder changed while it ran: ada/planted.txt" in run.tampering[0][2]
    assert leftover_processes() == []
    assert re.search(r"read and\s+write any file", sandbox.WITHOUT_SANDBOX, re.IGNORECASE)


def test_the_sandbox_command_hides_the_class_and_writes_nothing_to_disk(tmp_path):
    submissions = tmp_path / "class"
    (tmp_path / "job" / "box").mkdir(parents=True)
    args = sandbox.command(
        tmp_path / "job", course=REPO, decoys=[submissions, REPO], limits=sandbox.Limits(), result_fd=5, key_fd=6
    )
    assert {"--unshare-all", "--die-with-parent", "--new-session", "--clearenv"} <= set(args)
    mounts = []  # (option, destination) in order
    for i, arg in enumerate(args[: args.index("--")]):
        if arg == "--tmpfs":
            mounts.append((arg, args[i + 1]))
        elif arg in ("--ro-bind", "--bind"):
            mounts.append((arg, args[i + 2]))
    tmpfs = [dest for kind, dest in mounts if kind == "--tmpfs"]
    assert str(submissions) in tmpfs and str(REPO) in tmpfs
    assert not [dest for kind, dest in mounts if kind == "--bind"]  # no folder of the grader's disk is writable
    assert ("--ro-bind", sandbox.JOB_ROOT) in mounts
    assert {f"{sandbox.JOB_ROOT}/{f}" for f in ("work", "home", "log")} | {"/tmp"} <= set(tmpfs)
    order = [dest for _, dest in mounts]
    assert order.index(str(REPO)) < order.index(str(REPO / "course_utils"))  # the package shows through the decoy
    assert ("--ro-bind", str(REPO / "course_utils")) in mounts
    assert not any(dest.startswith(str(REPO / "notebooks")) for _, dest in mounts)  # the solutions are not there
    with pytest.raises(ValueError, match="memory limit must be a positive integer"):
        sandbox.Limits(memory=0)


def test_the_status_line_says_why_there_is_no_sandbox(monkeypatch):
    assert sandbox.status(False).line.startswith("NOT SANDBOXED (--no-sandbox was given)")
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    line = sandbox.status().line
    if sys.platform.startswith("linux"):
        assert line.startswith("NOT SANDBOXED (bubblewrap is not installed here)")
    assert "can READ and WRITE any file" in line and "apt-get install bubblewrap" in line
