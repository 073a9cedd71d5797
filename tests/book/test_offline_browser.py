"""The book offline (bookbuild/html/offline, assets/js/offline.js) in Chromium, on a copy of the
built book served by a static server on 127.0.0.1: visits fetch nothing for it until the reader
opens the Offline panel, which registers the worker and fetches no Python runtime; "Keep
this book offline" says its size, shows progress and keeps every page, search, the widgets, an
exercise's Check and its progress, and the feedback queue working with the network off; a deploy of a changed build is offered as "a newer
edition" and, after Reload, served whole (no page with the old build's files); opened as a file, the
book says that offline reading needs it served."""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from a11y_site import CONFIGS, pages, serve  # noqa: E402  (same folder)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "feedback"))
from test_client_browser import Service, free_port  # noqa: E402

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

ALL_LIVE = "[...document.querySelectorAll('.widget[data-widget]')].every(w => w.dataset.state === 'live')"
CACHES = """async () => { const out = {}; for (const k of await caches.keys())
  out[k] = (await (await caches.open(k)).keys()).map((r) => r.url); return out; }"""
MARK = '<p id="deploy-mark">Changed in the second build.</p>'


@pytest.fixture(scope="module")
def site(built_book, tmp_path_factory):
    """A copy of the built book (with its search index) whose pages send feedback to a local
    service, made into a deploy by the offline step; the served folder can be deployed to again."""
    from bookbuild.html.offline import write_offline
    if not (built_book / "pagefind" / "pagefind.js").exists():   # the session's build skips search
        from bookbuild import build
        build(built_book.parent, formats=("html",), search=True)
    folder = tmp_path_factory.mktemp("offline") / "site"
    shutil.copytree(built_book, folder)
    port = free_port()
    for page in folder.rglob("*.html"):
        if "pagefind" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        text = re.sub(r'<meta name="feedback-[a-z-]+" content="[^"]*">\n?', "", text)
        page.write_text(text.replace('<meta name="book-version"',
                                     f'<meta name="feedback-endpoint" content="http://127.0.0.1:{port}/api/feedback">\n'
                                     '<meta name="book-version"', 1), encoding="utf-8")
    info = write_offline(folder, "Bytes, Not FLOPs")
    server = serve(folder)
    yield {"folder": folder, "url": f"http://127.0.0.1:{server.server_address[1]}/", "port": port, "info": info,
           "deploy": lambda: write_offline(folder, "Bytes, Not FLOPs")}
    server.shutdown()


@pytest.fixture
def context(chromium):
    context = chromium.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(30000)
    yield context
    context.close()


def registered(page) -> None:
    """The worker is active (a first visit stays uncontrolled: the worker serves the next pages)."""
    page.wait_for_function("window.bookOffline && window.bookOffline.registration !== null"
                           " && window.bookOffline.registration.active !== null")


AFTER_LOAD_IDLE = "new Promise((r) => requestIdleCallback(() => r(true), {timeout: 5000}))"


def test_visits_fetch_nothing_for_offline_until_the_panel_is_opened_and_then_no_runtime(context, site):
    """A reader who never asks for the book offline gets no worker: neither the first page nor the
    next fetch offline.js, sw.js or Workbox (a page a worker controls fetches every file through it:
    #31's first visit and landing time). Opening the Offline panel registers the worker, and still
    nothing of the Python runtime is fetched or kept."""
    page = context.new_page()
    asked = []
    context.on("request", lambda r: asked.append(r.url))
    for name in ("index.html", "references.html"):
        page.goto(site["url"] + name, wait_until="load")
        page.evaluate(AFTER_LOAD_IDLE)                  # the offline loader's after-load step has run
        assert page.evaluate("navigator.serviceWorker.getRegistration().then((r) => r === undefined)")
        assert not [u for u in asked if u.endswith(("/sw.js", "/offline.json", "/offline.js")) or "workbox" in u], asked
    page.get_by_role("button", name="Offline").click()
    expect(page.locator("#offline-panel")).to_be_visible()
    registered(page)
    caches = page.evaluate(CACHES)
    assert not [u for urls in caches.values() for u in urls if "/pyodide/" in u], caches
    assert "bnf-book" not in caches and "bnf-offline-choice" not in caches, caches
    assert not [u for u in asked if "/pyodide/" in u], asked
    assert any(u.endswith("/sw.js") for u in asked)


def test_kept_book_reads_offline_with_search_widgets_and_feedback_then_updates(context, site, tmp_path):
    base, info = site["url"], site["info"]
    service = Service(tmp_path / "feedback.db", site["port"], base.rstrip("/"))
    service.start()
    errors = []
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + "index.html")
    page.get_by_role("button", name="Offline").click()      # a first visit: opening the panel registers
    registered(page)
    page.evaluate("window.seen = []; navigator.serviceWorker.addEventListener('message', (e) => seen.push(e.data.type))")
    panel = page.locator("#offline-panel")
    size = f"{info['total_bytes'] / 1e6:.1f} MB"
    keep = panel.get_by_role("button", name=f"Keep this book offline ({size})")
    expect(keep).to_be_visible()
    expect(panel).to_contain_text(f"It downloads {size}.")
    keep.click()
    expect(panel.locator(".offline-status")).to_contain_text("Kept on this device", timeout=120_000)
    assert "progress" in page.evaluate("seen")
    expect(panel.get_by_role("button", name="Remove the offline copy")).to_be_visible()

    context.set_offline(True)
    names = pages(site["folder"])
    assert len(names) >= 10, names
    for name in names:
        page.goto(base + name)
        expect(page.locator("main#content h1").first).to_be_visible()
        expect(page.locator(".offline-notice")).to_contain_text("You are reading offline")
        if page.locator(".widget[data-widget]").count():
            page.wait_for_function(ALL_LIVE, timeout=90_000)
    # a widget moves offline: a slider of the roofline chapter redraws its figure in Python
    page.goto(base + "chapters/roofline.html")
    page.wait_for_function(ALL_LIVE, timeout=90_000)
    widget = page.locator(".widget[data-widget]").first
    svg = widget.locator(".widget-svg > svg").first.inner_html()
    slider = widget.locator("input[type=range]").first
    slider.focus()
    page.keyboard.press("End")
    page.wait_for_function("([w, s]) => w.querySelector('.widget-svg > svg').innerHTML !== s",
                           arg=[widget.element_handle(), svg], timeout=60_000)
    # search, offline
    page.locator(".search-open").click()
    page.locator(".search-dialog input").fill("roofline")
    expect(page.locator(".search-results a").first).to_be_visible()
    page.keyboard.press("Escape")

    # an exercise, offline: the GPU chapter's first one checks the reader's kernel in Python (the
    # exercises' own worker, with exercises-py.zip from the kept runtime) and keeps it across a reload
    page.goto(base + "chapters/gpu.html")
    ex = page.locator("section.exercise").first
    ex_id = ex.get_attribute("id")
    ex.scroll_into_view_if_needed()
    expect(ex.locator(".cm-content")).to_be_visible(timeout=60_000)
    solution = page.evaluate(f"document.querySelector('#{ex_id}-solution pre code').textContent")
    ex.locator(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(solution)
    ex.locator(".exercise-check").click()
    expect(ex.locator(".exercise-message")).to_contain_text("Passed", timeout=90_000)
    page.reload()
    ex = page.locator(f"#{ex_id}")
    ex.scroll_into_view_if_needed()
    expect(ex.locator(".cm-content")).to_be_visible(timeout=60_000)
    expect(ex).to_have_class(re.compile(r"\bsolved\b"))
    assert page.evaluate(f"[...document.querySelectorAll('#{ex_id} .cm-line')].map((l) => l.textContent).join('\\n')"
                         ).strip() == solution.strip()
    expect(page.locator(".offline-notice")).to_contain_text("You are reading offline")

    # a suggestion made offline waits in the visible queue, and is sent when the network is back
    page.goto(base + "chapters/roofline.html")
    page.locator("main p").nth(2).select_text()
    page.get_by_role("button", name="Suggest a change").click()
    dialog = page.get_by_role("dialog", name="Suggest a change")
    dialog.get_by_label("Your suggestion").fill("Written on a plane.")
    dialog.get_by_role("button", name="Send").click()
    expect(page.locator(".fb-status")).to_contain_text("Saved on this device")
    assert page.evaluate("window.bookFeedback.queue().length") == 1
    assert service.rows() == []
    context.set_offline(False)
    page.wait_for_function("window.bookFeedback.queue().length === 0")
    assert [r["suggestion"] for r in service.rows()] == ["Written on a plane."]
    service.stop()

    # a second build is deployed: a changed page and a changed stylesheet
    old_build = info["build"]
    chapter = site["folder"] / "chapters" / "roofline.html"
    chapter.write_text(chapter.read_text(encoding="utf-8").replace("<main id=\"content\" data-pagefind-body>",
                                                                   "<main id=\"content\" data-pagefind-body>" + MARK, 1))
    css = site["folder"] / "assets" / "css" / "book.css"
    css.write_text(css.read_text(encoding="utf-8") + "\n:root { --deploy-mark: 2; }\n")
    new = site["deploy"]()
    assert new["build"] != old_build
    # (a new tab: a tab's own memory cache may reuse a stylesheet it already has, worker or not)
    page.close()
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + "chapters/roofline.html")
    expect(page.locator("#deploy-mark")).to_be_visible()
    # the old worker still controls the page, yet the new page gets the new build's files
    assert page.evaluate("fetch('../offline.json').then((r) => r.json()).then((j) => j.build)") == old_build
    assert page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--deploy-mark').trim()") == "2"
    assert "--deploy-mark" in page.evaluate("fetch('../assets/css/book.css').then((r) => r.text())")
    notice = page.locator(".offline-notice")
    expect(notice).to_contain_text("A newer edition of the book is available", timeout=60_000)
    page.evaluate("window.before = true")
    notice.get_by_role("button", name="Reload").click()
    page.wait_for_function("window.before === undefined && navigator.serviceWorker.controller !== null")
    expect(page.locator("#deploy-mark")).to_be_visible()
    assert page.evaluate("fetch('../offline.json').then((r) => r.json()).then((j) => j.build)") == new["build"]
    caches = page.evaluate(CACHES)
    assert not [k for k in caches if old_build in k], caches
    # the kept copy is the new build's: offline, the changed page and stylesheet are there
    context.set_offline(True)
    page.goto(base + "chapters/roofline.html")
    expect(page.locator("#deploy-mark")).to_be_visible()
    assert page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--deploy-mark').trim()") == "2"
    context.set_offline(False)

    # undo: every cache of the book removed
    page.get_by_role("button", name="Offline").click()
    panel = page.locator("#offline-panel")
    panel.get_by_role("button", name="Remove the offline copy").click()
    expect(panel.get_by_role("button", name=re.compile("Keep this book offline"))).to_be_visible()
    assert not [k for k in page.evaluate(CACHES) if k.startswith("bnf-")]
    assert errors == []


def test_opened_as_a_file_it_says_offline_reading_needs_it_served(context, site):
    page = context.new_page()
    page.goto((site["folder"] / "index.html").as_uri())
    page.get_by_role("button", name="Offline").click()
    expect(page.locator("#offline-panel")).to_contain_text("Offline reading needs the book served")
    expect(page.locator("#offline-panel").get_by_role("button", name=re.compile("Keep"))).to_have_count(0)
    assert page.evaluate("window.bookOffline.registration") is None


@pytest.mark.parametrize("viewport", [{"width": 1440, "height": 900}, {"width": 390, "height": 844}])
def test_panel_and_notice_pass_axe(chromium, site, viewport):
    """axe-core on a chapter with the Offline panel open and the offline notice shown."""
    from test_axe_browser import axe
    context = chromium.new_context(viewport=viewport)
    context.set_default_timeout(30000)
    try:
        page = context.new_page()
        page.goto(site["url"] + "chapters/gpu.html")
        page.get_by_role("button", name="Offline").click()
        registered(page)
        expect(page.locator("#offline-panel .offline-keep")).to_be_enabled()
        context.set_offline(True)
        expect(page.locator(".offline-notice")).to_be_visible()
        assert axe(page) == []
    finally:
        context.close()


def test_offline_notice_covers_nothing_and_stays_dismissed(chromium, site):
    """Issue #47: the notice floated over the text (about 60 px of it on a phone, an exercise's "Sizes
    tried") and could not be dismissed. It sits in the page's flow under the top bar, and Dismiss
    hides it on this device from then on."""
    context = chromium.new_context(**CONFIGS["phone-light"])
    context.set_default_timeout(30000)
    try:
        page = context.new_page()
        for path in ("chapters/gpu.html", "chapters/roofline.html"):
            page.goto(site["url"] + path)
            page.locator(".offline-open").tap()          # loads offline.js (the panel), then closes it
            page.wait_for_function("window.bookOffline")
            page.locator(".offline-open").tap()
            context.set_offline(True)
            notice = page.locator(".offline-notice")
            expect(notice).to_have_attribute("data-kind", "offline")
            if path.startswith("chapters/gpu"):
                expect(notice).to_be_visible()
                placed = page.evaluate("""() => { const n = document.querySelector('.offline-notice');
                    const fixed = []; for (let e = n; e; e = e.parentElement) {
                      const p = getComputedStyle(e).position; if (p !== 'static' && p !== 'relative') fixed.push(e.tagName + ':' + p); }
                    return { fixed, after: n.previousElementSibling && n.previousElementSibling.className }; }""")
                assert placed == {"fixed": [], "after": "topbar"}, placed   # in the flow: it covers nothing
                notice.get_by_role("button", name="Dismiss this notice").tap()
                expect(notice).to_be_hidden()
            else:
                expect(notice).to_be_hidden()            # dismissed on the page before: remembered
            context.set_offline(False)
    finally:
        context.close()
