"""Each lesson, run as a student runs it: JupyterLab in a real browser, Run > Run All Cells.

The lessons are the student's workspace copies, made by scripts/workspace.py (what `make lab` runs)
into a temporary my_work/ folder: outputs cleared, nothing else changed, served from outside
notebooks/. For every lesson: open it in JupyterLab in headless Chromium, wait for the kernel to
connect and be idle, click Run > Run All Cells, check that the run started, wait until the kernel is
idle and every code cell shows an execution count, save it from the File menu, and fail on any error
output; every exercise check cell (one that calls `checks.check(`) must say "not attempted", since a
fresh copy is untouched. A screenshot per lesson goes to artifacts/browser/.

Selectors checked against JupyterLab 4.6: an error output is rendered exactly like stderr text
(`.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]`, as a warning is), so errors
are read from the notebook as the browser saved it (output_type "error"), not from the DOM.
A run that stops early (Run All stops at the first error) is detected when the kernel stays idle
with cells still unexecuted, so a broken lesson fails in seconds rather than at the timeout.
Also: one lesson opened in the RISE presenter (/rise/<path>) shows reveal.js slides.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import time
from pathlib import Path

import nbformat
import pytest

RUN_TIMEOUT_S = 180  # per lesson: from the click to every cell executed
KERNEL_TIMEOUT_S = 90  # open the notebook and connect its kernel
STOPPED_AFTER_IDLE_S = 6  # kernel idle this long with cells unexecuted: Run All has stopped

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
PROMPTS_JS = f"""() => Array.from(document.querySelectorAll(
    '{PANEL} .jp-Notebook .jp-Cell.jp-CodeCell .jp-InputArea-prompt')).map(e => e.textContent.trim())"""
INDICATOR = f"{PANEL} .jp-Notebook-ExecutionIndicator"
WIDGET_CALL = re.compile(r"\binteract(?:ive|_manual)?\s*\(|\bwidgets\.\w+\s*\(")  # as in tests/hygiene.py
WIDGET_VIEWS = f"{PANEL} .jp-OutputArea-output > .jupyter-widgets"

CHECK_CALL = re.compile(r"\bchecks\.check\(")  # an exercise's self-check (course_utils.checks)
NOT_ATTEMPTED = re.compile(r"not attempted", re.IGNORECASE)
REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.browser


def _load_workspace_script():
    # Loaded by path (scripts/ is not a package): the very code `make lab` and `make workspace` run.
    spec = importlib.util.spec_from_file_location("course_scripts_workspace", REPO / "scripts" / "workspace.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


workspace = _load_workspace_script()


@pytest.fixture(scope="session")
def lesson_root(tmp_path_factory) -> Path:
    """A temporary my_work/ made by scripts/workspace.py: the lessons exactly as a student gets them.

    Overrides conftest's fixture of the same name for this module, so the `lab` server serves it.
    """
    # COURSE_BROWSER_NOTEBOOKS (see conftest) still points the tests at another folder of lessons.
    notebooks = Path(os.environ.get("COURSE_BROWSER_NOTEBOOKS", REPO / "notebooks"))
    root = tmp_path_factory.mktemp("workspace") / workspace.WORKSPACE
    entries = workspace.sync(notebooks, root)
    assert entries and all(entry.action == "created" for entry in entries), entries
    for entry in entries:  # nothing computed is left: the student sees no answer before running
        cells = _code_cells(nbformat.read(root / entry.name, as_version=4))
        stored = [n for n, cell in enumerate(cells, start=1) if cell.outputs or cell.execution_count is not None]
        assert not stored, f"{entry.name}: the workspace copy keeps outputs in code cell(s) {stored}"
    return root


def _code_cells(nb) -> list:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def _session_for(lab, name: str) -> dict | None:
    for session in lab.api("api/sessions"):
        if session.get("path") == name and session.get("kernel"):
            return session
    return None


def _kernel_state(lab, name: str) -> tuple[str | None, int]:
    """(execution_state, websocket connections) of the kernel attached to notebook `name`."""
    session = _session_for(lab, name)
    if session is None:
        return None, 0
    kernel = lab.api(f"api/kernels/{session['kernel']['id']}")
    return kernel.get("execution_state"), kernel.get("connections", 0)


def _indicator(page) -> str | None:
    locator = page.locator(INDICATOR)
    return locator.first.get_attribute("data-status") if locator.count() else None


def _wait_for_kernel(page, lab, name: str) -> None:
    """Wait until the notebook's kernel is connected and idle, both in the toolbar and in the server."""
    deadline = time.monotonic() + KERNEL_TIMEOUT_S
    state = connections = indicator = None
    while time.monotonic() < deadline:
        state, connections = _kernel_state(lab, name)
        indicator = _indicator(page)
        if state == "idle" and connections >= 1 and indicator == "idle":
            return
        page.wait_for_timeout(500)  # not time.sleep: Playwright serves its routes only while it runs
    pytest.fail(
        f"{name}: kernel not ready after {KERNEL_TIMEOUT_S} s (server says {state!r} with {connections} "
        f"connection(s); toolbar says {indicator!r})"
    )


def _click_menu(page, menu: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{re.escape(menu)}$")).click()
    page.locator(".lm-Menu-content .lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(item)}$")).click()


def _is_count(prompt: str) -> bool:
    return re.fullmatch(r"\[\d+\]:", prompt) is not None


def _wait_for_start(page, lab, name: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        prompts = page.evaluate(PROMPTS_JS)
        if any(p == "[*]:" or _is_count(p) for p in prompts) or _indicator(page) == "busy":
            return
        if _kernel_state(lab, name)[0] == "busy":
            return
        page.wait_for_timeout(200)  # not time.sleep: Playwright serves its routes only while it runs
    pytest.fail(f"{name}: Run > Run All Cells did not start a run within 30 s (no cell queued, kernel never busy)")


def _wait_for_finish(page, lab, name: str, n_code: int) -> list[str]:
    """Wait until every code cell has an execution count and the kernel is idle; return the prompts."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    idle_since = None
    prompts: list[str] = []
    while time.monotonic() < deadline:
        prompts = page.evaluate(PROMPTS_JS)
        idle = _indicator(page) == "idle" and _kernel_state(lab, name)[0] == "idle"
        done = len(prompts) == n_code and all(_is_count(p) for p in prompts)
        if idle and done:
            return prompts
        if idle and not any(p == "[*]:" for p in prompts):
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since > STOPPED_AFTER_IDLE_S:
                return prompts  # Run All stopped (an error, usually); the caller reports which cells
        else:
            idle_since = None
        page.wait_for_timeout(500)  # not time.sleep: Playwright serves its routes only while it runs
    return prompts


def _save(page, saved: Path, n_code: int) -> nbformat.NotebookNode:
    """Save from the File menu and wait until the file on disk holds the executed notebook."""
    _click_menu(page, "File", "Save Notebook")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            nb = nbformat.read(saved, as_version=4)
            if sum(cell.execution_count is not None for cell in _code_cells(nb)) > 0 or n_code == 0:
                return nb
        except (OSError, ValueError):
            pass
        page.wait_for_timeout(300)  # not time.sleep: Playwright serves its routes only while it runs
    pytest.fail(f"{saved.name}: File > Save Notebook did not write the executed notebook within 30 s")


def _error_outputs(nb) -> list[tuple[int, str]]:
    """(code cell number, 'ename: evalue') for each error output outside cells tagged raises-exception."""
    errors = []
    for number, cell in enumerate(_code_cells(nb), start=1):
        if "raises-exception" in cell.metadata.get("tags", []):
            continue
        for output in cell.outputs:
            if output.output_type == "error":
                errors.append((number, f"{output.ename}: {output.evalue}"))
    return errors


def _output_text(output) -> str:
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return f"{output.ename}: {output.evalue}"
    data = output.get("data", {})  # one representation per output, so a message is counted once
    return next((str(data[mime]) for mime in ("text/plain", "text/markdown", "text/html") if mime in data), "")


def _checks_not_saying_not_attempted(nb) -> list[str]:
    """'#n: what it printed' for each check cell that does not say "not attempted" once per check call."""
    wrong = []
    for number, cell in enumerate(_code_cells(nb), start=1):
        calls = len(CHECK_CALL.findall(cell.source))
        if not calls:
            continue
        text = "\n".join(_output_text(output) for output in cell.outputs)
        if len(NOT_ATTEMPTED.findall(text)) < calls:
            shown = " ".join(text.split())[:160] or "(no output)"
            wrong.append(f"#{number} ({calls} check call(s)): {shown}")
    return wrong


def test_lesson_runs_all_cells_in_jupyterlab(lesson, lab, lesson_root, page, screenshot_dir, record_screenshot):
    name = lesson.name
    code = _code_cells(nbformat.read(lesson_root / name, as_version=4))
    n_code = len(code)
    n_widget_cells = sum(bool(WIDGET_CALL.search(cell.source)) for cell in code)
    started = time.monotonic()
    shot = screenshot_dir / f"{lesson.stem}.png"
    session = None
    try:
        page.goto(lab.url(f"lab/tree/{name}", reset=""))  # ?reset: a fresh workspace holding only this lesson
        page.locator(f"{PANEL} .jp-Notebook .jp-Cell").first.wait_for(timeout=KERNEL_TIMEOUT_S * 1000)
        _wait_for_kernel(page, lab, name)
        session = _session_for(lab, name)
        shown = len(page.evaluate(PROMPTS_JS))
        assert shown == n_code, f"{name}: the page shows {shown} code cells, the file has {n_code}"

        _click_menu(page, "Run", "Run All Cells")
        _wait_for_start(page, lab, name)
        prompts = _wait_for_finish(page, lab, name, n_code)
        seconds = time.monotonic() - started
        saved = _save(page, lesson_root / name, n_code)

        errors = _error_outputs(saved)
        if errors:  # show the first failing cell in the screenshot
            page.locator(f"{PANEL} .jp-Notebook .jp-CodeCell").nth(errors[0][0] - 1).scroll_into_view_if_needed()
        page.screenshot(path=shot)
        record_screenshot(lesson.stem, shot, seconds)

        assert not errors, f"{name}: error output in code cell(s): " + "; ".join(f"#{n} {e}" for n, e in errors)
        wrong = _checks_not_saying_not_attempted(saved)
        assert not wrong, f"{name}: in a fresh workspace copy, check cell(s) not saying 'not attempted': " + "; ".join(
            wrong
        )
        missing = [i for i, p in enumerate(prompts, start=1) if not _is_count(p)]
        assert not missing and len(prompts) == n_code, (
            f"{name}: after {seconds:.0f} s (limit {RUN_TIMEOUT_S} s) code cells without an execution count: "
            f"{missing[:10]} of {n_code}; kernel {_kernel_state(lab, name)[0]!r}"
        )
        counts = [int(p[1:-2]) for p in prompts]
        assert counts == list(range(1, n_code + 1)), f"{name}: execution counts not 1..{n_code} in order: {counts}"
        if n_widget_cells:  # the widget manager rendered the explorers (not "Error displaying widget")
            views = page.locator(WIDGET_VIEWS).count()
            assert views >= n_widget_cells, f"{name}: {views} widget views for {n_widget_cells} widget cell(s)"
            outputs = page.locator(f"{PANEL} .jp-OutputArea-output").all_inner_texts()
            broken = [t[:80] for t in outputs if "Error displaying widget" in t]
            assert not broken, f"{name}: widgets failed to render: {broken}"
    except BaseException:
        if not shot.exists():
            page.screenshot(path=shot)
        if page.page_errors:
            print(f"JavaScript errors on the page: {page.page_errors[:5]}")
        raise
    finally:
        if session is not None:  # free the kernel's memory and CPU for the next lesson
            lab.api(f"api/sessions/{session['id']}", method="DELETE")


def _slide_count(nb) -> int:
    return sum(cell.metadata.get("slideshow", {}).get("slide_type") == "slide" for cell in nb.cells)


def test_lesson_opens_as_rise_slides(lesson, lab, lesson_root, page, screenshot_dir, record_screenshot):
    """The RISE presenter (what "Render as slides" / alt+r opens) shows one reveal.js slide per 'slide' cell."""
    started = time.monotonic()
    expected = _slide_count(nbformat.read(lesson_root / lesson.name, as_version=4))
    assert expected > 0, f"{lesson.name} has no cell with slideshow slide_type 'slide'"
    try:
        page.goto(lab.url(f"rise/{lesson.name}"))
        slides = page.locator(".reveal .slides > section")
        slides.first.wait_for(timeout=KERNEL_TIMEOUT_S * 1000)
        page.locator(".reveal .slides > section.present").wait_for()
        assert slides.count() == expected, f"RISE shows {slides.count()} slides, {lesson.name} marks {expected}"
        first = slides.first.get_attribute("class")
        assert "present" in first, f"the first slide is not the one presented: class={first!r}"
        shot = screenshot_dir / f"rise_{lesson.stem}.png"
        page.screenshot(path=shot)  # the title slide
        record_screenshot(f"RISE {lesson.stem}", shot, time.monotonic() - started)
        if expected > 1:  # the presenter responds to the keyboard: go to the next slide
            page.keyboard.press("PageDown")
            page.locator(".reveal .slides > section:nth-child(2).present").wait_for(timeout=10_000)
    finally:
        for session in lab.api("api/sessions"):  # the presenter may start a kernel
            if session.get("path") == lesson.name:
                lab.api(f"api/sessions/{session['id']}", method="DELETE")


def test_render_as_slideshow_button_opens_rise(first_lesson, lab, lesson_root, page, screenshot_dir, record_screenshot):
    """The instructor's path: open a lesson in JupyterLab, click the toolbar's slideshow button (Alt+R)."""
    lesson = first_lesson
    started = time.monotonic()
    expected = _slide_count(nbformat.read(lesson_root / lesson.name, as_version=4))
    try:
        page.goto(lab.url(f"lab/tree/{lesson.name}", reset=""))
        page.locator(f'{PANEL} .jp-NotebookPanel-toolbar [data-command="RISE:preview"]').click()
        slides = page.frame_locator('iframe[src*="/rise/"]').locator(".reveal .slides > section")
        slides.locator("xpath=self::*[contains(@class, 'present')]").wait_for(timeout=KERNEL_TIMEOUT_S * 1000)
        assert slides.count() == expected, (
            f"the RISE preview shows {slides.count()} slides, {lesson.name} marks {expected}"
        )
        shot = screenshot_dir / f"rise_preview_{lesson.stem}.png"
        page.screenshot(path=shot)
        record_screenshot(f"RISE preview {lesson.stem}", shot, time.monotonic() - started)
    finally:
        for session in lab.api("api/sessions"):
            if session.get("path") == lesson.name:
                lab.api(f"api/sessions/{session['id']}", method="DELETE")
