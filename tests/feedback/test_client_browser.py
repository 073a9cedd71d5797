"""The in-page client (assets/js/feedback.js) in Chromium, against the real service on loopback.

A static server serves the repository (fixture pages and assets/) on one port, the service runs on
another; the fixture's endpoint port is rewritten to the service's. ``?endpoint=same-origin`` serves a
page whose endpoint is ``/api/feedback`` on the static server itself: a static host, which answers 501;
``?email=ADDRESS`` adds the email route and ``?issue=off`` removes the issue route.
"""

from __future__ import annotations

import datetime
import functools
import os
import re
import subprocess
import sys
import threading
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from feedback.storage import Repository
from webwatch import CHROMIUM
from waiting import until

REPO = Path(__file__).resolve().parents[2]
FIXTURE = "/tests/feedback/fixture"
FIXTURE_ENDPOINT = b"http://127.0.0.1:8765"

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium)", allow_module_level=True)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    """``python -m feedback serve`` as a child process that the test can stop and start again."""

    def __init__(self, db: Path, port: int, origin: str, *options: str):
        self.url = f"sqlite:///{db}"
        self.port = port
        self.origin = origin
        self.options = options  # e.g. "--site", "_book"
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "feedback", "serve", "--db", self.url, "--port", str(self.port),
             "--allow-origin", self.origin, "--rate-limit", "off", *self.options],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        def healthy():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/health", timeout=1):
                    return True
            except OSError:
                assert self.proc.poll() is None, "the feedback service exited"
                return False
        until(healthy, 30, "the feedback service to answer /api/health")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)

    def rows(self) -> list[dict]:
        repo = Repository(self.url)
        try:
            return repo.find()
        finally:
            repo.close()


@pytest.fixture(scope="module")
def ports():
    return {"static": free_port(), "service": free_port()}


@pytest.fixture(scope="module")
def site(ports):
    """The repository over HTTP, with the fixture's service port rewritten."""
    endpoint = f"http://127.0.0.1:{ports['service']}".encode()

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            path = urlparse(self.path).path
            if path.startswith(FIXTURE) and path.endswith(".html"):
                same_origin = "endpoint=same-origin" in urlparse(self.path).query
                query = parse_qs(urlparse(self.path).query)
                body = (REPO / path.lstrip("/")).read_bytes().replace(FIXTURE_ENDPOINT, b"" if same_origin else endpoint)
                if "email" in query:  # ?email=ADDRESS adds the email route
                    body = body.replace(b"</head>", f'<meta name="feedback-email" content="{query["email"][0]}"></head>'.encode())
                if "issue" in query:  # ?issue=off removes the issue route
                    body = re.sub(rb'<meta name="feedback-issue-url"[^>]*>', b"", body)
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            super().do_GET()

    server = ThreadingHTTPServer(("127.0.0.1", ports["static"]), functools.partial(Handler, directory=str(REPO)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{ports['static']}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def service(tmp_path, ports, site):
    svc = Service(tmp_path / "feedback.db", ports["service"], site)
    svc.start()
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def browser(chromium):
    return chromium


@pytest.fixture
def context(browser):
    context = browser.new_context()
    context.set_default_timeout(15000)
    # Nothing leaves the machine: a request to any other host is answered locally or aborted.
    context.route("https://github.com/**", lambda route: route.fulfill(status=200, body="issue form"))
    yield context
    context.close()


@pytest.fixture
def page(context):
    return context.new_page()


def status(page):
    return page.locator(".fb-status")


def box(page):
    return page.get_by_role("region", name="Feedback on this page")


def select(page, css: str, text: str | None = None):
    """Select ``text`` inside the element (or all of it), as a reader's drag would."""
    page.evaluate("""([css, text]) => {
        const el = document.querySelector(css);
        const range = document.createRange();
        if (text === null) { range.selectNodeContents(el); } else {
            const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
            for (let n = walker.nextNode(); n; n = walker.nextNode()) {
                const at = n.data.indexOf(text);
                if (at >= 0) { range.setStart(n, at); range.setEnd(n, at + text.length); break; }
            }
        }
        const sel = getSelection(); sel.removeAllRanges(); sel.addRange(range);
    }""", [css, text])


def expected_quote(page, exact: str) -> tuple[str, str]:
    """Prefix and suffix: the 32 characters around ``exact`` in the text of <main> (feedback UI left out)."""
    text = page.evaluate("""() => { const m = document.querySelector('main#content').cloneNode(true);
        m.querySelectorAll('[data-feedback-ui]').forEach((n) => n.remove()); return m.textContent; }""")
    at = text.index(exact)
    return text[max(0, at - 32):at], text[at + len(exact):at + len(exact) + 32]


def test_mouse_selection_is_sent_with_its_text_quote_selector(page, site, service):
    page.goto(f"{site}{FIXTURE}/index.html")
    page.locator("#p-bandwidth").select_text()
    page.get_by_role("button", name="Suggest a change").click()
    dialog = page.get_by_role("dialog", name="Suggest a change")
    dialog.get_by_label("Your suggestion").fill("Say which GPU has 2 TB/s.")
    dialog.get_by_label("Name (optional)").fill("Ada")
    dialog.get_by_label("Email (optional, if you would like a reply)").fill("ada@example.org")
    dialog.get_by_role("button", name="Send").click()
    sync_api.expect(status(page)).to_contain_text("your suggestion was sent")
    sync_api.expect(dialog).to_be_hidden()

    [row] = service.rows()
    exact = "Reading 1 GB at 2 TB/s takes 0.5 ms, whatever the FLOP count."
    assert (row["exact"], (row["prefix"], row["suffix"])) == (exact, expected_quote(page, exact))
    assert (row["page"], row["section"], row["version"]) == (f"{FIXTURE}/index.html", "bandwidth", "2025.11-test")
    assert (row["suggestion"], row["name"], row["email"]) == ("Say which GPU has 2 TB/s.", "Ada", "ada@example.org")
    assert page.evaluate("window.bookFeedback.queue()") == []


def test_keyboard_shortcut_opens_the_form_and_escape_closes_it(page, site, service):
    page.goto(f"{site}{FIXTURE}/index.html")
    select(page, "#p-caches", "trip to HBM 🚀")
    page.keyboard.press("Alt+Shift+S")
    dialog = page.get_by_role("dialog", name="Suggest a change")
    sync_api.expect(dialog).to_be_visible()
    page.keyboard.press("Escape")
    sync_api.expect(dialog).to_be_hidden()

    select(page, "#p-caches", "trip to HBM 🚀")
    page.keyboard.press("Alt+Shift+S")
    sync_api.expect(dialog.get_by_label("Your suggestion")).to_be_focused()
    page.keyboard.type("Name the memory: HBM3.")
    for _ in range(3):  # name, email, Send
        page.keyboard.press("Tab")
    sync_api.expect(dialog.get_by_role("button", name="Send")).to_be_focused()
    page.keyboard.press("Enter")
    sync_api.expect(status(page)).to_contain_text("your suggestion was sent")

    [row] = service.rows()
    assert (row["exact"], (row["prefix"], row["suffix"])) == ("trip to HBM 🚀", expected_quote(page, "trip to HBM 🚀"))
    assert (row["section"], row["suggestion"]) == ("caches", "Name the memory: HBM3.")


def test_keyboard_reader_quotes_a_paragraph_without_selecting_it(page, site, service):
    """No selection (a keyboard or screen-reader reader seldom makes one): the feedback box's button, or
    Alt+Shift+S, quotes the paragraph being read, and Previous/Next paragraph move the quote."""
    page.goto(f"{site}{FIXTURE}/index.html")
    page.keyboard.press("Alt+Shift+S")      # nothing selected, nothing focused: the first paragraph on screen
    dialog = page.get_by_role("dialog", name="Suggest a change")
    sync_api.expect(dialog).to_be_visible()
    quote = dialog.locator(".fb-quote")
    sync_api.expect(quote).to_have_text(page.locator("#p-roofline").inner_text())
    page.keyboard.press("Shift+Tab")        # from the suggestion back to the paragraph buttons
    sync_api.expect(dialog.get_by_role("button", name="Next paragraph")).to_be_focused()
    page.keyboard.press("Enter")
    sync_api.expect(quote).to_have_text(page.locator("#p-bandwidth").inner_text())
    page.keyboard.press("Escape")
    sync_api.expect(dialog).to_be_hidden()

    button = box(page).get_by_role("button", name="Comment on a paragraph")
    button.focus()
    page.keyboard.press("Enter")
    sync_api.expect(quote).to_have_text(page.locator("#p-roofline").inner_text())
    dialog.get_by_role("button", name="Next paragraph").press("Enter")
    dialog.get_by_role("button", name="Next paragraph").press("Enter")
    sync_api.expect(quote).to_have_text(page.locator("#p-caches").inner_text())
    sync_api.expect(dialog.get_by_role("button", name="Next paragraph")).to_be_disabled()
    dialog.get_by_label("Your suggestion").fill("Say which L2.")
    dialog.get_by_role("button", name="Send").press("Enter")
    sync_api.expect(status(page)).to_contain_text("your suggestion was sent")
    sync_api.expect(button).to_be_focused()   # back where the reader was
    [row] = service.rows()
    exact = page.locator("#p-caches").inner_text()
    assert (row["exact"], (row["prefix"], row["suffix"])) == (exact, expected_quote(page, exact))
    assert (row["section"], row["suggestion"]) == ("caches", "Say which L2.")


def test_submission_waits_while_service_is_down_and_is_stored_once(page, site, service):
    # The page's clock stands still until the reload below: its automatic retry (1-2 s after a
    # failure) cannot fire, however long this machine takes to restart the service, so the flush
    # below is what sends the suggestion.
    page.clock.install()
    page.clock.pause_at(datetime.datetime.now() + datetime.timedelta(seconds=1))
    service.stop()
    page.goto(f"{site}{FIXTURE}/index.html")
    box(page).get_by_label("Your suggestion").fill("Feedback box, service down.")
    box(page).get_by_role("button", name="Send").click()
    sync_api.expect(status(page)).to_contain_text("Saved on this device")
    [queued] = page.evaluate("window.bookFeedback.queue()")
    assert queued["attempts"] == 1 and queued["payload"]["suggestion"] == "Feedback box, service down."

    service.start()
    assert page.evaluate("window.bookFeedback.flush()") == {queued["payload"]["id"]: {"kind": "sent"}}
    sync_api.expect(status(page)).to_contain_text("has now been sent")
    assert page.evaluate("window.bookFeedback.queue()") == []
    assert [r["id"] for r in service.rows()] == [queued["payload"]["id"]]

    # Down again; this time the next page load sends it (time runs again).
    page.clock.resume()
    service.stop()
    box(page).get_by_label("Your suggestion").fill("Sent on the next page load.")
    box(page).get_by_role("button", name="Send").click()
    sync_api.expect(status(page)).to_contain_text("Saved on this device")
    service.start()
    page.reload()
    page.wait_for_function("window.bookFeedback && window.bookFeedback.queue().length === 0")
    assert sorted(r["suggestion"] for r in service.rows()) == ["Feedback box, service down.", "Sent on the next page load."]


def test_lost_answer_is_retried_without_a_second_copy(page, site, service):
    page.goto(f"{site}{FIXTURE}/index.html")

    def store_then_drop_answer(route):
        route.fetch()  # the service stores it...
        route.abort()  # ...but the answer never reaches the page

    page.route("**/api/feedback", store_then_drop_answer)
    box(page).get_by_label("Your suggestion").fill("Answer lost on the way back.")
    box(page).get_by_role("button", name="Send").click()
    sync_api.expect(status(page)).to_contain_text("Saved on this device")
    assert len(service.rows()) == 1

    page.unroute("**/api/feedback")
    page.evaluate("window.bookFeedback.flush()")
    sync_api.expect(status(page)).to_contain_text("has now been sent")
    assert [r["suggestion"] for r in service.rows()] == ["Answer lost on the way back."]


def test_offline_reader_is_told_and_back_online_it_is_sent(page, context, site, service):
    page.goto(f"{site}{FIXTURE}/index.html")
    context.set_offline(True)
    box(page).get_by_label("Your suggestion").fill("Written offline.")
    box(page).get_by_role("button", name="Send").click()
    sync_api.expect(status(page)).to_contain_text("you are offline")
    assert service.rows() == []
    context.set_offline(False)  # the 'online' event sends it
    page.wait_for_function("window.bookFeedback.queue().length === 0")
    assert [r["suggestion"] for r in service.rows()] == ["Written offline."]


def test_the_same_suggestion_sent_twice_is_already_received_not_a_failure(page, site, service):
    """The service keeps the first copy and answers the second 200 "duplicate" with the first's id:
    that is a suggestion received, not "no feedback service at this address"."""
    page.goto(f"{site}{FIXTURE}/index.html")
    for _ in range(2):
        box(page).get_by_label("Your suggestion").fill("Say it once.")
        box(page).get_by_role("button", name="Send").click()
        sync_api.expect(box(page).get_by_label("Your suggestion")).to_have_value("")   # left the form
    sync_api.expect(status(page)).to_contain_text("Already received, thank you")
    sync_api.expect(page.locator("#fb-box-error")).to_be_hidden()
    assert page.evaluate("window.bookFeedback.queue()") == []
    assert [r["suggestion"] for r in service.rows()] == ["Say it once."]


def test_refusal_reason_from_the_service_is_shown_to_the_reader(page, site, service):
    page.goto(f"{site}{FIXTURE}/index.html")
    page.route("**/api/feedback", lambda route: route.continue_(
        post_data=route.request.post_data.replace('"suggestion"', '"injected":1,"suggestion"', 1)))
    box(page).get_by_label("Your suggestion").fill("This one will be refused.")
    box(page).get_by_role("button", name="Send").click()
    sync_api.expect(page.get_by_role("alert")).to_contain_text("Not sent: unknown field: injected. Nothing was saved")
    sync_api.expect(page.locator("#fb-box-error").get_by_role("link", name="Open a pre-filled issue")).to_be_visible()
    sync_api.expect(box(page).get_by_label("Your suggestion")).to_have_value("This one will be refused.")
    assert page.evaluate("window.bookFeedback.queue()") == []
    assert service.rows() == []


def test_static_hosting_opens_a_prefilled_issue(page, context, site):
    page.goto(f"{site}{FIXTURE}/static.html")
    select(page, "#p-roofline", "memory-bound")
    page.get_by_role("button", name="Suggest a change").click()
    dialog = page.get_by_role("dialog", name="Suggest a change")
    assert dialog.get_by_label("Email (optional, if you would like a reply)").count() == 0
    dialog.get_by_label("Your suggestion").fill("Define the ridge point first.")
    with context.expect_page() as opened:
        dialog.get_by_role("button", name="Open an issue").click()
    url = urlparse(opened.value.url)
    query = parse_qs(url.query)
    assert (url.scheme, url.netloc, url.path) == ("https", "github.com", "/example-org/gpu-book/issues/new")
    assert query["title"] == [f'Suggestion for {FIXTURE}/static.html#roofline: "memory-bound"']
    body = query["body"][0]
    assert f"**Page:** {FIXTURE}/static.html#roofline" in body
    assert "**Book version:** 2025.11-test" in body
    assert "> memory-bound" in body
    assert "A kernel is [memory-bound] when its arithmetic intensity i…" in body
    assert "Define the ridge point first." in body
    sync_api.expect(status(page)).to_contain_text("pre-filled issue opened")
    sync_api.expect(box(page)).to_contain_text("This opens a pre-filled issue on github.com")
    assert page.evaluate("window.bookFeedback.mode") == "issue"
    assert page.evaluate("window.bookFeedback.queue()") == []


def test_form_fits_a_phone_screen(browser, site):
    context = browser.new_context(viewport={"width": 360, "height": 640}, is_mobile=True, has_touch=True)
    context.route("https://github.com/**", lambda route: route.abort())
    page = context.new_page()
    page.goto(f"{site}{FIXTURE}/static.html")
    select(page, "#p-roofline")
    button, dialog = page.get_by_role("button", name="Suggest a change"), page.get_by_role("dialog")
    for locator in (button, dialog):                 # the button by the selection, then the form it opens
        sync_api.expect(locator).to_be_visible()
        box = locator.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 360
        if locator is button:
            button.click()
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    context.close()


# ---- no service at the address, or a refused CORS check: other routes at once, nothing queued ----------

def assert_not_queued(page):
    assert page.evaluate("window.bookFeedback.queue()") == []
    sync_api.expect(page.locator("#fb-queue")).to_be_hidden()
    assert "Saved on this device" not in status(page).inner_text()


def issue_query(href: str) -> dict:
    url = urlparse(href)
    assert (url.scheme, url.netloc, url.path) == ("https", "github.com", "/example-org/gpu-book/issues/new")
    return {k: v[0] for k, v in parse_qs(url.query).items()}


def test_static_host_offers_the_issue_link_and_the_clipboard_and_queues_nothing(page, context, site):
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)
    page.goto(f"{site}{FIXTURE}/index.html?endpoint=same-origin")  # a plain file server: POST → 501
    select(page, "#p-roofline", "memory-bound")
    page.get_by_role("button", name="Suggest a change").click()
    dialog = page.get_by_role("dialog", name="Suggest a change")
    sync_api.expect(dialog).to_contain_text("Sent to the book's feedback service.")
    dialog.get_by_label("Your suggestion").fill("Define the ridge point first.")
    dialog.get_by_role("button", name="Send").click()

    error = dialog.locator(".fb-error")
    sync_api.expect(error).to_contain_text("Not sent: there is no feedback service at this address (it answered 501)")
    sync_api.expect(dialog.get_by_role("alert")).to_contain_text("Nothing was saved")
    sync_api.expect(dialog.get_by_label("Your suggestion")).to_have_value("Define the ridge point first.")
    assert_not_queued(page)

    link = dialog.get_by_role("link", name="Open a pre-filled issue")
    sync_api.expect(link).to_be_focused()  # the keyboard is already on the way out
    query = issue_query(link.get_attribute("href"))
    assert query["title"] == f'Suggestion for {FIXTURE}/index.html#roofline: "memory-bound"'
    assert "> memory-bound" in query["body"] and "Define the ridge point first." in query["body"]

    page.keyboard.press("Tab")
    copy = dialog.get_by_role("button", name="Copy the suggestion")
    sync_api.expect(copy).to_be_focused()
    page.keyboard.press("Enter")
    sync_api.expect(status(page)).to_contain_text("Copied")
    sync_api.expect(dialog.locator(".fb-route", has_text="Copied")).to_be_focused()  # said where the reader is
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith(query["title"]) and query["body"] in copied


@pytest.mark.parametrize("answer", [
    {"status": 404, "body": "Not Found"},                                   # most static hosts
    {"status": 405, "body": "<html>405 Not Allowed</html>"},                # GitHub Pages, nginx
    {"status": 200, "content_type": "text/html", "body": "<!doctype html><p>Home page</p>"},  # an SPA fallback
    {"status": 403, "content_type": "application/xml", "body": "<Error>AccessDenied</Error>"},  # a bucket
], ids=["404", "405", "200-html", "403-xml"])
def test_an_answer_that_is_not_the_service_is_never_reported_as_queued_or_sent(page, site, answer):
    page.goto(f"{site}{FIXTURE}/index.html?endpoint=same-origin")
    page.route("**/api/feedback", lambda route: route.fulfill(**answer))
    box(page).get_by_label("Your suggestion").fill("Where does this go?")
    box(page).get_by_role("button", name="Send").click()
    sync_api.expect(page.locator("#fb-box-error")).to_contain_text(
        f"there is no feedback service at this address (it answered {answer['status']})")
    assert "sent" not in status(page).inner_text().replace("Not sent", "")
    assert_not_queued(page)


def test_cross_origin_service_that_refuses_this_origin_is_no_service_here(page, site, tmp_path, ports):
    svc = Service(tmp_path / "feedback.db", ports["service"], "https://another-site.example")
    svc.start()
    try:
        page.goto(f"{site}{FIXTURE}/index.html")
        box(page).get_by_label("Your suggestion").fill("Refused by CORS.")
        box(page).get_by_role("button", name="Send").click()
        sync_api.expect(page.locator("#fb-box-error")).to_contain_text(
            f"127.0.0.1:{ports['service']} does not accept suggestions from this site")
        sync_api.expect(page.locator("#fb-box-error").get_by_role("link", name="Open a pre-filled issue")).to_be_visible()
        assert_not_queued(page)
        assert svc.rows() == []
    finally:
        svc.stop()


# ---- a service that is down or busy: queued, visible, and delivered once ----------------------------------

@pytest.mark.parametrize("code", [500, 502, 503, 429])
def test_failing_or_busy_service_queues_visibly_and_send_now_delivers_once(page, site, service, code):
    page.goto(f"{site}{FIXTURE}/index.html?endpoint=same-origin")
    page.route("**/api/feedback", lambda route: route.fulfill(
        status=code, content_type="application/json", body='{"error": "busy"}' if code == 429 else "oops"))
    box(page).get_by_label("Your suggestion").fill(f"Waiting after a {code}.")
    box(page).get_by_role("button", name="Send").click()
    sync_api.expect(status(page)).to_contain_text("Saved on this device")
    queue = page.get_by_role("region", name="Waiting on this device: 1")
    sync_api.expect(queue).to_contain_text(f"Waiting after a {code}.")
    sync_api.expect(queue).to_contain_text("Tried 1 time.")
    sync_api.expect(box(page).get_by_label("Your suggestion")).to_have_value("")

    def forward(route):  # the service is back: pass the request on to it
        route.fulfill(response=route.fetch(url=f"http://127.0.0.1:{service.port}/api/feedback"))

    page.unroute("**/api/feedback")
    page.route("**/api/feedback", forward)
    queue.get_by_role("button", name="Send now").click()
    sync_api.expect(status(page)).to_contain_text("has now been sent")
    sync_api.expect(page.locator("#fb-queue")).to_be_hidden()
    assert [r["suggestion"] for r in service.rows()] == [f"Waiting after a {code}."]


def test_waiting_suggestion_can_be_discarded_by_touch(browser, site, service):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        service.stop()
        page.goto(f"{site}{FIXTURE}/index.html")
        box(page).get_by_label("Your suggestion").fill("Never mind.")
        box(page).get_by_role("button", name="Send").tap()
        queue = page.get_by_role("region", name="Waiting on this device: 1")
        sync_api.expect(queue).to_contain_text("Never mind.")
        for button in queue.get_by_role("button").all():
            size = button.bounding_box()
            assert size["height"] >= 44 and size["x"] >= 0 and size["x"] + size["width"] <= 390
        queue.get_by_role("button", name='Discard "Never mind."').tap()
        sync_api.expect(page.locator("#fb-queue")).to_be_hidden()
        assert page.evaluate("window.bookFeedback.queue()") == []
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        context.close()


def test_email_route_is_offered_beside_the_issue_link_with_spaces_as_percent_20(page, site):
    page.goto(f"{site}{FIXTURE}/index.html?endpoint=same-origin&email=errata@example.org")
    box(page).get_by_label("Your suggestion").fill("Two words & more.")
    box(page).get_by_role("button", name="Send").click()
    alert = page.get_by_role("alert")
    sync_api.expect(alert.get_by_role("link", name="Open a pre-filled issue")).to_be_visible()
    href = alert.get_by_role("link", name="Write an email").get_attribute("href")
    address, _, query = href.removeprefix("mailto:").partition("?")
    assert address == "errata@example.org" and "+" not in query  # mail programs do not read '+' as a space
    fields = {k: v[0] for k, v in parse_qs(query).items()}
    assert fields["subject"] == f"Suggestion for {FIXTURE}/index.html"
    assert "Two words & more." in fields["body"]
    assert page.evaluate("window.bookFeedback.queue()") == []


def test_email_only_link_mode_says_so_and_opens_a_prefilled_email(page, context, site):
    page.goto(f"{site}{FIXTURE}/static.html?issue=off&email=errata@example.org")
    assert page.evaluate("window.bookFeedback.mode") == "email"
    sync_api.expect(box(page)).to_contain_text("This opens a pre-filled email to errata@example.org")
    box(page).get_by_label("Your suggestion").fill("By email.")
    box(page).get_by_role("button", name="Write an email").click()
    sync_api.expect(status(page)).to_contain_text("A pre-filled email opened in your email program")
    sync_api.expect(status(page).get_by_role("link", name="write the email")).to_have_attribute(
        "href", re.compile(r"^mailto:errata@example\.org\?subject=Suggestion%20for%20.*By%20email\."))


@pytest.mark.parametrize("width", [560, 1440])
def test_name_and_email_sit_side_by_side_at_one_height(browser, site, service, width):
    """Issue #47: the Email label ("Email (optional, if you would like a reply)") wraps where Name's
    does not, and the two inputs sat at different heights. Side by side, they share a line."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{site}{FIXTURE}/index.html")
        page.locator("#p-bandwidth").select_text()
        page.get_by_role("button", name="Suggest a change").click()
        for scope in (page.get_by_role("dialog", name="Suggest a change"), box(page)):
            name, email = (scope.get_by_label(n).bounding_box() for n in
                           ("Name (optional)", "Email (optional, if you would like a reply)"))
            if abs(name["x"] - email["x"]) < 1:          # stacked (a narrow box): nothing to line up
                continue
            assert abs(name["y"] - email["y"]) < 1, (name, email)
            page.keyboard.press("Escape")
    finally:
        context.close()
