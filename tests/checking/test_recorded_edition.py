"""The published edition checks answers from recorded data, as well as the repository does (issue 29).

One published tree is built (``scripts/publish_student_edition.py``'s ``build_tree``); the same script of checks
then runs twice in a fresh interpreter: on the repository, and on the published tree with an import path that
holds only that tree and the installed packages (``benchmarks/published_battery.py``'s ``isolate``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REPLAYED = ("00", "03", "06")  # the lessons whose every exercise is recorded (scripts/record_checks.py says why not)

_SCRIPT = r"""
import contextlib, importlib.util, io, json, sys
edition = sys.argv[1]
if edition != "-":
    spec = importlib.util.spec_from_file_location("published_battery", sys.argv[2])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.isolate(edition)
import numpy as np
import course_utils
from course_utils import bugs, checks
from course_utils.checking import engine, handed_back, recorded, registry

def verdict(exercise_id, fn):
    exercise = registry.get(exercise_id)
    with handed_back.as_in_a_fresh_kernel(), contextlib.redirect_stdout(io.StringIO()):
        found = recorded.guarded(lambda: engine.judge(exercise, fn), engine.Verdict)
    return [found.status, found.misconception, found.relation, found.detail]

def dot_right(q, k):
    return np.einsum("qd,kd->qk", q, k)

def dot_transposed(q, k):  # the catalogue's scores_transposed, written by a student
    return (q @ k.T).T

def dot_plus_one(q, k):  # a mistake nobody recorded
    return q @ k.T + 1.0

def split_right(x, num_heads):
    b, n, d = x.shape
    return x.reshape(b, n, num_heads, d // num_heads).transpose(0, 2, 1, 3)

def split_no_transpose(x, num_heads):
    b, n, d = x.shape
    return x.reshape(b, num_heads, n, d // num_heads)

def split_doubled(x, num_heads):
    return 2 * split_right(x, num_heads)

out = {"from": course_utils.__file__}
for name, exercise_id, fn in [
    ("dot_right", "00.dot_scores", dot_right),
    ("dot_transposed", "00.dot_scores", dot_transposed),
    ("dot_plus_one", "00.dot_scores", dot_plus_one),
    ("dot_zoo", "00.dot_scores", bugs.dot_scores_transposed),
    ("split_right", "03.split_heads", split_right),
    ("split_no_transpose", "03.split_heads", split_no_transpose),
    ("split_doubled", "03.split_heads", split_doubled),
]:
    out[name] = verdict(exercise_id, fn)
spec = importlib.util.spec_from_file_location("battery_1_06", sys.argv[3])  # a development battery, read freely
battery = importlib.util.module_from_spec(spec)
spec.loader.exec_module(battery)
every_tile = next(c for c in battery.CASES if c["id"] == "06-047")  # computes future tiles, then masks them
namespace = {"np": np, "math": __import__("math")}
exec(every_tile["source"], namespace)
out["every_tile"] = verdict("06.causal_tiled_attention", namespace["causal_tiled_attention"])
with contextlib.redirect_stdout(io.StringIO()):
    back = checks.check("00.dot_scores", dot_plus_one)
try:
    back(np.ones((2, 3)), np.ones((5, 3)))
    out["handed_back"] = "ran"
except Exception as exc:
    out["handed_back"] = [type(exc).__name__, str(exc)]
out["reference"] = type(registry.get("03.split_heads").reference).__name__
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from publish_student_edition import build_tree
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    out = tmp_path_factory.mktemp("published") / "edition"
    build_tree(out)
    return out


def _run(edition_arg: str, cwd: Path) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "COURSE_CHECK_LOG": ""}
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            _SCRIPT,
            edition_arg,
            str(ROOT / "benchmarks" / "published_battery.py"),
            str(ROOT / "benchmarks" / "blind" / "battery_1" / "lesson_06.py"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs(edition, tmp_path_factory):
    """``(on the repository, on the published tree)``: the same checks, in two fresh interpreters."""
    return _run("-", ROOT), _run(str(edition), tmp_path_factory.mktemp("cwd"))


def test_the_replayed_lessons_ship_data_not_the_code_that_computes_answers(edition):
    package = edition / "notebooks" / "course_utils"
    for lesson in REPLAYED:
        loader = (package / "lessons" / f"lesson_{lesson}" / "exercises.py").read_text(encoding="utf-8")
        assert f'recorded_exercises.lesson("{lesson}")' in loader and "def " not in loader
        assert (edition / "notebooks" / "data" / "checks" / f"lesson_{lesson}.npz").is_file()
    sums = (edition / "notebooks" / "data" / "checks" / "SHA256SUMS").read_text()
    assert all(f"lesson_{lesson}.json" in sums for lesson in REPLAYED)


def test_the_published_edition_checks_and_names_mistakes_as_the_repository_does(edition, runs):
    repo, published = runs
    assert Path(published["from"]).is_relative_to(edition) and not Path(repo["from"]).is_relative_to(edition)
    assert published["reference"] == "Recorded" and repo["reference"] == "function"
    for name in ("dot_right", "split_right"):
        assert published[name][0] == "passed", published[name]
    assert published["dot_transposed"][1] == "scores_transposed"
    assert published["dot_zoo"][1] == "scores_transposed"  # the bug zoo's version, itself recorded data
    # a catalogue patch of a module only the reference imported (numpy_attention): imported when replayed too
    assert published["split_no_transpose"][:2] == ["wrong", "split_single_reshape"]
    for name in ("dot_plus_one", "split_doubled"):  # answers the recording never saw: judged, not a crash
        assert published[name][0] == "wrong", published[name]
    # the course's score count comes from what its reference logged on the case's arrays, replayed
    assert "where the course's computes 34" in published["every_tile"][3]
    for name in (
        "every_tile",
        "dot_right",
        "dot_transposed",
        "dot_plus_one",
        "dot_zoo",
        "split_right",
        "split_no_transpose",
        "split_doubled",
    ):
        assert published[name] == repo[name], name


def test_what_a_failed_check_hands_back_is_data_that_says_what_it_knows(runs):
    repo, published = runs
    assert repo["handed_back"] == "ran"  # the repository's reference runs on any input
    kind, words = published["handed_back"]
    assert kind == "NotRecorded"
    assert "recorded data" in words and "knows the check's own inputs only" in words
