"""Every exercise of every lesson, driven through checks.check with every kind of answer.

The exercises are found by reading the lesson notebooks: each `checks.check("NN.name", fn)` call and the stub
`fn` it checks. The correct answer is the lesson's own function where its body is a solution region (the lesson is
its own solution), else the exercise's first correct variant. Each exercise is driven with the untouched stub (the
`raise NotImplementedError` of today's lessons and the `...` of the student editions), the solution, a crashing
answer, a `None` return and an endless loop; the printed verdict, the function `checks.check` returns and the
COURSE_CHECK_LOG record are asserted. The checker audit (variants, misconceptions, helpers) is
tests/checking/test_exercise_audit.py.
"""

from __future__ import annotations

import ast
import json
import linecache
import re
import types
from pathlib import Path

import pytest

from course_utils import checks
from course_utils.checking import misconceptions, registry

REPO = Path(__file__).resolve().parents[2]
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
            if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)):  # a class exercise too
                segment = ast.get_source_segment(source, node)
                padded = "\n" * (node.lineno - 1) + segment  # keep the cell's line numbers
                _compile(padded, f"<{tag} {path.stem} cell {k}>", namespace)
    return namespace


_NAMESPACES: dict = {}


def _namespace(path: Path, tag: str) -> dict:
    key = (path, tag)
    if key not in _NAMESPACES:
        _NAMESPACES[key] = _defs_and_imports(path, tag)
    return _NAMESPACES[key]


def _stubs(eid) -> list:
    """The stubs a student can meet: the edition's `...` and, where the lesson still ships one, the lesson's own."""
    _, fn, path = next(c for c in LESSON_CHECKS if c[0] == eid)
    lesson = [] if _has_solution_region(path, fn) else [_namespace(path, "lesson")[fn]]
    return [*lesson, _ellipsis_stub(eid)]


def _has_solution_region(path: Path, fn: str) -> bool:
    """Does the lesson define ``fn`` with a solution region in it (the instructor edition's complete function)?"""
    for source in _code_cells(path):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == fn:
                if "### BEGIN SOLUTION" in ast.get_source_segment(source, node):
                    return True
    return False


def _solution(eid):
    _, fn, path = next(c for c in LESSON_CHECKS if c[0] == eid)
    if _has_solution_region(path, fn):  # the lesson is its own solution
        return _namespace(path, "lesson")[fn]
    variant = registry.get(eid).variants[0]  # no region yet: a copy of the exercise's first correct variant
    return types.FunctionType(variant.__code__, variant.__globals__, variant.__name__, variant.__defaults__)


def _answer(eid, body: str, extra: dict | None = None):
    """A student's function with the stub's name and the given body, defined in its own 'cell'."""
    name = registry.get(eid).function
    source = f"def {name}(*args):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    namespace = dict(extra or {})
    _compile(source, f"<student {eid} {abs(hash(body))}>", namespace)
    return namespace[name]


def _ellipsis_stub(eid):
    """The stub as `make workspace` writes it: signature, docstring, `...`."""
    name = registry.get(eid).function
    source = f'def {name}(*args):\n    """The exercise\'s docstring."""\n    ...  # your code here\n'
    namespace: dict = {}
    _compile(source, f"<edition {eid}>", namespace)
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
    returned = checks.check(eid, fn, **kwargs)
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out  # one message
    record, _ = log()
    assert record["v"] == 2 and record["event"] == "check" and record["attempt"] >= 1
    assert record["exercise"] == eid and record["lesson"] == eid[:2]
    assert record["detail"] in out and "\x1b[" not in record["detail"] and len(record["detail"]) <= 500
    exercise = registry.get(eid)
    if record["status"] == "passed":
        assert returned is fn
    else:
        assert returned is exercise.reference and "The lesson goes on with the course's version" in out
    return out, record


# ---------------------------------------------------------------------------------------------
# the notebooks and the registry agree
# ---------------------------------------------------------------------------------------------


def test_every_registered_exercise_is_checked_once_in_its_lesson():
    assert sorted(IDS) == sorted(registry.EXERCISES), "lesson check cells and the registry differ"
    assert len(IDS) == len(set(IDS))
    for eid, fn, path in LESSON_CHECKS:
        assert path.name.startswith(eid[:2])
        assert registry.get(eid).function == fn


def test_registry_order_and_for_lesson():
    lessons = [e.lesson for e in registry.EXERCISES.values()]
    assert lessons == sorted(lessons)
    assert [e.id for e in registry.for_lesson("01")] == [
        "01.by_hand_new_query",
        "01.attention_scores",
        "01.softmax_along",
        "01.attend",
        "01.self_attention",
        "01.is_permutation_equivariant",
        "01.strongest_key",
        "01.score_scale",
        "01.shared_next_token_matrix",
    ]
    assert registry.for_lesson("99") == []
    for e in registry.EXERCISES.values():
        assert e.title and e.section and len(e.hints) >= 3, e.id


def test_check_cells_show_no_solution():
    """A check sits in its own cell, or after the function whose body is a solution region (removed for students)."""
    for eid, _, path in LESSON_CHECKS:
        for source in _code_cells(path):
            if f'checks.check("{eid}"' in source:
                own_cell = re.match(r"^(\w+\s*=\s*)?checks\.check\(", source.strip())
                assert own_cell or "### BEGIN SOLUTION" in source, f"{eid}: the check cell shows its solution"


def _headings(lesson: str) -> set[str]:
    path = next((REPO / "notebooks").glob(f"{lesson}_*.ipynb"))
    nb = json.loads(path.read_text(encoding="utf-8"))
    lines = ("".join(c["source"]).splitlines() for c in nb["cells"] if c["cell_type"] == "markdown")
    return {f"{lesson} · {line.lstrip('#').strip()}" for cell in lines for line in cell if line.startswith("##")}


def test_every_section_to_reread_is_a_heading_of_its_lesson():
    sections = [e.section for e in registry.EXERCISES.values()]
    sections += [m.section for m in misconceptions.CATALOGUE]
    sections += [p.section for p in registry.PREDICTIONS.values()]
    missing = [s for s in sections if s not in _headings(s[:2])]
    assert not missing, f"sections that are no heading of their lesson: {missing}"


def test_every_prediction_is_asked_in_its_lesson():
    asked = {
        m.group(1)
        for path in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")
        for source in _code_cells(path)
        for m in re.finditer(r'checks\.predict\(\s*"(\d\d\.\w+)"', source)
    }
    assert asked == set(registry.PREDICTIONS)


# ---------------------------------------------------------------------------------------------
# every exercise, every kind of answer
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eid", IDS)
def test_untouched_stubs_are_not_attempted(eid, capsys, log):
    for stub in _stubs(eid):
        out, record = _run(eid, stub, capsys, log)
        assert record["status"] == "not_attempted" and record["misconception"] is None
        assert out.startswith("⏳") and "not attempted yet" in out


@pytest.mark.parametrize("eid", IDS)
def test_solution_passes_and_is_returned(eid, capsys, log):
    out, record = _run(eid, _solution(eid), capsys, log, strict=True)
    assert record["status"] == "passed" and out.startswith("✅")


@pytest.mark.parametrize("eid", IDS)
def test_crash_names_the_students_line(eid, capsys, log):
    fn = _answer(eid, "scale = 1.0\nreturn scale / 0")
    out, record = _run(eid, fn, capsys, log)
    assert record["status"] == "crashed" and record["misconception"] is None
    assert "ZeroDivisionError" in out and "your line 3: `return scale / 0`" in out
    assert re.search(r"case 1 of \d+ \(", out), "the case is described by its inputs"


@pytest.mark.parametrize("eid", IDS)
def test_none_return_asks_about_return(eid, capsys, log):
    fn = _answer(eid, "result = args\n# forgot to return it")
    out, record = _run(eid, fn, capsys, log)
    assert record["status"] == "wrong"
    assert "returned None: did you forget `return`?" in out


@pytest.mark.parametrize("eid", IDS)
def test_slow_answer_is_stopped(eid, capsys, log):
    fn = _answer(eid, "while True:\n    pass")
    out, record = _run(eid, fn, capsys, log, time_limit=0.2)
    assert record["status"] == "timed_out" and "was stopped" in out


def test_the_course_version_handed_back_is_not_a_pass(capsys, log):
    exercise = registry.get("02.padding_mask")
    returned = checks.check(exercise.id, _stubs(exercise.id)[0])
    capsys.readouterr()
    assert returned is exercise.reference
    out, record = _run(exercise.id, returned, capsys, log)  # the check cell run again, the def cell not
    assert record["status"] == "not_attempted" and "the course's version" in out


# ---------------------------------------------------------------------------------------------
# delegation holes of the old checker, written as a student would
# ---------------------------------------------------------------------------------------------


def test_known_delegation_holes_are_closed(capsys, log):
    import torch

    from course_utils import attention, efficient, explorer, heads, masks, numpy_attention

    cases = [
        ("01.softmax_along", "return numpy_attention.softmax(args[0], args[1])", {"numpy_attention": numpy_attention}),
        (
            "01.attend",
            "Q, K, V = args\nreturn numpy_attention.scaled_dot_product_attention(Q, K, V)",
            {"numpy_attention": numpy_attention},
        ),
        (
            "01.self_attention",
            "X, Wq, Wk, Wv = args\nreturn numpy_attention.scaled_dot_product_attention(X @ Wq, X @ Wk, X @ Wv)",
            {"numpy_attention": numpy_attention},
        ),
        (
            "02.padding_mask",  # side="left" (a third argument) is the helper's rows, mirrored
            "mask = masks.make_padding_mask(*args[:2])\nreturn mask.flip(-1) if args[2:] == ('left',) else mask",
            {"masks": masks},
        ),
        (
            "02.cached_causal_mask",  # a window (a third argument) cut from the helper's triangle
            "q_len, k_len, *window = args\nmask = masks.make_causal_mask(q_len, k_len)\n"
            "if window and window[0] is not None:\n"
            "    mask = mask & torch.ones(q_len, k_len, dtype=torch.bool).triu(k_len - q_len - window[0] + 1)\n"
            "return mask",
            {"masks": masks, "torch": torch},
        ),
        (
            "04.load_from_torch",
            "module, torch_mha = args\nreturn attention.MultiHeadAttention.from_torch(torch_mha)",
            {"attention": attention},
        ),
        ("03.split_heads", "return numpy_attention.split_heads(*args)", {"numpy_attention": numpy_attention}),
        ("05.row_entropy", "return float(explorer.row_entropy(args[0]))", {"explorer": explorer}),
        ("05.switch_off", "return heads.switch_off_heads(*args)", {"heads": heads}),
        ("06.kv_cache_step", "return efficient.kv_cache_step(*args)", {"efficient": efficient}),
    ]
    for eid, body, extra in cases:
        out, record = _run(eid, _answer(eid, body, extra), capsys, log)
        assert record["status"] == "wrong" and "course helper" in out, (eid, out)
    # the helpers work again afterwards, and are the originals
    assert numpy_attention.softmax.__module__ == "course_utils.numpy_attention"
    assert masks.make_padding_mask.__name__ == "make_padding_mask"


def test_a_kv_cache_that_projects_the_prefix_again_is_refused(capsys, log):
    import numpy as np

    history: list = []

    def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
        if len(k_cache) == 0:
            history.clear()
        history.append(x_t)
        prefix = np.stack(history)  # (t + 1, d_model): every token so far, projected again
        keys, values = prefix @ w_k, prefix @ w_v
        scores = keys @ (x_t @ w_q) / np.sqrt(w_q.shape[1])
        weights = np.exp(scores - scores.max())
        return (weights / weights.sum()) @ values, keys, values

    out, record = _run("06.kv_cache_step", kv_cache_step, capsys, log)
    assert record["status"] == "wrong" and "projects 2 positions with w_k" in out and "case 2 of 3" in out
