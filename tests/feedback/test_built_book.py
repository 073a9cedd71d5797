"""Feedback on the built book (not a hand-made page): the fixture book built by bookbuild with an
endpoint in its _quarto.yml, the real service on loopback, Debian Chromium."""
from __future__ import annotations

import functools
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from test_client_browser import Service, free_port, sync_api  # noqa: F401  (same folder)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "book"
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    from bookbuild import build
    root = tmp_path_factory.mktemp("fbbook") / "book"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("_book", ".bookcache"))
    port = free_port()
    cfg = root / "_quarto.yml"
    cfg.write_text(cfg.read_text() + f"feedback:\n  endpoint: http://127.0.0.1:{port}/api/feedback\n")
    build(root, ("html",), search=False)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root / "_book")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", port
    server.shutdown()


@pytest.fixture
def service(tmp_path, book):
    site, port = book
    svc = Service(tmp_path / "feedback.db", port, site)
    svc.start()
    yield svc
    svc.stop()


@pytest.fixture
def page(chromium):
    context = chromium.new_context()
    context.set_default_timeout(15000)
    yield context.new_page()
    context.close()


def suggest(page, passage: str, suggestion: str) -> None:
    """Select ``passage`` as a reader would, choose "Suggest a change", type and send."""
    page.get_by_text(passage).select_text()
    page.get_by_role("button", name="Suggest a change").click()
    dialog = page.get_by_role("dialog", name="Suggest a change")
    dialog.get_by_label("Your suggestion").fill(suggestion)
    dialog.get_by_role("button", name="Send").click()


def test_select_a_passage_of_a_chapter_and_send_it(page, book, service):
    site, _ = book
    page.goto(f"{site}/chapters/two.html")
    version = page.locator('meta[name="book-version"]').get_attribute("content")
    suggest(page, "Mind the units.", "Which units?")
    sync_api.expect(page.locator(".fb-status")).to_contain_text("your suggestion was sent")
    [row] = service.rows()
    assert row["exact"] == "Mind the units."
    assert row["page"] == "/chapters/two.html" and row["version"] == version
    assert row["section"] == "sec-two" and row["suggestion"] == "Which units?"


def test_sent_while_the_service_is_down_then_stored_exactly_once(page, book, service):
    site, _ = book
    service.stop()
    page.goto(f"{site}/chapters/two.html")
    suggest(page, "Mind the units.", "Sent while down.")
    sync_api.expect(page.locator(".fb-status")).to_contain_text("Saved on this device")
    service.start()
    page.reload()
    page.wait_for_function("window.bookFeedback && window.bookFeedback.queue().length === 0")
    rows = service.rows()
    assert [(r["exact"], r["suggestion"]) for r in rows] == [("Mind the units.", "Sent while down.")]
