"""The live report's pages: a student's own (the class report of ``make grade``), and the instructor's index and
one page per lesson (:func:`render_index`, :func:`render_lesson`, :func:`lesson_csv`), each small at class size.

:func:`render_class_report` is the one place that knows how the course renders its class report. Today it builds
a ``course_utils.grading.GradeRun`` of each student's newest check per exercise and calls
``course_utils.grading.report.render_html``, the page ``make grade`` writes.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import io
from html import escape

__all__ = ["CSV_COLUMNS", "SORTS", "lesson_csv", "render_class_report", "render_index", "render_lesson"]

REFRESH_S = 30


@functools.cache
def _course_registry() -> dict | None:
    """Lesson -> exercises, from the course's registry; None where it cannot load (a hub image without numpy)."""
    from course_utils import grading

    try:
        return grading.load_registry()
    except Exception:
        return None


def _registry(seen: dict) -> dict:
    """The course's registry, with any exercise it does not know (a newer lesson) added in the order seen."""
    from course_utils import grading

    registry = {lesson: list(exercises) for lesson, exercises in (_course_registry() or {}).items()}
    for lesson, ids in seen.items():
        known = {exercise.id for exercise in registry.setdefault(lesson, [])}
        registry[lesson] += [grading.Exercise(exercise_id) for exercise_id in ids if exercise_id not in known]
    return registry


def render_class_report(records_by_student: dict[str, list[dict]], *, live_note: str = "") -> str:
    """The report page for ``{student: [record, ...]}`` (records oldest first; the newest check of an exercise counts).

    ``live_note`` is one line of text shown under the title (for example, when it was rendered); the page reloads
    itself every ``REFRESH_S`` seconds (a meta refresh: the page keeps no script).
    """
    from course_utils import grading
    from course_utils.grading import report as grade_report

    newest: dict = {}
    notebooks = set()
    seen: dict = {}
    for student, records in records_by_student.items():
        for record in records:
            if record.get("event", "check") != "check":
                continue  # the grader's renderer will show predictions and hints; today's page shows checks
            newest[(student, record["exercise"])] = record
            notebooks.add((student, record["lesson"]))
            seen.setdefault(record["lesson"], {})[record["exercise"]] = None
    rows = [
        grading.Record(student, r["lesson"], exercise, r["status"], r.get("detail") or "", r.get("misconception"))
        for (student, exercise), r in sorted(newest.items())
    ]
    run = grading.GradeRun(records=rows, problems=[], registry=_registry(seen), ran=len(notebooks))
    page = grade_report.render_html(run)
    head = f'<meta http-equiv="refresh" content="{REFRESH_S}">'
    page = page.replace("<head>", f"<head>{head}", 1)
    if live_note:
        page = page.replace("</h1>", f'</h1>\n<p class="live">{escape(live_note)}</p>', 1)
    return page


# ------------------------------------------------------------------------------------------------ live pages
# The instructor's pages at class size (issue 29): an index of the lessons, then one page per lesson, each from
# the service's in-memory view (class_report.live) and the course's registry (class_report.records). Rendered here
# without the grader's renderer: small, no script (sorting is a link), every student's text escaped.

_STYLE = {  # status -> (symbol, words)
    "passed": ("✔", "passed"),
    "wrong": ("✘", "wrong"),
    "crashed": ("!", "crashed"),
    "not_attempted": ("…", "not attempted"),
    "timed_out": ("◔", "timed out"),
    "not_submitted": ("—", "not yet"),
}
_LIVE_CSS = (
    "body{font-family:system-ui,sans-serif;margin:1.2em;color:#212529}"
    "table{border-collapse:collapse;margin:.4em 0 1.2em}th,td{border:1px solid #adb5bd;padding:.15em .4em;font-size:.85em}"
    "thead th{background:#f1f3f5}td.cell{white-space:nowrap}.passed{background:#b7e4c7}.wrong{background:#f4a3a3}"
    ".crashed{background:#e76f51}.not_attempted{background:#e9ecef}.timed_out{background:#cdb4db}"
    "nav a,nav b{margin-right:.6em}.warn{background:#fff3bf;padding:.3em}"
)
SORTS = ("name", "passed", "stuck")


def _breakable(name: str) -> str:
    """An id, escaped, that may wrap after each underscore (a column's header no wider than its longest part)."""
    return escape(name).replace("_", "_<wbr>")


def _page(title: str, body: str, note: str) -> str:
    head = f'<meta charset="utf-8"><meta http-equiv="refresh" content="{REFRESH_S}"><title>{escape(title)}</title>'
    live = f'<p class="live">{escape(note)}</p>' if note else ""
    return f"<!DOCTYPE html><html><head>{head}<style>{_LIVE_CSS}</style></head><body><h1>{escape(title)}</h1>{live}{body}</body></html>"


def _nav(registry, current: str | None, base: str) -> str:
    base = escape(base)
    links = [f'<a href="{base}">all lessons</a>' if current else "<b>all lessons</b>"]
    for lesson in registry.exercises:
        links.append(f"<b>{lesson}</b>" if lesson == current else f'<a href="{base}lesson/{lesson}">{lesson}</a>')
    if current:
        links.append(f'<a href="{base}lesson/{current}.csv">CSV</a>')
    return f"<nav>{''.join(links)}</nav>"


def _top(counter: dict, n: int = 3) -> str:
    ranked = sorted(counter.items(), key=lambda item: (-item[1], item[0]))[:n]
    return ", ".join(f"{escape(name)} ({count})" for name, count in ranked) or "—"


def render_index(
    live, registry, *, base: str = "./", submitted: dict | None = None, refused_late: dict | None = None, note: str = ""
) -> str:
    """The instructor's first page: one row per lesson (students who sent something, passes, stuck, how many
    students submitted it: ``submitted``, lesson -> count, and the late submissions refused: ``refused_late``,
    lesson -> {student: attempts}), links."""
    submitted, refused_late = submitted or {}, refused_late or {}
    now = dt.datetime.now(dt.UTC)
    active: dict = {lesson: set() for lesson in registry.exercises}
    passes = dict.fromkeys(registry.exercises, 0)
    for student, records in live.newest.items():  # one pass over the class
        for lesson in {item[:2] for _, item in records}:
            if lesson in active:
                active[lesson].add(student)
        for (event, item), record in records.items():
            if event == "check" and record["status"] == "passed" and item[:2] in passes:
                passes[item[:2]] += 1
    stuck = dict.fromkeys(registry.exercises, 0)
    for _, exercise, _, _ in live.stuck(registry.exercise_ids, now):
        stuck[exercise[:2]] += 1
    rows = []
    for lesson, exercises in registry.exercises.items():
        rows.append(
            f'<tr><td><a href="{escape(base)}lesson/{lesson}">lesson {lesson}</a></td><td>{len(active[lesson])}</td>'
            f"<td>{passes[lesson]} of {len(active[lesson]) * len(exercises)}</td><td>{stuck[lesson]}</td>"
            f"<td>{submitted.get(lesson, 0)}</td><td>{_refused_cell(refused_late.get(lesson, {}))}</td></tr>"
        )
    refused = ""
    if live.refused:
        total = sum(live.refused.values())
        who = ", ".join(f"{escape(s)} ({n})" for s, n in sorted(live.refused.items(), key=lambda i: -i[1])[:10])
        refused = f'<p class="warn">Refused: {total} records naming an unregistered id, from {len(live.refused)} students: {who}</p>'
    table = (
        "<table><thead><tr><th>lesson</th><th>students</th><th>checks passed</th><th>stuck now</th><th>submitted</th>"
        "<th>refused (late)</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    return _page("Class report: lessons", _nav(registry, None, base) + refused + table, note)


def _refused_cell(by_student: dict) -> str:
    """'0', or 'N students (M tries): names' for a lesson's refused late submissions."""
    if not by_student:
        return "0"
    names = ", ".join(escape(name) for name in sorted(by_student)[:10]) + (" …" if len(by_student) > 10 else "")
    return f'<span class="warn">{len(by_student)} ({sum(by_student.values())} tries): {names}</span>'


def _lesson_rows(live, lesson_items) -> dict:
    """student -> {(event, item): record} restricted to one lesson's items (students with none are left out)."""
    out = {}
    for student, rows in live.newest.items():
        mine = {key: r for key, r in rows.items() if key[1] in lesson_items}
        if mine:
            out[student] = mine
    return out


def render_lesson(
    live, registry, lesson: str, *, sort: str = "name", now=None, base: str = "../", note: str = ""
) -> str:
    """One lesson's page: who is stuck now, each exercise's passes and top three misconceptions, each prediction's
    first-try accuracy, and the students' grid (sorted by ``sort``: name, passed or stuck)."""
    now = now or dt.datetime.now(dt.UTC)
    exercises = list(registry.exercises.get(lesson, ()))
    predictions = list(registry.predictions.get(lesson, ()))
    rows = _lesson_rows(live, set(exercises) | set(predictions))
    stuck = live.stuck(exercises, now)
    stuck_of = {}
    for student, _exercise, minutes, _ in stuck:
        stuck_of[student] = max(stuck_of.get(student, 0.0), minutes)

    parts = [_nav(registry, lesson, base)]
    by_exercise: dict = {}
    for student, exercise, minutes, _ in stuck:
        by_exercise.setdefault(exercise, []).append((student, minutes))
    rows_stuck = []
    for exercise in exercises:
        who = by_exercise.get(exercise)
        if not who:
            continue
        names = ", ".join(f"{escape(student)} ({minutes:.0f} min)" for student, minutes in who[:10])
        more = f", and {len(who) - 10} more" if len(who) > 10 else ""
        rows_stuck.append(f"<tr><td>{escape(exercise)}</td><td>{len(who)}</td><td>{names}{more}</td></tr>")
    stuck_table = (
        "<table><thead><tr><th>exercise</th><th>students</th><th>who, the longest first</th></tr></thead>"
        f"<tbody>{''.join(rows_stuck)}</tbody></table>"
        if rows_stuck
        else "<p>Nobody.</p>"
    )
    parts.append(
        f"<h2>Stuck now ({len(stuck)}): the same exercise not passing for {live.stuck_minutes:g} min or more</h2>"
        + stuck_table
    )
    head = "<tr><th>exercise</th><th>tried</th><th>passed</th><th>top misconceptions (students)</th></tr>"
    body = []
    for exercise in exercises:
        records = [r[("check", exercise)] for r in rows.values() if ("check", exercise) in r]
        named: dict = {}
        for r in records:
            if r["status"] != "passed" and r.get("misconception"):
                named[r["misconception"]] = named.get(r["misconception"], 0) + 1
        passed = sum(r["status"] == "passed" for r in records)
        body.append(
            f"<tr><td>{escape(exercise)}</td><td>{len(records)}</td><td>{passed}</td><td>{_top(named)}</td></tr>"
        )
    parts.append(f"<h2>Exercises</h2><table><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>")
    head = "<tr><th>prediction</th><th>first tries</th><th>right at the first try</th><th>top wrong ideas</th></tr>"
    body = []
    for prediction in predictions:
        firsts = [live.first_try[(s, prediction)] for s in rows if (s, prediction) in live.first_try]
        right = sum(status == "right" for status in firsts)
        share = f"{right} ({100 * right / len(firsts):.0f} %)" if firsts else "—"
        wrong: dict = {}
        for r in rows.values():
            known = r.get(("predict", prediction), {}).get("known_wrong")
            if known:
                wrong[known] = wrong.get(known, 0) + 1
        body.append(
            f"<tr><td>{escape(prediction)}</td><td>{len(firsts)}</td><td>{share}</td><td>{_top(wrong)}</td></tr>"
        )
    parts.append(f"<h2>Predictions</h2><table><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>")

    def passed_count(student):
        return sum(r["status"] == "passed" for (event, _), r in rows[student].items() if event == "check")

    sort = sort if sort in SORTS else "name"
    order = sorted(rows)
    if sort == "passed":
        order.sort(key=lambda s: -passed_count(s))
    elif sort == "stuck":
        order.sort(key=lambda s: -stuck_of.get(s, 0.0))
    links = " ".join(f"<b>{key}</b>" if key == sort else f'<a href="?sort={key}">{key}</a>' for key in SORTS)
    head = (
        "<tr><th>student</th><th>passed</th><th>predictions right at the first try</th>"
        + "".join(f"<th>{_breakable(e.split('.', 1)[1])}</th>" for e in exercises)
        + "</tr>"
    )
    body = []
    for student in order:
        mine = rows[student]
        firsts = sum(live.first_try.get((student, p)) == "right" for p in predictions)
        cells = []
        for exercise in exercises:
            record = mine.get(("check", exercise))
            status = record["status"] if record else "not_submitted"
            symbol, words = _STYLE.get(status, ("?", status))
            title = f' title="{escape(record["misconception"])}"' if record and record.get("misconception") else ""
            cells.append(
                f'<td class="cell {status}" data-status="{status}" data-exercise="{escape(exercise)}"{title}>{symbol} {words}</td>'
            )
        body.append(
            f'<tr data-student="{escape(student)}"><td>{escape(student)}</td><td>{passed_count(student)}/{len(exercises)}</td>'
            f"<td>{firsts}/{len(predictions)}</td>{''.join(cells)}</tr>"
        )
    parts.append(
        f"<h2>Students ({len(rows)}), sorted by {links}</h2><table><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"
    )
    return _page(f"Class report: lesson {lesson}", "".join(parts), note)


CSV_COLUMNS = ("student", "event", "item", "status", "misconception", "known_wrong", "attempt", "first_try", "received")


def lesson_csv(live, registry, lesson: str, students=None) -> str:
    """One lesson's newest records as CSV (every student's, or ``students``'), formula-looking cells neutralised."""
    from course_utils.marks.lms import safe_cell

    items = set(registry.exercises.get(lesson, ())) | set(registry.predictions.get(lesson, ()))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for student, rows in sorted(_lesson_rows(live, items).items()):
        if students is not None and student not in students:
            continue
        for (event, item), r in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            first = live.first_try.get((student, item), "") if event == "predict" else ""
            row = [student, event, item, r["status"], r.get("misconception") or "", r.get("known_wrong") or ""]
            writer.writerow([safe_cell(cell) for cell in [*row, r.get("attempt", ""), first, r["received"]]])
    return out.getvalue()
