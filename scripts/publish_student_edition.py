"""Publish the student edition of the course as a git branch that nbgitpuller pulls into students' hub homes.

Usage (``make publish``, ``make pull-link``; standard library and git only)::

    python3 scripts/publish_student_edition.py build                      # commit it to the branch `student`
    python3 scripts/publish_student_edition.py build --into /srv/course.git --branch student
    python3 scripts/publish_student_edition.py build --out /tmp/edition   # only write the tree, no commit
    python3 scripts/publish_student_edition.py link --hub https://hub.example.edu \\
        --repo https://github.com/ORG/attention-course --branch student --lesson 01

``build`` makes the tree with the course's own generator (``scripts/workspace.py ... sync``, the student edition
``make workspace`` writes: exercises as stubs, hidden lines removed, outputs cleared) and lays it out as::

    README.md                  what students get, and that their edits are kept
    requirements.txt           the course's exact pins
    binder/environment.yml     the hub image, for repo2docker: Python 3.11 and binder/requirements.txt
    binder/requirements.txt    the course's pins and the hub's (hub/requirements.txt: jupyterhub, nbgitpuller)
    notebooks/NN_*.ipynb       the lessons, student edition
    notebooks/course_utils/    the package, imported from the lessons' folder (a kernel starts there)
    notebooks/data/            its data, beside it (course_utils.data looks next to the package)

and commits it on top of the branch's previous commit (nothing is committed when nothing changed), so a pull
always fast-forwards or merges. The working tree, the index and the checked-out branch are not touched. Push the
branch where the hub can read it (``git push origin student``).

``link`` prints the nbgitpuller link that clones or updates the edition in the student's home on the hub and opens
a lesson in JupyterLab: the same link the website's JupyterHub launch button makes (site_src/conf.py).

What a second pull does (nbgitpuller's rules; hub/tests/test_pull_rules.py checks each against this course's
``make workspace`` rules): a new lesson arrives; a lesson the student never edited is updated; a lesson they edited
keeps every edit (where the course changed the same lines, the student's lines win; other changes of the course
are merged in); a deleted lesson comes back. See docs/hub.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))
import edition_withhold  # noqa: E402  (scripts/edition_withhold.py, beside this file)
import record_checks  # noqa: E402  (scripts/record_checks.py, beside this file)

__all__ = ["REPO", "build_tree", "commit_tree", "main", "pull_link"]

REPO = Path(__file__).resolve().parents[1]
BRANCH = "student"
LESSONS = "notebooks"
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")

_README = """# {title}: student edition

Your own copy of the course, pulled by a link your instructor gave you. Open `notebooks/00_start_here.ipynb`.

- Write your code where a lesson says `# your code here` (or replace `raise NotImplementedError`), then run the
  check cell below it: it tells you what is right, what is wrong and why.
- **Your edits are kept.** Opening the link again brings new and updated lessons; a lesson you edited keeps every
  line you wrote (where the course changed the same lines, yours win). Delete a lesson and open the link again to
  get a fresh copy of it.
- On the course's JupyterHub, each check, prediction and hint is also sent to your instructor's class report,
  under your hub login. Nothing else leaves your server.

Made by `scripts/publish_student_edition.py` from commit {commit} of the course.
"""

_ENVIRONMENT = """# The hub image for this edition: repo2docker builds it from this folder (docs/hub.md).
name: attention-course
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - pip:
      - -r requirements.txt
"""


def _git(*args: str, cwd: Path, env: dict | None = None) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {result.stderr.strip()}")
    return result.stdout.strip()


def _requirements(repo: Path) -> str:
    lines = ["# The course's exact pins (requirements.txt), then the hub's (hub/requirements.txt)."]
    for name in ("requirements.txt", "hub/requirements.txt"):
        lines += [f"# --- {name}", (repo / name).read_text(encoding="utf-8").rstrip()]
    return "\n".join(lines) + "\n"


def build_tree(out: Path, repo: Path = REPO, *, as_of=None, course_file=None) -> list[str]:
    """Write the student edition into the empty or missing folder ``out``; return its files, relative, sorted.

    ``as_of`` ("now" or an ISO time with a time zone): withhold the library functions that answer exercises of
    lessons not yet due at that time in ``course_file`` (default: course.toml), as scripts/edition_withhold.py says;
    None: withhold nothing."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"out: expected an empty or missing folder but {out} has files")
    lessons = out / LESSONS
    command = [
        sys.executable,
        str(repo / "scripts" / "workspace.py"),
        "--notebooks",
        str(repo / LESSONS),
        "--workspace",
        str(lessons),
        "sync",
    ]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"the student edition generator failed: {' '.join(command)}\n{result.stderr}")
    # the generator's record of a student's copies (.*.json) and its lock file (scripts/workspace.py's LOCK, which
    # holds the process id that wrote it, so it would change at every publish): not part of the edition
    for private in [*lessons.glob(".*.json"), lessons / ".workspace.lock"]:
        private.unlink(missing_ok=True)
    shutil.copytree(repo / "course_utils", lessons / "course_utils", ignore=_IGNORE)
    shutil.copytree(repo / "data", lessons / "data", ignore=_IGNORE)
    record_checks.publish(lessons / "course_utils")  # the lessons' exercises modules become recorded data (issue 29)
    if as_of is not None:  # the library's answers of lessons not yet due (issue 29), after the recording
        edition_withhold.withhold(lessons, repo, as_of, course_file)
    shutil.copy2(repo / "requirements.txt", out / "requirements.txt")
    (out / "binder").mkdir()
    (out / "binder" / "environment.yml").write_text(_ENVIRONMENT, encoding="utf-8")
    (out / "binder" / "requirements.txt").write_text(_requirements(repo), encoding="utf-8")
    try:
        commit = _git("rev-parse", "--short=12", "HEAD", cwd=repo)
    except RuntimeError:
        commit = "(not a git checkout)"
    title = "Attention, from NumPy to a trained seq2seq model"
    (out / "README.md").write_text(_README.format(title=title, commit=commit), encoding="utf-8")
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())


def commit_tree(tree: Path, into: Path, branch: str, message: str) -> tuple[str, bool]:
    """Commit the folder ``tree`` as the next commit of ``branch`` in the git repository ``into``.

    Returns (commit id, whether a new commit was made); none is made when the tree equals the branch's.
    """
    git_dir = _git("rev-parse", "--absolute-git-dir", cwd=into)
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index"), "GIT_DIR": git_dir, "GIT_WORK_TREE": str(tree)}
        _git("add", "--all", "--force", ".", cwd=tree, env=env)
        tree_id = _git("write-tree", cwd=tree, env=env)
        try:
            parent = _git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}", cwd=into)
        except RuntimeError:
            parent = ""
        if parent and _git("rev-parse", f"{parent}^{{tree}}", cwd=into) == tree_id:
            return parent, False
        identity = {}
        for role in ("AUTHOR", "COMMITTER"):  # a machine with no git identity can still publish
            identity.setdefault(f"GIT_{role}_NAME", os.environ.get(f"GIT_{role}_NAME") or _config(into, "user.name"))
            identity.setdefault(
                f"GIT_{role}_EMAIL",
                os.environ.get(f"GIT_{role}_EMAIL") or _config(into, "user.email", "course@localhost"),
            )
        args = ["commit-tree", tree_id, "-m", message] + (["-p", parent] if parent else [])
        commit = _git(*args, cwd=into, env={**env, **identity})
        _git("update-ref", f"refs/heads/{branch}", commit, parent or "0" * 40, cwd=into)
    return commit, True


def _config(repo: Path, key: str, default: str = "course publisher") -> str:
    try:
        return _git("config", key, cwd=repo) or default
    except RuntimeError:
        return default


def pull_link(
    hub: str,
    repo: str,
    *,
    branch: str = BRANCH,
    lesson: str = "00",
    interface: str = "lab",
    notebooks: Path | None = None,
) -> str:
    """The nbgitpuller link that pulls ``branch`` of ``repo`` into the student's home and opens ``lesson``.

    The folder is named after the repository (its last path part), as nbgitpuller and sphinx-book-theme's
    JupyterHub launch button name it.
    """
    if not hub.startswith(("http://", "https://")):
        raise ValueError(f"hub: expected the hub's address, like https://hub.example.edu, but got {hub!r}")
    if not repo or "?" in repo:
        raise ValueError(f"repo: expected the git URL students' servers clone from but got {repo!r}")
    folder = repo.rstrip("/").split("/")[-1]
    found = sorted(Path(notebooks or REPO / LESSONS).glob(f"{lesson.zfill(2)}_*.ipynb"))
    if len(found) != 1:
        raise ValueError(f"lesson: expected a lesson number like 00 or 01 but no notebooks/{lesson}_*.ipynb exists")
    prefixes = {"lab": "lab/tree", "classic": "tree"}
    if interface not in prefixes:
        raise ValueError(f"interface: expected 'lab' or 'classic' but got {interface!r}")
    query = {"repo": repo, "urlpath": f"{prefixes[interface]}/{folder}/{LESSONS}/{found[0].name}", "branch": branch}
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{urlencode(query, safe='/')}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="build the student edition and commit it to a branch")
    build.add_argument("--branch", default=BRANCH, help=f"the branch to commit to (default: {BRANCH})")
    build.add_argument("--into", type=Path, default=REPO, help="the git repository to commit into (default: this one)")
    build.add_argument("--out", type=Path, help="write the tree into this folder instead of committing it")
    build.add_argument(
        "--as-of",
        default="never",
        help="withhold the library's answers of lessons not due by then "
        "('now' or ISO 8601 with a time zone; default: never, withhold nothing: docs/hub.md says why)",
    )
    build.add_argument("--course-file", type=Path, help="the due dates (default: course.toml; none: all withheld)")
    link = commands.add_parser("link", help="print the nbgitpuller link for a hub")
    link.add_argument("--hub", required=True, help="the hub's address, e.g. https://hub.example.edu")
    link.add_argument("--repo", required=True, help="the git URL of the published repository")
    link.add_argument("--branch", default=BRANCH, help=f"the published branch (default: {BRANCH})")
    link.add_argument("--lesson", default="00", help="the lesson to open (default: 00)")
    link.add_argument("--interface", default="lab", choices=("lab", "classic"))
    args = parser.parse_args(argv)
    as_of = None if args.command != "build" or args.as_of == "never" else args.as_of
    try:
        if args.command == "link":
            print(pull_link(args.hub, args.repo, branch=args.branch, lesson=args.lesson, interface=args.interface))
            return 0
        if args.out:
            files = build_tree(args.out, as_of=as_of, course_file=args.course_file)
            print(f"student edition written to {args.out}: {len(files)} files")
            return 0
        with tempfile.TemporaryDirectory() as tmp:
            files = build_tree(Path(tmp) / "edition", as_of=as_of, course_file=args.course_file)
            source = _git("rev-parse", "HEAD", cwd=REPO)
            dirty = " (with uncommitted changes)" if _git("status", "--porcelain", cwd=REPO) else ""
            message = (
                f"Student edition of {source[:12]}{dirty}\n\n"
                f"Made by scripts/publish_student_edition.py from commit {source}{dirty}: {len(files)} files."
            )
            commit, made = commit_tree(Path(tmp) / "edition", args.into, args.branch, message)
        state = "committed" if made else "unchanged, still"
        print(f"student edition ({len(files)} files): {state} {args.branch} = {commit[:12]} in {args.into}")
        if made:
            print(f"next: git -C {args.into} push <remote> {args.branch}; then make pull-link HUB=... REPO=...")
    except (ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
