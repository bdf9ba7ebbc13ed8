"""The exercise engine's behaviour on awkward answers, hints, predictions, and the assertion helpers.

tests/test_exercises.py drives every lesson's exercise; this file pins down the engine itself on one
exercise ("00.dot_scores", cases (3, 2) x (4, 2) and (2, 2) x (5, 2)) and the comparer's messages.
"""

import json
import signal
import subprocess
import sys

import numpy as np
import pytest
import torch

from course_utils import checks, exercises, numpy_attention

EID = "00.dot_scores"


def run(fn, capsys, **kwargs):
    assert checks.check(EID, fn, **kwargs) is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out


# ---------------------------------------------------------------------------------------------
# verdicts
# ---------------------------------------------------------------------------------------------


def test_right_answer_passes(capsys):
    assert run(lambda q, k: q @ k.T, capsys).strip() == "✅ dot_scores: all 2 cases passed."


def test_wrong_answer_names_case_and_first_difference(capsys):
    out = run(lambda q, k: q @ k.T + (q.shape[0] == 2), capsys)
    assert out.startswith("❌ dot_scores: case 2 of 2 is wrong. result: 10 of 10 entries differ")
    assert "first at index (0, 0): expected 1, got 2" in out


def test_forgotten_return_is_not_called_not_attempted(capsys):
    def dot_scores(q, k):
        q @ k.T

    out = run(dot_scores, capsys)
    assert "returned None: did you forget `return`?" in out and "not attempted" not in out


def test_a_real_not_implemented_error_is_a_crash(capsys):
    def dot_scores(q, k):
        return np.linalg.norm(q, ord="nonsense")  # raises ValueError inside NumPy

    def unfinished(q, k):
        _ = q @ k.T
        raise NotImplementedError  # left in after writing code

    def from_a_library(q, k):
        raise NotImplementedError("this backend has no matmul")

    assert "crashed with ValueError" in run(dot_scores, capsys)
    assert "still reaches a `raise NotImplementedError`" in run(unfinished, capsys)
    out = run(from_a_library, capsys)
    assert "not attempted" not in out and "NotImplementedError" in out


def test_crash_inside_a_helper_names_the_students_line(capsys):
    def dot_scores(q, k):
        weights = numpy_attention.softmax(q @ k.T, axis=5)  # the bad axis fails inside NumPy
        return weights

    out = run(dot_scores, capsys)
    assert "💥" in out and "numpy_attention.softmax(q @ k.T, axis=5)" in out


def test_crash_in_a_helper_of_another_cell_names_that_cells_line(capsys):
    import linecache

    namespace = {"np": np, "numpy_attention": numpy_attention}
    cells = {
        "<cell 1>": "def normalise(scores):\n    return numpy_attention.softmax(scores, axis=3)\n",
        "<cell 2>": "def dot_scores(q, k):\n    scores = q @ k.T\n    return normalise(scores)\n",
    }
    for name, source in cells.items():
        linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
        exec(compile(source, name, "exec"), namespace)
    out = run(namespace["dot_scores"], capsys)
    assert "(your line 2: `return numpy_attention.softmax(scores, axis=3)`, inside " in out


def test_timeout_keeps_the_kernel_usable_and_restores_the_alarm(capsys):
    before = signal.getsignal(signal.SIGALRM)

    def dot_scores(q, k):
        while True:
            try:
                pass
            except Exception:  # a student's broad except cannot swallow the stop
                pass

    out = run(dot_scores, capsys, time_limit=0.2)
    assert out.startswith("⌛") and "more than 0.2 s" in out
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert run(lambda q, k: q @ k.T, capsys).startswith("✅")


def test_without_signals_a_check_still_runs(capsys):
    """Outside the main thread there is no SIGALRM: no limit, but the same verdicts."""
    import threading

    printed = []

    def worker():
        printed.append(checks.check(EID, lambda q, k: k @ q.T, time_limit=0.1))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(timeout=30)
    assert printed == [None]
    assert "scores are transposed" in capsys.readouterr().out


def test_the_notebooks_random_state_is_left_alone(capsys):
    torch.manual_seed(123)
    np.random.seed(123)  # noqa: NPY002
    expected_torch, expected_np = torch.rand(3), np.random.rand(3)  # noqa: NPY002
    torch.manual_seed(123)
    np.random.seed(123)  # noqa: NPY002
    run(lambda q, k: q @ k.T + 0 * np.random.rand() + 0 * float(torch.rand(1)), capsys)  # noqa: NPY002
    assert torch.equal(torch.rand(3), expected_torch)
    assert np.array_equal(np.random.rand(3), expected_np)  # noqa: NPY002


@pytest.mark.parametrize(
    "returned",
    [
        (1, 2),  # a tuple where an array is expected
        [[1.0, 2.0], [3.0]],  # ragged
        "scores",
        (x for x in range(3)),  # a generator
        torch.ones(3, 4, dtype=torch.bfloat16),
        torch.ones(3, 4, dtype=torch.complex64),
        torch.ones(3, 4).to_sparse(),
        np.array([object(), None], dtype=object),
        np.zeros((1000, 1000)),
        {"scores": 1},
    ],
    ids=lambda v: type(v).__name__,
)
def test_any_return_value_gives_one_message(returned, capsys):
    out = run(lambda q, k: returned, capsys)
    assert out.startswith(("❌", "💥")) and len(out) < 700


def test_objects_that_refuse_to_print_or_compare(capsys):
    class Hostile:
        def __repr__(self):
            raise RuntimeError("no repr")

        __str__ = __repr__

        def __eq__(self, other):
            raise RuntimeError("no eq")

        def __array__(self, *args, **kwargs):
            raise RuntimeError("no array")

    out = run(lambda q, k: Hostile(), capsys)
    assert out.startswith("❌") and "Hostile" in out

    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no str")

    def raises_unprintable(q, k):
        raise Unprintable

    assert "crashed with Unprintable" in run(raises_unprintable, capsys)


def test_sys_exit_builtins_and_generators_are_answers_too(capsys):
    def leaves(q, k):
        sys.exit(1)

    def generator(q, k):
        yield q @ k.T

    assert "crashed with SystemExit" in run(leaves, capsys)
    assert run(np.dot, capsys).startswith("💥 dot_scores: case 1 of 2 crashed with ValueError")
    assert "but got a generator" in run(generator, capsys)


def test_mutating_the_input_cannot_spoil_later_cases(capsys):
    def dot_scores(q, k):
        result = q @ k.T
        q[:] = 0
        return result

    assert run(dot_scores, capsys).startswith("✅")


def test_strict_raises_assertion_error_only(capsys):
    with pytest.raises(AssertionError, match="did you forget"):
        checks.check(EID, lambda q, k: None, strict=True)
    with pytest.raises(AssertionError, match="crashed"):
        checks.check(EID, lambda q, k: 1 / 0, strict=True)
    assert checks.check(EID, lambda q, k: q @ k.T, strict=True) is None


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"exercise_id '00\.dot_score' .*did you mean '00\.dot_scores'"):
        checks.check("00.dot_score", lambda q, k: q)
    with pytest.raises(TypeError, match="exercise_id must be a string"):
        checks.check(1, lambda q, k: q)
    with pytest.raises(TypeError, match=r"student_fn must be the function you wrote .* but is ndarray"):
        checks.check(EID, np.zeros(2))


def test_log_line(tmp_path, monkeypatch, capsys):
    path = tmp_path / "log.jsonl"
    monkeypatch.setenv("COURSE_CHECK_LOG", str(path))
    checks.check(EID, lambda q, k: k @ q.T)
    checks.demonstrate(EID, lambda q, k: q @ k.T)
    checks.check(EID, lambda q, k: q @ k.T)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    first, second = map(json.loads, lines)
    assert first["status"] == "wrong" and first["misconception"] == "scores_transposed"
    assert first["detail"].startswith("dot_scores: case 1 of 2 is wrong") and first["lesson"] == "00"
    assert second == {"exercise": EID, "lesson": "00", "status": "passed", "misconception": None,
                      "detail": "dot_scores: all 2 cases passed."}  # fmt: skip


def test_importing_the_registry_does_not_import_torch():
    code = "import sys; from course_utils import checks, exercises; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ---------------------------------------------------------------------------------------------
# hints and predictions
# ---------------------------------------------------------------------------------------------


def test_hints_come_one_level_at_a_time(capsys, monkeypatch):
    monkeypatch.setattr(checks, "_HINTS_SHOWN", {})
    hints = exercises.get("01.softmax_along").hints
    for level in range(1, len(hints) + 2):  # one call past the last keeps showing the last
        checks.hint("01.softmax_along")
        out = capsys.readouterr().out
        shown = min(level, len(hints))
        assert out.startswith(f"Hint {shown} of {len(hints)} for softmax_along: {hints[shown - 1]}")
    checks.hint("01.softmax_along", level=1)
    assert capsys.readouterr().out.startswith("Hint 1 of 3")
    with pytest.raises(ValueError, match="level must be from 1 to 3 but is 4"):
        checks.hint("01.softmax_along", level=4)
    with pytest.raises(TypeError, match="level must be an int"):
        checks.hint("01.softmax_along", level="2")


@pytest.mark.parametrize(
    ("pid", "value", "start"),
    [
        ("00.scores_shape", ..., "✍️ Write your prediction first"),
        ("00.scores_shape", (5, 7), "✅ Right: (5, 7)"),
        ("00.scores_shape", (7, 5), "❌ Not quite: 2 of 2 axes are off"),
        ("00.scores_shape", (5, 7, 8), "❌ Not quite: the answer has 2 axes and yours has 3"),
        ("00.scores_shape", "5x7", "❓ A shape is a tuple of ints"),
        ("03.parameters_d512", 786_432, "❌ Off by 264,192 (25% too low)"),
        ("03.parameters_d512", 1_050_624, "✅ Right: 1,050,624"),
        ("02.causal_true_count", 25, "❌ Off by 10 (67% too high)"),
        ("04.same_output", False, "✅ Right: False"),
        ("04.same_output", True, "❌ Not this one"),
        ("04.same_output", 0, "❓ Choose one of True, False"),
        ("01.naive_softmax_overflow", "nan", "✅ Right: 'nan'"),
        ("01.naive_softmax_overflow", " NaN", "✅ Right: 'nan'"),
        ("01.naive_softmax_overflow", "weights", "❌ Not this one"),
    ],
)
def test_predictions_say_how_far_off(pid, value, start, capsys):
    assert checks.predict(pid, value) is None
    assert capsys.readouterr().out.startswith(start)


def test_unknown_prediction_is_named():
    with pytest.raises(ValueError, match="prediction_id '00.shape' is not a known prediction"):
        checks.predict("00.shape", (1, 2))


# ---------------------------------------------------------------------------------------------
# the comparer and the assertion helpers
# ---------------------------------------------------------------------------------------------


def test_compare_messages():
    assert checks.compare(np.arange(3.0), np.arange(3.0)) is None
    assert checks.compare(np.arange(3.0), np.arange(3.0)[None]) == "result: expected shape (3,) but got shape (1, 3)"
    assert "contains NaN, first at index (1,)" in checks.compare(np.ones(2), np.array([1.0, np.nan]))
    assert checks.compare(np.ones(2), np.array([1.0, np.nan]), equal_nan=True) is not None
    assert checks.compare(np.array([np.nan]), np.array([np.nan]), equal_nan=True) is None
    assert checks.compare(torch.ones(2), np.ones(2)).startswith("result: expected a torch.Tensor")
    mask = torch.ones(2, 2, dtype=torch.bool)
    assert checks.compare(mask, mask.float()) == "result: expected dtype bool but got dtype float32"
    assert checks.compare(np.array([9.345]), np.array([9.35]), reveal=False).endswith("off by 0.005 (too high)")
    assert checks.compare((np.ones(1), 2), (np.ones(1), 3)) == "result[1]: expected 2 but got 3"
    assert checks.compare(1_050_624, 786_432) == "result: expected 1,050,624 but got 786,432"


def test_assert_shape():
    x = np.zeros((2, 3))
    assert checks.assert_shape(x, (2, None), name="weights") is x
    with pytest.raises(AssertionError, match=r"weights has shape \(2, 3\) but expected \(2, 4\)"):
        checks.assert_shape(x, (2, 4), name="weights")
    with pytest.raises(AssertionError, match=r"expected \(\*, 3, 1\)"):
        checks.assert_shape(x, (None, 3, 1))


def test_assert_close():
    checks.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-9]))
    with pytest.raises(AssertionError, match=r"out: 1 of 2 entries differ; first at index \(1,\): expected 2, got 2.5"):
        checks.assert_close(np.array([1.0, 2.5]), np.array([1.0, 2.0]), name="out")


def test_docstring_examples():
    import doctest

    for module in (checks, exercises):
        assert doctest.testmod(module).failed == 0, module.__name__
