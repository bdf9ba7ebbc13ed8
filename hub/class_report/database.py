"""One connection to the records' database, SQLite or PostgreSQL, behind the same four calls.

:func:`connect` takes a file path (SQLite, the default: embedded, nothing to run) or a ``postgresql://`` URL
(PostgreSQL through psycopg, pinned in hub/requirements.txt). Both answer:

- ``db.execute(sql, params)``: one statement with ``?`` placeholders (SQLite's style; they become ``%s`` for
  PostgreSQL, so a query is written once). Returns a cursor (``fetchone``, ``fetchall``, iteration);
- ``with db.transaction():``: one transaction, committed durably when the block ends, rolled back if it raises.
  On SQLite it takes the write lock at once (``BEGIN IMMEDIATE``). On PostgreSQL a lost connection (the database
  restarted) is reopened, and the statement or transaction that found it lost starts again on the new one;
- ``db.backend``: ``"sqlite"`` or ``"postgresql"``, for the few statements that differ (the schema);
- ``db.close()``.

SQLite runs in WAL mode with ``synchronous=FULL`` (a commit is on disk before it returns) and refuses a disk where
WAL is impossible (a network file system). PostgreSQL commits durably by default (``synchronous_commit = on``).
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Database", "connect", "is_url", "redacted"]

_PG_SCHEMES = ("postgresql://", "postgres://")


def is_url(target: str | Path) -> bool:
    """Whether ``target`` names a PostgreSQL database (a URL) rather than an SQLite file."""
    return isinstance(target, str) and target.startswith(_PG_SCHEMES)


def redacted(target: str | Path) -> str:
    """``target`` as it may be logged: a URL's password replaced by ``***`` (``postgresql://u:***@host/db``)."""
    text = str(target)
    if not is_url(text):
        return text
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(text)
    if parts.password is None:
        return text
    netloc = parts.netloc.rsplit("@", 1)
    userinfo = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{userinfo}:***@{netloc[1]}"))


def connect(target: str | Path) -> Database:
    """The database at ``target``: an SQLite file path (created if missing) or a ``postgresql://`` URL."""
    if not isinstance(target, str | Path):
        raise TypeError(f"target: expected a file path or a postgresql:// URL, got {type(target).__name__}")
    if isinstance(target, str) and "://" in target and not is_url(target):
        scheme = target.split("://", 1)[0]
        raise ValueError(f"target: expected a file path or a postgresql:// URL, got a {scheme}:// URL")
    return _PostgreSQL(target) if is_url(target) else _SQLite(Path(target))


class Database(Protocol):
    """What the store uses; :func:`connect` returns an SQLite or a PostgreSQL connection, both of this shape."""

    backend: str

    def execute(self, sql: str, params: tuple = ()) -> Any: ...

    def transaction(self) -> AbstractContextManager: ...

    def close(self) -> None: ...


class _SQLite:
    backend = "sqlite"

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise RuntimeError(f"{path}: SQLite refused WAL mode (journal_mode is {mode}); use a local disk")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA busy_timeout=5000")

    def __repr__(self) -> str:
        return f"SQLite {self.path} (WAL)"

    def execute(self, sql: str, params: tuple = ()):
        return self._db.execute(sql, params)

    @contextmanager
    def transaction(self):
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()


class _PostgreSQL:
    backend = "postgresql"

    def __init__(self, url: str):
        try:
            import psycopg
        except ImportError as error:  # the hub's image or environment without hub/requirements.txt
            raise RuntimeError(f"a postgresql:// database needs psycopg (hub/requirements.txt): {error}") from None
        self._psycopg, self.url = psycopg, url
        self._db = psycopg.connect(url, autocommit=True)  # transactions: BEGIN and COMMIT below
        self._in_transaction = False

    def __repr__(self) -> str:
        info = self._db.info
        return f"PostgreSQL {info.dbname} on {info.host}:{info.port}"

    def _connection(self):
        if self._db.closed or self._db.broken:
            self._db = self._psycopg.connect(self.url, autocommit=True)
        return self._db

    def _once_more_if_reconnected(self, action):
        """``action(connection)``; if the connection turns out lost (the server restarted since the last request),
        once more on a new one: safe only where nothing of a transaction has run yet."""
        connection = self._connection()
        try:
            return action(connection)
        except self._psycopg.OperationalError:
            if not connection.broken:
                raise
        return action(self._connection())

    def execute(self, sql: str, params: tuple = ()):
        sql = sql.replace("%", "%%").replace("?", "%s")
        if self._in_transaction:
            return self._db.execute(sql, params)
        return self._once_more_if_reconnected(lambda connection: connection.execute(sql, params))

    @contextmanager
    def transaction(self):
        self._once_more_if_reconnected(lambda connection: connection.execute("BEGIN"))
        self._in_transaction = True
        try:
            yield self
        except BaseException:
            if not self._db.broken:
                self._db.execute("ROLLBACK")
            raise
        finally:
            self._in_transaction = False
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()
