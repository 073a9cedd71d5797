"""Shared by the accessibility tests of the built book: the four reading configurations, a local
server for _book/, and the list of the book's pages."""
from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"

DESKTOP = {"viewport": {"width": 1440, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True, "device_scale_factor": 2}
CONFIGS = {
    f"{size}-{scheme}": dict(opts, color_scheme=scheme)
    for size, opts in (("desktop", DESKTOP), ("phone", PHONE)) for scheme in ("light", "dark")
}


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(folder: Path) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def pages(book: Path) -> list[str]:
    """Every page of the built book a reader can open (not Pagefind's or the assets' files)."""
    skip = {"pagefind", "assets", "widgets", "pyodide"}
    return sorted(str(p.relative_to(book)) for p in book.rglob("*.html") if not skip & set(p.relative_to(book).parts))
