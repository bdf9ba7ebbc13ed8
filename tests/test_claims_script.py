"""benchmarks/claims.py: the claim registry and the JSON contract, on one cheap claim with 2 seeds."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_every_claim_is_named_once_and_placed(claims):
    names = [c.name for c in claims.CLAIMS]
    assert len(names) == len(set(names))
    for c in claims.CLAIMS:
        assert c.lesson in {"05", "06", "07", "08", "guide"}, c.name
        assert c.name.split(".")[0] in {"05", "06", "07", "08"}, c.name
        assert c.text and c.source and callable(c.measure) and callable(c.holds)
    # every lesson from 05 to 08 has claims; lesson 05's head-role claims come from head_roles.py
    assert {c.name[:2] for c in claims.CLAIMS} == {"05", "06", "07", "08"}
    assert {"05.roles", "05.ablation", "05.cheap_head", "05.spare_copies"} <= set(names)


def test_quick_runs_no_seq2seq_training(claims):
    quick = {c.name for c in claims.select(None, quick=True)}
    assert quick and all(name[:2] in {"05", "06"} for name in quick)
    assert {c.name for c in claims.select(["07."], quick=False)} == {c.name for c in claims.CLAIMS if c.lesson == "07"}
    with pytest.raises(ValueError, match="no claim named"):
        claims.select(["09.nothing"], quick=False)


def test_predicates_can_fail(claims):
    by_name = {c.name: c for c in claims.CLAIMS}
    leak = {"teacher_forced": 1.0, "free_token": 0.1, "free_exact": 0.0, "fixed_exact": 0.99}
    assert by_name["07.leak"].holds(leak)
    assert not by_name["07.leak"].holds(leak | {"free_exact": 0.5})  # a leaky model that reverses: claim fails
    trap = {"plain": {"steps": 125, "exact": 1.0}, "scaled": {"steps": 200, "exact": 0.09}}
    assert by_name["08.embedding_trap"].holds(trap)
    assert not by_name["08.embedding_trap"].holds(trap | {"scaled": {"steps": 200, "exact": 0.9}})
    assert not by_name["06.kv_cache_time"].holds({"time_ratio": 1.5})


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
    assert {"claim", "lesson", "seeds", "held"} <= set(row)
    assert row["lesson"] == "05" and isinstance(row["claim"], str)
    assert row["seeds"] == [0, 1]
    assert len(row["held"]) == 2 and all(isinstance(h, bool) for h in row["held"])
    assert len(row["values"]) == 2 and row["values"][0] != row["values"][1]  # two seeds, two measurements
    assert 1 / 6 < row["values"][0]["max_weight"] < 1  # a weight, above uniform over 6 keys


def test_bad_arguments_are_refused(claims, capsys):
    for argv in (["--only", "nothing.like.this"], ["--seeds", "-1"], ["--threads", "0"]):
        with pytest.raises(SystemExit) as exit_info:
            claims.main(argv)
        assert exit_info.value.code == 2
    assert "no claim named 'nothing.like.this'" in capsys.readouterr().err
