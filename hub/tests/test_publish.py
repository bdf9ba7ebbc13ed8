"""What ``make publish`` puts in the student edition: no file of the generator's own (scripts/workspace.py)."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
from publish_student_edition import build_tree, commit_tree  # noqa: E402


def test_the_edition_has_no_lock_file_and_a_second_publish_commits_nothing(tmp_path):
    files = build_tree(tmp_path / "one")
    hidden = [name for name in files if any(part.startswith(".") for part in name.split("/"))]
    assert hidden == []  # notebooks/.workspace.lock (a process id) and the generator's manifests stay out
    bare = tmp_path / "edition.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    first, _ = commit_tree(tmp_path / "one", bare, "student", "version 1")
    build_tree(tmp_path / "two")  # another process: another process id in a lock file, had it been kept
    second, changed = commit_tree(tmp_path / "two", bare, "student", "version 1 again")
    assert (second, changed) == (first, False)
