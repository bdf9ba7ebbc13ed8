"""env.check_environment and env.torch_version_warning: lesson 00's environment check, tested here instead of in a cell.

The lesson shows one call, ``env.check_environment(course_version="0.1.0")``; what it must do on a machine that is
not the course's (another torch, another course_utils, an old Python) is asserted below with monkeypatched versions.
"""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import pytest
import torch

import course_utils
from course_utils import env

REPO = Path(__file__).resolve().parents[1]


def test_the_pinned_torch_is_the_one_in_requirements():
    pins = re.findall(r"^torch==(\S+)\s*$", (REPO / "requirements.txt").read_text(encoding="utf-8"), re.M)
    assert pins == [env.PINNED_TORCH]


@pytest.mark.parametrize("version", ["2.13.0", "2.13.0+cpu", "2.13.0+cu126"])
def test_the_pinned_version_with_any_build_tag_gives_no_warning(version):
    assert env.torch_version_warning(version) is None


@pytest.mark.parametrize("version", ["2.12.1+cpu", "2.13.1", "2.1.3"])
def test_another_version_is_named_with_the_pinned_one_and_the_fix(version):
    text = env.torch_version_warning(version)
    assert text is not None
    assert f"torch {version} " in text and env.PINNED_TORCH in text and "`make lab`" in text


def test_a_version_that_is_not_a_string_is_refused():
    with pytest.raises(TypeError, match="version must be a version string"):
        env.torch_version_warning(2.13)


def test_the_course_environment_passes_and_says_where_lessons_run(capsys, monkeypatch):
    monkeypatch.delenv("COURSE_DEVICE", raising=False)
    monkeypatch.setattr(torch, "__version__", "2.13.0+cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all on the course's own setup
        line = env.check_environment(course_version=course_utils.__version__)
    assert line == "environment OK; lessons will run on: cpu"
    assert capsys.readouterr().out == line + "\n"


def test_another_torch_only_warns_and_the_warning_points_at_the_callers_line(monkeypatch):
    monkeypatch.setattr(torch, "__version__", "2.12.1+cpu")
    with pytest.warns(UserWarning, match=r"torch 2\.12\.1\+cpu is not the pinned 2\.13\.0") as caught:
        line = env.check_environment(course_version=course_utils.__version__)
    assert line.startswith("environment OK")
    assert caught[0].filename == __file__  # stacklevel=2: the warning names the notebook cell, not env.py


def test_another_course_utils_stops_with_make_lab(monkeypatch):
    monkeypatch.setattr(course_utils, "__version__", "0.0.9")
    with pytest.raises(RuntimeError, match=r"course_utils 0\.0\.9 does not match the notebooks \(0\.1\.0\).*make lab"):
        env.check_environment(course_version="0.1.0")


def test_an_old_python_stops_with_make_lab(monkeypatch):
    monkeypatch.setattr(sys, "version_info", (3, 10, 14, "final", 0))
    with pytest.raises(RuntimeError, match=r"Python 3\.11 or newer and this kernel runs 3\.10\.14.*make lab"):
        env.check_environment(course_version=course_utils.__version__)


def test_a_course_version_that_is_not_a_string_is_refused():
    with pytest.raises(TypeError, match="course_version must be a version string"):
        env.check_environment(course_version=0.1)


def test_lesson_00_calls_it_with_the_package_version():
    source = (REPO / "notebooks" / "00_start_here.ipynb").read_text(encoding="utf-8")
    assert f'env.check_environment(course_version=\\"{course_utils.__version__}\\")' in source
