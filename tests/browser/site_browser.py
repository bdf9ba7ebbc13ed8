"""Open a page of the built course website in Playwright and wait until it is fully rendered.

Used by test_site.py and test_accessibility.py. A page is "rendered" when the load event fired and,
on pages that load MathJax, MathJax has finished typesetting (``MathJax.startup.promise``).
"""

from __future__ import annotations

__all__ = ["open_site_page"]

WAIT_FOR_MATHJAX_JS = """async () => {
    if (!document.querySelector('script[src*="mathjax/"]')) return false;
    const started = Date.now();
    while (!(window.MathJax && window.MathJax.startup && window.MathJax.startup.promise)) {
        if (Date.now() - started > 20000) throw new Error("MathJax did not start within 20 s");
        await new Promise(resolve => setTimeout(resolve, 50));
    }
    await window.MathJax.startup.promise;
    return true;
}"""


def open_site_page(page, base_url: str, name: str) -> list[str]:
    """Go to `name` (relative to the site root) and wait for it; return the local requests that failed.

    A failed request is one the browser could not complete or that answered HTTP 400 or more
    (a missing image, script, font or stylesheet). Requests outside loopback are aborted and
    reported by the `page` fixture itself.
    """
    failed: list[str] = []
    page.on("requestfailed", lambda request: failed.append(f"{request.url} ({request.failure})"))
    page.on(
        "response",
        lambda response: failed.append(f"{response.url} (HTTP {response.status})") if response.status >= 400 else None,
    )
    page.goto(base_url + name, wait_until="load")
    page.evaluate(WAIT_FOR_MATHJAX_JS)
    page.wait_for_load_state("networkidle")
    return [entry for entry in failed if "internet_disconnected" not in entry.lower()]
