"""benchmarks/claims.py: the runner over course_utils.experiments' claims, its CLI and its JSON contract."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from course_utils.experiments import all_claims
from course_utils.experiments._claim import LESSONS, Claim

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "claims.py"


@pytest.fixture(scope="module")
def claims():
    spec = importlib.util.spec_from_file_location("claims_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["claims_script"] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _torch_threads_restored():
    """claims.main sets torch's thread count for the whole process: give the next test file what it had."""
    import torch

    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def by_name() -> dict:
    return {c.name: c for c in all_claims()}


def test_every_claim_is_named_once_and_placed():
    registered = all_claims()
    names = [c.name for c in registered]
    assert len(names) == len(set(names))
    for c in registered:
        assert c.lesson in set(LESSONS), c.name
        assert c.name.split(".")[0] in set(LESSONS), c.name
        assert c.text and c.source and callable(c.measure) and callable(c.holds or c.holds_over)
    # every lesson from 05 to 08 has claims; lesson 05's cheap and spare heads are rates over seeds
    assert {"05", "06", "07", "08"} <= {c.name[:2] for c in registered}
    assert {"05.roles", "05.ablation", "05.cheap_head_common", "05.spare_head_varies"} <= set(names)
    assert by_name()["05.cheap_head_common"].over_seeds and by_name()["05.spare_head_varies"].over_seeds
    assert not by_name()["05.roles"].over_seeds


def test_quick_runs_no_seq2seq_training(claims):
    quick = {c.name for c in claims.select(None, quick=True)}
    assert quick and all(name[:2] not in {"07", "08"} for name in quick)
    assert {c.name for c in claims.select(["07."], quick=False)} == {c.name for c in all_claims() if c.lesson == "07"}
    with pytest.raises(ValueError, match="no claim named"):
        claims.select(["09.nothing"], quick=False)


def test_predicates_can_fail():
    claim = by_name()
    leak = {"teacher_forced": 1.0, "free_token": 0.1, "free_exact": 0.0, "fixed_exact": 0.99}
    assert claim["07.leak"].holds(leak)
    assert not claim["07.leak"].holds(leak | {"free_exact": 0.5})  # a leaky model that reverses: claim fails
    trap = {"plain": {"steps": 125, "exact": 1.0}, "scaled": {"steps": 200, "exact": 0.09}}
    assert claim["08.embedding_trap"].holds(trap)
    assert not claim["08.embedding_trap"].holds(trap | {"scaled": {"steps": 200, "exact": 0.9}})
    assert not claim["06.kv_cache_time"].holds({"time_ratio": 1.5})
    cheap = claim["05.cheap_head_common"]
    assert cheap.holds_over([{"cheap_heads": [3]}, {"cheap_heads": [1]}, {"cheap_heads": []}, {"cheap_heads": [0]}])
    assert not cheap.holds_over([{"cheap_heads": [3]}, {"cheap_heads": []}, {"cheap_heads": []}, {"cheap_heads": [0]}])
    spare = claim["05.spare_head_varies"]
    copy, diffuse = (
        {"spare_max_similarity": 0.99, "spare_entropy": 0.3},
        {"spare_max_similarity": 0.38, "spare_entropy": 1.8},
    )
    assert spare.holds_over([copy, diffuse])
    assert not spare.holds_over([copy, copy | {"spare_max_similarity": 0.95}])  # never diffuse
    assert not spare.holds_over([copy, diffuse | {"spare_entropy": 0.5}])  # not a copy, but focused: not diffuse
    assert not spare.holds_over([diffuse, diffuse])  # never a copy


def _fake_claims():
    def experiment(seed=0):
        experiment.calls += 1
        return {"x": seed}

    experiment.calls = 0
    per_seed = Claim(
        "05.p", "05", "x is positive", "s", (experiment,), lambda s, run: run(experiment, s), holds=lambda v: v["x"] > 0
    )
    rate = Claim(
        "05.r",
        "05",
        "x is positive on at least 2 seeds",
        "s",
        (experiment,),
        lambda s, run: run(experiment, s),
        holds_over=lambda vs: sum(v["x"] > 0 for v in vs) >= 2,
    )
    return experiment, [per_seed, rate]


def test_run_claims_judges_per_seed_and_rate_claims_and_shares_experiments(claims):
    experiment, fake = _fake_claims()
    rows = claims.run_claims(fake, [0, 1, 2])
    assert experiment.calls == 3  # two claims read it, once per seed
    per_seed, rate = rows
    assert per_seed["held"] == [False, True, True] and per_seed["over_seeds"] is False
    assert rate["held"] == [True] and rate["over_seeds"] is True
    assert rate["values"] == [{"x": 0}, {"x": 1}, {"x": 2}] and rate["seeds"] == [0, 1, 2]
    assert "rate over 3 seeds" in claims.markdown(rows) and "| 2 / 3 | 0 |" in claims.markdown(rows)
    assert "not on every seed: 0" in claims.table(rows)
    rows = claims.run_claims(fake, [0, 5])
    assert rows[1]["held"] == [False] and "not held, rate over 2 seeds" in claims.table(rows)


def test_json_contract_on_one_cheap_claim_two_seeds():
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--only", "05.untrained_uniform", "--seeds", "0", "1", "--json"],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    rows = json.loads(proc.stdout)
    assert len(rows) == 1
    row = rows[0]
    assert {"claim", "name", "lesson", "source", "seeds", "held", "values", "over_seeds"} <= set(row)
    assert row["lesson"] == "05" and isinstance(row["claim"], str) and row["over_seeds"] is False
    assert row["seeds"] == [0, 1]
    assert len(row["held"]) == 2 and all(isinstance(h, bool) for h in row["held"])
    assert len(row["values"]) == 2 and row["values"][0] != row["values"][1]  # two seeds, two measurements
    assert 1 / 6 < row["values"][0]["max_weight"] < 1  # a weight, above uniform over 6 keys


def test_list_names_every_claim_and_marks_rates(claims, capsys):
    assert claims.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert all(c.name in out for c in all_claims())
    assert "05.cheap_head_common" in out and "(rate over seeds)" in out


def test_bad_arguments_are_refused(claims, capsys):
    for argv in (["--only", "nothing.like.this"], ["--seeds", "-1"], ["--threads", "0"], ["--seeds", "1", "1"]):
        with pytest.raises(SystemExit) as exit_info:
            claims.main(argv)
        assert exit_info.value.code == 2
    assert "no claim named 'nothing.like.this'" in capsys.readouterr().err
