"""Browser fixtures: a built fixture site served on 127.0.0.1, Debian's Chromium, a page that
fails on any request leaving the site and records console errors."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from site_fixture import make_site, serve  # noqa: E402
from webwatch import watch  # noqa: E402



@pytest.fixture(scope="session")
def site_dir(tmp_path_factory):
    return make_site(tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="session")
def site_url(site_dir):
    url, server = serve(site_dir)
    yield url
    server.shutdown()


@pytest.fixture(scope="session")
def browser(chromium):
    return chromium


@pytest.fixture
def web(browser, request):
    viewport = getattr(request, "param", {"width": 900, "height": 1000})
    context = browser.new_context(viewport=viewport)
    w = watch(context, allow=("http://127.0.0.1",))
    yield w
    context.close()


@pytest.fixture
def web_shared(browser):
    """A watched page whose widgets use the book's SharedWorker (its requests go unseen)."""
    context = browser.new_context(viewport={"width": 900, "height": 1000})
    w = watch(context, allow=("http://127.0.0.1",), shared_worker=True)
    yield w
    context.close()
