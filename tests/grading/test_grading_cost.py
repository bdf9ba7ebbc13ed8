"""The grader's own cost per notebook is bounded whatever the result holds (issue 27), and a result the runner did
not sign is refused unread, flagged as tampering and never cached."""

from __future__ import annotations

import json
import time

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from course_utils import grading
from course_utils.grading import job, records, runner, verdicts
from course_utils.grading.guard import Guard, squash

IDS = ["91.alpha", "91.beta", "91.gamma"]
EXERCISES = [records.Exercise(i) for i in IDS]
N_CELLS, N_LINES, MESSAGE = 1_507, 34_379, 2_000  # the forged result


def huge_result() -> tuple[dict, list]:
    """A result as large as the issue's: every cell raised a 2,000-character error, 34,379 check lines."""
    line = json.dumps({"exercise": "91.alpha", "status": "passed", "session": "s"}) + "\n"
    per_cell = N_LINES // N_CELLS + 1
    cells, log, offset = [], [], 0
    for index in range(N_CELLS):
        text = line * per_cell
        cells.append(
            {
                "ran": True,
                "error": {"ename": "ValueError", "evalue": f"{index} " + "x y " * (MESSAGE // 4), "line": 1},
                "log": [offset, offset + len(text)],
            }
        )
        log.append(text)
        offset += len(text)
    sources = [f"log({IDS[i % 3]!r}, 'passed')" for i in range(N_CELLS)]
    return {"cells": cells, "stopped": None, "probe": None, "outside": [], "written": [], "log": "".join(log)}, sources


def test_a_huge_result_costs_the_grader_under_two_seconds():
    result, sources = huge_result()
    guard = Guard(records.COURSE)
    where = {i: k for k, i in enumerate(IDS)}
    start = time.process_time()
    out = verdicts.interpret(result, EXERCISES, sources, where, guard, squash("\n".join(sources)), records.COURSE)
    spent = time.process_time() - start
    assert spent < 2, f"{spent:.2f} s of the grader's own CPU"
    assert out.exercises["91.alpha"][0] == "passed"
    assert any("check lines for 91.alpha in code cell" in flag for flag in out.tampering)  # 23 lines, 1 call


def test_a_forged_result_is_refused_before_it_is_parsed():
    payload = json.dumps({"cells": [{}] * 100_000}).encode()
    key = b"k" * 32
    start = time.process_time()
    assert job.read_signed(runner.sign(payload, b"another key"), key) is None
    assert job.read_signed(payload, key) is None  # no signature at all
    assert job.read_signed(runner.sign(payload, key)[:-1], key) is None  # cut short
    assert time.process_time() - start < 0.5
    assert job.read_signed(runner.sign(payload, key), key) == payload


def test_an_unsigned_result_is_tampering_and_never_cached(tmp_path, monkeypatch):
    nb = new_notebook(cells=[new_code_cell(f"log({i!r}, 'passed')") for i in IDS])
    (tmp_path / "ann").mkdir()
    nbformat.write(nb, tmp_path / "ann" / "91_x.ipynb")
    monkeypatch.setattr(job, "run_sandbox", lambda *args: (None, None, True))  # bytes came back, no valid signature
    run = grading.grade(tmp_path, registry={"91": IDS}, progress=False, jobs=1)
    assert [r.status for r in run.records] == ["crashed"] * 3
    assert all(r.detail.startswith(records.TAMPERING) and "not signed by the runner" in r.detail for r in run.records)
    assert [p.name for p in (tmp_path / records.CACHE_DIR).iterdir()] == ["key"]  # nothing cached
