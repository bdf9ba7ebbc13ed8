"""A real PostgreSQL server for the store's tests: its own cluster in a temporary folder, a unix socket only.

``initdb`` and ``pg_ctl`` come from PATH or Debian's ``postgresql`` package (``/usr/lib/postgresql/*/bin``); .ci/run
installs it where it is missing. PostgreSQL refuses to run as root, so as root the server runs as the user
``postgres`` (Debian's package makes it) or ``nobody``. The server listens on no TCP port at all
(``listen_addresses=''``), only on a socket in its folder, and is stopped and deleted at the end.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote


def binaries() -> Path | None:
    """The folder of PostgreSQL's server programs, or None when PostgreSQL is not installed."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[-3]))
    return Path(versions[-1]).parent if versions else None


class Server:
    """``start()`` a cluster; ``url(name)`` makes a database and gives its URL; ``restart()``; ``stop()``."""

    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="class-report-pg-"))
        self.data, self.socket = self.root / "data", self.root / "socket"
        self.socket.mkdir()
        self.user = None
        if os.getuid() == 0:  # initdb and postgres refuse root
            names = {entry.pw_name for entry in pwd.getpwall()}
            self.user = "postgres" if "postgres" in names else "nobody"
            record = pwd.getpwnam(self.user)
            for path in (self.root, self.socket):
                os.chown(path, record.pw_uid, record.pw_gid)
        self.databases = 0

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.bindir / program), *args]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode:
            log = (self.root / "server.log").read_text(errors="replace") if (self.root / "server.log").exists() else ""
            raise RuntimeError(f"{program} {' '.join(args)}: exit {done.returncode}\n{done.stdout}{done.stderr}{log}")

    def start(self) -> None:
        if not self.data.exists():
            self._run("initdb", "-D", str(self.data), "-U", "course", "--auth=trust", "--no-sync", "-E", "UTF8")
        options = f"-c listen_addresses='' -k {self.socket} -c fsync=on -c synchronous_commit=on"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self, mode: str = "fast") -> None:
        self.stop(mode)
        self.start()

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://course@/{dbname}?host={quote(str(self.socket), safe='')}"

    def new_database(self) -> str:
        """A new empty database; its URL."""
        import psycopg

        self.databases += 1
        name = f"records_{self.databases}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def close(self) -> None:
        try:
            self.stop("immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
