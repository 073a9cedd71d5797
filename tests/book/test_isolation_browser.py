"""Cross-origin isolation (issue #31's last part), in Chromium on the built book.

Served with COOP and COEP (``python -m feedback serve --site``, as bookbuild preview and a host that
reads the built ``_headers`` send them), every page is ``crossOriginIsolated`` and loads with no
console error, failed request or blocked resource; every widget goes live, search finds a word,
the device probe measures, and an exercise's Stop interrupts a runaway kernel in place: the same
worker, with the state the reader's earlier Run left in Python, answers the next Run. On a plain
static host a page is isolated once the book's service worker controls it (the reader opened the
Offline panel), and a long call into C, which no interrupt reaches, is still ended by a new worker
after the grace period. (Without isolation Stop restarts Python: test_exercises_browser.py.)"""
from __future__ import annotations

import re

import pytest

from a11y_site import pages, serve  # noqa: E402  (same folder)
from test_exercises_browser import EX, FOREVER, REFERENCE, reach, type_code  # noqa: E402

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

CHAPTER = "chapters/gpu.html"
ALL_LIVE = "[...document.querySelectorAll('.widget[data-widget]')].every(w => w.dataset.state === 'live')"
# A plain Run (the kernel language refuses `import sys` and module state, so a Run cannot count
# the interpreter's Runs any more: the worker object and its count of starts say it is the same).
COUNTER = """from numba import cuda


@cuda.jit
def copy(A, B, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        B[i] = A[i]
"""
# A long call into C: no bytecode runs, so no interrupt is seen until it returns (in years).
IN_C = """from numba import cuda


@cuda.jit
def copy(A, B, n):
    all(range(1, 10 ** 15))     # a loop inside C (all over a range): no bytecode runs between
"""


@pytest.fixture(scope="module")
def search_book(book_copy):
    """The built book with its search index (Pagefind's wasm is among what isolation could block)."""
    return book_copy.ensure(("html",), search=True)


@pytest.fixture(scope="module")
def isolated_site(search_book, tmp_path_factory):
    """The built book under ``python -m feedback serve --site``: the service beside it, one origin."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "feedback"))
    from test_client_browser import Service, free_port
    port = free_port()
    service = Service(tmp_path_factory.mktemp("coi") / "feedback.db", port, f"http://127.0.0.1:{port}",
                      "--site", str(search_book))
    service.start()
    yield f"http://127.0.0.1:{port}/"
    service.stop()


class Trouble:
    """Everything a page did wrong: console errors, uncaught exceptions, failed or refused requests."""

    def __init__(self, page):
        self.seen: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.seen.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: self.seen.append(f"exception: {e}"))
        # the context's requests: the page's and its dedicated workers' (the exercises' Python).
        # A request the next navigation cancels fails as ERR_ABORTED; what COEP refuses fails as
        # ERR_BLOCKED_BY_RESPONSE (and logs a console error).
        page.context.on("requestfailed", lambda r: "ERR_ABORTED" not in (r.failure or "")
                        and self.seen.append(f"failed: {r.url} {r.failure}"))
        page.context.on("response", lambda r: r.status >= 400 and self.seen.append(f"HTTP {r.status}: {r.url}"))


def run(page, code):
    """Run ``code`` and return the status message once the Run has answered."""
    type_code(page, code, False)
    page.evaluate(f"document.querySelector('{EX} .exercise-message').dataset.old = '1'")
    page.locator(f"{EX} .exercise-run").click()
    page.wait_for_function(f"""(() => {{ const m = document.querySelector('{EX} .exercise-message');
        return !m.dataset.old && document.querySelector('{EX}').getAttribute('aria-busy') === 'false'; }})()""")
    return page.locator(f"{EX} .exercise-message").inner_text()


def start_and_stop(page, code):
    """Start ``code`` (which never ends), press Stop, and return how it stopped and the stopped
    message (the page's ``exercise:stopped`` event, waited for: never a sleep)."""
    type_code(page, code, False)
    page.evaluate(f"""window.stopped = null; document.querySelector('{EX}')
        .addEventListener('exercise:stopped', (e) => {{ window.stopped = e.detail; }}, {{ once: true }})""")
    page.locator(f"{EX} .exercise-run").click()
    page.wait_for_function(f"document.querySelector('{EX} .exercise-message').textContent.startsWith('Running')")
    assert page.evaluate("1 + 1") == 2            # the page answers while the kernel spins
    page.locator(f"{EX} .exercise-stop").click()
    detail = page.wait_for_function("window.stopped").json_value()
    expect(page.locator(f"{EX} .exercise-run")).to_be_enabled()
    return detail, page.locator(f"{EX} .exercise-message").inner_text()


def stop_in_place(page):
    """COUNTER, then a runaway kernel stopped in place, then COUNTER again in the same Python."""
    page.evaluate("window.firstWorker = null")
    said = run(page, COUNTER)
    assert said.startswith("Ran at size"), said
    page.evaluate("window.firstWorker = window.BookExercises.worker()")
    detail, said = start_and_stop(page, FOREVER)
    assert detail["how"] == "interrupt" and detail["posted"], detail     # Python had the kernel, and stopped
    assert said.startswith("Stopped.") and "ready for the next Run" in said, said
    said = run(page, COUNTER)
    assert said.startswith("Ran at size"), said
    # the same worker, started once: Python was interrupted in place, not restarted
    assert page.evaluate("window.BookExercises.worker() === window.firstWorker")
    assert page.evaluate("window.BookExercises.workersStarted") == 1
    # and a Check works in it
    type_code(page, REFERENCE, False)
    page.locator(f"{EX} .exercise-check").click()
    expect(page.locator(f"{EX} .exercise-message")).to_contain_text("Passed", timeout=60_000)


def test_isolated_book_loads_every_page_clean_and_stop_keeps_python(chromium, isolated_site, search_book):
    context = chromium.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(90_000)
    page = context.new_page()
    trouble = Trouble(page)
    try:
        for name in pages(search_book):
            page.goto(isolated_site + name, wait_until="load")
            assert page.evaluate("crossOriginIsolated"), name
            # every figure (lazy ones too) and, down the page, what the exercises' loader fetches
            page.evaluate("document.querySelectorAll('img[loading=lazy]').forEach((i) => { i.loading = 'eager'; });"
                          "window.scrollTo(0, document.body.scrollHeight)")
            page.wait_for_function("[...document.images].every((i) => i.complete)")
            assert page.evaluate("[...document.images].filter((i) => !i.naturalWidth).map((i) => i.src)") == [], name
            page.wait_for_function(ALL_LIVE)
            assert not trouble.seen, (name, trouble.seen)
        page.goto(isolated_site + "index.html")
        page.locator(".search-open").click()
        page.locator(".search-dialog input").fill("roofline")
        expect(page.locator(".search-results a").first).to_be_visible()
        # the device probe (no WebGPU in this Chromium: the CPU part, a wasm in a worker)
        page.goto(isolated_site + "chapters/roofline.html?probe=quick")
        page.get_by_role("button", name="Measure this device").click()
        page.wait_for_function("!document.querySelector('.device-probe').dataset.running && window.BookDevice.get()",
                               timeout=120_000)
        page.get_by_role("button", name="Delete the measurement").click()
        page.goto(isolated_site + CHAPTER, wait_until="load")
        reach(page)
        assert page.evaluate("window.BookExercises.interruptible") is True
        stop_in_place(page)
        assert not trouble.seen, trouble.seen
    finally:
        context.close()


def test_on_a_static_host_the_service_worker_isolates_and_c_calls_still_stop(chromium, search_book):
    server = serve(search_book)                    # a static host: no COOP or COEP
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    context = chromium.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(90_000)
    page = context.new_page()
    trouble = Trouble(page)
    try:
        page.goto(url + CHAPTER, wait_until="load")
        assert page.evaluate("crossOriginIsolated") is False      # a first visit: no worker, not isolated
        page.get_by_role("button", name="Offline").click()        # the reader opens the Offline panel
        page.wait_for_function("window.bookOffline && window.bookOffline.registration?.active")
        page.reload(wait_until="load")
        assert page.evaluate("navigator.serviceWorker.controller !== null && crossOriginIsolated")
        page.wait_for_function(ALL_LIVE)
        reach(page)
        stop_in_place(page)
        # a long call into C sees no interrupt: after the grace period, a new worker
        detail, said = start_and_stop(page, IN_C)
        assert detail["how"] == "restart" and detail["workersStarted"] == 2, detail
        assert said.startswith("Stopped.") and "Python restarted" in said, said
        assert run(page, REFERENCE).startswith("Ran at size")
        assert not trouble.seen, trouble.seen
    finally:
        context.close()
        server.shutdown()
