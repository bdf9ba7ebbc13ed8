"""Values as data for the recorded checks (course_utils/checking/recorded_values.py, recorded.py's files)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from course_utils.checking import recorded, recorded_files
from course_utils.checking.model import Case
from course_utils.checking.recorded_values import Unrecordable, decode, digest, encode


def _round_trip(value):
    arrays: list = []
    data = json.loads(json.dumps(encode(value, arrays)))  # what the file holds: JSON, arrays apart
    return decode(data, arrays)


def test_values_come_back_as_they_went_in():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)
    value = (x, np.int64(3), [1, 2.5, "s", None, True], {"k": x}, frozenset({1, 2}), float("nan"), ValueError)
    back = _round_trip(value)
    assert isinstance(back, tuple) and back[0].dtype == np.float32 and np.array_equal(back[0], x)
    assert back[1] == 3 and isinstance(back[1], np.int64)
    assert back[2] == [1, 2.5, "s", None, True] and type(back[2][4]) is bool
    assert np.array_equal(back[3]["k"], x) and back[4] == frozenset({1, 2})
    assert math.isnan(back[5]) and back[6] is ValueError
    tensor = _round_trip(t)
    assert tensor.dtype == torch.float64 and tensor.requires_grad and torch.equal(tensor.detach(), t.detach())
    case = _round_trip(Case((x, 2), "two heads"))
    assert isinstance(case, Case) and case.label == "two heads" and case.args[1] == 2


def test_a_decoded_array_is_a_copy_so_a_check_cannot_spoil_the_record():
    arrays: list = []
    data = encode(np.zeros(3), arrays)
    decode(data, arrays)[0] = 5.0
    assert decode(data, arrays)[0] == 0.0


def test_what_the_data_cannot_hold_is_refused_by_name():
    with pytest.raises(Unrecordable, match="builtins.object"):
        encode(object(), [])
    with pytest.raises(Unrecordable, match="dtype object"):
        encode(np.array([object()]), [])
    with pytest.raises(Unrecordable, match="not stored as data"):
        encode(lambda x: x, [])  # a lambda has no name to import it by: code, never data


def test_a_course_function_handed_in_by_a_case_is_stored_by_its_name():
    from course_utils.lessons.lesson_01 import core

    assert _round_trip(core.attention_without_positions) is core.attention_without_positions


def test_the_digest_sees_dtype_shape_and_content():
    a = np.zeros((2, 3))
    assert digest((a,)) == digest((a.copy(),))
    assert digest((a,)) != digest((a.astype(np.float32),))
    assert digest((a,)) != digest((a.reshape(3, 2),))
    assert digest((a,)) != digest((np.ones((2, 3)),))
    assert digest((1,)) != digest((1.0,)) != digest((True,))


def _book_with_one_array():
    book = recorded.Book()
    book.tables["00.x"] = {"calls": {}, "cases": {"L": []}}
    book.arrays.append(np.arange(4.0))
    return book


def test_saved_files_are_byte_for_byte_the_same_and_read_without_pickle(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    recorded_files.save(one, "00", _book_with_one_array(), [])
    recorded_files.save(two, "00", _book_with_one_array(), [])
    for name in ("lesson_00.json", "lesson_00.npz", "SHA256SUMS"):
        assert (one / name).read_bytes() == (two / name).read_bytes()
    document, arrays = recorded_files.load(one, "00")
    assert document["exercises"]["00.x"]["calls"] == {} and np.array_equal(arrays[0], np.arange(4.0))
    with np.load(one / "lesson_00.npz", allow_pickle=False) as found:
        assert sorted(found.files) == ["a0"]


def test_an_array_seen_again_is_stored_once_and_read_back_by_its_index(tmp_path):
    book = _book_with_one_array()
    book.arrays += [np.arange(3.0), np.arange(4.0), np.arange(4.0).astype(np.float32), np.arange(4.0).reshape(2, 2)]
    recorded_files.save(tmp_path, "00", book, [])
    _, arrays = recorded_files.load(tmp_path, "00")
    for i, expected in enumerate(book.arrays):
        got = arrays[i]
        assert got.dtype == expected.dtype and np.array_equal(got, expected), i
    with np.load(tmp_path / "lesson_00.npz", allow_pickle=False) as found:
        assert sorted(found.files) == ["a0", "a1", "a3", "a4", "aliases"]  # a2 equals a0


def test_a_changed_file_is_refused_naming_both_digests(tmp_path):
    recorded_files.save(tmp_path, "00", _book_with_one_array(), [])
    path = tmp_path / "lesson_00.json"
    path.write_text(path.read_text().replace('"00.x"', '"00.y"'))
    with pytest.raises(ValueError, match=r"lesson_00.json: expected sha256 [0-9a-f]{64} \(SHA256SUMS\) but"):
        recorded_files.load(tmp_path, "00")
    (tmp_path / "SHA256SUMS").unlink()
    with pytest.raises(FileNotFoundError, match="no SHA256SUMS"):
        recorded_files.load(tmp_path, "00")


def test_a_check_whose_data_lacks_a_call_says_so_instead_of_raising():
    from course_utils.checking import engine

    def judge():
        raise recorded.NotRecorded("no recorded result for this input")

    verdict = recorded.guarded(judge, engine.Verdict)
    assert (
        verdict.status == "crashed"
        and verdict.detail == "the check could not finish: no recorded result for this input"
    )


def test_with_nothing_recorded_or_replayed_a_call_runs_the_code_itself():
    from course_utils.checking import registry

    exercise = registry.get("00.dot_scores")
    ran = []
    assert recorded.routed(exercise, exercise.reference, (), None, lambda into: ran.append(into) or "ran") == "ran"
    assert ran == [None] and not recorded.replaying("00.dot_scores")
