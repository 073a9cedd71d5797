"""Browser fixtures for the built fixture book: the session's one build (tests/build/fixturebook.py)
served on 127.0.0.1, and a page that records console errors and refuses any other host."""
from __future__ import annotations

import functools
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "build"))
from fixturebook import built_once  # noqa: E402
from webwatch import Watched, watch  # noqa: E402

WIDE = {"width": 1400, "height": 900}
PHONE = {"width": 400, "height": 800}


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """Base URL of the built fixture site."""
    root, _report = built_once(tmp_path_factory)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root / "_book")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


class Web(Watched):
    """A page plus what it tried: requests to other hosts and console errors."""

    def __init__(self, context, page, base):
        super().__init__(context, page)
        self.base = base

    def goto(self, path: str):
        self.page.goto(self.base + path)
        self.page.wait_for_load_state("load")
        return self.page


@pytest.fixture
def web(chromium, site, request):
    viewport = getattr(request, "param", WIDE)
    context = chromium.new_context(viewport=viewport, color_scheme="light")
    context.set_default_timeout(10000)
    w = watch(context, allow=("http://127.0.0.1:", "data:"), cls=Web, base=site)
    yield w
    context.close()
    assert w.outside == [], f"requests left 127.0.0.1: {w.outside}"
    assert w.errors == [], f"console errors: {w.errors}"
