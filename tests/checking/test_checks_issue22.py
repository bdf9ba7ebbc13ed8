"""Issue 22, in the student's own kernel: each hostile or unlucky answer as the issue describes it gets one verdict.

Each test calls ``checks.check`` / ``checks.predict`` the way a lesson's cell does. The checker must compare a
masked array on its data and its mask; stop an answer that catches the stop, cancels or ignores the alarm, or
sits in one long call into C, in bounded time (the last one by restarting the kernel, which it says); compute
its references under its own NumPy error handling and torch defaults whatever the notebook or the answer set;
and answer any predicted number (huge, NaN, infinite) in words.
"""

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_utils import checks
from course_utils.checking import time_limits
from course_utils.lessons.lesson_01 import core

REPO = Path(__file__).resolve().parents[2]
SOFTMAX = "01.softmax_along"


def _softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _one_line(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out


# ---- 1. masked arrays -------------------------------------------------------------------------------------


def test_masked_all_does_not_pass_softmax_along(capsys):
    def softmax_along(x, axis=-1):
        return np.ma.masked_all(np.shape(x))

    returned = checks.check(SOFTMAX, softmax_along)
    out = _one_line(capsys)
    assert out.startswith("❌") and "masked entries have no value" in out
    assert returned is core.softmax_along  # the lesson goes on with the course's version


def test_a_masked_array_with_right_data_but_some_entries_masked_is_wrong(capsys):
    def softmax_along(x, axis=-1):
        right = _softmax(x, axis)
        return np.ma.masked_array(right, mask=np.arange(right.size).reshape(right.shape) % 2 == 0)

    checks.check(SOFTMAX, softmax_along)
    assert _one_line(capsys).startswith("❌")


def test_a_masked_array_with_right_data_and_nothing_masked_passes(capsys):
    def softmax_along(x, axis=-1):
        return np.ma.masked_array(_softmax(x, axis), mask=False)

    checks.check(SOFTMAX, softmax_along)
    assert _one_line(capsys).startswith("✅")


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(st.floats(-5, 5), min_size=1, max_size=6),
    mask=st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_masked_arrays_are_compared_on_data_and_mask(data, mask):
    values = np.array(data)
    mask = np.array(mask[: len(data)])
    expected = np.ma.masked_array(values, mask=mask)
    assert checks.compare(expected, np.ma.masked_array(values.copy(), mask=mask.copy())) is None
    if mask.any():  # a masked entry has no value: the plain data, or another mask, is not the same answer
        assert checks.compare(values, expected) is not None
    flipped = mask.copy()
    flipped[0] = not flipped[0]
    assert checks.compare(expected, np.ma.masked_array(values.copy(), mask=flipped)) is not None


# ---- 2. the time limit cannot be escaped ------------------------------------------------------------------

ESCAPES = {
    "bare except in a loop": "while True:\n        try:\n            x = sum(range(100))\n        except:\n            pass",
    "except BaseException in a loop": (
        "while True:\n        try:\n            x = sum(range(100))\n        except BaseException:\n            pass"
    ),
    "alarm ignored": "signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    while True:\n        pass",
    "alarm cancelled": "signal.alarm(0)\n    while True:\n        pass",
    "timer cancelled": "signal.setitimer(signal.ITIMER_REAL, 0)\n    while True:\n        pass",
}


@pytest.mark.parametrize("escape", list(ESCAPES))
def test_an_answer_that_swallows_or_cancels_the_stop_gets_a_verdict_in_bounded_time(escape, capsys):
    namespace = {"signal": signal}
    exec(f"def softmax_along(x, axis=-1):\n    {ESCAPES[escape]}\n", namespace)  # noqa: S102
    before = signal.getsignal(signal.SIGALRM)
    start = time.monotonic()
    returned = checks.check(SOFTMAX, namespace["softmax_along"], time_limit=0.3)
    assert time.monotonic() - start < 10
    lines = capsys.readouterr().out.splitlines()
    # one verdict; an answer that kept catching the stop for 2 s is first told, while it runs, to stop doing so
    assert len(lines) in (1, 2) and all(line.startswith("⌛") for line in lines), lines
    assert "The lesson goes on with the course's version" in lines[-1] and returned is core.softmax_along
    # the kernel stays usable: the notebook's alarm handler is back, no timer left running, the next check works
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    checks.check(SOFTMAX, core.softmax_along_shifted)
    assert _one_line(capsys).startswith("✅")


LONG_C_CALL = """
import os, sys, time
from course_utils import checks
from course_utils.checking import runner
from course_utils.checking import time_limits
time_limits.HARD_STOP_GRACE_S = {grace}

def softmax_along(x, axis=-1):
    return sum(range(10**10))  # minutes of C code that nothing inside the process can interrupt

print("started", flush=True)
checks.check("01.softmax_along", softmax_along, time_limit=0.2)
print("returned", flush=True)
"""


def test_one_long_call_into_c_gets_a_verdict_in_bounded_time(tmp_path):
    """``sum(range(10**10))``: the check's guard process restarts the kernel and says so, within its grace."""
    env = {**os.environ, "COURSE_CHECK_LOG": str(tmp_path / "log.jsonl"), "TMPDIR": str(tmp_path)}
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", LONG_C_CALL.format(grace=1.0)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=REPO,
    )
    elapsed = time.monotonic() - start
    assert "started" in proc.stdout and "returned" not in proc.stdout
    assert proc.returncode == -signal.SIGKILL and elapsed < 30
    message = next((line for line in proc.stderr.splitlines() if line.startswith("⌛")), proc.stderr)
    assert message.startswith("⌛ softmax_along: ") and "cannot interrupt" in message and "restart" in message
    (record,) = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert (record["event"], record["exercise"], record["status"]) == ("check", SOFTMAX, "timed_out")
    # the restarted kernel's next check of this exercise says what happened, once
    script = (
        "from course_utils import checks\nfrom course_utils.lessons.lesson_01 import core\n"
        "checks.check('01.softmax_along', core.softmax_along_shifted)\n"
        "checks.check('01.softmax_along', core.softmax_along_shifted)\n"
    )
    again = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env, cwd=REPO
    )
    lines = again.stdout.splitlines()
    assert len(lines) == 3 and "restarted the kernel" in lines[0] and lines[1].startswith("✅"), again.stdout
    assert lines[2].startswith("✅")


FINISHED_CHECKS = """
import time
from course_utils import checks
from course_utils.checking import runner
from course_utils.checking import time_limits
from course_utils.lessons.lesson_01 import exercises as lesson_01
from course_utils.lessons.lesson_01 import core
time_limits.HARD_STOP_GRACE_S = 0.5

def softmax_along(x, axis=-1):
    time.sleep(0.2)  # each case well inside its limit; all cases together well past the hard stop
    return core.softmax_along_shifted(x, axis)

for _ in range(2):
    checks.check("01.softmax_along", softmax_along, time_limit=0.4)
time_limits._guard.process.kill()  # the guard died: the next check starts another
time_limits._guard.process.wait()
checks.check("01.softmax_along", softmax_along, time_limit=0.4)
time.sleep(1.5)
print("alive", time_limits._guard.process.poll() is None, flush=True)
"""


def test_an_old_notice_is_dropped_unread(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    path = Path(time_limits._notice_path(SOFTMAX))
    path.write_text("⌛ softmax_along: ... so the check restarted the kernel.\n")
    os.utime(path, (time.time() - 2 * time_limits.NOTICE_FRESH_S,) * 2)
    checks.check(SOFTMAX, core.softmax_along_shifted)
    assert _one_line(capsys).startswith("✅") and not path.exists()
    path.write_text("⌛ softmax_along: ... so the check restarted the kernel.\n")
    assert time_limits.stopped_notice(SOFTMAX).startswith("(Last time: softmax_along: ") and not path.exists()
    assert time_limits.stopped_notice(SOFTMAX) is None


def test_a_finished_check_never_ends_the_kernel(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", FINISHED_CHECKS], capture_output=True, text=True, timeout=60, env=env, cwd=REPO
    )
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and lines[-1] == "alive True", (proc.stdout, proc.stderr)
    assert [line[0] for line in lines[:-1]] == ["✅"] * 3


def test_the_guard_costs_no_time_per_check(capsys):
    checks.check(SOFTMAX, core.softmax_along_shifted)  # the guard process, started once per kernel
    capsys.readouterr()
    start = time.perf_counter()
    for _ in range(20):
        checks.check(SOFTMAX, core.softmax_along_shifted)
    per_check = (time.perf_counter() - start) / 20
    capsys.readouterr()
    assert per_check < 0.1, per_check


def test_a_guard_that_cannot_start_leaves_the_in_process_limit(capsys, monkeypatch):
    monkeypatch.setattr(time_limits, "_guard", time_limits._Guard(executable=str(REPO / "no-such-python")))
    checks.check(SOFTMAX, core.softmax_along_shifted)
    assert _one_line(capsys).startswith("✅")

    def endless(x, axis=-1):
        while True:
            pass

    checks.check(SOFTMAX, endless, time_limit=0.2)
    assert _one_line(capsys).startswith("⌛")


# ---- 3. the notebook's settings do not reach the check, the answer's do not reach the notebook --------------


def test_np_seterr_raise_in_the_notebook_does_not_make_a_check_raise(capsys):
    old = np.seterr(all="raise")
    try:
        checks.check(SOFTMAX, core.softmax_along_shifted)
        assert _one_line(capsys).startswith("✅")

        def naive(x, axis=-1):
            e = np.exp(x)
            return e / e.sum(axis=axis, keepdims=True)

        checks.check(SOFTMAX, naive)
        assert _one_line(capsys).startswith("❌")
        assert np.geterr() == {"divide": "raise", "over": "raise", "under": "raise", "invalid": "raise"}
    finally:
        np.seterr(**old)


def test_an_answer_that_sets_torchs_default_device_to_meta_breaks_no_later_check(capsys):
    def band(q_len, k_len, window):
        ones = torch.ones(q_len, k_len, dtype=torch.bool, device="cpu")
        allowed = ones.tril(diagonal=k_len - q_len)
        return allowed if window is None else allowed & ones.triu(diagonal=k_len - q_len - window + 1)

    def causal_mask(q_len, k_len, window=None):
        torch.set_default_device("meta")
        return band(q_len, k_len, window)

    def changes_dtype(q_len, k_len, window=None):
        torch.set_default_dtype(torch.float64)
        return band(q_len, k_len, window)

    try:
        for answer in (causal_mask, changes_dtype):
            checks.check("02.cached_causal_mask", answer)
            assert _one_line(capsys).startswith("✅")
            assert torch.get_default_dtype() == torch.float32 and str(torch.get_default_device()) == "cpu"
        checks.check(SOFTMAX, core.softmax_along_shifted)
        assert _one_line(capsys).startswith("✅")
        assert torch.ones(2).device.type == "cpu"
    finally:
        torch.set_default_device(None)
        torch.set_default_dtype(torch.float32)


def test_the_notebooks_own_torch_defaults_are_kept_and_do_not_change_the_verdict(capsys):
    from course_utils.lessons.lesson_02 import core

    torch.set_default_dtype(torch.float64)
    try:
        checks.check("02.masked_softmax", core.masked_softmax_nan_to_zero)
        assert _one_line(capsys).startswith("✅")
        assert torch.get_default_dtype() == torch.float64  # the notebook's setting, restored
    finally:
        torch.set_default_dtype(torch.float32)


# ---- 4. predictions of any number are answered in words -----------------------------------------------------


@pytest.mark.parametrize("value", [10**400, -(10**400), float("nan"), float("inf"), float("-inf"), np.float64("nan")])
@pytest.mark.parametrize("pid", ["03.parameters_d512", "04.weight_on_match_before", "01.score_variance_d64"])
def test_any_predicted_number_is_answered_in_words(pid, value, capsys):
    assert checks.predict(pid, value) is None
    out = _one_line(capsys)
    assert out.startswith(("❌", "❓")), out
    assert "nan" not in out.lower().replace("nan'", "") or "NaN" in out, out
    assert "nan%" not in out and "inf%" not in out and "Off by nan" not in out and "Off by inf" not in out, out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.one_of(st.integers(), st.floats(allow_nan=True, allow_infinity=True)))
def test_any_number_predicted_gets_one_line_without_nan_or_inf_arithmetic(value):
    from course_utils.checking import predictions, registry

    prediction = registry.get_prediction("03.parameters_d512")
    verdict = predictions.judge_prediction(prediction, value)
    assert verdict.status in ("right", "wrong", "not_answered")
    assert "\n" not in verdict.message
    for bad in ("nan%", "inf%", "Off by nan", "Off by inf"):
        assert bad not in verdict.message
    if isinstance(value, float) and not math.isfinite(value):
        assert verdict.status != "right"
