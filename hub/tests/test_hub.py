"""The course on a real JupyterHub, on loopback only: pull link, live class report, who sees what, limits, restart.

JupyterHub (hub/requirements.txt) with configurable-http-proxy (hub/package-lock.json), the dummy login, local
servers (SimpleLocalProcessSpawner) and the class-report service (hub/jupyterhub_config.py). The student edition is
published (scripts/publish_student_edition.py) into a local git repository, which the pull link names.

Three students open the pull link and run lesson 01 in a kernel of their own server: alice with a right answer to
the lesson's first checked exercise, bob with a wrong one, carol untouched. The right answer is the instructor
edition's solution region when the lesson has one, else the exercise's first correct variant; the wrong one returns
the right answer plus one. Then: the instructor's page shows exactly those rows; a student sees only their own and
is refused another's; a fourth student flooding the service is limited while alice's next record still arrives;
the service is killed and the hub restarted, and every row is still there. The steps share one hub, in order.
"""

from __future__ import annotations

import ast
import concurrent.futures
import datetime as dt
import functools
import hashlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import time

import postgres
import pytest
import requests
from conftest import REPO, report_cells

sys.path.insert(0, str(REPO / "scripts"))
from hubmarks import ROSTER, course_text, read_csv, write_course  # noqa: E402
from hubtest import Hub, Student  # noqa: E402
from publish_student_edition import build_tree, commit_tree, pull_link  # noqa: E402

pytestmark = pytest.mark.timeout(900)
SERVICE = "/services/class-report/"
CHECK_CALL = re.compile(r"checks\.check\(\s*['\"](?P<id>01\.\w+)['\"]\s*,\s*(?P<fn>[A-Za-z_]\w*)")
TIMINGS: dict[str, float] = {}


# ------------------------------------------------------------------------------------ lesson 01, generically


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _code_cells(nb):
    return [(i, _source(c)) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]


def checked_exercises(nb) -> list[tuple[str, str]]:
    """(exercise id, function name) of every ``checks.check`` call of lesson 01, in order."""
    return [(m["id"], m["fn"]) for _, source in _code_cells(nb) for m in CHECK_CALL.finditer(source)]


def _function(source: str, name: str) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
    return found[-1] if found else None


def _defining_cell(nb, name: str) -> int:
    """The index of the last code cell that defines ``name`` before (or in) its check cell."""
    best = None
    for i, source in _code_cells(nb):
        if _function(source, name):
            best = i
        if re.search(rf"checks\.check\([^)]*\b{name}\b", source) and best is not None:
            return best
    raise AssertionError(f"no cell defines {name}() before its check")


def right_answer(name: str) -> str:
    """The complete function: the instructor edition's solution region, else the exercise's first correct variant."""
    lesson = json.loads(next((REPO / "notebooks").glob("01_*.ipynb")).read_text(encoding="utf-8"))
    source = _source(lesson["cells"][_defining_cell(lesson, name)])
    if "### BEGIN SOLUTION" in source:
        node = _function(source, name)
        lines = source.splitlines()[node.lineno - 1 - len(node.decorator_list) : node.end_lineno]
        return "\n".join(line for line in lines if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))

    from course_utils.checking import registry  # no solution region yet: the exercise's first correct variant, renamed

    found = [e for e in registry.for_lesson("01") if e.function == name]
    assert found, f"lesson 01 has no solution region for {name}() and no exercise checks it"
    variant = inspect.getsource(found[0].variants[0])
    return re.sub(rf"^def {found[0].variants[0].__name__}\(", f"def {name}(", variant, count=1).rstrip()


def wrong_answer(name: str) -> str:
    """The right function, then a wrapper that returns its result plus one (a bool: negated)."""
    return f"""{right_answer(name)}


_right_{name} = {name}


def _plus_one(value):
    if isinstance(value, (tuple, list)):
        return type(value)(_plus_one(v) for v in value)
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return not value
    return value + 1


def {name}(*args, **kwargs):
    return _plus_one(_right_{name}(*args, **kwargs))"""


def with_answer(nb: dict, name: str, answer: str) -> dict:
    """A copy of the notebook whose cell defining ``name`` has ``answer`` in place of the function."""
    nb = json.loads(json.dumps(nb))
    index = _defining_cell(nb, name)
    source = _source(nb["cells"][index])
    node = _function(source, name)
    lines = source.splitlines()
    start = node.lineno - 1 - len(node.decorator_list)
    nb["cells"][index]["source"] = "\n".join([*lines[:start], answer, *lines[node.end_lineno :]])
    return nb


# ------------------------------------------------------------------------------------ the hub, once


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    if shutil.which("git") is None:
        pytest.fail("git is needed (nbgitpuller runs it)")
    proxy = REPO / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
    if not proxy.exists():
        pytest.fail(f"{proxy} is missing: run `make hub-env` (npm ci in hub/)")
    root = tmp_path_factory.mktemp("hub")
    started = time.perf_counter()
    edition = root / "edition"
    build_tree(edition)
    bare = root / "attention-course"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    commit_tree(edition, bare, "student", "version 1")
    TIMINGS["publish the student edition"] = time.perf_counter() - started
    database = None  # the service's records: SQLite, or with HUBTEST_RECORDS=postgresql a PostgreSQL server of its own
    records = str(root / "class-report" / "records.sqlite")
    if os.environ.get("HUBTEST_RECORDS") == "postgresql":
        bindir = postgres.binaries()
        if bindir is None:
            pytest.fail("HUBTEST_RECORDS=postgresql, but PostgreSQL is not installed (initdb, pg_ctl)")
        database = postgres.Server(bindir)
        database.start()
        records = database.new_database()
    TIMINGS[f"(the records: {records.split('?')[0]})"] = 0.0
    course_file = root / "course.toml"  # the service's (CLASS_REPORT_COURSE_FILE): lesson 02 refuses late work
    write_course(course_file, course_text(due_01=dt.datetime(2099, 1, 1, tzinfo=dt.UTC)))
    hub = Hub(
        root,
        {
            "CLASS_REPORT_DB_PATH": records,
            "CLASS_REPORT_INSTRUCTORS": "ta",
            "CLASS_REPORT_COURSE_FILE": str(course_file),
        },
    )
    started = time.perf_counter()
    hub.start()
    TIMINGS["start the hub, proxy and service"] = time.perf_counter() - started
    world = {"root": root, "hub": hub, "edition": edition, "bare": bare, "students": {}, "kernels": {}}
    world["records"], world["course_file"] = records, course_file
    world["link"] = pull_link(hub.url, f"file://{bare}", lesson="01", notebooks=edition / "notebooks")
    TIMINGS[f"(the hub: JupyterHub {hub.version()}, {hub.python})"] = 0.0
    TIMINGS[f"(the service: JupyterHub {hub.version(hub.service_python)}, {hub.service_python})"] = 0.0
    yield world
    for kernel in world["kernels"].values():
        kernel.close()
    hub.stop()
    if database is not None:
        database.close()
    print(f"\nhub log: {hub.log_path}")


def _timed(name):
    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                TIMINGS[name] = time.perf_counter() - started

        return run

    return wrap


def _report(person: Student) -> tuple[str, dict]:
    page = person.get(person.hub.url + SERVICE)
    assert page.status_code == 200 and "Class report" in page.text, (
        f"{person.name}: {page.status_code} {page.text[:300]}"
    )
    data = person.get(person.hub.url + SERVICE + "api/report")
    assert data.status_code == 200, data.text
    return page.text, data.json()


def _checks(data: dict) -> dict:
    """(student, exercise) -> status of the newest check, from api/report."""
    return {
        (student, r["exercise"]): r["status"]
        for student, rows in data["students"].items()
        for r in rows
        if r["event"] == "check"
    }


# ------------------------------------------------------------------------------------ the steps


@_timed("3 students open the pull link (servers start, nbgitpuller clones)")
def test_1_three_students_open_the_pull_link(world):
    hub = world["hub"]
    # the hub that answers, and the service, run the JupyterHubs asked for ($HUBTEST_HUB_PYTHON's and
    # $HUBTEST_SERVICE_PYTHON's, or the course's)
    assert requests.get(hub.url + "/hub/api/", timeout=30).json()["version"] == hub.version()
    service_python = open(f"/proc/{hub.service_pid()}/cmdline", "rb").read().split(b"\0")[0].decode()
    assert service_python == hub.service_python, service_python
    assert world["link"].startswith(hub.url + "/hub/user-redirect/git-pull?repo=file")
    for name in ("alice", "bob", "carol"):
        student = Student(hub, name)
        student.login()
        lab = student.open_pull_link(world["link"])
        assert "JupyterLab" in lab.text or "jupyter-config-data" in lab.text, lab.text[:300]
        # JupyterLab's settings as the student's page gets them: the course's defaults (overrides.d), no news prompt
        news = student.get(student.server + "lab/api/settings/@jupyterlab/apputils-extension:notification").json()
        assert news["schema"]["properties"]["fetchNews"]["default"] == "false", news["schema"]["properties"]
        listing = student.list_dir("attention-course/notebooks")
        assert {"course_utils", "data"} <= set(listing) and any(n.startswith("01_") for n in listing), listing
        world["students"][name] = student
    # every student's server runs with the course's kernel culling (hub/jupyterhub_config.py)
    servers = hub.servers()
    assert set(servers) == {"alice", "bob", "carol"}, servers
    assert all("--MappingKernelManager.cull_idle_timeout=1800" in args for args in servers.values()), servers


@_timed("3 students run lesson 01 in their own kernels")
def test_2_each_runs_lesson_01_in_a_kernel_on_the_hub(world):
    students = world["students"]
    assert students, "step 1 failed"
    path = next(n for n in students["alice"].list_dir("attention-course/notebooks") if n.startswith("01_"))
    path = f"attention-course/notebooks/{path}"
    published = students["carol"].read_notebook(path)
    exercises = checked_exercises(published)
    assert exercises, "lesson 01 has no checks.check(...) cell"
    first_id, fn = exercises[0]
    world.update(path=path, exercises=[e for e, _ in exercises], first=first_id, fn=fn)
    answers = {"alice": right_answer(fn), "bob": wrong_answer(fn), "carol": None}
    for name, answer in answers.items():
        student = students[name]
        nb = published if answer is None else with_answer(published, fn, answer)
        if answer is not None:
            student.save_notebook(path, nb)  # as JupyterLab saves an edited notebook
        kernel = student.start_kernel(path)
        world["kernels"][name] = kernel
        results = kernel.run_notebook(nb)
        errors = [(i, r["errors"]) for i, r in enumerate(results) if r["errors"]]
        assert not errors, f"{name}: lesson 01 raised in code cells {errors}"
        probe = kernel.execute(
            "import os, course_utils\n"
            "from course_utils import hub_client\n"
            "print(course_utils.__file__, os.environ['JUPYTERHUB_USER'], hub_client.flush(20), hub_client.stats())"
        )
        where, user, flushed, stats = probe["text"].split(" ", 3)
        assert "attention-course/notebooks/course_utils" in where, f"{name}: course_utils came from {where}"
        assert user == name and flushed == "True", probe
        assert "'failed': 0" in stats and "'dropped': 0" in stats and "'sent': 0" not in stats, stats


def _expected(world) -> dict:
    expected = {}
    first_status = {"alice": "passed", "bob": "wrong", "carol": "not_attempted"}
    for name, status in first_status.items():
        for exercise in world["exercises"]:
            expected[(name, exercise)] = status if exercise == world["first"] else "not_attempted"
    return expected


@_timed("the instructors' view")
def test_3_the_instructor_sees_exactly_those_rows(world):
    assert "first" in world, "step 2 failed"
    expected = _expected(world)
    for name in ("teacher", "ta"):  # a hub admin; a member of the group `instructors`
        instructor = Student(world["hub"], name)
        instructor.login()
        page, data = _report(instructor)
        assert data["instructor"] is True
        assert set(data["students"]) == {"alice", "bob", "carol"}
        assert _checks(data) == expected
        assert 'href="/services/class-report/lesson/01"' in page  # the index links each lesson's page
        lesson_page = instructor.get(instructor.hub.url + SERVICE + "lesson/01")
        assert lesson_page.status_code == 200 and "Class report: lesson 01" in lesson_page.text
        shown = {key: status for key, status in report_cells(lesson_page.text).items() if status != "not_submitted"}
        assert shown == expected, f"{name}'s page: {shown}"
        world["students"][name] = instructor


@_timed("a student's own view; refusals")
def test_4_a_student_sees_only_their_own_rows_and_cannot_write_as_another(world):
    alice, hub = world["students"]["alice"], world["hub"]
    page, data = _report(alice)
    assert data["instructor"] is False and set(data["students"]) == {"alice"}
    assert {student for student, _ in report_cells(page)} == {"alice"}
    refused = alice.get(hub.url + SERVICE + "api/records?student=bob")
    assert refused.status_code == 403 and "own rows" in refused.json()["error"]
    assert alice.get(hub.url + SERVICE + "api/records?student=alice").status_code == 200
    # from alice's kernel, with her server's token: a record that names bob is stored as alice's
    forged = world["kernels"]["alice"].execute(
        "import json, os, urllib.request\n"
        "body = {'records': [{'student': 'bob', 'exercise': '01.shared_next_token_matrix', 'status': 'passed'},\n"
        "                    {'exercise': '01.forged', 'status': 'passed'}]}\n"
        "request = urllib.request.Request(os.environ['COURSE_REPORT_URL'] + 'api/records', json.dumps(body).encode(),\n"
        "    {'Authorization': 'token ' + os.environ['JUPYTERHUB_API_TOKEN'], 'Content-Type': 'application/json'})\n"
        "print(urllib.request.urlopen(request).read().decode())"
    )
    answer = json.loads(forged["text"])
    assert answer["accepted"] == 1 and "01.forged" in answer["refused"][0]["error"], forged  # not a registered id
    teacher = world["students"]["teacher"]
    _, data = _report(teacher)
    checks = _checks(data)
    forged_id = "01.shared_next_token_matrix"  # stored as alice's, never as bob's
    assert checks[("alice", forged_id)] == "passed" and checks.get(("bob", forged_id)) != "passed", checks
    assert ("alice", "01.forged") not in checks
    # without a token, or with one the hub does not know
    for headers in ({}, {"Authorization": "token not-a-real-token"}):
        r = requests.post(hub.url + SERVICE + "api/records", json={"records": []}, headers=headers, timeout=30)
        assert r.status_code == 403, (headers, r.status_code, r.text)


@_timed("a student submits lesson 01; the instructor collects it for make grade")
def test_4b_a_student_submits_and_the_instructor_collects(world, tmp_path):
    hub, teacher = world["hub"], world["students"]["teacher"]
    submitted = world["kernels"]["bob"].execute(
        "import json\nfrom course_utils import submit\nprint(json.dumps(submit.lesson('01', quiet=True)))"
    )
    assert not submitted["errors"], submitted
    receipt = json.loads(submitted["text"])
    assert receipt["student"] == "bob" and receipt["lesson"] == "01" and len(receipt["sha256"]) == 64, receipt
    world["receipts"] = {"bob": receipt}
    # another student cannot read it; the instructor collects it into the folder make grade reads
    assert world["students"]["alice"].get(hub.url + SERVICE + f"api/submissions/{receipt['id']}").status_code == 404
    token = teacher.token("collect", ["access:services!service=class-report", "read:users!user"])
    (tmp_path / "course.toml").write_text('[lessons.01]\ndue = "2099-01-01T00:00:00+00:00"\n')
    out = tmp_path / "collected"
    command = [sys.executable, "-m", "course_utils.marks", "collect", "--course", str(tmp_path / "course.toml")]
    command += ["--service", hub.url + SERVICE, "--token", token, "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text())["submissions"]
    assert [(e["student"], e["sha256"], e["late_days"]) for e in manifest] == [("bob", receipt["sha256"], 0)]
    notebook = next((out / "submissions" / "bob").glob("01_*.ipynb"))
    assert hashlib.sha256(notebook.read_bytes()).hexdigest() == receipt["sha256"]
    assert any(r["student"] == "alice" for r in map(json.loads, (out / "records.jsonl").read_text().splitlines()))


SUBMIT_01 = "import json\nfrom course_utils import submit\nprint(json.dumps(submit.lesson('01', quiet=True)))"


def _received(receipt: dict) -> dt.datetime:
    return dt.datetime.fromisoformat(receipt["received"])


def _make(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    done = subprocess.run(
        ["make", "--no-print-directory", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"make {args[0]}: {done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@_timed("the class's marks: on time, late with and without an extension, refused; make grade SERVICE=; make marks")
def test_4c_make_grade_over_the_services_submissions_gives_the_marks_the_course_file_implies(world, tmp_path):
    hub, teacher, kernels, students = world["hub"], world["students"]["teacher"], world["kernels"], world["students"]
    assert "receipts" in world, "step 4b failed"
    # alice submits on time (bob did in step 4b); then the instructor sets lesson 01's due date just after their
    # submissions and gives carol a day's extension; the service re-reads the course file
    alice = json.loads(kernels["alice"].execute(SUBMIT_01)["text"])
    due = max(_received(alice), _received(world["receipts"]["bob"])) + dt.timedelta(seconds=1)
    write_course(world["course_file"], course_text(due_01=due, first=world["first"], carol_days=1))
    time.sleep(max(0.0, (due - dt.datetime.now(dt.UTC)).total_seconds()) + 0.5)
    # carol (with the extension) and dave (without) save the right answer and submit late; erin never starts
    dave = Student(hub, "dave")
    dave.login()
    dave.open_pull_link(world["link"])
    students["dave"] = dave
    right = with_answer(students["carol"].read_notebook(world["path"]), world["fn"], right_answer(world["fn"]))
    for name in ("carol", "dave"):
        students[name].save_notebook(world["path"], right)
    kernels["dave"] = dave.start_kernel(world["path"])
    late = {name: json.loads(kernels[name].execute(SUBMIT_01)["text"]) for name in ("carol", "dave")}
    assert all(_received(receipt) > due for receipt in late.values()), (due, late)
    # lesson 02 refuses late work: carol's button says so in her notebook; nothing is kept; the index counts it
    shown = kernels["carol"].execute("from course_utils import submit\nsubmit.button('02').children[0].click()")
    assert not shown["errors"], shown
    assert (
        "Not submitted: the class report refused the submission (403): lesson 02 is closed: its due date was"
        in (shown["text"])
    ), shown
    index = teacher.get(hub.url + SERVICE).text
    assert "<th>refused (late)</th>" in index and "1 (1 tries): carol" in index
    kept = teacher.get(hub.url + SERVICE + "api/submissions").json()["submissions"]
    assert sorted((r["student"], r["lesson"]) for r in kept) == [(n, "01") for n in ("alice", "bob", "carol", "dave")]

    # make grade SERVICE=...: the submissions that count, collected and graded in the sandbox in one command
    token = teacher.token("grade", ["access:services!service=class-report", "read:users!user"])
    collected, course = tmp_path / "collected", world["course_file"]
    started = time.perf_counter()
    _make("grade", f"SERVICE={hub.url}{SERVICE}", f"TOKEN={token}", f"COURSE_FILE={course}", f"COLLECTED={collected}")
    TIMINGS["(of which make grade SERVICE=..., 4 notebooks)"] = time.perf_counter() - started
    grades = {(r[0], r[2]): r[3] for r in read_csv(collected / "submissions" / "grades.csv")[1:]}
    first = world["first"]
    assert {name: grades[(name, first)] for name in ("alice", "bob", "carol", "dave")} == {
        "alice": "passed",
        "bob": "wrong",
        "carol": "passed",
        "dave": "passed",
    }, grades
    (tmp_path / "roster.csv").write_text(ROSTER)
    out = tmp_path / "marks"
    done = _make(
        "marks",
        f"COURSE_FILE={course}",
        f"COLLECTED={collected}",
        f"ROSTER={tmp_path / 'roster.csv'}",
        f"MARKS_OUT={out}",
    )
    assert "never started (1): erin" in done.stdout and "not on the roster" not in done.stdout, done.stdout
    # the course file implies: 10 for the first exercise, nothing else; 10 % a started day late; carol's extension
    expected = {"alice": 10, "bob": 0, "carol": 10, "dave": 9, "erin": 0}
    marks = read_csv(out / "marks.csv")
    column = {name: i for i, name in enumerate(marks[0])}
    got = {
        row[0]: (row[column["01 points"]], row[column["01 status"]], row[column["01 late days"]], row[column["total"]])
        for row in marks[1:]
    }
    assert got == {
        "alice": ("10", "on time", "0", "10"),
        "bob": ("0", "on time", "0", "0"),
        "carol": ("10", "on time", "0", "10"),
        "dave": ("9", "late", "1", "9"),
        "erin": ("0", "not submitted", "0", "0"),
    }, got
    canvas = read_csv(out / "canvas.csv")
    assert canvas[0] == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "Attention 01",
        "Attention 02",
        "Attention total",
    ]
    assert canvas[1] == ["Points Possible", "", "", "", "", "10", "0", "10"]
    assert {row[3]: (row[5], row[7]) for row in canvas[2:]} == {n: (str(m), str(m)) for n, m in expected.items()}
    moodle = read_csv(out / "moodle.csv")
    assert moodle[0] == [
        "First name",
        "Last name",
        "Username",
        "ID number",
        "Email address",
        "Attention 01",
        "Attention 02",
        "Attention total",
    ]
    assert {row[2]: (row[5], row[7]) for row in moodle[1:]} == {n: (str(m), str(m)) for n, m in expected.items()}


@_timed("a student floods the service")
def test_5_a_flooding_student_is_limited_and_the_others_still_get_through(world):
    hub, teacher = world["hub"], world["students"]["teacher"]
    dave = Student(hub, "dave")
    dave.login()
    token = dave.token("flood", ["access:services!service=class-report"])
    world["dave_token"] = token
    url = hub.url + SERVICE + "api/records"
    headers = {"Authorization": f"token {token}"}
    record = {"exercise": world["first"], "status": "wrong"}
    too_big = requests.post(url, data=b"x" * (65 * 1024), headers=headers, timeout=30)
    too_many = requests.post(url, json={"records": [record] * 101}, headers=headers, timeout=30)
    assert (too_big.status_code, too_many.status_code) == (413, 413)

    def one(i):
        r = requests.post(url, json={"records": [{**record, "attempt": i}]}, headers=headers, timeout=60)
        return r.status_code, (r.json().get("accepted", 0) if r.status_code == 200 else 0)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        flood = pool.map(one, range(400))
        # meanwhile alice runs her check again (her second attempt), from her kernel
        alice = world["kernels"]["alice"]
        nb = with_answer(
            world["students"]["alice"].read_notebook(world["path"]), world["fn"], right_answer(world["fn"])
        )
        check_cell = next(s for _, s in _code_cells(nb) if CHECK_CALL.search(s) and world["first"] in s)
        again = alice.execute(check_cell + "\nfrom course_utils import hub_client\nprint(hub_client.flush(20))")
        results = list(flood)
    assert again["text"].rstrip().endswith("True") and not again["errors"], again
    statuses = [status for status, _ in results]
    accepted = sum(n for _, n in results)
    assert statuses.count(429) > 0 and set(statuses) <= {200, 429}, statuses
    assert accepted == statuses.count(200) and accepted < 400
    kept = teacher.get(hub.url + SERVICE + "api/records?student=dave").json()["events"]
    assert len(kept) == accepted  # every accepted record is stored, and only those
    alice_events = teacher.get(hub.url + SERVICE + "api/records?student=alice").json()["events"]
    assert [e["status"] for e in alice_events if e["exercise"] == world["first"]] == ["passed", "passed"]
    world["flood"] = {"requests": 400, "accepted": accepted, "refused_429": statuses.count(429)}


@_timed("kill the service, restart the hub")
def test_6_every_row_survives_a_killed_service_and_a_hub_restart(world):
    hub, teacher = world["hub"], world["students"]["teacher"]
    assert "flood" in world, "step 5 failed"
    before = _report(teacher)[1]
    histories = {n: teacher.get(hub.url + SERVICE + f"api/records?student={n}").json() for n in before["students"]}
    service = hub.service_pid()
    subprocess.run(["kill", "-KILL", str(service)], check=True)  # a crash: no clean shutdown
    hub.stop()
    hub.start()
    assert hub.service_pid() != service
    after = _report(teacher)[1]  # the service's new process: the browser logs in through the hub again
    assert after == before
    for name, history in histories.items():
        assert teacher.get(hub.url + SERVICE + f"api/records?student={name}").json() == history
    # and the service takes records again, from the same (stored) token
    r = requests.post(
        hub.url + SERVICE + "api/records",
        json={"records": [{"exercise": world["first"], "status": "passed"}]},
        headers={"Authorization": f"token {world['dave_token']}"},
        timeout=30,
    )
    assert r.status_code == 200 and r.json()["accepted"] == 1
    if world["records"].startswith("postgresql://"):  # and the records are in PostgreSQL, not in a file
        import psycopg

        with psycopg.connect(world["records"]) as db:
            stored = {name for (name,) in db.execute("SELECT DISTINCT student FROM events")}
        assert stored == set(histories), stored


@_timed("the course changes; a student pulls again")
def test_7_pulling_again_brings_a_new_lesson_and_keeps_the_edits(world):
    hub = world["hub"]
    v2 = world["root"] / "edition-v2"
    shutil.copytree(world["edition"], v2)
    lesson = json.loads((v2 / world["path"].removeprefix("attention-course/")).read_text(encoding="utf-8"))
    lesson["cells"] = lesson["cells"][:3]
    (v2 / "notebooks" / "09_new_lesson.ipynb").write_text(json.dumps(lesson, indent=1), encoding="utf-8")
    commit_tree(v2, world["bare"], "student", "version 2: a new lesson")
    alice = Student(hub, "alice")  # a new browser session: the hub restarted in step 6
    alice.login()
    alice.open_pull_link(world["link"])
    assert "09_new_lesson.ipynb" in alice.list_dir("attention-course/notebooks")
    kept = alice.read_notebook(world["path"])
    assert right_answer(world["fn"]) in "".join(_source(c) for c in kept["cells"])
