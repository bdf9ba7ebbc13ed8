"""Record the checks of lessons as data, for the published student edition (issue 29, "answers out of reach").

Usage::

    python scripts/record_checks.py --out DIR [--lessons 00 01 02]      # writes DIR/lesson_NN.{json,npz}, SHA256SUMS

For each exercise of a lesson, with recording on (:mod:`course_utils.checking.recorded`): the cases and the right
outputs are prepared, the mistakes that fit are derived, and the check is run on the reference, on every correct
variant, on every buggy version and on every patched reference, so every path the engine takes on the course's
code is visited; then the reference's earlier steps and every mutant are run on every fixed and fresh case. Each
call of the course's code is stored as (callable, RNG state, digest of the inputs) -> output.

An exercise the data cannot hold (a class exercise, a case that holds a function, a driver that lives in the
exercises module itself) is reported and left out; :func:`record_lessons` returns, per lesson, the ids recorded
and the ones left out with why. ``scripts/publish_student_edition.py`` calls :func:`publish` with one line: it
records the lessons whose every exercise is recorded and replaces their ``exercises`` module with a data loader.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
LESSONS = ("00", "01", "02", "03", "05", "06")
"""The lessons recorded by default: the NumPy ones (the torch lessons 04, 07, 08 come next)."""

_LOADER = '''"""Lesson {lesson}'s exercises and predictions, replayed from recorded data (scripts/record_checks.py wrote it).

The published student edition holds no code that computes an answer: the checks run on the recorded cases, right
outputs and derived mistakes in ``data/checks/lesson_{lesson}.json`` and ``.npz`` (sha256 in ``SHA256SUMS``).
"""

from course_utils.checking import recorded_exercises

EXERCISES, PREDICTIONS = recorded_exercises.lesson("{lesson}")
globals().update(recorded_exercises.exports("{lesson}", EXERCISES))  # the bug zoo's buggy versions, as data
__all__ = ["EXERCISES", "PREDICTIONS", *recorded_exercises.exports("{lesson}", EXERCISES)]
'''


def _quiet(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args)


def _record_exercise(book, exercise) -> None:
    from course_utils.checking import engine, extra_checks, mutations, naming, recorded_exercises, relations, traces
    from course_utils.checking.preparing import call, prepare
    from course_utils.checking.recorded_values import Unrecordable
    from course_utils.checking.runner import course_defaults, own_codes, seeded

    try:
        table = recorded_exercises.exercise_data(exercise)
    except Unrecordable as exc:
        book.dropped[exercise.id] = str(exc)
        return
    book.tables[exercise.id] = table
    changes = {"make_cases": recorded_exercises.Recording(exercise.make_cases, table, book, "make_cases")}
    if exercise.fresh is not None:
        changes["fresh"] = recorded_exercises.Recording(exercise.fresh, table, book, "fresh")
    live = dataclasses.replace(exercise, **changes)
    try:
        prepared = prepare(live)
        fits = naming.fitting_misconceptions(live)
        answers = [live.reference, *live.variants, *live.buggy.values(), *(f.answer for f in fits)]
        for answer in answers:
            _quiet(engine.judge, live, answer)
        runs = [(args, i) for i, args in enumerate(prepared.cases)]
        if live.fresh is not None:
            drawn = [extra_checks.fresh_cases(live)]
            if "batch" in drawn[0][0]:
                drawn.append(extra_checks.batch_of_one_cases(live))
            runs += [(args, extra_checks.FRESH_SEED + j) for _, cases in drawn for j, args in enumerate(cases)]

        def run(fn, args, seed):
            with seeded(seed), np.errstate(all="ignore"):
                return call(live, fn, args, as_given=True)

        extra = mutations.finder(live, run, prepared.codes)
        for args, seed in runs:
            with course_defaults():
                try:
                    expected = run(live.reference, args, seed)
                except Exception:
                    continue
                steps = traces.earlier_steps(
                    lambda a=args, s=seed: run(live.reference, a, s), own_codes(live.reference)
                )
                extra(relations.Triple("a case", args, expected, expected, steps, seed))
    except Unrecordable as exc:
        book.dropped[exercise.id] = str(exc)
    if not table.get("cases"):
        book.dropped.setdefault(exercise.id, "its cases hold values the data cannot store")


def _exports(lesson, book) -> dict:
    """Public names of the lesson's exercises module that are a recorded exercise's buggy version."""
    import importlib

    from course_utils.checking import registry

    module = importlib.import_module(f"course_utils.lessons.lesson_{lesson}.exercises")
    found = {}
    for name in getattr(module, "__all__", ()) or [n for n in vars(module) if not n.startswith("_")]:
        value = getattr(module, name, None)
        for exercise in registry.for_lesson(lesson):
            if exercise.id not in book.tables or exercise.id in book.dropped:
                continue
            for mid, buggy in exercise.buggy.items():
                if value is buggy:
                    found[name] = [exercise.id, mid]
    return found


def _left_out(lesson) -> dict:
    """``{exercise id: why}`` for the exercises of ``lesson`` the data cannot hold, found without running a check
    (their words and settings, and their cases, as data)."""
    from course_utils.checking import recorded_exercises, registry
    from course_utils.checking.recorded_values import Unrecordable, encode

    found = {}
    for exercise in registry.for_lesson(lesson):
        try:
            recorded_exercises.exercise_data(exercise)
            encode(list(exercise.make_cases()), [])
        except Unrecordable as exc:
            found[exercise.id] = str(exc)
    return found


def record_lessons(out: Path, lessons=LESSONS, *, whole_only: bool = False) -> dict:
    """Record ``lessons`` into ``out``; return ``{lesson: (recorded ids, {left-out id: why})}``.

    With ``whole_only``, a lesson with an exercise the data cannot hold is not recorded at all (its module stays)."""
    from course_utils.checking import recorded, recorded_exercises, recorded_files, registry

    found = {}
    for lesson in lessons:
        if whole_only and (dropped := _left_out(lesson)):
            found[lesson] = ([], dropped)
            continue
        book = recorded.Book()
        with recorded.recording(book):
            for exercise in registry.for_lesson(lesson):
                _record_exercise(book, exercise)
        predictions = [recorded_exercises.prediction_data(p) for p in registry.predictions_for_lesson(lesson)]
        recorded_files.save(out, lesson, book, predictions, _exports(lesson, book))
        found[lesson] = ([i for i in book.tables if i not in book.dropped], dict(book.dropped))
    return found


CACHE = REPO / ".cache" / "recorded_checks"
"""Recorded data by the digest of everything it is made from (:func:`inputs_digest`): a second publish of the
same sources (the tests build the edition several times) copies it instead of recording again."""
_SOURCES = ("course_utils", "notebooks", "data", "scripts/record_checks.py", "scripts/workspace.py", "requirements.txt")


def inputs_digest(lessons=LESSONS, repo: Path = REPO) -> str:
    """The sha256 of every file the recording reads (the package, the lessons, the data, this script) and of
    ``lessons``: equal digests give byte-identical recordings (the recording is deterministic)."""
    import hashlib

    digest = hashlib.sha256(repr(tuple(lessons)).encode())
    for source in _SOURCES:
        path = repo / source
        files = sorted(path.rglob("*")) if path.is_dir() else [path]
        for file in files:
            skipped = {"__pycache__", ".ipynb_checkpoints"} & set(file.parts) or file.suffix == ".pyc"
            if file.is_file() and not skipped:
                digest.update(str(file.relative_to(repo)).encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def _record_into(out: Path, package: Path, lessons) -> dict:
    import json
    import subprocess

    command = [sys.executable, str(Path(__file__).resolve()), "--out", str(out), "--json", "--whole", "--lessons"]
    command += list(lessons)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "PYTHONPATH": str(REPO)}
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)
    if result.returncode != 0:
        raise RuntimeError(f"recording the checks failed: {' '.join(command)}\n{result.stderr[-3000:]}")
    found = json.loads(result.stdout.strip().splitlines()[-1])
    for lesson, (_, dropped) in found.items():
        if dropped:
            continue
        notebooks = sorted(Path(package).parent.glob(f"{lesson}_*.ipynb"))
        if notebooks:
            record_lesson_calls(notebooks[0], out, lesson)
    return found


def publish(package: Path, lessons=LESSONS, *, cache: Path | None = CACHE) -> dict:
    """In a published copy of the package (``package`` = its ``course_utils`` folder): record ``lessons`` into
    ``data/checks`` beside it and replace the ``exercises`` module of each lesson recorded whole by the loader.

    Runs in a fresh interpreter on the repository's own package (recording imports and runs the course's code).
    With ``cache`` (default: ``.cache/recorded_checks`` in the repository, ignored by git), a recording of the same
    sources (:func:`inputs_digest`) is copied instead of made again; ``cache=None`` always records.
    Returns what :func:`record_lessons` returns.
    """
    import json
    import shutil
    import tempfile

    out = Path(package).parent / "data" / "checks"
    kept = Path(cache) / inputs_digest(lessons) if cache is not None else None
    if kept is not None and (kept / "found.json").is_file():
        shutil.copytree(kept / "checks", out, dirs_exist_ok=True)
        found = json.loads((kept / "found.json").read_text(encoding="utf-8"))
    else:
        found = _record_into(out, package, lessons)
        if kept is not None:  # written whole, then renamed: a half-written entry is never read
            Path(cache).mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(dir=cache))
            shutil.copytree(out, staging / "checks")
            (staging / "found.json").write_text(json.dumps(found), encoding="utf-8")
            try:
                staging.rename(kept)
            except OSError:  # another publish stored the same digest first
                shutil.rmtree(staging, ignore_errors=True)
    for lesson, (_, dropped) in found.items():
        if dropped:  # a lesson with an exercise the data cannot hold keeps its module (and its code) for now
            continue
        (Path(package) / "lessons" / f"lesson_{lesson}" / "exercises.py").write_text(
            _LOADER.format(lesson=lesson), encoding="utf-8"
        )
    return found


def record_lesson_calls(notebook: Path, out: Path, lesson: str, timeout_s: int = 300) -> None:
    """Run the untouched student edition ``notebook`` on the repository's package, recording each call its cells
    make of what a check hands back (the course's answer): the published edition answers them from data, so it
    runs top to bottom untouched as the repository's does."""
    import tempfile

    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    first = (
        "from course_utils.checking import recorded as _recorded, recorded_files as _files\n_recorded.record_handed()"
    )
    last = f"_files.save_handed({str(out)!r}, {lesson!r})"
    nb.cells = [nbformat.v4.new_code_cell(first), *nb.cells, nbformat.v4.new_code_cell(last)]
    env = {"OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with tempfile.TemporaryDirectory() as work:  # outside the edition: the kernel imports the repository's package
            client = NotebookClient(
                nb, timeout=timeout_s, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": work}}
            )
            client.execute()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    if not (Path(out) / f"lesson_{lesson}_handed.json").is_file():
        raise RuntimeError(f"recording the lesson calls of {notebook.name} wrote nothing into {out}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the folder to write lesson_NN.json/.npz into")
    parser.add_argument("--lessons", nargs="+", default=list(LESSONS), help="two-digit lessons (default: NumPy ones)")
    parser.add_argument("--json", action="store_true", help="print what was recorded as one JSON line")
    parser.add_argument("--whole", action="store_true", help="skip a lesson with an exercise the data cannot hold")
    args = parser.parse_args(argv)
    for lesson in args.lessons:
        if len(lesson) != 2 or not lesson.isdigit():
            parser.error(f"--lessons: expected two-digit lessons like 01 but got {lesson!r}")
    found = record_lessons(args.out, args.lessons, whole_only=args.whole)
    if args.json:
        import json

        print(json.dumps(found))
    else:
        for lesson, (ids, dropped) in found.items():
            print(
                f"lesson {lesson}: {len(ids)} exercises recorded" + (f", {len(dropped)} left out:" if dropped else "")
            )
            for exercise_id, why in dropped.items():
                print(f"  {exercise_id}: {why}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
