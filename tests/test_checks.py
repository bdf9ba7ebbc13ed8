"""The exercise engine's behaviour on awkward and hostile answers, messages, the check log, and the assertions.

tests/lessons/test_exercises.py drives every lesson's exercise; this file pins down the engine itself, mostly on one
exercise ("00.dot_scores": q (3, 2) x k (4, 2), q (2, 3) x k (5, 3), q (1, 4) x k (6, 4)), and the comparer.
Hints and predictions are tests/checking/test_checks_feedback.py.
"""

import json
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import torch

from course_utils import checks, numpy_attention
from course_utils.checking import log as check_log
from course_utils.checking import registry, runner

EID = "00.dot_scores"


def run(fn, capsys, **kwargs):
    returned = checks.check(EID, fn, **kwargs)
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    reference = registry.get(EID).reference
    assert returned is (fn if out.startswith("✅") else reference)
    return out


# ---------------------------------------------------------------------------------------------
# verdicts and messages
# ---------------------------------------------------------------------------------------------


def test_right_answer_passes_and_is_returned(capsys):
    def dot_scores(q, k):
        return q @ k.T

    assert checks.check(EID, dot_scores) is dot_scores
    assert capsys.readouterr().out.strip() == "✅ dot_scores: all 3 cases passed."


def test_wrong_answer_names_the_case_by_its_inputs(capsys):
    out = run(lambda q, k: q @ k.T + (q.shape[0] == 2), capsys)
    assert out.startswith("❌ dot_scores: case 2 of 3 (q (2, 3), k (5, 3)) is wrong: result: 10 of 10 entries differ")
    assert "first at index (0, 0): expected" in out
    assert "The lesson goes on with the course's version of dot_scores." in out


def test_a_misconception_is_named_with_its_section(capsys):
    out = run(lambda q, k: k @ q.T, capsys)
    assert "It looks like a known mistake: the scores are transposed" in out
    assert "Re-read «00 · Try it: dot-product scores»" in out


def test_a_mistake_on_one_axis_only_is_named_by_the_step_it_varies(capsys):
    from course_utils.lessons.lesson_01 import core

    def softmax_along(x, axis=-1):  # right everywhere except down the columns, where it uses the rows
        return core.softmax_along_shifted(x, -1 if axis == 0 else axis)

    checks.check("01.softmax_along", softmax_along)
    out = capsys.readouterr().out
    # the catalogue's wrong-axis answer is wrong on cases this one gets right, so it alone does not name it;
    # the course's softmax with its axis replaced by the last one (a mutation) explains the one failing case
    assert "case 3 of 5 (x (3, 2), axis=0: down the columns) is wrong" in out
    assert "On the failing case your result is the right computation with its softmax over the last axis" in out
    assert "It looks like a known mistake: softmax over the wrong axis" in out


def test_one_of_two_outputs_matching_a_misconception_is_named_on_that_output(capsys):
    from course_utils.lessons.lesson_08 import layers

    def my_decoder_masks(src_lengths, src_len, tgt_len):
        self_mask, cross_mask = layers.decoder_masks_tril(src_lengths, src_len, tgt_len)
        return ~self_mask, cross_mask  # only the causal mask inverted

    checks.check("08.my_decoder_masks", my_decoder_masks)
    out = capsys.readouterr().out
    assert "Your self_mask matches a known mistake on every case: the mask means the opposite" in out
    assert "Your cross_mask does not show it." in out


def test_the_convention_message_says_which_api_wants_which(capsys):
    from course_utils.lessons.lesson_04 import parity

    checks.check("04.torch_cross_attend", parity.nn_mha_mask_not_flipped)
    out = capsys.readouterr().out
    assert "nn.MultiheadAttention's key_padding_mask and attn_mask mean True = ignore" in out
    assert "F.scaled_dot_product_attention's True = may attend" in out


def test_forgotten_return_is_not_called_not_attempted(capsys):
    def dot_scores(q, k):
        q @ k.T

    out = run(dot_scores, capsys)
    assert "returned None: did you forget `return`?" in out and "not attempted" not in out


def test_stubs_of_both_kinds_are_not_attempted(capsys):
    def dot_scores(q, k):
        """Return the scores."""
        ...

    def old_stub(q, k):
        raise NotImplementedError

    for stub in (dot_scores, old_stub):
        out = run(stub, capsys)
        assert out.startswith("⏳ dot_scores: not attempted yet")


def test_a_class_is_a_stub_when_every_method_is(capsys):
    class Layer:
        def __init__(self, d_model):
            """Build it."""
            ...

        def forward(self, x): ...

    class Started(Layer):
        def forward(self, x):
            return x

    class WithSuper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            ...

    assert runner.is_stub(Layer) and runner.is_stub(WithSuper)
    assert not runner.is_stub(Started)
    assert runner.stub_methods(Layer) == ["__init__", "forward"]


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
        weights = numpy_attention.softmax(q @ k.T, axis=5)  # the bad axis fails inside the helper
        return weights

    out = run(dot_scores, capsys)
    assert out.startswith("💥 dot_scores: case 1 of 3 (q (3, 2), k (4, 2)) crashed with ValueError")
    assert "numpy_attention.softmax(q @ k.T, axis=5)" in out


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
    # the crash is in another of the student's functions: named by that function, not as "your line 2"
    assert "(in `normalise`, its line 2: `return numpy_attention.softmax(scores, axis=3)`, inside " in out
    assert "your line" not in out


def test_messages_are_never_cut_mid_word():
    from course_utils.checking.compare import shorten

    text = "word " * 200
    cut = shorten(text, 57)
    assert len(cut) <= 57 and cut.endswith("word…")
    assert shorten("short", 57) == "short"


# ---------------------------------------------------------------------------------------------
# the time limit cannot be escaped
# ---------------------------------------------------------------------------------------------


def _kernel_is_fine(capsys, before):
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert run(lambda q, k: q @ k.T, capsys).startswith("✅")


def test_a_loop_that_catches_everything_is_stopped(capsys):
    before = signal.getsignal(signal.SIGALRM)

    def dot_scores(q, k):
        while True:
            try:
                pass
            except:  # noqa: E722  (a beginner's bare except swallows BaseException too)
                pass

    out = run(dot_scores, capsys, time_limit=0.2)
    assert out.startswith("⌛") and "more than 0.2 s" in out
    _kernel_is_fine(capsys, before)


@pytest.mark.parametrize(
    "escape",
    ["signal.alarm(0)", "signal.setitimer(signal.ITIMER_REAL, 0)", "signal.signal(signal.SIGALRM, signal.SIG_IGN)"],
)
def test_an_answer_that_cancels_the_alarm_is_still_stopped(escape, capsys):
    before = signal.getsignal(signal.SIGALRM)
    namespace = {"signal": signal}
    exec(f"def dot_scores(q, k):\n    {escape}\n    while True:\n        pass\n", namespace)
    out = run(namespace["dot_scores"], capsys, time_limit=0.2)
    assert out.startswith("⌛ dot_scores: case 1 of 3") and "was stopped" in out
    _kernel_is_fine(capsys, before)


def test_one_long_call_into_c_is_reported_when_it_returns(capsys):
    before = signal.getsignal(signal.SIGALRM)
    n = 10**7
    start = time.monotonic()
    sum(range(n))
    n = int(n * 2.5 / max(time.monotonic() - start, 1e-3))  # about 2.5 s of C code that no signal interrupts

    def dot_scores(q, k):
        sum(range(n))
        return q @ k.T

    out = run(dot_scores, capsys, time_limit=0.05)
    assert out.startswith("⌛") and "cannot be stopped until it returns" in out and "restart" in out
    _kernel_is_fine(capsys, before)


def test_an_answer_that_catches_the_stop_and_goes_on_is_timed_out(capsys):
    def dot_scores(q, k):
        caught = 0
        while caught < 8:  # catch eight stops, then finish as if nothing happened
            try:
                while True:
                    pass
            except BaseException:
                caught += 1
        return q @ k.T

    out = run(dot_scores, capsys, time_limit=0.1)
    assert out.startswith("⌛") and "it kept catching the stop" in out


NESTED_CATCHES = """
def dot_scores(q, k):
    while True:
        try:
            try:
                try:
                    while True:  # a stop lands here, or in a handler that is itself inside a try
                        pass
                except BaseException:
                    pass
            except BaseException:
                pass
        except BaseException:
            pass
"""


def test_an_answer_that_cannot_be_stopped_says_to_restart_the_kernel():
    script = "from course_utils import checks\nfrom course_utils.checking import time_limits\n"
    script += "time_limits.STUCK_AFTER_STOPS = 3\n" + NESTED_CATCHES
    script += "checks.check('00.dot_scores', dot_scores, time_limit=0.2)\n"
    proc = subprocess.Popen(
        [sys.executable, "-u", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    seen = []
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            if "restart the kernel" in line:
                break
    finally:
        proc.kill()
        proc.communicate()
    out = "".join(seen)
    assert "keeps catching the stop" in out and "restart the kernel" in out


def test_without_signals_a_check_still_stops_a_loop(capsys):
    """Outside the main thread there is no SIGALRM: the watchdog's injected stop does the work."""
    printed = []

    def endless(q, k):
        while True:
            pass

    def worker():
        printed.append(checks.check(EID, endless, time_limit=0.2))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert "was stopped" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# the notebook's state, and the engine's own
# ---------------------------------------------------------------------------------------------


def test_the_notebooks_random_state_is_left_alone(capsys):
    torch.manual_seed(123)
    np.random.seed(123)  # noqa: NPY002
    expected_torch, expected_np = torch.rand(3), np.random.rand(3)  # noqa: NPY002
    torch.manual_seed(123)
    np.random.seed(123)  # noqa: NPY002
    run(lambda q, k: q @ k.T + 0 * np.random.rand() + 0 * float(torch.rand(1)), capsys)  # noqa: NPY002
    assert torch.equal(torch.rand(3), expected_torch)
    assert np.array_equal(np.random.rand(3), expected_np)  # noqa: NPY002


def test_the_notebooks_numpy_errors_do_not_break_a_check(capsys):
    old = np.seterr(all="raise")  # a debugging habit in the NaN lessons
    try:
        assert run(lambda q, k: q @ k.T, capsys).startswith("✅")
        checks.check("01.softmax_along", lambda x, axis=-1: np.exp(x) / np.exp(x).sum(axis, keepdims=True))
        assert "known mistake: exp without subtracting the maximum" in capsys.readouterr().out
        assert np.geterr()["over"] == "raise"
    finally:
        np.seterr(**old)


def test_an_answer_that_changes_torchs_defaults_breaks_no_check(capsys):
    from course_utils.lessons.lesson_02 import core

    def my_causal_mask(q_len, k_len, window=None):
        torch.set_default_device("meta")
        torch.set_default_dtype(torch.float64)
        ones = torch.ones(q_len, k_len, dtype=torch.bool, device="cpu")
        allowed = ones.tril(diagonal=k_len - q_len)
        return allowed if window is None else allowed & ones.triu(diagonal=k_len - q_len - window + 1)

    try:
        checks.check("02.cached_causal_mask", my_causal_mask)
        assert capsys.readouterr().out.startswith("✅")
        assert torch.get_default_dtype() == torch.float32 and str(torch.get_default_device()) == "cpu"
        checks.check("02.padding_mask", core.padding_mask_loop)
        assert capsys.readouterr().out.startswith("✅")
    finally:
        torch.set_default_device(None)
        torch.set_default_dtype(torch.float32)


def test_a_notebook_on_float64_gets_the_same_verdict(capsys):
    from course_utils.lessons.lesson_02 import core

    torch.set_default_dtype(torch.float64)
    try:
        checks.check("02.masked_softmax", core.masked_softmax_nan_to_zero)
        assert capsys.readouterr().out.startswith("✅")
    finally:
        torch.set_default_dtype(torch.float32)


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
        torch.ones(3, 4, device="meta"),
        np.array([object(), None], dtype=object),
        np.zeros((1000, 1000)),
        np.ma.masked_all((3, 4)),
        {"scores": 1},
    ],
    ids=lambda v: type(v).__name__,
)
def test_any_return_value_gives_one_message(returned, capsys):
    out = run(lambda q, k: returned, capsys)
    assert out.startswith(("❌", "💥")) and len(out) < 700


def test_a_masked_array_is_compared_on_its_data_and_its_mask(capsys):
    out = run(lambda q, k: np.ma.masked_all((q.shape[0], k.shape[0])), capsys)
    assert "masked entries have no value" in out
    right_but_masked = run(lambda q, k: np.ma.masked_array(q @ k.T, mask=False), capsys)
    assert right_but_masked.startswith("✅")


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
    assert run(np.dot, capsys).startswith("💥 dot_scores: case 1 of 3 (q (3, 2), k (4, 2)) crashed with ValueError")
    assert "but got a generator" in run(generator, capsys)


def test_mutating_the_input_is_named_and_cannot_spoil_later_cases(capsys):
    from course_utils.checking import preparing

    def dot_scores(q, k):
        result = q @ k.T
        q[:] = 0
        return result

    case = preparing.prepare(registry.get("00.dot_scores")).cases[0]
    before = [a.copy() for a in case]
    out = run(dot_scores, capsys)
    # the lesson's own q would be zeros now: refused by the argument's name (issue 26), on a copy of the case
    assert out.startswith("❌") and "changed its argument `q` in place" in out
    assert all(np.array_equal(a, b) for a, b in zip(case, before, strict=True))


def test_strict_raises_assertion_error_only(capsys):
    with pytest.raises(AssertionError, match="did you forget"):
        checks.check(EID, lambda q, k: None, strict=True)
    with pytest.raises(AssertionError, match="crashed"):
        checks.check(EID, lambda q, k: 1 / 0, strict=True)

    def dot_scores(q, k):
        return q @ k.T

    assert checks.check(EID, dot_scores, strict=True) is dot_scores


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"exercise_id '00\.dot_score' .*did you mean '00\.dot_scores'"):
        checks.check("00.dot_score", lambda q, k: q)
    with pytest.raises(ValueError, match=r"exercise_id '42\.nothing' is not a known exercise"):
        checks.check("42.nothing", lambda q, k: q)
    with pytest.raises(TypeError, match="exercise_id must be a string"):
        checks.check(1, lambda q, k: q)
    with pytest.raises(TypeError, match=r"the answer must be the function you wrote .* but is ndarray"):
        checks.check(EID, np.zeros(2))
    with pytest.raises(ValueError, match="time_limit must be a positive number"):
        checks.check(EID, lambda q, k: q, time_limit=-1)


# ---------------------------------------------------------------------------------------------
# the check log
# ---------------------------------------------------------------------------------------------


def test_log_records_follow_the_contract(tmp_path, monkeypatch, capsys):
    path = tmp_path / "log.jsonl"
    path.write_text(
        '{"exercise": "00.dot_scores", "lesson": "00", "status": "wrong", "misconception": null, '
        '"detail": "a v1 line"}\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("COURSE_CHECK_LOG", str(path))
    checks.check(EID, lambda q, k: k @ q.T)
    checks.demonstrate(EID, lambda q, k: q @ k.T)  # not the student's attempt: not logged
    checks.check(EID, lambda q, k: q @ k.T)
    checks.predict("00.scores_shape", (7, 5))
    checks.hint(EID)
    checks.hint(EID, level=2)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 6
    first, second, predicted, hinted, shown = lines[1:]
    for record in lines[1:]:
        assert record["v"] == 2 and record["lesson"] == "00" and len(record["session"]) == 16
        assert record["time"].endswith("Z") and len(record["detail"]) <= 500
    assert first["event"] == "check" and first["status"] == "wrong" and first["misconception"] == "scores_transposed"
    assert first["attempt"] == 2  # the v1 line was attempt 1
    assert first["detail"].startswith("dot_scores: case 1 of 3 (q (3, 2), k (4, 2)) is wrong")
    assert second["status"] == "passed" and second["attempt"] == 3 and second["misconception"] is None
    assert predicted["event"] == "predict" and predicted["status"] == "wrong" and predicted["attempt"] == 1
    assert predicted["prediction"] == "(7, 5)" and predicted["known_wrong"] == "scores_transposed"
    assert hinted["event"] == "hint" and hinted["status"] == "shown" and hinted["level"] == 1
    assert "explicit" not in hinted
    assert shown["level"] == 2 and shown["explicit"] is True and shown["attempt"] == 2


def test_without_a_log_file_attempts_count_in_the_kernel(monkeypatch, capsys):
    monkeypatch.delenv("COURSE_CHECK_LOG", raising=False)
    before = check_log.attempts_so_far("check", "01.score_scale")
    checks.check("01.score_scale", lambda d, v: 1.0)
    checks.check("01.score_scale", lambda d, v: 1.0)
    assert check_log.attempts_so_far("check", "01.score_scale") == before + 2


def test_every_record_goes_to_the_hub_sink(monkeypatch, capsys):
    import types

    sent = []
    hub = types.ModuleType("course_utils.hub_client")
    hub.send = sent.append
    monkeypatch.setitem(sys.modules, "course_utils.hub_client", hub)
    monkeypatch.setattr(check_log, "_hub", {"module": None, "tried": False})
    checks.check(EID, lambda q, k: q @ k.T)
    checks.predict("00.scores_shape", (5, 7))
    assert [r["event"] for r in sent] == ["check", "predict"] and sent[0]["status"] == "passed"

    def broken(record):
        raise RuntimeError("hub down")

    hub.send = broken
    checks.check(EID, lambda q, k: q @ k.T)  # a failing sink says so once, and the check goes on
    assert "could not send the check to the hub" in capsys.readouterr().out


def test_an_unwritable_log_is_reported_once(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_CHECK_LOG", str(tmp_path / "missing" / "log.jsonl"))
    monkeypatch.setattr(check_log, "_reported", set())
    checks.check(EID, lambda q, k: q @ k.T)
    checks.check(EID, lambda q, k: q @ k.T)
    assert capsys.readouterr().out.count("could not append to COURSE_CHECK_LOG") == 1


def test_importing_the_engine_does_not_import_torch():
    code = (
        "import sys; from course_utils import checks; from course_utils.checking import registry; "
        "from course_utils.checking import misconceptions, engine, patches; registry.get('01.softmax_along'); "
        "checks.check('00.dot_scores', lambda q, k: q @ k.T); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "False"


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
    assert checks.compare(10**400, 10**400) is None and checks.compare(3, 10**400) is not None


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

    from course_utils.checking import cases, compare, misconceptions, patches, predictions

    for module in (checks, registry, compare, misconceptions, patches, predictions, cases):
        assert doctest.testmod(module).failed == 0, module.__name__


def test_every_verdict_ends_its_sentence_before_the_lesson_goes_on(capsys):
    """A detail without a full stop (06's refusal of a cache that re-projects the prefix) still reads as two sentences."""
    import math
    import re

    from course_utils import numpy_attention

    seen: list = []

    def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):  # right outputs, but every position projected again
        if len(k_cache) == 0:
            seen.clear()
        seen.append(x_t)
        keys, values = np.stack(seen) @ w_k, np.stack(seen) @ w_v  # (t + 1, d_head) each
        scores = keys @ (x_t @ w_q) / math.sqrt(w_q.shape[1])
        weights = np.exp(scores - scores.max())
        return weights @ values / weights.sum(), keys, values

    answers = {
        EID: lambda q, k: q @ k.T + 1,  # wrong
        "01.softmax_along": lambda x, axis=-1: numpy_attention.softmax(x, axis=axis),  # a course helper does the work
        "06.kv_cache_step": kv_cache_step,  # refused
    }
    for exercise_id, answer in answers.items():
        checks.check(exercise_id, answer)
        out = capsys.readouterr().out
        assert "The lesson goes on" in out and re.search(r"[.!?] The lesson goes on", out), out
