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
from fixturebook import built_once

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


class Web:
    """A page plus what it tried: requests to other hosts and console errors."""

    def __init__(self, context, page, base):
        self.context, self.page, self.base = context, page, base
        self.outside: list[str] = []
        self.errors: list[str] = []

    def goto(self, path: str):
        self.page.goto(self.base + path)
        self.page.wait_for_load_state("load")
        return self.page


@pytest.fixture
def web(chromium, site, request):
    viewport = getattr(request, "param", WIDE)
    context = chromium.new_context(viewport=viewport, color_scheme="light")
    context.set_default_timeout(10000)
    page = context.new_page()
    w = Web(context, page, site)

    def route(r):
        if r.request.url.startswith("http://127.0.0.1:") or r.request.url.startswith("data:"):
            r.continue_()
        else:
            w.outside.append(r.request.url)
            r.abort()
    context.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and w.errors.append(m.text))
    page.on("pageerror", lambda e: w.errors.append(str(e)))
    yield w
    context.close()
    assert w.outside == [], f"requests left 127.0.0.1: {w.outside}"
    assert w.errors == [], f"console errors: {w.errors}"
