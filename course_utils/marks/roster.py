"""The roster: the students enrolled in the course, from a CSV file.

One row per student; the header names the columns. ``username`` (the student's JupyterHub name, the name their
submissions and records come under) is required; the others are optional and only feed the LMS exports
(:mod:`course_utils.marks.lms`): ``name`` (as "Last, First" or "First Last"), ``first_name``, ``last_name``,
``email``, ``sis_id`` (the institution's student number), ``canvas_id`` (Canvas's user id), ``sis_login_id``,
``section``. For example::

    username,name,email,sis_id,section
    alice,"Liddell, Alice",alice@example.edu,1001,A

Or the hub's users (:func:`from_hub`): every user but the hub's admins and the members of the instructors'
group, by their hub name only (so the LMS files identify them by ``username``).

Introduced for instructors in docs/marks.md.
"""

from __future__ import annotations

import csv
import io
import json
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = ["COLUMNS", "RosterError", "Student", "from_hub", "from_hub_users", "load", "parse"]

COLUMNS = ("username", "name", "first_name", "last_name", "email", "sis_id", "canvas_id", "sis_login_id", "section")
MAX_BYTES = 10 * 2**20


class RosterError(ValueError):
    """A roster that cannot be used; the message names the file, the row and the column."""


@dataclass(frozen=True)
class Student:
    """One enrolled student (every field but ``username`` may be empty)."""

    username: str
    name: str = ""
    first_name: str = ""
    last_name: str = ""
    email: str = ""
    sis_id: str = ""
    canvas_id: str = ""
    sis_login_id: str = ""
    section: str = ""

    @property
    def sortable_name(self) -> str:
        """ "Last, First" (Canvas's Student column), from the columns that are there."""
        first, last = self.split_name()
        return ", ".join(part for part in (last, first) if part) or self.username

    def split_name(self) -> tuple[str, str]:
        """(first name, last name), from ``first_name``/``last_name`` or else ``name``."""
        if self.first_name or self.last_name:
            return self.first_name, self.last_name
        if "," in self.name:
            last, first = (part.strip() for part in self.name.split(",", 1))
            return first, last
        first, _, last = self.name.strip().rpartition(" ")
        return (first, last) if first else (last, "")


def parse(text: str, *, source: str = "roster.csv") -> list[Student]:
    """The students of a roster CSV ``text``, in file order; :class:`RosterError` names what is wrong."""
    if not isinstance(text, str):
        raise TypeError(f"text: expected the roster's CSV text (str), got {type(text).__name__}")
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    header = [column.strip() for column in reader.fieldnames or []]
    if "username" not in header:
        raise RosterError(f"{source}: header: expected a 'username' column (the hub name), got {header!r:.200}")
    unknown = [column for column in header if column not in COLUMNS]
    if unknown:
        raise RosterError(f"{source}: header: unknown column {unknown[0]!r} (known: {', '.join(COLUMNS)})")
    reader.fieldnames = header
    students, seen = [], {}
    for line, row in enumerate(reader, start=2):
        values = {key: (value or "").strip() for key, value in row.items() if key in COLUMNS}
        username = values.get("username", "")
        if not username:
            raise RosterError(f"{source}: row {line}: username: expected a hub name, got an empty cell")
        if username in seen:
            raise RosterError(f"{source}: row {line}: username: {username!r} is already on row {seen[username]}")
        seen[username] = line
        students.append(Student(**values))
    return students


def load(path) -> list[Student]:
    """Read the roster CSV at ``path``."""
    if not isinstance(path, str | Path):
        raise TypeError(f"path: expected the roster's path (str or Path), got {type(path).__name__}")
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise RosterError(f"{path}: expected a roster of at most {MAX_BYTES} bytes, got {path.stat().st_size}")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RosterError(f"{path}: cannot read the roster: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise RosterError(f"{path}: expected UTF-8 text, got a byte that is not ({exc.reason})") from None
    return parse(text, source=path.name)


def from_hub_users(users, *, instructor_group: str = "instructors") -> list[Student]:
    """The students among the hub's user models (``GET /hub/api/users``): not admins, not in ``instructor_group``."""
    if not isinstance(users, list):
        raise TypeError(f"users: expected the hub's list of user models, got {type(users).__name__}")
    students = []
    for user in users:
        if not isinstance(user, dict) or not isinstance(user.get("name"), str):
            raise RosterError(f"users: expected user models with a 'name', got {user!r:.80}")
        if user.get("admin") or instructor_group in (user.get("groups") or []):
            continue
        students.append(Student(user["name"]))
    return sorted(students, key=lambda student: student.username)


def from_hub(
    api_url: str, token: str, *, instructor_group: str = "instructors", timeout: float = 30.0
) -> list[Student]:
    """The hub's students, read from its REST API at ``api_url`` (``https://hub.example.edu/hub/api``) with an admin's
    ``token`` (scopes ``list:users``, ``read:users``), page by page."""
    if not isinstance(api_url, str) or not api_url.startswith(("http://", "https://")):
        raise ValueError(f"api_url: expected the hub's API URL (https://hub.example.edu/hub/api), got {api_url!r:.80}")
    users, offset = [], 0
    while True:
        request = urllib.request.Request(
            f"{api_url.rstrip('/')}/users?offset={offset}&limit=200",
            headers={"Authorization": f"token {token}", "Accept": "application/jupyterhub-pagination+json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            page = json.loads(response.read())
        if isinstance(page, list):  # a hub without pagination answers every user at once
            users += page
            break
        users += page.get("items", [])
        following = (page.get("_pagination") or {}).get("next")
        if not following:
            break
        offset = int(following["offset"])
    return from_hub_users(users, instructor_group=instructor_group)
