"""What the book offline costs a reader, in bytes: a first visit (fresh profile) to the first page and
to a chapter with widgets, counting every response the browser received, the service worker's own
fetches included, until the page has loaded, its widgets are live, offline.js has run and no
response has come for a second;
then what "Keep this book offline" downloads.

    python3 benchmarks/offline_bench.py [site ...]      (default: _book)

Give a site built before the service worker (e.g. main's) and one after to compare. Prints figures;
asserts nothing."""
from __future__ import annotations

import functools
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from webwatch import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

from playwright.sync_api import sync_playwright  # noqa: E402

LIVE = "[...document.querySelectorAll('.widget[data-widget]')].every(w => w.dataset.state === 'live')"


def serve(folder: Path) -> ThreadingHTTPServer:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def end_headers(self):
            self.send_header("Cache-Control", "max-age=600")
            super().end_headers()
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def first_visit(browser, base: str, path: str) -> tuple[int, int, int]:
    """(bytes, requests, runtime bytes) of a first visit to ``path``."""
    context = browser.new_context()
    seen = []
    context.on("requestfinished", lambda r: seen.append(r))
    page = context.new_page()
    page.goto(base + path, wait_until="load")
    if page.locator(".widget[data-widget]").count():
        page.wait_for_function(LIVE, timeout=90_000)
    # offline.js has run its after-load step (it registers the worker from the second page on)
    page.wait_for_function("!window.bookOffline || localStorage.getItem('bookOffline.seen') === '1'")
    # then until no response has come for a second (a widget page keeps its worker's port open, so
    # Playwright's "networkidle" never comes); at most 15 s
    for _ in range(15):
        before = len(seen)
        page.wait_for_timeout(1000)
        if len(seen) == before:
            break
    total = runtime = 0
    for r in seen:
        sizes = r.sizes()
        n = sizes["responseBodySize"] + sizes["responseHeadersSize"]
        total += n
        runtime += n if "/pyodide/" in r.url else 0
    context.close()
    return total, len(seen), runtime


def main(sites: list[str]) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for site in sites:
            folder = Path(site).resolve()
            server = serve(folder)
            base = f"http://127.0.0.1:{server.server_address[1]}/"
            for path in ("index.html", "chapters/roofline.html"):
                total, count, runtime = first_visit(browser, base, path)
                print(f"{folder}: first visit {path}: {total} bytes in {count} responses "
                      f"({runtime} of them the Python runtime)")
            kept = folder / "offline.json"
            if kept.exists():
                print(f"{folder}: Keep this book offline: {kept.read_text().strip()}")
            server.shutdown()
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1:] or [str(ROOT / "_book")])
