"""The student workspace (scripts/workspace.py, behind `make lab`, `make workspace`, `make reset-lesson`).

On a temporary clone-like tree (notebooks/ with executed lessons and a README): the first run makes
cleared copies; an edited copy survives the next run; a lesson added later is copied in and the
others are left alone; a lesson that changed is reported as outdated and not overwritten; a reset
keeps a backup. Then the Makefile: `make lab` runs the same command as `make workspace` before it
opens JupyterLab on the copies, and in a fresh `git clone` of this repository (no .venv), `make
workspace` makes cleared copies and keeps an edit on the second run.
"""

import errno
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import edition_fixtures as fx
import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]


def _load_workspace():
    # Loaded by path: scripts/ is not a package.
    spec = importlib.util.spec_from_file_location("course_scripts_workspace", REPO / "scripts" / "workspace.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


workspace = _load_workspace()


def _executed_lesson(title: str, code: str = "x = 1\nx") -> nbformat.NotebookNode:
    """A small lesson as committed: executed, with outputs, counts, timings and widget state."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# {title}", metadata={"slideshow": {"slide_type": "slide"}}),
        nbformat.v4.new_code_cell(
            code,
            execution_count=1,
            outputs=[nbformat.v4.new_output("execute_result", {"text/plain": "1"}, execution_count=1)],
            metadata={"execution": {"iopub.execute_input": "2026-01-01T00:00:00Z"}, "tags": ["keep-me"]},
        ),
        nbformat.v4.new_code_cell(
            "print('predict first')",
            execution_count=2,
            outputs=[nbformat.v4.new_output("stream", name="stdout", text="predict first\n")],
        ),
    ]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return nb


@pytest.fixture
def tree(tmp_path) -> Path:
    """A clone-like tree: notebooks/ with two executed lessons and a README."""
    (tmp_path / "notebooks").mkdir()
    nbformat.write(_executed_lesson("00 Start"), tmp_path / "notebooks" / "00_start.ipynb")
    nbformat.write(_executed_lesson("01 Attention"), tmp_path / "notebooks" / "01_attention.ipynb")
    (tmp_path / "notebooks" / "README.md").write_text("lesson map\n")
    return tmp_path


def _sync(tree: Path) -> dict:
    entries = workspace.sync(tree / "notebooks", tree / "my_work")
    return {entry.name: entry for entry in entries}


def _assert_cleared(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        assert "execution" not in cell.metadata, f"{path.name}: timing metadata left in a cell"
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: outputs left in {cell.source!r}"
            assert cell.execution_count is None, f"{path.name}: execution count left in {cell.source!r}"
    assert "widgets" not in nb.metadata, f"{path.name}: widget state left"
    return nb


def _edit(path: Path, new_source: str) -> bytes:
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].source = new_source
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="my run\n")]
    nb.cells[1].execution_count = 7
    nbformat.write(nb, path)
    return path.read_bytes()


def test_first_run_creates_cleared_copies_of_lessons_only(tree):
    entries = _sync(tree)
    assert {name: entry.action for name, entry in entries.items()} == {
        "00_start.ipynb": "created",
        "01_attention.ipynb": "created",
    }
    copies = sorted(path.name for path in (tree / "my_work").iterdir() if not path.name.startswith("."))
    assert copies == ["00_start.ipynb", "01_attention.ipynb"], "the README or backups were copied"
    for name in copies:
        nb = _assert_cleared(tree / "my_work" / name)
        lesson = nbformat.read(tree / "notebooks" / name, as_version=4)
        assert [c.source for c in nb.cells] == [c.source for c in lesson.cells]
        assert nb.cells[1].metadata["tags"] == ["keep-me"] and nb.cells[0].metadata["slideshow"]
    # the lessons themselves stay executed (the nbval baseline)
    assert nbformat.read(tree / "notebooks" / "00_start.ipynb", as_version=4).cells[1].outputs


def test_every_real_lesson_is_copied_without_outputs(tmp_path):
    entries = workspace.sync(REPO / "notebooks", tmp_path / "my_work")
    names = [path.name for path in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))]
    assert [entry.name for entry in entries] == names and names
    for name in names:
        _assert_cleared(tmp_path / "my_work" / name)


def test_an_edited_copy_survives_the_next_run(tree):
    _sync(tree)
    copy_path = tree / "my_work" / "01_attention.ipynb"
    edited = _edit(copy_path, "x = 42  # my answer\nx")
    entries = _sync(tree)
    assert entries["01_attention.ipynb"].action == "kept"
    assert entries["01_attention.ipynb"].outdated is False
    assert copy_path.read_bytes() == edited


def test_a_new_lesson_is_copied_in_and_the_others_are_left_alone(tree):
    _sync(tree)
    edited = _edit(tree / "my_work" / "00_start.ipynb", "x = 'mine'")
    untouched = (tree / "my_work" / "01_attention.ipynb").read_bytes()
    nbformat.write(_executed_lesson("02 Masking"), tree / "notebooks" / "02_masking.ipynb")
    entries = _sync(tree)
    assert {name: entry.action for name, entry in entries.items()} == {
        "00_start.ipynb": "kept",
        "01_attention.ipynb": "kept",
        "02_masking.ipynb": "created",
    }
    _assert_cleared(tree / "my_work" / "02_masking.ipynb")
    assert (tree / "my_work" / "00_start.ipynb").read_bytes() == edited
    assert (tree / "my_work" / "01_attention.ipynb").read_bytes() == untouched


def test_an_updated_lesson_is_reported_outdated_and_not_overwritten(tree):
    _sync(tree)
    copy_path = tree / "my_work" / "01_attention.ipynb"
    edited = _edit(copy_path, "x = 'my work'")
    before_00 = (tree / "my_work" / "00_start.ipynb").read_bytes()
    nbformat.write(
        _executed_lesson("01 Attention, revised", code="y = 2\ny"), tree / "notebooks" / "01_attention.ipynb"
    )
    entries = _sync(tree)
    assert entries["01_attention.ipynb"].action == "kept"
    assert entries["01_attention.ipynb"].outdated is True
    assert entries["01_attention.ipynb"].edited is True
    assert entries["00_start.ipynb"].outdated is False
    assert copy_path.read_bytes() == edited
    assert (tree / "my_work" / "00_start.ipynb").read_bytes() == before_00
    report = workspace.format_report(list(entries.values()), tree / "my_work")
    line = next(line for line in report.splitlines() if "01_attention.ipynb" in line)
    assert "kept" in line and "OUTDATED" in line
    assert "OUTDATED" not in next(line for line in report.splitlines() if "00_start.ipynb" in line)
    assert "make reset-lesson LESSON=NN, for NN in 01" in report
    assert "0 created, 2 kept, 1 outdated." in report


def test_new_outputs_alone_do_not_make_a_copy_outdated(tree):
    _sync(tree)
    lesson = nbformat.read(tree / "notebooks" / "00_start.ipynb", as_version=4)
    lesson.cells[1].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=3)]
    lesson.cells[1].execution_count = 3  # re-executed: same cells, other outputs
    nbformat.write(lesson, tree / "notebooks" / "00_start.ipynb")
    assert _sync(tree)["00_start.ipynb"].outdated is False


def test_an_unedited_outdated_copy_says_so(tree):
    _sync(tree)
    nbformat.write(_executed_lesson("00 Start, revised"), tree / "notebooks" / "00_start.ipynb")
    entries = _sync(tree)
    assert entries["00_start.ipynb"].outdated is True and entries["00_start.ipynb"].edited is False
    assert "you have not edited it" in workspace.format_report(list(entries.values()), tree / "my_work")


def test_reset_keeps_a_backup_and_makes_a_fresh_copy(tree):
    _sync(tree)
    copy_path = tree / "my_work" / "01_attention.ipynb"
    edited = _edit(copy_path, "x = 'before reset'")
    nbformat.write(
        _executed_lesson("01 Attention, revised", code="y = 2\ny"), tree / "notebooks" / "01_attention.ipynb"
    )
    backup, target = workspace.reset("01", tree / "notebooks", tree / "my_work")
    assert target == copy_path
    assert backup.parent == tree / "my_work" / "backups" and backup.name.startswith("01_attention.")
    assert backup.read_bytes() == edited
    nb = _assert_cleared(copy_path)
    assert nb.cells[1].source == "y = 2\ny"
    assert _sync(tree)["01_attention.ipynb"].outdated is False  # the record follows the reset
    second_backup, _ = workspace.reset("1", tree / "notebooks", tree / "my_work")  # same second: a new name
    assert second_backup != backup and backup.read_bytes() == edited
    assert sorted(path.name for path in (tree / "my_work").glob("*.ipynb")) == ["00_start.ipynb", "01_attention.ipynb"]


@pytest.mark.parametrize("name", ["1", "01", "01_attention", "01_attention.ipynb", "notebooks/01_attention.ipynb"])
def test_find_lesson_accepts_a_number_or_a_name(tree, name):
    assert workspace.find_lesson(name, tree / "notebooks") == tree / "notebooks" / "01_attention.ipynb"


@pytest.mark.parametrize("name", ["7", "02", "attention", "01_attention_solutions", ""])
def test_reset_refuses_an_unknown_lesson_and_lists_the_valid_ones(tree, name, capsys):
    _sync(tree)
    with pytest.raises(ValueError, match=r"LESSON: .*00 \(00_start\), 01 \(01_attention\)"):
        workspace.reset(name, tree / "notebooks", tree / "my_work")
    code = workspace.main(["--notebooks", str(tree / "notebooks"), "--workspace", str(tree / "my_work"), "reset", name])
    assert code == 2
    assert "01 (01_attention)" in capsys.readouterr().err
    assert not (tree / "my_work" / "backups").exists()


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(TypeError, match="lesson: expected"):
        workspace.find_lesson(2, tmp_path)
    with pytest.raises(TypeError, match="nb: expected a notebook"):
        workspace.clear_outputs([])
    with pytest.raises(ValueError, match="notebooks: expected a folder"):
        workspace.sync(tmp_path / "missing", tmp_path / "my_work")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "00_broken.ipynb").write_text("{not json")
    (entry,) = workspace.sync(tmp_path / "notebooks", tmp_path / "my_work")
    assert entry.action == "error" and "00_broken.ipynb: expected a notebook" in entry.note


def test_a_damaged_record_never_causes_an_overwrite(tree):
    _sync(tree)
    edited = _edit(tree / "my_work" / "00_start.ipynb", "x = 'mine'")
    (tree / "my_work" / workspace.MANIFEST).write_text("{damaged")
    entries = _sync(tree)
    assert entries["00_start.ipynb"].action == "kept" and entries["00_start.ipynb"].outdated is None
    assert "no record" in entries["00_start.ipynb"].note
    assert (tree / "my_work" / "00_start.ipynb").read_bytes() == edited


def _make(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


@needs_make
def test_make_lab_runs_the_workspace_step_then_opens_the_copies():
    lab = _make("-n", "lab", cwd=REPO)
    assert lab.returncode == 0, lab.stderr
    step = _make("-n", "workspace", cwd=REPO).stdout.strip()
    assert step.endswith("scripts/workspace.py --workspace my_work sync"), step
    lines = lab.stdout.splitlines()
    assert step in lines, f"`make lab` does not run `{step}`:\n{lab.stdout}"
    jupyter = next(i for i, line in enumerate(lines) if "jupyter lab" in line)
    assert lines.index(step) < jupyter
    assert "my_work/00_start_here.ipynb" in " ".join(lines[jupyter:])
    assert "notebooks/00_start_here.ipynb" not in lab.stdout
    ignored = subprocess.run(["git", "check-ignore", "-q", "my_work/00_start_here.ipynb"], cwd=REPO, check=False)
    assert ignored.returncode == 0, "my_work/ is not git-ignored"


@needs_make
@pytest.mark.parametrize("target", ["test", "test-browser", "notebooks", "format", "clean"])
def test_other_make_targets_never_touch_the_workspace(target):
    dry = _make("-n", target, cwd=REPO)
    assert dry.returncode == 0, dry.stderr
    assert "my_work" not in dry.stdout and "workspace.py" not in dry.stdout, dry.stdout


@needs_make
@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs git and a git checkout")
def test_make_workspace_in_a_fresh_clone_keeps_an_edit(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)], check=True, timeout=120)
    if not (clone / "scripts" / "workspace.py").exists():
        pytest.skip("scripts/workspace.py is not committed yet")
    assert not (clone / ".venv").exists()
    first = _make("workspace", cwd=clone)
    assert first.returncode == 0, first.stderr
    lessons = sorted(path.name for path in (clone / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for name in lessons:
        assert f"created  {name}" in first.stdout
        _assert_cleared(clone / "my_work" / name)
    copy_path = clone / "my_work" / lessons[0]
    nb = json.loads(copy_path.read_text())
    nb["cells"].append({"cell_type": "markdown", "id": "my-notes", "metadata": {}, "source": "my notes"})
    copy_path.write_text(json.dumps(nb))
    edited = copy_path.read_bytes()
    second = _make("workspace", cwd=clone)
    assert second.returncode == 0, second.stderr
    assert f"kept     {lessons[0]}" in second.stdout
    assert not [line for line in second.stdout.splitlines() if line.startswith("  created")], second.stdout
    assert f"0 created, {len(lessons)} kept" in second.stdout
    assert copy_path.read_bytes() == edited
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True)
    assert status.stdout == "", f"the workspace shows up in git status:\n{status.stdout}"


# ---- student editions in the workspace ------------------------------------------------------------------

MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


@pytest.fixture
def regions_tree(tmp_path) -> Path:
    """notebooks/ with one lesson holding every kind of region (tests/edition_fixtures.py) and one without."""
    (tmp_path / "notebooks").mkdir()
    nbformat.write(fx.fixture_lesson(), tmp_path / "notebooks" / "01_fixture.ipynb")
    nbformat.write(_executed_lesson("00 Start"), tmp_path / "notebooks" / "00_start.ipynb")
    return tmp_path


def _source_of(path: Path, cell_id: str) -> str:
    return next(cell.source for cell in nbformat.read(path, as_version=4).cells if cell.id == cell_id)


def test_sync_writes_the_student_edition_and_an_answered_copy_survives(regions_tree):
    _sync(regions_tree)
    copy_path = regions_tree / "my_work" / "01_fixture.ipynb"
    text = copy_path.read_text()
    assert not [marker for marker in MARKERS if marker in text] and "assert mask.sum()" not in text
    assert "    ...  # your code here" in _source_of(copy_path, fx.IDS["softmax"])
    assert _source_of(copy_path, fx.IDS["prediction"]).startswith("prediction = ...\n")
    _assert_cleared(copy_path)
    nb = nbformat.read(copy_path, as_version=4)  # the student answers, runs and saves
    cell = next(cell for cell in nb.cells if cell.id == fx.IDS["softmax"])
    cell.source = cell.source.replace("...  # your code here", "return np.exp(x) / np.exp(x).sum(-1, keepdims=True)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="01.softmax_rows passed\n")]
    nbformat.write(nb, copy_path)
    answered = copy_path.read_bytes()
    entries = _sync(regions_tree)
    assert (entries["01_fixture.ipynb"].action, entries["01_fixture.ipynb"].outdated) == ("kept", False)
    assert entries["01_fixture.ipynb"].edited is True
    assert copy_path.read_bytes() == answered


def test_outdated_means_the_student_edition_changed(regions_tree):
    _sync(regions_tree)
    lesson_path = regions_tree / "notebooks" / "01_fixture.ipynb"
    lesson = nbformat.read(lesson_path, as_version=4)
    softmax = next(cell for cell in lesson.cells if cell.id == fx.IDS["softmax"])
    softmax.source = softmax.source.replace("weights = np.exp(shifted)", "weights = np.exp(shifted)  # e^x")
    reveal = next(cell for cell in lesson.cells if cell.id == fx.IDS["reveal"])
    reveal.source = reveal.source.replace("a (4, 4) causal mask keeps", "the mask keeps")
    nbformat.write(lesson, lesson_path)
    entries = _sync(regions_tree)  # only solution and hidden lines changed: the student sees the same edition
    assert entries["01_fixture.ipynb"].outdated is False
    softmax.source = softmax.source.replace("Softmax along the last axis", "Softmax along the last axis (rows)")
    nbformat.write(lesson, lesson_path)
    entries = _sync(regions_tree)
    assert entries["01_fixture.ipynb"].outdated is True and entries["01_fixture.ipynb"].edited is False


def test_a_copy_recorded_before_student_editions_is_not_outdated(tree):
    """Format 1 of the record held the digest of the lesson with outputs cleared: for a lesson without
    regions that is the digest of its student edition, so existing workspaces see no change."""
    old = workspace.clear_outputs(json.loads((tree / "notebooks" / "00_start.ipynb").read_text()))
    workspace.sync(tree / "notebooks", tree / "my_work")
    records = json.loads((tree / "my_work" / workspace.MANIFEST).read_text())["lessons"]
    record = records["00_start.ipynb"]
    records["00_start.ipynb"] = {"lesson_sha256": workspace.edition_digest(old), "cells_sha256": record["cells_sha256"]}
    (tree / "my_work" / workspace.MANIFEST).write_text(json.dumps({"format": 1, "lessons": records}))
    entries = _sync(tree)
    assert entries["00_start.ipynb"].outdated is False and entries["00_start.ipynb"].edited is False


def test_a_broken_lesson_is_named_with_its_cell_and_the_others_are_still_copied(regions_tree, capsys):
    lesson_path = regions_tree / "notebooks" / "01_fixture.ipynb"
    nb = json.loads(lesson_path.read_text())
    nb["cells"][5]["source"] = "def f():\n    ### BEGIN SOLUTION\n    return 1\n"
    lesson_path.write_text(json.dumps(nb))
    code = workspace.main(
        ["--notebooks", str(regions_tree / "notebooks"), "--workspace", str(regions_tree / "my_work")]
    )
    out, err = capsys.readouterr()
    assert code == 1
    assert "created  00_start.ipynb" in out and "error    01_fixture.ipynb   NOT COPIED" in out
    (line,) = err.splitlines()
    assert line.startswith("error: ") and f"cell 5 (id {fx.IDS['softmax']}" in line and "line 2" in line
    assert not (regions_tree / "my_work" / "01_fixture.ipynb").exists()


# ---- the lock: two commands at once ---------------------------------------------------------------------


def test_a_second_command_waits_for_the_lock_then_runs(tree):
    (tree / "my_work").mkdir()
    said, finished = [], []
    with workspace.workspace_lock(tree / "my_work"):
        runner = threading.Thread(
            target=lambda: finished.append(workspace.sync(tree / "notebooks", tree / "my_work", say=said.append))
        )
        runner.start()
        time.sleep(0.5)
        assert not finished and not list((tree / "my_work").glob("*.ipynb")), "it did not wait"
    runner.join(timeout=30)
    assert [entry.action for entry in finished[0]] == ["created", "created"]
    assert len(said) == 1 and said[0].startswith(f"waiting for another workspace command (process {os.getpid()})")


def test_a_lock_held_too_long_is_one_error_line(tree, capsys, monkeypatch):
    (tree / "my_work").mkdir()
    monkeypatch.setattr(workspace, "LOCK_WAIT_S", 0.3)
    with workspace.workspace_lock(tree / "my_work"):
        code = workspace.main(["--notebooks", str(tree / "notebooks"), "--workspace", str(tree / "my_work")])
        reset_code = workspace.main(["--notebooks", str(tree / "notebooks"), "--workspace", str(tree / "my_work"), "reset", "01"])  # fmt: skip
    out, err = capsys.readouterr()
    assert (code, reset_code) == (2, 2)
    lines = err.splitlines()
    assert len(lines) == 2 and all(line.startswith("error: ") for line in lines), err
    assert ".workspace.lock: another workspace command" in lines[0] and "run this command again" in lines[0]
    assert not list((tree / "my_work").glob("*.ipynb"))


def test_two_runs_at_once_both_finish_without_a_traceback(tmp_path):
    """The real lessons (large enough to overlap), `make workspace` and `make reset-lesson` started together."""
    command = [sys.executable, str(REPO / "scripts" / "workspace.py"), "--workspace", str(tmp_path / "my_work")]
    runs = [subprocess.Popen([*command, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for args in (["sync"], ["sync"], ["reset", "01"])]  # fmt: skip
    results = [(run.wait(timeout=120), *run.communicate()) for run in runs]
    for code, out, err in results:
        assert code == 0 and "Traceback" not in err, (out, err)
    names = sorted(path.name for path in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    created = [line.split()[1] for _, out, _ in results for line in out.splitlines() if line.startswith("  created")]
    reset_made = any(out.startswith("reset") for _, out, _ in results[2:]) and not results[2][1].startswith("backed")
    assert sorted(created + (["01_attention_numpy.ipynb"] if reset_made else [])) == names, results
    for name in names:
        _assert_cleared(tmp_path / "my_work" / name)


def test_a_stale_temporary_file_from_a_killed_run_is_cleaned_up(tree):
    (tree / "my_work").mkdir()
    stale = tree / "my_work" / ".01_attention.ipynb.99999.tmp"
    stale.write_text('{"cells": [')
    _sync(tree)
    assert not stale.exists()


# ---- every failure is one line ----------------------------------------------------------------------------


def _main(tree: Path, *args: str) -> int:
    return workspace.main(["--notebooks", str(tree / "notebooks"), "--workspace", str(tree / "my_work"), *args])


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_my_work_as_a_regular_file_is_one_error_line(tree, capsys):
    (tree / "my_work").write_text("my notes")
    assert _main(tree) == 2
    line = _one_error_line(capsys)
    assert "my_work: is a file, not a folder" in line and "mv " in line and "my_work.old" in line
    assert _main(tree, "reset", "01") == 2
    assert "is a file, not a folder" in _one_error_line(capsys)
    assert (tree / "my_work").read_text() == "my notes"


def test_my_work_as_a_broken_link_is_one_error_line(tree, capsys):
    (tree / "my_work").symlink_to(tree / "gone")
    assert _main(tree) == 2
    assert "my_work: is a link to" in _one_error_line(capsys)


def test_a_read_only_workspace_is_one_error_line(tree, capsys, monkeypatch):
    folder = tree / "my_work"
    folder.mkdir()
    if os.geteuid() != 0:  # a real read-only folder
        folder.chmod(0o555)
    else:  # root writes anywhere: the operating system's answer for a read-only folder, simulated
        real_open = os.open

        def refuse(path, flags, *args, **kwargs):
            if Path(path).parent == folder and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", refuse)
    try:
        assert _main(tree) == 2
        line = _one_error_line(capsys)
    finally:
        folder.chmod(0o755)
    assert ".workspace.lock: Permission denied: make it writable (chmod u+w " in line and line.endswith(
        "my_work), then run the command again"
    ), line


def test_a_copy_that_cannot_be_written_names_the_notebook_not_a_temporary_file(tree, capsys, monkeypatch):
    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full)
    assert _main(tree) == 2
    line = _one_error_line(capsys)
    assert "00_start.ipynb: No space left on device: free some disk space" in line and ".tmp" not in line


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def _not_a_notebook(path: Path) -> None:
    path.write_text('{"lessons": []}')


def _folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _broken_link(path: Path) -> None:
    path.unlink()
    path.symlink_to(path.with_name("elsewhere.ipynb"))


DAMAGE = {
    "cut short": (_truncate, "not valid JSON at line"),
    "empty": (lambda path: path.write_bytes(b""), "empty"),
    "not a notebook": (_not_a_notebook, "JSON but not a notebook"),
    "a folder": (_folder, "a folder, not a notebook file"),
    "a broken link": (_broken_link, "a link to"),
    "not text": (lambda path: path.write_bytes(b"\xff\xfe\x00garbage"), "not text"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_copy_is_listed_as_damaged_with_the_reset_command_and_left_alone(tree, damage, capsys):
    _sync(tree)
    copy_path = tree / "my_work" / "01_attention.ipynb"
    spoil, words = DAMAGE[damage]
    spoil(copy_path)
    before = copy_path.read_bytes() if copy_path.is_file() else None
    assert _main(tree) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "01_attention.ipynb" in line)
    assert line.startswith("  damaged  01_attention.ipynb   DAMAGED: ") and words in line, line
    assert "1 created" not in out and "0 created, 1 kept, 0 outdated, 1 damaged." in out
    assert "To start that lesson afresh: make reset-lesson LESSON=01" in out
    assert (copy_path.read_bytes() if copy_path.is_file() else None) == before
    backup, target = workspace.reset("01", tree / "notebooks", tree / "my_work")
    assert os.path.lexists(backup) and _assert_cleared(target)
    assert _sync(tree)["01_attention.ipynb"].action == "kept"


def test_a_copy_cut_short_says_so_and_points_at_jupyterlabs_checkpoint(tree, capsys):
    _sync(tree)
    copy_path = tree / "my_work" / "01_attention.ipynb"
    checkpoint = tree / "my_work" / ".ipynb_checkpoints" / "01_attention-checkpoint.ipynb"
    checkpoint.parent.mkdir()
    checkpoint.write_bytes(copy_path.read_bytes())
    _truncate(copy_path)
    assert _main(tree) == 0
    out = capsys.readouterr().out
    assert "(it ends early: cut short when it was saved)" in out
    assert "JupyterLab's last checkpoint of it: " in out and "01_attention-checkpoint.ipynb" in out


# ---- issue 22, as a student meets it: through make ----------------------------------------------------------


def _make_at(*args: str, workspace_dir: Path) -> subprocess.Popen:
    return subprocess.Popen(
        ["make", "-s", "--no-print-directory", *args, f"COURSE_WORKSPACE={workspace_dir}", f"PYTHON={sys.executable}"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_workspace_and_make_reset_lesson_at_once_end_without_a_traceback(tmp_path):
    first = _make_at("workspace", workspace_dir=tmp_path / "my_work")
    runs = [first, _make_at("workspace", workspace_dir=tmp_path / "my_work")]
    runs.append(_make_at("reset-lesson", "LESSON=01", workspace_dir=tmp_path / "my_work"))
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0 and "Traceback" not in err and "Error" not in err, (out, err)
    for name in sorted(path.name for path in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        _assert_cleared(tmp_path / "my_work" / name)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_workspace_on_a_file_named_my_work_is_one_error_line(tmp_path):
    (tmp_path / "my_work").write_text("my notes")
    run = _make_at("workspace", workspace_dir=tmp_path / "my_work")
    out, err = run.communicate(timeout=120)
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert run.returncode != 0 and "Traceback" not in err and len(errors) == 1, err
    assert str(tmp_path / "my_work") in errors[0] and "is a file, not a folder" in errors[0]
    assert (tmp_path / "my_work").read_text() == "my notes"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_workspace_lists_a_copy_cut_short_as_damaged_with_the_reset_command(tmp_path):
    assert _make_at("workspace", workspace_dir=tmp_path / "my_work").wait(timeout=120) == 0
    copy_path = tmp_path / "my_work" / "01_attention_numpy.ipynb"
    _truncate(copy_path)
    run = _make_at("workspace", workspace_dir=tmp_path / "my_work")
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0 and not err, err
    line = next(line for line in out.splitlines() if "01_attention_numpy.ipynb" in line)
    assert line.strip().startswith("damaged") and "DAMAGED" in line and "kept" not in line, out
    assert "make reset-lesson LESSON=01" in out
