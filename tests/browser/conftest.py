"""Browser fixtures: a built fixture site served on 127.0.0.1, Debian's Chromium, a page that
fails on any request leaving the site and records console errors."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from site_fixture import make_site, serve  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def site_url(tmp_path_factory):
    site = make_site(tmp_path_factory.mktemp("site"))
    url, server = serve(site)
    yield url
    server.shutdown()


@pytest.fixture(scope="session")
def browser(chromium):
    return chromium


class Page:
    """A Playwright page plus what it tried to do: outside requests and console errors."""

    def __init__(self, context, page):
        self.context, self.page, self.outside, self.errors = context, page, [], []


@pytest.fixture
def web(browser, request):
    viewport = getattr(request, "param", {"width": 900, "height": 1000})
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    w = Page(context, page)

    def route(r):
        if r.request.url.startswith("http://127.0.0.1"):
            r.continue_()
        else:
            w.outside.append(r.request.url)
            r.abort()
    context.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and w.errors.append(m.text))
    page.on("pageerror", lambda e: w.errors.append(str(e)))
    yield w
    context.close()
