"""``bookbuild preview``: serve the site on localhost, rebuild what changed on save, reload the browser.

The server injects one small script into every HTML page it serves. The script listens on
``/__preview/events`` (server-sent events); after each rebuild the server sends ``reload``,
or ``error`` with the build's message, which the page shows over the content until the next
good build. Only the changed chapters are executed again (the build's cache sees to that).
Every response is cross-origin isolated (``ISOLATION``: COOP and COEP), as under ``feedback serve
--site``, so the preview shows what an exercise's Stop does where the host sends them.
"""
from __future__ import annotations

import json
import queue
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .build import build
from .errors import BuildError
from .html.offline import ISOLATION

EVENTS = "/__preview/events"
CLIENT = """<script>(function(){var es=new EventSource("%s");
es.addEventListener("reload",function(){location.reload()});
es.addEventListener("error-report",function(e){var d=document.getElementById("preview-error");
if(!d){d=document.createElement("pre");d.id="preview-error";d.setAttribute("role","alert");
d.style.cssText="position:fixed;inset:auto 1rem 1rem 1rem;max-height:50vh;overflow:auto;z-index:9999;"
+"background:#fff4f4;color:#7a0000;border:2px solid #c00;padding:1rem;font:13px/1.4 monospace;white-space:pre-wrap";
document.body.appendChild(d)}d.textContent=JSON.parse(e.data)})})();</script>""" % EVENTS
WATCHED = {".qmd", ".md", ".yml", ".yaml", ".py", ".lua", ".css", ".js", ".bib", ".csl", ".html",
           ".typ", ".cu", ".svg", ".png", ".jpg"}
IGNORED_DIRS = {"_book", ".bookcache", "node_modules", ".git", "__pycache__", ".pytest_cache",
                ".hypothesis", "tests", "benchmarks"}


class Hub:
    """The browsers listening for events, one queue each."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.listeners: list[queue.Queue] = []
        self.last_error: str | None = None

    def subscribe(self) -> queue.Queue:
        q: queue.Queue = queue.Queue()
        with self.lock:
            self.listeners.append(q)
            if self.last_error:
                q.put(("error-report", self.last_error))
        return q

    def unsubscribe(self, q: queue.Queue) -> None:
        with self.lock:
            if q in self.listeners:
                self.listeners.remove(q)

    def publish(self, event: str, data: str = "") -> None:
        self.last_error = data if event == "error-report" else None
        with self.lock:
            for q in self.listeners:
                q.put((event, data))


class Handler(SimpleHTTPRequestHandler):
    hub: Hub

    def log_message(self, format: str, *args) -> None:  # keep the terminal for build output
        pass

    def do_GET(self) -> None:
        if self.path == EVENTS:
            return self.events()
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if path.suffix == ".html" and path.is_file():
            body = path.read_bytes().replace(b"</body>", CLIENT.encode() + b"</body>", 1)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def end_headers(self) -> None:
        if self.path != EVENTS:
            self.send_header("Cache-Control", "no-store")
        for name, value in ISOLATION.items():   # cross-origin isolated: an exercise's Stop keeps Python
            self.send_header(name, value)
        super().end_headers()

    def events(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        q = self.hub.subscribe()
        try:
            self.wfile.write(b": connected\n\n")
            self.wfile.flush()
            while True:
                try:
                    event, data = q.get(timeout=15)
                except queue.Empty:
                    self.wfile.write(b": keep-alive\n\n")
                else:
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            self.hub.unsubscribe(q)


def watched(change: object, path: str) -> bool:
    p = Path(path)
    return p.suffix in WATCHED and not (IGNORED_DIRS & set(p.parts))


def rebuild(root: Path, hub: Hub, log=print) -> bool:
    t = time.perf_counter()
    try:
        report = build(root, ("html",))
    except BuildError as err:
        log(f"error: {err}")
        hub.publish("error-report", str(err))
        return False
    executed = ", ".join([*report.executed, *(f"{c} (prose only)" for c in report.replayed)]) or "nothing executed"
    log(f"rebuilt in {time.perf_counter() - t:.2f} s ({executed})")
    hub.publish("reload")
    return True


def serve(root: Path, host: str = "127.0.0.1", port: int = 8000,
          stop: threading.Event | None = None, log=print, on_ready=None) -> None:
    """Build, serve ``output-dir`` and rebuild on every save until ``stop`` is set (or Ctrl-C)."""
    from watchfiles import watch

    from .project import config as config_mod
    root = Path(root).resolve()
    hub = Hub()
    rebuild(root, hub, log)
    out = config_mod.load(root).out
    out.mkdir(parents=True, exist_ok=True)
    handler = type("PreviewHandler", (Handler,), {"hub": hub})
    server = ThreadingHTTPServer((host, port), partial(handler, directory=str(out)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://{host}:{server.server_address[1]}/"
    log(f"serving {out.relative_to(root)} at {url} — Ctrl-C to stop")
    if on_ready:
        on_ready(url)
    stop = stop or threading.Event()
    try:
        for changes in watch(root, watch_filter=watched, stop_event=stop, debounce=200,
                             raise_interrupt=False):
            log("changed: " + ", ".join(sorted(Path(p).relative_to(root).as_posix() for _, p in changes)))
            rebuild(root, hub, log)
    finally:
        server.shutdown()
        server.server_close()
