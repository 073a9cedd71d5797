"""What the book offline costs a reader, in bytes: a first visit (fresh profile) to the first page and
to a chapter with widgets, counting every response the browser received, the service worker's own
fetches included, until the page has loaded, its widgets are live, the offline loader has run and no
response has come for a second; of them, the offline feature's own files (offline.js, sw.js,
offline.json, Workbox, the manifest); then what "Keep this book offline" downloads.

    python3 benchmarks/offline_bench.py [site ...]      (default: _book)

Give a site built before the service worker (e.g. /work/baseline_book) and one after to compare: with
two sites it also lists, per page, the files one first visit fetched and the other did not. (Only
the page's own requests are seen: the widgets' SharedWorker fetches its runtime unseen, in both.)
Prints figures; asserts nothing."""
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


OFFLINE_FILES = ("/offline.js", "/sw.js", "/offline.json", "/manifest.webmanifest")


def first_visit(browser, base: str, path: str) -> tuple[int, int, int, dict[str, int]]:
    """(bytes, requests, runtime bytes, {path: bytes}) of a first visit to ``path``."""
    context = browser.new_context()
    seen = []
    context.on("requestfinished", lambda r: seen.append(r))
    page = context.new_page()
    page.goto(base + path, wait_until="load")
    if page.locator(".widget[data-widget]").count():
        page.wait_for_function(LIVE, timeout=90_000)
    # the offline loader (_includes/head.html) has run its after-load step (an idle callback)
    page.evaluate("new Promise((r) => requestIdleCallback(() => r(true), {timeout: 5000}))")
    # then until no response has come for a second (a widget page keeps its worker's port open, so
    # Playwright's "networkidle" never comes); at most 15 s
    for _ in range(15):
        before = len(seen)
        page.wait_for_timeout(1000)
        if len(seen) == before:
            break
    total = runtime = 0
    files = {}
    for r in seen:
        sizes = r.sizes()
        n = sizes["responseBodySize"] + sizes["responseHeadersSize"]
        total += n
        runtime += n if "/pyodide/" in r.url else 0
        files[r.url[len(base):].split("?")[0]] = sizes["responseBodySize"]
    context.close()
    return total, len(seen), runtime, files


def offline_bytes(files: dict[str, int]) -> int:
    return sum(n for f, n in files.items() if f.endswith(OFFLINE_FILES) or "workbox" in f)


def main(sites: list[str]) -> None:
    seen = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for site in sites:
            folder = Path(site).resolve()
            server = serve(folder)
            base = f"http://127.0.0.1:{server.server_address[1]}/"
            for path in ("index.html", "chapters/roofline.html"):
                total, count, runtime, files = first_visit(browser, base, path)
                seen[site, path] = files
                print(f"{folder}: first visit {path}: {total} bytes in {count} responses "
                      f"({runtime} of them the Python runtime; {offline_bytes(files)} bytes of the offline feature's files)")
            kept = folder / "offline.json"
            if kept.exists():
                print(f"{folder}: Keep this book offline: {kept.read_text().strip()}")
            server.shutdown()
        browser.close()
    if len(sites) == 2:
        for path in ("index.html", "chapters/roofline.html"):
            a, b = seen[sites[0], path], seen[sites[1], path]
            print(f"{path}: only in the first site's visit: {sorted((f, a[f]) for f in set(a) - set(b))}")
            print(f"{path}: only in the second site's visit: {sorted((f, b[f]) for f in set(b) - set(a))}")
            print(f"{path}: in both, changed size: {sorted((f, a[f], b[f]) for f in set(a) & set(b) if a[f] != b[f])}")


if __name__ == "__main__":
    main(sys.argv[1:] or [str(ROOT / "_book")])
