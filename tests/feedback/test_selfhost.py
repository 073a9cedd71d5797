"""The built fixture book in the three hostings, and its errata page, in Chromium.

The fixture book is built with ``feedback: {endpoint: /api/feedback}``, the errata page of the real book
(appendices/errata.qmd) and a fixture export (fixture/errata.json). It is then:
- self-hosted with one command, ``python -m feedback serve --site _book``: a suggestion is sent, listed,
  and resolved from the review page with a note that the errata export publishes;
- put on a plain file server (a static host): the reader is offered the issue link and the clipboard at
  once, and nothing claims to be queued.
"""
from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import sys
import threading
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import pytest
import yaml

from test_built_book import suggest  # same folder: a reader's selection, suggestion and Send
# browser and context: a Chromium context whose GitHub requests are answered locally
from test_client_browser import Service, browser, context, free_port, sync_api  # noqa: F401  (same folder)

REPO = Path(__file__).resolve().parents[2]
FIXTURE_BOOK = REPO / "tests" / "fixtures" / "book"
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    from bookbuild import build

    root = tmp_path_factory.mktemp("selfhost") / "book"
    shutil.copytree(FIXTURE_BOOK, root, ignore=shutil.ignore_patterns("_book", ".bookcache"))
    cfg = yaml.safe_load((root / "_quarto.yml").read_text())
    cfg["feedback"] = {"endpoint": "/api/feedback"}
    cfg["book"]["appendices"].append("appendices/errata.qmd")
    (root / "_quarto.yml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    (root / "appendices").mkdir()
    shutil.copy(REPO / "appendices" / "errata.qmd", root / "appendices" / "errata.qmd")
    (root / "errata").mkdir()
    shutil.copy(Path(__file__).parent / "fixture" / "errata.json", root / "errata" / "errata.json")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", str(REPO))  # the errata cell imports feedback.errata
        build(root, ("html",), search=False)
    return root


@pytest.fixture(scope="module")
def static_host(book):
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(book / "_book")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def selfhost(book, tmp_path):
    port = free_port()
    svc = Service(tmp_path / "feedback.db", port, f"http://127.0.0.1:{port}", "--site", str(book / "_book"))
    svc.start()
    yield svc
    svc.stop()


def cli(db_url: str, *args: str) -> str:
    return subprocess.run([sys.executable, "-m", "feedback", *args, "--db", db_url], cwd=REPO, check=True,
                          capture_output=True, text=True, timeout=60).stdout


def test_one_command_serves_the_book_takes_a_suggestion_and_closes_the_loop(context, selfhost):
    site = f"http://127.0.0.1:{selfhost.port}"
    with urllib.request.urlopen(f"{site}/chapters/two.html") as res:
        assert res.headers["Cache-Control"] == "no-cache"
    with urllib.request.urlopen(f"{site}/api/health") as res:
        assert json.load(res) == {"status": "ok"}

    page = context.new_page()
    page.goto(f"{site}/chapters/two.html")
    assert page.evaluate("window.bookFeedback.mode") == "service"
    suggest(page, "Mind the units.", "Which units?")
    sync_api.expect(page.locator(".fb-status")).to_contain_text("your suggestion was sent")
    [row] = selfhost.rows()
    assert (row["page"], row["exact"], row["suggestion"]) == ("/chapters/two.html", "Mind the units.", "Which units?")
    assert row["id"] in cli(selfhost.url, "list")

    review = context.new_page()
    review.goto(f"{site}/review")
    entry = review.locator(f"#s-{row['id']}")
    sync_api.expect(entry).to_contain_text("Which units?")
    entry.get_by_label("Note for readers on the errata page (optional)").fill("The units are now named: GB/s.")
    entry.get_by_role("button", name="Resolve").click()
    sync_api.expect(review.get_by_role("heading", level=1)).to_have_text("Reader suggestions (open: 0)")
    [published] = json.loads(cli(selfhost.url, "errata", "export"))["entries"]
    assert (published["id"], published["note"], published["exact"]) == (row["id"], "The units are now named: GB/s.", "Mind the units.")


def test_static_host_offers_a_route_at_once_and_queues_nothing(context, static_host):
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=static_host)
    page = context.new_page()
    page.goto(f"{static_host}/chapters/two.html")
    suggest(page, "Mind the units.", "Name them.")
    dialog = page.get_by_role("dialog", name="Suggest a change")
    sync_api.expect(dialog.locator(".fb-error")).to_contain_text("there is no feedback service at this address (it answered 501)")
    link = dialog.get_by_role("link", name="Open a pre-filled issue")
    url = urlparse(link.get_attribute("href"))
    assert (url.netloc, url.path) == ("github.com", "/example/fixture-book/issues/new")  # from book.repo-url
    assert "Name them." in parse_qs(url.query)["body"][0]
    dialog.get_by_role("button", name="Copy the suggestion").click()
    assert "Name them." in page.evaluate("navigator.clipboard.readText()")
    assert page.evaluate("window.bookFeedback.queue()") == []
    assert "Saved on this device" not in page.locator(".fb-status").inner_text()


def directive(href: str) -> tuple[str, str, list[str]]:
    """(path, element id, decoded terms) of a link with a text fragment."""
    path, _, fragment = href.partition("#")
    anchor, _, text = fragment.partition(":~:text=")
    return path, anchor, [unquote(t) for t in text.split(",")]


def test_errata_page_groups_by_build_and_links_each_passage_by_a_text_fragment(context, static_host):
    page = context.new_page()
    page.goto(f"{static_host}/appendices/errata.html")
    headings = [h.removesuffix("#").strip() for h in page.locator("main h2").all_inner_texts()]  # less the permalink
    assert [h for h in headings if h.startswith("Build")] == ["Build 2222222", "Build 1111111"]  # newest first
    links = page.locator("main li a[href*=':~:text=']")
    entries = page.locator("main li:has(a[href*=':~:text='])")   # not the page's contents list
    assert links.count() == 2
    expected = {
        "Chapter two": ("../chapters/two.html", "sec-two", ["an intensity. A-", "zeppelin appears only in this chapter", "-, so search"]),
        "Chapter one": ("../chapters/one.html", "sec-one", ["The ridge point is"]),
    }
    for i in range(2):
        link = links.nth(i)
        path, anchor, terms = directive(link.get_attribute("href"))
        assert (path, anchor, terms) == expected[link.inner_text()]
        sync_api.expect(entries.nth(i)).to_contain_text(
            "Says why the zeppelin is here" if i == 0 else "now given with its unit")
        # The terms name the passage in the target page: prefix, passage and suffix in that order,
        # with only white space between, as a browser matches them.
        target = context.new_page()
        target.goto(link.evaluate("a => a.href"))
        text = target.locator("main").inner_text()
        prefix = terms[0][:-1] if terms[0].endswith("-") else None
        suffix = terms[-1][1:] if terms[-1].startswith("-") else None
        middle = terms[1 if prefix else 0]
        pattern = r"\s*".join(re.escape(t) for t in (prefix, middle, suffix) if t)
        assert len(re.findall(pattern, text)) == 1, (pattern, text[:400])
        assert target.locator(f"#{anchor}").count() == 1
        target.close()
