"""A headless Chromium for the report tests, started once per worker.

Without a browser on the machine every browser test is skipped with one reason,
naming the install line; ``.ci/run`` installs Debian's ``chromium`` so CI runs them."""

from __future__ import annotations

import pytest

from tests.report.reportkit import FLAGS, INSTALL, chromium_path

SKIP = f"no headless Chromium here: {INSTALL}"


@pytest.fixture(scope="module")
def browser():
    path = chromium_path()
    if path is None:
        pytest.skip(SKIP)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip(SKIP)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=FLAGS)
        yield b
        b.close()


class Page:
    """A page opened from disk, with everything it said and asked for."""

    def __init__(self, browser, path):
        self.console: list[tuple[str, str]] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page = browser.new_page()
        self.page.on("console", lambda m: self.console.append((m.type, m.text)))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)
        self.page.wait_for_load_state("load")

    def shown(self) -> list[str]:
        return self.page.eval_on_selector_all(
            "article.case:not([hidden]) header code", "els => els.map(e => e.textContent)"
        )


@pytest.fixture
def open_page(browser):
    pages = []

    def open_(path):
        p = Page(browser, path)
        pages.append(p)
        return p

    yield open_
    for p in pages:
        p.page.close()
