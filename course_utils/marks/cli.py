"""``python -m course_utils.marks``: collect the submissions, then write the marks (``make collect``, ``make marks``).

::

    python -m course_utils.marks collect --course course.toml --out collected --from submissions_folder
    python -m course_utils.marks collect --course course.toml --out collected --service https://hub/services/class-report/
    make grade SUBMISSIONS=collected/submissions
    make grade SERVICE=https://hub/services/class-report/ TOKEN=...   # collect --service, then grade, in one command
    python -m course_utils.marks marks --course course.toml --collected collected [--roster roster.csv] --out marks
    python -m course_utils.marks lti --course course.toml --marks marks/marks.csv [--roster roster.csv] [--dry-run]

``collect --service`` asks the class-report service with an instructor's JupyterHub token (``--token`` or
``$JUPYTERHUB_API_TOKEN``) for every submission's receipt (``GET api/submissions``), downloads the one that counts
per student and lesson (``GET api/submissions/<id>``), and every student's records (``GET api/records``) into
``records.jsonl`` (the predictions' first tries). ``marks`` reads ``collected/submissions/grades.csv`` (``make
grade``'s), ``manifest.json``, ``records.jsonl`` and the roster, and writes ``marks.csv``, ``canvas.csv`` and
``moodle.csv``; it prints who never started, who has not submitted and the names not on the roster. ``lti``
sends that ``marks.csv`` to the LMS's gradebook over LTI 1.3 (:mod:`course_utils.marks.lti`, ``make lti-push``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.parse
import urllib.request
from pathlib import Path

from course_utils.marks import compute, course, folder, lms, lti, roster

__all__ = ["main"]

TIMEOUT_S = 30.0


class _Service:
    """The class-report service's submissions and records, read with an instructor's hub token."""

    def __init__(self, url: str, token: str):
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"--service: expected the service's http(s) URL, got {url!r}")
        if not token:
            raise ValueError(
                "--token: expected an instructor's JupyterHub API token (or $JUPYTERHUB_API_TOKEN), got none"
            )
        self.url, self.token = url.rstrip("/") + "/", token

    def get(self, path: str) -> bytes:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return response.read()

    def receipts(self) -> dict:
        listing = json.loads(self.get("api/submissions"))
        return {
            folder.Receipt(**{k: entry[k] for k in folder.Receipt.__dataclass_fields__}): entry["id"]
            for entry in listing["submissions"]
        }

    def records(self, students) -> list:
        out = []
        for student in sorted(students):
            data = json.loads(self.get("api/records?student=" + urllib.parse.quote(student, safe="")))
            out += [{**record, "student": student} for record in data.get("events", [])]
        return out


def _collect(args) -> int:
    marked = course.load(args.course)

    def late_days(receipt, due):
        return marked.late.late_days(receipt.time, due)

    records = []
    if args.service:
        service = _Service(args.service, args.token or os.environ.get("JUPYTERHUB_API_TOKEN", ""))
        ids = service.receipts()
        manifest = folder.export(
            ids, lambda r: service.get(f"api/submissions/{ids[r]}"), args.out, due=marked.due, late_days=late_days
        )
        students = {receipt.student for receipt in ids}
        for name in json.loads(service.get("api/report")).get("students", {}):
            students.add(name)
        records = service.records(students)
    else:
        found = dict(folder.receipts(args.from_folder))
        manifest = folder.export(found, lambda r: found[r].read_bytes(), args.out, due=marked.due, late_days=late_days)
    if records or args.service:
        with open(Path(args.out) / "records.jsonl", "w", encoding="utf-8") as f:
            for record in records:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
    entries = compute.read_manifest(manifest)
    print(f"collected {len(entries)} submissions into {Path(args.out) / 'submissions'}; manifest {manifest}")
    print(f"next: make grade SUBMISSIONS={Path(args.out) / 'submissions'}")
    return 0


def _marks(args) -> int:
    marked = course.load(args.course)
    collected = Path(args.collected) if args.collected else None
    grades_path = args.grades or (collected / "submissions" / "grades.csv" if collected else None)
    if grades_path is None or not Path(grades_path).is_file():
        print(f"marks: expected make grade's grades.csv, got none at {grades_path}", file=sys.stderr)
        return 2
    manifest = None
    if collected and (collected / "manifest.json").is_file():
        manifest = compute.read_manifest(collected / "manifest.json")
    records = (
        compute.read_records(collected / "records.jsonl")
        if collected and (collected / "records.jsonl").is_file()
        else []
    )
    people = roster.load(args.roster) if args.roster else None
    if args.roster_hub:
        token = args.token or os.environ.get("JUPYTERHUB_API_TOKEN", "")
        people = roster.from_hub(args.roster_hub, token, instructor_group=args.instructor_group)
    result = compute.compute(
        marked,
        compute.course_registry(marked.lessons),
        compute.read_grades(grades_path),
        records=records,
        manifest=manifest,
        roster=people,
    )
    paths = lms.write(result, args.out, people)
    print(
        f"{len(result.students)} students, lessons {', '.join(result.lessons)}, out of {result.possible_total:g} points"
    )
    for name, path in paths.items():
        print(f"  {name}: {path}")
    shown = [
        f"{student.student} {exercise}"
        for student in result.students
        for mark in student.lessons.values()
        for exercise in mark.solutions
    ]
    if shown:
        cost = "no points" if marked.solution_shown == "no_points" else "flagged only"
        print(f"solution shown before the check passed ({len(shown)}, {cost}): {', '.join(shown)}")
    if people is not None:
        print(f"roster: {len(people)} students")
        print(f"never started ({len(result.never_started)}): {', '.join(result.never_started) or '-'}")
        for lesson, names in result.not_submitted.items():
            print(f"not submitted {lesson} ({len(names)}): {', '.join(names) or '-'}")
        if result.not_on_roster:
            print(
                f"WARNING: not on the roster ({len(result.not_on_roster)}): {', '.join(map(repr, result.not_on_roster))}"
            )
    return 0


def _lti(args) -> int:
    marked = course.load(args.course)
    people = roster.load(args.roster) if args.roster else None
    lti.push(marked, args.marks, roster=people, base=Path(args.course).resolve().parent, dry_run=args.dry_run)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_utils.marks", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    collect = commands.add_parser("collect", help="the submissions that count, in the folder make grade reads")
    collect.add_argument("--course", required=True, help="the course file (course.toml)")
    collect.add_argument(
        "--out", required=True, help="the folder to write (submissions/, manifest.json, records.jsonl)"
    )
    source = collect.add_mutually_exclusive_group(required=True)
    source.add_argument("--from", dest="from_folder", help="a submissions folder (COURSE_SUBMIT_DIR)")
    source.add_argument("--service", help="the class-report service's URL")
    collect.add_argument("--token", default="", help="an instructor's hub token (default: $JUPYTERHUB_API_TOKEN)")
    marks = commands.add_parser("marks", help="marks.csv, canvas.csv, moodle.csv")
    marks.add_argument("--course", required=True)
    marks.add_argument("--collected", help="the folder collect wrote (after make grade on its submissions/)")
    marks.add_argument("--grades", help="grades.csv (default: <collected>/submissions/grades.csv)")
    marks.add_argument("--roster", help="the roster CSV (username, name, email, sis_id, section, ...)")
    marks.add_argument("--roster-hub", help="instead: the hub's users, from its API (https://hub.example.edu/hub/api)")
    marks.add_argument(
        "--token", default="", help="for --roster-hub: an admin's hub token (default: $JUPYTERHUB_API_TOKEN)"
    )
    marks.add_argument("--instructor-group", default="instructors", help="for --roster-hub: the group left out")
    marks.add_argument("--out", required=True, help="the folder for the marks files")
    push = commands.add_parser("lti", help="send marks.csv to the LMS's gradebook over LTI 1.3 (AGS)")
    push.add_argument("--course", required=True, help="the course file, with its [lti] table")
    push.add_argument("--marks", required=True, help="make marks's marks.csv")
    push.add_argument("--roster", help="the roster CSV (emails or SIS ids, for lti.match = email or sis_id)")
    push.add_argument("--dry-run", action="store_true", help="print what would be sent; send no score")
    args = parser.parse_args(argv)
    try:
        return {"collect": _collect, "marks": _marks, "lti": _lti}[args.command](args)
    except (ValueError, OSError) as exc:
        print(f"{args.command}: {exc}", file=sys.stderr)
        return 2
