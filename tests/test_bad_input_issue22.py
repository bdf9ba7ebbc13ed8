"""Issue 22, the package's last three bad-input cases: each gives zeros, a clear error, or a report, never NaN or a trace.

- ``AdditiveAttention`` with every key of a row masked returns a zero context and zero weights (no NaN, in the forward
  pass or the gradient), as the course's other attention functions do.
- ``training.sequence_loss`` on a target that is all padding refuses it: a ValueError naming ``target``, what was
  expected and what came (the package's bad-input rule), instead of a silent NaN.
- ``python -m course_utils.data --check DIR`` on a damaged or missing file prints one report line per file and exits
  non-zero, with no traceback.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils import attention, data
from course_utils.reversal import rnn, training

REPO = Path(__file__).resolve().parents[1]


# ---- AdditiveAttention ------------------------------------------------------------------------------------


def test_additive_attention_with_every_key_masked_returns_zeros():
    torch.manual_seed(0)
    module = rnn.AdditiveAttention(d_query=4, d_key=6, d_attn=5)
    s = torch.randn(2, 4, requires_grad=True)
    keys = torch.randn(2, 3, 6, requires_grad=True)
    key_mask = torch.tensor([[False, False, False], [True, True, False]])
    context, weights = module(s, keys, key_mask)
    assert torch.equal(context[0], torch.zeros(6)) and torch.equal(weights[0], torch.zeros(3))
    assert torch.allclose(weights[1].sum(), torch.tensor(1.0)) and weights[1, 2] == 0
    (context.sum() + weights.sum()).backward()
    for tensor in (s, keys, *module.parameters()):
        assert torch.isfinite(tensor.grad).all()
    # as the course's other attention functions: zeros for the fully masked row, the same answer for the others
    _, sdpa_weights = attention.scaled_dot_product_attention(
        torch.randn(2, 1, 6), keys.detach(), keys.detach(), mask=key_mask[:, None, :]
    )
    assert torch.equal(sdpa_weights[0, 0], torch.zeros(3))


@settings(max_examples=40, deadline=None)
@given(mask=st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=1, max_size=3))
def test_additive_attention_weights_sum_to_one_or_zero(mask):
    torch.manual_seed(1)
    key_mask = torch.tensor(mask)
    module = rnn.AdditiveAttention(3, 3, 4)
    context, weights = module(torch.randn(len(mask), 3), torch.randn(len(mask), 4, 3), key_mask)
    assert torch.isfinite(context).all() and torch.isfinite(weights).all()
    expected = key_mask.any(dim=-1).float()
    assert torch.allclose(weights.sum(dim=-1), expected, atol=1e-6)
    assert (weights[~key_mask] == 0).all()


# ---- sequence_loss ----------------------------------------------------------------------------------------


def test_sequence_loss_on_a_target_that_is_all_padding_names_the_argument():
    logits = torch.randn(2, 3, 5)
    target = torch.full((2, 3), data.PAD, dtype=torch.long)
    with pytest.raises(ValueError, match=r"^target .*PAD.*") as info:
        training.sequence_loss(logits, target)
    assert "at least one" in str(info.value) and "(2, 3)" in str(info.value)


def test_sequence_loss_with_one_real_token_is_its_cross_entropy():
    logits = torch.randn(1, 3, 5)
    target = torch.tensor([[2, data.PAD, data.PAD]])
    expected = torch.nn.functional.cross_entropy(logits[0, :1], target[0, :1])
    assert torch.allclose(training.sequence_loss(logits, target), expected)


# ---- python -m course_utils.data --check ------------------------------------------------------------------


def _check(directory: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "course_utils.data", "--check", str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )


@pytest.fixture
def shipped(tmp_path) -> Path:
    for split in data.SPLITS:
        name = f"reversal_{split}.txt"
        shutil.copy(REPO / "data" / name, tmp_path / name)
    return tmp_path


def test_data_check_on_the_shipped_files_says_ok(shipped):
    proc = _check(shipped)
    assert proc.returncode == 0 and not proc.stderr
    assert proc.stdout.splitlines() == [f"ok  reversal_{split}.txt" for split in data.SPLITS]


@pytest.mark.parametrize("damage", ["missing", "cut short", "changed", "a folder", "not text"])
def test_data_check_on_a_damaged_or_missing_file_reports_every_file_without_a_traceback(shipped, damage):
    path = shipped / "reversal_val.txt"
    if damage == "missing":
        path.unlink()
    elif damage == "cut short":
        path.write_bytes(path.read_bytes()[:100])
    elif damage == "changed":
        text = path.read_bytes()
        path.write_bytes((b"b" if text[:1] == b"a" else b"a") + text[1:])  # one symbol changed: same length
    elif damage == "a folder":
        path.unlink()
        path.mkdir()
    else:
        path.write_bytes(b"\xff\xfe\x00")
    proc = _check(shipped)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(data.SPLITS), proc.stdout
    (bad,) = [line for line in lines if not line.startswith("ok  ")]
    assert "reversal_val.txt" in bad and "python -m course_utils.data --write" in bad, bad


def test_data_check_on_a_missing_folder_reports_without_a_traceback(tmp_path):
    proc = _check(tmp_path / "nowhere")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len(proc.stdout.splitlines()) == len(data.SPLITS)
