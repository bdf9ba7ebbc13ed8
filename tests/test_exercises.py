"""Every exercise of every lesson, driven through checks.check with every kind of answer.

The exercises are found by reading the lesson notebooks: each `checks.check("NN.name", fn)` call and
the stub `fn` it checks. The correct answer is the function of the same name in the lesson's
solutions notebook. Each exercise is driven with the untouched stub, the solution, each declared
misconception (its buggy reference), a crashing answer, a `None` return, a delegating answer and a
slow one, and the printed verdict and the COURSE_CHECK_LOG line are asserted.
"""

from __future__ import annotations

import ast
import importlib
import itertools
import json
import linecache
import re
from pathlib import Path

import numpy as np
import pytest

from course_utils import _answer_runner, checks, exercises, misconceptions

REPO = Path(__file__).resolve().parents[1]
CHECK_CALL = re.compile(r'checks\.check\(\s*"(?P<id>\d\d\.\w+)",\s*(?P<fn>\w+)\s*(?P<rest>[,)])')


def _code_cells(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def _lesson_checks() -> list[tuple[str, str, Path]]:
    """(exercise id, stub name, lesson path) for every checks.check call in the lessons."""
    found = []
    for path in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for source in _code_cells(path):
            for match in CHECK_CALL.finditer(source):
                found.append((match["id"], match["fn"], path))
    return found


LESSON_CHECKS = _lesson_checks()
IDS = [eid for eid, _, _ in LESSON_CHECKS]


def _compile(source: str, filename: str, namespace: dict) -> None:
    """exec with a real file name registered in linecache, as IPython does for a cell."""
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), namespace)


def _defs_and_imports(path: Path, tag: str) -> dict:
    """Run only the imports and the function definitions of a notebook's code cells."""
    namespace: dict = {}
    for k, source in enumerate(_code_cells(path)):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef)):
                segment = ast.get_source_segment(source, node)
                padded = "\n" * (node.lineno - 1) + segment  # keep the cell's line numbers
                _compile(padded, f"<{tag} {path.stem} cell {k}>", namespace)
    return namespace


def _solution_path(lesson_path: Path) -> Path:
    return REPO / "solutions" / f"{lesson_path.stem}_solutions.ipynb"


_NAMESPACES: dict = {}


def _namespace(path: Path, tag: str) -> dict:
    key = (path, tag)
    if key not in _NAMESPACES:
        _NAMESPACES[key] = _defs_and_imports(path, tag)
    return _NAMESPACES[key]


def _stub(eid):
    _, fn, path = next(c for c in LESSON_CHECKS if c[0] == eid)
    return _namespace(path, "lesson")[fn]


# lesson 00 has no solutions notebook: its one exercise is answered here
NO_SOLUTIONS_NOTEBOOK = {"00.dot_scores": "q, k = args\nreturn q @ k.T"}


def _solution(eid):
    if eid in NO_SOLUTIONS_NOTEBOOK:
        return _answer(eid, NO_SOLUTIONS_NOTEBOOK[eid])
    _, fn, path = next(c for c in LESSON_CHECKS if c[0] == eid)
    return _namespace(_solution_path(path), "solution")[fn]


def _answer(eid, body: str, extra: dict | None = None):
    """A student's function with the stub's name and the given body, defined in its own 'cell'."""
    name = exercises.get(eid).function
    source = f"def {name}(*args):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    namespace = dict(extra or {})
    _compile(source, f"<student {eid} {abs(hash(body))}>", namespace)
    return namespace[name]


@pytest.fixture
def log(tmp_path, monkeypatch):
    path = tmp_path / "checks.jsonl"
    monkeypatch.setenv("COURSE_CHECK_LOG", str(path))

    def last():
        lines = path.read_text(encoding="utf-8").splitlines()
        return json.loads(lines[-1]), len(lines)

    return last


def _run(eid, fn, capsys, log, **kwargs):
    assert checks.check(eid, fn, **kwargs) is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out  # one message
    record, _ = log()
    assert set(record) == {"exercise", "lesson", "status", "misconception", "detail"}
    assert record["exercise"] == eid and record["lesson"] == eid[:2]
    assert record["detail"] in out and "\x1b[" not in record["detail"]
    return out, record


# ---------------------------------------------------------------------------------------------
# the notebooks and the registry agree
# ---------------------------------------------------------------------------------------------


def test_every_registered_exercise_is_checked_once_in_its_lesson():
    assert sorted(IDS) == sorted(exercises.EXERCISES), "lesson check cells and the registry differ"
    assert len(IDS) == len(set(IDS))
    for eid, fn, path in LESSON_CHECKS:
        assert path.name.startswith(eid[:2])
        assert exercises.get(eid).function == fn


def test_registry_order_and_for_lesson():
    lessons = [e.lesson for e in exercises.EXERCISES.values()]
    assert lessons == sorted(lessons)
    assert [e.id for e in exercises.for_lesson("01")] == [
        "01.softmax_along",
        "01.by_hand_new_query",
        "01.attention_with_temperature",
        "01.self_attention",
        "01.score_scale",
        "01.is_permutation_equivariant",
    ]
    for e in exercises.EXERCISES.values():
        assert e.title and e.section and e.hints


def test_solutions_check_every_exercise_strictly():
    for eid, _, path in LESSON_CHECKS:
        if eid in NO_SOLUTIONS_NOTEBOOK:
            continue
        sources = "\n".join(_code_cells(_solution_path(path)))
        assert f'checks.check("{eid}", {exercises.get(eid).function}, strict=True)' in sources, eid


def test_check_cells_show_no_solution():
    for eid, _, path in LESSON_CHECKS:
        for source in _code_cells(path):
            if f'checks.check("{eid}"' in source:
                assert source.strip().startswith("checks.check("), f"{eid}: the check cell holds more than the check"


def _headings(lesson: str) -> set[str]:
    path = next((REPO / "notebooks").glob(f"{lesson}_*.ipynb"))
    nb = json.loads(path.read_text(encoding="utf-8"))
    lines = ("".join(c["source"]).splitlines() for c in nb["cells"] if c["cell_type"] == "markdown")
    return {f"{lesson} · {line.lstrip('#').strip()}" for cell in lines for line in cell if line.startswith("##")}


def test_every_section_to_reread_is_a_heading_of_its_lesson():
    sections = [e.section for e in exercises.EXERCISES.values()]
    sections += [m.section for m in misconceptions.MISCONCEPTIONS.values()]
    sections += [p.section for p in exercises.PREDICTIONS.values()]
    missing = [s for s in sections if s not in _headings(s[:2])]
    assert not missing, f"sections that are no heading of their lesson: {missing}"


def test_every_misconception_is_declared_by_an_exercise():
    declared = {mid for e in exercises.EXERCISES.values() for mid in e.misconceptions}
    assert declared == set(misconceptions.MISCONCEPTIONS)


# ---------------------------------------------------------------------------------------------
# every exercise, every kind of answer
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eid", IDS)
def test_untouched_stub_is_not_attempted(eid, capsys, log):
    out, record = _run(eid, _stub(eid), capsys, log)
    assert record["status"] == "not_attempted" and record["misconception"] is None
    assert out.startswith("⏳") and "not attempted yet" in out


@pytest.mark.parametrize("eid", IDS)
def test_solution_passes(eid, capsys, log):
    out, record = _run(eid, _solution(eid), capsys, log, strict=True)
    assert record["status"] == "passed" and out.startswith("✅")


@pytest.mark.parametrize(
    ("eid", "mid"), [(e.id, mid) for e in exercises.EXERCISES.values() for mid in e.misconceptions]
)
def test_each_declared_misconception_is_named(eid, mid, capsys, log):
    buggy = exercises.get(eid).misconceptions[mid]
    out, record = _run(eid, buggy, capsys, log)
    assert record["status"] in ("wrong", "crashed")
    assert record["misconception"] == mid
    assert misconceptions.get(mid).name in out and misconceptions.get(mid).section in out


@pytest.mark.parametrize("eid", IDS)
def test_crash_names_the_students_line(eid, capsys, log):
    fn = _answer(eid, "scale = 1.0\nreturn scale / 0")
    out, record = _run(eid, fn, capsys, log)
    assert record["status"] == "crashed" and record["misconception"] is None
    assert "ZeroDivisionError" in out and "your line 3: `return scale / 0`" in out


@pytest.mark.parametrize("eid", IDS)
def test_none_return_asks_about_return(eid, capsys, log):
    fn = _answer(eid, "result = args\n# forgot to return it")
    out, record = _run(eid, fn, capsys, log)
    assert record["status"] == "wrong"
    assert "returned None: did you forget `return`?" in out


@pytest.mark.parametrize("eid", [e.id for e in exercises.EXERCISES.values() if e.forbidden])
def test_delegating_answer_is_told_and_not_passed(eid, capsys, log):
    """The answer calls the forbidden helper (looked up at call time), then returns the right result."""
    spec = exercises.get(eid).forbidden[0]
    module_name, _, attr_path = spec.partition(":")
    body = (
        f"helper = importlib.import_module({module_name!r})\n"
        f"for part in {attr_path.split('.')!r}:\n"
        "    helper = getattr(helper, part)\n"
        "try:\n"
        "    helper()\n"
        "except Exception:\n"
        "    pass\n"
        "return solution(*args)"
    )
    fn = _answer(eid, body, {"importlib": importlib, "solution": _solution(eid)})
    out, record = _run(eid, fn, capsys, log)
    assert record["status"] == "wrong" and "calls" in out and "does the work" in out


@pytest.mark.parametrize("eid", IDS)
def test_slow_answer_is_stopped(eid, capsys, log, monkeypatch):
    monkeypatch.setattr(checks, "TIME_LIMIT_S", 0.2)
    fn = _answer(eid, "while True:\n    pass")
    out, record = _run(eid, fn, capsys, log)
    assert record["status"] == "timed_out" and "was stopped" in out


# ---------------------------------------------------------------------------------------------
# the known delegation holes of the old checker, written as a student would
# ---------------------------------------------------------------------------------------------


def test_known_delegation_holes_are_closed(capsys, log):
    import torch  # noqa: F401  (the answers below use torch through course_utils)

    from course_utils import masks, numpy_attention

    cases = [
        ("01.softmax_along", "return numpy_attention.softmax(args[0], args[1])", {"numpy_attention": numpy_attention}),
        ("02.my_padding_mask", "return masks.make_padding_mask(*args)", {"masks": masks}),
        ("02.my_causal_mask", "return masks.make_causal_mask(*args)", {"masks": masks}),
        ("04.my_forward", "mha, q, k, v = args\nreturn mha(q, k, v)[0]", {}),
        ("03.my_split_heads", "return split_heads(*args)", {"split_heads": numpy_attention.split_heads}),
    ]
    for eid, body, extra in cases:
        out, record = _run(eid, _answer(eid, body, extra), capsys, log)
        assert record["status"] == "wrong" and "does the work" in out, (eid, out)
    # the helpers work again afterwards, and are the originals
    assert numpy_attention.softmax.__module__ == "course_utils.numpy_attention"
    assert masks.make_padding_mask.__name__ == "make_padding_mask"


# ---------------------------------------------------------------------------------------------
# the misconceptions are distinguishable: from the right answer, and from each other
# ---------------------------------------------------------------------------------------------


def _outputs(exercise, fn):
    cases, _ = checks._cases_and_expected(exercise)
    rows = []
    for i, args in enumerate(cases):
        try:
            with _answer_runner._preserved_random_state(i), np.errstate(all="ignore"):
                rows.append(("ok", checks._call(exercise, fn, args)))
        except Exception as exc:
            rows.append(("raised", checks._crash_signature(exc)))
    return rows


def _same(exercise, a, b) -> bool:
    for (ka, va), (kb, vb) in zip(a, b, strict=True):
        if ka != kb:
            return False
        if ka == "raised" and va != vb:
            return False
        if ka == "ok" and checks._first_problem(exercise, va, vb, equal_nan=True) is not None:
            return False
    return True


@pytest.mark.parametrize("eid", [e.id for e in exercises.EXERCISES.values() if e.misconceptions])
def test_misconceptions_differ_from_the_answer_and_each_other(eid):
    exercise = exercises.get(eid)
    right = _outputs(exercise, exercise.reference)
    buggy = {mid: _outputs(exercise, fn) for mid, fn in exercise.misconceptions.items()}
    for mid, rows in buggy.items():
        assert not _same(exercise, right, rows), f"{eid}: {mid} cannot be told from the right answer"
    for (m1, r1), (m2, r2) in itertools.combinations(buggy.items(), 2):
        assert not _same(exercise, r1, r2), f"{eid}: {m1} and {m2} behave the same on every case"


def test_register_adds_misconceptions_and_refuses_a_clash():
    from dataclasses import replace

    known = misconceptions.get("greedy_argmax_not_fed_back")  # registered by lesson 08's exercise module
    misconceptions.register([known])  # the same one again: harmless
    assert misconceptions.get(known.id) is known
    with pytest.raises(ValueError, match="greedy_argmax_not_fed_back"):
        misconceptions.register([replace(known, name="something else")])
    assert misconceptions.get(known.id) is known
    with pytest.raises(TypeError, match="Misconception objects"):
        misconceptions.register(["greedy_argmax_not_fed_back"])
