"""The course website (``make site``), opened page by page in headless Chromium with the network blocked.

The site is built afresh into a temporary folder by ``scripts/build_site.py`` (the command behind
``make site``; ``COURSE_SITE_DIR=site`` reuses a built one) and served as static files on 127.0.0.1,
as an instructor would host it. For every page: it exists, everything it loads comes from the site
(the `page` fixture aborts and reports any request outside loopback), every equation is typeset by
the site's own MathJax (no raw ``$...$`` or ``\\(...\\)`` left), every image loads and has a real
text alternative, every internal link points to a page and anchor that exist, and at tablet width
(768 px) the page does not scroll sideways and every figure fits. Then: the build
takes under 60 s, the home page maps every lesson, lessons link to their neighbours and have a table
of contents, and the search finds a lesson.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from conftest import REPO, site_page_names
from site_browser import open_site_page

pytestmark = pytest.mark.browser

BUILD_LIMIT_S = 60  # the requirement for `make site` on the course machine
MIN_ALT_CHARS = 40  # as scripts/apply_alt_text.py: what the figure shows and what to notice

# Text of the page as a reader sees it, without code, outputs and typeset math, where TeX delimiters
# would be a rendering failure.
PROSE_TEXT_JS = """() => {
    const main = document.querySelector('main') || document.body;
    const copy = main.cloneNode(true);
    copy.querySelectorAll('pre, code, mjx-container, mjx-assistive-mml, script, style, .cell_output, .output')
        .forEach(node => node.remove());
    return copy.innerText;
}"""
MATH_JS = """() => Array.from(document.querySelectorAll('.math')).map(node => ({
    text: node.textContent.slice(0, 80), typeset: node.querySelector('mjx-container') !== null}))"""
IMAGES_JS = """() => Array.from(document.images).map(img => ({
    src: img.getAttribute('src'), alt: img.getAttribute('alt'), loaded: img.complete && img.naturalWidth > 0}))"""
LINKS_JS = "() => Array.from(document.querySelectorAll('a[href]'), a => a.href)"
TABLET = {"width": 768, "height": 1024}
FIT_JS = """() => {
    const root = document.documentElement;
    const wide = Array.from(document.images)
        .filter(img => img.getBoundingClientRect().right > root.clientWidth + 1).map(img => img.getAttribute('src'));
    return [root.scrollWidth, root.clientWidth, wide];
}"""
RAW_TEX = re.compile(r"(?<![\w\\])\$[^$\n]+\$|\\\(.+?\\\)|\\\[.+?\\\]|\$\$")


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs) -> None:
        for key, value in attrs:
            if key in ("id", "name") and value:
                self.ids.add(value)


def _anchors(path: Path, cache: dict[Path, set[str]]) -> set[str]:
    if path not in cache:
        parser = _Ids()
        parser.feed(path.read_text(encoding="utf-8"))
        cache[path] = parser.ids
    return cache[path]


def test_site_builds_quickly_with_every_page(built_site):
    """`make site`'s build gives index.html and one page per lesson (its solutions folded in it), the guide and search."""
    folder, seconds = built_site
    missing = [name for name in site_page_names() if not (folder / name).is_file()]
    assert not missing, f"the built site lacks {missing}"
    assert (folder / "_static" / "mathjax" / "tex-mml-chtml.js").is_file(), "MathJax is not shipped inside the site"
    assert (folder / "searchindex.js").is_file(), "the search index is missing"
    lessons = sorted(path.stem for path in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert len(lessons) >= 9, f"expected the nine lessons 00-08, found {lessons}"
    if seconds is not None:
        assert seconds < BUILD_LIMIT_S, f"the site build took {seconds:.1f} s, over the {BUILD_LIMIT_S} s limit"


def test_site_page_offline_typeset_and_linked(site_page, built_site, site_server, page):
    """Each page: loads only from the site, equations typeset, images loaded with alt text, links resolve."""
    folder, _ = built_site
    failed = open_site_page(page, site_server, site_page)
    assert not failed, f"{site_page}: requests that failed: {failed}"
    assert page.title(), f"{site_page} has no <title>"

    untypeset = [entry["text"] for entry in page.evaluate(MATH_JS) if not entry["typeset"]]
    assert not untypeset, f"{site_page}: equations MathJax did not typeset: {untypeset[:5]}"
    raw = sorted(set(RAW_TEX.findall(page.evaluate(PROSE_TEXT_JS))))
    assert not raw, f"{site_page}: raw TeX left in the text: {raw[:8]}"

    for image in page.evaluate(IMAGES_JS):
        assert image["loaded"], f"{site_page}: image {image['src']} did not load"
        alt = (image["alt"] or "").strip()
        assert len(alt) >= MIN_ALT_CHARS and not alt.endswith((".png", ".svg", ".jpg")), (
            f"{site_page}: image {image['src']} has no text alternative (alt={alt[:60]!r}); "
            "add one to docs/figure_alt_text.json and run scripts/apply_alt_text.py"
        )

    cache: dict[Path, set[str]] = {}
    broken = []
    for href in page.evaluate(LINKS_JS):
        if not href.startswith(site_server):
            continue  # outside the site (e.g. a reference); never requested
        parts = urlsplit(href)
        rel = unquote(parts.path[len(urlsplit(site_server).path) :]) or "index.html"
        target = folder / rel
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            broken.append(href)
        elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _anchors(target, cache):
            broken.append(href)
    assert not broken, f"{site_page}: internal links that do not resolve: {sorted(set(broken))[:10]}"

    page.set_viewport_size(TABLET)  # read on a tablet: no sideways scrolling of the page, figures fit
    page.wait_for_timeout(300)
    width, viewport, wide = page.evaluate(FIT_JS)
    assert width <= viewport, f"{site_page}: at {TABLET['width']} px the page scrolls sideways ({width} px wide)"
    assert not wide, f"{site_page}: at {TABLET['width']} px these images overflow the screen: {wide}"


def test_home_page_maps_every_lesson(built_site, site_server, page):
    open_site_page(page, site_server, "index.html")
    hrefs = set(
        page.evaluate("() => Array.from(document.querySelectorAll('main a[href]'), a => a.getAttribute('href'))")
    )
    for path in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        assert f"notebooks/{path.stem}.html" in hrefs, f"the home page's lesson map has no link to {path.stem}"
    sidebar = page.locator("nav.bd-docs-nav a").all_inner_texts()
    assert len(sidebar) >= 11, f"the navigation sidebar lists only {sidebar}"


def test_lessons_link_to_their_neighbours_and_have_a_table_of_contents(built_site, site_server, page):
    lessons = [path.stem for path in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))]
    for before, lesson, after in zip(lessons, lessons[1:], lessons[2:], strict=False):
        open_site_page(page, site_server, f"notebooks/{lesson}.html")
        assert page.locator("a.left-prev").get_attribute("href") == f"{before}.html", f"{lesson}: wrong previous"
        assert page.locator("a.right-next").get_attribute("href") == f"{after}.html", f"{lesson}: wrong next"
        entries = page.locator("#pst-page-toc-nav a").count()
        assert entries >= 3, f"{lesson}: the page's table of contents has {entries} entries"


def test_search_finds_a_lesson(built_site, site_server, page):
    open_site_page(page, site_server, "search.html?q=softmax")
    results = page.locator("#search-results ul.search li a")
    results.first.wait_for(timeout=30_000)
    hrefs = [results.nth(i).get_attribute("href") for i in range(results.count())]
    assert any("01_attention_numpy" in href for href in hrefs), f"searching 'softmax' found {hrefs}"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8888/lab",
        "ws://127.0.0.1:9/api/kernels",
        "http://localhost:80/x",
        "http://[::1]:80/x",
        "file:///tmp/x.html",
        "data:text/plain,hi",
        "https://fonts.googleapis.com/css?family=Lato",
        "wss://example.org/socket",
        "http://localhost.example.com/",
        "http://10.0.0.1/",
    ],
)
def test_blocking_regex_matches_the_loopback_rule(url):
    """The regex Playwright matches in the browser and the Python rule agree on what leaves the machine."""
    from conftest import OUTSIDE_LOOPBACK_URL, outside_loopback

    assert bool(OUTSIDE_LOOPBACK_URL.search(url)) == outside_loopback(url)
