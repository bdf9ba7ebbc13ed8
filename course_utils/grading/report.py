"""The class report as one self-contained HTML page: students x exercises, coloured by status.

Every cell shows a symbol and the status in words, so the page reads without colour (printed,
or by a colour-blind reader); its ``title`` holds the detail. Below the students: how many passed
each exercise, and the most common misconception per exercise. Then the notebook-level
problems, every entry of the submissions folder that was not graded (with why), tampering flagged per notebook, and
every result that needs a look (wrong, crashed, timed out, missing), with its detail. Above the table: whether the
notebooks ran in a sandbox (said plainly when not), and a warning that lists student names that look alike (the
same letters in another script, another Unicode form, another case, invisible characters or outer spaces).
No script, no external resource: it opens offline, from disk. Everything that comes from a student (names, error
messages) is escaped.

Introduced for instructors in docs/instructor_guide.md (issue 15); written by
:func:`course_utils.grading.grade`; the live report of ``hub/`` renders it too.
"""

from __future__ import annotations

from collections import Counter
from html import escape

__all__ = ["STATUS_STYLE", "render_html"]

# status -> (symbol, words, background colour)
STATUS_STYLE = {
    "passed": ("✔", "passed", "#b7e4c7"),
    "wrong": ("✘", "wrong", "#f4a3a3"),
    "crashed": ("!", "crashed", "#e76f51"),
    "not_attempted": ("…", "not attempted", "#e9ecef"),
    "timed_out": ("◔", "timed out", "#cdb4db"),
    "missing": ("?", "missing", "#ffe066"),
    "skipped": ("⤼", "skipped by the notebook", "#ffd8a8"),
}
NOT_SUBMITTED = ("—", "not submitted", "#ffffff")

_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #212529; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #adb5bd; padding: 0.25em 0.5em; font-size: 0.9em; }
thead th { background: #f1f3f5; }
td.cell { white-space: nowrap; text-align: left; }
tfoot th, tfoot td { background: #f8f9fa; font-weight: normal; }
.legend span { display: inline-block; margin-right: 1em; padding: 0.1em 0.4em; border: 1px solid #adb5bd; }
"""


def _cell(status: str | None, detail: str = "", attrs: str = "") -> str:
    symbol, words, colour = STATUS_STYLE[status] if status else NOT_SUBMITTED
    key = status or "not_submitted"
    if detail.startswith("TAMPERING"):  # flagged by the grader (course_utils.grading): marked in the grid too
        attrs += ' data-tampering="true"'
        symbol = f"⚑ {symbol}"
    return (
        f'<td class="cell {key}" data-status="{key}"{attrs} style="background:{colour}" '
        f'title="{escape(detail)}">{symbol} {words}</td>'
    )


def _run_notes(run) -> list:
    """How the notebooks were isolated, and anything wrong with the run itself (for :func:`render_html`)."""
    notes = []
    line = getattr(run, "sandbox", "")
    if line:
        sandboxed = not line.startswith("NOT SANDBOXED")
        style = "" if sandboxed else ' style="background:#ffe066;padding:0.5em;border:2px solid #e76f51"'
        notes.append(f'<p id="sandbox" data-sandboxed="{str(sandboxed).lower()}"{style}>Sandbox: {escape(line)}.</p>')
    changed = getattr(run, "course_changed", [])
    if changed:
        notes.append(
            '<p id="course-changed" style="background:#e76f51;padding:0.5em">The course tree changed during this run '
            f"({escape(', '.join(changed[:10]))}): do not trust this report; restore the course and grade again.</p>"
        )
    lookalikes = getattr(run, "lookalikes", [])
    if lookalikes:
        groups = "; ".join(", ".join(ascii(name) for name in group) for group in lookalikes)
        notes.append(
            '<p id="lookalikes" style="background:#ffe066;padding:0.5em;border:2px solid #e76f51">Warning: student '
            f"names that look alike (one student twice, or someone posing as another?): {escape(groups)}.</p>"
        )
    forged = getattr(run, "forged", 0)
    if forged:
        notes.append(
            f'<p id="forged">{forged} cache entries failed their signature check and were ignored (graded again).</p>'
        )
    return notes


def render_html(run) -> str:
    """The report page for a :class:`course_utils.grading.GradeRun` (its records, problems and registry)."""
    lessons = sorted({r.lesson for r in run.records})
    columns = [(lesson, ex) for lesson in lessons for ex in run.registry.get(lesson, [])]
    students = sorted({r.student for r in run.records} | {p[0] for p in run.problems if p[0]})
    by_key = {(r.student, r.exercise): r for r in run.records}

    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>Class report</title>',
        f"<style>{_CSS}</style></head><body>",
        "<h1>Class report</h1>",
        f"<p>{len(students)} students, {len(run.records)} exercise results from {run.ran + run.cached} notebooks.</p>",
        *_run_notes(run),
        '<p class="legend">'
        + "".join(f'<span style="background:{c}">{s} {w}</span>' for s, w, c in [*STATUS_STYLE.values(), NOT_SUBMITTED])
        + "<span>⚑ tampering flagged (see below)</span></p>",
        '<div style="overflow-x:auto"><table id="grades"><thead><tr><th rowspan="2">student</th>',
    ]
    for lesson in lessons:
        parts.append(f'<th colspan="{len(run.registry.get(lesson, []))}">lesson {escape(lesson)}</th>')
    parts.append("</tr><tr>")
    for _, ex in columns:
        short = ex.id.split(".", 1)[-1]  # the lesson is in the header row above
        parts.append(
            f'<th data-exercise="{escape(ex.id)}" title="{escape(ex.id)}: {escape(ex.title)}">{escape(short)}</th>'
        )
    parts.append("</tr></thead><tbody>")
    for student in students:
        parts.append(f'<tr data-student="{escape(student)}"><th>{escape(student)}</th>')
        for _, ex in columns:
            record = by_key.get((student, ex.id))
            attrs = f' data-exercise="{escape(ex.id)}"'
            parts.append(_cell(record.status if record else None, record.detail if record else "", attrs))
        parts.append("</tr>")
    parts.append('</tbody><tfoot><tr class="passed-count"><th>passed</th>')
    for _, ex in columns:
        rows = [r for r in run.records if r.exercise == ex.id]
        passed = sum(r.status == "passed" for r in rows)
        parts.append(f'<td data-exercise="{escape(ex.id)}" data-passed="{passed}">{passed} of {len(rows)}</td>')
    parts.append('</tr><tr class="misconception"><th>most common misconception</th>')
    for _, ex in columns:
        counts = Counter(r.misconception for r in run.records if r.exercise == ex.id and r.misconception)
        if counts:
            name, n = min(counts.items(), key=lambda item: (-item[1], item[0]))  # most frequent, then by name
            parts.append(
                f'<td data-exercise="{escape(ex.id)}" data-misconception="{escape(name)}">{escape(name)} ({n})</td>'
            )
        else:
            parts.append(f'<td data-exercise="{escape(ex.id)}">—</td>')
    parts.append("</tr></tfoot></table></div>")

    tampering = getattr(run, "tampering", [])
    parts.append("<h2>Tampering</h2>")
    if tampering:
        parts.append(
            '<table id="tampering"><thead><tr><th>student</th><th>notebook</th><th>flagged</th></tr></thead><tbody>'
        )
        for student, name, flag in tampering:
            parts.append(f"<tr><td>{escape(student)}</td><td>{escape(name)}</td><td>{escape(flag)}</td></tr>")
        parts.append("</tbody></table>")
    else:
        parts.append("<p>None detected.</p>")

    parts.append("<h2>Notebook problems and entries not graded</h2>")
    if run.problems:
        parts.append(
            '<table id="problems"><thead><tr><th>student</th><th>notebook</th><th>problem</th></tr></thead><tbody>'
        )
        for student, name, note in run.problems:
            parts.append(f"<tr><td>{escape(student)}</td><td>{escape(name)}</td><td>{escape(note)}</td></tr>")
        parts.append("</tbody></table>")
    else:
        parts.append("<p>None.</p>")

    parts.append("<h2>Results that need a look (wrong, crashed, timed out, missing)</h2>")
    failing = [r for r in run.records if r.status not in ("passed", "not_attempted")]
    if failing:
        parts.append(
            '<table id="details"><thead><tr><th>student</th><th>exercise</th><th>status</th><th>detail</th></tr>'
            "</thead><tbody>"
        )
        for r in failing:
            symbol, words, _ = STATUS_STYLE[r.status]
            parts.append(
                f"<tr><td>{escape(r.student)}</td><td>{escape(r.exercise)}</td>"
                f"<td>{symbol} {words}</td><td>{escape(r.detail)}</td></tr>"
            )
        parts.append("</tbody></table>")
    else:
        parts.append("<p>None.</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
