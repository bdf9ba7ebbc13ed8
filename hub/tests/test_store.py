"""The records' store, the same tests on both databases: SQLite (a file) and PostgreSQL (a real server, started here).

The PostgreSQL server is this session's own (hub/tests/postgres.py: a temporary cluster on a unix socket, no TCP
port), stopped at the end. Without PostgreSQL installed its tests are skipped, unless ``HUBTEST_REQUIRE_POSTGRES=1``
(``make test-hub`` sets it), where they fail.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import postgres
import pytest
from class_report.database import connect
from class_report.records import normalize
from class_report.store import Store
from conftest import HUB_DIR

CHECK = {"v": 2, "event": "check", "exercise": "01.softmax_along", "lesson": "01", "attempt": 1, "status": "wrong"}
CHECK |= {"misconception": "softmax_wrong_axis", "detail": "case 1 of 4 is wrong", "time": "2026-11-24T12:00:00Z"}


@pytest.fixture(scope="session")
def pg_server():
    bindir = postgres.binaries()
    if bindir is None:
        if os.environ.get("HUBTEST_REQUIRE_POSTGRES") == "1":
            pytest.fail("PostgreSQL is not installed (no pg_ctl on PATH or in /usr/lib/postgresql/*/bin)")
        pytest.skip("PostgreSQL is not installed (no pg_ctl on PATH or in /usr/lib/postgresql/*/bin)")
    server = postgres.Server(bindir)
    server.start()
    yield server
    server.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path):
    """Where a new, empty store lives: an SQLite file, or a new PostgreSQL database's URL."""
    if request.param == "sqlite":
        return str(tmp_path / "r.sqlite")
    return request.getfixturevalue("pg_server").new_database()


def test_store_keeps_the_newest_per_exercise(target):
    store = Store(target)
    assert store.add("alice", [normalize(CHECK), normalize({**CHECK, "status": "passed", "attempt": 2})]) == (2, 0)
    assert store.add("bob", [normalize(CHECK)]) == (1, 0)
    latest = store.latest()
    assert list(latest) == ["alice", "bob"]
    assert [r["status"] for r in latest["alice"]] == ["passed"] and [r["status"] for r in latest["bob"]] == ["wrong"]
    assert [r["attempt"] for r in store.events("alice")] == [1, 2]
    assert store.latest("bob").keys() == {"bob"}
    assert store.latest("nobody") == {} and store.events("nobody") == []
    store.close()


def test_sqlite_runs_in_wal_mode(tmp_path):
    Store(tmp_path / "r.sqlite").close()
    with sqlite3.connect(tmp_path / "r.sqlite") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_store_is_bounded_per_student(target):
    store = Store(target, max_events=50, max_exercises=10)
    for i in range(12):
        store.add("alice", [normalize({**CHECK, "exercise": f"01.ex{i}"})])
    assert len(store.latest("alice")["alice"]) == 10  # two more exercises were refused
    assert store.add("alice", [normalize({**CHECK, "exercise": "01.ex99"})]) == (0, 1)
    for attempt in range(200):
        store.add("alice", [normalize({**CHECK, "exercise": "01.ex0", "attempt": attempt})])
    assert store.counts()["alice"] == 50  # history: the newest 50
    assert store.events("alice")[-1]["attempt"] == 199
    assert len(store.latest("alice")["alice"]) == 10  # the report's rows are never dropped
    store.add("bob", [normalize(CHECK)])
    assert store.counts()["bob"] == 1
    store.close()


def test_a_failed_batch_stores_none_of_its_records(target):
    store = Store(target)
    with pytest.raises(KeyError):
        store.add("alice", [normalize(CHECK), {"event": "check"}])  # the second has no exercise: the batch rolls back
    assert store.latest() == {} and store.counts() == {}
    assert store.add("alice", [normalize(CHECK)]) == (1, 0)  # and the connection is usable afterwards
    store.close()


def test_a_restarted_store_has_every_record(target):
    store = Store(target)
    store.add("alice", [normalize({**CHECK, "attempt": i}) for i in range(1, 6)])
    before = (store.latest(), store.events("alice"), store.counts())
    store.close()
    again = Store(target)  # the tables exist: nothing is created twice, nothing is lost
    assert (again.latest(), again.events("alice"), again.counts()) == before
    again.add("alice", [normalize({**CHECK, "attempt": 6})])
    assert [r["attempt"] for r in again.events("alice")] == [1, 2, 3, 4, 5, 6]  # ids go on increasing
    again.close()


def test_every_committed_record_survives_a_killed_process(target, tmp_path):
    """A writer killed with SIGKILL (no clean shutdown) loses nothing it had committed."""
    progress = tmp_path / "committed"
    script = textwrap.dedent(
        f"""
        import os
        import sys
        sys.path.insert(0, {str(HUB_DIR)!r})
        from class_report.store import Store
        from class_report.records import normalize
        store = Store({target!r})
        i = 0
        while True:
            store.add("alice", [normalize({{"exercise": "01.a", "status": "passed", "attempt": i}})])
            with open({str(progress)!r} + ".tmp", "w") as f:
                f.write(str(i))  # written only after the commit returned
            os.replace({str(progress)!r} + ".tmp", {str(progress)!r})
            i += 1
        """
    )
    writer = subprocess.Popen([sys.executable, "-c", script])
    try:
        while not progress.exists() or int(progress.read_text() or 0) < 200:
            assert writer.poll() is None, "the writer died"
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
    committed = int(progress.read_text())
    attempts = [r["attempt"] for r in Store(target).events("alice", limit=100_000)]
    assert attempts[: committed + 1] == list(range(committed + 1))  # at most one more, never fewer


def test_postgresql_killed_and_restarted_loses_nothing_and_the_store_reconnects(pg_server):
    """The database server itself dies (``pg_ctl stop -m immediate``: no checkpoint, a crash) and comes back."""
    store = Store(pg_server.new_database())
    store.add("alice", [normalize({**CHECK, "attempt": i}) for i in range(1, 4)])
    pg_server.restart("immediate")
    assert [r["attempt"] for r in store.events("alice")] == [1, 2, 3]  # the same Store object, a new connection
    assert store.add("alice", [normalize({**CHECK, "attempt": 4})]) == (1, 0)
    assert [r["status"] for r in store.latest("alice")["alice"]] == ["wrong"]
    store.close()


def test_execute_takes_the_same_placeholders_on_both(target):
    db = connect(target)
    with db.transaction():
        db.execute("CREATE TABLE t (name TEXT, percent TEXT)")
        db.execute("INSERT INTO t VALUES (?, ?)", ("a?b", "50%"))  # a ? or % inside a value is data
    assert db.execute("SELECT name, percent FROM t WHERE name = ?", ("a?b",)).fetchall() == [("a?b", "50%")]
    db.close()


@pytest.mark.parametrize(
    ("bad", "error", "words"),
    [
        (3, TypeError, "target: expected a file path or a postgresql:// URL, got int"),
        ("mysql://host/db", ValueError, "target: expected a file path or a postgresql:// URL, got a mysql:// URL"),
    ],
)
def test_a_bad_target_is_refused_naming_it(bad, error, words):
    with pytest.raises(error) as raised:
        connect(bad)
    assert str(raised.value) == words


def test_a_database_url_is_logged_without_its_password():
    from class_report.database import redacted

    assert (
        redacted("postgresql://course:s3cret@db.example:5432/records")
        == "postgresql://course:***@db.example:5432/records"
    )
    assert "s3cret" not in redacted("postgres://course:s3cret@db/records")
    assert redacted("postgresql://course@db/records") == "postgresql://course@db/records"
    assert redacted("/srv/class-report/records.sqlite") == "/srv/class-report/records.sqlite"
