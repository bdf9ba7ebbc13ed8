"""Fixtures for the real-browser tests: a JupyterLab server on cleared lesson copies, and headless Chromium.

Everything here is session-scoped except the page: one server and one browser serve every lesson.
Chromium is Debian's /usr/bin/chromium driven through Playwright's sync API (never `playwright
install`); without it every browser test is skipped with the reason.

Offline, proven: every page's browser context aborts each request (HTTP and websocket) to an address
outside loopback, and a test whose page asked for one fails listing the hosts, even if it passed
otherwise. Service workers are blocked so that no request escapes the interception.
"""

from __future__ import annotations

import functools
import http.server
import ipaddress
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest
from lab_server import LabServer

REPO = Path(__file__).resolve().parents[2]
# COURSE_BROWSER_NOTEBOOKS points the tests at another folder of NN_*.ipynb (e.g. scratch copies).
NOTEBOOKS = Path(os.environ.get("COURSE_BROWSER_NOTEBOOKS", REPO / "notebooks"))
CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = REPO / "artifacts" / "browser"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1440, "height": 960}

_screenshots: list[tuple[str, Path, float]] = []


def lesson_paths() -> list[Path]:
    """The lessons to run: notebooks/NN_*.ipynb, in order."""
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def clear_outputs(source: Path, target: Path) -> nbformat.NotebookNode:
    """Write a copy of `source` with every output, execution count and widget state removed."""
    nb = nbformat.read(source, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, target)
    return nb


def site_page_names() -> list[str]:
    """Every page the course website must have, relative to site/: home, lessons, guide, search."""
    lessons = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    return [
        "index.html",
        *(f"notebooks/{path.stem}.html" for path in lessons),
        "docs/instructor_guide.html",
        "search.html",
        "genindex.html",
    ]


def pytest_generate_tests(metafunc):
    """Parametrize tests taking `lesson` over the lessons and tests taking `site_page` over the site's pages."""
    if "lesson" in metafunc.fixturenames:
        metafunc.parametrize("lesson", lesson_paths(), ids=lambda path: path.stem)
    if "site_page" in metafunc.fixturenames:
        metafunc.parametrize("site_page", site_page_names())


@pytest.fixture
def first_lesson() -> Path:
    lessons = lesson_paths()
    if not lessons:
        pytest.skip(f"no NN_*.ipynb lesson in {NOTEBOOKS}")
    return lessons[0]


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run these tests"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"playwright is not importable in the course environment: {exc}")
    return CHROMIUM


@pytest.fixture(scope="session")
def lesson_root(tmp_path_factory) -> Path:
    """A temporary root holding a cleared copy of each lesson (course_utils finds the data files itself)."""
    root = tmp_path_factory.mktemp("lessons")
    for path in lesson_paths():
        clear_outputs(path, root / path.name)
    return root


@pytest.fixture(scope="session")
def lab(chromium_path, lesson_root, tmp_path_factory):
    server = LabServer(lesson_root, tmp_path_factory.mktemp("lab_state"))
    server.start()
    yield server
    for session in _safe_api(server, "api/sessions") or []:  # shut kernels down before the server
        _safe_api(server, f"api/sessions/{session['id']}", method="DELETE")
    server.stop()


def _safe_api(server: LabServer, path: str, method: str = "GET"):
    try:
        return server.api(path, method=method)
    except OSError:
        return None


@pytest.fixture(scope="session")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium_path), headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def outside_loopback(url: str) -> bool:
    """True for a network URL whose host is not this machine's loopback (file:, data:, blob: are local)."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https", "ws", "wss", "ftp"}:
        return False
    host = (parts.hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: only "localhost" resolves to loopback by definition
        return True


# The same rule as outside_loopback, as a regular expression: Playwright matches it inside the browser,
# so loopback requests are never routed through Python and never wait for the test's thread.
OUTSIDE_LOOPBACK_URL = re.compile(
    r"^(?:https?|wss?|ftp)://(?!(?:localhost|[^/?#]*\.localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?(?:[/?#]|$))"
)


def block_outside_loopback(context) -> list[str]:
    """Abort every request of `context` that leaves loopback; return the (live) list of URLs asked for."""
    blocked: list[str] = []

    def abort(route) -> None:
        if not outside_loopback(route.request.url):  # the regex and the rule disagree: let it through
            route.fallback()
            return
        blocked.append(route.request.url)
        route.abort("internetdisconnected")

    def close_socket(socket) -> None:
        if not outside_loopback(socket.url):
            socket.connect_to_server()
            return
        blocked.append(socket.url)
        socket.close()

    context.route(OUTSIDE_LOOPBACK_URL, abort)
    context.route_web_socket(OUTSIDE_LOOPBACK_URL, close_socket)
    return blocked


def blocked_hosts(urls: list[str]) -> list[str]:
    """The distinct hosts of `urls`, sorted."""
    return sorted({urlsplit(url).hostname or url for url in urls})


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport=VIEWPORT, service_workers="block")
    page = context.new_page()
    page.blocked_requests = block_outside_loopback(context)  # checked after the test (pytest_runtest_call)
    page.set_default_timeout(30_000)
    page.page_errors = []  # uncaught JavaScript errors, reported when a test fails
    page.on("pageerror", lambda error: page.page_errors.append(str(error)))
    yield page
    context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Fail a browser test whose page asked for anything outside loopback, listing the hosts."""
    page = getattr(item, "funcargs", {}).get("page")
    try:
        result = yield
    except BaseException as exc:
        if page is not None and getattr(page, "blocked_requests", None):
            exc.add_note(f"requests outside loopback were aborted: {blocked_hosts(page.blocked_requests)}")
        raise
    if page is not None and getattr(page, "blocked_requests", None):
        urls = sorted(set(page.blocked_requests))
        pytest.fail(
            f"the page asked for hosts outside loopback (aborted): {blocked_hosts(urls)}; URLs: {urls[:10]}",
            pytrace=False,
        )
    return result


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> tuple[Path, float | None]:
    """(site folder, build seconds): a fresh `scripts/build_site.py` build in a temporary folder.

    COURSE_SITE_DIR=site reuses a site already built (e.g. by `make site`); the seconds are then None.
    """
    if os.environ.get("COURSE_SITE_DIR"):
        folder = Path(os.environ["COURSE_SITE_DIR"]).resolve()
        if not (folder / "index.html").is_file():
            pytest.fail(f"COURSE_SITE_DIR={folder} has no index.html: run make site first")
        return folder, None
    root = tmp_path_factory.mktemp("site_build")
    out = root / "site"
    started = time.perf_counter()
    command = [sys.executable, str(REPO / "scripts" / "build_site.py"), "--out", str(out), "--stage", str(root / "src")]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        pytest.fail(f"the site build failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return out, seconds


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep the test output clean
        pass


@pytest.fixture(scope="session")
def site_server(built_site):
    """The built site served as static files on 127.0.0.1 (as an instructor would host it); yields its base URL."""
    folder, _ = built_site
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    if ARTIFACTS.exists():
        shutil.rmtree(ARTIFACTS)
    ARTIFACTS.mkdir(parents=True)
    return ARTIFACTS


@pytest.fixture
def record_screenshot():
    """Call with (lesson name, path, seconds) so the run's summary lists the screenshot."""

    def record(name: str, path: Path, seconds: float) -> None:
        _screenshots.append((name, path, seconds))

    return record


def pytest_terminal_summary(terminalreporter):
    if not _screenshots:
        return
    terminalreporter.section("browser screenshots")
    for name, path, seconds in _screenshots:
        shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        terminalreporter.write_line(f"{name}: {shown}  ({seconds:.1f} s)")
