"""A tiny built site with every widget, and a local server for it.

Stands in for the book's build until that exists: one page with the meta and
script tags the page template must carry, ``build_runtime`` for the Python
runtime, and a server that behaves like a static host (gzip, Cache-Control).
Used by tests/browser and benchmarks/widgets_bench.py."""
from __future__ import annotations

import gzip
import shutil
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import widgets
from widgets.bundle import build_runtime

ROOT = Path(__file__).resolve().parents[2]

HEAD_TAGS = """<meta name="site-root" content="{root}">
<link rel="stylesheet" href="{root}assets/css/widgets.css">
<script src="{root}assets/js/widgets-host.js" async></script>"""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
<title>{title}</title>
{head}
<style>body{{font-family:system-ui,sans-serif;max-width:46rem;margin:1rem auto;padding:0 0.75rem;line-height:1.5}}</style>
</head><body><main><h1>Widgets</h1>
{body}
</main></body></html>
"""


def make_site(site: Path, pages: dict[str, list[tuple[str, dict]]] | None = None) -> Path:
    """Write pages (path -> [(widget, params)]), the assets and the Python runtime into ``site``."""
    pages = pages or {
        "chapters/widgets.html": [("roofline", {}), ("blockgrid", {}), ("attention-runner", {}),
                                  ("steps", {}), ("memory-budget", {}), ("collective-stepper", {}),
                                  ("parallel-planner", {})],
        "chapters/next.html": [("roofline", {"device": "a100-sxm-80gb"})],
    }
    for rel in ("assets/js/widgets-host.js", "assets/js/widgets-worker.js", "assets/css/widgets.css"):
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, site / rel)
    for rel, items in pages.items():
        depth = rel.count("/")
        root = "../" * depth or "./"
        body = "\n".join(f"<h2>{name}</h2>\n" + widgets.static_html(name, params, f"The {name} widget.")
                         for name, params in items)
        out = site / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(PAGE.format(title=rel, head=HEAD_TAGS.format(root=root), body=body))
    # A page as Quarto writes it: no <meta name="site-root">, and in its head what filters/widget.lua
    # asks Quarto for, its site-root paths made relative as Quarto's post-processor does.
    from bookbuild.html.site import WIDGET_HEAD, site_relative
    out = site / "chapters" / "as-quarto.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(PAGE.format(title="as Quarto writes it", head=site_relative(WIDGET_HEAD, "../"),
                               body=widgets.static_html("roofline", {}, "The roofline widget.")))
    # A page whose Pyodide files are missing (a wrong pyodide-base): the widgets must say so.
    out = site / "chapters" / "no-runtime.html"
    out.write_text(PAGE.format(title="no runtime", head=HEAD_TAGS.format(root="../")
                               + '\n<meta name="pyodide-base" content="../missing-pyodide/">',
                               body=widgets.static_html("roofline", {}, "The roofline widget.")))
    build_runtime(site, ROOT)
    return site


COMPRESSIBLE = (".html", ".js", ".mjs", ".css", ".wasm", ".json", ".svg")


class Handler(SimpleHTTPRequestHandler):
    """Static host: gzip for text and wasm, Cache-Control like GitHub Pages, bytes counted."""
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript",
                      ".js": "text/javascript", ".wasm": "application/wasm", ".zip": "application/zip"}
    cache_control = "max-age=600"
    log_message = lambda *a: None  # noqa: E731
    _gz: dict = {}
    sent: list = []

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_file() and path.suffix in COMPRESSIBLE and "gzip" in self.headers.get("Accept-Encoding", ""):
            key = (str(path), path.stat().st_mtime)
            if key not in self._gz:
                self._gz[key] = gzip.compress(path.read_bytes(), 6)
            data = self._gz[key]
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(str(path)))
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", self.cache_control)
            self.send_header("Last-Modified", self.date_time_string(int(path.stat().st_mtime)))
            self.end_headers()
            self.sent.append((self.path, len(data)))
            import io
            return io.BytesIO(data)
        return super().send_head()

    def end_headers(self):
        if "Cache-Control" not in "".join(map(str, getattr(self, "_headers_buffer", []))):
            self.send_header("Cache-Control", self.cache_control)
        super().end_headers()

    def copyfile(self, source, outputfile):
        if not hasattr(source, "getvalue"):
            self.sent.append((self.path, Path(self.translate_path(self.path)).stat().st_size))
        super().copyfile(source, outputfile)


def serve(site: Path):
    """Start a server on 127.0.0.1 at a free port; returns (base_url, server)."""
    for f in site.rglob("*"):           # compress ahead, as a CDN would have it ready
        if f.suffix in COMPRESSIBLE:
            Handler._gz[(str(f), f.stat().st_mtime)] = gzip.compress(f.read_bytes(), 6)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/", server
