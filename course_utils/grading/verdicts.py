"""From what the runner handed back to each exercise's status: the grader's reading of one notebook's run.

Pure functions over the (signed, size-capped) result: nothing here starts a process. The cost is linear in the
result's size, which the runner and :data:`~course_utils.grading.records.MAX_RESULT_BYTES` cap: log lines are
matched to cells by binary search, at most :data:`MAX_LOG_LINES` are read, and only the error messages the report
shows (the first, and those of check cells) are cleaned.

A check line counts for an exercise when it was written while an executed code cell that **calls** a function
with the exercise's id as first argument ran (its check cell), and no cell may hold more check lines for an
exercise than it has such calls: a line written by the notebook's own code beside the real check is flagged as
tampering, and the first line that did not pass is the one that counts. When such a cell (one check call) printed
exactly one verdict line (the engine's status symbol first) and it says another status than the check line, the
line is flagged and the printed verdict counts: a check line written in place of the check's own.
"""

from __future__ import annotations

import ast
import bisect
import json
from pathlib import Path

from course_utils.grading.guard import Guard
from course_utils.grading.records import LOG_STATUSES, SKIPPED, NotebookResult, one_line, shown

__all__ = [
    "MAX_LOG_LINES",
    "check_calls",
    "interpret",
    "log_lines",
    "names",
    "probe_flags",
    "valid_result",
    "verdict_icons",
]

MAX_LOG_LINES = 20_000  # lines of the check log read; more is a note


def valid_result(result, n_cells: int) -> bool:
    """A dict with one dict per code cell of the notebook."""
    if not isinstance(result, dict) or not isinstance(result.get("cells"), list):
        return False
    cells = result["cells"]
    return len(cells) == n_cells and all(isinstance(c, dict) for c in cells)


def log_lines(data: bytes) -> tuple[list, int]:
    """[(byte offset, record)] of the check log's well-formed lines (checks and predictions), and the malformed."""
    lines, bad, offset = [], 0, 0
    for count, raw in enumerate(data.split(b"\n")):
        start, offset = offset, offset + len(raw) + 1
        if count >= MAX_LOG_LINES:
            bad += 1
            break
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            bad += 1
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("exercise"), str):
            bad += 1
            continue
        if entry.get("event", "check") not in ("check", "predict"):
            continue  # hints: not statuses
        if entry.get("event", "check") == "check" and entry.get("status") not in LOG_STATUSES:
            bad += 1
            continue
        lines.append((start, entry))
    return lines, bad


def names(source: str, exercise_id: str) -> bool:
    """Does ``source`` hold ``exercise_id`` as a string literal (in either quotes)?"""
    return f'"{exercise_id}"' in source or f"'{exercise_id}'" in source


def check_calls(source: str) -> dict:
    """exercise id -> how many calls in ``source`` take that id (a string literal) as their first argument.

    A cell that is not plain Python (IPython magics) counts each quoted occurrence of an id instead.
    """
    counts: dict = {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                counts[first.value] = counts.get(first.value, 0) + 1
    return counts


def probe_flags(probe, course: Path) -> list:
    """What the end-of-run inspection says was replaced (empty: the course's checker, as shipped)."""
    flags = []
    if not isinstance(probe, dict):
        return flags
    package = course / "course_utils"
    for module, path in (
        ("course_utils.checks", package / "checks.py"),
        ("course_utils.checking.log", package / "checking" / "log.py"),
    ):
        entry = probe.get(module)
        if not isinstance(entry, dict):
            continue
        if entry.get("file") != str(path):
            flags.append(f"{module} was imported from another file than the course's")
            continue
        functions = entry.get("functions") if isinstance(entry.get("functions"), dict) else {}
        for name, found in list(functions.items())[:10]:
            if not (isinstance(found, list) and len(found) == 3):
                continue
            if found != [module, str(path), name]:
                where = "a notebook cell" if str(path) != found[1] else str(found[1])
                flags.append(f"{module}.{name} was replaced (its code comes from {shown(where)})")
    return flags


def verdict_icons() -> dict:
    """The symbol each check status prints first (``"✅"`` -> ``"passed"``), from the exercise engine; {} without it."""
    try:
        from course_utils.checking import registry
    except Exception:  # the engine cannot load here: the printed verdicts are not compared
        return {}
    icons = {}
    for status in LOG_STATUSES:
        icon = getattr(registry.STATUSES.get(status), "icon", None)
        if isinstance(icon, str) and icon and icon not in icons:
            icons[icon] = status
    return icons


def _printed_status(printed, icons: dict) -> tuple[str, str] | None:
    """(status, line) of the one verdict line a cell printed; None when it printed none or several."""
    if not isinstance(printed, list) or not icons:
        return None
    found = [
        (status, line)
        for line in printed[:8]
        if isinstance(line, str)
        for icon, status in icons.items()
        if line.startswith(icon + " ")
    ]
    return found[0] if len(found) == 1 else None


def _spans(cells: list) -> tuple[list, list]:
    """Sorted starts and (start, end, cell) of the executed cells' check-log byte ranges."""
    spans = []
    for index, cell in enumerate(cells):
        span = cell.get("log")
        if (
            cell.get("ran")
            and isinstance(span, list)
            and len(span) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in span)
            and span[0] <= span[1]
        ):
            spans.append((span[0], span[1], index))
    spans.sort()
    return [s[0] for s in spans], spans


def _owner(offset: int, starts: list, spans: list) -> int | None:
    at = bisect.bisect_right(starts, offset) - 1  # the last span starting at or before offset (the longest)
    if at >= 0 and spans[at][0] <= offset < spans[at][1]:
        return spans[at][2]
    return None


def interpret(result: dict, exercises, sources: list, where: dict, guard: Guard, own: str, course: Path):
    """Each exercise's (status, detail, misconception) from a valid runner result; notes and tampering."""
    notes, tampering = [], []
    cells = result["cells"]
    stopped = result.get("stopped")
    if not (isinstance(stopped, list) and len(stopped) == 3 and isinstance(stopped[1], int)):
        stopped = None
    else:
        stopped = [
            str(stopped[0]) if stopped[0] in ("timed_out", "crashed") else "crashed",
            stopped[1],
            guard.clean(one_line(str(stopped[2])), own),
        ]
    raised = [index for index, cell in enumerate(cells) if isinstance(cell.get("error"), dict)]

    def error(index: int) -> str:  # cleaned only when shown
        found = cells[index]["error"]
        message = guard.clean(one_line(str(found.get("evalue", "")), 2000), own)  # all the runner kept
        line = found.get("line")
        at = f" (line {line})" if isinstance(line, int) and not isinstance(line, bool) else ""
        ename = guard.clean(one_line(str(found.get("ename", "Error")), 60), own)
        return one_line(f"{ename}: {message}".rstrip(": ") + at)

    log_text = result.get("log")
    log_data = log_text.encode("latin-1", errors="replace") if isinstance(log_text, str) else b""
    lines, malformed = log_lines(log_data)
    starts, spans = _spans(cells)
    calls_cache: dict = {}
    per_cell: dict = {}  # (cell, exercise) -> [entry, ...] of check lines
    unbacked: dict = {}
    predictions: dict = {}
    sessions = set()
    for offset, entry in lines:
        owner = _owner(offset, starts, spans)
        exercise = entry["exercise"]
        if owner is None or owner >= len(sources) or not names(sources[owner], exercise):
            if entry.get("event", "check") == "check":
                unbacked[exercise] = unbacked.get(exercise, 0) + 1
            continue
        if entry.get("event", "check") == "predict":
            if exercise not in predictions:
                predictions[exercise] = {
                    "status": one_line(str(entry.get("status")), 40),
                    "attempt": entry.get("attempt") if isinstance(entry.get("attempt"), int) else None,
                }
            continue
        sessions.add(str(entry.get("session")))
        per_cell.setdefault((owner, exercise), []).append(entry)
    log = {}
    icons = verdict_icons() if per_cell else {}
    for (owner, exercise), entries in per_cell.items():
        if owner not in calls_cache:
            calls_cache[owner] = check_calls(sources[owner])
        calls = calls_cache[owner].get(exercise, 0)
        if len(entries) > max(calls, 1):
            tampering.append(
                one_line(
                    f"{len(entries)} check lines for {exercise} in code cell {owner + 1}, which calls its check "
                    f"{calls} time(s): lines written by the notebook's own code (the first that did not pass counts)",
                    300,
                )
            )
            entries = [next((e for e in entries if e["status"] != "passed"), entries[0])]
        entry = entries[-1]
        shown_verdict = _printed_status(cells[owner].get("printed"), icons) if calls == 1 else None
        if shown_verdict and shown_verdict[0] != entry["status"]:
            tampering.append(
                one_line(
                    f"code cell {owner + 1} printed a {shown_verdict[0]} verdict for {exercise} but its check line "
                    f"says {entry['status']}: the line was not the check's (the printed verdict counts)",
                    300,
                )
            )
            entry = {"status": shown_verdict[0], "detail": shown_verdict[1].split(" ", 1)[1], "misconception": None}
        log[exercise] = entry
    for exercise_id, count in sorted(unbacked.items())[:20]:
        tampering.append(
            one_line(f"{count} check line(s) for {exercise_id} that no executed check cell wrote (ignored)", 200)
        )
    if len(sessions) > 1:
        tampering.append(f"check lines from {len(sessions)} different kernels")
    tampering += probe_flags(result.get("probe"), course)
    outside = result.get("outside")
    outside = [shown(str(p)) for p in outside[:20] if isinstance(p, str)] if isinstance(outside, list) else []
    if outside:
        tampering.append(one_line("wrote files outside its copy: " + ", ".join(outside[:5]), 400))
    written = result.get("written")
    written = [shown(str(w)) for w in written[:50]] if isinstance(written, list) else []
    if written:
        notes.append(
            one_line(f"wrote {len(written)} file(s) in its folder (deleted with the copy): " + ", ".join(written[:5]))
        )
    if malformed:
        notes.append(f"ignored {malformed} malformed line(s) in the check log")
    if raised:
        notes.append(f"code cell {raised[0] + 1} raised {error(raised[0])}")
    if stopped:
        notes.append(stopped[2])

    out = NotebookResult(notes=notes, tampering=tampering, predictions=predictions)
    for ex in exercises:
        if ex.id in log:
            entry = log[ex.id]
            misconception = entry.get("misconception")
            detail = guard.clean(one_line(entry.get("detail") or ""), own)
            out.exercises[ex.id] = (
                entry["status"],
                detail,
                one_line(misconception, 80) if isinstance(misconception, str) else None,
            )
            continue
        cell = where.get(ex.id)
        earlier = raised[: bisect.bisect_left(raised, cell)] if cell is not None else []
        if cell is None:
            status, detail = "missing", f"no code cell calls the check of {ex.id}: the cell was deleted or renamed"
        elif cell < len(cells) and cells[cell].get("skipped"):
            status = SKIPPED
            detail = f"skipped by the notebook: its check cell (code cell {cell + 1}) is tagged skip-execution"
        elif stopped and cell >= stopped[1]:
            status = stopped[0]
            detail = f"not checked: {stopped[2]}"
        elif cell < len(cells) and isinstance(cells[cell].get("error"), dict):
            status, detail = "crashed", f"its check cell (code cell {cell + 1}) raised {error(cell)}"
        elif earlier:
            status, detail = (
                "crashed",
                f"the check recorded nothing; code cell {earlier[0] + 1} raised {error(earlier[0])}",
            )
        else:
            status, detail = (
                "missing",
                f"code cell {cell + 1} names {ex.id} but recorded no check (call commented out?)",
            )
        out.exercises[ex.id] = (status, detail, None)
    return out
