"""The checker audit: for every exercise, the correct variants it accepts, the mistakes it names, the helpers it refuses.

Usage::

    python -m course_utils.checking.audit              # a plain-text table
    python -m course_utils.checking.audit --markdown   # the table of docs/checker_audit.md
    python -m course_utils.checking.audit --lesson 02  # one lesson (repeatable)

For each exercise it runs the engine (never the notebooks):

- every declared correct variant must pass;
- every misconception that fits (declared buggy versions, and every catalogue patch that changes the
  reference's output) must be named when its buggy answer is checked, and every id the exercise lists in
  ``misconceptions=`` must be among those that fit;
- every course helper that computes the answer must be refused: the helpers the reference itself goes through
  whose result already is the answer, and every public function of the course's computing modules that,
  called with the answer's arguments, passes the exercise. Helpers that write files, train, load checkpoints
  or open widgets are not probed.

Exit status 0 only when every row is clean. ``tests/checking/test_exercise_audit.py`` runs the same audit and checks
that ``docs/checker_audit.md`` is its current output.

Introduced for lesson authors in CONTRIBUTING.md.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import sys
from dataclasses import dataclass, field

from course_utils.checking import delegation, engine, handed_back, naming, registry

__all__ = [
    "AuditRow",
    "audit_exercise",
    "audit",
    "render_text",
    "render_markdown",
    "main",
    "PROBED_MODULES",
    "COLUMNS",
    "register_column",
    "battery_summary",
]

PROBED_MODULES = (
    "course_utils.numpy_attention",
    "course_utils.masks",
    "course_utils.attention",
    "course_utils.heads",
    "course_utils.role_task",
    "course_utils.efficient",
    "course_utils.explorer",
    "course_utils.data",
    "course_utils.reversal.rnn",
    "course_utils.reversal.transformer",
    "course_utils.reversal.decoding",
    "course_utils.reversal.training",
)
"""The course's computing modules whose public functions are tried as answers (presentation and tooling are not)."""

_NOT_PROBED = {
    "main",
    "data_dir",
    "write_splits",
    "generate_splits",
    "load_split",
    "load_splits",
    "train",
    "train_role_model",
    "explore_role_model",
    "explore_seq2seq",
    "measure_peak_memory",
    "make_role_task",
}
_PROBE_TIME_LIMIT_S = 2.0


COLUMNS: dict = {}
"""Further audit columns, title -> ``fn(exercise) -> [(name, ok, detail)]`` (see :func:`register_column`)."""


def register_column(title: str, fn) -> None:
    """Add a column to the audit: ``fn(exercise)`` lists ``(name, ok, detail)``, one per thing it tried.

    For the checks that other parts of the engine add (issue 26 §4): "contract breaches refused" (a list
    returned where an array is promised ...), "gradient breaches named", "fresh-size failures caught". A
    row is clean only when every item of every column is ok. With no column registered, the table is the
    three columns of ``docs/checker_audit.md``.
    """
    if not isinstance(title, str) or not title.strip():
        raise TypeError(f"title must be a non-empty string but is {title!r}")
    if not callable(fn):
        raise TypeError(f"fn must be a callable fn(exercise) -> [(name, ok, detail)] but is {type(fn).__name__}")
    COLUMNS[title] = fn
    _CACHE.clear()


@dataclass
class AuditRow:
    """The audit of one exercise. Each list holds ``(name, ok, detail)``."""

    exercise: str
    variants: list = field(default_factory=list)
    misconceptions: list = field(default_factory=list)  # (id, ok, detail, source, same_as)
    helpers: list = field(default_factory=list)
    columns: dict = field(default_factory=dict)  # title of a registered column -> [(name, ok, detail)]

    @property
    def clean(self) -> bool:
        return (
            len(self.variants) >= 2
            and all(ok for _, ok, _ in self.variants)
            and all(m[1] for m in self.misconceptions)
            and all(ok for _, ok, _ in self.helpers)
            and all(ok for items in self.columns.values() for _, ok, _ in items)
        )


def _quiet(fn, *args, **kwargs):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args, **kwargs)


def _arity(exercise) -> int | None:
    if inspect.isclass(exercise.reference):
        return None
    try:
        params = inspect.signature(exercise.reference).parameters.values()
    except (TypeError, ValueError):
        return None
    return sum(1 for p in params if p.default is inspect.Parameter.empty and p.kind == p.POSITIONAL_OR_KEYWORD)


def _probed_functions():
    found = []
    for module_name in PROBED_MODULES:
        try:
            module = importlib.import_module(module_name)
        except Exception:
            continue
        for name, value in vars(module).items():
            if name.startswith("_") or name in _NOT_PROBED or not inspect.isfunction(value):
                continue
            if value.__module__ == module_name:
                found.append((f"{module_name.rsplit('.', 1)[-1]}.{name}", value))
    return found


def _binds(fn, n_args: int) -> bool:
    try:
        inspect.signature(fn).bind(*range(n_args))
        return True
    except (TypeError, ValueError):
        return False


def _delegating(fn):
    def answer(*args):
        return fn(*args)

    answer.__name__ = f"delegates_to_{getattr(fn, '__name__', 'helper')}"
    return answer


def _calling_forbidden(spec, reference):
    """An answer that uses the forbidden helper ``spec`` (building the class, or calling the function) and returns the right result."""
    module_name, _, path = spec.partition(":")

    def answer(*args):
        owner = importlib.import_module(module_name)
        parts = path.removesuffix(".__init__").split(".")
        for part in parts:
            owner = getattr(owner, part)
        with contextlib.suppress(Exception):
            owner(*args)
        return reference(*args)

    return answer


def audit_exercise(exercise) -> AuditRow:
    """Run the three audits on one exercise, as in a kernel where no other check has run."""
    with handed_back.as_in_a_fresh_kernel():
        return _audit_exercise(exercise)


def _audit_exercise(exercise) -> AuditRow:
    row = AuditRow(exercise.id)
    for variant in exercise.variants:
        verdict = _quiet(engine.judge, exercise, variant)
        row.variants.append((variant.__name__, verdict.status == "passed", verdict.detail))
    fits = naming.fitting_misconceptions(exercise)
    for fit in fits:
        verdict = _quiet(engine.judge, exercise, fit.answer)
        row.misconceptions.append((fit.id, verdict.misconception == fit.id, verdict.detail, fit.source, fit.same_as))
    fitting = {f.id for f in fits} | {m for f in fits for m in f.same_as}
    for mid in exercise.misconceptions:
        if mid not in fitting:
            detail = "declared in misconceptions= but no buggy= version or catalogue patch produces it"
            row.misconceptions.append((mid, False, detail, "declared", []))
    names = list(delegation.helpers_that_compute(exercise))
    for name in names:
        verdict = _quiet(engine.judge, exercise, _delegating(exercise.reference))
        row.helpers.append((name, verdict.status == "wrong" and verdict.helper is not None, verdict.detail))
    for spec in exercise.forbidden:
        verdict = _quiet(engine.judge, exercise, _calling_forbidden(spec, exercise.reference))
        module_name, _, path = spec.partition(":")
        shown = f"{module_name.removesuffix('.experiments').rsplit('.', 1)[-1]}.{path.removesuffix('.__init__')}"
        if path.endswith(".__init__"):
            shown += " (built)"
        if any(listed == shown for listed, _, _ in row.helpers):  # found by the reference already: listed once
            continue
        row.helpers.append((shown, verdict.status == "wrong" and verdict.helper is not None, verdict.detail))
    for title, fn in COLUMNS.items():
        try:
            row.columns[title] = [tuple(item) for item in fn(exercise)]
        except Exception as exc:  # a column that cannot run is a row that is not clean
            row.columns[title] = [("the column itself", False, f"{type(exc).__name__}: {exc}")]
    n_args = _arity(exercise)
    if n_args is not None:
        for name, fn in _probed_functions():
            if name in names or any(listed == name for listed, _, _ in row.helpers) or not _binds(fn, n_args):
                continue
            verdict = _quiet(engine.judge, exercise, _delegating(fn), time_limit_s=_PROBE_TIME_LIMIT_S)
            if verdict.status == "passed":
                row.helpers.append((name, False, f"passes when it delegates to {name}: {verdict.detail}"))
            elif verdict.helper is not None:
                row.helpers.append((name, True, verdict.detail))
    return row


_CACHE: dict = {}


def audit(lessons=None) -> list[AuditRow]:
    """The audit of every exercise (or of the given lessons), in lesson order; computed once per process."""
    rows = []
    for lesson in lessons or registry.lessons():
        for exercise in registry.for_lesson(lesson):
            if exercise.id not in _CACHE:
                _CACHE[exercise.id] = audit_exercise(exercise)
            rows.append(_CACHE[exercise.id])
    return rows


def _mistakes(row) -> str:
    if not row.misconceptions:
        return "none catalogued fits"
    named = sum(1 for m in row.misconceptions if m[1])
    parts = []
    for mid, ok, _, source, same_as in row.misconceptions:
        text = mid if source == "declared" else f"{mid}*"
        if same_as:
            text += f" (= {', '.join(same_as)})"
        parts.append(text if ok else f"**NOT NAMED: {text}**")
    return f"{named} of {len(row.misconceptions)}: " + ", ".join(parts)


def _helpers(row) -> str:
    if not row.helpers:
        return "none computes the answer"
    refused = sum(1 for _, ok, _ in row.helpers if ok)
    parts = [name if ok else f"**PASSES: {name}**" for name, ok, _ in row.helpers]
    return f"{refused} of {len(row.helpers)}: " + ", ".join(parts)


def _variants(row) -> str:
    passed = sum(1 for _, ok, _ in row.variants if ok)
    failed = [name for name, ok, _ in row.variants if not ok]
    text = f"{passed} of {len(row.variants)}"
    return text + (f" (**REFUSED: {', '.join(failed)}**)" if failed else "")


def _summary(rows) -> str:
    variants = [v for r in rows for v in r.variants]
    mistakes = [m for r in rows for m in r.misconceptions]
    helpers = [h for r in rows for h in r.helpers]
    derived = sum(1 for m in mistakes if m[3] == "patch")
    return (
        f"{len(rows)} exercises: {sum(v[1] for v in variants)} of {len(variants)} correct variants accepted; "
        f"{sum(m[1] for m in mistakes)} of {len(mistakes)} fitting misconceptions named ({len(mistakes) - derived} "
        f"declared, {derived} from catalogue patches); {sum(h[1] for h in helpers)} of {len(helpers)} course "
        "helpers that compute an answer refused."
    )


def _column(items) -> str:
    if not items:
        return "nothing to try"
    ok = sum(1 for _, good, _ in items if good)
    parts = [name if good else f"**NOT CAUGHT: {name}**" for name, good, _ in items]
    return f"{ok} of {len(items)}: " + ", ".join(parts)


def battery_summary(results: dict) -> str:
    """One paragraph on a blind battery's results (``benchmarks/blind_battery.py --json``): its outcomes in all."""
    c = results["counts"]["all"]
    n = max(c["cases"], 1)
    return (
        f"Blind battery `{results['battery']}`: {c['cases']} wrong answers and predictions written without the "
        f"checker; named {c['named']} ({100 * c['named'] / n:.0f}%), generic {c['generic']}, crashed "
        f"{c['crashed']}, accepted {c['accepted']}; {c['leaks']} prediction messages give the answer away. How many "
        "names are wrong takes a person: see its table."
    )


def render_markdown(rows, battery: dict | None = None) -> str:
    """The table of ``docs/checker_audit.md`` (and a blind battery's summary, when given its results)."""
    lines = [
        "# Checker audit",
        "",
        "Generated by `python -m course_utils.checking.audit --markdown > docs/checker_audit.md`; "
        "`tests/checking/test_exercise_audit.py` fails when this file is not the command's current output.",
        "",
        "For every exercise: the distinct correct answers (variants) the check accepts; the known mistakes it "
        "names when given their buggy answers (a `*` marks a mistake derived from a catalogue patch rather than "
        "declared by the exercise; `(= x)` lists patches that behave exactly like it on every case); and the "
        "course helpers whose result already is the answer, which the check refuses.",
        "",
        _summary(rows),
        "",
    ]
    if battery is not None:
        lines += [battery_summary(battery), ""]
    titles = list(dict.fromkeys(t for row in rows for t in row.columns))
    head = ["exercise", "correct variants accepted", "known mistakes named", "course helpers refused", *titles]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [f"`{row.exercise}`", _variants(row), _mistakes(row), _helpers(row)]
        cells += [_column(row.columns.get(title, [])) for title in titles]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_text(rows) -> str:
    """The same audit as plain text, one exercise per block."""
    lines = [_summary(rows), ""]
    for row in rows:
        lines.append(f"{row.exercise}{'' if row.clean else '   <-- NOT CLEAN'}")
        lines.append(f"  variants accepted:  {_variants(row)}".replace("**", ""))
        lines.append(f"  mistakes named:     {_mistakes(row)}".replace("**", ""))
        lines.append(f"  helpers refused:    {_helpers(row)}".replace("**", ""))
        for title, items in row.columns.items():
            lines.append(f"  {title}: {_column(items)}".replace("**", ""))
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print the Markdown table of docs/checker_audit.md")
    parser.add_argument("--lesson", action="append", help="audit one lesson (NN); repeatable")
    parser.add_argument("--battery-json", help="add the summary of a blind battery's results (blind_battery.py --json)")
    args = parser.parse_args(argv)
    known = registry.lessons()
    for lesson in args.lesson or []:
        if lesson not in known:
            parser.error(f"--lesson {lesson!r} is not a lesson with exercises; known: {', '.join(known)}")
    battery = None
    if args.battery_json:
        import json

        try:
            with open(args.battery_json, encoding="utf-8") as f:
                battery = json.load(f)
        except (OSError, ValueError) as exc:
            parser.error(f"--battery-json {args.battery_json!r} could not be read: {exc}")
    rows = audit(args.lesson)
    if args.markdown:
        sys.stdout.write(render_markdown(rows, battery))
    else:
        sys.stdout.write((battery_summary(battery) + "\n\n" if battery else "") + render_text(rows))
    return 0 if all(row.clean for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
